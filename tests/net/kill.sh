#!/bin/sh
# kill.sh - a server killed before, during and after a call, on udp: and tcp:: the client
# gets an error well within the call's deadline, never a hang. Each case runs under its own
# timeout, so that a hang fails here rather than at make check's.
. "$IDL_TOP_SRCDIR/tests/net/lib.sh"

DEADLINE=5000 # ms, each call's
CASE_LIMIT=20 # s, each case's timeout

# is_conn_error RESULT: the error a call to a dead server may give.
is_conn_error() {
	case $1 in
	MIG_SERVER_DIED* | ECONNREFUSED* | ECLOSED*) return 0 ;;
	esac
	return 1
}

# check CASE RESULT MAX_MS: an error of a dead server, and not later than MAX_MS.
check() {
	say "$1: $2"
	is_conn_error "$2" || fail "$1: '$2' is not a dead-server error"
	ms=$(elapsed_ms "$2")
	[ "$ms" -lt "$3" ] || fail "$1: the error came after $ms ms (limit $3 ms)"
}

for proto in udp tcp; do
	port=$(free_ports "$proto" 1)
	addr="$proto:127.0.0.1:$port"

	# Before: the server was killed before the call; nothing listens.
	start_server "$NET_TMP/s.out" "$NET_SERVER" "$addr"
	kill -KILL "$NET_LAST_PID"
	wait "$NET_LAST_PID" 2>/dev/null
	r=$(timeout "$CASE_LIMIT" "$NET_CLIENT" -t $DEADLINE call "$addr" count)
	check "$proto, killed before the call" "$r" 1000

	# During: the server is running the routine (a 3 s nap) when it is killed.
	start_server "$NET_TMP/s.out" "$NET_SERVER" "$addr"
	pid=$NET_LAST_PID
	timeout "$CASE_LIMIT" "$NET_CLIENT" -t $DEADLINE call "$addr" nap 3000 >"$NET_TMP/during" &
	cpid=$!
	NET_PIDS="$NET_PIDS $cpid"
	sleep 0.5
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait "$cpid"
	check "$proto, killed during the call" "$(cat "$NET_TMP/during")" $((DEADLINE - 1000))

	# After: a call succeeds, the server dies, the next call on the same port fails.
	start_server "$NET_TMP/s.out" "$NET_SERVER" "$addr"
	pid=$NET_LAST_PID
	rm -f "$NET_TMP/go"
	mkfifo "$NET_TMP/go"
	# Emptied first: the client opens it only once the fifo has a writer.
	: >"$NET_TMP/after"
	timeout "$CASE_LIMIT" "$NET_CLIENT" -t $DEADLINE pause "$addr" <"$NET_TMP/go" \
		>"$NET_TMP/after" &
	cpid=$!
	NET_PIDS="$NET_PIDS $cpid"
	exec 3>"$NET_TMP/go"
	wait_ok "$NET_TMP/after" "$proto"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	echo go >&3
	exec 3>&-
	wait "$cpid"
	check "$proto, killed after a call" "$(sed -n 2p "$NET_TMP/after")" 1000

	# Restarted between two calls on one port. tcp: the connection died with the old
	# server, and the call says so (nothing is resent behind the caller's back). udp: the
	# new server has no hello from this client and refuses the request before running
	# it; the client says hello again and resends it once, so the call succeeds.
	start_server "$NET_TMP/s.out" "$NET_SERVER" "$addr"
	pid=$NET_LAST_PID
	rm -f "$NET_TMP/go"
	mkfifo "$NET_TMP/go"
	: >"$NET_TMP/restart"
	timeout "$CASE_LIMIT" "$NET_CLIENT" -t $DEADLINE pause "$addr" <"$NET_TMP/go" \
		>"$NET_TMP/restart" &
	cpid=$!
	NET_PIDS="$NET_PIDS $cpid"
	exec 3>"$NET_TMP/go"
	wait_ok "$NET_TMP/restart" "$proto"
	stop_server "$pid"
	start_server "$NET_TMP/s.out" "$NET_SERVER" "$addr"
	pid=$NET_LAST_PID
	echo go >&3
	exec 3>&-
	wait "$cpid"
	r=$(sed -n 2p "$NET_TMP/restart")
	say "$proto, server restarted between calls: $r"
	case $proto:$r in
	udp:"ok 1 "*) ;;
	tcp:MIG_SERVER_DIED*) ;;
	*) fail "$proto, restarted server: '$r'" ;;
	esac
	r=$("$NET_CLIENT" call "$addr" total)
	case $proto:$r in
	udp:"ok 1 "* | tcp:"ok 0 "*) ;;
	*) fail "$proto, restarted server: the count is '$r'" ;;
	esac
	stop_server "$pid"

	# Frozen rather than dead: the call ends at its deadline, not before, not much after.
	start_server "$NET_TMP/s.out" "$NET_SERVER" "$addr"
	pid=$NET_LAST_PID
	kill -STOP "$pid"
	r=$(timeout "$CASE_LIMIT" "$NET_CLIENT" -t 1000 call "$addr" count)
	# SIGKILL ends a stopped process as it is: no SIGCONT after it, which would find the
	# process gone once the shell has reaped it.
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	say "$proto, server frozen: $r"
	case $r in ETIMEDOUT*) ;; *) fail "$proto, frozen server: '$r'" ;; esac
	ms=$(elapsed_ms "$r")
	[ "$ms" -ge 990 ] && [ "$ms" -lt 2500 ] || fail "$proto: a 1000 ms deadline took $ms ms"
done
exit 0
