/*
 * tls_peer.c - who the peer of a tls: connection is (<idl/idl_tls.h>, struct idl_tls_peer):
 * read once from its certificate when the handshake ends, kept with the connection (a
 * resumed session of later versions may show no certificate: what the first handshake saw is
 * what counts), and copied out to whoever asks (conn_tls_peer).
 *
 * The struct and every string it points to are one block, so that the caller frees it with
 * one free(). A name with a NUL inside it (a certificate that lies about its length) is left
 * out rather than cut short.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls_impl.h"

/* The strings of a peer as they are gathered, before they go into its block. */
struct peer_parts {
	const char *cipher, *alpn;
	char subject[512], cn[256];
	size_t alpn_len;
	GENERAL_NAMES *names;
	unsigned ndns, nuris;
	size_t bytes; /* of the names */
};

/* A SAN entry of the given type as a string: its bytes and length, or NULL. */
static const char *
peer_name(const GENERAL_NAME *g, int type, size_t *len)
{
	const ASN1_STRING *s;
	const char *p;

	if (g->type != type)
		return NULL;
	s = type == GEN_DNS ? g->d.dNSName : g->d.uniformResourceIdentifier;
	p = (const char *)ASN1_STRING_get0_data(s);
	*len = (size_t)ASN1_STRING_length(s);
	return p != NULL && memchr(p, '\0', *len) == NULL ? p : NULL;
}

/* Copies n bytes of s as a string at *at, and returns where it went. */
static const char *
peer_put(char **at, const char *s, size_t n)
{
	char *d = *at;

	memcpy(d, s, n);
	d[n] = '\0';
	*at += n + 1;
	return d;
}

static void
peer_subject(X509 *c, struct peer_parts *pp)
{
	BIO *b = BIO_new(BIO_s_mem());
	int n;

	if (b != NULL && X509_NAME_print_ex(b, X509_get_subject_name(c), 0, XN_FLAG_RFC2253) >= 0 &&
	    (n = BIO_read(b, pp->subject, sizeof pp->subject - 1)) > 0)
		pp->subject[n] = '\0';
	BIO_free(b);
	if (X509_NAME_get_text_by_NID(X509_get_subject_name(c), NID_commonName, pp->cn,
				      sizeof pp->cn) < 0)
		pp->cn[0] = '\0';
}

int
idl__tls_peer_make(struct tls_conn *t)
{
	X509 *c = SSL_get0_peer_certificate(t->ssl);
	const unsigned char *alpn = NULL;
	unsigned alpn_len = 0, n = 0;
	struct peer_parts pp;
	struct idl_tls_peer *p;
	const char **dns, **uris;
	size_t size, len;
	char *at;

	memset(&pp, 0, sizeof pp);
	pp.cipher = SSL_CIPHER_get_name(SSL_get_current_cipher(t->ssl));
	SSL_get0_alpn_selected(t->ssl, &alpn, &alpn_len);
	if (c != NULL) {
		peer_subject(c, &pp);
		pp.names = X509_get_ext_d2i(c, NID_subject_alt_name, NULL, NULL);
		for (int i = 0; pp.names != NULL && i < sk_GENERAL_NAME_num(pp.names); i++) {
			const GENERAL_NAME *g = sk_GENERAL_NAME_value(pp.names, i);

			if (peer_name(g, GEN_DNS, &len) != NULL) {
				pp.ndns++;
				pp.bytes += len + 1;
			} else if (peer_name(g, GEN_URI, &len) != NULL) {
				pp.nuris++;
				pp.bytes += len + 1;
			}
		}
	}
	size = sizeof *p + (pp.ndns + pp.nuris) * sizeof(char *) + pp.bytes + strlen(pp.cipher) +
	       alpn_len + strlen(pp.subject) + strlen(pp.cn) + 4;
	if ((p = calloc(1, size)) == NULL) {
		GENERAL_NAMES_free(pp.names);
		return -1;
	}
	dns = (const char **)(void *)(p + 1);
	uris = dns + pp.ndns;
	at = (char *)(uris + pp.nuris);
	p->cipher = peer_put(&at, pp.cipher, strlen(pp.cipher));
	p->alpn = peer_put(&at, (const char *)alpn, alpn_len);
	p->subject = peer_put(&at, pp.subject, strlen(pp.subject));
	p->cn = peer_put(&at, pp.cn, strlen(pp.cn));
	p->dns = dns;
	p->uris = uris;
	for (int i = 0; pp.names != NULL && i < sk_GENERAL_NAME_num(pp.names); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(pp.names, i);
		const char *s;

		if ((s = peer_name(g, GEN_DNS, &len)) != NULL)
			dns[p->ndns++] = peer_put(&at, s, len);
		else if ((s = peer_name(g, GEN_URI, &len)) != NULL)
			uris[p->nuris++] = peer_put(&at, s, len);
	}
	GENERAL_NAMES_free(pp.names);
	/* gRPC's rule: a SPIFFE ID only where it is the one URI. */
	if (p->nuris == 1 && strncmp(uris[0], "spiffe://", 9) == 0)
		p->spiffe_id = uris[0];
	p->version = (unsigned)SSL_version(t->ssl);
	p->has_cert = c != NULL;
	p->verified = c != NULL && t->ctx->verify != TLS_VERIFY_NONE &&
		      SSL_get_verify_result(t->ssl) == X509_V_OK;
	if (c != NULL && X509_digest(c, EVP_sha256(), p->sha256, &n) == 1 && n == 32)
		for (unsigned i = 0; i < 32; i++)
			snprintf(p->sha256_hex + 2 * i, 3, "%02x", p->sha256[i]);
	t->peer = p;
	t->peer_size = size;
	return 0;
}

/* A pointer of the kept block moved into the copy. */
static const void *
peer_moved(const void *q, const struct idl_tls_peer *from, struct idl_tls_peer *to)
{
	return q == NULL ? NULL : (const char *)to + ((const char *)q - (const char *)from);
}

int
idl__tls_conn_peer(void *conn, struct idl_tls_peer **peerp)
{
	struct tls_conn *t = conn;
	const struct idl_tls_peer *k = t->peer;
	struct idl_tls_peer *p;
	const char **dns, **uris;

	*peerp = NULL;
	/* The identity is made before the connection is up and never changes after. */
	if (atomic_load(&t->state) != TLS_ST_UP || k == NULL)
		return IDL_ENOTSUP;
	if ((p = malloc(t->peer_size)) == NULL)
		return IDL_ENOMEM;
	memcpy(p, k, t->peer_size);
	p->cipher = peer_moved(k->cipher, k, p);
	p->alpn = peer_moved(k->alpn, k, p);
	p->subject = peer_moved(k->subject, k, p);
	p->cn = peer_moved(k->cn, k, p);
	p->spiffe_id = peer_moved(k->spiffe_id, k, p);
	p->dns = dns = (const char **)(uintptr_t)peer_moved(k->dns, k, p);
	p->uris = uris = (const char **)(uintptr_t)peer_moved(k->uris, k, p);
	for (unsigned i = 0; i < p->ndns; i++)
		dns[i] = peer_moved(k->dns[i], k, p);
	for (unsigned i = 0; i < p->nuris; i++)
		uris[i] = peer_moved(k->uris[i], k, p);
	*peerp = p;
	return 0;
}
