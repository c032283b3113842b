# transports/ool.mk - out-of-line data and ports in messages: the runtime's part
# (runtime/ool.c: memory, release, counts; runtime/ool_cache.c: the process's cache of
# mapped blocks; runtime/ool_wire.c: data inline after a message) that every transport uses,
# and their tests (tests/ool/, the conformance suite's cases).
runtime_libidlrt_la_SOURCES += runtime/ool.c runtime/ool_cache.h runtime/ool_cache.c \
	runtime/ool_wire.c
if TRANSPORT_UNIX
runtime_libidlrt_la_SOURCES += transports/unix_impl.h transports/unix_desc.c
endif

include tests/ool/local.mk
