#!/bin/bash
# run-golden.sh - idlc's generated code, compared with the expected texts and compiled.
#
#     run-golden.sh IDLC SRCDIR [--regen]
#
# The interfaces are every tests/golden/*.defs plus examples/bench/bench.defs. For an
# interface NAME.defs, idlc runs in the directory of the .defs file (so the banner and the
# assertion messages name "NAME.defs" whatever the build directory), finding idlkit's own
# <mach/std_types.defs> in the source tree's data/include, and writes into a temporary
# directory:
#
#     -header NAME.h  -user NAMEUser.c  -server NAMEServer.c  -sheader NAME_S.h
#
# and, for an interface with a tests/golden/NAMETypes.h.exp (one that has no header of its
# own), -types NAMETypes.h. Those are compared, after the version in the banner is replaced
# by VERSION, with tests/golden/NAME.h.exp, NAMEUser.c.exp, NAMEServer.c.exp, NAME_S.h.exp
# (and NAMETypes.h.exp). idlc would
# name its outputs after the subsystem; every golden interface's subsystem has its file's
# name, so these are the names idlc chooses by default too.
#
# Then every generated User.c and Server.c is compiled on its own with the strictest flags
# we promise (by $CC, default gcc, and by clang-14 or clang when installed), each header
# is compiled as C++ when a C++ compiler is installed, and tests/compile/loopback.c links
# the client and server stubs of every interface into one program and runs it (and runs it
# again under valgrind memcheck when valgrind is installed: no message may carry a byte that
# no one wrote).
#
# --regen (or IDL_REGEN_GOLDEN=1, which `make regen-golden` sets) rewrites the .exp files
# instead of comparing; the compile checks still run. Prints "N passed, M failed" and exits
# non-zero when anything failed.
set -u

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 IDLC SRCDIR [--regen]" >&2
	exit 2
fi
IDLC=$1
SRCDIR=$2
REGEN=${IDL_REGEN_GOLDEN:-0}
if [ "${3:-}" = "--regen" ]; then
	REGEN=1
fi
case $IDLC in /*) ;; *) IDLC=$PWD/$IDLC ;; esac
case $SRCDIR in /*) ;; *) SRCDIR=$PWD/$SRCDIR ;; esac
GOLDEN=$SRCDIR/tests/golden

TMP=$(mktemp -d "${TMPDIR:-/tmp}/idlc-golden.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

STRICT="-std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes"
STRICT="$STRICT -Wno-unused-parameter"
COMPILERS=${CC:-gcc}
for c in clang-14 clang; do
	if command -v "$c" >/dev/null 2>&1; then
		COMPILERS="$COMPILERS $c"
		break
	fi
done
CXX_CHECK=
for c in ${CXX:-} g++ clang++; do
	if command -v "$c" >/dev/null 2>&1; then
		CXX_CHECK=$c
		break
	fi
done

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

normalize() {
	sed 's/idlc [0-9.][^ ]* from/idlc VERSION from/' "$1"
}

DEFS=$(ls "$GOLDEN"/*.defs)
DEFS="$DEFS $SRCDIR/examples/bench/bench.defs"

for defs in $DEFS; do
	name=$(basename "$defs" .defs)
	dir=$(dirname "$defs")
	out=$TMP/$name
	mkdir -p "$out"
	files="$name.h ${name}User.c ${name}Server.c ${name}_S.h"
	types=
	if [ -f "$GOLDEN/${name}Types.h.exp" ]; then
		types="-types $out/${name}Types.h"
		files="$files ${name}Types.h"
	fi
	if ! (cd "$dir" && "$IDLC" -I "$SRCDIR/data/include" -header "$out/$name.h" \
		-user "$out/${name}User.c" $types \
		-server "$out/${name}Server.c" -sheader "$out/${name}_S.h" "$name.defs") \
		>"$out/idlc.log" 2>&1; then
		fail "$name.defs: idlc failed:"
		sed 's/^/    /' "$out/idlc.log"
		continue
	fi
	if [ -s "$out/idlc.log" ]; then
		fail "$name.defs: idlc printed diagnostics:"
		sed 's/^/    /' "$out/idlc.log"
	fi
	for f in $files; do
		exp=$GOLDEN/$f.exp
		if [ "$REGEN" = 1 ]; then
			normalize "$out/$f" >"$exp"
			pass
		elif [ ! -f "$exp" ]; then
			fail "$f: no expected file $exp (run make regen-golden)"
		elif normalize "$out/$f" | diff -u "$exp" - >"$out/$f.diff"; then
			pass
		else
			fail "$f differs from $exp:"
			cat "$out/$f.diff"
		fi
	done
	for f in "${name}User.c" "${name}Server.c"; do
		for cc in $COMPILERS; do
			if $cc $STRICT -I"$out" -I"$dir" -I"$SRCDIR/include" -c "$out/$f" \
				-o "$out/$f.$cc.o" >"$out/cc.log" 2>&1; then
				pass
			else
				fail "$f does not compile cleanly with $cc:"
				sed 's/^/    /' "$out/cc.log"
			fi
		done
	done
	if [ -n "$CXX_CHECK" ]; then
		for f in "$name.h" "${name}_S.h"; do
			if $CXX_CHECK -x c++ -fsyntax-only -Wall -Wextra -Werror -I"$out" -I"$dir" \
				-I"$SRCDIR/include" "$out/$f" >"$out/cxx.log" 2>&1; then
				pass
			else
				fail "$f is not valid C++ for $CXX_CHECK:"
				sed 's/^/    /' "$out/cxx.log"
			fi
		done
	fi
done

# Calls that pass less than a bound (string literals, short buffers), compiled with the
# optimiser on, where gcc checks array parameters against what a call passes.
if ${CC:-gcc} $STRICT -O2 -I"$TMP/arrays" -I"$TMP/bench" -I"$TMP/strings" -I"$GOLDEN" \
	-I"$SRCDIR/examples/bench" -I"$SRCDIR/include" -c "$SRCDIR/tests/compile/shorter.c" \
	-o "$TMP/shorter.o" >"$TMP/shorter.log" 2>&1; then
	pass
else
	fail "shorter buffers: the client prototypes do not take them without a warning:"
	sed 's/^/    /' "$TMP/shorter.log"
fi

# The loopback program: client and server stubs of every interface in one program.
LOOP=$TMP/loopback
sources=
includes=
for name in scalars arrays strings dialect xnu bench; do
	sources="$sources $TMP/$name/${name}User.c $TMP/$name/${name}Server.c"
	includes="$includes -I$TMP/$name"
done
if ${CC:-gcc} $STRICT $includes -I"$GOLDEN" -I"$SRCDIR/examples/bench" -I"$SRCDIR/include" \
	-o "$LOOP" "$SRCDIR/tests/compile/loopback.c" "$SRCDIR/tests/compile/loopback_golden.c" \
	"$SRCDIR/tests/compile/loopback_dialect.c" "$SRCDIR/tests/compile/loopback_xnu.c" \
	$sources >"$TMP/loop.log" 2>&1; then
	if "$LOOP" >>"$TMP/loop.log" 2>&1; then
		pass
	else
		fail "loopback: the generated stubs misbehave:"
		sed 's/^/    /' "$TMP/loop.log"
	fi
	# Under memcheck the loopback checks that every byte of every message sent was
	# written: a stub that sent a byte of its stack no one wrote fails here.
	if command -v valgrind >/dev/null 2>&1; then
		if valgrind -q --error-exitcode=99 "$LOOP" >"$TMP/vg.log" 2>&1; then
			pass
		else
			fail "loopback under valgrind: a message carries bytes no one wrote:"
			sed 's/^/    /' "$TMP/vg.log"
		fi
	fi
else
	fail "loopback: does not build:"
	sed 's/^/    /' "$TMP/loop.log"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
