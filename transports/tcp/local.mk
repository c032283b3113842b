# transports/tcp/local.mk - the tcp: transport (docs/transports/tcp.md: the stream of
# transports/sock/stream.h over TCP) and its conformance row; the unit suite of the stream's
# receive into out-of-line blocks; its network tests are tests/net/.
if TRANSPORT_TCP
runtime_libidlrt_la_SOURCES += transports/tcp/tcp.c
tests_transport_conformance_SOURCES += tests/transport/addr_tcp.c
if HAVE_CUNIT
tests_unit_unit_SOURCES += tests/unit/test_tr_tcp_rx.c
endif
endif
