# tests/local.mk - what every test shares (the timeout, the environment, the flags of the
# programs that reach the runtime's internals), the tests at the top of tests/ (golden
# files, bad input, the example end to end, formatting), `make check-long` and
# `make regen-golden`. Each folder under tests/ has its own local.mk; docs/testing.md says
# what each layer checks and how to run one part.

# What a test prints about a server that did not stop when told (tests/lib/procdump.h).
tests_procdump_sources = tests/lib/procdump.c tests/lib/procdump.h
# The tls: certificates of a test that runs servers over tls: (tests/lib/tls_certs.h).
tests_tls_certs_sources = tests/lib/tls_certs.c tests/lib/tls_certs.h
tests_procdump_cppflags = -I$(top_srcdir)/tests/lib
# `mountns PROGRAM...`: PROGRAM in a mount namespace of its own whose mounts are all private,
# in a chroot too (tests/lib/mountns.c), for the tests that mount and unmount.
check_PROGRAMS += tests/lib/mountns
tests_lib_mountns_SOURCES = tests/lib/mountns.c

# Every test runs under a timeout, so that a hang fails instead of stalling the run.
TEST_TIMEOUT = timeout -k 10 300
LOG_COMPILER = $(TEST_TIMEOUT)
TEST_EXTENSIONS += .sh
SH_LOG_COMPILER = $(TEST_TIMEOUT) $(SHELL)

# What the test scripts and programs find their inputs and tools by: absolute paths, so that
# out-of-tree builds and the tests' own directory changes do not matter.
AM_TESTS_ENVIRONMENT = \
	IDLC='$(abs_top_builddir)/idlc/idlc$(EXEEXT)'; export IDLC; \
	IDL_TOP_SRCDIR='$(abs_top_srcdir)'; export IDL_TOP_SRCDIR; \
	IDL_TOP_BUILDDIR='$(abs_top_builddir)'; export IDL_TOP_BUILDDIR; \
	BENCH_BINDIR='$(abs_top_builddir)/examples/bench'; export BENCH_BINDIR; \
	IDL_BENCH_SERVER='$(abs_top_builddir)/examples/bench/bench-server$(EXEEXT)'; \
	export IDL_BENCH_SERVER; \
	IDLC_INCLUDE_DIR='$(abs_top_srcdir)/data/include'; export IDLC_INCLUDE_DIR; \
	IDLC_TREE_FLAGS='$(IDLC_TREE_FLAGS)'; export IDLC_TREE_FLAGS; \
	IDL_HAVE_LIBUV='$(have_libuv)'; export IDL_HAVE_LIBUV; \
	IDL_CLANG='$(CLANG)'; export IDL_CLANG; \
	IDL_MAKE='$(MAKE)'; export IDL_MAKE;

# Shell-level tests: golden outputs, diagnostics of bad interfaces, the examples end to end
# (the libuv ones skip when configure did not find libuv), the formatting of every source,
# the transports' use of the runtime (the kit only), which part includes which, which room of
# the runtime calls which (on the built objects), the files' and functions' sizes, an
# interface with no header of its own built as a user builds it (idlc -types), and what a
# release tarball holds (sources and test inputs only).
dist_check_SCRIPTS += \
	tests/golden.sh \
	tests/bad.sh \
	tests/e2e/example.sh \
	tests/e2e/libuv.sh \
	tests/lint/format.sh \
	tests/lint/kit.sh \
	tests/lint/layers.sh \
	tests/lint/rooms.sh \
	tests/lint/sizes.sh \
	tests/lint/idlbench.sh \
	tests/lint/autotools.sh \
	tests/compile/ledger.sh \
	tests/dist.sh
TESTS += \
	tests/golden.sh \
	tests/bad.sh \
	tests/e2e/example.sh \
	tests/e2e/libuv.sh \
	tests/lint/format.sh \
	tests/lint/kit.sh \
	tests/lint/layers.sh \
	tests/lint/rooms.sh \
	tests/lint/sizes.sh \
	tests/lint/idlbench.sh \
	tests/lint/autotools.sh \
	tests/compile/ledger.sh \
	tests/dist.sh

# `make format` applies .clang-format to the tracked sources; tests/lint/format.sh checks it.
format:
	cd $(top_srcdir) && git ls-files '*.c' '*.h' | xargs clang-format-14 -i
.PHONY: format

# Inputs of the tests: the golden and bad interfaces by kind (DIST_PATTERNS, Makefile.am: a
# new case is a new file, not a makefile edit), the programs of tests/compile by name.
DIST_PATTERNS += tests/golden/*.defs tests/golden/*.exp tests/golden/*_types.h \
	tests/golden/*_stypes.h tests/golden/*_utypes.h tests/golden/run-golden.sh \
	tests/bad/*.defs tests/bad/*.err.exp tests/bad/*.inc tests/bad/*.opts tests/bad/run-bad.sh
EXTRA_DIST += tests/compile/ledger_main.c tests/compile/loopback.c tests/compile/loopback.h \
	tests/compile/loopback_async.c tests/compile/loopback_async_dialect.c \
	tests/compile/loopback_dialect.c tests/compile/loopback_golden.c \
	tests/compile/loopback_xnu.c tests/compile/shorter.c

# The test programs link libidlrt statically: its shared library exports only idl_ names,
# and the unit tests reach idl__ internals.
test_cppflags = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/idlc -I$(top_builddir)/idlc -I$(top_srcdir)/runtime \
	-I$(top_srcdir)/transports \
	-DIDL_TOP_SRCDIR='"$(abs_top_srcdir)"' -DIDL_TOP_BUILDDIR='"$(abs_top_builddir)"' \
	$(CUNIT_CFLAGS)

if !HAVE_CUNIT
# configure said CUnit is missing; make check says so again and fails rather than skip.
TESTS += tests/no-cunit.sh
endif
dist_check_SCRIPTS += tests/no-cunit.sh

# check-long: the long matrices, long fuzzing and valgrind runs, run by hand. Each folder
# adds its targets to CHECK_LONG.
CHECK_LONG =
check-long: all $(CHECK_LONG)
	@echo "check-long: done"

# regen-golden: rewrites the expected outputs under tests/golden/ from the current idlc.
# Review the diff before committing it: a golden change is a change of generated code.
regen-golden: idlc/idlc$(EXEEXT)
	IDL_REGEN_GOLDEN=1 $(srcdir)/tests/golden/run-golden.sh \
		$(abs_top_builddir)/idlc/idlc$(EXEEXT) $(abs_top_srcdir)

.PHONY: check-long regen-golden
