#!/bin/sh
# smoke.sh - make check's short run of the front-end fuzzer (tests/fuzz/fuzz_defs): the seed
# corpus and the keyword dictionary, a bounded number of runs and time. Fails on any
# finding, printing the input that caused it. FUZZ_RUNS and FUZZ_TIME (seconds) override the
# bounds; `make check-long-fuzz` runs with larger ones.
: "${IDL_TOP_SRCDIR:?run me through make check}" "${IDL_TOP_BUILDDIR:?run me through make check}"
fuzzer=$IDL_TOP_BUILDDIR/tests/fuzz/fuzz_defs
runs=${FUZZ_RUNS:-40000}
time=${FUZZ_TIME:-60}
# libFuzzer's -runs=0 only replays the corpus; 0 here means "no bound on runs", its -1.
[ "$runs" = 0 ] && runs=-1
if [ ! -x "$fuzzer" ]; then
	echo "FAIL: $fuzzer was not built (configure found no clang with libFuzzer:" \
		"apt-get install -y clang-14 libclang-rt-14-dev)"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/idlc-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/new"
"$fuzzer" -runs="$runs" -max_total_time="$time" -max_len=4096 -timeout=10 \
	-rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$work/" \
	-dict="$IDL_TOP_SRCDIR/tests/fuzz/defs.dict" \
	"$work/new" "$IDL_TOP_SRCDIR/tests/fuzz/corpus" >"$work/log" 2>&1
rc=$?
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' "$work/log"
if [ $rc -ne 0 ]; then
	echo "FAIL: the fuzzer found something (exit $rc):"
	tail -60 "$work/log"
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -f "$f" ] || continue
		echo "--- $f:"
		od -c "$f" | head -40
	done
	exit 1
fi
echo "PASS: no finding"
