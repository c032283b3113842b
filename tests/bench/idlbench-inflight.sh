#!/bin/sh
# idlbench-inflight.sh - idlbench --inflight N: a bad N is a usage error (status 2) that
# says the range; --inflight 16 over every transport this build has times null and add in
# calls per second with 16 calls in flight, every result checked by the client (a wrong sum
# or a failed call makes its cell n/a, which fails this test), beside each transport's
# pipelined floor: the table has a figure, a floor and a ratio for each, and the JSON says
# "inflight": 16 and has the documented shape (idlbench_jsoncheck: a throughput row with a
# positive rate, floor and ratio per transport). Then a window of 1024 large messages, which
# fills the floors' buffers both ways; last, --inflight against `idlbench serve` with
# --connect.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
fail() {
	echo "idlbench-inflight.sh: $*" >&2
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null
	exit 1
}

bench=$IDL_TOP_BUILDDIR/tools/idlbench/idlbench
check=$IDL_TOP_BUILDDIR/tests/bench/idlbench_jsoncheck
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-inflight.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pid=

for bad in 0 1025 -3 x16 ""; do
	"$bench" --inflight "$bad" --routines null >"$tmp/bad.out" 2>&1
	status=$?
	[ $status -eq 2 ] || fail "--inflight '$bad' exited with status $status, not 2"
	grep -q -- "--inflight wants a number from 1 to 1024" "$tmp/bad.out" ||
		fail "--inflight '$bad' does not say the range: $(cat "$tmp/bad.out")"
done
"$bench" --inflight 4 --marshal >"$tmp/bad.out" 2>&1
[ $? -eq 2 ] && grep -q "not with --marshal or serve" "$tmp/bad.out" ||
	fail "--inflight 4 --marshal is not a usage error: $(cat "$tmp/bad.out")"

transports=
for t in unix udp tcp tls shm port; do
	T=$(echo "$t" | tr a-z A-Z)
	if grep -q "^#define HAVE_TRANSPORT_$T 1" "$IDL_TOP_BUILDDIR/config.h"; then
		transports="$transports $t"
	fi
done
[ -n "$transports" ] || fail "config.h names no transport"
list=$(echo $transports | tr ' ' ,)

start=$(date +%s)
"$bench" --inflight 16 --placement same --rounds 1 --iterations 200 --routines null,add,notify \
	--transports "$list" --json "$tmp/out.json" >"$tmp/out.txt" 2>"$tmp/err"
status=$?
end=$(date +%s)
cat "$tmp/out.txt"
cat "$tmp/err" >&2
[ $status -eq 0 ] || fail "idlbench --inflight 16 exited with status $status"
echo "idlbench-inflight.sh: the run took $((end - start)) s"
grep -q "calls in flight, thousands of calls per second" "$tmp/out.txt" ||
	fail "no table of calls in flight"
grep -q "^16 calls in flight from one client thread" "$tmp/out.txt" ||
	fail "the table does not say how many calls were in flight"
# Each transport: null and add as rates (thousands per second), the floor's, and the ratio.
for t in $transports; do
	grep -Eq "^$t +idlkit +[0-9.]+ +[0-9.]+\$" "$tmp/out.txt" ||
		fail "no rates of null and add for $t"
	sed -n "/^$t /,/ratio/p" "$tmp/out.txt" | grep -Eq "^ +floor +[0-9.]+ +[0-9.]+" ||
		fail "no pipelined floor for $t"
	sed -n "/^$t /,/ratio/p" "$tmp/out.txt" | grep -Eq "^ +ratio +[0-9.]+ +[0-9.]+" ||
		fail "no ratio for $t"
	grep -Eq "^       $t: " "$tmp/out.txt" || fail "the output does not say how $t's floor batches"
done
! grep -q "^n/a" "$tmp/out.txt" || fail "a cell is n/a"
grep -q '"inflight": 16,' "$tmp/out.json" || fail "the JSON does not say \"inflight\": 16"
for row in null add; do
	for t in $transports; do
		grep -q "\"transport\": \"$t\", \"routine\": \"$row\", \"placement\": \"same\", \"metric\": \"throughput\", \"unit\": \"calls/s\"" "$tmp/out.json" ||
			fail "no throughput result of $row over $t in the JSON"
	done
done
"$check" "$tmp/out.json" $transports || fail "the JSON does not have the documented shape"

# A window of 1024 of biginout's messages fills the unix socket's send buffer and shm's ring
# in both directions at once: the floors must go on (the client reads replies rather than
# wait to send). udp is left out: without retransmission its floor loses replies there.
big=
for t in $transports; do
	[ "$t" = udp ] || big="$big,$t"
done
if [ -n "$big" ]; then
	timeout 120 "$bench" --inflight 1024 --placement same --rounds 1 --reps 1 --iterations 2500 \
		--routines biginout --transports "${big#,}" >"$tmp/big.txt" 2>&1
	status=$?
	cat "$tmp/big.txt"
	[ $status -eq 0 ] || fail "--inflight 1024 exited with status $status (124: it hung)"
	! grep -q "^n/a" "$tmp/big.txt" || fail "--inflight 1024: a cell is n/a"
	for t in $(echo "${big#,}" | tr , ' '); do
		sed -n "/^$t /,/ratio/p" "$tmp/big.txt" | grep -Eq "^ +floor +[0-9.]+\$" ||
			fail "--inflight 1024: no floor for $t"
	done
fi

# --connect: the client alone, against idlbench serve.
addr=unix:$tmp/bench.sock
"$bench" serve "$addr" >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
for i in $(seq 1 100); do
	grep -q "^ready $addr\$" "$tmp/serve.out" && break
	kill -0 "$pid" 2>/dev/null || fail "idlbench serve died: $(cat "$tmp/serve.err")"
	sleep 0.05
done
"$bench" --connect "$addr" --inflight 16 --rounds 1 --iterations 200 --routines null,add,biginout \
	--json "$tmp/c.json" >"$tmp/c.txt" 2>"$tmp/c.err"
status=$?
cat "$tmp/c.txt"
cat "$tmp/c.err" >&2
[ $status -eq 0 ] || fail "idlbench --connect --inflight 16 exited with status $status"
grep -Eq "^unix +idlkit +[0-9.]+ +[0-9.]+ +[0-9.]+\$" "$tmp/c.txt" ||
	fail "--connect: no rates of null, add and biginout"
"$check" "$tmp/c.json" || fail "--connect: the JSON does not have the documented shape"
kill -TERM "$pid"
wait "$pid"
pid=
[ $((end - start)) -le 60 ] || fail "a run of --inflight 16 with 200 iterations took over a minute"
exit 0
