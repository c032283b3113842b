/*
 * tls_test.h - what the files of the tls: transport's test share (tls_lib.c): the directory of
 * the certificates tests/tls/certs.sh made, the failure count, servers in processes of their
 * own, client configurations; and each file's cases, which tls_test.c's table runs.
 */
#ifndef IDL_TESTS_TLS_TEST_H
#define IDL_TESTS_TLS_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

extern char dir[256]; /* the certificates */
extern int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "tls-test: %s:%d: FAIL: ", __FILE__, __LINE__);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

int64_t ms_since(int64_t t0);
/* NAME in the certificates' directory (8 buffers, used in turn). */
const char *path(const char *name);
/* A free loopback port (bind 0, read it back, close). */
int free_port(void);

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
 * openssl s_server, "ACCEPT"): 0, or -1. Its standard error goes to the file `log` of the
 * certificates' directory.
 */
int srv_start(struct srv *s, char *const argv[], char *const env[], const char *log);
/* SIGTERM, and a server of the tree must exit 0. */
void srv_stop(struct srv *s);
/* Whether the server's log has a line with every one of the strings (NULL-ended), waiting
 * up to 2 s for it. */
int log_has(const struct srv *s, ...);
/* The tls-server of the examples, its certificate NAME, with the test CA (so it requires
 * client certificates) unless `noca`. */
int tls_server(struct srv *s, const char *name, int noca, char *address, size_t n);
/* A client configuration: certificate NAME (NULL: none), the test CA, and more settings as
 * pairs ("crl", PATH), ("pin", HEX), ("name", NAME), ("min", "1.2"), ("verify", MODE),
 * ("resume", "0"), NULL-ended. */
idl_config_t *client_cfg(const char *name, ...);
/* Opens a port with cfg (freed here): the open's result, the port in *portp. */
int open_cfg(const char *address, idl_config_t *cfg, idl_port_t *portp);
/* The SHA-256 fingerprint of a certificate as `openssl x509` prints it, in lower-case hex. */
void openssl_fingerprint(const char *crt, char *hex);

/* tls_rotate.c: certificates reloaded by a running server; tls_resume.c: resumed sessions;
 * tls_stall.c: stalled peers beside a client served at once. */
void case_stalled(void);
void case_reload(void);
void case_rotate(void);
void case_resume(void);

#endif
