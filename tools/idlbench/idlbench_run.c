/*
 * idlbench_run.c - a run: its results (row x column x placement), the probe that calls each
 * row once before the run (the sizes of the messages that went, for the floors, and whether
 * the server serves the interface at all), and the rounds of cells.
 *
 * A run is placements x rounds; a round runs every cell once - each row over each column,
 * idlkit and floor side by side - so that the ratios compare figures taken under the same
 * conditions (this VM's cross-CPU figures are bimodal). A cell is a forked server and a
 * forked client (idlbench_cell.c) that warm up and then time `reps` repetitions of
 * `iterations` calls; the round's figure is the median of the repetitions.
 */
#include <config.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <idl/idl.h>

#include "idlbench.h"

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

static int
ib_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
ib_median(double *v, unsigned n)
{
	qsort(v, n, sizeof v[0], ib_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const struct ib_row *
ib_row_named(const char *name)
{
	for (size_t i = 0; i < ib_nrows; i++)
		if (strcmp(ib_rows[i].name, name) == 0)
			return &ib_rows[i];
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

/* Runs one side of one result for one round. */
static void
ib_one(struct ib_loop *lp, struct ib_result *r, int side, unsigned round)
{
	struct ib_run *run = lp->run;
	struct ib_cell cell;
	struct ib_reps reps;
	int cc = -1, cs = -1;

	memset(&cell, 0, sizeof cell);
	cell.row = r->row;
	cell.col = r->col;
	cell.kind = r->col->prog != NULL ? IB_PROG
		    : r->col->peer	 ? IB_PEER
		    : side == 1		 ? IB_FLOOR
					 : IB_IDL;
	/* notify-sendto: side 0 is the unconnected sendto() floor, side 1 the connected one. */
	if (r->row->mode == IB_MODE_SENDTO) {
		cell.kind = IB_FLOOR;
		if (side == 1)
			cell.row = ib_row_named("notify");
	}
	cell.placement = r->placement;
	cell.inflight = r->row->metric == IB_THROUGHPUT ? run->inflight : 1;
	cell.reps = run->reps;
	cell.iterations = run->iterations / r->row->iter_div;
	if (cell.iterations < 5)
		cell.iterations = 5;
	cell.warmup = cell.iterations / 5 < 20 ? 20 : cell.iterations / 5;
	if (r->placement == IB_SAME)
		cc = cs = run->cpu0;
	else if (r->placement == IB_SPLIT)
		cc = run->cpu0, cs = run->cpu1;
	if (run->connect != NULL) {
		cell.no_server = 1;
		snprintf(cell.addr, sizeof cell.addr, "%s", run->connect);
	} else if (ib_make_addr(r->col->scheme, lp->dir, lp->addr_n++, cell.addr,
				sizeof cell.addr) != 0 ||
		   (cell.row->mode == IB_MODE_PINGPONG &&
		    ib_make_addr(r->col->scheme, lp->dir, lp->addr_n++, cell.addr2,
				 sizeof cell.addr2) != 0)) {
		snprintf(r->why, sizeof r->why, "cannot make an address");
		return;
	}
	ib_progress(lp, r, round,
		    cell.kind == IB_FLOOR ? "floor"
		    : r->col->peer	  ? "peer"
					  : "idlkit");
	if (ib_cell_run(&cell, cc, cs, &reps) != 0 || reps.n == 0) {
		/* A failure is printed as n/a with its reason; the first reason stays. */
		if (r->why[0] == '\0')
			snprintf(r->why, sizeof r->why, "%s%.80s", side == 1 ? "floor: " : "",
				 reps.why[0] != '\0' ? reps.why : "failed");
		return;
	}
	r->v[side][r->n[side]++] = ib_median(reps.v, reps.n);
}

void
ib_loop(struct ib_loop *lp)
{
	struct ib_run *run = lp->run;

	for (size_t p = 0; p < run->nplacements && !*lp->stop; p++) {
		for (unsigned round = 0; round < run->rounds && !*lp->stop; round++) {
			for (size_t i = 0; i < run->nresults && !*lp->stop; i++) {
				struct ib_result *r = &run->results[i];

				if (r->placement != run->placements[p])
					continue;
				/* idlkit first in even rounds, the floor first in odd ones, so that
				 * neither always runs on a machine the other just warmed. */
				for (int k = 0; k < 2; k++) {
					int side = (k + (int)round) % 2;
					const char *why = ib_skip(run, r->row, r->col, side);

					if (why == NULL)
						ib_one(lp, r, side, round);
				}
			}
		}
	}
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

		if (r->col->twin == NULL)
			continue;
		for (size_t k = 0; k < run->nresults; k++) {
			const struct ib_result *t = &run->results[k];

			if (t->col == r->col->twin && t->row == r->row &&
			    t->placement == r->placement) {
				memcpy(r->v[1], t->v[1], sizeof r->v[1]);
				r->n[1] = t->n[1];
				break;
			}
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

void
ib_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

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

int
ib_probe(struct ib_loop *lp, const char *what)
{
	struct ib_run *run = lp->run;
	struct ib_cell cell;
	struct ib_reps reps;
	struct ib_col col;
	const char *where;

	memset(&cell, 0, sizeof cell);
	memset(&col, 0, sizeof col);
	snprintf(col.name, sizeof col.name, "probe");
	col.scheme = "unix";
	for (size_t c = 0; c < run->ncols; c++)
		if (!run->cols[c].peer) {
			col.scheme = run->cols[c].scheme;
			col.dynamic = run->cols[c].dynamic;
			break;
		}
	cell.row = &ib_rows[0];
	cell.col = &col;
	cell.kind = IB_PROBE;
	cell.placement = IB_FREE;
	cell.reps = cell.iterations = 1;
	if (run->connect != NULL) {
		cell.no_server = 1;
		snprintf(cell.addr, sizeof cell.addr, "%s", run->connect);
	} else if (ib_make_addr(col.scheme, lp->dir, lp->addr_n++, cell.addr, sizeof cell.addr) !=
		   0) {
		fprintf(stderr, "idlbench: cannot make an address for %s\n", col.scheme);
		return -1;
	}
	where = run->connect != NULL ? run->connect : "its server";
	if (ib_cell_run(&cell, -1, -1, &reps) != 0 && reps.n == 0) {
		fprintf(stderr, "idlbench: cannot call %s: %s\n", where,
			reps.why[0] != '\0' ? reps.why : "the probe failed");
		return -1;
	}
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
	if (ib_user->have_sync) {
		size_t k = ib_user->ncalls;
		int kr = 3 * k + 2 < reps.n ? (int)reps.v[3 * k + 2] : IDL_EINVAL;

		if (kr >= 0 || kr == MIG_BAD_ARGUMENTS) {
			for (size_t i = 0; i < ib_nrows; i++)
				ib_rows[i].srep = (uint32_t)reps.v[3 * k + 1];
		} else {
			ib_user->have_sync = 0;
			snprintf(run->notes[run->nnotes < 7 ? run->nnotes++ : 7],
				 sizeof run->notes[0],
				 "one-way rows: the round trip after them (%.40s) failed: %.40s; "
				 "their "
				 "rate is what the client sent",
				 ib_user->sync.name, idl_errname(kr));
		}
	}
	return 0;
}
