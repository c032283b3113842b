/*
 * emit_desc.c - the descriptor table (struct idl_subsystem, <idl/idl_subsystem.h>) as C text.
 *
 * It prints the table the middle end built in memory (desc.c): nothing here decides what a
 * row says. The same text goes into <sub>User.c and <sub>Server.c as a weak definition, so a
 * program may link both: the linker keeps one, and either is right because they are
 * identical.
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
	{ IDL_ARGF_SAMECOUNT, "IDL_ARGF_SAMECOUNT" },
	{ IDL_ARGF_OPAQUE, "IDL_ARGF_OPAQUE" },
};

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

static void
desc_args(struct emit_out *o, const struct idl_routine_desc *rt)
{
	emit(o, "static const struct idl_arg_desc %s_%s_args[] = {\n", o->m->subsystem, rt->name);
	emit_indent(o, 1);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		const char *items[11];

		items[0] = idlc_printf(o->ctx, "\"%s\"", a->name);
		items[1] = idlc_printf(o->ctx, "\"%s\"", a->ctype);
		items[2] = desc_word(o, desc_dirs, DESC_NELEM(desc_dirs), a->dir);
		items[3] = desc_word(o, desc_kinds, DESC_NELEM(desc_kinds), a->kind);
		items[4] = desc_word(o, desc_wire, DESC_NELEM(desc_wire), a->wire_type);
		items[5] = idlc_printf(o->ctx, "%u", (unsigned)a->disposition);
		items[6] = desc_flags_text(o, a->flags);
		items[7] = idlc_printf(o->ctx, "%" PRIu32, a->elem_size);
		items[8] = idlc_printf(o->ctx, "%" PRIu32, a->count);
		items[9] = desc_offset(o, a->req_offset);
		items[10] = desc_offset(o, a->rep_offset);
		for (unsigned k = 0; k < DESC_NELEM(items); k++)
			if (items[k] == NULL)
				items[k] = "0";
		emit(o, "{ ");
		emit_strings(o, items, DESC_NELEM(items), ", ", "", " },\n");
	}
	emit_indent(o, -1);
	emit(o, "};\n\n");
}

static void
desc_routine(struct emit_out *o, const struct idl_routine_desc *rt)
{
	const char *items[12];

	items[0] = rt->name != NULL ? idlc_printf(o->ctx, "\"%s\"", rt->name) : "NULL";
	items[1] = idlc_printf(o->ctx, "%" PRIu32, rt->number);
	items[2] = desc_word(o, desc_rtkinds, DESC_NELEM(desc_rtkinds), rt->kind);
	items[3] = idlc_printf(o->ctx, "%u", (unsigned)rt->nargs);
	items[4] = idlc_printf(o->ctx, "%u", (unsigned)rt->reserved);
	items[5] = idlc_printf(o->ctx, "0x%016" PRIx64 "ULL", rt->sig_hash);
	items[6] = idlc_printf(o->ctx, "%" PRId32, rt->waittime);
	items[7] = idlc_printf(o->ctx, "%" PRIu32, rt->req_fixed);
	items[8] = idlc_printf(o->ctx, "%" PRIu32, rt->req_max);
	items[9] = idlc_printf(o->ctx, "%" PRIu32, rt->rep_fixed);
	items[10] = idlc_printf(o->ctx, "%" PRIu32, rt->rep_max);
	items[11] = rt->nargs == 0 ? "NULL"
				   : idlc_printf(o->ctx, "%s_%s_args", o->m->subsystem, rt->name);
	for (unsigned i = 0; i < DESC_NELEM(items); i++)
		if (items[i] == NULL)
			items[i] = "0";
	emit(o, "{ ");
	emit_strings(o, items, DESC_NELEM(items), ", ", "", " },\n");
}

/* Prints the table the middle end built (desc.c): the one idlcall builds too. */
void
emit_descriptor(struct emit_out *o)
{
	const struct idl_subsystem *ss = o->m->desc;
	int32_t last = (int32_t)((uint32_t)ss->base + (ss->nroutines > 0 ? ss->nroutines - 1 : 0));

	emit(o, "/*\n");
	emit(o,
	     " * The descriptor table of subsystem %s (ids %" PRId32 " to %" PRId32
	     "), for the runtime and tools.\n",
	     ss->name, ss->base, last);
	emit(o, " * It is weak: the client and the server stubs of one subsystem may share a "
		"program.\n");
	emit(o, " */\n");
	for (uint32_t n = 0; n < ss->nroutines; n++)
		if (ss->routines[n].nargs > 0)
			desc_args(o, &ss->routines[n]);
	if (ss->nroutines > 0) {
		emit(o, "static const struct idl_routine_desc %s_routines[] = {\n", ss->name);
		emit_indent(o, 1);
		for (uint32_t n = 0; n < ss->nroutines; n++)
			desc_routine(o, &ss->routines[n]);
		emit_indent(o, -1);
		emit(o, "};\n\n");
	}
	emit(o, "__attribute__((weak)) const struct idl_subsystem %s_subsystem = {\n", ss->name);
	emit_indent(o, 1);
	emit(o,
	     "IDL_SUBSYSTEM_MAGIC, %" PRIu32 ", \"%s\", %" PRId32 ", %" PRIu32 ", %" PRIu32
	     ", %" PRIu32 ", ",
	     ss->nroutines, ss->name, ss->base, ss->max_request, ss->max_reply, ss->reserved);
	if (ss->nroutines > 0)
		emit(o, "%s_routines,\n", ss->name);
	else
		emit(o, "NULL,\n");
	emit_indent(o, -1);
	emit(o, "};\n");
}
