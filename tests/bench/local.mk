# tests/bench/local.mk - idlbench's tests: a quick run whose verdict comes first, whose JSON
# must have the documented shape (checked by a small C program: python is not guaranteed in
# CI) with CPU figures, whose charts and Markdown are there; the verdict's rule on made-up
# figures (vdtest, linked with the rule's own sources); `idlbench serve` with `--connect`,
# compiled and interpreted; a user's own interface (--defs, --call); state kept across rows
# (--impl, --setup) with calls in flight; the peer programs' columns (sd-bus, gRPC, Cap'n
# Proto); --inflight, calls in flight beside the pipelined floors.
check_PROGRAMS += tests/bench/idlbench_jsoncheck tests/bench/vdtest
tests_bench_idlbench_jsoncheck_SOURCES = tests/bench/idlbench_jsoncheck.c
tests_bench_vdtest_SOURCES = tests/bench/vdtest.c tools/idlbench/idlbench_verdict.c \
	tools/idlbench/idlbench_base.c
tests_bench_vdtest_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/idlbench
tests_bench_vdtest_LDADD = -lm
dist_check_SCRIPTS += tests/bench/idlbench-quick.sh tests/bench/idlbench-serve.sh \
	tests/bench/idlbench-defs.sh tests/bench/idlbench-peers.sh tests/bench/idlbench-inflight.sh \
	tests/bench/idlbench-stateful.sh
EXTRA_DIST += tests/bench/bank.defs tests/bench/bank_impl.c
TESTS += tests/bench/vdtest tests/bench/idlbench-quick.sh tests/bench/idlbench-serve.sh \
	tests/bench/idlbench-defs.sh tests/bench/idlbench-peers.sh tests/bench/idlbench-inflight.sh \
	tests/bench/idlbench-stateful.sh
