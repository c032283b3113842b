#!/bin/sh
# idlc-fuzz.sh - idlc -fuzz's harness for examples/bench/bench.defs, built by make with clang's
# libFuzzer and the sanitizers and linked with the generated server stubs and the example's
# routines (tests/fuzz/bench_fuzz): started on an empty corpus directory, it must write one
# seed per routine, and then run FUZZ_RUNS executions (100,000 unless set) without a
# finding (a crash, a sanitizer report, a leak: the harness serves each input through
# idl_server_serve_message(), the checks of a server on a socket). Then idlc -fuzz-client's
# harness for the same interface (tests/fuzz/bench_fuzz_client), linked with the client
# stubs: started on an empty corpus directory it must write one seed per call (each routine's
# synchronous and asynchronous stub), and those seeds must take every call past the reply's
# checks - replayed beside inputs that are a call's byte alone (no reply), they add coverage
# in each routine's stub and in its asynchronous completion (libFuzzer's -print_coverage);
# then it runs FUZZ_RUNS executions of replies through idl_port_open_memory() without a
# finding (leaks aside: an accepted reply's out-of-line data and ports are the caller's; a
# done function that runs other than once aborts).
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

# The routines of bench.defs, in order: each gets a seed named after it; those with a reply
# (not simpleroutines) are the client harness's calls.
routines=$(sed -n 's/^[[:space:]]*\(simple\)\{0,1\}routine[[:space:]]\{1,\}\([a-z0-9_]*\).*/\2/p' \
	"$IDL_TOP_SRCDIR/examples/bench/bench.defs")
[ -n "$routines" ] || { echo "FAIL: no routine found in bench.defs"; exit 1; }
replied=$(sed -n 's/^[[:space:]]*routine[[:space:]]\{1,\}\([a-z0-9_]*\).*/\1/p' \
	"$IDL_TOP_SRCDIR/examples/bench/bench.defs")

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

# The client harness's seeds: one per call, written into an empty corpus directory.
mkdir "$work/client-corpus"
ASAN_OPTIONS=detect_leaks=0 "$client" -runs=0 "$work/client-corpus" >"$work/seed-log" 2>&1 || {
	tail -20 "$work/seed-log"
	echo "FAIL: the client harness did not run its seeds"
	exit 1
}
ncalls=0
for r in $replied; do
	for s in "seed-$r" "seed-$r-async"; do
		[ -s "$work/client-corpus/$s" ] || { echo "FAIL: no client seed $s"; failed=1; }
		ncalls=$((ncalls + 1))
	done
done
[ $failed -eq 0 ] || exit 1
echo "bench_fuzz_client: $ncalls seeds for $(echo $replied | wc -w) routines, each sync and async"

# Past the header: inputs that are a call's byte alone (no reply) against the same with the
# seeds beside them. Each stub's and each completion's code after the reply's checks (the
# copy-out, the done function's call with KERN_SUCCESS) is reached by the seeds alone, so
# the covered edges of every such function must grow.
# libFuzzer's -print_coverage names a function through llvm-symbolizer, which Debian ships in
# llvm-14 (mk/deps.sh --test), as /usr/lib/llvm-14/bin/llvm-symbolizer: no name on the PATH
# unless the llvm package is installed too. The one beside the clang that built the
# harness is found by that clang (-print-prog-name) and handed to the sanitizers'
# symbolizer by ASAN_SYMBOLIZER_PATH.
symbolizer=${ASAN_SYMBOLIZER_PATH:-}
[ -n "$symbolizer" ] || symbolizer=$(command -v llvm-symbolizer)
if [ -z "$symbolizer" ] && [ -n "${IDL_CLANG:-}" ]; then
	symbolizer=$("$IDL_CLANG" -print-prog-name=llvm-symbolizer 2>/dev/null)
fi
case $symbolizer in
/*) [ -x "$symbolizer" ] || symbolizer= ;;
*) symbolizer= ;;
esac
if [ -z "$symbolizer" ]; then
	echo "FAIL: no llvm-symbolizer (not \$ASAN_SYMBOLIZER_PATH, nor on the PATH, nor beside" \
		"${IDL_CLANG:-clang}): libFuzzer's -print_coverage names no function without it;" \
		"Debian's llvm-14 has it (mk/deps.sh --test installs it)"
	exit 1
fi
echo "bench_fuzz_client: functions named by $symbolizer"
coverage() {
	ASAN_OPTIONS=detect_leaks=0 ASAN_SYMBOLIZER_PATH=$symbolizer \
		"$client" -runs=0 -print_coverage=1 "$1" 2>&1 |
		sed -n 's/^\(UN\)\{0,1\}COVERED_FUNC: hits: [0-9]* edges: \([0-9]*\)\/[0-9]* \([A-Za-z0-9_]*\) .*/\3 \2/p'
}
mkdir "$work/bytes" "$work/both"
i=0
while [ $i -lt $ncalls ]; do
	printf "\\$(printf %o $i)" >"$work/bytes/call-$i"
	i=$((i + 1))
done
cp "$work/bytes/"* "$work/client-corpus/"* "$work/both/"
coverage "$work/bytes" >"$work/cov-bytes"
coverage "$work/both" >"$work/cov-both"
grep -q '^bench_add ' "$work/cov-both" || {
	echo "FAIL: libFuzzer's -print_coverage named no function through $symbolizer:"
	ASAN_OPTIONS=detect_leaks=0 ASAN_SYMBOLIZER_PATH=$symbolizer \
		"$client" -runs=0 -print_coverage=1 "$work/both" 2>&1 | tail -20
	exit 1
}
for r in $replied; do
	for f in "bench_$r" "bench_${r}_async_complete"; do
		before=$(awk -v f="$f" '$1 == f { print $2 }' "$work/cov-bytes")
		after=$(awk -v f="$f" '$1 == f { print $2 }' "$work/cov-both")
		if [ "${after:-0}" -le "${before:-0}" ]; then
			echo "FAIL: $f: the seeds reach no code past the reply's checks" \
				"(edges ${before:-0} without them, ${after:-0} with them)"
			failed=1
		fi
	done
done
[ $failed -eq 0 ] || exit 1
echo "PASS: the seeds take every routine's stub and completion past the reply's checks"

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

# The client harness of every.defs (every kind of argument), compiled with -Wall -Wextra
# -Werror: a seed per call, each of which its call accepts, then FUZZ_RUNS / 5 executions.
every=$IDL_TOP_BUILDDIR/tests/fuzz/every_fuzz_client
[ -x "$every" ] || { echo "FAIL: $every was not built"; exit 1; }
ereplied=$(sed -n 's/^[[:space:]]*routine[[:space:]]\{1,\}\([a-z0-9_]*\).*/\1/p' \
	"$IDL_TOP_SRCDIR/tests/fuzz/every.defs")
mkdir "$work/every-corpus"
ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
"$every" -runs=$((runs / 5)) -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/" "$work/every-corpus" \
	>"$work/every-log" 2>&1
rc=$?
for r in $ereplied; do
	for s in "seed-$r" "seed-$r-async"; do
		[ -s "$work/every-corpus/$s" ] || { echo "FAIL: no every.defs client seed $s"; rc=1; }
	done
done
if [ $rc -ne 0 ]; then
	echo "FAIL: every_fuzz_client (exit $rc):"
	tail -60 "$work/every-log"
	exit 1
fi
echo "PASS: every_fuzz_client, $(sed -n 's/^stat::number_of_executed_units: *//p' \
	"$work/every-log") executions from $(ls "$work/every-corpus" | grep -c '^seed-') seeds, no finding"
