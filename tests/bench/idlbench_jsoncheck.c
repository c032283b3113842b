/*
 * idlbench_jsoncheck.c - checks that a file is idlbench's --json output, shape and sense:
 *
 *     idlbench_jsoncheck FILE [TRANSPORT...]
 *
 * The file must parse as JSON and be {"idlbench": string, "machine": {"kernel", "cpu",
 * "cores", "date"}, "config": {...}, "results": [...]}, every result carrying exactly the
 * documented keys with the documented types: a metric of latency, oneway or bandwidth with
 * its unit (us, msgs/s, MB/s), or throughput (calls/s) when config.inflight (a number from
 * 1 to 1024) is above 1, min <= median <= max, positive figures, a numeric floor and
 * ratio except on the peers' rows (oncrpc-*, sdbus-*, grpc-*, capnp-*), where both are
 * null and the row names the peer's library (peer) and idlkit's speedup over it. Each
 * TRANSPORT named must have a latency row (with calls in flight: a throughput row) and a
 * one-way row with a floor. Exit 0 when all holds, 1
 * with a message otherwise. C, not a script: python is not guaranteed where `make check` runs.
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
/* config.inflight: the calls in flight of the latency rows (--inflight). */
static double config_inflight = 1;

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

static void
check_result(const struct jv *r, size_t i)
{
	static const char *const keys[] = { "transport", "routine", "placement", "metric",
					    "unit",	 "median",  "min",	 "max",
					    "floor",	 "ratio",   "rounds",	 "iterations" };
	static const char *const metrics[][2] = { { "latency", "us" },
						  { "oneway", "msgs/s" },
						  { "bandwidth", "MB/s" },
						  { "throughput", "calls/s" } };
	const struct jv *metric = jv_get(r, "metric"), *unit = jv_get(r, "unit");
	const struct jv *md = jv_get(r, "median"), *mn = jv_get(r, "min"), *mx = jv_get(r, "max");
	const struct jv *tr = jv_get(r, "transport");
	int peer, ok = 0;

	const struct jv *stubs = jv_get(r, "stubs"), *version = jv_get(r, "peer");
	size_t extra = stubs != NULL ? 3 : version != NULL ? 2 : 0;

	/* A row of idlkit's over a transport also says which stubs ran and the bytes its
	 * request and reply had (what the floor moves too); a peer's row says the peer's
	 * library and version and how many times faster idlkit was; the marshaling row
	 * neither. */
	if (!is(r, J_OBJ) || r->n != sizeof keys / sizeof keys[0] + extra) {
		fail("not an object with exactly the 12 documented keys, or those and stubs, "
		     "request_bytes and reply_bytes, or those and peer and speedup",
		     i);
		return;
	}
	if (stubs != NULL &&
	    (!is(stubs, J_STR) || !is(jv_get(r, "request_bytes"), J_NUM) ||
	     !is(jv_get(r, "reply_bytes"), J_NUM) ||
	     (strcmp(stubs->str, "compiled") != 0 && strcmp(stubs->str, "interpreted") != 0 &&
	      strcmp(stubs->str, "interpreted server") != 0))) {
		fail("stubs must be compiled, interpreted or interpreted server, and the bytes "
		     "numbers",
		     i);
		return;
	}
	if (stubs != NULL && interpreted >= 0 && config_defs &&
	    strcmp(stubs->str, interpreted ? "interpreted" : "compiled") != 0)
		fail("a --defs row's stubs are not those config.interpreted says", i);
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (jv_get(r, keys[k]) == NULL)
			fail(keys[k], i);
	if (!is(tr, J_STR) || !is(jv_get(r, "routine"), J_STR) ||
	    !is(jv_get(r, "placement"), J_STR) || !is(metric, J_STR) || !is(unit, J_STR)) {
		fail("transport, routine, placement, metric and unit must be strings", i);
		return;
	}
	for (size_t k = 0; k < 4; k++)
		ok |= strcmp(metric->str, metrics[k][0]) == 0 &&
		      strcmp(unit->str, metrics[k][1]) == 0;
	if (!ok)
		fail("metric and unit are not one of latency/us, oneway/msgs/s, bandwidth/MB/s, "
		     "throughput/calls/s",
		     i);
	/* With calls in flight every call row over a transport is timed in calls per second;
	 * the marshaling rows stay in process, one call at a time. */
	if (ok && strncmp(tr->str, "marshal", 7) != 0 &&
	    ((strcmp(metric->str, "throughput") == 0 && !(config_inflight > 1)) ||
	     (strcmp(metric->str, "latency") == 0 && config_inflight > 1)))
		fail("a call row's metric is throughput exactly when config.inflight is above 1",
		     i);
	if (!is(md, J_NUM) || !is(mn, J_NUM) || !is(mx, J_NUM) || !(mn->num > 0) ||
	    !(mn->num <= md->num) || !(md->num <= mx->num))
		fail("median, min and max must be positive numbers, min <= median <= max", i);
	if (!is(jv_get(r, "rounds"), J_NUM) || !is(jv_get(r, "iterations"), J_NUM) ||
	    jv_get(r, "rounds")->num < 1 || jv_get(r, "iterations")->num < 1)
		fail("rounds and iterations must be numbers >= 1", i);
	peer = strncmp(tr->str, "oncrpc-", 7) == 0 || strncmp(tr->str, "sdbus-", 6) == 0 ||
	       strncmp(tr->str, "grpc-", 5) == 0 || strncmp(tr->str, "capnp-", 6) == 0;
	if (peer && (!is(version, J_STR) || version->str[0] == '\0' ||
		     !(is(jv_get(r, "speedup"), J_NUM) || is(jv_get(r, "speedup"), J_NULL))))
		fail("a peer's row must name its library (peer) and have a speedup, a number or "
		     "null",
		     i);
	if (!peer && version != NULL)
		fail("a row of idlkit's has a peer", i);
	if (!peer && strcmp(tr->str, "marshal") != 0 && strcmp(tr->str, "marshal-xdr") != 0 &&
	    strcmp(tr->str, "udp-sendto") != 0 && stubs == NULL)
		fail("a row of idlkit's lacks stubs, request_bytes and reply_bytes", i);
	if (stubs != NULL &&
	    (jv_get(r, "request_bytes")->num < 24 ||
	     ((strcmp(metric->str, "latency") == 0 || strcmp(metric->str, "throughput") == 0) &&
	      jv_get(r, "reply_bytes")->num < 24)))
		fail("a request, and a call's reply, have at least the 24-byte header", i);
	if (peer && (!is(jv_get(r, "floor"), J_NULL) || !is(jv_get(r, "ratio"), J_NULL)))
		fail("a peer row must have a null floor and ratio", i);
	if (!peer && !is(jv_get(r, "floor"), J_NUM) && !is(jv_get(r, "floor"), J_NULL))
		fail("floor must be a number or null", i);
	if (!peer && !is(jv_get(r, "ratio"), J_NUM) && !is(jv_get(r, "ratio"), J_NULL))
		fail("ratio must be a number or null", i);
}

/* The transport must have a latency row (with calls in flight: a throughput row) and a one-way
 * row, each with a floor and ratio. */
static void
check_transport(const struct jv *results, const char *name)
{
	const char *const need[] = { config_inflight > 1 ? "throughput" : "latency", "oneway" };
	char msg[160];

	for (size_t k = 0; k < 2; k++) {
		int found = 0;

		for (size_t i = 0; i < results->n && !found; i++) {
			const struct jv *r = results->kids[i];

			found = strcmp(jv_get(r, "transport")->str, name) == 0 &&
				strcmp(jv_get(r, "metric")->str, need[k]) == 0 &&
				is(jv_get(r, "floor"), J_NUM) && is(jv_get(r, "ratio"), J_NUM);
		}
		if (!found) {
			snprintf(msg, sizeof msg, "no %s row with a floor for transport %s",
				 need[k], name);
			fail(msg, (size_t)-1);
		}
	}
}

int
main(int argc, char **argv)
{
	static const char *const mkeys[] = { "kernel", "cpu", "cores", "date" };
	struct jp p = { NULL, NULL };
	const struct jv *m, *results;
	struct jv *top;
	char *text;
	long len;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: idlbench_jsoncheck FILE [TRANSPORT...]\n");
		return 2;
	}
	if ((f = fopen(argv[1], "r")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (text = calloc(1, (size_t)len + 1)) == NULL ||
	    fread(text, 1, (size_t)len, f) != (size_t)len) {
		perror(argv[1]);
		return 1;
	}
	fclose(f);
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
	if (!is(top, J_OBJ) || top->n != 4 || !is(jv_get(top, "idlbench"), J_STR) ||
	    !is(jv_get(top, "config"), J_OBJ) || !is(jv_get(top, "results"), J_ARR))
		fail("the top level is not {idlbench, machine, config, results}", (size_t)-1);
	m = jv_get(top, "machine");
	if (!is(m, J_OBJ) || m->n != 4)
		fail("machine is not {kernel, cpu, cores, date}", (size_t)-1);
	for (size_t k = 0; k < 4; k++)
		if (!is(jv_get(m, mkeys[k]), k == 2 ? J_NUM : J_STR))
			fail("machine lacks a field or has it with the wrong type", (size_t)-1);
	{
		const struct jv *c = jv_get(top, "config"), *d = jv_get(c, "defs");
		const struct jv *im = jv_get(c, "impl"), *in = jv_get(c, "interpreted");
		const struct jv *fl = jv_get(c, "inflight");

		if (!(is(d, J_STR) || is(d, J_NULL)) || !(is(im, J_STR) || is(im, J_NULL)) ||
		    !is(in, J_BOOL))
			fail("config lacks defs and impl (strings or null) or interpreted (a "
			     "boolean)",
			     (size_t)-1);
		else {
			config_defs = is(d, J_STR);
			interpreted = (int)in->num;
		}
		if (!is(fl, J_NUM) || !(fl->num >= 1 && fl->num <= 1024))
			fail("config lacks inflight, a number from 1 to 1024", (size_t)-1);
		else
			config_inflight = fl->num;
	}
	results = jv_get(top, "results");
	if (failures == 0 && results->n == 0)
		fail("no results", (size_t)-1);
	for (size_t i = 0; failures == 0 && i < results->n; i++)
		check_result(results->kids[i], i);
	for (int a = 2; failures == 0 && a < argc; a++)
		check_transport(results, argv[a]);
	if (failures == 0)
		printf("idlbench_jsoncheck: %s: %zu results, shape ok\n", argv[1], results->n);
	jv_free(top);
	free(text);
	return failures == 0 ? 0 : 1;
}
