/*
 * async_client.c - calls in flight from one thread: keeps N calls of bench.add outstanding
 * on one port through the asynchronous stub, waits on the port's descriptor with poll() as
 * any event loop would, checks every result, and prints the calls per second.
 *
 *     async-client ADDRESS [CALLS [INFLIGHT]]     (defaults: 100000 calls, 64 in flight)
 *
 * Against `bench-server ADDRESS` or `idlbench serve ADDRESS`. Written from docs/api.md,
 * "Calls in flight".
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
	long started, done, wrong, failed;
};

/* One call's context: the done function checks the sum against what was asked. */
struct slot {
	struct client *cl;
	int a, b;
};

static void
add_done(void *ctx, kern_return_t kr, int sum)
{
	struct slot *s = ctx;

	if (kr != KERN_SUCCESS) {
		/* idl_errdetail() names the failure inside the done function. */
		if (s->cl->failed++ == 0)
			fprintf(stderr, "async-client: %s: %s\n", idl_errname(kr), idl_errdetail());
	} else if (sum != s->a + s->b) {
		s->cl->wrong++;
	}
	s->cl->done++;
	free(s);
}

int
main(int argc, char **argv)
{
	struct client cl = { 0 };
	long calls = argc > 2 ? atol(argv[2]) : 100000;
	long inflight = argc > 3 ? atol(argv[3]) : 64;
	struct pollfd pfd;
	int64_t t0;
	double secs;
	int err;

	if (argc < 2 || calls <= 0 || inflight <= 0) {
		fprintf(stderr, "usage: async-client ADDRESS [CALLS [INFLIGHT]]\n");
		return 2;
	}
	if ((err = idl_port_open(argv[1], &cl.port)) != 0) {
		fprintf(stderr, "async-client: %s: %s\n", argv[1], idl_errdetail());
		return 1;
	}
	pfd.fd = idl_port_fd(cl.port);
	pfd.events = POLLIN;
	t0 = idl_now_ns();
	while (cl.done < calls) {
		/* Keep INFLIGHT calls outstanding; a full send queue says to dispatch first. */
		while (cl.started < calls && cl.started - cl.done < inflight) {
			struct slot *s = malloc(sizeof *s);

			if (s == NULL)
				break;
			*s = (struct slot){ &cl, (int)(cl.started % 100000), 7 };
			err = bench_add_async(cl.port, s->a, s->b, add_done, s, NULL);
			if (err != 0) {
				free(s); /* refused: the done function never runs */
				if (err == IDL_EAGAIN)
					break;
				fprintf(stderr, "async-client: %s\n", idl_errdetail());
				idl_port_close(cl.port);
				return 1;
			}
			cl.started++;
		}
		if (poll(&pfd, 1, 10000) < 0 || idl_port_dispatch(cl.port, 0) < 0)
			break;
	}
	secs = (double)(idl_now_ns() - t0) / 1e9;
	idl_port_close(cl.port);
	printf("%ld calls, %ld in flight: %.0f calls/s; %ld wrong, %ld failed\n", cl.done, inflight,
	       (double)cl.done / secs, cl.wrong, cl.failed);
	return cl.done == calls && cl.wrong == 0 && cl.failed == 0 ? 0 : 1;
}
