#!/bin/sh
# idlbench-quick.sh - idlbench's smoke test: a quick run of two rounds over every transport
# this build has, in every placement. The verdict must come first (before the tables), a
# block per placement with idlkit's transports in order, then the legend once, then the
# tables with their three metrics, a column per transport and a CPU line under each figure
# and floor; the summary's "then ... slower" lists slowest last. The JSON must have the
# documented shape (idlbench_jsoncheck: the verdict, the CPU figures non-negative and
# plausible), with a latency and a one-way row with a floor for each transport, and the
# peer's rows when the ONC RPC peer is built. --markdown writes tables that parse as
# Markdown tables; --plot, when gnuplot is here, a chart per table.
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
for t in unix udp tcp tls shm port; do
	T=$(echo "$t" | tr a-z A-Z)
	if grep -q "^#define HAVE_TRANSPORT_$T 1" "$IDL_TOP_BUILDDIR/config.h"; then
		transports="$transports $t"
	fi
done
[ -n "$transports" ] || fail "config.h names no transport"

# The charts too, when gnuplot is here to draw them.
plot=
if command -v gnuplot >/dev/null 2>&1; then
	plot="--plot $tmp/out.svg"
fi
# tls: when built: its column runs on the throwaway certificates idlbench makes itself.
tls=
case " $transports " in *" tls "*) tls=,tls ;; esac
unset IDL_TLS_CERT IDL_TLS_KEY IDL_TLS_CA IDL_TLS_PIN
# Every column but the peer programs': they start a program per cell (tests/bench/
# idlbench-peers.sh runs them), and this run must stay within its bound.
start=$(date +%s)
"$bench" --quick --rounds 2 --iterations 50 --json "$tmp/out.json" --markdown "$tmp/out.md" \
	$plot --transports "unix,unix-dyn,udp,tcp,shm,port,oncrpc$tls" >"$tmp/out.txt" 2>"$tmp/err"
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
	sed -n "/^$t  *idlkit/,/ratio/p" "$tmp/out.txt" | grep -Eq "^ +cpu us +[0-9.]+\+[0-9.]+ " ||
		fail "no CPU line (client+server) under $t's figures"
done
grep -Eq "^ +ratio +[0-9]" "$tmp/out.txt" || fail "no ratio line"
grep -q "^idlkit stubs" "$tmp/out.txt" || fail "no marshaling line"

# The verdict first: before the legend and the first table, a block per placement, each
# with idlkit's local and network transports in order.
first_table=$(grep -n "communication latencies" "$tmp/out.txt" | head -n 1 | cut -d: -f1)
verdict=$(grep -n "^Verdict: " "$tmp/out.txt" | head -n 1 | cut -d: -f1)
legend=$(grep -n "^Reading this output" "$tmp/out.txt" | cut -d: -f1)
[ -n "$verdict" ] && [ "$verdict" -lt "$first_table" ] || fail "no verdict before the tables"
[ "$(echo "$legend" | wc -l)" -eq 1 ] && [ "$legend" -gt "$verdict" ] &&
	[ "$legend" -lt "$first_table" ] || fail "the legend is not printed once, after the verdict"
sed -n "${verdict},${legend}p" "$tmp/out.txt" >"$tmp/verdict"
for p in same split free; do
	grep -q "^placement $p.*, 2 rounds" "$tmp/verdict" || fail "no verdict for placement $p"
done
grep -Eq "^  calls, local +(unix|shm|port) +[0-9.]+-[0-9.]+ us per call over 6 rows; cpu [0-9.]+ us" \
	"$tmp/verdict" || fail "the verdict does not name the fastest local transport for calls"
grep -Eq "^  calls, network +(udp|tcp|tls) " "$tmp/verdict" || fail "no verdict of the network transports"
grep -Eq "^ +(unix|shm|port|udp|tcp|tls) x[0-9.]+ +([a-z]+ faster in [0-9] of 2 rounds|within noise of )" \
	"$tmp/verdict" || fail "the verdict's order does not say its rounds"
! grep -q "unix-dyn\|oncrpc" "$tmp/verdict" || fail "the verdict ranks a peer or the interpreted server"
for word in verdict flags figure "cpu us" floor ratio speedup cost "-" "udp raw one-way"; do
	sed -n "${legend},${first_table}p" "$tmp/out.txt" | grep -q "^  $word " ||
		fail "the legend does not say what '$word' is"
done

# tls: its connection rows (a full handshake, a resumed one) beside the raw OpenSSL floor's,
# TLS's own cost over tcp: in the summary, and tls among the verdict's network transports.
if [ -n "$tls" ]; then
	grep -q "connections per second, each a TLS handshake" "$tmp/out.txt" ||
		fail "no table of tls:'s handshakes"
	for row in handshake resumed; do
		grep -Eq "^  $row +fastest over tls: [0-9.]+ connections/s" "$tmp/out.txt" ||
			fail "no summary of tls's $row row"
	done
	grep -Eq "^ +TLS itself: tls x[0-9.]+ tcp's time" "$tmp/out.txt" ||
		fail "the summary does not say what TLS itself costs over tcp"
	grep -Eq "^ +tls x[0-9.]+ |^  calls, network +tls " "$tmp/verdict" ||
		fail "the verdict does not rank tls among the network transports"
	grep -q "throwaway CA" "$tmp/out.txt" "$tmp/err" ||
		fail "no note of the throwaway certificates"
	grep -q '"metric": "connect", "unit": "connections/s"' "$tmp/out.json" ||
		fail "the JSON has no connection rows"
fi

# The summary's lists: slowest last.
grep "; then .* slower$" "$tmp/out.txt" | while read -r line; do
	echo "$line" | sed 's/.*; then //; s/ slower$//' | tr ',' '\n' | sed 's/.* x//' |
		awk '$1 + 0 < prev { exit 1 } { prev = $1 + 0 }' ||
		fail "a summary's list is not slowest last: $line"
done || exit 1

"$check" "$tmp/out.json" $transports || fail "the JSON does not have the documented shape"
if grep -q "^#define HAVE_TIRPC 1" "$IDL_TOP_BUILDDIR/config.h"; then
	for t in oncrpc-tcp oncrpc-udp oncrpc-unix; do
		grep -q "\"transport\": \"$t\"" "$tmp/out.json" || fail "no peer rows for $t"
	done
fi

# The Markdown: every table a header, a separator and rows of as many cells; one table per
# placement and metric the text has, and the verdict's.
awk '/^\|/ { n = gsub(/\|/, "|")
		if (!row) { cells = n; tables++ }
		else if (n != cells) { print "line " NR ": " n - 1 " cells in a table of " cells - 1; bad = 1 }
		if (row == 1 && $0 !~ /^\|(-+:?\|)+$/) { print "line " NR ": no separator under the header"; bad = 1 }
		row++; next }
	{ row = 0 }
	END { print tables " tables"; exit bad || tables < 10 }' "$tmp/out.md" >"$tmp/md.check" ||
	fail "--markdown's tables do not parse: $(cat "$tmp/md.check")"
cat "$tmp/md.check"
grep -q "^## Verdict" "$tmp/out.md" && grep -q "^| calls, local | " "$tmp/out.md" ||
	fail "--markdown has no verdict table"

if [ -n "$plot" ]; then
	for p in same split free; do
		for kind in latency oneway bandwidth; do
			grep -q "<svg" "$tmp/out-$p-$kind.svg" 2>/dev/null ||
				fail "--plot wrote no chart of $p's $kind table"
		done
	done
	grep -q "wrote $tmp/out-same-latency.svg" "$tmp/err" || fail "--plot does not name its files"
fi
exit 0
