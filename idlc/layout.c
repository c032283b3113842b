/*
 * layout.c - wire offsets and message sizes (docs/generated-code.md, "Wire layout").
 *
 * A message is the 24-byte header, then one 16-byte descriptor (idl_desc_t) per out-of-line
 * or port argument of its direction in declaration order, then the fixed part: each other
 * fixed-size argument of its direction in declaration order at its natural alignment, and a
 * uint32_t count for each variable array or string (and for each `countinout` out array in
 * the request), padded to 8; then the variable part: each variable argument's data in
 * declaration order, each padded to 8. The request carries in and inout arguments, the
 * reply out and inout ones. Every size is computed in 64 bits and checked
 * against IDLC_MSG_LIMIT, so the generated code may do its own arithmetic in 32 bits
 * without overflow, and a receiver's bound checks cannot be defeated by a huge bound.
 */
#include <config.h>

#include <inttypes.h>
#include <stdint.h>

#include <idl/idl_msg.h>

#include "middle.h"

/* The largest message any routine may need. */
#define IDLC_MSG_LIMIT (64u * 1024u * 1024u)

static uint64_t
layout_round(uint64_t n, uint64_t align)
{
	return (n + align - 1) / align * align;
}

static bool
layout_is_pow2_align(uint32_t a)
{
	return a == 1 || a == 2 || a == 4 || a == 8;
}

/* Checks one travelling argument's wire facts; false (after an error) if they cannot be
 * laid out. */
static bool
layout_check_arg(struct idlc_ctx *ctx, const struct idlc_routine *rt, const struct idlc_arg *a)
{
	const struct idlc_type *t = a->rtype;

	switch (t->arg_kind) {
	case IDL_ARG_SCALAR:
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_CSTRING_FIXED:
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_VAR:
		break;
	case IDL_ARG_PORT:
		return true;
	case IDL_ARG_OOL:
		if (t->wire_type == IDL_WT_PORT)
			return true;
		if (t->elem_size == 0) {
			idlc_error(ctx, a->loc,
				   "argument '%s' of routine '%s' has no size on the wire", a->name,
				   rt->name);
			return false;
		}
		return true;
	default:
		idlc_error(ctx, a->loc, "argument '%s' of routine '%s' has no wire form", a->name,
			   rt->name);
		return false;
	}
	if (t->elem_size == 0) {
		idlc_error(ctx, a->loc, "argument '%s' of routine '%s' has no size on the wire",
			   a->name, rt->name);
		return false;
	}
	if (!layout_is_pow2_align(t->align) || t->elem_size % t->align != 0) {
		idlc_error(ctx, a->loc,
			   "argument '%s' of routine '%s': element size %" PRIu32
			   " does not suit alignment %" PRIu32,
			   a->name, rt->name, t->elem_size, t->align);
		return false;
	}
	if (t->arg_kind != IDL_ARG_SCALAR && t->wire_count == 0) {
		idlc_error(ctx, a->loc, "argument '%s' of routine '%s': an array needs a bound",
			   a->name, rt->name);
		return false;
	}
	return true;
}

/* Lays out one direction of a routine. Returns false after reporting an error. */
static bool
layout_message(struct idlc_ctx *ctx, struct idlc_routine *rt, bool reply)
{
	const char *what = reply ? "reply" : "request";
	uint64_t off = IDL_MSG_HEADER_SIZE;
	uint64_t var = 0;
	uint64_t fixed;
	uint32_t ndesc = 0;
	unsigned here = reply ? IDLC_AK_REPLY : IDLC_AK_REQUEST;

	/* Descriptors first, one per out-of-line or port argument, in declaration order. */
	for (struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		if (!idlc_is(a, here | IDLC_AK_DESC))
			continue;
		if (!layout_check_arg(ctx, rt, a))
			return false;
		if (reply)
			a->rep_offset = (uint32_t)off;
		else
			a->req_offset = (uint32_t)off;
		off += IDL_DESC_SIZE;
		ndesc++;
	}
	if (reply)
		rt->rep_ndesc = ndesc;
	else
		rt->req_ndesc = ndesc;
	for (struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		const struct idlc_type *t = a->rtype;
		uint64_t data;

		/* A countinout out array sends the caller's capacity: a count in the request. */
		if (!reply && idlc_is(a, IDLC_AK_COUNTINOUT)) {
			off = layout_round(off, 4);
			a->req_offset = (uint32_t)off;
			off += 4;
			continue;
		}
		if (!idlc_is(a, here) || (a->facts & IDLC_AK_DESC))
			continue;
		if (!layout_check_arg(ctx, rt, a))
			return false;
		data = (uint64_t)t->elem_size * (t->arg_kind == IDL_ARG_SCALAR ? 1 : t->wire_count);
		if (t->arg_kind == IDL_ARG_VAR_ARRAY || t->arg_kind == IDL_ARG_CSTRING_VAR) {
			off = layout_round(off, 4);
			if (reply)
				a->rep_offset = (uint32_t)off;
			else
				a->req_offset = (uint32_t)off;
			off += 4;
			var += layout_round(data, IDL_MSG_ALIGN);
		} else {
			off = layout_round(off, t->align);
			if (reply)
				a->rep_offset = (uint32_t)off;
			else
				a->req_offset = (uint32_t)off;
			off += data;
		}
		if (off + var > IDLC_MSG_LIMIT) {
			idlc_error(ctx, a->loc,
				   "routine '%s': its %s would exceed the message limit of %u "
				   "bytes (argument '%s')",
				   rt->name, what, IDLC_MSG_LIMIT, a->name);
			return false;
		}
	}
	fixed = layout_round(off, IDL_MSG_ALIGN);
	if (fixed + var > IDLC_MSG_LIMIT) {
		idlc_error(ctx, rt->loc,
			   "routine '%s': its %s would exceed the message limit of %u bytes",
			   rt->name, what, IDLC_MSG_LIMIT);
		return false;
	}
	if (reply) {
		rt->rep_fixed = (uint32_t)fixed;
		rt->rep_max = (uint32_t)(fixed + var);
	} else {
		rt->req_fixed = (uint32_t)fixed;
		rt->req_max = (uint32_t)(fixed + var);
	}
	return true;
}

int
idlc_layout(struct idlc_ctx *ctx, struct idlc_module *m)
{
	m->max_request = IDL_MSG_HEADER_SIZE;
	m->max_reply = IDL_MSG_HEADER_SIZE;
	for (struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next) {
		rt->req_fixed = rt->req_max = 0;
		rt->rep_fixed = rt->rep_max = 0;
		rt->req_ndesc = rt->rep_ndesc = 0;
		for (struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
			a->req_offset = IDL_NO_OFFSET;
			a->rep_offset = IDL_NO_OFFSET;
		}
		if (rt->kind == IDLC_RT_SKIP)
			continue;
		if (!layout_message(ctx, rt, false))
			continue;
		/* A simpleroutine never gets a reply, so it has no reply layout. */
		if (rt->kind == IDLC_RT_ROUTINE && !layout_message(ctx, rt, true))
			continue;
		if (rt->req_max > m->max_request)
			m->max_request = rt->req_max;
		if (rt->rep_max > m->max_reply)
			m->max_reply = rt->rep_max;
	}
	return (int)idlc_error_count(ctx);
}
