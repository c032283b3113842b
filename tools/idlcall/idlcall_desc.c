/*
 * idlcall_desc.c - a .defs file loaded at run time: the compiler's library (libidlc.a) parses
 * and checks it, and its middle end builds the descriptor table in memory.
 *
 * The table must be the one idlc prints into generated code, row for row, or idlcall's
 * signature hashes would not match a compiled server's and its messages would differ from
 * the compiled stubs'. It is: both are the one table idlc_check() builds (idlc/desc.c), which
 * idlc_subsystem() hands out here and idlc's emitter prints there; tests/dynamic compares the
 * result with a compiled descriptor, field by field.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int
idlcall_load(const char *path, const char *const *cpp_args, size_t ncpp_args,
	     struct idlcall_iface *ifc)
{
	return idlcall_load_types(path, cpp_args, ncpp_args, NULL, ifc);
}

int
idlcall_load_types(const char *path, const char *const *cpp_args, size_t ncpp_args,
		   const char *types, struct idlcall_iface *ifc)
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
	opts.out[IDLC_OUT_TYPES] = types;
	opts.quiet = true; /* warnings are for whoever compiles the interface */
	if (env != NULL && env[0] != '\0')
		opts.cpp = env;
	if ((ifc->ctx = idlc_create(&opts, desc_diag, NULL)) == NULL) {
		fputs("idlcall: out of memory\n", stderr);
		return 1;
	}
	/* The checks run after syntax errors too, so that every error is reported at once. */
	idlc_parse_file(ifc->ctx, path);
	if (idlc_check(ifc->ctx) != 0)
		return 1;
	m = idlc_module(ifc->ctx);
	if (m->subsystem == NULL) {
		fprintf(stderr, "idlcall: %s: no subsystem statement\n", path);
		return 1;
	}
	prefix = idlc_printf(ifc->ctx, "%s", m->serverprefix != NULL ? m->serverprefix : "");
	ifc->serverprefix = prefix != NULL ? prefix : "";
	ifc->ss = *idlc_subsystem(ifc->ctx);
	return 0;
}

void
idlcall_unload(struct idlcall_iface *ifc)
{
	if (ifc->ctx != NULL)
		idlc_destroy(ifc->ctx);
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
