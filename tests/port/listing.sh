#!/bin/sh
# listing.sh - port_test's checks that list message queues run wherever an mqueue filesystem
# can be listed, and a run that could list none is a SKIP (exit 77), never a PASS. Both runs
# are in a mount namespace of this test's own whose mounts are private (tests/lib/mountns,
# which makes one in a chroot too), with every mqueue mount taken away, and without
# CAP_SYS_ADMIN, as in a container: port_test cannot mount one itself then.
#   - with an mqueue filesystem mounted (as /dev/mqueue is on most machines), port_test
#     finds it, lists its queues there and passes;
#   - with none, it runs its cases, says that the listing checks were skipped and exits 77.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
pt=$IDL_TOP_BUILDDIR/tests/port/port_test
mountns=$IDL_TOP_BUILDDIR/tests/lib/mountns
fail() {
	echo "port/listing.sh: FAIL: $*" >&2
	exit 1
}
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	echo "port/listing.sh: SKIP: needs root and setpriv (util-linux)" >&2
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-port-listing.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$mountns" true 2>"$tmp/mountns.err" || {
	echo "port/listing.sh: SKIP: no mount namespace of its own here:" \
		"$(cat "$tmp/mountns.err")" >&2
	exit 77
}

# run MOUNT: port_test without CAP_SYS_ADMIN in a mount namespace with no mqueue mount, or
# (MOUNT=yes) one of its own at $tmp/mq; its status, its output in $tmp/out.
run() {
	"$mountns" sh -c '
		umount -a -t mqueue 2>/dev/null
		if [ "$1" = yes ]; then
			mkdir -p "$2/mq" && mount -t mqueue none "$2/mq" || exit 90
		fi
		exec setpriv --bounding-set -sys_admin --inh-caps -sys_admin "$3"' \
		sh "$1" "$tmp" "$pt" >"$tmp/out" 2>&1
}

run yes
st=$?
[ $st -ne 90 ] || fail "cannot mount an mqueue filesystem in a namespace of its own"
[ $st -eq 0 ] || { cat "$tmp/out"; fail "port_test with an mqueue mount exited $st"; }
grep -q "^queues listed in $tmp/mq\$" "$tmp/out" || {
	cat "$tmp/out"
	fail "port_test did not list the queues in the mqueue filesystem mounted at $tmp/mq"
}
echo "port/listing.sh: an mqueue filesystem mounted already: listed, PASS"

run no
st=$?
[ $st -eq 77 ] || { cat "$tmp/out"; fail "port_test that could list no queue exited $st, not 77"; }
grep -q "SKIP" "$tmp/out" || { cat "$tmp/out"; fail "port_test's skip does not say SKIP"; }
grep -q "passed" "$tmp/out" || { cat "$tmp/out"; fail "port_test skipped its cases too"; }
echo "port/listing.sh: no mqueue filesystem: the cases ran, the listing checks were skipped, SKIP"
