/*
 * emit_user_reply.c - the second half of a client stub: the whole reply checked - its size,
 * its descriptors, every count against its bound and the bytes received, every string for
 * its NUL, arrays that share a count for the same count - and only then copied out to the
 * caller (docs/generated-code.md, "The client stubs").
 */
#include <config.h>

#include <inttypes.h>
#include <string.h>

#include "emit_user.h"

const char *
user_received_count(struct user_stub *s, const struct idlc_arg *a)
{
	struct emit_out *o = s->o;
	const char *field = idlc_printf(o->ctx, "%s%s", s->rp.f, emit_field_name(o, a));

	if (idlc_is(a, IDLC_AK_DESC))
		return emit_desc_count(o, field, a);
	return idlc_printf(o->ctx, "%sCnt", field);
}

/* Arrays that share one count (samecount) must have arrived with the same count. */
static void
user_check_samecount(struct user_stub *s)
{
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_REPLY | IDLC_AK_SAMECOUNT))
			user_fail(s,
				  idlc_printf(s->o->ctx, "%s != %s", user_received_count(s, a),
					      user_received_count(s, a->leader)),
				  "MIG_TYPE_ERROR");
}

/* Checks the whole reply before anything is copied out. */
void
user_check_reply(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const char *f = s->rp.f;
	const struct idlc_arg *a;

	s->checking = s->completing || s->rt->rep_ndesc != 0;
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
			if (idlc_is(a, IDLC_AK_REPLY | IDLC_AK_DESC))
				user_fail(s,
					  emit_desc_bad(o,
							idlc_printf(o->ctx, "%s%s", f,
								    emit_field_name(o, a)),
							a),
					  "MIG_TYPE_ERROR");
	}
	for (a = s->rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_REPLY) && a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)
			user_fail(s,
				  idlc_printf(o->ctx, "memchr(%s%s, '\\0', sizeof %s%s) == NULL", f,
					      emit_field_name(o, a), f, emit_field_name(o, a)),
				  "MIG_TYPE_ERROR");
	if (!s->rp.var_part) {
		user_check_samecount(s);
		return;
	}
	emit(o, "%s = %s;\n", s->off, s->rp.size);
	for (a = s->rt->args; a != NULL; a = a->next) {
		const char *cnt;
		uint32_t bound = a->rtype->wire_count;

		if (!idlc_is(a, IDLC_AK_VAR | IDLC_AK_REPLY))
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
			     emit_bytes(s->o, cnt, a->rtype->elem_size));
			user_fail(s,
				  idlc_printf(o->ctx, "%s > %shead.size - %s", s->len, f, s->off),
				  "MIG_TYPE_ERROR");
		}
		emit(o, "%s += %s;\n", s->off, s->len);
	}
	user_fail(s, idlc_printf(o->ctx, "%s != %shead.size", s->off, f), "MIG_TYPE_ERROR");
	user_check_samecount(s);
}

/* The caller's count of an argument on entry: the room of its buffer (its own <arg>Cnt or
 * its samecount leader's, which is written only once every array sharing it was copied). */
static const char *
user_room(struct user_stub *s, const struct idlc_arg *a)
{
	const char *r = idlc_printf(s->o->ctx, "*%s", emit_count_name(s->o, a));

	return r != NULL ? r : "0";
}

/* Whether the stub writes the caller's *<arg>Cnt where it copies the argument: not for an
 * argument that shares another's count, nor yet for one whose count others share (written
 * at the end, user_copy_counts()). */
static bool
user_writes_count(const struct idlc_arg *a)
{
	return !idlc_is(a, IDLC_AK_SAMECOUNT) && !idlc_is(a, IDLC_AK_LEADER);
}

/* An out array larger than the caller's room: MIG_ARRAY_TOO_LARGE once the rest is copied,
 * with a detail that says how many came. */
static void
user_too_large(struct user_stub *s, const struct idlc_arg *a, const char *cnt, const char *room,
	       const char *unit)
{
	struct emit_out *o = s->o;

	emit(o, "if (%s > %s)\n\t", cnt, room);
	user_fail_value(s, idlc_printf(o->ctx, "%s = ", s->kr), "MIG_ARRAY_TOO_LARGE",
			idlc_printf(o->ctx, "%s: %%u %s came, room for %%u", a->name, unit),
			idlc_printf(o->ctx, "(unsigned)%s, (unsigned)%s", cnt, room), ";\n");
}

/* `fn(a, b[, c]);`, wrapped under the parenthesis when it is long. */
static void
user_call_line(struct user_stub *s, const char *fn, const char *a, const char *b, const char *c)
{
	const char *items[3] = { a, b, c };

	emit(s->o, "%s(", fn);
	emit_strings(s->o, items, c != NULL ? 3 : 2, ", ", "", ");\n");
}

/*
 * An out inline array of ports: the ports are copied into the caller's buffer (as many as
 * its room, *<arg>Cnt, or the fixed count), the array's memory is freed, and ports that did
 * not fit are closed; MIG_ARRAY_TOO_LARGE says so, with the true count in *<arg>Cnt.
 */
static void
user_copy_ports(struct user_stub *s, const struct idlc_arg *a, const char *d, const char *cnt)
{
	struct emit_out *o = s->o;
	const char *room = user_room(s, a);
	const char *addr = idlc_printf(o->ctx, "(const void *)(uintptr_t)%s.addr", d);
	const char *mem = idlc_printf(o->ctx, "(void *)(uintptr_t)%s.addr", d);

	if (!idlc_is(a, IDLC_AK_COUNTED)) {
		const char *bytes = idlc_printf(o->ctx, "%" PRIu32 " * sizeof(idl_port_t)",
						a->rtype->wire_count);

		user_call_line(s, "memcpy", a->name, addr, bytes);
		user_call_line(s, "idl_ool_free", mem, bytes, NULL);
		return;
	}
	user_too_large(s, a, cnt, room, "ports");
	emit(o, "%s = %s < %s ? %s : %s;\n", s->n, cnt, room, cnt, room);
	emit_copy_array(o, s->n, a->name, addr,
			idlc_printf(o->ctx, "(size_t)%s * sizeof(idl_port_t)", s->n));
	emit(o, "for (; %s < %s; %s++) /* the ports that do not fit */\n", s->n, cnt, s->n);
	emit(o, "\tidl_port_close(((idl_port_t *)(uintptr_t)%s.addr)[%s]);\n", d, s->n);
	user_call_line(s, "idl_ool_free", mem,
		       idlc_printf(o->ctx, "(size_t)%s * sizeof(idl_port_t)", cnt), NULL);
	if (user_writes_count(a))
		emit(o, "*%sCnt = %s;\n", a->name, cnt);
}

/* An out descriptor: the pointer (or port) is the caller's now; `overwrite` copies into the
 * caller's buffer instead and frees what came, as does an inline array of ports. */
static void
user_copy_desc(struct user_stub *s, const struct idlc_arg *a)
{
	struct emit_out *o = s->o;
	const char *d = idlc_printf(o->ctx, "%s%s", s->rp.f, emit_field_name(o, a));
	const char *cnt = emit_desc_count(o, d, a);
	const char *room = user_room(s, a);

	if (idlc_is(a, IDLC_AK_INLINE_PORTS)) {
		user_copy_ports(s, a, d, cnt);
	} else if (idlc_is(a, IDLC_AK_OVERWRITE)) {
		emit(o, "%s = %s < %s ? %s : %s;\n", s->n, cnt, room, cnt, room);
		emit_copy_array(o, s->n, idlc_printf(o->ctx, "(void *)(uintptr_t)*%s", a->name),
				idlc_printf(o->ctx, "(const void *)(uintptr_t)%s.addr", d),
				emit_bytes(s->o, s->n, a->rtype->elem_size));
		user_too_large(s, a, cnt, room, "elements");
		if (user_writes_count(a))
			emit(o, "*%sCnt = %s;\n", a->name, cnt);
		emit(o, "idl_ool_free((void *)(uintptr_t)%s.addr, %s.size);\n", d, d);
		return;
	} else {
		emit(o, "*%s = %s;\n", a->name, emit_desc_value(o, d, a, EMIT_USER));
		if (idlc_is(a, IDLC_AK_COUNTED) && user_writes_count(a))
			emit(o, "*%sCnt = %s;\n", a->name, cnt);
	}
	if (idlc_is(a, IDLC_AK_USER_POLY))
		emit(o, "*%sPoly = %s;\n", a->name, emit_desc_poly(o, d));
}

/* The counts that others share, once every array sharing them was copied. */
static void
user_copy_counts(struct user_stub *s)
{
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_REPLY | IDLC_AK_LEADER))
			emit(s->o, "*%sCnt = %s;\n", a->name, user_received_count(s, a));
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
		const char *room = user_room(s, a);

		emit(o, "%s = %s < %s ? %s : %s;\n", s->n, cnt, room, cnt, room);
		emit_copy_array(o, s->n, a->name, idlc_printf(o->ctx, "%s + %s", s->rp.buf, s->off),
				emit_bytes(s->o, s->n, esize));
		user_too_large(s, a, cnt, room, "elements");
		if (user_writes_count(a))
			emit(o, "*%sCnt = %s;\n", a->name, cnt);
	} else {
		/* inout: the caller's buffer holds the bound; nothing is copied into it
		 * when nothing came. */
		emit_copy_array(o, cnt, a->name, idlc_printf(o->ctx, "%s + %s", s->rp.buf, s->off),
				emit_bytes(s->o, cnt, esize));
		if (user_writes_count(a))
			emit(o, "*%sCnt = %s;\n", a->name, cnt);
	}
	if (!last)
		emit(o, "%s += IDL_MSG_ROUND(%s);\n", s->off, emit_bytes(s->o, cnt, esize));
}

void
user_copy_out(struct user_stub *s)
{
	struct emit_out *o = s->o;
	const char *f = s->rp.f;
	const struct idlc_arg *a, *lastvar = NULL;

	for (a = s->rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);

		if (!idlc_is(a, IDLC_AK_REPLY))
			continue;
		if (idlc_is(a, IDLC_AK_VAR)) {
			lastvar = a;
			continue;
		}
		if (idlc_is(a, IDLC_AK_DESC))
			user_copy_desc(s, a);
		else if (idlc_is(a, IDLC_AK_RECORD))
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
			if (idlc_is(a, IDLC_AK_VAR | IDLC_AK_REPLY))
				user_copy_var(s, a, a == lastvar);
	}
	user_copy_counts(s);
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
		     idlc_any_arg(s->rt, IDLC_AK_CAPACITY) ? s->kr : "KERN_SUCCESS");
	}
	if (s->rt->rep_ndesc != 0) {
		/* A malformed reply still brought its descriptors: they are freed here. */
		emit_indent(o, -1);
		emit(o, "\nbad_reply:\n");
		emit_indent(o, 1);
		emit(o, "idl_msg_destroy(%s);\n", s->rp.head);
		if (s->heap) {
			user_fail_value(s, idlc_printf(o->ctx, "%s = ", s->kr), "MIG_TYPE_ERROR",
					"malformed reply", NULL, ";\n");
			emit(o, "goto out;\n");
		} else {
			user_fail_value(s, "return ", "MIG_TYPE_ERROR", "malformed reply", NULL,
					";\n");
		}
	}
}
