# runtime/local.mk - libidlrt: the runtime core, and the transports built into it (their
# sources are listed by transports/local.mk). Only idl_ names are exported; idl__ internals
# and transport statics stay inside the library.
lib_LTLIBRARIES += runtime/libidlrt.la
runtime_libidlrt_la_SOURCES = \
	runtime/internal.h \
	runtime/client.h \
	runtime/server.h \
	runtime/error.c \
	runtime/transport.c \
	runtime/subsystem.c \
	runtime/hello.c \
	runtime/port.c \
	runtime/call.c \
	runtime/server.c \
	runtime/serve.c \
	runtime/ool.c \
	runtime/ool_wire.c
# The descriptor interpreter (checks, packing, printing, the libffi-driven server) and
# tracing live in libidlrt too, so that every program can be traced and any server can
# serve without stubs.
runtime_libidlrt_la_SOURCES += \
	runtime/dynamic.h \
	runtime/dynamic_msg.c \
	runtime/dynamic_fmt.c \
	runtime/dynamic_desc.h \
	runtime/dynamic_desc.c \
	runtime/dynamic_num.h \
	runtime/dynamic_num.c \
	runtime/dynamic.c \
	runtime/trace.h \
	runtime/trace.c
# Transports include "internal.h" for idl__fail() and the registration prototypes.
runtime_libidlrt_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime $(FFI_CFLAGS)
runtime_libidlrt_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(IDLRT_LT_VERSION) \
	-export-symbols-regex '^idl_[a-z]' -pthread
runtime_libidlrt_la_LIBADD = $(LIBS) $(FFI_LIBS)
