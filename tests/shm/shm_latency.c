/*
 * shm_latency.c - a quick comparison, printed and not asserted (the benchmark, idlbench,
 * is where performance is judged): the null call of bench.defs over shm: and over unix:,
 * the shm transport's ops alone (conn_call against a forked conn_recv/conn_send echo), and
 * a raw ring ping-pong with the same wait policy and no runtime, in the same run, with
 * client and server pinned to one CPU ("same") and to two ("split").
 *
 *     tests/shm/shm-latency [CALLS [ROUNDS]]
 *
 * Each figure is the median over ROUNDS of the mean round trip of CALLS back-to-back calls;
 * the rounds of the three paths are interleaved, so that a change in the machine's load
 * touches them alike.
 */
#define _GNU_SOURCE 1 /* sched_setaffinity */

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "shm_test.h"

/* The raw ring: one sequence word and one sleep flag per direction, a 32-byte payload. */
struct lat_raw {
	_Alignas(64) uint32_t req;
	uint32_t req_sleep;
	unsigned char req_data[32];
	_Alignas(64) uint32_t rep;
	uint32_t rep_sleep;
	unsigned char rep_data[32];
};

static int64_t lat_spin_ns = 20000;

static void
lat_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

/* Waits until *seq differs from old: spin (when allowed), then sleep with a waiter flag,
 * as the transport does. */
static void
lat_wait(uint32_t *seq, uint32_t *sleep, uint32_t old, int spin)
{
	if (spin) {
		int64_t end = idl_now_ns() + lat_spin_ns;

		for (unsigned i = 1;; i++) {
			if (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != old)
				return;
			__builtin_ia32_pause();
			if (i % 64 == 0 && idl_now_ns() >= end)
				break;
		}
	}
	for (;;) {
		__atomic_store_n(sleep, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != old) {
			__atomic_store_n(sleep, 0, __ATOMIC_RELAXED);
			return;
		}
		syscall(SYS_futex, sleep, FUTEX_WAIT, 1, NULL, NULL, 0);
	}
}

static void
lat_post(uint32_t *seq, uint32_t *sleep)
{
	__atomic_fetch_add(seq, 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(sleep, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(sleep, 0, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, sleep, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static pid_t
lat_raw_server(struct lat_raw *r, int cpu, int spin)
{
	pid_t pid = fork();

	if (pid == 0) {
		uint32_t seen = 0;

		lat_pin(cpu);
		for (;;) {
			lat_wait(&r->req, &r->req_sleep, seen, spin);
			seen = __atomic_load_n(&r->req, __ATOMIC_ACQUIRE);
			memcpy(r->rep_data, r->req_data, sizeof r->rep_data);
			lat_post(&r->rep, &r->rep_sleep);
		}
	}
	return pid;
}

static double
lat_raw_round(struct lat_raw *r, unsigned calls, int spin)
{
	int64_t t0 = idl_now_ns();

	for (unsigned i = 0; i < calls; i++) {
		uint32_t old = __atomic_load_n(&r->rep, __ATOMIC_ACQUIRE);

		memset(r->req_data, (int)i, sizeof r->req_data);
		lat_post(&r->req, &r->req_sleep);
		lat_wait(&r->rep, &r->rep_sleep, old, spin);
	}
	return (double)(idl_now_ns() - t0) / 1000.0 / calls;
}

/* The transport alone, without the runtime: a forked server echoes each message with the
 * transport's conn_recv and conn_send, the client calls with conn_call. */
static pid_t
lat_ops_server(const char *address, int cpu)
{
	int p[2];
	char b;
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		const struct idl_transport *tr = st_tr();
		void *ep = calloc(1, tr->ep_size);
		struct shm_conn *c = calloc(1, sizeof *c);
		uint64_t buf[8];
		struct idl_xmsg x = { .data = buf, .cap = sizeof buf };
		struct pollfd pfd;

		lat_pin(cpu);
		if (ep == NULL || c == NULL || tr->ep_listen(ep, address + 4, NULL) != 0 ||
		    write(p[1], "r", 1) != 1)
			_exit(3);
		pfd.fd = tr->ep_fd(ep);
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 10000) != 1 || tr->ep_accept(ep, c) != 0)
			_exit(3);
		while (tr->conn_recv(c, &x, &(struct idl_deadline){ 0, IDL_DEADLINE_MS_NONE }) ==
		       0) {
			if (tr->conn_send(c, &x,
					  &(struct idl_deadline){ 0, IDL_DEADLINE_MS_NONE }) != 0)
				break;
			x.cap = sizeof buf;
		}
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &b, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

static double
lat_ops_round(struct shm_conn *c, unsigned calls)
{
	const struct idl_transport *tr = st_tr();
	uint64_t req[4] = { 0 }, rep[8];
	int64_t t0 = idl_now_ns();

	for (unsigned i = 0; i < calls; i++) {
		struct idl_xmsg q = { .data = req, .len = sizeof req };
		struct idl_xmsg r = { .data = rep, .cap = sizeof rep };

		req[1] = i;
		if (tr->conn_call(c, &q, &r, &(struct idl_deadline){ 0, IDL_DEADLINE_MS_NONE }) !=
		    0)
			return -1.0;
	}
	return (double)(idl_now_ns() - t0) / 1000.0 / calls;
}

static double
lat_call_round(idl_port_t port, unsigned calls)
{
	int64_t t0 = idl_now_ns();

	for (unsigned i = 0; i < calls; i++)
		if (bench_null(port) != 0)
			return -1.0;
	return (double)(idl_now_ns() - t0) / 1000.0 / calls;
}

static int
lat_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
lat_median(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, lat_cmp);
	return v[n / 2];
}

/* One placement: both servers and the raw peer on server_cpu, this process on CPU 0. */
static int
lat_placement(const char *name, int server_cpu, unsigned calls, unsigned rounds)
{
	char shm_addr[320], unix_addr[320], ops_addr[320];
	struct st_server s_shm = { 0, -1 }, s_unix = { 0, -1 };
	idl_port_t p_shm = NULL, p_unix = NULL;
	double v_shm[64], v_unix[64], v_raw[64], v_ops[64], m_shm, m_unix, m_raw, m_ops;
	int spin = server_cpu != 0, rc = -1, status, err;
	struct shm_conn *ops = NULL;
	struct lat_raw *r;
	pid_t raw = -1, opsrv = -1;

	snprintf(shm_addr, sizeof shm_addr, "shm:%s/lat-%s.sock", st_dir, name);
	snprintf(unix_addr, sizeof unix_addr, "unix:%s/lat-unix-%s.sock", st_dir, name);
	snprintf(ops_addr, sizeof ops_addr, "shm:%s/lat-ops-%s.sock", st_dir, name);
	lat_pin(0);
	r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED || st_server_start(&s_shm, shm_addr, server_cpu) != 0 ||
	    st_server_start(&s_unix, unix_addr, server_cpu) != 0 ||
	    idl_port_open(shm_addr, &p_shm) != 0 || idl_port_open(unix_addr, &p_unix) != 0 ||
	    (raw = lat_raw_server(r, server_cpu, spin)) < 0 ||
	    (opsrv = lat_ops_server(ops_addr, server_cpu)) < 0 ||
	    (ops = st_raw_connect(ops_addr, &err)) == NULL)
		goto out;
	/* Warm up: the hellos, the caches, the scheduler's idea of who runs where. */
	if (lat_call_round(p_shm, calls) < 0 || lat_call_round(p_unix, calls) < 0)
		goto out;
	lat_raw_round(r, calls, spin);
	lat_ops_round(ops, calls);
	for (unsigned i = 0; i < rounds; i++) {
		v_shm[i] = lat_call_round(p_shm, calls);
		v_unix[i] = lat_call_round(p_unix, calls);
		v_raw[i] = lat_raw_round(r, calls, spin);
		v_ops[i] = lat_ops_round(ops, calls);
		if (v_shm[i] < 0 || v_unix[i] < 0 || v_ops[i] < 0)
			goto out;
	}
	m_shm = lat_median(v_shm, rounds);
	m_unix = lat_median(v_unix, rounds);
	m_raw = lat_median(v_raw, rounds);
	m_ops = lat_median(v_ops, rounds);
	printf("%-6s %9.3f %9.3f %9.3f %9.3f %9.2f %9.2f %9.1f\n", name, m_shm, m_unix, m_ops,
	       m_raw, m_ops / m_raw, m_shm / m_raw, m_unix / m_shm);
	rc = 0;
out:
	if (rc != 0)
		fprintf(stderr, "shm-latency: %s: set-up or a call failed: %s\n", name,
			idl_errdetail());
	idl_port_close(p_shm);
	idl_port_close(p_unix);
	st_raw_close(ops);
	if (opsrv > 0) {
		kill(opsrv, SIGKILL);
		waitpid(opsrv, &status, 0);
	}
	if (raw > 0) {
		kill(raw, SIGKILL);
		waitpid(raw, &status, 0);
	}
	st_server_kill(&s_shm);
	st_server_kill(&s_unix);
	if (r != MAP_FAILED)
		munmap(r, sizeof *r);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned calls = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 7;
	const char *spin = getenv("IDL_SHM_SPIN_NS");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	if (calls == 0 || rounds == 0 || rounds > 64) {
		fprintf(stderr, "usage: shm-latency [CALLS [ROUNDS<=64]]\n");
		return 2;
	}
	if (spin != NULL && *spin != '\0')
		lat_spin_ns = atoll(spin);
	snprintf(st_dir, sizeof st_dir, "%s/idlkit-shmlat.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(st_dir) == NULL)
		return 1;
	printf("null call round trip, us (median of %u rounds of %u calls)\n", rounds, calls);
	printf("shm, unix: bench_null through the runtime; ops: the shm transport's own ops, no "
	       "runtime;\nraw: a bare ring with the same wait policy\n");
	printf("%-6s %9s %9s %9s %9s %9s %9s %9s\n", "cpus", "shm", "unix", "ops", "raw", "ops/raw",
	       "shm/raw", "unix/shm");
	rc = lat_placement("same", 0, calls, rounds);
	if (ncpu > 1)
		rc |= lat_placement("split", 1, calls, rounds);
	else
		printf("split: one CPU online, not measured\n");
	st_rmtree(st_dir);
	/* Only a failure to run is an error: the numbers are for reading. */
	return rc != 0 ? 1 : 0;
}
