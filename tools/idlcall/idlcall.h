/*
 * idlcall.h - what the files of idlcall share: the interface loaded from a .defs file
 * (idlcall_desc.c), the reading of arguments from text (idlcall_args.c), a library of
 * implementation functions (idlcall_lib.c) and the serving of an interface from it
 * (idlcall_serve.c).
 *
 * The first three are a small library, libidlcall.a, that idlbench links too: its --call
 * arguments are read exactly as idlcall reads them, and its --impl is loaded as
 * `idlcall --serve` loads one.
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
/* The same, for a caller that generates the interface's code too: `types` (not NULL) is the
 * name of its -types output, which the generated headers then include. */
int idlcall_load_types(const char *path, const char *const *cpp_args, size_t ncpp_args,
		       const char *types, struct idlcall_iface *ifc);
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
 * chars and strings as the text itself or @FILE for a file's text, arrays and struct[N]
 * records as [1,2,3], bytes and other records (GNU struct {}) as hex digits ("0x"
 * optional) or @FILE for a file's contents. On error writes a message naming
 * the argument into err (errlen bytes) and returns -1.
 */
int idlcall_parse_arg(const struct idl_arg_desc *a, const char *text, void **data, uint32_t *count,
		      char *err, size_t errlen);

/* A shared library of implementation functions, and the name the dynamic linker knows it
 * by (the link map's, valid while it is loaded). */
struct idlcall_lib {
	void *handle;
	const char *name;
};

/* Loads `path` (a path, or a name the dynamic linker searches for) with RTLD_NOW, and
 * RTLD_GLOBAL when `global` (so that code loaded after it may call its functions), else
 * RTLD_LOCAL. Returns 0, or -1 with dlerror()'s reason in err. */
int idlcall_lib_open(const char *path, int global, struct idlcall_lib *l, char *err, size_t errlen);
/* An idl_resolver_fn: the function `symbol` when the library itself defines it (one that
 * only a library it depends on defines counts as missing), else NULL. arg is the library. */
void *idlcall_lib_resolve(void *arg, const char *symbol);
void idlcall_lib_close(struct idlcall_lib *l);

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
