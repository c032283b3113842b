#!/bin/sh
# example.sh - the first example over port: run-example.sh starts bench-server on a message
# queue, runs bench-client (which checks every result) and stops the server, which must
# exit 0. Afterwards the queue must be gone: a client to the same address is refused.
: "${IDL_TOP_SRCDIR:?run me through make check}" "${BENCH_BINDIR:?run me through make check}"
set -u
fail() {
	echo "port/example.sh: $*" >&2
	exit 1
}

address=port:/idlkit-example-$$
out=$(BENCH_BINDIR=$BENCH_BINDIR "$IDL_TOP_SRCDIR/examples/bench/run-example.sh" -n 200 -r 3 \
	"$address")
status=$?
printf '%s\n' "$out"
[ $status -eq 0 ] || fail "run-example.sh over $address exited with status $status"
for routine in null add intrpc bigin bigout biginout echo sum notify; do
	printf '%s\n' "$out" | grep -Eq "^$routine +[0-9]+(\.[0-9]+)? +[0-9]" ||
		fail "no timing row for $routine"
done

err=$("$BENCH_BINDIR/bench-client" -n 1 -r 1 "$address" 2>&1 >/dev/null)
status=$?
printf '%s\n' "$err"
[ $status -ne 0 ] || fail "bench-client succeeded after the server stopped"
printf '%s\n' "$err" | grep -q "ECONNREFUSED" || fail "the queue is still there: $err"
exit 0
