/*
 * emit_user.c - <sub>User.c: the client stubs (docs/generated-code.md).
 *
 * A stub checks what it can before building anything (counts against bounds, strings
 * against their room), builds the request in place (on the stack, or with malloc() above
 * EMIT_STACK_LIMIT) writing every field in full and zeroing only the padding no field
 * covers, calls the runtime, then checks the whole reply - every count against
 * its bound and the bytes received, every string for its NUL - before it copies anything
 * out to the caller.
 */
#include <config.h>

#include <inttypes.h>
#include <string.h>

#include "emit_user.h"

/* Whether the message being built carries the argument: the request, or when replying
 * the reply. */
static bool
user_sends(const struct user_stub *s, const struct idlc_arg *a)
{
	return s->replying ? idlc_is(a, IDLC_AK_REPLY) : idlc_is(a, IDLC_AK_REQUEST);
}

/* How the value of a parameter is reached: inout ones of a client stub by pointer (the
 * asynchronous stub takes them as values). */
static const char *
user_star(const struct user_stub *s, const struct idlc_arg *a)
{
	return !s->replying && !s->async && a->dir == IDL_DIR_INOUT ? "*" : "";
}

void
user_fail_value(struct user_stub *s, const char *lhs, const char *code, const char *what,
		const char *args, const char *tail)
{
	struct emit_out *o = s->o;
	const char *items[3];
	unsigned n = 0;

	if (what == NULL) {
		emit(o, "%s%s%s", lhs, code, tail);
		return;
	}
	items[n++] = code;
	items[n++] = idlc_printf(o->ctx, "\"%s.%s: %s\"", o->m->subsystem, s->rt->name, what);
	if (args != NULL)
		items[n++] = args;
	emit(o, "%sidl_stub_fail(", lhs);
	emit_strings(o, items, n, ", ", "", idlc_printf(o->ctx, ")%s", tail));
}

void
user_refuse(struct user_stub *s, const char *cond, const char *code, const char *what,
	    const char *args)
{
	struct emit_out *o = s->o;
	bool type_error = strcmp(code, "MIG_TYPE_ERROR") == 0;

	emit(o, "if (%s)", cond);
	if (s->replying) {
		emit(o, "\n\t%s = %s;\n", s->kr, code);
		return;
	}
	if (s->checking && type_error) {
		emit(o, "\n\tgoto bad_reply;\n");
		return;
	}
	/* What the runtime returned comes with the runtime's own detail. */
	if (strcmp(code, s->kr) == 0) {
		emit(o, s->heap ? "\n\tgoto out;\n" : "\n\treturn %s;\n", s->kr);
		return;
	}
	if (what == NULL && type_error)
		what = "malformed reply";
	if (!s->heap) {
		emit(o, "\n\t");
		user_fail_value(s, "return ", code, what, args, ";\n");
		return;
	}
	emit(o, " {\n\t");
	user_fail_value(s, idlc_printf(o->ctx, "%s = ", s->kr), code, what, args, ";\n");
	emit(o, "\tgoto out;\n}\n");
}

void
user_fail(struct user_stub *s, const char *cond, const char *code)
{
	user_refuse(s, cond, code, NULL, NULL);
}

const char *
user_end(struct user_stub *s, const struct idlc_arg *a)
{
	const char *r = emit_local(s->o, s->rt, idlc_printf(s->o->ctx, "%sEnd", a->name));

	return r != NULL ? r : "end";
}

void
user_declare_ends(struct user_stub *s)
{
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (user_sends(s, a) && idlc_is(a, IDLC_AK_STRING))
			emit(s->o, "const char *%s;\n", user_end(s, a));
}

const char *
user_count(struct user_stub *s, const struct idlc_arg *a)
{
	const char *r = idlc_printf(s->o->ctx, "%s%s", user_star(s, idlc_count_owner(a)),
				    emit_count_name(s->o, a));

	return r != NULL ? r : "0";
}

void
user_msg_init(struct user_stub *s, struct user_msg *msg, const char *want, bool reply)
{
	struct emit_out *o = s->o;
	const char *v = emit_local(o, s->rt, want);

	msg->var = v;
	msg->max = reply ? s->rt->rep_max : s->rt->req_max;
	msg->var_part = msg->max != (reply ? s->rt->rep_fixed : s->rt->req_fixed);
	msg->heap = msg->max > EMIT_STACK_LIMIT;
	if (msg->heap) {
		msg->f = idlc_printf(o->ctx, "%s->", v);
		msg->head = idlc_printf(o->ctx, "&%s->head", v);
		msg->buf = idlc_printf(o->ctx, "(char *)%s", v);
		msg->size = idlc_printf(o->ctx, "sizeof *%s", v);
	} else if (msg->var_part) {
		msg->f = idlc_printf(o->ctx, "%s.m.", v);
		msg->head = idlc_printf(o->ctx, "&%s.m.head", v);
		msg->buf = idlc_printf(o->ctx, "%s.buf", v);
		msg->size = idlc_printf(o->ctx, "sizeof %s.m", v);
	} else {
		msg->f = idlc_printf(o->ctx, "%s.", v);
		msg->head = idlc_printf(o->ctx, "&%s.head", v);
		msg->buf = idlc_printf(o->ctx, "(char *)&%s", v);
		msg->size = idlc_printf(o->ctx, "sizeof %s", v);
	}
}

static void
user_declare(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const struct idlc_routine *rt = s->rt;
	const struct user_msg *msgs[2] = { &s->rq, &s->rp };
	const char *what[2] = { "request", "reply" };

	for (int i = 0; i < (rt->kind == IDLC_RT_ROUTINE ? 2 : 1); i++) {
		const struct user_msg *msg = msgs[i];

		if (msg->heap) {
			emit(o, "struct %s_%s_%s *%s;\n", o->m->subsystem, rt->name, what[i],
			     msg->var);
		} else if (msg->var_part) {
			emit(o, "union {\n");
			emit(o, "\tstruct %s_%s_%s m;\n", o->m->subsystem, rt->name, what[i]);
			emit(o, "\tchar buf[%" PRIu32 "];\n", msg->max);
			emit(o, "} %s;\n", msg->var);
		} else {
			emit(o, "struct %s_%s_%s %s;\n", o->m->subsystem, rt->name, what[i],
			     msg->var);
		}
	}
	if (s->rq.var_part || s->rp.var_part)
		emit(o, "size_t %s;\n", s->off);
	if (s->rq.var_part || s->rp.var_part)
		emit(o, "size_t %s;\n", s->len);
	if (idlc_any_arg(rt, IDLC_AK_CAPACITY))
		emit(o, "mach_msg_type_number_t %s;\n", s->n);
	user_declare_ends(s);
	if (rt->kind == IDLC_RT_ROUTINE || s->heap ||
	    idlc_any_arg(rt, IDLC_AK_TOKEN | IDLC_AK_USER_PARAM))
		emit(o, "kern_return_t %s;\n", s->kr);
	emit(o, "\n");
}

/* Whether `cond` is among the n conditions already written (arrays that share one count
 * are checked against equal bounds once). */
static bool
user_said(const char *const *said, unsigned n, const char *cond)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(said[i], cond) == 0)
			return true;
	return false;
}

/* What the stub refuses of argument a before a byte is built: the condition, its detail and
 * the detail's arguments (NULL: none); false when nothing. A string's condition is on
 * <arg>End, which user_precheck() sets first. */
static bool
user_precheck_arg(struct user_stub *s, const struct idlc_arg *a, const char **cond,
		  const char **what, const char **args)
{
	struct emit_out *o = s->o;
	uint32_t bound = a->rtype != NULL ? a->rtype->wire_count : 0;

	*args = NULL;
	if (!user_sends(s, a))
		return false;
	if (idlc_is(a, IDLC_AK_OOL_DATA | IDLC_AK_COUNTED) && a->rtype->elem_size > 1) {
		/* The descriptor's size is 32 bits. */
		*cond = idlc_printf(o->ctx, "%s > UINT32_MAX / %" PRIu32, user_count(s, a),
				    a->rtype->elem_size);
		*what = idlc_printf(o->ctx, "%s: %%u elements, more bytes than 32 bits hold",
				    a->name);
		*args = idlc_printf(o->ctx, "(unsigned)%s", user_count(s, a));
	} else if (idlc_is(a, IDLC_AK_PORTS | IDLC_AK_COUNTED) && bound != 0) {
		*cond = idlc_printf(o->ctx, "%s > %" PRIu32, user_count(s, a), bound);
		*what = idlc_printf(o->ctx, "%s: %%u ports, above its bound %" PRIu32, a->name,
				    bound);
		*args = idlc_printf(o->ctx, "(unsigned)%s", user_count(s, a));
	} else if (idlc_is(a, IDLC_AK_DESC)) {
		return false;
	} else if (a->rtype->arg_kind == IDL_ARG_VAR_ARRAY) {
		*cond = idlc_printf(o->ctx, "%s > %" PRIu32, user_count(s, a), bound);
		*what = idlc_printf(o->ctx, "%s: %%u elements, above its bound %" PRIu32, a->name,
				    bound);
		*args = idlc_printf(o->ctx, "(unsigned)%s", user_count(s, a));
	} else if (idlc_is(a, IDLC_AK_STRING)) {
		*cond = idlc_printf(o->ctx, "%s == NULL", user_end(s, a));
		*what = idlc_printf(o->ctx, "%s: longer than %" PRIu32 " characters", a->name,
				    bound - 1);
	} else {
		return false;
	}
	if (*cond == NULL)
		*cond = "1";
	return true;
}

bool
user_refuses(struct user_stub *s)
{
	const char *cond, *what, *args;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (user_precheck_arg(s, a, &cond, &what, &args))
			return true;
	return false;
}

/* Everything that can be refused before a byte is built. An array that shares its leader's
 * count (samecount) is checked with that count against its own bound. */
void
user_precheck(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const char **said = idlc_alloc(o->ctx, (s->rt->nargs + 1u) * sizeof *said);
	unsigned nsaid = 0;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		const char *cond, *what, *args;

		if (!user_precheck_arg(s, a, &cond, &what, &args))
			continue;
		/* The NUL must fit: a string of N characters has no room for it in N bytes.
		 * (memchr stops at the first NUL, so a shorter buffer is safe.) Where it is
		 * gives the length too. */
		if (idlc_is(a, IDLC_AK_STRING))
			emit(o, "%s = memchr(%s, '\\0', %" PRIu32 ");\n", user_end(s, a), a->name,
			     a->rtype->wire_count);
		if (said != NULL && user_said(said, nsaid, cond))
			continue;
		if (said != NULL)
			said[nsaid++] = cond;
		user_refuse(s, cond, "MIG_ARRAY_TOO_LARGE", what, args);
	}
}

void
user_alloc(struct user_stub *s)
{
	struct emit_out *o = s->o;

	const char *what;

	if (s->rq.heap) {
		emit(o, "%s = malloc(%" PRIu32 ");\n", s->rq.var, s->rq.max);
		emit(o, "if (%s == NULL)\n\t", s->rq.var);
		what = idlc_printf(o->ctx, "no memory for the request (%" PRIu32 " bytes)",
				   s->rq.max);
		user_fail_value(s, "return ", "IDL_ENOMEM", what, NULL, ";\n");
	}
	if (s->rt->kind == IDLC_RT_ROUTINE && s->rp.heap) {
		emit(o, "%s = malloc(%" PRIu32 ");\n", s->rp.var, s->rp.max);
		what = idlc_printf(o->ctx, "no memory for the reply (%" PRIu32 " bytes)",
				   s->rp.max);
		if (s->rq.heap) {
			emit(o, "if (%s == NULL) {\n\tfree(%s);\n\t", s->rp.var, s->rq.var);
			user_fail_value(s, "return ", "IDL_ENOMEM", what, NULL, ";\n");
			emit(o, "}\n");
		} else {
			emit(o, "if (%s == NULL)\n\t", s->rp.var);
			user_fail_value(s, "return ", "IDL_ENOMEM", what, NULL, ";\n");
		}
	}
}

/* Copies the data of a variable argument to the end of the request and pads it. */
static void
user_fill_var(struct user_stub *s, const struct idlc_arg *a)
{
	struct emit_out *o = s->o;
	const char *field = emit_field_name(o, a);
	const char *src = a->name;

	if (a->rtype->arg_kind == IDL_ARG_CSTRING_VAR) {
		emit(o, "%s = (size_t)(%s - %s) + 1;\n", s->len, user_end(s, a), src);
		emit(o, "%s%sCnt = (uint32_t)%s;\n", s->rq.f, field, s->len);
	} else {
		const char *cnt = user_count(s, a);

		emit(o, "%s%sCnt = %s;\n", s->rq.f, field, cnt);
		emit(o, "%s = %s;\n", s->len, emit_bytes(s->o, cnt, a->rtype->elem_size));
	}
	/* The padding after the data lies in the 8-byte word the data ends in: that word is
	 * zeroed first, then the data copied over it (no call for a few bytes). */
	if (a->rtype->elem_size % IDL_MSG_ALIGN != 0)
		emit(o, "if (%s %% 8 != 0)\n\tmemset(%s + %s + %s - %s %% 8, 0, 8);\n", s->len,
		     s->rq.buf, s->off, s->len, s->len);
	/* A string has its NUL at least; an array may be empty, and passed as NULL, 0. */
	if (a->rtype->arg_kind == IDL_ARG_CSTRING_VAR)
		emit(o, "memcpy(%s + %s, %s, %s);\n", s->rq.buf, s->off, src, s->len);
	else
		emit_copy_array(o, s->len, idlc_printf(o->ctx, "%s + %s", s->rq.buf, s->off), src,
				s->len);
	emit(o, "%s += IDL_MSG_ROUND(%s);\n", s->off, s->len);
}

/* A fixed c_string[N]: its field zeroed (the string may be shorter), the string copied in. */
static void
user_fill_string(struct user_stub *s, const struct idlc_arg *a)
{
	const char *f = s->rq.f, *field = emit_field_name(s->o, a);

	emit(s->o, "memset(%s%s, 0, sizeof %s%s);\n", f, field, f, field);
	emit(s->o, "memcpy(%s%s, %s, (size_t)(%s - %s));\n", f, field, a->name, user_end(s, a),
	     a->name);
}

void
user_fill(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const char *f = s->rq.f;
	const struct idlc_arg *a;

	/* The runtime completes the header; every field is written in full below, and what
	 * no field covers is zeroed: no byte of the caller's stack reaches the wire. */
	emit(o, "memset(&%shead, 0, sizeof %shead);\n", f, f);
	for (a = s->rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);
		const char *star = user_star(s, a);
		bool inout = *star != '\0';
		enum emit_side side = s->replying ? EMIT_SERVER : EMIT_USER;
		const char *outtran = s->replying ? a->rtype->outtran : NULL;

		if (!s->replying && idlc_is(a, IDLC_AK_COUNTINOUT)) {
			emit(o, "%s%sCnt = %s%sCnt;\n", f, field, s->async ? "" : "*", a->name);
			continue;
		}
		if (!user_sends(s, a) || idlc_is(a, IDLC_AK_VAR))
			continue;
		if (idlc_is(a, IDLC_AK_DESC)) {
			emit_desc_fill(o, idlc_printf(o->ctx, "%s%s", f, field), a,
				       outtran != NULL
					       ? idlc_printf(o->ctx, "%s(%s)", outtran, a->name)
					       : idlc_printf(o->ctx, "%s%s", star, a->name),
				       idlc_is(a, IDLC_AK_COUNTED) ? user_count(s, a) : NULL,
				       idlc_is(a, IDLC_AK_POLY(side))
					       ? idlc_printf(o->ctx, "%s%sPoly", star, a->name)
					       : NULL,
				       idlc_is(a, IDLC_AK_DEALLOC(side))
					       ? idlc_printf(o->ctx, "%sDealloc", a->name)
					       : NULL,
				       false);
			continue;
		}
		if (outtran != NULL && !idlc_is(a, IDLC_AK_RECORD))
			emit(o, "%s%s = %s(%s);\n", f, field, outtran, a->name);
		else if (idlc_is(a, IDLC_AK_RECORD))
			emit(o, "memcpy(%s%s, %s%s, sizeof %s%s);\n", f, field, inout ? "" : "&",
			     a->name, f, field);
		else if (a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)
			user_fill_string(s, a);
		else if (a->rtype->arg_kind == IDL_ARG_FIXED_ARRAY)
			emit(o, "memcpy(%s%s, %s, sizeof %s%s);\n", f, field, a->name, f, field);
		else
			emit(o, "%s%s = %s%s;\n", f, field, inout ? "*" : "", a->name);
	}
	emit_padding(o, s->rt, s->replying, s->rq.buf);
	if ((s->replying ? s->rt->rep_ndesc : s->rt->req_ndesc) != 0)
		emit_desc_header(o, idlc_printf(o->ctx, "%shead.", f),
				 s->replying ? s->rt->rep_ndesc : s->rt->req_ndesc);
	if (!s->rq.var_part) {
		emit(o, "%shead.size = %s;\n", f, s->rq.size);
		return;
	}
	emit(o, "%s = %s;\n", s->off, s->rq.size);
	for (a = s->rt->args; a != NULL; a = a->next)
		if (user_sends(s, a) && idlc_is(a, IDLC_AK_VAR))
			user_fill_var(s, a);
	emit(o, "%shead.size = (uint32_t)%s;\n", f, s->off);
}

const char *
user_port(const struct idlc_routine *rt)
{
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (a->dir == IDL_DIR_REQUESTPORT)
			return a->name;
	return "MACH_PORT_NULL";
}

const char *
user_timeout(struct user_stub *s)
{
	const char *r;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (a->dir == IDL_DIR_WAITTIME) {
			r = idlc_printf(s->o->ctx, "(int)%s", a->name);
			return r != NULL ? r : "IDL_TIMEOUT_DEFAULT";
		}
	if (s->rt->waittime_expr != NULL) {
		r = idlc_printf(s->o->ctx, "(int)(%s)", s->rt->waittime_expr);
		return r != NULL ? r : "IDL_TIMEOUT_DEFAULT";
	}
	if (s->rt->waittime < 0)
		return "IDL_TIMEOUT_DEFAULT";
	r = idlc_printf(s->o->ctx, "%" PRId32, s->rt->waittime);
	return r != NULL ? r : "IDL_TIMEOUT_DEFAULT";
}

/* Token arguments get what the transport knows of the server, or zeros (valid = 0). */
void
user_tokens(struct user_stub *s)
{
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_TOKEN | IDLC_AK_USER_PARAM))
			emit(s->o,
			     "if (idl_port_cred(%s, %s) != 0)\n"
			     "\tmemset(%s, 0, sizeof *%s);\n",
			     user_port(s->rt), a->name, a->name, a->name);
}

void
user_unused(struct user_stub *s)
{
	struct emit_out *o = s->o;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		if (a->dir == IDL_DIR_MSGOPTION)
			emit(o, "(void)%s; /* no message options on POSIX transports */\n",
			     a->name);
		else if (a->dir_written == IDLC_DIR_SENDTIME)
			emit(o, "(void)%s; /* the deadline bounds the send too */\n", a->name);
		else if (a->dir_written == IDLC_DIR_UREPLYPORT ||
			 a->dir_written == IDLC_DIR_REPLYPORT)
			emit(o, "(void)%s; /* the reply comes back on the connection */\n",
			     a->name);
		if (idlc_is(a, IDLC_AK_USER_POLY) && !idlc_is(a, IDLC_AK_TRAVELS))
			emit(o, "(void)%sPoly;\n", a->name);
	}
}

static void
user_call(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const struct idlc_routine *rt = s->rt;
	const char *items[7];

	user_unused(s);
	items[0] = user_port(rt);
	items[1] = idlc_printf(o->ctx, "&%s_subsystem", o->m->subsystem);
	items[2] = idlc_printf(o->ctx, "%" PRIu32, rt->number);
	items[3] = s->rq.head;
	if (rt->kind == IDLC_RT_SIMPLEROUTINE) {
		items[4] = user_timeout(s);
		if (idlc_any_arg(rt, IDLC_AK_TOKEN | IDLC_AK_USER_PARAM)) {
			emit(o, "%s = idl_send(", s->kr);
			emit_strings(o, items, 5, ", ", "", ");\n");
			user_tokens(s);
			if (s->heap)
				emit(o, "free(%s);\n", s->rq.var);
			emit(o, "return %s;\n", s->kr);
		} else if (s->heap) {
			emit(o, "%s = idl_send(", s->kr);
			emit_strings(o, items, 5, ", ", "", ");\n");
			emit(o, "free(%s);\n", s->rq.var);
			emit(o, "return %s;\n", s->kr);
		} else {
			emit(o, "return idl_send(");
			emit_strings(o, items, 5, ", ", "", ");\n");
		}
		return;
	}
	items[4] = s->rp.head;
	items[5] = s->rp.heap ? idlc_printf(o->ctx, "%" PRIu32, s->rp.max)
			      : idlc_printf(o->ctx, "sizeof %s", s->rp.var);
	items[6] = user_timeout(s);
	emit(o, "%s = idl_call(", s->kr);
	emit_strings(o, items, 7, ", ", "", ");\n");
	user_fail(s, idlc_printf(o->ctx, "%s != KERN_SUCCESS", s->kr), s->kr);
	user_tokens(s);
}

static void
user_stub(struct emit_out *o, const struct idlc_routine *rt)
{
	enum emit_side side = EMIT_USER;
	struct user_stub s;

	memset(&s, 0, sizeof s);
	s.o = o;
	s.rt = rt;
	s.kr = emit_local(o, rt, "kr");
	s.off = emit_local(o, rt, "off");
	s.len = emit_local(o, rt, "len");
	s.n = emit_local(o, rt, "n");
	user_msg_init(&s, &s.rq, "rq", false);
	user_msg_init(&s, &s.rp, "rp", true);
	if (rt->kind != IDLC_RT_ROUTINE)
		s.rp.heap = s.rp.var_part = false;
	s.heap = s.rq.heap || s.rp.heap;

	emit(o, "kern_return_t\n%s(", emit_user_name(o, rt));
	emit_list(o, rt->args, emit_param_pred, emit_param_item, &side, ", ", "void", ")\n");
	emit(o, "{\n");
	emit_indent(o, 1);
	user_declare(&s);
	/* Nothing is allocated yet: refusals return at once. */
	s.heap = false;
	user_precheck(&s);
	user_alloc(&s);
	s.heap = s.rq.heap || s.rp.heap;
	user_fill(&s);
	emit(o, "\n");
	user_call(&s);
	if (rt->kind == IDLC_RT_ROUTINE) {
		user_check_reply(&s);
		s.checking = false;
		emit(o, "\n");
		user_copy_out(&s);
	}
	emit_indent(o, -1);
	emit(o, "}\n");
}

void
emit_user(struct emit_out *o)
{
	bool uses_malloc = false;

	/* malloc(): messages above the stack limit, and the asynchronous stubs' records. */
	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next)
		if (rt->kind != IDLC_RT_SKIP &&
		    (rt->req_max > EMIT_STACK_LIMIT ||
		     (rt->kind == IDLC_RT_ROUTINE && rt->rep_max > EMIT_STACK_LIMIT) ||
		     emit_async_record(o, rt)))
			uses_malloc = true;
	emit_banner(o);
	emit(o, "#include <stddef.h>\n");
	emit(o, "#include <stdint.h>\n");
	if (uses_malloc)
		emit(o, "#include <stdlib.h>\n");
	emit(o, "#include <string.h>\n");
	emit(o, "\n#include \"%s\"\n\n", emit_header_include(o));
	emit_ctype_asserts(o);
	emit_descriptor(o);
	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind == IDLC_RT_SKIP)
			continue;
		emit_message_structs(o, rt);
		emit(o, "\n");
		user_stub(o, rt);
		emit_async(o, rt);
	}
}

/* One out argument's entries in a list of user_reply_list(): in <routine>_send_reply() every
 * out argument by value, as the server routine would have returned it; in the done function
 * of <routine>_async as emit_async.c says. */
static void
user_reply_item(struct emit_list *l, const struct idlc_arg *a, const void *data)
{
	const struct user_list_data *d = data;
	struct user_stub *s = d->s;
	enum emit_side side = d->which == USER_LIST_SEND_REPLY ? EMIT_SERVER : EMIT_USER;
	bool decl = d->which == USER_LIST_SEND_REPLY || d->which == USER_LIST_DONE;
	bool zero = d->which == USER_LIST_ZEROS;
	const char *field;

	if (a == s->rt->args) {
		emit_item(l, "%s", d->lead[0]);
		emit_item(l, "%s", d->lead[1]);
	}
	if (!idlc_is(a, IDLC_AK_REPLY))
		return;
	if (d->which == USER_LIST_SEND_REPLY)
		emit_item(l, "%s %s%s", a->c_type[EMIT_SERVER],
			  idlc_is(a, IDLC_AK_SERVER_ELEM) ? "*" : "", a->name);
	else if (d->which == USER_LIST_DONE)
		emit_item(l, "%s", async_done_param(s, a));
	else
		emit_item(l, "%s", async_done_value(s, a, zero));
	field = idlc_printf(s->o->ctx, "%s%s", s->rp.f, emit_field_name(s->o, a));
	if (idlc_is(a, IDLC_AK_POLY(side)))
		emit_item(l, "%s",
			  decl	 ? idlc_printf(s->o->ctx, "mach_msg_type_name_t %sPoly", a->name)
			  : zero ? "0"
				 : emit_desc_poly(s->o, field));
	/* Arrays that share one count (samecount) pass it once, with the first of them. */
	if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT))
		emit_item(l, "%s",
			  decl	 ? idlc_printf(s->o->ctx, "mach_msg_type_number_t %sCnt", a->name)
			  : zero ? "0"
				 : user_received_count(s, a));
	if (d->which == USER_LIST_SEND_REPLY && idlc_is(a, IDLC_AK_SERVER_DEALLOC))
		emit_item(l, "boolean_t %sDealloc", a->name);
}

void
user_reply_list(struct user_stub *s, enum user_list which, const char *lead0, const char *lead1,
		const char *tail)
{
	struct user_list_data d;

	d.s = s;
	d.which = which;
	d.lead[0] = lead0;
	d.lead[1] = lead1;
	emit_list(s->o, s->rt->args, NULL, user_reply_item, &d, ", ", "void", tail);
}

void
emit_send_reply_decl(struct emit_out *o, const struct idlc_routine *rt, const char *tail)
{
	struct user_stub s;

	memset(&s, 0, sizeof s);
	s.o = o;
	s.rt = rt;
	s.rp.f = "";
	emit(o, "kern_return_t %s_send_reply(", emit_server_name(o, rt));
	user_reply_list(&s, USER_LIST_SEND_REPLY, "idl_reply_t reply", "kern_return_t retcode",
			tail);
}

bool
emit_has_send_reply(const struct idlc_routine *rt)
{
	if (rt->kind != IDLC_RT_ROUTINE)
		return false;
	return idlc_any_arg(rt, IDLC_AK_REPLY_HANDLE);
}

void
emit_send_reply(struct emit_out *o, const struct idlc_routine *rt)
{
	struct user_stub s;
	const char *bare = emit_local(o, rt, "bare");

	memset(&s, 0, sizeof s);
	s.o = o;
	s.rt = rt;
	s.replying = true;
	s.kr = emit_local(o, rt, "retcode");
	s.off = emit_local(o, rt, "off");
	s.len = emit_local(o, rt, "len");
	s.n = emit_local(o, rt, "n");
	user_msg_init(&s, &s.rq, "rp", true);
	s.heap = false;

	emit(o, "\nkern_return_t\n%s_send_reply(", emit_server_name(o, rt));
	s.rp.f = "";
	user_reply_list(&s, USER_LIST_SEND_REPLY, "idl_reply_t reply", "kern_return_t retcode",
			")\n");
	emit(o, "{\n");
	emit_indent(o, 1);
	if (s.rq.heap)
		emit(o, "struct %s_%s_reply *%s;\n", o->m->subsystem, rt->name, s.rq.var);
	else if (s.rq.var_part)
		emit(o, "union {\n\tstruct %s_%s_reply m;\n\tchar buf[%" PRIu32 "];\n} %s;\n",
		     o->m->subsystem, rt->name, s.rq.max, s.rq.var);
	else
		emit(o, "struct %s_%s_reply %s;\n", o->m->subsystem, rt->name, s.rq.var);
	if (s.rq.var_part)
		emit(o, "size_t %s;\nsize_t %s;\n", s.off, s.len);
	if (s.rq.heap)
		emit(o, "int %s;\n", s.n);
	user_declare_ends(&s);
	emit(o, "idl_msg_header_t %s;\n\n", bare);
	/* A count above its bound is refused as the server stub would refuse it. */
	user_precheck(&s);
	emit(o, "if (%s != KERN_SUCCESS) {\n", s.kr);
	emit(o, "\tmemset(&%s, 0, sizeof %s);\n", bare, bare);
	emit(o, "\t%s.size = IDL_MSG_HEADER_SIZE;\n", bare);
	emit(o, "\t%s.retcode = %s;\n", bare, s.kr);
	emit(o, "\treturn idl_reply_send(reply, &%s);\n}\n", bare);
	if (s.rq.heap) {
		emit(o, "%s = malloc(%" PRIu32 ");\n", s.rq.var, s.rq.max);
		emit(o, "if (%s == NULL) {\n\tidl_reply_discard(reply);\n\treturn IDL_ENOMEM;\n}\n",
		     s.rq.var);
	}
	user_fill(&s);
	if (s.rq.heap) {
		emit(o, "%s = idl_reply_send(reply, %s);\n", s.n, s.rq.head);
		emit(o, "free(%s);\nreturn %s;\n", s.rq.var, s.n);
	} else {
		emit(o, "return idl_reply_send(reply, %s);\n", s.rq.head);
	}
	emit_indent(o, -1);
	emit(o, "}\n");
}
