#!/bin/sh
# tests/consumer/test-make.sh - a user's plain GNU make project (tests/consumer/make) built
# outside its source tree from a staged install, with idlc.mk included by the path idlrt.pc
# gives and IDLC= given on the command line, as a cross build does: make -j runs idlc once,
# V=0 shortens its line, editing an included .defs reruns it, and the client calls the
# server over unix:; with IDLC_TYPES=yes the rule writes echoTypes.h too, which the headers
# include. It also checks the rest of the staged install (check_installed).
. "${IDL_TOP_SRCDIR:?run me from make check}/tests/consumer/lib.sh"

for tool in pkg-config flock nm; do
	command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done

stage_install
check_installed
src=$(copy_project make)
idlc_counting "$consumer_tmp/idlc"
set -- -f "$src/Makefile" srcdir="$src" IDLC="$consumer_tmp/idlc"
idlc_has_depfiles || set -- "$@" IDLC_DEPFLAGS=

mkdir "$consumer_tmp/build"
cd "$consumer_tmp/build"
"$CONSUMER_MAKE" -j2 V=0 "$@" >"$consumer_tmp/make.log" 2>&1 || {
	cat "$consumer_tmp/make.log" >&2
	fail "make -j2 of the consumer project"
}
expect_runs 1 "make -j2 generated four files with one idlc run"
grep -q '^  IDLC  *echo' "$consumer_tmp/make.log" || {
	cat "$consumer_tmp/make.log" >&2
	fail "V=0 did not shorten idlc's line"
}
for f in echo.h echoUser.c echoServer.c echoServer.h; do
	[ -f "$f" ] || fail "$f was not generated in the build directory"
	[ ! -f "$src/$f" ] || fail "$f was generated in the source directory"
done

run_call ./echo-server ./echo-client "HELLO!"

"$CONSUMER_MAKE" "$@" >/dev/null 2>&1 || fail "second make"
expect_runs 1 "nothing changed, nothing regenerated"

if idlc_has_depfiles; then
	[ -f echo.defs.d ] || fail "idlc wrote no echo.defs.d"
	sleep 1
	touch "$src/echo_types.defs"
	"$CONSUMER_MAKE" "$@" >/dev/null 2>&1 || fail "make after touch"
	expect_runs 2 "editing the included echo_types.defs regenerated the stubs"
	# -MP: an included file that goes away does not break the build (the .defs no
	# longer includes it).
	sed -i 's/^#include "echo_types.defs"/import "echo_types.h"; type line_t = c_string[*:64];/' \
		"$src/echo.defs"
	rm "$src/echo_types.defs"
	"$CONSUMER_MAKE" "$@" >"$consumer_tmp/make3.log" 2>&1 || {
		cat "$consumer_tmp/make3.log" >&2
		fail "make after removing an included .defs"
	}
	expect_runs 3 "a removed include does not break the build"
else
	echo "note: this idlc writes no dependency files (no -MD): included .defs not followed"
fi

# The include docs/integration.md gives, with a pkg-config that cannot find idlrt: make must
# stop with the reason, not include nothing and fail later on a missing rule.
sed -n '/^IDLC_MK := /,/^include \$(IDLC_MK)/p' "$IDL_TOP_SRCDIR/docs/integration.md" \
	>"$consumer_tmp/doc.mk"
grep -q '^include \$(IDLC_MK)' "$consumer_tmp/doc.mk" ||
	fail "docs/integration.md has no IDLC_MK snippet to check"
if PKG_CONFIG_PATH=/nonexistent PKG_CONFIG_LIBDIR=/nonexistent \
	"$CONSUMER_MAKE" -f "$consumer_tmp/doc.mk" PKG_CONFIG=pkg-config >"$consumer_tmp/nopc.log" 2>&1; then
	fail "the documented include went on without idlrt"
fi
grep -q "pkg-config finds no idlrt" "$consumer_tmp/nopc.log" || {
	cat "$consumer_tmp/nopc.log" >&2
	fail "the documented include does not say that pkg-config finds no idlrt"
}

# IDLC_TYPES=yes: the rule writes echoTypes.h too (idlc -types), the headers include it, and
# its typedef of line_t, the same as echo_types.h's, compiles beside it.
"$CONSUMER_MAKE" "$@" IDLC_TYPES=yes echoTypes.h all >"$consumer_tmp/make4.log" 2>&1 || {
	cat "$consumer_tmp/make4.log" >&2
	fail "make IDLC_TYPES=yes"
}
[ -f echoTypes.h ] || fail "IDLC_TYPES=yes wrote no echoTypes.h"
grep -q 'typedef char line_t\[LINE_T_MAX\];' echoTypes.h || fail "echoTypes.h has no line_t"
grep -q '#include "echoTypes.h"' echo.h || fail "echo.h does not include echoTypes.h"
run_call ./echo-server ./echo-client "HELLO!"

# The harness rules: echo-fuzz.c (idlc -fuzz) and echo-fuzz-client.c (idlc -fuzz-client) are
# generated on request from echo.defs, in the build directory.
"$CONSUMER_MAKE" "$@" echo-fuzz.c echo-fuzz-client.c >"$consumer_tmp/make5.log" 2>&1 || {
	cat "$consumer_tmp/make5.log" >&2
	fail "make echo-fuzz.c echo-fuzz-client.c"
}
grep -q 'LLVMFuzzerTestOneInput' echo-fuzz.c || fail "echo-fuzz.c is no libFuzzer harness"
grep -q 'idl_server_serve_message' echo-fuzz.c || fail "echo-fuzz.c serves no message"
grep -q 'idl_port_open_memory' echo-fuzz-client.c ||
	fail "echo-fuzz-client.c opens no memory port"
[ ! -f "$src/echo-fuzz.c" ] || fail "echo-fuzz.c was generated in the source directory"
echo "ok: the harness rules wrote echo-fuzz.c and echo-fuzz-client.c"
