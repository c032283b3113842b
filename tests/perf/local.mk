# tests/perf/local.mk - the instruction budget: what one null call and one one-way message
# cost in user space on each side, counted by callgrind (docs/benchmarks.md, "The
# instruction budget").
# null-client links libidlrt shared, as a user's program does; budget.sh runs it and
# `idlbench serve` under valgrind and fails above the budget.
check_PROGRAMS += tests/perf/null-client
tests_perf_null_client_SOURCES = tests/perf/null-client.c
tests_perf_null_client_CPPFLAGS = $(bench_cppflags)
tests_perf_null_client_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
tests_perf_null_client_LDFLAGS = -no-install
dist_check_SCRIPTS += tests/perf/budget.sh
TESTS += tests/perf/budget.sh
