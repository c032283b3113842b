# transports/port.mk - the port: transport (POSIX message queues, docs/transports/port.md):
# its sources in libidlrt, its row of the conformance suite, and its own tests (tests/port/).
if TRANSPORT_PORT
runtime_libidlrt_la_SOURCES += \
	transports/port.h \
	transports/port.c \
	transports/port_io.c
if HAVE_CUNIT
tests_transport_conformance_SOURCES += tests/transport/addr_port.c
endif
endif

# The transport's own tests (tests/port/): credentials, many clients within the queue
# budget, either side killed mid-call, a dead server's queue, no leftovers; and the example
# over port:.
if HAVE_CUNIT
if TRANSPORT_PORT
check_PROGRAMS += tests/port/port_test
TESTS += tests/port/port_test
tests_port_port_test_SOURCES = tests/port/port_test.c
tests_port_port_test_CPPFLAGS = $(test_cppflags) \
	-I$(top_srcdir)/examples/bench -I$(top_builddir)/examples/bench
tests_port_port_test_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la $(CUNIT_LIBS)
tests_port_port_test_LDFLAGS = -static
EXTRA_tests_port_port_test_DEPENDENCIES = examples/bench/bench-server$(EXEEXT)
endif
endif

# A null call over port: against a raw queue ping-pong; built by make check, run by hand.
if TRANSPORT_PORT
check_PROGRAMS += tests/port/port_perf
tests_port_port_perf_SOURCES = tests/port/port_perf.c
tests_port_port_perf_CPPFLAGS = $(bench_cppflags) \
	-DIDL_BENCH_SERVER_DEFAULT='"$(abs_top_builddir)/examples/bench/bench-server$(EXEEXT)"'
tests_port_port_perf_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
tests_port_port_perf_LDFLAGS = -no-install
endif

if TRANSPORT_PORT
dist_check_SCRIPTS += tests/port/example.sh
TESTS += tests/port/example.sh
endif
