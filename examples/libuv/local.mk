# examples/libuv/local.mk - bench.defs served from and called from a libuv loop: uv-server
# (the embeddable server on one uv_poll_t, one thread) and uv-client (64 calls in flight
# through the asynchronous stubs). Built only when configure found libuv (HAVE_LIBUV);
# tests/e2e/libuv.sh runs both.
if HAVE_LIBUV

# Real programs (-no-install), so that the test can run, stop and count the threads of them
# by pid. They link libidlrt shared and take bench.defs's stubs from examples/bench.
noinst_PROGRAMS += examples/libuv/uv-server examples/libuv/uv-client

examples_libuv_uv_server_SOURCES = \
	examples/libuv/uv_server.c \
	examples/bench/bench_impl.c \
	examples/bench/bench_impl.h \
	examples/bench/bench_types.h
examples_libuv_uv_server_CPPFLAGS = $(bench_cppflags) $(LIBUV_CFLAGS)
examples_libuv_uv_server_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la $(LIBUV_LIBS)
examples_libuv_uv_server_LDFLAGS = -no-install

examples_libuv_uv_client_SOURCES = examples/libuv/uv_client.c examples/bench/bench_types.h
examples_libuv_uv_client_CPPFLAGS = $(bench_cppflags) $(LIBUV_CFLAGS)
examples_libuv_uv_client_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la $(LIBUV_LIBS)
examples_libuv_uv_client_LDFLAGS = -no-install

endif
