/*
 * t_faults.c - deadlines and peer death: a frozen server makes a call time out on time, a
 * dead one makes it fail at once rather than hang, and the same port works again once a
 * server is back at the address. The last case stops the server cleanly.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "bench_types.h"
#include "bench.h"
#include "conformance.h"

#define TT_DEADLINE_MS 200
/* Scheduling slack on a shared 2-core machine; the point is "no hang", not precision. */
#define TT_SLACK_MS 800
#define TT_DEATH_DEADLINE_MS 5000

/* Checks that `port` reaches a working server: a call with a result nobody else has. */
static void
tt_check_works(idl_port_t port, int a)
{
	int sum = 0;

	TT_CHECK_KR(bench_add(port, a, 1000, &sum), 0);
	CU_ASSERT_EQUAL(sum, a + 1000);
}

static void
tt_deadline(void)
{
	idl_port_t port = tt_open();
	int64_t t0, ms;
	int sum = 0, kr;

	if (port == NULL)
		return;
	tt_check_works(port, 1);
	CU_ASSERT_EQUAL_FATAL(idl_port_set_timeout(port, TT_DEADLINE_MS), 0);
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	t0 = idl_now_ns();
	kr = bench_add(port, 2, 2, &sum);
	ms = tt_ms_since(t0);
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGCONT), 0);
	TT_CHECK_KR(kr, IDL_ETIMEDOUT);
	if (ms < TT_DEADLINE_MS - 5 || ms > TT_DEADLINE_MS + TT_SLACK_MS)
		fprintf(stderr, "conformance: a %d ms deadline expired after %lld ms\n",
			TT_DEADLINE_MS, (long long)ms);
	CU_ASSERT(ms >= TT_DEADLINE_MS - 5);
	CU_ASSERT(ms <= TT_DEADLINE_MS + TT_SLACK_MS);

	/* The late reply to 2 + 2 must not be taken for the reply to the next call. */
	CU_ASSERT_EQUAL(idl_port_set_timeout(port, 10000), 0);
	tt_check_works(port, 2);
	tt_check_works(port, 3);
	idl_port_close(port);
}

/* Restarts the server at the same address after it was killed. */
static int
tt_restart(void)
{
	if (tt.scheme->reclaim != NULL)
		tt.scheme->reclaim(tt.address);
	return tt_server_start();
}

static void
tt_death_between_calls(void)
{
	idl_port_t port = tt_open();
	int64_t t0, ms;
	int sum = 0, kr;

	if (port == NULL)
		return;
	tt_check_works(port, 10);
	CU_ASSERT_EQUAL(idl_port_set_timeout(port, TT_DEATH_DEADLINE_MS), 0);
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGKILL), 0);

	t0 = idl_now_ns();
	kr = bench_add(port, 1, 1, &sum);
	ms = tt_ms_since(t0);
	if (!tt_is_conn_error(kr))
		fprintf(stderr, "conformance: a call to a dead server gave %s [%s]\n",
			idl_errname(kr), idl_errdetail());
	CU_ASSERT(tt_is_conn_error(kr));
	CU_ASSERT(ms < TT_DEATH_DEADLINE_MS);

	CU_ASSERT_EQUAL_FATAL(tt_restart(), 0);
	tt_check_works(port, 11);
	idl_port_close(port);
}

struct tt_inflight {
	idl_port_t port;
	int kr;
	int64_t ms;
};

static void *
tt_inflight_call(void *arg)
{
	struct tt_inflight *c = arg;
	int64_t t0 = idl_now_ns();
	int sum = 0;

	c->kr = bench_add(c->port, 5, 5, &sum);
	c->ms = tt_ms_since(t0);
	return NULL;
}

static void
tt_death_in_flight(void)
{
	struct tt_inflight c = { .port = tt_open() };
	pthread_t tid;

	if (c.port == NULL)
		return;
	tt_check_works(c.port, 20);
	CU_ASSERT_EQUAL(idl_port_set_timeout(c.port, TT_DEATH_DEADLINE_MS), 0);
	/* Frozen, the server takes the request in but never answers it; then it dies. */
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&tid, NULL, tt_inflight_call, &c), 0);
	usleep(100 * 1000);
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGKILL), 0);
	pthread_join(tid, NULL);
	if (!tt_is_conn_error(c.kr))
		fprintf(stderr, "conformance: a call in flight when the server died gave %s [%s]\n",
			idl_errname(c.kr), idl_errdetail());
	CU_ASSERT(tt_is_conn_error(c.kr));
	/* Death is seen when it happens, about 100 ms in, not at the deadline. */
	CU_ASSERT(c.ms < TT_DEATH_DEADLINE_MS - 1000);

	CU_ASSERT_EQUAL_FATAL(tt_restart(), 0);
	tt_check_works(c.port, 21);
	tt_check_works(c.port, 22);
	idl_port_close(c.port);
}

/* SIGTERM stops the server: it exits 0 and leaves nothing at its address. */
static void
tt_clean_stop(void)
{
	int status = 0;

	CU_ASSERT_EQUAL_FATAL(tt_server_stop(&status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "conformance: bench-server ended with status 0x%x on SIGTERM\n",
			(unsigned)status);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (tt.scheme->left_nothing != NULL)
		CU_ASSERT_EQUAL(tt.scheme->left_nothing(tt.address), 0);
}

const struct tt_case tt_fault_cases[] = {
	{ "deadline", tt_deadline },
	{ "peer death between calls", tt_death_between_calls },
	{ "peer death in flight", tt_death_in_flight },
	{ "clean stop", tt_clean_stop },
	{ NULL, NULL },
};
