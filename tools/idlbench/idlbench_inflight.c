/*
 * idlbench_inflight.c - the idlkit side of --inflight N: a latency row's calls made through
 * the asynchronous stubs (bench_add_async() ...), N of them in flight from the client's one
 * thread, each result checked in its done function as the synchronous rows check theirs
 * (idlbench_idl.c), and the figure is calls per second (docs/benchmarks.md, "Calls in
 * flight").
 *
 * The loop is the one docs/api.md describes, "Calls in flight": start calls while fewer than
 * N are outstanding (a full send queue, IDL_EAGAIN, says to let the port work first), then
 * idl_port_wait() until at least one completes, and again. Each done function starts the
 * next call itself, so that a dispatch's new requests go out in one batch. A call's context
 * is a slot of a table of N; a done function gives its slot back, so completions may come
 * in any order.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_async.h>

#include "bench_types.h"
#include "bench.h"
#include "bench_impl.h"
#include "idlbench.h"

/* How long one wait for a completion may take before the cell gives up. */
#define IB_WAIT_MS 30000

struct ib_flight;

/* One call in flight: what its done function needs to check the reply. */
struct ib_slot {
	struct ib_flight *f;
	int i; /* the call's number: add's and intrpc's argument */
};

struct ib_flight {
	idl_port_t port;
	int (*start)(struct ib_flight *f, struct ib_slot *s);
	struct ib_slot *slots; /* N */
	unsigned *free; /* the slots not in flight: a stack of nfree */
	unsigned nfree;
	unsigned started, total; /* calls started in this run, and its calls */
	unsigned done; /* calls completed in this run */
	int kr; /* the first failure: an error, or -1 for a wrong result */
	char why[64]; /* idl_errdetail() of that failure */
	big_t in, inout; /* bigin's and biginout's arguments, as the synchronous rows send */
};

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
static void
ib_finish(struct ib_slot *s, int kr)
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

static void
ib_done_null(void *ctx, kern_return_t kr)
{
	ib_finish(ctx, kr);
}

static void
ib_done_add(void *ctx, kern_return_t kr, int sum)
{
	struct ib_slot *s = ctx;

	ib_finish(s, kr != 0 ? kr : sum == (int)((unsigned)s->i + 1u) ? 0 : -1);
}

static void
ib_done_intrpc(void *ctx, kern_return_t kr, int y, int err)
{
	struct ib_slot *s = ctx;

	ib_finish(s, kr != 0 ? kr : y == (int)((unsigned)s->i + 1u) && err == 0 ? 0 : -1);
}

/* The big rows check the bytes the synchronous rows check: bigout's last, biginout's first. */
static void
ib_done_bigout(void *ctx, kern_return_t kr, const char *data)
{
	ib_finish(ctx, kr != 0 ? kr : data[199] == bench_pattern(199, BENCH_SALT_OUT) ? 0 : -1);
}

static void
ib_done_biginout(void *ctx, kern_return_t kr, const char *data)
{
	ib_finish(ctx, kr != 0 ? kr : data[0] == bench_pattern(0, BENCH_SALT_INOUT_OUT) ? 0 : -1);
}

static int
ib_start_null(struct ib_flight *f, struct ib_slot *s)
{
	return bench_null_async(f->port, ib_done_null, s, NULL);
}

static int
ib_start_add(struct ib_flight *f, struct ib_slot *s)
{
	return bench_add_async(f->port, s->i, 1, ib_done_add, s, NULL);
}

static int
ib_start_intrpc(struct ib_flight *f, struct ib_slot *s)
{
	return bench_intrpc_async(f->port, s->i, ib_done_intrpc, s, NULL);
}

/* Inline arguments are copied before _async returns: f->inout stays what it was. */
static int
ib_start_bigin(struct ib_flight *f, struct ib_slot *s)
{
	return bench_bigin_async(f->port, f->in, ib_done_null, s, NULL);
}

static int
ib_start_bigout(struct ib_flight *f, struct ib_slot *s)
{
	return bench_bigout_async(f->port, ib_done_bigout, s, NULL);
}

static int
ib_start_biginout(struct ib_flight *f, struct ib_slot *s)
{
	return bench_biginout_async(f->port, f->inout, ib_done_biginout, s, NULL);
}

static const struct {
	const char *row;
	int (*start)(struct ib_flight *f, struct ib_slot *s);
} ib_starts[] = {
	{ "null", ib_start_null },     { "add", ib_start_add },
	{ "intrpc", ib_start_intrpc }, { "bigin", ib_start_bigin },
	{ "bigout", ib_start_bigout }, { "biginout", ib_start_biginout },
};

static int (*ib_start_of(const struct ib_row *row))(struct ib_flight *, struct ib_slot *)
{
	for (size_t i = 0; row->u == NULL && i < sizeof ib_starts / sizeof ib_starts[0]; i++)
		if (strcmp(ib_starts[i].row, row->name) == 0)
			return ib_starts[i].start;
	return NULL;
}

int
ib_inflight_row(const struct ib_row *row)
{
	return ib_start_of(row) != NULL;
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
ib_inflight_client(const struct ib_cell *cell, struct ib_reps *out)
{
	struct ib_flight *f = calloc(1, sizeof *f);
	unsigned n = cell->inflight;
	int err, r = -1;

	if (f == NULL || (f->slots = calloc(n, sizeof *f->slots)) == NULL ||
	    (f->free = calloc(n, sizeof *f->free)) == NULL) {
		snprintf(out->why, sizeof out->why, "out of memory");
		goto out;
	}
	if ((f->start = ib_start_of(cell->row)) == NULL) {
		snprintf(out->why, sizeof out->why, "no asynchronous call for this row");
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		f->slots[i].f = f;
		f->free[f->nfree++] = n - 1 - i;
	}
	bench_fill(f->in, sizeof f->in, BENCH_SALT_IN);
	bench_fill(f->inout, sizeof f->inout, BENCH_SALT_INOUT_IN);
	if ((err = idl_port_open(cell->addr, &f->port)) != 0) {
		snprintf(out->why, sizeof out->why, "%.60s: %s", cell->addr, idl_errname(err));
		goto out;
	}
	if (ib_flight_run(f, cell->warmup) == 0) {
		for (unsigned k = 0; k < cell->reps; k++) {
			double t0 = ib_now(), t1;

			if (ib_flight_run(f, cell->iterations) != 0)
				break;
			t1 = ib_now();
			out->v[out->n++] = cell->iterations / (t1 - t0);
		}
	}
	if (f->kr != 0) {
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
