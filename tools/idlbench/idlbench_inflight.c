/*
 * idlbench_inflight.c - bench.defs's rows with --inflight N, layer 3: each latency row's
 * call through its asynchronous stub (bench_add_async() ...), its done function checking the
 * result as the synchronous rows check theirs (idlbench_rows.c); the loop that keeps N of
 * them in flight is idlbench_flight.c's (docs/benchmarks.md, "Calls in flight").
 *
 * It knows the base, the rows and the cells; it must not know the user's interface, runs or
 * reports.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_async.h>

#include "bench_types.h"
#include "bench.h"
#include "bench_impl.h"
#include "ib_flight.h"

/* bigin's and biginout's arguments, as the synchronous rows send them. */
struct ib_big {
	big_t in, inout;
};

static void
ib_done_null(void *ctx, kern_return_t kr)
{
	ib_flight_finish(ctx, kr);
}

static void
ib_done_add(void *ctx, kern_return_t kr, int sum)
{
	struct ib_slot *s = ctx;

	ib_flight_finish(s, kr != 0 ? kr : sum == (int)((unsigned)s->i + 1u) ? 0 : -1);
}

static void
ib_done_intrpc(void *ctx, kern_return_t kr, int y, int err)
{
	struct ib_slot *s = ctx;

	ib_flight_finish(s, kr != 0 ? kr : y == (int)((unsigned)s->i + 1u) && err == 0 ? 0 : -1);
}

/* The big rows check the bytes the synchronous rows check: bigout's last, biginout's first. */
static void
ib_done_bigout(void *ctx, kern_return_t kr, const char *data)
{
	ib_flight_finish(ctx, kr != 0						? kr
			      : data[199] == bench_pattern(199, BENCH_SALT_OUT) ? 0
										: -1);
}

static void
ib_done_biginout(void *ctx, kern_return_t kr, const char *data)
{
	ib_flight_finish(ctx, kr != 0						  ? kr
			      : data[0] == bench_pattern(0, BENCH_SALT_INOUT_OUT) ? 0
										  : -1);
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

/* Inline arguments are copied before _async returns: the arguments stay what they were. */
static int
ib_start_bigin(struct ib_flight *f, struct ib_slot *s)
{
	return bench_bigin_async(f->port, ((struct ib_big *)f->arg)->in, ib_done_null, s, NULL);
}

static int
ib_start_bigout(struct ib_flight *f, struct ib_slot *s)
{
	return bench_bigout_async(f->port, ib_done_bigout, s, NULL);
}

static int
ib_start_biginout(struct ib_flight *f, struct ib_slot *s)
{
	return bench_biginout_async(f->port, ((struct ib_big *)f->arg)->inout, ib_done_biginout, s,
				    NULL);
}

static const struct {
	const char *row;
	ib_flight_start_fn *start;
} ib_starts[] = {
	{ "null", ib_start_null },     { "add", ib_start_add },
	{ "intrpc", ib_start_intrpc }, { "bigin", ib_start_bigin },
	{ "bigout", ib_start_bigout }, { "biginout", ib_start_biginout },
};

static ib_flight_start_fn *
ib_start_of(const struct ib_row *row)
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

int
ib_inflight_client(const struct ib_cell *cell, struct ib_reps *out)
{
	ib_flight_start_fn *start = ib_start_of(cell->row);
	struct ib_big big;

	if (start == NULL) {
		snprintf(out->why, sizeof out->why, "no asynchronous call for this row");
		return -1;
	}
	bench_fill(big.in, sizeof big.in, BENCH_SALT_IN);
	bench_fill(big.inout, sizeof big.inout, BENCH_SALT_INOUT_IN);
	return ib_flight_cell(cell, start, &big, out);
}
