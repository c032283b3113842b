#!/bin/sh
# valgrind.sh - make check-long-conformance: the transport conformance suite, every
# transport threaded and embedded, with each bench-server it starts under valgrind memcheck.
# Any error or definite leak in a server's log fails it, as does any failed case.
: "${IDL_TOP_BUILDDIR:?run me through make}"
command -v valgrind >/dev/null || { echo "FAIL: valgrind is not installed"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/idl-vgc.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# The suite starts $IDL_BENCH_SERVER with its arguments (tests/transport/spawn.c).
cat >"$work/server" <<EOS
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --track-fds=no --log-file=$work/server.%p.log \
	"$IDL_TOP_BUILDDIR/examples/bench/bench-server" "\$@"
EOS
chmod +x "$work/server"
rc=0
echo "== the conformance suite, bench-server under valgrind"
IDL_BENCH_SERVER=$work/server "$IDL_TOP_BUILDDIR/tests/transport/conformance" || rc=1
# Errors are "==PID==" lines; "--PID--" lines are valgrind's own notes (valgrind 3.19 does
# not know pidfd_open, which the port: transport then replaces by polling).
n=0
for f in "$work"/server.*.log; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	grep -q '^==[0-9]*==' "$f" && { echo "--- $f"; cat "$f"; rc=1; }
done
[ "$n" -gt 0 ] || { echo "FAIL: no server ran under valgrind"; rc=1; }
[ $rc -eq 0 ] && echo "PASS: every case, and $n servers under valgrind with nothing to say"
exit $rc
