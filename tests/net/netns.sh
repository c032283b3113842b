#!/bin/sh
# netns.sh - udp: and tcp: between machines: two network namespaces joined by a veth pair,
# the server in one and the client in the other, over IPv4 and IPv6:
#   - the example: bench-client runs every routine of bench.defs against bench-server;
#   - counter.count from 4 threads, every call once;
#   - a server on '*' answers on both families; a server given only a port (":PORT")
#     listens on loopback and is not reachable from the other machine;
#   - a server machine that silently drops everything: calls fail at their deadline
#     (udp: ETIMEDOUT after retransmitting; tcp: the connect times out), never hang.
. "$IDL_TOP_SRCDIR/tests/net/lib.sh"

can_netns || skip "$NET_NETNS_WHY"
srv=idlkit-srv-$$
cli=idlkit-cli-$$
# The pair's ends are named after this process so that parallel runs do not collide.
netns_pair "$srv" "$cli" ia$$ ib$$ 10.231.0 fd00:231

S="nsenter --net=/run/netns/$srv --"
C="nsenter --net=/run/netns/$cli --"
hosts="10.231.0.1"
[ $ipv6 = 1 ] && hosts="$hosts [fd00:231::1]"

for proto in udp tcp; do
	for h in $hosts; do
		addr="$proto:$h:7100"
		start_server "$NET_TMP/bench.out" $S "$BENCH_SERVER" -c 2 "$addr"
		pid=$NET_LAST_PID
		$C "$BENCH_CLIENT" -n 100 -r 2 "$addr" >"$NET_TMP/client.out" 2>&1 ||
			{ cat "$NET_TMP/client.out"; fail "bench-client $addr across namespaces"; }
		for r in null add intrpc bigin bigout biginout echo sum notify; do
			grep -Eq "^$r +[0-9]" "$NET_TMP/client.out" || fail "$addr: no row for $r"
		done
		say "example across namespaces over $addr: every routine right"
		grep -E '^(null|add) ' "$NET_TMP/client.out"
		stop_server "$pid"

		start_server "$NET_TMP/count.out" $S "$NET_SERVER" -c 4 "$addr"
		pid=$NET_LAST_PID
		r=$($C "$NET_CLIENT" -j 4 count "$addr" 1000) || fail "count over $addr: $r"
		say "$addr: $r"
		stop_server "$pid"
	done
done

if [ $ipv6 = 1 ]; then
	start_server "$NET_TMP/any.out" $S "$NET_SERVER" "udp:*:7200" "tcp:*:7200"
	pid=$NET_LAST_PID
	for a in udp:10.231.0.1:7200 "udp:[fd00:231::1]:7200" tcp:10.231.0.1:7200 \
		"tcp:[fd00:231::1]:7200"; do
		r=$($C "$NET_CLIENT" call "$a" count) || fail "server on '*', client to $a: $r"
	done
	stop_server "$pid"
	say "a server on '*' answers from the other machine on IPv4 and IPv6"
else
	say "IPv6 addresses refused here: IPv6 cases not run"
fi

# ":PORT" is loopback: another machine is refused.
start_server "$NET_TMP/lo.out" $S "$NET_SERVER" "udp::7300" "tcp::7300"
pid=$NET_LAST_PID
r=$($S "$NET_CLIENT" call "udp:127.0.0.1:7300" count) || fail "loopback server, local: $r"
for a in udp:10.231.0.1:7300 tcp:10.231.0.1:7300; do
	r=$($C "$NET_CLIENT" -t 3000 call "$a" count) && fail "a loopback server answered $a"
	case $r in ECONNREFUSED*) ;; *) fail "$a to a loopback server: '$r'" ;; esac
	say "$a, server on loopback only: $r"
done
stop_server "$pid"

# A server machine that drops everything (a firewall, a dead host): errors at the deadline.
# A call on a port that had worked, on each transport; and a new tcp: connection, whose
# connect is bounded by the deadline too.
start_server "$NET_TMP/drop.out" $S "$NET_SERVER" "udp:10.231.0.1:7400" "tcp:10.231.0.1:7400"
pid=$NET_LAST_PID
# Each client makes one call, then a second when a line comes on its fifo (kept open on
# descriptors 4 and 5 in between, so that it sees no end of file).
cpids=
for proto in udp tcp; do
	rm -f "$NET_TMP/go.$proto"
	mkfifo "$NET_TMP/go.$proto"
	: >"$NET_TMP/drop.$proto"
	timeout 20 $C "$NET_CLIENT" -t 1500 pause "$proto:10.231.0.1:7400" \
		<"$NET_TMP/go.$proto" >"$NET_TMP/drop.$proto" &
	cpids="$cpids $!"
done
NET_PIDS="$NET_PIDS $cpids"
exec 4>"$NET_TMP/go.udp" 5>"$NET_TMP/go.tcp"
wait_ok "$NET_TMP/drop.udp" udp
wait_ok "$NET_TMP/drop.tcp" tcp
$S nft add table ip idlkit_drop 2>/dev/null &&
	$S nft add chain ip idlkit_drop input \
		'{ type filter hook input priority 0; policy drop; }' ||
	skip "nftables is not usable in a namespace here"
echo go >&4
echo go >&5
exec 4>&- 5>&-
for p in $cpids; do
	wait "$p"
done
check_timeout() {
	say "$1, every packet dropped: $2"
	case $2 in ETIMEDOUT*) ;; *) fail "$1, server unreachable: '$2'" ;; esac
	ms=$(elapsed_ms "$2")
	[ "$ms" -ge 1490 ] && [ "$ms" -lt 3000 ] || fail "$1: a 1500 ms deadline took $ms ms"
}
check_timeout "udp: call" "$(sed -n 2p "$NET_TMP/drop.udp")"
check_timeout "tcp: call" "$(sed -n 2p "$NET_TMP/drop.tcp")"
check_timeout "tcp: connect" "$(timeout 20 $C "$NET_CLIENT" -t 1500 connect tcp:10.231.0.1:7400)"
stop_server "$pid"
exit 0
