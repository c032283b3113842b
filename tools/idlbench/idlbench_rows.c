/*
 * idlbench_rows.c - the rows of bench.defs, layer 2 (ib_iface.h): each routine as a call of
 * its generated client stub, with the check of what comes back, the data those calls move,
 * and which rows this build's bench.defs has (a row runs when bench_subsystem has its
 * routine; otherwise its cells print n/a). Also the interface under test: the rows in
 * printing order (these, or the user's --call rows) and the user's interface, when --defs
 * gave one.
 *
 * It knows the base and bench.defs's stubs; it must not know columns, cells, floors, runs or
 * reports.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "bench.h"
#include "bench_impl.h"
#include "ib_iface.h"

struct ib_iface *ib_user;

/* The scratch data of the calls that move bytes. */
struct ib_scratch {
	big_t in; /* bench_pattern(BENCH_SALT_IN) */
	big_t inout; /* bench_pattern(BENCH_SALT_INOUT_IN) */
	big_t data;
	void *ool; /* out-of-line rows: the payload */
};

static int
row_null(void *port, unsigned i, void *s)
{
	(void)i;
	(void)s;
	return bench_null(port);
}

static int
row_add(void *port, unsigned i, void *s)
{
	int sum = 0;
	kern_return_t kr = bench_add(port, (int)i, 1, &sum);

	(void)s;
	return kr != 0 ? kr : sum == (int)(i + 1u) ? 0 : -1;
}

static int
row_intrpc(void *port, unsigned i, void *s)
{
	int y = 0, err = -1;
	kern_return_t kr = bench_intrpc(port, (int)i, &y, &err);

	(void)s;
	return kr != 0 ? kr : y == (int)(i + 1u) && err == 0 ? 0 : -1;
}

static int
row_bigin(void *port, unsigned i, void *vs)
{
	struct ib_scratch *s = vs;

	(void)i;
	return bench_bigin(port, s->in);
}

static int
row_bigout(void *port, unsigned i, void *vs)
{
	struct ib_scratch *s = vs;
	kern_return_t kr = bench_bigout(port, s->data);

	(void)i;
	return kr != 0 ? kr : s->data[199] == bench_pattern(199, BENCH_SALT_OUT) ? 0 : -1;
}

static int
row_biginout(void *port, unsigned i, void *vs)
{
	struct ib_scratch *s = vs;
	kern_return_t kr;

	(void)i;
	/* The server checks what it gets and sends other bytes back: send the input again. */
	memcpy(s->data, s->inout, sizeof s->data);
	kr = bench_biginout(port, s->data);
	return kr != 0 ? kr : s->data[0] == bench_pattern(0, BENCH_SALT_INOUT_OUT) ? 0 : -1;
}

/*
 * The out-of-line rows, written against the MIG form `routine ool64k(server : mach_port_t;
 * data : ool_t)` with `type ool_t = array[] of char` (C: char *, with a count). The data is
 * the caller's: it stays ours after the call (no dealloc), as a caller's buffer would.
 */
static int
row_ool64k(void *port, unsigned i, void *vs)
{
	struct ib_scratch *s = vs;

	(void)i;
	return bench_ool64k(port, s->ool, 64u << 10);
}

static int
row_ool1m(void *port, unsigned i, void *vs)
{
	struct ib_scratch *s = vs;

	(void)i;
	return bench_ool1m(port, s->ool, 1u << 20);
}

static struct ib_row ib_bench_rows[] = {
	{ .name = "null", .routine = "null", .metric = IB_LATENCY, .call = row_null },
	{ .name = "add", .routine = "add", .metric = IB_LATENCY, .call = row_add },
	{ .name = "intrpc", .routine = "intrpc", .metric = IB_LATENCY, .call = row_intrpc },
	{ .name = "bigin", .routine = "bigin", .metric = IB_LATENCY, .call = row_bigin },
	{ .name = "bigout", .routine = "bigout", .metric = IB_LATENCY, .call = row_bigout },
	{ .name = "biginout", .routine = "biginout", .metric = IB_LATENCY, .call = row_biginout },
	{ .name = "ool64k",
	  .routine = "ool64k",
	  .metric = IB_BANDWIDTH,
	  .payload = 64u << 10,
	  .iter_div = 8,
	  .call = row_ool64k },
	{ .name = "ool1m",
	  .routine = "ool1m",
	  .metric = IB_BANDWIDTH,
	  .payload = 1u << 20,
	  .iter_div = 64,
	  .call = row_ool1m },
	{ .name = "notify", .routine = "notify", .metric = IB_ONEWAY, .mode = IB_MODE_ONEWAY },
	{ .name = "notifypp", .routine = "notify", .metric = IB_ONEWAY, .mode = IB_MODE_PINGPONG },
	/* tls: only: a full TLS handshake for each call, and one that resumes the session of
	 * the connection before it (docs/benchmarks.md, "Handshakes"). */
	{ .name = "handshake",
	  .routine = "null",
	  .metric = IB_CONNECT,
	  .mode = IB_MODE_CONNECT,
	  .call = row_null },
	{ .name = "resumed",
	  .routine = "null",
	  .metric = IB_CONNECT,
	  .mode = IB_MODE_CONNECT,
	  .resume = 1,
	  .call = row_null },
	/* Floor only, over UDP: the same one-way messages sent unconnected (seed 003). */
	{ .name = "notify-sendto",
	  .routine = "notify",
	  .metric = IB_ONEWAY,
	  .mode = IB_MODE_SENDTO },
};

struct ib_row *ib_rows = ib_bench_rows;
size_t ib_nrows = sizeof ib_bench_rows / sizeof ib_bench_rows[0];

static const struct idl_routine_desc *
ib_routine(const char *name)
{
	for (uint32_t i = 0; i < bench_subsystem.nroutines; i++) {
		const struct idl_routine_desc *rt = &bench_subsystem.routines[i];

		if (rt->name != NULL && strcmp(rt->name, name) == 0)
			return rt;
	}
	return NULL;
}

void
ib_rows_init(void)
{
	int have_sync = ib_routine("intrpc") != NULL;

	for (size_t i = 0; i < ib_nrows; i++) {
		struct ib_row *row = &ib_rows[i];
		const struct idl_routine_desc *rt = ib_routine(row->routine);

		if (row->iter_div == 0)
			row->iter_div = 1;
		row->present = rt != NULL && (row->mode != IB_MODE_CALL || row->call != NULL);
		/* One-way rate needs intrpc to count what arrived. */
		if (row->mode == IB_MODE_ONEWAY || row->mode == IB_MODE_SENDTO)
			row->present = row->present && have_sync;
		if (rt != NULL) {
			row->req = rt->req_max;
			row->rep = rt->rep_max;
		}
	}
}

const struct ib_row *
ib_row_named(const char *name)
{
	for (size_t i = 0; i < ib_nrows; i++)
		if (strcmp(ib_rows[i].name, name) == 0)
			return &ib_rows[i];
	return NULL;
}

void *
ib_scratch_new(const struct ib_row *row)
{
	struct ib_scratch *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	bench_fill(s->in, sizeof s->in, BENCH_SALT_IN);
	bench_fill(s->inout, sizeof s->inout, BENCH_SALT_INOUT_IN);
	if (row->payload != 0) {
		if ((s->ool = malloc(row->payload)) == NULL) {
			free(s);
			return NULL;
		}
		memset(s->ool, 'O', row->payload);
	}
	return s;
}

void
ib_scratch_free(void *scratch)
{
	struct ib_scratch *s = scratch;

	if (s != NULL)
		free(s->ool);
	free(s);
}
