/*
 * emit_header.c - the client header <sub>.h, the server header (-sheader, and -iheader,
 * which idlkit writes the same way), and the message id list (-list, GNU MIG's format).
 */
#include <config.h>

#include <inttypes.h>

#include "emit.h"

static const char *
hdr_kind_name(const struct idlc_routine *rt)
{
	return rt->kind == IDLC_RT_SIMPLEROUTINE ? "SimpleRoutine" : "Routine";
}

void
emit_imports(struct emit_out *o, enum emit_side side)
{
	bool any = false;

	for (const struct idlc_import *im = o->m->imports; im != NULL; im = im->next) {
		bool wanted = im->kind == IDLC_IMPORT ||
			      (side == EMIT_USER && im->kind == IDLC_UIMPORT) ||
			      (side == EMIT_SERVER && im->kind == IDLC_SIMPORT);

		if (!wanted)
			continue;
		if (!any)
			emit(o, "\n");
		any = true;
		emit(o, "#include %s\n", im->file);
	}
	/* The -types output comes after the imports: its typedefs may use their C types. */
	if (idlc_output_path(o->ctx, IDLC_OUT_TYPES) != NULL) {
		if (!any)
			emit(o, "\n");
		emit_types_include(o);
	}
}

void
emit_prototypes(struct emit_out *o, enum emit_side side)
{
	for (const struct idlc_routine *rt = o->m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind == IDLC_RT_SKIP)
			continue;
		emit(o, "\n/* %s %s */\n", hdr_kind_name(rt), rt->name);
		emit(o, "kern_return_t %s(",
		     side == EMIT_USER ? emit_user_name(o, rt) : emit_server_name(o, rt));
		emit_list(o, rt->args, emit_param_pred, emit_param_item, &side, ", ", "void",
			  ");\n");
		if (side == EMIT_SERVER && emit_has_send_reply(rt)) {
			emit(o, "/* Sends the reply the routine deferred by returning "
				"MIG_NO_REPLY. */\n");
			emit_send_reply_decl(o, rt, ");\n");
		}
	}
}

static void
hdr_open(struct emit_out *o, const char *guard)
{
	emit_banner(o);
	emit(o, "#ifndef %s\n", guard);
	emit(o, "#define %s\n", guard);
	emit(o, "\n#include <idl/idl.h>\n");
	if (o->m->needs_ool)
		emit(o, "#include <idl/idl_ool.h>\n");
}

static void
hdr_extern_c(struct emit_out *o, bool open)
{
	emit(o, "\n#ifdef __cplusplus\n");
	emit(o, open ? "extern \"C\" {\n" : "}\n");
	emit(o, "#endif\n");
}

static void
hdr_close(struct emit_out *o, const char *guard)
{
	hdr_extern_c(o, false);
	emit(o, "\n#endif /* %s */\n", guard);
}

void
emit_header(struct emit_out *o)
{
	const struct idlc_module *m = o->m;
	const char *path = idlc_output_path(o->ctx, IDLC_OUT_HEADER);
	const char *guard = emit_guard(o, path != NULL ? path : emit_header_include(o));

	hdr_open(o, guard);
	emit_imports(o, EMIT_USER);
	hdr_extern_c(o, true);
	emit(o, "\n/* The descriptor table of subsystem %s. */\n", m->subsystem);
	emit(o, "extern const struct idl_subsystem %s_subsystem;\n", m->subsystem);
	emit(o, "\n/* Message ids %" PRId32 " and up: routines, skips included. */\n", m->base);
	emit(o, "#define %s_MSG_COUNT %u\n", m->subsystem, m->nroutines);
	emit_prototypes(o, EMIT_USER);
	hdr_close(o, guard);
}

void
emit_sheader(struct emit_out *o)
{
	const struct idlc_module *m = o->m;
	const char *path = idlc_output_path(o->ctx, o->which);
	const char *demux = emit_demux_name(o);
	const char *guard;

	if (path == NULL)
		path = idlc_printf(o->ctx, "%s_server.h", m->subsystem);
	guard = emit_guard(o, path != NULL ? path : "server.h");
	hdr_open(o, guard);
	emit_imports(o, EMIT_SERVER);
	hdr_extern_c(o, true);
	emit(o, "\n/* The descriptor table of subsystem %s. */\n", m->subsystem);
	emit(o, "extern const struct idl_subsystem %s_subsystem;\n", m->subsystem);
	emit(o,
	     "\n/* Checks and unpacks a request of subsystem %s, calls its server routine and "
	     "fills\n",
	     m->subsystem);
	emit(o, " * the reply. Returns 0 (with MIG_BAD_ID in the reply) when the id is not "
		"the subsystem's. */\n");
	emit(o, "extern int %s(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP);\n", demux);
	emit(o, "/* The unpacker for the request, or NULL when its id is not the "
		"subsystem's. */\n");
	emit(o, "extern idl_routine_t %s_routine(const idl_msg_header_t *InHeadP);\n", demux);
	emit_prototypes(o, EMIT_SERVER);
	hdr_close(o, guard);
}

void
emit_msgids(struct emit_out *o)
{
	const struct idlc_module *m = o->m;

	/* One line per routine: subsystem, base, routine, number, request id, reply id (0 for
	 * a simpleroutine). No banner: tools read this file. */
	for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next) {
		uint32_t id = (uint32_t)m->base + rt->number;

		if (rt->kind == IDLC_RT_SKIP)
			continue;
		emit(o, "%s %" PRId32 " %s %" PRIu32 " %" PRIu32 " %" PRIu32 "\n", m->subsystem,
		     m->base, rt->name, rt->number, id,
		     rt->kind == IDLC_RT_ROUTINE ? id + IDL_REPLY_ID_OFFSET : 0);
	}
}
