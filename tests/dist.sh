#!/bin/sh
# dist.sh - a release tarball holds sources and test inputs only, whatever a build and its
# test runs left beside them. `make distdir` writes the distribution into a temporary
# directory after this script has planted, in the build tree's copies of the directories
# that hold test inputs, what builds and test runs leave there: test logs and results
# (tests/compile/ledger.log and .trs are the harness's own, after a check), objects, a
# stamp, generated stubs and headers. None of it may be in the distribution, nor any such
# file from anywhere else. When the source tree is a git checkout, every tracked file must
# be in it too, but for the .gitignore files and the peers' own .clang-format: so an input
# that no list or pattern names fails here, not first in `make distcheck`'s unpacked tree.
: "${IDL_TOP_SRCDIR:?run me through make check}" "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlkit-dist.XXXXXX") || exit 1
planted=
cleanup() {
	for f in $planted; do
		rm -f "$IDL_TOP_BUILDDIR/$f"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "dist: FAIL: $*" >&2
	exit 1
}

# What a build or a test run may leave in a directory of inputs: in a separate build tree
# also files with the names of inputs (a pattern matches in the source tree only). In an
# in-tree build these are the source tree's directories, where a file with an input's name
# is an input (and other tests would read it): there, outputs' names only. The files go
# again at exit.
probes="distprobe.log distprobe.trs distprobe.o distprobe.lo distprobe.stamp"
if [ "$(cd "$IDL_TOP_BUILDDIR" && pwd -P)" != "$(cd "$IDL_TOP_SRCDIR" && pwd -P)" ]; then
	probes="$probes distprobeUser.c distprobeServer.c distprobe.h distprobe_S.h"
	probes="$probes distprobe_types.h distprobe.defs distprobe.exp distprobe.md"
fi
for d in docs tests/golden tests/bad tests/compile tests/compat/pairs/append \
	tests/fuzz/corpus tests/fuzz/demux-corpus tests/consumer/make tests/dialect/shim/mach; do
	mkdir -p "$IDL_TOP_BUILDDIR/$d" || fail "cannot make $d in the build tree"
	for f in $probes; do
		[ -e "$IDL_TOP_BUILDDIR/$d/$f" ] && fail "$d/$f is there already"
		echo "written by tests/dist.sh" >"$IDL_TOP_BUILDDIR/$d/$f" || fail "cannot write $d/$f"
		planted="$planted $d/$f"
	done
done

# The test harness's make flags name its job server, which this make is not part of.
pkg=$tmp/pkg
if ! (unset MAKEFLAGS MFLAGS MAKELEVEL &&
	cd "$IDL_TOP_BUILDDIR" && ${IDL_MAKE:-make} -s distdir distdir="$pkg") >"$tmp/make.log" 2>&1; then
	cat "$tmp/make.log" >&2
	fail "make distdir failed"
fi
[ -f "$pkg/configure" ] && [ -f "$pkg/tests/golden/bench.h.exp" ] &&
	[ -f "$pkg/tests/compile/loopback.c" ] && [ -f "$pkg/docs/testing.md" ] ||
	fail "the distribution lacks configure, a golden file, a test program or a document"

(cd "$pkg" && find . \( -name 'distprobe*' -o -name '*.log' -o -name '*.trs' \
	-o -name '*.o' -o -name '*.lo' -o -name '*.la' -o -name '*.a' -o -name '*.so' \
	-o -name '*.so.*' -o -name '*.stamp' -o -name '.dirstamp' -o -name '*User.c' \
	-o -name '*Server.c' -o -name '*_S.h' -o -name .deps -o -name .libs \) -print |
	sed 's|^\./||' | sort) >"$tmp/outputs"
if [ -s "$tmp/outputs" ]; then
	echo "dist: build or test outputs in the distribution:" >&2
	cat "$tmp/outputs" >&2
	fail "the distribution holds $(wc -l <"$tmp/outputs") build or test outputs"
fi
echo "dist: no build or test output in the distribution ($(cd "$pkg" && find . -type f | wc -l) files)"

# The source tree must be a checkout's top, not a tarball unpacked inside another one.
top=$(git -C "$IDL_TOP_SRCDIR" rev-parse --show-toplevel 2>/dev/null) || top=
if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$IDL_TOP_SRCDIR" && pwd -P)" ]; then
	(cd "$pkg" && find . -type f | sed 's|^\./||' | sort) >"$tmp/shipped"
	git -C "$IDL_TOP_SRCDIR" ls-files | sort >"$tmp/tracked"
	comm -23 "$tmp/tracked" "$tmp/shipped" |
		grep -Ev '(^|/)\.gitignore$|^tools/idlbench/peers/[^/]*/\.clang-format$' >"$tmp/missing"
	if [ -s "$tmp/missing" ]; then
		echo "dist: tracked files the distribution lacks:" >&2
		cat "$tmp/missing" >&2
		fail "$(wc -l <"$tmp/missing") tracked files are named by no list or pattern"
	fi
	echo "dist: every tracked file is in the distribution"
else
	echo "dist: the source tree is not a git checkout: its tracked files not compared"
fi
exit 0
