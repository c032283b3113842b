/*
 * idlbench_stats.c - the figures of a run's results, layer 4 (ib_run.h): each side's median
 * and range over the rounds, the ratios taken round by round (idlkit / floor, a peer's
 * speedup, a dynamic column's cost), the CPU per call, and a side's figures as the verdict's
 * rule takes them. Nothing is measured here; the reports print what these return.
 *
 * It knows the cells' and the run's structures and the verdict's series; it must not know the
 * reports.
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "ib_run.h"

const char *
ib_placement_name(enum ib_placement p)
{
	return p == IB_SAME ? "same" : p == IB_SPLIT ? "split" : "free";
}

struct ib_stat
ib_stat_of(const struct ib_result *r, int side)
{
	struct ib_stat s = { NAN, NAN, NAN, 0 };
	double v[IB_MAX_ROUNDS];

	for (unsigned k = 0; k < r->rounds && k < IB_MAX_ROUNDS; k++)
		if (!isnan(r->v[side][k]))
			v[s.n++] = r->v[side][k];
	if (s.n == 0)
		return s;
	s.median = ib_median(v, s.n);
	s.min = v[0];
	s.max = v[s.n - 1];
	return s;
}

/* The median of per-round ratios a[k] / b[k] over the rounds both have. */
static double
st_ratio(const struct ib_result *ra, int sa, const struct ib_result *rb, int sb)
{
	double v[IB_MAX_ROUNDS];
	unsigned n = 0, rounds = ra->rounds < rb->rounds ? ra->rounds : rb->rounds;

	for (unsigned k = 0; k < rounds && k < IB_MAX_ROUNDS; k++)
		if (!isnan(ra->v[sa][k]) && !isnan(rb->v[sb][k]) && rb->v[sb][k] != 0)
			v[n++] = ra->v[sa][k] / rb->v[sb][k];
	return ib_median(v, n);
}

double
ib_ratio_of(const struct ib_result *r)
{
	return st_ratio(r, 0, r, 1);
}

const struct ib_result *
ib_find(const struct ib_run *run, enum ib_placement p, const struct ib_row *row,
	const struct ib_col *col)
{
	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];

		if (r->placement == p && r->row == row && r->col == col)
			return r;
	}
	return NULL;
}

/* The idlkit result a peer column is compared with: same routine, placement and scheme. */
static const struct ib_result *
st_twin(const struct ib_run *run, const struct ib_result *peer)
{
	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];

		if (!r->col->peer && !r->col->dynamic && r->row == peer->row &&
		    r->placement == peer->placement &&
		    strcmp(r->col->scheme, peer->col->scheme) == 0)
			return r;
	}
	return NULL;
}

double
ib_speedup_of(const struct ib_run *run, const struct ib_result *peer)
{
	const struct ib_result *t = st_twin(run, peer);

	if (t == NULL)
		return NAN;
	return peer->row->metric == IB_LATENCY ? st_ratio(peer, 0, t, 0) : st_ratio(t, 0, peer, 0);
}

double
ib_cost_of(const struct ib_run *run, const struct ib_result *dyn)
{
	const struct ib_result *t = ib_find(run, dyn->placement, dyn->row, dyn->col->twin);

	return t == NULL ? NAN : st_ratio(dyn, 0, t, 0);
}

/* The median over the rounds of one side's CPU per call, and its split into user and system
 * time in the proportion of all the rounds' together, so that the two parts add up to it. */
static void
st_use(const struct ib_result *r, int side, int server, double *total, struct ib_cpu *split)
{
	double v[IB_MAX_ROUNDS], user = 0, sys = 0;
	unsigned n = 0;

	for (unsigned k = 0; k < r->rounds && k < IB_MAX_ROUNDS; k++) {
		const struct ib_use *u = &r->use[side][k];
		double t = server ? u->server : u->client;
		const struct ib_cpu *c = server ? &u->ssplit : &u->csplit;

		if (isnan(r->v[side][k]) || isnan(t))
			continue;
		v[n++] = t;
		if (!isnan(c->user) && !isnan(c->sys)) {
			user += c->user;
			sys += c->sys;
		}
	}
	*total = ib_median(v, n);
	*split = (struct ib_cpu){ NAN, NAN };
	if (n > 0 && user + sys > 0)
		*split = (struct ib_cpu){ *total * user / (user + sys),
					  *total * sys / (user + sys) };
}

struct ib_use
ib_use_of(const struct ib_result *r, int side)
{
	struct ib_use u;

	st_use(r, side, 0, &u.client, &u.csplit);
	st_use(r, side, 1, &u.server, &u.ssplit);
	return u;
}

void
ib_series(const struct ib_result *r, int side, struct vd_series *s)
{
	memset(s, 0, sizeof *s);
	if (r == NULL || r->n[side] == 0)
		return;
	s->n = r->rounds < VD_MAX_ROUNDS ? r->rounds : VD_MAX_ROUNDS;
	for (unsigned k = 0; k < s->n; k++)
		s->v[k] = r->v[side][k];
}

const char *
ib_cpu_per(const struct ib_row *row)
{
	return row->metric == IB_BANDWIDTH ? "MB"
	       : row->metric == IB_ONEWAY  ? "message"
	       : row->metric == IB_CONNECT ? "connection"
					   : "call";
}
