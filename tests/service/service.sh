#!/bin/sh
# service.sh - idlkit servers under a service manager (docs/deploy.md), with the real tool:
# systemd-socket-activate (Debian's systemd package) holds the sockets and starts the server
# on the first connection, handing it the socket (LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID);
# port:'s queue comes from tests/service/mq-activate, which does what systemd does for
# ListenMessageQueue= (the tool makes sockets only). A notify reader plays the manager's
# side of the notify protocol (NOTIFY_SOCKET).
#
# For unix:, tcp:, udp:, shm:, tls: and port: (those this build has), and for unix:, shm: and
# port: again with the server embedded in a poll() loop:
#   - clients whose first calls reach a server that is not running yet all succeed;
#   - READY=1 comes once the server listens; WATCHDOG=1 comes every half of WATCHDOG_USEC;
#   - SIGTERM while 64 calls are in flight: every one completes (a drain), the server
#     exits 0, and STOPPING=1 comes.
# Then, once: no ping while the server is stopped with SIGSTOP, pings again after SIGCONT;
# no ping when WATCHDOG_PID names another process; a socket of the wrong kind refused with
# a message that says what was passed and what is needed, for each transport; a socket file
# (and a queue) others may write to refused; a name nobody passed; sockets passed to another
# process (LISTEN_PID); idlbench serve and idlcall --serve adopting a socket and draining on
# SIGTERM; the units of examples/systemd/ read by systemd-analyze verify.
: "${IDL_TOP_BUILDDIR:?run me through make check}" "${IDL_TOP_SRCDIR:?run me through make check}"
set -u
b=$IDL_TOP_BUILDDIR
srv=$b/tests/service/svc-server
cli=$b/tests/service/svc-client
reader=$b/tests/service/notify-reader
mqa=$b/tests/service/mq-activate

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
if ! command -v systemd-socket-activate >/dev/null 2>&1; then
	echo "SKIP: systemd-socket-activate is not installed (Debian's systemd package)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-service.XXXXXX") || exit 1
chmod 700 "$tmp"
pids=
cleanup() {
	# TERM first: mq-activate removes its queue.
	for p in $pids; do kill "$p" 2>/dev/null; done
	sleep 0.1
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	# SERVICE_KEEP=1 keeps the logs for a look after a failure.
	if [ -n "${SERVICE_KEEP:-}" ]; then echo "kept: $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

have() {
	T=$(echo "$1" | tr a-z A-Z)
	grep -q "^#define HAVE_TRANSPORT_$T 1" "$b/config.h"
}

# Waits (at most 10 s) until file $1 has a line matching $2.
await() {
	i=0
	until grep -q -- "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 1000 ] || fail "no \"$2\" in $1 after 10 s: $(cat "$1" 2>/dev/null)"
		sleep 0.01
	done
}

# A notify socket $tmp/$1.notify and its reader's log $tmp/$1.log.
reader_start() {
	"$reader" "$tmp/$1.notify" >"$tmp/$1.log" &
	pids="$pids $!"
	await "$tmp/$1.log" listening
}

# A free loopback port for $1 (tcp or udp).
free_port() {
	"$cli" port "$1"
}

# activate TAG NAME LISTEN-FLAGS... PROGRAM ARGS...: systemd-socket-activate in the
# background, its sockets named NAME, the notify socket $tmp/TAG.notify, a watchdog of 400 ms
# (WDOG_USEC) for the tool's own pid, which the program keeps (the tool execs it). Sets $apid,
# the tool's pid and the server's once it runs.
activate() {
	tag=$1
	name=$2
	shift 2
	# shellcheck disable=SC2016
	sh -c 'exec systemd-socket-activate -E WATCHDOG_PID=${WDOG_PID:-$$} "$@"' sh \
		--fdname="$name" -E NOTIFY_SOCKET="$tmp/$tag.notify" \
		-E WATCHDOG_USEC="${WDOG_USEC:-400000}" "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err" &
	apid=$!
	pids="$pids $apid"
	await "$tmp/$tag.err" "Listening on"
}

# activate_mq TAG NAME /QUEUE PROGRAM ARGS...: the same for a message queue of mode $mq_mode,
# through
# mq-activate; the server is its child, whose pid $tmp/TAG.pid names once it runs. Sets $apid
# (mq-activate's, which exits with the server's status).
activate_mq() {
	tag=$1
	name=$2
	q=$3
	shift 3
	NOTIFY_SOCKET="$tmp/$tag.notify" WATCHDOG_USEC="${WDOG_USEC:-400000}" \
		"$mqa" -m "$mq_mode" -p "$tmp/$tag.pid" "$q" "$name" "$@" \
		>"$tmp/$tag.out" 2>"$tmp/$tag.err" &
	apid=$!
	pids="$pids $apid"
	sleep 0.2
}

# The server's pid once it runs: the tool's own, or mq-activate's child's.
server_pid() {
	if [ -f "$tmp/$1.pid" ]; then cat "$tmp/$1.pid"; else echo "$apid"; fi
}

# The exit status of background process $1, waited for at most 15 s.
reap() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 1500 ] || {
			kill -9 "$1"
			fail "process $1 did not exit within 15 s"
		}
		sleep 0.01
	done
	wait "$1"
}

# The WATCHDOG=1 lines of log $1 have at most $2 ms between them, and there are at least $3.
pings_on_time() {
	awk -v max="$2" -v min="$3" '
		/WATCHDOG=1/ { if (n > 0 && $1 - last > max) { print "gap " $1 - last " ms"; bad = 1 }
			       last = $1; n++ }
		END { if (n < min) { print n " pings"; bad = 1 }; exit bad }' "$1"
}

# serve_case TAG CLIENT-ADDRESS SERVER-ADDRESS LAUNCHER ARGS...: the first calls start the
# server, READY, the watchdog, then a drain with calls in flight. LAUNCHER is activate or
# activate_mq, and gets TAG, the name "api", ARGS and the server with $sflags.
serve_case() {
	tag=$1
	addr=$2
	saddr=$3
	launcher=$4
	shift 4
	reader_start "$tag"
	$launcher "$tag" api "$@" "$srv" -d 2000 $sflags "$saddr"
	[ "$(cat "/proc/$(server_pid "$tag")/comm")" != svc-server ] ||
		fail "$tag: the server runs before anyone called"
	grep -q READY "$tmp/$tag.log" && fail "$tag: READY=1 before the server started"
	# Four clients at once reach a server that is not running: none of their calls is lost.
	cpids=
	for c in 1 2 3 4; do
		"$cli" call "$addr" 20 >"$tmp/$tag.call$c" 2>&1 &
		cpids="$cpids $!"
	done
	for p in $cpids; do
		wait "$p" || fail "$tag: a first client failed: $(cat "$tmp/$tag".call*)"
	done
	grep -q "^ok=20 " "$tmp/$tag.call1" || fail "$tag: $(cat "$tmp/$tag.call1")"
	spid=$(server_pid "$tag")
	[ "$(cat "/proc/$spid/comm")" = svc-server ] || fail "$tag: the server is not running"
	await "$tmp/$tag.log" "READY=1"
	# The watchdog: a ping every 200 ms, never more than WATCHDOG_USEC apart.
	sleep 1.2
	pings_on_time "$tmp/$tag.log" 400 4 || fail "$tag: watchdog: $(cat "$tmp/$tag.log")"
	# 80 calls and the 4 clients' hellos.
	grep -q "STATUS=0 connections, 84 messages served" "$tmp/$tag.log" ||
		fail "$tag: no STATUS with the 80 calls: $(cat "$tmp/$tag.log")"
	# SIGTERM once the last of 600 calls is sent, 64 in flight, each held 2 ms by the
	# server: the drain lets every one complete.
	"$cli" inflight "$addr" 600 >"$tmp/$tag.flight" 2>&1 &
	fpid=$!
	await "$tmp/$tag.flight" started
	kill -TERM "$spid"
	wait "$fpid" || fail "$tag: calls in flight at SIGTERM: $(cat "$tmp/$tag.flight")"
	grep -q "^ok=600 goodbye=0 other=0 wrong=0" "$tmp/$tag.flight" ||
		fail "$tag: $(cat "$tmp/$tag.flight")"
	reap "$apid" || fail "$tag: the server exited with status $?: $(cat "$tmp/$tag.err")"
	await "$tmp/$tag.log" "STOPPING=1"
	echo "ok: $tag: first calls, READY, watchdog, drain of 64 in flight, STOPPING"
}

# refused TAG PATTERN...: the server started by a first call refused its socket, exited
# non-zero, and its message has every pattern.
refused() {
	tag=$1
	shift
	reap "$apid" && fail "$tag: the server accepted the socket: $(cat "$tmp/$tag.err")"
	for pat in "$@"; do
		grep -q -- "$pat" "$tmp/$tag.err" || fail "$tag: no \"$pat\" in: $(cat "$tmp/$tag.err")"
	done
	echo "ok: $tag: refused: $(grep svc-server: "$tmp/$tag.err" | tail -1)"
}

# A first call that cannot succeed (its server refuses the socket): it must end, not hang.
first_call_fails() {
	"$cli" call "$1" 1 >"$tmp/first.out" 2>&1 && fail "a call to $1 succeeded: the server runs"
}

port_tcp=$(free_port tcp) || fail "no free tcp port"
port_udp=$(free_port udp) || fail "no free udp port"
sflags=
mq_mode=0600
if have unix; then
	serve_case unix "unix:$tmp/u.sock" unix:systemd:api activate -l "$tmp/u.sock" --seqpacket
	sflags=-e
	serve_case unix-embedded "unix:$tmp/e.sock" unix:systemd:api activate -l "$tmp/e.sock" \
		--seqpacket
	sflags=
fi
if have tcp; then
	serve_case tcp "tcp:127.0.0.1:$port_tcp" tcp:systemd:api activate -l "127.0.0.1:$port_tcp"
fi
if have udp; then
	serve_case udp "udp:127.0.0.1:$port_udp" udp:systemd:api activate \
		-l "127.0.0.1:$port_udp" --datagram
fi
if have shm; then
	serve_case shm "shm:$tmp/s.sock" shm:systemd:api activate -l "$tmp/s.sock" --seqpacket
	sflags=-e
	serve_case shm-embedded "shm:$tmp/se.sock" shm:systemd:api activate -l "$tmp/se.sock" \
		--seqpacket
	sflags=
fi
if have tls && sh "$IDL_TOP_SRCDIR/tests/tls/certs.sh" "$tmp/certs" >/dev/null 2>&1; then
	# The server's certificate from its environment (the tool passes only what -E says);
	# the client trusts the tests' CA.
	port_tls=$(free_port tcp) || fail "no free tcp port"
	IDL_TLS_CA=$tmp/certs/ca.crt
	export IDL_TLS_CA
	serve_case tls "tls:127.0.0.1:$port_tls" tls:systemd:api activate \
		-l "127.0.0.1:$port_tls" -E IDL_TLS_CERT="$tmp/certs/server.crt" \
		-E IDL_TLS_KEY="$tmp/certs/server.key"
	unset IDL_TLS_CA
elif have tls; then
	echo "tls: not tried: no certificates (tests/tls/certs.sh needs the openssl command)"
fi
queue=/idlkit-svc.$$
if have port; then
	serve_case port "port:$queue" port:systemd:api activate_mq "$queue"
	sflags=-e
	serve_case port-embedded "port:$queue.e" port:systemd:api activate_mq "$queue.e"
	sflags=
fi

have unix || {
	echo "the cases below need unix:, which this build has not"
	exit 0
}
# SIGSTOP: no ping while the server is stopped; pings again once it goes on.
reader_start stopped
activate stopped api -l "$tmp/st.sock" --seqpacket "$srv" unix:systemd:api
"$cli" call "unix:$tmp/st.sock" 1 >/dev/null || fail "stopped: the first call failed"
await "$tmp/stopped.log" "READY=1"
sleep 0.5
kill -STOP "$apid"
sleep 0.1
before=$(grep -c WATCHDOG "$tmp/stopped.log")
sleep 1
after=$(grep -c WATCHDOG "$tmp/stopped.log")
kill -CONT "$apid"
[ "$before" -eq "$after" ] || fail "stopped: $((after - before)) pings while stopped"
sleep 0.6
[ "$(grep -c WATCHDOG "$tmp/stopped.log")" -gt "$after" ] || fail "stopped: no ping after SIGCONT"
kill -TERM "$apid"
reap "$apid" || fail "stopped: the server exited with status $?"
echo "ok: no ping while stopped ($before before, none in 1 s), pings after SIGCONT"

# WATCHDOG_PID naming another process: the watchdog is not this server's.
reader_start other
WDOG_PID=1 activate other api -l "$tmp/o.sock" --seqpacket "$srv" unix:systemd:api
"$cli" call "unix:$tmp/o.sock" 1 >/dev/null || fail "WATCHDOG_PID=1: the first call failed"
await "$tmp/other.log" "READY=1"
sleep 0.6
grep -q WATCHDOG "$tmp/other.log" && fail "WATCHDOG_PID=1: pings: $(cat "$tmp/other.log")"
kill -TERM "$apid"
reap "$apid" || fail "WATCHDOG_PID=1: the server exited with status $?"
echo "ok: no ping when WATCHDOG_PID names another process"

# Sockets of the wrong kind, each refused with what was passed and what is needed.
activate stream api -l "$tmp/w1.sock" "$srv" unix:systemd:api
"$cli" poke "$tmp/w1.sock" || fail "stream: no connection"
refused stream "is a listening AF_UNIX SOCK_STREAM socket" \
	"unix: needs a listening AF_UNIX SOCK_SEQPACKET socket file"
if have tcp; then
	p=$(free_port udp)
	activate tcp-dgram api -l "127.0.0.1:$p" --datagram "$srv" tcp:systemd:api
	first_call_fails "udp:127.0.0.1:$p"
	refused tcp-dgram "is a bound AF_INET SOCK_DGRAM socket" "tcp: needs a listening TCP socket"
fi
if have udp; then
	p=$(free_port tcp)
	activate udp-stream api -l "127.0.0.1:$p" "$srv" udp:systemd:api
	first_call_fails "tcp:127.0.0.1:$p"
	refused udp-stream "is a listening AF_INET SOCK_STREAM socket" "udp: needs a bound UDP socket"
fi
if have tls; then
	p=$(free_port udp)
	activate tls-dgram api -l "127.0.0.1:$p" --datagram "$srv" tls:systemd:api
	first_call_fails "udp:127.0.0.1:$p"
	refused tls-dgram "is a bound AF_INET SOCK_DGRAM socket" "tls: needs a listening TCP socket"
fi
if have shm; then
	activate shm-stream api -l "$tmp/w2.sock" "$srv" shm:systemd:api
	"$cli" poke "$tmp/w2.sock" || fail "shm-stream: no connection"
	refused shm-stream "is a listening AF_UNIX SOCK_STREAM socket" "shm: needs a listening"
fi
if have port; then
	activate port-socket api -l "$tmp/w3.sock" --seqpacket "$srv" port:systemd:api
	first_call_fails "unix:$tmp/w3.sock"
	refused port-socket "is a listening AF_UNIX SOCK_SEQPACKET socket" \
		"port: needs a POSIX message queue"
	# A queue others may send to.
	mq_mode=0666
	activate_mq port-0666 api "$queue.w" "$srv" port:systemd:api
	mq_mode=0600
	first_call_fails "port:$queue.w"
	refused port-0666 "has mode 0666: others may send to it"
fi
# A socket file others may connect to (systemd's default SocketMode= is 0666).
activate mode api -l "$tmp/m.sock" --seqpacket "$srv" unix:systemd:api
chmod 0666 "$tmp/m.sock"
first_call_fails "unix:$tmp/m.sock"
refused mode "has mode 0666: others may connect" "SocketMode=0600"
# A name that was not passed.
activate name api -l "$tmp/n.sock" --seqpacket "$srv" unix:systemd:web
first_call_fails "unix:$tmp/n.sock"
refused name 'no socket named "web" was passed (passed: api)'
# Sockets passed to another process: the shell that the tool runs does not exec the server.
activate pid api -l "$tmp/p.sock" --seqpacket sh -c "\"$srv\" unix:systemd:api; exit \$?"
first_call_fails "unix:$tmp/p.sock"
refused pid "LISTEN_PID is [0-9]*, this process is [0-9]*: the sockets were passed to another"

# The tools: idlbench serve and idlcall --serve adopt a passed socket and drain on SIGTERM
# (the manager hears "draining" with STOPPING=1, which a stop does not say).
# tool_case TAG CALLS PROGRAM ARGS...: the tool serves unix:systemd:api.
tool_case() {
	tag=$1
	n=$2
	shift 2
	reader_start "$tag"
	activate "$tag" api -l "$tmp/$tag.sock" --seqpacket "$@"
	"$cli" call "unix:$tmp/$tag.sock" 50 >"$tmp/$tag.call" 2>&1 ||
		fail "$tag: $(cat "$tmp/$tag.call")"
	"$cli" inflight "unix:$tmp/$tag.sock" "$n" >"$tmp/$tag.flight" 2>&1 &
	fpid=$!
	await "$tmp/$tag.flight" started
	kill -TERM "$apid"
	wait "$fpid" || fail "$tag: calls in flight at SIGTERM: $(cat "$tmp/$tag.flight")"
	reap "$apid" || fail "$tag exited with status $?: $(cat "$tmp/$tag.err")"
	await "$tmp/$tag.log" "STOPPING=1;STATUS=draining"
	echo "ok: $tag: adopted, drained on SIGTERM: $(tail -1 "$tmp/$tag.flight")"
}
bench=$b/tools/idlbench/idlbench
if [ -x "$bench" ]; then
	tool_case idlbench 20000 "$bench" serve unix:systemd:api
fi
idlcall=$b/tools/idlcall/idlcall
impl=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$b/tests/dynamic/benchimpl.la" 2>/dev/null)
if [ -x "$idlcall" ] && [ -n "$impl" ]; then
	tool_case idlcall 5000 "$idlcall" --serve "$IDL_TOP_SRCDIR/examples/bench/bench.defs" \
		unix:systemd:api "$b/tests/dynamic/.libs/$impl"
else
	echo "idlcall --serve not tried: no idlcall or no tests/dynamic/benchimpl.la"
fi

# The example units are units systemd reads without a complaint.
if command -v systemd-analyze >/dev/null 2>&1 && [ -x "$bench" ]; then
	mkdir "$tmp/units"
	for u in "$IDL_TOP_SRCDIR"/examples/systemd/*.s*; do
		sed "s|/usr/local/bin/idlbench|$bench|" "$u" >"$tmp/units/$(basename "$u")"
	done
	(cd "$tmp/units" && systemd-analyze verify --man=no ./*.socket ./*.service) \
		>"$tmp/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$tmp/verify")"
	[ ! -s "$tmp/verify" ] || fail "systemd-analyze verify: $(cat "$tmp/verify")"
	echo "ok: examples/systemd: $(ls "$tmp/units" | wc -l) units verified"
fi
exit 0
