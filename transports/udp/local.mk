# transports/udp/local.mk - the udp: transport (docs/transports/udp.md), its duplicate-reply
# cache, its conformance row and the cache's unit suite; its network tests are tests/net/.
if TRANSPORT_UDP
runtime_libidlrt_la_SOURCES += \
	transports/udp/udp.c \
	transports/udp/udp_ep.c \
	transports/udp/udp_nb.c \
	transports/udp/udp_hold.c \
	transports/udp/udp_cache.h \
	transports/udp/udp_impl.h \
	transports/udp/udp_cache.c
tests_transport_conformance_SOURCES += tests/transport/addr_udp.c
if HAVE_CUNIT
tests_unit_unit_SOURCES += tests/unit/test_tr_udp_cache.c tests/unit/test_tr_udp_ra.c
endif
endif
