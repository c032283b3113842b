/*
 * tls_test.c - the tls: transport's own cases (docs/transports/tls.md, docs/testing.md),
 * against real servers in processes of their own (examples/tls/tls-server, bench-server,
 * `openssl s_server`) with the certificates of tests/tls/certs.sh:
 *
 *   identity   mutual authentication: the client sees the server's certificate, the routine
 *              the client's (CN, DNS and URI names, SPIFFE ID), the authorisation hook allows
 *              one client's SAN and refuses another's; the fingerprint is openssl's
 *   server     each wrong server certificate (expired, not yet valid, another name, another
 *              CA, revoked) refused by the client with IDL_ECERT and its own detail, and the
 *              server's log saying the client refused it
 *   client     a client without a certificate, and one from another CA, refused by a server
 *              that requires one: IDL_ECERT on the client's first call, the reason in the log
 *   plain      a tcp: client on a tls: endpoint and a tls: client on a tcp: endpoint: IDL_ETLS
 *              on both sides, never MIG_SERVER_DIED, never a hang
 *   alpn       a TLS client without idlkit/1 refused by the server; a TLS server that agrees
 *              on no protocol, or on another, refused by the client
 *   version    a TLS 1.2 client refused by default, accepted with IDL_TLS_MIN_VERSION=1.2
 *   pin        the right fingerprint pinned: calls go; another: IDL_ECERT
 *   key        a key others may read refused, at listen and at open, saying so; 0640 taken
 *   flip       a man in the middle flips one bit of a request's record, then of a reply's:
 *              the call fails with IDL_EINTEGRITY, never with a wrong sum
 *   cut        the stream cut in the middle of a reply's record: IDL_EINTEGRITY
 *   stalled    200 connections that never finish their handshake beside a client whose
 *              connect, handshake and call take well under a second
 *   async      a pollable port's handshake in its loop: a stopped server's silence costs the
 *              loop no CPU while it waits, the call ends at its deadline; an answering
 *              server's call goes
 *   ipv6       tls:[::1]:PORT, the server's name checked against its IP SAN
 *
 *     tls-test [CASE]     (all cases without one; exit 77 when openssl is missing)
 */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_async.h>
#include <idl/idl_transport.h>

#include "bench_types.h"
#include "bench.h"
#include "whoami_types.h"
#include "whoami.h"

static char dir[256]; /* the certificates */
static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "tls-test: %s:%d: FAIL: ", __FILE__, __LINE__);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static int64_t
ms_since(int64_t t0)
{
	return (idl_now_ns() - t0) / 1000000;
}

static const char *
path(const char *name)
{
	static char buf[8][512];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

/* A free loopback port (bind 0, read it back, close). */
static int
free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* A server process: its pid and the file its standard error goes to. */
struct srv {
	pid_t pid;
	int in; /* its standard input, kept open (openssl s_server ends at its end) */
	int ours; /* one of the tree's programs: it must exit 0 on SIGTERM */
	char log[512];
};

/*
 * Runs argv with the environment variables of env ("NAME=VALUE", NULL-ended; the IDL_TLS_*
 * ones of this process are removed first) and waits until it prints "ready" (or, for
 * openssl s_server, "ACCEPT"): 0, or -1.
 */
static int
srv_start(struct srv *s, char *const argv[], char *const env[], const char *log)
{
	int out[2], in[2];
	char line[256];
	FILE *f;

	snprintf(s->log, sizeof s->log, "%s", path(log));
	s->ours = strstr(argv[0], "/examples/") != NULL;
	if (pipe(out) != 0 || pipe2(in, O_CLOEXEC) != 0 || (s->pid = fork()) < 0)
		return -1;
	if (s->pid == 0) {
		int e = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(e, 2);
		unsetenv("IDL_TLS_CERT");
		unsetenv("IDL_TLS_KEY");
		unsetenv("IDL_TLS_CA");
		unsetenv("IDL_TLS_CRL");
		unsetenv("IDL_TLS_MIN_VERSION");
		for (int i = 0; env != NULL && env[i] != NULL; i++)
			putenv(env[i]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	s->in = in[1];
	f = fdopen(out[0], "r");
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "ready", 5) == 0 || strncmp(line, "ACCEPT", 6) == 0) {
			/* The rest of its output goes nowhere: the pipe stays open, unread. */
			return 0;
		}
	fclose(f);
	return -1;
}

static void
srv_stop(struct srv *s)
{
	int status = 0;

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, &status, 0);
		close(s->in);
		/* A server of the tree stops cleanly: a sanitizer's report (a leak, an error) makes
		 * its status not 0, and its log says what. */
		if (s->ours && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			char cmd[700];

			CHECK(0, "%s: the server's status on SIGTERM is %#x; its log:", s->log,
			      status);
			snprintf(cmd, sizeof cmd, "cat '%s' >&2", s->log);
			(void)system(cmd);
		}
	}
	s->pid = 0;
}

/* Whether the server's log has a line with every one of the strings (NULL-ended), waiting
 * up to 2 s for it: the server writes it as the connection ends. */
static int
log_has(const struct srv *s, ...)
{
	for (int tries = 0; tries < 200; tries++) {
		char line[1024];
		FILE *f = fopen(s->log, "r");

		while (f != NULL && fgets(line, sizeof line, f) != NULL) {
			const char *w;
			va_list ap;
			int all = 1;

			va_start(ap, s);
			while ((w = va_arg(ap, const char *)) != NULL)
				if (strstr(line, w) == NULL)
					all = 0;
			va_end(ap);
			if (all) {
				fclose(f);
				return 1;
			}
		}
		if (f != NULL)
			fclose(f);
		usleep(10 * 1000);
	}
	return 0;
}

/* The tls-server of the examples, its certificate NAME, with the test CA (so it requires
 * client certificates) unless `noca`. */
static int
tls_server(struct srv *s, const char *name, int noca, char *address, size_t n)
{
	static char env[4][600];
	char *argv[] = { IDL_TOP_BUILDDIR_DEFAULT "/examples/tls/tls-server", address, NULL };
	char *e[] = { env[0], env[1], noca ? NULL : env[2], NULL };
	char crt[64], key[64];

	snprintf(crt, sizeof crt, "%s.crt", name);
	snprintf(key, sizeof key, "%s.key", name);
	snprintf(address, n, "tls:127.0.0.1:%d", free_port());
	snprintf(env[0], sizeof env[0], "IDL_TLS_CERT=%s", path(crt));
	snprintf(env[1], sizeof env[1], "IDL_TLS_KEY=%s", path(key));
	snprintf(env[2], sizeof env[2], "IDL_TLS_CA=%s", path("ca.crt"));
	return srv_start(s, argv, e, "server.log");
}

/* A client configuration: certificate NAME (NULL: none), the test CA, and more settings as
 * pairs ("crl", PATH), ("pin", HEX), ("name", NAME), ("min", "1.2"), NULL-ended. */
static idl_config_t *
client_cfg(const char *name, ...)
{
	idl_config_t *cfg;
	const char *k, *v;
	char crt[64], key[64];
	va_list ap;
	int err;

	if ((err = idl_tls_config_create(&cfg)) != 0)
		return NULL;
	snprintf(crt, sizeof crt, "%s.crt", name != NULL ? name : "");
	snprintf(key, sizeof key, "%s.key", name != NULL ? name : "");
	if (name != NULL)
		err = idl_tls_config_set_cert(cfg, path(crt), path(key));
	if (err == 0)
		err = idl_tls_config_set_ca(cfg, path("ca.crt"));
	va_start(ap, name);
	while (err == 0 && (k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		if (strcmp(k, "crl") == 0)
			err = idl_tls_config_set_crl(cfg, v);
		else if (strcmp(k, "pin") == 0)
			err = idl_tls_config_set_pin(cfg, v);
		else if (strcmp(k, "name") == 0)
			err = idl_tls_config_set_name(cfg, v);
		else if (strcmp(k, "min") == 0)
			err = idl_tls_config_set_min_version(cfg, v);
		else if (strcmp(k, "verify") == 0)
			err = idl_tls_config_set_verify(cfg, v);
	}
	va_end(ap);
	if (err != 0) {
		fprintf(stderr, "tls-test: configuration: %s\n", idl_errdetail());
		idl_config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* Opens a port with cfg (freed here): the open's result, the port in *portp. */
static int
open_cfg(const char *address, idl_config_t *cfg, idl_port_t *portp)
{
	int err = idl_port_open_config(address, cfg, portp);

	idl_config_free(cfg);
	return err;
}

/* The SHA-256 fingerprint of a certificate as `openssl x509` prints it, in lower-case hex. */
static void
openssl_fingerprint(const char *crt, char *hex)
{
	char cmd[700], line[256];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof cmd, "openssl x509 -noout -fingerprint -sha256 -in '%s'", crt);
	hex[0] = '\0';
	if ((p = popen(cmd, "r")) == NULL)
		return;
	if (fgets(line, sizeof line, p) != NULL)
		for (const char *c = strchr(line, '=') != NULL ? strchr(line, '=') + 1 : line;
		     *c != '\0' && n < 64; c++)
			if (isxdigit((unsigned char)*c))
				hex[n++] = (char)tolower((unsigned char)*c);
	hex[n] = '\0';
	pclose(p);
}

static void
case_identity(void)
{
	char address[64], out[512], fp[65];
	struct idl_tls_peer *p = NULL;
	idl_port_t port = NULL;
	struct srv s;
	int err;

	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	err = open_cfg(address, client_cfg("client", NULL), &port);
	CHECK(err == 0, "open: %s %s", idl_errname(err), idl_errdetail());
	if (err == 0) {
		err = idl_port_peer_tls(port, &p);
		CHECK(err == 0 && p != NULL, "idl_port_peer_tls: %s", idl_errname(err));
		openssl_fingerprint(path("server.crt"), fp);
		if (p != NULL) {
			CHECK(p->verified == 1 && p->has_cert == 1, "the server is verified");
			CHECK(strcmp(p->cn, "localhost") == 0, "server cn %s", p->cn);
			CHECK(p->ndns == 1 && strcmp(p->dns[0], "localhost") == 0, "server dns");
			CHECK(p->version == 0x0304, "TLS 1.3: %#x", p->version);
			CHECK(strcmp(p->alpn, "idlkit/1") == 0, "alpn %s", p->alpn);
			CHECK(strcmp(p->sha256_hex, fp) == 0, "fingerprint %s, openssl says %s",
			      p->sha256_hex, fp);
			CHECK(p->spiffe_id == NULL, "no SPIFFE ID on the server's");
		}
		idl_tls_peer_free(p);
		err = whoami_whoami(port, out);
		CHECK(err == 0 && strcmp(out, "cn=client verified=1 dns=client.idlkit.test "
					      "uri=spiffe://idlkit.test/client "
					      "spiffe=spiffe://idlkit.test/client") == 0,
		      "whoami: %s [%s]", idl_errname(err), err == 0 ? out : idl_errdetail());
		err = whoami_secret(port, out);
		CHECK(err == 0 && strcmp(out, "swordfish") == 0, "secret for client: %s",
		      idl_errname(err));
		idl_port_close(port);
	}
	/* Another client of the same CA: served, but its SAN is not the one secret needs. */
	err = open_cfg(address, client_cfg("client2", NULL), &port);
	CHECK(err == 0, "open as client2: %s", idl_errdetail());
	if (err == 0) {
		err = whoami_whoami(port, out);
		CHECK(err == 0 &&
			      strstr(out, "cn=client2 verified=1 dns=client2.idlkit.test") == out,
		      "whoami client2: %s", err == 0 ? out : idl_errdetail());
		err = whoami_secret(port, out);
		CHECK(err == IDL_EACCES, "secret refused to client2: %s", idl_errname(err));
		idl_port_close(port);
	}
	srv_stop(&s);
}

/* A server with certificate `name`: the client refuses it with IDL_ECERT and `why`. */
static void
server_cert_case(const char *name, const char *why, int crl)
{
	char address[64];
	idl_port_t port = NULL;
	struct srv s;
	int64_t t0;
	int err;

	CHECK(tls_server(&s, name, 0, address, sizeof address) == 0, "tls-server %s", name);
	t0 = idl_now_ns();
	err = open_cfg(address,
		       crl ? client_cfg("client", "crl", path("crl.pem"), NULL)
			   : client_cfg("client", NULL),
		       &port);
	CHECK(err == IDL_ECERT && strstr(idl_errdetail(), why) != NULL,
	      "server certificate %s: got %s [%s], want ECERT [%s]", name, idl_errname(err),
	      idl_errdetail(), why);
	CHECK(ms_since(t0) < 2000, "refused at once: %lld ms", (long long)ms_since(t0));
	CHECK(log_has(&s, "ECERT", "the client refused this side's certificate", NULL),
	      "the server's log says the client refused its certificate (%s)", name);
	if (err == 0)
		idl_port_close(port);
	srv_stop(&s);
}

static void
case_server(void)
{
	server_cert_case("expired", "the server's certificate: expired", 0);
	server_cert_case("notyet", "the server's certificate: not yet valid", 0);
	server_cert_case("wrongname", "the server's certificate: name mismatch", 0);
	server_cert_case("stranger", "the server's certificate: unknown CA", 0);
	server_cert_case("revoked", "the server's certificate: revoked", 1);
}

/* A client with certificate `name` (NULL: none) against a server that requires one: the
 * open goes (TLS 1.3 ends the client's handshake first), the first call fails. */
static void
client_cert_case(const char *name, const char *why, const char *logged)
{
	char address[64], out[512];
	idl_port_t port = NULL;
	struct srv s;
	int err;

	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	err = open_cfg(address, client_cfg(name, NULL), &port);
	if (err == 0) {
		err = whoami_whoami(port, out);
		idl_port_close(port);
	}
	CHECK(err == IDL_ECERT && strstr(idl_errdetail(), why) != NULL,
	      "client certificate %s: got %s [%s], want ECERT [%s]", name ? name : "(none)",
	      idl_errname(err), idl_errdetail(), why);
	CHECK(log_has(&s, "ECERT", logged, NULL), "the server's log: %s", logged);
	srv_stop(&s);
}

static void
case_client(void)
{
	client_cert_case(NULL, "requires a client certificate",
			 "the client sent no certificate, and this endpoint requires one");
	client_cert_case("stranger-client", "the server refused this side's certificate",
			 "the client's certificate: unknown CA");
}

static void
case_plain(void)
{
	char address[64], tcp[64], out[512];
	char *bench[] = { IDL_TOP_BUILDDIR_DEFAULT "/examples/bench/bench-server", tcp, NULL };
	idl_port_t port = NULL;
	struct srv s, t;
	int64_t t0;
	int err;

	/* A tcp: client on a tls: endpoint: its hello is answered in plaintext. */
	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	snprintf(tcp, sizeof tcp, "tcp:%s", address + strlen("tls:"));
	t0 = idl_now_ns();
	err = idl_port_open(tcp, &port);
	if (err == 0) {
		err = whoami_whoami(port, out);
		idl_port_close(port);
	}
	CHECK(err == IDL_ETLS, "tcp: client on a tls: endpoint: %s [%s]", idl_errname(err),
	      idl_errdetail());
	CHECK(ms_since(t0) < 2000, "at once: %lld ms", (long long)ms_since(t0));
	CHECK(log_has(&s, "ETLS", "does not speak TLS", NULL), "the tls: server's log");
	srv_stop(&s);

	/* A tls: client on a tcp: endpoint. */
	snprintf(tcp, sizeof tcp, "tcp:127.0.0.1:%d", free_port());
	CHECK(srv_start(&t, bench, NULL, "bench.log") == 0, "bench-server");
	snprintf(address, sizeof address, "tls:%s", tcp + strlen("tcp:"));
	t0 = idl_now_ns();
	err = open_cfg(address, client_cfg("client", NULL), &port);
	CHECK(err == IDL_ETLS && strstr(idl_errdetail(), "during the TLS handshake") != NULL,
	      "tls: client on a tcp: endpoint: %s [%s]", idl_errname(err), idl_errdetail());
	CHECK(ms_since(t0) < 2000, "at once: %lld ms", (long long)ms_since(t0));
	CHECK(log_has(&t, "ETLS", "a TLS client on a tcp: endpoint", NULL), "the tcp: log");
	if (err == 0)
		idl_port_close(port);
	srv_stop(&t);
}

/* Runs `openssl s_client` with more arguments against address (tls:HOST:PORT) and returns
 * its output (static). */
static const char *
s_client(const char *address, const char *more)
{
	static char out[8192];
	char cmd[2048];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof cmd,
		 "echo | openssl s_client -connect %s -CAfile '%s' -cert '%s' -key '%s' %s 2>&1",
		 address + strlen("tls:"), path("ca.crt"), path("client.crt"), path("client.key"),
		 more);
	out[0] = '\0';
	if ((p = popen(cmd, "r")) == NULL)
		return out;
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	pclose(p);
	return out;
}

/* `openssl s_server` with more arguments on a free port; its address in `address`. */
static int
s_server(struct srv *s, const char *more, char *address, size_t n)
{
	char port[16], cmd[1024];
	char *argv[] = { "sh", "-c", cmd, NULL };

	snprintf(port, sizeof port, "%d", free_port());
	snprintf(address, n, "tls:127.0.0.1:%s", port);
	snprintf(cmd, sizeof cmd,
		 "exec openssl s_server -accept 127.0.0.1:%s -cert '%s' -key '%s' -naccept 1 %s",
		 port, path("server.crt"), path("server.key"), more);
	return srv_start(s, argv, NULL, "s_server.log");
}

static void
case_alpn(void)
{
	char address[64];
	idl_port_t port = NULL;
	struct srv s;
	int err;

	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	(void)s_client(address, "");
	CHECK(log_has(&s, "ETLS", "ALPN protocol idlkit/1", NULL),
	      "a client without ALPN refused, the log says why");
	(void)s_client(address, "-alpn other/1");
	CHECK(log_has(&s, "ETLS", "ALPN protocol idlkit/1", NULL), "a client with another ALPN");
	srv_stop(&s);

	CHECK(s_server(&s, "", address, sizeof address) == 0, "s_server");
	err = open_cfg(address, client_cfg("client", NULL), &port);
	CHECK(err == IDL_ETLS && strstr(idl_errdetail(), "agreed on no ALPN protocol") != NULL,
	      "a server without ALPN: %s [%s]", idl_errname(err), idl_errdetail());
	srv_stop(&s);
	CHECK(s_server(&s, "-alpn other/1", address, sizeof address) == 0, "s_server -alpn");
	err = open_cfg(address, client_cfg("client", NULL), &port);
	CHECK(err == IDL_ETLS && strstr(idl_errdetail(), "refused the ALPN protocol") != NULL,
	      "a server with another ALPN: %s [%s]", idl_errname(err), idl_errdetail());
	srv_stop(&s);
}

static void
case_version(void)
{
	static char env[4][600];
	char address[64], *e[] = { env[0], env[1], env[2], NULL };
	char *argv[] = { IDL_TOP_BUILDDIR_DEFAULT "/examples/tls/tls-server", address, NULL };
	struct idl_tls_peer *p = NULL;
	idl_port_t port = NULL;
	struct srv s;
	int err;

	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	CHECK(strstr(s_client(address, "-tls1_2 -alpn idlkit/1"), "New, TLSv1.2") == NULL,
	      "TLS 1.2 refused by default");
	CHECK(log_has(&s, "ETLS", "no TLS version in common", NULL), "the log says why");
	srv_stop(&s);

	snprintf(address, sizeof address, "tls:127.0.0.1:%d", free_port());
	snprintf(env[0], sizeof env[0], "IDL_TLS_CERT=%s", path("server.crt"));
	snprintf(env[1], sizeof env[1], "IDL_TLS_KEY=%s", path("server.key"));
	snprintf(env[2], sizeof env[2], "IDL_TLS_MIN_VERSION=1.2");
	CHECK(srv_start(&s, argv, e, "server12.log") == 0, "tls-server, TLS 1.2 allowed");
	CHECK(strstr(s_client(address, "-tls1_2 -alpn idlkit/1"), "New, TLSv1.2") != NULL,
	      "TLS 1.2 taken with IDL_TLS_MIN_VERSION=1.2");
	srv_stop(&s);

	/* An idlkit client that allows 1.2, against a server that speaks only 1.2. */
	CHECK(s_server(&s, "-tls1_2 -alpn idlkit/1", address, sizeof address) == 0, "s_server");
	err = open_cfg(address, client_cfg("client", "min", "1.2", NULL), &port);
	CHECK(err == 0, "a 1.2 client: %s [%s]", idl_errname(err), idl_errdetail());
	if (err == 0 && (err = idl_port_peer_tls(port, &p)) == 0) {
		CHECK(p->version == 0x0303, "TLS 1.2: %#x", p->version);
		idl_tls_peer_free(p);
	}
	if (port != NULL)
		idl_port_close(port);
	srv_stop(&s);
}

static void
case_pin(void)
{
	char address[64], fp[65], colons[100], out[512];
	idl_port_t port = NULL;
	struct srv s;
	int err;

	openssl_fingerprint(path("server.crt"), fp);
	for (int i = 0; i < 32; i++)
		snprintf(colons + 3 * i, 4, "%.2s%s", fp + 2 * i, i < 31 ? ":" : "");
	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	err = open_cfg(address, client_cfg("client", "pin", colons, NULL), &port);
	CHECK(err == 0, "the right pin: %s [%s]", idl_errname(err), idl_errdetail());
	if (err == 0) {
		CHECK(whoami_whoami(port, out) == 0, "a call with the pin");
		idl_port_close(port);
	}
	fp[0] = fp[0] == '0' ? '1' : '0';
	err = open_cfg(address, client_cfg("client", "pin", fp, NULL), &port);
	CHECK(err == IDL_ECERT && strstr(idl_errdetail(), "pinned") != NULL, "another pin: %s [%s]",
	      idl_errname(err), idl_errdetail());
	srv_stop(&s);
}

/* A copy of the client's key with mode `mode`. */
static const char *
key_copy(mode_t mode)
{
	char cmd[1200];
	const char *k = path("loose.key");

	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod %o '%s'", path("client.key"), k,
		 (unsigned)mode, k);
	return system(cmd) == 0 ? k : "";
}

static void
case_key(void)
{
	static char env[2][600];
	char address[64], *e[] = { env[0], env[1], NULL };
	char *argv[] = { IDL_TOP_BUILDDIR_DEFAULT "/examples/tls/tls-server", address, NULL };
	idl_config_t *cfg;
	idl_port_t port = NULL;
	struct srv s;
	int err;

	/* At listen: the server says so and exits. */
	snprintf(address, sizeof address, "tls:127.0.0.1:%d", free_port());
	snprintf(env[0], sizeof env[0], "IDL_TLS_CERT=%s", path("client.crt"));
	snprintf(env[1], sizeof env[1], "IDL_TLS_KEY=%s", key_copy(0644));
	CHECK(srv_start(&s, argv, e, "loose.log") != 0, "a server with a key others may read");
	CHECK(log_has(&s, "others may read it (mode 0644): refused", NULL), "the server says why");
	s.ours = 0; /* it exited 1, as it should */
	srv_stop(&s);

	/* At open. */
	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	cfg = client_cfg(NULL, NULL);
	CHECK(cfg != NULL && idl_tls_config_set_cert(cfg, path("client.crt"), key_copy(0604)) == 0,
	      "configuration");
	err = open_cfg(address, cfg, &port);
	CHECK(err == IDL_EACCES && strstr(idl_errdetail(), "others may read it") != NULL,
	      "a client key others may read: %s [%s]", idl_errname(err), idl_errdetail());
	cfg = client_cfg(NULL, NULL);
	CHECK(cfg != NULL && idl_tls_config_set_cert(cfg, path("client.crt"), key_copy(0640)) == 0,
	      "configuration");
	err = open_cfg(address, cfg, &port);
	CHECK(err == 0, "a key its group may read (ssl-cert): %s [%s]", idl_errname(err),
	      idl_errdetail());
	if (err == 0)
		idl_port_close(port);
	/* A configuration in use does not change. */
	cfg = client_cfg("client", NULL);
	err = idl_port_open_config(address, cfg, &port);
	CHECK(err == 0 && idl_tls_config_set_name(cfg, "x") == IDL_EBUSY, "in use: EBUSY");
	idl_config_free(cfg);
	if (err == 0)
		idl_port_close(port);
	srv_stop(&s);
}

/*
 * A man in the middle: a thread that relays one connection between a client and the server
 * and, on request, flips one bit in the body of the next record in one direction, or cuts
 * the stream in the middle of the next record from the server.
 */
struct mitm {
	int listen_fd;
	int server_port;
	atomic_int flip_up; /* flip the next record from the client */
	atomic_int flip_down; /* flip the next record from the server */
	atomic_int cut_down; /* cut the next record from the server in half, then end */
	pthread_t thread;
};

/* Relays one direction's bytes, record by record (a record: 5 bytes of header, then its
 * length): what the flags ask for is done to the next whole record. 1 to go on, 0 at the
 * end of the stream. */
static int
mitm_relay(int from, int to, atomic_int *flip, atomic_int *cut, unsigned char *buf, size_t *have)
{
	ssize_t n = read(from, buf + *have, 70000 - *have);
	size_t len;

	if (n <= 0)
		return 0;
	*have += (size_t)n;
	while (*have >= 5 && *have >= 5 + (len = (size_t)buf[3] << 8 | buf[4])) {
		if (atomic_exchange(flip, 0))
			buf[5 + len / 2] ^= 0x10;
		if (cut != NULL && atomic_exchange(cut, 0)) {
			(void)write(to, buf, 5 + len / 2);
			return 0;
		}
		if (write(to, buf, 5 + len) != (ssize_t)(5 + len))
			return 0;
		memmove(buf, buf + 5 + len, *have - 5 - len);
		*have -= 5 + len;
	}
	return 1;
}

static void *
mitm_main(void *arg)
{
	struct mitm *m = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(m->server_port) };
	static unsigned char up[70000], down[70000];
	size_t hu = 0, hd = 0;
	int c = accept(m->listen_fd, NULL, NULL), s = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (c >= 0 && connect(s, (struct sockaddr *)&sa, sizeof sa) == 0) {
		for (;;) {
			struct pollfd p[2] = { { c, POLLIN, 0 }, { s, POLLIN, 0 } };

			if (poll(p, 2, 10000) <= 0)
				break;
			if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    !mitm_relay(c, s, &m->flip_up, NULL, up, &hu))
				break;
			if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    !mitm_relay(s, c, &m->flip_down, &m->cut_down, down, &hd))
				break;
		}
	}
	if (c >= 0)
		close(c);
	close(s);
	return NULL;
}

/* Starts a man in the middle before the server at server_address; its own address. */
static void
mitm_start(struct mitm *m, const char *server_address, char *address, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof sa;

	memset(m, 0, sizeof *m);
	m->server_port = atoi(strrchr(server_address, ':') + 1);
	m->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(m->listen_fd, (struct sockaddr *)&sa, sizeof sa);
	listen(m->listen_fd, 1);
	getsockname(m->listen_fd, (struct sockaddr *)&sa, &sl);
	snprintf(address, n, "tls:127.0.0.1:%d", ntohs(sa.sin_port));
	pthread_create(&m->thread, NULL, mitm_main, m);
}

static void
mitm_stop(struct mitm *m)
{
	pthread_join(m->thread, NULL);
	close(m->listen_fd);
}

/* A bench-server on tls:, its certificate the server's, requiring clients'. */
static int
bench_tls(struct srv *s, char *address, size_t n)
{
	static char env[3][600];
	char *e[] = { env[0], env[1], env[2], NULL };
	char *argv[] = { IDL_TOP_BUILDDIR_DEFAULT "/examples/bench/bench-server", address, NULL };

	snprintf(address, n, "tls:127.0.0.1:%d", free_port());
	snprintf(env[0], sizeof env[0], "IDL_TLS_CERT=%s", path("server.crt"));
	snprintf(env[1], sizeof env[1], "IDL_TLS_KEY=%s", path("server.key"));
	snprintf(env[2], sizeof env[2], "IDL_TLS_CA=%s", path("ca.crt"));
	return srv_start(s, argv, e, "bench.log");
}

/* Calls add through a man in the middle that does `what` to the second request (up) or
 * reply (down): the first call is right, the second fails with IDL_EINTEGRITY. */
static void
mitm_case(const char *what)
{
	char address[64], via[64];
	idl_port_t port = NULL;
	struct mitm m;
	struct srv s;
	int sum = 0, err;

	CHECK(bench_tls(&s, address, sizeof address) == 0, "bench-server");
	mitm_start(&m, address, via, sizeof via);
	err = open_cfg(via, client_cfg("client", "name", "localhost", NULL), &port);
	CHECK(err == 0, "open through the man in the middle: %s", idl_errdetail());
	if (err == 0) {
		err = bench_add(port, 20, 22, &sum);
		CHECK(err == 0 && sum == 42, "a call untouched: %s %d", idl_errname(err), sum);
		if (strcmp(what, "up") == 0)
			atomic_store(&m.flip_up, 1);
		else if (strcmp(what, "down") == 0)
			atomic_store(&m.flip_down, 1);
		else
			atomic_store(&m.cut_down, 1);
		sum = 0;
		idl_port_set_timeout(port, 5000);
		err = bench_add(port, 1, 2, &sum);
		CHECK(err == IDL_EINTEGRITY, "%s: got %s (sum %d) [%s], want EINTEGRITY", what,
		      idl_errname(err), sum, idl_errdetail());
		CHECK(err != 0 || sum == 3, "never a wrong result");
		idl_port_close(port);
	}
	mitm_stop(&m);
	if (strcmp(what, "up") == 0)
		CHECK(log_has(&s, "EINTEGRITY", NULL), "the server's log says the record changed");
	srv_stop(&s);
}

static void
case_flip(void)
{
	mitm_case("up");
	mitm_case("down");
}

static void
case_cut(void)
{
	mitm_case("cut");
}

static void
case_stalled(void)
{
	char address[64], out[512];
	int fds[200], n = 0;
	idl_port_t port = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct srv s;
	int64_t t0, ms;
	int err;

	CHECK(tls_server(&s, "server", 0, address, sizeof address) == 0, "tls-server");
	sa.sin_port = htons((uint16_t)atoi(strrchr(address, ':') + 1));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* 200 clients that connect and send half a ClientHello record, then nothing. */
	for (int i = 0; i < 200; i++) {
		static const unsigned char half[] = { 0x16, 0x03, 0x01, 0x01, 0x00, 0x01, 0x00 };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
		    write(fd, half, sizeof half) == (ssize_t)sizeof half)
			fds[n++] = fd;
		else if (fd >= 0)
			close(fd);
	}
	CHECK(n == 200, "200 stalled handshakes: %d", n);
	usleep(200 * 1000);
	t0 = idl_now_ns();
	err = open_cfg(address, client_cfg("client", NULL), &port);
	if (err == 0) {
		err = whoami_whoami(port, out);
		idl_port_close(port);
	}
	ms = ms_since(t0);
	CHECK(err == 0, "a client beside them: %s [%s]", idl_errname(err), idl_errdetail());
	CHECK(ms < 1000, "its connect, handshake and call: %lld ms", (long long)ms);
	printf("tls-test: stalled: connect+handshake+call beside 200 stalled handshakes: %lld "
	       "ms\n",
	       (long long)ms);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	srv_stop(&s);
}

static void
case_ipv6(void)
{
	static char env[3][600];
	char address[64], out[512], *e[] = { env[0], env[1], env[2], NULL };
	char *argv[] = { IDL_TOP_BUILDDIR_DEFAULT "/examples/tls/tls-server", address, NULL };
	idl_port_t port = NULL;
	struct srv s;
	int fd = socket(AF_INET6, SOCK_STREAM, 0), err;
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		printf("tls-test: ipv6: no IPv6 loopback here (skipped)\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	snprintf(address, sizeof address, "tls:[::1]:%d", free_port());
	snprintf(env[0], sizeof env[0], "IDL_TLS_CERT=%s", path("server.crt"));
	snprintf(env[1], sizeof env[1], "IDL_TLS_KEY=%s", path("server.key"));
	snprintf(env[2], sizeof env[2], "IDL_TLS_CA=%s", path("ca.crt"));
	CHECK(srv_start(&s, argv, e, "server6.log") == 0, "tls-server on [::1]");
	err = open_cfg(address, client_cfg("client", NULL), &port);
	CHECK(err == 0, "tls:[::1]: %s [%s]", idl_errname(err), idl_errdetail());
	if (err == 0) {
		CHECK(whoami_whoami(port, out) == 0, "a call over IPv6");
		idl_port_close(port);
	}
	srv_stop(&s);
}

struct async_res {
	int ran, kr, sum;
};

static void
async_done(void *ctx, kern_return_t kr, int sum)
{
	struct async_res *r = ctx;

	r->ran++;
	r->kr = kr;
	r->sum = sum;
}

/* One call in flight on a new pollable port (the IDL_TLS_* variables this process has set),
 * driven until its done function ran: its result in *r, the CPU time this process spent
 * meanwhile returned in ms. */
static int64_t
async_call(const char *address, int timeout_ms, struct async_res *r)
{
	struct rusage u0, u1;
	idl_port_t port = NULL;
	int err;

	memset(r, 0, sizeof *r);
	getrusage(RUSAGE_SELF, &u0);
	err = idl_port_open_deferred(address, &port);
	if (err == 0 && (err = idl_port_set_timeout(port, timeout_ms)) == 0)
		err = bench_add_async(port, 20, 22, async_done, r, NULL);
	CHECK(err == 0, "bench_add_async: %s [%s]", idl_errname(err), idl_errdetail());
	for (int i = 0; err == 0 && r->ran == 0 && i < 100; i++)
		(void)idl_port_wait(port, 100);
	idl_port_close(port);
	getrusage(RUSAGE_SELF, &u1);
	return (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec + u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) *
		       1000 +
	       (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec + u1.ru_stime.tv_usec -
		u0.ru_stime.tv_usec) /
		       1000;
}

/* A pollable port's connect and handshake in the caller's loop: while the server does not
 * answer (stopped), the loop waits for its answer without spinning, and the call ends at its
 * deadline; once it answers, the call goes. A loop that woke for room to write would spin and
 * take all the CPU the scheduler gives it (over 100 ms in that second even on this loaded
 * machine; a few ms when it waits, 10 in a sanitizer's build). */
static void
case_async(void)
{
	char address[64];
	struct async_res r;
	struct srv s;
	int64_t cpu;

	CHECK(bench_tls(&s, address, sizeof address) == 0, "bench-server");
	setenv("IDL_TLS_CERT", path("client.crt"), 1);
	setenv("IDL_TLS_KEY", path("client.key"), 1);
	setenv("IDL_TLS_CA", path("ca.crt"), 1);
	kill(s.pid, SIGSTOP);
	cpu = async_call(address, 1000, &r);
	CHECK(r.ran == 1 && r.kr == IDL_ETIMEDOUT, "a stopped server: ran %d, %s", r.ran,
	      idl_errname(r.kr));
	CHECK(cpu < 50, "the loop waited for the handshake without spinning: %lld ms of CPU",
	      (long long)cpu);
	printf("tls-test: async: a handshake waiting 1 s cost the loop %lld ms of CPU\n",
	       (long long)cpu);
	kill(s.pid, SIGCONT);
	(void)async_call(address, 5000, &r);
	CHECK(r.ran == 1 && r.kr == 0 && r.sum == 42, "the server answering: ran %d, %s, %d", r.ran,
	      idl_errname(r.kr), r.sum);
	unsetenv("IDL_TLS_CERT");
	unsetenv("IDL_TLS_KEY");
	unsetenv("IDL_TLS_CA");
	srv_stop(&s);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "identity", case_identity }, { "server", case_server }, { "client", case_client },
	{ "plain", case_plain },       { "alpn", case_alpn },	  { "version", case_version },
	{ "pin", case_pin },	       { "key", case_key },	  { "flip", case_flip },
	{ "cut", case_cut },	       { "async", case_async },	  { "stalled", case_stalled },
	{ "ipv6", case_ipv6 },
};

int
main(int argc, char **argv)
{
	const char *src = getenv("IDL_TOP_SRCDIR");
	char cmd[1024];
	int ran = 0, rc;

	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof dir, "%s/idlkit-tls.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("tls-test: mkdtemp");
		return 1;
	}
	snprintf(cmd, sizeof cmd, "sh '%s/tests/tls/certs.sh' '%s' >/dev/null",
		 src != NULL ? src : IDL_TOP_SRCDIR_DEFAULT, dir);
	rc = system(cmd);
	if (rc != 0) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		(void)system(cmd);
		if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
			printf("tls-test: the openssl command is missing (skipped)\n");
			return 77;
		}
		fprintf(stderr, "tls-test: certs.sh failed\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int before = failures;

		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		cases[i].fn();
		printf("tls-test: %s: %s\n", cases[i].name, failures == before ? "PASS" : "FAIL");
		fflush(stdout);
		ran++;
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	(void)system(cmd);
	if (ran == 0) {
		fprintf(stderr, "tls-test: no case named %s\n", argv[1]);
		return 2;
	}
	return failures == 0 ? 0 : 1;
}
