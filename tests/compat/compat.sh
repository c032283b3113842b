#!/bin/sh
# compat.sh - idlc -compat on every pair of interfaces under tests/compat/pairs/NAME/
# (old.defs and new.defs, each pair one rule of docs/evolution.md), then the hello on the
# same pairs (tests/compat/agree). For each pair, run from its directory so that the file
# names in the lines are old.defs and new.defs:
#   - `idlc -compat -v` writes exactly NAME/expect.txt, whose last line, "exit: N", is its
#     exit status;
#   - without -v: the same lines but the notes, and the same status;
#   - with -Werror: status 1 when the expected lines hold a warning or an error, else 0;
#   - with --json: exactly NAME/expect.json, and the same status.
# Then the command line's own errors: a syntax error in either file and a missing file exit
# 2 with the file's diagnostics, one input is a usage error (2).
# IDL_REGEN_COMPAT=1 rewrites the expected files instead (review the diff).
: "${IDLC:?run me through make check}" "${IDL_TOP_SRCDIR:?run me through make check}"
: "${IDL_TOP_BUILDDIR:?run me through make check}"
export LC_ALL=C
export IDLC_CPP="cpp"
pairs=$IDL_TOP_SRCDIR/tests/compat/pairs
work=$(mktemp -d "${TMPDIR:-/tmp}/idlc-compat.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
failed=0
passed=0

fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

for dir in "$pairs"/*/; do
	name=$(basename "$dir")
	(cd "$dir" && "$IDLC" -compat -v old.defs new.defs >"$work/out" 2>"$work/err")
	echo "exit: $?" >>"$work/out"
	(cd "$dir" && "$IDLC" -compat --json old.defs new.defs >"$work/json" 2>>"$work/err")
	jrc=$?
	if [ -n "${IDL_REGEN_COMPAT:-}" ]; then
		cp "$work/out" "$dir/expect.txt"
		cp "$work/json" "$dir/expect.json"
		continue
	fi
	ok=1
	if [ -s "$work/err" ]; then
		fail "$name: idlc wrote to standard error:"
		cat "$work/err"
		ok=0
	fi
	if ! diff -u "$dir/expect.txt" "$work/out"; then
		fail "$name: -compat -v"
		ok=0
	fi
	want=$(sed -n 's/^exit: //p' "$dir/expect.txt")
	[ "$jrc" = "$want" ] || { fail "$name: --json exits $jrc, not $want"; ok=0; }
	if ! diff -u "$dir/expect.json" "$work/json"; then
		fail "$name: --json"
		ok=0
	fi
	# Without -v: the lines that are not notes, with the summary when any remains.
	grep -v -e ': note: ' -e '^exit: ' -e 'breaking change' "$dir/expect.txt" >"$work/want"
	if [ -s "$work/want" ]; then
		grep 'breaking change' "$dir/expect.txt" |
			sed 's/, [0-9]* compatible changes*$//' >>"$work/want"
	fi
	(cd "$dir" && "$IDLC" -compat old.defs new.defs >"$work/plain" 2>/dev/null)
	prc=$?
	if ! diff -u "$work/want" "$work/plain" || [ "$prc" != "$want" ]; then
		fail "$name: -compat without -v (exit $prc)"
		ok=0
	fi
	# -Werror: warnings break too.
	if grep -q -e ': warning: ' -e ': error: ' "$dir/expect.txt"; then wwant=1; else wwant=0; fi
	(cd "$dir" && "$IDLC" -compat -Werror old.defs new.defs >/dev/null 2>&1)
	wrc=$?
	[ "$wrc" = "$wwant" ] || { fail "$name: -compat -Werror exits $wrc, not $wwant"; ok=0; }
	[ $ok = 1 ] && passed=$((passed + 1))
done
[ -n "${IDL_REGEN_COMPAT:-}" ] && { echo "rewrote the expected files"; exit 0; }
echo "compat: $passed pairs as expected"

# Inputs that cannot be compared: exit 2, with the reason on standard error.
good=$pairs/identical/old.defs
printf 'subsystem catalog 7300;\nroutine lookup(server : mach_port_t;\n' >"$work/broken.defs"
"$IDLC" -compat "$good" "$work/broken.defs" >"$work/out" 2>"$work/err"
rc=$?
[ $rc = 2 ] || fail "a syntax error in the new file exits $rc, not 2"
grep -q 'broken.defs:.*error' "$work/err" || fail "no diagnostic for the syntax error"
[ -s "$work/out" ] && fail "output despite the syntax error"
"$IDLC" -compat "$work/broken.defs" "$good" >/dev/null 2>"$work/err"
rc=$?
[ $rc = 2 ] || fail "a syntax error in the old file exits $rc, not 2"
"$IDLC" -compat "$good" "$work/missing.defs" >/dev/null 2>"$work/err"
rc=$?
[ $rc = 2 ] || fail "a missing file exits $rc, not 2"
grep -q 'missing.defs' "$work/err" || fail "the missing file is not named"
"$IDLC" -compat "$good" >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "one input exits $rc, not 2"
"$IDLC" -compat -user x.c "$good" "$good" >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "an output option with -compat exits $rc, not 2"

# The hello on every pair: old clients against a new server and new against old, over unix:.
"$IDL_TOP_BUILDDIR/tests/compat/agree" "$pairs"/*/ || fail "the hello disagrees with -compat"

if [ $failed -ne 0 ]; then
	echo "FAIL: $failed checks"
	exit 1
fi
echo "PASS"
