# transports/udp/local.mk - the udp: transport (docs/transports/udp.md), its duplicate-reply
# cache, and its conformance row; its network tests are tests/net/.
if TRANSPORT_UDP
runtime_libidlrt_la_SOURCES += \
	transports/udp/udp.c \
	transports/udp/udp_cache.h \
	transports/udp/udp_impl.h \
	transports/udp/udp_cache.c
tests_transport_conformance_SOURCES += tests/transport/addr_udp.c
endif
