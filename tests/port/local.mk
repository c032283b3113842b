# tests/port/local.mk - the port: transport's own tests (docs/transports/port.md):
# credentials, many clients within the queue budget, either side killed mid-call, a dead
# server's queue, no leftovers; the example over port:; and a null call against a raw queue
# ping-pong, built by make check and run by hand.
if TRANSPORT_PORT
if HAVE_CUNIT
check_PROGRAMS += tests/port/port_test
TESTS += tests/port/port_test
tests_port_port_test_SOURCES = tests/port/port_test.c
tests_port_port_test_CPPFLAGS = $(test_cppflags) \
	-I$(top_srcdir)/examples/bench -I$(top_builddir)/examples/bench
tests_port_port_test_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la $(CUNIT_LIBS)
tests_port_port_test_LDFLAGS = -static
EXTRA_tests_port_port_test_DEPENDENCIES = examples/bench/bench-server$(EXEEXT)
# port_test where an mqueue filesystem is mounted already, and where none can be listed.
dist_check_SCRIPTS += tests/port/listing.sh
TESTS += tests/port/listing.sh
endif

check_PROGRAMS += tests/port/port_perf
tests_port_port_perf_SOURCES = tests/port/port_perf.c
tests_port_port_perf_CPPFLAGS = $(bench_cppflags) \
	-DIDL_BENCH_SERVER_DEFAULT='"$(abs_top_builddir)/examples/bench/bench-server$(EXEEXT)"'
tests_port_port_perf_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
tests_port_port_perf_LDFLAGS = -no-install

dist_check_SCRIPTS += tests/port/example.sh
TESTS += tests/port/example.sh
endif
