# tests/tls/local.mk - the tls: transport's own tests (tests/tls/tls_test.c: certificates right
# and wrong, plaintext and TLS peers crossed, ALPN and versions, pins, key modes, a man in the
# middle, a cut stream, stalled handshakes, IPv6), with the certificates tests/tls/certs.sh
# makes at test time. The conformance suite's tls: row is tests/transport/addr_tls.c; the
# call between two network namespaces is tests/net/tls-netns.sh.
EXTRA_DIST += tests/tls/certs.sh
if TRANSPORT_TLS
check_PROGRAMS += tests/tls/tls-test
TESTS += tests/tls/tls-test
tests_tls_tls_test_SOURCES = tests/tls/tls_test.c
nodist_tests_tls_tls_test_SOURCES = examples/tls/whoamiUser.c examples/tls/whoami.h
tests_tls_tls_test_CPPFLAGS = $(AM_CPPFLAGS) $(bench_cppflags) $(tls_example_cppflags) \
	-DIDL_TOP_BUILDDIR_DEFAULT='"$(abs_top_builddir)"' \
	-DIDL_TOP_SRCDIR_DEFAULT='"$(abs_top_srcdir)"'
tests_tls_tls_test_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la -lpthread
# Between two network namespaces (root): the example's server and client, mutual
# authentication, each side's identity seen by the other.
dist_check_SCRIPTS += tests/net/tls-netns.sh
TESTS += tests/net/tls-netns.sh
# It runs tls-server and bench-server (found by $IDL_TOP_BUILDDIR).
EXTRA_tests_tls_tls_test_DEPENDENCIES = examples/tls/tls-server$(EXEEXT) \
	examples/bench/bench-server$(EXEEXT)
endif
