#!/bin/bash
# gnumach.sh - every .defs file of Debian's gnumach-dev through idlc, as GNU MIG is run on
# them (-nostdinc -I/usr/include/x86_64-linux-gnu -D__x86_64__, no KERNEL_* defines).
#
# For each file that declares a subsystem:
#   - idlc writes all six outputs (-header -user -server -sheader -iheader -list), exit 0;
#   - `idlc -list` equals GNU MIG's `x86_64-gnu-mig -list` byte for byte;
#   - the generated C compiles with -Wall -Wextra -Werror where its imports allow: when
#     every header it imports is GNU Mach's <mach/std_types.h> or <mach/mach_types.h>,
#     whose C types idlkit's <idl/mig.h> provides (tests/dialect/shim maps them to it).
#     Other imports are Mach kernel C headers (device/device_types.h, mach_debug/...) that
#     define mach_port_t as an integer, which idlkit's handles cannot be; those files are
#     listed as not compiled.
# For each type-only file (no subsystem):
#   - alone, idlc exits 1 with a clear message, never a signal: "missing 'subsystem'
#     statement", or first the types it names without including them ("unknown type");
#   - included after a subsystem (with std_types.defs and mach_types.defs before it, as
#     the interfaces that use it include it), idlc accepts it and writes the outputs.
# Missing gnumach-dev or mig-x86-64-gnu fails the test: CI installs them (mk/deps.sh --test).
set -u
: "${IDLC:?run me through make check}" "${IDL_TOP_SRCDIR:?run me through make check}"

MIG=x86_64-gnu-mig
INC=/usr/include/x86_64-linux-gnu
FLAGS="-nostdinc -I$INC -D__x86_64__"
CC=${CC:-gcc}
STRICT="-std=c11 -Wall -Wextra -Werror -Wno-unused-parameter"

if ! dpkg -L gnumach-dev >/dev/null 2>&1 || ! command -v "$MIG" >/dev/null 2>&1; then
	echo "FAIL: gnumach-dev and mig-x86-64-gnu are needed:" \
		"apt-get install -y gnumach-dev mig-x86-64-gnu"
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/idlc-gnumach.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# What a type-only file alone must say first.
clear="^[^ ]+: error: (missing 'subsystem' statement|unknown type)"
nfiles=0 nsub=0 nsame=0 ntype=0 ncompiled=0 failed=0
notcompiled=
fail() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}
# An exit status from a signal is a crash, whatever else happened.
crashed() { [ "$1" -ge 128 ]; }

for defs in $(dpkg -L gnumach-dev | grep '\.defs$' | sort); do
	nfiles=$((nfiles + 1))
	name=$(basename "$defs" .defs)
	dir=$work/$name
	mkdir -p "$dir/idlc" "$dir/mig"
	subsystem='^[[:space:]]*subsystem([[:space:]]|$)'
	if ! cpp $FLAGS "$defs" 2>/dev/null | grep -qiE "$subsystem"; then
		# A type-only file: alone, then after a subsystem.
		ntype=$((ntype + 1))
		(cd "$dir/idlc" && "$IDLC" $FLAGS "$defs") >"$dir/alone.out" 2>"$dir/alone.err"
		rc=$?
		if crashed $rc; then
			fail "$name.defs alone: idlc died (status $rc)"
		elif [ $rc -ne 1 ] || ! grep -qE "$clear" "$dir/alone.err"; then
			fail "$name.defs alone: exit $rc without a clear message"
			sed 's/^/    /' "$dir/alone.err"
		fi
		{
			echo "subsystem wrapped 9000;"
			echo "#include <mach/std_types.defs>"
			echo "#include <mach/mach_types.defs>"
			echo "#include \"$defs\""
		} >"$dir/wrapped.defs"
		(cd "$dir/idlc" && "$IDLC" -q $FLAGS -list wrapped.list "$dir/wrapped.defs") \
			>"$dir/wrapped.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || [ ! -s "$dir/idlc/wrapped.h" ]; then
			fail "$name.defs after a subsystem: idlc exit $rc"
			sed 's/^/    /' "$dir/wrapped.log"
		fi
		continue
	fi

	nsub=$((nsub + 1))
	(cd "$dir/idlc" && "$IDLC" -q $FLAGS -header "$name.h" -user "${name}User.c" \
		-server "${name}Server.c" -sheader "${name}_S.h" -iheader "${name}_I.h" \
		-list "$name.list" "$defs") >"$dir/idlc.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name.defs: idlc exit $rc"
		sed 's/^/    /' "$dir/idlc.log"
		continue
	fi
	for f in "$name.h" "${name}User.c" "${name}Server.c" "${name}_S.h" "${name}_I.h" \
		"$name.list"; do
		[ -s "$dir/idlc/$f" ] || fail "$name.defs: $f was not written"
	done
	(cd "$dir/mig" && "$MIG" $FLAGS -list "$name.list" "$defs") >"$dir/mig.log" 2>&1
	if [ ! -s "$dir/mig/$name.list" ]; then
		fail "$name.defs: GNU MIG wrote no list"
		sed 's/^/    /' "$dir/mig.log"
	elif cmp -s "$dir/mig/$name.list" "$dir/idlc/$name.list"; then
		nsame=$((nsame + 1))
	else
		fail "$name.defs: idlc -list differs from GNU MIG's"
		diff -u "$dir/mig/$name.list" "$dir/idlc/$name.list" | sed 's/^/    /'
	fi

	others=$(grep -h '^#include <' "$dir/idlc/$name.h" "$dir/idlc/${name}Server.c" |
		grep -v -e '<idl/' -e '<mach/std_types.h>' -e '<mach/mach_types.h>' \
			-e '<std[a-z]*.h>' -e '<string.h>' | sort -u | tr '\n' ' ')
	if [ -n "$others" ]; then
		notcompiled="$notcompiled $name"
		continue
	fi
	for c in "${name}User.c" "${name}Server.c"; do
		if $CC $STRICT -I"$IDL_TOP_SRCDIR/tests/dialect/shim" \
			-I"$IDL_TOP_SRCDIR/include" -I"$dir/idlc" -c "$dir/idlc/$c" \
			-o "$dir/$c.o" >"$dir/cc.log" 2>&1; then
			ncompiled=$((ncompiled + 1))
		else
			fail "$c does not compile:"
			sed 's/^/    /' "$dir/cc.log" | head -20
		fi
	done
done

echo "gnumach-dev: $nfiles files: $nsub with a subsystem ($nsame with -list identical to" \
	"GNU MIG's), $ntype type-only; $ncompiled generated .c files compiled;" \
	"not compiled (Mach C imports):$notcompiled"
[ $nfiles -gt 0 ] && [ $failed -eq 0 ]
