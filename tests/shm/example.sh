#!/bin/sh
# example.sh - the first example end to end over shm: (the README's run-example.sh with an
# shm: address): every routine's result checked by bench-client, a clean stop of the server,
# and nothing left at the address.
: "${IDL_TOP_SRCDIR:?run me through make check}" "${BENCH_BINDIR:?run me through make check}"
set -u
fail() {
	echo "shm example.sh: $*" >&2
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-shm-e2e.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$(BENCH_BINDIR=$BENCH_BINDIR "$IDL_TOP_SRCDIR/examples/bench/run-example.sh" -n 200 -r 3 \
	"shm:$tmp/bench.sock")
status=$?
printf '%s\n' "$out"
[ $status -eq 0 ] || fail "run-example.sh exited with status $status"
for routine in null add intrpc bigin bigout biginout echo sum notify; do
	printf '%s\n' "$out" | grep -Eq "^$routine +[0-9]+(\.[0-9]+)? +[0-9]" ||
		fail "no timing row for $routine"
done
[ ! -e "$tmp/bench.sock" ] || fail "the server left its rendezvous socket behind"
exit 0
