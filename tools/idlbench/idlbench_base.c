/*
 * idlbench_base.c - layer 0 (ib_base.h): the clock, CPU used, pinning, the median, a
 * directory removed, a server's ready line. It must not know rows, columns, cells, floors,
 * runs or reports.
 */
#include <config.h>

#include <dirent.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ib_base.h"

static cpu_set_t ib_all_cpus;
static int ib_all_saved;

double
ib_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
ib_tv_us(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e6 + (double)tv->tv_usec;
}

struct ib_cpu
ib_cpu_self(void)
{
	struct rusage self, kids;
	struct ib_cpu c = { 0, 0 };

	if (getrusage(RUSAGE_SELF, &self) == 0 && getrusage(RUSAGE_CHILDREN, &kids) == 0) {
		c.user = ib_tv_us(&self.ru_utime) + ib_tv_us(&kids.ru_utime);
		c.sys = ib_tv_us(&self.ru_stime) + ib_tv_us(&kids.ru_stime);
	}
	return c;
}

double
ib_cpu_clock(pid_t pid)
{
	clockid_t id;
	struct timespec ts;

	if (pid <= 0 || clock_getcpuclockid(pid, &id) != 0 || clock_gettime(id, &ts) != 0)
		return -1;
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static pid_t ib_watched = -1;

void
ib_cpu_watch(pid_t server)
{
	ib_watched = server;
}

void
ib_cpu_mark(struct ib_reps *out)
{
	/* A thread that spins on another CPU (a transport's) has used time the kernel counts
	 * only once it stops: wait until the server's have, and ours with them. */
	struct timespec settle = { 0, 200000 };

	if (out->marks >= 2)
		return;
	out->server[out->marks] = ib_watched > 0 ? ib_cpu_settled(ib_watched) : -1;
	if (ib_watched <= 0 && out->marks == 1)
		nanosleep(&settle, NULL);
	out->self[out->marks++] = ib_cpu_self();
}

void
ib_cpu_mark_clock(struct ib_reps *out, double client)
{
	if (out->marks >= 2)
		return;
	out->server[out->marks] = -1; /* the server's window is the cell's (idlbench_cell.c) */
	out->self[out->marks++] = (struct ib_cpu){ client, 0 };
	out->nosplit = 1;
}

double
ib_cpu_settled(pid_t pid)
{
	struct timespec gap = { 0, 200000 };
	double last = ib_cpu_clock(pid), now;

	for (int i = 0; last >= 0 && i < 25; i++, last = now) {
		nanosleep(&gap, NULL);
		if ((now = ib_cpu_clock(pid)) < 0 || now - last < 1)
			return now < 0 ? last : now;
	}
	return last;
}

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

static int
ib_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
ib_median(double *v, unsigned n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof v[0], ib_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void
ib_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
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
