#!/bin/sh
# valgrind.sh - make check-long-conformance: the transport conformance suite, every
# transport threaded and embedded, with each bench-server it starts under valgrind memcheck.
# Any error or definite leak in a server's log fails it, as does any failed case. Then the
# client side of calls in flight under valgrind: examples/async/async-client.
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

# The client's side of calls in flight: examples/async/async-client under valgrind, 5,000
# calls with 64 in flight against a bench-server, so that call records are reused many
# times over (a spare record's data is inaccessible to memcheck until it is handed out).
echo "== calls in flight, the client under valgrind"
sock=$work/async.sock
"$IDL_TOP_BUILDDIR/examples/bench/bench-server" "unix:$sock" >"$work/async-server.out" 2>&1 &
spid=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
"$IDL_TOP_BUILDDIR/libtool" --mode=execute valgrind -q --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite --log-file="$work/async-client.log" \
	"$IDL_TOP_BUILDDIR/examples/async/async-client" "unix:$sock" 5000 64 || rc=1
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
if grep -q '^==[0-9]*==' "$work/async-client.log"; then
	cat "$work/async-client.log"
	rc=1
fi
[ $rc -eq 0 ] && echo "PASS: every case, and $n servers and the async client under valgrind with nothing to say"
exit $rc
