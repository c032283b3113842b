/*
 * emit_desc.c - the descriptor table (struct idl_subsystem, <idl/idl_subsystem.h>).
 *
 * The same text goes into <sub>User.c and <sub>Server.c as a weak definition, so a program
 * may link both: the linker keeps one, and either is right because they are identical.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>

#include "emit.h"

static const char *const desc_dirs[] = {
	"0",
	"IDL_DIR_REQUESTPORT",
	"IDL_DIR_IN",
	"IDL_DIR_OUT",
	"IDL_DIR_INOUT",
	"IDL_DIR_WAITTIME",
	"IDL_DIR_MSGOPTION",
	"IDL_DIR_OTHER",
};
static const char *const desc_kinds[] = {
	"0",
	"IDL_ARG_SCALAR",
	"IDL_ARG_FIXED_ARRAY",
	"IDL_ARG_VAR_ARRAY",
	"IDL_ARG_CSTRING_FIXED",
	"IDL_ARG_CSTRING_VAR",
	"IDL_ARG_PORT",
	"IDL_ARG_OOL",
	"IDL_ARG_IMPLICIT",
};
static const char *const desc_wire[] = {
	"IDL_WT_NONE",	 "IDL_WT_INT8",	   "IDL_WT_INT16", "IDL_WT_INT32",
	"IDL_WT_INT64",	 "IDL_WT_BOOLEAN", "IDL_WT_CHAR",  "IDL_WT_BYTE",
	"IDL_WT_REAL32", "IDL_WT_REAL64",  "IDL_WT_PORT",  "IDL_WT_STRUCT",
};
static const char *const desc_rtkinds[] = {
	"0",
	"IDL_RT_ROUTINE",
	"IDL_RT_SIMPLEROUTINE",
	"IDL_RT_SKIP",
};

#define DESC_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The IDL_ARGF_* flags by name, in bit order, for the table's text. */
static const struct {
	uint32_t bit;
	const char *name;
} desc_flag_names[] = {
	{ IDL_ARGF_SIGNED, "IDL_ARGF_SIGNED" },
	{ IDL_ARGF_RECORD, "IDL_ARGF_RECORD" },
	{ IDL_ARGF_POLY_IN, "IDL_ARGF_POLY_IN" },
	{ IDL_ARGF_POLY_OUT, "IDL_ARGF_POLY_OUT" },
	{ IDL_ARGF_DEALLOC, "IDL_ARGF_DEALLOC" },
	{ IDL_ARGF_DEALLOC_PARAM, "IDL_ARGF_DEALLOC_PARAM" },
	{ IDL_ARGF_SERVERCOPY, "IDL_ARGF_SERVERCOPY" },
	{ IDL_ARGF_FIXED, "IDL_ARGF_FIXED" },
	{ IDL_ARGF_INLINE, "IDL_ARGF_INLINE" },
	{ IDL_ARGF_SEQNO, "IDL_ARGF_SEQNO" },
	{ IDL_ARGF_REPLY, "IDL_ARGF_REPLY" },
	{ IDL_ARGF_OPAQUE, "IDL_ARGF_OPAQUE" },
};

/* MIG's number for the disposition a sender names (emit_ool.c's ool_disposition()). */
static uint32_t
desc_disposition(enum idlc_ipc ipc)
{
	switch (ipc) {
	case IDLC_IPC_MOVE_RECEIVE:
	case IDLC_IPC_PORT_RECEIVE:
		return 16;
	case IDLC_IPC_MOVE_SEND:
	case IDLC_IPC_PORT_SEND:
		return 17;
	case IDLC_IPC_MOVE_SEND_ONCE:
	case IDLC_IPC_PORT_SEND_ONCE:
		return 18;
	case IDLC_IPC_MAKE_SEND:
		return 20;
	case IDLC_IPC_MAKE_SEND_ONCE:
		return 21;
	case IDLC_IPC_PORT_NAME:
		return 15;
	case IDLC_IPC_COPY_SEND:
	default:
		return 19;
	}
}

/*
 * What the stubs do with an argument beyond how it travels, asked exactly as the stub
 * emitters ask it (emit_server.c's parameters, emit_ool.c's descriptors, emit_user.c's
 * checks), so that the table and the stubs cannot disagree.
 */
void
emit_desc_arg_flags(const struct idlc_arg *a, uint32_t *flags, uint32_t *disposition)
{
	const struct idlc_type *t = a->rtype;
	uint32_t kind, wire_type, elem_size, count, f = 0;

	*disposition = 0;
	if (a->dir_written == IDLC_DIR_MSGSEQNO)
		f |= IDL_ARGF_SEQNO;
	if (emit_is_reply_handle(a) && emit_is_param(a, EMIT_SERVER))
		f |= IDL_ARGF_REPLY;
	if (emit_is_token(a) && emit_is_param(a, EMIT_SERVER))
		f |= IDL_ARGF_OPAQUE;
	if (t == NULL) {
		*flags = f;
		return;
	}
	idlc_arg_desc_facts(a, &kind, &wire_type, &elem_size, &count);
	if (kind != IDL_ARG_IMPLICIT && kind != IDL_ARG_PORT && t->is_signed)
		f |= IDL_ARGF_SIGNED;
	if (emit_is_record(a))
		f |= IDL_ARGF_RECORD;
	if ((t->intran != NULL || t->outtran != NULL || t->destructor != NULL) &&
	    emit_is_param(a, EMIT_SERVER))
		f |= IDL_ARGF_OPAQUE;
	if (t->arg_kind == IDL_ARG_PORT || t->wire_type == IDL_WT_PORT) {
		if (t->poly_in)
			f |= IDL_ARGF_POLY_IN;
		if (t->poly_out)
			f |= IDL_ARGF_POLY_OUT;
		if (emit_is_desc(a))
			*disposition = desc_disposition(t->port_ipc);
	}
	if (emit_is_desc(a) && t->arg_kind == IDL_ARG_OOL) {
		if (t->ool_fixed)
			f |= IDL_ARGF_FIXED;
		if (t->ool_inline)
			f |= IDL_ARGF_INLINE;
	}
	if (a->desc_flags & IDLC_AF_DEALLOC)
		f |= IDL_ARGF_DEALLOC;
	if (a->desc_flags & IDLC_AF_DEALLOC_RT)
		f |= IDL_ARGF_DEALLOC_PARAM;
	if (a->flags & IDLC_AF_SERVERCOPY)
		f |= IDL_ARGF_SERVERCOPY;
	*flags = f;
}

/* The flags as C text: names joined by " | ", or "0". */
static const char *
desc_flags_text(struct emit_out *o, uint32_t flags)
{
	const char *r = NULL;

	for (size_t i = 0; i < DESC_NELEM(desc_flag_names); i++) {
		if (!(flags & desc_flag_names[i].bit))
			continue;
		r = r == NULL ? desc_flag_names[i].name
			      : idlc_printf(o->ctx, "%s | %s", r, desc_flag_names[i].name);
		flags &= ~desc_flag_names[i].bit;
	}
	if (flags != 0) /* a bit this emitter has no name for */
		r = r == NULL ? idlc_printf(o->ctx, "0x%" PRIx32 "u", flags)
			      : idlc_printf(o->ctx, "%s | 0x%" PRIx32 "u", r, flags);
	return r != NULL ? r : "0";
}

/* An enum's name, or its number when this emitter does not know it. */
static const char *
desc_word(struct emit_out *o, const char *const *words, size_t n, uint32_t v)
{
	const char *r;

	if (v < n)
		return words[v];
	r = idlc_printf(o->ctx, "%" PRIu32, v);
	return r != NULL ? r : "0";
}

static const char *
desc_offset(struct emit_out *o, uint32_t off)
{
	const char *r;

	if (off == IDL_NO_OFFSET)
		return "IDL_NO_OFFSET";
	r = idlc_printf(o->ctx, "%" PRIu32, off);
	return r != NULL ? r : "0";
}

/* The C type the descriptor names for one element: the same on both sides (the server's,
 * which the dynamic server calls with). */
static const char *
desc_ctype(const struct idlc_arg *a)
{
	bool elem;
	const char *c;

	switch (a->rtype->arg_kind) {
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_FIXED:
	case IDL_ARG_CSTRING_VAR:
		if (a->dir == IDL_DIR_IN || a->dir == IDL_DIR_OUT || a->dir == IDL_DIR_INOUT) {
			if (emit_is_record(a))
				break;
			c = emit_elem_ctype(a);
			if (c != NULL)
				return c;
		}
		break;
	default:
		break;
	}
	return emit_arg_ctype(a, EMIT_SERVER, &elem);
}

static void
desc_args(struct emit_out *o, const struct idlc_routine *rt)
{
	emit(o, "static const struct idl_arg_desc %s_%s_args[] = {\n", o->m->subsystem, rt->name);
	emit_indent(o, 1);
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		uint32_t kind, wire_type, elem_size, count, flags, disposition;
		const char *items[11];

		idlc_arg_desc_facts(a, &kind, &wire_type, &elem_size, &count);
		emit_desc_arg_flags(a, &flags, &disposition);
		items[0] = idlc_printf(o->ctx, "\"%s\"", a->name);
		items[1] = idlc_printf(o->ctx, "\"%s\"", desc_ctype(a));
		items[2] = desc_word(o, desc_dirs, DESC_NELEM(desc_dirs), (uint32_t)a->dir);
		items[3] = desc_word(o, desc_kinds, DESC_NELEM(desc_kinds), kind);
		items[4] = desc_word(o, desc_wire, DESC_NELEM(desc_wire), wire_type);
		items[5] = idlc_printf(o->ctx, "%" PRIu32, disposition);
		items[6] = desc_flags_text(o, flags);
		items[7] = idlc_printf(o->ctx, "%" PRIu32, elem_size);
		items[8] = idlc_printf(o->ctx, "%" PRIu32, count);
		items[9] = desc_offset(o, a->req_offset);
		items[10] = desc_offset(o, a->rep_offset);
		for (unsigned i = 0; i < DESC_NELEM(items); i++)
			if (items[i] == NULL)
				items[i] = "0";
		emit(o, "{ ");
		emit_strings(o, items, DESC_NELEM(items), ", ", "", " },\n");
	}
	emit_indent(o, -1);
	emit(o, "};\n\n");
}

static void
desc_routine(struct emit_out *o, const struct idlc_routine *rt)
{
	const char *items[12];
	unsigned nargs = 0;

	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		nargs++;
	if (rt->kind == IDLC_RT_SKIP) {
		items[0] = "NULL";
		nargs = 0;
	} else {
		items[0] = idlc_printf(o->ctx, "\"%s\"", rt->name);
	}
	items[1] = idlc_printf(o->ctx, "%" PRIu32, rt->number);
	items[2] = desc_word(o, desc_rtkinds, DESC_NELEM(desc_rtkinds), (uint32_t)rt->kind);
	items[3] = idlc_printf(o->ctx, "%u", nargs);
	items[4] = "0";
	items[5] = idlc_printf(o->ctx, "0x%016" PRIx64 "ULL", rt->sig_hash);
	items[6] = rt->kind == IDLC_RT_SKIP ? "-1" : idlc_printf(o->ctx, "%" PRId32, rt->waittime);
	items[7] = idlc_printf(o->ctx, "%" PRIu32, rt->req_fixed);
	items[8] = idlc_printf(o->ctx, "%" PRIu32, rt->req_max);
	items[9] = idlc_printf(o->ctx, "%" PRIu32, rt->rep_fixed);
	items[10] = idlc_printf(o->ctx, "%" PRIu32, rt->rep_max);
	items[11] =
		nargs == 0 ? "NULL" : idlc_printf(o->ctx, "%s_%s_args", o->m->subsystem, rt->name);
	for (unsigned i = 0; i < DESC_NELEM(items); i++)
		if (items[i] == NULL)
			items[i] = "0";
	emit(o, "{ ");
	emit_strings(o, items, DESC_NELEM(items), ", ", "", " },\n");
}

void
emit_descriptor(struct emit_out *o)
{
	const struct idlc_module *m = o->m;
	int32_t last = (int32_t)((uint32_t)m->base + (m->nroutines > 0 ? m->nroutines - 1 : 0));
	const struct idlc_routine *rt;

	emit(o, "/*\n");
	emit(o,
	     " * The descriptor table of subsystem %s (ids %" PRId32 " to %" PRId32
	     "), for the runtime and tools.\n",
	     m->subsystem, m->base, last);
	emit(o, " * It is weak: the client and the server stubs of one subsystem may share a "
		"program.\n");
	emit(o, " */\n");
	for (rt = m->routines; rt != NULL; rt = rt->next)
		if (rt->kind != IDLC_RT_SKIP && rt->args != NULL)
			desc_args(o, rt);
	if (m->nroutines > 0) {
		emit(o, "static const struct idl_routine_desc %s_routines[] = {\n", m->subsystem);
		emit_indent(o, 1);
		for (rt = m->routines; rt != NULL; rt = rt->next)
			desc_routine(o, rt);
		emit_indent(o, -1);
		emit(o, "};\n\n");
	}
	emit(o, "__attribute__((weak)) const struct idl_subsystem %s_subsystem = {\n",
	     m->subsystem);
	emit_indent(o, 1);
	emit(o, "IDL_SUBSYSTEM_MAGIC, %u, \"%s\", %" PRId32 ", %" PRIu32 ", %" PRIu32 ", 0, ",
	     m->nroutines, m->subsystem, m->base, m->max_request, m->max_reply);
	if (m->nroutines > 0)
		emit(o, "%s_routines,\n", m->subsystem);
	else
		emit(o, "NULL,\n");
	emit_indent(o, -1);
	emit(o, "};\n");
}
