/*
 * idlbench_markdown.c - --markdown FILE, layer 5 (ib_report.h): the run as GitHub Markdown to
 * paste into an issue or a review: a heading with the machine, the verdict as a table per
 * placement with its flags as a list, then every table of the text output as a Markdown table
 * (idlbench_report.c writes both forms). "-" writes it to standard output instead of the text.
 *
 * It reads the run and measures nothing; it must not be used by the layers below it.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <idl/idl.h>

#include "ib_report.h"

/* One column's line of a verdict table. */
static void
md_rank(FILE *f, const struct ib_judgement *j, unsigned i)
{
	const struct vd_rank *r = &j->res.rank[i];
	enum ib_metric m = ib_vkind_metric(j->kind);
	char lo[16], hi[16], cpu[16] = "";

	ib_fmt(lo, sizeof lo, ib_scale(m, r->lo));
	ib_fmt(hi, sizeof hi, ib_scale(m, r->hi));
	if (!isnan(r->cpu))
		ib_fmt(cpu, sizeof cpu, r->cpu);
	if (i == 0)
		fprintf(f, "| %s, %s |", ib_vkind_name(j->kind), j->network ? "network" : "local");
	else
		fprintf(f, "| |");
	fprintf(f, " %s | x%.2f | %s%s%s | %s%s | ", j->cols[r->col]->name, r->x, lo,
		strcmp(lo, hi) != 0 ? "-" : "", strcmp(lo, hi) != 0 ? hi : "", cpu,
		r->spin > VD_SPIN ? " (spins)" : "");
	if (i == 0)
		fprintf(f, "fastest |\n");
	else if (r->rounds < 2)
		fprintf(f, "not ordered: %u round |\n", r->rounds);
	else
		fprintf(f, "%s%s faster in %u of %u rounds |\n",
			r->holds ? "" : "within noise: ", j->cols[j->res.rank[i - 1].col]->name,
			r->lost, r->rounds);
}

static void
md_flags(FILE *f, const struct ib_judgement *j)
{
	for (unsigned k = 0; k < j->res.nflags; k++) {
		const struct vd_flag *fl = &j->res.flags[k];

		fprintf(f, "- %s: %s", ib_flag_what(fl->kind), j->cols[fl->col]->name);
		if (fl->kind == VD_FLAG_SPIN)
			fprintf(f, " %s, cpu x%.1f its time", ib_vkind_name(j->kind), fl->value);
		else
			fprintf(f, " %s%s x%.2f", j->rows[fl->row]->name, fl->floor ? " floor" : "",
				fl->value);
		fprintf(f, " (%s)\n", ib_flag_cause(fl->kind, j->placement));
	}
}

static void
md_verdict(FILE *f, const struct ib_run *run, const struct ib_judgement *j, size_t n)
{
	const struct ib_judgement *one;
	char where[96];

	fprintf(f, "\n## Verdict\n\nFastest first, each compared with the one before it round by "
		   "round; `xN` is how many times slower than the first (docs/benchmarks.md, "
		   "\"Reading the output\").\n");
	for (size_t p = 0; p < run->nplacements; p++) {
		enum ib_placement pl = run->placements[p];
		int head = 0;

		for (size_t i = 0; (one = ib_judgement_next(j, n, pl, &i)) != NULL;) {
			if (!head++)
				fprintf(f,
					"\n### placement %s, %u rounds\n\n| kind | transport | x | "
					"figure (%s) | cpu us | order "
					"|\n|---|---|---:|---:|---:|---|\n",
					ib_report_where(run, pl, where, sizeof where), run->rounds,
					"per kind's unit");
			for (unsigned k = 0; k < one->res.n; k++)
				md_rank(f, one, k);
		}
		if (head)
			fputc('\n', f);
		for (size_t i = 0; (one = ib_judgement_next(j, n, pl, &i)) != NULL;)
			md_flags(f, one);
	}
}

int
ib_report_markdown(const char *path, const struct ib_run *run)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	struct ib_judgement *j;
	struct utsname u;
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uname(&u);
	fprintf(f, "# idlbench %s\n\n%s %s, %ld CPUs, %s; %u rounds of %u x %u calls per cell",
		idl_version(), u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN), run->date,
		run->rounds, run->reps, run->iterations);
	if (ib_user != NULL)
		fprintf(f, "; interface `%s`", ib_user->path);
	fprintf(f, ". Figures are medians over the rounds, the line beneath the lowest-highest "
		   "round; `cpu us` is client+server CPU per call (per message, per MB).\n");
	j = ib_judge(run, &n);
	if (n > 0)
		md_verdict(f, run, j, n);
	free(j);
	fprintf(f, "\n## Tables\n");
	ib_report_tables(f, run, 1);
	if (f != stdout && fclose(f) != 0) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
