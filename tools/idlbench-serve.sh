#!/bin/sh
# idlbench-serve.sh - `idlbench serve ADDRESS` serves bench.defs alone, and
# `idlbench --connect ADDRESS` times the calls against it: the JSON has the documented
# shape and idlkit latency and one-way rows for the address's transport, and the server
# stops cleanly on SIGTERM. Then --connect to an address with no server fails clearly.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
fail() {
	echo "idlbench-serve.sh: $*" >&2
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null
	exit 1
}

bench=$IDL_TOP_BUILDDIR/tools/idlbench
check=$IDL_TOP_BUILDDIR/tools/idlbench_jsoncheck
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-serve.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
addr=unix:$tmp/bench.sock

pid=
"$bench" serve "$addr" >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
for i in $(seq 1 100); do
	grep -q "^ready $addr\$" "$tmp/serve.out" && break
	kill -0 "$pid" 2>/dev/null || fail "idlbench serve died: $(cat "$tmp/serve.err")"
	sleep 0.05
done
grep -q "^ready $addr\$" "$tmp/serve.out" || fail "idlbench serve did not say ready"

"$bench" --connect "$addr" --rounds 2 --iterations 100 --json "$tmp/c.json" >"$tmp/c.txt" \
	2>"$tmp/c.err"
status=$?
cat "$tmp/c.txt"
cat "$tmp/c.err" >&2
[ $status -eq 0 ] || fail "idlbench --connect exited with status $status"
for row in null add biginout; do
	grep -Eq "^unix +idlkit( +[0-9.]+)+" "$tmp/c.txt" || fail "no idlkit latency line"
	grep -q "\"routine\": \"$row\"" "$tmp/c.json" || fail "no $row result in the JSON"
done
grep -q '"metric": "oneway"' "$tmp/c.json" || fail "no one-way result in the JSON"
"$check" "$tmp/c.json" || fail "the JSON does not have the documented shape"

kill -TERM "$pid"
wait "$pid"
status=$?
pid=
[ $status -eq 0 ] || fail "idlbench serve exited with status $status on SIGTERM"
[ ! -e "$tmp/bench.sock" ] || fail "idlbench serve left its socket file behind"

"$bench" --connect "unix:$tmp/nobody.sock" --rounds 1 --iterations 10 >"$tmp/n.txt" 2>&1
grep -q "ECONNREFUSED" "$tmp/n.txt" || fail "--connect to no server does not say ECONNREFUSED"
exit 0
