/*
 * idlcall.h - what the files of idlcall share: the interface loaded from a .defs file
 * (idlcall_desc.c), the reading of arguments from text (idlcall_args.c) and the serving of
 * an interface from a shared library (idlcall_serve.c).
 */
#ifndef IDLCALL_H
#define IDLCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>

struct idlc_ctx;

/* A .defs file checked by the compiler's library, and its descriptor table: the one idlc
 * writes into generated code. The table's rows and strings live in the compiler's arena: the
 * interface owns the compiler context until idlcall_unload(). */
struct idlcall_iface {
	struct idlc_ctx *ctx;
	struct idl_subsystem ss;
	const char *serverprefix; /* -prefix and serverprefix, as the server's names have it */
};

/* Loads `path` through cpp with the given extra arguments (-I, -D, -U ...), checks it and
 * builds its descriptor. Diagnostics go to standard error. Returns 0, or 1 after errors. */
int idlcall_load(const char *path, const char *const *cpp_args, size_t ncpp_args,
		 struct idlcall_iface *ifc);
void idlcall_unload(struct idlcall_iface *ifc);

/* The routine called `name`, or NULL. */
const struct idl_routine_desc *idlcall_find(const struct idl_subsystem *ss, const char *name);

/* One line describing a routine's signature for --list and usage messages, e.g.
 * "add(in a: int32, in b: int32, out sum: int32)". A malloc()ed string, or NULL. */
char *idlcall_signature(const struct idl_routine_desc *rt);

/*
 * Reads the value of argument `a` from `text` into wire form: *data (malloc()ed, the
 * caller frees it) and *count, ready for idl_msg_pack(). Integers in C notation (decimal,
 * 0x hex, 0 octal, with a sign), booleans as true/false/1/0, reals as strtod reads them,
 * chars and strings as the text itself, arrays as [1,2,3], bytes and records as hex
 * digits ("0x" optional) or @FILE for a file's contents. On error writes a message naming
 * the argument into err (errlen bytes) and returns -1.
 */
int idlcall_parse_arg(const struct idl_arg_desc *a, const char *text, void **data, uint32_t *count,
		      char *err, size_t errlen);

/*
 * Serves the interface on `address` with the functions of the shared library `lib` (a path,
 * or a name the dynamic linker searches for): each routine's is <prefix><routine>, found in
 * that library alone; prefix NULL is the server prefix the generated stubs would call
 * (ifc->serverprefix). Serves until SIGINT or SIGTERM, then stops and removes what it
 * created. Returns 0 once stopped, or 1 after printing why it could not serve (a library
 * that does not load, a routine whose function it lacks, an address it cannot listen on).
 */
int idlcall_serve(const struct idlcall_iface *ifc, const char *address, const char *lib,
		  const char *prefix);

#endif /* IDLCALL_H */
