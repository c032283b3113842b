#!/bin/sh
# peer-test.sh PEER - one of idlbench's peer programs (sdbus, grpc, capnp) against itself, as
# idlbench will drive it (peer.h's contract), over every transport it serves:
#   - version, rows and transports answer; bad command lines exit 2;
#   - the server says "ready ADDRESS" (a tcp port 0 replaced by the port it got), its socket
#     file is 0600, and it stops on SIGTERM with status 0, leaving no socket file behind;
#   - every row runs with one call in flight and with four, printing one "rep I NS" line per
#     repetition: the client checked every answer (add's sum, the big rows' 200 bytes, the
#     ool rows' checksums of 64 KiB and 1 MiB);
#   - a server started with --wrong ROW answers that row wrongly and the client exits 1 saying
#     so, for every row with an answer; --corrupt data is refused by the server (exit 1);
#   - a server stopped with SIGSTOP, before the client connects and in the middle of its
#     calls, is cut off by --timeout-ms (exit 4, "timed out"), and one killed with SIGKILL
#     mid-run is reported (exit 3 or 4): the client never hangs;
#   - sdbus: the server's introspection data lists bench.xml's methods and signatures;
#   - tls (grpc): with tests/tls/certs.sh's certificates in IDL_TLS_*, as idlkit's tls: tests
#     use them; a client without them is told which variable is unset (exit 3), and the
#     authentication is both ways: a client whose certificate another CA issued, one that
#     trusts another CA, and a plain tcp: client are all turned away (exit 3 or 4).
# A peer that configure did not build is a SKIP that says why (config.h's IDLBENCH_PEERS_WHY);
# one it built and that is missing is a failure.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
: "${IDL_TOP_SRCDIR:?run me through make check}"
set -u
peer=${1:?usage: peer-test.sh sdbus|grpc|capnp}
bin=$IDL_TOP_BUILDDIR/tools/idlbench/peers/$peer-peer
macro=HAVE_PEER_$(echo "$peer" | tr a-z A-Z)

if ! grep -q "^#define $macro 1" "$IDL_TOP_BUILDDIR/config.h"; then
	why=$(sed -n 's/^#define IDLBENCH_PEERS_WHY "\(.*\)"$/\1/p' "$IDL_TOP_BUILDDIR/config.h" |
		tr ';' '\n' | sed -n "s/^ *$peer: //p")
	echo "SKIP: the $peer peer is not built: ${why:-configure did not look for it}"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/peer-$peer.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $peer: $*" >&2
	for f in "$tmp"/*.err; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
	done
	exit 1
}
[ -x "$bin" ] || fail "configure built it ($macro) but $bin is missing"

# bounded PID SECONDS WHAT: waits for PID, at most SECONDS; a process still running then is
# killed and the test fails (it hung). Sets $status.
bounded() {
	n=0
	while kill -0 "$1" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -gt $(($2 * 50)) ]; then
			kill -KILL "$1" 2>/dev/null
			wait "$1" 2>/dev/null
			fail "$3: still running after $2 s (hung)"
		fi
		sleep 0.02
	done
	wait "$1"
	status=$?
}

# serve NAME ADDRESS [ARGS]: starts a server in the background as $spid; $saddr is the
# address it printed.
serve() {
	name=$1
	a=$2
	shift 2
	: >"$tmp/$name.out"
	"$bin" serve "$a" "$@" >>"$tmp/$name.out" 2>"$tmp/$name.err" &
	spid=$!
	pids="$pids $spid"
	n=0
	while ! grep -q '^ready ' "$tmp/$name.out"; do
		kill -0 "$spid" 2>/dev/null || fail "serve $a $*: died: $(cat "$tmp/$name.err")"
		n=$((n + 1))
		[ $n -lt 1000 ] || fail "serve $a $*: no ready line within 20 s"
		sleep 0.02
	done
	saddr=$(sed -n 's/^ready //p' "$tmp/$name.out")
	case $a in
	*:0) [ "${saddr%:*}" = "${a%:*}" ] && [ "${saddr##*:}" != 0 ] ||
		fail "serve $a said 'ready $saddr', not the port it got" ;;
	*) [ "$saddr" = "$a" ] || fail "serve $a said 'ready $saddr'" ;;
	esac
}

# stop ADDRESS: SIGTERM; the server must exit 0 and remove its socket file.
stop() {
	kill -TERM "$spid"
	bounded "$spid" 10 "the server after SIGTERM"
	[ "$status" -eq 0 ] || fail "serve $1: exit status $status on SIGTERM"
	case $1 in
	unix:*) [ ! -e "${1#unix:}" ] || fail "serve $1 left its socket file behind" ;;
	esac
}

# call NAME EXPECTED ARGS...: runs the client, at most 60 s (timeout's 124, or 137 after its
# SIGKILL, mean that it hung); its exit status must be EXPECTED.
call() {
	name=$1
	want=$2
	shift 2
	timeout -k 5 60 "$bin" call "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	status=$?
	[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "call $*: still running after 60 s (hung)"
	[ "$status" -eq "$want" ] ||
		fail "call $*: exit status $status, expected $want: $(cat "$tmp/$name.err")"
}

# The commands that answer at once.
"$bin" version >"$tmp/version" || fail "version failed"
grep -Eq '^[a-z-]+ [0-9]+(\.[0-9]+)*( |$)' "$tmp/version" ||
	fail "version printed '$(cat "$tmp/version")'"
echo "$peer-peer: $(cat "$tmp/version")"
"$bin" rows >"$tmp/rows" || fail "rows failed"
rows=$(cut -d' ' -f1 "$tmp/rows" | tr '\n' ' ')
[ "$rows" = "null add bigin bigout biginout ool64k ool1m " ] || fail "rows: $rows"
grep -q '^ool1m bandwidth 1048576 inline$' "$tmp/rows" || fail "rows: no inline ool1m line"
transports=$("$bin" transports) || fail "transports failed"
for bad in "call" "call unix:$tmp/x.sock nosuchrow 10 1" "call unix:$tmp/x.sock null 0 1" \
	"call unix:$tmp/x.sock null 10 1 --inflight 0" "serve" "serve nowhere:1" \
	"serve unix:$tmp/x.sock --wrong null" "nosuchcommand"; do
	# shellcheck disable=SC2086
	"$bin" $bad >/dev/null 2>"$tmp/usage.err"
	status=$?
	[ "$status" -eq 2 ] || fail "'$bad': exit status $status, expected 2 (usage)"
done

# refused NAME ARGS...: a client the server must turn away (exit 3 or 4, within 60 s).
refused() {
	name=$1
	shift
	timeout -k 5 60 "$bin" call "$@" null 5 1 --warmup 0 --timeout-ms 3000 \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	status=$?
	[ "$status" -eq 3 ] || [ "$status" -eq 4 ] ||
		fail "$name: call $*: exit status $status, expected 3 or 4 (turned away)"
}

# tls: the checks of TLS itself, on the server at $saddr.
tls_checks() {
	certs=$tmp/certs
	port=${saddr##*:}
	IDL_TLS_CERT= call tls-nocert 3 "$saddr" null 5 1 --warmup 0
	grep -q "IDL_TLS_CERT is not set" "$tmp/tls-nocert.err" ||
		fail "tls without IDL_TLS_CERT: $(cat "$tmp/tls-nocert.err")"
	IDL_TLS_CERT=$certs/stranger-client.crt IDL_TLS_KEY=$certs/stranger-client.key \
		refused tls-stranger "$saddr"
	IDL_TLS_CA=$certs/other-ca.crt refused tls-otherca "$saddr"
	refused tls-plain "tcp:127.0.0.1:$port"
}

for t in $transports; do
	case $t in
	unix) addr=unix:$tmp/$peer.sock ;;
	tcp) addr=tcp:127.0.0.1:0 ;;
	tls)
		addr=tls:127.0.0.1:0
		sh "$IDL_TOP_SRCDIR/tests/tls/certs.sh" "$tmp/certs" >/dev/null ||
			fail "tls: no certificates (tests/tls/certs.sh needs the openssl command)"
		export IDL_TLS_CERT="$tmp/certs/peer.crt" IDL_TLS_KEY="$tmp/certs/peer.key"
		export IDL_TLS_CA="$tmp/certs/ca.crt"
		;;
	*) fail "transports: unknown '$t'" ;;
	esac
	serve "$t" "$addr"
	if [ "$t" = unix ]; then
		mode=$(stat -c %a "$tmp/$peer.sock")
		[ "$mode" = 600 ] || fail "the socket file is $mode, not 600"
	fi
	for row in $rows; do
		for inflight in 1 4; do
			call "$t-$row" 0 "$saddr" "$row" 20 2 --warmup 5 --inflight $inflight
			grep -Eq '^rep 0 [0-9]+\.[0-9]$' "$tmp/$t-$row.out" &&
				grep -Eq '^rep 1 [0-9]+\.[0-9]$' "$tmp/$t-$row.out" &&
				[ "$(wc -l <"$tmp/$t-$row.out")" -eq 2 ] ||
				fail "$t $row --inflight $inflight printed: $(cat "$tmp/$t-$row.out")"
		done
		echo "$t $row: $(tr '\n' ' ' <"$tmp/$t-$row.out")"
	done
	for row in bigin biginout; do
		call "$t-corrupt" 1 "$saddr" "$row" 5 1 --corrupt
		grep -q "refused" "$tmp/$t-corrupt.err" || fail "--corrupt $row: $(cat "$tmp/$t-corrupt.err")"
	done
	if [ "$peer" = sdbus ]; then
		"$bin" introspect "$saddr" >"$tmp/introspect.xml" || fail "introspect failed"
		# Each method of org.idlkit.Bench with its arguments' types and directions.
		sig='/<interface name="org.idlkit.Bench"/ { on = 1 }
		     /<\/interface>/ { on = 0 }
		     on && /<method / { match($0, /name="[^"]*"/); m = substr($0, RSTART + 6, RLENGTH - 7); s = "" }
		     on && /<arg / { match($0, /type="[^"]*"/); ty = substr($0, RSTART + 6, RLENGTH - 7)
		                     match($0, /direction="[^"]*"/); s = s " " substr($0, RSTART + 11, RLENGTH - 12) ":" ty }
		     on && (/<\/method>/ || /<method [^>]*\/>/) { print m s }'
		awk "$sig" "$IDL_TOP_SRCDIR/tools/idlbench/peers/sdbus/bench.xml" | sort >"$tmp/want.sig"
		awk "$sig" "$tmp/introspect.xml" | sort >"$tmp/got.sig"
		[ -s "$tmp/want.sig" ] && cmp -s "$tmp/want.sig" "$tmp/got.sig" ||
			fail "the server's methods differ from bench.xml: $(diff "$tmp/want.sig" "$tmp/got.sig")"
	fi
	[ "$t" = tls ] && tls_checks
	stop "$addr"
done

# Wrong answers, over the first transport.
addr=unix:$tmp/wrong.sock
for row in add bigout biginout ool64k ool1m; do
	serve "wrong-$row" "$addr" --wrong "$row"
	call "wrong-$row-call" 1 "$saddr" "$row" 5 1 --warmup 0
	grep -Eq "wrong (answer|checksum)" "$tmp/wrong-$row-call.err" ||
		fail "--wrong $row: $(cat "$tmp/wrong-$row-call.err")"
	stop "$addr"
done
echo "wrong answers seen on add bigout biginout ool64k ool1m; --corrupt refused"

# A server that hangs: stopped before the client connects, then in the middle of its calls.
addr=unix:$tmp/hang.sock
serve hang "$addr"
kill -STOP "$spid"
call hang-connect 4 "$saddr" null 10 1 --timeout-ms 500
grep -q "timed out\|no answer\|no handshake" "$tmp/hang-connect.err" ||
	fail "a stopped server: $(cat "$tmp/hang-connect.err")"
kill -CONT "$spid"
"$bin" call "$saddr" null 1000000000 1 --warmup 0 --timeout-ms 500 \
	>"$tmp/hang-mid.out" 2>"$tmp/hang-mid.err" &
cpid=$!
sleep 0.5
kill -0 "$cpid" 2>/dev/null || fail "the client of the hang test ended early: $(cat "$tmp/hang-mid.err")"
kill -STOP "$spid"
bounded "$cpid" 20 "a client of a server stopped mid-run"
[ "$status" -eq 4 ] && grep -q "timed out" "$tmp/hang-mid.err" ||
	fail "a server stopped mid-run: exit status $status: $(cat "$tmp/hang-mid.err")"
kill -CONT "$spid"
stop "$addr"
echo "stopped server: $(cat "$tmp/hang-connect.err"); $(cat "$tmp/hang-mid.err")"

# A server that dies mid-run.
addr=unix:$tmp/dead.sock
serve dead "$addr"
"$bin" call "$saddr" null 1000000000 1 --warmup 0 --timeout-ms 500 \
	>"$tmp/dead.out" 2>"$tmp/dead.err" &
cpid=$!
sleep 0.5
kill -0 "$cpid" 2>/dev/null || fail "the client of the death test ended early: $(cat "$tmp/dead.err")"
{
	kill -KILL "$spid"
	wait "$spid"
} 2>/dev/null
bounded "$cpid" 20 "a client of a killed server"
[ "$status" -eq 3 ] || [ "$status" -eq 4 ] ||
	fail "a server killed mid-run: exit status $status, expected 3 or 4"
[ -s "$tmp/dead.err" ] || fail "a server killed mid-run: the client said nothing"
echo "killed server: $(head -n 1 "$tmp/dead.err")"
echo "PASS: $peer peer: $(echo $transports) x $(echo $rows | wc -w) rows"
exit 0
