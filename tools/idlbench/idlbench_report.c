/*
 * idlbench_report.c - what a run prints: seed 004's tables on stdout (one per metric and
 * placement: transports down, routines across, the floor and the ratio under each
 * transport), and the chart of --plot (through gnuplot); the JSON of --json is
 * idlbench_json.c's.
 *
 * A dynamic column (unix-dyn: the interpreted server) prints its figures, its ratio to the
 * floor it shares with the compiled column, and its cost: interpreted / compiled, round by
 * round, as the peer prints its speedup.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <idl/idl.h>

#include "idlbench.h"

/* configure's path to gnuplot, empty when it found none: then try PATH at run time. */
#ifndef IDL_GNUPLOT
#define IDL_GNUPLOT ""
#endif

extern char **environ;

const char *
ib_placement_name(enum ib_placement p)
{
	return p == IB_SAME ? "same" : p == IB_SPLIT ? "split" : "free";
}

static int
rp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
rp_median(double *v, unsigned n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof v[0], rp_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct ib_stat
ib_stat_of(const struct ib_result *r, int side)
{
	struct ib_stat s = { NAN, NAN, NAN, r->n[side] };
	double v[IB_MAX_ROUNDS];

	if (s.n == 0)
		return s;
	memcpy(v, r->v[side], s.n * sizeof v[0]);
	s.median = rp_median(v, s.n);
	s.min = v[0];
	s.max = v[s.n - 1];
	return s;
}

/* The median of per-round ratios a[i] / b[i] over the rounds both sides have. */
static double
rp_ratio(const double *a, unsigned na, const double *b, unsigned nb)
{
	double v[IB_MAX_ROUNDS];
	unsigned n = na < nb ? na : nb;

	for (unsigned i = 0; i < n; i++)
		v[i] = a[i] / b[i];
	return rp_median(v, n);
}

double
ib_ratio_of(const struct ib_result *r)
{
	return rp_ratio(r->v[0], r->n[0], r->v[1], r->n[1]);
}

/* The idlkit result a peer column is compared with: same routine, placement and scheme. */
static const struct ib_result *
rp_twin(const struct ib_run *run, const struct ib_result *peer)
{
	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];

		if (!r->col->peer && r->row == peer->row && r->placement == peer->placement &&
		    strcmp(r->col->scheme, peer->col->scheme) == 0)
			return r;
	}
	return NULL;
}

/* How many times faster idlkit is than the peer, round by round: the peer's time ÷ idlkit's,
 * or for a rate idlkit's ÷ the peer's. */
double
ib_speedup_of(const struct ib_run *run, const struct ib_result *peer)
{
	const struct ib_result *t = rp_twin(run, peer);

	if (t == NULL)
		return NAN;
	return peer->row->metric == IB_LATENCY ? rp_ratio(peer->v[0], peer->n[0], t->v[0], t->n[0])
					       : rp_ratio(t->v[0], t->n[0], peer->v[0], peer->n[0]);
}

static const struct ib_result *
rp_find(const struct ib_run *run, enum ib_placement p, const struct ib_row *row,
	const struct ib_col *col)
{
	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];

		if (r->placement == p && r->row == row && r->col == col)
			return r;
	}
	return NULL;
}

/* Interpreted ÷ compiled: what the dynamic path costs, round by round (for a latency;
 * below 1 for a rate). */
static double
rp_cost(const struct ib_run *run, const struct ib_result *dyn)
{
	const struct ib_result *t = rp_find(run, dyn->placement, dyn->row, dyn->col->twin);

	return t == NULL ? NAN : rp_ratio(dyn->v[0], dyn->n[0], t->v[0], t->n[0]);
}

/* ---- Text ---- */

static double
rp_scale(enum ib_metric m, double v)
{
	return m == IB_ONEWAY || m == IB_THROUGHPUT ? v / 1000.0 : v;
}

static void
rp_fmt(char *buf, size_t len, double v)
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

static void
rp_range(char *buf, size_t len, const struct ib_stat *s, enum ib_metric m)
{
	char lo[16], hi[16];

	if (s->n < 2) {
		buf[0] = '\0';
		return;
	}
	rp_fmt(lo, sizeof lo, rp_scale(m, s->min));
	rp_fmt(hi, sizeof hi, rp_scale(m, s->max));
	snprintf(buf, len, "%s-%s", lo, hi);
}

static const char *const rp_titles[] = {
	"*Local* communication latencies in microseconds - smaller is better",
	"*Local* one-way messages in thousands per second - bigger is better",
	"*Local* communication bandwidths in MB/s - bigger is better",
	"*Local* calls in flight, thousands of calls per second - bigger is better",
};

static const char *
rp_where(const struct ib_run *run, enum ib_placement p, char *buf, size_t len)
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

/* One line of a table: a label, a side, and a value (or range) per routine. */
static void
rp_line(FILE *f, const struct ib_run *run, enum ib_placement p, const struct ib_row **cols,
	size_t ncols, const struct ib_col *col, int what)
{
	static const char *const side[] = { "idlkit", "",	 "floor",  "",
					    "ratio",  "oncrpc",	 "",	   "speedup",
					    "cost",   "us/call", "us/call" };

	fprintf(f, "%-12s %-7s", what == 0 || what == 5 ? col->name : "",
		what == 5 && col->prog != NULL ? col->prog->name : side[what]);
	for (size_t i = 0; i < ncols; i++) {
		const struct ib_result *r = rp_find(run, p, cols[i], col);
		char buf[32] = "";

		if (r == NULL) {
			snprintf(buf, sizeof buf, "-");
		} else if (what == 0 || what == 2 || what == 5) {
			struct ib_stat s = ib_stat_of(r, what == 2 ? 1 : 0);

			rp_fmt(buf, sizeof buf, rp_scale(cols[i]->metric, s.median));
		} else if (what == 1 || what == 3 || what == 6) {
			struct ib_stat s = ib_stat_of(r, what == 3 ? 1 : 0);

			rp_range(buf, sizeof buf, &s, cols[i]->metric);
		} else if (what == 4) {
			rp_fmt(buf, sizeof buf, ib_ratio_of(r));
		} else if (what == 8) {
			rp_fmt(buf, sizeof buf, rp_cost(run, r));
		} else if (what == 9 || what == 10) {
			/* A rate's time per call: 1 / rate, in microseconds. */
			rp_fmt(buf, sizeof buf, 1e6 / ib_stat_of(r, what == 10).median);
		} else {
			rp_fmt(buf, sizeof buf, ib_speedup_of(run, r));
		}
		fprintf(f, " %10s", buf);
	}
	fputc('\n', f);
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
rp_na(FILE *f, const struct ib_run *run, enum ib_placement p, enum ib_metric m)
{
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
		fprintf(f, "n/a: %s (", r->row->name);
		for (size_t k = i, n = 0; k < run->nresults; k++)
			if (run->results[k].placement == p && run->results[k].row == r->row &&
			    strcmp(run->results[k].why, r->why) == 0)
				fprintf(f, "%s%s", n++ ? " " : "", run->results[k].col->name);
		fprintf(f, "): %s\n", r->why);
	}
}

static void
rp_table(FILE *f, const struct ib_run *run, enum ib_placement p, enum ib_metric m)
{
	const struct ib_row *cols[16];
	size_t ncols = 0, width;
	char where[96];

	for (size_t i = 0; i < ib_nrows && ncols < 16; i++) {
		const struct ib_row *row = &ib_rows[i];

		if (row->metric != m || row->mode == IB_MODE_SENDTO)
			continue;
		for (size_t k = 0; k < run->nresults; k++)
			if (run->results[k].row == row && run->results[k].placement == p) {
				cols[ncols++] = row;
				break;
			}
	}
	if (ncols == 0)
		return;
	width = 20 + 11 * ncols;
	fprintf(f, "\n%s\n", rp_titles[m]);
	if (m == IB_THROUGHPUT)
		fprintf(f, "%u calls in flight from one client thread (--inflight)\n",
			run->inflight);
	fprintf(f, "placement %s\n", rp_where(run, p, where, sizeof where));
	if (!rp_any(run, p, m)) {
		rp_na(f, run, p, m);
		return;
	}
	for (size_t i = 0; i < width; i++)
		fputc('-', f);
	fprintf(f, "\n%-12s %-7s", "Transport", "");
	for (size_t i = 0; i < ncols; i++)
		fprintf(f, " %10s", cols[i]->name);
	fputc('\n', f);
	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		int any = 0;

		for (size_t i = 0; i < ncols && !any; i++)
			any = rp_find(run, p, cols[i], col) != NULL;
		if (!any)
			continue;
		if (col->peer) {
			rp_line(f, run, p, cols, ncols, col, 5);
			if (run->rounds > 1)
				rp_line(f, run, p, cols, ncols, col, 6);
			rp_line(f, run, p, cols, ncols, col, 7);
			continue;
		}
		rp_line(f, run, p, cols, ncols, col, 0);
		if (run->rounds > 1)
			rp_line(f, run, p, cols, ncols, col, 1);
		if (m == IB_THROUGHPUT)
			rp_line(f, run, p, cols, ncols, col, 9);
		if (run->connect != NULL)
			continue;
		/* A dynamic column's floor is printed under its twin, a line or two above. */
		if (col->twin == NULL) {
			rp_line(f, run, p, cols, ncols, col, 2);
			if (run->rounds > 1)
				rp_line(f, run, p, cols, ncols, col, 3);
			if (m == IB_THROUGHPUT)
				rp_line(f, run, p, cols, ncols, col, 10);
		}
		rp_line(f, run, p, cols, ncols, col, 4);
		if (col->twin != NULL)
			rp_line(f, run, p, cols, ncols, col, 8);
	}
	/* Seed 003 under the one-way table: unconnected sendto() against connected send(). */
	for (size_t i = 0; m == IB_ONEWAY && i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];
		struct ib_stat a = ib_stat_of(r, 0), b = ib_stat_of(r, 1);
		char x[16], y[16], z[16];

		if (r->row->mode != IB_MODE_SENDTO || r->placement != p || a.n == 0 || b.n == 0)
			continue;
		rp_fmt(x, sizeof x, a.median / 1000);
		rp_fmt(y, sizeof y, b.median / 1000);
		rp_fmt(z, sizeof z, ib_ratio_of(r));
		fprintf(f,
			"udp raw one-way, thousands/s: sendto() on an unconnected socket %s, "
			"send() "
			"on a connected one %s (x%s)\n",
			x, y, z);
	}
	rp_na(f, run, p, m);
}

/* The interface and how it was run, when it is the user's. */
static void
rp_interface(FILE *f)
{
	if (ib_user == NULL)
		return;
	fprintf(f, "interface: %s (subsystem %s), %zu row%s; client: %s", ib_user->path,
		ib_user->ss->name, ib_user->ncalls, ib_user->ncalls == 1 ? "" : "s",
		ib_user->interpreted ? "the interpreted client (descriptors)"
				     : "the compiled client stubs");
	if (ib_user->why[0] != '\0')
		fprintf(f, " (%s)", ib_user->why);
	fprintf(f, "; server: %s%s\n",
		ib_user->interpreted ? "the interpreted server with "
				     : "the compiled server stubs with ",
		ib_user->impl != NULL ? ib_user->impl
		: ib_user->resolve != NULL || !ib_user->interpreted
			? "the null routines (KERN_SUCCESS, out arguments empty: the messaging "
			  "alone)"
			: "replies made from the descriptors (no routines: the messaging alone)");
}

/* The peers of the run, with their versions; the bytes of their bandwidth rows travel
 * inside the message, where idlkit's go out of line. */
static void
rp_peers(FILE *f, const struct ib_run *run)
{
	int any = 0;

	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		int first = 1;

		if (!col->peer)
			continue;
		for (size_t k = 0; k < c && first; k++)
			first = !run->cols[k].peer || run->cols[k].prog != col->prog;
		if (first)
			fprintf(f, "%s%s: %s", any++ ? "; " : "peers: ",
				col->prog != NULL ? col->prog->name : "oncrpc",
				ib_peer_version(col));
	}
	if (any)
		fprintf(f, ".\n       A peer's ool64k and ool1m carry the bytes inline, in "
			   "the message.\n");
}

/* With calls in flight, what each floor's pipelined loop batches (floor_pipe.c). */
static void
rp_inflight(FILE *f, const struct ib_run *run)
{
	if (run->inflight <= 1 || run->connect != NULL)
		return;
	fprintf(f,
		"in flight: the latency rows keep %u calls in flight from one thread (the "
		"asynchronous stubs),\n       their floor the raw pipelined loop; it batches:\n",
		run->inflight);
	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		unsigned n = col->floor != NULL ? fl_pipe_depth(col->floor, run->inflight) : 0;

		if (col->floor == NULL || col->peer)
			continue;
		fprintf(f, "       %s: %s", col->name, col->floor->batching);
		if (n < run->inflight)
			fprintf(f, "; at most %u in flight (the queues' depth)", n);
		fputc('\n', f);
	}
}

void
ib_report_text(FILE *f, const struct ib_run *run)
{
	/* Calls in flight stand where the latencies stand without them. */
	static const enum ib_metric order[] = { IB_LATENCY, IB_THROUGHPUT, IB_ONEWAY,
						IB_BANDWIDTH };
	struct utsname u;
	int peers = 0, dyn = 0;

	uname(&u);
	fprintf(f, "idlbench %s on %s %s, %ld CPUs, %s\n", idl_version(), u.sysname, u.release,
		sysconf(_SC_NPROCESSORS_ONLN), run->date);
	rp_interface(f);
	for (size_t i = 0; i < run->nresults; i++) {
		peers |= run->results[i].col->peer;
		dyn |= run->results[i].col->twin != NULL;
	}
	if (run->nresults > 0) {
		fprintf(f,
			"%u round%s per placement; each figure is the median of the rounds' "
			"figures "
			"(a round: %u x %u calls per cell)%s\n",
			run->rounds, run->rounds == 1 ? "" : "s", run->reps, run->iterations,
			run->rounds > 1 ? ",\nthe lowest and highest of them beneath." : ".");
		if (run->connect == NULL)
			fprintf(f, "floor: the same bytes over the same kernel object, sent and "
				   "received "
				   "by a minimal program of our own\n       with no stubs and no "
				   "runtime: "
				   "the least these messages can cost.\n"
				   "ratio: idlkit's figure divided by the floor's, round by round "
				   "(a time "
				   "of 1.25 is 25%% slower than the\n       floor; a rate of 0.80 "
				   "is 80%% "
				   "of the floor's rate).\n");
		rp_inflight(f, run);
		if (peers)
			fprintf(f, "speedup: the peer's time divided by idlkit's over the same "
				   "transport, round by round (for a rate\n         idlkit's "
				   "divided by the peer's; above 1: idlkit is faster).\n");
		rp_peers(f, run);
		if (dyn)
			fprintf(f, "cost: the interpreted server's figure divided by the compiled "
				   "one's, round by round (above 1: slower).\n");
	}
	for (size_t c = 0; c < run->ncols; c++)
		if (run->cols[c].twin != NULL) {
			fprintf(f,
				"%s: %s served by the interpreted server (descriptors and libffi) "
				"with %s's floor\n",
				run->cols[c].name, run->cols[c].scheme, run->cols[c].twin->name);
		}
	for (size_t p = 0; p < run->nplacements; p++)
		for (size_t m = 0; m < sizeof order / sizeof order[0]; m++)
			rp_table(f, run, run->placements[p], order[m]);
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

/* ---- Plot ---- */

/* One data file per placement: a line per latency routine (with calls in flight, the time
 * per call), three columns (median, min, max) per transport. */
static int
pl_data(const char *path, const struct ib_run *run, enum ib_placement p)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	for (size_t i = 0; i < ib_nrows; i++) {
		const struct ib_row *row = &ib_rows[i];

		int rate = row->metric == IB_THROUGHPUT;

		if ((row->metric != IB_LATENCY && !rate) || row->present <= 0)
			continue;
		fprintf(f, "%s", row->name);
		for (size_t c = 0; c < run->ncols; c++) {
			const struct ib_result *r = rp_find(run, p, row, &run->cols[c]);
			struct ib_stat s = { NAN, NAN, NAN, 0 };

			if (r != NULL)
				s = ib_stat_of(r, 0);
			if (s.n == 0)
				fprintf(f, " ? ? ?");
			else if (rate) /* calls in flight: the time per call, 1 / rate */
				fprintf(f, " %.4g %.4g %.4g", 1e6 / s.median, 1e6 / s.max,
					1e6 / s.min);
			else
				fprintf(f, " %.4g %.4g %.4g", s.median, s.min, s.max);
		}
		fputc('\n', f);
	}
	return fclose(f);
}

int
ib_report_plot(const char *path, const struct ib_run *run)
{
	const char *dot = strrchr(path, '.');
	int svg = dot != NULL && strcmp(dot, ".svg") == 0;
	char dir[] = "/tmp/idlbench-plot.XXXXXX", script[300], data[300];
	char *argv[] = { (char *)(IDL_GNUPLOT[0] != '\0' ? IDL_GNUPLOT : "gnuplot"), script, NULL };
	FILE *f;
	pid_t pid;
	int status = -1;

	if (dot == NULL || (!svg && strcmp(dot, ".png") != 0)) {
		fprintf(stderr, "idlbench: --plot wants FILE.png or FILE.svg\n");
		return -1;
	}
	if (run->nplacements == 0 || mkdtemp(dir) == NULL) {
		fprintf(stderr, "idlbench: --plot: nothing to plot\n");
		return -1;
	}
	snprintf(script, sizeof script, "%s/plot.gp", dir);
	if ((f = fopen(script, "w")) == NULL)
		return -1;
	fprintf(f, "set terminal %s size 1100,%zu\nset output '%s'\n",
		svg ? "svg dynamic" : "pngcairo", 360 * run->nplacements, path);
	fprintf(f, "set multiplot layout %zu,1 title 'idlbench %s: ", run->nplacements, run->date);
	if (run->inflight > 1)
		fprintf(f, "time per call (us) with %u calls in flight", run->inflight);
	else
		fputs("latency per call (us)", f);
	fputs(", median and min-max of rounds'\n", f);
	fputs("set datafile missing '?'\nset style data histogram\n"
	      "set style histogram errorbars gap 2 lw 1\nset style fill solid 0.7 border -1\n"
	      "set ylabel 'us per call'\nset yrange [0:*]\nset key outside right\n"
	      "set grid ytics\n",
	      f);
	for (size_t p = 0; p < run->nplacements; p++) {
		snprintf(data, sizeof data, "%s/%s.dat", dir,
			 ib_placement_name(run->placements[p]));
		if (pl_data(data, run, run->placements[p]) != 0)
			break;
		fprintf(f, "set title 'placement %s'\nplot ",
			ib_placement_name(run->placements[p]));
		for (size_t c = 0; c < run->ncols; c++)
			fprintf(f, "%s'%s' using %zu:%zu:%zu%s title '%s'", c ? ", " : "", data,
				2 + 3 * c, 3 + 3 * c, 4 + 3 * c, c ? "" : ":xtic(1)",
				run->cols[c].name);
		fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
	fclose(f);
	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) == 0)
		waitpid(pid, &status, 0);
	else
		fprintf(stderr, "idlbench: --plot: cannot run %s (is gnuplot installed?)\n",
			argv[0]);
	for (size_t p = 0; p < run->nplacements; p++) {
		snprintf(data, sizeof data, "%s/%s.dat", dir,
			 ib_placement_name(run->placements[p]));
		unlink(data);
	}
	unlink(script);
	rmdir(dir);
	if (status != 0) {
		fprintf(stderr, "idlbench: --plot: gnuplot failed\n");
		return -1;
	}
	return 0;
}
