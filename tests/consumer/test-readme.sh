#!/bin/sh
# tests/consumer/test-readme.sh - the README's first interface ("A first interface"), exactly
# as written, against a staged install: its calc.defs, its idlc command line, its client and
# server code blocks, compiled with the flags `pkg-config --cflags --libs idlrt` gives (and
# gcc -Wall -Werror), then one call over unix: that must print 5.
#
# The client and server blocks are fragments: their #include lines and one-line function
# definitions are put at file scope, the rest in main(); the README's address
# (unix:/run/calc.sock) becomes one in a scratch directory. Nothing else is added: no
# -types output, no header of our own.
. "${IDL_TOP_SRCDIR:?run me from make check}/tests/consumer/lib.sh"

for tool in pkg-config flock awk; do
	command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
readme=$IDL_TOP_SRCDIR/README.md
[ -f "$readme" ] || fail "no README.md in $IDL_TOP_SRCDIR"

# block N FIRST-LINE-PATTERN: prints the first fenced block of the README's "A first
# interface" section whose first line matches the pattern (grep -E).
block()
{
	awk -v pat="$1" '
		/^## / { in_sec = ($0 == "## A first interface") }
		!in_sec { next }
		/^```/ {
			if (inb) { if (take) exit; inb = 0; next }
			inb = 1; first = 1; next
		}
		inb && first { first = 0; take = ($0 ~ pat) }
		inb && take { print }
	' "$readme"
}

stage_install
work=$consumer_tmp/readme
mkdir "$work"
cd "$work"

block '^/\* calc\.defs \*/' >calc.defs
grep -q '^subsystem calc' calc.defs || fail "the README has no calc.defs block"
cmd=$(block '^idlc ' | sed 's/#.*//')
case $cmd in
idlc\ *) ;;
*) fail "the README has no idlc command for calc.defs: '$cmd'" ;;
esac
# The command as written, with the staged idlc first on PATH.
PATH=$STAGE_BINDIR:$PATH sh -c "$cmd" >"$consumer_tmp/idlc.log" 2>&1 || {
	cat "$consumer_tmp/idlc.log" >&2
	fail "the README's command failed: $cmd"
}
for f in calc.h calcUser.c calcServer.c calcServer.h; do
	[ -f "$f" ] || fail "'$cmd' did not write $f"
done
echo "ok: $cmd"

sock=$work/calc.sock
# wrap FIRST-LINE-PATTERN FILE: the block as a program.
wrap()
{
	block "$1" | sed "s|unix:/run/calc.sock|unix:$sock|" >"$2.block"
	[ -s "$2.block" ] || fail "the README has no block starting '$1'"
	{
		grep -E '^#include|^[a-z_][a-z_0-9]* [A-Za-z_][A-Za-z_0-9]*\(.*\) *\{.*\}$' "$2.block"
		echo "int main(void) {"
		grep -vE '^#include|^[a-z_][a-z_0-9]* [A-Za-z_][A-Za-z_0-9]*\(.*\) *\{.*\}$' "$2.block"
		echo "return 0; }"
	} >"$2"
}
wrap '^#include <stdio\.h>$|^#include "calc\.h"$' client.c
wrap '^#include "calcServer\.h"$' server.c
grep -q 'idl_port_open' client.c || fail "the client block opens no port"
grep -q 'idl_server_run' server.c || fail "the server block runs no server"

cflags=$(pkg-config --cflags idlrt) && libs=$(pkg-config --libs idlrt) ||
	fail "pkg-config finds no idlrt in the staged install"
CC=${CC:-cc}
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Werror $cflags -o calc-client client.c calcUser.c $libs \
	>"$consumer_tmp/cc.log" 2>&1 || {
	cat client.c "$consumer_tmp/cc.log" >&2
	fail "the README's client does not compile as written"
}
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Werror $cflags -o calc-server server.c calcServer.c $libs \
	>"$consumer_tmp/cc.log" 2>&1 || {
	cat server.c "$consumer_tmp/cc.log" >&2
	fail "the README's server does not compile as written"
}
echo "ok: the client and the server compile with -Wall -Werror and nothing but idlrt.pc"

./calc-server >"$consumer_tmp/server.out" 2>&1 &
consumer_server_pid=$!
i=0
until [ -S "$sock" ]; do
	kill -0 "$consumer_server_pid" 2>/dev/null || {
		cat "$consumer_tmp/server.out" >&2
		fail "the README's server exited"
	}
	i=$((i + 1))
	[ $i -lt 200 ] || fail "the README's server did not listen within 10 s"
	sleep 0.05
done
out=$(./calc-client 2>&1) || fail "the README's client failed: $out"
[ "$out" = 5 ] || fail "the README's client printed '$out', expected 5"
echo "ok: the README's client called the README's server over unix: and printed $out"
# The README's server has no signal handler: SIGTERM ends it, as it would a user's.
kill -TERM "$consumer_server_pid"
wait "$consumer_server_pid" 2>/dev/null || :
consumer_server_pid=
