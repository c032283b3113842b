/*
 * uv_client.c - uv-client: calls in flight from a libuv loop.
 *
 *     uv-client [-n CALLS] [-i INFLIGHT] ADDRESS      (defaults: 10000 calls, 64 in flight)
 *
 * Keeps INFLIGHT calls of bench.add outstanding on one port through the asynchronous stub
 * bench_add_async(). One uv_poll_t watches the port's descriptor (idl_port_fd(): readable
 * while a reply is waiting, a completion is queued or a deadline is due); its callback runs
 * idl_port_dispatch(), which calls the done functions on the loop's thread, then starts new
 * calls in the freed slots. The port is opened without connecting (idl_port_open_deferred),
 * so that the loop's thread never waits for a connect outside the loop. Every sum is
 * checked against the one expected. At the end it
 * prints a summary line and exits 0 only when every call succeeded with the right sum.
 *
 * Against `uv-server ADDRESS`, `bench-server ADDRESS` or `idlbench serve ADDRESS`, on any
 * transport the client side supports (all five).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <uv.h>

#include <idl/idl.h>
#include <idl/idl_async.h>

#include "bench_types.h"
#include "bench.h"

struct uv_client;

/* One call in flight: what was asked, so that the done function can check the answer. A
 * slot is on the free list or lent to exactly one accepted call. */
struct uv_slot {
	struct uv_client *cl;
	struct uv_slot *next_free;
	int a, b;
};

struct uv_client {
	uv_loop_t loop;
	uv_poll_t poll; /* on idl_port_fd() */
	idl_port_t port;
	struct uv_slot *slots, *free;
	long calls, inflight;
	long started, done, wrong, failed;
	int broken; /* a call could not be started, or the loop failed: stop */
};

/* The operands of call i: spread over the whole int range, negative ones included. The
 * server adds them with wrapping arithmetic, as bench_impl.c does. */
static void
uv_client_operands(long i, int *a, int *b)
{
	*a = (int)(uint32_t)((uint64_t)i * 2654435761u);
	*b = (int)(uint32_t)((uint64_t)i * 40503u + 7u);
}

static void uv_client_fill(struct uv_client *cl);

/* bench.add's done function: runs exactly once per accepted call, inside
 * idl_port_dispatch() or idl_port_close(), on the loop's thread. */
static void
uv_client_add_done(void *ctx, kern_return_t kr, int sum)
{
	struct uv_slot *s = ctx;
	struct uv_client *cl = s->cl;

	if (kr != KERN_SUCCESS) {
		/* idl_errdetail() names the failure inside the done function only. */
		if (cl->failed++ == 0)
			fprintf(stderr, "uv-client: add(%d, %d): %s (%s): %s\n", s->a, s->b,
				idl_strerror(kr), idl_errname(kr), idl_errdetail());
	} else if (sum != (int)((uint32_t)s->a + (uint32_t)s->b)) {
		if (cl->wrong++ == 0)
			fprintf(stderr, "uv-client: add(%d, %d) returned %d\n", s->a, s->b, sum);
	}
	cl->done++;
	s->next_free = cl->free;
	cl->free = s;
	/* The next call, started inside the dispatch: the calls started in one dispatch leave
	 * together when it ends (one system call, where a call started afterwards takes one
	 * each). Not while the port closes (IDL_ECANCELED): it takes no more calls. */
	if (kr != IDL_ECANCELED)
		uv_client_fill(cl);
}

/* Starts calls until INFLIGHT are outstanding or all were started. A full send queue
 * (IDL_EAGAIN) waits for the next dispatch; any other refusal stops the client. */
static void
uv_client_fill(struct uv_client *cl)
{
	while (cl->started < cl->calls && cl->free != NULL) {
		struct uv_slot *s = cl->free;
		int err;

		uv_client_operands(cl->started, &s->a, &s->b);
		err = bench_add_async(cl->port, s->a, s->b, uv_client_add_done, s, NULL);
		if (err == IDL_EAGAIN)
			return; /* refused: the done function never runs, the slot stays free */
		if (err != 0) {
			fprintf(stderr, "uv-client: bench_add_async: %s (%s): %s\n",
				idl_strerror(err), idl_errname(err), idl_errdetail());
			cl->broken = 1;
			return;
		}
		cl->free = s->next_free;
		cl->started++;
	}
}

static void
uv_client_stop(struct uv_client *cl)
{
	if (!uv_is_closing((uv_handle_t *)&cl->poll)) {
		uv_poll_stop(&cl->poll);
		uv_close((uv_handle_t *)&cl->poll, NULL);
	}
}

/* The port's descriptor is readable: complete what is due, then fill the freed slots. */
static void
uv_client_on_ready(uv_poll_t *poll, int status, int events)
{
	struct uv_client *cl = poll->data;
	int n;

	if (status < 0) {
		fprintf(stderr, "uv-client: poll: %s\n", uv_strerror(status));
		cl->broken = 1;
	} else if ((n = idl_port_dispatch(cl->port, 0)) < 0) {
		fprintf(stderr, "uv-client: idl_port_dispatch: %s (%s): %s\n", idl_strerror(n),
			idl_errname(n), idl_errdetail());
		cl->broken = 1;
	} else {
		uv_client_fill(cl);
	}
	if (cl->broken || cl->done == cl->calls)
		uv_client_stop(cl);
}

static void
uv_client_usage(void)
{
	fprintf(stderr, "usage: uv-client [-n CALLS] [-i INFLIGHT] ADDRESS\n");
	exit(2);
}

/* A count option: a decimal number from 1 to max. */
static long
uv_client_count(const char *arg, long max)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*arg == '\0' || *end != '\0' || v < 1 || v > max)
		uv_client_usage();
	return v;
}

int
main(int argc, char **argv)
{
	struct uv_client cl = { .calls = 10000, .inflight = 64 };
	uint64_t t0;
	double secs;
	int opt, fd, err, ok;

	while ((opt = getopt(argc, argv, "n:i:h")) != -1) {
		switch (opt) {
		case 'n':
			cl.calls = uv_client_count(optarg, 1000000000L);
			break;
		case 'i':
			cl.inflight = uv_client_count(optarg, (long)IDL_ASYNC_QUEUE_MAX);
			break;
		default:
			uv_client_usage();
		}
	}
	if (optind != argc - 1)
		uv_client_usage();

	if ((cl.slots = calloc((size_t)cl.inflight, sizeof *cl.slots)) == NULL) {
		perror("uv-client");
		return 1;
	}
	for (long i = 0; i < cl.inflight; i++) {
		cl.slots[i].cl = &cl;
		cl.slots[i].next_free = cl.free;
		cl.free = &cl.slots[i];
	}
	if ((err = uv_loop_init(&cl.loop)) != 0) {
		fprintf(stderr, "uv-client: uv_loop_init: %s\n", uv_strerror(err));
		return 1;
	}
	/* Opened without connecting, so that nothing waits outside the loop: the first call
	 * connects (over tcp: without blocking), and a server that is not there is reported by
	 * the done functions. */
	if ((err = idl_port_open_deferred(argv[optind], &cl.port)) != 0) {
		fprintf(stderr, "uv-client: %s: %s (%s): %s\n", argv[optind], idl_strerror(err),
			idl_errname(err), idl_errdetail());
		return 1;
	}
	if ((fd = idl_port_fd(cl.port)) < 0) {
		fprintf(stderr, "uv-client: idl_port_fd: %s\n", idl_errdetail());
		idl_port_close(cl.port);
		return 1;
	}
	if ((err = uv_poll_init(&cl.loop, &cl.poll, fd)) != 0 ||
	    (err = uv_poll_start(&cl.poll, UV_READABLE, uv_client_on_ready)) != 0) {
		fprintf(stderr, "uv-client: libuv: %s\n", uv_strerror(err));
		idl_port_close(cl.port);
		return 1;
	}
	cl.poll.data = &cl;

	t0 = uv_hrtime();
	/* The first calls connect (bounded by their deadline) and go out at once; the rest
	 * start from the poll callback as replies free their slots. */
	uv_client_fill(&cl);
	if (cl.broken)
		uv_client_stop(&cl);
	uv_run(&cl.loop, UV_RUN_DEFAULT);
	secs = (double)(uv_hrtime() - t0) / 1e9;

	/* Calls still in flight (the client stopped early) complete here, with IDL_ECANCELED. */
	idl_port_close(cl.port);
	uv_loop_close(&cl.loop);
	free(cl.slots);

	ok = !cl.broken && cl.done == cl.calls && cl.wrong == 0 && cl.failed == 0;
	printf("uv-client: %s: %ld of %ld calls, %ld in flight, %.0f calls/s; %ld wrong, %ld "
	       "failed: %s\n",
	       argv[optind], cl.done, cl.calls, cl.inflight,
	       secs > 0 ? (double)cl.done / secs : 0.0, cl.wrong, cl.failed, ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
