/*
 * idlbench_defs.c - the user's interface (--defs FILE.defs) and its rows (--call): the .defs
 * file loaded through the compiler's library as idlcall loads it, each call's arguments read
 * as idlcall reads them (libidlcall.a), checked by packing the request once, so that a
 * mistake is told before anything is built or forked. The --setup calls are read the same way.
 *
 * Layer 2 (ib_iface.h): it knows the base and the rows; it must not know columns, cells,
 * floors, runs or reports.
 */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>

#include "idlcall.h"
#include "ib_iface.h"

struct ib_defs {
	struct idlcall_iface ifc;
};

int
ib_defs_load(struct ib_iface *u, const char *const *cpp_args, size_t ncpp)
{
	if ((u->defs = calloc(1, sizeof *u->defs)) == NULL) {
		fputs("idlbench: out of memory\n", stderr);
		return -1;
	}
	/* The compiler's diagnostics name the file and line; nothing to add to them. */
	if (idlcall_load_types(u->path, cpp_args, ncpp, IB_TYPES_H, &u->defs->ifc) != 0)
		return -1;
	u->ss = &u->defs->ifc.ss;
	return 0;
}

struct idlc_ctx *
ib_defs_ctx(const struct ib_iface *u)
{
	return u->defs != NULL ? u->defs->ifc.ctx : NULL;
}

int
ib_arg_ports(const struct idl_arg_desc *a)
{
	return a->kind == IDL_ARG_PORT || (a->kind == IDL_ARG_OOL && a->wire_type == IDL_WT_PORT);
}

int
ib_arg_consumed(const struct idl_arg_desc *a)
{
	unsigned disp = a->disposition != 0 ? a->disposition : 19;

	if (a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT)
		return 0;
	if (a->flags & IDL_ARGF_DEALLOC)
		return a->kind == IDL_ARG_OOL || a->kind == IDL_ARG_PORT;
	/* MOVE_RECEIVE, MOVE_SEND, MOVE_SEND_ONCE: the port goes with the message. */
	return ib_arg_ports(a) && disp >= 16 && disp <= 18;
}

/* The words of a --call: separated by blanks; '...' and "..." keep blanks in a word, a
 * backslash takes the next character as it is. Returns the count, or -1 (printed). */
static int
ib_words(const char *spec, char **words, int max, char *buf)
{
	int n = 0;
	const char *p = spec;

	while (*p != '\0') {
		char quote = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (n == max) {
			fprintf(stderr, "idlbench: --call '%s': more than %d words\n", spec, max);
			return -1;
		}
		words[n++] = buf;
		for (; *p != '\0' && (quote != 0 || (*p != ' ' && *p != '\t')); p++) {
			if (quote == 0 && (*p == '\'' || *p == '"'))
				quote = *p;
			else if (quote != 0 && *p == quote)
				quote = 0;
			else if (*p == '\\' && p[1] != '\0' && quote != '\'')
				*buf++ = *++p;
			else
				*buf++ = *p;
		}
		if (quote != 0) {
			fprintf(stderr, "idlbench: --call '%s': an unclosed %c\n", spec, quote);
			return -1;
		}
		*buf++ = '\0';
	}
	return n;
}

static void
ib_list_routines(const struct idl_subsystem *ss)
{
	const char *sep = "";

	fputs("; its routines:", stderr);
	for (uint32_t n = 0; n < ss->nroutines; n++)
		if (ss->routines[n].kind != IDL_RT_SKIP && ss->routines[n].name != NULL) {
			fprintf(stderr, "%s %s", sep, ss->routines[n].name);
			sep = ",";
		}
	fputc('\n', stderr);
}

/* A fixed array or string, out-of-line data of a fixed size: the whole of it, zero-filled,
 * as the client stub takes it (a buffer of the full size, no count). */
static int
ib_full_size(const struct idl_arg_desc *a, struct idl_arg_value *v)
{
	size_t full = (size_t)a->count * a->elem_size;
	unsigned char *b;

	if (a->kind != IDL_ARG_FIXED_ARRAY && a->kind != IDL_ARG_CSTRING_FIXED &&
	    !(a->kind == IDL_ARG_OOL && (a->flags & IDL_ARGF_FIXED)))
		return 0;
	if ((size_t)v->count * a->elem_size > full)
		return 0; /* too many: idl_msg_pack() refuses it by name */
	if ((b = calloc(1, full + 1)) == NULL)
		return -1;
	if (v->count > 0)
		memcpy(b, v->data, (size_t)v->count * a->elem_size);
	free((void *)v->data);
	v->data = b;
	v->count = a->count;
	return 0;
}

/* Packs the request once with the call's values (ports as null ones), so that a count above
 * its bound or a string too long is told now, by name. */
static int
ib_check_call(const struct ib_iface *u, const struct ib_ucall *c, const char *opt)
{
	const struct idl_routine_desc *rt = c->rt;
	struct idl_arg_value *v = calloc(rt->nargs + 1u, sizeof *v);
	idl_port_t none[64] = { IDL_PORT_NULL };
	void *buf = NULL;
	int n = -1;

	if (v != NULL)
		buf = calloc(rt->req_max / 8 + 1, 8);
	if (v != NULL && buf != NULL) {
		for (unsigned i = 0; i < rt->nargs; i++) {
			v[i] = c->vals[i];
			if (c->ports[i] != NULL) {
				v[i].data = none;
				v[i].count = rt->args[i].kind == IDL_ARG_PORT ? 1 : 0;
			}
		}
		n = idl_msg_pack(rt, 0, v, buf, rt->req_max);
	}
	free(v);
	free(buf);
	if (n == IDL_ENOTSUP && !u->interpreted)
		return 0; /* types only compiled stubs handle: the compiler checks those */
	if (n < 0) {
		fprintf(stderr, "idlbench: %s '%s': %s (%s)%s%s\n", opt, c->spec,
			n == IDL_ENOTSUP ? "its arguments can only be carried by compiled stubs"
					 : idl_strerror(n),
			idl_errname(n), *idl_errdetail() != '\0' ? ": " : "", idl_errdetail());
		return -1;
	}
	return 0;
}

/* Routines idlbench cannot call for the user: the client side has something it cannot
 * supply from the command line. */
static const char *
ib_uncallable(const struct idl_routine_desc *rt)
{
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (a->dir == IDL_DIR_INOUT && (a->kind == IDL_ARG_OOL || a->kind == IDL_ARG_PORT))
			return "inout out-of-line data or ports";
	}
	return NULL;
}

/* The routine a call names and the row's name (NAME=ROUTINE names it); -1 printed. */
static int
ib_call_name(struct ib_iface *u, struct ib_ucall *c, const char *opt, const char *word)
{
	const char *routine = word, *eq = strchr(word, '='), *why;
	size_t k = eq != NULL ? (size_t)(eq - word) : 0;

	if (eq != NULL && (k == 0 || k >= sizeof c->name)) {
		fprintf(stderr, "idlbench: %s '%s': a row name of 1 to %zu characters\n", opt,
			c->spec, sizeof c->name - 1);
		return -1;
	}
	if (eq != NULL)
		routine = eq + 1;
	if ((c->rt = idlcall_find(u->ss, routine)) == NULL) {
		fprintf(stderr, "idlbench: %s '%s': %s: subsystem %s has no routine '%s'", opt,
			c->spec, u->path, u->ss->name, routine);
		ib_list_routines(u->ss);
		return -1;
	}
	snprintf(c->name, sizeof c->name, "%.*s", eq != NULL ? (int)k : 31,
		 eq != NULL ? word : routine);
	if ((why = ib_uncallable(c->rt)) != NULL) {
		fprintf(stderr, "idlbench: %s '%s': %s.%s has %s: idlbench cannot time it\n", opt,
			c->spec, u->ss->name, routine, why);
		return -1;
	}
	return 0;
}

/* The call's values from its words after the routine's; -1 printed. */
static int
ib_call_args(struct ib_ucall *c, const char *opt, char **words, int n)
{
	int need = 0, w = 0;
	char err[512];

	for (unsigned i = 0; i < c->rt->nargs; i++)
		if (c->rt->args[i].dir == IDL_DIR_IN || c->rt->args[i].dir == IDL_DIR_INOUT)
			need++;
	if (n != need) {
		char *sig = idlcall_signature(c->rt);

		fprintf(stderr, "idlbench: %s '%s': %s takes %d argument%s, not %d: %s\n", opt,
			c->spec, c->rt->name, need, need == 1 ? "" : "s", n,
			sig != NULL ? sig : "");
		free(sig);
		return -1;
	}
	c->vals = calloc(c->rt->nargs + 1u, sizeof *c->vals);
	c->ports = calloc(c->rt->nargs + 1u, sizeof *c->ports);
	if (c->vals == NULL || c->ports == NULL)
		goto nomem;
	for (unsigned i = 0; i < c->rt->nargs; i++) {
		const struct idl_arg_desc *a = &c->rt->args[i];
		void *data;
		uint32_t count;

		if (a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT)
			continue;
		c->consumes |= ib_arg_consumed(a);
		if (ib_arg_ports(a)) {
			if ((c->ports[i] = strdup(words[w++])) == NULL)
				goto nomem;
			continue;
		}
		if (idlcall_parse_arg(a, words[w++], &data, &count, err, sizeof err) != 0) {
			fprintf(stderr, "idlbench: %s '%s': %s\n", opt, c->spec, err);
			return -1;
		}
		c->vals[i].data = data;
		c->vals[i].count = count;
		if (ib_full_size(a, &c->vals[i]) != 0)
			goto nomem;
	}
	return 0;
nomem:
	fputs("idlbench: out of memory\n", stderr);
	return -1;
}

int
ib_defs_call(struct ib_iface *u, const char *spec, int setup)
{
	const char *opt = setup ? "--setup" : "--call";
	size_t *count = setup ? &u->nsetup : &u->ncalls;
	struct ib_ucall *c = setup ? &u->setup[u->nsetup] : &u->calls[u->ncalls];
	char *buf = malloc(strlen(spec) + 1), *words[256];
	int n, rc = -1;

	if (buf == NULL || *count == IB_MAX_CALLS) {
		fprintf(stderr, "idlbench: at most %d %s\n", IB_MAX_CALLS, opt);
		free(buf);
		return -1;
	}
	memset(c, 0, sizeof *c);
	c->spec = spec;
	if ((n = ib_words(spec, words, 256, buf)) < 0)
		goto out;
	if (n == 0) {
		fprintf(stderr, "idlbench: %s wants 'ROUTINE ARG...'\n", opt);
		goto out;
	}
	if (ib_call_name(u, c, opt, words[0]) != 0)
		goto out;
	for (size_t i = 0; !setup && i < u->ncalls; i++)
		if (strcmp(u->calls[i].name, c->name) == 0) {
			fprintf(stderr,
				"idlbench: --call '%s': a second row named %s (name it: "
				"--call NAME='%s')\n",
				spec, c->name, spec);
			goto out;
		}
	if (ib_call_args(c, opt, words + 1, n - 1) != 0 || ib_check_call(u, c, opt) != 0)
		goto out;
	(*count)++;
	rc = 0;
out:
	free(buf);
	return rc;
}

void
ib_ucalls_each(const struct ib_iface *u, void (*f)(struct ib_ucall *c, void *arg), void *arg)
{
	struct ib_iface *w = (struct ib_iface *)u;

	for (size_t i = 0; i < u->ncalls; i++)
		f(&w->calls[i], arg);
	if (u->have_sync)
		f(&w->sync, arg);
	for (size_t i = 0; i < u->nsetup; i++)
		f(&w->setup[i], arg);
}

struct idl_arg_value *
ib_zero_values(const struct idl_routine_desc *rt, int reply)
{
	struct idl_arg_value *v = calloc(rt->nargs + 1u, sizeof *v);
	/* Big enough for any fixed argument a message can hold: its data stay zero. */
	static uint64_t zero[8192];
	static const idl_port_t null_port = IDL_PORT_NULL;

	if (v == NULL)
		return NULL;
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		int dir = a->dir;

		if (!(reply ? dir == IDL_DIR_OUT || dir == IDL_DIR_INOUT
			    : dir == IDL_DIR_IN || dir == IDL_DIR_INOUT))
			continue;
		v[i].data = a->kind == IDL_ARG_PORT ? (const void *)&null_port : zero;
		switch (a->kind) {
		case IDL_ARG_SCALAR:
		case IDL_ARG_PORT:
			v[i].count = 1;
			break;
		case IDL_ARG_CSTRING_VAR:
			v[i].count = 1; /* the empty string: its NUL */
			break;
		case IDL_ARG_OOL:
			v[i].count = (a->flags & IDL_ARGF_FIXED) ? a->count : 0;
			if ((a->flags & IDL_ARGF_DEALLOC) ||
			    (size_t)v[i].count * a->elem_size > sizeof zero) {
				/* Given away once sent: memory of the runtime's. (A fixed size
				 * above the zeroes here is rare enough to be made each time.) */
				size_t n = (size_t)v[i].count * a->elem_size;

				v[i].data = n > 0 ? idl_ool_alloc(n) : NULL;
				if (n > 0 && v[i].data == NULL) {
					free(v);
					return NULL;
				}
				if (n > 0)
					memset((void *)v[i].data, 0, n);
			}
			break;
		default:
			v[i].count = a->kind == IDL_ARG_VAR_ARRAY ? 0 : a->count;
			break;
		}
	}
	return v;
}

int
ib_user_rows(struct ib_iface *u)
{
	struct ib_row *rows = calloc(u->ncalls, sizeof *rows);
	int oneway = 0;

	if (rows == NULL)
		return -1;
	for (size_t i = 0; i < u->ncalls; i++) {
		const struct ib_ucall *c = &u->calls[i];
		int simple = c->rt->kind == IDL_RT_SIMPLEROUTINE;

		rows[i].name = c->name;
		rows[i].routine = c->rt->name;
		rows[i].metric = simple ? IB_ONEWAY : IB_LATENCY;
		rows[i].mode = simple ? IB_MODE_ONEWAY : IB_MODE_CALL;
		rows[i].iter_div = 1;
		rows[i].present = 1;
		rows[i].req = c->rt->req_max;
		rows[i].rep = simple ? 0 : c->rt->rep_max;
		rows[i].count_sent = 1;
		rows[i].u = c;
		oneway |= simple;
	}
	/* The synchronising round trip of one-way rows: a --call's routine as the user gave
	 * it, else the interface's first routine with zeroed arguments. */
	for (size_t i = 0; oneway && !u->have_sync && i < u->ncalls; i++)
		if (u->calls[i].rt->kind == IDL_RT_ROUTINE) {
			u->sync = u->calls[i];
			u->have_sync = 1;
		}
	for (uint32_t n = 0; oneway && !u->have_sync && n < u->ss->nroutines; n++) {
		const struct idl_routine_desc *rt = &u->ss->routines[n];

		if (rt->kind != IDL_RT_ROUTINE || ib_uncallable(rt) != NULL)
			continue;
		memset(&u->sync, 0, sizeof u->sync);
		u->sync_own = 1;
		snprintf(u->sync.name, sizeof u->sync.name, "%s", rt->name);
		u->sync.rt = rt;
		u->sync.vals = ib_zero_values(rt, 0);
		u->sync.ports = calloc(rt->nargs + 1u, sizeof *u->sync.ports);
		if (u->sync.vals == NULL || u->sync.ports == NULL)
			return -1;
		for (unsigned i = 0; i < rt->nargs; i++) {
			u->sync.consumes |= ib_arg_consumed(&rt->args[i]);
			if (ib_arg_ports(&rt->args[i]) &&
			    (rt->args[i].dir == IDL_DIR_IN || rt->args[i].dir == IDL_DIR_INOUT))
				u->sync.ports[i] = strdup("null");
		}
		u->have_sync = 1;
	}
	u->rows = rows;
	ib_rows = rows;
	ib_nrows = u->ncalls;
	return 0;
}

/* Values of a call's own: parsed (malloc()ed), or zeroes (static, or the runtime's memory
 * for what a call would give away). */
static void
ib_ucall_free(struct ib_ucall *c, int zeroes)
{
	for (unsigned i = 0; c->rt != NULL && i < c->rt->nargs; i++) {
		const struct idl_arg_desc *a = &c->rt->args[i];

		if (c->ports != NULL)
			free(c->ports[i]);
		if (c->vals == NULL || c->vals[i].data == NULL)
			continue;
		if (!zeroes)
			free((void *)c->vals[i].data);
		else if (a->kind == IDL_ARG_OOL && !ib_arg_ports(a) &&
			 (a->flags & IDL_ARGF_DEALLOC))
			idl_ool_free((void *)c->vals[i].data,
				     (size_t)c->vals[i].count * a->elem_size);
	}
	free(c->vals);
	free(c->ports);
	c->vals = NULL;
	c->ports = NULL;
}

void
ib_defs_unload(struct ib_iface *u)
{
	for (size_t i = 0; i < u->ncalls; i++)
		ib_ucall_free(&u->calls[i], 0);
	for (size_t i = 0; i < u->nsetup; i++)
		ib_ucall_free(&u->setup[i], 0);
	u->nsetup = 0;
	if (u->sync_own)
		ib_ucall_free(&u->sync, 1);
	u->ncalls = 0;
	u->have_sync = u->sync_own = 0;
	free(u->rows);
	u->rows = NULL;
	if (u->defs != NULL) {
		idlcall_unload(&u->defs->ifc);
		free(u->defs);
		u->defs = NULL;
	}
}
