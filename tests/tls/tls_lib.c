/*
 * tls_lib.c - what the files of the tls: transport's test share (tls_test.h): paths in the
 * certificates' directory, free ports, servers in processes of their own and their logs,
 * client configurations.
 */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tls_test.h"

char dir[256]; /* the certificates */
int failures;

int64_t
ms_since(int64_t t0)
{
	return (idl_now_ns() - t0) / 1000000;
}

const char *
path(const char *name)
{
	static char buf[8][512];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

/* A free loopback port (bind 0, read it back, close). */
int
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

/*
 * Runs argv with the environment variables of env ("NAME=VALUE", NULL-ended; the IDL_TLS_*
 * ones of this process are removed first) and waits until it prints "ready" (or, for
 * openssl s_server, "ACCEPT"): 0, or -1.
 */
int
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

void
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
int
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
int
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
idl_config_t *
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
		else if (strcmp(k, "resume") == 0)
			err = idl_tls_config_set_resume(cfg, strcmp(v, "1") == 0);
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
int
open_cfg(const char *address, idl_config_t *cfg, idl_port_t *portp)
{
	int err = idl_port_open_config(address, cfg, portp);

	idl_config_free(cfg);
	return err;
}

/* The SHA-256 fingerprint of a certificate as `openssl x509` prints it, in lower-case hex. */
void
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
