/*
 * async_client.c - calls in flight from one thread: keeps N calls of bench.add outstanding
 * on one port through the asynchronous stub, waits on the port's descriptor with poll() as
 * any event loop would, checks every result, and prints the calls per second.
 *
 *     async-client ADDRESS [CALLS [INFLIGHT]]     (defaults: 100000 calls, 64 in flight)
 *
 * Against `bench-server ADDRESS` or `idlbench serve ADDRESS`. Written from docs/api.md,
 * "Calls in flight": each done function starts the next call of its slot, so that the calls
 * started during one dispatch leave together, in one batch, when it ends; a call started
 * outside a dispatch is sent at once, one system call each.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include <idl/idl.h>
#include <idl/idl_async.h>
#include <idl/idl_transport.h>

#include "bench_types.h"
#include "bench.h"

struct client {
	idl_port_t port;
	long calls, started, done, wrong, failed;
	long idle; /* slots whose next call the queue refused (IDL_EAGAIN): main starts them */
	int broken; /* a call was refused for another reason */
};

/* One call in flight: what it asked, so that the done function can check the sum. A slot
 * is reused by the next call once its done function has run. */
struct slot {
	struct client *cl;
	int a, b;
	int busy;
};

static void add_done(void *ctx, kern_return_t kr, int sum);

/* Starts the slot's next call, if calls remain: 0, or the stub's error. */
static int
slot_start(struct slot *s)
{
	struct client *cl = s->cl;
	int err;

	if (cl->started >= cl->calls)
		return 0;
	s->a = (int)(cl->started % 100000);
	s->b = 7;
	err = bench_add_async(cl->port, s->a, s->b, add_done, s, NULL);
	if (err == 0) {
		s->busy = 1;
		cl->started++;
	} else if (err == IDL_EAGAIN) {
		cl->idle++; /* the send queue is full: main starts it after the dispatch */
	} else {
		fprintf(stderr, "async-client: %s\n", idl_errdetail());
		cl->broken = 1;
	}
	return err;
}

static void
add_done(void *ctx, kern_return_t kr, int sum)
{
	struct slot *s = ctx;
	struct client *cl = s->cl;

	if (kr != KERN_SUCCESS) {
		/* idl_errdetail() names the failure inside the done function. */
		if (cl->failed++ == 0)
			fprintf(stderr, "async-client: %s: %s\n", idl_errname(kr), idl_errdetail());
	} else if (sum != s->a + s->b) {
		cl->wrong++;
	}
	cl->done++;
	s->busy = 0;
	/* Started inside the dispatch: it leaves with the others when the dispatch ends. */
	(void)slot_start(s);
}

int
main(int argc, char **argv)
{
	struct client cl = { 0 };
	long inflight = argc > 3 ? atol(argv[3]) : 64;
	struct slot *slots;
	struct pollfd pfd;
	int64_t t0;
	double secs;
	int err;

	cl.calls = argc > 2 ? atol(argv[2]) : 100000;
	if (argc < 2 || cl.calls <= 0 || inflight <= 0) {
		fprintf(stderr, "usage: async-client ADDRESS [CALLS [INFLIGHT]]\n");
		return 2;
	}
	if ((slots = calloc((size_t)inflight, sizeof *slots)) == NULL) {
		fprintf(stderr, "async-client: out of memory\n");
		return 1;
	}
	/* Deferred: the first call connects, in the port's loop where the transport can. */
	if ((err = idl_port_open_deferred(argv[1], &cl.port)) != 0) {
		fprintf(stderr, "async-client: %s: %s\n", argv[1], idl_errdetail());
		free(slots);
		return 1;
	}
	pfd.fd = idl_port_fd(cl.port);
	pfd.events = POLLIN;
	t0 = idl_now_ns();
	for (long i = 0; i < inflight; i++) {
		slots[i].cl = &cl;
		cl.idle++;
	}
	while (cl.done < cl.calls && !cl.broken) {
		/* Slots without a call: at the start, and after the queue refused one. Outside
		 * a dispatch each call is sent as it is made. */
		for (long i = 0; i < inflight && cl.idle > 0 && !cl.broken; i++) {
			if (slots[i].busy)
				continue;
			cl.idle--;
			if (slot_start(&slots[i]) != 0)
				break;
		}
		if (poll(&pfd, 1, 10000) < 0 || idl_port_dispatch(cl.port, 0) < 0)
			break;
	}
	secs = (double)(idl_now_ns() - t0) / 1e9;
	idl_port_close(cl.port);
	free(slots);
	printf("%ld calls, %ld in flight: %.0f calls/s; %ld wrong, %ld failed\n", cl.done, inflight,
	       (double)cl.done / secs, cl.wrong, cl.failed);
	return cl.done == cl.calls && cl.wrong == 0 && cl.failed == 0 ? 0 : 1;
}
