/*
 * idlbench_plot.c - the charts of --plot, layer 5 (ib_report.h): one chart per table (each
 * placement's latencies, calls in flight, one-way rates and bandwidths), drawn by gnuplot:
 * a group of bars per routine, a bar per column with its lowest-highest round as an error
 * bar - idlkit's transports each beside its floor, the interpreted server and the peers - in
 * the unit the table prints. `--plot run.svg` writes run-same-latency.svg, run-same-oneway.svg
 * and so on, and names each file on standard error.
 *
 * It reads the run and measures nothing; it must not be used by the layers below it.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ib_report.h"

/* configure's path to gnuplot, empty when it found none: then try PATH at run time. */
#ifndef IDL_GNUPLOT
#define IDL_GNUPLOT ""
#endif

extern char **environ;

static const char *const pl_kinds[] = { "latency", "oneway", "bandwidth", "inflight", "connect" };
static const char *const pl_units[] = { "us per call", "thousand messages/s", "MB/s",
					"thousand calls/s", "connections/s" };

/* The bars of a chart: a column's figures (side 0) or its floor's (side 1). */
struct pl_series {
	const struct ib_col *col;
	int side;
};

/* The table's routines, and the series that have a figure in it. */
struct pl_chart {
	enum ib_placement p;
	enum ib_metric m;
	const struct ib_row *rows[16];
	size_t nrows;
	struct pl_series s[2 * IB_MAX_COLS];
	size_t ns;
	double lo, hi; /* the smallest and largest median drawn */
};

static void
pl_collect(const struct ib_run *run, struct pl_chart *c)
{
	c->nrows = c->ns = 0;
	c->lo = c->hi = NAN;
	for (size_t i = 0; i < ib_nrows && c->nrows < 16; i++)
		if (ib_rows[i].metric == c->m && ib_rows[i].mode != IB_MODE_SENDTO &&
		    ib_rows[i].present > 0)
			c->rows[c->nrows++] = &ib_rows[i];
	for (size_t k = 0; k < run->ncols; k++)
		for (int side = 0; side < 2; side++) {
			int any = 0;

			if (side == 1 && (run->cols[k].peer || run->cols[k].twin != NULL))
				continue;
			for (size_t i = 0; i < c->nrows; i++) {
				const struct ib_result *r =
					ib_find(run, c->p, c->rows[i], &run->cols[k]);
				double v = r != NULL ? ib_stat_of(r, side).median : NAN;

				if (isnan(v))
					continue;
				any = 1;
				v = ib_scale(c->m, v);
				c->lo = isnan(c->lo) || v < c->lo ? v : c->lo;
				c->hi = isnan(c->hi) || v > c->hi ? v : c->hi;
			}
			if (any)
				c->s[c->ns++] = (struct pl_series){ &run->cols[k], side };
		}
}

/* The data: a line per routine, three columns (median, lowest, highest) per series. */
static int
pl_data(const char *path, const struct ib_run *run, const struct pl_chart *c)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	for (size_t i = 0; i < c->nrows; i++) {
		fprintf(f, "%s", c->rows[i]->name);
		for (size_t k = 0; k < c->ns; k++) {
			const struct ib_result *r = ib_find(run, c->p, c->rows[i], c->s[k].col);
			struct ib_stat s = { NAN, NAN, NAN, 0 };

			if (r != NULL)
				s = ib_stat_of(r, c->s[k].side);
			if (s.n == 0)
				fprintf(f, " ? ? ?");
			else
				fprintf(f, " %.4g %.4g %.4g", ib_scale(c->m, s.median),
					ib_scale(c->m, s.min), ib_scale(c->m, s.max));
		}
		fputc('\n', f);
	}
	return fclose(f);
}

static int
pl_script(const char *path, const char *out, const char *data, int svg, const struct ib_run *run,
	  const struct pl_chart *c)
{
	FILE *f = fopen(path, "w");
	size_t width = 80 + c->nrows * (c->ns + 2) * 16;

	if (f == NULL)
		return -1;
	fprintf(f, "set terminal %s size %zu,480\nset output '%s'\n",
		svg ? "svg dynamic" : "pngcairo", width < 900 ? 900 : width, out);
	fprintf(f,
		"set title \"placement %s: %s (%s, %s is better)\\nidlbench %s: median of %u "
		"rounds, the bar from the lowest to the highest\"\n",
		ib_placement_name(c->p), pl_kinds[c->m], pl_units[c->m],
		c->m == IB_LATENCY ? "smaller" : "bigger", run->date, run->rounds);
	fputs("set datafile missing '?'\nset style data histogram\n"
	      "set style histogram errorbars gap 2 lw 1\nset style fill solid 0.7 border -1\n"
	      "set key outside right\nset grid ytics\n",
	      f);
	fprintf(f, "set ylabel '%s'\n", pl_units[c->m]);
	/* Figures that span more than 30x (a peer beside a shared ring) need a log scale. */
	if (c->lo > 0 && c->hi / c->lo > 30)
		fputs("set logscale y\n", f);
	else
		fputs("set yrange [0:*]\n", f);
	fputs("plot ", f);
	/* A transport's floor in its colour, hatched. */
	for (size_t k = 0; k < c->ns; k++)
		fprintf(f, "%s'%s' using %zu:%zu:%zu%s title '%s%s' lc %zu%s", k ? ", " : "", data,
			2 + 3 * k, 3 + 3 * k, 4 + 3 * k, k ? "" : ":xtic(1)", c->s[k].col->name,
			c->s[k].side ? " floor" : "", (size_t)(c->s[k].col - run->cols) + 1,
			c->s[k].side ? " fill pattern 4" : "");
	fputc('\n', f);
	return fclose(f);
}

static int
pl_gnuplot(const char *script)
{
	char *argv[] = { (char *)(IDL_GNUPLOT[0] != '\0' ? IDL_GNUPLOT : "gnuplot"), (char *)script,
			 NULL };
	pid_t pid;
	int status = -1;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0) {
		fprintf(stderr,
			"idlbench: --plot: cannot run %s (is gnuplot installed? mk/deps.sh "
			"installs it)\n",
			argv[0]);
		return -1;
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* One chart: BASE-PLACEMENT-KIND.EXT. */
static int
pl_chart(const struct ib_run *run, struct pl_chart *c, const char *path, const char *dot,
	 const char *dir)
{
	char out[600], script[320], data[320];
	int rc;

	pl_collect(run, c);
	if (c->ns == 0 || c->nrows == 0)
		return 0;
	snprintf(out, sizeof out, "%.*s-%s-%s%s", (int)(dot - path), path, ib_placement_name(c->p),
		 pl_kinds[c->m], dot);
	snprintf(script, sizeof script, "%s/plot.gp", dir);
	snprintf(data, sizeof data, "%s/plot.dat", dir);
	rc = pl_data(data, run, c) != 0 ||
			     pl_script(script, out, data, strcmp(dot, ".svg") == 0, run, c) != 0
		     ? -1
		     : pl_gnuplot(script);
	unlink(data);
	unlink(script);
	if (rc != 0)
		fprintf(stderr, "idlbench: --plot: %s: gnuplot failed\n", out);
	else
		fprintf(stderr, "idlbench: --plot: wrote %s\n", out);
	return rc;
}

int
ib_report_plot(const char *path, const struct ib_run *run)
{
	static const enum ib_metric order[] = { IB_LATENCY, IB_THROUGHPUT, IB_ONEWAY, IB_BANDWIDTH,
						IB_CONNECT };
	const char *dot = strrchr(path, '.');
	const char *tmp = getenv("TMPDIR");
	char dir[300];
	struct pl_chart c;
	int rc = 0;

	if (dot == NULL || (strcmp(dot, ".svg") != 0 && strcmp(dot, ".png") != 0)) {
		fprintf(stderr, "idlbench: --plot wants FILE.png or FILE.svg\n");
		return -1;
	}
	snprintf(dir, sizeof dir, "%s/idlbench-plot.XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
	if (run->nplacements == 0 || mkdtemp(dir) == NULL) {
		fprintf(stderr, "idlbench: --plot: nothing to plot\n");
		return -1;
	}
	for (size_t p = 0; p < run->nplacements && rc == 0; p++)
		for (size_t m = 0; m < sizeof order / sizeof order[0] && rc == 0; m++) {
			c.p = run->placements[p];
			c.m = order[m];
			rc = pl_chart(run, &c, path, dot, dir);
		}
	rmdir(dir);
	return rc;
}
