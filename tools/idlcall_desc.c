/*
 * idlcall_desc.c - a .defs file loaded at run time: the compiler's front end (libidlc.a)
 * parses and checks it, and its model becomes a descriptor table in memory.
 *
 * The table must be the one idlc emits into generated code, field for field, or idlcall's
 * signature hashes would not match a compiled server's and its messages would differ from
 * the compiled stubs'. So every fact is read through the functions the emitter itself uses
 * (idlc_arg_desc_facts(), the emit_* questions about C types), and the hashes are the
 * compiler's; tests/dynamic compares the result with a compiled descriptor. Beside the table
 * go the traits (<idl/idl_dynamic.h>): what the stubs do that the table does not say.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "idlc.h"
#include "idlcall.h"

#ifndef IDLC_PKGINCLUDEDIR
#define IDLC_PKGINCLUDEDIR NULL
#endif

static void
desc_diag(void *data, const char *line)
{
	fputs(line, stderr);
}

/* The C type the descriptor names for one element, as emit_desc.c's desc_ctype(). */
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
desc_arg(const struct idlc_arg *a, struct idl_arg_desc *d)
{
	uint32_t kind, wire_type, elem_size, count;

	idlc_arg_desc_facts(a, &kind, &wire_type, &elem_size, &count);
	d->name = a->name;
	d->ctype = desc_ctype(a);
	d->dir = (uint8_t)a->dir;
	d->kind = (uint8_t)kind;
	d->wire_type = (uint8_t)wire_type;
	d->flags = 0;
	if (kind != IDL_ARG_IMPLICIT && kind != IDL_ARG_PORT && a->rtype->is_signed)
		d->flags |= IDL_ARGF_SIGNED;
#ifdef IDL_ARGF_RECORD
	if (emit_is_record(a))
		d->flags |= IDL_ARGF_RECORD;
#endif
	d->elem_size = elem_size;
	d->count = count;
	d->req_offset = a->req_offset;
	d->rep_offset = a->rep_offset;
}

/* MIG's number for the disposition a sender names (idlc/emit_ool.c's ool_disposition()). */
static uint16_t
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
	default:
		return 19; /* COPY_SEND */
	}
}

/* What the generated stubs do with an argument beyond what the table says (struct
 * idl_arg_traits), from the same facts and predicates the emitter uses. */
static void
desc_traits(const struct idlc_arg *a, struct idl_arg_traits *t)
{
	const struct idlc_type *ty = a->rtype;

	t->disposition = 0;
	t->flags = 0;
	if (a->dir_written == IDLC_DIR_MSGSEQNO)
		t->flags |= IDL_ARGT_SEQNO;
	if (emit_is_reply_handle(a) && emit_is_param(a, EMIT_SERVER))
		t->flags |= IDL_ARGT_REPLY;
	if (emit_is_token(a) && emit_is_param(a, EMIT_SERVER))
		t->flags |= IDL_ARGT_OPAQUE;
	if (ty == NULL)
		return;
	if ((ty->intran != NULL || ty->outtran != NULL || ty->destructor != NULL) &&
	    emit_is_param(a, EMIT_SERVER))
		t->flags |= IDL_ARGT_OPAQUE;
	if (ty->arg_kind == IDL_ARG_PORT || ty->wire_type == IDL_WT_PORT) {
		t->disposition = desc_disposition(ty->port_ipc);
		if (ty->poly_in)
			t->flags |= IDL_ARGT_POLY_IN;
		if (ty->poly_out)
			t->flags |= IDL_ARGT_POLY_OUT;
	}
	if (ty->arg_kind == IDL_ARG_OOL) {
		if (ty->ool_fixed)
			t->flags |= IDL_ARGT_FIXED;
		if (ty->ool_inline)
			t->flags |= IDL_ARGT_INLINE;
	}
	if (a->desc_flags & IDLC_AF_DEALLOC)
		t->flags |= IDL_ARGT_DEALLOC;
	if (a->desc_flags & IDLC_AF_DEALLOC_RT)
		t->flags |= IDL_ARGT_DEALLOC_PARAM;
	if (a->flags & IDLC_AF_SERVERCOPY)
		t->flags |= IDL_ARGT_SERVERCOPY;
}

/* Builds the table from a checked module. */
static int
desc_build(const struct idlc_module *m, struct idlcall_iface *ifc)
{
	const struct idlc_routine *rt;
	size_t nargs = 0, ai = 0;
	uint32_t n = 0;

	for (rt = m->routines; rt != NULL; rt = rt->next)
		if (rt->kind != IDLC_RT_SKIP)
			nargs += rt->nargs;
	ifc->routines = calloc(m->nroutines + 1u, sizeof *ifc->routines);
	ifc->args = calloc(nargs + 1, sizeof *ifc->args);
	ifc->traits = calloc(nargs + 1, sizeof *ifc->traits);
	ifc->rtraits = calloc(m->nroutines + 1u, sizeof *ifc->rtraits);
	if (ifc->routines == NULL || ifc->args == NULL || ifc->traits == NULL ||
	    ifc->rtraits == NULL) {
		fputs("idlcall: out of memory\n", stderr);
		return 1;
	}
	for (rt = m->routines; rt != NULL && n < m->nroutines; rt = rt->next, n++) {
		struct idl_routine_desc *d = &ifc->routines[n];
		unsigned k = 0;

		d->number = rt->number;
		d->kind = (uint8_t)rt->kind;
		d->waittime = -1;
		if (rt->kind == IDLC_RT_SKIP)
			continue;
		if (rt->nargs > UINT8_MAX) {
			fprintf(stderr, "idlcall: %s: routine %s has more than %u arguments\n",
				m->input_name, rt->name, UINT8_MAX);
			return 1;
		}
		d->name = rt->name;
		d->sig_hash = rt->sig_hash;
		d->waittime = rt->waittime;
		d->req_fixed = rt->req_fixed;
		d->req_max = rt->req_max;
		d->rep_fixed = rt->rep_fixed;
		d->rep_max = rt->rep_max;
		d->args = rt->args != NULL ? &ifc->args[ai] : NULL;
		ifc->rtraits[n] = &ifc->traits[ai];
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next, k++) {
			desc_traits(a, &ifc->traits[ai]);
			desc_arg(a, &ifc->args[ai++]);
		}
		d->nargs = (uint8_t)k;
	}
	ifc->ss.magic = IDL_SUBSYSTEM_MAGIC;
	ifc->ss.nroutines = m->nroutines;
	ifc->ss.name = m->subsystem;
	ifc->ss.base = m->base;
	ifc->ss.max_request = m->max_request;
	ifc->ss.max_reply = m->max_reply;
	ifc->ss.routines = m->nroutines > 0 ? ifc->routines : NULL;
	return 0;
}

int
idlcall_load(const char *path, const char *const *cpp_args, size_t ncpp_args,
	     struct idlcall_iface *ifc)
{
	struct idlc_options opts;
	const struct idlc_module *m;
	const char *env = getenv("IDLC_CPP");
	const char *prefix;

	memset(ifc, 0, sizeof *ifc);
	memset(&opts, 0, sizeof opts);
	opts.cpp_args = cpp_args;
	opts.ncpp_args = ncpp_args;
	opts.include_dir = IDLC_PKGINCLUDEDIR;
	opts.quiet = true; /* warnings are for whoever compiles the interface */
	if (env != NULL && env[0] != '\0')
		opts.cpp = env;
	if ((ifc->ctx = idlc_create(&opts, desc_diag, NULL)) == NULL) {
		fputs("idlcall: out of memory\n", stderr);
		return 1;
	}
	if (idlc_parse_file(ifc->ctx, path) != 0 || idlc_check(ifc->ctx) != 0)
		return 1;
	m = idlc_module(ifc->ctx);
	if (m->subsystem == NULL) {
		fprintf(stderr, "idlcall: %s: no subsystem statement\n", path);
		return 1;
	}
	prefix = idlc_printf(ifc->ctx, "%s", m->serverprefix != NULL ? m->serverprefix : "");
	ifc->serverprefix = prefix != NULL ? prefix : "";
	return desc_build(m, ifc);
}

void
idlcall_unload(struct idlcall_iface *ifc)
{
	if (ifc->ctx != NULL)
		idlc_destroy(ifc->ctx);
	free(ifc->routines);
	free(ifc->args);
	free(ifc->traits);
	free(ifc->rtraits);
	memset(ifc, 0, sizeof *ifc);
}

const struct idl_routine_desc *
idlcall_find(const struct idl_subsystem *ss, const char *name)
{
	for (uint32_t n = 0; n < ss->nroutines; n++)
		if (ss->routines[n].name != NULL && strcmp(ss->routines[n].name, name) == 0)
			return &ss->routines[n];
	return NULL;
}

const struct idl_arg_traits *
idlcall_traits(const struct idlcall_iface *ifc, const struct idl_routine_desc *rt)
{
	if (ifc->rtraits == NULL || rt < ifc->routines || rt >= ifc->routines + ifc->ss.nroutines)
		return NULL;
	return ifc->rtraits[rt - ifc->routines];
}
