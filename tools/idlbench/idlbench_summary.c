/*
 * idlbench_summary.c - the answer after the tables: per placement and row, which column was
 * fastest and by how much the others trail it, and what idlkit costs over each floor.
 *
 * It reads the same medians the tables print, so nothing here is measured anew; a column is
 * whatever the run had (a transport, the interpreted server, a peer), so peers added later
 * take part without a change here.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "idlbench.h"

static const struct ib_result *
sm_find(const struct ib_run *run, enum ib_placement p, const struct ib_row *row,
	const struct ib_col *col)
{
	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];

		if (r->placement == p && r->row == row && r->col == col)
			return r;
	}
	return NULL;
}

static double
sm_median(const struct ib_run *run, enum ib_placement p, const struct ib_row *row,
	  const struct ib_col *col, int side)
{
	const struct ib_result *r = sm_find(run, p, row, col);

	return r == NULL ? NAN : ib_stat_of(r, side).median;
}

/* A figure as the tables print it, in the row's unit. */
static void
sm_fmt(char *buf, size_t len, const struct ib_row *row, double v)
{
	if (row->metric == IB_ONEWAY || row->metric == IB_THROUGHPUT)
		v /= 1000;
	if (v < 10)
		snprintf(buf, len, "%.2f", v);
	else if (v < 100)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
}

static const char *const sm_units[] = { "us per call", "thousand messages/s", "MB/s",
					"thousand calls/s" };

/* How many times slower than the best: times grow, rates shrink. */
static double
sm_slower(const struct ib_row *row, double best, double v)
{
	return row->metric == IB_LATENCY ? v / best : best / v;
}

static void
sm_row(FILE *f, const struct ib_run *run, enum ib_placement p, const struct ib_row *row)
{
	const struct ib_col *best = NULL;
	double bv = NAN;
	char num[32];
	int any = 0;

	for (size_t c = 0; c < run->ncols; c++) {
		double v = sm_median(run, p, row, &run->cols[c], 0);

		if (isnan(v) || v <= 0)
			continue;
		if (best == NULL || (row->metric == IB_LATENCY ? v < bv : v > bv)) {
			best = &run->cols[c];
			bv = v;
		}
	}
	if (best == NULL) {
		const struct ib_result *r = NULL;

		for (size_t i = 0; i < run->nresults && r == NULL; i++)
			if (run->results[i].row == row && run->results[i].placement == p)
				r = &run->results[i];
		fprintf(f, "  %-12s not timed%s%s\n", row->name, r != NULL && r->why[0] ? ": " : "",
			r != NULL ? r->why : "");
		return;
	}
	sm_fmt(num, sizeof num, row, bv);
	fprintf(f, "  %-12s fastest over %s: %s %s", row->name, best->name, num,
		sm_units[row->metric]);
	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		double v = sm_median(run, p, row, col, 0);

		if (col == best || isnan(v) || v <= 0)
			continue;
		fprintf(f, "%s %s x%.2f", any++ ? "," : "; then", col->name, sm_slower(row, bv, v));
	}
	fprintf(f, "%s\n", any ? " slower" : "");
	/* The overhead: idlkit against the raw program moving the same bytes. */
	any = 0;
	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		const struct ib_result *r = sm_find(run, p, row, col);
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
		if (row->metric == IB_LATENCY)
			fprintf(f, "%s %s %+.2f us (x%.2f)", any > 1 ? "," : "", col->name,
				fl * (ratio - 1), ratio);
		else
			fprintf(f, "%s %s x%.2f of its rate", any > 1 ? "," : "", col->name, ratio);
	}
	if (any)
		fputc('\n', f);
}

void
ib_report_summary(FILE *f, const struct ib_run *run)
{
	if (run->nresults == 0)
		return;
	fprintf(f, "\nSummary: per row, the fastest column and how many times slower the others "
		   "are, then what idlkit\nadds to each transport's floor (the time the ratio "
		   "stands for, or the share of the floor's rate\nit reaches).\n");
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
