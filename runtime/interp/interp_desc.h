/*
 * interp_desc.h - descriptors in the interpreter (interp_desc.c): out-of-line data, ports
 * and arrays of ports, checked, packed, served and printed as the generated stubs do
 * (idlc/emit_ool.c, docs/generated-code.md "Descriptors").
 */
#ifndef IDL_RUNTIME_INTERP_DESC_H
#define IDL_RUNTIME_INTERP_DESC_H

#include <stdbool.h>
#include <stdint.h>

#include "interp/interp.h"

/* Whether an argument travels as a descriptor (data out of line, a port, ports). */
static inline bool
idl__dyn_is_desc(const struct idl_arg_desc *a)
{
	return a->kind == IDL_ARG_OOL || a->kind == IDL_ARG_PORT;
}

static inline bool
idl__dyn_is_ports(const struct idl_arg_desc *a)
{
	return a->kind == IDL_ARG_OOL && a->wire_type == IDL_WT_PORT;
}

/* Whether an out array is `countinout`: the request carries the caller's capacity. */
static inline bool
idl__dyn_countinout(const struct idl_arg_desc *a)
{
	return a->dir == IDL_DIR_OUT && a->kind == IDL_ARG_VAR_ARRAY &&
	       a->req_offset != IDL_NO_OFFSET;
}

/* A descriptor's disposition as a sender writes it when not polymorphic. */
uint16_t idl__dyn_disposition(const struct idl_arg_desc *a);

/* Whether out-of-line argument `a` has a fixed size (no count). */
static inline bool
idl__dyn_desc_fixed(const struct idl_arg_desc *a)
{
	return a->kind == IDL_ARG_OOL && (a->flags & IDL_ARGF_FIXED);
}

/* Whether a side's routine gets <arg>Poly: the server (server = 1) or the client. */
bool idl__dyn_has_poly(const struct idl_arg_desc *a, int server);

/* The descriptors of one direction's message. */
uint32_t idl__dyn_ndesc(const struct idl_routine_desc *rt, int reply);

/* 0 when a descriptor argument is one the interpreter can carry in the direction(s) it
 * travels, IDL_EINVAL when the table contradicts itself (offsets, sizes, an inline array
 * that is not of ports or goes both ways). */
int idl__dyn_desc_valid(const struct idl_routine_desc *rt, const struct idl_arg_desc *a);

/* The checks of the stubs on the descriptors of a message whose size was checked: the
 * header's flag and count, then each descriptor in order. Fills the descriptor arguments'
 * spans. 0 or -1. */
int idl__dyn_desc_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, int reply,
			struct idl_arg_span *spans);

/* The element count a receiver's routine is given for a checked descriptor. */
uint32_t idl__dyn_desc_count(const struct idl_arg_desc *a, const idl_desc_t *d);

/* Refuses what a client stub refuses of a descriptor value before building anything. */
int idl__dyn_desc_pack_check(const struct idl_arg_desc *a, const struct idl_arg_value *v);

/* Writes one descriptor from a value (addr, size, type, flags, aux). */
void idl__dyn_desc_write(idl_desc_t *d, const struct idl_arg_desc *a, uintptr_t value,
			 uint32_t count, bool has_poly, uint32_t poly, bool has_dealloc,
			 int32_t dealloc);

#endif /* IDL_RUNTIME_INTERP_DESC_H */
