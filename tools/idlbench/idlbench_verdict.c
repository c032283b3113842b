/*
 * idlbench_verdict.c - the verdict's rule, layer 1 (ib_verdict.h): the order of some columns
 * over the rows of one kind, each order backed by its rounds or "within noise", and the flags
 * of what the figures show (a spread over 2x, a cell below its floor or far above it, a column
 * that spins).
 *
 * Numbers in, order and flags out: it must not know rows, columns, cells, runs or reports,
 * so that the rule can be tested on figures made up for it (tests/bench/vdtest.c).
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "ib_verdict.h"

static int
vd_have(const struct vd_series *s, unsigned k)
{
	return k < s->n && !isnan(s->v[k]) && s->v[k] > 0;
}

double
vd_median(const struct vd_series *s)
{
	double v[VD_MAX_ROUNDS];
	unsigned n = 0;

	for (unsigned k = 0; k < s->n && k < VD_MAX_ROUNDS; k++)
		if (vd_have(s, k))
			v[n++] = s->v[k];
	return ib_median(v, n);
}

void
vd_range(const struct vd_series *s, double *lo, double *hi)
{
	*lo = *hi = NAN;
	for (unsigned k = 0; k < s->n && k < VD_MAX_ROUNDS; k++) {
		if (!vd_have(s, k))
			continue;
		if (isnan(*lo) || s->v[k] < *lo)
			*lo = s->v[k];
		if (isnan(*hi) || s->v[k] > *hi)
			*hi = s->v[k];
	}
}

double
vd_ratio(const struct vd_series *a, const struct vd_series *b)
{
	double v[VD_MAX_ROUNDS];
	unsigned n = 0;

	for (unsigned k = 0; k < a->n && k < VD_MAX_ROUNDS; k++)
		if (vd_have(a, k) && vd_have(b, k))
			v[n++] = a->v[k] / b->v[k];
	return ib_median(v, n);
}

/* How many times worse than `best` a figure is: times grow, rates shrink. */
static double
vd_worse(int rate, double v, double best)
{
	return rate ? best / v : v / best;
}

static unsigned
vd_push(struct vd_flag *flags, unsigned n, unsigned max, const struct vd_flag *f)
{
	if (n < max)
		flags[n++] = *f;
	return n;
}

unsigned
vd_cell_flags(const struct vd_cell *c, int rate, unsigned col, unsigned row, struct vd_flag *flags,
	      unsigned max)
{
	const struct vd_series *s[2] = { &c->fig, &c->floor };
	struct vd_flag f;
	unsigned n = 0;
	double lo, hi, ratio, med, worse;

	for (int side = 0; side < 2; side++) {
		vd_range(s[side], &lo, &hi);
		if (!isnan(lo) && lo < hi && hi / lo > VD_SPREAD) {
			f = (struct vd_flag){ VD_FLAG_SPREAD, col, row, side, hi / lo, lo, hi };
			n = vd_push(flags, n, max, &f);
		}
	}
	ratio = vd_ratio(&c->fig, &c->floor);
	if (isnan(ratio))
		return n;
	/* For a time, below 1 beats the floor; for a rate, above 1. */
	worse = rate ? 1 / ratio : ratio;
	vd_range(&c->floor, &lo, &hi);
	med = vd_median(&c->fig);
	if (worse < 1 / VD_BEATS) {
		f = (struct vd_flag){ med >= lo && med <= hi ? VD_FLAG_BELOW_NOISE : VD_FLAG_BELOW,
				      col,
				      row,
				      0,
				      ratio,
				      lo,
				      hi };
		n = vd_push(flags, n, max, &f);
	} else if (worse > VD_FAR) {
		f = (struct vd_flag){ VD_FLAG_FAR, col, row, 0, ratio, lo, hi };
		n = vd_push(flags, n, max, &f);
	}
	return n;
}

/* A column's score, its range of medians and its CPU, over the rows it has. */
static void
vd_score(const struct vd_input *in, unsigned c, const double *best, struct vd_rank *r)
{
	double logs = 0, cpu[VD_MAX_ROWS], spin[VD_MAX_ROWS];
	unsigned ncpu = 0, nspin = 0;

	memset(r, 0, sizeof *r);
	r->col = c;
	r->lo = r->hi = NAN;
	for (unsigned k = 0; k < in->nrows; k++) {
		const struct vd_cell *cell = &in->cell[c][k];
		double m = vd_median(&cell->fig);

		if (isnan(m))
			continue;
		r->rows++;
		logs += log(vd_worse(in->rate, m, best[k]));
		if (isnan(r->lo) || m < r->lo)
			r->lo = m;
		if (isnan(r->hi) || m > r->hi)
			r->hi = m;
		if (isnan(cell->cpu))
			continue;
		cpu[ncpu++] = cell->cpu;
		if (in->sync)
			spin[nspin++] = cell->cpu / m;
	}
	r->score = r->rows > 0 ? exp(logs / r->rows) : NAN;
	r->cpu = ib_median(cpu, ncpu);
	r->spin = ib_median(spin, nspin);
	r->x = 1;
}

/* The rounds compared between a (listed first) and b over the rows both have: how many a
 * won, of how many, and the median of b's / a's per-round figure (a rate: a's / b's). */
static void
vd_pair(const struct vd_input *in, unsigned a, unsigned b, struct vd_rank *rb)
{
	double ratios[VD_MAX_ROUNDS];
	unsigned n = 0, won = 0, rounds = 0;

	for (unsigned k = 0; k < in->nrows; k++) {
		unsigned m = in->cell[a][k].fig.n;

		if (in->cell[b][k].fig.n > m)
			m = in->cell[b][k].fig.n;
		if (m > rounds)
			rounds = m;
	}
	for (unsigned t = 0; t < rounds && t < VD_MAX_ROUNDS; t++) {
		double logs = 0;
		unsigned rows = 0;

		for (unsigned k = 0; k < in->nrows; k++) {
			const struct vd_series *sa = &in->cell[a][k].fig, *sb = &in->cell[b][k].fig;

			if (!vd_have(sa, t) || !vd_have(sb, t))
				continue;
			logs += log(vd_worse(in->rate, sb->v[t], sa->v[t]));
			rows++;
		}
		if (rows == 0)
			continue;
		ratios[n] = exp(logs / rows);
		won += ratios[n] > 1;
		n++;
	}
	rb->lost = won;
	rb->rounds = n;
	rb->ratio = ib_median(ratios, n);
	/* Every round below VD_MANY_ROUNDS rounds, 3 of 4 (rounded up) from there on. */
	rb->holds = n >= 2 && won >= (n < VD_MANY_ROUNDS ? n : (3 * n + 3) / 4) &&
		    rb->ratio >= VD_MARGIN;
}

/* How many times slower b is than a over their common rows, by their medians. */
static double
vd_x(const struct vd_input *in, unsigned a, unsigned b)
{
	double logs = 0;
	unsigned rows = 0;

	for (unsigned k = 0; k < in->nrows; k++) {
		double ma = vd_median(&in->cell[a][k].fig), mb = vd_median(&in->cell[b][k].fig);

		if (isnan(ma) || isnan(mb))
			continue;
		logs += log(vd_worse(in->rate, mb, ma));
		rows++;
	}
	return rows > 0 ? exp(logs / rows) : NAN;
}

static void
vd_sort(struct vd_rank *r, unsigned n)
{
	/* Insertion: a handful of columns, and equal scores keep the columns' order. */
	for (unsigned i = 1; i < n; i++) {
		struct vd_rank t = r[i];
		unsigned k = i;

		while (k > 0 && r[k - 1].score > t.score) {
			r[k] = r[k - 1];
			k--;
		}
		r[k] = t;
	}
}

void
vd_decide(const struct vd_input *in, struct vd_result *out)
{
	double best[VD_MAX_ROWS];
	struct vd_flag f;

	memset(out, 0, sizeof *out);
	for (unsigned k = 0; k < in->nrows; k++) {
		best[k] = NAN;
		for (unsigned c = 0; c < in->ncols; c++) {
			double m = vd_median(&in->cell[c][k].fig);

			if (!isnan(m) && (isnan(best[k]) || vd_worse(in->rate, m, best[k]) < 1))
				best[k] = m;
		}
	}
	for (unsigned c = 0; c < in->ncols; c++) {
		vd_score(in, c, best, &out->rank[out->n]);
		if (out->rank[out->n].rows > 0)
			out->n++;
	}
	vd_sort(out->rank, out->n);
	for (unsigned i = 1; i < out->n; i++) {
		vd_pair(in, out->rank[i - 1].col, out->rank[i].col, &out->rank[i]);
		out->rank[i].x = vd_x(in, out->rank[0].col, out->rank[i].col);
		if (out->rank[i].rounds > out->rounds)
			out->rounds = out->rank[i].rounds;
	}
	for (unsigned c = 0; c < in->ncols; c++)
		for (unsigned k = 0; k < in->nrows; k++)
			out->nflags +=
				vd_cell_flags(&in->cell[c][k], in->rate, c, k,
					      out->flags + out->nflags, VD_MAX_FLAGS - out->nflags);
	for (unsigned i = 0; in->sync && i < out->n; i++)
		if (out->rank[i].spin > VD_SPIN && out->nflags < VD_MAX_FLAGS) {
			f = (struct vd_flag){
				VD_FLAG_SPIN, out->rank[i].col, 0, 0, out->rank[i].spin, NAN, NAN
			};
			out->flags[out->nflags++] = f;
		}
}
