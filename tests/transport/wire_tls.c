/*
 * wire_tls.c - the tls: row's wire (conformance.h, struct tt_wire_ops): TLS 1.3 sessions the
 * test makes itself with OpenSSL, so that a frame the transport's own send would refuse (a
 * message whose descriptors lie) reaches the other side inside TLS, as a hostile peer that
 * holds a valid certificate would send it. Both sides use the suite's certificates
 * (tests/lib/tls_certs.c: IDL_TLS_CERT, IDL_TLS_KEY, IDL_TLS_CA), verify each other's chain,
 * and agree on the ALPN protocol idlkit/1, as the transport requires; a client checks the
 * server's certificate for the address's host.
 *
 * Sockets are non-blocking; every wait is a poll() bounded by TT_RAW_MS.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* accept4 */
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "conformance.h"

struct tt_tls_wire {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
};

static const unsigned char tt_alpn[] = "\x08idlkit/1";

static int
tt_tls_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
	    unsigned inlen, void *arg)
{
	unsigned char *o = NULL;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&o, outlen, tt_alpn, sizeof tt_alpn - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

/* A context for one side with the suite's certificates, or NULL (said). */
static SSL_CTX *
tt_tls_ctx(int server)
{
	const char *cert = getenv("IDL_TLS_CERT"), *key = getenv("IDL_TLS_KEY");
	const char *ca = getenv("IDL_TLS_CA");
	SSL_CTX *c = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());

	if (c == NULL || cert == NULL || key == NULL || ca == NULL ||
	    SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(c, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(c, ca, NULL) != 1) {
		fprintf(stderr,
			"conformance: tls wire: no context with the suite's certificates\n");
		ERR_print_errors_fp(stderr);
		SSL_CTX_free(c);
		return NULL;
	}
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
			   NULL);
	if (server) {
		SSL_CTX_set_alpn_select_cb(c, tt_tls_alpn, NULL);
		SSL_CTX_set_num_tickets(c, 0);
	} else {
		SSL_CTX_set_alpn_protos(c, tt_alpn, sizeof tt_alpn - 1);
	}
	return c;
}

/* The host and port of "tls:HOST:PORT" into host (an IPv6 literal without its brackets). */
static int
tt_tls_split(const char *address, char *host, size_t hn, const char **port)
{
	const char *rest = strchr(address, ':'), *colon;
	size_t n;

	if (rest == NULL || (colon = strrchr(++rest, ':')) == NULL)
		return -1;
	n = (size_t)(colon - rest);
	if (n >= 2 && rest[0] == '[' && rest[n - 1] == ']') {
		rest++;
		n -= 2;
	}
	if (n >= hn)
		return -1;
	memcpy(host, rest, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

static int64_t
tt_tls_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* After an SSL call that returned r: waits for what it wants, until `end`. 0 to call it again,
 * -1 when it failed or the time is up. */
static int
tt_tls_wait(struct tt_tls_wire *w, int r, int64_t end)
{
	int e = SSL_get_error(w->ssl, r), left = (int)(end - tt_tls_ms());
	struct pollfd p = { .fd = w->fd };

	if (e == SSL_ERROR_WANT_READ)
		p.events = POLLIN;
	else if (e == SSL_ERROR_WANT_WRITE)
		p.events = POLLOUT;
	else
		return -1;
	return left > 0 && poll(&p, 1, left) > 0 ? 0 : -1;
}

static struct tt_tls_wire *
tt_tls_new(int fd, int server)
{
	struct tt_tls_wire *w = calloc(1, sizeof *w);

	if (w == NULL) {
		close(fd);
		return NULL;
	}
	w->fd = fd;
	if ((w->ctx = tt_tls_ctx(server)) == NULL || (w->ssl = SSL_new(w->ctx)) == NULL ||
	    SSL_set_fd(w->ssl, fd) != 1) {
		SSL_free(w->ssl);
		SSL_CTX_free(w->ctx);
		close(fd);
		free(w);
		return NULL;
	}
	if (server)
		SSL_set_accept_state(w->ssl);
	else
		SSL_set_connect_state(w->ssl);
	return w;
}

static void
tt_tls_close(void *vw)
{
	struct tt_tls_wire *w = vw;

	if (w == NULL)
		return;
	SSL_free(w->ssl);
	SSL_CTX_free(w->ctx);
	close(w->fd);
	free(w);
}

/* A socket for address, connected, or bound and listening: a non-blocking fd, or -1. */
static int
tt_tls_socket(const char *address, int listening)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	const char *port;
	char host[256];
	int fd = -1, one = 1;

	if (tt_tls_split(address, host, sizeof host, &port) != 0 ||
	    getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && listening)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd >= 0 && (listening ? bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 8) != 0
				  : connect(fd, ai->ai_addr, ai->ai_addrlen) != 0)) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd >= 0)
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static void *
tt_tls_connect(const char *address)
{
	int64_t end = tt_tls_ms() + TT_RAW_MS;
	const char *port;
	char host[256];
	struct tt_tls_wire *w;
	int fd = tt_tls_socket(address, 0), r;

	if (fd < 0 || tt_tls_split(address, host, sizeof host, &port) != 0 ||
	    (w = tt_tls_new(fd, 0)) == NULL) {
		fprintf(stderr, "conformance: tls wire: cannot connect to %s\n", address);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	/* The server's certificate is for the address's host (the suite's are for 127.0.0.1). */
	if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(w->ssl), host) != 1)
		(void)X509_VERIFY_PARAM_set1_host(SSL_get0_param(w->ssl), host, 0);
	while ((ERR_clear_error(), r = SSL_do_handshake(w->ssl)) != 1)
		if (tt_tls_wait(w, r, end) != 0) {
			fprintf(stderr, "conformance: tls wire: the handshake with %s failed\n",
				address);
			ERR_print_errors_fp(stderr);
			tt_tls_close(w);
			return NULL;
		}
	return w;
}

static int
tt_tls_listen(const char *address)
{
	return tt_tls_socket(address, 1);
}

static void *
tt_tls_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	return fd >= 0 ? tt_tls_new(fd, 1) : NULL;
}

static int
tt_tls_ready(void *vw)
{
	struct tt_tls_wire *w = vw;
	unsigned char c;
	size_t k;
	int r, e;

	ERR_clear_error();
	if (!SSL_is_init_finished(w->ssl) && (r = SSL_do_handshake(w->ssl)) != 1) {
		e = SSL_get_error(w->ssl, r);
		return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
	}
	if (SSL_peek_ex(w->ssl, &c, 1, &k) == 1)
		return 1;
	e = SSL_get_error(w->ssl, 0);
	return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* Writes or reads exactly n bytes: 0, or -1. */
static int
tt_tls_io(struct tt_tls_wire *w, unsigned char *b, size_t n, int writing)
{
	int64_t end = tt_tls_ms() + TT_RAW_MS;
	size_t k;
	int r;

	while (n > 0) {
		ERR_clear_error();
		r = writing ? SSL_write_ex(w->ssl, b, n, &k) : SSL_read_ex(w->ssl, b, n, &k);
		if (r == 1) {
			b += k;
			n -= k;
		} else if (tt_tls_wait(w, 0, end) != 0) {
			return -1;
		}
	}
	return 0;
}

static int
tt_tls_write(void *w, const void *b, size_t n)
{
	return tt_tls_io(w, (unsigned char *)(uintptr_t)b, n, 1);
}

static int
tt_tls_read(void *w, void *b, size_t n)
{
	return tt_tls_io(w, b, n, 0);
}

static int
tt_tls_fd(void *vw)
{
	return ((struct tt_tls_wire *)vw)->fd;
}

const struct tt_wire_ops tt_tls_wire = {
	.connect = tt_tls_connect,
	.listen = tt_tls_listen,
	.accept = tt_tls_accept,
	.ready = tt_tls_ready,
	.write = tt_tls_write,
	.read = tt_tls_read,
	.fd = tt_tls_fd,
	.close = tt_tls_close,
};
