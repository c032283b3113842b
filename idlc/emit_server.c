/*
 * emit_server.c - <sub>Server.c: one unpacker per routine, the routine table and the demux
 * (docs/generated-code.md).
 *
 * An unpacker trusts nothing in the request: the size covers the fixed part, every count is
 * within its bound and within the bytes received, the variable parts end exactly at the
 * message's end, every string has its NUL. Only then does user code run. Out data is
 * written straight into the reply (no staging on the stack). No byte of an earlier reply
 * can go out again: what the routine fills in the fixed part is zeroed before the call,
 * every other field is written in full after it, and the padding is zeroed (emit_padding).
 */
#include <config.h>

#include <inttypes.h>
#include <string.h>

#include "emit.h"

struct srv_stub {
	struct emit_out *o;
	const struct idlc_routine *rt;
	const char *in, *out, *off, *len; /* local names */
	bool goto_bad; /* refusals jump to `bad` (more than one check) */
};

static bool
srv_fixed_string_in(const struct idlc_arg *a)
{
	return idlc_is(a, IDLC_AK_REQUEST) && a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED;
}

/* Server-only values the stub fetches: a reply handle, credentials. */
static bool
srv_fetched(const struct idlc_arg *a)
{
	return idlc_is(a, IDLC_AK_SERVER_PARAM) &&
	       (idlc_is(a, IDLC_AK_REPLY_HANDLE) || idlc_is(a, IDLC_AK_TOKEN));
}

static bool
srv_desc_in(const struct idlc_arg *a)
{
	return idlc_is(a, IDLC_AK_REQUEST | IDLC_AK_DESC);
}

/* The value a received argument has before any translation. */
static const char *
srv_received(struct srv_stub *s, const struct idlc_arg *a)
{
	struct emit_out *o = s->o;
	const char *d;

	if (a->dir == IDL_DIR_REQUESTPORT)
		return "idl_request_port()";
	d = idlc_printf(o->ctx, "%s->%s", s->in, emit_field_name(o, a));
	if (idlc_is(a, IDLC_AK_DESC))
		return emit_desc_value(o, d, a, EMIT_SERVER);
	return d;
}

static void
srv_refuse(struct srv_stub *s, const char *cond)
{
	if (s->goto_bad)
		emit(s->o, "if (%s)\n\tgoto bad;\n", cond);
	else
		emit(s->o, "if (%s) {\n\tOutHeadP->retcode = MIG_BAD_ARGUMENTS;\n\treturn;\n}\n",
		     cond);
}

/* The local that points at the NUL of an out string (<arg>End). */
static const char *
srv_end(struct srv_stub *s, const struct idlc_arg *a)
{
	const char *r = emit_local(s->o, s->rt, idlc_printf(s->o->ctx, "%sEnd", a->name));

	return r != NULL ? r : "end";
}

/* Finds an out string's NUL within its bound; the condition under which it has none. */
static const char *
srv_string_end(struct srv_stub *s, const struct idlc_arg *a, uint32_t bound)
{
	emit(s->o, "%s = memchr(%s, '\\0', %" PRIu32 ");\n", srv_end(s, a), a->name, bound);
	return idlc_printf(s->o->ctx, "%s == NULL", srv_end(s, a));
}

/* The bytes of the server stub's buffer for an out inline array of ports. */
static const char *
srv_ports_bytes(struct srv_stub *s, const struct idlc_arg *a)
{
	const char *r =
		idlc_printf(s->o->ctx, "%" PRIu32 " * sizeof(idl_port_t)", a->rtype->wire_count);

	return r != NULL ? r : "0";
}

/* Frees the buffers of out inline arrays of ports up to (not including) `upto`, when the
 * reply will not carry them. */
static void
srv_free_ports(struct srv_stub *s, const struct idlc_arg *upto)
{
	for (const struct idlc_arg *a = s->rt->args; a != upto; a = a->next)
		if (idlc_is(a, IDLC_AK_INLINE_PORTS | IDLC_AK_REPLY))
			emit(s->o, "\tidl_ool_free(%s, %s);\n", a->name, srv_ports_bytes(s, a));
}

static void
srv_too_large(struct srv_stub *s, const char *cond)
{
	emit(s->o, "if (%s) {\n", cond);
	srv_free_ports(s, NULL);
	emit(s->o, "\tOutHeadP->retcode = MIG_ARRAY_TOO_LARGE;\n\treturn;\n}\n");
}

/* The count an argument arrived with in the request. */
static const char *
srv_received_count(struct srv_stub *s, const struct idlc_arg *a)
{
	const char *field = idlc_printf(s->o->ctx, "%s->%s", s->in, emit_field_name(s->o, a));

	if (idlc_is(a, IDLC_AK_DESC))
		return emit_desc_count(s->o, field, a);
	return idlc_printf(s->o->ctx, "%sCnt", field);
}

static void
srv_declare(struct srv_stub *s)
{
	struct emit_out *o = s->o;
	const struct idlc_routine *rt = s->rt;
	bool reply = rt->kind == IDLC_RT_ROUTINE && rt->rep_fixed > IDL_MSG_HEADER_SIZE;
	bool var = rt->req_max != rt->req_fixed || (reply && rt->rep_max != rt->rep_fixed);

	emit(o, "struct %s_%s_request *%s = (struct %s_%s_request *)InHeadP;\n", o->m->subsystem,
	     rt->name, s->in, o->m->subsystem, rt->name);
	if (reply)
		emit(o, "struct %s_%s_reply *%s = (struct %s_%s_reply *)OutHeadP;\n",
		     o->m->subsystem, rt->name, s->out, o->m->subsystem, rt->name);
	if (var) {
		if (rt->req_max != rt->req_fixed)
			emit(o, "size_t %s = sizeof *%s;\n", s->off, s->in);
		else
			emit(o, "size_t %s;\n", s->off);
		emit(o, "size_t %s;\n", s->len);
	}
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		if (srv_fetched(a)) {
			emit(o, "%s %s;\n",
			     idlc_is(a, IDLC_AK_TOKEN) ? "struct idl_cred" : "idl_reply_t",
			     a->name);
			continue;
		}
		if (idlc_is(a, IDLC_AK_INLINE_PORTS | IDLC_AK_REPLY)) {
			/* The stub's buffer, which the reply carries (its C type may be an
			 * array, which a local cannot be assigned). */
			emit(o, "%s *%s;\n", a->c_elem != NULL ? a->c_elem : "idl_port_t", a->name);
		} else if (idlc_is(a, IDLC_AK_DESC | IDLC_AK_REPLY)) {
			emit(o, "%s %s%s;\n", a->c_type[EMIT_SERVER],
			     idlc_is(a, IDLC_AK_SERVER_ELEM) ? "*" : "", a->name);
		}
		if (idlc_is(a, IDLC_AK_DESC | IDLC_AK_REPLY)) {
			if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT))
				emit(o, "mach_msg_type_number_t %sCnt;\n", a->name);
			if (idlc_is(a, IDLC_AK_SERVER_POLY))
				emit(o, "mach_msg_type_name_t %sPoly;\n", a->name);
			if (idlc_is(a, IDLC_AK_SERVER_DEALLOC))
				emit(o, "boolean_t %sDealloc;\n", a->name);
			continue;
		}
		if (idlc_is(a, IDLC_AK_VAR)) {
			if (a->rtype->arg_kind == IDL_ARG_CSTRING_VAR)
				emit(o, "char *%s;\n", a->name);
			else
				emit(o, "void *%s;\n", a->name);
			if (idlc_is(a, IDLC_AK_REPLY) && a->rtype->arg_kind == IDL_ARG_CSTRING_VAR)
				emit(o, "const char *%s;\n", srv_end(s, a));
			if (idlc_is(a, IDLC_AK_REPLY) && a->rtype->arg_kind == IDL_ARG_VAR_ARRAY &&
			    !idlc_is(a, IDLC_AK_SAMECOUNT))
				emit(o, "mach_msg_type_number_t %sCnt;\n", a->name);
		} else if (idlc_is(a, IDLC_AK_SERVER_LOCAL)) {
			emit(o, "%s %s;\n", a->c_type[EMIT_SERVER], a->name);
		}
	}
	emit(o, "\n");
}

static void srv_check_var(struct srv_stub *s);

static void
srv_check_request(struct srv_stub *s)
{
	struct emit_out *o = s->o;
	const char *in = s->in;
	bool var = s->rt->req_max != s->rt->req_fixed;

	srv_refuse(s, idlc_printf(o->ctx, "InHeadP->size %s sizeof *%s", var ? "<" : "!=", in));
	if (s->rt->req_ndesc != 0) {
		srv_refuse(s, emit_desc_count_bad(o, "InHeadP->", s->rt->req_ndesc));
		for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
			if (srv_desc_in(a))
				srv_refuse(s, emit_desc_bad(o,
							    idlc_printf(o->ctx, "%s->%s", in,
									emit_field_name(o, a)),
							    a));
	}
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);
		const char *cond;

		if (!srv_fixed_string_in(a))
			continue;
		cond = idlc_printf(o->ctx, "memchr(%s->%s, '\\0', sizeof %s->%s) == NULL", in,
				   field, in, field);
		srv_refuse(s, cond);
	}
	if (var)
		srv_check_var(s);
	/* Arrays that share one count (samecount) must have come with the same count. */
	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next)
		if (idlc_is(a, IDLC_AK_REQUEST | IDLC_AK_SAMECOUNT))
			srv_refuse(s, idlc_printf(o->ctx, "%s != %s", srv_received_count(s, a),
						  srv_received_count(s, a->leader)));
}

/* Each variable argument in order: its count within its bound and the bytes received, a
 * string's NUL, then the exact end. */
static void
srv_check_var(struct srv_stub *s)
{
	struct emit_out *o = s->o;
	const char *in = s->in;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		const char *cnt, *cond;
		uint32_t bound = a->rtype->wire_count;
		bool str;

		if (!idlc_is(a, IDLC_AK_VAR | IDLC_AK_REQUEST))
			continue;
		str = a->rtype->arg_kind == IDL_ARG_CSTRING_VAR;
		cnt = idlc_printf(o->ctx, "%s->%sCnt", in, emit_field_name(o, a));
		if (str)
			cond = idlc_printf(o->ctx, "%s == 0 || %s > %" PRIu32, cnt, cnt, bound);
		else
			cond = idlc_printf(o->ctx, "%s > %" PRIu32, cnt, bound);
		srv_refuse(s, cond);
		emit(o, "%s = IDL_MSG_ROUND(%s);\n", s->len,
		     emit_bytes(s->o, cnt, a->rtype->elem_size));
		srv_refuse(s, idlc_printf(o->ctx, "%s > InHeadP->size - %s", s->len, s->off));
		emit(o, "%s = (char *)InHeadP + %s;\n", a->name, s->off);
		if (str)
			srv_refuse(s, idlc_printf(o->ctx, "%s[%s - 1] != '\\0'", a->name, cnt));
		emit(o, "%s += %s;\n", s->off, s->len);
	}
	srv_refuse(s, idlc_printf(o->ctx, "%s != InHeadP->size", s->off));
}

/* Before the call: clear the reply, copy inout values in, point out arrays at the reply. */
static void
srv_prepare(struct srv_stub *s)
{
	struct emit_out *o = s->o;
	const struct idlc_routine *rt = s->rt;
	const char *in = s->in, *out = s->out;
	uint64_t slot = 0; /* bytes of variable part before the next variable out argument */
	bool any = false;

	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		if (srv_fetched(a) && idlc_is(a, IDLC_AK_TOKEN)) {
			emit(o, "if (idl_request_cred(&%s) != 0)\n\tmemset(&%s, 0, sizeof %s);\n",
			     a->name, a->name, a->name);
			any = true;
		} else if (srv_fetched(a)) {
			emit(o, "%s = idl_request_reply();\n", a->name);
			any = true;
		} else if (a->rtype != NULL && a->rtype->intran != NULL &&
			   idlc_is(a, IDLC_AK_SERVER_LOCAL) && !idlc_is(a, IDLC_AK_RECORD) &&
			   (idlc_is(a, IDLC_AK_REQUEST) || a->dir == IDL_DIR_REQUESTPORT)) {
			emit(o, "%s = %s(%s);\n", a->name, a->rtype->intran, srv_received(s, a));
			any = true;
		}
	}
	if (rt->kind != IDLC_RT_ROUTINE) {
		if (any)
			emit(o, "\n");
		return;
	}
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);
		const char *at;

		/* An out array or string in the fixed part is the routine's to fill, and it
		 * may not fill every byte: what it leaves must not be an earlier reply's. */
		if (a->dir == IDL_DIR_OUT && !idlc_is(a, IDLC_AK_RECORD) &&
		    (a->rtype->arg_kind == IDL_ARG_FIXED_ARRAY ||
		     a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)) {
			emit(o, "memset(%s->%s, 0, sizeof %s->%s);\n", out, field, out, field);
			any = true;
			continue;
		}

		if (idlc_is(a, IDLC_AK_RECORD | IDLC_AK_REQUEST)) {
			emit(o, "memcpy(&%s, %s->%s, sizeof %s);\n", a->name, in, field, a->name);
			any = true;
			continue;
		}
		/* A record with padding (struct {}) is copied whole into the reply: what the
		 * routine leaves unwritten must not be old stack. */
		if (idlc_is(a, IDLC_AK_RECORD) && a->dir == IDL_DIR_OUT &&
		    a->rtype->wire_type == IDL_WT_STRUCT) {
			emit(o, "memset(&%s, 0, sizeof %s);\n", a->name, a->name);
			any = true;
			continue;
		}
		if (!idlc_is(a, IDLC_AK_REPLY))
			continue;
		if (idlc_is(a, IDLC_AK_INLINE_PORTS)) {
			/* An out inline array of ports: the routine fills the stub's buffer,
			 * which the runtime frees once the reply is sent. */
			emit(o, "%s = idl_ool_alloc(%s);\n", a->name, srv_ports_bytes(s, a));
			emit(o, "if (%s == NULL) {\n", a->name);
			srv_free_ports(s, a);
			emit(o, "\tOutHeadP->retcode = IDL_ENOMEM;\n\treturn;\n}\n");
		} else if (idlc_is(a, IDLC_AK_DESC)) {
			/* What the routine returns starts empty; an inout value starts as what
			 * came. */
			if (a->dir == IDL_DIR_INOUT)
				emit(o, "%s = %s;\n", a->name, srv_received(s, a));
			else
				emit(o, "memset(&%s, 0, sizeof %s);\n", a->name, a->name);
		}
		if (idlc_is(a, IDLC_AK_DESC)) {
			/* The count starts as what came in, or as the room of an inline array
			 * (the smallest of those sharing it), or empty. */
			if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT))
				emit(o, "%sCnt = %s;\n", a->name,
				     a->dir == IDL_DIR_INOUT
					     ? emit_desc_count(
						       o, idlc_printf(o->ctx, "%s->%s", in, field),
						       a)
				     : idlc_is(a, IDLC_AK_INLINE_PORTS)
					     ? idlc_printf(o->ctx, "%" PRIu32, a->shared_bound)
					     : "0");
			if (idlc_is(a, IDLC_AK_SERVER_POLY))
				emit(o, "%sPoly = %s;\n", a->name,
				     a->dir == IDL_DIR_INOUT
					     ? emit_desc_poly(
						       o, idlc_printf(o->ctx, "%s->%s", in, field))
					     : "MACH_MSG_TYPE_MOVE_SEND");
			if (idlc_is(a, IDLC_AK_SERVER_DEALLOC))
				emit(o, "%sDealloc = FALSE;\n", a->name);
			any = true;
			continue;
		}
		if (!idlc_is(a, IDLC_AK_VAR)) {
			if (a->dir != IDL_DIR_INOUT || idlc_is(a, IDLC_AK_RECORD))
				continue;
			if (a->rtype->arg_kind == IDL_ARG_SCALAR)
				emit(o, "%s = %s->%s;\n", a->name, in, field);
			else
				emit(o, "memcpy(%s->%s, %s->%s, sizeof %s->%s);\n", out, field, in,
				     field, out, field);
			any = true;
			continue;
		}
		/* The first variable out argument lies where it will be sent; later ones at
		 * their largest offset, moved down after the call. */
		if (slot == 0)
			at = idlc_printf(o->ctx, "(char *)OutHeadP + sizeof *%s", out);
		else
			at = idlc_printf(o->ctx, "(char *)OutHeadP + sizeof *%s + %" PRIu64, out,
					 slot);
		if (a->dir == IDL_DIR_INOUT) {
			const char *cnt = idlc_printf(o->ctx, "%s->%sCnt", in, field);

			emit(o, "memcpy(%s, %s, %s);\n", at, a->name,
			     emit_bytes(s->o, cnt, a->rtype->elem_size));
			if (a->rtype->arg_kind == IDL_ARG_VAR_ARRAY &&
			    !idlc_is(a, IDLC_AK_SAMECOUNT))
				emit(o, "%sCnt = %s;\n", a->name, cnt);
		} else if (a->rtype->arg_kind == IDL_ARG_VAR_ARRAY &&
			   idlc_is(a, IDLC_AK_COUNTINOUT)) {
			/* The caller's capacity, as GNU MIG clamps it. */
			emit(o, "%sCnt = %s->%sCnt < %" PRIu32 " ? %s->%sCnt : %" PRIu32 ";\n",
			     a->name, in, field, a->rtype->wire_count, in, field,
			     a->rtype->wire_count);
		} else if (a->rtype->arg_kind == IDL_ARG_VAR_ARRAY &&
			   !idlc_is(a, IDLC_AK_SAMECOUNT)) {
			/* The room of the array, or the smallest of those sharing its count. */
			emit(o, "%sCnt = %" PRIu32 ";\n", a->name, a->shared_bound);
		}
		emit(o, "%s = %s;\n", a->name, at);
		slot += (emit_data_size(a) + IDL_MSG_ALIGN - 1) / IDL_MSG_ALIGN * IDL_MSG_ALIGN;
		any = true;
	}
	if (any)
		emit(o, "\n");
}

/* The server routine's arguments, as the demux passes them. */
static void
srv_call_item(struct emit_list *l, const struct idlc_arg *a, const void *data)
{
	const struct srv_stub *s = data;
	struct emit_out *o = s->o;
	const char *field = emit_field_name(o, a);
	const char *msg = idlc_is(a, IDLC_AK_REPLY) ? s->out : s->in;
	const char *elem, *wire;

	if (srv_fetched(a)) {
		emit_item(l, "%s", a->name);
		if (idlc_is(a, IDLC_AK_SERVER_POLY))
			emit_item(l, "MACH_MSG_TYPE_PORT_SEND_ONCE");
		return;
	}
	if (idlc_is(a, IDLC_AK_SEQNO)) {
		emit_item(l, "InHeadP->seqno");
		return;
	}
	if (a->dir == IDL_DIR_REQUESTPORT) {
		emit_item(l, "%s",
			  idlc_is(a, IDLC_AK_SERVER_LOCAL) ? a->name : "idl_request_port()");
		return;
	}
	if (idlc_is(a, IDLC_AK_DESC | IDLC_AK_REPLY)) {
		/* An inline array of ports is filled in place; other descriptors returned. */
		emit_item(l, "%s%s", idlc_is(a, IDLC_AK_INLINE_PORTS) ? "" : "&", a->name);
		if (idlc_is(a, IDLC_AK_SERVER_POLY))
			emit_item(l, "&%sPoly", a->name);
		if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT))
			emit_item(l, "&%sCnt", a->name);
		if (idlc_is(a, IDLC_AK_SERVER_DEALLOC))
			emit_item(l, "&%sDealloc", a->name);
		return;
	}
	if (idlc_is(a, IDLC_AK_SERVER_LOCAL)) {
		emit_item(l, "%s%s", idlc_is(a, IDLC_AK_REPLY) ? "&" : "", a->name);
		if (idlc_is(a, IDLC_AK_SERVER_POLY))
			emit_item(l, "%s",
				  emit_desc_poly(o, idlc_printf(o->ctx, "%s->%s", s->in, field)));
		return;
	}
	if (idlc_is(a, IDLC_AK_DESC)) {
		const char *d = idlc_printf(o->ctx, "%s->%s", s->in, field);

		emit_item(l, "%s", emit_desc_value(o, d, a, EMIT_SERVER));
		if (idlc_is(a, IDLC_AK_SERVER_POLY))
			emit_item(l, "%s", emit_desc_poly(o, d));
		if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT))
			emit_item(l, "%s", emit_desc_count(o, d, a));
		if (idlc_is(a, IDLC_AK_SERVERCOPY))
			emit_item(l, "FALSE");
		return;
	}
	switch (a->rtype->arg_kind) {
	case IDL_ARG_VAR_ARRAY:
		emit_item(l, "%s", a->name);
		if (idlc_is(a, IDLC_AK_SAMECOUNT))
			return;
		if (idlc_is(a, IDLC_AK_REPLY))
			emit_item(l, "&%sCnt", a->name);
		else
			emit_item(l, "%s->%sCnt", s->in, field);
		return;
	case IDL_ARG_CSTRING_VAR:
		emit_item(l, "%s", a->name);
		return;
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_CSTRING_FIXED:
		/* The routine sees the message's bytes; a cast when the C element type is spelt
		 * differently from the wire's (sizes are asserted equal). */
		elem = a->c_elem;
		wire = emit_wire_ctype(a);
		if (elem != NULL && strcmp(elem, wire) != 0)
			emit_item(l, "(%s *)%s->%s", elem, msg, field);
		else
			emit_item(l, "%s->%s", msg, field);
		return;
	default:
		emit_item(l, "%s->%s", s->in, field);
		return;
	}
}

static bool
srv_call_pred(const struct idlc_arg *a, const void *data)
{
	return idlc_is(a, IDLC_AK_SERVER_PARAM);
}

static void
srv_finish_var(struct srv_stub *s, const struct idlc_arg *a, bool first)
{
	struct emit_out *o = s->o;
	const char *field = emit_field_name(o, a);
	const char *dst = idlc_printf(o->ctx, "(char *)OutHeadP + %s", s->off);

	if (a->rtype->arg_kind == IDL_ARG_CSTRING_VAR) {
		emit(o, "%s = (size_t)(%s - %s) + 1;\n", s->len, srv_end(s, a), a->name);
		emit(o, "%s->%sCnt = (uint32_t)%s;\n", s->out, field, s->len);
	} else {
		const char *cnt = emit_count_name(o, a);

		emit(o, "%s->%sCnt = %s;\n", s->out, field, cnt);
		emit(o, "%s = %s;\n", s->len, emit_bytes(s->o, cnt, a->rtype->elem_size));
	}
	if (!first)
		emit(o, "memmove(%s, %s, %s);\n", dst, a->name, s->len);
	emit(o, "memset(%s + %s, 0, IDL_MSG_ROUND(%s) - %s);\n", dst, s->len, s->len, s->len);
	emit(o, "%s += IDL_MSG_ROUND(%s);\n", s->off, s->len);
}

/* An out descriptor from what the routine returned. */
static void
srv_finish_desc(struct srv_stub *s, const struct idlc_arg *a)
{
	struct emit_out *o = s->o;
	const char *value = a->name;

	if (a->rtype->outtran != NULL)
		value = idlc_printf(o->ctx, "%s(%s)", a->rtype->outtran, a->name);
	emit_desc_fill(
		o, idlc_printf(o->ctx, "%s->%s", s->out, emit_field_name(o, a)), a, value,
		idlc_is(a, IDLC_AK_COUNTED) ? emit_count_name(o, a) : NULL,
		idlc_is(a, IDLC_AK_SERVER_POLY) ? idlc_printf(o->ctx, "%sPoly", a->name) : NULL,
		idlc_is(a, IDLC_AK_SERVER_DEALLOC) ? idlc_printf(o->ctx, "%sDealloc", a->name)
						   : NULL,
		idlc_is(a, IDLC_AK_INLINE_PORTS));
}

/* After a successful call: check what the routine returned, then complete the reply. */
static void
srv_finish(struct srv_stub *s)
{
	struct emit_out *o = s->o;
	const struct idlc_routine *rt = s->rt;
	const char *out = s->out;
	const struct idlc_arg *a;
	const char *said = NULL;
	bool first = true;

	for (a = rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);
		uint32_t bound = a->rtype->wire_count;
		const char *cnt = emit_count_name(o, a);
		const char *cond;

		if (!idlc_is(a, IDLC_AK_REPLY))
			continue;
		if (a->rtype->arg_kind == IDL_ARG_CSTRING_FIXED)
			cond = idlc_printf(o->ctx, "memchr(%s->%s, '\\0', sizeof %s->%s) == NULL",
					   out, field, out, field);
		else if (a->rtype->arg_kind == IDL_ARG_CSTRING_VAR)
			cond = srv_string_end(s, a, bound);
		else if (a->rtype->arg_kind == IDL_ARG_VAR_ARRAY ||
			 idlc_is(a, IDLC_AK_INLINE_PORTS | IDLC_AK_COUNTED))
			cond = idlc_printf(o->ctx, "%s > %" PRIu32, cnt, bound);
		else if (idlc_is(a, IDLC_AK_OOL_DATA | IDLC_AK_COUNTED) && a->rtype->elem_size > 1)
			cond = idlc_printf(o->ctx, "%s > UINT32_MAX / %" PRIu32, cnt,
					   a->rtype->elem_size);
		else
			continue;
		/* Arrays that share one count, one after the other, with one bound: once. */
		if (cond == NULL || (said != NULL && strcmp(said, cond) == 0))
			continue;
		srv_too_large(s, cond);
		said = cond;
	}
	for (a = rt->args; a != NULL; a = a->next) {
		const char *field = emit_field_name(o, a);

		if (!idlc_is(a, IDLC_AK_REPLY) || !idlc_is(a, IDLC_AK_SERVER_LOCAL))
			continue;
		if (idlc_is(a, IDLC_AK_DESC))
			srv_finish_desc(s, a);
		else if (idlc_is(a, IDLC_AK_RECORD))
			emit(o, "memcpy(%s->%s, &%s, sizeof %s->%s);\n", out, field, a->name, out,
			     field);
		else if (a->rtype->outtran != NULL)
			emit(o, "%s->%s = %s(%s);\n", out, field, a->rtype->outtran, a->name);
		else
			emit(o, "%s->%s = %s;\n", out, field, a->name);
	}
	emit_padding(o, rt, true, "(char *)OutHeadP");
	if (rt->rep_ndesc != 0)
		emit_desc_header(o, "OutHeadP->", rt->rep_ndesc);
	if (!idlc_any_arg(rt, IDLC_AK_VAR | IDLC_AK_REPLY)) {
		emit(o, "OutHeadP->size = sizeof *%s;\n", out);
		return;
	}
	emit(o, "%s = sizeof *%s;\n", s->off, out);
	for (a = rt->args; a != NULL; a = a->next) {
		if (!idlc_is(a, IDLC_AK_VAR | IDLC_AK_REPLY))
			continue;
		srv_finish_var(s, a, first);
		first = false;
	}
	emit(o, "OutHeadP->size = (uint32_t)%s;\n", s->off);
}

/* Right after the routine: a reply handle it did not keep (it keeps one only by returning
 * MIG_NO_REPLY) is released, and destructors run on translated in values. */
static void
srv_after_call(struct srv_stub *s)
{
	struct emit_out *o = s->o;

	for (const struct idlc_arg *a = s->rt->args; a != NULL; a = a->next) {
		if (srv_fetched(a) && idlc_is(a, IDLC_AK_REPLY_HANDLE))
			emit(o,
			     "if (OutHeadP->retcode != MIG_NO_REPLY)\n"
			     "\tidl_reply_discard(%s);\n",
			     a->name);
		else if (a->rtype != NULL && a->rtype->destructor != NULL &&
			 (idlc_is(a, IDLC_AK_REQUEST) || a->dir == IDL_DIR_REQUESTPORT))
			emit(o, "%s(%s);\n", a->rtype->destructor,
			     idlc_is(a, IDLC_AK_SERVER_LOCAL) ? a->name : srv_received(s, a));
		else if (srv_desc_in(a) && a->rtype->ool_inline)
			/* An inline array is never the routine's to keep (it would point into
			 * the message on Mach): its memory goes, the ports in it stay. */
			emit(o,
			     "if (OutHeadP->retcode == KERN_SUCCESS || OutHeadP->retcode == "
			     "MIG_NO_REPLY)\n\tidl_ool_free((void *)(uintptr_t)%s->%s.addr, "
			     "(size_t)%s->%s.size * sizeof(idl_port_t));\n",
			     s->in, emit_field_name(o, a), s->in, emit_field_name(o, a));
	}
}

static void
srv_unpacker(struct emit_out *o, const struct idlc_routine *rt)
{
	struct srv_stub s;
	unsigned checks = 1;
	bool reply;

	s.o = o;
	s.rt = rt;
	s.in = emit_local(o, rt, "In0P");
	s.out = emit_local(o, rt, "OutP");
	s.off = emit_local(o, rt, "off");
	s.len = emit_local(o, rt, "len");
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (srv_fixed_string_in(a) || idlc_is(a, IDLC_AK_VAR | IDLC_AK_REQUEST) ||
		    srv_desc_in(a) || idlc_is(a, IDLC_AK_REQUEST | IDLC_AK_SAMECOUNT))
			checks++;
	if (rt->req_ndesc != 0)
		checks++;
	s.goto_bad = checks > 1;
	reply = rt->kind == IDLC_RT_ROUTINE && rt->rep_fixed > IDL_MSG_HEADER_SIZE;

	emit(o, "static void\n_X%s(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)\n{\n",
	     rt->name);
	emit_indent(o, 1);
	srv_declare(&s);
	srv_check_request(&s);
	emit(o, "\n");
	srv_prepare(&s);
	emit(o, "OutHeadP->retcode = %s(", emit_server_name(o, rt));
	emit_list(o, rt->args, srv_call_pred, srv_call_item, &s, ", ", "", ");\n");
	srv_after_call(&s);
	if (reply && idlc_any_arg(rt, IDLC_AK_INLINE_PORTS | IDLC_AK_REPLY)) {
		/* The buffers of out inline arrays of ports go with the reply, or now. */
		emit(o, "if (OutHeadP->retcode != KERN_SUCCESS) {\n");
		srv_free_ports(&s, NULL);
		emit(o, "\treturn;\n}\n\n");
		srv_finish(&s);
	} else if (reply) {
		emit(o, "if (OutHeadP->retcode != KERN_SUCCESS)\n\treturn;\n\n");
		srv_finish(&s);
	}
	if (s.goto_bad) {
		emit(o, "return;\n");
		emit_indent(o, -1);
		emit(o, "\nbad:\n");
		emit_indent(o, 1);
		emit(o, "OutHeadP->retcode = MIG_BAD_ARGUMENTS;\n");
	}
	emit_indent(o, -1);
	emit(o, "}\n");
}

static void
srv_dispatch(struct emit_out *o)
{
	const struct idlc_module *m = o->m;
	const char *demux = emit_demux_name(o);
	const char **items;
	unsigned i = 0;

	if (m->nroutines > 0) {
		items = idlc_alloc(o->ctx, m->nroutines * sizeof *items);
		if (items == NULL)
			return;
		for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next, i++)
			items[i] = rt->kind == IDLC_RT_SKIP ? "NULL"
							    : idlc_printf(o->ctx, "_X%s", rt->name);
		emit(o, "\nstatic const idl_routine_t %s_routines[] = {\n", demux);
		emit_indent(o, 1);
		emit_strings(o, items, i, ", ", "", ",\n");
		emit_indent(o, -1);
		emit(o, "};\n");
	}
	emit(o, "\nidl_routine_t\n%s_routine(const idl_msg_header_t *InHeadP)\n{\n", demux);
	if (m->nroutines > 0) {
		emit(o, "\tuint32_t n = (uint32_t)InHeadP->id - %" PRIu32 "u;\n\n",
		     (uint32_t)m->base);
		emit(o, "\tif (n >= %u)\n\t\treturn NULL;\n", m->nroutines);
		emit(o, "\treturn %s_routines[n];\n", demux);
	} else {
		emit(o, "\t(void)InHeadP;\n\treturn NULL;\n");
	}
	emit(o, "}\n");
	emit(o, "\nint\n%s(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)\n{\n", demux);
	emit(o, "\tidl_routine_t routine;\n\n");
	emit(o, "\tidl_reply_init(InHeadP, OutHeadP);\n");
	emit(o, "\troutine = %s_routine(InHeadP);\n", demux);
	emit(o, "\tif (routine == NULL) {\n");
	emit(o, "\t\tOutHeadP->retcode = MIG_BAD_ID;\n");
	emit(o, "\t\treturn 0;\n");
	emit(o, "\t}\n");
	emit(o, "\troutine(InHeadP, OutHeadP);\n");
	emit(o, "\treturn 1;\n");
	emit(o, "}\n");
}

void
emit_server(struct emit_out *o)
{
	const char *demux = emit_demux_name(o);
	bool heap = false;

	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next)
		if (emit_has_send_reply(rt) && rt->rep_max > EMIT_STACK_LIMIT)
			heap = true;
	emit_banner(o);
	emit(o, "#include <stddef.h>\n");
	emit(o, "#include <stdint.h>\n");
	if (heap)
		emit(o, "#include <stdlib.h>\n");
	emit(o, "#include <string.h>\n");
	emit(o, "\n#include <idl/idl.h>\n");
	if (o->m->needs_ool)
		emit(o, "#include <idl/idl_ool.h>\n");
	emit_imports(o, EMIT_SERVER);
	emit(o, "\n");
	emit_ctype_asserts(o);
	emit_descriptor(o);
	emit_prototypes(o, EMIT_SERVER);
	emit(o, "\n/* The demux and its routine lookup. */\n");
	emit(o, "int %s(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP);\n", demux);
	emit(o, "idl_routine_t %s_routine(const idl_msg_header_t *InHeadP);\n", demux);
	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind == IDLC_RT_SKIP)
			continue;
		emit_message_structs(o, rt);
		emit(o, "\n");
		srv_unpacker(o, rt);
		if (emit_has_send_reply(rt))
			emit_send_reply(o, rt);
	}
	srv_dispatch(o);
}
