/*
 * idlbench_flight.c - the loop of --inflight N, layer 3 (ib_flight.h): one row's calls made
 * through asynchronous stubs, N of them in flight from the client's one thread, each result
 * checked by its done function, and the figure is calls per second (docs/benchmarks.md,
 * "Calls in flight"). What a call is - bench.defs's (idlbench_inflight.c) or the user's
 * (idlbench_uclient.c) - is the start function's.
 *
 * The loop is the one docs/api.md describes, "Calls in flight": start calls while fewer than
 * N are outstanding (a full send queue, IDL_EAGAIN, says to let the port work first), then
 * idl_port_wait() until at least one completes, and again. Each done function starts the
 * next call itself, so that a dispatch's new requests go out in one batch. A call's context
 * is a slot of a table of N; a done function gives its slot back, so completions may come
 * in any order.
 *
 * It knows the base and the cells; it must not know runs or reports.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_async.h>

#include "ib_flight.h"

/* How long one wait for a completion may take before the cell gives up. */
#define IB_WAIT_MS 30000

/* Starts calls while the run has calls to make and slots are free. A full send queue
 * (IDL_EAGAIN) leaves the rest to the next dispatch. */
static void
ib_refill(struct ib_flight *f)
{
	while (f->kr == 0 && f->started < f->total && f->nfree > 0) {
		unsigned k = f->free[--f->nfree];
		int err;

		f->slots[k].i = (int)(f->started & 0xffffffu);
		if ((err = f->start(f, &f->slots[k])) != 0) {
			/* Refused: its done function never runs. */
			f->free[f->nfree++] = k;
			if (err != IDL_EAGAIN) {
				f->kr = err;
				snprintf(f->why, sizeof f->why, "%s", idl_errdetail());
			}
			return;
		}
		f->started++;
	}
}

/* Every done function ends here: the outcome is kept if it is the first failure, and the
 * slot is free again. */
void
ib_flight_finish(struct ib_slot *s, int kr)
{
	struct ib_flight *f = s->f;

	if (kr != 0 && f->kr == 0) {
		f->kr = kr;
		snprintf(f->why, sizeof f->why, "%s", kr == -1 ? "" : idl_errdetail());
	}
	f->free[f->nfree++] = (unsigned)(s - f->slots);
	f->done++;
	/* The next call starts here, inside the dispatch: the requests started by one
	 * dispatch's done functions leave together at its end, in one batch
	 * (docs/runtime.md, "Driving the connection"). */
	ib_refill(f);
}

/* `total` calls, with as many in flight as there are slots. */
static int
ib_flight_run(struct ib_flight *f, unsigned total)
{
	f->started = f->done = 0;
	f->total = total;
	while (f->done < total && f->kr == 0) {
		ib_refill(f);
		if (f->kr == 0 && (f->kr = idl_port_wait(f->port, IB_WAIT_MS)) > 0)
			f->kr = 0;
	}
	return f->kr == 0 ? 0 : -1;
}

int
ib_flight_cell(const struct ib_cell *cell, ib_flight_start_fn *start, void *arg,
	       struct ib_reps *out)
{
	struct ib_flight *f = calloc(1, sizeof *f);
	unsigned n = cell->inflight;
	int err, r = -1;

	if (f == NULL || (f->slots = calloc(n, sizeof *f->slots)) == NULL ||
	    (f->free = calloc(n, sizeof *f->free)) == NULL) {
		snprintf(out->why, sizeof out->why, "out of memory");
		goto out;
	}
	f->start = start;
	f->arg = arg;
	for (unsigned i = 0; i < n; i++) {
		f->slots[i].f = f;
		f->free[f->nfree++] = n - 1 - i;
	}
	if ((err = idl_port_open(cell->addr, &f->port)) != 0) {
		snprintf(out->why, sizeof out->why, "%.60s: %s", cell->addr, idl_errname(err));
		goto out;
	}
	ib_cpu_mark(out);
	if (ib_flight_run(f, cell->warmup) == 0) {
		for (unsigned k = 0; k < cell->reps; k++) {
			double t0 = ib_now(), t1;

			if (ib_flight_run(f, cell->iterations) != 0)
				break;
			t1 = ib_now();
			out->v[out->n++] = cell->iterations / (t1 - t0);
		}
		ib_cpu_mark(out);
	}
	if (f->kr > 0) {
		out->n = 0;
		snprintf(out->why, sizeof out->why, "%s in flight: the server returned %d",
			 cell->row->name, f->kr);
	} else if (f->kr != 0) {
		out->n = 0;
		snprintf(out->why, sizeof out->why, "%s in flight: %s%s%.40s", cell->row->name,
			 f->kr == -1 ? "wrong result" : idl_errname(f->kr), f->why[0] ? ": " : "",
			 f->why);
	} else {
		r = 0;
	}
	/* Calls still in flight after a failure complete here, with IDL_ECANCELED: their done
	 * functions still see f. */
	idl_port_close(f->port);
out:
	if (f != NULL) {
		free(f->slots);
		free(f->free);
	}
	free(f);
	return r;
}
