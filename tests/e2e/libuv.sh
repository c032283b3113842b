#!/bin/sh
# libuv.sh - the libuv examples end to end (examples/libuv/). uv-server serves bench.defs on
# a unix:, a tcp:, a udp:, a shm: and a port: address from one libuv loop; five uv-clients
# (64 calls in flight each) and synchronous bench-clients call it at once, and each must
# see every result right. While they run, the server must have exactly one thread
# (/proc/PID/task): the embeddable server creates none. SIGTERM must stop it cleanly (exit
# 0, its socket files removed). An address uv-server cannot listen on must be refused by
# name before the server says it is ready. Skipped only when configure did not find libuv,
# so that the examples were not built.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
fail() {
	echo "libuv.sh: FAIL: $*" >&2
	exit 1
}
say() {
	echo "libuv.sh: $*"
}

if [ "${IDL_HAVE_LIBUV:-}" != yes ]; then
	echo "libuv.sh: SKIP: configure did not find libuv (libuv1-dev), so examples/libuv is not built" >&2
	exit 77
fi

uvdir=$IDL_TOP_BUILDDIR/examples/libuv
benchdir=$IDL_TOP_BUILDDIR/examples/bench
for p in "$uvdir/uv-server" "$uvdir/uv-client" "$benchdir/bench-client"; do
	[ -x "$p" ] || fail "$p is not built although configure found libuv"
done
calls=50000

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-libuv.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# A port number from 20000 to 59999 (dash has no $RANDOM).
random_port() {
	echo $((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
}

# threads PID: the number of threads of process PID now.
threads() {
	set -- /proc/"$1"/task/*
	echo $#
}

# 1. An address that cannot be listened on is refused by name, before "ready".
"$uvdir/uv-server" "unix:$tmp/refused.sock" "unix:$tmp/no/such/dir/refused.sock" \
	>"$tmp/refused.out" 2>"$tmp/refused.err"
status=$?
cat "$tmp/refused.err"
[ $status -eq 1 ] || fail "uv-server with a bad address exited with status $status, not 1"
grep -q "unix:$tmp/no/such/dir/refused.sock" "$tmp/refused.err" || fail "the refusal does not name the address"
! grep -q '^ready' "$tmp/refused.out" || fail "uv-server said ready with a bad address"
[ ! -e "$tmp/refused.sock" ] || fail "the refused server left its socket file behind"

# 2. The server on unix:, tcp:, udp:, shm: and port:, on free ports (tried again if a port
# is taken).
unix_addr=unix:$tmp/uv.sock
shm_addr=shm:$tmp/uv.shm
port_addr=port:/idlkit-libuv-$$
server=
for try in 1 2 3 4 5 6 7 8 9 10; do
	tcp_addr=tcp:127.0.0.1:$(random_port)
	udp_addr=udp:127.0.0.1:$(random_port)
	: >"$tmp/server.out"
	"$uvdir/uv-server" "$unix_addr" "$tcp_addr" "$udp_addr" "$shm_addr" "$port_addr" \
		>>"$tmp/server.out" 2>"$tmp/server.err" &
	server=$!
	pids="$pids $server"
	i=0
	while ! grep -q '^ready' "$tmp/server.out" 2>/dev/null; do
		if ! kill -0 "$server" 2>/dev/null; then
			wait "$server"
			server=
			break
		fi
		i=$((i + 1))
		[ $i -lt 1000 ] || fail "uv-server not ready within 10 s"
		sleep 0.01
	done
	[ -n "$server" ] && break
	grep -q "EADDRINUSE" "$tmp/server.err" || {
		cat "$tmp/server.err" >&2
		fail "uv-server $unix_addr $tcp_addr $udp_addr $port_addr did not start"
	}
done
[ -n "$server" ] || fail "no free tcp port in 10 tries"
say "uv-server $server: $(cat "$tmp/server.out")"
n=$(threads "$server")
[ "$n" -eq 1 ] || fail "uv-server has $n threads before any client, not 1"

# 3. The libuv client over each address, and the synchronous one over each in turn, all
# beside each other. The two bench-clients take turns because each checks counters the
# server keeps for all its clients (the notify count, the last out-of-line checksum), which
# two of them at once would mix; the uv-clients call only add.
"$uvdir/uv-client" -n $calls "$unix_addr" >"$tmp/uv-unix.out" 2>&1 &
c1=$!
"$uvdir/uv-client" -n $calls "$tcp_addr" >"$tmp/uv-tcp.out" 2>&1 &
c2=$!
"$uvdir/uv-client" -n $calls "$udp_addr" >"$tmp/uv-udp.out" 2>&1 &
c5=$!
"$uvdir/uv-client" -n $calls "$port_addr" >"$tmp/uv-port.out" 2>&1 &
c6=$!
"$uvdir/uv-client" -n $calls "$shm_addr" >"$tmp/uv-shm.out" 2>&1 &
c7=$!
"$benchdir/bench-client" -n 200 -r 3 "$unix_addr" >"$tmp/sync-unix.out" 2>&1 &
c3=$!
pids="$pids $c1 $c2 $c3 $c5 $c6 $c7"

# The server's threads, read every 10 ms while any client runs; the second bench-client
# starts when the first has ended.
samples=0
most=0
c4=
while kill -0 $c1 2>/dev/null || kill -0 $c2 2>/dev/null || kill -0 $c3 2>/dev/null ||
	kill -0 $c5 2>/dev/null || kill -0 $c6 2>/dev/null || kill -0 $c7 2>/dev/null ||
	[ -z "$c4" ] || kill -0 "$c4" 2>/dev/null; do
	if [ -z "$c4" ] && ! kill -0 $c3 2>/dev/null; then
		"$benchdir/bench-client" -n 200 -r 3 "$tcp_addr" >"$tmp/sync-tcp.out" 2>&1 &
		c4=$!
		pids="$pids $c4"
	fi
	kill -0 "$server" 2>/dev/null || fail "uv-server died while serving: $(cat "$tmp/server.err")"
	n=$(threads "$server")
	samples=$((samples + 1))
	[ "$n" -gt "$most" ] && most=$n
	[ "$n" -eq 1 ] || fail "uv-server has $n threads while serving, not 1"
	sleep 0.01
done

status=0
for c in "$c1 uv-unix" "$c2 uv-tcp" "$c5 uv-udp" "$c6 uv-port" "$c7 uv-shm" "$c3 sync-unix" \
	"$c4 sync-tcp"; do
	set -- $c
	wait "$1"
	s=$?
	cat "$tmp/$2.out"
	if [ $s -ne 0 ]; then
		echo "libuv.sh: FAIL: client $2 exited with status $s" >&2
		status=1
	fi
done
[ $status -eq 0 ] || fail "a client failed against uv-server"
for f in uv-unix uv-tcp uv-udp uv-port uv-shm; do
	grep -q ": $calls of $calls calls, 64 in flight, .*; 0 wrong, 0 failed: ok$" "$tmp/$f.out" ||
		fail "$f: not every call succeeded: $(cat "$tmp/$f.out")"
done
grep -q '^add ' "$tmp/sync-unix.out" || fail "bench-client over unix: printed no row for add"
grep -q '^add ' "$tmp/sync-tcp.out" || fail "bench-client over tcp: printed no row for add"
[ $samples -ge 3 ] || fail "only $samples thread counts were read while the clients ran"
say "uv-server's threads while serving: $most at most in $samples readings"

# 4. SIGTERM stops the loop; the server exits 0, having served every client's connection.
kill -TERM "$server" || fail "uv-server is not running"
i=0
while kill -0 "$server" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 1000 ] || fail "uv-server did not stop within 10 s of SIGTERM"
	sleep 0.01
done
wait "$server"
status=$?
cat "$tmp/server.out" "$tmp/server.err"
[ $status -eq 0 ] || fail "uv-server exited with status $status after SIGTERM"
accepted=$(sed -n 's/^served [0-9]* events; \([0-9]*\) connections accepted.*/\1/p' "$tmp/server.out")
[ -n "$accepted" ] || fail "uv-server printed no summary"
# Each connected uv-client makes one connection (its asynchronous one; udp: has none to
# accept); each bench-client at least one.
[ "$accepted" -ge 6 ] || fail "uv-server accepted $accepted connections, fewer than its 6 clients"
[ ! -e "$tmp/uv.sock" ] || fail "uv-server left its socket file behind"
[ ! -e "$tmp/uv.shm" ] || fail "uv-server left its shm: socket file behind"
say "PASS"
exit 0
