# transports/tls/local.mk - the tls: transport (docs/transports/tls.md: the stream of
# transports/sock/stream.h inside TLS 1.3, OpenSSL 3) and its conformance row; built when
# configure found libssl (IDL_TRANSPORT([tls]) in configure.ac).
if TRANSPORT_TLS
runtime_libidlrt_la_SOURCES += transports/tls/tls_impl.h transports/tls/tls.c \
	transports/tls/tls_io.c transports/tls/tls_hs.c transports/tls/tls_config.c \
	transports/tls/tls_peer.c
runtime_libidlrt_la_CPPFLAGS += $(SSL_CFLAGS)
runtime_libidlrt_la_LIBADD += $(SSL_LIBS)
tests_transport_conformance_SOURCES += tests/transport/addr_tls.c tests/transport/wire_tls.c \
	$(tests_tls_certs_sources)
endif
