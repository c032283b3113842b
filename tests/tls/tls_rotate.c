/*
 * tls_rotate.c - the tls: test's cases of certificate rotation without a restart
 * (docs/transports/tls.md, "Reloading certificates"):
 *
 *   reload   idl_server_reload() on a server in this process: a new certificate of the same
 *            CA is what the next connection sees; a certificate file that is not one, a key
 *            that is not the certificate's and a key others may read each fail the reload with
 *            its own error and detail, the log says the old certificates stay, and new
 *            connections still get them; idl_server_reload_async() reloads from the server's
 *            loop; a connection made before every reload still calls, with the identity it
 *            verified.
 *   rotate   under load: `idlbench serve` with the IDL_TLS_* variables, four clients calling
 *            without a pause, one reconnecting for every call, and a client2 calling on one
 *            connection, while the server's files change and SIGHUP reloads them: three
 *            swaps of the server's certificate (server, peer, server: same CA), then a CRL
 *            that revokes client2. No call fails across the reloads; a connection made after
 *            each reload sees the new certificate; after the CRL, a new connection of
 *            client2 is refused (IDL_ECERT), also when it offers a ticket of the connection
 *            it already has, while that connection goes on.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "bench.h"
#include "benchServer.h"
#include "tls_test.h"

/* Copies the certificates' file `from` over `to` (mode `mode`), or writes `text` there when
 * from is NULL; replaced at once (a rename), as an operator's tool does. 0, or -1. */
static int
put_file(const char *from, const char *to, const char *text, mode_t mode)
{
	char tmp[600], buf[8192];
	int in = -1, out, ok = 1;
	ssize_t n;

	snprintf(tmp, sizeof tmp, "%s.new", path(to));
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return -1;
	if (from == NULL)
		ok = write(out, text, strlen(text)) == (ssize_t)strlen(text);
	else if ((in = open(path(from), O_RDONLY | O_CLOEXEC)) < 0)
		ok = 0;
	while (ok && in >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	ok = ok && fchmod(out, mode) == 0;
	close(out);
	return ok && rename(tmp, path(to)) == 0 ? 0 : -1;
}

/* The server's certificate and key become NAME's. */
static void
use_cert(const char *name)
{
	char crt[64], key[64];

	snprintf(crt, sizeof crt, "%s.crt", name);
	snprintf(key, sizeof key, "%s.key", name);
	CHECK(put_file(crt, "srv.crt", NULL, 0644) == 0 &&
		      put_file(key, "srv.key", NULL, 0600) == 0,
	      "cannot copy %s's files", name);
}

/* The fingerprint of the server's certificate as a new connection of a fresh configuration
 * (client, nothing to resume) sees it, into fp: 0, or the error. */
static int
new_conn_fp(const char *address, char *fp)
{
	struct idl_tls_peer *p = NULL;
	idl_port_t port = NULL;
	int sum = 0, err;

	fp[0] = '\0';
	err = open_cfg(address, client_cfg("client", NULL), &port);
	if (err == 0)
		err = bench_add(port, 1, 2, &sum);
	if (err == 0 && (err = idl_port_peer_tls(port, &p)) == 0)
		snprintf(fp, 65, "%s", p->sha256_hex);
	idl_tls_peer_free(p);
	if (port != NULL)
		idl_port_close(port);
	return err != 0 ? err : sum == 3 ? 0 : -1;
}

/* The server's log lines, kept for the reload case's checks. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[8192];

static void
keep_log(void *ctx, const char *line)
{
	size_t used;

	(void)ctx;
	pthread_mutex_lock(&log_lock);
	used = strlen(log_text);
	if (used + strlen(line) + 2 < sizeof log_text)
		snprintf(log_text + used, sizeof log_text - used, "%s\n", line);
	pthread_mutex_unlock(&log_lock);
}

static int
log_says(const char *what)
{
	int has;

	pthread_mutex_lock(&log_lock);
	has = strstr(log_text, what) != NULL;
	log_text[0] = '\0';
	pthread_mutex_unlock(&log_lock);
	return has;
}

static void *
serve_main(void *srv)
{
	(void)idl_server_run(srv);
	return NULL;
}

/* A reload that must fail with `want` and a detail that has `why`: the log says the old
 * certificates stay, and a new connection still sees `fp`. */
static void
reload_fails(idl_server_t *srv, const char *address, int want, const char *why, const char *fp)
{
	char seen[65];
	int err = idl_server_reload(srv), e2;

	CHECK(err == want && strstr(idl_errdetail(), why) != NULL,
	      "reload: %s [%s], want %s with \"%s\"", idl_errname(err), idl_errdetail(),
	      idl_errname(want), why);
	CHECK(log_says("reload failed, the certificates it had stay"), "the log says why");
	e2 = new_conn_fp(address, seen);
	CHECK(e2 == 0 && strcmp(seen, fp) == 0,
	      "after a failed reload: %s, the old certificate: %d", idl_errname(e2),
	      strcmp(seen, fp) == 0);
}

/* A server in this process on srv.crt and srv.key, logging to keep_log: 0, or -1. */
static int
reload_server(idl_server_t **srvp, const char *address, pthread_t *th)
{
	idl_config_t *cfg = NULL;
	int err = idl_server_create(srvp);

	if (err == 0)
		err = idl_server_add_subsystem(*srvp, &bench_subsystem, bench_server);
	if (err == 0)
		err = idl_server_set_log(*srvp, keep_log, NULL);
	if (err == 0 && (err = idl_tls_config_create(&cfg)) == 0 &&
	    (err = idl_tls_config_set_cert(cfg, path("srv.crt"), path("srv.key"))) == 0 &&
	    (err = idl_tls_config_set_ca(cfg, path("ca.crt"))) == 0)
		err = idl_server_listen_config(*srvp, address, cfg);
	idl_config_free(cfg);
	CHECK(err == 0, "server: %s %s", idl_errname(err), idl_errdetail());
	if (err == 0 && pthread_create(th, NULL, serve_main, *srvp) == 0)
		return 0;
	idl_server_destroy(*srvp);
	return -1;
}

void
case_reload(void)
{
	char address[64], fp_server[65], fp_peer[65], seen[65];
	struct idl_tls_peer *p = NULL;
	idl_port_t old = NULL;
	idl_server_t *srv;
	pthread_t th;
	int err, sum = 0;

	openssl_fingerprint(path("server.crt"), fp_server);
	openssl_fingerprint(path("peer.crt"), fp_peer);
	snprintf(address, sizeof address, "tls:127.0.0.1:%d", free_port());
	use_cert("server");
	if (reload_server(&srv, address, &th) != 0)
		return;
	err = open_cfg(address, client_cfg("client", NULL), &old);
	CHECK(err == 0 && bench_add(old, 1, 1, &sum) == 0, "a connection before the reloads");
	CHECK(new_conn_fp(address, seen) == 0 && strcmp(seen, fp_server) == 0, "server's first");

	use_cert("peer");
	err = idl_server_reload(srv);
	CHECK(err == 0, "reload: %s %s", idl_errname(err), idl_errdetail());
	CHECK(log_says("certificates reloaded"), "the log says it reloaded");
	CHECK(new_conn_fp(address, seen) == 0 && strcmp(seen, fp_peer) == 0,
	      "a new connection sees the new certificate");

	CHECK(put_file(NULL, "srv.crt", "not a certificate\n", 0644) == 0, "garbage");
	reload_fails(srv, address, IDL_EINVAL, "srv.crt", fp_peer);
	use_cert("server");
	CHECK(put_file("peer.key", "srv.key", NULL, 0600) == 0, "another key");
	reload_fails(srv, address, IDL_EINVAL, "does not match the certificate", fp_peer);
	CHECK(put_file("server.key", "srv.key", NULL, 0644) == 0, "a key others may read");
	reload_fails(srv, address, IDL_EACCES, "others may read it", fp_peer);

	/* From the server's loop, as a SIGHUP handler asks. */
	use_cert("server");
	idl_server_reload_async(srv);
	for (int i = 0; i < 200 && (new_conn_fp(address, seen) != 0 || strcmp(seen, fp_server));
	     i++)
		usleep(10 * 1000);
	CHECK(strcmp(seen, fp_server) == 0, "idl_server_reload_async: the new certificate");

	/* The connection from before every reload goes on, with the identity it verified. */
	if (old != NULL) {
		CHECK(bench_add(old, 2, 2, &sum) == 0 && sum == 4, "the first connection calls");
		CHECK(idl_port_peer_tls(old, &p) == 0 && strcmp(p->sha256_hex, fp_server) == 0,
		      "the first connection's identity");
		idl_tls_peer_free(p);
		idl_port_close(old);
	}
	idl_server_stop(srv);
	pthread_join(th, NULL);
	idl_server_destroy(srv);
}

/*
 * Under load: clients of `idlbench serve` calling while it reloads on SIGHUP.
 */
struct loader {
	pthread_t th;
	const char *address;
	idl_config_t *cfg; /* NULL: a configuration of client's own */
	int reconnect; /* a new port for every call */
	atomic_int *stop;
	int calls, fails, kr;
	char detail[256];
};

static void *
loader_main(void *arg)
{
	struct loader *l = arg;
	idl_port_t port = NULL;
	int err = 0, sum;

	for (int i = 0; !atomic_load(l->stop); i++) {
		if (port == NULL)
			err = l->cfg != NULL
				      ? idl_port_open_config(l->address, l->cfg, &port)
				      : open_cfg(l->address, client_cfg("client", NULL), &port);
		if (err == 0 && (err = bench_add(port, i, 1, &sum)) == 0 && sum != i + 1)
			err = -1;
		l->calls++;
		if (err != 0 && l->fails++ == 0) {
			l->kr = err;
			snprintf(l->detail, sizeof l->detail, "%s", idl_errdetail());
		}
		if ((l->reconnect || err != 0) && port != NULL) {
			idl_port_close(port);
			port = NULL;
		}
	}
	if (port != NULL)
		idl_port_close(port);
	return NULL;
}

/* The lines of the server's log that have `what`. */
static int
log_count(const struct srv *s, const char *what)
{
	char line[1024];
	FILE *f = fopen(s->log, "r");
	int n = 0;

	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		n += strstr(line, what) != NULL;
	if (f != NULL)
		fclose(f);
	return n;
}

/* SIGHUP, and waits for the log's n-th reload. */
static void
hup(struct srv *s, int n)
{
	int i;

	kill(s->pid, SIGHUP);
	for (i = 0; i < 300 && log_count(s, "certificates reloaded") < n; i++)
		usleep(10 * 1000);
	CHECK(i < 300, "reload %d: the log does not say it", n);
}

/* After the CRL: client2 is refused on a new connection, with its configuration that holds a
 * ticket, and with a fresh one. */
static void
rotate_revoked(const char *address, idl_config_t *cfg2)
{
	idl_port_t port = NULL;
	int err, sum;

	for (int fresh = 0; fresh < 2; fresh++) {
		err = fresh ? open_cfg(address, client_cfg("client2", NULL), &port)
			    : idl_port_open_config(address, cfg2, &port);
		if (err == 0)
			err = bench_add(port, 1, 1, &sum);
		CHECK(err == IDL_ECERT && strstr(idl_errdetail(), "revoked") != NULL,
		      "client2 after the CRL (%s): %s [%s]", fresh ? "fresh" : "with a ticket",
		      idl_errname(err), idl_errdetail());
		if (port != NULL)
			idl_port_close(port);
		port = NULL;
	}
}

void
case_rotate(void)
{
	static char env[4][600];
	char address[64], fp[2][65], seen[65];
	char *argv[] = { IDL_TOP_BUILDDIR_DEFAULT "/tools/idlbench/idlbench", "serve", address,
			 NULL };
	char *e[] = { env[0], env[1], env[2], env[3], NULL };
	struct loader l[6];
	atomic_int stop = 0;
	idl_config_t *cfg2 = client_cfg("client2", NULL);
	struct srv s;

	openssl_fingerprint(path("server.crt"), fp[0]);
	openssl_fingerprint(path("peer.crt"), fp[1]);
	use_cert("server");
	CHECK(put_file("crl.pem", "cur.crl", NULL, 0644) == 0, "the first CRL");
	snprintf(address, sizeof address, "tls:127.0.0.1:%d", free_port());
	snprintf(env[0], sizeof env[0], "IDL_TLS_CERT=%s", path("srv.crt"));
	snprintf(env[1], sizeof env[1], "IDL_TLS_KEY=%s", path("srv.key"));
	snprintf(env[2], sizeof env[2], "IDL_TLS_CA=%s", path("ca.crt"));
	snprintf(env[3], sizeof env[3], "IDL_TLS_CRL=%s", path("cur.crl"));
	if (srv_start(&s, argv, e, "rotate.log") != 0 || cfg2 == NULL) {
		CHECK(0, "idlbench serve did not start");
		idl_config_free(cfg2);
		return;
	}
	/* Four on their connections, one reconnecting, client2 on its connection. */
	for (int i = 0; i < 6; i++) {
		l[i] = (struct loader){ .address = address, .stop = &stop, .reconnect = i == 4 };
		l[i].cfg = i == 5 ? cfg2 : NULL;
		CHECK(pthread_create(&l[i].th, NULL, loader_main, &l[i]) == 0, "thread");
	}
	usleep(200 * 1000);
	for (int n = 1; n <= 3; n++) {
		use_cert(n % 2 ? "peer" : "server");
		hup(&s, n);
		CHECK(new_conn_fp(address, seen) == 0 && strcmp(seen, fp[n % 2]) == 0,
		      "reload %d: a new connection sees the new certificate", n);
		usleep(200 * 1000);
	}
	CHECK(put_file("crl-client2.pem", "cur.crl", NULL, 0644) == 0, "the CRL of client2");
	hup(&s, 4);
	rotate_revoked(address, cfg2);
	usleep(200 * 1000);
	atomic_store(&stop, 1);
	for (int i = 0; i < 6; i++) {
		pthread_join(l[i].th, NULL);
		CHECK(l[i].fails == 0 && l[i].calls > 20,
		      "loader %d: %d calls, %d failed, the first: %s [%s]", i, l[i].calls,
		      l[i].fails, idl_errname(l[i].kr), l[i].detail);
	}
	printf("tls-test: rotate: 4 reloads under load: %d calls on connections, %d reconnects, "
	       "%d calls of client2, none failed\n",
	       l[0].calls + l[1].calls + l[2].calls + l[3].calls, l[4].calls, l[5].calls);
	idl_config_free(cfg2);
	srv_stop(&s);
}
