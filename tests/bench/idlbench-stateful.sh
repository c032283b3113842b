#!/bin/sh
# idlbench-stateful.sh - a user's routines that keep state, timed with calls in flight: the
# bank of tests/bench/bank.defs (bank_impl.c: a deposit needs its account opened, a
# withdrawal the money deposited before it), built here into a library for --impl.
#   - without --setup, deposit and withdraw are refused (1004: no such account open): their
#     rows n/a, exit status 1;
#   - with --setup 'open 1', withdraw alone is still refused (1005: nothing deposited): each
#     server's state is its own;
#   - with --setup 'open 1' and the rows deposit then withdraw, 64 calls in flight over every
#     transport built: every cell timed, because one server per transport and round is kept
#     across its rows and withdraw finds the deposits of the row before it; the JSON says
#     config.setup and config.servers "per transport and round", and has its shape;
#   - a --setup call the server refuses ends the run before it starts, saying which;
#   - --markdown - writes Markdown alone to standard output.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
: "${IDL_TOP_SRCDIR:?run me through make check}"
set -u
fail() {
	echo "idlbench-stateful.sh: $*" >&2
	exit 1
}

bench=$IDL_TOP_BUILDDIR/tools/idlbench/idlbench
check=$IDL_TOP_BUILDDIR/tests/bench/idlbench_jsoncheck
defs=$IDL_TOP_SRCDIR/tests/bench/bank.defs
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-stateful.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

transports=
for t in unix udp tcp tls shm port; do
	T=$(echo "$t" | tr a-z A-Z)
	grep -q "^#define HAVE_TRANSPORT_$T 1" "$IDL_TOP_BUILDDIR/config.h" &&
		transports="$transports $t"
done
[ -n "$transports" ] || fail "config.h names no transport"
list=$(echo $transports | tr ' ' ,)

${CC:-cc} -shared -fPIC -Wall -Wextra -Werror -I"$IDL_TOP_SRCDIR/include" -o "$tmp/bank.so" \
	"$IDL_TOP_SRCDIR/tests/bench/bank_impl.c" || fail "cannot build bank_impl.c"
opts="--defs $defs --impl $tmp/bank.so --placement same --transports $list"

# run NAME ARGS...: idlbench with the bank, its output in $tmp/NAME.txt, its status in $status.
run() {
	name=$1
	shift
	# shellcheck disable=SC2086
	"$bench" $opts "$@" >"$tmp/$name.txt" 2>&1
	status=$?
	cat "$tmp/$name.txt"
}

run nosetup --call 'deposit 1 100' --call 'withdraw 1 1' --rounds 1 --iterations 20
[ $status -eq 1 ] || fail "without --setup: status $status, not 1"
grep -q "^n/a: deposit (.*): its call failed: the server returned 1004" "$tmp/nosetup.txt" ||
	fail "without --setup, deposit is not refused with 1004"

run alone --setup 'open 1' --call 'withdraw 1 1' --rounds 1 --iterations 20
[ $status -eq 1 ] || fail "withdraw with nothing deposited: status $status, not 1"
grep -q "^n/a: withdraw (.*): its call failed: the server returned 1005" "$tmp/alone.txt" ||
	fail "withdraw with nothing deposited is not refused with 1005"

start=$(date +%s)
run kept --setup 'open 1' --call 'deposit 1 100' --call 'withdraw 1 1' --inflight 64 \
	--rounds 2 --iterations 200 --json "$tmp/kept.json"
end=$(date +%s)
echo "idlbench-stateful.sh: the run took $((end - start)) s"
[ $status -eq 0 ] || fail "deposit then withdraw, 64 in flight: status $status"
! grep -q "^n/a" "$tmp/kept.txt" || fail "a cell of the stateful rows is n/a"
grep -q "^servers: one per transport and round, kept across its rows" "$tmp/kept.txt" ||
	fail "the output does not say the servers are kept across rows"
grep -q "^64 calls in flight from one client thread" "$tmp/kept.txt" ||
	fail "the rows were not timed with 64 calls in flight"
for t in $transports; do
	grep -Eq "^$t +idlkit +[0-9.]+ +[0-9.]+\$" "$tmp/kept.txt" ||
		fail "no rates of deposit and withdraw over $t"
	for row in deposit withdraw; do
		grep -q "\"transport\": \"$t\", \"routine\": \"$row\", \"placement\": \"same\", \"metric\": \"throughput\"" \
			"$tmp/kept.json" || fail "no throughput result of $row over $t in the JSON"
	done
done
grep -q '"setup": \["open 1"\], "servers": "per transport and round"' "$tmp/kept.json" ||
	fail "the JSON does not say the setup call and the servers kept"
"$check" "$tmp/kept.json" || fail "the JSON does not have the documented shape"

run badsetup --setup 'open 99' --call 'deposit 1 100' --rounds 1 --iterations 20
[ $status -eq 1 ] || fail "a refused --setup call: status $status, not 1"
grep -q "^idlbench: --setup 'open 99': the server returned 1006" "$tmp/badsetup.txt" ||
	fail "a refused --setup call is not told"

"$bench" $opts --setup 'open 1' --call 'deposit 1 100' --rounds 1 --iterations 20 \
	--markdown - >"$tmp/md.txt" 2>"$tmp/md.err" || fail "--markdown -: status $?"
head -n 1 "$tmp/md.txt" | grep -q "^# idlbench " || fail "--markdown - does not start with its heading"
! grep -q "^Verdict: \|^Reading this output" "$tmp/md.txt" || fail "--markdown - printed the text too"
grep -q "^| unix | idlkit | [0-9.]* |" "$tmp/md.txt" || fail "--markdown - has no table row"
[ $((end - start)) -le 120 ] || fail "the stateful run took over two minutes"
exit 0
