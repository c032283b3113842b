/*
 * t_reconnect.c - what another thread's reconnect and a server's idle close do to calls, on
 * every registered transport (docs/runtime.md, "Peer death and reconnect").
 *
 * deadlines: the server is killed with synchronous and asynchronous calls in flight, and
 * its address is left as a dead server leaves it (a socket file nobody listens on, a queue
 * nobody holds), so that a connect there fails, and on port: only after about a second.
 * Two threads keep reconnecting through the same port, synchronously and asynchronously,
 * while the test starts short calls beside them. Every call must end by its own deadline
 * (with a margin for scheduling), the calls in flight soon after the death (the transport
 * sees it within milliseconds; only a datagram transport waits for the deadline), and every
 * asynchronous failure must say why. Then a server is started again and the same port
 * works.
 *
 * idle: the server closes connections idle past idle_ms with an IDLE goodbye; calls spaced
 * beyond it, synchronous and asynchronous, must each go through: the goodbye promises that
 * the server read nothing of them, and the next call connects again.
 */
#include <config.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_async.h>

#include "harden.h"

/* The deadline of the calls in flight when the server dies, and of the calls started while
 * another thread reconnects. The reconnecting threads' calls use the port's default. */
#define HR_INFLIGHT_MS 1000
#define HR_LATE_MS 300
#define HR_LONG_MS 5000
/* Scheduling on a loaded two-core machine, under the sanitizers too. */
#define HR_MARGIN_MS 250
/* How soon after the death the calls in flight must end (a connection transport sees it
 * at once, port: within its 20 ms liveness slice). */
#define HR_DEATH_MS 600
#define HR_NSYNC 3
#define HR_NASYNC 4
#define HR_NLATE 8
/* The idle case: the server's idle_ms, and the calls spaced beyond it. */
#define HR_IDLE_MS 250
#define HR_IDLE_GAP_MS 400
#define HR_IDLE_CALLS 3

/* One measured call: synchronous or asynchronous. */
struct hr_call {
	int timeout_ms;
	int64_t t0, t1; /* ms */
	int kr;
	atomic_int ran; /* an asynchronous call's done function runs once */
	char why[256]; /* idl_errdetail() when it failed */
	uint64_t req[4]; /* the request: a header and one int */
	uint64_t rep[8];
};

/* The routine of every.defs with this name. */
static uint32_t
hr_routine(const char *name)
{
	for (uint32_t i = 0; i < every_subsystem.nroutines; i++)
		if (every_subsystem.routines[i].name != NULL &&
		    strcmp(every_subsystem.routines[i].name, name) == 0)
			return i;
	CU_FAIL_FATAL("every.defs has no such routine");
	return 0;
}

/* The request of null (arg < 0) or of sleep_ms(arg). */
static idl_msg_header_t *
hr_request(struct hr_call *c, int arg, uint32_t *number)
{
	idl_msg_header_t *h = (idl_msg_header_t *)c->req;

	memset(c->req, 0, sizeof c->req);
	if (arg < 0) {
		*number = hr_routine("null");
		h->size = IDL_MSG_HEADER_SIZE;
	} else {
		int32_t ms = arg;

		*number = hr_routine("sleep_ms");
		h->size = IDL_MSG_HEADER_SIZE + 8;
		memcpy((char *)c->req + IDL_MSG_HEADER_SIZE, &ms, sizeof ms);
	}
	return h;
}

/* A synchronous call with its own deadline, measured. */
static void
hr_sync(idl_port_t p, struct hr_call *c, int arg, int timeout_ms)
{
	uint32_t number;
	idl_msg_header_t *req = hr_request(c, arg, &number);

	c->timeout_ms = timeout_ms;
	c->t0 = hd_now_ms();
	c->kr = idl_call(p, &every_subsystem, number, req, (idl_msg_header_t *)c->rep,
			 sizeof c->rep, timeout_ms);
	c->t1 = hd_now_ms();
	snprintf(c->why, sizeof c->why, "%s", c->kr != 0 ? idl_errdetail() : "");
	atomic_store(&c->ran, 1);
}

static void
hr_complete(void *done, void *ctx, int kr, idl_msg_header_t *rep)
{
	struct hr_call *c = ctx;

	(void)done;
	(void)rep;
	c->t1 = hd_now_ms();
	c->kr = kr;
	snprintf(c->why, sizeof c->why, "%s", kr != 0 ? idl_errdetail() : "");
	atomic_fetch_add(&c->ran, 1);
}

/* An asynchronous call with its own deadline; its done function measures it. */
static int
hr_async(idl_port_t p, struct hr_call *c, int arg, int timeout_ms)
{
	uint32_t number;
	idl_msg_header_t *req = hr_request(c, arg, &number);
	int err;

	c->timeout_ms = timeout_ms;
	atomic_store(&c->ran, 0);
	c->t0 = hd_now_ms();
	err = idl_call_async(p, &every_subsystem, number, req, sizeof c->rep, timeout_ms,
			     hr_complete, NULL, c, NULL);
	if (err != 0) {
		/* Refused at once: measured as a call that ended here. */
		c->t1 = hd_now_ms();
		c->kr = err;
		snprintf(c->why, sizeof c->why, "%s", idl_errdetail());
		atomic_store(&c->ran, 1);
	}
	return err;
}

/* Dispatches the port until every call in calls[] ran (or ms passed): 0 when all did. */
static int
hr_drain(idl_port_t p, struct hr_call *calls, int n, int ms)
{
	int64_t end = hd_now_ms() + ms;

	for (;;) {
		int left = 0;

		for (int i = 0; i < n; i++)
			left += atomic_load(&calls[i].ran) == 0;
		if (left == 0)
			return 0;
		if (hd_now_ms() > end)
			return -1;
		(void)idl_port_wait(p, 20);
	}
}

/* What the threads of the deadlines case share. */
struct hr_run {
	idl_port_t port;
	atomic_int stop;
	atomic_int attempts; /* the reconnecting threads' calls */
	struct hr_call sync[HR_NSYNC];
	struct hr_call async[HR_NASYNC];
	struct hr_call late_sync[HR_NLATE];
	struct hr_call late_async[HR_NLATE];
	int slot; /* the synchronous call in flight a thread makes */
	pthread_mutex_t lock;
};

static void *
hr_inflight_main(void *arg)
{
	struct hr_run *r = arg;
	int i;

	pthread_mutex_lock(&r->lock);
	i = r->slot++;
	pthread_mutex_unlock(&r->lock);
	hr_sync(r->port, &r->sync[i], 3000, HR_INFLIGHT_MS);
	return NULL;
}

/* Keeps dispatching the port: the done functions run here. */
static void *
hr_dispatch_main(void *arg)
{
	struct hr_run *r = arg;

	while (!atomic_load(&r->stop))
		(void)idl_port_wait(r->port, 20);
	return NULL;
}

/* Reconnects synchronously, over and over: each call on the dead address connects. */
static void *
hr_resync_main(void *arg)
{
	struct hr_run *r = arg;

	while (!atomic_load(&r->stop)) {
		struct hr_call c;

		hr_sync(r->port, &c, -1, HR_LONG_MS);
		atomic_fetch_add(&r->attempts, 1);
		hd_sleep_ms(2);
	}
	return NULL;
}

/* Reconnects asynchronously, over and over: each call starts when the last one ended. */
static void *
hr_reasync_main(void *arg)
{
	struct hr_run *r = arg;
	struct hr_call c;

	while (!atomic_load(&r->stop)) {
		int64_t end = hd_now_ms() + HR_LONG_MS + 2000;

		if (hr_async(r->port, &c, -1, HR_LONG_MS) == 0)
			while (atomic_load(&c.ran) == 0 && hd_now_ms() < end)
				hd_sleep_ms(2);
		atomic_fetch_add(&r->attempts, 1);
		hd_sleep_ms(2);
	}
	/* The last call's done function may run only in the port's close. */
	return NULL;
}

/* Whether a failed asynchronous call's detail says why: not empty, and not cut after a
 * colon. */
static int
hr_why_ok(const char *why)
{
	size_t n = strlen(why);

	return n > 0 && !(n >= 2 && why[n - 2] == ':' && why[n - 1] == ' ') && why[n - 1] != ':';
}

/* Checks one measured call: ended once, failed, by its deadline; in flight at the death
 * (kill_ms != 0), soon after it. */
static void
hr_check(const char *scheme, const char *what, int i, const struct hr_call *c, int64_t kill_ms,
	 int dgram, int async)
{
	long ms = (long)(c->t1 - c->t0);

	if (atomic_load(&c->ran) != 1 || c->kr == 0 || ms > c->timeout_ms + HR_MARGIN_MS ||
	    (kill_ms != 0 && !dgram && c->t1 - kill_ms > HR_DEATH_MS) ||
	    (async && !hr_why_ok(c->why)))
		fprintf(stderr,
			"harden: reconnect: %s: %s call %d (deadline %d ms): ran %d, %s after "
			"%ld ms (%ld ms after the death) [%s]\n",
			scheme, what, i, c->timeout_ms, atomic_load(&c->ran), idl_errname(c->kr),
			ms, kill_ms != 0 ? (long)(c->t1 - kill_ms) : 0L, c->why);
	CU_ASSERT_EQUAL(atomic_load(&c->ran), 1);
	CU_ASSERT(c->kr != 0);
	CU_ASSERT(ms <= c->timeout_ms + HR_MARGIN_MS);
	if (kill_ms != 0 && !dgram)
		CU_ASSERT(c->t1 - kill_ms <= HR_DEATH_MS);
	if (async)
		CU_ASSERT(hr_why_ok(c->why));
}

static void
hr_deadlines(const char *scheme)
{
	const char *opts[] = { "-c", "8", NULL };
	const struct idl_transport *tr = hd_transport(scheme);
	int dgram = tr != NULL && (tr->flags & IDL_TRF_DGRAM) != 0;
	struct hr_run *r = calloc(1, sizeof *r);
	pthread_t inflight[HR_NSYNC], disp, resync, reasync;
	struct hr_call ok;
	struct hd_srv s;
	char addr[256];
	int64_t kill_ms;

	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	r->port = hd_open(addr, HR_LONG_MS);
	CU_ASSERT_FATAL(r->port != NULL);
	pthread_mutex_init(&r->lock, NULL);
	/* Both connections made and greeted. */
	hr_sync(r->port, &ok, -1, HR_LONG_MS);
	HD_CHECK_KR(ok.kr, 0);
	HD_CHECK_KR(hr_async(r->port, &ok, -1, HR_LONG_MS), 0);
	CU_ASSERT_EQUAL(hr_drain(r->port, &ok, 1, HR_LONG_MS), 0);
	HD_CHECK_KR(ok.kr, 0);

	/* Calls in flight, inside the server's routine, when it dies. */
	CU_ASSERT_EQUAL_FATAL(pthread_create(&disp, NULL, hr_dispatch_main, r), 0);
	for (int i = 0; i < HR_NSYNC; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&inflight[i], NULL, hr_inflight_main, r), 0);
	for (int i = 0; i < HR_NASYNC; i++)
		HD_CHECK_KR(hr_async(r->port, &r->async[i], 3000, HR_INFLIGHT_MS), 0);
	hd_sleep_ms(250);
	kill_ms = hd_now_ms();
	hd_kill(&s);
	/* Reconnecting beside them, and calls started while it goes on. */
	CU_ASSERT_EQUAL_FATAL(pthread_create(&resync, NULL, hr_resync_main, r), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&reasync, NULL, hr_reasync_main, r), 0);
	for (int i = 0; i < HR_NLATE; i++) {
		hd_sleep_ms(30);
		(void)hr_async(r->port, &r->late_async[i], -1, HR_LATE_MS);
		hr_sync(r->port, &r->late_sync[i], -1, HR_LATE_MS);
	}
	for (int i = 0; i < HR_NSYNC; i++)
		pthread_join(inflight[i], NULL);
	/* Every late asynchronous call's deadline has passed: each ran by now, or will not. */
	(void)hr_drain(r->port, r->late_async, HR_NLATE, HR_LATE_MS + HR_MARGIN_MS);
	(void)hr_drain(r->port, r->async, HR_NASYNC, HR_INFLIGHT_MS + HR_MARGIN_MS);
	atomic_store(&r->stop, 1);
	pthread_join(resync, NULL);
	pthread_join(reasync, NULL);
	pthread_join(disp, NULL);
	CU_ASSERT(atomic_load(&r->attempts) > 0);
	for (int i = 0; i < HR_NSYNC; i++)
		hr_check(scheme, "synchronous in flight", i, &r->sync[i], kill_ms, dgram, 0);
	for (int i = 0; i < HR_NASYNC; i++)
		hr_check(scheme, "asynchronous in flight", i, &r->async[i], kill_ms, dgram, 1);
	for (int i = 0; i < HR_NLATE; i++) {
		hr_check(scheme, "synchronous late", i, &r->late_sync[i], 0, dgram, 0);
		hr_check(scheme, "asynchronous late", i, &r->late_async[i], 0, dgram, 1);
	}

	/* A server again at the address: the same port works, both ways. */
	hd_reclaim(addr);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	for (int i = 0; i < 3; i++) {
		hr_sync(r->port, &ok, -1, HR_LONG_MS);
		if (ok.kr == 0)
			break;
	}
	HD_CHECK_KR(ok.kr, 0);
	for (int i = 0; i < 3; i++) {
		if (hr_async(r->port, &ok, -1, HR_LONG_MS) == 0)
			(void)hr_drain(r->port, &ok, 1, HR_LONG_MS + 1000);
		if (ok.kr == 0)
			break;
	}
	HD_CHECK_KR(ok.kr, 0);
	idl_port_close(r->port);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* Runs a case on every registered transport. */
static void
hr_each(void (*fn)(const char *scheme))
{
	const char *schemes[8];
	size_t n = hd_schemes(schemes, 8);

	for (size_t i = 0; i < n; i++)
		fn(schemes[i]);
}

static void
test_deadlines(void)
{
	hr_each(hr_deadlines);
}

static void
hr_idle(const char *scheme)
{
	char limit[32];
	const char *opts[] = { "-l", limit, NULL };
	const struct idl_transport *tr = hd_transport(scheme);
	struct hd_srv s;
	char addr[256];
	idl_port_t p;

	snprintf(limit, sizeof limit, "idle_ms=%d", HR_IDLE_MS);
	CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	for (int i = 0; i < HR_IDLE_CALLS; i++) {
		struct hr_call c;
		uint64_t note[4] = { 0 };
		idl_msg_header_t *h = (idl_msg_header_t *)note;
		int kr;

		/* A one-way message first: after the gap it finds the connection closed for
		 * idleness, and goes again on a new one, as a call does. */
		h->size = sizeof note;
		kr = idl_send(p, &every_subsystem, hr_routine("notify"), h, 3000);
		if (kr != 0)
			fprintf(stderr, "harden: idle: %s: one-way message %d: %s [%s]\n", scheme,
				i, idl_errname(kr), idl_errdetail());
		CU_ASSERT_EQUAL(kr, 0);
		hr_sync(p, &c, -1, 3000);
		if (c.kr != 0)
			fprintf(stderr, "harden: idle: %s: synchronous call %d: %s [%s]\n", scheme,
				i, idl_errname(c.kr), c.why);
		CU_ASSERT_EQUAL(c.kr, 0);
		if (hr_async(p, &c, -1, 3000) == 0)
			CU_ASSERT_EQUAL(hr_drain(p, &c, 1, 5000), 0);
		if (c.kr != 0)
			fprintf(stderr, "harden: idle: %s: asynchronous call %d: %s [%s]\n", scheme,
				i, idl_errname(c.kr), c.why);
		CU_ASSERT_EQUAL(c.kr, 0);
		hd_sleep_ms(HR_IDLE_GAP_MS);
	}
	/* The server did close them (a datagram endpoint has no connection to close). */
	if (tr != NULL && !(tr->flags & IDL_TRF_DGRAM))
		CU_ASSERT(hd_log_has(&s, "idle, connection closed", 1000));
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

static void
test_idle_all(void)
{
	hr_each(hr_idle);
}

CU_TestInfo hd_reconnect_tests[] = {
	{ "deadlines", test_deadlines },
	{ "idle", test_idle_all },
	CU_TEST_INFO_NULL,
};
