# tests/local.mk - everything `make check` runs, plus `make check-long` and `make regen-golden`.
# docs/testing.md says what each layer checks and how to run one part.

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
	IDLC_INCLUDE_DIR='$(abs_top_srcdir)/data/include'; export IDLC_INCLUDE_DIR;

# Shell-level tests: golden outputs, diagnostics of bad interfaces, the example end to end,
# an interface with no header of its own built as a user builds it (idlc -types).
dist_check_SCRIPTS += \
	tests/golden.sh \
	tests/bad.sh \
	tests/e2e/example.sh \
	tests/lint/format.sh \
	tests/compile/ledger.sh
TESTS += \
	tests/golden.sh \
	tests/bad.sh \
	tests/e2e/example.sh \
	tests/lint/format.sh \
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
	-DIDL_TOP_SRCDIR='"$(abs_top_srcdir)"' -DIDL_TOP_BUILDDIR='"$(abs_top_builddir)"' \
	$(CUNIT_CFLAGS)

# The conformance suite's sources are listed outside the CUnit condition, so that each
# transport's fragment can add its address row with += whatever configure found.
tests_transport_conformance_SOURCES = \
	tests/transport/conformance.h \
	tests/transport/main.c \
	tests/transport/addr.c \
	tests/transport/spawn.c \
	tests/transport/t_calls.c \
	tests/transport/t_faults.c \
	tests/transport/t_malformed.c

if HAVE_CUNIT
# Unit tests: one CUnit suite per module (tests/unit/suites.h), one binary.
check_PROGRAMS += tests/unit/unit
TESTS += tests/unit/unit
tests_unit_unit_SOURCES = \
	tests/unit/main.c \
	tests/unit/suites.h \
	tests/unit/test_idlc_front.c \
	tests/unit/test_idlc_names.c \
	tests/unit/test_idlc_middle.c \
	tests/unit/test_idlc_back.c \
	tests/unit/test_idlc_types.c \
	tests/unit/rt_fixture.h \
	tests/unit/rt_fixture.c \
	tests/unit/test_rt_error.c \
	tests/unit/test_rt_transport.c \
	tests/unit/test_rt_subsystem.c \
	tests/unit/test_rt_wire.c \
	tests/unit/test_rt_unix.c
tests_unit_unit_CPPFLAGS = $(test_cppflags)
tests_unit_unit_LDADD = idlc/libidlc.a runtime/libidlrt.la $(CUNIT_LIBS)
tests_unit_unit_LDFLAGS = -static

# The transport conformance suite: every registered transport against bench-server.
check_PROGRAMS += tests/transport/conformance
TESTS += tests/transport/conformance
tests_transport_conformance_CPPFLAGS = $(test_cppflags) \
	-I$(top_srcdir)/examples/bench -I$(top_builddir)/examples/bench \
	-DIDL_BENCH_SERVER_DEFAULT='"$(abs_top_builddir)/examples/bench/bench-server$(EXEEXT)"'
tests_transport_conformance_LDADD = \
	examples/bench/libbenchstubs.a runtime/libidlrt.la $(CUNIT_LIBS)
tests_transport_conformance_LDFLAGS = -static
# It runs bench-server; make check builds it anyway, this says so to `make tests/...`.
EXTRA_tests_transport_conformance_DEPENDENCIES = examples/bench/bench-server$(EXEEXT)
else
# configure said CUnit is missing; make check says so again and fails rather than skip.
TESTS += tests/no-cunit.sh
endif
dist_check_SCRIPTS += tests/no-cunit.sh

# check-long: the long matrices, long fuzzing and valgrind runs, run by hand. Later work adds
# its targets to CHECK_LONG.
CHECK_LONG = check-long-fuzz
check-long: all $(CHECK_LONG)
	@echo "check-long: done"

# regen-golden: rewrites the expected outputs under tests/golden/ from the current idlc.
# Review the diff before committing it: a golden change is a change of generated code.
regen-golden: idlc/idlc$(EXEEXT)
	IDL_REGEN_GOLDEN=1 $(srcdir)/tests/golden/run-golden.sh \
		$(abs_top_builddir)/idlc/idlc$(EXEEXT) $(abs_top_srcdir)

.PHONY: check-long regen-golden
