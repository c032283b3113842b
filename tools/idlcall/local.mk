# tools/idlcall/local.mk - idlcall: any routine of a running server called from its .defs,
# and a .defs served from a shared library (docs/idlcall.md). Its tests are tests/dynamic/.

# idlcall: the compiler's front end as a library (libidlc.a) loads the .defs at run time.
bin_PROGRAMS += tools/idlcall/idlcall
tools_idlcall_idlcall_SOURCES = \
	tools/idlcall/idlcall.h \
	tools/idlcall/idlcall.c \
	tools/idlcall/idlcall_desc.c \
	tools/idlcall/idlcall_args.c \
	tools/idlcall/idlcall_serve.c
tools_idlcall_idlcall_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/idlc -I$(top_builddir)/idlc \
	-DIDLC_PKGINCLUDEDIR='"$(pkgdatadir)/include"'
tools_idlcall_idlcall_LDADD = idlc/libidlc.a runtime/libidlrt.la
