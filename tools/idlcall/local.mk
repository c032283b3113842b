# tools/idlcall/local.mk - idlcall: any routine of a running server called from its .defs,
# and a .defs served from a shared library (docs/idlcall.md). Its tests are tests/dynamic/.

# libidlcall.a: a .defs file loaded at run time through the compiler's library (libidlc.a),
# arguments read from text, a library of implementation functions. idlcall and idlbench
# (--defs, --call, --impl) both link it, so both read an interface and its arguments alike.
noinst_LIBRARIES += tools/idlcall/libidlcall.a
tools_idlcall_libidlcall_a_SOURCES = \
	tools/idlcall/idlcall.h \
	tools/idlcall/idlcall_desc.c \
	tools/idlcall/idlcall_args.c \
	tools/idlcall/idlcall_lib.c
tools_idlcall_libidlcall_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/idlc \
	-I$(top_builddir)/idlc -DIDLC_PKGINCLUDEDIR='"$(pkgdatadir)/include"'

bin_PROGRAMS += tools/idlcall/idlcall
tools_idlcall_idlcall_SOURCES = \
	tools/idlcall/idlcall.h \
	tools/idlcall/idlcall.c \
	tools/idlcall/idlcall_serve.c
tools_idlcall_idlcall_CPPFLAGS = $(tools_idlcall_libidlcall_a_CPPFLAGS)
tools_idlcall_idlcall_LDADD = tools/idlcall/libidlcall.a idlc/libidlc.a runtime/libidlrt.la
