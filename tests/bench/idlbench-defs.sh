#!/bin/sh
# idlbench-defs.sh - a user's own interface timed as a user would: a ledger interface written
# here with its own typedef header (a named memo type, a routine with an out array, a
# simpleroutine, a routine taking a port), its calls given with --call (a file's bytes with
# @FILE), timed over every transport this build has:
#   - with the null routines: compiled stubs, every row in the JSON with a floor for every
#     transport, the request and reply sizes the floors moved, the port routine n/a on the
#     transports that carry no ports, a summary after the tables;
#   - with --impl (a library built here, whose deposit refuses a memo other than the one
#     given, so the arguments must arrive): the reply of the out array is the
#     implementation's;
#   - with --interpreted: the same rows, interpreted;
#   - a standalone interface, no header of its own: its types from idlc's -types output;
# then the mistakes: an unknown routine, a wrong number of arguments, --connect to a server
# of another interface (both ways) - each a clear error with its exit status.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
: "${IDL_TOP_SRCDIR:?run me through make check}"
set -u
fail() {
	echo "idlbench-defs.sh: $*" >&2
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null
	exit 1
}

bench=$IDL_TOP_BUILDDIR/tools/idlbench/idlbench
check=$IDL_TOP_BUILDDIR/tests/bench/idlbench_jsoncheck
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-defs.XXXXXX") || exit 1
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

transports=
for t in unix udp tcp shm port; do
	T=$(echo "$t" | tr a-z A-Z)
	grep -q "^#define HAVE_TRANSPORT_$T 1" "$IDL_TOP_BUILDDIR/config.h" &&
		transports="$transports $t"
done
[ -n "$transports" ] || fail "config.h names no transport"
list=$(echo $transports | tr ' ' ,)

cat >"$tmp/ledger_types.h" <<'H'
/* ledger_types.h - the C types of ledger.defs's named types. */
#ifndef LEDGER_TYPES_H
#define LEDGER_TYPES_H
#include <stdint.h>
typedef char memo_t[32];
typedef int64_t amounts_t[64];
#endif
H
cat >"$tmp/ledger.defs" <<'D'
/* ledger.defs - a small ledger service. */
subsystem ledger 7300;
serverprefix S_;

import "ledger_types.h";

type memo_t = array[32] of char;
type amounts_t = array[*:64] of int64_t;

routine deposit(server : mach_port_t; account : int; amount : int64_t; memo : memo_t;
		out balance : int64_t);
routine balances(server : mach_port_t; out amounts : amounts_t);
simpleroutine audit(server : mach_port_t; account : int);
routine hand(server : mach_port_t; to : mach_port_t);
D
printf 'rent for march' >"$tmp/memo"
cat >"$tmp/impl.c" <<'C'
/* The ledger's routines: deposit refuses any memo but the test's. */
#include <string.h>
#include <idl/idl.h>
#include "ledger_types.h"

static int64_t total[16];

kern_return_t
S_deposit(mach_port_t server, int account, int64_t amount, memo_t memo, int64_t *balance)
{
	(void)server;
	if (account < 0 || account >= 16 || strcmp(memo, "rent for march") != 0)
		return KERN_FAILURE;
	total[account] += amount;
	*balance = total[account];
	return KERN_SUCCESS;
}

kern_return_t
S_balances(mach_port_t server, amounts_t amounts, mach_msg_type_number_t *amountsCnt)
{
	(void)server;
	memcpy(amounts, total, sizeof total);
	*amountsCnt = 16;
	return KERN_SUCCESS;
}

kern_return_t
S_audit(mach_port_t server, int account)
{
	(void)server;
	(void)account;
	return KERN_SUCCESS;
}

kern_return_t
S_hand(mach_port_t server, mach_port_t to)
{
	(void)server;
	idl_port_close(to);
	return KERN_SUCCESS;
}
C
${CC:-cc} -shared -fPIC -I"$IDL_TOP_SRCDIR/include" -o "$tmp/impl.so" "$tmp/impl.c" ||
	fail "cannot build the implementation library"

# run NAME [OPTIONS]: a quick run of the four calls over every transport, into NAME.txt,
# NAME.json; fails unless it exits 0.
run() {
	name=$1
	shift
	"$bench" --defs "$tmp/ledger.defs" --call "deposit 1 100 @$tmp/memo" --call balances \
		--call "audit 3" --call "hand null" --quick --rounds 1 --iterations 40 \
		--placement same --transports "$list" --json "$tmp/$name.json" "$@" \
		>"$tmp/$name.txt" 2>"$tmp/$name.err"
	status=$?
	cat "$tmp/$name.txt"
	cat "$tmp/$name.err" >&2
	[ $status -eq 0 ] || fail "$name: idlbench --defs exited with status $status"
	"$check" "$tmp/$name.json" $transports || fail "$name: the JSON does not have its shape"
}
# row NAME ROUTINE TRANSPORT: the JSON line of that result (one per line).
row() {
	grep "\"transport\": \"$3\", \"routine\": \"$2\"," "$tmp/$1.json"
}

# The null routines, compiled stubs.
run null
grep -q "^interface: .*ledger.defs (subsystem ledger), 4 rows; client: the compiled client" \
	"$tmp/null.txt" || fail "null: the interface line does not say the stubs were compiled"
grep -q "^  floor  " "$tmp/null.txt" && grep -q "^  ratio  " "$tmp/null.txt" ||
	fail "null: floor and ratio are not explained"
for t in $transports; do
	for r in deposit balances audit; do
		line=$(row null $r $t) || fail "null: no $r row over $t"
		echo "$line" | grep -q '"stubs": "compiled"' || fail "null: $r over $t not compiled"
		echo "$line" | grep -Eq '"floor": [0-9]' || fail "null: $r over $t has no floor"
	done
	row null deposit $t | grep -q '"request_bytes": 72, "reply_bytes": 32' ||
		fail "null: deposit over $t: not 72 bytes in and 32 out"
	row null balances $t | grep -q '"request_bytes": 24, "reply_bytes": 32' ||
		fail "null: balances over $t: the null reply is not the empty array's 32 bytes"
	row null audit $t | grep -q '"metric": "oneway"' || fail "null: audit over $t not one-way"
done
row null hand unix >/dev/null || fail "null: the port routine did not run over unix"
for t in tcp udp; do
	case " $transports " in
	*" $t "*)
		grep -Eq "^n/a: hand \(.*$t.*\): the transport carries no ports" "$tmp/null.txt" ||
			fail "null: the port routine's n/a over $t does not say why"
		;;
	esac
done
grep -q "^Summary" "$tmp/null.txt" || fail "null: no summary"
grep -Eq "^  deposit +fastest over [a-z]+: [0-9.]+ us per call" "$tmp/null.txt" ||
	fail "null: the summary does not name deposit's fastest transport"
grep -Eq "idlkit over the floor: .*unix [-+][0-9.]+ us \(x[0-9.]+[;)]" "$tmp/null.txt" ||
	fail "null: the summary does not say idlkit's overhead over the floor"

# The user's routines: the out array is theirs (16 amounts: 24 + 8 + 128 bytes).
run impl --impl "$tmp/impl.so"
grep -q '"impl": "' "$tmp/impl.json" || fail "impl: config does not name the library"
for t in $transports; do
	row impl balances $t | grep -q '"reply_bytes": 160' ||
		fail "impl: balances over $t: the reply is not the implementation's 16 amounts"
	row impl deposit $t | grep -Eq '"median": [0-9]' || fail "impl: deposit over $t not timed"
done

# Interpreted client and server, with the same routines.
run interp --impl "$tmp/impl.so" --interpreted
grep -q '"interpreted": true' "$tmp/interp.json" || fail "interp: config is not interpreted"
grep -q "client: the interpreted client" "$tmp/interp.txt" ||
	fail "interp: the interface line does not say interpreted"
for t in $transports; do
	row interp balances $t | grep -q '"stubs": "interpreted", "request_bytes": 24, "reply_bytes": 160' ||
		fail "interp: balances over $t not interpreted with the implementation's reply"
done

# A standalone interface: no header of its own, its C types idlc's -types output (a variable
# byte array given 3 bytes of its 512, a record, a string), compiled and timed.
cat >"$tmp/bank.defs" <<'D'
subsystem bank 7400;
serverprefix S_;

type memo_t = array[*:512] of MACH_MSG_TYPE_BYTE;
type stamp_t = struct[2] of uint32_t;
type name_t = c_string[*:64];

routine deposit(server : mach_port_t; account : int; amount : int64_t; memo : memo_t;
		when : stamp_t; who : name_t; out balance : int64_t);
D
printf 'abc' >"$tmp/memo3"
"$bench" --defs "$tmp/bank.defs" --call "deposit 1 100 @$tmp/memo3 [7,8] ann" --quick \
	--rounds 1 --iterations 40 --placement same --transports "$list" \
	--json "$tmp/bank.json" >"$tmp/bank.txt" 2>&1 ||
	fail "a standalone interface: $(cat "$tmp/bank.txt")"
for t in $transports; do
	row bank deposit $t | grep -q '"stubs": "compiled", "request_bytes": 72, "reply_bytes": 32' ||
		fail "bank: deposit over $t: not compiled, or not 72 bytes in and 32 out"
done

# No C compiler: the interpreted client and server run, and the output says why.
CC=no-such-cc "$bench" --defs "$tmp/bank.defs" --call "deposit 1 100 @$tmp/memo3 [7,8] ann" \
	--quick --rounds 1 --iterations 40 --placement same --transports unix \
	--json "$tmp/nocc.json" >"$tmp/nocc.txt" 2>&1 || fail "no C compiler: $(cat "$tmp/nocc.txt")"
grep -q "^interface: .*client: the interpreted client.*no C compiler found (no-such-cc)" \
	"$tmp/nocc.txt" || fail "no C compiler: the output does not say so"
row nocc deposit unix | grep -q '"stubs": "interpreted", "request_bytes": 72' ||
	fail "no C compiler: deposit not interpreted"

# Mistakes, each a clear error.
"$bench" --defs "$tmp/ledger.defs" --call "get 1" --quick >"$tmp/e1" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "an unknown routine exited $rc, not 2: $(cat "$tmp/e1")"
grep -q "subsystem ledger has no routine 'get'; its routines: deposit, balances, audit, hand" \
	"$tmp/e1" || fail "an unknown routine: $(cat "$tmp/e1")"
"$bench" --defs "$tmp/ledger.defs" --call "deposit 1" --quick >"$tmp/e2" 2>&1
[ $? -eq 2 ] || fail "too few arguments did not exit 2"
grep -q "deposit takes 3 arguments, not 1" "$tmp/e2" || fail "too few arguments: $(cat "$tmp/e2")"
"$bench" --defs "$tmp/ledger.defs" --quick >"$tmp/e3" 2>&1
[ $? -eq 2 ] || fail "--defs without --call did not exit 2"
grep -q "one or more --call" "$tmp/e3" || fail "--defs without --call: $(cat "$tmp/e3")"

# --connect to a server of another interface, both ways: exit 1, saying so.
# serve ADDRESS [OPTIONS]: idlbench serve in the background, as $pid.
serve() {
	a=$1
	shift
	"$bench" serve "$@" "$a" >"$tmp/serve.out" 2>"$tmp/serve.err" &
	pid=$!
	for i in $(seq 1 200); do
		grep -q "^ready $a\$" "$tmp/serve.out" && return 0
		kill -0 "$pid" 2>/dev/null || fail "idlbench serve $*: died: $(cat "$tmp/serve.err")"
		sleep 0.05
	done
	fail "idlbench serve $* did not say ready"
}
stop() {
	kill -TERM "$pid"
	wait "$pid" || fail "idlbench serve did not stop cleanly"
	pid=
}
serve "unix:$tmp/bench.sock"
"$bench" --defs "$tmp/ledger.defs" --call balances --quick --connect "unix:$tmp/bench.sock" \
	>"$tmp/e4" 2>&1
[ $? -eq 1 ] || fail "--connect to bench.defs's server with ledger.defs did not exit 1"
grep -q "does not serve ledger" "$tmp/e4" || fail "--connect to another interface: $(cat "$tmp/e4")"
stop
serve "unix:$tmp/ledger.sock" --defs "$tmp/ledger.defs" --impl "$tmp/impl.so"
"$bench" --quick --connect "unix:$tmp/ledger.sock" >"$tmp/e5" 2>&1
[ $? -eq 1 ] || fail "--connect to ledger.defs's server with bench.defs did not exit 1"
grep -q "does not serve bench.defs" "$tmp/e5" || fail "--connect to another interface: $(cat "$tmp/e5")"
# ... and to its own interface, the calls are timed against it.
"$bench" --defs "$tmp/ledger.defs" --call balances --call "audit 1" --quick --rounds 1 \
	--iterations 40 --connect "unix:$tmp/ledger.sock" --json "$tmp/c.json" >"$tmp/c.txt" 2>&1 ||
	fail "--connect to a ledger server: $(cat "$tmp/c.txt")"
row c balances unix | grep -q '"reply_bytes": 160' || fail "--connect: no balances row"
stop
exit 0
