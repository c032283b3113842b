/*
 * emit_async.c - the asynchronous client stubs (docs/generated-code.md, "Asynchronous
 * stubs"): for every routine, <stub>_async in <sub>User.c with the static completion the
 * runtime calls, and the done function's type and the stub's prototype in <sub>.h - unless
 * -noasync.
 *
 * Nothing here builds or checks a message its own way. The stub refuses and packs the
 * request with the synchronous stub's code (emit_user.c: user_precheck(), user_alloc(),
 * user_fill()) and hands it to idl_call_async(), which copies it; the completion checks the
 * reply with the synchronous stub's checks (emit_user_reply.c: user_check_reply()) and passes
 * the out arguments to the done function in the list <routine>_send_reply() has too
 * (user_reply_list()). What differs is where the values go: the synchronous stub copies them
 * into its caller's variables and buffers, the completion passes scalars by value, inline
 * arrays, strings and records as pointers into the reply (borrowed until the done function
 * returns) and what came out of line as it came (the done function's own).
 *
 * The one thing the completion cannot get from the reply is the caller's room for a
 * `countinout` array, which the synchronous stub reads from *<arg>Cnt: the asynchronous
 * stub of such a routine passes, as the runtime's ctx, a small malloc()ed record of the
 * caller's ctx and that room, which the completion frees (every call accepted completes
 * exactly once; a refused one never, and the stub frees it).
 */
#include <config.h>

#include <inttypes.h>
#include <string.h>

#include "emit_user.h"

bool
emit_async_any(const struct emit_out *o)
{
	if (o->opts->no_async)
		return false;
	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next)
		if (rt->kind == IDLC_RT_ROUTINE)
			return true;
	return false;
}

bool
emit_async_record(const struct emit_out *o, const struct idlc_routine *rt)
{
	return !o->opts->no_async && rt->kind == IDLC_RT_ROUTINE &&
	       idlc_any_arg(rt, IDLC_AK_COUNTINOUT);
}

/* The client stub's name with a suffix: _async, _async_complete, _done_t. */
static const char *
async_name(struct emit_out *o, const struct idlc_routine *rt, const char *suffix)
{
	const char *r = idlc_printf(o->ctx, "%s%s", emit_user_name(o, rt), suffix);

	return r != NULL ? r : suffix;
}

const char *
emit_async_name(struct emit_out *o, const struct idlc_routine *rt)
{
	return async_name(o, rt, "_async");
}

/* The C type of one element of an array or string the done function borrows. */
static const char *
async_elem(const struct idlc_arg *a)
{
	if (a->c_elem != NULL)
		return a->c_elem;
	return idlc_is(a, IDLC_AK_PORTS) ? "mach_port_t" : emit_wire_ctype(a);
}

bool
emit_inline_array(const struct idlc_arg *a)
{
	switch (a->rtype->arg_kind) {
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_FIXED:
	case IDL_ARG_CSTRING_VAR:
		return true;
	default:
		return false;
	}
}

const char *
async_done_param(struct user_stub *s, const struct idlc_arg *a)
{
	struct emit_out *o = s->o;
	const char *c = a->c_type[EMIT_USER];
	const char *r;

	if (idlc_is(a, IDLC_AK_INLINE_PORTS))
		r = idlc_printf(o->ctx, "const %s *%s", async_elem(a), a->name);
	else if (idlc_is(a, IDLC_AK_DESC))
		r = idlc_printf(o->ctx, "%s %s%s", c, idlc_is(a, IDLC_AK_USER_ELEM) ? "*" : "",
				a->name);
	else if (idlc_is(a, IDLC_AK_RECORD))
		r = idlc_printf(o->ctx, "const %s *%s", c, a->name);
	else if (emit_inline_array(a))
		r = idlc_printf(o->ctx, "const %s *%s", async_elem(a), a->name);
	else
		r = idlc_printf(o->ctx, "%s %s", c, a->name);
	return r != NULL ? r : a->name;
}

/* `(const T *)(const void *)p`, or p itself when it points at T already (char). */
static const char *
async_cast(struct emit_out *o, const char *elem, const char *wire, const char *p)
{
	if (strcmp(elem, wire) == 0)
		return p;
	return idlc_printf(o->ctx, "(const %s *)(const void *)%s", elem, p);
}

const char *
async_done_value(struct user_stub *s, const struct idlc_arg *a, bool zero)
{
	struct emit_out *o = s->o;
	const char *d = idlc_printf(o->ctx, "%s%s", s->rp.f, emit_field_name(o, a));
	const char *r;

	if (idlc_is(a, IDLC_AK_INLINE_PORTS))
		r = zero ? "NULL"
			 : idlc_printf(o->ctx, "(const %s *)(uintptr_t)%s.addr", async_elem(a), d);
	else if (idlc_is(a, IDLC_AK_DESC))
		r = zero ? "0" : emit_desc_value(o, d, a, EMIT_USER);
	else if (idlc_is(a, IDLC_AK_RECORD))
		r = zero ? "NULL"
			 : idlc_printf(o->ctx, "(const %s *)(const void *)&%s",
				       a->c_type[EMIT_USER], d);
	else if (idlc_is(a, IDLC_AK_VAR))
		r = zero ? "NULL" : a->name; /* the completion's local, set after the checks */
	else if (emit_inline_array(a))
		r = zero ? "NULL" : async_cast(o, async_elem(a), emit_wire_ctype(a), d);
	else
		r = zero ? "0" : d;
	return r != NULL ? r : "0";
}

/*
 * The stub's parameters: the synchronous stub's, but for the out arguments, which go to the
 * done function; inout ones are inputs here, taken as an in argument of their type is (by
 * value, or by a pointer to const elements); a `countinout` array's room is a value. Then the
 * done function, its context and where the call's handle goes.
 */
struct async_params {
	const char *done_t;
};

static void
async_param_item(struct emit_list *l, const struct idlc_arg *a, const void *data)
{
	const struct async_params *p = data;
	enum emit_side side = EMIT_USER;

	if (idlc_is(a, IDLC_AK_COUNTINOUT)) {
		emit_item(l, "mach_msg_type_number_t %sCnt", a->name);
	} else if (a->dir == IDL_DIR_INOUT) {
		emit_item(l, "%s %s%s", a->c_in, idlc_is(a, IDLC_AK_IN_ELEM) ? "*" : "", a->name);
		if (idlc_is(a, IDLC_AK_USER_POLY))
			emit_item(l, "mach_msg_type_name_t %sPoly", a->name);
		if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT))
			emit_item(l, "mach_msg_type_number_t %sCnt", a->name);
		if (idlc_is(a, IDLC_AK_USER_DEALLOC))
			emit_item(l, "boolean_t %sDealloc", a->name);
	} else if (a->dir != IDL_DIR_OUT && emit_param_pred(a, &side)) {
		emit_param_item(l, a, &side);
	}
	if (a->next == NULL) {
		emit_item(l, "%s *idl_done", p->done_t);
		emit_item(l, "void *idl_ctx");
		emit_item(l, "idl_async_t **idl_callp");
	}
}

static void
async_params(struct emit_out *o, const struct idlc_routine *rt, const char *tail)
{
	struct async_params p;

	p.done_t = async_name(o, rt, "_done_t");
	emit_list(o, rt->args, NULL, async_param_item, &p, ", ", "void", tail);
}

void
emit_async_done_params(struct emit_out *o, const struct idlc_routine *rt, const char *tail)
{
	struct user_stub s;

	memset(&s, 0, sizeof s);
	s.o = o;
	s.rt = rt;
	s.rp.f = "";
	user_reply_list(&s, USER_LIST_DONE, "void *idl_ctx",
			idlc_printf(o->ctx, "kern_return_t %s", emit_local(o, rt, "kr")), tail);
}

/* The done function's type: its context, the outcome, the out arguments' list. */
static void
async_done_type(struct emit_out *o, const struct idlc_routine *rt)
{
	emit(o, "typedef void %s(", async_name(o, rt, "_done_t"));
	emit_async_done_params(o, rt, ");\n");
}

/*
 * The header.
 */

/* Whether a request argument is given away at the call (dealloc, a moving disposition) -
 * or, with `dealloc[]` or a polymorphic port, may be. */
static bool
async_given(const struct idlc_arg *a)
{
	unsigned disp = a->row != NULL ? a->row->disposition : 0;

	return idlc_is(a, IDLC_AK_GIVEN) ||
	       (!idlc_is(a, IDLC_AK_OOL_DATA) && !idlc_is(a, IDLC_AK_USER_POLY) && disp >= 16 &&
		disp <= 18);
}

/* "a", "a and b", "a, b and c" of the labels `label` gives the arguments (NULL: none), and
 * whether there were several. */
static const char *
async_names(struct emit_out *o, const struct idlc_routine *rt,
	    const char *(*label)(struct emit_out *o, const struct idlc_arg *a), bool *several)
{
	const char *r = NULL, *last = NULL, *l;

	*several = false;
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		l = label(o, a);
		if (l == NULL)
			continue;
		if (last != NULL)
			r = r == NULL ? last : idlc_printf(o->ctx, "%s, %s", r, last);
		last = l;
	}
	if (r == NULL)
		return last;
	*several = true;
	return idlc_printf(o->ctx, "%s and %s", r, last);
}

/* What the request reads of the caller's memory when it is sent: out-of-line data and ports
 * not given away, or that may not be. */
static const char *
async_label_kept(struct emit_out *o, const struct idlc_arg *a)
{
	if (!idlc_is(a, IDLC_AK_REQUEST | IDLC_AK_DESC) || async_given(a))
		return NULL;
	if (idlc_is(a, IDLC_AK_USER_DEALLOC))
		return idlc_printf(o->ctx, "%s (unless %sDealloc)", a->name, a->name);
	if (idlc_is(a, IDLC_AK_USER_POLY))
		return idlc_printf(o->ctx, "%s (unless %sPoly moves it)", a->name, a->name);
	return a->name;
}

static const char *
async_label_given(struct emit_out *o, const struct idlc_arg *a)
{
	(void)o;
	return idlc_is(a, IDLC_AK_REQUEST | IDLC_AK_DESC) && async_given(a) ? a->name : NULL;
}

static const char *
async_label_token(struct emit_out *o, const struct idlc_arg *a)
{
	(void)o;
	return idlc_is(a, IDLC_AK_TOKEN | IDLC_AK_USER_PARAM) ? a->name : NULL;
}

static const char *
async_label_owned(struct emit_out *o, const struct idlc_arg *a)
{
	if (!idlc_is(a, IDLC_AK_REPLY | IDLC_AK_DESC))
		return NULL;
	if (idlc_is(a, IDLC_AK_INLINE_PORTS))
		return idlc_printf(o->ctx, "the ports of %s", a->name);
	return a->name;
}

/* A comment of words, wrapped at EMIT_COLUMNS. */
static void
async_comment(struct emit_out *o, const char *text)
{
	const char *p = text;
	unsigned col = 3 + 8u * (unsigned)o->indent;

	emit(o, "/*");
	while (*p != '\0') {
		size_t n = strcspn(p, " ");

		if (col + 1 + n + 3 > EMIT_COLUMNS) {
			emit(o, "\n *");
			col = 2 + 8u * (unsigned)o->indent;
		}
		emit(o, " %.*s", (int)n, p);
		col += 1 + (unsigned)n;
		p += n;
		while (*p == ' ')
			p++;
	}
	emit(o, " */\n");
}

/* The comment above a routine's declarations: what of its arguments outlives the call. */
static void
async_routine_comment(struct emit_out *o, const struct idlc_routine *rt)
{
	const char *text = idlc_printf(o->ctx, "Routine %s", rt->name);
	const char *sep = ":", *l;
	bool several;

	l = async_names(o, rt, async_label_kept, &several);
	if (l != NULL) {
		text = idlc_printf(o->ctx,
				   "%s%s %s must stay valid until the done function runs (%s "
				   "read when the request is sent)",
				   text, sep, l, several ? "they are" : "it is");
		sep = ";";
	}
	l = async_names(o, rt, async_label_given, &several);
	if (l != NULL) {
		text = idlc_printf(o->ctx, "%s%s the call takes %s", text, sep, l);
		sep = ";";
	}
	l = async_names(o, rt, async_label_token, &several);
	if (l != NULL) {
		text = idlc_printf(o->ctx, "%s%s %s %s filled when the call is accepted", text, sep,
				   l, several ? "are" : "is");
		sep = ";";
	}
	l = async_names(o, rt, async_label_owned, &several);
	if (l != NULL) {
		text = idlc_printf(o->ctx, "%s%s the done function owns %s", text, sep, l);
		sep = ";";
	}
	if (*sep == ':')
		emit(o, "/* %s */\n", text);
	else
		async_comment(o, idlc_printf(o->ctx, "%s.", text));
}

void
emit_async_prototypes(struct emit_out *o)
{
	if (!emit_async_any(o))
		return;
	emit(o, "\n/*\n"
		" * Asynchronous stubs: <routine>_async sends the request and returns 0 when "
		"the call is\n"
		" * accepted; its done function runs once, later, in idl_port_dispatch(), "
		"idl_port_wait() or\n"
		" * idl_port_close() (<idl/idl_async.h>). Otherwise it returns an error, "
		"*idl_callp is NULL\n"
		" * and the done function never runs. Inline arguments are copied at the call. "
		"The done\n"
		" * function gets the out arguments: arrays, strings and records point into the "
		"reply, valid\n"
		" * until it returns; out-of-line data and ports are its own. When kr is not "
		"KERN_SUCCESS\n"
		" * they are 0 or NULL, and idl_errdetail() says why.\n"
		" */\n");
	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind != IDLC_RT_ROUTINE)
			continue;
		emit(o, "\n");
		async_routine_comment(o, rt);
		async_done_type(o, rt);
		emit(o, "kern_return_t %s(", async_name(o, rt, "_async"));
		async_params(o, rt, ");\n");
	}
}

/*
 * The completion.
 */

/* How the completion reaches the reply: through `rp`, a pointer to the reply struct, or to a
 * union of it with the bytes of the largest reply when there is a variable part. */
static void
async_reply_msg(struct user_stub *s)
{
	struct emit_out *o = s->o;
	struct user_msg *m = &s->rp;
	const char *v = emit_local(o, s->rt, "rp");

	m->var = v;
	m->max = s->rt->rep_max;
	m->var_part = s->rt->rep_max != s->rt->rep_fixed;
	m->heap = false;
	if (m->var_part) {
		m->f = idlc_printf(o->ctx, "%s->m.", v);
		m->head = idlc_printf(o->ctx, "&%s->m.head", v);
		m->buf = idlc_printf(o->ctx, "%s->buf", v);
		m->size = idlc_printf(o->ctx, "sizeof %s->m", v);
	} else {
		m->f = idlc_printf(o->ctx, "%s->", v);
		m->head = idlc_printf(o->ctx, "&%s->head", v);
		m->buf = idlc_printf(o->ctx, "(char *)%s", v);
		m->size = idlc_printf(o->ctx, "sizeof *%s", v);
	}
}

/* The record of the caller's context and the room of each countinout array. */
static void
async_record(struct emit_out *o, const struct idlc_routine *rt)
{
	emit(o,
	     "/* What the completion of %s needs besides the done function: the caller's "
	     "context and\n * the room the request told the server of. */\n",
	     rt->name);
	emit(o, "struct %s_%s_async {\n", o->m->subsystem, rt->name);
	emit(o, "\tvoid *ctx;\n");
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_COUNTINOUT))
			emit(o, "\tmach_msg_type_number_t %sCnt;\n", a->name);
	emit(o, "};\n\n");
}

/* The locals that point at the variable out arguments, set in order once the reply passed
 * its checks (as the synchronous stub's copy-out walks them). */
static void
async_point_vars(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const struct idlc_arg *a, *last = NULL;

	for (a = s->rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_VAR | IDLC_AK_REPLY))
			last = a;
	if (last == NULL)
		return;
	emit(o, "%s = %s;\n", s->off, s->rp.size);
	for (a = s->rt->args; a != NULL; a = a->next) {
		const char *cnt = user_received_count(s, a);

		if (!idlc_is(a, IDLC_AK_VAR | IDLC_AK_REPLY))
			continue;
		if (strcmp(async_elem(a), "char") == 0)
			emit(o, "%s = %s + %s;\n", a->name, s->rp.buf, s->off);
		else
			emit(o, "%s = (const %s *)(const void *)(%s + %s);\n", a->name,
			     async_elem(a), s->rp.buf, s->off);
		if (a != last)
			emit(o, "%s += IDL_MSG_ROUND(%s);\n", s->off,
			     emit_bytes(o, cnt, a->rtype->elem_size));
	}
}

/* The reply's countinout arrays against the room the caller gave: more than it is refused
 * (the synchronous stub copies what fits; here nothing is copied). */
static void
async_check_room(struct user_stub *s)
{
	struct emit_out *o = s->o;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		const char *cnt = user_received_count(s, a);

		if (!idlc_is(a, IDLC_AK_COUNTINOUT))
			continue;
		emit(o, "if (%s > %sCnt) {\n", cnt, a->name);
		emit_indent(o, 1);
		if (s->rt->rep_ndesc != 0)
			emit(o, "idl_msg_destroy(%s);\n", s->rp.head);
		user_fail_value(s, idlc_printf(o->ctx, "%s = ", s->kr), "MIG_ARRAY_TOO_LARGE",
				idlc_printf(o->ctx, "%s: %%u elements came, room for %%u", a->name),
				idlc_printf(o->ctx, "(unsigned)%s, (unsigned)%sCnt", cnt, a->name),
				";\n");
		emit(o, "goto fail;\n");
		emit_indent(o, -1);
		emit(o, "}\n");
	}
}

static void
async_complete(struct emit_out *o, const struct idlc_routine *rt, bool record)
{
	struct user_stub s;
	const char *done_t = async_name(o, rt, "_done_t");
	const char *rep = emit_local(o, rt, "rep");
	const char *done = emit_local(o, rt, "done");
	const char *ctx = record ? emit_local(o, rt, "ctx") : "idl_ctx";
	const char *call = emit_local(o, rt, "call");
	const char *params[4], *free_args[2];

	memset(&s, 0, sizeof s);
	s.o = o;
	s.rt = rt;
	s.completing = true;
	s.kr = emit_local(o, rt, "kr");
	s.off = emit_local(o, rt, "off");
	s.len = emit_local(o, rt, "len");
	s.n = emit_local(o, rt, "n");
	async_reply_msg(&s);

	params[0] = "void *idl_done";
	params[1] = "void *idl_ctx";
	params[2] = idlc_printf(o->ctx, "kern_return_t %s", s.kr);
	params[3] = idlc_printf(o->ctx, "idl_msg_header_t *%s", rep);
	emit(o, "static void\n%s(", async_name(o, rt, "_async_complete"));
	emit_strings(o, params, 4, ", ", "", ")\n");
	emit(o, "{\n");
	emit_indent(o, 1);
	emit(o, "%s *%s = (%s *)(uintptr_t)idl_done;\n", done_t, done, done_t);
	if (record) {
		emit(o, "struct %s_%s_async *%s = idl_ctx;\n", o->m->subsystem, rt->name, call);
		emit(o, "void *%s = %s->ctx;\n", ctx, call);
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
			if (idlc_is(a, IDLC_AK_COUNTINOUT))
				emit(o, "mach_msg_type_number_t %sCnt = %s->%sCnt;\n", a->name,
				     call, a->name);
	}
	if (s.rp.var_part)
		emit(o,
		     "union {\n\tstruct %s_%s_reply m;\n\tchar buf[%" PRIu32
		     "];\n} *%s = (void *)%s;\n",
		     o->m->subsystem, rt->name, s.rp.max, s.rp.var, rep);
	else
		emit(o, "struct %s_%s_reply *%s = (struct %s_%s_reply *)%s;\n", o->m->subsystem,
		     rt->name, s.rp.var, o->m->subsystem, rt->name, rep);
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_VAR | IDLC_AK_REPLY))
			emit(o, "const %s *%s;\n", async_elem(a), a->name);
	if (s.rp.var_part)
		emit(o, "size_t %s;\nsize_t %s;\n", s.off, s.len);
	emit(o, "\n");
	if (record)
		emit(o, "free(%s);\n", call);
	emit(o, "if (%s != KERN_SUCCESS)\n\tgoto fail;\n", s.kr);
	user_check_reply(&s);
	async_check_room(&s);
	emit(o, "\n");
	async_point_vars(&s);
	emit(o, "%s(", done);
	user_reply_list(&s, USER_LIST_VALUES, ctx, "KERN_SUCCESS", ");\n");
	/* An inline array of ports was lent to the done function; its ports are its own. */
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		const char *d = idlc_printf(o->ctx, "%s%s", s.rp.f, emit_field_name(o, a));

		if (!idlc_is(a, IDLC_AK_REPLY | IDLC_AK_INLINE_PORTS))
			continue;
		free_args[0] = idlc_printf(o->ctx, "(void *)(uintptr_t)%s.addr", d);
		free_args[1] = idlc_printf(o->ctx, "(size_t)%s.size * sizeof(idl_port_t)", d);
		emit(o, "idl_ool_free(");
		emit_strings(o, free_args, 2, ", ", "", ");\n");
	}
	emit(o, "return;\n");
	emit_indent(o, -1);
	emit(o, "\nbad_reply:\n");
	emit_indent(o, 1);
	if (rt->rep_ndesc != 0)
		emit(o, "idl_msg_destroy(%s);\n", s.rp.head);
	user_fail_value(&s, idlc_printf(o->ctx, "%s = ", s.kr), "MIG_TYPE_ERROR", "malformed reply",
			NULL, ";\n");
	emit_indent(o, -1);
	emit(o, "fail:\n");
	emit_indent(o, 1);
	emit(o, "%s(", done);
	user_reply_list(&s, USER_LIST_ZEROS, ctx, s.kr, ");\n");
	emit_indent(o, -1);
	emit(o, "}\n");
}

/*
 * The stub.
 */

static void
async_stub(struct emit_out *o, const struct idlc_routine *rt, bool record)
{
	struct user_stub s;
	const char *call = emit_local(o, rt, "call");
	bool tokens = idlc_any_arg(rt, IDLC_AK_TOKEN | IDLC_AK_USER_PARAM);
	const char *items[10];
	bool keep;

	memset(&s, 0, sizeof s);
	s.o = o;
	s.rt = rt;
	s.async = true;
	s.kr = emit_local(o, rt, "kr");
	s.off = emit_local(o, rt, "off");
	s.len = emit_local(o, rt, "len");
	s.n = emit_local(o, rt, "n");
	user_msg_init(&s, &s.rq, "rq", false);
	keep = s.rq.heap || record || tokens;

	emit(o, "kern_return_t\n%s(", async_name(o, rt, "_async"));
	async_params(o, rt, ")\n");
	emit(o, "{\n");
	emit_indent(o, 1);
	if (s.rq.heap)
		emit(o, "struct %s_%s_request *%s;\n", o->m->subsystem, rt->name, s.rq.var);
	else if (s.rq.var_part)
		emit(o, "union {\n\tstruct %s_%s_request m;\n\tchar buf[%" PRIu32 "];\n} %s;\n",
		     o->m->subsystem, rt->name, s.rq.max, s.rq.var);
	else
		emit(o, "struct %s_%s_request %s;\n", o->m->subsystem, rt->name, s.rq.var);
	if (s.rq.var_part)
		emit(o, "size_t %s;\nsize_t %s;\n", s.off, s.len);
	user_declare_ends(&s);
	if (record)
		emit(o, "struct %s_%s_async *%s;\n", o->m->subsystem, rt->name, call);
	if (keep)
		emit(o, "kern_return_t %s;\n", s.kr);
	emit(o, "\n");
	/* What the stub refuses itself, it refuses before anything is allocated, as the
	 * synchronous stub does - and says no call was made. */
	if (user_refuses(&s) || s.rq.heap || record)
		emit(o, "if (idl_callp != NULL)\n\t*idl_callp = NULL;\n");
	user_precheck(&s);
	user_alloc(&s);
	if (record) {
		const char *what = "no memory for the call";

		emit(o, "%s = malloc(sizeof *%s);\n", call, call);
		if (s.rq.heap) {
			emit(o, "if (%s == NULL) {\n\tfree(%s);\n\t", call, s.rq.var);
			user_fail_value(&s, "return ", "IDL_ENOMEM", what, NULL, ";\n");
			emit(o, "}\n");
		} else {
			emit(o, "if (%s == NULL)\n\t", call);
			user_fail_value(&s, "return ", "IDL_ENOMEM", what, NULL, ";\n");
		}
		emit(o, "%s->ctx = idl_ctx;\n", call);
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
			if (idlc_is(a, IDLC_AK_COUNTINOUT))
				emit(o, "%s->%sCnt = %sCnt;\n", call, a->name, a->name);
	}
	user_fill(&s);
	emit(o, "\n");
	user_unused(&s);
	items[0] = user_port(rt);
	items[1] = idlc_printf(o->ctx, "&%s_subsystem", o->m->subsystem);
	items[2] = idlc_printf(o->ctx, "%" PRIu32, rt->number);
	items[3] = s.rq.head;
	items[4] = rt->rep_max != rt->rep_fixed ? idlc_printf(o->ctx, "%" PRIu32, rt->rep_max)
						: idlc_printf(o->ctx, "sizeof(struct %s_%s_reply)",
							      o->m->subsystem, rt->name);
	items[5] = user_timeout(&s);
	items[6] = async_name(o, rt, "_async_complete");
	items[7] = "(void *)(uintptr_t)idl_done";
	items[8] = record ? call : "idl_ctx";
	items[9] = "idl_callp";
	if (!keep) {
		emit(o, "return idl_call_async(");
		emit_strings(o, items, 10, ", ", "", ");\n");
		emit_indent(o, -1);
		emit(o, "}\n");
		return;
	}
	emit(o, "%s = idl_call_async(", s.kr);
	emit_strings(o, items, 10, ", ", "", ");\n");
	if (s.rq.heap)
		emit(o, "free(%s);\n", s.rq.var);
	if (tokens) {
		/* What the port knows of the server once the call is accepted. */
		if (record)
			emit(o, "if (%s != KERN_SUCCESS) {\n\tfree(%s);\n\treturn %s;\n}\n", s.kr,
			     call, s.kr);
		else
			emit(o, "if (%s != KERN_SUCCESS)\n\treturn %s;\n", s.kr, s.kr);
		user_tokens(&s);
		emit(o, "return KERN_SUCCESS;\n");
	} else {
		if (record)
			emit(o, "if (%s != KERN_SUCCESS)\n\tfree(%s);\n", s.kr, call);
		emit(o, "return %s;\n", s.kr);
	}
	emit_indent(o, -1);
	emit(o, "}\n");
}

void
emit_async(struct emit_out *o, const struct idlc_routine *rt)
{
	bool record = emit_async_record(o, rt);

	if (o->opts->no_async || rt->kind != IDLC_RT_ROUTINE)
		return;
	emit(o, "\n");
	if (record)
		async_record(o, rt);
	async_complete(o, rt, record);
	emit(o, "\n");
	async_stub(o, rt, record);
}
