#!/bin/sh
# uaf.sh - a read of an out-of-line block after idl_ool_free() is reported, with the
# process's cache of blocks on (the block is cached, poisoned) and off (it is unmapped):
# by AddressSanitizer in a sanitizer build (configure --enable-sanitizers), by valgrind's
# memcheck in a build with <valgrind/memcheck.h>; skipped, saying why, in any other build.
# With the cache on, a read past a block's size within its mapping is reported too.
# tests/ool/uaf.c is the program; docs/runtime.md ("Out-of-line memory") the design.
set -u
prog=${IDL_TOP_BUILDDIR:-.}/tests/ool/ool-uaf
kind=$("$prog" probe) || {
	echo "uaf.sh: $prog probe failed"
	exit 1
}
fail=0
run=

# expect CASE CACHE PATTERN: `ool-uaf CASE` with IDL_OOL_CACHE=CACHE (empty: the default)
# must fail with PATTERN in its report.
expect() {
	out=$(IDL_OOL_CACHE=$2 $run "$prog" "$1" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "$3"; then
		echo "uaf.sh: ok: $1, IDL_OOL_CACHE='$2': $3"
	else
		echo "uaf.sh: FAIL: $1, IDL_OOL_CACHE='$2': exit $rc, no '$3' in:"
		printf '%s\n' "$out" | head -n 40
		fail=1
	fi
}

case $kind in
asan)
	expect alloc '' 'AddressSanitizer: use-after-poison'
	expect recv '' 'AddressSanitizer: use-after-poison'
	expect past '' 'AddressSanitizer: use-after-poison'
	expect alloc 0 'AddressSanitizer: SEGV'
	expect recv 0 'AddressSanitizer: SEGV'
	;;
memcheck)
	if ! command -v valgrind >/dev/null 2>&1; then
		echo "uaf.sh: SKIP: valgrind is not installed (apt-get install valgrind)"
		exit 77
	fi
	run="valgrind -q --error-exitcode=99"
	expect alloc '' 'Invalid read'
	expect recv '' 'Invalid read'
	expect past '' 'Invalid read'
	expect alloc 0 'Invalid read'
	;;
*)
	echo "uaf.sh: SKIP: neither AddressSanitizer (configure --enable-sanitizers) nor" \
		"<valgrind/memcheck.h> in this build"
	exit 77
	;;
esac
exit $fail
