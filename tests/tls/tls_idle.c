/*
 * tls_idle.c - the memory an idle connection costs, on tls: and, for comparison, on tcp:
 * (docs/transports/tls.md, "Memory per idle connection"; make check-long).
 *
 *     tls-idle [N [SCHEME...]]     N connections (5,000), over tls and tcp by default
 *
 * For each scheme a server runs in a child process of its own (bench.defs, mutual
 * authentication with tests/tls/certs.sh's certificates on tls:, no limit per address), and
 * this process opens N ports to it, each making its connection, its hello and one call that
 * moves 64 KiB (every buffer of both sides filled once), and then leaves them all idle. The
 * figures are the growth of each process's resident memory (VmRSS) over that, divided by N:
 * what a server pays for an idle client, and what a client pays for an idle port. A server's
 * idle tls: connection gives OpenSSL's record buffers and the layer's own back
 * (SSL_MODE_RELEASE_BUFFERS, and tls_io.c's after each receive); the test fails when one costs
 * the server more than TLS_IDLE_MAX_KIB beyond what a tcp: connection costs, as it would if it
 * kept a buffer. The descriptor limit is raised to its hard value; N must fit under it twice
 * (this process's ports, the server's connections).
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "bench.h"
#include "benchServer.h"
#include "tls_certs.h"

/* The most a server's idle tls: connection may cost beyond a tcp: one: its SSL object, its
 * session and the client's certificate, parsed (23 KiB on OpenSSL 3.0). Its record buffers
 * held would be 24 KiB more, and the layer's ciphertext buffer 18 KiB. */
#define TLS_IDLE_MAX_KIB 32.0

/* A process's resident memory in KiB, or -1. */
static long
rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The server: bench.defs on address, no limit per address, until SIGTERM. */
static void
serve(const char *address, int ready)
{
	idl_server_t *srv;
	int err = idl_server_create(&srv);

	if (err == 0)
		err = idl_server_add_subsystem(srv, &bench_subsystem, bench_server);
	if (err == 0)
		err = idl_server_set_limit(srv, IDL_LIMIT_PER_ADDRESS, 0);
	if (err == 0)
		err = idl_server_listen(srv, address);
	if (err != 0) {
		fprintf(stderr, "tls-idle: server %s: %s\n", address, idl_errdetail());
		_exit(1);
	}
	signal(SIGTERM, SIG_DFL);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	(void)idl_server_run(srv);
	_exit(0);
}

/* A free loopback port: the kernel's choice for a socket bound and closed. */
static int
free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* A connection's one call: 64 KiB of out-of-line data, so that every buffer of both sides was
 * filled once, as a connection that carried data before it went idle. */
static int
one_call(idl_port_t port, char *data)
{
	return bench_ool64k(port, data, 64u << 10);
}

/* One scheme: N idle connections. 0, or 1 when it failed. */
static int
measure(const char *scheme, unsigned n, double *srv_kib, double *cli_kib)
{
	char address[64];
	idl_port_t *ports = calloc(n, sizeof *ports);
	static char data[64u << 10];
	long s0, s1, c0, c1;
	int p[2], rc = 0;
	unsigned opened = 0;
	pid_t pid;
	char b;

	snprintf(address, sizeof address, "%s:127.0.0.1:%d", scheme, free_port());
	if (ports == NULL || pipe(p) != 0 || (pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		close(p[0]);
		serve(address, p[1]);
	}
	close(p[1]);
	if (read(p[0], &b, 1) != 1) {
		close(p[0]);
		waitpid(pid, NULL, 0);
		free(ports);
		return 1;
	}
	close(p[0]);
	/* One connection first, so that both sides' one-time costs (OpenSSL's tables, the
	 * server's threads, the contexts) are in the baseline. */
	if (idl_port_open(address, &ports[opened]) == 0 && one_call(ports[opened], data) == 0)
		opened++;
	usleep(300 * 1000);
	s0 = rss_kib(pid);
	c0 = rss_kib(getpid());
	for (; opened < n; opened++) {
		int err = idl_port_open(address, &ports[opened]);

		if (err == 0 && (err = one_call(ports[opened], data)) != 0)
			idl_port_close(ports[opened]);
		if (err != 0) {
			fprintf(stderr, "tls-idle: %s: connection %u: %s [%s]\n", scheme, opened,
				idl_errname(err), idl_errdetail());
			rc = 1;
			break;
		}
	}
	/* Idle: the server's connections have gone quiet. */
	sleep(1);
	s1 = rss_kib(pid);
	c1 = rss_kib(getpid());
	*srv_kib = (double)(s1 - s0) / (opened > 1 ? opened - 1 : 1);
	*cli_kib = (double)(c1 - c0) / (opened > 1 ? opened - 1 : 1);
	printf("tls-idle: %s: %u idle connections: server %.1f KiB each (%ld -> %ld KiB), "
	       "client %.1f KiB each (%ld -> %ld KiB)\n",
	       scheme, opened, *srv_kib, s0, s1, *cli_kib, c0, c1);
	for (unsigned i = 0; i < opened; i++)
		idl_port_close(ports[i]);
	free(ports);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 5000;
	char dir[] = "/tmp/idlkit-tls-idle.XXXXXX", cmd[300];
	double srv[2] = { 0, 0 }, cli[2] = { 0, 0 };
	const char *schemes[2] = { "tls", "tcp" };
	struct rlimit rl;
	int nschemes = 2, rc = 0;

	if (argc > 2) {
		nschemes = argc - 2 > 2 ? 2 : argc - 2;
		for (int i = 0; i < nschemes; i++)
			schemes[i] = argv[2 + i];
	}
	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (n < 2 || rl.rlim_cur < 2 * (rlim_t)n + 200) {
		printf("tls-idle: %u connections need %u descriptors, the limit is %llu "
		       "(skipped)\n",
		       n, 2 * n + 200, (unsigned long long)rl.rlim_cur);
		return 77;
	}
	if (mkdtemp(dir) == NULL || test_tls_certs(dir) != 0)
		return 1;
	for (int i = 0; i < nschemes; i++)
		rc |= measure(schemes[i], n, &srv[i], &cli[i]);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	(void)system(cmd);
	if (rc == 0 && nschemes == 2 && strcmp(schemes[0], "tls") == 0 &&
	    strcmp(schemes[1], "tcp") == 0) {
		printf("tls-idle: a server's idle tls: connection costs %.1f KiB more than a tcp: "
		       "one (at most %.0f)\n",
		       srv[0] - srv[1], TLS_IDLE_MAX_KIB);
		if (srv[0] - srv[1] > TLS_IDLE_MAX_KIB)
			rc = 1;
	}
	return rc;
}
