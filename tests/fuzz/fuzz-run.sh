#!/bin/sh
# fuzz-run.sh TARGET - a run of tests/fuzz/fuzz_TARGET (demux or reply) with its seed
# corpus and dictionary: a bounded number of runs and seconds (FUZZ_RUNS, FUZZ_TIME; make
# check's smoke run by default, make check-long-harden a long one). Prints libFuzzer's
# final figures and fails on any finding, printing the input that caused it.
: "${IDL_TOP_SRCDIR:?run me through make}" "${IDL_TOP_BUILDDIR:?run me through make}"
target=${1:?usage: fuzz-run.sh demux|reply}
fuzzer=$IDL_TOP_BUILDDIR/tests/fuzz/fuzz_$target
runs=${FUZZ_RUNS:-1000000}
time=${FUZZ_TIME:-30}
# libFuzzer's -runs=0 runs the corpus only; 0 here means "until the time is up".
[ "$runs" = 0 ] && runs=-1
if [ ! -x "$fuzzer" ]; then
	echo "FAIL: $fuzzer was not built (configure found no clang with libFuzzer:" \
		"apt-get install -y clang-14 libclang-rt-14-dev)"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/idl-fuzz-$target.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/new"
# Leaks are findings (detect_leaks); a routine's bound check aborts (a crash).
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
"$fuzzer" -runs="$runs" -max_total_time="$time" -max_len=16384 -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" \
	-dict="$IDL_TOP_SRCDIR/tests/fuzz/$target.dict" \
	"$work/new" "$IDL_TOP_SRCDIR/tests/fuzz/$target-corpus" >"$work/log" 2>&1
rc=$?
echo "fuzz_$target: $(ls "$IDL_TOP_SRCDIR/tests/fuzz/$target-corpus" | wc -l) seeds," \
	"$(ls "$work/new" | wc -l) new inputs"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
	"$work/log"
grep -E '^#[0-9]+.*(DONE|cov:)' "$work/log" | tail -1
if [ $rc -ne 0 ]; then
	echo "FAIL: the fuzzer found something (exit $rc):"
	tail -80 "$work/log"
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -f "$f" ] || continue
		echo "--- $f:"
		od -A d -t x1 "$f" | head -40
		[ -n "$FUZZ_KEEP" ] && cp "$f" "$FUZZ_KEEP/"
	done
	exit 1
fi
echo "PASS: no finding"
