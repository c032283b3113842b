/*
 * floor_tls.c - the raw floor of tls: a TCP stream as tcp's floor (floor_sock.c: TCP_NODELAY,
 * the call's deadline on the client's socket) inside TLS 1.3 made by OpenSSL on the socket
 * itself, with what idlkit's tls: transport negotiates: the same certificates (the IDL_TLS_*
 * variables, which idlbench fills with a throwaway CA's when none are set, floor_tlscert.c),
 * mutual authentication, ALPN idlkit/1, OpenSSL's default cipher suite (both sides of idlkit
 * and of this floor negotiate TLS_AES_256_GCM_SHA384), one session ticket per handshake.
 * The frames are tcp's (a 4-byte length, then the message); a message is one SSL_write,
 * a receive SSL_read until it has the message. OpenSSL reads ahead (SSL_CTX_set_read_ahead):
 * one read() may bring several records, as idlkit's one recv() does.
 *
 * The connection rows (handshake, resumed) connect for every call: the TCP connect, the full
 * handshake - or, resumed, the last connection's session offered - one round trip, and the
 * close without a close_notify, as idlkit's port closes.
 *
 * Layer 1, the floors (ib_floor.h): it knows the base and the job it is given; it must not
 * know rows, columns, cells, runs or reports.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "ib_floor.h"

/* The error queue emptied before an SSL call only when it holds something, as tls: does
 * (ERR_clear_error() walks every slot of an empty queue too). */
static void
fl_tls_err_reset(void)
{
	if (ERR_peek_error() != 0)
		ERR_clear_error();
}

static SSL_CTX *fl_tls_ctx[2]; /* [0] a client's, [1] a server's: one each per process */
static int fl_tls_keep; /* the connection rows' resumed form: the last session kept */
static SSL_SESSION *fl_tls_last;

static int
fl_tls_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
	    unsigned inlen, void *arg)
{
	static const unsigned char ours[] = "\x08idlkit/1";
	unsigned char *o = NULL;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&o, outlen, ours, sizeof ours - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

/* The process's context of a side, made from the IDL_TLS_* variables: NULL when they do not
 * name usable files. */
static SSL_CTX *
fl_tls_context(int server)
{
	static const unsigned char alpn[] = "\x08idlkit/1";
	const char *cert = getenv("IDL_TLS_CERT"), *key = getenv("IDL_TLS_KEY");
	const char *ca = getenv("IDL_TLS_CA");
	SSL_CTX *c;

	if (fl_tls_ctx[server] != NULL)
		return fl_tls_ctx[server];
	c = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (c == NULL || cert == NULL || key == NULL || ca == NULL ||
	    SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(c, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(c, ca, NULL) != 1) {
		SSL_CTX_free(c);
		errno = EINVAL;
		return NULL;
	}
	SSL_CTX_set_read_ahead(c, 1);
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
			   NULL);
	if (server) {
		static const unsigned char sid[] = "idlkit/1";

		SSL_CTX_set_alpn_select_cb(c, fl_tls_alpn, NULL);
		SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_num_tickets(c, 1);
		SSL_CTX_set_session_id_context(c, sid, sizeof sid - 1);
	} else {
		SSL_CTX_set_alpn_protos(c, alpn, sizeof alpn - 1);
		SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
	}
	return fl_tls_ctx[server] = c;
}

void
fl_tls_keep_sessions(int on)
{
	fl_tls_keep = on;
}

/* The channel's session on its connected socket, the handshake made: 0 or -1. */
static int
fl_tls_session(struct fl_chan *c, int server)
{
	SSL_CTX *ctx = fl_tls_context(server);
	SSL *ssl;

	if (ctx == NULL || (ssl = SSL_new(ctx)) == NULL)
		return -1;
	c->tls = ssl;
	if (SSL_set_fd(ssl, c->fd) != 1)
		return -1;
	ERR_clear_error();
	if (server)
		return SSL_accept(ssl) == 1 ? 0 : (errno = EPROTO, -1);
	/* The server's certificate is for the address's host, 127.0.0.1. */
	if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1") != 1)
		return -1;
	if (fl_tls_keep && fl_tls_last != NULL)
		(void)SSL_set_session(ssl, fl_tls_last);
	return SSL_connect(ssl) == 1 ? 0 : (errno = EPROTO, -1);
}

static int
fl_tls_accept(struct fl_listener *l, struct fl_chan *c)
{
	return fl_tcp_ops.accept(l, c) != 0 ? -1 : fl_tls_session(c, 1);
}

static int
fl_tls_connect(struct fl_chan *c, const char *rest, size_t msgmax)
{
	return fl_tcp_ops.connect(c, rest, msgmax) != 0 ? -1 : fl_tls_session(c, 0);
}

static void
fl_tls_close(struct fl_chan *c)
{
	SSL *ssl = c->tls;

	if (ssl != NULL) {
		/* The resumed form offers this connection's ticket next (a session from the
		 * ticket the server sent, read with the reply). */
		if (fl_tls_keep) {
			SSL_SESSION_free(fl_tls_last);
			fl_tls_last = SSL_get1_session(ssl);
		}
		/* Closed as idlkit closes: no close_notify, the session kept resumable. */
		SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
		SSL_free(ssl);
		c->tls = NULL;
	}
	fl_tcp_ops.close(c);
}

/* Waits for the socket to be ready as the last SSL call of ret wants: 0, or -1 when it
 * failed otherwise. */
static int
fl_tls_wait(struct fl_chan *c, int ret)
{
	int e = SSL_get_error(c->tls, ret);
	struct pollfd p = { .fd = c->fd };

	if (e == SSL_ERROR_WANT_READ)
		p.events = POLLIN;
	else if (e == SSL_ERROR_WANT_WRITE)
		p.events = POLLOUT;
	else
		return -1;
	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static int
fl_tls_send(struct fl_chan *c, const void *buf, size_t len)
{
	size_t w;

	fl_tls_err_reset();
	return SSL_write_ex(c->tls, buf, len, &w) == 1 && w == len ? 0 : -1;
}

int
fl_tls_sendv(struct fl_chan *c, const void *a, size_t na, const void *b, size_t nb)
{
	return fl_tls_send(c, a, na) == 0 && fl_tls_send(c, b, nb) == 0 ? 0 : -1;
}

static long
fl_tls_recv(struct fl_chan *c, void *buf, size_t len, size_t cap)
{
	size_t got = 0, k;

	(void)cap;
	while (got < len) {
		fl_tls_err_reset();
		if (SSL_read_ex(c->tls, (char *)buf + got, len - got, &k) != 1)
			return SSL_get_error(c->tls, 0) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
		got += k;
	}
	return (long)got;
}

/*
 * --inflight's batches: the socket goes non-blocking for the pipelined loop, OpenSSL returns
 * after each record written (partial writes) and takes the rest of a record it could not
 * write from the same bytes on the next send. A send of the frames back to back stops where
 * the socket is full, as tcp's does; a receive takes what the records that came hold.
 */
static void
fl_tls_nb(struct fl_chan *c)
{
	if (!(fcntl(c->fd, F_GETFL) & O_NONBLOCK)) {
		(void)fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
		SSL_set_mode(c->tls,
			     SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	}
}

static long
fl_tls_send_batch(struct fl_chan *c, const void *buf, size_t len, unsigned count, int wait)
{
	size_t total = (size_t)count * len, done = (size_t)c->head, w;
	int r;

	fl_tls_nb(c);
	while (done < total) {
		fl_tls_err_reset();
		if ((r = SSL_write_ex(c->tls, (const char *)buf + done, total - done, &w)) == 1) {
			done += w;
			continue;
		}
		if (SSL_get_error(c->tls, r) == SSL_ERROR_WANT_WRITE && (!wait || done >= len))
			break;
		if (fl_tls_wait(c, r) != 0)
			return -1;
	}
	c->head = done % len;
	return (long)(done / len);
}

static long
fl_tls_recv_batch(struct fl_chan *c, void *buf, size_t len, size_t cap, unsigned max)
{
	size_t have = (size_t)c->tail, want = (size_t)max * len, k;
	int r;

	(void)cap;
	fl_tls_nb(c);
	while (have < want) {
		fl_tls_err_reset();
		if ((r = SSL_read_ex(c->tls, (char *)buf + have, want - have, &k)) == 1) {
			have += k;
			continue;
		}
		if (SSL_get_error(c->tls, r) == SSL_ERROR_ZERO_RETURN)
			return 0;
		if (SSL_get_error(c->tls, r) == SSL_ERROR_WANT_READ && have >= len)
			break;
		if (fl_tls_wait(c, r) != 0)
			return -1;
	}
	c->tail = have % len;
	return (long)(have / len);
}

static int
fl_tls_listen(struct fl_listener *l, const char *rest, size_t msgmax)
{
	return fl_tcp_ops.listen(l, rest, msgmax);
}

static void
fl_tls_unlisten(struct fl_listener *l)
{
	fl_tcp_ops.unlisten(l);
}

const struct fl_ops fl_tls_ops = {
	.scheme = "tls",
	.max_msg = SIZE_MAX,
	.frame = 4,
	.listen = fl_tls_listen,
	.accept = fl_tls_accept,
	.connect = fl_tls_connect,
	.send = fl_tls_send,
	.recv = fl_tls_recv,
	.close = fl_tls_close,
	.unlisten = fl_tls_unlisten,
	.send_batch = fl_tls_send_batch,
	.recv_batch = fl_tls_recv_batch,
	.batching = "one SSL_write of many frames, one SSL_read of what has arrived",
};
