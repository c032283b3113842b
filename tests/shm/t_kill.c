/*
 * t_kill.c - either side killed in the middle of calls, again and again: a client whose
 * server dies gets an error within the deadline and keeps no mapping or descriptor; a
 * server whose clients die keeps serving the others and unmaps the dead ones' regions.
 * IDL_SHM_KILL_LOOPS iterations each (default 20; make check-long runs 1,000).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "bench.h"
#include "shm_test.h"

#define KL_DEADLINE_MS 5000
/* Death is noticed within a liveness slice (100 ms by default); the rest is slack for a
 * loaded 2-CPU machine. */
#define KL_NOTICE_MS 1500

static unsigned
kl_loops(void)
{
	const char *s = getenv("IDL_SHM_KILL_LOOPS");
	long n = s != NULL ? strtol(s, NULL, 10) : 0;

	return n > 0 && n <= 100000 ? (unsigned)n : 20;
}

static void
kl_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

struct kl_caller {
	idl_port_t port;
	atomic_int stop;
	int kr; /* the first error */
	int64_t err_at; /* when it came */
	unsigned calls;
};

static void *
kl_call_loop(void *arg)
{
	struct kl_caller *k = arg;
	int sum;

	while (!atomic_load(&k->stop)) {
		int kr = bench_add(k->port, (int)k->calls, 1, &sum);

		if (kr != 0) {
			k->kr = kr;
			k->err_at = idl_now_ns();
			break;
		}
		k->calls++;
	}
	return NULL;
}

static int
kl_conn_error(int kr)
{
	return kr == MIG_SERVER_DIED || kr == IDL_ECLOSED || kr == IDL_ECONNREFUSED;
}

/* The server is killed while a thread calls in a loop. */
static void
kl_kill_server(void)
{
	char address[320];
	unsigned loops = kl_loops(), bad = 0;
	int fds0 = -1;

	snprintf(address, sizeof address, "shm:%s/kill-server.sock", st_dir);
	for (unsigned i = 0; i < loops; i++) {
		struct st_server srv = { 0, -1 };
		struct kl_caller k;
		pthread_t tid;
		int64_t killed;

		memset(&k, 0, sizeof k);
		unlink(address + 4);
		if (fds0 < 0)
			fds0 = st_count_fds(getpid());
		if (st_server_start(&srv, address, -1) != 0) {
			CU_FAIL("bench-server did not start");
			break;
		}
		ST_CHECK_KR(idl_port_open(address, &k.port), 0);
		if (k.port == NULL) {
			st_server_kill(&srv);
			break;
		}
		idl_port_set_timeout(k.port, KL_DEADLINE_MS);
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid, NULL, kl_call_loop, &k), 0);
		kl_sleep_us(500 + (long)(i * 7919u % 20000u));
		killed = idl_now_ns();
		st_server_kill(&srv);
		pthread_join(tid, NULL);
		if (!kl_conn_error(k.kr) || (k.err_at - killed) / 1000000 > KL_NOTICE_MS) {
			fprintf(stderr, "shm-test: kill server %u: %s after %lld ms (%u calls)\n",
				i, idl_errname(k.kr), (long long)(k.err_at - killed) / 1000000,
				k.calls);
			bad++;
		}
		idl_port_close(k.port);
		if (st_count_regions(getpid()) != 0 || st_count_fds(getpid()) != fds0) {
			fprintf(stderr,
				"shm-test: kill server %u: %d regions, %d descriptors "
				"(%d before)\n",
				i, st_count_regions(getpid()), st_count_fds(getpid()), fds0);
			bad++;
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	unlink(address + 4);
}

/* A client process calling in a loop until it is killed. */
static pid_t
kl_client(const char *address)
{
	pid_t pid = fork();

	if (pid == 0) {
		idl_port_t port;
		int sum;

		if (idl_port_open(address, &port) != 0)
			_exit(1);
		for (int i = 0;; i++)
			if (bench_add(port, i, 1, &sum) != 0)
				_exit(2);
	}
	return pid;
}

/* Clients are killed while they call; the server serves us all along and frees what the
 * dead ones held. */
static void
kl_kill_client(void)
{
	char address[320];
	struct st_server srv = { 0, -1 };
	unsigned loops = kl_loops(), bad = 0;
	idl_port_t port = NULL;
	int sum = 0, regions = -1, fds0;
	int64_t t0;

	snprintf(address, sizeof address, "shm:%s/kill-client.sock", st_dir);
	CU_ASSERT_EQUAL_FATAL(st_server_start(&srv, address, -1), 0);
	ST_CHECK_KR(idl_port_open(address, &port), 0);
	CU_ASSERT_FATAL(port != NULL);
	idl_port_set_timeout(port, KL_DEADLINE_MS);
	/* What the running server holds with only us connected. */
	ST_CHECK_KR(bench_add(port, 1, 2, &sum), 0);
	fds0 = st_count_fds(srv.pid);
	for (unsigned i = 0; i < loops; i++) {
		pid_t pid = kl_client(address);
		int status, kr;

		CU_ASSERT_FATAL(pid > 0);
		kl_sleep_us(1000 + (long)(i * 7919u % 10000u));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (!WIFSIGNALED(status))
			bad++; /* it stopped calling before it was killed */
		kr = bench_add(port, (int)i, 2, &sum);
		if (kr != 0 || sum != (int)i + 2) {
			fprintf(stderr, "shm-test: kill client %u: our call gave %s\n", i,
				idl_errname(kr));
			bad++;
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* Within a few liveness slices the server has unmapped every dead client's region
	 * and closed its socket: ours is all that is left. */
	t0 = idl_now_ns();
	while (st_ms_since(t0) < 3000 &&
	       ((regions = st_count_regions(srv.pid)) != 1 || st_count_fds(srv.pid) != fds0))
		kl_sleep_us(20000);
	CU_ASSERT_EQUAL(regions, 1);
	CU_ASSERT_EQUAL(st_count_fds(srv.pid), fds0);
	CU_ASSERT(st_server_alive(&srv));
	idl_port_close(port);
	st_server_kill(&srv);
}

const struct st_case st_kill_cases[] = {
	{ "kill the server mid-call", kl_kill_server },
	{ "kill clients mid-call", kl_kill_client },
	{ NULL, NULL },
};
