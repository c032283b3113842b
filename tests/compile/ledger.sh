#!/bin/sh
# tests/compile/ledger.sh - an interface with no hand-written header (tests/golden/ledger.defs,
# written as users write a ledger: named types, memo_t, names_t ...) built the way a user
# builds it, with idlc -types for its C types:
#   1. idlc writes the header, the stubs, the server header and ledgerTypes.h (and when the
#      types file cannot be written, nothing at all);
#   2. gcc -std=c11 -O2 -Wall -Wextra -Werror compiles client, server and
#      tests/compile/ledger_main.c, whose calls pass buffers shorter than the bounds (a
#      warning about any of them fails the build);
#   3. the program serves ledger.defs on a unix socket and calls every routine;
#   4. the same under valgrind memcheck: no byte a stub sends may be one no one wrote;
#   5. an imported header that defines one of the types again: the same typedef compiles,
#      a different one does not ("conflicting types"): the two can never disagree silently.
set -eu
: "${IDLC:?run me from make check}" "${IDL_TOP_SRCDIR:?run me from make check}"
: "${IDL_TOP_BUILDDIR:?run me from make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idl-ledger.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail()
{
	echo "FAIL: $*"
	exit 1
}

cp "$IDL_TOP_SRCDIR/tests/golden/ledger.defs" "$tmp/"
(cd "$tmp" && "$IDLC" -types ledgerTypes.h -header ledger.h -user ledgerUser.c \
	-server ledgerServer.c -sheader ledger_S.h ledger.defs) || fail "idlc failed"
for f in ledgerTypes.h ledger.h ledgerUser.c ledgerServer.c ledger_S.h; do
	[ -s "$tmp/$f" ] || fail "idlc wrote no $f"
done
grep -q '#include "ledgerTypes.h"' "$tmp/ledger.h" || fail "ledger.h does not include ledgerTypes.h"
echo "PASS: idlc -types wrote ledgerTypes.h, and the headers include it"

# A -types file that cannot be written: an error, and no output written or left half-done.
mkdir "$tmp/none"
if (cd "$tmp/none" && "$IDLC" -types "$tmp/missing/ledgerTypes.h" -header ledger.h \
	-user ledgerUser.c -server ledgerServer.c "$tmp/ledger.defs") 2>"$tmp/none.log"; then
	fail "idlc wrote into a missing directory"
fi
grep -q "cannot create '$tmp/missing/ledgerTypes.h" "$tmp/none.log" ||
	{ cat "$tmp/none.log"; fail "no error naming the -types file"; }
[ -z "$(ls -A "$tmp/none")" ] || fail "outputs were left behind: $(ls -A "$tmp/none")"
echo "PASS: a -types file that cannot be written: an error, nothing written"

# The runtime as a user links it: the shared library when there is one.
rt=$IDL_TOP_BUILDDIR/runtime/.libs
if [ -f "$rt/libidlrt.so" ]; then
	libs="-L$rt -lidlrt -Wl,-rpath,$rt -pthread"
else
	libs="$rt/libidlrt.a -pthread -lrt -lffi"
fi
# A tree configured --enable-sanitizers builds a library that needs libasan, which this
# program (built without it) loads second: let ASan accept that, leave leak reports to the
# tree's own tests, and leave out the memcheck run, which cannot run beside ASan.
sanitized=no
if [ -f "$rt/libidlrt.so" ] && objdump -p "$rt/libidlrt.so" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
	sanitized=yes
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0
	export ASAN_OPTIONS
fi
cc=${CC:-gcc}
flags="-std=c11 -O2 -Wall -Wextra -Werror"
if ! $cc $flags -I"$tmp" -I"$IDL_TOP_SRCDIR/include" -o "$tmp/ledger" \
	"$IDL_TOP_SRCDIR/tests/compile/ledger_main.c" "$tmp/ledgerUser.c" "$tmp/ledgerServer.c" \
	$libs >"$tmp/cc.log" 2>&1; then
	sed 's/^/    /' "$tmp/cc.log"
	fail "ledger does not compile cleanly with $cc $flags"
fi
echo "PASS: client, server and callers compile with $cc $flags"

"$tmp/ledger" "$tmp/ledger.sock" || fail "the ledger calls misbehave"
echo "PASS: every routine over unix:"

if [ "$sanitized" = yes ]; then
	echo "a sanitizer build: the memcheck run is left out (valgrind cannot run beside ASan)"
elif command -v valgrind >/dev/null 2>&1; then
	rm -f "$tmp/ledger.sock"
	if ! valgrind -q --error-exitcode=99 "$tmp/ledger" "$tmp/ledger.sock" \
		>"$tmp/vg.log" 2>&1; then
		sed 's/^/    /' "$tmp/vg.log"
		fail "under valgrind: a message carries bytes no one wrote (or another error)"
	fi
	echo "PASS: under valgrind memcheck, no error"
else
	echo "valgrind is not installed: the memcheck run is left out"
fi

# An interface that imports a header of its own, which defines memo_t too.
mkdir "$tmp/clash"
cp "$IDL_TOP_SRCDIR/tests/golden/ledger.defs" "$tmp/clash/"
printf 'import "mine.h";\n#include "ledger.defs"\n' >"$tmp/clash/clash.defs"
(cd "$tmp/clash" && "$IDLC" -n -types ledgerTypes.h -header ledger.h -user ledgerUser.c \
	clash.defs) || fail "idlc failed on clash.defs"
printf 'typedef unsigned char memo_t[512];\n' >"$tmp/clash/mine.h"
$cc $flags -I"$tmp/clash" -I"$IDL_TOP_SRCDIR/include" -c "$tmp/clash/ledgerUser.c" \
	-o "$tmp/clash/same.o" >"$tmp/clash.log" 2>&1 ||
	{ sed 's/^/    /' "$tmp/clash.log"; fail "the same typedef in an imported header"; }
printf 'typedef unsigned char memo_t[256];\n' >"$tmp/clash/mine.h"
if $cc $flags -I"$tmp/clash" -I"$IDL_TOP_SRCDIR/include" -c "$tmp/clash/ledgerUser.c" \
	-o "$tmp/clash/diff.o" >"$tmp/clash.log" 2>&1; then
	fail "a different memo_t in an imported header compiled"
fi
grep -q "conflicting types for .memo_t" "$tmp/clash.log" ||
	{ sed 's/^/    /' "$tmp/clash.log"; fail "no 'conflicting types' error for memo_t"; }
echo "PASS: an imported header's memo_t: the same compiles, a different one is an error"
