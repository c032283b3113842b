/*
 * tls_resume.c - the tls: test's case of cheap reconnects (docs/transports/tls.md, "Cheap
 * reconnects"):
 *
 *   resume   a server in this process closes idle connections after 300 ms; a client calls,
 *            waits past that and calls again: its port reconnects and resumes its session
 *            (the identity's `resumed`, which is OpenSSL's SSL_session_reused()), and both
 *            sides still see each other's identity of the first handshake - the client the
 *            server's certificate, the server's authorisation hook the client's. With
 *            resumption off on the client, the reconnect makes a full handshake.
 */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "bench.h"
#include "benchServer.h"
#include "tls_test.h"

/* An identity as a string to compare: who, verified, resumed, fingerprint. */
struct seen {
	char cn[64];
	int verified, resumed;
	char sha[65];
};

static void
seen_take(struct seen *s, const struct idl_tls_peer *p)
{
	snprintf(s->cn, sizeof s->cn, "%s", p->cn);
	s->verified = p->verified;
	s->resumed = p->resumed;
	snprintf(s->sha, sizeof s->sha, "%s", p->sha256_hex);
}

/* What the server's authorisation hook saw of the client of the last request. */
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seen hook_seen;

static int
resume_hook(void *ctx, const struct idl_cred *cred, const struct idl_subsystem *ss,
	    const struct idl_routine_desc *rt)
{
	struct idl_tls_peer *p;

	(void)ctx;
	(void)cred;
	(void)ss;
	(void)rt;
	pthread_mutex_lock(&hook_lock);
	memset(&hook_seen, 0, sizeof hook_seen);
	if (idl_request_peer_tls(&p) == 0) {
		seen_take(&hook_seen, p);
		idl_tls_peer_free(p);
	}
	pthread_mutex_unlock(&hook_lock);
	return 0;
}

static void *
resume_serve(void *srv)
{
	(void)idl_server_run(srv);
	return NULL;
}

/* One call on port, and what each side saw: the client of the server (*srv_id), the server's
 * hook of the client (*cli_id). 0, or the call's error. */
static int
resume_call(idl_port_t port, struct seen *srv_id, struct seen *cli_id)
{
	struct idl_tls_peer *p = NULL;
	int sum = 0, err = bench_add(port, 40, 2, &sum);

	memset(srv_id, 0, sizeof *srv_id);
	if (err == 0 && sum != 42)
		err = -1;
	if (err == 0 && (err = idl_port_peer_tls(port, &p)) == 0) {
		seen_take(srv_id, p);
		idl_tls_peer_free(p);
	}
	pthread_mutex_lock(&hook_lock);
	*cli_id = hook_seen;
	pthread_mutex_unlock(&hook_lock);
	return err;
}

/* A call, an idle close, a call: whether the second resumed as `want` says, each side's
 * identity the first's. */
static void
resume_twice(const char *address, int resume, const char *server_fp, const char *client_fp)
{
	struct seen s1, c1, s2, c2;
	idl_port_t port = NULL;
	int err;

	err = open_cfg(address, client_cfg("client", "resume", resume ? "1" : "0", NULL), &port);
	CHECK(err == 0, "open: %s %s", idl_errname(err), idl_errdetail());
	if (err != 0)
		return;
	err = resume_call(port, &s1, &c1);
	CHECK(err == 0, "first call: %s %s", idl_errname(err), idl_errdetail());
	CHECK(s1.resumed == 0 && c1.resumed == 0, "the first connection is a full handshake");
	/* The server closes the connection after 300 ms without a message. */
	usleep(700 * 1000);
	err = resume_call(port, &s2, &c2);
	CHECK(err == 0, "call after the idle close: %s %s", idl_errname(err), idl_errdetail());
	CHECK(s2.resumed == resume && c2.resumed == resume,
	      "resume %d: the reconnect resumed: client saw %d, server saw %d", resume, s2.resumed,
	      c2.resumed);
	/* The identities are the first handshake's, whether resumed or not. */
	CHECK(strcmp(s2.cn, "localhost") == 0 && s2.verified == 1 && strcmp(s2.sha, server_fp) == 0,
	      "the client sees the server: cn %s verified %d", s2.cn, s2.verified);
	CHECK(strcmp(c2.cn, "client") == 0 && c2.verified == 1 && strcmp(c2.sha, client_fp) == 0,
	      "the server's hook sees the client: cn %s verified %d", c2.cn, c2.verified);
	CHECK(strcmp(s1.sha, s2.sha) == 0 && strcmp(c1.sha, c2.sha) == 0,
	      "each side's identity is the same before and after");
	idl_port_close(port);
}

void
case_resume(void)
{
	char address[64], server_fp[65], client_fp[65];
	idl_config_t *cfg = NULL;
	idl_server_t *srv = NULL;
	pthread_t th;
	int err;

	snprintf(address, sizeof address, "tls:127.0.0.1:%d", free_port());
	openssl_fingerprint(path("server.crt"), server_fp);
	openssl_fingerprint(path("client.crt"), client_fp);
	err = idl_server_create(&srv);
	if (err == 0)
		err = idl_server_add_subsystem(srv, &bench_subsystem, bench_server);
	if (err == 0)
		err = idl_server_set_limit(srv, IDL_LIMIT_IDLE_MS, 300);
	if (err == 0)
		err = idl_server_set_auth(srv, resume_hook, NULL);
	if (err == 0 && (err = idl_tls_config_create(&cfg)) == 0 &&
	    (err = idl_tls_config_set_cert(cfg, path("server.crt"), path("server.key"))) == 0 &&
	    (err = idl_tls_config_set_ca(cfg, path("ca.crt"))) == 0)
		err = idl_server_listen_config(srv, address, cfg);
	idl_config_free(cfg);
	CHECK(err == 0, "server: %s %s", idl_errname(err), idl_errdetail());
	if (err != 0 || pthread_create(&th, NULL, resume_serve, srv) != 0) {
		idl_server_destroy(srv);
		return;
	}
	resume_twice(address, 1, server_fp, client_fp);
	resume_twice(address, 0, server_fp, client_fp);
	idl_server_stop(srv);
	pthread_join(th, NULL);
	idl_server_destroy(srv);
}
