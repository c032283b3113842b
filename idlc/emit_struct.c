/*
 * emit_struct.c - the message structs of a routine and the assertions that pin their layout
 * (both .c files): descriptors first, then every other field at the offset layout.c gave
 * it, each checked with a _Static_assert, and the sizes of the C element types.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"

/* Whether the argument has a field in the message: `desc` selects descriptors (which come
 * first) or the other fields. A countinout out array has its count in the request. */
static bool
emit_struct_has(const struct idlc_arg *a, bool reply, bool desc)
{
	if (!reply && idlc_is(a, IDLC_AK_COUNTINOUT))
		return !desc;
	if (!idlc_is(a, reply ? IDLC_AK_REPLY : IDLC_AK_REQUEST))
		return false;
	return idlc_is(a, IDLC_AK_DESC) == desc;
}

static void
emit_struct(struct emit_out *o, const struct idlc_routine *rt, bool reply)
{
	const char *lit = emit_input_literal(o);
	const char *what = reply ? "reply" : "request";
	uint32_t size = reply ? rt->rep_fixed : rt->req_fixed;
	const struct idlc_arg *a;
	const char *items[2];

	emit(o, "struct %s_%s_%s {\n", o->m->subsystem, rt->name, what);
	emit_indent(o, 1);
	emit(o, "idl_msg_header_t head;\n");
	for (int pass = 0; pass < 2; pass++) {
		for (a = rt->args; a != NULL; a = a->next) {
			struct emit_field f;
			bool cnt;

			if (!emit_struct_has(a, reply, pass == 0))
				continue;
			cnt = !idlc_is(a, IDLC_AK_REQUEST) && !reply;
			emit_wire_field(a, &f);
			emit(o, "%s %s%s", cnt ? "uint32_t" : f.type, emit_field_name(o, a),
			     idlc_is(a, IDLC_AK_VAR) || cnt ? "Cnt" : "");
			if (f.units != 0 && !cnt)
				emit(o, "[%" PRIu32 "]", f.units);
			emit(o, "%s;\n", f.align8 && !cnt ? " IDL_ALIGN8" : "");
		}
	}
	emit_indent(o, -1);
	emit(o, "};\n");
	for (int pass = 0; pass < 2; pass++) {
		for (a = rt->args; a != NULL; a = a->next) {
			uint32_t off;
			bool cnt;

			if (!emit_struct_has(a, reply, pass == 0))
				continue;
			cnt = !idlc_is(a, IDLC_AK_REQUEST) && !reply;
			off = reply ? a->rep_offset : a->req_offset;
			items[0] =
				idlc_printf(o->ctx, "offsetof(struct %s_%s_%s, %s%s) == %" PRIu32,
					    o->m->subsystem, rt->name, what, emit_field_name(o, a),
					    idlc_is(a, IDLC_AK_VAR) || cnt ? "Cnt" : "", off);
			items[1] = idlc_printf(o->ctx, "\"%s: %s: layout of %s\"", lit, rt->name,
					       a->name);
			emit(o, "_Static_assert(");
			emit_strings(o, items, 2, ", ", "", ");\n");
		}
	}
	items[0] = idlc_printf(o->ctx, "sizeof(struct %s_%s_%s) == %" PRIu32, o->m->subsystem,
			       rt->name, what, size);
	items[1] = idlc_printf(o->ctx, "\"%s: %s: %s size\"", lit, rt->name, what);
	emit(o, "_Static_assert(");
	emit_strings(o, items, 2, ", ", "", ");\n");
}

/* The bytes an argument's field takes in the fixed part of a message. */
static uint64_t
emit_field_bytes(const struct idlc_arg *a, bool reply)
{
	if (idlc_is(a, IDLC_AK_DESC) && idlc_is(a, reply ? IDLC_AK_REPLY : IDLC_AK_REQUEST))
		return IDL_DESC_SIZE;
	if (idlc_is(a, IDLC_AK_VAR) || (!reply && idlc_is(a, IDLC_AK_COUNTINOUT)))
		return 4;
	return emit_data_size(a);
}

void
emit_padding(struct emit_out *o, const struct idlc_routine *rt, bool reply, const char *base)
{
	uint64_t end = IDL_MSG_HEADER_SIZE;
	uint32_t fixed = reply ? rt->rep_fixed : rt->req_fixed;

	/* Fields lie in the order layout.c placed them, descriptors first: the gaps are what
	 * lies between one field's end and the next one's offset, and after the last. */
	for (int pass = 0; pass < 2; pass++) {
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
			uint32_t off = reply ? a->rep_offset : a->req_offset;

			if (!emit_struct_has(a, reply, pass == 0) || off == IDL_NO_OFFSET)
				continue;
			if (off > end)
				emit(o, "memset(%s + %" PRIu64 ", 0, %" PRIu64 "); /* padding */\n",
				     base, end, off - end);
			end = off + emit_field_bytes(a, reply);
		}
	}
	if (fixed > end)
		emit(o, "memset(%s + %" PRIu64 ", 0, %" PRIu64 "); /* padding */\n", base, end,
		     fixed - end);
}

void
emit_message_structs(struct emit_out *o, const struct idlc_routine *rt)
{
	emit(o, "\n/* %s %s */\n", rt->kind == IDLC_RT_ROUTINE ? "Routine" : "SimpleRoutine",
	     rt->name);
	emit_struct(o, rt, false);
	if (rt->kind == IDLC_RT_ROUTINE) {
		emit(o, "\n");
		emit_struct(o, rt, true);
	}
}

void
emit_ctype_asserts(struct emit_out *o)
{
	const char *lit = emit_input_literal(o);
	struct strbuf seen = STRBUF_INIT;
	bool any = false;

	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind == IDLC_RT_SKIP)
			continue;
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
			const char *c;
			uint64_t size;
			char key[512];

			if (!idlc_is(a, IDLC_AK_TRAVELS))
				continue;
			if (a->rtype->arg_kind == IDL_ARG_PORT ||
			    a->rtype->wire_type == IDL_WT_PORT)
				continue;
			if (idlc_is(a, IDLC_AK_RECORD)) {
				c = a->c_type[o->which == IDLC_OUT_SERVER ? EMIT_SERVER
									  : EMIT_USER];
				size = emit_data_size(a);
			} else if (a->rtype->arg_kind != IDL_ARG_SCALAR) {
				c = a->c_elem;
				size = a->rtype->elem_size;
			} else {
				continue;
			}
			if (c == NULL)
				continue;
			snprintf(key, sizeof key, "\n%s=%" PRIu64 "\n", c, size);
			if (strstr(strbuf_str(&seen), key) != NULL)
				continue;
			strbuf_puts(&seen, key);
			if (!any)
				emit(o, "/* The C types of array elements and records must have "
					"their wire sizes. */\n");
			any = true;
			emit(o, "_Static_assert(sizeof(%s) == %" PRIu64 ", \"%s: C type %s\");\n",
			     c, size, lit, c);
		}
	}
	if (any)
		emit(o, "\n");
	strbuf_fini(&seen);
}
