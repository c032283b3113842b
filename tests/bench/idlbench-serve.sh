#!/bin/sh
# idlbench-serve.sh - `idlbench serve ADDRESS` serves bench.defs alone, and
# `idlbench --connect ADDRESS` times the calls against it: the JSON has the documented
# shape and idlkit latency and one-way rows for the address's transport, and the server
# stops cleanly on SIGTERM. Then --connect to an address with no server fails clearly.
# Then the same with `idlbench serve --dynamic` (the interpreted server): every call row gives
# figures, which it only does when each result checks out (the client checks what comes back,
# the routines what they get), the out-of-line rows (ool64k, ool1m) included. Last, a run with the unix-dyn column beside unix: figures, its ratio and its cost
# line, and the JSON of both, an out-of-line row among them.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
fail() {
	echo "idlbench-serve.sh: $*" >&2
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null
	exit 1
}

bench=$IDL_TOP_BUILDDIR/tools/idlbench/idlbench
check=$IDL_TOP_BUILDDIR/tests/bench/idlbench_jsoncheck
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-serve.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
addr=unix:$tmp/bench.sock

# serve [--dynamic] ADDRESS: starts idlbench serve in the background, as $pid.
pid=
serve() {
	a=$1
	shift
	"$bench" serve "$@" "$a" >"$tmp/serve.out" 2>"$tmp/serve.err" &
	pid=$!
	for i in $(seq 1 100); do
		grep -q "^ready $a\$" "$tmp/serve.out" && break
		kill -0 "$pid" 2>/dev/null || fail "idlbench serve $*: died: $(cat "$tmp/serve.err")"
		sleep 0.05
	done
	grep -q "^ready $a\$" "$tmp/serve.out" || fail "idlbench serve $* did not say ready"
}
# stop: SIGTERM, and the server must stop cleanly and remove its socket file.
stop() {
	kill -TERM "$pid"
	wait "$pid"
	status=$?
	pid=
	[ $status -eq 0 ] || fail "idlbench serve exited with status $status on SIGTERM"
	[ ! -e "${1#unix:}" ] || fail "idlbench serve left its socket file behind"
}

serve "$addr"

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
stop "$addr"

# The interpreted server.
"$bench" serve --dynamic >/dev/null 2>&1 && fail "serve --dynamic without an address succeeded"
daddr=unix:$tmp/dyn.sock
serve "$daddr" --dynamic
"$bench" --connect "$daddr" --rounds 2 --iterations 100 --json "$tmp/d.json" >"$tmp/d.txt" \
	2>"$tmp/d.err"
status=$?
cat "$tmp/d.txt"
cat "$tmp/d.err" >&2
[ $status -eq 0 ] || fail "idlbench --connect to serve --dynamic exited with status $status"
for row in null add intrpc bigin bigout biginout notify; do
	grep -q "\"routine\": \"$row\"" "$tmp/d.json" ||
		fail "serve --dynamic: no $row result (a wrong reply or an error?)"
	! grep -q "^n/a: $row " "$tmp/d.txt" || fail "serve --dynamic: $row is n/a"
done
"$check" "$tmp/d.json" || fail "serve --dynamic: the JSON does not have the documented shape"
for row in ool64k ool1m; do
	grep -q "\"routine\": \"$row\"" "$tmp/d.json" ||
		fail "serve --dynamic: no $row result (out-of-line data not interpreted?)"
	! grep -q "^n/a: $row " "$tmp/d.txt" || fail "serve --dynamic: $row is n/a"
done
stop "$daddr"

# The unix-dyn column beside unix, in one run.
"$bench" --transports unix,unix-dyn --placement same --routines null,add,biginout,notify,ool64k \
	--rounds 2 --iterations 100 --json "$tmp/u.json" >"$tmp/u.txt" 2>"$tmp/u.err"
status=$?
cat "$tmp/u.txt"
cat "$tmp/u.err" >&2
[ $status -eq 0 ] || fail "idlbench --transports unix,unix-dyn exited with status $status"
grep -Eq "^unix-dyn +idlkit +[0-9.]+ +[0-9.]+ +[0-9.]+\$" "$tmp/u.txt" ||
	fail "no unix-dyn latency figures"
grep -Eq "^ +cost +[0-9.]+ +[0-9.]+ +[0-9.]+\$" "$tmp/u.txt" || fail "no cost line"
grep -q '"transport": "unix-dyn", "routine": "biginout"' "$tmp/u.json" ||
	fail "no unix-dyn biginout result in the JSON"
grep -q '"transport": "unix-dyn", "routine": "ool64k"' "$tmp/u.json" ||
	fail "no unix-dyn ool64k result in the JSON"
"$check" "$tmp/u.json" unix unix-dyn || fail "unix-dyn: the JSON does not have the documented shape"

"$bench" --connect "unix:$tmp/nobody.sock" --rounds 1 --iterations 10 >"$tmp/n.txt" 2>&1
grep -q "ECONNREFUSED" "$tmp/n.txt" || fail "--connect to no server does not say ECONNREFUSED"

# A host name that does not resolve (.invalid never does), to serve on or to call: the line
# leads with what failed, the lookup, and ends with the code.
bad=tcp:no-such-host.invalid:7000
lookup="$bad: cannot resolve host 'no-such-host.invalid': .*EADDRINVAL)\$"
"$bench" serve "$bad" >/dev/null 2>"$tmp/s.err" && fail "serve on $bad succeeded"
grep -q "^idlbench: serve: $lookup" "$tmp/s.err" ||
	fail "serve on $bad does not lead with the lookup: $(cat "$tmp/s.err")"
"$bench" --connect "$bad" --rounds 1 --iterations 10 >/dev/null 2>"$tmp/b.err" &&
	fail "--connect $bad succeeded"
grep -q "^idlbench: $lookup" "$tmp/b.err" ||
	fail "--connect $bad does not lead with the lookup: $(cat "$tmp/b.err")"
exit 0
