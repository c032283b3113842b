#!/bin/bash
# idlcall.sh - idlcall and the dynamic server against real processes over unix: sockets.
#
#   1. idlcall, with the installed-style bench.defs, calls every routine of the compiled
#      bench-server and prints the right results (add 2 3 prints sum = 5), as text and as
#      JSON; errors come out by name; --list, -I/-D, a changed signature, a missing routine;
#   2. tracing: idlcall --trace, IDL_TRACE=1 and IDL_TRACE=FILE show decoded messages;
#   3. dyn-server (bench.defs through the dynamic server, no server stubs) answers idlcall
#      the same way and the compiled bench-client, which checks every result; its own trace
#      shows the server's side;
#   4. the same with the descriptor built from bench.defs at run time (dyn-server -d);
#   5. out-of-line data and ports: ool64k and ool1m (data from @FILE, the server's checksum
#      read back) against both bench servers, and oolt.defs (data each way, ports in, out,
#      polymorphic and in arrays, countinout, a deferred reply) against the compiled
#      oolt-server and dyn-oolt-server, with the same results; a port that cannot travel
#      is IDL_ENOTSUP by name;
#   6. idlcall --serve: bench.defs served from a shared library of bench's own routines
#      (bench_impl.c, written against the generated header; no generated code loaded)
#      answers idlcall and the compiled bench-client, traced on the server's side; calc.defs
#      (docs/idlcall.md's example) from calc_lib.c, with --prefix; a library that does not
#      load and one that lacks a routine fail with status 1 and say why; SIGTERM and SIGINT
#      stop it with status 0 and its socket file gone.
#
# Needs IDL_TOP_BUILDDIR and IDL_TOP_SRCDIR (make check sets them).
set -u

B=${IDL_TOP_BUILDDIR:?run through make check}
S=${IDL_TOP_SRCDIR:?run through make check}
IDLCALL=$B/tools/idlcall/idlcall
DYN=$B/tests/dynamic/dyn-server
SERVER=${IDL_BENCH_SERVER:-$B/examples/bench/bench-server}
CLIENT=$B/examples/bench/bench-client
DEFS=$S/examples/bench/bench.defs

TMP=$(mktemp -d "${TMPDIR:-/tmp}/idlcall-test.XXXXXX") || exit 1
PIDS=
cleanup() {
	for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

# launch NAME STREAM PATTERN CMD...: runs CMD in the background and waits (10 s at most)
# for a line matching PATTERN in its STREAM (out or err); sets NAME_pid.
launch() {
	local name=$1 stream=$2 pattern=$3
	shift 3
	"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	local pid=$!
	PIDS="$PIDS $pid"
	for _ in $(seq 100); do
		if grep -q "$pattern" "$TMP/$name.$stream" 2>/dev/null; then
			eval "${name}_pid=$pid"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	bad "$name did not start: $(cat "$TMP/$name.err")"
	return 1
}

# Starts a server in the background and waits for its "ready" line.
start() {
	launch "$1" out '^ready ' "${@:2}"
}

stop() {
	local pid=$1
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		bad "server $pid did not stop on SIGTERM"
	fi
	wait "$pid" 2>/dev/null
}

# expect WHAT EXPECTED-STATUS EXPECTED-STDOUT COMMAND...
expect() {
	local what=$1 want_rc=$2 want=$3
	shift 3
	local out rc
	out=$("$@" 2>"$TMP/stderr")
	rc=$?
	if [ "$rc" != "$want_rc" ] || [ "$out" != "$want" ]; then
		bad "$what: status $rc (want $want_rc), output:"
		printf '%s\n' "$out" | sed 's/^/    /'
		echo "  wanted:"
		printf '%s\n' "$want" | sed 's/^/    /'
		sed 's/^/  stderr: /' "$TMP/stderr"
	else
		ok
	fi
}

# expect_err WHAT EXPECTED-STATUS STDERR-PATTERN COMMAND...
expect_err() {
	local what=$1 want_rc=$2 pattern=$3
	shift 3
	"$@" >/dev/null 2>"$TMP/stderr"
	local rc=$?
	if [ "$rc" != "$want_rc" ] || ! grep -q -- "$pattern" "$TMP/stderr"; then
		bad "$what: status $rc (want $want_rc), stderr lacks '$pattern':"
		sed 's/^/    /' "$TMP/stderr"
	else
		ok
	fi
}

# has WHAT FILE PATTERN: the file has a line matching the (grep -E) pattern.
has() {
	if grep -E -q -- "$3" "$2"; then
		ok
	else
		bad "$1: no line matching '$3' in:"
		sed 's/^/    /' "$2"
	fi
}

# The 200 bytes of bench_impl.h's pattern for a salt.
pattern() {
	awk -v salt="$1" 'BEGIN { s = ""; for (i = 0; i < 200; i++)
		s = s sprintf("%c", 65 + (i * 7 + salt * 11) % 26); print s }'
}

# The checksum bench_impl.h's bench_ool_sum() gives N bytes of value V, as intrpc -1003
# (BENCH_X_OOLSUM) reports it: y and err, the low and high 32 bits.
oolsum() {
	local n=$1 v=$2 s lo hi
	s=$(( (n / 8) * (v * 0x0101010101010101) + n ))
	lo=$(( s & 0xffffffff ))
	hi=$(( (s >> 32) & 0xffffffff ))
	[ "$lo" -ge 2147483648 ] && lo=$(( lo - 4294967296 ))
	[ "$hi" -ge 2147483648 ] && hi=$(( hi - 4294967296 ))
	printf 'y = %d\nerr = %d' "$lo" "$hi"
}
head -c 65536 /dev/zero | tr '\0' '\001' >"$TMP/ool64k"
head -c 1048576 /dev/zero | tr '\0' '\003' >"$TMP/ool1m"
head -c 65528 /dev/zero >"$TMP/short"

# Every routine of bench.defs against the server at $1, which must be fresh (its
# notification counters at zero).
every_routine() {
	local a=$1 on=$2
	local call=("$IDLCALL" "$DEFS" "$a")

	expect "$on: null" 0 "" "${call[@]}" null
	expect "$on: add 2 3" 0 "sum = 5" "${call[@]}" add 2 3
	expect "$on: add -7 3" 0 "sum = -4" "${call[@]}" add -7 3
	expect "$on: add wraps" 0 "sum = -2147483648" "${call[@]}" add 2147483647 1
	expect "$on: add hex" 0 "sum = 272" "${call[@]}" add 0x100 0x10
	expect "$on: intrpc" 0 $'y = 42\nerr = 0' "${call[@]}" intrpc 41
	expect "$on: intrpc in-band error" 0 $'y = -1000\nerr = 77' "${call[@]}" intrpc -1001
	expect "$on: bigin" 0 "" "${call[@]}" bigin "$(pattern 0)"
	expect "$on: bigout" 0 "data = \"$(pattern 1)\"" "${call[@]}" bigout
	expect "$on: biginout" 0 "data = \"$(pattern 3)\"" "${call[@]}" biginout "$(pattern 2)"
	expect "$on: notify" 0 "" "${call[@]}" notify 5
	expect "$on: notify" 0 "" "${call[@]}" notify 7
	# The server has counted both by the time it answers a later call on any connection:
	# each notify was sent before idlcall exited, and one connection is served in order,
	# but two connections are not; so poll briefly.
	for _ in $(seq 50); do
		[ "$("${call[@]}" intrpc -1002)" = $'y = 2\nerr = 12' ] && break
		sleep 0.1
	done
	expect "$on: notifications counted" 0 $'y = 2\nerr = 12' "${call[@]}" intrpc -1002
	expect "$on: echo" 0 'r = "hello, world"' "${call[@]}" echo "hello, world"
	expect "$on: echo quotes" 0 'r = "a\"b\\c"' "${call[@]}" echo 'a"b\c'
	expect "$on: echo empty" 0 'r = ""' "${call[@]}" echo ""
	expect "$on: sum" 0 "total = 6" "${call[@]}" sum "[1, 2, 3]"
	expect "$on: sum empty" 0 "total = 0" "${call[@]}" sum "[]"
	expect "$on: sum 1024" 0 "total = 524800" "${call[@]}" sum "[$(seq -s, 1 1024)]"
	expect "$on: sum 64-bit" 0 "total = 4294967294" "${call[@]}" sum "[2147483647,2147483647]"
	expect "$on: json add" 0 '{"sum": 5, "return": 0}' "$IDLCALL" --json "$DEFS" "$a" add 2 3
	expect "$on: json intrpc" 0 '{"y": 42, "err": 0, "return": 0}' \
		"$IDLCALL" -j "$DEFS" "$a" intrpc 41
	expect "$on: json echo" 0 '{"r": "tab\there", "return": 0}' \
		"$IDLCALL" -j "$DEFS" "$a" echo "$(printf 'tab\there')"
	expect "$on: json null" 0 '{"return": 0}' "$IDLCALL" -j "$DEFS" "$a" null
	expect "$on: json notify" 0 '{"return": 0}' "$IDLCALL" -j "$DEFS" "$a" notify 0
	expect "$on: json server error" 1 '{"return": 4242, "error": "server-defined"}' \
		"$IDLCALL" -j "$DEFS" "$a" intrpc -1000
	expect_err "$on: server error" 1 "bench.intrpc: the server returned 4242" \
		"${call[@]}" intrpc -1000
	expect_err "$on: bad data" 1 "the server returned 4243" "${call[@]}" bigin "x"
	expect_err "$on: array over its bound" 1 "bench.sum: .*MIG_ARRAY_TOO_LARGE)" \
		"${call[@]}" sum "[$(seq -s, 1 1025)]"
	expect_err "$on: string without room for its NUL" 1 "MIG_ARRAY_TOO_LARGE" \
		"${call[@]}" echo "$(printf '%0256d' 0)"
	# Out of line: the server reads all of it into a checksum that intrpc reads back.
	expect "$on: ool64k" 0 "" "${call[@]}" ool64k "@$TMP/ool64k"
	expect "$on: ool64k checksum" 0 "$(oolsum 65536 1)" "${call[@]}" intrpc -1003
	expect "$on: ool1m" 0 "" "${call[@]}" ool1m "@$TMP/ool1m"
	expect "$on: ool1m checksum" 0 "$(oolsum 1048576 3)" "${call[@]}" intrpc -1003
	expect "$on: json ool64k" 0 '{"return": 0}' "$IDLCALL" -j "$DEFS" "$a" ool64k "@$TMP/ool64k"
	expect_err "$on: ool64k of the wrong size" 1 "the server returned 4243" \
		"${call[@]}" ool64k "@$TMP/short"
	expect_err "$on: ool1m of 3 bytes in hex" 1 "the server returned 4243" \
		"${call[@]}" ool1m 0a0b0c
	expect "$on: checksum after refusals" 0 "$(oolsum 65536 1)" "${call[@]}" intrpc -1003
}

# 1. Against the compiled server.
start compiled "$SERVER" "unix:$TMP/c.sock" || exit 1
C=unix:$TMP/c.sock
every_routine "$C" compiled

"$IDLCALL" "$DEFS" --list >"$TMP/list" 2>&1
has "--list" "$TMP/list" '^subsystem bench 4200: 11 routines$'
has "--list" "$TMP/list" '^  4201 routine add\(in a: int32, in b: int32, out sum: int32\)$'
has "--list" "$TMP/list" '^  4206 simpleroutine notify\(in value: int32\)$'
has "--list" "$TMP/list" '^  4208 routine sum\(in data: int32\[\*:1024\], out total: int64\)$'
has "--list" "$TMP/list" '^  4209 routine ool64k\(in data: \^char\[\]\)$'
expect "-l before the file" 0 "$(cat "$TMP/list")" "$IDLCALL" -l "$DEFS"

expect_err "no server" 1 "ECONNREFUSED" "$IDLCALL" "$DEFS" "unix:$TMP/none.sock" add 1 2
expect_err "no scheme" 1 "ENOSCHEME" "$IDLCALL" "$DEFS" "nosuch:x" add 1 2
# A name that does not resolve (.invalid never does): the line leads with what failed.
expect_err "unresolvable host" 1 \
	"^idlcall: bench.add: tcp:no-such-host.invalid:7000: cannot resolve host 'no-such-host.invalid': .*EADDRINVAL)\$" \
	"$IDLCALL" "$DEFS" tcp:no-such-host.invalid:7000 add 1 2
expect_err "unknown routine" 2 "has no routine 'nosuch'" "$IDLCALL" "$DEFS" "$C" nosuch
expect_err "argument count" 2 "add takes 2 arguments, not 1" "$IDLCALL" "$DEFS" "$C" add 1
expect_err "bad integer" 2 "argument b: 'x' is not a valid int32" "$IDLCALL" "$DEFS" "$C" add 1 x
expect_err "out of range" 2 "argument a: '4294967296'" "$IDLCALL" "$DEFS" "$C" add 4294967296 1
expect_err "no file" 2 "nosuch.defs" "$IDLCALL" "$TMP/nosuch.defs" "$C" add 1 2
expect_err "usage" 2 "usage: idlcall" "$IDLCALL" "$DEFS"

# A client whose add differs from the server's: refused by name, never sent.
sed 's/a : int; b : int; out sum : int/a : int; b : int64_t; out sum : int/' "$DEFS" \
	>"$TMP/changed.defs"
expect_err "changed signature" 1 "IDL_ESIGNATURE\|ESIGNATURE" \
	"$IDLCALL" "$TMP/changed.defs" "$C" add 1 2
expect "unchanged routines still work" 0 "y = 2"$'\n'"err = 0" \
	"$IDLCALL" "$TMP/changed.defs" "$C" intrpc 1
# A routine the server lacks.
{ cat "$DEFS"; echo "routine extra(server : mach_port_t);"; } >"$TMP/extra.defs"
expect_err "routine the server lacks" 1 "MIG_BAD_ID" "$IDLCALL" "$TMP/extra.defs" "$C" extra

# The .defs goes through cpp: -I and -D reach it.
printf '#ifdef WANT_BENCH\n#include "bench.defs"\n#endif\n' >"$TMP/cond.defs"
expect "cpp -I -D" 0 "sum = 9" \
	"$IDLCALL" -I "$S/examples/bench" -D WANT_BENCH "$TMP/cond.defs" "$C" add 4 5
expect "cpp -IDIR -DX=1" 0 "sum = 9" \
	"$IDLCALL" "-I$S/examples/bench" -DWANT_BENCH=1 "$TMP/cond.defs" "$C" add 4 5
expect_err "cpp without -D" 2 "subsystem" \
	"$IDLCALL" -I "$S/examples/bench" "$TMP/cond.defs" "$C" add 4 5

# 2. Tracing, decoded, both directions, with the time of the round trip.
OK=KERN_SUCCESS
US='\([0-9.]+us\)'
"$IDLCALL" --trace "$DEFS" "$C" add 2 3 >"$TMP/out" 2>"$TMP/trace"
has "--trace output" "$TMP/out" '^sum = 5$'
has "--trace request" "$TMP/trace" \
	"^idl-trace \+[0-9.]+ client send $C REQUEST bench.add #seq=[0-9]+ #size=32 a=2 b=3$"
has "--trace reply" "$TMP/trace" \
	"^idl-trace \+[0-9.]+ client recv $C REPLY bench.add #seq=[0-9]+ #size=32 $OK sum=5 $US$"
IDL_TRACE=1 "$IDLCALL" "$DEFS" "$C" echo hi >/dev/null 2>"$TMP/trace"
has "IDL_TRACE=1" "$TMP/trace" 'client send .* REQUEST bench.echo .* s="hi"$'
has "IDL_TRACE=1" "$TMP/trace" 'client recv .* REPLY bench.echo .* KERN_SUCCESS r="hi" \('
IDL_TRACE=$TMP/trace.log "$IDLCALL" "$DEFS" "$C" intrpc -1000 >/dev/null 2>&1
has "IDL_TRACE=FILE" "$TMP/trace.log" 'REPLY bench.intrpc #seq=[0-9]+ #size=24 #retcode=4242'
if [ "$(stat -c %a "$TMP/trace.log")" = 600 ]; then ok; else bad "trace file mode"; fi
"$IDLCALL" --trace "$DEFS" "$C" sum "[$(seq -s, 1 100)]" >/dev/null 2>"$TMP/trace"
has "brief arrays" "$TMP/trace" 'data=\[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,\.\.\.\]$'
"$IDLCALL" --trace "$DEFS" "$C" ool64k "@$TMP/ool64k" >/dev/null 2>"$TMP/trace"
OOL64='data=<ool 65536 bytes: (01){32}\.\.\.>$'
has "out-of-line data traced" "$TMP/trace" \
	"client send $C REQUEST bench.ool64k #seq=[0-9]+ #size=40 $OOL64"
stop "$compiled_pid"

# 3. The dynamic server, traced on its side.
start dynamic env IDL_TRACE="$TMP/server-trace.log" "$DYN" -c 4 "unix:$TMP/d.sock" || exit 1
D=unix:$TMP/d.sock
every_routine "$D" dynamic
has "server trace: request" "$TMP/server-trace.log" \
	"^idl-trace \+[0-9.]+ server recv $D REQUEST bench.add #seq=[0-9]+ #size=32 a=2 b=3$"
has "server trace: reply" "$TMP/server-trace.log" \
	"^idl-trace \+[0-9.]+ server send $D REPLY bench.add #seq=[0-9]+ #size=32 $OK sum=5 $US$"
has "server trace: one-way" "$TMP/server-trace.log" "server recv $D ONEWAY bench.notify .* value=5$"
if "$CLIENT" -n 200 -r 3 "$D" >"$TMP/client.out" 2>&1; then
	ok
else
	bad "bench-client against the dynamic server:"
	sed 's/^/    /' "$TMP/client.out"
fi
stop "$dynamic_pid"

# 4. The descriptor built from bench.defs at run time, served to the compiled client.
start fromdefs "$DYN" -d "$DEFS" "unix:$TMP/e.sock" || exit 1
E=unix:$TMP/e.sock
if "$CLIENT" -n 200 -r 3 "$E" >"$TMP/client.out" 2>&1; then
	ok
else
	bad "bench-client against the dynamic server with a run-time descriptor:"
	sed 's/^/    /' "$TMP/client.out"
fi
expect "run-time descriptor: add" 0 "sum = 5" "$IDLCALL" "$DEFS" "$E" add 2 3
stop "$fromdefs_pid"

# 5. oolt.defs: descriptors of every kind, compiled server and dynamic one alike.
OOLT=$S/tests/ool/oolt.defs
start oolt "$B/tests/ool/oolt-server" "unix:$TMP/oc.sock" || exit 1
start dynoolt env IDL_TRACE="$TMP/oolt-trace.log" "$B/tests/dynamic/dyn-oolt-server" \
	"unix:$TMP/od.sock" || exit 1
OC=unix:$TMP/oc.sock
OD=unix:$TMP/od.sock
ocall=("$IDLCALL" -I "$S/data/include" "$OOLT")
cpid=$("${ocall[@]}" "$OC" ping)
# A server on tcp:, whose ports cannot travel: on a free port, tried a few times.
T=
for _ in 1 2 3 4 5 6 7 8; do
	t=tcp:127.0.0.1:$((20000 + RANDOM % 40000))
	"$B/tests/ool/oolt-server" "$t" >"$TMP/ot.out" 2>/dev/null &
	tpid=$!
	for _ in $(seq 50); do
		grep -q '^ready ' "$TMP/ot.out" 2>/dev/null && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	if grep -q '^ready ' "$TMP/ot.out"; then
		PIDS="$PIDS $tpid"
		T=$t
		break
	fi
	wait "$tpid" 2>/dev/null
done
[ -n "$T" ] || bad "no oolt-server on tcp: could start"
for a in "$OC" "$OD"; do
	on=oolt-server
	[ "$a" = "$OD" ] && on=dyn-oolt-server
	expect "$on: give a port" 0 "$cpid" "${ocall[@]}" "$a" give "$OC"
	expect "$on: give null" 0 "pid = 0" "${ocall[@]}" "$a" give null
	expect "$on: take a port" 0 "p = <port $a>" "${ocall[@]}" "$a" take
	expect "$on: json take" 0 "{\"p\": \"<port $a>\", \"return\": 0}" \
		"$IDLCALL" -j -I "$S/data/include" "$OOLT" "$a" take
	expect "$on: poly" 0 $'got = 17\n'"q = <port $OC>" "${ocall[@]}" "$a" poly "$OC"
	expect "$on: ports" 0 "n = 2002" "${ocall[@]}" "$a" ports "[$a,null,$a,null]"
	expect "$on: source" 0 "data = 0x15981b9e21a427aa2db0" "${ocall[@]}" "$a" source 10 3
	expect "$on: source 0" 0 'data = 0x' "${ocall[@]}" "$a" source 0 3
	expect "$on: where" 0 $'place = 3\nsum = 21542142470' "${ocall[@]}" "$a" where 0102030405
	expect "$on: sink (dealloc)" 0 "sum = 2828" "${ocall[@]}" "$a" sink 0a0b
	expect "$on: countinout" 0 "vals = [$(seq -s, 0 3 189)]" "${ocall[@]}" "$a" counted
	expect "$on: deferred reply" 0 "y = 42" "${ocall[@]}" "$a" later 21 10
	[ -n "$T" ] && expect_err "$on: a tcp: port cannot travel" 1 "oolt.give: .*ENOTSUP)" \
		"${ocall[@]}" "$a" give "$T"
	expect_err "$on: a port that does not open" 1 "ENOSCHEME" \
		"${ocall[@]}" "$a" give nosuch:x
done
if [ -n "$T" ]; then
	expect_err "tcp: a port in" 1 "oolt.give: .*ENOTSUP)" "${ocall[@]}" "$T" give "$OC"
	expect_err "tcp: a port out" 1 "oolt.take: .*ENOTSUP)" "${ocall[@]}" "$T" take
	expect "tcp: data out of line" 0 "data = 0x15981b9e21a427aa2db0" \
		"${ocall[@]}" "$T" source 10 3
fi
has "dyn-oolt-server trace: a port" "$TMP/oolt-trace.log" \
	"server recv $OD REQUEST oolt.give #seq=[0-9]+ #size=40 p=<port>$"
has "dyn-oolt-server trace: data out, dealloc" "$TMP/oolt-trace.log" \
	"server send $OD REPLY oolt.source #seq=[0-9]+ #size=40 $OK data=<ool 10 bytes>"
stop "$oolt_pid"
stop "$dynoolt_pid"

# 6. idlcall --serve, with libtool modules of server routines.
module() {
	local dlname
	dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$B/tests/dynamic/$1.la")
	printf '%s/tests/dynamic/.libs/%s' "$B" "$dlname"
}
BENCHLIB=$(module benchimpl)
CALCLIB=$(module calc)
CALC=$S/tests/dynamic/calc.defs

# serve NAME IDLCALL-ARGS...: idlcall --serve in the background; waits (10 s at most) for
# the line that says it serves.
serve() {
	launch "$1" err '^idlcall: serving ' "$IDLCALL" "${@:2}"
}

# unserve PID SIGNAL SOCKET: the signal stops it (10 s at most) with status 0, and the
# socket file is gone.
unserve() {
	local pid=$1 sig=$2 sock=$3 rc
	kill "-$sig" "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		bad "idlcall --serve did not stop on SIG$sig"
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" = 0 ]; then ok; else bad "idlcall --serve: status $rc after SIG$sig (want 0)"; fi
	if [ ! -e "$sock" ]; then ok; else bad "idlcall --serve left its socket $sock"; fi
}

# A serve that must fail must not serve: bounded, in case it does.
SERVE=(timeout 20 "$IDLCALL")

SB=unix:$TMP/sb.sock
serve sbench --trace --serve "$DEFS" "$SB" "$BENCHLIB" || exit 1
has "--serve: the line" "$TMP/sbench.err" "^idlcall: serving bench on $SB \(11 routines\)$"
if [ -S "$TMP/sb.sock" ] && [ "$(stat -c %a "$TMP/sb.sock")" = 600 ]; then
	ok
else
	bad "--serve: no socket $TMP/sb.sock of mode 600"
fi
every_routine "$SB" served
if "$CLIENT" -n 200 -r 3 "$SB" >"$TMP/client.out" 2>&1; then
	ok
else
	bad "bench-client against idlcall --serve:"
	sed 's/^/    /' "$TMP/client.out"
fi
has "--serve --trace: request" "$TMP/sbench.err" \
	"^idl-trace \+[0-9.]+ server recv $SB REQUEST bench.add #seq=[0-9]+ #size=32 a=2 b=3$"
has "--serve --trace: reply" "$TMP/sbench.err" \
	"^idl-trace \+[0-9.]+ server send $SB REPLY bench.add #seq=[0-9]+ #size=32 $OK sum=5 $US$"
has "--serve --trace: one-way" "$TMP/sbench.err" "server recv $SB ONEWAY bench.notify .* value=5$"
# Another server on the same address: refused by name, the first one unharmed.
expect_err "--serve: address in use" 1 "EADDRINUSE" \
	"${SERVE[@]}" --serve "$DEFS" "$SB" "$BENCHLIB"
expect "--serve: still serving" 0 "sum = 5" "$IDLCALL" "$DEFS" "$SB" add 2 3
unserve "$sbench_pid" TERM "$TMP/sb.sock"

# calc.defs, the documentation's example: the default prefix (serverprefix calc_), stopped
# by SIGINT; then --prefix in both places.
SC=unix:$TMP/sc.sock
serve calc --serve "$CALC" "$SC" "$CALCLIB" || exit 1
has "--serve calc: the line" "$TMP/calc.err" "^idlcall: serving calc on $SC \(2 routines\)$"
expect "--serve calc: add 2 3" 0 "sum = 5" "$IDLCALL" "$CALC" "$SC" add 2 3
expect "--serve calc: div" 0 $'quot = -3\nrem = -1' "$IDLCALL" "$CALC" "$SC" div -7 2
expect "--serve calc: json" 0 '{"quot": 3, "rem": 1, "return": 0}' \
	"$IDLCALL" --json "$CALC" "$SC" div 7 2
expect_err "--serve calc: the routine's error" 1 "calc.div: the server returned 5" \
	"$IDLCALL" "$CALC" "$SC" div 1 0
unserve "$calc_pid" INT "$TMP/sc.sock"
serve calcp --serve "$CALC" "$SC" "$CALCLIB" --prefix calc_ || exit 1
expect "--serve --prefix after the library" 0 "sum = 7" "$IDLCALL" "$CALC" "$SC" add 3 4
unserve "$calcp_pid" TERM "$TMP/sc.sock"
serve calcq --prefix=calc_ --serve "$CALC" "$SC" "$CALCLIB" || exit 1
expect "--serve --prefix= before the file" 0 "sum = 9" "$IDLCALL" "$CALC" "$SC" add 4 5
unserve "$calcq_pid" TERM "$TMP/sc.sock"
# A routine only compiled stubs can serve (a translated type) is named and answered
# ENOTSUP; the others are served.
{
	cat "$CALC"
	printf 'type xl_t = int intran: int xl_in(int);\n'
	printf 'routine conv(server : mach_port_t; x : xl_t);\n'
} >"$TMP/xl.defs"
serve calcx --serve "$TMP/xl.defs" "$SC" "$CALCLIB" || exit 1
has "--serve: what is not served" "$TMP/calcx.err" \
	"^idlcall: serving calc on $SC \(3 routines, 1 not served: conv\)$"
expect "--serve: the others are" 0 "sum = 6" "$IDLCALL" "$TMP/xl.defs" "$SC" add 3 3
expect_err "--serve: not served" 1 "calc.conv: .*ENOTSUP)" "$IDLCALL" "$TMP/xl.defs" "$SC" conv 3
unserve "$calcx_pid" TERM "$TMP/sc.sock"

# What cannot be served is refused before anything listens.
expect_err "--serve: no such library" 1 "cannot load $TMP/nosuch.so: .*No such file" \
	"${SERVE[@]}" --serve "$CALC" "$SC" "$TMP/nosuch.so"
printf 'not an ELF file\n' >"$TMP/junk.so"
expect_err "--serve: not a library" 1 "cannot load $TMP/junk.so: " \
	"${SERVE[@]}" --serve "$CALC" "$SC" "$TMP/junk.so"
expect_err "--serve: a routine the library lacks" 1 \
	"benchimpl.so: bench.extra: no function S_bench_extra$" \
	"${SERVE[@]}" --serve "$TMP/extra.defs" "$SC" "$BENCHLIB"
expect_err "--serve: another interface's library" 1 "calc.add: no function calc_add$" \
	"${SERVE[@]}" --serve "$CALC" "$SC" "$BENCHLIB"
expect_err "--serve: a wrong --prefix" 1 "calc.add: no function my_add$" \
	"${SERVE[@]}" --serve "$CALC" "$SC" "$CALCLIB" --prefix my_
# A function of a library the module depends on (libc's write) is not the routine's.
printf 'subsystem w 100;\nroutine write(server : mach_port_t; fd : int);\n' >"$TMP/w.defs"
expect_err "--serve: only the library's own functions" 1 "w.write: no function write$" \
	"${SERVE[@]}" --serve "$TMP/w.defs" "$SC" "$CALCLIB"
if [ ! -e "$TMP/sc.sock" ]; then ok; else bad "a refused --serve left a socket"; fi
expect_err "--serve: an address of no transport" 1 "ENOSCHEME" \
	"${SERVE[@]}" --serve "$CALC" nosuch:x "$CALCLIB"
expect_err "--serve --json" 2 "takes no --json" \
	"${SERVE[@]}" --json --serve "$CALC" "$SC" "$CALCLIB"
expect_err "--serve without its library" 2 "usage: idlcall" "${SERVE[@]}" --serve "$CALC" "$SC"
expect_err "--prefix without --serve" 2 "--prefix goes with --serve" \
	"${SERVE[@]}" --prefix x "$CALC" "$SC" add 1 2
"$IDLCALL" --help >"$TMP/help"
has "--help: --serve" "$TMP/help" '^  --serve '
has "--help: --prefix" "$TMP/help" '^  --prefix P '

echo "idlcall.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
