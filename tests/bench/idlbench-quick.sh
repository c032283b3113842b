#!/bin/sh
# idlbench-quick.sh - idlbench's smoke test: a one-round quick run over every transport this
# build has, in every placement. The tables must show the three metrics and a column per
# transport, and the JSON must have the documented shape (idlbench_jsoncheck), with a
# latency and a one-way row with a floor for each transport, and the peer's rows when the
# ONC RPC peer is built.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
fail() {
	echo "idlbench-quick.sh: $*" >&2
	exit 1
}

bench=$IDL_TOP_BUILDDIR/tools/idlbench/idlbench
check=$IDL_TOP_BUILDDIR/tests/bench/idlbench_jsoncheck
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-quick.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The transports built, as configure wrote them down.
transports=
for t in unix udp tcp shm port; do
	T=$(echo "$t" | tr a-z A-Z)
	if grep -q "^#define HAVE_TRANSPORT_$T 1" "$IDL_TOP_BUILDDIR/config.h"; then
		transports="$transports $t"
	fi
done
[ -n "$transports" ] || fail "config.h names no transport"

# The chart too, when gnuplot is here to draw it.
plot=
if command -v gnuplot >/dev/null 2>&1; then
	plot="--plot $tmp/out.svg"
fi
# Every column but the peer programs': they start a program per cell (tests/bench/
# idlbench-peers.sh runs them), and this run must stay within its bound.
start=$(date +%s)
"$bench" --quick --rounds 1 --iterations 50 --json "$tmp/out.json" $plot \
	--transports unix,unix-dyn,udp,tcp,shm,port,oncrpc >"$tmp/out.txt" 2>"$tmp/err"
status=$?
end=$(date +%s)
cat "$tmp/out.txt"
cat "$tmp/err" >&2
[ $status -eq 0 ] || fail "idlbench exited with status $status"
echo "idlbench-quick.sh: the run took $((end - start)) s"
[ $((end - start)) -le 120 ] || fail "a --quick run with 50 iterations took over two minutes"

for title in "communication latencies" "one-way messages" "communication bandwidths"; do
	grep -q "$title" "$tmp/out.txt" || fail "no table of $title"
done
for p in same split free; do
	grep -q "^placement $p" "$tmp/out.txt" || fail "no table for placement $p"
done
for t in $transports; do
	grep -Eq "^$t +idlkit +[0-9]" "$tmp/out.txt" || fail "no latency figures for $t"
	grep -Eq "^ +ratio +[0-9]" "$tmp/out.txt" || fail "no ratio line"
done
grep -q "^idlkit stubs" "$tmp/out.txt" || fail "no marshaling line"

"$check" "$tmp/out.json" $transports || fail "the JSON does not have the documented shape"
if grep -q "^#define HAVE_TIRPC 1" "$IDL_TOP_BUILDDIR/config.h"; then
	for t in oncrpc-tcp oncrpc-udp oncrpc-unix; do
		grep -q "\"transport\": \"$t\"" "$tmp/out.json" || fail "no peer rows for $t"
	done
fi
if [ -n "$plot" ]; then
	grep -q "<svg" "$tmp/out.svg" || fail "--plot wrote no SVG"
fi
exit 0
