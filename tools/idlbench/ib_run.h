/*
 * ib_run.h - a run, layer 4: its columns and placements (idlbench_cols.c), the probe that calls
 * each row once before it (idlbench_probe.c), the rounds of cells and their results
 * (idlbench_run.c), and the figures read back from the results (idlbench_stats.c).
 *
 * A run knows the base, the floors, the verdict's rule, the interface and the cells; it must
 * not know the reports (tests/lint/idlbench.sh).
 */
#ifndef IB_RUN_H
#define IB_RUN_H

#include <signal.h>
#include <stddef.h>

#include "ib_cell.h"
#include "ib_verdict.h"

#define IB_MAX_ROUNDS 64
#define IB_MAX_COLS 16

/* One row x column x placement: each round's figure (the median of its repetitions) and the
 * CPU per call of its processes, by round; NAN where a round has none. */
struct ib_result {
	enum ib_placement placement;
	const struct ib_row *row;
	const struct ib_col *col;
	unsigned rounds; /* the rounds of the run: the slots below */
	double v[2][IB_MAX_ROUNDS]; /* [0]: idlkit (or the peer), [1]: the floor */
	unsigned n[2]; /* the rounds that have a figure */
	struct ib_use use[2][IB_MAX_ROUNDS];
	char why[96]; /* why it did not run, or empty */
};

/* Median, min and max of the round figures. */
struct ib_stat {
	double median, min, max;
	unsigned n;
};

struct ib_run {
	struct ib_col cols[IB_MAX_COLS];
	size_t ncols;
	enum ib_placement placements[3];
	size_t nplacements;
	unsigned rounds, iterations, reps, warmup;
	unsigned inflight; /* --inflight N: calls in flight on the latency rows (1: one) */
	int quick;
	const char *connect; /* --connect ADDRESS, or NULL */
	/* The user's routines (--impl) keep state: one server per transport and round, kept
	 * across that transport's rows, the --setup calls made on it first (idlbench_run.c). */
	int keep;
	int cpu0, cpu1; /* the CPUs of `same` and `split` */
	struct ib_result *results;
	size_t nresults;
	double marshal_idl_ns, marshal_xdr_ns; /* < 0: not measured */
	char date[32]; /* ISO 8601, UTC, when the run started */
	char notes[8][320]; /* what the tables cannot say (a transport without a floor...) */
	size_t nnotes;
	unsigned failed; /* rows that could not be timed: their call before the run failed */
};

/* idlbench_cols.c: the columns (every registered transport idlbench can address, then the
 * peers; `transports` a comma list or NULL for all) and the placements (a bit per enum
 * ib_placement). Returns -1 after printing what is wrong. */
int ib_columns(struct ib_run *run, const char *transports);
void ib_placements(struct ib_run *run, unsigned placements);
void ib_note(struct ib_run *run, const char *fmt, const char *a);
/* Whether name is in the comma list (NULL: every name is); whether every name of the list is
 * one of known (else printed, with the names known: a typo must not silently run nothing). */
int ib_in_list(const char *list, const char *name);
int ib_check_list(const char *what, const char *list, const char *const *known, size_t nknown);
/* Whether a column is network (its scheme carried over IP: tcp, udp, tls) or local. */
int ib_col_network(const struct ib_col *col);

/* ---- The rounds of cells (idlbench_run.c) ---- */

struct ib_loop {
	struct ib_run *run;
	const char *dir; /* the run's private directory of sockets */
	unsigned addr_n;
	unsigned done, total;
	int progress; /* a progress line on standard error */
	volatile sig_atomic_t *stop; /* set by SIGINT and SIGTERM */
};

/* Why a cell cannot run (a printed "n/a"), NULL if it can, or "" to leave it out. */
const char *ib_skip(const struct ib_run *run, const struct ib_row *row, const struct ib_col *col,
		    int side);
int ib_results(struct ib_run *run);
unsigned ib_count_cells(const struct ib_run *run);
void ib_loop(struct ib_loop *lp);
void ib_share_floors(struct ib_run *run);
/* Calls each row once against the server the run times (forked, or --connect's), after the
 * --setup calls: the sizes of the messages that went, for the floors; a row whose call fails
 * is marked. Returns -1 when the server does not serve the interface (`what` names it),
 * cannot be reached or refuses a setup call, printed (idlbench_probe.c). */
int ib_probe(struct ib_loop *lp, const char *what);

const char *ib_placement_name(enum ib_placement p);

/* ---- The figures of the results (idlbench_stats.c) ---- */

/* Statistics of side 0 or 1 of a result; the ratio is the median of the per-round ratios
 * side 0 / side 1 (NAN when either side is missing). */
struct ib_stat ib_stat_of(const struct ib_result *r, int side);
double ib_ratio_of(const struct ib_result *r);
/* A peer's speedup over idlkit on the same transport, round by round (NAN: none). */
double ib_speedup_of(const struct ib_run *run, const struct ib_result *peer);
/* A dynamic column's cost: interpreted / compiled, round by round (NAN: none). */
double ib_cost_of(const struct ib_run *run, const struct ib_result *dyn);
const struct ib_result *ib_find(const struct ib_run *run, enum ib_placement p,
				const struct ib_row *row, const struct ib_col *col);
/* The medians over the rounds of a side's CPU per call (NAN where not measured). */
struct ib_use ib_use_of(const struct ib_result *r, int side);
/* A side's figures as the verdict's rule takes them. */
void ib_series(const struct ib_result *r, int side, struct vd_series *s);
/* What a row's CPU is counted per: "call", "message" or "MB". */
const char *ib_cpu_per(const struct ib_row *row);

#endif /* IB_RUN_H */
