#!/bin/sh
# tests/lint/autotools.sh - the README's `autoreconf -fi` on a fresh checkout prints no
# warning, and configure's advice for a missing CUnit is the README's own command.
#
# The fresh checkout is a scratch copy of the tracked files (and of new files not yet
# committed, not ignored): what `git clone` gives, without the m4/ macros, configure or
# build-aux/ that an earlier autoreconf left in the source tree. Outside a git checkout (a
# release tarball) it is a copy of the tree without autoreconf's and configure's outputs.
set -u
top=${IDL_TOP_SRCDIR:?run me from make check}
for tool in autoreconf tar; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "SKIP: $tool is not installed (mk/deps.sh installs it)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idl-autotools.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
fail()
{
	echo "FAIL: $*"
	exit 1
}

mkdir "$tmp/src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# A file deleted in the work tree but still in the index is not there to copy.
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$tmp/src" -xf - ||
		fail "copying the tracked files"
else
	(cd "$top" && tar --exclude=./autom4te.cache --exclude=./build-aux --exclude='./m4/l*.m4' \
		--exclude=./configure --exclude=./aclocal.m4 --exclude=./config.status \
		--exclude='./build*' -cf - .) | tar -C "$tmp/src" -xf - || fail "copying the tree"
fi
[ -f "$tmp/src/configure.ac" ] || fail "the copy has no configure.ac"

(cd "$tmp/src" && autoreconf -fi) >"$tmp/autoreconf.out" 2>"$tmp/autoreconf.err" || {
	cat "$tmp/autoreconf.err"
	fail "autoreconf -fi failed in a fresh copy"
}
if grep -i 'warning' "$tmp/autoreconf.err"; then
	fail "autoreconf -fi warns in a fresh copy (above)"
fi
echo "ok: autoreconf -fi in a fresh copy prints no warning"

# configure where pkg-config finds nothing (libffi given by hand, as configure allows):
# CUnit is missing, and the warning says which command installs it.
mkdir "$tmp/build"
(cd "$tmp/build" && "$tmp/src/configure" -q --disable-peers --without-libuv CLANG=no \
	PKG_CONFIG_LIBDIR="$tmp/nowhere" PKG_CONFIG_PATH= FFI_CFLAGS=-I/usr/include \
	FFI_LIBS=-lffi) >"$tmp/configure.out" 2>&1 || {
	cat "$tmp/configure.out"
	fail "configure without CUnit failed"
}
warn=$(grep 'WARNING: CUnit' "$tmp/configure.out") || {
	cat "$tmp/configure.out"
	fail "configure without CUnit did not warn"
}
case $warn in
*"mk/deps.sh --test"*) ;;
*) fail "configure's CUnit warning does not name mk/deps.sh --test: $warn" ;;
esac
echo "ok: $warn"
"$top/tests/no-cunit.sh" 2>&1 | grep -q 'mk/deps.sh --test' ||
	fail "tests/no-cunit.sh does not name mk/deps.sh --test"
echo "ok: tests/no-cunit.sh names mk/deps.sh --test"
