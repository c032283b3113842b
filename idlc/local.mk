# idlc/local.mk - the compiler: libidlc.a (the compiler as a library, for idlc, the tests,
# the fuzzer and the tools) and the thin CLI idlc.
noinst_LIBRARIES += idlc/libidlc.a
# In the order of the stages: the front end (cpp, lexer, parser, sema), the middle end
# (middle.h: facts, layout, the descriptor table, and wire/'s signature hash), the emitters,
# the output files.
idlc_libidlc_a_SOURCES = \
	$(base_sources) idlc/idlc.h idlc/ast.h idlc/front.h \
	idlc/context.c idlc/diag.c idlc/cpp.c idlc/lexer.l idlc/parser.y \
	idlc/parser_actions.c idlc/types.c \
	idlc/sema.h idlc/sema.c idlc/sema_type.c idlc/sema_arg.c idlc/sema_names.c \
	idlc/middle.h idlc/facts.c idlc/layout.c idlc/desc.c wire/sighash.c \
	idlc/emit.h idlc/emit.c idlc/emit_struct.c idlc/emit_header.c idlc/emit_desc.c \
	idlc/emit_ool.c idlc/emit_user.h idlc/emit_user.c idlc/emit_user_reply.c idlc/emit_async.c \
	idlc/emit_server.c idlc/emit_types.c idlc/emit_fuzz.c idlc/emit_fuzz_client.c \
	idlc/output.c idlc/deps.c idlc/compat.c idlc/compat_out.c
# The lexer and parser are generated code: they include the parser header and use flex's
# and bison's own idioms, so they get a few warnings relaxed (never -Werror relaxed).
idlc_libidlc_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/idlc -I$(top_builddir)/idlc \
	-DIDLC_PKGINCLUDEDIR='"$(pkgdatadir)/include"'
BUILT_SOURCES += idlc/parser.h
# The grammar's helpers are declared in the parser header, which bison rewrites beside
# parser.c: an edit of parser.y must regenerate it before they compile, even under make -j.
idlc/libidlc_a-parser_actions.$(OBJEXT): idlc/parser.h
# configure finds bison as "bison -y"; the grammar uses bison's own directives on purpose
# (pure parser, locations, custom error messages), so its POSIX-yacc warnings are noise.
AM_YFLAGS += -Wno-yacc

bin_PROGRAMS += idlc/idlc
idlc_idlc_SOURCES = idlc/main.c
idlc_idlc_CPPFLAGS = $(idlc_libidlc_a_CPPFLAGS)
idlc_idlc_LDADD = idlc/libidlc.a
