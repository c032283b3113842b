/*
 * port_perf.c - a null call over port: against a raw POSIX message queue ping-pong (one
 * mq_send and one mq_receive per side, 24 bytes each way), measured alternately in one run
 * with the same CPU placement. Not part of `make check` (timings on a shared machine are
 * not a pass/fail matter); run by hand:
 *
 *     tests/port/port_perf [same|split] [ROUNDS]
 *
 * "null unix:" is the same call over unix:, for the runtime's own share. "raw timed" is the
 * same ping-pong with mq_timedreceive, as any receive with a deadline
 * must be. Method (docs/runtime.md, "Measurements"): 500 warm-up round trips, then 7 repetitions of
 * 2,000; a figure is the median of the repetition medians. `same` pins both processes to
 * CPU 0, `split` to CPUs 0 and 1.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "bench.h"

#define PP_WARM 500
#define PP_REPS 7
#define PP_ITERS 2000

static void
pp_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

static int
pp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pp_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, pp_cmp);
	return v[n / 2];
}

/* Times `one` (a round trip) as the method says; returns microseconds. */
static double
pp_time(int (*one)(void *), void *arg)
{
	static double t[PP_ITERS];
	double reps[PP_REPS];

	for (int i = 0; i < PP_WARM; i++)
		if (one(arg) != 0)
			return -1;
	for (int r = 0; r < PP_REPS; r++) {
		for (int i = 0; i < PP_ITERS; i++) {
			int64_t t0 = idl_now_ns();

			if (one(arg) != 0)
				return -1;
			t[i] = (double)(idl_now_ns() - t0) / 1000.0;
		}
		reps[r] = pp_median(t, PP_ITERS);
	}
	return pp_median(reps, PP_REPS);
}

/* ---- raw queues ---- */

struct pp_raw {
	mqd_t ping, pong;
	int timed; /* receives with a timeout, as a transport with deadlines must */
	char buf[1024];
};

static ssize_t
pp_receive(mqd_t q, char *b, size_t len, int timed)
{
	struct timespec ts;

	if (!timed)
		return mq_receive(q, b, len, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	return mq_timedreceive(q, b, len, NULL, &ts);
}

static int
pp_raw_one(void *arg)
{
	struct pp_raw *r = arg;

	if (mq_send(r->ping, r->buf, 24, 0) != 0)
		return -1;
	return pp_receive(r->pong, r->buf, sizeof r->buf, r->timed) == 24 ? 0 : -1;
}

static double
pp_raw(int cpu_server, int timed)
{
	struct mq_attr a = { .mq_maxmsg = 4, .mq_msgsize = 1024 };
	char ping[64], pong[64];
	struct pp_raw r;
	double us;
	pid_t pid;

	snprintf(ping, sizeof ping, "/idlperf-%ld-ping", (long)getpid());
	snprintf(pong, sizeof pong, "/idlperf-%ld-pong", (long)getpid());
	r.ping = mq_open(ping, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
	a.mq_maxmsg = 2;
	r.pong = mq_open(pong, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
	mq_unlink(ping);
	mq_unlink(pong);
	if (r.ping == (mqd_t)-1 || r.pong == (mqd_t)-1)
		return -1;
	memset(r.buf, 0, sizeof r.buf);
	r.timed = timed;
	if ((pid = fork()) == 0) {
		char b[1024];

		pp_pin(cpu_server);
		for (;;) {
			ssize_t n = pp_receive(r.ping, b, sizeof b, timed);

			if (n < 0 || mq_send(r.pong, b, (size_t)n, 0) != 0)
				_exit(0);
		}
	}
	us = pp_time(pp_raw_one, &r);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	mq_close(r.ping);
	mq_close(r.pong);
	return us;
}

/* ---- null over port: ---- */

static int
pp_null_one(void *arg)
{
	return bench_null(arg);
}

static double
pp_null(const char *server, const char *scheme, int cpu_server)
{
	char address[128], line[128];
	idl_port_t port = NULL;
	int fds[2];
	double us = -1;
	pid_t pid;

	if (strcmp(scheme, "unix") == 0)
		snprintf(address, sizeof address, "unix:%s/idlperf-%ld.sock",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	else
		snprintf(address, sizeof address, "port:/idlperf-%ld", (long)getpid());
	if (pipe(fds) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		pp_pin(cpu_server);
		dup2(fds[1], STDOUT_FILENO);
		execl(server, "bench-server", address, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (read(fds[0], line, sizeof line) > 0 && idl_port_open(address, &port) == 0) {
		us = pp_time(pp_null_one, port);
		idl_port_close(port);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	return us;
}

int
main(int argc, char **argv)
{
	const char *server = getenv("IDL_BENCH_SERVER");
	int split = argc > 1 && strcmp(argv[1], "split") == 0;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;

	if (server == NULL)
		server = IDL_BENCH_SERVER_DEFAULT;
	pp_pin(0);
	printf("placement %s; us per round trip, median of %d medians of %d\n",
	       split ? "split" : "same", PP_REPS, PP_ITERS);
	printf("%-6s %11s %11s %11s %11s %9s %9s\n", "round", "raw mqueue", "raw timed",
	       "null port:", "null unix:", "port/raw", "port/tmd");
	for (int i = 0; i < rounds; i++) {
		double raw = pp_raw(split ? 1 : 0, 0), timed = pp_raw(split ? 1 : 0, 1);
		double port = pp_null(server, "port", split ? 1 : 0);
		double unx = pp_null(server, "unix", split ? 1 : 0);

		printf("%-6d %11.2f %11.2f %11.2f %11.2f %9.3f %9.3f\n", i + 1, raw, timed, port,
		       unx, port / raw, port / timed);
		fflush(stdout);
	}
	return 0;
}
