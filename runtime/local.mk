# runtime/local.mk - libidlrt: the runtime core (runtime/) and the transports built into it
# (transports/). Only idl_ names are exported; idl__ internals and transport statics stay
# inside the library.
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
	runtime/serve.c
runtime_libidlrt_la_SOURCES += wire/sighash.c
# Socket files, shared by unix: and shm:'s rendezvous; small, so always built.
runtime_libidlrt_la_SOURCES += transports/sockfile.h transports/sockfile.c
if TRANSPORT_UNIX
runtime_libidlrt_la_SOURCES += transports/unix.c
endif
# Transports include "internal.h" for idl__fail() and the registration prototypes.
runtime_libidlrt_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime
runtime_libidlrt_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(IDLRT_LT_VERSION) \
	-export-symbols-regex '^idl_[a-z]' -pthread
runtime_libidlrt_la_LIBADD = $(LIBS)
