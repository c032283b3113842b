#!/bin/sh
# lossy.sh - at most once over a network that loses and duplicates: calls of counter.count,
# a routine that counts its executions, over udp (from 4 threads of synchronous calls, then
# with 64 calls in flight from one thread through the pollable port) through
#   - nftables inside a network namespace, dropping 10% of the UDP datagrams on input and
#     duplicating 5% (numgen random; tc netem is not in this kernel), in both directions;
#   - udpshim, a seeded user-space relay that also loses (10%), duplicates (5%), reorders
#     (5%) and delays (0-3 ms);
# and over tcp: through the same nftables rules (the kernel retransmits; the count must
# still be exact). Every call must complete within its deadline and the server's count must
# equal the number of calls: no call lost, no duplicate execution (net-client count also
# checks that the values returned are all distinct).
# NET_LOSSY_CALLS calls per case: 2,000 in make check, 10,000 in make check-long.
. "$IDL_TOP_SRCDIR/tests/net/lib.sh"

CALLS=${NET_LOSSY_CALLS:-2000}
THREADS=4
DEADLINE=10000

# run_count CASE ADDRESS [nsenter --net=NS --]: the calls, checked. MODE: how they are made
# (-j: threads of synchronous calls; -a: calls in flight from one thread, through the
# asynchronous stub and the port's loop).
MODE="-j $THREADS"
run_count() {
	name=$1
	addr=$2
	shift 2
	"$@" "$NET_CLIENT" -t $DEADLINE $MODE count "$addr" "$CALLS" >"$NET_TMP/count" 2>&1
	st=$?
	say "$name: $(cat "$NET_TMP/count")"
	[ $st = 0 ] || fail "$name: a call failed or the count is wrong"
}

# The seeded shim (no privileges needed).
sport=$(free_ports udp 1)
rport=$(free_ports udp 1)
[ "$sport" != "$rport" ] || rport=$(free_ports udp 2 | tail -n 1)
start_server "$NET_TMP/srv.out" "$NET_SERVER" "udp:127.0.0.1:$sport"
srv=$NET_LAST_PID
start_server "$NET_TMP/shim.out" "$NET_SHIM" -s 42 -l 10 -d 5 -r 5 -D 3 "$rport" "$sport"
shim=$NET_LAST_PID
run_count "udp through udpshim" "udp:127.0.0.1:$rport"
MODE="-a 64"
run_count "udp through udpshim, 64 calls in flight" "udp:127.0.0.1:$rport"
MODE="-j $THREADS"
kill -TERM "$shim"
wait "$shim"
cat "$NET_TMP/shim.out.err"
grep -Eq 'dropped [1-9].*duplicated [1-9].*reordered [1-9]' "$NET_TMP/shim.out.err" ||
	fail "the shim neither lost, duplicated nor reordered anything"
stop_server "$srv"

# nftables in a namespace.
can_netns || skip "$NET_NETNS_WHY"
command -v nft >/dev/null 2>&1 || skip "nft (nftables) is not installed"
ns=idlkit-lossy-$$
netns_add "$ns"
port=7000
cat >"$NET_TMP/rules.nft" <<EOF
table ip idlkit_lossy {
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport $port numgen random mod 100 < 10 counter drop
		udp sport $port numgen random mod 100 < 10 counter drop
		tcp dport $port numgen random mod 100 < 10 counter drop
		tcp sport $port numgen random mod 100 < 10 counter drop
		udp dport $port numgen random mod 100 < 5 counter dup to 127.0.0.1
		udp sport $port numgen random mod 100 < 5 counter dup to 127.0.0.1
	}
}
EOF
nsenter --net=/run/netns/"$ns" -- nft -f "$NET_TMP/rules.nft" ||
	skip "nftables rules are refused in a namespace on this machine"
start_server "$NET_TMP/nsrv.out" nsenter --net=/run/netns/"$ns" -- "$NET_SERVER" -c 4 \
	"udp:127.0.0.1:$port" "tcp:127.0.0.1:$port"
nsrv=$NET_LAST_PID
run_count "udp through nftables" "udp:127.0.0.1:$port" nsenter --net=/run/netns/"$ns" --
MODE="-a 64"
run_count "udp through nftables, 64 calls in flight" "udp:127.0.0.1:$port" \
	nsenter --net=/run/netns/"$ns" --
MODE="-j $THREADS"
nsenter --net=/run/netns/"$ns" -- nft list ruleset >"$NET_TMP/after.nft"
awk '{ n = 0; for (i = 1; i < NF; i++) if ($i == "packets") n = $(i + 1) }
	/udp.*drop/ { drops += n } /udp.*dup to/ { dups += n }
	END { printf "nftables: %d UDP datagrams dropped, %d duplicated\n", drops, dups;
	      exit !(drops > 0 && dups > 0) }' "$NET_TMP/after.nft" ||
	{ cat "$NET_TMP/after.nft"; fail "the nftables rules dropped or duplicated nothing"; }
# TCP retransmits by itself (200 ms at least each time): fewer calls keep it quick.
CALLS=$((CALLS / 4))
run_count "tcp through nftables" "tcp:127.0.0.1:$port" nsenter --net=/run/netns/"$ns" --
stop_server "$nsrv"
exit 0
