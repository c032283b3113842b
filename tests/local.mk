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
	IDL_HAVE_LIBUV='$(have_libuv)'; export IDL_HAVE_LIBUV;

# Shell-level tests: golden outputs, diagnostics of bad interfaces, the examples end to end
# (the libuv ones skip when configure did not find libuv), the formatting of every source,
# the transports' use of the runtime (the kit only), which part includes which, and an
# interface with no header of its own built as a user builds it (idlc -types).
dist_check_SCRIPTS += \
	tests/golden.sh \
	tests/bad.sh \
	tests/e2e/example.sh \
	tests/e2e/libuv.sh \
	tests/lint/format.sh \
	tests/lint/kit.sh \
	tests/lint/layers.sh \
	tests/compile/ledger.sh
TESTS += \
	tests/golden.sh \
	tests/bad.sh \
	tests/e2e/example.sh \
	tests/e2e/libuv.sh \
	tests/lint/format.sh \
	tests/lint/kit.sh \
	tests/lint/layers.sh \
	tests/compile/ledger.sh

# `make format` applies .clang-format to the tracked sources; tests/lint/format.sh checks it.
format:
	cd $(top_srcdir) && git ls-files '*.c' '*.h' | xargs clang-format-14 -i
.PHONY: format

# Inputs of the tests, as whole directories: a new case is a new file, not a makefile edit.
EXTRA_DIST += tests/golden tests/bad tests/compile

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
