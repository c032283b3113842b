# transports/local.mk - the transports built into libidlrt (docs/transports.md), each one
# with its address row of the conformance suite (tests/transport/local.mk, included before
# this file). configure's --disable-transport-NAME leaves one out.

# Socket files, shared by unix: and shm:'s rendezvous; small, so always built.
runtime_libidlrt_la_SOURCES += transports/sockfile.h transports/sockfile.c

if TRANSPORT_UNIX
runtime_libidlrt_la_SOURCES += \
	transports/unix_impl.h \
	transports/unix.c \
	transports/unix_desc.c
endif

# The address code tcp: and udp: share.
if TRANSPORT_TCP
runtime_libidlrt_la_SOURCES += transports/inet.h transports/inet.c
else
if TRANSPORT_UDP
runtime_libidlrt_la_SOURCES += transports/inet.h transports/inet.c
endif
endif

if TRANSPORT_TCP
runtime_libidlrt_la_SOURCES += transports/tcp.c
tests_transport_conformance_SOURCES += tests/transport/addr_tcp.c
endif

if TRANSPORT_UDP
runtime_libidlrt_la_SOURCES += \
	transports/udp.c \
	transports/udp_cache.h \
	transports/udp_cache.c
tests_transport_conformance_SOURCES += tests/transport/addr_udp.c
endif

if TRANSPORT_SHM
runtime_libidlrt_la_SOURCES += \
	transports/shm_impl.h \
	transports/shm.c \
	transports/shm_rdv.c \
	transports/shm_ool.c
tests_transport_conformance_SOURCES += tests/transport/addr_shm.c
endif

if TRANSPORT_PORT
runtime_libidlrt_la_SOURCES += \
	transports/port.h \
	transports/port.c \
	transports/port_io.c
tests_transport_conformance_SOURCES += tests/transport/addr_port.c
endif
