/*
 * idlbench_probe.c - the probe, layer 4 (ib_run.h): before the run, each row called once
 * against the server the run times (a fresh one, or --connect's), after the --setup calls
 * that make the state the rows need. The sizes of the messages that went are what the
 * floors move; a row whose call fails is marked and not timed; a server that does not serve
 * the interface at all, or refuses a setup call, ends the run with the reason.
 *
 * It knows the cells and the run; it must not know the reports.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <idl/idl.h>

#include "ib_run.h"

/* Why a probed call failed, in the words of a cell's n/a. */
static void
ib_probe_why(char *buf, size_t len, int kr)
{
	if (kr > 0)
		snprintf(buf, len, "its call failed: the server returned %d", kr);
	else
		snprintf(buf, len, "its call failed: %s (%s)", idl_strerror(kr), idl_errname(kr));
}

/* The server does not serve the routine as the interface declares it. */
static int
ib_foreign(int kr)
{
	return kr == MIG_BAD_ID || kr == IDL_ESIGNATURE;
}

/* The probe's cell: one call of each row against the run's server (a fresh one, or
 * --connect's), its server's transport the first of idlkit's columns. Returns -1 printed. */
static int
ib_probe_run(struct ib_loop *lp, struct ib_col *col, struct ib_reps *reps, const char **where)
{
	struct ib_run *run = lp->run;
	struct ib_cell cell;

	memset(&cell, 0, sizeof cell);
	memset(col, 0, sizeof *col);
	snprintf(col->name, sizeof col->name, "probe");
	col->scheme = "unix";
	for (size_t c = 0; c < run->ncols; c++)
		if (!run->cols[c].peer) {
			col->scheme = run->cols[c].scheme;
			col->dynamic = run->cols[c].dynamic;
			break;
		}
	cell.row = &ib_rows[0];
	cell.col = col;
	cell.kind = IB_PROBE;
	cell.placement = IB_FREE;
	cell.reps = cell.iterations = 1;
	if (run->connect != NULL) {
		cell.no_server = 1;
		snprintf(cell.addr, sizeof cell.addr, "%s", run->connect);
	} else if (ib_make_addr(col->scheme, lp->dir, lp->addr_n++, cell.addr, sizeof cell.addr) !=
		   0) {
		fprintf(stderr, "idlbench: cannot make an address for %s\n", col->scheme);
		return -1;
	}
	*where = run->connect != NULL ? run->connect : "its server";
	if (ib_cell_run(&cell, -1, -1, reps, NULL, NULL) != 0 && reps->n == 0) {
		/* A why that names the address already (a failed open) leads the line. */
		if (strncmp(reps->why, "--setup ", 8) == 0 ||
		    strncmp(reps->why, *where, strlen(*where)) == 0)
			fprintf(stderr, "idlbench: %s\n", reps->why);
		else
			fprintf(stderr, "idlbench: cannot call %s: %s\n", *where,
				reps->why[0] != '\0' ? reps->why : "the probe failed");
		return -1;
	}
	return 0;
}

/* The user's sync round trip, probed last: its reply's size, or a note when it failed. */
static void
ib_probe_sync(struct ib_run *run, const struct ib_reps *reps)
{
	size_t k = ib_user->ncalls;
	int kr = 3 * k + 2 < reps->n ? (int)reps->v[3 * k + 2] : IDL_EINVAL;

	if (kr >= 0 || kr == MIG_BAD_ARGUMENTS) {
		for (size_t i = 0; i < ib_nrows; i++)
			ib_rows[i].srep = (uint32_t)reps->v[3 * k + 1];
		return;
	}
	ib_user->have_sync = 0;
	snprintf(run->notes[run->nnotes < 7 ? run->nnotes++ : 7], sizeof run->notes[0],
		 "one-way rows: the round trip after them (%.40s) failed: %.40s; their rate is "
		 "what the client sent",
		 ib_user->sync.name, idl_errname(kr));
}

int
ib_probe(struct ib_loop *lp, const char *what)
{
	struct ib_run *run = lp->run;
	struct ib_reps reps;
	struct ib_col col;
	const char *where;

	if (ib_probe_run(lp, &col, &reps, &where) != 0)
		return -1;
	if (ib_user == NULL) {
		int kr = reps.n >= 3 ? (int)reps.v[2] : IDL_EINVAL;

		if (kr == 0)
			return 0;
		fprintf(stderr, "idlbench: %s does not serve %s: null: %s (%s)%s%s\n", where, what,
			idl_strerror(kr), idl_errname(kr), reps.why[0] != '\0' ? ": " : "",
			reps.why);
		return -1;
	}
	for (size_t k = 0; k < ib_nrows && 3 * k + 2 < reps.n; k++) {
		struct ib_row *row = &ib_rows[k];
		int kr = (int)reps.v[3 * k + 2];
		uint32_t bytes;

		if (ib_foreign(kr)) {
			fprintf(stderr,
				"idlbench: %s does not serve %s as %s declares it: routine %s: %s "
				"(%s)%s%s\n",
				where, ib_user->ss->name, ib_user->path, row->routine,
				idl_strerror(kr), idl_errname(kr), reps.why[0] != '\0' ? ": " : "",
				reps.why);
			return -1;
		}
		if (kr != 0) {
			ib_probe_why(row->why, sizeof row->why, kr);
			row->present = 0;
			run->failed++;
			continue;
		}
		row->req = (uint32_t)reps.v[3 * k];
		row->rep = row->mode == IB_MODE_CALL ? (uint32_t)reps.v[3 * k + 1] : 0;
		/* Large messages take longer: fewer calls, as bench.defs's big rows have. */
		bytes = row->req + row->rep;
		row->iter_div = bytes > (16u << 10) ? (bytes >> 14) < 64 ? bytes >> 14 : 64 : 1;
	}
	if (ib_user->have_sync)
		ib_probe_sync(run, &reps);
	return 0;
}
