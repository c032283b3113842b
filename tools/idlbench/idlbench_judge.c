/*
 * idlbench_judge.c - the verdict of a run, layer 5 (ib_report.h): for each placement, kind of
 * row (calls, calls in flight, one-way, bulk) and group of transports (network: carried over
 * IP, as idlbench_cols.c's table says; local: the rest), the rule of idlbench_verdict.c
 * applied to idlkit's columns, and its text, printed before the tables.
 *
 * The peers and the interpreted server beside unix are left out: the verdict answers which
 * transport to use; the tables compare the rest. It reads the results and measures nothing.
 *
 * Layer 5, the reports: it must not be used by the layers below it.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_report.h"

static const struct {
	const char *name, *unit;
	enum ib_metric metric;
} jd_kinds[IB_VK_N] = {
	{ "calls", "us per call", IB_LATENCY },
	{ "in flight", "thousand calls/s", IB_THROUGHPUT },
	{ "one-way", "thousand messages/s", IB_ONEWAY },
	{ "bulk", "MB/s", IB_BANDWIDTH },
};

const char *
ib_vkind_name(enum ib_vkind k)
{
	return jd_kinds[k].name;
}

const char *
ib_vkind_unit(enum ib_vkind k)
{
	return jd_kinds[k].unit;
}

enum ib_metric
ib_vkind_metric(enum ib_vkind k)
{
	return jd_kinds[k].metric;
}

const char *
ib_flag_what(enum vd_flag_kind k)
{
	static const char *const what[] = {
		[VD_FLAG_SPREAD] = "rounds spread over 2x",
		[VD_FLAG_BELOW_NOISE] = "faster than its floor, within the floor's spread",
		[VD_FLAG_BELOW] = "faster than its floor, beyond the floor's spread",
		[VD_FLAG_FAR] = "over 3x slower than its floor",
		[VD_FLAG_SPIN] = "spins",
	};

	return what[k];
}

const char *
ib_flag_cause(enum vd_flag_kind k, enum ib_placement p)
{
	switch (k) {
	case VD_FLAG_SPREAD:
		return p == IB_FREE ? "the scheduler moved the processes between CPUs, or other "
				      "work ran: more rounds, or --placement same or split"
				    : "other work ran on the machine: more rounds say more";
	case VD_FLAG_BELOW_NOISE:
		return "noise: the floor varies as much between its rounds; not a gain over it";
	case VD_FLAG_BELOW:
		return "the transport waits otherwise than its floor here (docs/benchmarks.md, "
		       "\"Reading the output\")";
	case VD_FLAG_FAR:
		return p == IB_FREE
			       ? "the scheduler put both processes on one CPU in some rounds, "
				 "where a side that spins holds the CPU the other needs"
			       : "idlkit does work its floor does not here (more system calls, "
				 "smaller batches, a wait): the CPU lines of both say on which "
				 "side";
	case VD_FLAG_SPIN:
		return "client and server both busy while one waits for the other: the time is "
		       "bought with CPU, which is lost to other work (and on one CPU, to the peer)";
	}
	return "";
}

/* Whether the verdict judges a column: idlkit's transports, not the peers, and not the
 * interpreted server when its compiled twin is there. */
static int
jd_judged(const struct ib_col *col)
{
	return !col->peer && col->twin == NULL;
}

/* Fills j's columns, rows and the rule's input from the run; 0 when no column has a row. */
static unsigned
jd_fill(const struct ib_run *run, struct ib_judgement *j)
{
	enum ib_metric m = jd_kinds[j->kind].metric;

	for (size_t c = 0; c < run->ncols && j->ncols < VD_MAX_COLS; c++)
		if (jd_judged(&run->cols[c]) && ib_col_network(&run->cols[c]) == j->network)
			j->cols[j->ncols++] = &run->cols[c];
	for (size_t i = 0; i < ib_nrows && j->nrows < VD_MAX_ROWS; i++)
		if (ib_rows[i].metric == m && ib_rows[i].mode != IB_MODE_SENDTO &&
		    ib_rows[i].present > 0)
			j->rows[j->nrows++] = &ib_rows[i];
	j->in.rate = m != IB_LATENCY;
	j->in.sync = m == IB_LATENCY;
	j->in.ncols = j->ncols;
	j->in.nrows = j->nrows;
	for (unsigned c = 0; c < j->ncols; c++)
		for (unsigned k = 0; k < j->nrows; k++) {
			const struct ib_result *r =
				ib_find(run, j->placement, j->rows[k], j->cols[c]);
			struct vd_cell *cell = &j->in.cell[c][k];
			struct ib_use u;

			cell->cpu = NAN;
			if (r == NULL)
				continue;
			ib_series(r, 0, &cell->fig);
			ib_series(r, 1, &cell->floor);
			u = ib_use_of(r, 0);
			if (!isnan(u.client) && !isnan(u.server))
				cell->cpu = u.client + u.server;
		}
	vd_decide(&j->in, &j->res);
	return j->res.n;
}

struct ib_judgement *
ib_judge(const struct ib_run *run, size_t *n)
{
	size_t max = run->nplacements * IB_VK_N * 2;
	struct ib_judgement *all = max > 0 ? calloc(max, sizeof *all) : NULL;

	*n = 0;
	if (all == NULL)
		return NULL;
	for (size_t p = 0; p < run->nplacements; p++)
		for (int k = 0; k < IB_VK_N; k++)
			for (int net = 0; net < 2; net++) {
				struct ib_judgement *j = &all[*n];

				memset(j, 0, sizeof *j);
				j->placement = run->placements[p];
				j->kind = (enum ib_vkind)k;
				j->network = net;
				if (jd_fill(run, j) > 0)
					(*n)++;
			}
	if (*n == 0) {
		free(all);
		return NULL;
	}
	return all;
}

/* A figure of the kind, in its unit. */
static void
jd_fig(char *buf, size_t len, const struct ib_judgement *j, double v)
{
	ib_fmt(buf, len, ib_scale(jd_kinds[j->kind].metric, v));
}

/* The first column's line: its figure (the range of its rows' medians), its CPU. */
static void
jd_first(FILE *f, const struct ib_judgement *j, const char *label)
{
	const struct vd_rank *r = &j->res.rank[0];
	char lo[16], hi[16], cpu[16];

	jd_fig(lo, sizeof lo, j, r->lo);
	jd_fig(hi, sizeof hi, j, r->hi);
	fprintf(f, "  %-16s %-12s ", label, j->cols[r->col]->name);
	if (r->rows > 1 && strcmp(lo, hi) != 0)
		fprintf(f, "%s-%s %s over %u rows", lo, hi, jd_kinds[j->kind].unit, r->rows);
	else
		fprintf(f, "%s %s", lo, jd_kinds[j->kind].unit);
	if (!isnan(r->cpu)) {
		ib_fmt(cpu, sizeof cpu, r->cpu);
		fprintf(f, "; cpu %s us", cpu);
	}
	if (r->spin > VD_SPIN)
		fprintf(f, ": it spins (cpu x%.1f its time)", r->spin);
	if (j->res.n == 1)
		fprintf(f, "; the only transport of its group");
	fputc('\n', f);
}

/* Each other column: how much slower, and whether the rounds order it after the one
 * before it. */
static void
jd_next(FILE *f, const struct ib_judgement *j, unsigned i)
{
	const struct vd_rank *r = &j->res.rank[i];
	const char *prev = j->cols[j->res.rank[i - 1].col]->name;
	char name[48], cpu[16];

	snprintf(name, sizeof name, "%s x%.2f", j->cols[r->col]->name, r->x);
	fprintf(f, "  %-16s %-12s ", "", name);
	if (r->rounds < 2)
		fprintf(f, "not ordered after %s: %u round%s compared", prev, r->rounds,
			r->rounds == 1 ? "" : "s");
	else if (r->holds)
		fprintf(f, "%s faster in %u of %u rounds", prev, r->lost, r->rounds);
	else
		fprintf(f,
			"within noise of %s (%s faster in %u of %u rounds, by x%.2f at the median)",
			prev, prev, r->lost, r->rounds, r->ratio);
	if (!isnan(r->cpu)) {
		ib_fmt(cpu, sizeof cpu, r->cpu);
		fprintf(f, "; cpu %s us", cpu);
	}
	if (r->spin > VD_SPIN)
		fprintf(f, ": it spins");
	fputc('\n', f);
}

/* The most flags of one kind the text lists in a placement (the JSON has them all). */
#define JD_FLAGS_SHOWN 8

/* One flag as an item of its kind's list, the line wrapped before 96 columns. */
static void
jd_item(FILE *f, const struct ib_judgement *j, const struct vd_flag *fl, int first, int *col)
{
	char item[128], lo[16], hi[16];
	int n;

	if (fl->kind == VD_FLAG_SPIN)
		n = snprintf(item, sizeof item, "%s %s (cpu x%.1f its time)",
			     j->cols[fl->col]->name, jd_kinds[j->kind].name, fl->value);
	else
		n = snprintf(item, sizeof item, "%s %s%s x%.2f", j->cols[fl->col]->name,
			     j->rows[fl->row]->name, fl->floor ? " floor" : "", fl->value);
	if (fl->kind == VD_FLAG_SPREAD && n > 0 && (size_t)n < sizeof item) {
		jd_fig(lo, sizeof lo, j, fl->lo);
		jd_fig(hi, sizeof hi, j, fl->hi);
		n += snprintf(item + n, sizeof item - (size_t)n, " (%s-%s)", lo, hi);
	}
	if (!first && *col + n + 2 > 96) {
		fputs(",\n     ", f);
		*col = 5;
	} else if (!first) {
		fputs(", ", f);
		*col += 2;
	}
	fputs(item, f);
	*col += n;
}

/* A flag's cause on lines of its own, in parentheses, wrapped before 96 columns. */
static void
jd_wrap(FILE *f, const char *text)
{
	int col = fprintf(f, "\n      (");

	while (*text != '\0') {
		size_t w = strcspn(text, " ");

		if (col + (int)w > 95) {
			fputs("\n       ", f);
			col = 7;
		}
		col += fprintf(f, "%.*s", (int)w, text);
		text += w;
		if (*text == ' ' && text[1] != '\0' &&
		    col + (int)strcspn(text + 1, " ") + 1 <= 95) {
			fputc(' ', f);
			col++;
		}
		text += *text == ' ';
	}
	fputs(")\n", f);
}

/* The flags of one kind in one placement: a list, then the cause. */
static void
jd_flag_kind(FILE *f, const struct ib_judgement *j, size_t n, enum ib_placement p,
	     enum vd_flag_kind k, int *any)
{
	unsigned items = 0;
	int col = 0;

	for (size_t i = 0; i < n; i++)
		for (unsigned x = 0; j[i].placement == p && x < j[i].res.nflags; x++) {
			if (j[i].res.flags[x].kind != k)
				continue;
			if (!(*any)++)
				fprintf(f, "  flags:\n");
			if (items == 0)
				col = fprintf(f, "    %s: ", ib_flag_what(k));
			if (items++ < JD_FLAGS_SHOWN)
				jd_item(f, &j[i], &j[i].res.flags[x], items == 1, &col);
		}
	if (items > JD_FLAGS_SHOWN)
		fprintf(f, "\n     and %u more (the JSON has them all)", items - JD_FLAGS_SHOWN);
	if (items > 0)
		jd_wrap(f, ib_flag_cause(k, p));
}

/* The flags of one placement, a list per kind with its cause. */
static void
jd_flags(FILE *f, const struct ib_judgement *j, size_t n, enum ib_placement p)
{
	int any = 0;

	for (int k = VD_FLAG_SPREAD; k <= VD_FLAG_SPIN; k++)
		jd_flag_kind(f, j, n, p, (enum vd_flag_kind)k, &any);
}

const struct ib_judgement *
ib_judgement_next(const struct ib_judgement *j, size_t n, enum ib_placement pl, size_t *i)
{
	for (; *i < n; (*i)++)
		if (j[*i].placement == pl)
			return &j[(*i)++];
	return NULL;
}

void
ib_report_verdict(FILE *f, const struct ib_run *run, const struct ib_judgement *j, size_t n)
{
	const struct ib_judgement *one;
	char where[96], label[40];

	if (n == 0)
		return;
	fprintf(f, "\nVerdict: for each kind of row, idlkit's fastest transport, then the others "
		   "in order\n(network ones apart from local; \"Reading this output\" below says "
		   "how it is decided)\n");
	for (size_t p = 0; p < run->nplacements; p++) {
		enum ib_placement pl = run->placements[p];
		int head = 0;

		for (size_t i = 0; (one = ib_judgement_next(j, n, pl, &i)) != NULL;) {
			if (!head++)
				fprintf(f, "placement %s, %u round%s\n",
					ib_report_where(run, pl, where, sizeof where), run->rounds,
					run->rounds == 1 ? " (one round orders nothing)" : "s");
			snprintf(label, sizeof label, "%s, %s", jd_kinds[one->kind].name,
				 one->network ? "network" : "local");
			jd_first(f, one, label);
			for (unsigned k = 1; k < one->res.n; k++)
				jd_next(f, one, k);
		}
		jd_flags(f, j, n, pl);
	}
}
