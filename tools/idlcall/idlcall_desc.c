/*
 * idlcall_desc.c - a .defs file loaded at run time: the compiler's front end (libidlc.a)
 * parses and checks it, and its model becomes a descriptor table in memory.
 *
 * The table must be the one idlc emits into generated code, field for field, or idlcall's
 * signature hashes would not match a compiled server's and its messages would differ from
 * the compiled stubs'. So every fact is read through the functions the emitter itself uses
 * (idlc_arg_desc_facts(), the emit_* questions about C types), and the hashes are the
 * compiler's; tests/dynamic compares the result with a compiled descriptor, field by field.
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
	uint32_t kind, wire_type, elem_size, count, flags, disposition;

	idlc_arg_desc_facts(a, &kind, &wire_type, &elem_size, &count);
	emit_desc_arg_flags(a, &flags, &disposition);
	d->name = a->name;
	d->ctype = desc_ctype(a);
	d->dir = (uint8_t)a->dir;
	d->kind = (uint8_t)kind;
	d->wire_type = (uint8_t)wire_type;
	d->disposition = (uint8_t)disposition;
	d->flags = flags;
	d->elem_size = elem_size;
	d->count = count;
	d->req_offset = a->req_offset;
	d->rep_offset = a->rep_offset;
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
	if (ifc->routines == NULL || ifc->args == NULL) {
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
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next, k++)
			desc_arg(a, &ifc->args[ai++]);
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
