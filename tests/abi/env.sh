#!/bin/sh
# tests/abi/env.sh - every environment variable the library reads (getenv() or
# idl__env_int() in runtime/ and transports/: its own IDL_ knobs and a service manager's
# LISTEN_FDS and kin) is in docs/api.md's "Environment" table and in libidlrt(3)'s
# ENVIRONMENT section, so that no variable is undocumented.
set -eu
: "${IDL_TOP_SRCDIR:?run me from make check}"
src=$IDL_TOP_SRCDIR
status=0

names=$(grep -rhoE '(getenv|idl__env_int)\("[A-Z][A-Z0-9_]+"' "$src/runtime" "$src/transports" \
	--include='*.c' --include='*.h' | sed 's/.*("\([A-Z][A-Z0-9_]*\)"/\1/' | sort -u)
[ -n "$names" ] || { echo "FAIL: found no environment variable read by the library"; exit 1; }
table=$(sed -n '/^## Environment/,/^## /p' "$src/docs/api.md")
man=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH [A-Z]/p' "$src/man/libidlrt.3")
for n in $names; do
	if ! printf '%s\n' "$table" | grep -q "^| \`$n\` |"; then
		echo "FAIL: $n is read by the library but not in docs/api.md's Environment table"
		status=1
	fi
	if ! printf '%s\n' "$man" | grep -q "^\.B $n\$"; then
		echo "FAIL: $n is read by the library but not in libidlrt(3)'s ENVIRONMENT"
		status=1
	fi
done
echo "checked: $(printf '%s\n' "$names" | wc -l) variables"
exit $status
