# transports/tcp/local.mk - the tcp: transport (docs/transports/tcp.md) and its conformance
# row; the unit suite of its receive into out-of-line blocks; its network tests are tests/net/.
if TRANSPORT_TCP
runtime_libidlrt_la_SOURCES += transports/tcp/tcp.c transports/tcp/tcp_nb.c \
	transports/tcp/tcp_connect.c transports/tcp/tcp_rx.c \
	transports/tcp/tcp_impl.h
tests_transport_conformance_SOURCES += tests/transport/addr_tcp.c
if HAVE_CUNIT
tests_unit_unit_SOURCES += tests/unit/test_tr_tcp_rx.c
endif
endif
