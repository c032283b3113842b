/*
 * ib_verdict.h - the verdict's rule, layer 1: given the per-round figures of some columns
 * (transports) over some rows of one kind, which column is fastest, the others in order, each
 * order with the rounds that back it ("faster in k of n rounds") or "within noise", and the
 * flags the figures raise (docs/benchmarks.md, "Reading the output").
 *
 * It is arithmetic on numbers and must not know rows, columns, cells, runs or reports: the
 * reports fill a struct vd_input from a run (idlbench_judge.c), and tests/bench/vdtest fills
 * one by hand. It uses the base only (ib_base.h).
 *
 * The rule, for two columns a and b over the rows both have:
 *   - round k's ratio is the geometric mean over those rows of b's figure / a's in round k
 *     (for a rate a's / b's): above 1, a was faster in that round;
 *   - a is faster than b (the order holds) when a was faster in every round (in 3 of 4 of
 *     them, rounded up, from VD_MANY_ROUNDS rounds on) and the median of those ratios is at
 *     least VD_MARGIN; otherwise the two are within noise. One round orders nothing.
 * The columns are listed by their score, the geometric mean over their rows of how many
 * times slower than the row's best median they are; each is compared with the one before it.
 */
#ifndef IB_VERDICT_H
#define IB_VERDICT_H

#include "ib_base.h"

#define VD_MAX_ROUNDS 64
#define VD_MAX_COLS 16
#define VD_MAX_ROWS 16
#define VD_MAX_FLAGS 64

/* The least median per-round ratio an order needs: 5% apart. */
#define VD_MARGIN 1.05
/* From this many rounds on, an order needs 3 of 4 rounds, not all of them. */
#define VD_MANY_ROUNDS 4
/* A series whose highest round is more than this times its lowest is flagged. */
#define VD_SPREAD 2.0
/* A cell this many times worse than its floor is flagged, and one better than its floor by
 * more than this factor. */
#define VD_FAR 3.0
#define VD_BEATS 1.02
/* A synchronous call whose client and server CPU add up to more than this times its time per
 * call keeps both processes busy while one waits for the other: it spins. */
#define VD_SPIN 1.25

/* One figure per round, NAN where that round has none. */
struct vd_series {
	double v[VD_MAX_ROUNDS];
	unsigned n; /* rounds held (some may be NAN); 0: none */
};

struct vd_cell {
	struct vd_series fig; /* the column's figure; n == 0: the column has no such row */
	struct vd_series floor; /* its floor's; n == 0: none */
	double cpu; /* client + server CPU per call (message, MB), us; NAN: not measured */
};

struct vd_input {
	int rate; /* the figures are rates (bigger is better), else times */
	int sync; /* the rows are synchronous calls: CPU above the time per call is spinning */
	unsigned ncols, nrows;
	struct vd_cell cell[VD_MAX_COLS][VD_MAX_ROWS];
};

/* One column in the verdict's order. */
struct vd_rank {
	unsigned col;
	unsigned rows; /* rows it has */
	double score; /* geometric mean of (its median / the row's best), >= 1 */
	double x; /* how many times slower than the first, over their common rows (1 for it) */
	double lo, hi; /* the lowest and highest of its rows' medians */
	double cpu; /* the median over its rows of the CPU per call, NAN: none */
	double spin; /* sync rows: the median over its rows of CPU / time per call, else NAN */
	/* Against the column before it (not set for the first): the rounds it lost, of
	 * those compared, the median per-round ratio, and whether the order holds. */
	unsigned lost, rounds;
	double ratio;
	int holds;
};

enum vd_flag_kind {
	VD_FLAG_SPREAD = 0, /* a figure's rounds spread more than VD_SPREAD times */
	VD_FLAG_BELOW_NOISE, /* faster than its floor (VD_BEATS), within the floor's spread */
	VD_FLAG_BELOW, /* faster than its floor (VD_BEATS), beyond the floor's spread */
	VD_FLAG_FAR, /* more than VD_FAR times worse than its floor */
	VD_FLAG_SPIN, /* a column's CPU per call exceeds its time per call (VD_SPIN) */
};

struct vd_flag {
	enum vd_flag_kind kind;
	unsigned col, row; /* row: unused for VD_FLAG_SPIN */
	int floor; /* VD_FLAG_SPREAD: 1 when the floor's rounds spread */
	double value; /* the spread, the ratio to the floor, or CPU / time */
	double lo, hi; /* the series' (spread) or the floor's (below) lowest and highest */
};

struct vd_result {
	unsigned n; /* columns ranked (those with a row) */
	struct vd_rank rank[VD_MAX_COLS];
	unsigned nflags;
	struct vd_flag flags[VD_MAX_FLAGS];
	unsigned rounds; /* the most rounds any pair was compared over */
};

/* Decides the order and flags of in into out. */
void vd_decide(const struct vd_input *in, struct vd_result *out);

/* The flags of one cell alone (spread, below or far from its floor), for the summary: up to
 * max into flags; returns how many. */
unsigned vd_cell_flags(const struct vd_cell *c, int rate, unsigned col, unsigned row,
		       struct vd_flag *flags, unsigned max);

/* Median, lowest and highest of a series' rounds that have a figure (NAN: none). */
double vd_median(const struct vd_series *s);
void vd_range(const struct vd_series *s, double *lo, double *hi);
/* The median over the rounds both have of a's / b's figure (NAN: no such round). */
double vd_ratio(const struct vd_series *a, const struct vd_series *b);

#endif /* IB_VERDICT_H */
