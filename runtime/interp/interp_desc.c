/*
 * interp_desc.c - descriptors in the interpreter: out-of-line data, ports and arrays of
 * ports, as the generated stubs check and write them (idlc/emit_ool.c is the code this
 * reads like; docs/generated-code.md "Descriptors" the contract). What a server does with
 * them around a routine's call is the libffi server's (dynamic/ffi_desc.c): this file
 * knows nothing of the server.
 *
 * The table gives a descriptor argument's kind, element type and size, its count (0 for a
 * variable size, else the fixed size or the bound of an array of ports), the offset of its
 * 16-byte descriptor, and in its flags and disposition what the stubs do with it: dealloc,
 * polymorphism, the disposition a sender names, fixed or bounded.
 */
#include <config.h>

#include <string.h>

#include <idl/idl_ool.h>

#include "ool/ool.h"
#include "interp/interp_desc.h"

#define DD_COPY_SEND 19u /* MACH_MSG_TYPE_COPY_SEND: mach_port_t's disposition */

uint16_t
idl__dyn_disposition(const struct idl_arg_desc *a)
{
	return a->disposition != 0 ? a->disposition : DD_COPY_SEND;
}

bool
idl__dyn_has_poly(const struct idl_arg_desc *a, int server)
{
	bool in = a->flags & IDL_ARGF_POLY_IN, out = a->flags & IDL_ARGF_POLY_OUT;

	if (a->kind != IDL_ARG_PORT && !idl__dyn_is_ports(a))
		return false;
	switch (a->dir) {
	case IDL_DIR_IN:
		return server ? out : in;
	case IDL_DIR_OUT:
		return server ? in : out;
	case IDL_DIR_INOUT:
		return in || out;
	default:
		return false;
	}
}

uint32_t
idl__dyn_ndesc(const struct idl_routine_desc *rt, int reply)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < rt->nargs; i++)
		if (idl__dyn_travels(&rt->args[i], reply) && idl__dyn_is_desc(&rt->args[i]))
			n++;
	return n;
}

/* Whether a descriptor lies inside one direction's fixed part, 8-aligned. */
static bool
dd_fits(const struct idl_routine_desc *rt, const struct idl_arg_desc *a, int reply)
{
	uint32_t fixed = reply ? rt->rep_fixed : rt->req_fixed;
	uint32_t off = idl__dyn_offset(a, reply);

	return off >= IDL_MSG_HEADER_SIZE && off < fixed && off % IDL_MSG_ALIGN == 0 &&
	       IDL_DESC_SIZE <= fixed - off;
}

int
idl__dyn_desc_valid(const struct idl_routine_desc *rt, const struct idl_arg_desc *a)
{
	/* An inline array is of ports, and goes one way: the stubs have no other. */
	if ((a->flags & IDL_ARGF_INLINE) && (!idl__dyn_is_ports(a) || a->dir == IDL_DIR_INOUT))
		return IDL_EINVAL;
	if (a->kind == IDL_ARG_OOL && !idl__dyn_is_ports(a) &&
	    (a->elem_size == 0 || a->elem_size > IDL_MSG_ALIGN * 1024u * 1024u))
		return IDL_EINVAL;
	if (idl__dyn_travels(a, 0) && !dd_fits(rt, a, 0))
		return IDL_EINVAL;
	if (idl__dyn_travels(a, 1) && (rt->kind != IDL_RT_ROUTINE || !dd_fits(rt, a, 1)))
		return IDL_EINVAL;
	return 0;
}

uint32_t
idl__dyn_desc_count(const struct idl_arg_desc *a, const idl_desc_t *d)
{
	if (a->kind == IDL_ARG_PORT)
		return 1;
	if (idl__dyn_is_ports(a) || a->elem_size <= 1)
		return d->size;
	return d->size / a->elem_size;
}

/* One descriptor as emit_desc_bad() checks it: whether it is refused. */
static bool
dd_bad(const struct idl_arg_desc *a, const idl_desc_t *d)
{
	bool told = a->flags & IDL_ARGF_POLY_OUT;

	if (a->kind == IDL_ARG_PORT)
		return d->type != IDL_DESC_PORT || (told && !idl_port_disposition_ok(d->aux));
	if (idl__dyn_is_ports(a)) {
		if (d->type != IDL_DESC_PORT_ARRAY)
			return true;
		if (idl__dyn_desc_fixed(a) ? d->size != a->count
					   : a->count != 0 && d->size > a->count)
			return true;
		return told && !idl_port_disposition_ok(d->aux);
	}
	if (d->type != IDL_DESC_OOL)
		return true;
	if (idl__dyn_desc_fixed(a))
		return d->size != (uint64_t)a->count * a->elem_size;
	return a->elem_size > 1 && d->size % a->elem_size != 0;
}

int
idl__dyn_desc_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, int reply,
		    struct idl_arg_span *spans)
{
	uint32_t n = idl__dyn_ndesc(rt, reply);

	if (n == 0)
		return 0;
	if (!(msg->flags & IDL_MSGF_DESC) || msg->ndesc != n)
		return -1;
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		uint32_t off = idl__dyn_offset(a, reply);
		idl_desc_t d;

		if (!idl__dyn_travels(a, reply) || !idl__dyn_is_desc(a))
			continue;
		memcpy(&d, (const char *)msg + off, sizeof d);
		if (dd_bad(a, &d))
			return -1;
		if (spans != NULL) {
			spans[i].off = off;
			spans[i].count = idl__dyn_desc_count(a, &d);
		}
	}
	return 0;
}

int
idl__dyn_desc_pack_check(const struct idl_arg_desc *a, const struct idl_arg_value *v)
{
	if (v->count > 0 && v->data == NULL)
		return IDL_EINVAL;
	if (a->kind == IDL_ARG_PORT)
		return v->count == 1 ? 0 : IDL_EINVAL;
	if (idl__dyn_desc_fixed(a))
		return v->count == a->count ? 0 : IDL_EINVAL;
	if (idl__dyn_is_ports(a))
		return a->count != 0 && v->count > a->count ? MIG_ARRAY_TOO_LARGE : 0;
	/* The descriptor's size is 32 bits. */
	if (a->elem_size > 1 && v->count > UINT32_MAX / a->elem_size)
		return MIG_ARRAY_TOO_LARGE;
	return 0;
}

void
idl__dyn_desc_write(idl_desc_t *d, const struct idl_arg_desc *a, uintptr_t value, uint32_t count,
		    bool has_poly, uint32_t poly, bool has_dealloc, int32_t dealloc)
{
	bool fixed = idl__dyn_desc_fixed(a);
	idl_desc_t v;

	memset(&v, 0, sizeof v);
	v.addr = (uint64_t)value;
	if (a->kind == IDL_ARG_PORT) {
		v.type = IDL_DESC_PORT;
		v.size = 0;
	} else if (idl__dyn_is_ports(a)) {
		v.type = IDL_DESC_PORT_ARRAY;
		v.size = fixed ? a->count : count;
	} else {
		v.type = IDL_DESC_OOL;
		v.size = (uint32_t)((size_t)(fixed ? a->count : count) * a->elem_size);
	}
	if (has_dealloc)
		v.flags = dealloc ? IDL_DESCF_DEALLOC : 0;
	else
		v.flags = (a->flags & IDL_ARGF_DEALLOC) ? IDL_DESCF_DEALLOC : 0;
	if (a->kind == IDL_ARG_PORT || idl__dyn_is_ports(a))
		v.aux = has_poly ? (uint16_t)poly : idl__dyn_disposition(a);
	memcpy(d, &v, sizeof v);
}
