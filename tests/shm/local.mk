# tests/shm/local.mk - the shm: transport's own tests (docs/transports/shm.md): hostile
# peers on the rings, out-of-line data without a copy, kill loops; the example over shm:
# and a latency comparison that prints and never fails on numbers.
if TRANSPORT_SHM
shm_test_cppflags = $(test_cppflags) -I$(top_srcdir)/transports -I$(top_srcdir)/transports/shm \
	-I$(top_srcdir)/examples/bench -I$(top_builddir)/examples/bench \
	-DIDL_BENCH_SERVER_DEFAULT='"$(abs_top_builddir)/examples/bench/bench-server$(EXEEXT)"'

check_PROGRAMS += tests/shm/shm-latency
TESTS += tests/shm/example.sh tests/shm/shm-latency
dist_check_SCRIPTS += tests/shm/example.sh
tests_shm_shm_latency_SOURCES = \
	tests/shm/shm_test.h \
	tests/shm/util.c \
	tests/shm/shm_latency.c
tests_shm_shm_latency_CPPFLAGS = $(shm_test_cppflags)
tests_shm_shm_latency_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
tests_shm_shm_latency_LDFLAGS = -static
EXTRA_tests_shm_shm_latency_DEPENDENCIES = examples/bench/bench-server$(EXEEXT)

if HAVE_CUNIT
check_PROGRAMS += tests/shm/shm-test
TESTS += tests/shm/shm-test
tests_shm_shm_test_SOURCES = \
	tests/shm/shm_test.h \
	tests/shm/util.c \
	tests/shm/main.c \
	tests/shm/t_hostile.c \
	tests/shm/t_ool.c \
	tests/shm/t_kill.c
tests_shm_shm_test_CPPFLAGS = $(shm_test_cppflags)
tests_shm_shm_test_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la $(CUNIT_LIBS)
tests_shm_shm_test_LDFLAGS = -static
EXTRA_tests_shm_shm_test_DEPENDENCIES = examples/bench/bench-server$(EXEEXT)

# check-long: a thousand kills of each side.
CHECK_LONG += check-long-shm
check-long-shm: tests/shm/shm-test$(EXEEXT) examples/bench/bench-server$(EXEEXT)
	IDL_SHM_KILL_LOOPS=1000 IDL_BENCH_SERVER=$(abs_top_builddir)/examples/bench/bench-server \
		tests/shm/shm-test kill
endif
endif
