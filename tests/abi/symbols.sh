#!/bin/sh
# tests/abi/symbols.sh - the shared library's interface: it exports idl_ functions and
# nothing else (no idl__ internals, no transport statics, no libc or helper symbols), its
# soname carries libtool's major number (IDLRT_LT_VERSION current - age), and every exported
# function is documented in docs/api.md.
set -eu
: "${IDL_TOP_BUILDDIR:?run me from make check}" "${IDL_TOP_SRCDIR:?run me from make check}"

lib=$IDL_TOP_BUILDDIR/runtime/.libs/libidlrt.so
[ -f "$lib" ] || { echo "SKIP: no shared libidlrt (configured --disable-shared?)"; exit 77; }
command -v nm >/dev/null 2>&1 && command -v objdump >/dev/null 2>&1 ||
	{ echo "SKIP: binutils (nm, objdump) not installed"; exit 77; }
status=0

syms=$(nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
[ -n "$syms" ] || { echo "FAIL: $lib exports nothing"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v -e '^idl_[a-z]' || :)
if [ -n "$bad" ]; then
	echo "FAIL: exported symbols without the idl_ prefix (or idl__ internals):"
	printf '  %s\n' $bad
	status=1
fi
echo "exported: $(printf '%s\n' "$syms" | wc -l) symbols"

# Functions are T; any exported data (D, B, R) is a mistake: the interface is functions.
data=$(nm -D --defined-only "$lib" | awk 'NF == 3 && $2 !~ /^[TtWwi]$/ { print $3 }')
if [ -n "$data" ]; then
	echo "FAIL: exported data objects (export a function instead): $data"
	status=1
fi

lt=$(sed -n 's/^IDLRT_LT_VERSION = //p' "$IDL_TOP_BUILDDIR/Makefile")
major=$(echo "$lt" | awk -F: '{ print $1 - $3 }')
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "libidlrt.so.$major" ]; then
	echo "FAIL: soname '$soname', expected libidlrt.so.$major (IDLRT_LT_VERSION $lt)"
	status=1
else
	echo "soname: $soname (IDLRT_LT_VERSION $lt)"
fi

# docs/api.md documents each function under a heading or in a table row that names it as
# `idl_name(`.
api=$IDL_TOP_SRCDIR/docs/api.md
for s in $syms; do
	if ! grep -q -e "\`$s(" "$api"; then
		echo "FAIL: $s is exported but not documented in docs/api.md"
		status=1
	fi
done
exit $status
