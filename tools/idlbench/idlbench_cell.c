/*
 * idlbench_cell.c - one cell, layer 3 (ib_cell.h): a server process and a client process,
 * forked as lmbench does, pinned as the placement says; the client's figures come back
 * through a pipe, and with them the CPU each process spent on the calls.
 *
 * Every measurement runs in fresh children so that the parent stays single-threaded (it
 * forks again and again) and no state - a connection, a transport's threads, a warm cache
 * of one kind of cell - carries from one cell to the next; the one exception is a server
 * kept across a transport's rows for the user's routines (--impl), whose state is the
 * point (idlbench_run.c).
 *
 * The CPU of a cell (docs/benchmarks.md, "Reading the output"): the client's loop marks
 * where its calls start (before the warm-up, its connection made) and where they end (after
 * the last repetition), reading there the server's CPU clock (clock_getcpuclockid() on its
 * pid) and its own rusage (getrusage(RUSAGE_SELF): every thread of it, user and system
 * time). The server's is split into user and system time as its rusage from wait4() splits
 * its whole life. Neither process's start-up, connection or exit is counted; each figure is
 * divided by the calls (messages, MB) of the warm-up and the repetitions. The kernel counts
 * a thread's time when it stops or at its tick, so a reading waits for the threads to be idle
 * (ib_cpu_settled()). A peer program's client is read between its reports of repetitions,
 * and its server here, before the client starts and after it ended.
 *
 * It picks each kind's sides (the floors, bench.defs's, the user's, the peers') and knows the
 * base, the floors and the interface; it must not know runs or reports.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ib_cell.h"

/* How long a server may take to be ready, and a client to finish its cell. */
#define IB_READY_MS 10000
#define IB_CELL_MS 300000
#define IB_STOP_MS 3000

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
	else if (strcmp(scheme, "tcp") == 0 || strcmp(scheme, "tls") == 0 ||
		 strcmp(scheme, "udp") == 0) {
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

/* Stops a process and reaps it, its rusage (of its whole life) in ru when not NULL. */
static void
ib_stop(pid_t pid, int sig, struct rusage *ru)
{
	struct rusage none;
	int status;

	if (pid <= 0)
		return;
	if (ru == NULL)
		ru = &none;
	kill(pid, sig);
	for (int ms = 0; ms < IB_STOP_MS; ms++) {
		struct timespec ts = { 0, 1000000 };

		if (wait4(pid, &status, WNOHANG, ru) == pid)
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	wait4(pid, &status, 0, ru);
}

/* A floor's job: the row's bytes over the column's kernel object, as the cell says. */
static void
ib_floor_job(const struct ib_cell *cell, struct fl_job *j)
{
	static const enum fl_mode modes[] = { FL_CALL, FL_ONEWAY, FL_PINGPONG, FL_SENDTO,
					      FL_CONNECT };
	const struct ib_row *row = cell->row, *sync = ib_row_named("intrpc");

	memset(j, 0, sizeof *j);
	j->ops = cell->col->floor;
	j->mode = modes[row->mode];
	j->req = row->req;
	j->rep = row->rep;
	j->sreq = sync != NULL ? sync->req : 32;
	j->srep = sync != NULL ? sync->rep : 32;
	/* A user's one-way row ends with a round trip of another routine: its request is sent
	 * at the row's size (a stream floor reads each message at that size), its reply at
	 * the routine's. */
	if (row->u != NULL) {
		j->sreq = j->req;
		j->srep = row->srep != 0 ? row->srep : 32;
	}
	j->payload = row->payload;
	j->count_sent = row->count_sent;
	j->resume = row->resume;
	j->iterations = cell->iterations;
	j->reps = cell->reps;
	j->warmup = cell->warmup;
	j->inflight = cell->inflight;
	j->addr = cell->addr;
	j->addr2 = cell->addr2;
}

static int
ib_serve_child(const struct ib_cell *cell, int fd)
{
	struct fl_job j;

	switch (cell->kind) {
	case IB_IDL:
	case IB_PROBE:
	case IB_SETUP:
		return ib_user != NULL ? ib_user_serve(cell, fd) : ib_idl_serve(cell, fd);
	case IB_FLOOR:
		ib_floor_job(cell, &j);
		return fl_serve(&j, fd);
	case IB_PEER:
		return ib_peer_serve(cell, fd);
	case IB_PROG:
		return ib_prog_serve(cell, fd);
	}
	return 1;
}

static int
ib_client_child(const struct ib_cell *cell, struct ib_reps *out)
{
	struct fl_job j;

	switch (cell->kind) {
	case IB_IDL:
		return cell->row->u != NULL ? ib_user_client(cell, out) : ib_idl_client(cell, out);
	case IB_FLOOR:
		ib_floor_job(cell, &j);
		return fl_client(&j, out);
	case IB_PEER:
		return ib_peer_client(cell, out);
	case IB_PROG:
		return ib_prog_client(cell, out);
	case IB_PROBE:
		return ib_user != NULL ? ib_user_probe(cell, out) : ib_bench_probe(cell, out);
	case IB_SETUP:
		return ib_user_setup(cell, out);
	}
	return -1;
}

double
ib_cell_ops(const struct ib_cell *cell)
{
	double n = (double)cell->warmup + (double)cell->reps * cell->iterations;

	/* A peer program runs one repetition more, its warm-up (idlbench_peers.c). */
	if (cell->kind == IB_PROG)
		n = (double)(cell->warmup > cell->iterations ? cell->warmup - cell->iterations
							     : 0) +
		    (double)(cell->reps + 1) * cell->iterations;
	if (cell->row->mode == IB_MODE_PINGPONG)
		n *= 2; /* each burst passes the counter 2n times */
	if (cell->row->metric == IB_BANDWIDTH)
		n *= cell->row->payload / 1e6;
	return n;
}

/* Forks the cell's server, pinned, and waits for its ready line. */
static int
ib_spawn_server(const struct ib_cell *cell, int cpu, struct ib_server *srv, char *why, size_t len)
{
	int rp[2], r;
	pid_t pid;

	srv->pid = -1;
	snprintf(srv->addr, sizeof srv->addr, "%s", cell->addr);
	fflush(NULL);
	if (pipe2(rp, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* The parent's interrupt handler must not outlive the fork: a floor server
		 * dies of SIGTERM, an idlkit one installs its own. */
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		close(rp[0]);
		if (ib_set_cpu(cpu) != 0 && cpu >= 0) {
			ib_ready(rp[1], "cannot pin the server to its CPU");
			_exit(1);
		}
		_exit(ib_serve_child(cell, rp[1]));
	}
	close(rp[1]);
	srv->pid = pid;
	r = ib_wait_ready(rp[0], why, len);
	close(rp[0]);
	return r;
}

int
ib_server_start(const struct ib_cell *cell, int cpu, struct ib_server *srv, char *why, size_t len)
{
	if (ib_spawn_server(cell, cpu, srv, why, len) == 0)
		return 0;
	ib_server_stop(srv);
	return -1;
}

void
ib_server_stop(struct ib_server *srv)
{
	if (srv->pid > 0) {
		ib_stop(srv->pid, SIGTERM, NULL);
		ib_cleanup(srv->addr);
	}
	srv->pid = -1;
}

/* Forks the client, its marks reading the server's CPU clock, reads its figures within
 * IB_CELL_MS and reaps it. */
static int
ib_client(const struct ib_cell *cell, int cpu, pid_t server, struct ib_reps *out)
{
	int cp[2], status, r;
	pid_t cli;

	if (pipe2(cp, O_CLOEXEC) != 0 || (cli = fork()) < 0) {
		snprintf(out->why, sizeof out->why, "fork: %s", strerror(errno));
		return -1;
	}
	if (cli == 0) {
		struct ib_reps res;

		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		close(cp[0]);
		memset(&res, 0, sizeof res);
		ib_cpu_watch(server);
		if (ib_set_cpu(cpu) != 0 && cpu >= 0)
			snprintf(res.why, sizeof res.why, "cannot pin the client to its CPU");
		else if (ib_client_child(cell, &res) != 0 && res.why[0] == '\0')
			snprintf(res.why, sizeof res.why, "the client failed");
		_exit(write(cp[1], &res, sizeof res) == (ssize_t)sizeof res ? 0 : 1);
	}
	close(cp[1]);
	r = ib_read_full(cp[0], out, sizeof *out, IB_CELL_MS);
	close(cp[0]);
	if (r != 0) {
		ib_stop(cli, SIGKILL, NULL);
		snprintf(out->why, sizeof out->why, "the client did not finish");
		return -1;
	}
	waitpid(cli, &status, 0);
	return out->why[0] != '\0' ? -1 : 0;
}

static double
ib_tv(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e6 + (double)tv->tv_usec;
}

/* The CPU per call of both sides (the file's opening comment): the client's between its
 * marks, the server's over its clock's window (-1: none). */
static void
ib_account(const struct ib_cell *cell, const struct ib_reps *out, double window,
	   const struct rusage *sru, struct ib_use *use)
{
	double ops = ib_cell_ops(cell), cops = out->ops > 0 ? out->ops : ops;
	double u = out->self[1].user - out->self[0].user, s = out->self[1].sys - out->self[0].sys;
	double su, ss;

	if (out->marks == 2 && cops > 0) {
		use->client = (u + s) / cops;
		if (!out->nosplit)
			use->csplit = (struct ib_cpu){ u / cops, s / cops };
	}
	if (window < 0 || !(ops > 0))
		return;
	use->server = window / ops;
	if (sru == NULL)
		return;
	su = ib_tv(&sru->ru_utime);
	ss = ib_tv(&sru->ru_stime);
	if (su + ss > 0)
		use->ssplit = (struct ib_cpu){ use->server * su / (su + ss),
					       use->server * ss / (su + ss) };
}

int
ib_cell_run(const struct ib_cell *cell, int cpu_client, int cpu_server, struct ib_reps *out,
	    struct ib_use *use, struct ib_server *kept)
{
	struct ib_server own = { -1, "" }, *srv = kept;
	struct rusage sru;
	double s0, s1, window = -1;
	int r;

	memset(out, 0, sizeof *out);
	memset(&sru, 0, sizeof sru);
	if (use != NULL)
		*use = (struct ib_use){ NAN, NAN, { NAN, NAN }, { NAN, NAN } };
	if (!cell->no_server) {
		srv = &own;
		if ((r = ib_spawn_server(cell, cpu_server, &own, out->why, sizeof out->why)) != 0)
			goto out;
	}
	/* A peer program's client is not ours to mark: its server's window is the client's
	 * whole life, its count of calls the cell's whole count. */
	s0 = srv != NULL && use != NULL && cell->kind == IB_PROG ? ib_cpu_settled(srv->pid) : -1;
	fflush(NULL);
	r = ib_client(cell, cpu_client, srv != NULL ? srv->pid : -1, out);
	if (r == 0 && s0 >= 0 && (s1 = ib_cpu_settled(srv->pid)) >= s0)
		window = s1 - s0;
	else if (r == 0 && out->marks == 2 && out->server[0] >= 0 &&
		 out->server[1] >= out->server[0])
		window = out->server[1] - out->server[0];
out:
	if (srv == &own) {
		ib_stop(own.pid, SIGTERM, &sru);
		ib_cleanup(cell->addr);
	}
	if (cell->addr2[0] != '\0')
		ib_cleanup(cell->addr2);
	if (r == 0 && use != NULL)
		ib_account(cell, out, window, srv == &own ? &sru : NULL, use);
	return r;
}
