/*
 * tls_resume.c - a tls: client's TLS 1.3 sessions, so that a reconnect (after the server
 * closed an idle connection, evicted it, or after a restart of the port) resumes its session
 * instead of paying a full handshake (docs/transports/tls.md, "Cheap reconnects").
 *
 * Each configuration's contexts keep a cache of the tickets its servers sent, one per address
 * and name verified (t->skey): the latest ticket of that key, used for every connection to it
 * until a newer one replaces it, it expires, a handshake to that key fails, or a reload of the
 * configuration forgets them all. At most TLS_CACHE_MAX keys; the least recently used goes.
 *
 * A resumed handshake shows no certificate of the server's to verify (OpenSSL may even show
 * none at all): the identity of a resumed connection is the one its session's first handshake
 * verified, kept with the ticket - the certificate, held, and whether it was verified.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "tls_impl.h"

struct tls_sess {
	char *key; /* NULL: a free entry */
	SSL_SESSION *sess;
	X509 *peer; /* the server's certificate of the first handshake (held), or NULL */
	int verified;
	uint64_t used;
};

static void
tls_sess_drop(struct tls_sess *e)
{
	free(e->key);
	SSL_SESSION_free(e->sess);
	X509_free(e->peer);
	memset(e, 0, sizeof *e);
}

void
idl__tls_cache_clear(struct tls_cache *c)
{
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; c->e != NULL && i < TLS_CACHE_MAX; i++)
		tls_sess_drop(&c->e[i]);
	free(c->e);
	c->e = NULL;
	pthread_mutex_unlock(&c->lock);
}

/* The entry of key, or NULL. Lock held. */
static struct tls_sess *
tls_sess_find(struct tls_cache *c, const char *key)
{
	for (unsigned i = 0; c->e != NULL && i < TLS_CACHE_MAX; i++)
		if (c->e[i].key != NULL && strcmp(c->e[i].key, key) == 0)
			return &c->e[i];
	return NULL;
}

/* Whether a session may still be offered: the server's lifetime for it has not passed. */
static int
tls_sess_live(const SSL_SESSION *s)
{
	return SSL_SESSION_is_resumable(s) &&
	       (time_t)(SSL_SESSION_get_time(s) + SSL_SESSION_get_timeout(s)) > time(NULL);
}

void
idl__tls_resume_offer(struct tls_conn *t)
{
	struct tls_cache *c = &t->ctx->cache;
	struct tls_sess *e;

	if (!t->ctx->resume)
		return;
	pthread_mutex_lock(&c->lock);
	if ((e = tls_sess_find(c, t->skey)) != NULL && !tls_sess_live(e->sess)) {
		tls_sess_drop(e);
		e = NULL;
	}
	if (e != NULL && SSL_set_session(t->ssl, e->sess) == 1) {
		e->used = ++c->clock;
		X509_free(t->res_peer);
		t->res_peer = e->peer;
		if (e->peer != NULL)
			X509_up_ref(e->peer);
		t->res_verified = e->verified;
	}
	pthread_mutex_unlock(&c->lock);
}

/* The entry for key: its own, a free one, or the least recently used one, emptied. Lock
 * held; NULL when out of memory. */
static struct tls_sess *
tls_sess_slot(struct tls_cache *c, const char *key)
{
	struct tls_sess *e = tls_sess_find(c, key), *old = NULL;

	if (e != NULL)
		return e;
	if (c->e == NULL && (c->e = calloc(TLS_CACHE_MAX, sizeof *c->e)) == NULL)
		return NULL;
	for (unsigned i = 0; i < TLS_CACHE_MAX; i++) {
		if (c->e[i].key == NULL)
			return &c->e[i];
		if (old == NULL || c->e[i].used < old->used)
			old = &c->e[i];
	}
	tls_sess_drop(old);
	return old;
}

int
idl__tls_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct tls_conn *t = SSL_get_app_data(ssl);
	struct tls_cache *c;
	struct tls_sess *e;
	X509 *peer;
	char *key;

	/* A TLS 1.3 ticket comes after the handshake, its identity known; a TLS 1.2 session is
	 * made inside the handshake, before that: it is not kept. */
	if (t == NULL || t->server || t->peer == NULL || !t->ctx->resume || !tls_sess_live(sess))
		return 0;
	c = &t->ctx->cache;
	peer = t->res_peer != NULL && SSL_session_reused(ssl) ? t->res_peer
							      : SSL_get0_peer_certificate(ssl);
	if ((key = strdup(t->skey)) == NULL)
		return 0;
	pthread_mutex_lock(&c->lock);
	if ((e = tls_sess_slot(c, key)) == NULL) {
		pthread_mutex_unlock(&c->lock);
		free(key);
		return 0;
	}
	tls_sess_drop(e);
	e->key = key;
	e->sess = sess;
	e->peer = peer;
	if (peer != NULL)
		X509_up_ref(peer);
	e->verified = t->peer->verified;
	e->used = ++c->clock;
	pthread_mutex_unlock(&c->lock);
	return 1;
}

void
idl__tls_resume_forget(struct tls_conn *t)
{
	struct tls_cache *c = &t->ctx->cache;
	struct tls_sess *e;

	pthread_mutex_lock(&c->lock);
	if ((e = tls_sess_find(c, t->skey)) != NULL)
		tls_sess_drop(e);
	pthread_mutex_unlock(&c->lock);
}
