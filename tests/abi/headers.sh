#!/bin/sh
# tests/abi/headers.sh - every public header compiles on its own, first thing in a
# translation unit, as C11 with the project's warnings and -pedantic, and as C++ (g++);
# and a C++ program calling the runtime links against the C library, which holds only if
# the headers wrap their declarations in extern "C". A program that includes only the
# umbrella <idl/idl.h> has the runtime's clock (idl_now_ns(), from <idl/idl_time.h>).
set -eu
: "${IDL_TOP_BUILDDIR:?run me from make check}" "${IDL_TOP_SRCDIR:?run me from make check}"

CC=${CC:-cc}
CXX=${CXX:-g++}
inc=$IDL_TOP_SRCDIR/include
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idl-headers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
have_cxx=yes
command -v "$CXX" >/dev/null 2>&1 || have_cxx=no

for h in "$inc"/idl/*.h; do
	name=idl/$(basename "$h")
	printf '#include <%s>\n' "$name" >"$tmp/t.c"
	if ! $CC -std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
		-Wmissing-prototypes -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err"; then
		echo "FAIL: <$name> does not compile alone as C:"
		cat "$tmp/err"
		status=1
	fi
	if [ $have_cxx = yes ]; then
		cp "$tmp/t.c" "$tmp/t.cc"
		if ! $CXX -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.cc" \
			-o "$tmp/t.o" 2>"$tmp/err"; then
			echo "FAIL: <$name> does not compile alone as C++:"
			cat "$tmp/err"
			status=1
		fi
	fi
	# Every header that declares a function says extern "C".
	if grep -q -E '^[a-z].*\(' "$h" && ! grep -q 'extern "C"' "$h"; then
		echo "FAIL: <$name> declares functions without extern \"C\" for C++"
		status=1
	fi
	echo "checked <$name>"
done

lib=$IDL_TOP_BUILDDIR/runtime/.libs/libidlrt.so
# A library built --enable-sanitizers needs libasan, which the C++ program (built without
# it) loads second: let ASan accept that.
if objdump -p "$lib" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0
	export ASAN_OPTIONS
fi
# The clock from the umbrella header alone, as a user's program has it.
cat >"$tmp/clock.c" <<'EOF_C'
#include <stdio.h>
#include <idl/idl.h>
int
main(void)
{
	int64_t t0 = idl_now_ns(), d = idl_deadline_ms(1000);

	if (t0 <= 0 || d - t0 < 999000000 || idl_deadline_ms(-1) != IDL_DEADLINE_NONE)
		return 1;
	printf("clock ok\n");
	return 0;
}
EOF_C
if ! $CC -std=c11 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$tmp/clock.c" -o "$tmp/clock.o" \
	2>"$tmp/err"; then
	echo "FAIL: <idl/idl.h> does not declare the clock (idl_now_ns(), idl_deadline_ms()):"
	cat "$tmp/err"
	status=1
elif [ ! -f "$lib" ]; then
	echo "note: no shared libidlrt: the clock program compiled, not run"
elif ! $CC "$tmp/clock.o" -o "$tmp/clock" -L"$(dirname "$lib")" -lidlrt 2>"$tmp/err"; then
	echo "FAIL: the clock program does not link against libidlrt:"
	cat "$tmp/err"
	status=1
elif ! out=$(LD_LIBRARY_PATH=$(dirname "$lib") "$tmp/clock" 2>&1); then
	echo "FAIL: the clock program failed: $out"
	status=1
else
	echo "<idl/idl.h> alone: $out"
fi

if [ $have_cxx = no ]; then
	echo "note: no C++ compiler ($CXX): C++ checks left out"
elif [ -f "$lib" ]; then
	if ! $CXX -std=c++11 -Wall -Wextra -Werror -I"$inc" \
		"$IDL_TOP_SRCDIR/tests/abi/cxx.cc" -o "$tmp/cxx" \
		-L"$(dirname "$lib")" -lidlrt 2>"$tmp/err"; then
		echo "FAIL: a C++ program does not link against libidlrt:"
		cat "$tmp/err"
		status=1
	elif ! out=$(LD_LIBRARY_PATH=$(dirname "$lib") "$tmp/cxx" 2>&1); then
		echo "FAIL: the C++ program failed: $out"
		status=1
	else
		echo "C++ program: $out"
	fi
fi
exit $status
