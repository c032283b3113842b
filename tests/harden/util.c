/*
 * util.c - the hardening tests' helpers: server processes, addresses, clocks, /proc.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harden.h"
#include "procdump.h"
#include "tls_certs.h"

char hd_dir[200];

int64_t
hd_now_ms(void)
{
	return idl_now_ns() / 1000000;
}

void
hd_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
}

static const char *
hd_server_path(void)
{
	const char *p = getenv("IDL_HARDEN_SERVER");

	return p != NULL ? p : IDL_TOP_BUILDDIR "/tests/harden/every-server";
}

/* Copies a server's log to stderr, so that a failure says why in the test's own log. */
static void
hd_cat(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return;
	while (fgets(buf, sizeof buf, f) != NULL)
		fputs(buf, stderr);
	fclose(f);
}

int
hd_start(struct hd_srv *s, const char *addr, const char *const *opts, rlim_t nofile)
{
	static unsigned nlog;
	const char *argv[32];
	int out[2], logfd, n = 0;
	char line[64];
	size_t got = 0;
	const char *start_ms;
	int64_t end;

	snprintf(s->addr, sizeof s->addr, "%s", addr);
	snprintf(s->log, sizeof s->log, "%s/server-%u.log", hd_dir, nlog++);
	argv[n++] = hd_server_path();
	for (; opts != NULL && *opts != NULL && n < 30; opts++)
		argv[n++] = *opts;
	argv[n++] = addr;
	argv[n] = NULL;
	if (pipe2(out, O_CLOEXEC) != 0)
		return -1;
	logfd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if ((s->pid = fork()) == 0) {
		dup2(out[1], 1);
		dup2(logfd, 2);
		if (nofile != 0) {
			struct rlimit rl = { nofile, nofile };

			setrlimit(RLIMIT_NOFILE, &rl);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	close(logfd);
	if (s->pid < 0) {
		close(out[0]);
		return -1;
	}
	/* "ready" within 10 s, or the server failed; valgrind.sh gives servers under
	 * valgrind longer (IDL_HARDEN_START_MS) on a loaded machine. */
	start_ms = getenv("IDL_HARDEN_START_MS");
	end = hd_now_ms() + (start_ms != NULL ? strtol(start_ms, NULL, 10) : 10000);
	while (got < sizeof line - 1 && hd_now_ms() < end) {
		struct pollfd p = { out[0], POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if ((r = read(out[0], line + got, sizeof line - 1 - got)) <= 0)
			break;
		got += (size_t)r;
		line[got] = '\0';
		if (strstr(line, "ready\n") != NULL) {
			close(out[0]);
			return 0;
		}
	}
	close(out[0]);
	fprintf(stderr, "harden: every-server on %s did not start; its log %s:\n", addr, s->log);
	hd_cat(s->log);
	hd_kill(s);
	return -1;
}

int
hd_stop(struct hd_srv *s)
{
	int status;
	int64_t end = hd_now_ms() + 10000;

	if (s->pid <= 0)
		return -1;
	kill(s->pid, SIGTERM);
	while (hd_now_ms() < end) {
		pid_t r = waitpid(s->pid, &status, WNOHANG);

		if (r == s->pid) {
			s->pid = 0;
			if (status != 0) {
				fprintf(stderr,
					"harden: the server ended with status %#x; its log:\n",
					(unsigned)status);
				hd_cat(s->log);
			}
			return status;
		}
		hd_sleep_ms(10);
	}
	fprintf(stderr, "harden: the server did not stop within 10 s of SIGTERM; its threads:\n");
	procdump_threads(s->pid, stderr);
	fprintf(stderr, "harden: its log:\n");
	hd_cat(s->log);
	hd_kill(s);
	return -1;
}

void
hd_kill(struct hd_srv *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

void
hd_reclaim(const char *addr)
{
	if (strncmp(addr, "unix:", 5) == 0 || strncmp(addr, "shm:", 4) == 0)
		unlink(strchr(addr, ':') + 1);
	else if (strncmp(addr, "port:", 5) == 0)
		mq_unlink(addr + 5);
}

/* A free loopback port of the socket type: bound to port 0, read back, closed. */
static int
hd_free_port(int type)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

int
hd_address(const char *scheme, char *buf, size_t n)
{
	static unsigned seq;
	int r;

	seq++;
	if (strcmp(scheme, "unix") == 0 || strcmp(scheme, "shm") == 0)
		r = snprintf(buf, n, "%s:%s/s%u.sock", scheme, hd_dir, seq);
	else if (strcmp(scheme, "tcp") == 0 || strcmp(scheme, "udp") == 0)
		r = snprintf(buf, n, "%s:127.0.0.1:%d", scheme,
			     hd_free_port(scheme[0] == 't' ? SOCK_STREAM : SOCK_DGRAM));
	else if (strcmp(scheme, "port") == 0)
		r = snprintf(buf, n, "port:/idlharden-%ld-%u", (long)getpid(), seq);
	else if (strcmp(scheme, "tls") == 0 && test_tls_certs(hd_dir) == 0)
		r = snprintf(buf, n, "tls:127.0.0.1:%d", hd_free_port(SOCK_STREAM));
	else
		return -1;
	return r < 0 || (size_t)r >= n ? -1 : 0;
}

int
hd_log_has(const struct hd_srv *s, const char *needle, int wait_ms)
{
	int64_t end = hd_now_ms() + wait_ms;

	for (;;) {
		char buf[8192];
		FILE *f = fopen(s->log, "r");
		int found = 0;

		if (f != NULL) {
			while (!found && fgets(buf, sizeof buf, f) != NULL)
				found = strstr(buf, needle) != NULL;
			fclose(f);
		}
		if (found)
			return 1;
		if (hd_now_ms() >= end) {
			fprintf(stderr, "harden: no \"%s\" in %s\n", needle, s->log);
			return 0;
		}
		hd_sleep_ms(20);
	}
}

long
hd_cpu_ms(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	p = fgets(buf, sizeof buf, f);
	fclose(f);
	/* The fields after the command name, which ends at the last ')'. */
	if (p == NULL || (p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

int
hd_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

idl_port_t
hd_open(const char *addr, int timeout_ms)
{
	idl_port_t p = NULL;
	int err = idl_port_open(addr, &p);

	HD_CHECK_KR(err, 0);
	if (err != 0)
		return NULL;
	idl_port_set_timeout(p, timeout_ms);
	return p;
}

struct hd_find {
	const char *scheme;
	const struct idl_transport *tr;
	const char **out;
	size_t n, max;
};

static void
hd_each(const struct idl_transport *t, void *arg)
{
	struct hd_find *f = arg;

	if (f->scheme != NULL && strcmp(t->scheme, f->scheme) == 0)
		f->tr = t;
	if (f->out != NULL && f->n < f->max)
		f->out[f->n++] = t->scheme;
}

const struct idl_transport *
hd_transport(const char *scheme)
{
	struct hd_find f = { scheme, NULL, NULL, 0, 0 };

	idl_transport_find("unix:/", &(const char *){ NULL });
	idl_transport_foreach(hd_each, &f);
	return f.tr;
}

size_t
hd_schemes(const char **out, size_t max)
{
	struct hd_find f = { NULL, NULL, out, 0, max };

	idl_transport_find("unix:/", &(const char *){ NULL });
	idl_transport_foreach(hd_each, &f);
	return f.n;
}
