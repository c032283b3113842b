#!/bin/sh
# example.sh - the first example end to end, as the README runs it: run-example.sh starts
# bench-server, runs bench-client (which checks every result) and stops the server, which
# must exit 0. Then the client's error path: no server at the address is a clear failure.
: "${IDL_TOP_SRCDIR:?run me through make check}" "${BENCH_BINDIR:?run me through make check}"
set -u
fail() {
	echo "example.sh: $*" >&2
	exit 1
}

out=$(BENCH_BINDIR=$BENCH_BINDIR "$IDL_TOP_SRCDIR/examples/bench/run-example.sh" -n 200 -r 3)
status=$?
printf '%s\n' "$out"
[ $status -eq 0 ] || fail "run-example.sh exited with status $status"
for routine in null add intrpc bigin bigout biginout echo sum notify; do
	printf '%s\n' "$out" | grep -Eq "^$routine +[0-9]+(\.[0-9]+)? +[0-9]" ||
		fail "no timing row for $routine"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-e2e.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$BENCH_BINDIR/bench-client" -n 1 -r 1 "unix:$tmp/nobody.sock" >"$tmp/out" 2>"$tmp/err"
status=$?
cat "$tmp/err"
[ $status -ne 0 ] || fail "bench-client succeeded with no server"
grep -q "nobody.sock" "$tmp/err" || fail "bench-client's error does not name the address"
grep -q "ECONNREFUSED\|ESYSERR" "$tmp/err" || fail "bench-client's error does not name the error"
exit 0
