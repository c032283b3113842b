#!/bin/bash
# run-bad.sh - runs idlc on every tests/bad/NAME.defs and checks that it fails as expected.
#
#     tests/bad/run-bad.sh IDLC SRCDIR
#
# For each case: idlc runs from SRCDIR on the relative path tests/bad/NAME.defs (so the
# file names in its messages are the ones in the expected file), with every output pointed
# into an empty directory; then
#   - its standard error must equal tests/bad/NAME.err.exp exactly,
#   - its exit status must be 1 and its standard output empty,
#   - the output directory must still be empty.
# tests/bad/NAME.opts, when present, holds extra idlc options (blank-separated).
#
# The preprocessor is pinned to "cpp -fno-diagnostics-show-caret" in the C locale, so the
# one case whose expected text includes cpp's own message does not depend on the terminal
# or on gcc's caret layout (override with IDLC_BAD_CPP).
set -u

if [ $# -ne 2 ]; then
	echo "usage: run-bad.sh IDLC SRCDIR" >&2
	exit 2
fi
idlc=$1
srcdir=$2
case $idlc in
/*) ;;
*) idlc=$(pwd)/$idlc ;;
esac
if [ ! -x "$idlc" ]; then
	echo "run-bad.sh: '$idlc' is not an executable" >&2
	exit 2
fi

export LC_ALL=C
export IDLC_CPP="${IDLC_BAD_CPP:-cpp -fno-diagnostics-show-caret}"

work=$(mktemp -d "${TMPDIR:-/tmp}/idlc-bad.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
for defs in "$srcdir"/tests/bad/*.defs; do
	[ -e "$defs" ] || continue
	name=$(basename "$defs" .defs)
	rel=tests/bad/$name.defs
	exp=$srcdir/tests/bad/$name.err.exp
	out=$work/$name.out
	mkdir "$out"
	opts=()
	if [ -f "$srcdir/tests/bad/$name.opts" ]; then
		read -r -a opts <"$srcdir/tests/bad/$name.opts"
	fi

	(cd "$srcdir" && "$idlc" "${opts[@]}" -header "$out/h.h" -user "$out/user.c" \
		-server "$out/server.c" -sheader "$out/sheader.h" "$rel") \
		>"$work/$name.stdout" 2>"$work/$name.stderr"
	rc=$?

	why=
	if [ ! -f "$exp" ]; then
		why="no expected file $exp"
	elif ! diff -u "$exp" "$work/$name.stderr" >"$work/$name.diff"; then
		why="diagnostics differ"
	elif [ $rc -ne 1 ]; then
		why="exit status $rc, expected 1"
	elif [ -s "$work/$name.stdout" ]; then
		why="unexpected standard output"
	elif [ -n "$(ls -A "$out")" ]; then
		why="output files were created: $(ls -A "$out" | tr '\n' ' ')"
	fi
	if [ -z "$why" ]; then
		echo "PASS: $name"
		passed=$((passed + 1))
	else
		echo "FAIL: $name: $why"
		[ -s "$work/$name.diff" ] && cat "$work/$name.diff"
		failed=$((failed + 1))
	fi
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
