/*
 * tls_hs.c - the tls: handshake, step by step without waiting (a server's event loop, a
 * pollable port's connect) or to its end under a deadline, and what each way of failing
 * means: the error every later op of the connection reports (docs/transports/tls.md,
 * "Errors").
 *
 * Both sides require the ALPN protocol idlkit/1: a server refuses a client that offers
 * another (alert no_application_protocol) or none, a client refuses a server that agreed on
 * none. A server looks at the first byte a client sends: a plaintext frame (a tcp: client)
 * is answered in plaintext, so that its hello fails with IDL_ETLS instead of a closed
 * connection.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "tls_impl.h"

/* A TLS record of type handshake starts with this byte; a tcp: frame never does (its length
 * would be over the frame limit). */
#define TLS_RT_HANDSHAKE 0x16
#define TLS_RT_ALERT 0x15

int
idl__tls_failed(struct tls_conn *t, int err, const char *fmt, ...)
{
	int st = atomic_load(&t->state);
	char why[sizeof t->why];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	/* A send and a receive may fail at once: the first to fail says why for both. */
	do {
		if (st == TLS_ST_FAILED)
			return idl__fail(t->err, "%s", t->why);
		if (st == TLS_ST_FAILING)
			return idl__fail(err, "%s", why);
	} while (!atomic_compare_exchange_weak(&t->state, &st, TLS_ST_FAILING));
	memcpy(t->why, why, sizeof why);
	t->err = err;
	atomic_store(&t->state, TLS_ST_FAILED);
	return idl__fail(err, "%s", why);
}

int
idl__tls_verify_cb(int ok, X509_STORE_CTX *x)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
	struct tls_conn *t = ssl != NULL ? SSL_get_app_data(ssl) : NULL;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	X509 *c;

	if (t == NULL)
		return ok;
	/* Nothing verified: the chain's errors stand in the verify result, so the peer is
	 * reported as not verified, but the handshake goes on. */
	if (t->ctx->verify == TLS_VERIFY_NONE)
		ok = 1;
	if (ok && t->ctx->has_pin && X509_STORE_CTX_get_error_depth(x) == 0) {
		c = X509_STORE_CTX_get_current_cert(x);
		if (c == NULL || X509_digest(c, EVP_sha256(), md, &n) != 1 || n != 32 ||
		    memcmp(md, t->ctx->pin, 32) != 0) {
			t->pin_failed = 1;
			X509_STORE_CTX_set_error(x, X509_V_ERR_APPLICATION_VERIFICATION);
			ok = 0;
		}
	}
	return ok;
}

int
idl__tls_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		 const unsigned char *in, unsigned inlen, void *arg)
{
	static const unsigned char ours[] = "\x08" TLS_ALPN;
	unsigned char *o = NULL;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&o, outlen, ours, sizeof ours - 1, in, inlen) ==
	    OPENSSL_NPN_NEGOTIATED) {
		*out = o;
		return SSL_TLSEXT_ERR_OK;
	}
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* What a verify result says of the peer's certificate. */
static const char *
tls_verify_why(const struct tls_conn *t, long vr, char *buf, size_t n)
{
	switch (vr) {
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_CERT_UNTRUSTED:
		return "unknown CA: it is not issued by a trusted CA";
	case X509_V_ERR_HOSTNAME_MISMATCH:
	case X509_V_ERR_IP_ADDRESS_MISMATCH:
		snprintf(buf, n, "name mismatch: it is not for %s", t->host);
		return buf;
	case X509_V_ERR_CERT_HAS_EXPIRED:
		return "expired";
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return "not yet valid";
	case X509_V_ERR_CERT_REVOKED:
		return "revoked";
	case X509_V_ERR_UNABLE_TO_GET_CRL:
		return "no revocation list for its issuer among the CRLs";
	case X509_V_ERR_CRL_HAS_EXPIRED:
		return "the revocation list of its issuer has expired";
	default:
		snprintf(buf, n, "%s", X509_verify_cert_error_string(vr));
		return buf;
	}
}

/* An alert the peer sent, which ended the session. */
static int
tls_alert(struct tls_conn *t, int alert, const char *peer)
{
	const char *what = SSL_alert_desc_string_long(alert);

	switch (alert) {
	case SSL3_AD_BAD_CERTIFICATE:
	case SSL3_AD_UNSUPPORTED_CERTIFICATE:
	case SSL3_AD_CERTIFICATE_REVOKED:
	case SSL3_AD_CERTIFICATE_EXPIRED:
	case SSL3_AD_CERTIFICATE_UNKNOWN:
	case TLS1_AD_UNKNOWN_CA:
	case TLS1_AD_ACCESS_DENIED:
		return idl__tls_failed(t, IDL_ECERT,
				       "tls:%s: the %s refused this side's certificate (alert: %s)",
				       t->s.name, peer, what);
	case TLS13_AD_CERTIFICATE_REQUIRED:
		return idl__tls_failed(t, IDL_ECERT,
				       "tls:%s: the server requires a client certificate, and "
				       "this client has none (IDL_TLS_CERT) (alert: %s)",
				       t->s.name, what);
	case TLS1_AD_NO_APPLICATION_PROTOCOL:
		return idl__tls_failed(t, IDL_ETLS,
				       "tls:%s: the %s refused the ALPN protocol " TLS_ALPN
				       " (alert: %s)",
				       t->s.name, peer, what);
	case TLS1_AD_PROTOCOL_VERSION:
		return idl__tls_failed(t, IDL_ETLS,
				       "tls:%s: no TLS version in common with the %s (alert: %s)",
				       t->s.name, peer, what);
	case SSL3_AD_BAD_RECORD_MAC:
	case TLS1_AD_DECRYPT_ERROR:
		return idl__tls_failed(t, IDL_EINTEGRITY,
				       "tls:%s: the %s found a record changed on the way (alert: "
				       "%s)",
				       t->s.name, peer, what);
	default:
		return idl__tls_failed(t, IDL_ETLS, "tls:%s: the %s ended the session (alert: %s)",
				       t->s.name, peer, what);
	}
}

int
idl__tls_ssl_error(struct tls_conn *t, int e)
{
	unsigned long code = ERR_peek_error();
	int reason = ERR_GET_REASON(code), up = atomic_load(&t->state) == TLS_ST_UP;
	const char *peer = t->server ? "client" : "server";
	long vr = t->ssl != NULL ? SSL_get_verify_result(t->ssl) : X509_V_OK;
	char buf[320], why[256];

	if (atomic_load(&t->state) == TLS_ST_FAILED)
		return idl__fail(t->err, "%s", t->why);
	if (t->pin_failed)
		return idl__tls_failed(t, IDL_ECERT,
				       "tls:%s: the %s's certificate does not have the pinned "
				       "SHA-256 fingerprint (IDL_TLS_PIN)",
				       t->s.name, peer);
	if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED && vr != X509_V_OK)
		return idl__tls_failed(t, IDL_ECERT, "tls:%s: the %s's certificate: %s", t->s.name,
				       peer, tls_verify_why(t, vr, buf, sizeof buf));
	if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)
		return idl__tls_failed(t, IDL_ECERT,
				       "tls:%s: the client sent no certificate, and this endpoint "
				       "requires one",
				       t->s.name);
	if (reason > SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256)
		return tls_alert(t, reason - SSL_AD_REASON_OFFSET, peer);
	if (reason == SSL_R_NO_APPLICATION_PROTOCOL)
		return idl__tls_failed(t, IDL_ETLS,
				       "tls:%s: the client offered no ALPN protocol " TLS_ALPN
				       " (not an idlkit client)",
				       t->s.name);
	if (reason == SSL_R_UNSUPPORTED_PROTOCOL || reason == SSL_R_NO_PROTOCOLS_AVAILABLE)
		return idl__tls_failed(t, IDL_ETLS,
				       "tls:%s: no TLS version in common with the %s (this side "
				       "takes TLS %s and later: IDL_TLS_MIN_VERSION)",
				       t->s.name, peer,
				       t->ctx->min_version == TLS1_2_VERSION ? "1.2" : "1.3");
	if (reason == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC)
		return idl__tls_failed(t, IDL_EINTEGRITY,
				       "tls:%s: a TLS record failed its integrity check: it was "
				       "changed on the way",
				       t->s.name);
	ERR_error_string_n(code, why, sizeof why);
	if (up || e == SSL_ERROR_SSL) {
		/* After the handshake, a record that OpenSSL refuses was not what the peer
		 * sent (a changed header, a cut record) or the peer is broken. */
		if (up)
			return idl__tls_failed(t, IDL_EINTEGRITY,
					       "tls:%s: a TLS record was refused (%s)", t->s.name,
					       why);
		if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_UNKNOWN_PROTOCOL ||
		    reason == SSL_R_HTTP_REQUEST || reason == SSL_R_PACKET_LENGTH_TOO_LONG)
			return idl__tls_failed(t, IDL_ETLS,
					       "tls:%s: the %s does not speak TLS (%s)", t->s.name,
					       peer, why);
	}
	return idl__tls_failed(t, IDL_ETLS, "tls:%s: the TLS handshake with the %s failed (%s)",
			       t->s.name, peer, code != 0 ? why : "no detail");
}

/*
 * A server's first bytes from a client that does not speak TLS: an idlkit tcp: client's
 * hello frame gets a plaintext reply to it with IDL_ETLS, which its call reports; anything
 * else is only refused. Best effort, without waiting.
 */
static int
tls_plain_peer(struct tls_conn *t)
{
	const unsigned char *p = t->in + t->in_off;
	idl_msg_header_t h;
	uint32_t len;

	if (t->in_len >= 4 + IDL_MSG_HEADER_SIZE) {
		memcpy(&len, p, 4);
		memcpy(&h, p + 4, sizeof h);
		if (ntohl(len) >= IDL_MSG_HEADER_SIZE && h.magic == IDL_MSG_MAGIC &&
		    h.order == IDL_ORDER_NATIVE && h.kind == IDL_KIND_HELLO) {
			unsigned char r[4 + IDL_MSG_HEADER_SIZE];
			idl_msg_header_t rh;

			memset(&rh, 0, sizeof rh);
			rh.magic = IDL_MSG_MAGIC;
			rh.order = IDL_ORDER_NATIVE;
			rh.kind = IDL_KIND_HELLO_REPLY;
			rh.size = IDL_MSG_HEADER_SIZE;
			rh.id = (int32_t)((uint32_t)h.id + IDL_REPLY_ID_OFFSET);
			rh.seqno = h.seqno;
			rh.retcode = IDL_ETLS;
			len = htonl(IDL_MSG_HEADER_SIZE);
			memcpy(r, &len, 4);
			memcpy(r + 4, &rh, sizeof rh);
			(void)idl__sys_send(t->s.fd, r, sizeof r, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
	}
	return idl__tls_failed(t, IDL_ETLS,
			       "tls:%s: a client that does not speak TLS (a tcp: client?) on a "
			       "tls: endpoint",
			       t->s.name);
}

/* The peer went away during the handshake (a reset, a failed send): `why`. */
static int
tls_hs_gone(struct tls_conn *t, const char *why)
{
	return idl__tls_failed(t, IDL_ETLS,
			       "tls:%s: the %s went away during the TLS handshake (%s)", t->s.name,
			       t->server ? "client" : "server", why);
}

int
idl__tls_goodbye_plain(struct tls_conn *t, const struct idl_xmsg *m)
{
	const idl_msg_header_t *h = m->data;
	unsigned char r[4 + IDL_MSG_HEADER_SIZE + 8 + IDL_GOODBYE_TEXT_MAX];
	uint32_t len = htonl((uint32_t)m->len);
	int gone;

	if (!t->server || m->len < IDL_MSG_HEADER_SIZE || m->len > sizeof r - 4 ||
	    h->magic != IDL_MSG_MAGIC || h->order != IDL_ORDER_NATIVE ||
	    h->kind != IDL_KIND_GOODBYE)
		return 0;
	pthread_mutex_lock(&t->lock);
	gone = t->wrote || atomic_load(&t->state) != TLS_ST_HS;
	t->wrote = 1;
	pthread_mutex_unlock(&t->lock);
	if (gone)
		return 0;
	memcpy(r, &len, 4);
	memcpy(r + 4, m->data, m->len);
	(void)idl__sys_send(t->s.fd, r, 4 + m->len, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)idl__tls_failed(t, IDL_ELIMIT, "tls:%s: refused before the TLS handshake", t->s.name);
	return 1;
}

/*
 * A client's first bytes from the server: a TLS record, or a server's plaintext goodbye (a
 * refusal at its limits before any handshake: idl__tls_goodbye_plain()), which ends the
 * connect with its reason; anything else is left to OpenSSL, which refuses it. 0 to go on with
 * the handshake, 1 while the bytes that decide have not all come, or the error.
 */
static int
tls_client_look(struct tls_conn *t)
{
	const unsigned char *p = t->in + t->in_off;
	idl_msg_header_t h;
	uint32_t len, tl = 0;

	if (p[0] == TLS_RT_HANDSHAKE || p[0] == TLS_RT_ALERT) {
		t->looked = 1;
		return 0;
	}
	if (t->in_len < 4 + IDL_MSG_HEADER_SIZE) {
		t->looked = t->in_eof;
		return !t->in_eof;
	}
	memcpy(&len, p, 4);
	memcpy(&h, p + 4, sizeof h);
	len = ntohl(len);
	if (h.magic != IDL_MSG_MAGIC || h.order != IDL_ORDER_NATIVE || h.kind != IDL_KIND_GOODBYE ||
	    len != h.size || len < IDL_MSG_HEADER_SIZE + 8 ||
	    len > IDL_MSG_HEADER_SIZE + 8 + IDL_GOODBYE_TEXT_MAX) {
		t->looked = 1;
		return 0;
	}
	if (t->in_len < 4 + len) {
		t->looked = t->in_eof;
		return !t->in_eof;
	}
	memcpy(&tl, p + 4 + IDL_MSG_HEADER_SIZE + 4, 4);
	if (tl > len - IDL_MSG_HEADER_SIZE - 8)
		tl = 0;
	t->looked = 1;
	return idl__tls_failed(
		t,
		h.id == IDL_GOODBYE_CONNECTIONS || h.id == IDL_GOODBYE_PER_ADDRESS ? IDL_ELIMIT
										   : IDL_ETLS,
		"tls:%s: the server refused the connection before the TLS handshake: "
		"%.*s",
		t->s.name, (int)tl, (const char *)p + 4 + IDL_MSG_HEADER_SIZE + 8);
}

/* The handshake is done: the protocol agreed on, and the peer's identity kept. Lock held. */
static int
tls_hs_done(struct tls_conn *t)
{
	const unsigned char *p = NULL;
	unsigned n = 0;

	SSL_get0_alpn_selected(t->ssl, &p, &n);
	if (n != sizeof TLS_ALPN - 1 || memcmp(p, TLS_ALPN, n) != 0)
		return idl__tls_failed(t, IDL_ETLS,
				       t->server ? "tls:%s: the client offered no ALPN protocol "
						   "" TLS_ALPN " (not an idlkit client)"
						 : "tls:%s: the server agreed on no ALPN protocol "
						   "" TLS_ALPN " (not an idlkit server)",
				       t->s.name);
	if (idl__tls_peer_make(t) != 0)
		return idl__tls_failed(t, IDL_ENOMEM, "tls:%s: out of memory", t->s.name);
	atomic_store(&t->state, TLS_ST_UP);
	return 0;
}

int
idl__tls_hs_step(struct tls_conn *t)
{
	for (;;) {
		int r, e = SSL_ERROR_NONE, err = 0;
		ssize_t n;

		switch (atomic_load(&t->state)) {
		case TLS_ST_UP:
			return 0;
		case TLS_ST_FAILED:
			return idl__fail(t->err, "%s", t->why);
		default:
			break;
		}
		/* The peer's first bytes, before OpenSSL reads them: a peer that does not speak
		 * TLS (a server's: a tcp: client), or a server's plaintext goodbye (a client's). */
		if (!t->looked && t->in_len > 0) {
			if (t->server && t->in[t->in_off] != TLS_RT_HANDSHAKE)
				return tls_plain_peer(t);
			err = t->server ? (t->looked = 1, 0) : tls_client_look(t);
			if (err < 0)
				return err;
			if (err == 1)
				goto more;
		}
		pthread_mutex_lock(&t->lock);
		if (idl__tls_flush(t) < 0) {
			pthread_mutex_unlock(&t->lock);
			return tls_hs_gone(t, strerror(t->werr));
		}
		ERR_clear_error();
		r = SSL_do_handshake(t->ssl);
		if (r == 1)
			err = tls_hs_done(t);
		else if ((e = SSL_get_error(t->ssl, r)) != SSL_ERROR_WANT_READ)
			err = t->werr != 0 ? tls_hs_gone(t, strerror(t->werr))
					   : idl__tls_ssl_error(t, e);
		pthread_mutex_unlock(&t->lock);
		if (r == 1 || err != 0)
			return err;
	more:
		n = idl__tls_fill(t, MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? IDL_EAGAIN : tls_hs_gone(t, strerror(errno));
		if (n == 0 && !t->looked && t->in_len > 0)
			continue; /* what came before the end decides */
		if (n == 0)
			return idl__tls_failed(
				t, IDL_ETLS,
				t->server ? "tls:%s: the client closed the connection "
					    "during the TLS handshake"
					  : "tls:%s: the server closed the connection "
					    "during the TLS handshake (a tcp: endpoint?)",
				t->s.name);
	}
}

int
idl__tls_handshake(struct tls_conn *t, struct idl_deadline *dl)
{
	for (;;) {
		int err = idl__tls_hs_step(t), left = -1, held;
		int64_t end = idl_deadline_abs(dl);
		struct pollfd p = { .fd = t->s.fd, .events = POLLIN };

		if (err != IDL_EAGAIN)
			return err;
		if (end != IDL_DEADLINE_NONE) {
			int64_t ns = end - idl_now_ns();

			if (ns <= 0)
				return idl__tls_failed(t, IDL_ETIMEDOUT,
						       "tls:%s: the TLS handshake did not end "
						       "before the deadline",
						       t->s.name);
			left = (int)((ns + 999999) / 1000000);
		}
		pthread_mutex_lock(&t->lock);
		held = t->bl_len != 0;
		pthread_mutex_unlock(&t->lock);
		if (held)
			p.events |= POLLOUT;
		(void)poll(&p, 1, left);
	}
}
