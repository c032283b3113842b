#!/bin/sh
# cleanup.sh - what lib.sh promises the network tests, checked on scripts of its own:
#   - a test that names a network namespace leaves /run/netns as it found it: no mount point
#     (the first `ip netns add` would make it one) and nothing in it; a test alone, and two
#     at once as make -j2 check runs them, the second starting while the first's namespace
#     is there and ending after it. Run in a mount namespace of its own whose mounts are
#     private (tests/lib/mountns, which makes one in a chroot too) with a /run of its own
#     (a tmpfs), where /run/netns is an empty directory and no mount point, so that neither
#     the machine's mounts nor the other tests' namespaces are touched or seen;
#   - a kill that finds its process gone (the shell would print "No such process" and go
#     on) fails the script that made it, naming the call, unless the call discards its
#     standard error, as a probe or a cleanup does.
: "${IDL_TOP_SRCDIR:?run me through make check}" "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
lib=$IDL_TOP_SRCDIR/tests/net/lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-cleanup.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "cleanup: FAIL: $*" >&2
	exit 1
}

# A script that signals a reaped process without 2>/dev/null fails, saying which call.
cat >"$tmp/gone.sh" <<'SCRIPT'
. "$1"
sleep 30 &
pid=$!
kill -KILL "$pid"
wait "$pid" 2>/dev/null
kill -0 "$pid" 2>/dev/null && exit 3
kill -CONT "$pid"
exit 0
SCRIPT
if sh "$tmp/gone.sh" "$lib" >"$tmp/gone.out" 2>&1; then
	cat "$tmp/gone.out"
	fail "a script that signalled a process that is gone passed"
fi
grep -q "kill -CONT .* failed" "$tmp/gone.out" || {
	cat "$tmp/gone.out"
	fail "the failure does not name the kill"
}
echo "cleanup: a kill of a process that is gone fails its test: $(grep -m1 FAIL "$tmp/gone.out")"
sed 's/^kill -CONT "$pid"$/kill -CONT "$pid" 2>\/dev\/null/' "$tmp/gone.sh" >"$tmp/probe.sh"
sh "$tmp/probe.sh" "$lib" >"$tmp/probe.out" 2>&1 || {
	cat "$tmp/probe.out"
	fail "a kill that discards its standard error failed its test"
}
[ ! -s "$tmp/probe.out" ] || {
	cat "$tmp/probe.out"
	fail "a kill that discards its standard error printed something"
}
echo "cleanup: one that discards its standard error does not"

# /run/netns, in a mount namespace of this test's own.
mountns=$IDL_TOP_BUILDDIR/tests/lib/mountns
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
	echo "cleanup: SKIP: the /run/netns check needs root and iproute2" >&2
	exit 77
fi
"$mountns" true 2>"$tmp/mountns.err" || {
	echo "cleanup: SKIP: no mount namespace of its own here: $(cat "$tmp/mountns.err")" >&2
	exit 77
}
# A test that names a namespace: $2 is its name, $3 a path; it makes $3.up once the namespace
# is there, and waits for $3.go before it ends.
cat >"$tmp/one.sh" <<'SCRIPT'
. "$1"
can_netns || { echo "$NET_NETNS_WHY"; exit 77; }
netns_add "$2"
[ -e "/run/netns/$2" ] || exit 3
: >"$3.up"
i=0
until [ -e "$3.go" ]; do
	i=$((i + 1))
	[ $i -lt 3000 ] || exit 4
	sleep 0.01
done
SCRIPT
cat >"$tmp/netns.sh" <<'SCRIPT'
# In a mount namespace of its own: a /run of its own where /run/netns is an empty directory
# and no mount point, then tests' namespaces. $1 is lib.sh, $2 the directory of one.sh.
mount -t tmpfs -o mode=0755 idlkit-cleanup /run && mkdir /run/netns || exit 2
# as_found WHAT: /run/netns is no mount point and holds nothing after WHAT.
as_found() {
	if awk '$2 == "/" || $2 == "/run" { m = 0 } $2 == "/run/netns" { m = 1 }
		END { exit !m }' /proc/self/mounts; then
		echo "/run/netns is still a mount point after $1"
		exit 1
	fi
	if [ -n "$(ls -A /run/netns)" ]; then
		echo "/run/netns still holds $(ls -A /run/netns | tr '\n' ' ')after $1"
		exit 1
	fi
	echo "/run/netns as it was after $1"
}
# start NAME: one.sh in the background as test NAME, once its namespace is there.
start() {
	sh "$2/one.sh" "$1" "idlkit-cleanup-$3-$$" "$2/$3" &
	i=0
	until [ -e "$2/$3.up" ]; do
		kill -0 $! 2>/dev/null || { wait $!; echo "test $3 using lib.sh exited $?"; exit 1; }
		i=$((i + 1))
		[ $i -lt 3000 ] || { echo "test $3 made no namespace within 30 s"; exit 1; }
		sleep 0.01
	done
}
# finish NAME PID: lets test NAME end, and it must end well.
finish() {
	: >"$2/$3.go"
	wait "$4"
	st=$?
	[ $st -eq 0 ] || { echo "test $3 using lib.sh exited $st"; exit $st; }
}
: >"$2/alone.go"
sh "$2/one.sh" "$1" "idlkit-cleanup-alone-$$" "$2/alone"
st=$?
[ $st -eq 0 ] || { echo "the test using lib.sh exited $st"; exit $st; }
as_found "one test"
# Two at once, as make -j2 check runs them: the second starts while the first's namespace is
# there, and ends after it.
start "$1" "$2" first
first=$!
start "$1" "$2" second
second=$!
finish "$1" "$2" first $first
finish "$1" "$2" second $second
as_found "two tests at once"
SCRIPT
"$mountns" sh "$tmp/netns.sh" "$lib" "$tmp" >"$tmp/netns.out" 2>&1
st=$?
cat "$tmp/netns.out"
[ $st -ne 77 ] || { echo "cleanup: SKIP: no network namespace can be made here" >&2; exit 77; }
[ $st -eq 0 ] || fail "lib.sh left /run/netns changed (status $st)"
exit 0
