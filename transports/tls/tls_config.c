/*
 * tls_config.c - what a configuration makes for the tls: transport (tls_impl.h): its
 * settings, checked, and an SSL context per role made from its files when first needed; and
 * the configuration of the IDL_TLS_* variables, which an address opened or listened on
 * without one uses, made again when the variables change.
 *
 * Keys: the key file is opened here, checked on the open descriptor (a regular file that no
 * one but its owner and its group may read, or the open is refused, saying so) and parsed
 * straight from it into OpenSSL; no copy of it is made, and nothing logs it.
 *
 * A reload makes the contexts again from the same files, and swaps them in only when every
 * one was made: a file that cannot be read, or a key that is not the certificate's, leaves
 * the contexts as they were. Connections hold their own reference to the context they were
 * made with, so the ones already up keep what they verified and were verified with.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "tls_impl.h"

/* The last OpenSSL error as text, for a detail. */
static const char *
tls_ossl_why(char *buf, size_t n)
{
	unsigned long e = ERR_peek_last_error();

	if (e == 0)
		return "no detail";
	ERR_error_string_n(e, buf, n);
	return buf;
}

static void
tls_ctx_drop(void *obj)
{
	idl__tls_ctx_put(obj);
}

void
idl__tls_ctx_put(struct tls_ctx *ctx)
{
	if (ctx == NULL || atomic_fetch_sub(&ctx->refs, 1) != 1)
		return;
	SSL_CTX_free(ctx->ssl[0]);
	SSL_CTX_free(ctx->ssl[1]);
	idl__tls_cache_clear(&ctx->cache);
	pthread_mutex_destroy(&ctx->cache.lock);
	pthread_mutex_destroy(&ctx->reload_lock);
	free(ctx->cert);
	free(ctx->key);
	free(ctx->ca);
	free(ctx->crl);
	free(ctx->name);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

/* A copy of a setting, or NULL when it is not set; *bad when out of memory. */
static char *
tls_setting(const struct idl_config *cfg, const char *name, int *bad)
{
	const char *v = idl_config_get(cfg, name);
	char *c = v != NULL ? strdup(v) : NULL;

	if (v != NULL && c == NULL)
		*bad = 1;
	return c;
}

static int
tls_hex(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* The settings of cfg, checked when they were set (runtime/core/config.c): the state the
 * configuration keeps for this transport (idl_config_state()). */
static void *
tls_ctx_make(struct idl_config *cfg, int *errp)
{
	struct tls_ctx *ctx = calloc(1, sizeof *ctx);
	const char *v;
	int bad = 0;

	if (ctx == NULL) {
		*errp = idl__fail(IDL_ENOMEM, "tls: out of memory for a configuration");
		return NULL;
	}
	atomic_init(&ctx->refs, 1);
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->reload_lock, NULL);
	pthread_mutex_init(&ctx->cache.lock, NULL);
	ctx->cert = tls_setting(cfg, "cert", &bad);
	ctx->key = tls_setting(cfg, "key", &bad);
	ctx->ca = tls_setting(cfg, "ca", &bad);
	ctx->crl = tls_setting(cfg, "crl", &bad);
	ctx->name = tls_setting(cfg, "name", &bad);
	v = idl_config_get(cfg, "min_version");
	ctx->min_version = v != NULL && strcmp(v, "1.2") == 0 ? TLS1_2_VERSION : TLS1_3_VERSION;
	v = idl_config_get(cfg, "verify");
	ctx->verify = v == NULL || strcmp(v, "name") == 0 ? TLS_VERIFY_NAME
		      : strcmp(v, "chain") == 0		  ? TLS_VERIFY_CHAIN
							  : TLS_VERIFY_NONE;
	v = idl_config_get(cfg, "resume");
	ctx->resume = v == NULL || strcmp(v, "0") != 0;
	if ((v = idl_config_get(cfg, "pin")) != NULL && strlen(v) == 64) {
		ctx->has_pin = 1;
		for (int i = 0; i < 32; i++)
			ctx->pin[i] =
				(unsigned char)(tls_hex(v[2 * i]) << 4 | tls_hex(v[2 * i + 1]));
	}
	if (bad) {
		idl__tls_ctx_put(ctx);
		*errp = idl__fail(IDL_ENOMEM, "tls: out of memory for a configuration");
		return NULL;
	}
	return ctx;
}

/* The IDL_TLS_* variables' configuration: the one a tls: address uses without its own,
 * kept while the variables say the same. */
static pthread_mutex_t tls_env_lock = PTHREAD_MUTEX_INITIALIZER;
static idl_config_t *tls_env_cfg;

static const char *const tls_settings[] = { "cert", "key",	   "ca",     "crl",   "name",
					    "pin",  "min_version", "verify", "resume" };

static int
tls_same(const idl_config_t *a, const idl_config_t *b)
{
	for (size_t i = 0; i < sizeof tls_settings / sizeof tls_settings[0]; i++) {
		const char *x = idl_config_get(a, tls_settings[i]);
		const char *y = idl_config_get(b, tls_settings[i]);

		if ((x == NULL) != (y == NULL) || (x != NULL && strcmp(x, y) != 0))
			return 0;
	}
	return 1;
}

/*
 * OpenSSL starts when the process first uses tls:, without its exit handler: that would free
 * the library's state when the process exits, while a server's threads that were just
 * stopped may still be ending (the per-thread state each frees as it ends would then be lost,
 * and a thread still in a TLS call would use freed memory). The state stays until the
 * process is gone. A program that started OpenSSL itself keeps its own choice.
 */
static pthread_once_t tls_ossl_once = PTHREAD_ONCE_INIT;
static int tls_ossl_ok;

static void
tls_ossl_start(void)
{
	tls_ossl_ok = OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT, NULL) == 1;
}

int
idl__tls_ctx_get(struct idl_config *cfg, struct tls_ctx **ctxp)
{
	idl_config_t *env = NULL;
	struct tls_ctx *ctx;
	int err, locked = cfg == NULL;

	*ctxp = NULL;
	pthread_once(&tls_ossl_once, tls_ossl_start);
	if (!tls_ossl_ok)
		return idl__fail(IDL_ENOMEM, "tls: OpenSSL cannot start");
	if (cfg == NULL) {
		if ((err = idl_tls_config_from_env(&env)) != 0)
			return err;
		pthread_mutex_lock(&tls_env_lock);
		if (tls_env_cfg == NULL || !tls_same(tls_env_cfg, env)) {
			idl_config_free(tls_env_cfg);
			tls_env_cfg = env;
			env = NULL;
		}
		cfg = tls_env_cfg;
	}
	ctx = idl_config_state(cfg, tls_ctx_make, tls_ctx_drop, &err);
	if (ctx != NULL)
		atomic_fetch_add(&ctx->refs, 1);
	if (locked)
		pthread_mutex_unlock(&tls_env_lock);
	idl_config_free(env);
	*ctxp = ctx;
	return ctx != NULL ? 0 : err;
}

/* Loads the private key from `path`, refusing a file others may read. */
static int
tls_load_key(SSL_CTX *sc, const char *path)
{
	char why[256];
	struct stat st;
	EVP_PKEY *pk = NULL;
	BIO *b;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), err = 0;

	if (fd < 0)
		return idl__fail(IDL_EACCES, "tls: key %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		err = idl__fail(IDL_EACCES, "tls: key %s: not a regular file", path);
	else if (st.st_mode & (S_IROTH | S_IWOTH))
		err = idl__fail(IDL_EACCES,
				"tls: key %s: others may read it (mode %04o): refused; make it "
				"0600, or 0640 with a group such as ssl-cert",
				path, (unsigned)(st.st_mode & 07777));
	else if ((b = BIO_new_fd(fd, BIO_NOCLOSE)) == NULL)
		err = idl__fail(IDL_ENOMEM, "tls: key %s: out of memory", path);
	else {
		pk = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
		BIO_free(b);
		if (pk == NULL)
			err = idl__fail(IDL_EINVAL, "tls: key %s: not a PEM private key (%s)", path,
					tls_ossl_why(why, sizeof why));
		else if (SSL_CTX_use_PrivateKey(sc, pk) != 1 || SSL_CTX_check_private_key(sc) != 1)
			err = idl__fail(IDL_EINVAL,
					"tls: key %s: does not match the certificate (%s)", path,
					tls_ossl_why(why, sizeof why));
		EVP_PKEY_free(pk);
	}
	close(fd);
	return err;
}

/* Adds the revocation lists of `path` to the store, and has the peer's certificate checked
 * against them. */
static int
tls_load_crl(SSL_CTX *sc, const char *path)
{
	X509_STORE *st = SSL_CTX_get_cert_store(sc);
	BIO *b = BIO_new_file(path, "r");
	X509_CRL *crl;
	int n = 0;

	if (b == NULL)
		return idl__fail(IDL_EACCES, "tls: CRL %s: %s", path, strerror(errno));
	while ((crl = PEM_read_bio_X509_CRL(b, NULL, NULL, NULL)) != NULL) {
		X509_STORE_add_crl(st, crl);
		X509_CRL_free(crl);
		n++;
	}
	BIO_free(b);
	ERR_clear_error();
	if (n == 0)
		return idl__fail(IDL_EINVAL, "tls: CRL %s: no PEM revocation list in it", path);
	X509_STORE_set_flags(st, X509_V_FLAG_CRL_CHECK);
	return 0;
}

/*
 * Has OpenSSL fill each certificate's cache of its extensions now, while one thread builds the
 * context: it fills it on first use otherwise, and two handshakes that use one trusted CA at
 * once would then fill it while the other reads it (a check that OpenSSL makes without a lock,
 * which ThreadSanitizer reports). The certificates of a hashed CA directory, loaded as
 * handshakes need them, are filled then.
 */
static void
tls_warm(SSL_CTX *sc)
{
	STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(SSL_CTX_get_cert_store(sc));
	STACK_OF(X509) *chain = NULL;
	X509 *leaf = SSL_CTX_get0_certificate(sc);

	for (int i = 0; objs != NULL && i < sk_X509_OBJECT_num(objs); i++) {
		X509 *x = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));

		if (x != NULL)
			(void)X509_check_purpose(x, -1, 0);
	}
	if (leaf != NULL)
		(void)X509_check_purpose(leaf, -1, 0);
	if (SSL_CTX_get0_chain_certs(sc, &chain) == 1)
		for (int i = 0; chain != NULL && i < sk_X509_num(chain); i++)
			(void)X509_check_purpose(sk_X509_value(chain, i), -1, 0);
}

/*
 * TLS 1.3 session resumption (docs/transports/tls.md, "Cheap reconnects"): a server sends one
 * ticket after each handshake, sealed with the context's own keys (a reload makes new ones:
 * the tickets from before are then refused, and their clients make a full handshake, their
 * certificates checked against the new CAs and lists); it keeps no sessions itself. A client
 * keeps the tickets in its configuration's cache (tls_resume.c), not in OpenSSL's. The
 * session id context is what OpenSSL requires of a server that verifies clients before it
 * takes a ticket.
 */
static void
tls_resumption(struct tls_ctx *ctx, SSL_CTX *sc, int server)
{
	static const unsigned char sid[] = TLS_ALPN;

	if (server) {
		SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_num_tickets(sc, ctx->resume ? 1 : 0);
		SSL_CTX_set_session_id_context(sc, sid, sizeof sid - 1);
	} else if (ctx->resume) {
		SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_CLIENT |
							   SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(sc, idl__tls_new_session);
	} else {
		SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_OFF);
	}
}

/* An SSL context for one role from ctx's settings. */
static SSL_CTX *
tls_ctx_build(struct tls_ctx *ctx, int server, int *errp)
{
	static const unsigned char alpn[] = "\x08" TLS_ALPN;
	SSL_CTX *sc = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	char why[256];
	struct stat st;
	int err = 0, mode;

	ERR_clear_error();
	if (sc == NULL) {
		*errp = idl__fail(IDL_ENOMEM, "tls: cannot make an SSL context (%s)",
				  tls_ossl_why(why, sizeof why));
		return NULL;
	}
	SSL_CTX_set_min_proto_version(sc, ctx->min_version);
	SSL_CTX_set_max_proto_version(sc, TLS1_3_VERSION);
	/* Records are written whole, one per SSL_write; renegotiation (TLS 1.2) would make a
	 * send read. A server's connections give OpenSSL's record buffers back whenever they
	 * are empty, so that its idle ones hold none; a client's connection, its port's one,
	 * keeps them rather than allocate and free them for every record. */
	SSL_CTX_set_mode(sc, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
				     (server ? SSL_MODE_RELEASE_BUFFERS : 0));
	SSL_CTX_set_options(sc, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	tls_resumption(ctx, sc, server);
	if (ctx->cert != NULL) {
		if (SSL_CTX_use_certificate_chain_file(sc, ctx->cert) != 1)
			err = idl__fail(IDL_EINVAL, "tls: certificate %s: %s", ctx->cert,
					tls_ossl_why(why, sizeof why));
		else
			err = tls_load_key(sc, ctx->key);
	} else if (server) {
		err = idl__fail(IDL_EINVAL,
				"tls: a server needs a certificate and its key "
				"(IDL_TLS_CERT and IDL_TLS_KEY, or idl_tls_config_set_cert())");
	}
	if (err == 0 && ctx->ca != NULL) {
		int dir = stat(ctx->ca, &st) == 0 && S_ISDIR(st.st_mode);

		if (SSL_CTX_load_verify_locations(sc, dir ? NULL : ctx->ca, dir ? ctx->ca : NULL) !=
		    1)
			err = idl__fail(IDL_EINVAL, "tls: trusted CAs %s: %s", ctx->ca,
					tls_ossl_why(why, sizeof why));
	} else if (err == 0 && !server && SSL_CTX_set_default_verify_paths(sc) != 1) {
		err = idl__fail(IDL_EINVAL, "tls: the system's trusted CAs: %s",
				tls_ossl_why(why, sizeof why));
	}
	if (err == 0 && ctx->crl != NULL)
		err = tls_load_crl(sc, ctx->crl);
	if (err != 0) {
		SSL_CTX_free(sc);
		*errp = err;
		return NULL;
	}
	/* A client always asks for the server's certificate; a server asks for the client's
	 * when it has CAs to check it against (or a pin), and then requires one. */
	if (!server)
		mode = SSL_VERIFY_PEER;
	else if ((ctx->ca != NULL && ctx->verify != TLS_VERIFY_NONE) || ctx->has_pin)
		mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	else
		mode = SSL_VERIFY_NONE;
	SSL_CTX_set_verify(sc, mode, idl__tls_verify_cb);
	tls_warm(sc);
	if (server)
		SSL_CTX_set_alpn_select_cb(sc, idl__tls_alpn_cb, NULL);
	else
		SSL_CTX_set_alpn_protos(sc, alpn, sizeof alpn - 1);
	return sc;
}

SSL_CTX *
idl__tls_ctx_ssl(struct tls_ctx *ctx, int server, int *errp)
{
	SSL_CTX *sc;

	*errp = 0;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->ssl[server] == NULL)
		ctx->ssl[server] = tls_ctx_build(ctx, server, errp);
	sc = ctx->ssl[server];
	if (sc != NULL)
		SSL_CTX_up_ref(sc);
	pthread_mutex_unlock(&ctx->lock);
	return sc;
}

int
idl__tls_ctx_reload(struct tls_ctx *ctx)
{
	SSL_CTX *made[2] = { NULL, NULL };
	int had[2], err = 0;

	pthread_mutex_lock(&ctx->reload_lock);
	pthread_mutex_lock(&ctx->lock);
	had[0] = ctx->ssl[0] != NULL;
	had[1] = ctx->ssl[1] != NULL;
	pthread_mutex_unlock(&ctx->lock);
	/* The files are read outside the lock: connections go on being made meanwhile. */
	for (int r = 0; r < 2 && err == 0; r++)
		if (had[r])
			made[r] = tls_ctx_build(ctx, r, &err);
	if (err == 0) {
		pthread_mutex_lock(&ctx->lock);
		for (int r = 0; r < 2; r++)
			if (had[r]) {
				SSL_CTX *old = ctx->ssl[r];

				ctx->ssl[r] = made[r];
				made[r] = old;
			}
		pthread_mutex_unlock(&ctx->lock);
		/* Sessions of the old material would skip the new CAs and lists. */
		idl__tls_cache_clear(&ctx->cache);
	}
	SSL_CTX_free(made[0]);
	SSL_CTX_free(made[1]);
	pthread_mutex_unlock(&ctx->reload_lock);
	return err;
}
