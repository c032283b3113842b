/*
 * ib_report.h - what a run prints, layer 5: the verdict before the tables (idlbench_judge.c,
 * the rule applied to the run), the header and the legend (idlbench_legend.c), the tables
 * (idlbench_report.c), the summary after them (idlbench_summary.c), the JSON
 * (idlbench_json.c), the charts (idlbench_plot.c) and the Markdown (idlbench_markdown.c).
 *
 * The reports read the run's results; they measure nothing and must not be used by any layer
 * below (tests/lint/idlbench.sh).
 */
#ifndef IB_REPORT_H
#define IB_REPORT_H

#include <stdio.h>

#include "ib_run.h"
#include "ib_verdict.h"

/* The kinds of row the verdict judges apart, in its order. */
enum ib_vkind {
	IB_VK_CALLS = 0, /* latency rows: one call at a time */
	IB_VK_INFLIGHT, /* throughput rows: --inflight N */
	IB_VK_ONEWAY, /* one-way and ping-pong rows */
	IB_VK_BULK, /* bandwidth rows */
	IB_VK_N
};

/* The verdict of one placement, kind of row and group of transports (network or local). */
struct ib_judgement {
	enum ib_placement placement;
	enum ib_vkind kind;
	int network;
	unsigned ncols, nrows;
	const struct ib_col *cols[VD_MAX_COLS];
	const struct ib_row *rows[VD_MAX_ROWS];
	struct vd_input in; /* the rule's input, built from the run */
	struct vd_result res;
};

/* idlbench_judge.c: every judgement of the run (placement x kind x group, those with a
 * column), in printing order, malloc()ed; *n their count. NULL when there is none. */
struct ib_judgement *ib_judge(const struct ib_run *run, size_t *n);
/* The next of the n judgements j that is of placement pl, from *i on (start with *i = 0), or
 * NULL when none is left; *i moves past it. */
const struct ib_judgement *ib_judgement_next(const struct ib_judgement *j, size_t n,
					     enum ib_placement pl, size_t *i);
/* The verdict in text, before the tables. */
void ib_report_verdict(FILE *f, const struct ib_run *run, const struct ib_judgement *j, size_t n);
/* The words of the verdict: a kind's name ("calls") and unit ("us per call"), and what a flag
 * means and why it may happen, for the text, the summary and the Markdown. */
const char *ib_vkind_name(enum ib_vkind k);
const char *ib_vkind_unit(enum ib_vkind k);
enum ib_metric ib_vkind_metric(enum ib_vkind k);
const char *ib_flag_what(enum vd_flag_kind k);
const char *ib_flag_cause(enum vd_flag_kind k, enum ib_placement p);

/* idlbench_legend.c: the first lines (the machine, the interface, the rounds) and "Reading
 * this output", once, before the tables. */
void ib_report_header(FILE *f, const struct ib_run *run);
void ib_report_legend(FILE *f, const struct ib_run *run);

/* idlbench_report.c: the tables, then the marshaling row and the notes; the tables alone, as
 * text or as Markdown. */
void ib_report_text(FILE *f, const struct ib_run *run);
void ib_report_tables(FILE *f, const struct ib_run *run, int markdown);
/* A figure as the tables print it (3 significant digits), and one in the row's unit. */
void ib_fmt(char *buf, size_t len, double v);
double ib_scale(enum ib_metric m, double v);
/* A cell's CPU per call as the tables print it: "client+server", or "client" alone. */
void ib_fmt_cpu(char *buf, size_t len, const struct ib_use *u);
/* The tables' titles, by metric; where a placement puts the processes, in words. */
extern const char *const ib_titles[5];
const char *ib_report_where(const struct ib_run *run, enum ib_placement p, char *buf, size_t len);

/* idlbench_summary.c: the answer after the tables. */
void ib_report_summary(FILE *f, const struct ib_run *run);
/* idlbench_json.c, idlbench_plot.c, idlbench_markdown.c: to path ("-": standard output). */
int ib_report_json(const char *path, const struct ib_run *run);
int ib_report_plot(const char *path, const struct ib_run *run);
int ib_report_markdown(const char *path, const struct ib_run *run);

#endif /* IB_REPORT_H */
