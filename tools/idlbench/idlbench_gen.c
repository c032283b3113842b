/*
 * idlbench_gen.c - the C that idlbench compiles beside the user's generated stubs, layer 2
 * (ib_iface.h):
 *
 *   the calls   one function per routine that a row calls, `ib_call_N(port, values)`, which
 *               calls the compiled client stub with the row's values (wire form, made by
 *               idlbench_defs.c) converted to the stub's C parameters, and releases what the
 *               reply gave the caller, as the user's program would; for a routine also
 *               `ib_acall_N(port, values, ctx)`, the same through its asynchronous stub,
 *               whose done function releases what the reply gave and calls
 *               `ib_async_done(ctx, kr)` (a hook of client.so's that the cells set);
 *   the null    every server routine answering KERN_SUCCESS with its out arguments zeroed
 *   routines    and empty, so that a run without --impl times the messaging alone.
 *
 * Both sides' parameter lists are the ones the compiler's emitter writes into the generated
 * headers (emit_param_item(), read back item by item), so they cannot disagree with the
 * stubs; what each parameter is comes from the middle end's facts of its argument
 * (idlc/middle.h). A parameter's role is found by its name: the argument's own, or the
 * argument's name with Poly, Cnt or Dealloc after it. The asynchronous stub's and its done
 * function's parameter lists are read from the generated header itself, which declares them.
 *
 * It knows the interface (the user's calls) and the compiler's emitter; it must not know
 * columns, cells, floors, runs or reports.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "ib_iface.h"

enum gen_role {
	GEN_VALUE = 0,
	GEN_POLY,
	GEN_CNT,
	GEN_DEALLOC,
	GEN_OTHER, /* SCopy, a server's reply handle, msgseqno ... */
};

struct gen_param {
	char type[160]; /* "int *", "big_t", "mach_msg_type_number_t *" */
	char name[96];
	const struct idlc_arg *arg; /* the argument it belongs to */
	enum gen_role role;
	int by_ref; /* the type is a pointer the callee writes through */
};

#define GEN_MAX_PARAMS 256

/* The argument's index in its routine's descriptor row (the request port included). */
static unsigned
gen_index(const struct idlc_routine *rt, const struct idlc_arg *a)
{
	return (unsigned)(a->row - rt->row->args);
}

static const char *
gen_wire_ctype(const struct idlc_arg *a)
{
	const struct idl_arg_desc *d = a->row;
	int s = (d->flags & IDL_ARGF_SIGNED) != 0;

	switch (d->wire_type) {
	case IDL_WT_INT8:
		return s ? "int8_t" : "uint8_t";
	case IDL_WT_INT16:
		return s ? "int16_t" : "uint16_t";
	case IDL_WT_INT32:
		return s ? "int32_t" : "uint32_t";
	case IDL_WT_INT64:
		return s ? "int64_t" : "uint64_t";
	case IDL_WT_BOOLEAN:
		return "int32_t";
	case IDL_WT_CHAR:
		return "char";
	case IDL_WT_REAL32:
		return "float";
	case IDL_WT_REAL64:
		return "double";
	default:
		return "uint8_t";
	}
}

/* Splits one emitted parameter ("int *sum") into its type and name. */
static int
gen_split(const char *item, size_t len, struct gen_param *p)
{
	size_t end = len, start;

	while (end > 0 && (item[end - 1] == ' ' || item[end - 1] == '\t' || item[end - 1] == '\n'))
		end--;
	start = end;
	while (start > 0 &&
	       (item[start - 1] == '_' || (item[start - 1] >= '0' && item[start - 1] <= '9') ||
		(item[start - 1] >= 'a' && item[start - 1] <= 'z') ||
		(item[start - 1] >= 'A' && item[start - 1] <= 'Z')))
		start--;
	while (len > 0 && (*item == ' ' || *item == '\t' || *item == '\n'))
		item++, start--, end--, len--;
	if (start == end || start == 0 || end - start >= sizeof p->name || start >= sizeof p->type)
		return -1;
	memcpy(p->name, item + start, end - start);
	p->name[end - start] = '\0';
	memcpy(p->type, item, start);
	while (start > 0 && (p->type[start - 1] == ' ' || p->type[start - 1] == '\t'))
		start--;
	p->type[start] = '\0';
	p->by_ref = start > 0 && p->type[start - 1] == '*';
	return 0;
}

/* What a parameter is, by its name. */
static void
gen_role(const struct idlc_routine *rt, struct gen_param *p)
{
	static const struct {
		const char *suffix;
		enum gen_role role;
	} companions[] = { { "Poly", GEN_POLY }, { "Cnt", GEN_CNT }, { "Dealloc", GEN_DEALLOC } };

	p->arg = NULL;
	p->role = GEN_OTHER;
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (strcmp(a->name, p->name) == 0) {
			p->arg = a;
			p->role = GEN_VALUE;
			return;
		}
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		size_t n = strlen(a->name);

		if (strncmp(p->name, a->name, n) != 0)
			continue;
		for (size_t k = 0; k < sizeof companions / sizeof companions[0]; k++)
			if (strcmp(p->name + n, companions[k].suffix) == 0) {
				p->arg = a;
				p->role = companions[k].role;
				return;
			}
	}
}

/* The parameters of a routine's function on one side, as the generated header declares
 * them. Returns how many, or -1. */
static int
gen_params(struct idlc_ctx *ctx, const struct idlc_routine *rt, enum emit_side side,
	   struct gen_param *out, size_t max)
{
	struct strbuf sb = STRBUF_INIT;
	struct emit_out o;
	const char *text, *p;
	size_t n = 0;

	emit_init(&o, ctx, idlc_module(ctx), side == EMIT_USER ? IDLC_OUT_HEADER : IDLC_OUT_SHEADER,
		  &sb);
	/* The unit separator cannot occur in a C type: the items split back exactly. */
	emit_list(&o, rt->args, emit_param_pred, emit_param_item, &side, "\x1f", "", "");
	if (sb.failed) {
		strbuf_fini(&sb);
		return -1;
	}
	text = strbuf_str(&sb);
	for (p = text; *p != '\0' && n < max;) {
		size_t len = strcspn(p, "\x1f");

		if (gen_split(p, len, &out[n]) != 0) {
			strbuf_fini(&sb);
			return -1;
		}
		gen_role(rt, &out[n]);
		n++;
		p += len;
		if (*p == '\x1f')
			p++;
	}
	strbuf_fini(&sb);
	return (int)n;
}

/* The type a pointer parameter points to: "int *" -> "int". */
static const char *
gen_pointee(const struct gen_param *p, char *buf, size_t len)
{
	size_t n = strlen(p->type);

	if (n > 0 && p->type[n - 1] == '*')
		n--;
	while (n > 0 && p->type[n - 1] == ' ')
		n--;
	snprintf(buf, len, "%.*s", (int)n, p->type);
	return buf;
}

static unsigned
gen_disposition(const struct idlc_arg *a)
{
	return a->row->disposition != 0 ? a->row->disposition : 19; /* MACH_MSG_TYPE_COPY_SEND */
}

/* Bytes of an argument's inline data at its bound (fixed arrays: all of it). */
static uint64_t
gen_bytes(const struct idlc_arg *a)
{
	uint64_t count = a->row->count != 0 ? a->row->count : 1;

	if (idlc_is(a, IDLC_AK_PORTS))
		return count * sizeof(void *);
	return count * a->row->elem_size;
}

/* ---- The client's calls ---- */

struct gen_call {
	struct strbuf *decl; /* locals */
	struct strbuf *pre; /* before the call: values into locals */
	struct strbuf *args; /* the stub's arguments */
	struct strbuf *post; /* after a successful call: what the reply gave, released */
	const struct idlc_routine *rt;
	const char *stub; /* the client stub's name */
	const char *why; /* why the routine cannot be called, when it cannot */
};

/* The count local of the argument whose count `a` travels with. */
static unsigned
gen_count_owner(const struct idlc_routine *rt, const struct idlc_arg *a)
{
	return gen_index(rt, idlc_count_owner(a));
}

static void
gen_value_in(struct gen_call *g, const struct gen_param *p, unsigned i)
{
	const struct idlc_arg *a = p->arg;

	if (a->dir == IDL_DIR_REQUESTPORT)
		strbuf_printf(g->args, "(%s)ib_port", p->type);
	else if (a->rtype->arg_kind == IDL_ARG_PORT)
		strbuf_printf(g->args, "(%s) * (const idl_port_t *)ib_v[%u].data", p->type, i);
	else if (idlc_is(a, IDLC_AK_RECORD)) {
		strbuf_printf(g->decl, "\t%s ib_l%u;\n", p->type, i);
		strbuf_printf(g->pre, "\tmemcpy(&ib_l%u, ib_v[%u].data, sizeof ib_l%u);\n", i, i,
			      i);
		strbuf_printf(g->args, "ib_l%u", i);
	} else if (a->rtype->arg_kind == IDL_ARG_SCALAR)
		strbuf_printf(g->args, "(%s) * (const %s *)ib_v[%u].data", p->type,
			      gen_wire_ctype(a), i);
	else
		strbuf_printf(g->args, "(void *)ib_v[%u].data", i);
}

/* An out or inout value: what the stub writes into, and what is released after it. */
static void
gen_value_out(struct gen_call *g, const struct gen_param *p, unsigned i)
{
	const struct idlc_arg *a = p->arg;
	enum idl_arg_kind k = a->rtype->arg_kind;
	int inout = idlc_is(a, IDLC_AK_REQUEST);
	char pt[160];

	gen_pointee(p, pt, sizeof pt);
	if (k == IDL_ARG_OOL && !idlc_is(a, IDLC_AK_INLINE_PORTS)) {
		/* Memory the reply gives the caller: freed as the caller's own. */
		const char *n;
		char cnt[32];

		strbuf_printf(g->decl, "\t%s ib_l%u;\n", pt, i);
		strbuf_printf(g->pre, "\tmemset(&ib_l%u, 0, sizeof ib_l%u);\n", i, i);
		strbuf_printf(g->args, "&ib_l%u", i);
		if (idlc_is(a, IDLC_AK_COUNTED))
			snprintf(cnt, sizeof cnt, "ib_c%u", gen_count_owner(g->rt, a));
		else
			snprintf(cnt, sizeof cnt, "%" PRIu32 "u", a->row->count);
		n = cnt;
		if (idlc_is(a, IDLC_AK_PORTS)) {
			strbuf_printf(g->post,
				      "\tfor (mach_msg_type_number_t ib_k = 0; ib_k < %s; ib_k++)\n"
				      "\t\tidl_port_close(((idl_port_t *)(void *)ib_l%u)[ib_k]);\n"
				      "\tidl_ool_free((void *)ib_l%u, (size_t)%s * "
				      "sizeof(idl_port_t));\n",
				      n, i, i, n);
		} else {
			strbuf_printf(g->post,
				      "\tidl_ool_free((void *)ib_l%u, (size_t)%s * %" PRIu32 ");\n",
				      i, n, a->row->elem_size);
		}
		return;
	}
	if (k == IDL_ARG_PORT ||
	    (p->by_ref && (k == IDL_ARG_SCALAR || idlc_is(a, IDLC_AK_RECORD)))) {
		strbuf_printf(g->decl, "\t%s ib_l%u;\n", pt, i);
		if (inout && idlc_is(a, IDLC_AK_RECORD))
			strbuf_printf(g->pre, "\tmemcpy(&ib_l%u, ib_v[%u].data, sizeof ib_l%u);\n",
				      i, i, i);
		else if (inout)
			strbuf_printf(g->pre, "\tib_l%u = (%s) * (const %s *)ib_v[%u].data;\n", i,
				      pt, gen_wire_ctype(a), i);
		else
			strbuf_printf(g->pre, "\tmemset(&ib_l%u, 0, sizeof ib_l%u);\n", i, i);
		strbuf_printf(g->args, "&ib_l%u", i);
		if (k == IDL_ARG_PORT)
			strbuf_printf(g->post, "\tidl_port_close((idl_port_t)ib_l%u);\n", i);
		return;
	}
	/* Inline arrays and strings, and inline arrays of ports: a buffer at the bound. */
	strbuf_printf(g->decl, "\tstatic uint64_t ib_b%u[%" PRIu64 "];\n", i, gen_bytes(a) / 8 + 1);
	if (inout)
		strbuf_printf(g->pre,
			      "\tmemcpy(ib_b%u, ib_v[%u].data, (size_t)ib_v[%u].count * %" PRIu32
			      ");\n",
			      i, i, i, a->row->elem_size);
	strbuf_printf(g->args, "(void *)ib_b%u", i);
	if (idlc_is(a, IDLC_AK_PORTS)) {
		char cnt[32];

		if (idlc_is(a, IDLC_AK_COUNTED))
			snprintf(cnt, sizeof cnt, "ib_c%u", gen_count_owner(g->rt, a));
		else
			snprintf(cnt, sizeof cnt, "%" PRIu32 "u", a->row->count);
		strbuf_printf(g->post,
			      "\tfor (mach_msg_type_number_t ib_k = 0; ib_k < %s; ib_k++)\n"
			      "\t\tidl_port_close(((idl_port_t *)(void *)ib_b%u)[ib_k]);\n",
			      cnt, i);
	}
}

static void
gen_param_user(struct gen_call *g, const struct gen_param *p)
{
	const struct idlc_arg *a = p->arg;
	unsigned i = a != NULL ? gen_index(g->rt, a) : 0;
	char pt[160];

	if (a == NULL) {
		g->why = "a parameter idlbench does not know";
		return;
	}
	switch (p->role) {
	case GEN_VALUE:
		if (idlc_is(a, IDLC_AK_REPLY_HANDLE)) {
			g->why = "a reply port";
		} else if (idlc_is(a, IDLC_AK_OVERWRITE)) {
			g->why = "out-of-line data with overwrite";
		} else if (idlc_is(a, IDLC_AK_TOKEN)) {
			strbuf_printf(g->decl, "\tstruct idl_cred ib_l%u;\n", i);
			strbuf_printf(g->args, "&ib_l%u", i);
		} else if (a->dir == IDL_DIR_WAITTIME) {
			strbuf_printf(g->args, "(%s)IDL_PORT_DEFAULT_TIMEOUT_MS", p->type);
		} else if (!idlc_is(a, IDLC_AK_TRAVELS) && a->dir != IDL_DIR_REQUESTPORT) {
			strbuf_printf(g->args, "(%s)0", p->type); /* msgoption, sendtime */
		} else if (idlc_is(a, IDLC_AK_REPLY)) {
			gen_value_out(g, p, i);
		} else {
			gen_value_in(g, p, i);
		}
		break;
	case GEN_CNT:
		if (!p->by_ref) {
			strbuf_printf(g->args, "ib_v[%u].count", i);
			break;
		}
		/* The caller's room for what comes back: the bound of an inline array, what it
		 * sends of an inout one, nothing for out-of-line data. */
		strbuf_printf(g->decl, "\t%s ib_c%u;\n", gen_pointee(p, pt, sizeof pt), i);
		if (idlc_is(a, IDLC_AK_REQUEST))
			strbuf_printf(g->pre, "\tib_c%u = ib_v[%u].count;\n", i, i);
		else if (idlc_is(a, IDLC_AK_CAPACITY) || idlc_is(a, IDLC_AK_COUNTINOUT))
			strbuf_printf(g->pre, "\tib_c%u = %" PRIu32 ";\n", i, a->row->count);
		else
			strbuf_printf(g->pre, "\tib_c%u = 0;\n", i);
		strbuf_printf(g->args, "&ib_c%u", i);
		break;
	case GEN_POLY:
		if (!p->by_ref) {
			strbuf_printf(g->args, "(%s)%u", p->type, gen_disposition(a));
			break;
		}
		strbuf_printf(g->decl, "\t%s ib_p%u;\n", gen_pointee(p, pt, sizeof pt), i);
		strbuf_printf(g->pre, "\tib_p%u = %u;\n", i, gen_disposition(a));
		strbuf_printf(g->args, "&ib_p%u", i);
		break;
	case GEN_DEALLOC:
		strbuf_printf(g->args, "(%s)0", p->type);
		break;
	default:
		g->why = "a parameter idlbench does not know";
		break;
	}
}

static const struct idlc_routine *
gen_routine(struct idlc_ctx *ctx, uint32_t number)
{
	for (const struct idlc_routine *rt = idlc_module(ctx)->routines; rt != NULL; rt = rt->next)
		if (rt->kind != IDLC_RT_SKIP && rt->number == number)
			return rt;
	return NULL;
}

/* One ib_call_N. */
static int
gen_call(struct idlc_ctx *ctx, const struct idlc_routine *rt, struct strbuf *out)
{
	struct gen_param *params = calloc(GEN_MAX_PARAMS, sizeof *params);
	struct strbuf decl = STRBUF_INIT, pre = STRBUF_INIT, args = STRBUF_INIT, post = STRBUF_INIT;
	struct emit_out o;
	struct gen_call g = { &decl, &pre, &args, &post, rt, NULL, NULL };
	int n, rc = -1;

	if (params == NULL)
		return -1;
	emit_init(&o, ctx, idlc_module(ctx), IDLC_OUT_USER, out);
	g.stub = emit_user_name(&o, rt);
	if ((n = gen_params(ctx, rt, EMIT_USER, params, GEN_MAX_PARAMS)) < 0)
		goto done;
	for (int k = 0; k < n && g.why == NULL; k++) {
		if (k > 0)
			strbuf_puts(&args, ", ");
		gen_param_user(&g, &params[k]);
	}
	if (g.why != NULL) {
		fprintf(stderr, "idlbench: %s: routine %s has %s: idlbench cannot call it\n",
			idlc_module(ctx)->input_name, rt->name, g.why);
		goto done;
	}
	strbuf_printf(out,
		      "\n/* Routine %s: its client stub with a row's values. */\nint\n"
		      "ib_call_%" PRIu32 "(void *ib_port, const struct idl_arg_value *ib_v)\n{\n",
		      rt->name, rt->number);
	strbuf_printf(out, "\tkern_return_t ib_kr;\n%s\n%s", strbuf_str(&decl), strbuf_str(&pre));
	strbuf_printf(out, "\tib_kr = %s(%s);\n", g.stub, strbuf_str(&args));
	if (post.len > 0)
		strbuf_printf(out, "\tif (ib_kr != KERN_SUCCESS)\n\t\treturn ib_kr;\n%s",
			      strbuf_str(&post));
	strbuf_puts(out, "\t(void)ib_v;\n\treturn ib_kr;\n}\n");
	rc = decl.failed || pre.failed || args.failed || post.failed ? -1 : 0;
done:
	strbuf_fini(&decl);
	strbuf_fini(&pre);
	strbuf_fini(&args);
	strbuf_fini(&post);
	free(params);
	return rc;
}

/* ---- The asynchronous calls ---- */

/* The parameters of a declaration of the generated header, `LEAD NAME(...)`, split at its
 * commas. Returns how many, or -1 when the header has no such declaration. */
static int
gen_proto(const char *header, const char *lead, const char *name, const struct idlc_routine *rt,
	  struct gen_param *out, size_t max)
{
	char key[256];
	const char *p, *end;
	size_t n = 0;

	snprintf(key, sizeof key, "%s%s(", lead, name);
	if ((p = strstr(header, key)) == NULL || (end = strchr(p, ')')) == NULL)
		return -1;
	for (p += strlen(key); p < end && n < max; n++) {
		size_t len = strcspn(p, ",)");

		if (gen_split(p, len, &out[n]) != 0)
			return -1;
		gen_role(rt, &out[n]);
		p += len + (p[len] == ',');
	}
	return (int)n;
}

/* One parameter of the asynchronous stub: the request's values as the synchronous call
 * passes them, inout ones as inputs, a countinout array's room as its bound. */
static void
gen_param_async(struct gen_call *g, const struct gen_param *p, uint32_t number)
{
	const struct idlc_arg *a = p->arg;
	unsigned i = a != NULL ? gen_index(g->rt, a) : 0;

	if (strcmp(p->name, "idl_done") == 0)
		strbuf_printf(g->args, "ib_adone_%" PRIu32, number);
	else if (strcmp(p->name, "idl_ctx") == 0)
		strbuf_puts(g->args, "ib_ctx");
	else if (strcmp(p->name, "idl_callp") == 0)
		strbuf_puts(g->args, "NULL");
	else if (a == NULL)
		g->why = "a parameter idlbench does not know";
	else if (p->role == GEN_CNT && !p->by_ref && !idlc_is(a, IDLC_AK_REQUEST))
		strbuf_printf(g->args, "(%s)%" PRIu32 "u", p->type, a->row->count);
	else if (p->role == GEN_VALUE && idlc_is(a, IDLC_AK_RECORD) && p->by_ref)
		strbuf_printf(g->args, "(%s)ib_v[%u].data", p->type, i);
	else if (p->role == GEN_VALUE && idlc_is(a, IDLC_AK_REQUEST))
		gen_value_in(g, p, i);
	else if (p->role == GEN_VALUE && idlc_is(a, IDLC_AK_REPLY))
		g->why = "an out argument among its asynchronous stub's";
	else
		gen_param_user(g, p);
}

/* What the done function owns of one out argument, released (ports closed, memory freed). */
static void
gen_release(struct gen_call *g, const struct gen_param *ps, int n, const struct gen_param *p)
{
	const struct idlc_arg *a = p->arg;
	enum idl_arg_kind k = a->rtype->arg_kind;
	char cnt[128];

	snprintf(cnt, sizeof cnt, "%" PRIu32 "u", a->row->count);
	for (int q = 0; idlc_is(a, IDLC_AK_COUNTED) && q < n; q++)
		if (ps[q].role == GEN_CNT && ps[q].arg == idlc_count_owner(a))
			snprintf(cnt, sizeof cnt, "%s", ps[q].name);
	if (k == IDL_ARG_PORT)
		strbuf_printf(g->post, "\t\tidl_port_close((idl_port_t)%s);\n", p->name);
	if (idlc_is(a, IDLC_AK_PORTS))
		strbuf_printf(g->post,
			      "\t\tfor (mach_msg_type_number_t ib_k = 0; ib_k < %s; ib_k++)\n"
			      "\t\t\tidl_port_close(((idl_port_t *)(void *)%s)[ib_k]);\n",
			      cnt, p->name);
	if (k == IDL_ARG_OOL && !idlc_is(a, IDLC_AK_INLINE_PORTS))
		strbuf_printf(
			g->post, "\t\tidl_ool_free((void *)%s, (size_t)%s * %zu);\n", p->name, cnt,
			idlc_is(a, IDLC_AK_PORTS) ? sizeof(void *) : (size_t)a->row->elem_size);
}

/* ib_adone_N: the done function, and ib_acall_N: the asynchronous stub with a row's values.
 * Returns 1 (and writes nothing) when idlbench cannot call the routine asynchronously. */
static int
gen_acall(struct idlc_ctx *ctx, const struct idlc_routine *rt, const char *header,
	  struct strbuf *out)
{
	struct gen_param *dp = calloc(2 * GEN_MAX_PARAMS, sizeof *dp), *ap = dp + GEN_MAX_PARAMS;
	struct strbuf decl = STRBUF_INIT, pre = STRBUF_INIT, args = STRBUF_INIT, post = STRBUF_INIT;
	struct gen_call g = { &decl, &pre, &args, &post, rt, NULL, NULL };
	struct emit_out o;
	char name[200];
	int nd = -1, na = -1, rc = 1;

	emit_init(&o, ctx, idlc_module(ctx), IDLC_OUT_USER, out);
	g.stub = emit_user_name(&o, rt);
	snprintf(name, sizeof name, "%s_done_t", g.stub);
	if (dp != NULL &&
	    (nd = gen_proto(header, "typedef void ", name, rt, dp, GEN_MAX_PARAMS)) >= 2) {
		snprintf(name, sizeof name, "%s_async", g.stub);
		na = gen_proto(header, "kern_return_t ", name, rt, ap, GEN_MAX_PARAMS);
	}
	for (int k = 0; k < na && g.why == NULL; k++) {
		strbuf_puts(&args, k > 0 ? ", " : "");
		gen_param_async(&g, &ap[k], rt->number);
	}
	for (int k = 2; k < nd && na >= 0 && g.why == NULL; k++)
		if (dp[k].role == GEN_VALUE && dp[k].arg != NULL)
			gen_release(&g, dp, nd, &dp[k]);
	if (na < 0 || g.why != NULL || decl.failed || pre.failed || args.failed || post.failed)
		goto done;
	strbuf_printf(out, "\n/* Routine %s: its asynchronous stub with a row's values. */\n",
		      rt->name);
	strbuf_printf(out, "static void\nib_adone_%" PRIu32 "(", rt->number);
	for (int k = 0; k < nd; k++)
		strbuf_printf(out, "%s%s%s%s", k > 0 ? ", " : "", dp[k].type,
			      dp[k].by_ref ? "" : " ", dp[k].name);
	strbuf_printf(out,
		      ")\n{\n\tif (%s == KERN_SUCCESS) {\n%s\t}\n\tib_async_done(%s, %s);\n}\n",
		      dp[1].name, strbuf_str(&post), dp[0].name, dp[1].name);
	strbuf_printf(out,
		      "\nint\nib_acall_%" PRIu32
		      "(void *ib_port, const struct idl_arg_value *ib_v, "
		      "void *ib_ctx)\n{\n%s\n%s\t(void)ib_v;\n\treturn %s_async(%s);\n}\n",
		      rt->number, strbuf_str(&decl), strbuf_str(&pre), g.stub, strbuf_str(&args));
	rc = 0;
done:
	strbuf_fini(&decl);
	strbuf_fini(&pre);
	strbuf_fini(&args);
	strbuf_fini(&post);
	free(dp);
	return rc;
}

struct gen_seen {
	uint32_t numbers[3 * IB_MAX_CALLS + 1];
	size_t n;
};

static void
gen_seen_add(struct ib_ucall *c, void *arg)
{
	struct gen_seen *s = arg;

	for (size_t k = 0; k < s->n; k++)
		if (s->numbers[k] == c->rt->number)
			return;
	s->numbers[s->n++] = c->rt->number;
}

int
ib_gen_calls(const struct ib_iface *u, const char *client_header, struct strbuf *out)
{
	struct idlc_ctx *ctx = ib_defs_ctx(u);
	struct strbuf header = STRBUF_INIT;
	struct gen_seen seen = { { 0 }, 0 };
	int rc = 0;

	strbuf_printf(out,
		      "/* Generated by idlbench from %s: each routine a row calls, called through "
		      "its\n * compiled client stub (and its asynchronous stub). */\n#include "
		      "<stdint.h>\n"
		      "#include <string.h>\n\n#include <idl/idl.h>\n#include <idl/idl_dynamic.h>\n"
		      "#include <idl/idl_ool.h>\n\n#include \"%s\"\n\n"
		      "/* Where the done functions end: set by idlbench's client. */\n"
		      "void (*ib_async_done)(void *ib_ctx, int ib_kr);\n",
		      u->path, client_header);
	if (idlc_generate_to(ctx, IDLC_OUT_HEADER, &header) != 0 || header.failed)
		rc = -1;
	ib_ucalls_each(u, gen_seen_add, &seen);
	for (size_t i = 0; rc == 0 && i < seen.n; i++) {
		const struct idlc_routine *rt = gen_routine(ctx, seen.numbers[i]);

		if (rt == NULL || gen_call(ctx, rt, out) != 0)
			rc = -1;
		else if (rt->kind == IDLC_RT_ROUTINE &&
			 gen_acall(ctx, rt, strbuf_str(&header), out) < 0)
			rc = -1;
	}
	strbuf_fini(&header);
	return rc != 0 || out->failed ? -1 : 0;
}

/* ---- The null routines ---- */

static void
gen_null_param(struct strbuf *out, const struct gen_param *p)
{
	const struct idlc_arg *a = p->arg;
	enum idl_arg_kind k;

	/* What the caller sends (in, inout) is left as it came: an inout value goes back. */
	if (a == NULL || !idlc_is(a, IDLC_AK_REPLY) || idlc_is(a, IDLC_AK_REQUEST))
		return;
	k = a->rtype->arg_kind;
	switch (p->role) {
	case GEN_CNT:
	case GEN_DEALLOC:
		if (p->by_ref)
			strbuf_printf(out, "\tmemset(%s, 0, sizeof *%s);\n", p->name, p->name);
		return;
	case GEN_POLY:
		if (p->by_ref)
			strbuf_printf(out, "\t*%s = %u;\n", p->name, gen_disposition(a));
		return;
	case GEN_VALUE:
		break;
	default:
		return;
	}
	if (k == IDL_ARG_OOL && !idlc_is(a, IDLC_AK_INLINE_PORTS)) {
		uint64_t bytes = gen_bytes(a);

		if (idlc_is(a, IDLC_AK_COUNTED) || bytes == 0) {
			strbuf_printf(out, "\tmemset(%s, 0, sizeof *%s);\n", p->name, p->name);
		} else if (idlc_is(a, IDLC_AK_GIVEN)) {
			/* Given away with the reply: memory the runtime frees. */
			strbuf_printf(out,
				      "\tif ((*%s = idl_ool_alloc(%" PRIu64 ")) == NULL)\n"
				      "\t\treturn KERN_FAILURE;\n\tmemset(*%s, 0, %" PRIu64 ");\n",
				      p->name, bytes, p->name, bytes);
		} else {
			strbuf_printf(out,
				      "\tstatic const uint64_t %s_zero[%" PRIu64 "];\n"
				      "\t*%s = (void *)%s_zero;\n",
				      p->name, bytes / 8 + 1, p->name, p->name);
		}
	} else if (k == IDL_ARG_PORT ||
		   (p->by_ref && (k == IDL_ARG_SCALAR || idlc_is(a, IDLC_AK_RECORD)))) {
		strbuf_printf(out, "\tmemset(%s, 0, sizeof *%s);\n", p->name, p->name);
	} else if (k == IDL_ARG_CSTRING_VAR) {
		strbuf_printf(out, "\tmemset(%s, 0, 1);\n", p->name);
	} else if (k != IDL_ARG_VAR_ARRAY || idlc_is(a, IDLC_AK_PORTS)) {
		strbuf_printf(out, "\tmemset(%s, 0, %" PRIu64 ");\n", p->name, gen_bytes(a));
	}
}

int
ib_gen_null(const struct ib_iface *u, const char *server_header, struct strbuf *out)
{
	struct idlc_ctx *ctx = ib_defs_ctx(u);
	struct gen_param *params = calloc(GEN_MAX_PARAMS, sizeof *params);
	struct emit_out o;

	if (params == NULL)
		return -1;
	emit_init(&o, ctx, idlc_module(ctx), IDLC_OUT_SERVER, out);
	strbuf_printf(out,
		      "/* Generated by idlbench from %s: the null implementation, every routine\n"
		      " * answering KERN_SUCCESS with its out arguments zeroed and empty. */\n"
		      "#include <stdint.h>\n#include <string.h>\n\n#include <idl/idl.h>\n"
		      "#include <idl/idl_ool.h>\n\n#include \"%s\"\n",
		      u->path, server_header);
	for (const struct idlc_routine *rt = idlc_module(ctx)->routines; rt != NULL;
	     rt = rt->next) {
		int n;

		if (rt->kind == IDLC_RT_SKIP)
			continue;
		if ((n = gen_params(ctx, rt, EMIT_SERVER, params, GEN_MAX_PARAMS)) < 0) {
			free(params);
			return -1;
		}
		strbuf_printf(out, "\nkern_return_t\n%s(", emit_server_name(&o, rt));
		for (int k = 0; k < n; k++)
			strbuf_printf(out, "%s%s%s%s", k > 0 ? ", " : "", params[k].type,
				      params[k].by_ref ? "" : " ", params[k].name);
		strbuf_printf(out, "%s)\n{\n", n == 0 ? "void" : "");
		for (int k = 0; k < n; k++)
			gen_null_param(out, &params[k]);
		strbuf_puts(out, "\treturn KERN_SUCCESS;\n}\n");
	}
	free(params);
	return out->failed ? -1 : 0;
}
