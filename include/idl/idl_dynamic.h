/*
 * idl_dynamic.h - messages from descriptors: checking, packing and printing the arguments of
 * any routine, and a server that serves an interface without generated code.
 *
 * Compiled stubs are straight-line code with compile-time offsets; this header does the same
 * work by interpreting the descriptor table (<idl/idl_subsystem.h>), so that tools (idlcall,
 * tracing) and the dynamic server need no generated code. The rules are those of
 * docs/generated-code.md and the results are byte for byte those of the compiled stubs: the
 * same checks in the same order, the same error codes, the same reply bytes.
 *
 * Out-of-line data, ports and arrays of ports travel as descriptors (<idl/idl_ool.h>,
 * docs/generated-code.md "Descriptors"). The table says where each lies and what it holds,
 * and in each argument's flags and disposition (IDL_ARGF_*) what the stubs do with it:
 * dealloc, polymorphic ports, a port's disposition, fixed sizes, records, the special server
 * arguments. A compiled table (<sub>_subsystem) and one idlcall builds from the .defs file
 * are the same, so either serves and marshals exactly as the stubs do.
 */
#ifndef IDL_DYNAMIC_H
#define IDL_DYNAMIC_H

#include <stddef.h>
#include <stdint.h>

#include <idl/idl_msg.h>
#include <idl/idl_server.h>
#include <idl/idl_subsystem.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Where one argument lies in a message that idl_msg_check() accepted: the offset of its
 * first element (for a variable array or string, of its data, not of its count) and its
 * element count (1 for a scalar, the bound for a fixed array or c_string[N], the count the
 * message carries for a variable one). Arguments not in that direction's message have
 * off = IDL_NO_OFFSET and count = 0.
 */
struct idl_arg_span {
	uint32_t off;
	uint32_t count;
};

/*
 * Checks a message of routine `rt` that is `len` bytes long (len must equal msg->size; the
 * header itself is the runtime's to check). With reply = 0 it is a request checked as the
 * generated server stub checks it, in the same order (size, fixed c_strings, then each
 * variable argument's count, bytes and NUL, then the exact end); with reply = 1 it is a
 * reply checked as the generated client stub checks it. Returns 0, or -1 when the message
 * fails (the stubs answer MIG_BAD_ARGUMENTS, or return MIG_TYPE_ERROR, respectively), or
 * IDL_ENOTSUP for a routine this module cannot interpret. `spans`, when not NULL, has
 * rt->nargs entries and is filled on success.
 *
 * Descriptors are checked after the size, as the stubs check them: IDL_MSGF_DESC and ndesc
 * exactly, then each descriptor's type, its size (whole elements; exactly a fixed size; at
 * most the bound of a bounded array of ports) and, for a receiver told the disposition
 * (IDL_ARGF_POLY_OUT), that it is one. A descriptor argument's span is the offset of its
 * descriptor and its element count (1 for a port, the ports of an array, bytes / elem_size
 * of data). Last, arrays that share one count (IDL_ARGF_SAMECOUNT) must carry the same
 * count.
 */
int idl_msg_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len,
		  int reply, struct idl_arg_span *spans);

/*
 * One argument's value for idl_msg_pack(), in wire form (native order): `count` elements of
 * the argument's elem_size bytes at `data`. A scalar has count 1; a fixed array or fixed
 * c_string has at most its count (the rest is zero-filled); a variable array has its count;
 * a variable c_string counts its characters and its NUL. Out-of-line data is `count`
 * elements at `data`, a port is one idl_port_t at `data`, an array of ports `count` of them:
 * the message's descriptor points at them (no copy), as a compiled stub's does.
 */
struct idl_arg_value {
	const void *data;
	uint32_t count;
};

/*
 * Builds the message of one direction of routine `rt` into `buf` (cap bytes, 8-aligned):
 * reply = 0 the request (in and inout arguments), reply = 1 the reply (out and inout), from
 * `vals` (rt->nargs entries, indexed like rt->args; entries of arguments not in the message
 * are ignored). The header is zeroed but for `size`; padding is zero. Refuses, as the
 * client stubs do, a count above its bound and a string without its NUL inside its bound
 * (MIG_ARRAY_TOO_LARGE). Returns the message size, or a negative error: also IDL_EMSGSIZE
 * when cap is too small, IDL_ENOTSUP for a routine this module cannot interpret.
 *
 * A port's disposition and IDL_DESCF_DEALLOC come from the table (a `dealloc[]` argument is
 * sent without it, a polymorphic port with the table's disposition); a message with
 * descriptors has IDL_MSGF_DESC and ndesc set. Refuses, as the client stubs do, more ports
 * than a bounded array's bound and data whose byte size does not fit 32 bits
 * (MIG_ARRAY_TOO_LARGE), a fixed out-of-line array of another count, and arrays that share
 * one count (IDL_ARGF_SAMECOUNT) given counts that differ (IDL_EINVAL). Once
 * idl_call() or idl_send() has the message, what it marks dealloc (IDL_ARGF_DEALLOC, MOVE
 * dispositions) is the runtime's to release.
 */
int idl_msg_pack(const struct idl_routine_desc *rt, int reply, const struct idl_arg_value *vals,
		 idl_msg_header_t *buf, size_t cap);

/* How idl_msg_describe() writes. */
#define IDL_DESCRIBE_REPLY 0x01 /* the message is a reply: describe out and inout arguments */
#define IDL_DESCRIBE_LINES 0x02 /* "name = value" lines, each ending in '\n' */
#define IDL_DESCRIBE_JSON 0x04 /* JSON members, "\"name\": value", joined by ", " (no braces) */
#define IDL_DESCRIBE_BRIEF 0x08 /* arrays and strings cut short ("...") for trace lines */

/*
 * The arguments of a message as text: by default "name=value" pairs separated by spaces;
 * integers in decimal, booleans as true/false, reals in shortest round-trip form, chars and
 * c_strings as quoted strings with C escapes (JSON escapes with IDL_DESCRIBE_JSON), bytes
 * and records as hex, other arrays as [1,2,3]. Out-of-line data is shown as its
 * elements would be inline, chars as hex (IDL_DESCRIBE_BRIEF: "<ool N bytes: 0a0b...>", without the
 * bytes when the descriptor is dealloc, as its memory may be gone once sent), a port as
 * "<port ADDRESS>" (idl_port_address(), "<port null>" for none; IDL_DESCRIBE_BRIEF:
 * "<port>", without looking at it), an array of ports as a list of those. A message that
 * fails idl_msg_check() is described as "<malformed>". Returns a malloc()ed string the
 * caller frees, or NULL when out of memory.
 */
char *idl_msg_describe(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len,
		       unsigned flags);

/*
 * The dynamic server.
 *
 * A dynamic interface is a descriptor and one implementation function per routine, found by
 * name: the server prefix (a .defs file's `serverprefix`, e.g. "S_bench_") followed by the
 * routine's name, looked up by a resolver, or by dlsym(RTLD_DEFAULT, name) when the resolver
 * is NULL (the program must then export its symbols: link it with -rdynamic). The functions
 * have the signatures the generated server stubs call (docs/generated-code.md, "C
 * signatures"); they are called through libffi with types derived from each argument's C
 * type and wire type.
 *
 * Requests are checked exactly as the generated stubs check them and answered with the same
 * bytes. Records (IDL_ARGF_RECORD) passed by value are given to libffi as structs of their
 * wire elements, which is how the C ABI passes them: struct[N] of T of integers or of reals
 * (in floating-point registers) alike. A GNU struct {} is opaque bytes on the wire and is
 * passed as a struct of integer words, so one with floating-point members must be served by
 * compiled stubs.
 *
 * Descriptors are served as the stubs serve them: out-of-line data in is a pointer and a
 * count (none for a fixed size), a port an idl_port_t, an array of ports a pointer and a
 * count, with <arg>Poly and <arg>SCopy where the flags say; out ones are pointers to the
 * routine's value, Poly, count and Dealloc. The ownership rule is MIG's and the server
 * core's: what a request carries is the routine's when it returns KERN_SUCCESS or
 * MIG_NO_REPLY, else the runtime releases it.
 */
typedef struct idl_dynamic idl_dynamic_t;

/* Finds the function called `symbol`; returns NULL when there is none. */
typedef void *(*idl_resolver_fn)(void *arg, const char *symbol);

/*
 * Prepares a dynamic interface for `ss` (which must outlive it): resolves every routine's
 * function and prepares its call. Errors: IDL_EINVAL (a bad descriptor, or a routine whose
 * function the resolver does not find: idl_errdetail() names it), IDL_ENOMEM. msgseqno and
 * reply ports are given as the stubs give them (IDL_ARGF_SEQNO, IDL_ARGF_REPLY); routines
 * with an IDL_ARGF_OPAQUE argument (translated types, tokens) are not resolved and their
 * requests get IDL_ENOTSUP.
 */
int idl_dynamic_create(const struct idl_subsystem *ss, const char *prefix, idl_resolver_fn resolve,
		       void *arg, idl_dynamic_t **dp);

/* The demux of a dynamic interface, with the contract of a generated one (idl_demux_fn). */
int idl_dynamic_demux(idl_dynamic_t *d, idl_msg_header_t *in, idl_msg_header_t *out);

/* The descriptor it serves. */
const struct idl_subsystem *idl_dynamic_subsystem(const idl_dynamic_t *d);

/* 1 when routine `number` (0-based, as in ss->routines) is served by calling its function,
 * 0 when its requests are answered IDL_ENOTSUP or MIG_BAD_ID (arguments only compiled stubs
 * can handle, a skip, a number out of range). */
int idl_dynamic_served(const idl_dynamic_t *d, uint32_t number);

/*
 * Serves a dynamic interface on `srv`, as idl_server_add_subsystem() serves a compiled one
 * (through idl_server_add_subsystem_ctx(), the interface being the context). The interface
 * must outlive the server; any number may be served.
 */
int idl_server_add_dynamic(idl_server_t *srv, idl_dynamic_t *d);

/* Frees a dynamic interface; call it after idl_server_destroy() of every server serving it. */
void idl_dynamic_destroy(idl_dynamic_t *d);

#ifdef __cplusplus
}
#endif
#endif /* IDL_DYNAMIC_H */
