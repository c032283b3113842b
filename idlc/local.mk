# idlc/local.mk - the compiler: libidlc.a (the compiler as a library, for idlc, the tests,
# the fuzzer and the tools) and the thin CLI idlc.
noinst_LIBRARIES += idlc/libidlc.a
# In the order of the stages: the front end (cpp, lexer, parser, sema), the middle end
# (middle.h: facts, layout, the descriptor table, and wire/'s signature hash), the emitters,
# the output files.
idlc_libidlc_a_SOURCES = \
	idlc/idlc.h idlc/ast.h idlc/front.h idlc/strbuf.h idlc/strbuf.c \
	idlc/context.c idlc/diag.c idlc/cpp.c idlc/lexer.l idlc/parser.y idlc/types.c \
	idlc/sema.h idlc/sema.c idlc/sema_type.c idlc/sema_arg.c idlc/sema_names.c \
	idlc/middle.h idlc/facts.c idlc/layout.c idlc/desc.c wire/sighash.c \
	idlc/emit.h idlc/emit.c idlc/emit_struct.c idlc/emit_header.c idlc/emit_desc.c \
	idlc/emit_ool.c idlc/emit_user.h idlc/emit_user.c idlc/emit_user_reply.c \
	idlc/emit_server.c idlc/emit_types.c \
	idlc/output.c idlc/deps.c
# The lexer and parser are generated code: they include the parser header and use flex's
# and bison's own idioms, so they get a few warnings relaxed (never -Werror relaxed).
idlc_libidlc_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/idlc -I$(top_builddir)/idlc \
	-DIDLC_PKGINCLUDEDIR='"$(pkgdatadir)/include"'
BUILT_SOURCES += idlc/parser.h
# configure finds bison as "bison -y"; the grammar uses bison's own directives on purpose
# (pure parser, locations, custom error messages), so its POSIX-yacc warnings are noise.
AM_YFLAGS += -Wno-yacc

bin_PROGRAMS += idlc/idlc
idlc_idlc_SOURCES = idlc/main.c
idlc_idlc_CPPFLAGS = $(idlc_libidlc_a_CPPFLAGS)
idlc_idlc_LDADD = idlc/libidlc.a

# The public header generated stubs include for descriptors, deferred replies and tokens.
idlinclude_HEADERS += include/idl/idl_ool.h

# idlkit's std_types.defs and mach_types.defs, for `#include <mach/std_types.defs>`: idlc
# searches $(pkgdatadir)/include (or $IDLC_INCLUDE_DIR) after the user's -I.
idlcmachdir = $(pkgdatadir)/include/mach
dist_idlcmach_DATA = data/include/mach/std_types.defs data/include/mach/mach_types.defs

# The dialect against the real thing: every .defs of Debian's gnumach-dev, -list compared
# with GNU MIG's (tests/dialect/gnumach.sh says what it checks).
dist_check_SCRIPTS += tests/dialect/gnumach.sh
TESTS += tests/dialect/gnumach.sh
EXTRA_DIST += tests/dialect/shim tests/fuzz/corpus tests/fuzz/defs.dict tests/fuzz/fuzz_defs.c

# The front-end fuzzer: the compiler's sources built a second time, by clang with libFuzzer
# and the sanitizers (the generated lexer and parser are found through VPATH, in the build
# or the source tree). make check runs a smoke run; check-long-fuzz a long one.
dist_check_SCRIPTS += tests/fuzz/smoke.sh tests/fuzz/no-fuzzer.sh
if HAVE_LIBFUZZER
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
idlc_fuzz_sources = \
	idlc/strbuf.c idlc/context.c idlc/diag.c idlc/cpp.c idlc/lexer.c idlc/parser.c \
	idlc/types.c idlc/sema.c idlc/sema_type.c idlc/sema_arg.c idlc/sema_names.c \
	idlc/facts.c idlc/layout.c \
	idlc/desc.c wire/sighash.c idlc/emit.c idlc/emit_struct.c idlc/emit_header.c \
	idlc/emit_desc.c idlc/emit_ool.c idlc/emit_user.c idlc/emit_user_reply.c \
	idlc/emit_server.c idlc/emit_types.c idlc/output.c idlc/deps.c \
	tests/fuzz/fuzz_defs.c
tests/fuzz/fuzz_defs$(EXEEXT): $(idlc_fuzz_sources) idlc/parser.h
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(CLANG) $(FUZZ_CFLAGS) -I$(top_builddir) -I$(top_srcdir)/include \
		-I$(top_srcdir)/idlc -I$(top_builddir)/idlc -o $@ $(filter %.c,$^)
check_SCRIPTS += tests/fuzz/fuzz_defs$(EXEEXT)
CLEANFILES += tests/fuzz/fuzz_defs$(EXEEXT)
TESTS += tests/fuzz/smoke.sh

check-long-fuzz: tests/fuzz/fuzz_defs$(EXEEXT)
	IDL_TOP_SRCDIR='$(abs_top_srcdir)' IDL_TOP_BUILDDIR='$(abs_top_builddir)' \
		FUZZ_RUNS=$${FUZZ_RUNS:-0} FUZZ_TIME=$${FUZZ_TIME:-1800} \
		$(SHELL) $(srcdir)/tests/fuzz/smoke.sh
else
TESTS += tests/fuzz/no-fuzzer.sh

check-long-fuzz:
	$(SHELL) $(srcdir)/tests/fuzz/no-fuzzer.sh
endif
.PHONY: check-long-fuzz
