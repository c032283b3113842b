# lib.sh - what the network test scripts share (sourced, not run): a mount namespace of the
# test's own, the programs, a private directory, background processes and network
# namespaces that are removed on every exit path, servers started and awaited with a
# deadline, free ports, and a kill that fails the test when it signals a process that is
# gone.
: "${IDL_TOP_SRCDIR:?run me through make check}" "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u

# As root, the test runs again in a mount namespace of its own (tests/lib/mountns: its mounts
# are private, in a chroot too) with a /run/netns of its own, a tmpfs. The network
# namespaces it names there with `ip netns add`, and the mounts that makes, are seen by no
# other test and go with the test's last process, however it ends. In the machine's
# /run/netns the first `ip netns add` makes the directory a mount point, and with tests run
# at once (make -j2 check) no test could tell when to take it away: one that ends while
# another's namespace is there must leave it, and the other found it there.
NET_MOUNTNS=$IDL_TOP_BUILDDIR/tests/lib/mountns
if [ "${IDL_NET_OWN_MOUNTS:-}" != 1 ] && [ "$(id -u)" = 0 ] && [ -f "$0" ] &&
	command -v ip >/dev/null 2>&1 && "$NET_MOUNTNS" true 2>/dev/null; then
	IDL_NET_OWN_MOUNTS=1
	export IDL_NET_OWN_MOUNTS
	exec "$NET_MOUNTNS" /bin/sh -c 'mkdir -p /run/netns &&
		mount -t tmpfs -o mode=0755 idlkit-netns /run/netns || {
			echo "$1: FAIL: cannot mount a /run/netns of its own" >&2
			exit 1
		}
		exec /bin/sh "$@"' sh "$0" "$@"
fi

NET_NAME=$(basename "$0" .sh)
NET_SERVER=$IDL_TOP_BUILDDIR/tests/net/net-server
NET_CLIENT=$IDL_TOP_BUILDDIR/tests/net/net-client
NET_SHIM=$IDL_TOP_BUILDDIR/tests/net/udpshim
BENCH_SERVER=$IDL_TOP_BUILDDIR/examples/bench/bench-server
BENCH_CLIENT=$IDL_TOP_BUILDDIR/examples/bench/bench-client
NET_PIDS=
NET_NETNS=
NET_TMP=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-$NET_NAME.XXXXXX") || exit 1


net_cleanup() {
	for p in $NET_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in $NET_PIDS; do
		wait "$p" 2>/dev/null
	done
	for ns in $NET_NETNS; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$NET_TMP"
}
trap net_cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "$NET_NAME: FAIL: $*" >&2
	exit 1
}

say() {
	echo "$NET_NAME: $*"
}

# kill as the scripts call it, but a signal that finds its process gone where the call did
# not expect that (its standard error is not discarded) fails the test, naming the call:
# the shell would print "No such process" and go on, and the test would pass with a line
# that says something was wrong. A probe or a cleanup that may find a process gone says so
# with 2>/dev/null, and gets the status alone.
kill() {
	command kill "$@" 2>"$NET_TMP/kill.err" && return 0
	net_kill_st=$?
	[ /proc/self/fd/2 -ef /dev/null ] && return $net_kill_st
	cat "$NET_TMP/kill.err" >&2
	fail "kill $* failed: a test signals only what still runs, or says with 2>/dev/null" \
		"that the process may be gone"
}

# skip REASON: the whole test is skipped (exit 77), saying why.
skip() {
	echo "$NET_NAME: SKIP: $*" >&2
	exit 77
}

# can_netns: whether network namespaces can be made here (root, iproute2, and the mount
# namespace of the test's own above); when not, NET_NETNS_WHY says why.
NET_NETNS_WHY="network namespaces need root and iproute2 (CI runs as root)"
can_netns() {
	[ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1 || return 1
	if [ "${IDL_NET_OWN_MOUNTS:-}" != 1 ]; then
		NET_NETNS_WHY="network namespaces are named only in a mount namespace of the test's"
		NET_NETNS_WHY="$NET_NETNS_WHY own: $("$NET_MOUNTNS" true 2>&1 || echo "(mountns failed)")"
		return 1
	fi
	ip netns add "idlkit-probe-$$" 2>/dev/null || {
		NET_NETNS_WHY="ip netns add fails here: $(ip netns add "idlkit-probe-$$" 2>&1)"
		return 1
	}
	ip netns del "idlkit-probe-$$"
}

# netns_add NAME: a namespace with loopback up, removed at exit.
netns_add() {
	ip netns add "$1" || fail "ip netns add $1"
	NET_NETNS="$NET_NETNS $1"
	nsenter --net=/run/netns/"$1" -- ip link set lo up || fail "lo up in $1"
}

# netns_pair SRV CLI A B NET4 NET6: namespaces SRV and CLI (removed at exit) joined by a veth
# pair whose ends A (in SRV, address NET4.1 and NET6::1) and B (in CLI, NET4.2 and NET6::2) are
# up, e.g. netns_pair s c ia ib 10.231.0 fd00:231. Sets ipv6 to 1 when the IPv6 addresses
# were taken, else 0; skips the test when no veth pair can be made here.
netns_pair() {
	netns_add "$1"
	netns_add "$2"
	ip link add "$3" netns "$1" type veth peer name "$4" netns "$2" ||
		skip "cannot make a veth pair here"
	nsenter --net=/run/netns/"$1" -- ip addr add "$5.1/24" dev "$3"
	nsenter --net=/run/netns/"$2" -- ip addr add "$5.2/24" dev "$4"
	ipv6=1
	nsenter --net=/run/netns/"$1" -- ip addr add "$6::1/64" dev "$3" nodad 2>/dev/null &&
		nsenter --net=/run/netns/"$2" -- ip addr add "$6::2/64" dev "$4" nodad 2>/dev/null ||
		ipv6=0
	nsenter --net=/run/netns/"$1" -- ip link set "$3" up
	nsenter --net=/run/netns/"$2" -- ip link set "$4" up
	# Both ends must have carrier before the first packet (no ping here: it may not be
	# installed).
	i=0
	until nsenter --net=/run/netns/"$1" -- ip link show "$3" | grep -q 'state UP' &&
		nsenter --net=/run/netns/"$2" -- ip link show "$4" | grep -q 'state UP'; do
		i=$((i + 1))
		[ $i -lt 500 ] || fail "the veth pair did not come up within 5 s"
		sleep 0.01
	done
}

# start_server OUT CMD...: runs CMD in the background with stdout to OUT and waits (10 s
# at most) for its first line "ready ..."; sets NET_LAST_PID.
start_server() {
	out=$1
	shift
	# Emptied here: the background job's own redirection may come after the first grep.
	: >"$out"
	"$@" >>"$out" 2>"$out.err" &
	NET_LAST_PID=$!
	NET_PIDS="$NET_PIDS $NET_LAST_PID"
	i=0
	while ! grep -q '^ready' "$out" 2>/dev/null; do
		if ! kill -0 "$NET_LAST_PID" 2>/dev/null; then
			cat "$out.err" >&2
			fail "server exited before it was ready: $*"
		fi
		i=$((i + 1))
		[ $i -lt 1000 ] || fail "server not ready within 10 s: $*"
		sleep 0.01
	done
}

# stop_server PID: SIGTERM, and the exit status must be 0 within 10 s.
stop_server() {
	kill -TERM "$1" 2>/dev/null || fail "server $1 is not running"
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 1000 ] || fail "server $1 did not stop within 10 s of SIGTERM"
		sleep 0.01
	done
	wait "$1" || fail "server $1 exited with status $?"
}

# free_ports tcp|udp COUNT: COUNT distinct free loopback ports, one per line.
free_ports() {
	"$NET_CLIENT" freeport "$1" "$2" || fail "no free $1 port"
}

# wait_ok FILE WHAT: waits (10 s at most) for a line "ok ..." in FILE, the first call's.
wait_ok() {
	i=0
	until grep -q '^ok' "$1"; do
		i=$((i + 1))
		[ $i -lt 1000 ] || fail "$2: the first call did not succeed: $(cat "$1")"
		sleep 0.01
	done
}

# elapsed_ms RESULT_LINE: the milliseconds field of a net-client result line.
elapsed_ms() {
	echo "$1" | awk '{ print $2 }'
}
