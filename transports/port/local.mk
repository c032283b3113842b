# transports/port/local.mk - the port: transport (docs/transports/port.md): Mach-style
# ports on POSIX message queues (port_mq.c sets connections up, port_io.c moves messages,
# port_ool.c carries the large ones in shared-memory objects);
# and its conformance row. Its own tests are tests/port/.
if TRANSPORT_PORT
runtime_libidlrt_la_SOURCES += \
	transports/port/port.h \
	transports/port/port_mq.c \
	transports/port/port_io.c \
	transports/port/port_ool.c
tests_transport_conformance_SOURCES += tests/transport/addr_port.c
endif
