/*
 * idlbench_jsoncheck.c - checks that a file is idlbench's --json output, shape and sense:
 *
 *     idlbench_jsoncheck FILE [TRANSPORT...]
 *
 * The file must parse as JSON and be {"idlbench": string, "machine": {"kernel", "cpu",
 * "cores", "date"}, "config": {...}, "verdict": [...], "results": [...]}, every result
 * carrying exactly the documented keys with the documented types: a metric of latency,
 * oneway, bandwidth or connect with its unit (us, msgs/s, MB/s, connections/s: tls:'s
 * connection rows), or throughput (calls/s) when config.inflight (a number from 1 to 1024) is
 * above 1, min <= median <= max, positive figures, a numeric floor and ratio except on the
 * peers' rows (oncrpc-*, sdbus-*, grpc-*, capnp-*), where both are null and the row names the
 * peer's library (peer) and idlkit's speedup over it; the CPU per call of both sides (cpu,
 * floor_cpu): non-negative, user + system = total, above 0 and not above 10 times the slowest
 * round's time per call (per message, per MB) plus a round's fixed cost shared by its
 * iterations, and no server figure when config.connect names someone else's server. The
 * verdict: for each placement, kind of row and group, the transports in order, the first with x 1
 * and no "after", each other after the one before it with the rounds that order them, and its
 * flags. Each TRANSPORT named must have a latency row (with calls in flight: a throughput row) and
 * a one-way row with a floor, and a place in a verdict; tls its connection rows (handshake,
 * resumed, when config.routines has them) with a floor and a place in a network verdict, and
 * connection rows are tls's alone. Exit 0 when all holds, 1 with a message otherwise. C, not a
 * script: python is not guaranteed where `make check` runs.
 */
#include <config.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum jt {
	J_NULL,
	J_BOOL,
	J_NUM,
	J_STR,
	J_ARR,
	J_OBJ
};

struct jv {
	enum jt t;
	double num;
	char *str; /* J_STR */
	struct jv **kids; /* J_ARR, J_OBJ */
	char **keys; /* J_OBJ */
	size_t n;
};

struct jp {
	const char *s;
	const char *err;
};

static void
jp_ws(struct jp *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static struct jv *jp_value(struct jp *p, int depth);

static char *
jp_string(struct jp *p)
{
	size_t cap = 16, n = 0;
	char *out = malloc(cap);

	if (out == NULL || *p->s != '"')
		goto bad;
	p->s++;
	while (*p->s != '"') {
		char c = *p->s++;

		if (c == '\0' || (unsigned char)c < 0x20)
			goto bad;
		if (c == '\\') {
			c = *p->s++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++)
					if (!isxdigit((unsigned char)*p->s++))
						goto bad;
				c = '?';
			} else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
				goto bad;
			}
		}
		if (n + 2 > cap) {
			char *nb = realloc(out, cap *= 2);

			if (nb == NULL)
				goto bad;
			out = nb;
		}
		out[n++] = c;
	}
	p->s++;
	out[n] = '\0';
	return out;
bad:
	free(out);
	p->err = "bad string";
	return NULL;
}

/* Frees a value and everything under it; NULL is accepted. */
static void
jv_free(struct jv *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jv_free(v->kids[i]);
		if (v->keys != NULL)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->str);
	free(v);
}

/* Appends kid (and key, for an object) to v, which owns both from then on, even on failure. */
static int
jp_push(struct jv *v, struct jv *kid, char *key)
{
	struct jv **nk = realloc(v->kids, (v->n + 1) * sizeof *nk);
	char **nkeys;

	if (nk == NULL)
		goto fail;
	v->kids = nk;
	if (v->t == J_OBJ) {
		if ((nkeys = realloc(v->keys, (v->n + 1) * sizeof *nkeys)) == NULL)
			goto fail;
		v->keys = nkeys;
		v->keys[v->n] = key;
	}
	v->kids[v->n++] = kid;
	return 0;
fail:
	jv_free(kid);
	free(key);
	return -1;
}

static int
jp_container(struct jp *p, struct jv *v, int depth)
{
	char close = v->t == J_OBJ ? '}' : ']';

	p->s++;
	jp_ws(p);
	if (*p->s == close) {
		p->s++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct jv *kid;

		jp_ws(p);
		if (v->t == J_OBJ) {
			if ((key = jp_string(p)) == NULL)
				return -1;
			jp_ws(p);
			if (*p->s++ != ':') {
				free(key);
				p->err = "expected ':'";
				return -1;
			}
		}
		if ((kid = jp_value(p, depth + 1)) == NULL) {
			free(key);
			return -1;
		}
		if (jp_push(v, kid, key) != 0) {
			p->err = "out of memory";
			return -1;
		}
		jp_ws(p);
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s++ == close)
			return 0;
		p->err = "expected ',' or the end of a container";
		return -1;
	}
}

/* Parses one scalar or container into v; v's partial contents are the caller's to free. */
static int
jp_fill(struct jp *p, struct jv *v, int depth)
{
	char *end;

	jp_ws(p);
	if (*p->s == '{' || *p->s == '[') {
		v->t = *p->s == '{' ? J_OBJ : J_ARR;
		return jp_container(p, v, depth);
	}
	if (*p->s == '"') {
		v->t = J_STR;
		return (v->str = jp_string(p)) != NULL ? 0 : -1;
	}
	if (strncmp(p->s, "null", 4) == 0 || strncmp(p->s, "true", 4) == 0) {
		v->t = *p->s == 'n' ? J_NULL : J_BOOL;
		v->num = *p->s == 't';
		p->s += 4;
		return 0;
	}
	if (strncmp(p->s, "false", 5) == 0) {
		v->t = J_BOOL;
		p->s += 5;
		return 0;
	}
	v->t = J_NUM;
	v->num = strtod(p->s, &end);
	if (end == p->s || !(*p->s == '-' || isdigit((unsigned char)*p->s))) {
		p->err = "bad value";
		return -1;
	}
	p->s = end;
	return 0;
}

static struct jv *
jp_value(struct jp *p, int depth)
{
	struct jv *v;

	if (depth > 32) {
		p->err = "too deep";
		return NULL;
	}
	if ((v = calloc(1, sizeof *v)) == NULL) {
		p->err = "out of memory";
		return NULL;
	}
	if (jp_fill(p, v, depth) != 0) {
		jv_free(v);
		return NULL;
	}
	return v;
}

static const struct jv *
jv_get(const struct jv *o, const char *key)
{
	for (size_t i = 0; o != NULL && o->t == J_OBJ && i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return o->kids[i];
	return NULL;
}

static int failures;
/* From config: whether the run timed a user's interface (--defs), interpreted or not. */
static int config_defs, interpreted = -1;
/* config.inflight: the calls in flight of the latency rows (--inflight); config.connect. */
static double config_inflight = 1;
static int config_connect;
/* config.routines: the rows the run picked, which decide whether tls's connection rows must
 * be there. */
static const struct jv *config_routines;

static void
fail(const char *what, size_t i)
{
	if (i == (size_t)-1)
		fprintf(stderr, "idlbench_jsoncheck: %s\n", what);
	else
		fprintf(stderr, "idlbench_jsoncheck: result %zu: %s\n", i, what);
	failures++;
}

static int
is(const struct jv *v, enum jt t)
{
	return v != NULL && v->t == t;
}

static int
is_str(const struct jv *v, const char *s)
{
	return is(v, J_STR) && strcmp(v->str, s) == 0;
}

/* One side's CPU: {"user", "sys", "total"}, non-negative, user + sys = total when both are
 * given, total above 0 (a process that moved messages ran) and within `bound` us per call. */
static int
cpu_side(const struct jv *c, double bound)
{
	const struct jv *u = jv_get(c, "user"), *s = jv_get(c, "sys"), *t = jv_get(c, "total");

	if (!is(c, J_OBJ) || c->n != 3 || !is(t, J_NUM) || !(t->num > 0) || !(t->num <= bound))
		return -1;
	if (is(u, J_NULL) && is(s, J_NULL))
		return 0; /* a kept server's clock: the sum alone */
	if (!is(u, J_NUM) || !is(s, J_NUM) || u->num < 0 || s->num < 0 ||
	    fabs(u->num + s->num - t->num) > 0.01 * t->num + 1e-3)
		return -1;
	return 0;
}

/* A result's cpu or floor_cpu: null, or {"per", "unit", "client", "server"}. */
static void
check_cpu(const struct jv *r, const char *key, size_t i)
{
	static const char *const pers[][2] = { { "latency", "call" },
					       { "throughput", "call" },
					       { "oneway", "message" },
					       { "bandwidth", "MB" },
					       { "connect", "connection" } };
	const struct jv *c = jv_get(r, key), *m = jv_get(r, "metric"), *slow;
	const struct jv *srv = jv_get(c, "server"), *iters;
	double per_op = NAN; /* the time of one call (message, MB) in the slowest round, us */

	if (c == NULL || is(c, J_NULL))
		return;
	slow = jv_get(r, is_str(m, "latency") ? "max" : "min");
	for (size_t k = 0; k < sizeof pers / sizeof pers[0]; k++)
		if (is_str(m, pers[k][0]) && is_str(jv_get(c, "per"), pers[k][1]))
			per_op = k == 0 ? slow->num : 1e6 / slow->num;
	if (!is(c, J_OBJ) || c->n != 4 || isnan(per_op) || !is_str(jv_get(c, "unit"), "us")) {
		fail("cpu: not {per, unit, client, server} with the metric's per and unit us", i);
		return;
	}
	/* Of the floor the JSON has the median only. A process busy on two CPUs at once, its
	 * warm-up slower than its repetitions, a slow repetition that spins: 10 times the
	 * slowest round's time per call is far above the plausible, and a unit wrong by 1000
	 * still fails it. */
	if (strcmp(key, "floor_cpu") == 0 && is(jv_get(r, "floor"), J_NUM))
		per_op = is_str(m, "latency") ? jv_get(r, "floor")->num
					      : 1e6 / jv_get(r, "floor")->num;
	/* A round's CPU also holds what does not scale with its iterations (waking the
	 * other side, the last replies drained, the clock read; a peer program's own
	 * set-up): with 50 one-way messages of 0.2 us each under the sanitizers that fixed
	 * part alone was 2 us a message, and sd-bus's five 64 KiB calls of a loaded test
	 * run went over a bound of 4.4 ms per MB. So the bound adds 2 ms a round, spread
	 * over what its iterations moved: a call or message each, or for the bandwidth
	 * rows at least 64 KiB (1/16 MB) each. */
	iters = jv_get(r, "iterations");
	if (is(iters, J_NUM) && iters->num >= 1)
		per_op = 10 * per_op +
			 2000.0 / (iters->num * (is_str(m, "bandwidth") ? 1.0 / 16 : 1.0));
	else
		per_op = 10 * per_op;
	if (cpu_side(jv_get(c, "client"), per_op) != 0)
		fail("cpu.client: not {user, sys, total}, non-negative, user + sys = total, a "
		     "total above 0 and at most 10 times the time per call",
		     i);
	if (config_connect && !is(srv, J_NULL))
		fail("cpu.server: a figure for someone else's server (--connect)", i);
	else if (!is(srv, J_NULL) && cpu_side(srv, per_op) != 0)
		fail("cpu.server: not null or {user, sys, total} as the client's", i);
	else if (!config_connect && strcmp(key, "cpu") == 0 && !is(srv, J_OBJ))
		fail("cpu.server: no figure, though the server was the run's own", i);
}

/* The keys beyond the 12 every result has: which stubs ran (a row of idlkit's), the peer's
 * library (a peer's row), and the CPU of both sides (every row but the marshaling ones). */
static int
check_keys(const struct jv *r, size_t i)
{
	static const char *const keys[] = { "transport", "routine", "placement", "metric",
					    "unit",	 "median",  "min",	 "max",
					    "floor",	 "ratio",   "rounds",	 "iterations" };
	const struct jv *stubs = jv_get(r, "stubs"), *version = jv_get(r, "peer");
	size_t extra = (stubs != NULL	  ? 3
			: version != NULL ? 2
					  : 0) +
		       (jv_get(r, "cpu") != NULL ? 2 : 0);

	if (!is(r, J_OBJ) || r->n != sizeof keys / sizeof keys[0] + extra ||
	    (jv_get(r, "cpu") != NULL) != (jv_get(r, "floor_cpu") != NULL)) {
		fail("not an object with exactly the 12 documented keys, or those and stubs, "
		     "request_bytes and reply_bytes, or those and peer and speedup, with cpu and "
		     "floor_cpu",
		     i);
		return -1;
	}
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (jv_get(r, keys[k]) == NULL)
			fail(keys[k], i);
	if (stubs != NULL &&
	    (!is(stubs, J_STR) || !is(jv_get(r, "request_bytes"), J_NUM) ||
	     !is(jv_get(r, "reply_bytes"), J_NUM) ||
	     (strcmp(stubs->str, "compiled") != 0 && strcmp(stubs->str, "interpreted") != 0 &&
	      strcmp(stubs->str, "interpreted server") != 0))) {
		fail("stubs must be compiled, interpreted or interpreted server, and the bytes "
		     "numbers",
		     i);
		return -1;
	}
	if (stubs != NULL && interpreted >= 0 && config_defs &&
	    strcmp(stubs->str, interpreted ? "interpreted" : "compiled") != 0)
		fail("a --defs row's stubs are not those config.interpreted says", i);
	return 0;
}

/* The metric, its unit and the figures. */
static int
check_figures(const struct jv *r, size_t i)
{
	static const char *const metrics[][2] = { { "latency", "us" },
						  { "oneway", "msgs/s" },
						  { "bandwidth", "MB/s" },
						  { "throughput", "calls/s" },
						  { "connect", "connections/s" } };
	const struct jv *metric = jv_get(r, "metric"), *unit = jv_get(r, "unit");
	const struct jv *md = jv_get(r, "median"), *mn = jv_get(r, "min"), *mx = jv_get(r, "max");
	const struct jv *tr = jv_get(r, "transport");
	int ok = 0;

	if (!is(tr, J_STR) || !is(jv_get(r, "routine"), J_STR) ||
	    !is(jv_get(r, "placement"), J_STR) || !is(metric, J_STR) || !is(unit, J_STR)) {
		fail("transport, routine, placement, metric and unit must be strings", i);
		return -1;
	}
	for (size_t k = 0; k < sizeof metrics / sizeof metrics[0]; k++)
		ok |= strcmp(metric->str, metrics[k][0]) == 0 &&
		      strcmp(unit->str, metrics[k][1]) == 0;
	if (!ok)
		fail("metric and unit are not one of latency/us, oneway/msgs/s, bandwidth/MB/s, "
		     "throughput/calls/s, connect/connections/s",
		     i);
	/* With calls in flight every call row over a transport is timed in calls per second;
	 * the marshaling rows stay in process, one call at a time. */
	if (ok && strncmp(tr->str, "marshal", 7) != 0 &&
	    ((strcmp(metric->str, "throughput") == 0 && !(config_inflight > 1)) ||
	     (strcmp(metric->str, "latency") == 0 && config_inflight > 1 && !config_defs)))
		fail("a call row's metric is throughput exactly when config.inflight is above 1",
		     i);
	if (!is(md, J_NUM) || !is(mn, J_NUM) || !is(mx, J_NUM) || !(mn->num > 0) ||
	    !(mn->num <= md->num) || !(md->num <= mx->num)) {
		fail("median, min and max must be positive numbers, min <= median <= max", i);
		return -1;
	}
	if (!is(jv_get(r, "rounds"), J_NUM) || !is(jv_get(r, "iterations"), J_NUM) ||
	    jv_get(r, "rounds")->num < 1 || jv_get(r, "iterations")->num < 1)
		fail("rounds and iterations must be numbers >= 1", i);
	return ok ? 0 : -1;
}

static void
check_result(const struct jv *r, size_t i)
{
	const struct jv *tr = jv_get(r, "transport"), *version = jv_get(r, "peer");
	const struct jv *stubs = jv_get(r, "stubs");
	int peer, marshal;

	if (check_keys(r, i) != 0 || check_figures(r, i) != 0)
		return;
	peer = strncmp(tr->str, "oncrpc-", 7) == 0 || strncmp(tr->str, "sdbus-", 6) == 0 ||
	       strncmp(tr->str, "grpc-", 5) == 0 || strncmp(tr->str, "capnp-", 6) == 0;
	marshal = strcmp(tr->str, "marshal") == 0 || strcmp(tr->str, "marshal-xdr") == 0;
	if (peer && (!is(version, J_STR) || version->str[0] == '\0' ||
		     !(is(jv_get(r, "speedup"), J_NUM) || is(jv_get(r, "speedup"), J_NULL))))
		fail("a peer's row must name its library (peer) and have a speedup, a number or "
		     "null",
		     i);
	if (!peer && version != NULL)
		fail("a row of idlkit's has a peer", i);
	if (!peer && !marshal && strcmp(tr->str, "udp-sendto") != 0 && stubs == NULL)
		fail("a row of idlkit's lacks stubs, request_bytes and reply_bytes", i);
	if (stubs != NULL &&
	    (jv_get(r, "request_bytes")->num < 24 || ((is_str(jv_get(r, "metric"), "latency") ||
						       is_str(jv_get(r, "metric"), "throughput")) &&
						      jv_get(r, "reply_bytes")->num < 24)))
		fail("a request, and a call's reply, have at least the 24-byte header", i);
	if (peer && (!is(jv_get(r, "floor"), J_NULL) || !is(jv_get(r, "ratio"), J_NULL)))
		fail("a peer row must have a null floor and ratio", i);
	if (!peer && !is(jv_get(r, "floor"), J_NUM) && !is(jv_get(r, "floor"), J_NULL))
		fail("floor must be a number or null", i);
	if (!peer && !is(jv_get(r, "ratio"), J_NUM) && !is(jv_get(r, "ratio"), J_NULL))
		fail("ratio must be a number or null", i);
	if (!marshal && !is(jv_get(r, "cpu"), J_OBJ))
		fail("a row over a transport has no CPU figures (cpu)", i);
	if (!marshal && is(jv_get(r, "floor"), J_NUM) && !is(jv_get(r, "floor_cpu"), J_OBJ))
		fail("a row with a floor has no CPU figures of its floor (floor_cpu)", i);
	check_cpu(r, "cpu", i);
	check_cpu(r, "floor_cpu", i);
}

/* One transport of a verdict's order, at position k. */
static void
check_rank(const struct jv *o, size_t k, const struct jv *prev)
{
	const struct jv *after = jv_get(o, "after"), *x = jv_get(o, "x");

	if (!is(o, J_OBJ) || o->n != 8 || !is(jv_get(o, "transport"), J_STR) ||
	    !is(jv_get(o, "rows"), J_NUM) || !is(x, J_NUM) || !is(jv_get(o, "lowest"), J_NUM) ||
	    !is(jv_get(o, "highest"), J_NUM) || !is(jv_get(o, "spins"), J_BOOL) ||
	    !(is(jv_get(o, "cpu"), J_NUM) || is(jv_get(o, "cpu"), J_NULL))) {
		fail("verdict: a transport is not {transport, rows, x, lowest, highest, cpu, "
		     "spins, after}",
		     (size_t)-1);
		return;
	}
	if (k == 0 && (!is(after, J_NULL) || x->num != 1))
		fail("verdict: the first transport has an after, or x other than 1", (size_t)-1);
	if (k > 0 &&
	    (!is(after, J_OBJ) || after->n != 5 || !is(jv_get(after, "transport"), J_STR) ||
	     strcmp(jv_get(after, "transport")->str, jv_get(prev, "transport")->str) != 0 ||
	     !is(jv_get(after, "faster_rounds"), J_NUM) || !is(jv_get(after, "rounds"), J_NUM) ||
	     !is(jv_get(after, "holds"), J_BOOL) ||
	     jv_get(after, "faster_rounds")->num > jv_get(after, "rounds")->num))
		fail("verdict: a transport's after is not {transport: the one before it, "
		     "faster_rounds <= rounds, ratio, holds}",
		     (size_t)-1);
}

static void
check_verdict(const struct jv *v)
{
	static const char *const kinds[] = { "calls", "in flight", "one-way", "bulk" };

	if (!is(v, J_ARR)) {
		fail("verdict is not an array", (size_t)-1);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct jv *j = v->kids[i], *order = jv_get(j, "order");
		const struct jv *flags = jv_get(j, "flags"), *g = jv_get(j, "group");
		int kind = 0;

		for (size_t k = 0; k < 4; k++)
			kind |= is_str(jv_get(j, "kind"), kinds[k]);
		if (!is(j, J_OBJ) || j->n != 6 || !is(jv_get(j, "placement"), J_STR) || !kind ||
		    !(is_str(g, "local") || is_str(g, "network")) ||
		    !is(jv_get(j, "unit"), J_STR) || !is(order, J_ARR) || order->n == 0 ||
		    !is(flags, J_ARR)) {
			fail("verdict: a judgement is not {placement, kind, group, unit, order, "
			     "flags}",
			     (size_t)-1);
			continue;
		}
		for (size_t k = 0; k < order->n; k++)
			check_rank(order->kids[k], k, k > 0 ? order->kids[k - 1] : NULL);
		for (size_t k = 0; k < flags->n; k++)
			if (!is(flags->kids[k], J_OBJ) || flags->kids[k]->n != 8 ||
			    !is(jv_get(flags->kids[k], "flag"), J_STR) ||
			    !is(jv_get(flags->kids[k], "cause"), J_STR))
				fail("verdict: a flag is not {flag, transport, routine, side, "
				     "value, "
				     "lowest, highest, cause}",
				     (size_t)-1);
	}
}

/* Whether the run picked the row named name (config.routines). */
static int
picked(const char *name)
{
	for (size_t i = 0; config_routines != NULL && i < config_routines->n; i++)
		if (is_str(config_routines->kids[i], name))
			return 1;
	return 0;
}

/* Whether results hold a row of transport name, metric and (unless NULL) routine, with a
 * floor and ratio. */
static int
has_row(const struct jv *results, const char *name, const char *metric, const char *routine)
{
	for (size_t i = 0; i < results->n; i++) {
		const struct jv *r = results->kids[i];

		if (strcmp(jv_get(r, "transport")->str, name) == 0 &&
		    strcmp(jv_get(r, "metric")->str, metric) == 0 &&
		    (routine == NULL || is_str(jv_get(r, "routine"), routine)) &&
		    is(jv_get(r, "floor"), J_NUM) && is(jv_get(r, "ratio"), J_NUM))
			return 1;
	}
	return 0;
}

/* The transport must have a latency row (with calls in flight: a throughput row) and a one-way
 * row, each with a floor and ratio, and be judged in a verdict; tls its two connection rows
 * too (a full handshake, a resumed one, each with the raw OpenSSL floor), and a place among
 * the network transports, where connection rows are no other transport's. */
static void
check_transport(const struct jv *results, const struct jv *verdict, const char *name)
{
	const char *const need[] = { config_inflight > 1 ? "throughput" : "latency", "oneway" };
	const char *const conns[] = { "handshake", "resumed" };
	int tls = strcmp(name, "tls") == 0;
	char msg[160];
	int judged = 0;

	for (size_t k = 0; k < 2; k++)
		if (!has_row(results, name, need[k], NULL)) {
			snprintf(msg, sizeof msg, "no %s row with a floor for transport %s",
				 need[k], name);
			fail(msg, (size_t)-1);
		}
	for (size_t k = 0; k < 2 && tls && !config_connect; k++)
		if (picked(conns[k]) && !has_row(results, name, "connect", conns[k])) {
			snprintf(msg, sizeof msg, "no %s row (connect) with a floor for tls",
				 conns[k]);
			fail(msg, (size_t)-1);
		}
	for (size_t i = 0; i < results->n; i++)
		if (is_str(jv_get(results->kids[i], "metric"), "connect") &&
		    !is_str(jv_get(results->kids[i], "transport"), "tls"))
			fail("a connection row of another transport than tls", i);
	for (size_t i = 0; i < verdict->n; i++) {
		const struct jv *order = jv_get(verdict->kids[i], "order");
		int net = is_str(jv_get(verdict->kids[i], "group"), "network");

		for (size_t k = 0; order != NULL && k < order->n; k++)
			judged |=
				is_str(jv_get(order->kids[k], "transport"), name) && (net || !tls);
	}
	/* The interpreted server beside its compiled twin is a column of the tables only. */
	if (!judged && !(strlen(name) > 4 && strcmp(name + strlen(name) - 4, "-dyn") == 0)) {
		snprintf(msg, sizeof msg, "transport %s is in no verdict", name);
		fail(msg, (size_t)-1);
	}
}

static void
check_config(const struct jv *c)
{
	const struct jv *d = jv_get(c, "defs"), *im = jv_get(c, "impl");
	const struct jv *in = jv_get(c, "interpreted"), *fl = jv_get(c, "inflight");
	const struct jv *sv = jv_get(c, "servers"), *su = jv_get(c, "setup");

	if (!(is(d, J_STR) || is(d, J_NULL)) || !(is(im, J_STR) || is(im, J_NULL)) ||
	    !is(in, J_BOOL))
		fail("config lacks defs and impl (strings or null) or interpreted (a boolean)",
		     (size_t)-1);
	else {
		config_defs = is(d, J_STR);
		interpreted = (int)in->num;
	}
	if (!is(fl, J_NUM) || !(fl->num >= 1 && fl->num <= 1024))
		fail("config lacks inflight, a number from 1 to 1024", (size_t)-1);
	else
		config_inflight = fl->num;
	config_connect = is(jv_get(c, "connect"), J_STR);
	config_routines = jv_get(c, "routines");
	if (!is(su, J_ARR) ||
	    !(is_str(sv, "per cell") || is_str(sv, "per transport and round") ||
	      is_str(sv, "connect")) ||
	    is_str(sv, "connect") != config_connect ||
	    is_str(sv, "per transport and round") != is(im, J_STR) * !config_connect)
		fail("config lacks setup (a list) or servers (per cell; per transport and round, "
		     "with impl; connect, with connect)",
		     (size_t)-1);
}

static char *
read_file(const char *path)
{
	char *text = NULL;
	long len;
	FILE *f = fopen(path, "r");

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0 || (text = calloc(1, (size_t)len + 1)) == NULL ||
	    fread(text, 1, (size_t)len, f) != (size_t)len) {
		perror(path);
		free(text);
		text = NULL;
	}
	if (f != NULL)
		fclose(f);
	return text;
}

static void
check_top(const struct jv *top)
{
	static const char *const mkeys[] = { "kernel", "cpu", "cores", "date" };
	const struct jv *m = jv_get(top, "machine");

	if (!is(top, J_OBJ) || top->n != 5 || !is(jv_get(top, "idlbench"), J_STR) ||
	    !is(jv_get(top, "config"), J_OBJ) || !is(jv_get(top, "results"), J_ARR) ||
	    jv_get(top, "verdict") == NULL) {
		fail("the top level is not {idlbench, machine, config, verdict, results}",
		     (size_t)-1);
		return;
	}
	if (!is(m, J_OBJ) || m->n != 4)
		fail("machine is not {kernel, cpu, cores, date}", (size_t)-1);
	for (size_t k = 0; k < 4; k++)
		if (!is(jv_get(m, mkeys[k]), k == 2 ? J_NUM : J_STR))
			fail("machine lacks a field or has it with the wrong type", (size_t)-1);
	check_config(jv_get(top, "config"));
	check_verdict(jv_get(top, "verdict"));
}

int
main(int argc, char **argv)
{
	struct jp p = { NULL, NULL };
	const struct jv *results;
	struct jv *top;
	char *text;

	if (argc < 2) {
		fprintf(stderr, "usage: idlbench_jsoncheck FILE [TRANSPORT...]\n");
		return 2;
	}
	if ((text = read_file(argv[1])) == NULL)
		return 1;
	p.s = text;
	top = jp_value(&p, 0);
	if (top != NULL) {
		jp_ws(&p);
		if (*p.s != '\0')
			p.err = "text after the value";
	}
	if (top == NULL || p.err != NULL) {
		fprintf(stderr, "idlbench_jsoncheck: %s: not JSON: %s at offset %ld\n", argv[1],
			p.err ? p.err : "?", (long)(p.s - text));
		jv_free(top);
		free(text);
		return 1;
	}
	check_top(top);
	results = jv_get(top, "results");
	if (failures == 0 && results->n == 0)
		fail("no results", (size_t)-1);
	for (size_t i = 0; failures == 0 && i < results->n; i++)
		check_result(results->kids[i], i);
	for (int a = 2; failures == 0 && a < argc; a++)
		check_transport(results, jv_get(top, "verdict"), argv[a]);
	if (failures == 0)
		printf("idlbench_jsoncheck: %s: %zu results, shape ok\n", argv[1], results->n);
	jv_free(top);
	free(text);
	return failures == 0 ? 0 : 1;
}
