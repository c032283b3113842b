/*
 * tls_impl.h - what the files of the tls: transport share: a connection's and an endpoint's
 * state, the contexts a configuration makes, and the operations one file makes for another.
 * Internal to the tls: transport (docs/transports/tls.md).
 *
 * A tls: connection is tcp:'s stream of frames (sock/stream.h) whose bytes go through a TLS
 * session (the stream's io, tls_io.c). OpenSSL never touches the socket: its input is a
 * buffer of ciphertext the receiving side fills with recv(), and its output is sent by a BIO
 * of ours without waiting, the rest kept in a backlog that goes before anything else. So
 * every wait is outside the SSL object's lock, bounded as a tcp: wait is, and a send and a
 * receive may run at once in two threads as the transport contract allows.
 */
#ifndef IDL_TRANSPORTS_TLS_IMPL_H
#define IDL_TRANSPORTS_TLS_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "sock/stream.h"

/* The application protocol both sides must agree on (ALPN), as "\x08idlkit/1" on the wire. */
#define TLS_ALPN "idlkit/1"
/* The ciphertext buffer: the largest record (16 KiB of data and its overhead) and more, so
 * that one receive usually brings whole records. */
#define TLS_IN_CAP (18u * 1024u)
/* Plaintext gathered into one record from small pieces (a frame's prefix and a small
 * message, a batch of replies); a piece at least this long goes as records of its own. */
#define TLS_STAGE 8192u

enum tls_verify {
	TLS_VERIFY_NAME, /* the peer's chain, and on a client the server's name */
	TLS_VERIFY_CHAIN, /* the chain, any name */
	TLS_VERIFY_NONE, /* nothing but the pin, where one is set */
};

/* What one configuration makes (tls_config.c), held by the endpoints and connections made
 * with it: its settings, and an SSL context per role, made when first needed. */
struct tls_ctx {
	atomic_uint refs;
	pthread_mutex_t lock;
	SSL_CTX *ssl[2]; /* [0]: a client's, [1]: a server's */
	char *cert, *key, *ca, *crl, *name;
	int min_version; /* TLS1_3_VERSION or TLS1_2_VERSION */
	enum tls_verify verify;
	int has_pin;
	unsigned char pin[32];
};

enum tls_state {
	TLS_ST_NONE, /* no session yet (a client connecting its socket) */
	TLS_ST_HS, /* the handshake goes on */
	TLS_ST_UP, /* frames may go */
	TLS_ST_FAILING, /* one op records why (idl__tls_failed()) */
	TLS_ST_FAILED, /* the handshake or a record failed: every later op says so */
};

struct tls_conn {
	struct stream_conn s; /* first: the frames; s.io is the TLS layer */
	struct tls_ctx *ctx; /* held */
	SSL *ssl;
	pthread_mutex_t lock; /* ssl, the backlog, state: a send and a receive may run at once */
	int lock_made;
	int server;
	_Atomic int state; /* enum tls_state */
	int err; /* once FAILED: the error every later op returns */
	char why[192]; /* and its detail */
	int pin_failed; /* the verify callback found another fingerprint than the pin */
	int looked; /* the first bytes from the peer were looked at (a plaintext peer?) */
	int wrote; /* OpenSSL wrote to the socket: a plaintext goodbye can no longer go */
	/* Ciphertext received and not yet read by OpenSSL. Only a receiving op fills it. */
	unsigned char *in;
	size_t in_off, in_len;
	int in_eof;
	/* Where the ciphertext stream stands between records: bytes of a record header seen
	 * (rhdr_n of 5) or bytes of a record body still to come. At the end of the stream both
	 * are 0 unless the stream was cut inside a record. */
	unsigned char rhdr[5];
	unsigned rhdr_n;
	size_t rec_left;
	/* Ciphertext OpenSSL wrote that the socket did not take: sent before anything else. */
	unsigned char *bl;
	size_t bl_off, bl_len, bl_cap;
	int werr; /* the errno of a send that failed; the connection is then gone */
	struct idl_tls_peer *peer; /* what the handshake showed of the peer: one block */
	size_t peer_size;
	char host[256]; /* a client: the name the server's certificate must have */
};

struct tls_ep {
	struct stream_ep s;
	struct tls_ctx *ctx; /* held */
};

/* tls_config.c */
/* The contexts of cfg (NULL: of the IDL_TLS_* variables as they are now), held: 0 and *ctxp,
 * or the configuration's error with its detail. */
int idl__tls_ctx_get(struct idl_config *cfg, struct tls_ctx **ctxp);
void idl__tls_ctx_put(struct tls_ctx *ctx);
/* ctx's SSL context for a client (server 0) or a server (1), made on first use: NULL and
 * *errp when a file cannot be read (the detail names it). */
SSL_CTX *idl__tls_ctx_ssl(struct tls_ctx *ctx, int server, int *errp);

/* tls_io.c: the layer under the frames. */
extern const struct stream_io idl__tls_io;
/* Makes c's session for its role on an open socket: 0 or an error. */
int idl__tls_session(struct tls_conn *t, int server);
/* Sends what the backlog holds, without waiting. t->lock held. 0 when it is empty, 1 when
 * some is left, -1 when the socket failed (t->werr). */
int idl__tls_flush(struct tls_conn *t);
/* Receives ciphertext without waiting (MSG_DONTWAIT) or bounded by the socket's receive
 * timeout: > 0 bytes, 0 at the end of the stream, -1 with errno. */
ssize_t idl__tls_fill(struct tls_conn *t, int flags);
/* Frees the buffers a quiet connection does not need. t->lock held. */
void idl__tls_trim(struct tls_conn *t);

/* tls_hs.c: the handshake and what a failure means. */
/* A server's goodbye to a client it refuses before its handshake (a limit at accept): sent in
 * plaintext, as a tcp: frame, which the client's handshake recognises (its first bytes) and
 * reports as its connect's error; the connection is then FAILED. 1 when it was m and went
 * (or the socket could not take it: it is dropped), 0 when m is not that case. */
int idl__tls_goodbye_plain(struct tls_conn *t, const struct idl_xmsg *m);
/* One step of the handshake without waiting: 0 once the connection is up, IDL_EAGAIN while
 * it waits for the peer, or the error (the connection is then FAILED). */
int idl__tls_hs_step(struct tls_conn *t);
/* The handshake to its end, each wait bounded by dl. */
int idl__tls_handshake(struct tls_conn *t, struct idl_deadline *dl);
/* Records the layer's failure: t's state FAILED, err and its detail kept for later ops.
 * Returns err. */
int idl__tls_failed(struct tls_conn *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The error of an SSL call that failed with SSL_get_error() `e` (t->lock held, the thread's
 * OpenSSL error queue as the call left it): classified, recorded (idl__tls_failed()). */
int idl__tls_ssl_error(struct tls_conn *t, int e);
/* The verify callback of every SSL context: the pin, and IDL_TLS_VERIFY=none. */
int idl__tls_verify_cb(int ok, X509_STORE_CTX *x);
/* The server's ALPN choice: idlkit/1 or nothing (the handshake then fails). */
int idl__tls_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		     const unsigned char *in, unsigned inlen, void *arg);

/* tls_peer.c: the peer's identity. */
/* Made once the handshake is done; 0 or IDL_ENOMEM. t->lock held. */
int idl__tls_peer_make(struct tls_conn *t);
int idl__tls_conn_peer(void *conn, struct idl_tls_peer **peerp);

#endif /* IDL_TRANSPORTS_TLS_IMPL_H */
