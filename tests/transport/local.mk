# tests/transport/local.mk - the transport conformance suite: every registered transport
# against bench-server (and oolt-server for the dialect's cases), the same cases for each.
# Each transport adds its address row (tests/transport/addr_NAME.c) in its own
# transports/NAME/local.mk, which is included after this file.
tests_transport_conformance_SOURCES = \
	tests/transport/conformance.h \
	tests/transport/main.c \
	tests/transport/addr.c \
	tests/transport/spawn.c \
	tests/transport/t_async.c \
	tests/transport/t_calls.c \
	tests/transport/t_faults.c \
	tests/transport/t_malformed.c \
	tests/transport/t_malformed_desc.c \
	tests/transport/t_ool.c \
	tests/transport/t_oolt.c \
	$(tests_procdump_sources)

if HAVE_CUNIT
check_PROGRAMS += tests/transport/conformance
TESTS += tests/transport/conformance
tests_transport_conformance_CPPFLAGS = $(test_cppflags) $(tests_procdump_cppflags) -I$(top_srcdir)/tests/ool \
	-I$(top_srcdir)/examples/bench -I$(top_builddir)/examples/bench \
	-DIDL_BENCH_SERVER_DEFAULT='"$(abs_top_builddir)/examples/bench/bench-server$(EXEEXT)"' \
	-DIDL_TOP_SRCDIR_DEFAULT='"$(abs_top_srcdir)"'
# SSL_LIBS: the tls: row's wire (tests/transport/wire_tls.c) speaks OpenSSL itself; empty
# without tls:.
tests_transport_conformance_LDADD = examples/bench/libbenchstubs.a \
	tests/ool/libooltstubs.a runtime/libidlrt.la $(CUNIT_LIBS) $(SSL_LIBS)
tests_transport_conformance_LDFLAGS = -static
# It runs bench-server and oolt-server (found by $IDL_TOP_BUILDDIR); make check builds them
# anyway, this says so to `make tests/transport/conformance`.
EXTRA_tests_transport_conformance_DEPENDENCIES = examples/bench/bench-server$(EXEEXT) \
	tests/ool/oolt-server$(EXEEXT)
endif

# check-long: the whole suite again with each bench-server under valgrind memcheck.
dist_check_SCRIPTS += tests/transport/valgrind.sh
CHECK_LONG += check-long-conformance
check-long-conformance: all
	@$(MAKE) $(AM_MAKEFLAGS) tests/transport/conformance$(EXEEXT)
	IDL_TOP_BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/tests/transport/valgrind.sh
.PHONY: check-long-conformance
