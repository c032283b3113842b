#!/bin/sh
# loopback.sh - udp: and tcp: on one machine: the example's client and server talk over
# both (IPv4 and IPv6 loopback, and a server on '*'), one server receives on a mixed set of
# unix, udp and tcp endpoints with a pool of routine threads, and bad addresses and
# oversized datagrams fail with errors that say why.
. "$IDL_TOP_SRCDIR/tests/net/lib.sh"

# The example, every routine checked by bench-client, server stopped cleanly.
bench() {
	start_server "$NET_TMP/bench.out" "$BENCH_SERVER" -c 2 "$1"
	pid=$NET_LAST_PID
	"$BENCH_CLIENT" -n 200 -r 2 "$2" >"$NET_TMP/client.out" 2>&1 ||
		{ cat "$NET_TMP/client.out"; fail "bench-client $2 (server $1)"; }
	for r in null add intrpc bigin bigout biginout echo sum notify; do
		grep -Eq "^$r +[0-9]" "$NET_TMP/client.out" || fail "$2: no row for $r"
	done
	stop_server "$pid"
	say "example over $2: every routine right"
}

tp=$(free_ports tcp 1)
up=$(free_ports udp 1)
bench "tcp:127.0.0.1:$tp" "tcp:127.0.0.1:$tp"
bench "udp:127.0.0.1:$up" "udp:127.0.0.1:$up"
# A host name goes through getaddrinfo; a minimal system may have no name for loopback.
if getent hosts localhost >/dev/null 2>&1; then
	bench "tcp::$tp" "tcp:localhost:$tp"
else
	say "this machine has no name for loopback (no localhost in /etc/hosts): name lookup not tested"
	bench "tcp::$tp" "tcp:127.0.0.1:$tp"
fi
if [ -e /proc/net/if_inet6 ] && grep -q ' lo$' /proc/net/if_inet6; then
	bench "tcp:[::1]:$tp" "tcp:[::1]:$tp"
	bench "udp:[::1]:$up" "udp:[::1]:$up"
	# '*' is dual-stack: one server answers both families.
	start_server "$NET_TMP/any.out" "$NET_SERVER" "tcp:*:$tp" "udp:*:$up"
	pid=$NET_LAST_PID
	for a in "tcp:127.0.0.1:$tp" "tcp:[::1]:$tp" "udp:127.0.0.1:$up" "udp:[::1]:$up"; do
		r=$("$NET_CLIENT" call "$a" count) || fail "server on '*', client to $a: $r"
	done
	stop_server "$pid"
	say "a server on '*' answers IPv4 and IPv6"
	r=$("$NET_CLIENT" bigsend "udp:[::1]:$up" 65528)
	echo "$r" | grep -q "^EMSGSIZE .*65528.*65527" || fail "oversized IPv6 datagram: '$r'"
else
	say "no IPv6 on lo here: IPv6 cases not run"
fi

# One port set: unix, udp and tcp endpoints served in one server, clients on all at once.
set -- "unix:$NET_TMP/a.sock" "udp:127.0.0.1:$up" "tcp:127.0.0.1:$tp"
start_server "$NET_TMP/mixed.out" "$NET_SERVER" -c 4 "$@"
pid=$NET_LAST_PID
cpids=
for a in "$@"; do
	"$NET_CLIENT" -S -j 4 count "$a" 500 >"$NET_TMP/count.${a%%:*}" 2>&1 &
	cpids="$cpids $!"
done
NET_PIDS="$NET_PIDS $cpids"
ok=1
for p in $cpids; do
	wait "$p" || ok=0
done
cat "$NET_TMP"/count.*
[ $ok = 1 ] || fail "calls on the mixed set"
r=$("$NET_CLIENT" call "unix:$NET_TMP/a.sock" total) || fail "total: $r"
[ "$(echo "$r" | awk '{ print $2 }')" = 1500 ] || fail "count after 3 x 500 calls: $r"
say "mixed set of unix, udp and tcp: 1500 calls, count 1500"

# More clients than a datagram endpoint remembers hellos for (4,096): the first ones are
# forgotten, and their next calls still succeed (the client says hello again and resends,
# and nothing runs twice).
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
r=$("$NET_CLIENT" peers "udp:127.0.0.1:$up" 4200) || fail "4210 udp: clients: $r"
say "udp: $r"

# The pool of routine threads (-c 4) works across the set: four 400 ms naps from four
# sources (two transports' connections and a datagram endpoint) overlap.
t0=$(date +%s%N)
naps=
for a in "unix:$NET_TMP/a.sock" "tcp:127.0.0.1:$tp" "tcp:127.0.0.1:$tp" "udp:127.0.0.1:$up"; do
	"$NET_CLIENT" call "$a" nap 400 >/dev/null &
	naps="$naps $!"
done
NET_PIDS="$NET_PIDS $naps"
for p in $naps; do
	wait "$p" || fail "a nap call failed"
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
say "four 400 ms naps on a -c 4 server took $ms ms"
# One at a time they take 1,600 ms at least; overlapping, 400 ms and the start of four
# client processes, which a sanitizer build on a loaded machine makes slow.
[ "$ms" -lt 1600 ] || fail "naps from a mixed set ran one at a time ($ms ms)"
stop_server "$pid"

# Addresses that cannot work fail at once, saying why.
bad() {
	r=$("$NET_CLIENT" -t 2000 call "$1" null) && fail "$1: a call succeeded"
	echo "$r" | grep -q "$2" || fail "$1: '$r' does not say $2"
	say "$1: $r"
}
bad "tcp:127.0.0.1:0" EADDRINVAL
bad "udp:127.0.0.1" EADDRINVAL
bad "tcp:::1:$tp" "EADDRINVAL.*brackets"
bad "udp:no-such-host.invalid:$up" EADDRINVAL
bad "udp:*:$up" EADDRINVAL
bad "tcp:127.0.0.1:$tp" ECONNREFUSED
bad "udp:127.0.0.1:$up" ECONNREFUSED

# A message larger than a datagram is refused before it is sent, naming both sizes.
r=$("$NET_CLIENT" bigsend "udp:127.0.0.1:$up" 70000)
echo "$r" | grep -q "^EMSGSIZE .*70000.*65507" || fail "oversized datagram: '$r'"
say "70000-byte message on udp: $r"
exit 0
