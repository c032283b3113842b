/*
 * config.c - configuration objects (<idl/idl_port.h>, <idl/idl_tls.h>): settings by name for
 * one transport, which a port or an endpoint hands to its transport (ep_config, conn_config).
 * The entry points that take one are the client's (idl_port_open_config(), client/port.c)
 * and the server's (idl_server_listen_config(), server/server.c); the TLS peer's identity,
 * as a port or a request asks for it, theirs too (client/cred.c, server/server_request.c).
 *
 * The object holds strings only, checked for their form when set; what the files say is the
 * transport's to read, when a port or an endpoint first uses the object (idl_config_state()
 * keeps what it made of them). Once used, the object does not change, so that every
 * connection of a port sees the same settings and the transport's object stays right.
 *
 * Core: it knows transports only by their tables, and nothing of the client or the server.
 */
#include <config.h>

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <idl/idl_tls.h>

#include "core/core.h"

#define CONFIG_MAX 16

struct idl_config {
	atomic_uint refs;
	atomic_int used; /* a port or an endpoint has used it: no more changes */
	char scheme[16];
	pthread_mutex_t lock;
	unsigned n;
	struct {
		char *name;
		char *value;
	} set[CONFIG_MAX];
	void *state; /* the transport's object (idl_config_state()) */
	void (*drop)(void *);
};

static int
config_new(const char *scheme, struct idl_config **cfgp)
{
	struct idl_config *cfg;

	if (cfgp == NULL)
		return idl__fail(IDL_EINVAL, "%s configuration: NULL argument", scheme);
	if ((*cfgp = cfg = calloc(1, sizeof *cfg)) == NULL)
		return idl__fail(IDL_ENOMEM, "%s configuration: out of memory", scheme);
	atomic_init(&cfg->refs, 1);
	snprintf(cfg->scheme, sizeof cfg->scheme, "%s", scheme);
	pthread_mutex_init(&cfg->lock, NULL);
	return 0;
}

/* Sets (or, value NULL, clears) one setting of an unused configuration of `scheme`. */
static int
config_put(struct idl_config *cfg, const char *scheme, const char *name, const char *value)
{
	char *v = NULL;
	unsigned i;
	int err = 0;

	if (cfg == NULL || strcmp(cfg->scheme, scheme) != 0)
		return idl__fail(IDL_EINVAL, "%s configuration: %s", scheme,
				 cfg == NULL ? "NULL" : "an object of another transport's");
	pthread_mutex_lock(&cfg->lock);
	for (i = 0; i < cfg->n && strcmp(cfg->set[i].name, name) != 0; i++)
		;
	if (atomic_load(&cfg->used))
		err = idl__fail(IDL_EBUSY, "%s configuration: %s: in use by a port or an endpoint",
				scheme, name);
	else if (value != NULL && (v = strdup(value)) == NULL)
		err = idl__fail(IDL_ENOMEM, "%s configuration: out of memory", scheme);
	else if (i == cfg->n && i == CONFIG_MAX)
		err = idl__fail(IDL_ENOMEM, "%s configuration: too many settings", scheme);
	else if (i == cfg->n && (cfg->set[i].name = strdup(name)) == NULL)
		err = idl__fail(IDL_ENOMEM, "%s configuration: out of memory", scheme);
	if (err == 0) {
		if (i == cfg->n)
			cfg->n++;
		free(cfg->set[i].value);
		cfg->set[i].value = v;
	} else {
		free(v);
	}
	pthread_mutex_unlock(&cfg->lock);
	return err;
}

void
idl_config_free(idl_config_t *cfg)
{
	if (cfg == NULL || atomic_fetch_sub(&cfg->refs, 1) != 1)
		return;
	if (cfg->drop != NULL && cfg->state != NULL)
		cfg->drop(cfg->state);
	for (unsigned i = 0; i < cfg->n; i++) {
		free(cfg->set[i].name);
		free(cfg->set[i].value);
	}
	pthread_mutex_destroy(&cfg->lock);
	free(cfg);
}

struct idl_config *
idl__config_hold(struct idl_config *cfg)
{
	if (cfg != NULL)
		atomic_fetch_add(&cfg->refs, 1);
	return cfg;
}

const char *
idl_config_scheme(const struct idl_config *cfg)
{
	return cfg != NULL ? cfg->scheme : "";
}

const char *
idl_config_get(const struct idl_config *cfg, const char *name)
{
	if (cfg == NULL || name == NULL)
		return NULL;
	for (unsigned i = 0; i < cfg->n; i++)
		if (strcmp(cfg->set[i].name, name) == 0)
			return cfg->set[i].value;
	return NULL;
}

void *
idl_config_state(struct idl_config *cfg, void *(*make)(struct idl_config *cfg, int *errp),
		 void (*drop)(void *obj), int *errp)
{
	void *st;

	*errp = 0;
	pthread_mutex_lock(&cfg->lock);
	atomic_store(&cfg->used, 1);
	if (cfg->state == NULL && (cfg->state = make(cfg, errp)) != NULL)
		cfg->drop = drop;
	st = cfg->state;
	pthread_mutex_unlock(&cfg->lock);
	return st;
}

int
idl__config_check(const struct idl_transport *tr, const struct idl_config *cfg, const char *address,
		  int ep)
{
	if (strcmp(cfg->scheme, tr->scheme) != 0)
		return idl__fail(IDL_EINVAL, "%s: a %s: configuration for a %s: address", address,
				 cfg->scheme, tr->scheme);
	if ((ep ? (void *)IDL__TR_OP(tr, ep_config) : (void *)IDL__TR_OP(tr, conn_config)) == NULL)
		return idl__fail(IDL_ENOTSUP, "%s: the %s: transport takes no configuration",
				 address, tr->scheme);
	return 0;
}

int
idl__config_conn(const struct idl_transport *tr, struct idl_config *cfg, void *conn)
{
	if (cfg == NULL)
		return 0;
	return IDL__TR_OP(tr, conn_config)(conn, cfg);
}

/*
 * The tls: settings. Each setter checks the form of its value; the files are the transport's
 * to read (transports/tls/).
 */
int
idl_tls_config_create(idl_config_t **cfgp)
{
	idl__clear_detail();
	return config_new("tls", cfgp);
}

int
idl_tls_config_set_cert(idl_config_t *cfg, const char *chain_file, const char *key_file)
{
	int err;

	idl__clear_detail();
	if (chain_file == NULL || key_file == NULL || *chain_file == '\0' || *key_file == '\0')
		return idl__fail(IDL_EINVAL, "tls configuration: a certificate needs its key");
	if ((err = config_put(cfg, "tls", "cert", chain_file)) != 0)
		return err;
	return config_put(cfg, "tls", "key", key_file);
}

/* A path setting: a non-empty string. */
static int
config_path(idl_config_t *cfg, const char *name, const char *path)
{
	idl__clear_detail();
	if (path == NULL || *path == '\0')
		return idl__fail(IDL_EINVAL, "tls configuration: %s: an empty path", name);
	return config_put(cfg, "tls", name, path);
}

int
idl_tls_config_set_ca(idl_config_t *cfg, const char *file_or_dir)
{
	return config_path(cfg, "ca", file_or_dir);
}

int
idl_tls_config_set_crl(idl_config_t *cfg, const char *file)
{
	return config_path(cfg, "crl", file);
}

int
idl_tls_config_set_name(idl_config_t *cfg, const char *name)
{
	return config_path(cfg, "name", name);
}

int
idl_tls_config_set_pin(idl_config_t *cfg, const char *sha256)
{
	char hex[65];
	size_t n = 0;

	idl__clear_detail();
	for (const char *p = sha256 != NULL ? sha256 : ""; *p != '\0'; p++) {
		if (*p == ':')
			continue;
		if (!isxdigit((unsigned char)*p) || n == 64) {
			n = 0;
			break;
		}
		hex[n++] = (char)tolower((unsigned char)*p);
	}
	if (n != 64)
		return idl__fail(IDL_EINVAL, "tls configuration: pin: expected a SHA-256 "
					     "fingerprint, 64 hex digits (colons allowed)");
	hex[n] = '\0';
	return config_put(cfg, "tls", "pin", hex);
}

int
idl_tls_config_set_min_version(idl_config_t *cfg, const char *version)
{
	idl__clear_detail();
	if (version == NULL || (strcmp(version, "1.3") != 0 && strcmp(version, "1.2") != 0))
		return idl__fail(IDL_EINVAL, "tls configuration: min_version: \"1.3\" or \"1.2\"");
	return config_put(cfg, "tls", "min_version", version);
}

int
idl_tls_config_set_resume(idl_config_t *cfg, int on)
{
	idl__clear_detail();
	return config_put(cfg, "tls", "resume", on ? "1" : "0");
}

/* IDL_TLS_RESUME: 0 or 1. */
static int
config_set_resume(idl_config_t *cfg, const char *value)
{
	if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
		return idl__fail(IDL_EINVAL, "tls configuration: resume: 0 or 1");
	return idl_tls_config_set_resume(cfg, value[0] == '1');
}

int
idl_tls_config_set_verify(idl_config_t *cfg, const char *mode)
{
	idl__clear_detail();
	if (mode == NULL ||
	    (strcmp(mode, "name") != 0 && strcmp(mode, "chain") != 0 && strcmp(mode, "none") != 0))
		return idl__fail(IDL_EINVAL,
				 "tls configuration: verify: \"name\", \"chain\" or \"none\"");
	return config_put(cfg, "tls", "verify", mode);
}

/* One variable into its setting; a malformed value is an error that names it. */
static int
config_env(idl_config_t *cfg, const char *var, const char *value,
	   int (*set)(idl_config_t *, const char *))
{
	int err;

	if (value == NULL || *value == '\0')
		return 0;
	if ((err = set(cfg, value)) != 0)
		return idl__fail(err, "%s=%s: %s", var, value, idl_errdetail());
	return 0;
}

int
idl_tls_config_from_env(idl_config_t **cfgp)
{
	const char *cert = getenv("IDL_TLS_CERT"), *key = getenv("IDL_TLS_KEY");
	idl_config_t *cfg;
	int err;

	if ((err = idl_tls_config_create(cfgp)) != 0)
		return err;
	cfg = *cfgp;
	if ((cert != NULL && *cert != '\0') != (key != NULL && *key != '\0'))
		err = idl__fail(IDL_EINVAL, "IDL_TLS_CERT and IDL_TLS_KEY: set both or neither");
	else if (cert != NULL && *cert != '\0')
		err = idl_tls_config_set_cert(cfg, cert, key);
	if (err == 0)
		err = config_env(cfg, "IDL_TLS_CA", getenv("IDL_TLS_CA"), idl_tls_config_set_ca);
	if (err == 0)
		err = config_env(cfg, "IDL_TLS_CRL", getenv("IDL_TLS_CRL"), idl_tls_config_set_crl);
	if (err == 0)
		err = config_env(cfg, "IDL_TLS_NAME", getenv("IDL_TLS_NAME"),
				 idl_tls_config_set_name);
	if (err == 0)
		err = config_env(cfg, "IDL_TLS_PIN", getenv("IDL_TLS_PIN"), idl_tls_config_set_pin);
	if (err == 0)
		err = config_env(cfg, "IDL_TLS_MIN_VERSION", getenv("IDL_TLS_MIN_VERSION"),
				 idl_tls_config_set_min_version);
	if (err == 0)
		err = config_env(cfg, "IDL_TLS_VERIFY", getenv("IDL_TLS_VERIFY"),
				 idl_tls_config_set_verify);
	if (err == 0)
		err = config_env(cfg, "IDL_TLS_RESUME", getenv("IDL_TLS_RESUME"),
				 config_set_resume);
	if (err != 0) {
		idl_config_free(cfg);
		*cfgp = NULL;
	}
	return err;
}

void
idl_tls_peer_free(struct idl_tls_peer *peer)
{
	free(peer);
}
