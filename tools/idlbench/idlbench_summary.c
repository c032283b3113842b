/*
 * idlbench_summary.c - the answer after the tables, layer 5 (ib_report.h): per placement and
 * row, which column was fastest and by how much the others trail it, slowest last, and what
 * idlkit costs over each floor, with a word where that figure is not what it seems (below
 * the floor, far above it, its rounds spread); and where both ran, what TLS itself costs:
 * idlkit's tls: against its tcp:, which moves the same frames without it.
 *
 * It reads the same medians the tables print, so nothing here is measured anew; a column is
 * whatever the run had (a transport, the interpreted server, a peer), so peers added later
 * take part without a change here.
 *
 * Layer 5, the reports: it must not be used by the layers below it.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_report.h"

static const char *const sm_units[] = { "us per call", "thousand messages/s", "MB/s",
					"thousand calls/s", "connections/s" };

/* A column and how many times slower than the best it is. */
struct sm_entry {
	const struct ib_col *col;
	double v, slower;
};

static int
sm_cmp(const void *a, const void *b)
{
	const struct sm_entry *x = a, *y = b;

	return (x->slower > y->slower) - (x->slower < y->slower);
}

/* The columns with a figure for the row, fastest first. */
static size_t
sm_sorted(const struct ib_run *run, enum ib_placement p, const struct ib_row *row,
	  struct sm_entry *e)
{
	size_t n = 0;

	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_result *r = ib_find(run, p, row, &run->cols[c]);
		double v = r == NULL ? NAN : ib_stat_of(r, 0).median;

		if (isnan(v) || v <= 0)
			continue;
		e[n].col = &run->cols[c];
		e[n++].v = v;
	}
	for (size_t i = 0; i < n; i++) {
		double best = e[0].v;

		for (size_t k = 1; k < n; k++)
			if (row->metric == IB_LATENCY ? e[k].v < best : e[k].v > best)
				best = e[k].v;
		e[i].slower = row->metric == IB_LATENCY ? e[i].v / best : best / e[i].v;
	}
	qsort(e, n, sizeof e[0], sm_cmp);
	return n;
}

/* What the flags of a cell say of its overhead, in a few words, after `sep`. */
static void
sm_note(FILE *f, const struct ib_result *r, const char *sep)
{
	struct vd_cell cell;
	struct vd_flag flags[4];
	unsigned n;

	ib_series(r, 0, &cell.fig);
	ib_series(r, 1, &cell.floor);
	cell.cpu = NAN;
	n = vd_cell_flags(&cell, r->row->metric != IB_LATENCY, 0, 0, flags, 4);
	for (unsigned i = 0; i < n; i++, sep = "; ") {
		if (flags[i].kind == VD_FLAG_SPREAD)
			fprintf(f, "%s%srounds spread x%.1f", sep,
				flags[i].floor ? "its floor's " : "", flags[i].value);
		else if (flags[i].kind == VD_FLAG_BELOW_NOISE)
			fprintf(f, "%sfaster than the floor, within its spread: noise", sep);
		else if (flags[i].kind == VD_FLAG_BELOW)
			fprintf(f, "%sfaster than the floor, beyond its spread", sep);
		else if (flags[i].kind == VD_FLAG_FAR)
			fprintf(f, "%sover 3x slower than the floor", sep);
	}
	if (n > 0 || strcmp(sep, "; ") == 0)
		fputc(')', f);
}

/* The overhead: idlkit against the raw program moving the same bytes. */
static void
sm_overhead(FILE *f, const struct ib_run *run, enum ib_placement p, const struct ib_row *row)
{
	int any = 0;

	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		const struct ib_result *r = ib_find(run, p, row, col);
		double fl, ratio;

		if (r == NULL || col->peer)
			continue;
		fl = ib_stat_of(r, 1).median;
		ratio = ib_ratio_of(r);
		if (isnan(fl) || isnan(ratio))
			continue;
		if (any++ == 0)
			fprintf(f, "  %-12s idlkit over the floor:", "");
		/* The time the ratio stands for, so that the two never disagree in sign:
		 * the ratio is the median of the rounds' ratios, not of their medians. */
		if (row->metric == IB_LATENCY) {
			fprintf(f, "%s %s %+.2f us (x%.2f", any > 1 ? "," : "", col->name,
				fl * (ratio - 1), ratio);
			sm_note(f, r, "; ");
		} else {
			fprintf(f, "%s %s x%.2f of its rate", any > 1 ? "," : "", col->name, ratio);
			sm_note(f, r, " (");
		}
	}
	if (any)
		fputc('\n', f);
}

/* The compiled column of a scheme (no peer, not the interpreted server), or NULL. */
static const struct ib_col *
sm_col(const struct ib_run *run, const char *scheme)
{
	for (size_t c = 0; c < run->ncols; c++)
		if (!run->cols[c].peer && !run->cols[c].dynamic &&
		    strcmp(run->cols[c].name, scheme) == 0)
			return &run->cols[c];
	return NULL;
}

/* TLS itself: tls: over tcp:, the same frames without TLS, on the same row. */
static void
sm_tls_cost(FILE *f, const struct ib_run *run, enum ib_placement p, const struct ib_row *row)
{
	const struct ib_col *tls = sm_col(run, "tls"), *tcp = sm_col(run, "tcp");
	const struct ib_result *a = tls != NULL ? ib_find(run, p, row, tls) : NULL;
	const struct ib_result *b = tcp != NULL ? ib_find(run, p, row, tcp) : NULL;
	double x = a != NULL ? ib_stat_of(a, 0).median : NAN;
	double y = b != NULL ? ib_stat_of(b, 0).median : NAN;

	if (isnan(x) || isnan(y) || x <= 0 || y <= 0)
		return;
	if (row->metric == IB_LATENCY)
		fprintf(f, "  %-12s TLS itself: tls x%.2f tcp's time (%+.2f us)\n", "", x / y,
			x - y);
	else
		fprintf(f, "  %-12s TLS itself: tls x%.2f of tcp's rate\n", "", x / y);
}

static void
sm_row(FILE *f, const struct ib_run *run, enum ib_placement p, const struct ib_row *row)
{
	struct sm_entry e[IB_MAX_COLS];
	size_t n = sm_sorted(run, p, row, e);
	char num[32];

	if (n == 0) {
		const struct ib_result *r = NULL;

		for (size_t i = 0; i < run->nresults && r == NULL; i++)
			if (run->results[i].row == row && run->results[i].placement == p)
				r = &run->results[i];
		fprintf(f, "  %-12s not timed%s%s\n", row->name, r != NULL && r->why[0] ? ": " : "",
			r != NULL ? r->why : "");
		return;
	}
	ib_fmt(num, sizeof num, ib_scale(row->metric, e[0].v));
	fprintf(f, "  %-12s fastest over %s: %s %s", row->name, e[0].col->name, num,
		sm_units[row->metric]);
	for (size_t i = 1; i < n; i++)
		fprintf(f, "%s %s x%.2f", i > 1 ? "," : "; then", e[i].col->name, e[i].slower);
	fprintf(f, "%s\n", n > 1 ? " slower" : "");
	sm_overhead(f, run, p, row);
	sm_tls_cost(f, run, p, row);
}

void
ib_report_summary(FILE *f, const struct ib_run *run)
{
	if (run->nresults == 0)
		return;
	fprintf(f, "\nSummary: per row, the fastest column and how many times slower the others "
		   "are, slowest last,\nthen what idlkit adds to each transport's floor (the time "
		   "the ratio stands for, or the share\nof the floor's rate it reaches).\n");
	for (size_t p = 0; p < run->nplacements; p++) {
		enum ib_placement pl = run->placements[p];

		fprintf(f, "placement %s\n", ib_placement_name(pl));
		for (size_t i = 0; i < ib_nrows; i++) {
			const struct ib_row *row = &ib_rows[i];
			int in_run = 0;

			for (size_t k = 0; k < run->nresults && !in_run; k++)
				in_run = run->results[k].row == row &&
					 run->results[k].placement == pl;
			if (in_run && row->mode != IB_MODE_SENDTO)
				sm_row(f, run, pl, row);
		}
	}
}
