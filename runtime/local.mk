# runtime/local.mk - libidlrt: the runtime, in rooms, and the transports built into it (their
# sources are listed by transports/local.mk). Only idl_ names are exported; idl__ internals
# and transport statics stay inside the library.
lib_LTLIBRARIES += runtime/libidlrt.la
# The runtime in rooms, one folder each, bottom to top: each room uses only the rooms below
# it (docs/architecture.md, "The runtime's rooms"; tests/lint/rooms.sh checks it on the
# objects). The transports (transports/local.mk) stand above core and ool. builtins.c is
# the one file that calls upward: the list of built-in transports and the client's port
# class.
runtime_libidlrt_la_SOURCES = \
	runtime/transport_kit.h \
	runtime/builtins.c
# core: errors, the transport registry, the clock and allocation utilities, the hello,
# subsystems, the port head.
runtime_libidlrt_la_SOURCES += \
	runtime/core/core.h \
	runtime/core/list.h \
	runtime/core/mem_hide.h \
	runtime/core/error.c \
	runtime/core/error_reg.c \
	runtime/core/registry.c \
	runtime/core/util.c \
	runtime/core/subsystem.c \
	runtime/core/hello.c \
	runtime/core/port_head.c \
	runtime/core/config.c
# ool: out-of-line memory, its cache and wire form, what messages carry by descriptor.
runtime_libidlrt_la_SOURCES += \
	runtime/ool/ool.h \
	runtime/ool/ool.c \
	runtime/ool/ool_msg.c \
	runtime/ool/ool_convert.c \
	runtime/ool/ool_cache.h \
	runtime/ool/ool_cache.c \
	runtime/ool/ool_wire.c
# The signature hash's one implementation, shared with the compiler (wire/), and the string
# builder (base/).
runtime_libidlrt_la_SOURCES += wire/sighash.c $(base_sources)
# interp: the descriptor interpreter (checks, packing, printing); trace: tracing. They live in
# libidlrt, so that every program can be traced.
runtime_libidlrt_la_SOURCES += \
	runtime/interp/interp.h \
	runtime/interp/interp_msg.c \
	runtime/interp/interp_fmt.c \
	runtime/interp/interp_desc.h \
	runtime/interp/interp_desc.c \
	runtime/trace/trace.h \
	runtime/trace/trace.c
# client: ports and their connections, credentials, the memory port, calls; calls in flight
# and the call loop behind the pollable port.
runtime_libidlrt_la_SOURCES += \
	runtime/client/client.h \
	runtime/client/port.c \
	runtime/client/cred.c \
	runtime/client/port_memory.c \
	runtime/client/call.c \
	runtime/client/call_hello.c \
	runtime/client/call_wait.c \
	runtime/client/async.h \
	runtime/client/async_call.c \
	runtime/client/async_hello.c \
	runtime/client/async_carry.c \
	runtime/client/async_conn.c \
	runtime/client/async_loop.c
# server: its API, the accept loop, the event core, limits, each request's checks, a message
# endpoint's peers, one message served from bytes (harnesses).
runtime_libidlrt_la_SOURCES += \
	runtime/server/server.h \
	runtime/server/server.c \
	runtime/server/server_event.c \
	runtime/server/server_limits.c \
	runtime/server/server_loop.c \
	runtime/server/server_request.c \
	runtime/server/server_message.c \
	runtime/server/server_peers.c
# The server under a service manager (docs/deploy.md): the sockets it passed, what the
# server tells it, and a stop that lets calls in flight finish.
runtime_libidlrt_la_SOURCES += \
	runtime/server/service.h \
	runtime/server/svc_listen.c \
	runtime/server/svc_notify.c \
	runtime/server/server_drain.c
# dynamic: the libffi-driven server, so that any server can serve without stubs.
runtime_libidlrt_la_SOURCES += \
	runtime/dynamic/dynamic.h \
	runtime/dynamic/ffi_num.c \
	runtime/dynamic/ffi_desc.c \
	runtime/dynamic/ffi_server.c
# Every file includes a room's header by its path under runtime/ ("core/core.h"); transports
# include "transport_kit.h" (runtime/), the one header of the runtime they use.
runtime_libidlrt_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime $(FFI_CFLAGS)
runtime_libidlrt_la_CFLAGS = $(AM_CFLAGS) $(TLS_CFLAGS)
runtime_libidlrt_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(IDLRT_LT_VERSION) \
	-export-symbols-regex '^idl_[a-z]' -pthread
runtime_libidlrt_la_LIBADD = $(LIBS) $(FFI_LIBS)

# A shared library installed where the dynamic linker looks by its cache (/usr/local/lib, the
# default prefix's) is found by programs only once that cache knows it: `make install` as
# root, for real, refreshes it, so that idlbench, idlcall and the user's programs run at
# once. A staged install (DESTDIR) or one as another user has no cache of its own to refresh.
install-exec-hook:
	@if test -z "$(DESTDIR)" && test "`id -u`" = 0 && command -v ldconfig >/dev/null 2>&1; \
	then echo "ldconfig"; ldconfig; fi
