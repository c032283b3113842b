/*
 * compat.c - idlc -compat: what changed between an old and a new version of an interface,
 * and what each change does to the clients of either side (docs/evolution.md).
 *
 * It reads the middle end's result of both versions: the descriptor table (each routine's
 * row, from which the signature hashes are computed) for what travels, the module for
 * names and locations. Routines are paired by number, since a request names its routine by
 * id, and followed by name, so that a routine that changed its id is told apart from one
 * that was replaced.
 *
 * The verdict of a routine and what the hello does with it cannot disagree: a client's call
 * goes through exactly when the other side has a routine at its number whose version 2
 * signature hash (<idl/idl_subsystem.h>) is the same, and every change is paired with the
 * outcome that rule gives (cmp_call()). A routine whose hash changed is always reported at
 * warning or error level, because the hello refuses it; a routine the hello accepts gets
 * notes, or a warning for what the hello cannot see (arguments of one type that traded
 * names).
 *
 * Results live in the new context's arena.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "middle.h"

/* One change, linked while the comparison runs. */
struct cmp_item {
	struct idlc_change ch;
	struct cmp_item *next;
};

struct cmp {
	struct idlc_ctx *ctx; /* the new version's: results are allocated there */
	const struct idlc_module *om, *nm;
	const struct idlc_routine **o, **n; /* routines by number, skips included */
	uint32_t no, nn;
	bool sub_refused; /* the subsystem's name or base changed: no hello succeeds */
	struct cmp_item *head, **tail;
	size_t count;
	unsigned errors; /* changes of level error so far */
	bool oom;
};

static const char *const cmp_dirs[] = {
	"-", "requestport", "in", "out", "inout", "waittime", "msgoption", "other",
};
static const char *const cmp_kinds[] = {
	"-",	       "a scalar",	  "a fixed array", "a variable array",
	"a c_string",  "a c_string[*:N]", "a port",	   "out-of-line data",
	"not carried",
};
static const char *const cmp_wire[] = {
	"none", "int8", "int16",  "int32",  "int64", "boolean",
	"char", "byte", "real32", "real64", "port",  "struct",
};
static const char *const cmp_dispositions[] = {
	"port_name", "move_receive", "move_send",      "move_send_once",
	"copy_send", "make_send",    "make_send_once",
};
/* The flags version 2 of the signature covers, by name for the messages. */
static const struct {
	uint32_t bit;
	const char *what;
} cmp_flags[] = {
	{ IDL_ARGF_POLY_IN, "a polymorphic disposition sent" },
	{ IDL_ARGF_POLY_OUT, "a polymorphic disposition received" },
	{ IDL_ARGF_DEALLOC, "dealloc" },
	{ IDL_ARGF_DEALLOC_PARAM, "dealloc[]" },
	{ IDL_ARGF_SERVERCOPY, "servercopy" },
	{ IDL_ARGF_FIXED, "a fixed out-of-line size" },
	{ IDL_ARGF_INLINE, "an inline array of ports" },
	{ IDL_ARGF_SAMECOUNT, "samecount" },
};

#define CMP_NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *
cmp_word(const char *const *words, size_t n, uint32_t v)
{
	return v < n ? words[v] : "?";
}

/*
 * What a client's call of `caller` gets from a server that has `other` at the same number:
 * the hello's rule (runtime/core/hello.c), on the hashes of version 2.
 */
static enum idlc_compat_call
cmp_call(const struct cmp *c, const struct idlc_routine *caller, const struct idlc_routine *other)
{
	if (caller == NULL || caller->kind == IDLC_RT_SKIP)
		return IDLC_CALL_NONE;
	if (c->sub_refused || other == NULL || other->kind == IDLC_RT_SKIP)
		return IDLC_CALL_BAD_ID;
	return idl_routine_sig_hash_v2(caller->row) == idl_routine_sig_hash_v2(other->row)
		       ? IDLC_CALL_OK
		       : IDLC_CALL_SIGNATURE;
}

/* The error code a refused call gets, as the messages name it. */
static const char *
cmp_call_name(enum idlc_compat_call call)
{
	return call == IDLC_CALL_BAD_ID ? "MIG_BAD_ID" : "IDL_ESIGNATURE";
}

/* What a routine number holds in a version, for the messages: 'name', a skip, nothing. */
static const char *
cmp_what(const struct cmp *c, const struct idlc_routine *rt)
{
	const char *r;

	if (rt == NULL)
		return "past the last routine";
	if (rt->kind == IDLC_RT_SKIP)
		return "a skip";
	r = idlc_printf(c->ctx, "'%s'", rt->name);
	return r != NULL ? r : "another routine";
}

static const struct idlc_routine *
cmp_old(const struct cmp *c, int64_t number)
{
	return number >= 0 && number < c->no ? c->o[number] : NULL;
}

static const struct idlc_routine *
cmp_new(const struct cmp *c, int64_t number)
{
	return number >= 0 && number < c->nn ? c->n[number] : NULL;
}

/* Records a change about the routine numbered `on` in the old version and `nn` in the new
 * one (-1: none), with what each side's call of it gets. */
static void __attribute__((format(printf, 8, 9)))
cmp_add(struct cmp *c, enum idlc_compat_level level, const char *rule, struct idlc_loc loc,
	const char *routine, int64_t on, int64_t nn, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	struct cmp_item *it = idlc_alloc(c->ctx, sizeof *it);
	va_list ap;

	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	if (it == NULL || sb.failed) {
		c->oom = true;
		strbuf_fini(&sb);
		return;
	}
	it->ch.level = level;
	it->ch.rule = rule;
	it->ch.loc = loc;
	it->ch.message = idlc_strdup(c->ctx, strbuf_str(&sb));
	strbuf_fini(&sb);
	it->ch.routine = routine;
	it->ch.old_id = on >= 0 ? (int64_t)c->om->base + on : -1;
	it->ch.new_id = nn >= 0 ? (int64_t)c->nm->base + nn : -1;
	if (routine == NULL && c->sub_refused) {
		it->ch.old_client = IDLC_CALL_BAD_ID;
		it->ch.new_client = IDLC_CALL_BAD_ID;
	} else {
		it->ch.old_client = cmp_call(c, cmp_old(c, on), cmp_new(c, on));
		it->ch.new_client = cmp_call(c, cmp_new(c, nn), cmp_old(c, nn));
	}
	*c->tail = it;
	c->tail = &it->next;
	c->count++;
	if (level == IDLC_COMPAT_ERROR)
		c->errors++;
}

/* The number of the routine called `name` (not a skip), or -1. */
static int64_t
cmp_find(const struct idlc_routine **rts, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (rts[i] != NULL && rts[i]->kind != IDLC_RT_SKIP &&
		    strcmp(rts[i]->name, name) == 0)
			return i;
	return -1;
}

/* The routines of m by number; NULL when memory ran out. */
static const struct idlc_routine **
cmp_index(struct idlc_ctx *ctx, const struct idlc_module *m, uint32_t *n)
{
	const struct idlc_routine **rts;

	*n = m->desc->nroutines;
	rts = idlc_alloc(ctx, ((size_t)*n + 1) * sizeof *rts);
	if (rts != NULL)
		for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next)
			if (rt->number < *n)
				rts[rt->number] = rt;
	return rts;
}

/*
 * Arguments.
 */
struct cmp_arg {
	const struct idlc_arg *a;
	unsigned pos; /* 1-based, among all the routine's arguments as written */
	const char *form; /* its part of the version 2 form: what the hash covers */
	int match; /* the index of its counterpart on the other side, or -1 */
};

/* An argument's part of the version 2 form, taken from the form of a routine that has it
 * alone, so that nothing here restates what the hash covers. */
static const char *
cmp_arg_form(struct idlc_ctx *ctx, const struct idlc_routine *rt, const struct idl_arg_desc *a)
{
	struct idl_routine_desc one = {
		.name = "", .kind = (uint8_t)rt->kind, .nargs = 1, .args = a
	};
	char buf[512];
	const char *open;
	size_t len;

	idl_routine_sig_form(&one, 2, buf, sizeof buf);
	open = strchr(buf, '(');
	if (open == NULL)
		return "";
	len = strlen(open + 1);
	return idlc_strndup(ctx, open + 1, len >= 2 ? len - 2 : 0); /* without ";)" */
}

/* The arguments of rt that travel (those the signature covers); returns their count. */
static unsigned
cmp_travelling(struct idlc_ctx *ctx, const struct idlc_routine *rt, struct cmp_arg *out)
{
	unsigned n = 0, pos = 0;

	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		pos++;
		if (a->row->kind == IDL_ARG_IMPLICIT)
			continue;
		out[n].a = a;
		out[n].pos = pos;
		out[n].form = cmp_arg_form(ctx, rt, a->row);
		out[n].match = -1;
		n++;
	}
	return n;
}

static void
cmp_sep(struct strbuf *sb)
{
	if (sb->len > 0)
		strbuf_puts(sb, ", ");
}

/* What differs between two arguments of one name, in words. */
static const char *
cmp_retyped(struct cmp *c, const struct idlc_routine *ort, const struct idl_arg_desc *o,
	    const struct idlc_routine *nrt, const struct idl_arg_desc *n)
{
	struct strbuf sb = STRBUF_INIT;
	bool o_cio = o->dir == IDL_DIR_OUT && o->req_offset != IDL_NO_OFFSET &&
		     ort->kind == IDLC_RT_ROUTINE;
	bool n_cio = n->dir == IDL_DIR_OUT && n->req_offset != IDL_NO_OFFSET &&
		     nrt->kind == IDLC_RT_ROUTINE;
	const char *r;

	if (o->dir != n->dir) {
		cmp_sep(&sb);
		strbuf_printf(&sb, "direction %s -> %s",
			      cmp_word(cmp_dirs, CMP_NELEM(cmp_dirs), o->dir),
			      cmp_word(cmp_dirs, CMP_NELEM(cmp_dirs), n->dir));
	}
	if (o->kind != n->kind) {
		cmp_sep(&sb);
		strbuf_printf(&sb, "%s -> %s", cmp_word(cmp_kinds, CMP_NELEM(cmp_kinds), o->kind),
			      cmp_word(cmp_kinds, CMP_NELEM(cmp_kinds), n->kind));
	}
	if (o->wire_type != n->wire_type) {
		cmp_sep(&sb);
		strbuf_printf(&sb, "%s -> %s",
			      cmp_word(cmp_wire, CMP_NELEM(cmp_wire), o->wire_type),
			      cmp_word(cmp_wire, CMP_NELEM(cmp_wire), n->wire_type));
	} else if (o->elem_size != n->elem_size) {
		cmp_sep(&sb);
		strbuf_printf(&sb, "element size %u -> %u bytes", o->elem_size, n->elem_size);
	}
	if (o->count != n->count && o->kind == n->kind) {
		bool var = n->kind == IDL_ARG_VAR_ARRAY || n->kind == IDL_ARG_CSTRING_VAR ||
			   (n->kind == IDL_ARG_OOL && !(n->flags & IDL_ARGF_FIXED));

		cmp_sep(&sb);
		if (var && (o->count == 0 || n->count == 0))
			strbuf_printf(&sb, "bound %s -> %s",
				      o->count == 0 ? "none" : idlc_printf(c->ctx, "%u", o->count),
				      n->count == 0 ? "none" : idlc_printf(c->ctx, "%u", n->count));
		else
			strbuf_printf(&sb, "%s %u -> %u", var ? "bound" : "count", o->count,
				      n->count);
	}
	if ((o->flags ^ n->flags) & IDL_ARGF_SIGNED) {
		cmp_sep(&sb);
		strbuf_puts(&sb, o->flags & IDL_ARGF_SIGNED ? "signed -> unsigned"
							    : "unsigned -> signed");
	}
	if (o->disposition != n->disposition) {
		cmp_sep(&sb);
		strbuf_printf(&sb, "disposition %s -> %s",
			      o->disposition >= 15
				      ? cmp_word(cmp_dispositions, CMP_NELEM(cmp_dispositions),
						 o->disposition - 15u)
				      : "none",
			      n->disposition >= 15
				      ? cmp_word(cmp_dispositions, CMP_NELEM(cmp_dispositions),
						 n->disposition - 15u)
				      : "none");
	}
	for (size_t i = 0; i < CMP_NELEM(cmp_flags); i++) {
		if (!((o->flags ^ n->flags) & cmp_flags[i].bit))
			continue;
		cmp_sep(&sb);
		strbuf_printf(&sb, "%s %s", cmp_flags[i].what,
			      n->flags & cmp_flags[i].bit ? "added" : "removed");
	}
	if (o_cio != n_cio) {
		cmp_sep(&sb);
		strbuf_printf(&sb, "countinout %s", n_cio ? "added" : "removed");
	}
	if (sb.len == 0)
		strbuf_puts(&sb, "its signature differs");
	r = sb.failed ? NULL : idlc_strdup(c->ctx, strbuf_str(&sb));
	strbuf_fini(&sb);
	return r != NULL ? r : "its signature differs";
}

/* Arguments that do not travel (waittime, msgoption, msgseqno ...): added or removed, they
 * change a C interface only. */
static void
cmp_implicit(struct cmp *c, uint32_t i, const struct idlc_routine *ort,
	     const struct idlc_routine *nrt)
{
	for (const struct idlc_arg *a = nrt->args; a != NULL; a = a->next) {
		const struct idlc_arg *b = ort->args;

		if (a->row->kind != IDL_ARG_IMPLICIT)
			continue;
		while (b != NULL && strcmp(b->name, a->name) != 0)
			b = b->next;
		if (b == NULL || b->row->kind != IDL_ARG_IMPLICIT)
			cmp_add(c, IDLC_COMPAT_NOTE, "arg-implicit", a->loc, nrt->name, i, i,
				"argument '%s' added to '%s' (it does not travel: the C "
				"interface changes, the messages do not)",
				a->name, nrt->name);
	}
	for (const struct idlc_arg *b = ort->args; b != NULL; b = b->next) {
		const struct idlc_arg *a = nrt->args;

		if (b->row->kind != IDL_ARG_IMPLICIT)
			continue;
		while (a != NULL && strcmp(b->name, a->name) != 0)
			a = a->next;
		if (a == NULL || a->row->kind != IDL_ARG_IMPLICIT)
			cmp_add(c, IDLC_COMPAT_NOTE, "arg-implicit", b->loc, nrt->name, i, i,
				"argument '%s' removed from '%s' (it does not travel: the C "
				"interface changes, the messages do not)",
				b->name, nrt->name);
	}
}

/* Whether the arguments' C types differ (the same bytes may be another C type). */
static void
cmp_ctype(struct cmp *c, uint32_t i, const struct idlc_routine *nrt, const struct idlc_arg *oa,
	  const struct idlc_arg *na)
{
	for (int side = IDLC_USER; side <= IDLC_SERVER; side++) {
		const char *ot = oa->c_type[side], *nt = na->c_type[side];

		if (ot == NULL || nt == NULL || strcmp(ot, nt) == 0)
			continue;
		cmp_add(c, IDLC_COMPAT_NOTE, "ctype-changed", na->loc, nrt->name, i, i,
			"argument '%s' of '%s' has the C type '%s' on the %s side, was '%s' (the "
			"same bytes travel)",
			na->name, nrt->name, nt, side == IDLC_USER ? "client" : "server", ot);
		return;
	}
}

/* Arguments whose wire forms all agree: only their names and C types may differ. */
static void
cmp_args_same(struct cmp *c, uint32_t i, const struct idlc_routine *nrt, const struct cmp_arg *oa,
	      const struct cmp_arg *na, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		const char *was = oa[k].a->name, *is = na[k].a->name;
		bool swapped = false;

		cmp_ctype(c, i, nrt, oa[k].a, na[k].a);
		if (strcmp(was, is) == 0)
			continue;
		for (unsigned m = 0; m < n; m++)
			if (m != k && strcmp(oa[m].a->name, is) == 0)
				swapped = true;
		if (swapped)
			cmp_add(c, IDLC_COMPAT_WARNING, "arg-swapped", na[k].a->loc, nrt->name, i,
				i,
				"argument '%s' of '%s' is where '%s' was, and '%s' was another of "
				"its arguments: if they were swapped, old clients pass them the "
				"other way round (the messages look the same, so the hello accepts "
				"it)",
				is, nrt->name, was, is);
		else
			cmp_add(c, IDLC_COMPAT_NOTE, "arg-renamed", na[k].a->loc, nrt->name, i, i,
				"argument '%s' of '%s' renamed to '%s'", was, nrt->name, is);
	}
}

/* Arguments that differ in what travels: each difference is breaking. */
static void
cmp_args_differ(struct cmp *c, uint32_t i, const struct idlc_routine *ort,
		const struct idlc_routine *nrt, struct cmp_arg *oa, unsigned no, struct cmp_arg *na,
		unsigned nn)
{
	unsigned errors_before = c->errors;
	int last = -1;

	/* Pair by name; then an unpaired argument with the one unpaired at its position on
	 * the other side, when both carry the same: a rename. */
	for (unsigned k = 0; k < nn; k++)
		for (unsigned m = 0; m < no && na[k].match < 0; m++)
			if (oa[m].match < 0 && strcmp(oa[m].a->name, na[k].a->name) == 0) {
				na[k].match = (int)m;
				oa[m].match = (int)k;
			}
	for (unsigned k = 0; k < nn && k < no; k++)
		if (na[k].match < 0 && oa[k].match < 0 && strcmp(na[k].form, oa[k].form) == 0) {
			na[k].match = (int)k;
			oa[k].match = (int)k;
			cmp_add(c, IDLC_COMPAT_NOTE, "arg-renamed", na[k].a->loc, nrt->name, i, i,
				"argument '%s' of '%s' renamed to '%s'", oa[k].a->name, nrt->name,
				na[k].a->name);
		}

	for (unsigned k = 0; k < nn; k++) {
		const struct cmp_arg *o;

		if (na[k].match < 0) {
			cmp_add(c, IDLC_COMPAT_ERROR, "arg-added", na[k].a->loc, nrt->name, i, i,
				"argument '%s' added to '%s'", na[k].a->name, nrt->name);
			continue;
		}
		o = &oa[na[k].match];
		if (strcmp(o->form, na[k].form) != 0)
			cmp_add(c, IDLC_COMPAT_ERROR, "arg-retyped", na[k].a->loc, nrt->name, i, i,
				"argument '%s' of '%s' retyped: %s", na[k].a->name, nrt->name,
				cmp_retyped(c, ort, o->a->row, nrt, na[k].a->row));
		else
			cmp_ctype(c, i, nrt, o->a, na[k].a);
		/* In the new order, the old positions of the paired arguments must grow: one
		 * that comes back before an argument it followed has moved. */
		if (na[k].match < last)
			cmp_add(c, IDLC_COMPAT_ERROR, "arg-moved", na[k].a->loc, nrt->name, i, i,
				"argument '%s' of '%s' moved from position %u to %u", na[k].a->name,
				nrt->name, o->pos, na[k].pos);
		else
			last = na[k].match;
	}
	for (unsigned m = 0; m < no; m++)
		if (oa[m].match < 0)
			cmp_add(c, IDLC_COMPAT_ERROR, "arg-removed", oa[m].a->loc, ort->name, i, i,
				"argument '%s' removed from '%s'", oa[m].a->name, ort->name);
	/* The forms differ, so the hello refuses the routine: it must not go unreported. */
	if (c->errors == errors_before)
		cmp_add(c, IDLC_COMPAT_ERROR, "signature-changed", nrt->loc, nrt->name, i, i,
			"the signature of '%s' changed", nrt->name);
}

/* A routine of the same name at the same number in both versions. */
static void
cmp_same(struct cmp *c, uint32_t i, const struct idlc_routine *ort, const struct idlc_routine *nrt)
{
	struct cmp_arg *oa = idlc_alloc(c->ctx, ((size_t)ort->nargs + 1) * sizeof *oa);
	struct cmp_arg *na = idlc_alloc(c->ctx, ((size_t)nrt->nargs + 1) * sizeof *na);
	unsigned no, nn;
	bool same;

	if (oa == NULL || na == NULL) {
		c->oom = true;
		return;
	}
	if (ort->kind != nrt->kind)
		cmp_add(c, IDLC_COMPAT_ERROR, "routine-kind", nrt->loc, nrt->name, i, i,
			"%s '%s' became a %s: old clients that call it get IDL_ESIGNATURE",
			ort->kind == IDLC_RT_ROUTINE ? "routine" : "simpleroutine", nrt->name,
			nrt->kind == IDLC_RT_ROUTINE ? "routine" : "simpleroutine");
	no = cmp_travelling(c->ctx, ort, oa);
	nn = cmp_travelling(c->ctx, nrt, na);
	same = no == nn;
	for (unsigned k = 0; same && k < nn; k++)
		same = strcmp(oa[k].form, na[k].form) == 0;
	if (same)
		cmp_args_same(c, i, nrt, oa, na, nn);
	else
		cmp_args_differ(c, i, ort, nrt, oa, no, na, nn);
	cmp_implicit(c, i, ort, nrt);
}

/* The old version's routine `o` at number i, whose name the new version lacks. */
static void
cmp_gone(struct cmp *c, uint32_t i, const struct idlc_routine *o)
{
	const struct idlc_routine *n = cmp_new(c, i);

	if (n != NULL && n->kind == IDLC_RT_SKIP) {
		cmp_add(c, IDLC_COMPAT_WARNING, "routine-retired", n->loc, o->name, i, i,
			"routine '%s' retired into a skip (id %lld): old clients that call it get "
			"MIG_BAD_ID",
			o->name, (long long)c->om->base + i);
	} else if (n != NULL && cmp_find(c->o, c->no, n->name) < 0) {
		/* Another name in its place, new to this version: a rename when the new
		 * routine under the old name would hash the same, else a replacement. */
		struct idl_routine_desc as_old = *n->row;

		as_old.name = o->name;
		if (idl_routine_sig_hash_v2(&as_old) == idl_routine_sig_hash_v2(o->row))
			cmp_add(c, IDLC_COMPAT_WARNING, "routine-renamed", n->loc, o->name, i, i,
				"routine '%s' renamed to '%s' (id %lld): old clients that call it "
				"get IDL_ESIGNATURE, as the signature covers the name",
				o->name, n->name, (long long)c->om->base + i);
		else
			cmp_add(c, IDLC_COMPAT_ERROR, "routine-replaced", n->loc, o->name, i, i,
				"routine '%s' (id %lld) replaced by '%s', whose arguments differ: "
				"old clients that call it get IDL_ESIGNATURE",
				o->name, (long long)c->om->base + i, n->name);
	} else {
		cmp_add(c, IDLC_COMPAT_ERROR, "routine-removed", o->loc, o->name, i, -1,
			"routine '%s' (id %lld) removed without a skip: old clients that call it "
			"get %s (id %lld is %s now); write 'skip;' in its place to retire it",
			o->name, (long long)c->om->base + i, cmp_call_name(cmp_call(c, o, n)),
			(long long)c->om->base + i, cmp_what(c, n));
	}
}

/* The new version's routine `n` at number i, whose name the old version lacks (a rename
 * was reported from the old side). */
static void
cmp_new_name(struct cmp *c, uint32_t i, const struct idlc_routine *n)
{
	const struct idlc_routine *o = cmp_old(c, i);
	long long id = (long long)c->nm->base + i;

	if (o == NULL)
		cmp_add(c, IDLC_COMPAT_NOTE, "routine-added", n->loc, n->name, -1, i,
			"routine '%s' added (id %lld): new clients that call it on an old server "
			"get MIG_BAD_ID",
			n->name, id);
	else if (o->kind == IDLC_RT_SKIP)
		cmp_add(c, IDLC_COMPAT_NOTE, "skip-filled", n->loc, n->name, -1, i,
			"routine '%s' fills the skip at id %lld: new clients that call it on an "
			"old server get MIG_BAD_ID",
			n->name, id);
	else if (cmp_find(c->n, c->nn, o->name) >= 0)
		cmp_add(c, IDLC_COMPAT_ERROR, "routine-inserted", n->loc, n->name, i, i,
			"routine '%s' inserted at id %lld, which old clients call as '%s': the "
			"routines after it change ids",
			n->name, id, o->name);
}

static void
cmp_routines(struct cmp *c)
{
	uint32_t max = c->no > c->nn ? c->no : c->nn;

	for (uint32_t i = 0; i < max; i++) {
		const struct idlc_routine *o = cmp_old(c, i), *n = cmp_new(c, i);
		bool oskip = o != NULL && o->kind == IDLC_RT_SKIP;
		bool nskip = n != NULL && n->kind == IDLC_RT_SKIP;

		if (o != NULL && !oskip) {
			int64_t j = cmp_find(c->n, c->nn, o->name);

			if (j == i)
				cmp_same(c, i, o, n);
			else if (j >= 0)
				cmp_add(c, IDLC_COMPAT_ERROR, "routine-moved", c->n[j]->loc,
					o->name, i, j,
					"routine '%s' moved from id %lld to id %lld: old clients "
					"that call it get %s (id %lld is %s now)",
					o->name, (long long)c->om->base + i,
					(long long)c->nm->base + j,
					cmp_call_name(cmp_call(c, o, n)),
					(long long)c->om->base + i, cmp_what(c, n));
			else
				cmp_gone(c, i, o);
		}
		if (n != NULL && !nskip && cmp_find(c->o, c->no, n->name) < 0)
			cmp_new_name(c, i, n);
		if (oskip && n == NULL)
			cmp_add(c, IDLC_COMPAT_NOTE, "skip-removed", o->loc, NULL, -1, -1,
				"the skip at id %lld is gone (nothing answered it)",
				(long long)c->om->base + i);
		else if (nskip && o == NULL)
			cmp_add(c, IDLC_COMPAT_NOTE, "skip-added", n->loc, NULL, -1, -1,
				"a skip added at id %lld", (long long)c->nm->base + i);
	}
}

/* Whether two optional texts are the same (NULL reads as ""). */
static bool
cmp_text_eq(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* The subsystem statement and what applies to every routine. */
static void
cmp_subsystem(struct cmp *c)
{
	const struct idlc_module *om = c->om, *nm = c->nm;
	struct idlc_loc at = nm->subsystem_loc;

	if (strcmp(om->subsystem, nm->subsystem) != 0)
		cmp_add(c, IDLC_COMPAT_ERROR, "subsystem-renamed", at, NULL, -1, -1,
			"subsystem '%s' renamed to '%s': the hello names it, so every call of an "
			"old client gets MIG_BAD_ID",
			om->subsystem, nm->subsystem);
	if (om->base != nm->base)
		cmp_add(c, IDLC_COMPAT_ERROR, "base-changed", at, NULL, -1, -1,
			"subsystem base moved from %d to %d: every request id changes, and every "
			"call of an old client gets MIG_BAD_ID",
			(int)om->base, (int)nm->base);
	if (!cmp_text_eq(om->waittime, nm->waittime))
		cmp_add(c, IDLC_COMPAT_NOTE, "waittime-changed", at, NULL, -1, -1,
			"waittime %s, was %s (the client's deadline only)",
			nm->waittime != NULL ? nm->waittime : "none",
			om->waittime != NULL ? om->waittime : "none");
	if (!cmp_text_eq(om->userprefix, nm->userprefix))
		cmp_add(c, IDLC_COMPAT_NOTE, "userprefix-changed", at, NULL, -1, -1,
			"userprefix '%s', was '%s' (the client stubs' C names only)",
			nm->userprefix, om->userprefix);
	if (!cmp_text_eq(om->serverprefix, nm->serverprefix))
		cmp_add(c, IDLC_COMPAT_NOTE, "serverprefix-changed", at, NULL, -1, -1,
			"serverprefix '%s', was '%s' (the server routines' C names only)",
			nm->serverprefix, om->serverprefix);
	if (!cmp_text_eq(om->serverdemux, nm->serverdemux))
		cmp_add(c, IDLC_COMPAT_NOTE, "serverdemux-changed", at, NULL, -1, -1,
			"serverdemux '%s', was '%s' (the demux's C name only)",
			nm->serverdemux != NULL ? nm->serverdemux : "",
			om->serverdemux != NULL ? om->serverdemux : "");
}

int
idlc_compat(struct idlc_ctx *old, struct idlc_ctx *new, struct idlc_compat *out)
{
	struct cmp c;
	struct idlc_change *arr;
	size_t k = 0;

	memset(out, 0, sizeof *out);
	memset(&c, 0, sizeof c);
	c.ctx = new;
	c.om = idlc_module(old);
	c.nm = idlc_module(new);
	if (c.om->desc == NULL || c.nm->desc == NULL || idlc_error_count(old) != 0 ||
	    idlc_error_count(new) != 0)
		return -1;
	c.tail = &c.head;
	c.o = cmp_index(new, c.om, &c.no);
	c.n = cmp_index(new, c.nm, &c.nn);
	if (c.o == NULL || c.n == NULL)
		return -1;
	c.sub_refused = strcmp(c.om->subsystem, c.nm->subsystem) != 0 || c.om->base != c.nm->base;
	cmp_subsystem(&c);
	cmp_routines(&c);
	arr = idlc_alloc(new, (c.count + 1) * sizeof *arr);
	if (c.oom || arr == NULL)
		return -1;
	for (const struct cmp_item *it = c.head; it != NULL; it = it->next) {
		arr[k++] = it->ch;
		if (it->ch.level == IDLC_COMPAT_ERROR)
			out->errors++;
		else if (it->ch.level == IDLC_COMPAT_WARNING)
			out->warnings++;
		else
			out->notes++;
	}
	out->old_file = c.om->input_name;
	out->new_file = c.nm->input_name;
	out->old_name = c.om->subsystem;
	out->new_name = c.nm->subsystem;
	out->old_base = c.om->base;
	out->new_base = c.nm->base;
	out->changes = arr;
	out->nchanges = k;
	return 0;
}
