#!/bin/sh
# firewall.sh - udp: behind a firewall on its own host. An nftables rule that drops output
# makes the kernel refuse the send (EPERM): nothing left the host, so nothing ran, and the
# datagram is as lost as one dropped on the wire - it must be retransmitted, not fail the
# call (docs/transports/udp.md, "Failure"):
#   - a call whose requests are refused fails with IDL_ETIMEDOUT at its deadline, not at
#     once; through the synchronous stub, and 16 calls at once through the asynchronous
#     stub (the pollable port's sends and resends);
#   - the same with the rule removed within the deadline: the calls go through, each run
#     once;
#   - a server whose replies are refused, its own reply and one deferred to another thread
#     (idl_reply_send): the reply is lost, not failed (the deferred one is not reported as
#     unsent); the duplicate-reply cache keeps it, the client's retransmission gets it once
#     the rule is gone, and the routine ran once.
# It runs in a network namespace of its own (unshare --net) rather than one made with
# `ip netns add`: nothing is named or mounted under /run/netns, and the namespace ends with
# the script's last process.
if [ "${IDL_FIREWALL_NETNS:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 ||
		! unshare --net true 2>/dev/null; then
		echo "firewall: SKIP: a network namespace of its own needs root and unshare" >&2
		exit 77
	fi
	IDL_FIREWALL_NETNS=1 exec unshare --net -- /bin/sh "$0" "$@"
fi
. "$IDL_TOP_SRCDIR/tests/net/lib.sh"

command -v ip >/dev/null 2>&1 || skip "iproute2 is not installed"
ip link set lo up || fail "lo up"
nft add table inet idlkit_fw 2>/dev/null &&
	nft add chain inet idlkit_fw out \
		'{ type filter hook output priority 0; policy accept; }' 2>/dev/null ||
	skip "nftables is not usable in a network namespace here"

# drop MATCH...: output matching it is dropped from now on; open: every rule removed.
drop() {
	nft add rule inet idlkit_fw out "$@" drop || fail "nft add rule $*"
}
open() {
	nft flush chain inet idlkit_fw out || fail "nft flush chain"
}

addr=udp:127.0.0.1:7500
start_server "$NET_TMP/server.out" "$NET_SERVER" -c 2 "$addr"
spid=$NET_LAST_PID

# client NAME ARG...: net-client ARG... in the background, its stdin a fifo held open on
# descriptor 4; returns once its first call answered, with that call's count in V0. go: the
# line that starts its second step. result NAME: waits for the client (in this shell: a
# command substitution could not wait for it) and sets R to that step's line.
client() {
	c=$1
	shift
	rm -f "$NET_TMP/go.$c"
	mkfifo "$NET_TMP/go.$c" || fail "mkfifo"
	: >"$NET_TMP/out.$c"
	timeout 30 "$NET_CLIENT" "$@" <"$NET_TMP/go.$c" >"$NET_TMP/out.$c" 2>"$NET_TMP/err.$c" &
	CPID=$!
	NET_PIDS="$NET_PIDS $CPID"
	exec 4>"$NET_TMP/go.$c"
	wait_ok "$NET_TMP/out.$c" "$c"
	V0=$(sed -n 1p "$NET_TMP/out.$c" | awk '{ print $2 }')
}
go() {
	echo go >&4
	exec 4>&-
}
result() {
	wait "$CPID"
	cat "$NET_TMP/err.$1" >&2
	R=$(sed -n 2p "$NET_TMP/out.$1")
}

# check_timeout WHAT RESULT: IDL_ETIMEDOUT at the 1500 ms deadline, not before it.
check_timeout() {
	say "$1, every send refused by the firewall: $2"
	case $2 in ETIMEDOUT*) ;; *) fail "$1: '$2', not a timeout at the deadline" ;; esac
	ms=$(elapsed_ms "$2")
	[ "$ms" -ge 1490 ] && [ "$ms" -lt 3000 ] || fail "$1: a 1500 ms deadline took $ms ms"
}

# still_waiting NAME WHAT: the client's second step has not ended (the rule holds it back).
still_waiting() {
	[ "$(wc -l <"$NET_TMP/out.$1")" -eq 1 ] ||
		fail "$2: ended while the rule was in place: $(sed -n 2p "$NET_TMP/out.$1")"
}

# check_through WHAT RESULT COUNT: answered (after the rule went: still_waiting said it had
# not been before), with the count COUNT: every call ran once.
check_through() {
	say "$1, the rule removed after 600 ms: $2"
	case $2 in "ok $3 "*) ;; *) fail "$1: '$2', not 'ok $3': a call failed or ran twice" ;; esac
}

# The client's requests refused, through the synchronous stub and 16 at once through the
# asynchronous one.
for a in "" "-a 16"; do
	what="request${a:+s} refused${a:+, 16 in flight}"
	calls=${a:+16}
	calls=${calls:-1}
	# shellcheck disable=SC2086 # $a is two words or none
	client sync -t 1500 $a pause "$addr"
	drop udp dport 7500
	go
	result sync
	check_timeout "$what" "$R"
	open

	# shellcheck disable=SC2086
	client sync -t 6000 $a pause "$addr"
	drop udp dport 7500
	go
	sleep 0.6
	still_waiting sync "$what"
	open
	result sync
	check_through "$what" "$R" $((V0 + calls))
done

# The server's replies refused: its own, then one it deferred to another thread.
for d in "" "defer 200"; do
	what="server's ${d:+deferred }reply refused"
	# shellcheck disable=SC2086 # $d is two words or none
	client reply -t 6000 pause "$addr" $d
	drop udp sport 7500
	go
	sleep 0.6
	still_waiting reply "$what"
	open
	result reply
	check_through "$what" "$R" $((V0 + 1))
	r=$("$NET_CLIENT" call "$addr" total) || fail "total: $r"
	case $r in "ok $((V0 + 1)) "*) ;; *) fail "$what: the count is '$r', not $((V0 + 1))" ;; esac
done
if grep -q 'deferred reply' "$NET_TMP/server.out.err"; then
	cat "$NET_TMP/server.out.err" >&2
	fail "the server said a deferred reply was not sent, though the cache keeps it"
fi
stop_server "$spid"
exit 0
