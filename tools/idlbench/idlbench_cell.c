/*
 * idlbench_cell.c - one cell: a server process and a client process, forked as lmbench
 * does, pinned as the placement says; the client's figures come back through a pipe.
 *
 * Every measurement runs in fresh children so that the parent stays single-threaded (it
 * forks again and again) and no state - a connection, a transport's threads, a warm cache
 * of one kind of cell - carries from one cell to the next.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "idlbench.h"

/* How long a server may take to be ready, and a client to finish its cell. */
#define IB_READY_MS 10000
#define IB_CELL_MS 300000
#define IB_STOP_MS 3000

static cpu_set_t ib_all_cpus;
static int ib_all_saved;

double
ib_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Pins the calling process to one CPU, or (cpu < 0) gives it back every CPU it started
 * with. */
int
ib_set_cpu(int cpu)
{
	cpu_set_t set;

	if (!ib_all_saved) {
		if (sched_getaffinity(0, sizeof ib_all_cpus, &ib_all_cpus) != 0)
			return -1;
		ib_all_saved = 1;
	}
	if (cpu < 0)
		return sched_setaffinity(0, sizeof ib_all_cpus, &ib_all_cpus);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

void
ib_ready(int fd, const char *msg)
{
	char line[256];
	int n = msg == NULL ? snprintf(line, sizeof line, "ready\n")
			    : snprintf(line, sizeof line, "error: %s\n", msg);

	if (n > 0 && write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
		n = -1;
	close(fd);
}

/* A port nobody listens on at the moment (bound to 0 and released): the transports take an
 * address, not a listening socket, so this small race is the price. */
static int
ib_free_port(int type)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* The address of the n-th endpoint of a run: files live in the run's private directory. */
int
ib_make_addr(const char *scheme, const char *dir, unsigned n, char *buf, size_t len)
{
	int r, port;

	if (strcmp(scheme, "unix") == 0 || strcmp(scheme, "shm") == 0)
		r = snprintf(buf, len, "%s:%s/%c%u.sock", scheme, dir, scheme[0], n);
	else if (strcmp(scheme, "tcp") == 0 || strcmp(scheme, "udp") == 0) {
		port = ib_free_port(scheme[0] == 't' ? SOCK_STREAM : SOCK_DGRAM);
		if (port < 0)
			return -1;
		r = snprintf(buf, len, "%s:127.0.0.1:%d", scheme, port);
	} else if (strcmp(scheme, "port") == 0)
		r = snprintf(buf, len, "port:/idlbench.%ld.%u", (long)getpid(), n);
	else
		return -1;
	return r > 0 && (size_t)r < len ? 0 : -1;
}

/* Reads exactly len bytes within ms milliseconds. */
static int
ib_read_full(int fd, void *buf, size_t len, int ms)
{
	size_t got = 0;
	double end = ib_now() + ms / 1000.0;

	while (got < len) {
		struct pollfd p = { fd, POLLIN, 0 };
		int left = (int)((end - ib_now()) * 1000.0);
		ssize_t n;

		if (left <= 0)
			return -1;
		if (poll(&p, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Waits for the ready line; returns 0, or -1 with the server's message in why. */
static int
ib_wait_ready(int fd, char *why, size_t len)
{
	char line[256];
	size_t got = 0;

	while (got < sizeof line - 1) {
		if (ib_read_full(fd, line + got, 1, IB_READY_MS) != 0)
			break;
		if (line[got++] == '\n')
			break;
	}
	line[got] = '\0';
	/* A peer program says "ready ADDRESS" (peer.h). */
	if (strcmp(line, "ready\n") == 0 ||
	    (strncmp(line, "ready ", 6) == 0 && got > 0 && line[got - 1] == '\n'))
		return 0;
	line[strcspn(line, "\n")] = '\0';
	snprintf(why, len, "%.*s", (int)len - 1,
		 strncmp(line, "error: ", 7) == 0 ? line + 7 : "the server did not start");
	return -1;
}

static void
ib_stop(pid_t pid, int sig)
{
	int status;

	if (pid <= 0)
		return;
	kill(pid, sig);
	for (int ms = 0; ms < IB_STOP_MS; ms++) {
		struct timespec ts = { 0, 1000000 };

		if (waitpid(pid, &status, WNOHANG) == pid)
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static int
ib_serve_child(const struct ib_cell *cell, int fd)
{
	switch (cell->kind) {
	case IB_IDL:
		return ib_idl_serve(cell, fd);
	case IB_FLOOR:
		return ib_floor_serve(cell, fd);
	case IB_PEER:
		return ib_peer_serve(cell, fd);
	case IB_PROG:
		return ib_prog_serve(cell, fd);
	case IB_PROBE:
		return ib_idl_serve(cell, fd);
	}
	return 1;
}

static int
ib_client_child(const struct ib_cell *cell, struct ib_reps *out)
{
	switch (cell->kind) {
	case IB_IDL:
		return ib_idl_client(cell, out);
	case IB_FLOOR:
		return ib_floor_client(cell, out);
	case IB_PEER:
		return ib_peer_client(cell, out);
	case IB_PROG:
		return ib_prog_client(cell, out);
	case IB_PROBE:
		return ib_user != NULL ? ib_user_probe(cell, out) : ib_bench_probe(cell, out);
	}
	return -1;
}

/* What a cell leaves behind when a process of it was killed: socket files and queues. */
static void
ib_cleanup(const char *addr)
{
	const char *rest = strchr(addr, ':');

	if (rest == NULL)
		return;
	rest++;
	if (strncmp(addr, "unix:", 5) == 0 || strncmp(addr, "shm:", 4) == 0)
		unlink(rest);
	else if (strncmp(addr, "port:", 5) == 0)
		fl_mq_cleanup(rest);
}

int
ib_cell_run(const struct ib_cell *cell, int cpu_client, int cpu_server, struct ib_reps *out)
{
	pid_t srv = -1, cli;
	int rp[2], cp[2], status, r = -1;

	memset(out, 0, sizeof *out);
	fflush(NULL);
	if (!cell->no_server) {
		if (pipe2(rp, O_CLOEXEC) != 0)
			goto sysfail;
		if ((srv = fork()) < 0)
			goto sysfail;
		if (srv == 0) {
			/* The parent's interrupt handler must not outlive the fork: a floor
			 * server dies of SIGTERM, an idlkit one installs its own. */
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			close(rp[0]);
			if (ib_set_cpu(cpu_server) != 0 && cpu_server >= 0) {
				ib_ready(rp[1], "cannot pin the server to its CPU");
				_exit(1);
			}
			_exit(ib_serve_child(cell, rp[1]));
		}
		close(rp[1]);
		r = ib_wait_ready(rp[0], out->why, sizeof out->why);
		close(rp[0]);
		if (r != 0)
			goto out;
	}
	if (pipe2(cp, O_CLOEXEC) != 0)
		goto sysfail;
	if ((cli = fork()) < 0)
		goto sysfail;
	if (cli == 0) {
		struct ib_reps res;
		int cr;

		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		close(cp[0]);
		memset(&res, 0, sizeof res);
		if (ib_set_cpu(cpu_client) != 0 && cpu_client >= 0)
			snprintf(res.why, sizeof res.why, "cannot pin the client to its CPU");
		else if ((cr = ib_client_child(cell, &res)) != 0 && res.why[0] == '\0')
			snprintf(res.why, sizeof res.why, "the client failed");
		_exit(write(cp[1], &res, sizeof res) == (ssize_t)sizeof res ? 0 : 1);
	}
	close(cp[1]);
	r = ib_read_full(cp[0], out, sizeof *out, IB_CELL_MS);
	close(cp[0]);
	if (r != 0) {
		ib_stop(cli, SIGKILL);
		snprintf(out->why, sizeof out->why, "the client did not finish");
	} else {
		waitpid(cli, &status, 0);
		if (out->why[0] != '\0')
			r = -1;
	}
	goto out;
sysfail:
	snprintf(out->why, sizeof out->why, "fork: %s", strerror(errno));
	r = -1;
out:
	if (!cell->no_server) {
		ib_stop(srv, SIGTERM);
		ib_cleanup(cell->addr);
	}
	if (cell->addr2[0] != '\0')
		ib_cleanup(cell->addr2);
	return r;
}
