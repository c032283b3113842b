/*
 * tls_stall.c - the tls: test's case of peers that stall, which must never block a server's
 * loop (docs/transports/tls.md, "Non-blocking operations and the server"):
 *
 *   stalled  against the threaded server (bench-server) and the embedded one (bench-server -e,
 *            one thread serving from a poll() loop, so that one blocking read would stop it
 *            whole): 70 clients of each of three kinds - half a ClientHello record and then
 *            nothing; a whole ClientHello, the server's flight left unanswered; a handshake
 *            made to its end with a client certificate, then half a record - and then a
 *            client whose connect, handshake and call must take well under a second.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "bench.h"
#include "tls_test.h"

#define STALL_EACH 70

enum stall {
	STALL_HALF_HELLO, /* half a ClientHello record */
	STALL_FLIGHT, /* a whole ClientHello, then nothing */
	STALL_RECORD, /* the handshake done, then half a record */
};

/* A TCP connection to the address's port on loopback: the socket, or -1. */
static int
stall_connect(const char *address)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_port = htons((uint16_t)atoi(strrchr(address, ':') + 1));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The client's context for the stalls that speak TLS: the client certificate, the CA,
 * idlkit/1. */
static SSL_CTX *
stall_ctx(void)
{
	static const unsigned char alpn[] = "\x08idlkit/1";
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());

	if (c == NULL || SSL_CTX_use_certificate_chain_file(c, path("client.crt")) != 1 ||
	    SSL_CTX_use_PrivateKey_file(c, path("client.key"), SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(c, path("ca.crt"), NULL) != 1) {
		SSL_CTX_free(c);
		return NULL;
	}
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_alpn_protos(c, alpn, sizeof alpn - 1);
	return c;
}

/* One stalled client of `kind`: its socket, left open, or -1. */
static int
stall_one(const char *address, enum stall kind, SSL_CTX *ctx)
{
	static const unsigned char half_hello[] = { 0x16, 0x03, 0x01, 0x01, 0x00, 0x01, 0x00 };
	/* Application data, 100 bytes said, 10 sent. */
	static const unsigned char half_record[15] = { 0x17, 0x03, 0x03, 0x00, 0x64 };
	int fd = stall_connect(address), r = 0, ok;
	SSL *ssl;

	if (fd < 0 || kind == STALL_HALF_HELLO)
		return fd < 0 || write(fd, half_hello, sizeof half_hello) == sizeof half_hello
			       ? fd
			       : (close(fd), -1);
	if ((ssl = SSL_new(ctx)) == NULL) {
		close(fd);
		return -1;
	}
	if (kind == STALL_FLIGHT) {
		/* The ClientHello is made into memory and written by hand, so that nothing reads
		 * the server's flight: it is seen to come, and left there. */
		struct pollfd p = { .fd = fd, .events = POLLIN };
		BIO *mem = BIO_new(BIO_s_mem());
		char hello[4096];

		SSL_set_bio(ssl, mem, mem);
		SSL_set_connect_state(ssl);
		ERR_clear_error();
		r = SSL_do_handshake(ssl);
		ok = r != 1 && (r = BIO_read(mem, hello, sizeof hello)) > 0 &&
		     write(fd, hello, (size_t)r) == r && poll(&p, 1, 2000) == 1;
	} else {
		ok = SSL_set_fd(ssl, fd) == 1 && SSL_connect(ssl) == 1 &&
		     write(fd, half_record, sizeof half_record) == sizeof half_record;
	}
	/* The session goes; the socket, with its stall, stays. */
	SSL_set_quiet_shutdown(ssl, 1);
	SSL_free(ssl);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The stalls against the server at address, then a client that must be served at once. */
static void
stall_server(const char *what, const char *address)
{
	int fds[3 * STALL_EACH], n = 0, err, sum = 0;
	SSL_CTX *ctx = stall_ctx();
	idl_port_t port = NULL;
	int64_t t0, ms;

	CHECK(ctx != NULL, "a client context");
	for (int k = 0; ctx != NULL && k < 3; k++)
		for (int i = 0; i < STALL_EACH; i++)
			if ((fds[n] = stall_one(address, (enum stall)k, ctx)) >= 0)
				n++;
	CHECK(n == 3 * STALL_EACH, "%s: %d stalled clients of %d", what, n, 3 * STALL_EACH);
	usleep(200 * 1000);
	t0 = idl_now_ns();
	err = open_cfg(address, client_cfg("client", NULL), &port);
	if (err == 0) {
		err = bench_add(port, 40, 2, &sum);
		idl_port_close(port);
	}
	ms = ms_since(t0);
	CHECK(err == 0 && sum == 42, "%s: a client beside them: %s [%s]", what, idl_errname(err),
	      idl_errdetail());
	CHECK(ms < 1000, "%s: its connect, handshake and call: %lld ms", what, (long long)ms);
	printf("tls-test: stalled: %s: connect+handshake+call beside %d stalled clients: %lld "
	       "ms\n",
	       what, n, (long long)ms);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	SSL_CTX_free(ctx);
}

/* bench-server on the server certificate, threaded or embedded (-e). */
static int
stall_bench(struct srv *s, int embedded, char *address, size_t n)
{
	static char env[3][600];
	char *e[] = { env[0], env[1], env[2], NULL };
	char *argv[] = { IDL_TOP_BUILDDIR_DEFAULT "/examples/bench/bench-server", address, NULL,
			 NULL };

	if (embedded) {
		argv[1] = "-e";
		argv[2] = address;
	}
	snprintf(address, n, "tls:127.0.0.1:%d", free_port());
	snprintf(env[0], sizeof env[0], "IDL_TLS_CERT=%s", path("server.crt"));
	snprintf(env[1], sizeof env[1], "IDL_TLS_KEY=%s", path("server.key"));
	snprintf(env[2], sizeof env[2], "IDL_TLS_CA=%s", path("ca.crt"));
	return srv_start(s, argv, e, embedded ? "bench-e.log" : "bench.log");
}

void
case_stalled(void)
{
	char address[64];
	struct srv s;

	for (int embedded = 0; embedded < 2; embedded++) {
		CHECK(stall_bench(&s, embedded, address, sizeof address) == 0, "bench-server");
		stall_server(embedded ? "embedded server" : "threaded server", address);
		srv_stop(&s);
	}
}
