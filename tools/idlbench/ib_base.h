/*
 * ib_base.h - idlbench's base, layer 0: the clock, the CPU a process has used, a process
 * pinned to a CPU, the median of figures, a directory removed, the ready line a server
 * process writes, and what one measurement hands back (struct ib_reps).
 *
 * It must not know rows, columns, cells, floors, runs or reports: every other file of
 * idlbench may use it, and it uses none of them (tests/lint/idlbench.sh checks the layers:
 * base, then floors and the verdict's rule, the interface, the cells, the run, the reports,
 * the command line).
 */
#ifndef IB_BASE_H
#define IB_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CPU time in microseconds: user and system. */
struct ib_cpu {
	double user, sys;
};

/* What one measurement hands back from its client process: one figure per repetition (us
 * per call, messages/s or MB/s), or why it could not run; and the CPU of the client and of
 * its server around its calls, marked by its loop before the warm-up (0) and after the last
 * timed call (1) with ib_cpu_mark(), so that neither process's start-up, connection or
 * teardown is counted as the calls'. */
struct ib_reps {
	double v[64];
	unsigned n;
	char why[160]; /* why the cell could not run ("n/a"), empty if it ran */
	unsigned marks; /* 0, 1 or 2 */
	struct ib_cpu self[2]; /* the client's own CPU (its threads too) */
	double server[2]; /* the server's CPU clock (ib_cpu_watch()), -1: none */
	/* 0: the calls between the marks are the warm-up's and the repetitions'; else how many
	 * (messages, MB) they are (a peer program's client, marked at its repetitions'
	 * reports) */
	double ops;
	int nosplit; /* self[] holds user and system time together in .user */
};

/* Time: CLOCK_MONOTONIC seconds. */
double ib_now(void);
/* The CPU this process (all its threads, and the children it waited for) has used. */
struct ib_cpu ib_cpu_self(void);
/* Marks where the calls start (first call: before the warm-up) and end (second call: after
 * the last repetition): the server's CPU clock once it is idle, then this process's CPU
 * (its other threads idle by then too, so that what they ran is counted). */
void ib_cpu_mark(struct ib_reps *out);
/* The server process whose CPU clock ib_cpu_mark() reads (-1: none). */
void ib_cpu_watch(pid_t server);
/* The same for a client that is another program: its CPU clock's reading, user and system
 * together. */
void ib_cpu_mark_clock(struct ib_reps *out, double client);
/* The CPU clock of another process once it is idle: read until two readings 200 us apart
 * agree (at most 5 ms), since the kernel adds what a thread running on another CPU used
 * only when it stops or at the scheduler's tick. -1 when it cannot be read. */
double ib_cpu_settled(pid_t pid);
/* The CPU clock of process pid (user and system together, all its threads), in
 * microseconds; -1 when it cannot be read. */
double ib_cpu_clock(pid_t pid);
/* Pins the calling process to one CPU, or (cpu < 0) gives it back every CPU it started
 * with. */
int ib_set_cpu(int cpu);
/* The median of n figures (v is sorted in place); NAN for none. */
double ib_median(double *v, unsigned n);
/* Removes a directory and the files in it. */
void ib_rmdir(const char *dir);
/* Writes "ready\n" (msg NULL) or "error: MSG\n" to a server's ready pipe and closes it. */
void ib_ready(int fd, const char *msg);

#endif /* IB_BASE_H */
