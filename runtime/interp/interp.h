/*
 * interp.h - the interp room (runtime/interp/): what the files of the descriptor
 * interpreter share (interp_msg.c, interp_fmt.c, interp_desc.c) with the rooms above that
 * use it (trace/trace.c, dynamic/ffi_server.c): which arguments travel in which message,
 * and a small growable string for the printers. The interpreter uses core and ool only.
 */
#ifndef IDL_RUNTIME_INTERP_H
#define IDL_RUNTIME_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <idl/idl_dynamic.h>

#include "strbuf.h"

/* Whether argument `a` is carried in the request (reply = 0) or in the reply (reply = 1). */
static inline bool
idl__dyn_travels(const struct idl_arg_desc *a, int reply)
{
	if (reply)
		return a->dir == IDL_DIR_OUT || a->dir == IDL_DIR_INOUT;
	return a->dir == IDL_DIR_IN || a->dir == IDL_DIR_INOUT;
}

static inline bool
idl__dyn_is_var(const struct idl_arg_desc *a)
{
	return a->kind == IDL_ARG_VAR_ARRAY || a->kind == IDL_ARG_CSTRING_VAR;
}

static inline bool
idl__dyn_is_string(const struct idl_arg_desc *a)
{
	return a->kind == IDL_ARG_CSTRING_FIXED || a->kind == IDL_ARG_CSTRING_VAR;
}

/* Whether an argument travels with an element count: a variable array, or out-of-line data
 * or an array of ports of no fixed size. */
static inline bool
idl__dyn_counted(const struct idl_arg_desc *a)
{
	return a->kind == IDL_ARG_VAR_ARRAY ||
	       (a->kind == IDL_ARG_OOL && !(a->flags & IDL_ARGF_FIXED));
}

/* The argument whose count argument i travels with: i itself, or for `samecount`
 * (IDL_ARGF_SAMECOUNT) the nearest argument before it without the flag, which
 * idl__dyn_supported() checked is counted and travels the same way. */
static inline unsigned
idl__dyn_leader(const struct idl_routine_desc *rt, unsigned i)
{
	unsigned j = i;

	if (!(rt->args[i].flags & IDL_ARGF_SAMECOUNT))
		return i;
	while (j > 0 && (rt->args[--j].flags & IDL_ARGF_SAMECOUNT))
		continue;
	return j;
}

/* The offset of an argument in one direction's message (of its count, for a variable one). */
static inline uint32_t
idl__dyn_offset(const struct idl_arg_desc *a, int reply)
{
	return reply ? a->rep_offset : a->req_offset;
}

/* 0 when every argument of the routine is one the interpreter knows, else IDL_ENOTSUP (a
 * request port that is not a port, special arguments of a kind other than implicit) or
 * IDL_EINVAL (a descriptor that contradicts itself: offsets outside the fixed part, zero
 * element sizes, descriptors outside the fixed part or unaligned). */
int idl__dyn_supported(const struct idl_routine_desc *rt);

/* idl_msg_check() for a routine that idl__dyn_supported() accepted (the dynamic server
 * checks its descriptor once, not on every request). */
int idl__dyn_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len,
		   int reply, struct idl_arg_span *spans);

/* Appends the description idl_msg_describe() gives of a message. */
void idl__dyn_describe(struct strbuf *sb, const struct idl_routine_desc *rt,
		       const idl_msg_header_t *msg, size_t len, unsigned flags);

#endif /* IDL_RUNTIME_INTERP_H */
