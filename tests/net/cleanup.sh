#!/bin/sh
# cleanup.sh - what lib.sh promises the network tests, checked on scripts of its own:
#   - a test that made /run/netns a mount point (the first `ip netns add` does) leaves it as
#     it found it, with no namespace of its own left there; run in a mount namespace of its
#     own (unshare -m) with a /run of its own (a tmpfs), where /run/netns is an empty
#     directory and no mount point, so that neither the machine's mounts nor the other
#     tests' namespaces, made at once, are touched or seen;
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
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1 || ! command -v unshare >/dev/null 2>&1 ||
	! unshare -m --propagation private true 2>/dev/null; then
	echo "cleanup: SKIP: the /run/netns check needs root, iproute2 and unshare" >&2
	exit 77
fi
cat >"$tmp/netns.sh" <<'SCRIPT'
# In a mount namespace of its own: a /run of its own where /run/netns is an empty directory
# and no mount point, then a test's namespace.
mount -t tmpfs -o mode=0755 idlkit-cleanup /run && mkdir /run/netns || exit 2
name=idlkit-cleanup-$$
sh -c '. "$1"; can_netns || exit 77; netns_add "$2"; [ -e "/run/netns/$2" ] || exit 3' \
	sh "$1" "$name"
st=$?
[ $st -eq 0 ] || { echo "the test using lib.sh exited $st"; exit $st; }
if awk '$2 == "/" || $2 == "/run" { m = 0 } $2 == "/run/netns" { m = 1 } END { exit !m }' \
	/proc/self/mounts; then
	echo "/run/netns is still a mount point after the test"
	exit 1
fi
if [ -e "/run/netns/$name" ]; then
	echo "the namespace /run/netns/$name is still there"
	exit 1
fi
echo "/run/netns as it was, its namespace gone"
SCRIPT
unshare -m --propagation private sh "$tmp/netns.sh" "$lib" >"$tmp/netns.out" 2>&1
st=$?
cat "$tmp/netns.out"
[ $st -ne 77 ] || { echo "cleanup: SKIP: no network namespace can be made here" >&2; exit 77; }
[ $st -eq 0 ] || fail "lib.sh left /run/netns changed (status $st)"
exit 0
