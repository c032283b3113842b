# transports/mqueue/local.mk - the port: transport (docs/transports/port.md): Mach-style
# ports on POSIX message queues (mq_conn.c sets connections up, mq_io.c moves messages,
# mq_ool.c carries the large ones in shared-memory objects);
# and its conformance row. Its own tests are tests/port/.
if TRANSPORT_PORT
runtime_libidlrt_la_SOURCES += \
	transports/mqueue/mq.h \
	transports/mqueue/mq_conn.c \
	transports/mqueue/mq_io.c \
	transports/mqueue/mq_ool.c
tests_transport_conformance_SOURCES += tests/transport/addr_port.c
endif
