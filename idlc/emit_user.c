/*
 * emit_user.c - <sub>User.c: the client stubs (docs/generated-code.md).
 *
 * A stub checks what it can before building anything (counts against bounds, strings
 * against their room), builds the request in place (on the stack, or with malloc() above
 * EMIT_STACK_LIMIT), calls the runtime, then checks the whole reply - every count against
 * its bound and the bytes received, every string for its NUL - before it copies anything
 * out to the caller.
 */
#include <config.h>

#include <inttypes.h>
#include <string.h>

#include "emit.h"

/* How the stub reaches one message: a struct on the stack, a union with a byte buffer
 * (variable part), or a malloc()ed struct. */
struct user_msg {
	const char *var; /* the local's name */
	bool var_part;
	bool heap;
	uint32_t max;
	const char *f; /* field prefix: "rq.", "rq.m.", "rq->" */
	const char *head; /* "&rq.head" ... */
	const char *buf; /* the message as bytes */
	const char *size; /* "sizeof rq" ... */
};

struct user_stub {
	struct emit_out *o;
	const struct idlc_routine *rt;
	struct user_msg rq, rp;
	bool heap; /* failures after allocation go through the `out` label */
	bool checking; /* reply checks with descriptors: failures destroy the reply */
	bool replying; /* building a deferred reply (<routine>_send_reply) in `rq` */
	const char *kr, *off, *len, *n;
};

/* Whether the message being built carries the argument: the request, or when replying
 * the reply. */
static bool
user_sends(const struct user_stub *s, const struct idlc_arg *a)
{
	return s->replying ? emit_in_reply(a) : emit_in_request(a);
}

/* How the value of a parameter is reached: inout ones of a client stub by pointer. */
static const char *
user_star(const struct user_stub *s, const struct idlc_arg *a)
{
	return !s->replying && a->dir == IDL_DIR_INOUT ? "*" : "";
}

/* An out variable array whose caller says how much room it has. */
static bool
user_array_out(const struct idlc_arg *a)
{
	return (a->dir == IDL_DIR_OUT && a->rtype->arg_kind == IDL_ARG_VAR_ARRAY) ||
	       (a->flags & IDLC_AF_OVERWRITE);
}

/* A client token argument: the server's credentials, as the transport knows them. */
static bool
user_token(const struct idlc_arg *a)
{
	return emit_is_token(a) && emit_is_param(a, EMIT_USER);
}

/* Out-of-line data (not ports) whose count must fit a descriptor's 32-bit size. */
static bool
user_ool_data(const struct idlc_arg *a)
{
	return emit_is_desc(a) && a->rtype->arg_kind == IDL_ARG_OOL &&
	       a->rtype->wire_type != IDL_WT_PORT;
}

static void
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

/* `if (cond) return code;`, or through the cleanup once buffers were allocated. */
static void
user_fail(struct user_stub *s, const char *cond, const char *code)
{
	struct emit_out *o = s->o;

	emit(o, "if (%s)", cond);
	if (s->replying) {
		emit(o, "\n\t%s = %s;\n", s->kr, code);
		return;
	}
	if (!s->heap && !(s->checking && strcmp(code, "MIG_TYPE_ERROR") == 0)) {
		emit(o, "\n\treturn %s;\n", code);
		return;
	}
	if (s->checking && strcmp(code, "MIG_TYPE_ERROR") == 0) {
		emit(o, "\n\tgoto bad_reply;\n");
		return;
	}
	if (strcmp(code, s->kr) == 0) {
		emit(o, "\n\tgoto out;\n");
		return;
	}
	emit(o, " {\n\t%s = %s;\n\tgoto out;\n}\n", s->kr, code);
}

/* `len = count x elem_size;` without a multiplication by one. */
static const char *
user_bytes(struct user_stub *s, const char *count, uint32_t elem_size)
{
	const char *r;

	if (elem_size == 1)
		return count;
	r = idlc_printf(s->o->ctx, "(size_t)%s * %" PRIu32, count, elem_size);
	return r != NULL ? r : count;
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
	if (emit_any_arg(rt, user_array_out))
		emit(o, "mach_msg_type_number_t %s;\n", s->n);
	if (rt->kind == IDLC_RT_ROUTINE || s->heap || emit_any_arg(rt, user_token))
		emit(o, "kern_return_t %s;\n", s->kr);
	emit(o, "\n");
}

/* Everything that can be refused before a byte is built. */
static void
user_precheck(struct user_stub *s)
{
	struct emit_out *o = s->o;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		uint32_t bound = a->rtype->wire_count;
		const char *cond;

		if (!user_sends(s, a))
			continue;
		if (user_ool_data(a) && !a->rtype->ool_fixed && a->rtype->elem_size > 1) {
			/* The descriptor's size is 32 bits. */
			cond = idlc_printf(o->ctx, "%s%sCnt > UINT32_MAX / %" PRIu32,
					   user_star(s, a), a->name, a->rtype->elem_size);
		} else if (emit_is_desc(a) && a->rtype->arg_kind == IDL_ARG_OOL &&
			   a->rtype->wire_type == IDL_WT_PORT && !a->rtype->ool_fixed &&
			   a->rtype->wire_count != 0) {
			cond = idlc_printf(o->ctx, "%s%sCnt > %" PRIu32, user_star(s, a), a->name,
					   bound);
		} else if (emit_is_desc(a)) {
			continue;
		} else if (a->rtype->arg_kind == IDL_ARG_VAR_ARRAY) {
			cond = idlc_printf(o->ctx, "%s%sCnt > %" PRIu32, user_star(s, a), a->name,
					   bound);
		} else if (emit_is_string(a)) {
			/* The NUL must fit: a string of `bound` characters has no room for it.
			 * (memchr stops at the first NUL, so a shorter buffer is safe.) */
			cond = idlc_printf(o->ctx, "memchr(%s, '\\0', %" PRIu32 ") == NULL",
					   a->name, bound);
		} else {
			continue;
		}
		user_fail(s, cond != NULL ? cond : "1", "MIG_ARRAY_TOO_LARGE");
	}
}

static void
user_alloc(struct user_stub *s)
{
	struct emit_out *o = s->o;

	if (s->rq.heap) {
		emit(o, "%s = malloc(%" PRIu32 ");\n", s->rq.var, s->rq.max);
		emit(o, "if (%s == NULL)\n\treturn IDL_ENOMEM;\n", s->rq.var);
	}
	if (s->rt->kind == IDLC_RT_ROUTINE && s->rp.heap) {
		emit(o, "%s = malloc(%" PRIu32 ");\n", s->rp.var, s->rp.max);
		if (s->rq.heap)
			emit(o, "if (%s == NULL) {\n\tfree(%s);\n\treturn IDL_ENOMEM;\n}\n",
			     s->rp.var, s->rq.var);
		else
			emit(o, "if (%s == NULL)\n\treturn IDL_ENOMEM;\n", s->rp.var);
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
		emit(o, "%s = strlen(%s) + 1;\n", s->len, src);
		emit(o, "%s%sCnt = (uint32_t)%s;\n", s->rq.f, field, s->len);
	} else {
		const char *cnt = idlc_printf(o->ctx, "%s%sCnt", user_star(s, a), a->name);

		emit(o, "%s%sCnt = %s;\n", s->rq.f, field, cnt);
		emit(o, "%s = %s;\n", s->len, user_bytes(s, cnt, a->rtype->elem_size));
	}
	emit(o, "memcpy(%s + %s, %s, %s);\n", s->rq.buf, s->off, src, s->len);
	emit(o, "memset(%s + %s + %s, 0, IDL_MSG_ROUND(%s) - %s);\n", s->rq.buf, s->off, s->len,
	     s->len, s->len);
	emit(o, "%s += IDL_MSG_ROUND(%s);\n", s->off, s->len);
}

/*
 * Whether the stub writes every byte of the request's fixed part past the header: scalars,
 * whole fixed arrays and records, and counts, with no padding between them. Then zeroing
 * the header is enough, and a large by-value array is not cleared only to be overwritten
 * (seed 001's 200-byte strings). Anything less certain - padding, fixed strings copied up
 * to their NUL, descriptors, countinout - clears the whole fixed part, so that no byte of
 * the caller's stack ever reaches the wire.
 */
static bool
user_request_fully_written(const struct user_stub *s)
{
	uint64_t covered = IDL_MSG_HEADER_SIZE;

	if (s->replying)
		return false;
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		if (a->flags & IDLC_AF_COUNTINOUT)
			return false;
		if (!user_sends(s, a))
			continue;
		if (emit_is_var(a)) {
			covered += 4;
			continue;
		}
		if (emit_is_desc(a) || a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)
			return false;
		covered += emit_data_size(a);
	}
	return covered == s->rt->req_fixed;
}

static void
user_fill(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const char *f = s->rq.f;
	const struct idlc_arg *a;

	if (user_request_fully_written(s))
		emit(o, "memset(&%shead, 0, sizeof %shead);\n", f, f);
	else
		emit(o, "memset(%s%s, 0, %s);\n", s->rq.heap ? "" : "&",
		     s->rq.heap ? s->rq.var
				: (s->rq.var_part ? idlc_printf(o->ctx, "%s.m", s->rq.var)
						  : s->rq.var),
		     s->rq.size);
	for (a = s->rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);
		const char *star = user_star(s, a);
		bool inout = *star != '\0';
		enum emit_side side = s->replying ? EMIT_SERVER : EMIT_USER;
		const char *outtran = s->replying ? a->rtype->outtran : NULL;

		if (!s->replying && a->dir == IDL_DIR_OUT && (a->flags & IDLC_AF_COUNTINOUT)) {
			emit(o, "%s%sCnt = *%sCnt;\n", f, field, a->name);
			continue;
		}
		if (!user_sends(s, a) || emit_is_var(a))
			continue;
		if (emit_is_desc(a)) {
			emit_desc_fill(
				o, idlc_printf(o->ctx, "%s%s", f, field), a,
				outtran != NULL ? idlc_printf(o->ctx, "%s(%s)", outtran, a->name)
						: idlc_printf(o->ctx, "%s%s", star, a->name),
				emit_has_count(a) ? idlc_printf(o->ctx, "%s%sCnt", star, a->name)
						  : NULL,
				emit_has_poly(a, side)
					? idlc_printf(o->ctx, "%s%sPoly", star, a->name)
					: NULL,
				emit_has_dealloc_param(a, side)
					? idlc_printf(o->ctx, "%sDealloc", a->name)
					: NULL);
			continue;
		}
		if (outtran != NULL && !emit_is_record(a))
			emit(o, "%s%s = %s(%s);\n", f, field, outtran, a->name);
		else if (emit_is_record(a))
			emit(o, "memcpy(%s%s, %s%s, sizeof %s%s);\n", f, field, inout ? "" : "&",
			     a->name, f, field);
		else if (a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)
			emit(o, "memcpy(%s%s, %s, strlen(%s));\n", f, field, a->name, a->name);
		else if (a->rtype->arg_kind == IDL_ARG_FIXED_ARRAY)
			emit(o, "memcpy(%s%s, %s, sizeof %s%s);\n", f, field, a->name, f, field);
		else
			emit(o, "%s%s = %s%s;\n", f, field, inout ? "*" : "", a->name);
	}
	if ((s->replying ? s->rt->rep_ndesc : s->rt->req_ndesc) != 0)
		emit_desc_header(o, idlc_printf(o->ctx, "%shead.", f),
				 s->replying ? s->rt->rep_ndesc : s->rt->req_ndesc);
	if (!s->rq.var_part) {
		emit(o, "%shead.size = %s;\n", f, s->rq.size);
		return;
	}
	emit(o, "%s = %s;\n", s->off, s->rq.size);
	for (a = s->rt->args; a != NULL; a = a->next)
		if (user_sends(s, a) && emit_is_var(a))
			user_fill_var(s, a);
	emit(o, "%shead.size = (uint32_t)%s;\n", f, s->off);
}

static const char *
user_port(const struct idlc_routine *rt)
{
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (a->dir == IDL_DIR_REQUESTPORT)
			return a->name;
	return "MACH_PORT_NULL";
}

static const char *
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
static void
user_tokens(struct user_stub *s)
{
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (user_token(a))
			emit(s->o,
			     "if (idl_port_cred(%s, %s) != 0)\n"
			     "\tmemset(%s, 0, sizeof *%s);\n",
			     user_port(s->rt), a->name, a->name, a->name);
}

static void
user_call(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const struct idlc_routine *rt = s->rt;
	const char *items[7];

	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		if (a->dir == IDL_DIR_MSGOPTION)
			emit(o, "(void)%s; /* no message options on POSIX transports */\n",
			     a->name);
		else if (a->dir_written == IDLC_DIR_SENDTIME)
			emit(o, "(void)%s; /* the deadline bounds the send too */\n", a->name);
		else if (a->dir_written == IDLC_DIR_UREPLYPORT ||
			 a->dir_written == IDLC_DIR_REPLYPORT)
			emit(o, "(void)%s; /* the reply comes back on the connection */\n",
			     a->name);
		if (emit_has_poly(a, EMIT_USER) && !emit_travels(a))
			emit(o, "(void)%sPoly;\n", a->name);
	}
	items[0] = user_port(rt);
	items[1] = idlc_printf(o->ctx, "&%s_subsystem", o->m->subsystem);
	items[2] = idlc_printf(o->ctx, "%" PRIu32, rt->number);
	items[3] = s->rq.head;
	if (rt->kind == IDLC_RT_SIMPLEROUTINE) {
		items[4] = user_timeout(s);
		if (emit_any_arg(rt, user_token)) {
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

/* Checks the whole reply before anything is copied out. */
static void
user_check_reply(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const char *f = s->rp.f;
	const struct idlc_arg *a;

	s->checking = s->rt->rep_ndesc != 0;
	if (!s->rp.var_part) {
		user_fail(s, idlc_printf(o->ctx, "%shead.size != %s", f, s->rp.size),
			  "MIG_TYPE_ERROR");
	} else {
		user_fail(s, idlc_printf(o->ctx, "%shead.size < %s", f, s->rp.size),
			  "MIG_TYPE_ERROR");
	}
	if (s->rt->rep_ndesc != 0) {
		user_fail(
			s,
			emit_desc_count_bad(o, idlc_printf(o->ctx, "%shead.", f), s->rt->rep_ndesc),
			"MIG_TYPE_ERROR");
		for (a = s->rt->args; a != NULL; a = a->next)
			if (emit_in_reply(a) && emit_is_desc(a))
				user_fail(s,
					  emit_desc_bad(o,
							idlc_printf(o->ctx, "%s%s", f,
								    emit_field_name(o, a)),
							a),
					  "MIG_TYPE_ERROR");
	}
	for (a = s->rt->args; a != NULL; a = a->next)
		if (emit_in_reply(a) && a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)
			user_fail(s,
				  idlc_printf(o->ctx, "memchr(%s%s, '\\0', sizeof %s%s) == NULL", f,
					      emit_field_name(o, a), f, emit_field_name(o, a)),
				  "MIG_TYPE_ERROR");
	if (!s->rp.var_part)
		return;
	emit(o, "%s = %s;\n", s->off, s->rp.size);
	for (a = s->rt->args; a != NULL; a = a->next) {
		const char *cnt;
		uint32_t bound = a->rtype->wire_count;

		if (!emit_var_out(a))
			continue;
		cnt = idlc_printf(o->ctx, "%s%sCnt", f, emit_field_name(o, a));
		if (a->rtype->arg_kind == IDL_ARG_CSTRING_VAR) {
			user_fail(s,
				  idlc_printf(o->ctx, "%s == 0 || %s > %" PRIu32, cnt, cnt, bound),
				  "MIG_TYPE_ERROR");
			emit(o, "%s = IDL_MSG_ROUND(%s);\n", s->len, cnt);
			user_fail(s,
				  idlc_printf(o->ctx,
					      "%s > %shead.size - %s || %s[%s + %s - 1] != '\\0'",
					      s->len, f, s->off, s->rp.buf, s->off, cnt),
				  "MIG_TYPE_ERROR");
		} else {
			user_fail(s, idlc_printf(o->ctx, "%s > %" PRIu32, cnt, bound),
				  "MIG_TYPE_ERROR");
			emit(o, "%s = IDL_MSG_ROUND(%s);\n", s->len,
			     user_bytes(s, cnt, a->rtype->elem_size));
			user_fail(s,
				  idlc_printf(o->ctx, "%s > %shead.size - %s", s->len, f, s->off),
				  "MIG_TYPE_ERROR");
		}
		emit(o, "%s += %s;\n", s->off, s->len);
	}
	user_fail(s, idlc_printf(o->ctx, "%s != %shead.size", s->off, f), "MIG_TYPE_ERROR");
}

/* An out descriptor: the pointer (or port) is the caller's now; `overwrite` copies into the
 * caller's buffer instead and frees what came. */
static void
user_copy_desc(struct user_stub *s, const struct idlc_arg *a)
{
	struct emit_out *o = s->o;
	const char *d = idlc_printf(o->ctx, "%s%s", s->rp.f, emit_field_name(o, a));
	const char *cnt = emit_desc_count(o, d, a);

	if (a->flags & IDLC_AF_OVERWRITE) {
		emit(o, "%s = %s < *%sCnt ? %s : *%sCnt;\n", s->n, cnt, a->name, cnt, a->name);
		emit(o, "memcpy((void *)(uintptr_t)*%s, (const void *)(uintptr_t)%s.addr, %s);\n",
		     a->name, d, user_bytes(s, s->n, a->rtype->elem_size));
		emit(o, "if (%s > *%sCnt)\n\t%s = MIG_ARRAY_TOO_LARGE;\n", cnt, a->name, s->kr);
		emit(o, "*%sCnt = %s;\n", a->name, cnt);
		emit(o, "idl_ool_free((void *)(uintptr_t)%s.addr, %s.size);\n", d, d);
		return;
	}
	emit(o, "*%s = %s;\n", a->name, emit_desc_value(o, d, a, EMIT_USER));
	if (emit_has_count(a))
		emit(o, "*%sCnt = %s;\n", a->name, cnt);
	if (emit_has_poly(a, EMIT_USER))
		emit(o, "*%sPoly = %s;\n", a->name, emit_desc_poly(o, d));
}

static void
user_copy_var(struct user_stub *s, const struct idlc_arg *a, bool last)
{
	struct emit_out *o = s->o;
	const char *cnt = idlc_printf(o->ctx, "%s%sCnt", s->rp.f, emit_field_name(o, a));
	uint32_t esize = a->rtype->elem_size;

	if (a->rtype->arg_kind == IDL_ARG_CSTRING_VAR) {
		emit(o, "memcpy(%s, %s + %s, %s);\n", a->name, s->rp.buf, s->off, cnt);
	} else if (a->dir == IDL_DIR_OUT) {
		/* As MIG: copy what fits, report the true count, and say the array was too
		 * large for the caller's buffer. */
		emit(o, "%s = %s < *%sCnt ? %s : *%sCnt;\n", s->n, cnt, a->name, cnt, a->name);
		emit(o, "memcpy(%s, %s + %s, %s);\n", a->name, s->rp.buf, s->off,
		     user_bytes(s, s->n, esize));
		emit(o, "if (%s > *%sCnt)\n\t%s = MIG_ARRAY_TOO_LARGE;\n", cnt, a->name, s->kr);
		emit(o, "*%sCnt = %s;\n", a->name, cnt);
	} else {
		/* inout: the caller's buffer holds the bound. */
		emit(o, "memcpy(%s, %s + %s, %s);\n", a->name, s->rp.buf, s->off,
		     user_bytes(s, cnt, esize));
		emit(o, "*%sCnt = %s;\n", a->name, cnt);
	}
	if (!last)
		emit(o, "%s += IDL_MSG_ROUND(%s);\n", s->off, user_bytes(s, cnt, esize));
}

static void
user_copy_out(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const char *f = s->rp.f;
	const struct idlc_arg *a, *lastvar = NULL;

	for (a = s->rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);

		if (!emit_in_reply(a))
			continue;
		if (emit_is_var(a)) {
			lastvar = a;
			continue;
		}
		if (emit_is_desc(a))
			user_copy_desc(s, a);
		else if (emit_is_record(a))
			emit(o, "memcpy(%s, %s%s, sizeof %s%s);\n", a->name, f, field, f, field);
		else if (a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)
			emit(o, "memcpy(%s, %s%s, strlen(%s%s) + 1);\n", a->name, f, field, f,
			     field);
		else if (a->rtype->arg_kind == IDL_ARG_FIXED_ARRAY)
			emit(o, "memcpy(%s, %s%s, sizeof %s%s);\n", a->name, f, field, f, field);
		else
			emit(o, "*%s = %s%s;\n", a->name, f, field);
	}
	if (lastvar != NULL) {
		emit(o, "%s = %s;\n", s->off, s->rp.size);
		for (a = s->rt->args; a != NULL; a = a->next)
			if (emit_var_out(a))
				user_copy_var(s, a, a == lastvar);
	}
	if (s->heap) {
		emit_indent(o, -1);
		emit(o, "\nout:\n");
		emit_indent(o, 1);
		if (s->rp.heap)
			emit(o, "free(%s);\n", s->rp.var);
		if (s->rq.heap)
			emit(o, "free(%s);\n", s->rq.var);
		emit(o, "return %s;\n", s->kr);
	} else {
		emit(o, "return %s;\n",
		     emit_any_arg(s->rt, user_array_out) ? s->kr : "KERN_SUCCESS");
	}
	if (s->rt->rep_ndesc != 0) {
		/* A malformed reply still brought its descriptors: they are freed here. */
		emit_indent(o, -1);
		emit(o, "\nbad_reply:\n");
		emit_indent(o, 1);
		emit(o, "idl_msg_destroy(%s);\n", s->rp.head);
		if (s->heap)
			emit(o, "%s = MIG_TYPE_ERROR;\ngoto out;\n", s->kr);
		else
			emit(o, "return MIG_TYPE_ERROR;\n");
	}
}

static void
user_stub(struct emit_out *o, const struct idlc_routine *rt)
{
	enum emit_side side = EMIT_USER;
	struct user_stub s;

	s.o = o;
	s.rt = rt;
	s.checking = false;
	s.replying = false;
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
	bool heap = false;

	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next)
		if (rt->kind != IDLC_RT_SKIP &&
		    (rt->req_max > EMIT_STACK_LIMIT ||
		     (rt->kind == IDLC_RT_ROUTINE && rt->rep_max > EMIT_STACK_LIMIT)))
			heap = true;
	emit_banner(o);
	emit(o, "#include <stddef.h>\n");
	emit(o, "#include <stdint.h>\n");
	if (heap)
		emit(o, "#include <stdlib.h>\n");
	emit(o, "#include <string.h>\n");
	emit(o, "\n#include \"%s\"\n\n", emit_header_include(o));
	emit_ctype_asserts(o);
	emit_descriptor(o);
	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind == IDLC_RT_SKIP)
			continue;
		emit(o, "\n/* %s %s */\n",
		     rt->kind == IDLC_RT_ROUTINE ? "Routine" : "SimpleRoutine", rt->name);
		emit_message_structs(o, rt);
		emit(o, "\n");
		user_stub(o, rt);
	}
}

/* The parameters of <routine>_send_reply(): the reply handle, the return code, then every
 * out argument by value, as the server routine would have returned it. */
static void
user_send_reply_item(struct emit_list *l, const struct idlc_arg *a, const void *data)
{
	const struct idlc_routine *rt = data;
	bool elem;
	const char *c = emit_arg_ctype(a, EMIT_SERVER, &elem);

	if (a == rt->args) {
		emit_item(l, "idl_reply_t reply");
		emit_item(l, "kern_return_t retcode");
	}
	if (!emit_in_reply(a))
		return;
	emit_item(l, "%s %s%s", c, elem ? "*" : "", a->name);
	if (emit_has_poly(a, EMIT_SERVER))
		emit_item(l, "mach_msg_type_name_t %sPoly", a->name);
	if (emit_has_count(a))
		emit_item(l, "mach_msg_type_number_t %sCnt", a->name);
	if (emit_has_dealloc_param(a, EMIT_SERVER))
		emit_item(l, "boolean_t %sDealloc", a->name);
}

void
emit_send_reply_decl(struct emit_out *o, const struct idlc_routine *rt, const char *tail)
{
	emit(o, "kern_return_t %s_send_reply(", emit_server_name(o, rt));
	emit_list(o, rt->args, NULL, user_send_reply_item, rt, ", ", "void", tail);
}

bool
emit_has_send_reply(const struct idlc_routine *rt)
{
	if (rt->kind != IDLC_RT_ROUTINE)
		return false;
	return emit_any_arg(rt, emit_is_reply_handle);
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
	emit_list(o, rt->args, NULL, user_send_reply_item, rt, ", ", "void", ")\n");
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
