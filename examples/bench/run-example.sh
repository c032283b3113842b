#!/bin/sh
# run-example.sh - the first example end to end: starts bench-server, waits until it is ready,
# runs bench-client against it, and stops the server.
#
#     examples/bench/run-example.sh [-n CALLS] [-r ROUNDS] [ADDRESS]
#
# ADDRESS defaults to a UNIX socket in a fresh private directory; -n and -r go to
# bench-client. `make run-example` runs it; by hand, run it from the build directory, or set
# BENCH_BINDIR to the directory of the two programs. Exits with the client's status, or 1 if
# the server did not start or did not stop cleanly.
set -u

prog=run-example.sh
usage() {
	echo "usage: $prog [-n CALLS] [-r ROUNDS] [ADDRESS]" >&2
	exit 2
}

client_opts=
while getopts n:r:h opt; do
	case $opt in
	n | r) client_opts="$client_opts -$opt $OPTARG" ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -le 1 ] || usage

bindir=${BENCH_BINDIR:-}
if [ -z "$bindir" ]; then
	for d in examples/bench "$(dirname "$0")"; do
		if [ -x "$d/bench-server" ] && [ -x "$d/bench-client" ]; then
			bindir=$d
			break
		fi
	done
fi
if [ -z "$bindir" ]; then
	echo "$prog: bench-server and bench-client not found: run make, then run this from" \
		"the build directory, or set BENCH_BINDIR" >&2
	exit 1
fi

# A private directory (mktemp -d makes it 0700) for the socket and the server's output.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-bench.XXXXXX") || exit 1
address=${1:-unix:$tmp/bench.sock}
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

"$bindir/bench-server" "$address" >"$tmp/server.out" &
server_pid=$!

# Wait up to 10 s for the server's "ready" line.
tries=0
until grep -q '^ready ' "$tmp/server.out" 2>/dev/null; do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		wait "$server_pid"
		echo "$prog: bench-server exited with status $? before it was ready" >&2
		server_pid=
		exit 1
	fi
	tries=$((tries + 1))
	if [ $tries -gt 100 ]; then
		echo "$prog: bench-server was not ready within 10 s" >&2
		exit 1
	fi
	sleep 0.1
done

# shellcheck disable=SC2086 # the options are words on purpose
"$bindir/bench-client" $client_opts "$address"
status=$?

# The server stops on SIGTERM and must exit 0 after stopping cleanly.
kill -TERM "$server_pid"
wait "$server_pid"
server_status=$?
server_pid=
if [ $server_status -ne 0 ]; then
	echo "$prog: bench-server exited with status $server_status after SIGTERM" >&2
	[ $status -ne 0 ] || status=1
fi
exit $status
