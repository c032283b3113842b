# tests/bench/local.mk - idlbench's tests: a quick run whose JSON must have the documented
# shape (checked by a small C program: python is not guaranteed in CI), and `idlbench serve`
# with `--connect`, compiled and interpreted; a user's own interface (--defs, --call); the
# peer programs' columns (sd-bus, gRPC, Cap'n Proto); --inflight, calls in flight beside the
# pipelined floors.
check_PROGRAMS += tests/bench/idlbench_jsoncheck
tests_bench_idlbench_jsoncheck_SOURCES = tests/bench/idlbench_jsoncheck.c
dist_check_SCRIPTS += tests/bench/idlbench-quick.sh tests/bench/idlbench-serve.sh \
	tests/bench/idlbench-defs.sh tests/bench/idlbench-peers.sh tests/bench/idlbench-inflight.sh
TESTS += tests/bench/idlbench-quick.sh tests/bench/idlbench-serve.sh tests/bench/idlbench-defs.sh \
	tests/bench/idlbench-peers.sh tests/bench/idlbench-inflight.sh
