/*
 * tls.c - the tls: transport, "tls:HOST:PORT" (the addresses of tcp:, sock/inet.h;
 * docs/transports/tls.md): tcp:'s frames (sock/stream.h) inside a TLS 1.3 session with
 * mutual authentication, the session a layer under the frames (tls_io.c).
 *
 * Every op is tcp:'s own general path with the layer under it; what is TLS's is the
 * handshake around them. A client connects its socket as tcp: does, then makes its handshake:
 * bounded by the connect's deadline (conn_connect), or step by step in the caller's loop
 * (conn_connect_nb, conn_connect_step). A server accepts as tcp: does and makes the
 * handshake in its receives, without waiting: a client that stalls it holds no thread, and
 * the server's handshake_ms limit ends it as it ends a client that says no hello.
 */
#include <config.h>

#include <arpa/inet.h>
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "sock/sys_raw.h"
#include "tls_impl.h"

/* An endpoint's or a connection's contexts from cfg, instead of those it had. */
static int
tls_ctx_take(struct tls_ctx **slot, struct idl_config *cfg)
{
	idl__tls_ctx_put(*slot);
	*slot = NULL;
	return idl__tls_ctx_get(cfg, slot);
}

static int
tls_ep_config(void *vep, struct idl_config *cfg)
{
	return tls_ctx_take(&((struct tls_ep *)vep)->ctx, cfg);
}

/* Whether ctx makes its context of a role: 0, or the error of its files. */
static int
tls_ctx_check(struct tls_ctx *ctx, int server)
{
	SSL_CTX *sc;
	int err;

	if ((sc = idl__tls_ctx_ssl(ctx, server, &err)) == NULL)
		return err;
	SSL_CTX_free(sc);
	return 0;
}

/* The server's context now: a missing certificate or a key others may read fails the
 * listen, not the first client. */
static int
tls_ep_context(struct tls_ep *ep)
{
	int err;

	if (ep->ctx == NULL && (err = idl__tls_ctx_get(NULL, &ep->ctx)) != 0)
		return err;
	return tls_ctx_check(ep->ctx, 1);
}

static int
tls_ep_listen(void *vep, const char *rest, const struct idl_listen_opts *opts)
{
	struct tls_ep *ep = vep;
	int err;

	ep->s.scheme = "tls";
	if ((err = tls_ep_context(ep)) != 0)
		return err;
	return idl__stream_ep_listen(&ep->s, rest, opts);
}

/* The endpoint's files read again (idl_server_reload()): new connections get them. */
static int
tls_ep_reload(void *vep)
{
	struct tls_ep *ep = vep;

	return ep->ctx != NULL ? idl__tls_ctx_reload(ep->ctx) : 0;
}

/* A listening socket a service manager passed (ListenStream=): tcp:'s endpoint, checked as
 * tcp: checks it (the socket is the endpoint's from the start), with the server's
 * context. */
static int
tls_ep_adopt(void *vep, int fd, const struct idl_listen_opts *opts)
{
	struct tls_ep *ep = vep;
	int err;

	ep->s.scheme = "tls";
	if ((err = idl__stream_ep_adopt(&ep->s, fd, opts)) != 0)
		return err;
	return tls_ep_context(ep);
}

static int
tls_ep_accept(void *vep, void *vconn)
{
	struct tls_ep *ep = vep;
	struct tls_conn *t = vconn;
	int err = idl__stream_ep_accept(&ep->s, &t->s);

	if (err != 0)
		return err;
	t->s.io = &idl__tls_io;
	t->ctx = ep->ctx;
	atomic_fetch_add(&ep->ctx->refs, 1);
	return idl__tls_session(t, 1);
}

static void
tls_ep_fini(void *vep)
{
	struct tls_ep *ep = vep;

	idl__stream_ep_fini(&ep->s);
	idl__tls_ctx_put(ep->ctx);
	ep->ctx = NULL;
}

static int
tls_conn_config(void *vconn, struct idl_config *cfg)
{
	return tls_ctx_take(&((struct tls_conn *)vconn)->ctx, cfg);
}

/* Before a client connects: its contexts (the environment's when it has no configuration),
 * made now so that a configuration's error shows before any packet, and the name the server's
 * certificate must have: the one set, else the address's host. */
static int
tls_client_prepare(struct tls_conn *t, const char *rest)
{
	const char *end;
	size_t n;
	int err;

	t->s.io = &idl__tls_io;
	if (t->ctx == NULL && (err = idl__tls_ctx_get(NULL, &t->ctx)) != 0)
		return err;
	if ((err = tls_ctx_check(t->ctx, 0)) != 0)
		return err;
	if (t->ctx->name != NULL) {
		snprintf(t->host, sizeof t->host, "%s", t->ctx->name);
	} else if (rest[0] == '[' && (end = strchr(rest, ']')) != NULL) {
		n = strcspn(rest + 1, "%]");
		snprintf(t->host, sizeof t->host, "%.*s", (int)n, rest + 1);
	} else if ((end = strrchr(rest, ':')) != NULL && end != rest) {
		snprintf(t->host, sizeof t->host, "%.*s", (int)(end - rest), rest);
	} else {
		snprintf(t->host, sizeof t->host, "127.0.0.1"); /* tls::PORT is loopback */
	}
	/* A session is resumed with the server it was made with, for the name verified then. */
	snprintf(t->skey, sizeof t->skey, "%s|%s", t->host, rest);
	return 0;
}

/* The client's session on its connected socket: the server's name to verify, and SNI. */
static int
tls_client_session(struct tls_conn *t)
{
	unsigned char ip[16];
	int literal, err;

	if ((err = idl__tls_session(t, 0)) != 0)
		return err;
	literal = inet_pton(AF_INET, t->host, ip) == 1 || inet_pton(AF_INET6, t->host, ip) == 1;
	if (t->ctx->verify == TLS_VERIFY_NAME) {
		X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);

		X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		if (literal ? X509_VERIFY_PARAM_set1_ip_asc(vp, t->host) != 1
			    : X509_VERIFY_PARAM_set1_host(vp, t->host, 0) != 1)
			return idl__fail(IDL_EADDRINVAL, "tls:%s: cannot verify the name %s",
					 t->s.name, t->host);
	}
	if (!literal)
		(void)SSL_set_tlsext_host_name(t->ssl, t->host);
	idl__tls_resume_offer(t);
	return 0;
}

static int
tls_conn_connect(void *vconn, const char *rest, struct idl_deadline *dl)
{
	struct tls_conn *t = vconn;
	int err;

	if ((err = tls_client_prepare(t, rest)) != 0 ||
	    (err = idl__stream_conn_connect(&t->s, rest, dl)) != 0 ||
	    (err = tls_client_session(t)) != 0)
		return err;
	return idl__tls_handshake(t, dl);
}

static int
tls_connect_nb(void *vconn, const char *rest)
{
	struct tls_conn *t = vconn;
	int err;

	if ((err = tls_client_prepare(t, rest)) != 0 ||
	    (err = idl__stream_connect_nb(&t->s, rest)) != 0 || (err = tls_client_session(t)) != 0)
		return err;
	return idl__tls_hs_step(t, 0);
}

static int
tls_connect_step(void *vconn)
{
	struct tls_conn *t = vconn;
	int err;

	if (t->ssl == NULL) {
		/* The socket still connects. */
		if ((err = idl__stream_connect_step(&t->s)) != 0 ||
		    (err = tls_client_session(t)) != 0)
			return err;
	}
	return idl__tls_hs_step(t, 0);
}

/* Whether records or plaintext wait in the layer, which no readiness reports: the event
 * loops must receive again before they wait (only complete records count: a record still
 * coming is the socket's to report). */
static int
tls_more(struct tls_conn *t)
{
	int more;

	pthread_mutex_lock(&t->lock);
	more = t->in_len != 0 || SSL_pending(t->ssl) > 0;
	pthread_mutex_unlock(&t->lock);
	return more;
}

static int
tls_conn_fd(void *vconn, unsigned *events)
{
	struct tls_conn *t = vconn;
	int fd = idl__stream_conn_fd(&t->s, events), held;

	switch (atomic_load(&t->state)) {
	case TLS_ST_NONE:
		/* A client's socket connects: writability ends it. */
		*events = IDL_TR_EV_IN | IDL_TR_EV_OUT;
		break;
	case TLS_ST_HS:
		/* The handshake waits for the peer's records, or for room for its own. */
		pthread_mutex_lock(&t->lock);
		held = t->bl_len != 0;
		pthread_mutex_unlock(&t->lock);
		*events = IDL_TR_EV_IN | (held ? IDL_TR_EV_OUT : IDL_TR_EV_WAITIN);
		break;
	case TLS_ST_UP:
		pthread_mutex_lock(&t->lock);
		held = t->bl_len != 0;
		pthread_mutex_unlock(&t->lock);
		if (held)
			*events |= IDL_TR_EV_OUT;
		if (!(*events & IDL_TR_EV_MORE) && tls_more(t))
			*events |= IDL_TR_EV_MORE;
		break;
	default:
		break;
	}
	return fd;
}

/* Before a send: the connection must be up, and a backlog of a batch or more out (a smaller
 * one, the handshake's last flight, goes with the frame). 0, 1 while that waits for room,
 * or an error. */
static int
tls_send_ready(struct tls_conn *t)
{
	int fl;

	if (atomic_load(&t->state) != TLS_ST_UP)
		return atomic_load(&t->state) == TLS_ST_FAILED ? idl__fail(t->err, "%s", t->why)
							       : IDL_EAGAIN;
	pthread_mutex_lock(&t->lock);
	fl = t->bl_len >= TLS_BATCH ? idl__tls_flush(t) : 0;
	pthread_mutex_unlock(&t->lock);
	return fl < 0 ? idl__stream_conn_err(&t->s, t->werr) : fl;
}

static int
tls_conn_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct tls_conn *t = vconn;
	int err = tls_send_ready(t);

	if (err == IDL_EAGAIN && idl__tls_goodbye_plain(t, m))
		return 0;
	/* Only a server's goodbye can come before its handshake ended: it is dropped when
	 * OpenSSL has written already. */
	if (err == IDL_EAGAIN && atomic_load(&t->state) != TLS_ST_UP) {
		if (idl__desc_msg(m->data, m->len))
			idl__msg_release_sent(m->data);
		return IDL_ETIMEDOUT;
	}
	if (err < 0) {
		if (idl__desc_msg(m->data, m->len))
			idl__msg_release_sent(m->data);
		return err;
	}
	return idl__stream_send_gen(&t->s, m, dl);
}

static int
tls_conn_sendv_nb(void *vconn, const struct idl_xmsg *msgs, unsigned n)
{
	struct tls_conn *t = vconn;
	int err = tls_send_ready(t);

	if (err == IDL_EAGAIN && n == 1 && idl__tls_goodbye_plain(t, &msgs[0]))
		return 1;
	if (err == 1 || err == IDL_EAGAIN)
		return n == 0 ? IDL_EAGAIN : 0;
	if (err < 0)
		return err;
	return idl__stream_sendv_nb_gen(&t->s, msgs, n, IDL_RAW_NONE);
}

static int
tls_conn_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct tls_conn *t = vconn;
	int err;

	if (atomic_load(&t->state) != TLS_ST_UP && (err = idl__tls_handshake(t, dl)) != 0)
		return err;
	return idl__stream_recv_gen(&t->s, m, dl, IDL_RAW_NONE, 0);
}

/* A receive without blocking, or waiting up to timeout_ms (a server's busy connection).
 * When nothing came the connection is quiet - the server gives it back to its set, where it
 * may stay idle for hours: the layer's buffers go back until the peer sends again. */
static int
tls_recv_quiet(struct tls_conn *t, struct idl_xmsg *m, int timeout_ms)
{
	int err;

	/* A server keeps its ticket for its first reply; a client's connect in its loop sends
	 * its Finished at once, as nothing may follow soon. */
	if (atomic_load(&t->state) != TLS_ST_UP && (err = idl__tls_hs_step(t, t->server)) != 0)
		return err;
	err = idl__stream_recv_nb_gen(&t->s, m, timeout_ms, IDL_RAW_NONE);
	if (err == IDL_EAGAIN) {
		pthread_mutex_lock(&t->lock);
		idl__tls_trim(t);
		pthread_mutex_unlock(&t->lock);
	}
	return err;
}

static int
tls_conn_recv_nb(void *vconn, struct idl_xmsg *m)
{
	return tls_recv_quiet(vconn, m, 0);
}

static int
tls_conn_recv_wait(void *vconn, struct idl_xmsg *m, int timeout_ms)
{
	return tls_recv_quiet(vconn, m, timeout_ms);
}

static void
tls_conn_fini(void *vconn)
{
	struct tls_conn *t = vconn;

	/* OpenSSL marks the session of a connection freed without a close_notify as not to be
	 * resumed; a connection that ends while up (an idle close, an eviction, the port's
	 * close) ends as the frames say, so its session stays good. One that failed loses it. */
	if (t->ssl != NULL && atomic_load(&t->state) == TLS_ST_UP)
		SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(t->ssl);
	t->ssl = NULL;
	free(t->in);
	free(t->bl);
	free(t->peer);
	X509_free(t->res_peer);
	t->in = t->bl = NULL;
	t->peer = NULL;
	t->res_peer = NULL;
	if (t->lock_made)
		pthread_mutex_destroy(&t->lock);
	t->lock_made = 0;
	idl__tls_ctx_put(t->ctx);
	t->ctx = NULL;
	idl__stream_conn_fini(&t->s);
}

static const struct idl_transport tls_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "tls",
	/* As tcp:'s: the length prefix keeps the framing across an oversized message. */
	.flags = IDL_TRF_DESC,
	.ep_size = sizeof(struct tls_ep),
	.conn_size = sizeof(struct tls_conn),
	.ep_listen = tls_ep_listen,
	.ep_fd = idl__stream_ep_fd,
	.ep_accept = tls_ep_accept,
	.ep_close = idl__stream_ep_close,
	.ep_fini = tls_ep_fini,
	.conn_connect = tls_conn_connect,
	.conn_send = tls_conn_send,
	.conn_recv = tls_conn_recv,
	.conn_close = idl__stream_conn_close,
	.conn_fini = tls_conn_fini,
	.conn_cred = idl__stream_conn_cred,
	.conn_fd = tls_conn_fd,
	.conn_sendv_nb = tls_conn_sendv_nb,
	.conn_recv_nb = tls_conn_recv_nb,
	.conn_recv_wait = tls_conn_recv_wait,
	.conn_connect_nb = tls_connect_nb,
	.conn_connect_step = tls_connect_step,
	.ep_config = tls_ep_config,
	.conn_config = tls_conn_config,
	.conn_tls_peer = idl__tls_conn_peer,
	.ep_adopt = tls_ep_adopt,
	.ep_reload = tls_ep_reload,
};

void
idl__tls_register(void)
{
	int err = idl_transport_register(&tls_transport);

	assert(err == 0);
	(void)err;
}
