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
IDL_HARDEN_SERVER=$work/server "$IDL_TOP_BUILDDIR/tests/harden/harden" || rc=1
for f in "$work"/server.*.log; do
	[ -s "$f" ] && { echo "--- $f"; cat "$f"; rc=1; }
done
echo "== the suite under valgrind (limits, auth, reply)"
for s in limits auth reply; do
	$vg --log-file="$work/harden.$s.%p.log" --trace-children=no \
		"$IDL_TOP_BUILDDIR/tests/harden/harden" $s || rc=1
done
for f in "$work"/harden.*.log; do
	[ -s "$f" ] && { echo "--- $f"; cat "$f"; rc=1; }
done
[ $rc -eq 0 ] && echo "PASS: valgrind found nothing" || echo "FAIL: see above"
exit $rc
