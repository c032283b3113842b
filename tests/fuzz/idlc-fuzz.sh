#!/bin/sh
# idlc-fuzz.sh - idlc -fuzz's harness for examples/bench/bench.defs, built by make with clang's
# libFuzzer and the sanitizers and linked with the generated server stubs and the example's
# routines (tests/fuzz/bench_fuzz): started on an empty corpus directory, it must write one
# seed per routine, and then run FUZZ_RUNS executions (100,000 unless set) without a
# finding (a crash, a sanitizer report, a leak: the harness serves each input through
# idl_server_serve_message(), the checks of a server on a socket). Then idlc -fuzz-client's
# harness for the same interface (tests/fuzz/bench_fuzz_client), linked with the client
# stubs, runs FUZZ_RUNS executions of replies through idl_port_open_memory() without a
# finding (leaks aside: an accepted reply's out-of-line data and ports are the caller's).
: "${IDL_TOP_SRCDIR:?run me through make}" "${IDL_TOP_BUILDDIR:?run me through make}"
fuzzer=$IDL_TOP_BUILDDIR/tests/fuzz/bench_fuzz
runs=${FUZZ_RUNS:-100000}
if [ ! -x "$fuzzer" ]; then
	echo "FAIL: $fuzzer was not built (no clang with libFuzzer?)"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/idl-fuzz-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
failed=0

# The routines of bench.defs, in order: each gets a seed named after it.
routines=$(sed -n 's/^[[:space:]]*\(simple\)\{0,1\}routine[[:space:]]\{1,\}\([a-z0-9_]*\).*/\2/p' \
	"$IDL_TOP_SRCDIR/examples/bench/bench.defs")
[ -n "$routines" ] || { echo "FAIL: no routine found in bench.defs"; exit 1; }

ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
"$fuzzer" -runs="$runs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1
rc=$?
for r in $routines; do
	if [ ! -s "$work/corpus/seed-$r" ]; then
		echo "FAIL: no seed for routine $r"
		failed=1
	fi
done
echo "bench_fuzz: $(ls "$work/corpus" | grep -c '^seed-') seeds for" \
	"$(echo $routines | wc -w) routines"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/log"
executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ $rc -ne 0 ]; then
	echo "FAIL: the fuzzer found something (exit $rc):"
	tail -60 "$work/log"
	exit 1
fi
if [ "${executed:-0}" -lt "$runs" ]; then
	echo "FAIL: $executed executions, not $runs"
	failed=1
fi
if [ $failed -ne 0 ]; then
	tail -20 "$work/log"
	exit 1
fi
echo "PASS: $executed executions, no finding"

client=$IDL_TOP_BUILDDIR/tests/fuzz/bench_fuzz_client
if [ ! -x "$client" ]; then
	echo "FAIL: $client was not built"
	exit 1
fi
mkdir "$work/client-corpus"
ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
"$client" -runs="$runs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/" "$work/client-corpus" \
	>"$work/client-log" 2>&1
rc=$?
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/client-log"
executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/client-log")
if [ $rc -ne 0 ]; then
	echo "FAIL: the client harness found something (exit $rc):"
	tail -60 "$work/client-log"
	exit 1
fi
if [ "${executed:-0}" -lt "$runs" ]; then
	echo "FAIL: the client harness ran $executed executions, not $runs"
	tail -20 "$work/client-log"
	exit 1
fi
echo "PASS: bench_fuzz_client, $executed executions, no finding"
