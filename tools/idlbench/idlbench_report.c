/*
 * idlbench_report.c - the tables, layer 5 (ib_report.h): seed 004's tables on stdout, one per
 * metric and placement: transports down, routines across, and under each transport its
 * figure's range over the rounds, the CPU per call of its client and server, the floor (with
 * its range and CPU) and the ratio; a peer's speedup, a dynamic column's cost. Then the
 * marshaling row and the notes. The verdict before them is idlbench_judge.c's, the legend
 * idlbench_legend.c's.
 *
 * It reads the run's results (ib_run.h) and measures nothing; it must not be used by the
 * layers below it.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ib_report.h"

/* The lines under a column, in the order they print. */
enum rp_what {
	RP_FIG, /* idlkit's median (the column's name) */
	RP_RANGE, /* its lowest-highest round */
	RP_PERCALL, /* calls in flight: 1 / rate */
	RP_CPU, /* client+server CPU per call */
	RP_FLOOR,
	RP_FRANGE,
	RP_FPERCALL,
	RP_FCPU,
	RP_RATIO,
	RP_COST,
	RP_PEER, /* a peer's median (its name and library) */
	RP_SPEEDUP,
};

static const char *const rp_side[] = {
	[RP_FIG] = "idlkit",	   [RP_RANGE] = "",	 [RP_PERCALL] = "us/call",
	[RP_CPU] = "cpu us",	   [RP_FLOOR] = "floor", [RP_FRANGE] = "",
	[RP_FPERCALL] = "us/call", [RP_FCPU] = "cpu us", [RP_RATIO] = "ratio",
	[RP_COST] = "cost",	   [RP_PEER] = "oncrpc", [RP_SPEEDUP] = "speedup",
};

const char *const ib_titles[5] = {
	"*Local* communication latencies in microseconds - smaller is better",
	"*Local* one-way messages in thousands per second - bigger is better",
	"*Local* communication bandwidths in MB/s - bigger is better",
	"*Local* calls in flight, thousands of calls per second - bigger is better",
	"*Local* connections per second, each a TLS handshake and one null call - bigger is "
	"better",
};

double
ib_scale(enum ib_metric m, double v)
{
	return m == IB_ONEWAY || m == IB_THROUGHPUT ? v / 1000.0 : v;
}

void
ib_fmt(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (v < 10)
		snprintf(buf, len, "%.2f", v);
	else if (v < 100)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
}

void
ib_fmt_cpu(char *buf, size_t len, const struct ib_use *u)
{
	char c[16], s[16];

	if (isnan(u->client)) {
		snprintf(buf, len, "n/a");
		return;
	}
	ib_fmt(c, sizeof c, u->client);
	ib_fmt(s, sizeof s, u->server);
	if (isnan(u->server))
		snprintf(buf, len, "%s", c);
	else
		snprintf(buf, len, "%s+%s", c, s);
}

static void
rp_range(char *buf, size_t len, const struct ib_stat *s, enum ib_metric m)
{
	char lo[16], hi[16];

	if (s->n < 2) {
		buf[0] = '\0';
		return;
	}
	ib_fmt(lo, sizeof lo, ib_scale(m, s->min));
	ib_fmt(hi, sizeof hi, ib_scale(m, s->max));
	snprintf(buf, len, "%s-%s", lo, hi);
}

const char *
ib_report_where(const struct ib_run *run, enum ib_placement p, char *buf, size_t len)
{
	if (p == IB_SAME)
		snprintf(buf, len, "same: client and server on CPU %d", run->cpu0);
	else if (p == IB_SPLIT)
		snprintf(buf, len, "split: client on CPU %d, server on CPU %d", run->cpu0,
			 run->cpu1);
	else
		snprintf(buf, len, "free: left to the scheduler");
	return buf;
}

/* One cell of a line. */
static void
rp_cell(char *buf, size_t len, const struct ib_run *run, const struct ib_result *r,
	enum rp_what what)
{
	int side = what >= RP_FLOOR && what <= RP_FCPU;
	struct ib_stat s = ib_stat_of(r, side);
	struct ib_use u;

	switch (what) {
	case RP_FIG:
	case RP_FLOOR:
	case RP_PEER:
		ib_fmt(buf, len, ib_scale(r->row->metric, s.median));
		break;
	case RP_RANGE:
	case RP_FRANGE:
		rp_range(buf, len, &s, r->row->metric);
		break;
	case RP_PERCALL:
	case RP_FPERCALL: /* a rate's time per call: 1 / rate, in microseconds */
		ib_fmt(buf, len, 1e6 / s.median);
		break;
	case RP_CPU:
	case RP_FCPU:
		u = ib_use_of(r, side);
		ib_fmt_cpu(buf, len, &u);
		break;
	case RP_RATIO:
		ib_fmt(buf, len, ib_ratio_of(r));
		break;
	case RP_COST:
		ib_fmt(buf, len, ib_cost_of(run, r));
		break;
	case RP_SPEEDUP:
		ib_fmt(buf, len, ib_speedup_of(run, r));
		break;
	}
}

/* Where the tables go: text, or Markdown (--markdown). */
struct rp_out {
	FILE *f;
	int md;
};

/* One line of a table: a label, a side, and a value (or range) per routine. */
static void
rp_line(const struct rp_out *o, const struct ib_run *run, enum ib_placement p,
	const struct ib_row **rows, size_t nrows, const struct ib_col *col, enum rp_what what)
{
	const char *name = what == RP_FIG || what == RP_PEER ? col->name : "";
	const char *side = what == RP_PEER && col->prog != NULL ? col->prog->name : rp_side[what];

	if (o->md)
		fprintf(o->f, "| %s | %s |", name, side);
	else
		fprintf(o->f, "%-12s %-7s", name, side);
	for (size_t i = 0; i < nrows; i++) {
		const struct ib_result *r = ib_find(run, p, rows[i], col);
		char buf[32] = "-";

		if (r != NULL)
			rp_cell(buf, sizeof buf, run, r, what);
		fprintf(o->f, o->md ? " %s |" : " %10s", buf);
	}
	fputc('\n', o->f);
}

/* Whether any cell of the metric has a figure. */
static int
rp_any(const struct ib_run *run, enum ib_placement p, enum ib_metric m)
{
	for (size_t i = 0; i < run->nresults; i++)
		if (run->results[i].placement == p && run->results[i].row->metric == m &&
		    run->results[i].n[0] > 0)
			return 1;
	return 0;
}

/* Why cells say n/a: one line per routine and reason, with the transports it concerns. */
static void
rp_na(const struct rp_out *o, const struct ib_run *run, enum ib_placement p, enum ib_metric m)
{
	FILE *f = o->f;

	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];
		int seen = 0;

		if (r->placement != p || r->row->metric != m || r->why[0] == '\0')
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = run->results[k].placement == p && run->results[k].row == r->row &&
			       strcmp(run->results[k].why, r->why) == 0;
		if (seen)
			continue;
		fprintf(f, "%sn/a: %s (", o->md ? "\n" : "", r->row->name);
		for (size_t k = i, n = 0; k < run->nresults; k++)
			if (run->results[k].placement == p && run->results[k].row == r->row &&
			    strcmp(run->results[k].why, r->why) == 0)
				fprintf(f, "%s%s", n++ ? " " : "", run->results[k].col->name);
		fprintf(f, "): %s\n", r->why);
	}
}

/* The lines of one column: a peer's figure and speedup; idlkit's figure, CPU, floor and
 * ratio (a dynamic column's floor is printed under its twin, a few lines above). */
static void
rp_column(const struct rp_out *f, const struct ib_run *run, enum ib_placement p,
	  const struct ib_row **rows, size_t nrows, const struct ib_col *col)
{
	enum ib_metric m = rows[0]->metric;
	int many = run->rounds > 1;

	if (col->peer) {
		rp_line(f, run, p, rows, nrows, col, RP_PEER);
		if (many)
			rp_line(f, run, p, rows, nrows, col, RP_RANGE);
		rp_line(f, run, p, rows, nrows, col, RP_CPU);
		rp_line(f, run, p, rows, nrows, col, RP_SPEEDUP);
		return;
	}
	rp_line(f, run, p, rows, nrows, col, RP_FIG);
	if (many)
		rp_line(f, run, p, rows, nrows, col, RP_RANGE);
	if (m == IB_THROUGHPUT)
		rp_line(f, run, p, rows, nrows, col, RP_PERCALL);
	rp_line(f, run, p, rows, nrows, col, RP_CPU);
	if (run->connect != NULL)
		return;
	if (col->twin == NULL) {
		rp_line(f, run, p, rows, nrows, col, RP_FLOOR);
		if (many)
			rp_line(f, run, p, rows, nrows, col, RP_FRANGE);
		if (m == IB_THROUGHPUT)
			rp_line(f, run, p, rows, nrows, col, RP_FPERCALL);
		rp_line(f, run, p, rows, nrows, col, RP_FCPU);
	}
	rp_line(f, run, p, rows, nrows, col, RP_RATIO);
	if (col->twin != NULL)
		rp_line(f, run, p, rows, nrows, col, RP_COST);
}

/* Seed 003 under the one-way table: unconnected sendto() against connected send(). */
static void
rp_sendto(const struct rp_out *o, const struct ib_run *run, enum ib_placement p)
{
	FILE *f = o->f;

	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];
		struct ib_stat a = ib_stat_of(r, 0), b = ib_stat_of(r, 1);
		char x[16], y[16], z[16];

		if (r->row->mode != IB_MODE_SENDTO || r->placement != p || a.n == 0 || b.n == 0)
			continue;
		ib_fmt(x, sizeof x, a.median / 1000);
		ib_fmt(y, sizeof y, b.median / 1000);
		ib_fmt(z, sizeof z, ib_ratio_of(r));
		fprintf(f, "%s", o->md ? "\n" : "");
		fprintf(f,
			"udp raw one-way, thousands/s (floors only): sendto() on an unconnected "
			"socket %s, send() on a\nconnected one %s (x%s): what a udp server "
			"answering "
			"many clients from one socket pays\n",
			x, y, z);
	}
}

/* The routines of a table: the metric's rows that have a result in the placement. */
static size_t
rp_rows(const struct ib_run *run, enum ib_placement p, enum ib_metric m, const struct ib_row **rows)
{
	size_t nrows = 0;

	for (size_t i = 0; i < ib_nrows && nrows < 16; i++)
		if (ib_rows[i].metric == m && ib_rows[i].mode != IB_MODE_SENDTO) {
			for (size_t k = 0; k < run->nresults; k++)
				if (run->results[k].row == &ib_rows[i] &&
				    run->results[k].placement == p) {
					rows[nrows++] = &ib_rows[i];
					break;
				}
		}
	return nrows;
}

/* The table's head: its title, the placement, the line of routines. */
static void
rp_head(const struct rp_out *o, const struct ib_run *run, enum ib_placement p, enum ib_metric m,
	const struct ib_row **rows, size_t nrows)
{
	char where[96];

	ib_report_where(run, p, where, sizeof where);
	if (o->md) {
		fprintf(o->f, "\n### %s\n\nplacement %s", ib_titles[m], where);
		if (m == IB_THROUGHPUT)
			fprintf(o->f, "; %u calls in flight from one client thread", run->inflight);
		fprintf(o->f, "\n\n| Transport | |");
		for (size_t i = 0; i < nrows; i++)
			fprintf(o->f, " %s |", rows[i]->name);
		fprintf(o->f, "\n|---|---|");
		for (size_t i = 0; i < nrows; i++)
			fprintf(o->f, "---:|");
		fputc('\n', o->f);
		return;
	}
	fprintf(o->f, "\n%s\n", ib_titles[m]);
	if (m == IB_THROUGHPUT)
		fprintf(o->f, "%u calls in flight from one client thread (--inflight)\n",
			run->inflight);
	fprintf(o->f, "placement %s\n", where);
	for (size_t i = 0; i < 20 + 11 * nrows; i++)
		fputc('-', o->f);
	fprintf(o->f, "\n%-12s %-7s", "Transport", "");
	for (size_t i = 0; i < nrows; i++)
		fprintf(o->f, " %10s", rows[i]->name);
	fputc('\n', o->f);
}

static void
rp_table(const struct rp_out *o, const struct ib_run *run, enum ib_placement p, enum ib_metric m)
{
	const struct ib_row *rows[16];
	size_t nrows = rp_rows(run, p, m, rows);

	if (nrows == 0)
		return;
	if (!rp_any(run, p, m)) {
		fprintf(o->f, "\n%s\n", ib_titles[m]);
		rp_na(o, run, p, m);
		return;
	}
	rp_head(o, run, p, m, rows, nrows);
	for (size_t c = 0; c < run->ncols; c++) {
		int any = 0;

		for (size_t i = 0; i < nrows && !any; i++)
			any = ib_find(run, p, rows[i], &run->cols[c]) != NULL;
		if (any)
			rp_column(o, run, p, rows, nrows, &run->cols[c]);
	}
	if (m == IB_ONEWAY)
		rp_sendto(o, run, p);
	rp_na(o, run, p, m);
}

void
ib_report_tables(FILE *f, const struct ib_run *run, int markdown)
{
	/* Calls in flight stand where the latencies stand without them. */
	static const enum ib_metric order[] = { IB_LATENCY, IB_THROUGHPUT, IB_ONEWAY, IB_BANDWIDTH,
						IB_CONNECT };
	struct rp_out o = { f, markdown };

	for (size_t p = 0; p < run->nplacements; p++)
		for (size_t m = 0; m < sizeof order / sizeof order[0]; m++)
			rp_table(&o, run, run->placements[p], order[m]);
}

void
ib_report_text(FILE *f, const struct ib_run *run)
{
	ib_report_tables(f, run, 0);
	if (run->marshal_idl_ns >= 0) {
		fprintf(f,
			"\nMarshaling a whole biginout call in process (pack + unpack, request "
			"and reply), ns per call\nidlkit stubs %.1f",
			run->marshal_idl_ns);
		if (run->marshal_xdr_ns > 0)
			fprintf(f, "   rpcgen XDR %.1f   ratio %.2f\n", run->marshal_xdr_ns,
				run->marshal_idl_ns / run->marshal_xdr_ns);
		else
			fprintf(f, "   (no rpcgen XDR in this build)\n");
	}
	for (size_t i = 0; i < run->nnotes; i++)
		fprintf(f, "note: %s\n", run->notes[i]);
}
