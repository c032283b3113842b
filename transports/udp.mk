# transports/udp.mk - the udp: transport and its conformance row; the shared address code
# and the network tests are in transports/tcp.mk.
if TRANSPORT_UDP
runtime_libidlrt_la_SOURCES += transports/udp.c transports/udp_cache.h transports/udp_cache.c
tests_transport_conformance_SOURCES += tests/transport/addr_udp.c
endif
