/*
 * idlbench_run.c - the rounds of a run, layer 4 (ib_run.h): its results (row x column x
 * placement), which cells can run, and the loop of rounds.
 *
 * A run is placements x rounds; a round runs every cell once - each column's rows in order,
 * idlkit and floor side by side - so that the ratios compare figures taken under the same
 * conditions (this VM's cross-CPU figures are bimodal). A cell is a forked server and a
 * forked client (idlbench_cell.c) that warm up and then time `reps` repetitions of
 * `iterations` calls; the round's figure is the median of the repetitions, kept with the CPU
 * per call of both processes under the round's number.
 *
 * With the user's routines (--impl), a column's idlkit cells of one round share one server,
 * started before its first row with the --setup calls made on it, and stopped after its last:
 * state made by one call (an account opened) is there for the next row's (a deposit), as it
 * would be in the user's program.
 *
 * It knows the cells (and through them the interface and the floors); it must not know the
 * reports.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>

#include "ib_run.h"

/* Why a cell cannot run (a printed "n/a"), NULL if it can, or "" to leave it out. */
const char *
ib_skip(const struct ib_run *run, const struct ib_row *row, const struct ib_col *col, int side)
{
	if (col->peer && row->u != NULL)
		return ""; /* the peer's programs call bench.defs's routines only */
	if (col->peer && row->metric == IB_THROUGHPUT)
		return ""; /* the peers make one call at a time (a note says so) */
	if (col->prog != NULL)
		return side == 0 && row->present > 0 && row->mode == IB_MODE_CALL &&
				       ib_prog_serves(col->prog, row->name, col->prog->rows)
			       ? NULL
			       : "";
	if (col->peer)
		return side == 0 && (strcmp(row->name, "null") == 0 ||
				     strcmp(row->name, "add") == 0 ||
				     strcmp(row->name, "biginout") == 0)
			       ? NULL
			       : "";
	if (row->mode == IB_MODE_SENDTO)
		return row->present > 0 && strcmp(col->scheme, "udp") == 0 && run->connect == NULL
			       ? NULL
			       : "";
	/* The connection rows time TLS's handshakes: the compiled column of tls: alone. */
	if (row->mode == IB_MODE_CONNECT && (strcmp(col->scheme, "tls") != 0 || col->dynamic))
		return "";
	if (!row->present)
		return row->why[0] != '\0' ? row->why : "not in bench.defs";
	if (side == 1 && col->twin != NULL)
		return ""; /* the compiled column's floor, shared after the run (ib_share_floors) */
	if (col->dgram_max != 0 && (row->req > col->dgram_max || row->rep > col->dgram_max ||
				    row->payload > col->dgram_max))
		return "above the datagram limit";
	if (run->connect != NULL && row->mode == IB_MODE_PINGPONG)
		return "";
	if (side == 1 && col->floor == NULL)
		return run->connect != NULL ? "" : "no floor";
	if (side == 1 && row->metric == IB_BANDWIDTH && !fl_ool_supported(col->floor))
		return "no floor";
	return NULL;
}

static void
ib_progress(struct ib_loop *lp, const struct ib_result *r, unsigned round, const char *kind)
{
	lp->done++;
	if (!lp->progress)
		return;
	fprintf(stderr, "\ridlbench: %s round %u/%u  %-9s %-11s %-6s [%u/%u]\033[K",
		ib_placement_name(r->placement), round + 1, lp->run->rounds, r->row->name,
		r->col->name, kind, lp->done, lp->total);
}

/* The CPUs of a placement's client and server (-1: left to the scheduler). */
static void
ib_cpus(const struct ib_run *run, enum ib_placement p, int *cc, int *cs)
{
	*cc = *cs = -1;
	if (p == IB_SAME)
		*cc = *cs = run->cpu0;
	else if (p == IB_SPLIT)
		*cc = run->cpu0, *cs = run->cpu1;
}

/* The cell of one side of a result in one round: its kind, counts and address. */
static int
ib_cell_of(struct ib_loop *lp, const struct ib_result *r, int side, struct ib_cell *cell)
{
	struct ib_run *run = lp->run;

	memset(cell, 0, sizeof *cell);
	cell->row = r->row;
	cell->col = r->col;
	cell->kind = r->col->prog != NULL ? IB_PROG
		     : r->col->peer	  ? IB_PEER
		     : side == 1	  ? IB_FLOOR
					  : IB_IDL;
	/* notify-sendto: side 0 is the unconnected sendto() floor, side 1 the connected one. */
	if (r->row->mode == IB_MODE_SENDTO) {
		cell->kind = IB_FLOOR;
		if (side == 1)
			cell->row = ib_row_named("notify");
	}
	cell->placement = r->placement;
	cell->inflight = r->row->metric == IB_THROUGHPUT ? run->inflight : 1;
	cell->reps = run->reps;
	cell->iterations = run->iterations / r->row->iter_div;
	if (cell->iterations < 5)
		cell->iterations = 5;
	cell->warmup = cell->iterations / 5 < 20 ? 20 : cell->iterations / 5;
	if (run->connect != NULL) {
		cell->no_server = 1;
		snprintf(cell->addr, sizeof cell->addr, "%s", run->connect);
		return 0;
	}
	if (ib_make_addr(r->col->scheme, lp->dir, lp->addr_n++, cell->addr, sizeof cell->addr) !=
		    0 ||
	    (cell->row->mode == IB_MODE_PINGPONG &&
	     ib_make_addr(r->col->scheme, lp->dir, lp->addr_n++, cell->addr2, sizeof cell->addr2) !=
		     0))
		return -1;
	return 0;
}

/* Runs one side of one result for one round, against the kept server when there is one. */
static void
ib_one(struct ib_loop *lp, struct ib_result *r, int side, unsigned round, struct ib_server *kept)
{
	struct ib_cell cell;
	struct ib_reps reps;
	struct ib_use use;
	int cc, cs;

	if (ib_cell_of(lp, r, side, &cell) != 0) {
		snprintf(r->why, sizeof r->why, "cannot make an address");
		return;
	}
	if (kept != NULL) {
		cell.no_server = 1;
		snprintf(cell.addr, sizeof cell.addr, "%s", kept->addr);
	}
	ib_cpus(lp->run, r->placement, &cc, &cs);
	ib_progress(lp, r, round,
		    cell.kind == IB_FLOOR ? "floor"
		    : r->col->peer	  ? "peer"
					  : "idlkit");
	if (ib_cell_run(&cell, cc, cs, &reps, &use, kept) != 0 || reps.n == 0) {
		/* A failure is printed as n/a with its reason; the first reason stays. */
		if (r->why[0] == '\0')
			snprintf(r->why, sizeof r->why, "%s%.80s", side == 1 ? "floor: " : "",
				 reps.why[0] != '\0' ? reps.why : "failed");
		return;
	}
	r->v[side][round] = ib_median(reps.v, reps.n);
	r->use[side][round] = use;
	r->n[side]++;
}

/* The server a column's idlkit cells share in one round (--impl), with the --setup calls
 * made on it: started for the first cell that needs it. Returns it, or NULL with the
 * reason in why. */
static struct ib_server *
ib_kept(struct ib_loop *lp, const struct ib_result *r, struct ib_server *srv, char *why, size_t len)
{
	struct ib_cell cell;
	struct ib_reps reps;
	int cc, cs;

	if (srv->pid > 0)
		return srv;
	if (why[0] != '\0')
		return NULL; /* it failed once this round */
	ib_cpus(lp->run, r->placement, &cc, &cs);
	if (ib_cell_of(lp, r, 0, &cell) != 0) {
		snprintf(why, len, "cannot make an address");
		return NULL;
	}
	if (ib_server_start(&cell, cs, srv, why, len) != 0)
		return NULL;
	if (ib_user == NULL || ib_user->nsetup == 0)
		return srv;
	cell.kind = IB_SETUP;
	cell.no_server = 1;
	if (ib_cell_run(&cell, cc, cs, &reps, NULL, srv) != 0) {
		snprintf(why, len, "%.90s", reps.why[0] != '\0' ? reps.why : "--setup failed");
		ib_server_stop(srv);
		return NULL;
	}
	return srv;
}

/* One round of one column: its rows in order, idlkit first in even rounds and the floor
 * first in odd ones, so that neither always runs on a machine the other just warmed. */
static void
ib_column_round(struct ib_loop *lp, enum ib_placement p, const struct ib_col *col, unsigned round)
{
	struct ib_run *run = lp->run;
	struct ib_server srv = { -1, "" };
	char why[96] = "";

	for (size_t i = 0; i < run->nresults && !*lp->stop; i++) {
		struct ib_result *r = &run->results[i];

		if (r->placement != p || r->col != col)
			continue;
		for (int k = 0; k < 2; k++) {
			int side = (k + (int)round) % 2;
			struct ib_server *kept = NULL;

			if (ib_skip(run, r->row, r->col, side) != NULL)
				continue;
			if (side == 0 && run->keep && !col->peer &&
			    (kept = ib_kept(lp, r, &srv, why, sizeof why)) == NULL) {
				if (r->why[0] == '\0')
					snprintf(r->why, sizeof r->why, "%s", why);
				continue;
			}
			ib_one(lp, r, side, round, kept);
		}
	}
	ib_server_stop(&srv);
}

void
ib_loop(struct ib_loop *lp)
{
	struct ib_run *run = lp->run;

	for (size_t p = 0; p < run->nplacements && !*lp->stop; p++)
		for (unsigned round = 0; round < run->rounds && !*lp->stop; round++)
			for (size_t c = 0; c < run->ncols && !*lp->stop; c++)
				ib_column_round(lp, run->placements[p], &run->cols[c], round);
	if (lp->progress)
		fprintf(stderr, "\r\033[K");
}

/* A dynamic column's floor is its twin's, taken in the same rounds and placements: copied so
 * that its ratio and its JSON floor read as every column's do. */
void
ib_share_floors(struct ib_run *run)
{
	for (size_t i = 0; i < run->nresults; i++) {
		struct ib_result *r = &run->results[i];
		const struct ib_result *t;

		if (r->col->twin == NULL)
			continue;
		if ((t = ib_find(run, r->placement, r->row, r->col->twin)) != NULL) {
			memcpy(r->v[1], t->v[1], sizeof r->v[1]);
			memcpy(r->use[1], t->use[1], sizeof r->use[1]);
			r->n[1] = t->n[1];
		}
	}
}

int
ib_results(struct ib_run *run)
{
	size_t n = 0;

	run->results = calloc(run->nplacements * ib_nrows * run->ncols, sizeof *run->results);
	if (run->results == NULL)
		return -1;
	for (size_t p = 0; p < run->nplacements; p++)
		for (size_t i = 0; i < ib_nrows; i++)
			for (size_t c = 0; c < run->ncols; c++) {
				struct ib_result *r = &run->results[n];
				const char *why0 = ib_skip(run, &ib_rows[i], &run->cols[c], 0);
				const char *why1 = ib_skip(run, &ib_rows[i], &run->cols[c], 1);

				if (ib_rows[i].present < 0)
					continue; /* filtered out by --routines */
				if (why0 != NULL && why0[0] == '\0')
					continue;
				r->placement = run->placements[p];
				r->row = &ib_rows[i];
				r->col = &run->cols[c];
				r->rounds = run->rounds;
				for (unsigned k = 0; k < IB_MAX_ROUNDS; k++)
					r->v[0][k] = r->v[1][k] = NAN;
				if (why0 != NULL)
					snprintf(r->why, sizeof r->why, "%s", why0);
				else if (why1 != NULL && why1[0] != '\0')
					snprintf(r->why, sizeof r->why, "floor: %s", why1);
				n++;
			}
	run->nresults = n;
	return 0;
}

unsigned
ib_count_cells(const struct ib_run *run)
{
	unsigned n = 0;

	for (size_t i = 0; i < run->nresults; i++)
		for (int side = 0; side < 2; side++)
			if (ib_skip(run, run->results[i].row, run->results[i].col, side) == NULL)
				n++;
	return n * run->rounds;
}
