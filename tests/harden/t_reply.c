/*
 * t_reply.c - deferred replies (idl_request_reply, idl_reply_send, idl_reply_discard), alone
 * and among pipelined calls whose replies a stream server sends in batches, and MIG's
 * ownership rule under injected errors: a routine that fails after receiving
 * out-of-line data and ports must neither leak them nor see them freed twice.
 */
#include <config.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "everyServer.h"
#include "every_impl.h"
#include "harden.h"

struct hd_call {
	idl_port_t port;
	int x;
	int y;
	int kr;
};

static void *
hd_deferred_main(void *arg)
{
	struct hd_call *c = arg;

	c->kr = every_deferred(c->port, c->x, &c->y);
	return NULL;
}

/* Replies sent later from another thread, on every connection transport; several at once
 * on one connection, answered out of order. */
static void
test_deferred(void)
{
	const char *schemes[8];
	const char *opts[] = { "-c", "4", NULL };
	size_t n = hd_schemes(schemes, 8);

	for (size_t i = 0; i < n; i++) {
		struct hd_call c[4];
		pthread_t t[4];
		struct hd_srv s;
		char addr[256];
		idl_port_t p;
		int y = 0;

		CU_ASSERT_FATAL(hd_address(schemes[i], addr, sizeof addr) == 0);
		CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
		p = hd_open(addr, 5000);
		CU_ASSERT_FATAL(p != NULL);
		HD_CHECK_KR(every_deferred(p, 0, &y), 0);
		CU_ASSERT_EQUAL(y, 1);
		HD_CHECK_KR(every_deferred(p, 30, &y), 0);
		CU_ASSERT_EQUAL(y, 31);
		for (int k = 0; k < 4; k++) {
			c[k].port = p;
			c[k].x = 200 - 50 * k; /* the last sent is answered first */
			pthread_create(&t[k], NULL, hd_deferred_main, &c[k]);
		}
		for (int k = 0; k < 4; k++) {
			pthread_join(t[k], NULL);
			HD_CHECK_KR(c[k].kr, 0);
			CU_ASSERT_EQUAL(c[k].y, c[k].x + 1);
		}
		idl_port_close(p);
		CU_ASSERT_EQUAL(hd_stop(&s), 0);
	}
}

/* The client leaves before the reply: sending it returns MIG_SERVER_DIED, and the server
 * goes on. The child says through a pipe when its connection is open; it is killed well
 * before the server's deferred reply is due (1.5 s after the request), and the test then
 * waits for that reply's send to be reported, however slow the machine. */
static void
test_client_gone(void)
{
	int counted, held, last = 0, ready[2];
	struct hd_srv s;
	char addr[256], b;
	idl_port_t p;
	pid_t child;

	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, NULL, 0) == 0);
	CU_ASSERT_FATAL(pipe2(ready, O_CLOEXEC) == 0);
	if ((child = fork()) == 0) {
		idl_port_t q = NULL;
		int y;

		close(ready[0]);
		if (idl_port_open(addr, &q) == 0 && write(ready[1], "r", 1) == 1)
			every_deferred(q, 1500, &y);
		_exit(0);
	}
	close(ready[1]);
	CU_ASSERT_FATAL(read(ready[0], &b, 1) == 1);
	close(ready[0]);
	hd_sleep_ms(300);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	for (int i = 0; i < 100 && last == 0; i++) {
		HD_CHECK_KR(every_stats(p, &counted, &held, &last), 0);
		if (last == 0)
			hd_sleep_ms(100);
	}
	HD_CHECK_KR(last, MIG_SERVER_DIED);
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

struct hd_inproc {
	idl_server_t *srv;
	int err;
};

static void *
hd_run_main(void *arg)
{
	struct hd_inproc *ip = arg;

	ip->err = idl_server_run(ip->srv);
	return NULL;
}

/* A handle outlives its call and its server: held by the routine, sent from the test's
 * thread while the client waits, and sent after idl_server_destroy() (MIG_SERVER_DIED,
 * nothing leaked: the last handle frees the server). */
static void
test_held(void)
{
	struct hd_inproc ip = { NULL, -1 };
	struct hd_call c;
	pthread_t run, call;
	char addr[256];
	idl_reply_t r = NULL;
	idl_port_t p;

	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(idl_server_create(&ip.srv) == 0);
	CU_ASSERT_FATAL(idl_server_add_subsystem(ip.srv, &every_subsystem, every_server) == 0);
	CU_ASSERT_FATAL(idl_server_set_concurrency(ip.srv, 2) == 0);
	CU_ASSERT_FATAL(idl_server_listen(ip.srv, addr) == 0);
	pthread_create(&run, NULL, hd_run_main, &ip);
	p = hd_open(addr, 5000);
	CU_ASSERT_FATAL(p != NULL);

	/* Sent by this thread while the client waits. */
	c.port = p;
	c.x = -1;
	c.y = 0;
	pthread_create(&call, NULL, hd_deferred_main, &c);
	for (int i = 0; i < 200 && (r = ev_held_take()) == NULL; i++)
		hd_sleep_ms(10);
	CU_ASSERT_FATAL(r != NULL);
	HD_CHECK_KR(S_every_deferred_send_reply(r, KERN_SUCCESS, 4242), 0);
	pthread_join(call, NULL);
	HD_CHECK_KR(c.kr, 0);
	CU_ASSERT_EQUAL(c.y, 4242);

	/* Held across the server's end. */
	idl_port_set_timeout(p, 300);
	HD_CHECK_KR(every_deferred(p, -1, &c.y), IDL_ETIMEDOUT);
	idl_server_stop(ip.srv);
	pthread_join(run, NULL);
	HD_CHECK_KR(ip.err, 0);
	idl_server_destroy(ip.srv);
	HD_CHECK_KR(ev_send_held(1), MIG_SERVER_DIED);
	CU_ASSERT_PTR_NULL(ev_held_take());
	idl_port_close(p);
	idl_reply_discard(NULL);
}

/*
 * Error injection: each routine that receives out-of-line data or ports fails once after
 * receiving them (every-server -i once), then works; with -i all, always fails. The
 * runtime releases what the failed calls carried: the server's descriptors come back to
 * where they were, and a sanitizer build's server exits 0 only without leaks.
 */
static void
hd_inject_round(const char *scheme, const char *mode)
{
	const struct idl_transport *tr = hd_transport(scheme);
	const char *opts[] = { "-i", mode, NULL };
	int ports_ok = (tr->flags & IDL_TRF_DESC) && (tr->flags & IDL_TRF_FDPASS);
	int rounds = strcmp(mode, "all") == 0 ? 10 : 2;
	int base = -1, after;
	struct hd_srv s;
	char addr[256];
	idl_port_t p;

	CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	p = hd_open(addr, 5000);
	CU_ASSERT_FATAL(p != NULL);
	HD_CHECK_KR(every_null(p), 0);
	hd_sleep_ms(50);
	base = hd_fd_count(s.pid);
	for (int r = 0; r < rounds; r++) {
		int want = strcmp(mode, "all") == 0 || r == 0 ? 5 : 0;
		char data[3000];
		int ints[100], sum = 0, n = 0;
		unsigned char page[64], *back = NULL;
		int *io = idl_ool_alloc(sizeof ints);

		memset(data, 1, sizeof data);
		for (int i = 0; i < 100; i++)
			ints[i] = i;
		memset(page, 7, sizeof page);
		HD_CHECK_KR(every_ool_in(p, data, sizeof data, ints, 100, &sum), want);
		if (want == 0)
			CU_ASSERT_EQUAL(sum, 3000 + 4950);
		HD_CHECK_KR(every_ool_page(p, page, &back), want);
		if (want == 0 && back != NULL) {
			CU_ASSERT_EQUAL(back[0], (unsigned char)~7);
			idl_ool_free(back, 64);
		}
		{
			ev_ints_t d = io;
			mach_msg_type_number_t dn = 100;

			for (int i = 0; i < 100; i++)
				io[i] = i;
			/* dealloc: the stub's send consumes io, whatever happens. */
			HD_CHECK_KR(every_ool_inout(p, &d, &dn), want);
			if (want == 0) {
				CU_ASSERT_EQUAL(dn, 100u);
				CU_ASSERT_EQUAL(d[99], 198);
				idl_ool_free(d, (size_t)dn * sizeof(int));
			}
		}
		if (ports_ok) {
			idl_port_t q[3];

			for (int i = 0; i < 3; i++)
				q[i] = hd_open(addr, 5000);
			HD_CHECK_KR(every_port_in(p, q[0], &n), want);
			HD_CHECK_KR(every_port_array(p, q, 3, &n), want);
			HD_CHECK_KR(every_inline_ports(p, q, 3, &n), want);
			HD_CHECK_KR(every_notify_ool(p, data, 100, q[1]), 0);
			for (int i = 0; i < 3; i++)
				idl_port_close(q[i]);
		}
		HD_CHECK_KR(every_null(p), 0);
	}
	/* Ports the server received and released are connections it made: they are gone
	 * again once it has caught up. */
	after = hd_fd_count(s.pid);
	for (int i = 0; i < 100 && after > base; i++) {
		hd_sleep_ms(20);
		after = hd_fd_count(s.pid);
	}
	fprintf(stderr, "harden: inject %s %s: server descriptors %d before, %d after\n", mode,
		scheme, base, after);
	CU_ASSERT(after <= base);
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

static void
test_inject(void)
{
	const char *schemes[8];
	size_t n = hd_schemes(schemes, 8);

	for (size_t i = 0; i < n; i++) {
		if (!(hd_transport(schemes[i])->flags & IDL_TRF_DESC)) {
			fprintf(stderr, "harden: inject: %s: no descriptors yet: not run\n",
				schemes[i]);
			continue;
		}
		hd_inject_round(schemes[i], "once");
		hd_inject_round(schemes[i], "all");
	}
}

/* Calls in flight, sent in batches from a done function: plain calls answered at once and
 * calls deferred to other threads, mixed. A stream server gathers the replies to the frames
 * it read ahead and sends them together; a deferred reply among them must neither be lost
 * nor let the gathered ones go astray. Every call completes once, with its own answer. */
#define HD_PIPE_CALLS 63

struct hd_pipe {
	idl_port_t port;
	int started; /* calls accepted */
	int done; /* completions */
	int bad; /* completions with a wrong result */
	int y[HD_PIPE_CALLS];
};

struct hd_pipe_call {
	struct hd_pipe *pp;
	int k;
};

static struct hd_pipe_call hd_pipe_calls[HD_PIPE_CALLS];

static void
hd_pipe_deferred_done(void *ctx, kern_return_t kr, int y)
{
	struct hd_pipe_call *c = ctx;

	c->pp->done++;
	c->pp->y[c->k] = y;
	if (kr != KERN_SUCCESS) {
		fprintf(stderr, "harden: pipelined: call %d: %s\n", c->k, idl_errname(kr));
		c->pp->bad++;
	}
}

static void
hd_pipe_null_done(void *ctx, kern_return_t kr)
{
	struct hd_pipe_call *c = ctx;

	c->pp->done++;
	c->pp->y[c->k] = kr == KERN_SUCCESS ? -1 : 0;
	if (kr != KERN_SUCCESS)
		c->pp->bad++;
}

/* The first call's completion sends the rest: they leave in one batch at the end of the
 * dispatch. Every fourth is deferred (by 20 to 80 ms), every eighth answered at once by
 * the deferring routine, the others are null calls. */
static void
hd_pipe_first_done(void *ctx, kern_return_t kr)
{
	struct hd_pipe *pp = ctx;

	CU_ASSERT_EQUAL(kr, KERN_SUCCESS);
	for (int k = 0; k < HD_PIPE_CALLS; k++) {
		struct hd_pipe_call *c = &hd_pipe_calls[k];
		idl_async_t *call;
		int err;

		c->pp = pp;
		c->k = k;
		if (k % 8 == 3)
			err = every_deferred_async(pp->port, 20 + k, hd_pipe_deferred_done, c,
						   &call);
		else if (k % 8 == 7)
			err = every_deferred_async(pp->port, 0, hd_pipe_deferred_done, c, &call);
		else
			err = every_null_async(pp->port, hd_pipe_null_done, c, &call);
		HD_CHECK_KR(err, 0);
		if (err == 0) {
			pp->started++;
			idl_async_release(call);
		}
	}
}

static void
test_pipelined(void)
{
	const char *schemes[8];
	const char *opts[] = { "-c", "4", NULL };
	size_t n = hd_schemes(schemes, 8);

	for (size_t i = 0; i < n; i++) {
		struct hd_pipe pp = { 0 };
		struct hd_srv s;
		idl_async_t *first;
		char addr[256];
		int64_t until;
		int y = 0;

		CU_ASSERT_FATAL(hd_address(schemes[i], addr, sizeof addr) == 0);
		CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
		pp.port = hd_open(addr, 10000);
		CU_ASSERT_FATAL(pp.port != NULL);
		HD_CHECK_KR(every_null_async(pp.port, hd_pipe_first_done, &pp, &first), 0);
		idl_async_release(first);
		until = hd_now_ms() + 20000;
		while ((pp.started == 0 || pp.done < pp.started) && hd_now_ms() < until)
			if (idl_port_wait(pp.port, 1000) < 0)
				break;
		CU_ASSERT_EQUAL(pp.started, HD_PIPE_CALLS);
		CU_ASSERT_EQUAL(pp.done, HD_PIPE_CALLS);
		CU_ASSERT_EQUAL(pp.bad, 0);
		for (int k = 0; k < HD_PIPE_CALLS; k++) {
			int want = k % 8 == 3 ? 21 + k : k % 8 == 7 ? 1 : -1;

			if (pp.y[k] != want)
				fprintf(stderr, "harden: pipelined: %s: call %d: %d, want %d\n",
					schemes[i], k, pp.y[k], want);
			CU_ASSERT_EQUAL(pp.y[k], want);
		}
		/* The connection is still in step. */
		HD_CHECK_KR(every_deferred(pp.port, 30, &y), 0);
		CU_ASSERT_EQUAL(y, 31);
		idl_port_close(pp.port);
		CU_ASSERT_EQUAL(hd_stop(&s), 0);
	}
}

CU_TestInfo hd_reply_tests[] = {
	{ "deferred", test_deferred },	     { "pipelined", test_pipelined },
	{ "client_gone", test_client_gone }, { "held", test_held },
	{ "inject", test_inject },	     CU_TEST_INFO_NULL,
};
