/*
 * vdtest.c - the verdict's rule (tools/idlbench/idlbench_verdict.c) on figures made up for it:
 * a clear winner and its order, columns within noise, the 3-of-4 rounds rule, a single round,
 * rates (bigger is better), a round missing in one column, and each flag: rounds spread over
 * 2x (a figure's and a floor's), a cell faster than its floor within the floor's spread and
 * beyond it, a cell over 3x slower than its floor, a column that spins. Linked with the rule's
 * own object files: what idlbench runs is what is tested. Exit 0 when every case holds.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_verdict.h"

static int failures;

#define CHECK(cond, what)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "vdtest: %s: %s (line %d)\n", what, #cond, __LINE__);      \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* A fresh input of ncols x nrows, every figure missing. */
static struct vd_input *
vt_input(unsigned ncols, unsigned nrows, int rate)
{
	struct vd_input *in = calloc(1, sizeof *in);

	if (in == NULL) {
		perror("vdtest");
		exit(1);
	}
	in->ncols = ncols;
	in->nrows = nrows;
	in->rate = rate;
	in->sync = !rate;
	for (unsigned c = 0; c < ncols; c++)
		for (unsigned r = 0; r < nrows; r++)
			in->cell[c][r].cpu = NAN;
	return in;
}

/* A series of n rounds. */
static void
vt_set(struct vd_series *s, unsigned n, const double *v)
{
	s->n = n;
	for (unsigned k = 0; k < n; k++)
		s->v[k] = v[k];
}

static unsigned
vt_count(const struct vd_result *res, enum vd_flag_kind k, unsigned col, unsigned row)
{
	unsigned n = 0;

	for (unsigned i = 0; i < res->nflags; i++)
		n += res->flags[i].kind == k && res->flags[i].col == col &&
		     (k == VD_FLAG_SPIN || res->flags[i].row == row);
	return n;
}

/* Three columns, 5 rounds, 2 rows: 10, 15 and 20 us give or take 3%: the order holds. */
static void
test_winner(void)
{
	static const double a[] = { 10, 10.3, 9.8, 10.1, 9.9 },
			    b[] = { 15, 15.2, 14.7, 15.1, 14.9 },
			    c[] = { 20, 19.6, 20.4, 20.1, 19.8 };
	struct vd_input *in = vt_input(3, 2, 0);
	struct vd_result res;

	/* Listed slowest first, so that the order is the rule's and not the input's. */
	for (unsigned r = 0; r < 2; r++) {
		vt_set(&in->cell[0][r].fig, 5, c);
		vt_set(&in->cell[1][r].fig, 5, a);
		vt_set(&in->cell[2][r].fig, 5, b);
	}
	vd_decide(in, &res);
	CHECK(res.n == 3, "winner: three columns ranked");
	CHECK(res.rank[0].col == 1 && res.rank[1].col == 2 && res.rank[2].col == 0,
	      "winner: fastest first");
	CHECK(res.rank[1].holds && res.rank[1].lost == 5 && res.rank[1].rounds == 5,
	      "winner: the second is slower in 5 of 5 rounds");
	CHECK(res.rank[2].holds, "winner: the third after the second");
	CHECK(fabs(res.rank[1].x - 1.5) < 0.02 && fabs(res.rank[2].x - 2.0) < 0.03,
	      "winner: x is the ratio of the medians to the first's");
	CHECK(res.rank[1].ratio > 1.4, "winner: the median per-round ratio");
	CHECK(res.nflags == 0, "winner: nothing to flag");
	free(in);
}

/* Two columns a hair apart that trade rounds: within noise, whichever is listed first. */
static void
test_noise(void)
{
	static const double a[] = { 10, 11, 9.5, 10.5, 10 }, b[] = { 10.4, 10.2, 10.1, 9.8, 10.3 };
	struct vd_input *in = vt_input(2, 1, 0);
	struct vd_result res;

	vt_set(&in->cell[0][0].fig, 5, a);
	vt_set(&in->cell[1][0].fig, 5, b);
	vd_decide(in, &res);
	CHECK(res.n == 2 && !res.rank[1].holds, "noise: no order holds");
	CHECK(res.rank[1].lost < 5, "noise: the first did not win every round");
	/* Faster in every round, but by 2%: under the margin, still within noise. */
	static const double c[] = { 10.2, 10.2, 10.2 }, d[] = { 10, 10, 10 };
	vt_set(&in->cell[0][0].fig, 3, c);
	vt_set(&in->cell[1][0].fig, 3, d);
	vd_decide(in, &res);
	CHECK(res.rank[0].col == 1 && res.rank[1].lost == 3 && !res.rank[1].holds,
	      "noise: 3 of 3 rounds by 2% is within noise");
	free(in);
}

/* Four rounds: three of four won by a margin is an order; two of four is not. */
static void
test_rounds(void)
{
	static const double a[] = { 10, 10, 10, 10 }, b3[] = { 12, 12, 12, 9 },
			    b2[] = { 12, 12, 9, 9.5 }, one[] = { 10 }, two[] = { 30 };
	struct vd_input *in = vt_input(2, 1, 0);
	struct vd_result res;

	vt_set(&in->cell[0][0].fig, 4, a);
	vt_set(&in->cell[1][0].fig, 4, b3);
	vd_decide(in, &res);
	CHECK(res.rank[1].lost == 3 && res.rank[1].rounds == 4 && res.rank[1].holds,
	      "rounds: 3 of 4 holds");
	vt_set(&in->cell[1][0].fig, 4, b2);
	vd_decide(in, &res);
	CHECK(!res.rank[1].holds, "rounds: 2 of 4 does not hold");
	/* One round orders nothing, however far apart. */
	vt_set(&in->cell[0][0].fig, 1, one);
	vt_set(&in->cell[1][0].fig, 1, two);
	vd_decide(in, &res);
	CHECK(res.rank[0].col == 0 && res.rank[1].rounds == 1 && !res.rank[1].holds,
	      "rounds: one round orders nothing");
	free(in);
}

/* Rates: the biggest first; a round missing in one column is left out of the pairs. */
static void
test_rates(void)
{
	static const double a[] = { 100, NAN, 98, 101 }, b[] = { 200, 210, 190, 205 };
	struct vd_input *in = vt_input(2, 1, 1);
	struct vd_result res;

	vt_set(&in->cell[0][0].fig, 4, a);
	vt_set(&in->cell[1][0].fig, 4, b);
	vd_decide(in, &res);
	CHECK(res.rank[0].col == 1, "rates: the biggest rate first");
	CHECK(res.rank[1].rounds == 3 && res.rank[1].lost == 3 && res.rank[1].holds,
	      "rates: the round one column lacks is not compared");
	CHECK(fabs(res.rank[1].x - 2.0) < 0.1, "rates: x is how many times slower");
	free(in);
}

/* Each flag of a cell, and none where there is nothing to say. */
static void
test_flags(void)
{
	static const double spread[] = { 10, 10, 25 }, even[] = { 10, 10.2, 9.9 },
			    floor_wide[] = { 8, 10, 12 }, nine[] = { 9, 9.1, 8.9 },
			    floor_tight[] = { 9.5, 10, 10.5 }, five[] = { 5, 5.1, 4.9 },
			    forty[] = { 40, 41, 39 }, fl_spread[] = { 5, 5, 11 };
	struct vd_input *in = vt_input(5, 1, 0);
	struct vd_result res;

	vt_set(&in->cell[0][0].fig, 3, spread);
	vt_set(&in->cell[0][0].floor, 3, fl_spread);
	vt_set(&in->cell[1][0].fig, 3, nine);
	vt_set(&in->cell[1][0].floor, 3, floor_wide);
	vt_set(&in->cell[2][0].fig, 3, five);
	vt_set(&in->cell[2][0].floor, 3, floor_tight);
	vt_set(&in->cell[3][0].fig, 3, forty);
	vt_set(&in->cell[3][0].floor, 3, even);
	vt_set(&in->cell[4][0].fig, 3, even);
	vt_set(&in->cell[4][0].floor, 3, even);
	vd_decide(in, &res);
	CHECK(vt_count(&res, VD_FLAG_SPREAD, 0, 0) == 2,
	      "flags: the figure's and the floor's spread");
	for (unsigned i = 0; i < res.nflags; i++)
		if (res.flags[i].kind == VD_FLAG_SPREAD && !res.flags[i].floor)
			CHECK(fabs(res.flags[i].value - 2.5) < 1e-9 && res.flags[i].lo == 10 &&
				      res.flags[i].hi == 25,
			      "flags: the spread is highest / lowest");
	CHECK(vt_count(&res, VD_FLAG_BELOW_NOISE, 1, 0) == 1,
	      "flags: faster than the floor, within its spread");
	CHECK(vt_count(&res, VD_FLAG_BELOW, 2, 0) == 1,
	      "flags: faster than the floor, beyond its spread");
	CHECK(vt_count(&res, VD_FLAG_FAR, 3, 0) == 1, "flags: over 3x slower than the floor");
	CHECK(vt_count(&res, VD_FLAG_SPREAD, 4, 0) + vt_count(&res, VD_FLAG_BELOW, 4, 0) +
			      vt_count(&res, VD_FLAG_BELOW_NOISE, 4, 0) +
			      vt_count(&res, VD_FLAG_FAR, 4, 0) ==
		      0,
	      "flags: a cell at its floor, its rounds close, says nothing");
	free(in);
}

/* A synchronous call whose client and server CPU exceed its time: it spins. */
static void
test_spin(void)
{
	static const double t[] = { 2, 2, 2 }, u[] = { 5, 5, 5 };
	struct vd_input *in = vt_input(2, 1, 0);
	struct vd_result res;

	vt_set(&in->cell[0][0].fig, 3, t);
	in->cell[0][0].cpu = 4; /* both sides busy the whole call */
	vt_set(&in->cell[1][0].fig, 3, u);
	in->cell[1][0].cpu = 4.5; /* one sleeps while the other works */
	vd_decide(in, &res);
	CHECK(vt_count(&res, VD_FLAG_SPIN, 0, 0) == 1, "spin: the faster column spins");
	CHECK(vt_count(&res, VD_FLAG_SPIN, 1, 0) == 0, "spin: the other does not");
	CHECK(fabs(res.rank[0].spin - 2.0) < 1e-9 && res.rank[0].cpu == 4, "spin: its figures");
	/* Rates are not synchronous calls: no spinning is told from them. */
	in->sync = 0;
	vd_decide(in, &res);
	CHECK(vt_count(&res, VD_FLAG_SPIN, 0, 0) == 0, "spin: not told of rates");
	free(in);
}

int
main(void)
{
	test_winner();
	test_noise();
	test_rounds();
	test_rates();
	test_flags();
	test_spin();
	if (failures != 0) {
		fprintf(stderr, "vdtest: %d check(s) failed\n", failures);
		return 1;
	}
	printf("vdtest: the verdict's rule holds on every case\n");
	return 0;
}
