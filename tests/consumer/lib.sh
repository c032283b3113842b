# tests/consumer/lib.sh - sourced by the consumer tests: a staged `make install` of the build
# tree, a counting wrapper around the staged idlc, and one call from a client to a server.
#
# A consumer test may use only what the staged install holds: the tree's own build and
# source directories serve to install from and to copy the consumer project, nothing else.
set -eu

: "${IDL_TOP_BUILDDIR:?run me from make check}" "${IDL_TOP_SRCDIR:?run me from make check}"

consumer_tmp=$(mktemp -d "${TMPDIR:-/tmp}/idl-consumer.XXXXXX")
consumer_server_pid=
consumer_cleanup()
{
	if [ -n "$consumer_server_pid" ]; then
		kill -KILL "$consumer_server_pid" 2>/dev/null || :
	fi
	rm -rf "$consumer_tmp"
}
trap consumer_cleanup EXIT
trap 'exit 1' HUP INT TERM

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

# The consumer builds are make's children only by accident: they must not join the jobserver
# of the `make check` that runs this test, nor inherit its variables.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES GNUMAKEFLAGS || :
# make check points IDLC at the build tree's idlc; a consumer knows only the installed one.
unset IDLC || :
CONSUMER_MAKE=${CONSUMER_MAKE:-make}

# stage_install: installs the build tree into $consumer_tmp/stage (DESTDIR) and sets
# STAGE (the DESTDIR), STAGE_BINDIR, STAGE_LIBDIR, STAGE_DATADIR, STAGE_PKGCONFIG, STAGE_IDLC,
# and the environment that points pkg-config and the dynamic linker at the staged tree.
stage_install()
{
	STAGE=$consumer_tmp/stage
	mkdir -p "$IDL_TOP_BUILDDIR/tests/consumer"
	# The three tests run at once under make -j; two installs from one build tree at once
	# could race where libtool relinks, so they take turns.
	if ! (
		flock 9
		"$CONSUMER_MAKE" -C "$IDL_TOP_BUILDDIR" install DESTDIR="$STAGE" \
			>"$consumer_tmp/install.log" 2>&1
	) 9>"$IDL_TOP_BUILDDIR/tests/consumer/stage.lock"; then
		cat "$consumer_tmp/install.log" >&2
		fail "make install DESTDIR=$STAGE failed"
	fi
	pc=$(find "$STAGE" -name idlrt.pc -path '*/pkgconfig/*' | head -n 1)
	[ -n "$pc" ] || fail "the staged install has no idlrt.pc"
	STAGE_PKGCONFIG=$(dirname "$pc")
	# The paths as installed, then as staged: pkg-config asked without the sysroot.
	STAGE_BINDIR=$STAGE$(pkg_var bindir)
	STAGE_LIBDIR=$STAGE$(pkg_var libdir)
	STAGE_DATADIR=$STAGE$(pkg_var datarootdir)
	STAGE_IDLC=$STAGE$(pkg_var idlc)
	[ -x "$STAGE_IDLC" ] || fail "idlrt.pc names idlc '$(pkg_var idlc)', not installed"
	[ -f "$STAGE$(pkg_var idlc_mk)" ] || fail "idlrt.pc names idlc.mk, not installed"
	# Only the staged idlrt.pc is visible, never one installed on the machine.
	PKG_CONFIG_LIBDIR=$STAGE_PKGCONFIG
	PKG_CONFIG_PATH=
	PKG_CONFIG_SYSROOT_DIR=$STAGE
	LD_LIBRARY_PATH=$STAGE_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
	# A tree configured --enable-sanitizers installs a library that needs libasan, which
	# the consumers (built without it) load second: let ASan accept that, and leave leak
	# reports to the tree's own tests.
	if objdump -p "$STAGE_LIBDIR/libidlrt.so" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0
		export ASAN_OPTIONS
	fi
}

# check_installed: what the install put in the stage besides the toolchain: a shared library
# exporting only idl_ names, the man pages (rendered by man -l), idlc.m4, the CMake package.
check_installed()
{
	so=$(find "$STAGE_LIBDIR" -name 'libidlrt.so.*' -type f | head -n 1)
	[ -n "$so" ] || fail "no libidlrt.so.* installed in $STAGE_LIBDIR"
	bad=$(nm -D --defined-only "$so" | awk 'NF == 3 && $3 !~ /^idl_[a-z]/ { print $3 }')
	[ -z "$bad" ] || fail "the installed $(basename "$so") exports non-idl_ symbols: $bad"
	echo "ok: the installed $(basename "$so") exports only idl_ symbols"
	for page in man1/idlc.1 man1/idlbench.1 man5/defs.5 man3/libidlrt.3; do
		f=$(find "$STAGE" -path "*/man/$page" | head -n 1)
		[ -n "$f" ] || fail "$page is not installed"
		if command -v man >/dev/null 2>&1; then
			LC_ALL=C MANWIDTH=80 man -l "$f" 2>&1 | grep -q '^NAME' ||
				fail "man -l does not render the installed $page"
		fi
	done
	echo "ok: the man pages are installed and render"
	[ -f "$STAGE_DATADIR/aclocal/idlc.m4" ] || fail "idlc.m4 is not in \$(datadir)/aclocal"
	[ -f "$STAGE_LIBDIR/cmake/idlkit/idlkitConfig.cmake" ] &&
		[ -f "$STAGE_LIBDIR/cmake/idlkit/idlkitConfigVersion.cmake" ] ||
		fail "the CMake package is not in \$(libdir)/cmake/idlkit"
}

pkg_var()
{
	env -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR="$STAGE_PKGCONFIG" PKG_CONFIG_PATH= \
		pkg-config --variable="$1" idlrt
}

# idlc_counting FILE: writes FILE, an idlc that logs each run to $consumer_tmp/idlc.runs
# and then runs the staged idlc, so a test can tell how often the build ran the compiler.
# It adds the tree's IDLC_TREE_FLAGS (mk/idlc-stubs.mk): the consumers link the staged
# libidlrt.
idlc_counting()
{
	cat >"$1" <<WRAP
#!/bin/sh
echo "\$*" >>'$consumer_tmp/idlc.runs'
exec '$STAGE_IDLC' ${IDLC_TREE_FLAGS-} "\$@"
WRAP
	chmod +x "$1"
	: >"$consumer_tmp/idlc.runs"
}

# Runs that generate: a build system asking `idlc --help` what it supports does not count.
idlc_runs()
{
	grep -vc -e '^--help$' "$consumer_tmp/idlc.runs" || :
}

# expect_runs N WHAT: the build ran idlc N times in all so far.
expect_runs()
{
	n=$(idlc_runs)
	if [ "$n" != "$1" ]; then
		cat "$consumer_tmp/idlc.runs" >&2
		fail "$2: idlc ran $n times in all, expected $1"
	fi
	echo "ok: $2 (idlc runs: $n)"
}

# idlc_has_depfiles: the staged idlc writes make dependency files (-MD -MF -MP).
idlc_has_depfiles()
{
	"$STAGE_IDLC" --help 2>/dev/null | grep -q -e '-MD'
}

# run_call SERVER CLIENT EXPECTED: starts SERVER on a fresh unix: address, runs CLIENT
# against it, and checks that the client printed EXPECTED and both exited 0.
run_call()
{
	addr=unix:$consumer_tmp/call.sock
	"$1" "$addr" >"$consumer_tmp/server.out" 2>&1 &
	consumer_server_pid=$!
	i=0
	until grep -q '^ready' "$consumer_tmp/server.out"; do
		kill -0 "$consumer_server_pid" 2>/dev/null || {
			cat "$consumer_tmp/server.out" >&2
			fail "$1 exited before it was ready"
		}
		i=$((i + 1))
		[ $i -lt 200 ] || fail "$1 not ready after 10 s"
		sleep 0.05
	done
	out=$("$2" "$addr" 2>&1) || {
		echo "$out" >&2
		fail "$2 failed"
	}
	kill -TERM "$consumer_server_pid"
	st=0
	wait "$consumer_server_pid" || st=$?
	consumer_server_pid=
	[ $st -eq 0 ] || {
		cat "$consumer_tmp/server.out" >&2
		fail "$1 exited with status $st after SIGTERM"
	}
	[ "$out" = "$3" ] || fail "$2 printed '$out', expected '$3'"
	echo "ok: one call over $addr: $out"
}

# copy_project NAME: copies tests/consumer/NAME to $consumer_tmp/NAME (read-only sources
# stay untouched) and prints the copy's path.
copy_project()
{
	cp -R "$IDL_TOP_SRCDIR/tests/consumer/$1" "$consumer_tmp/$1"
	chmod -R u+w "$consumer_tmp/$1"
	echo "$consumer_tmp/$1"
}
