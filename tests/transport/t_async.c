/*
 * t_async.c - calls in flight through the asynchronous stubs and the pollable port: many
 * calls at once with every result checked, synchronous and asynchronous calls mixed from
 * several threads, deadlines and peer death in flight, cancellation at each stage, a full
 * send queue, a port closed with calls in flight, and a connect that never blocks the
 * caller (where the transport connects without blocking), and calls whose connection died
 * before their requests left carried to the next. Every case counts each done function,
 * so that "exactly once" is checked, not assumed.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <CUnit/CUnit.h>
#include <idl/idl_async.h>

#include "bench_types.h"
#include "bench.h"
#include "conformance.h"

#define TA_CALLS 1000
#define TA_INFLIGHT 64
#define TA_DEADLINE_MS 200
#define TA_SLACK_MS 1500

/* One call's record: what it asked, and what its done function saw. */
struct ta_call {
	struct ta_run *run;
	int a, b;
	atomic_int ran; /* how many times the done function ran */
	int kr;
	int sum;
	int64_t ms; /* from the call to its completion */
	int64_t t0;
};

struct ta_run {
	idl_port_t port;
	atomic_int outstanding;
	atomic_int wrong; /* done functions that saw a wrong result */
	int inside; /* set while the test itself runs dispatch: done must run in there */
	atomic_int outside; /* done functions that ran elsewhere */
};

static void
ta_add_done(void *ctx, kern_return_t kr, int sum)
{
	struct ta_call *c = ctx;

	atomic_fetch_add(&c->ran, 1);
	c->kr = kr;
	c->sum = sum;
	c->ms = tt_ms_since(c->t0);
	if (kr == KERN_SUCCESS && sum != c->a + c->b)
		atomic_fetch_add(&c->run->wrong, 1);
	if (kr != KERN_SUCCESS && sum != 0)
		atomic_fetch_add(&c->run->wrong, 1);
	atomic_fetch_sub(&c->run->outstanding, 1);
}

/* Starts one call of `c` on the run's port; the kr of bench_add_async. */
static int
ta_start(struct ta_run *run, struct ta_call *c, int a, int b, idl_async_t **h)
{
	int kr;

	c->run = run;
	c->a = a;
	c->b = b;
	c->t0 = idl_now_ns();
	atomic_init(&c->ran, 0);
	atomic_fetch_add(&run->outstanding, 1);
	kr = bench_add_async(run->port, a, b, ta_add_done, c, h);
	if (kr != 0)
		atomic_fetch_sub(&run->outstanding, 1);
	return kr;
}

/* Waits until no call of the run is outstanding, at most ms; 0 when none is. */
static int
ta_drain(struct ta_run *run, int ms)
{
	int64_t t0 = idl_now_ns();

	while (atomic_load(&run->outstanding) > 0) {
		int n = idl_port_wait(run->port, 100);

		if (n < 0 && n != IDL_ETIMEDOUT) {
			fprintf(stderr, "conformance: idl_port_wait: %s [%s]\n", idl_errname(n),
				idl_errdetail());
			return -1;
		}
		if (tt_ms_since(t0) > ms)
			return -1;
	}
	return 0;
}

/* 1,000 calls, 64 in flight from one thread, each result checked and each done once. */
static void
ta_many(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_call *calls = calloc(TA_CALLS, sizeof *calls);
	int next = 0, fd;

	if (run.port == NULL || calls == NULL) {
		free(calls);
		idl_port_close(run.port);
		CU_FAIL_FATAL("no port");
		return;
	}
	fd = idl_port_fd(run.port);
	CU_ASSERT(fd >= 0);
	while (next < TA_CALLS || atomic_load(&run.outstanding) > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		while (next < TA_CALLS && atomic_load(&run.outstanding) < TA_INFLIGHT) {
			TT_CHECK_KR(ta_start(&run, &calls[next], next, 3 * next, NULL), 0);
			next++;
		}
		/* The caller's own loop: the descriptor says when to dispatch. */
		if (poll(&pfd, 1, 5000) != 1) {
			CU_FAIL("the port's descriptor did not become readable");
			break;
		}
		CU_ASSERT(idl_port_dispatch(run.port, 0) >= 0);
	}
	for (int i = 0; i < TA_CALLS; i++) {
		CU_ASSERT_EQUAL(atomic_load(&calls[i].ran), 1);
		TT_CHECK_KR(calls[i].kr, 0);
	}
	CU_ASSERT_EQUAL(atomic_load(&run.wrong), 0);
	idl_port_close(run.port);
	free(calls);
}

/* Synchronous and asynchronous calls on one port from four threads. */
struct ta_mixed {
	struct ta_run *run;
	int id;
	int bad;
};

static void *
ta_mixed_thread(void *arg)
{
	struct ta_mixed *m = arg;
	struct ta_call *calls = calloc(200, sizeof *calls);
	int sum;

	if (calls == NULL) {
		m->bad++;
		return NULL;
	}
	for (int i = 0; i < 200; i++) {
		int a = m->id * 100000 + i;

		if (ta_start(m->run, &calls[i], a, 7, NULL) != 0)
			m->bad++;
		sum = 0;
		if (bench_add(m->run->port, a, 11, &sum) != 0 || sum != a + 11)
			m->bad++;
		if (i % 16 == 15)
			(void)idl_port_dispatch(m->run->port, 0);
	}
	if (ta_drain(m->run, 30000) != 0)
		m->bad++;
	for (int i = 0; i < 200; i++)
		if (atomic_load(&calls[i].ran) != 1 || calls[i].kr != 0)
			m->bad++;
	free(calls);
	return NULL;
}

static void
ta_mixed(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_mixed m[4];
	pthread_t tid[4];

	if (run.port == NULL)
		return;
	for (int i = 0; i < 4; i++) {
		m[i] = (struct ta_mixed){ &run, i, 0 };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, ta_mixed_thread, &m[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		CU_ASSERT_EQUAL(m[i].bad, 0);
	}
	CU_ASSERT_EQUAL(atomic_load(&run.wrong), 0);
	idl_port_close(run.port);
}

/* A frozen server: every call in flight ends at its deadline; the late replies are dropped
 * and the port goes on. */
static void
ta_deadline(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_call calls[8], ok;

	if (run.port == NULL)
		return;
	CU_ASSERT_EQUAL(ta_start(&run, &ok, 1, 1, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, TA_DEADLINE_MS), 0);
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	for (int i = 0; i < 8; i++)
		TT_CHECK_KR(ta_start(&run, &calls[i], i, i, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGCONT), 0);
	for (int i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(atomic_load(&calls[i].ran), 1);
		TT_CHECK_KR(calls[i].kr, IDL_ETIMEDOUT);
		CU_ASSERT(calls[i].ms >= TA_DEADLINE_MS - 5);
		CU_ASSERT(calls[i].ms <= TA_DEADLINE_MS + TA_SLACK_MS);
	}
	CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, 10000), 0);
	for (int i = 0; i < 8; i++)
		TT_CHECK_KR(ta_start(&run, &calls[i], 100 + i, i, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	for (int i = 0; i < 8; i++)
		TT_CHECK_KR(calls[i].kr, 0);
	CU_ASSERT_EQUAL(atomic_load(&run.wrong), 0);
	idl_port_close(run.port);
}

/* A done function that starts a call and cancels it at once: inside a dispatch sends are
 * held until the end, so the call is cancelled before it was sent. */
struct ta_cancel_first {
	struct ta_call first, second;
	idl_async_t *h;
	int kr_start, kr_cancel;
};

static void
ta_cancel_first_done(void *ctx, kern_return_t kr, int sum)
{
	struct ta_cancel_first *f = ctx;

	ta_add_done(&f->first, kr, sum);
	f->kr_start = ta_start(f->first.run, &f->second, 5, 6, &f->h);
	if (f->kr_start == 0)
		f->kr_cancel = idl_async_cancel(f->h);
}

static void
ta_cancel(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_cancel_first f;
	struct ta_call c, after;
	idl_async_t *h = NULL;

	if (run.port == NULL)
		return;
	memset(&f, 0, sizeof f);
	/* Before send. */
	f.first.run = &run;
	f.first.a = 1;
	f.first.b = 2;
	f.first.t0 = idl_now_ns();
	atomic_fetch_add(&run.outstanding, 1);
	TT_CHECK_KR(bench_add_async(run.port, 1, 2, ta_cancel_first_done, &f, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	TT_CHECK_KR(f.first.kr, 0);
	TT_CHECK_KR(f.kr_start, 0);
	TT_CHECK_KR(f.kr_cancel, 0);
	CU_ASSERT_EQUAL(atomic_load(&f.second.ran), 1);
	TT_CHECK_KR(f.second.kr, IDL_ECANCELED);
	idl_async_release(f.h);

	/* In flight: the server is frozen, so the call is sent and not answered. The done
	 * function does not run inside the cancel, only in a dispatch. */
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	TT_CHECK_KR(ta_start(&run, &c, 3, 4, &h), 0);
	(void)idl_port_dispatch(run.port, 0);
	usleep(20 * 1000);
	(void)idl_port_dispatch(run.port, 0);
	CU_ASSERT_EQUAL(atomic_load(&c.ran), 0);
	TT_CHECK_KR(idl_async_cancel(h), 0);
	CU_ASSERT_EQUAL(atomic_load(&c.ran), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL(atomic_load(&c.ran), 1);
	TT_CHECK_KR(c.kr, IDL_ECANCELED);
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGCONT), 0);
	/* Cancelling again, after completion, does nothing. */
	TT_CHECK_KR(idl_async_cancel(h), 0);
	idl_async_release(h);

	/* After completion: the call keeps its outcome. */
	TT_CHECK_KR(ta_start(&run, &after, 8, 9, &h), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	TT_CHECK_KR(idl_async_cancel(h), 0);
	(void)idl_port_dispatch(run.port, 0);
	CU_ASSERT_EQUAL(atomic_load(&after.ran), 1);
	TT_CHECK_KR(after.kr, 0);
	CU_ASSERT_EQUAL(after.sum, 17);
	idl_async_release(h);
	CU_ASSERT_EQUAL(atomic_load(&run.wrong), 0);
	idl_port_close(run.port);
}

/* The done function of a call of sum on TA_SUM_N ints 0, 1, 2...: the sum is known. */
#define TA_SUM_N 1024

static void
ta_sum_done(void *ctx, kern_return_t kr, int64_t total)
{
	struct ta_call *c = ctx;

	atomic_fetch_add(&c->ran, 1);
	c->kr = kr;
	if (kr == KERN_SUCCESS && total != (int64_t)TA_SUM_N * (TA_SUM_N - 1) / 2)
		atomic_fetch_add(&c->run->wrong, 1);
	atomic_fetch_sub(&c->run->outstanding, 1);
}

/* Starts one call: add on a datagram transport, else sum of 4 KiB, so that the kernel's
 * socket buffers (megabytes on a stream) fill after a few thousand calls. */
static int
ta_start_fill(struct ta_run *run, struct ta_call *c, int n, int dgram)
{
	static int data[TA_SUM_N];
	int kr;

	if (dgram)
		return ta_start(run, c, n, 1, NULL);
	for (int i = 0; i < TA_SUM_N; i++)
		data[i] = i;
	c->run = run;
	atomic_init(&c->ran, 0);
	atomic_fetch_add(&run->outstanding, 1);
	kr = bench_sum_async(run->port, data, TA_SUM_N, ta_sum_done, c, NULL);
	if (kr != 0)
		atomic_fetch_sub(&run->outstanding, 1);
	return kr;
}

/* Room for n calls on run->port (opened by the caller), whose calls get 30 s each; NULL,
 * the case failed and the port closed, when either is missing. */
static struct ta_call *
ta_begin(struct ta_run *run, int n)
{
	struct ta_call *calls = calloc((size_t)n, sizeof *calls);

	if (run->port == NULL || calls == NULL) {
		free(calls);
		idl_port_close(run->port);
		CU_FAIL("no port");
		return NULL;
	}
	CU_ASSERT_EQUAL(idl_port_set_timeout(run->port, 30000), 0);
	return calls;
}

/* Starts calls of add (i, 3i) for calls[n], calls[n + 1]... until `max` or until _async
 * refuses one, which must be for a full send queue; returns how many calls there are. */
static int
ta_fill(struct ta_run *run, struct ta_call *calls, int n, int max)
{
	int kr = 0;

	while (n < max && (kr = ta_start(run, &calls[n], n, 3 * n, NULL)) == 0)
		n++;
	if (kr != 0) {
		TT_CHECK_KR(kr, IDL_EAGAIN);
	}
	return n;
}

/* Waits for the n calls of a run to complete, then checks that each ran once and
 * succeeded, and ends the run (its port closed, `calls` freed). */
static void
ta_end_all_ok(struct ta_run *run, struct ta_call *calls, int n, int ms)
{
	CU_ASSERT_EQUAL(ta_drain(run, ms), 0);
	for (int i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(atomic_load(&calls[i].ran), 1);
		if (calls[i].kr != 0) {
			fprintf(stderr, "conformance: call %d of %d\n", i, n);
			TT_CHECK_KR(calls[i].kr, 0);
			break;
		}
	}
	CU_ASSERT_EQUAL(atomic_load(&run->wrong), 0);
	idl_port_close(run->port);
	free(calls);
}

/* A frozen server stops taking requests: the send queue fills and refuses with IDL_EAGAIN,
 * then every accepted call completes once the server goes on. A datagram transport never
 * pushes back (the kernel drops what does not fit), so there the case checks only that
 * every accepted call completes. */
static void
ta_full_queue(void)
{
	struct ta_run run = { .port = tt_open() };
	enum {
		MAX = 60000
	};
	struct ta_call *calls = calloc(MAX, sizeof *calls);
	int n = 0, kr = 0, dgram = (tt.tr->flags & IDL_TRF_DGRAM) != 0;

	if (run.port == NULL || calls == NULL) {
		free(calls);
		idl_port_close(run.port);
		return;
	}
	CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, 60000), 0);
	TT_CHECK_KR(ta_start(&run, &calls[n++], 0, 0, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	while (n < (dgram ? 200 : MAX)) {
		kr = ta_start_fill(&run, &calls[n], n, dgram);
		if (kr != 0)
			break;
		n++;
		if (n % 256 == 0)
			(void)idl_port_dispatch(run.port, 0);
	}
	if (!dgram) {
		TT_CHECK_KR(kr, IDL_EAGAIN);
	}
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGCONT), 0);
	ta_end_all_ok(&run, calls, n, 120000);
}

/* Calls made without a dispatch between them: the replies pile up unread until the
 * client's socket takes no more, so that the server's replies to a run of requests read at
 * once go out in part and the rest wait for room. Each call must still complete once, with
 * its own result. */
static void
ta_unread(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_call *calls = ta_begin(&run, TA_CALLS);
	int n = 0;

	if (calls == NULL)
		return;
	TT_CHECK_KR(ta_start(&run, &calls[n++], 1, 2, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	n = ta_fill(&run, calls, n, TA_CALLS);
	/* Time for the server to answer all it can into the unread socket. */
	usleep(300 * 1000);
	ta_end_all_ok(&run, calls, n, 60000);
}

/* Calls made on a new port before its hello is answered wait for it, and count toward the
 * send queue's bound with the queued ones: beyond it _async refuses (IDL_EAGAIN), and every
 * call it accepted completes with its result once the hello's reply comes, none refused
 * then for want of room. */
static void
ta_before_hello(void)
{
	enum {
		MAX = 2 * TA_CALLS + 100
	};
	struct ta_run run = { 0 };
	struct ta_call *calls;
	int n;

	TT_CHECK_KR(idl_port_open_deferred(tt.address, &run.port), 0);
	if ((calls = ta_begin(&run, MAX)) == NULL)
		return;
	n = ta_fill(&run, calls, 0, MAX);
	CU_ASSERT(n > 0);
	ta_end_all_ok(&run, calls, n, 60000);
}

/* The port closes with calls in flight: each ends with IDL_ECANCELED, inside the close. */
static void
ta_close(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_call calls[TA_INFLIGHT], ok;

	if (run.port == NULL)
		return;
	/* Connected and greeted first: a connect would wait for the frozen server. */
	TT_CHECK_KR(ta_start(&run, &ok, 1, 1, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	for (int i = 0; i < TA_INFLIGHT; i++)
		TT_CHECK_KR(ta_start(&run, &calls[i], i, i, NULL), 0);
	(void)idl_port_dispatch(run.port, 0);
	idl_port_close(run.port);
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGCONT), 0);
	CU_ASSERT_EQUAL(atomic_load(&run.outstanding), 0);
	for (int i = 0; i < TA_INFLIGHT; i++) {
		CU_ASSERT_EQUAL(atomic_load(&calls[i].ran), 1);
		TT_CHECK_KR(calls[i].kr, IDL_ECANCELED);
	}
}

/* The server dies with 64 calls in flight: each completes once with the connection's
 * error; after a restart the same port calls again. Runs last but one: it kills the
 * suite's server and starts a new one. */
static void
ta_death(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_call calls[TA_INFLIGHT], ok;

	if (run.port == NULL)
		return;
	CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, 20000), 0);
	TT_CHECK_KR(ta_start(&run, &ok, 1, 1, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	for (int i = 0; i < TA_INFLIGHT; i++)
		TT_CHECK_KR(ta_start(&run, &calls[i], i, i, NULL), 0);
	(void)idl_port_dispatch(run.port, 0);
	usleep(100 * 1000);
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGKILL), 0);
	/* Datagrams bring no news of a death: those calls end at their deadline. */
	if (tt.tr->flags & IDL_TRF_DGRAM)
		CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, 500), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 30000), 0);
	for (int i = 0; i < TA_INFLIGHT; i++) {
		CU_ASSERT_EQUAL(atomic_load(&calls[i].ran), 1);
		if (!tt_is_conn_error(calls[i].kr) && calls[i].kr != IDL_ETIMEDOUT) {
			fprintf(stderr, "conformance: a call in flight at death gave %s [%s]\n",
				idl_errname(calls[i].kr), idl_errdetail());
			CU_FAIL("not a connection error");
		}
		if (!(tt.tr->flags & IDL_TRF_DGRAM))
			CU_ASSERT(calls[i].ms < 15000);
	}
	if (tt.scheme->reclaim != NULL)
		tt.scheme->reclaim(tt.address);
	CU_ASSERT_EQUAL_FATAL(tt_server_start(), 0);
	CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, 10000), 0);
	/* The first call after the death may still meet the old connection's end. */
	for (int tries = 0; tries < 3; tries++) {
		TT_CHECK_KR(ta_start(&run, &ok, 40, 2, NULL), 0);
		CU_ASSERT_EQUAL(ta_drain(&run, 15000), 0);
		if (ok.kr == 0)
			break;
	}
	TT_CHECK_KR(ok.kr, 0);
	CU_ASSERT_EQUAL(ok.sum, 42);
	idl_port_close(run.port);
}

/* idl_port_dispatch(port, max) runs at most max done functions, in the order the calls
 * completed, and the port's descriptor stays readable while completions are left. */
static void
ta_dispatch_max(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_call calls[10], ok;
	struct pollfd pfd = { .events = POLLIN };

	if (run.port == NULL)
		return;
	/* Connected and greeted first, so that the ten go out at once. */
	TT_CHECK_KR(ta_start(&run, &ok, 1, 1, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	for (int i = 0; i < 10; i++)
		TT_CHECK_KR(ta_start(&run, &calls[i], i, 100, NULL), 0);
	/* Every reply in (a datagram's retransmission, if one was lost, included): the first
	 * makes the descriptor readable; the rest are given a second, ample even for a server
	 * under ThreadSanitizer, since the check below needs all ten received at once. */
	pfd.fd = idl_port_fd(run.port);
	for (int tries = 0; tries < 50; tries++) {
		usleep(40 * 1000);
		if (poll(&pfd, 1, 0) == 1)
			break;
	}
	usleep(1000 * 1000);
	CU_ASSERT_EQUAL(idl_port_dispatch(run.port, 3), 3);
	CU_ASSERT_EQUAL(atomic_load(&run.outstanding), 7);
	CU_ASSERT_EQUAL(poll(&pfd, 1, 0), 1);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(atomic_load(&calls[i].ran), 1);
		TT_CHECK_KR(calls[i].kr, 0);
	}
	CU_ASSERT_EQUAL(atomic_load(&run.wrong), 0);
	idl_port_close(run.port);
}

/* A done function that dispatches the port it runs for: refused, since dispatching again
 * from inside would run done functions of the port inside one another. A call it starts
 * instead goes out when the dispatch ends, and completes in a later one. */
struct ta_reenter {
	struct ta_run *run;
	struct ta_call next;
	int dispatch_err;
	int start_kr;
};

static void
ta_reenter_done(void *ctx, kern_return_t kr, int sum)
{
	struct ta_reenter *r = ctx;

	(void)sum;
	TT_CHECK_KR(kr, 0);
	r->dispatch_err = idl_port_dispatch(r->run->port, 0);
	r->start_kr = ta_start(r->run, &r->next, 20, 22, NULL);
	atomic_fetch_sub(&r->run->outstanding, 1);
}

static void
ta_reenter(void)
{
	struct ta_run run = { .port = tt_open() };
	struct ta_reenter r = { .run = &run, .dispatch_err = 1, .start_kr = 1 };

	if (run.port == NULL)
		return;
	atomic_fetch_add(&run.outstanding, 1);
	TT_CHECK_KR(bench_add_async(run.port, 1, 2, ta_reenter_done, &r, NULL), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL(r.dispatch_err, IDL_EBUSY);
	TT_CHECK_KR(r.start_kr, 0);
	CU_ASSERT_EQUAL(atomic_load(&r.next.ran), 1);
	TT_CHECK_KR(r.next.kr, 0);
	CU_ASSERT_EQUAL(r.next.sum, 42);
	/* Outside any done function, dispatching is allowed again. */
	CU_ASSERT(idl_port_dispatch(run.port, 0) >= 0);
	idl_port_close(run.port);
}

/* The server dies while 64 calls wait for their subsystem's hello (it was stopped before
 * it could answer): no request of theirs reached the transport, so they go on the next
 * connection, to the server started after it, and every one succeeds. Where the pollable
 * port drives the connection itself (unix, tcp); a transport that needs its server's answer
 * to connect (shm, port, and tls:, whose handshake is part of its connect) cannot connect to
 * a stopped one, and a datagram transport has no connection to lose. Kills the suite's
 * server and starts a new one. */
static void
ta_carry(void)
{
	struct ta_run run = { 0 };
	struct ta_call calls[TA_INFLIGHT];

	if (tt.tr->conn_recv_nb == NULL || (tt.tr->flags & (IDL_TRF_OWNSET | IDL_TRF_DGRAM)) ||
	    strcmp(tt.tr->scheme, "tls") == 0)
		return;
	CU_ASSERT_EQUAL_FATAL(idl_port_open_deferred(tt.address, &run.port), 0);
	CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, 20000), 0);
	CU_ASSERT_EQUAL_FATAL(tt_server_signal_wait(SIGSTOP), 0);
	for (int i = 0; i < TA_INFLIGHT; i++)
		TT_CHECK_KR(ta_start(&run, &calls[i], i, 1000 + i, NULL), 0);
	/* Connected (the kernel accepts for the stopped server) and the hello sent. */
	for (int i = 0; i < 20; i++) {
		(void)idl_port_dispatch(run.port, 0);
		usleep(5 * 1000);
	}
	CU_ASSERT_EQUAL(atomic_load(&run.outstanding), TA_INFLIGHT);
	CU_ASSERT_EQUAL(tt_server_signal_wait(SIGKILL), 0);
	if (tt.scheme->reclaim != NULL)
		tt.scheme->reclaim(tt.address);
	CU_ASSERT_EQUAL_FATAL(tt_server_start(), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 30000), 0);
	for (int i = 0; i < TA_INFLIGHT; i++) {
		CU_ASSERT_EQUAL(atomic_load(&calls[i].ran), 1);
		TT_CHECK_KR(calls[i].kr, 0);
		CU_ASSERT_EQUAL(calls[i].sum, 1000 + 2 * i);
	}
	CU_ASSERT_EQUAL(atomic_load(&run.wrong), 0);
	idl_port_close(run.port);
}

/* A loopback TCP socket bound to a port of its own: listening with a backlog of 0 and one
 * connection waiting unaccepted (so the kernel drops the next one's SYN and its connect
 * hangs), or closed (so a connect is refused). *fillp gets the waiting connection; *address
 * its address in the suite's scheme (tcp:, or tls:, which connects its socket as tcp:). */
static int
ta_tcp_trap(int listening, int *fillp, char *address, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof sa;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*fillp = -1;
	if (l < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) != 0 || (listening && listen(l, 0) != 0)) {
		close(l);
		return -1;
	}
	snprintf(address, n, "%s:127.0.0.1:%u", tt.tr->scheme, (unsigned)ntohs(sa.sin_port));
	if (!listening) {
		close(l);
		return -2;
	}
	*fillp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	(void)connect(*fillp, (struct sockaddr *)&sa, sizeof sa);
	usleep(50 * 1000); /* its handshake fills the queue */
	return l;
}

/* One call on a new port to `address` whose connect does not answer (or is refused): _async
 * returns at once, the done function runs once in the caller's loop with `want`. */
static void
ta_connect_case(const char *address, int want, int timeout_ms)
{
	struct ta_run run = { 0 };
	struct ta_call c;
	int64_t t0;

	/* Opened without connecting: idl_port_open() would wait for the connect itself. */
	CU_ASSERT_EQUAL_FATAL(idl_port_open_deferred(address, &run.port), 0);
	CU_ASSERT_EQUAL(idl_port_set_timeout(run.port, timeout_ms), 0);
	t0 = idl_now_ns();
	TT_CHECK_KR(ta_start(&run, &c, 2, 3, NULL), 0);
	/* Well before the deadline a blocking connect would have waited for. */
	CU_ASSERT(tt_ms_since(t0) < timeout_ms / 2);
	CU_ASSERT_EQUAL(atomic_load(&c.ran), 0);
	CU_ASSERT_EQUAL(ta_drain(&run, 10000), 0);
	CU_ASSERT_EQUAL(atomic_load(&c.ran), 1);
	TT_CHECK_KR(c.kr, want);
	if (want == IDL_ETIMEDOUT)
		CU_ASSERT(c.ms >= timeout_ms - 10 && c.ms < timeout_ms + TA_SLACK_MS);
	idl_port_close(run.port);
}

/* A transport that connects without blocking (conn_connect_nb: tcp, tls) keeps the caller's
 * loop free while it does: a connect whose SYN the peer drops leaves _async returning at
 * once and the call ending at its deadline; a refused one ends the call with the error. A
 * transport that connects at once (a local socket file, a queue) has nothing to show. */
static void
ta_connect(void)
{
	char address[64];
	int l, fill;

	if (tt.tr->conn_connect_nb == NULL)
		return;
	CU_ASSERT_FATAL(strcmp(tt.tr->scheme, "tcp") == 0 || strcmp(tt.tr->scheme, "tls") == 0);
	l = ta_tcp_trap(1, &fill, address, sizeof address);
	CU_ASSERT_FATAL(l >= 0);
	ta_connect_case(address, IDL_ETIMEDOUT, 300);
	close(fill);
	close(l);
	CU_ASSERT_EQUAL_FATAL(ta_tcp_trap(0, &fill, address, sizeof address), -2);
	ta_connect_case(address, IDL_ECONNREFUSED, 5000);
}

const struct tt_case tt_async_cases[] = {
	{ "async: 1000 calls, 64 in flight", ta_many },
	{ "async: mixed with sync, 4 threads", ta_mixed },
	{ "async: deadline in flight", ta_deadline },
	{ "async: cancel", ta_cancel },
	{ "async: full send queue", ta_full_queue },
	{ "async: replies the client does not read yet", ta_unread },
	{ "async: calls made before the hello is answered", ta_before_hello },
	{ "async: close in flight", ta_close },
	{ "async: dispatch runs at most max", ta_dispatch_max },
	{ "async: a done function cannot dispatch, but can call", ta_reenter },
	{ "async: connect in the caller's loop", ta_connect },
	{ "async: queued calls carried to a new connection", ta_carry },
	{ "async: peer death in flight", ta_death },
	{ NULL, NULL },
};
