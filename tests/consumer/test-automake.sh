#!/bin/sh
# tests/consumer/test-automake.sh - a user's automake project (tests/consumer/automake) built
# outside its source tree from a staged install: configure finds idlc and idlc.mk through
# IDLC_RULES and idlrt.pc, make -j runs idlc once, editing an included .defs reruns it, and
# the client calls the server over unix:.
. "${IDL_TOP_SRCDIR:?run me from make check}/tests/consumer/lib.sh"

for tool in autoreconf automake pkg-config flock; do
	command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done

stage_install
src=$(copy_project automake)

# The project's aclocal finds IDLC_RULES where idlkit installed idlc.m4.
ACLOCAL_PATH=$STAGE_DATADIR/aclocal autoreconf -fi "$src" >"$consumer_tmp/autoreconf.log" 2>&1 || {
	cat "$consumer_tmp/autoreconf.log" >&2
	fail "autoreconf of the consumer project"
}

mkdir "$consumer_tmp/build"
cd "$consumer_tmp/build"
"$src/configure" >"$consumer_tmp/configure.log" 2>&1 || {
	cat "$consumer_tmp/configure.log" config.log >&2
	fail "configure of the consumer project"
}
# Without IDLC= given, configure took idlc from idlrt.pc (with the sysroot in front).
grep -qx "IDLC = $STAGE_IDLC" Makefile || {
	grep '^IDLC' Makefile >&2
	fail "configure did not take idlc from idlrt.pc"
}
echo "ok: IDLC_RULES found $STAGE_IDLC"

# From here the build runs a counting idlc: IDLC= on the make command line.
idlc_counting "$consumer_tmp/idlc"
set -- IDLC="$consumer_tmp/idlc"
idlc_has_depfiles || set -- "$@" IDLC_DEPFLAGS=
"$CONSUMER_MAKE" -j2 "$@" >"$consumer_tmp/make.log" 2>&1 || {
	cat "$consumer_tmp/make.log" >&2
	fail "make -j2 of the consumer project"
}
expect_runs 1 "make -j2 generated four files with one idlc run"
grep -q 'GEN' "$consumer_tmp/make.log" || fail "idlc's rule is not silent-rule aware"
for f in adder.h adderUser.c adderServer.c adderServer.h; do
	[ -f "$f" ] || fail "$f was not generated in the build directory"
	[ ! -f "$src/$f" ] || fail "$f was generated in the source directory"
done

run_call ./adder-server ./adder-client "sum 6"

"$CONSUMER_MAKE" "$@" >/dev/null 2>&1 || fail "second make"
expect_runs 1 "nothing changed, nothing regenerated"

if idlc_has_depfiles; then
	[ -f adder.defs.d ] || fail "idlc wrote no adder.defs.d"
	sleep 1
	touch "$src/adder_routines.defs"
	"$CONSUMER_MAKE" "$@" >/dev/null 2>&1 || fail "make after touch"
	expect_runs 2 "editing the included adder_routines.defs regenerated the stubs"
else
	echo "note: this idlc writes no dependency files (no -MD): included .defs not followed"
fi

# The harness rules of idlc.mk, pulled in by @idlc_rules@: adder-fuzz.c and
# adder-fuzz-client.c on request.
"$CONSUMER_MAKE" "$@" adder-fuzz.c adder-fuzz-client.c >"$consumer_tmp/fuzz.log" 2>&1 || {
	cat "$consumer_tmp/fuzz.log" >&2
	fail "make adder-fuzz.c adder-fuzz-client.c"
}
grep -q 'idl_server_serve_message' adder-fuzz.c || fail "adder-fuzz.c serves no message"
grep -q 'idl_port_open_memory' adder-fuzz-client.c ||
	fail "adder-fuzz-client.c opens no memory port"
rm -f adder-fuzz.c adder-fuzz-client.c
echo "ok: the harness rules wrote adder-fuzz.c and adder-fuzz-client.c"

"$CONSUMER_MAKE" clean >/dev/null 2>&1 || fail "make clean"
for f in adder.h adderUser.c adderServer.c adderServer.h adder.defs.d; do
	[ ! -f "$f" ] || fail "make clean left $f"
done
echo "ok: make clean removed the generated files"
