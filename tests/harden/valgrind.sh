#!/bin/sh
# valgrind.sh - make check-long-harden's memcheck run: the hardening suite with its
# every-server processes under valgrind (definite leaks and every error fail them: the
# suite checks each server's exit status), then the suite itself under valgrind.
: "${IDL_TOP_SRCDIR:?run me through make}" "${IDL_TOP_BUILDDIR:?run me through make}"
command -v valgrind >/dev/null || { echo "FAIL: valgrind is not installed"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/idl-vg.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
vg="$vg --show-leak-kinds=definite --track-fds=no"
cat >"$work/server" <<EOS
#!/bin/sh
exec $vg --log-file=$work/server.%p.log "$IDL_TOP_BUILDDIR/tests/harden/every-server" "\$@"
EOS
chmod +x "$work/server"
rc=0
echo "== every-server under valgrind"
# A server under valgrind takes seconds to start, more on a loaded machine.
IDL_HARDEN_START_MS=60000 IDL_HARDEN_SERVER=$work/server \
	"$IDL_TOP_BUILDDIR/tests/harden/harden" || rc=1
# Errors are "==PID==" lines; "--PID--" lines are valgrind's own notes (valgrind 3.19 does
# not know pidfd_open, which the port: transport then replaces by polling).
check_logs() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		grep -q '^==[0-9]*==' "$f" && { echo "--- $f"; cat "$f"; rc=1; }
	done
}
check_logs "$work"/server.*.log
# The cases that measure time (handshake, emfile) are left out here: valgrind slows the
# client enough to change what they measure; they ran above with the servers under it.
echo "== the suite under valgrind"
for c in "limits api" "limits msg_size" "limits inflight" "limits connections" \
	"limits idle" "limits fds" auth reply; do
	# shellcheck disable=SC2086
	$vg --log-file="$work/harden.%p.log" --trace-children=no \
		"$IDL_TOP_BUILDDIR/tests/harden/harden" $c || rc=1
done
check_logs "$work"/harden.*.log
[ $rc -eq 0 ] && echo "PASS: valgrind found nothing" || echo "FAIL: see above"
exit $rc
