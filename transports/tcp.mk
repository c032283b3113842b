# transports/tcp.mk - the tcp: transport, inet.[ch] (the address code it shares with udp:),
# its conformance row, and the tests of both network transports (tests/net/local.mk).

if TRANSPORT_TCP
runtime_libidlrt_la_SOURCES += transports/tcp.c transports/inet.h transports/inet.c
tests_transport_conformance_SOURCES += tests/transport/addr_tcp.c
else
if TRANSPORT_UDP
runtime_libidlrt_la_SOURCES += transports/inet.h transports/inet.c
endif
endif

include tests/net/local.mk
