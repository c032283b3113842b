/*
 * ffi_desc.c - descriptors around a routine's call in the libffi server: reply handles
 * fetched, out descriptors' locals prepared and checked, the reply's descriptors filled,
 * what the routine does not keep released. The interpreter (interp/interp_desc.c) checks
 * and writes descriptors for both sides; what only a server does with them is here, beside
 * the server that calls the routine (ffi_server.c), since it uses the server's deferred
 * replies (idl_request_reply(), idl_reply_discard()).
 */
#include <config.h>

#include <string.h>

#include <idl/idl_ool.h>
#include <idl/idl_server.h>

#include "dynamic/dynamic.h"

#define DD_MOVE_SEND 17u /* MACH_MSG_TYPE_MOVE_SEND */

/* An out inline array of ports: the routine fills the server's buffer of `count` ports. */
static bool
dd_out_inline(const struct idl_arg_desc *a)
{
	return a->dir == IDL_DIR_OUT && idl__dyn_is_ports(a) && (a->flags & IDL_ARGF_INLINE);
}

void
idl__dyn_desc_prepare(const struct idl_arg_desc *a, const idl_desc_t *in, struct idl__dyn_dlocal *l)
{
	memset(l, 0, sizeof *l);
	l->poly = DD_MOVE_SEND;
	if (a->dir == IDL_DIR_INOUT && in != NULL) {
		l->value = (uintptr_t)in->addr;
		l->cnt = idl__dyn_desc_count(a, in);
		l->poly = idl_port_received_name(in->aux);
	}
}

bool
idl__dyn_desc_too_large(const struct idl_arg_desc *a, const struct idl__dyn_dlocal *l)
{
	if (dd_out_inline(a))
		return !idl__dyn_desc_fixed(a) && l->cnt > a->count;
	return a->kind == IDL_ARG_OOL && !idl__dyn_is_ports(a) && !idl__dyn_desc_fixed(a) &&
	       a->elem_size > 1 && l->cnt > UINT32_MAX / a->elem_size;
}

uint32_t
idl__dyn_room(const struct idl_routine_desc *rt, unsigned i)
{
	uint32_t room = rt->args[i].count;

	for (unsigned k = i + 1; k < rt->nargs && (rt->args[k].flags & IDL_ARGF_SAMECOUNT); k++)
		if (rt->args[k].count != 0 && (room == 0 || rt->args[k].count < room))
			room = rt->args[k].count;
	return room;
}

/* The request's descriptor of argument `a` (checked by idl__dyn_desc_check()). */
static idl_desc_t
dd_in(const idl_msg_header_t *in, const struct idl_arg_desc *a)
{
	idl_desc_t d;

	memcpy(&d, (const char *)in + a->req_offset, sizeof d);
	return d;
}

void
idl__dyn_desc_free_ports(const struct idl_routine_desc *rt, struct idl__dyn_dlocal *dl)
{
	for (unsigned i = 0; i < rt->nargs; i++)
		if (dd_out_inline(&rt->args[i])) {
			idl_ool_free((void *)dl[i].value,
				     (size_t)rt->args[i].count * sizeof(idl_port_t));
			dl[i].value = 0;
		}
}

int
idl__dyn_desc_before(const struct idl_routine_desc *rt, const idl_msg_header_t *in,
		     struct idl__dyn_dlocal *dl)
{
	for (unsigned i = 0; i < rt->nargs; i++)
		dl[i].value = 0;
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		idl_desc_t d;

		memset(&d, 0, sizeof d);
		if (a->dir == IDL_DIR_OTHER && (a->flags & IDL_ARGF_REPLY)) {
			dl[i].value = (uintptr_t)idl_request_reply();
			continue;
		}
		if (rt->kind != IDL_RT_ROUTINE || !idl__dyn_travels(a, 1) || !idl__dyn_is_desc(a))
			continue;
		if (a->dir == IDL_DIR_INOUT)
			d = dd_in(in, a);
		idl__dyn_desc_prepare(a, a->dir == IDL_DIR_INOUT ? &d : NULL, &dl[i]);
		if (dd_out_inline(a)) {
			/* The stub's buffer, with room for the smallest of the arrays sharing its
			 * count (samecount). */
			dl[i].value =
				(uintptr_t)idl_ool_alloc((size_t)a->count * sizeof(idl_port_t));
			dl[i].cnt = idl__dyn_room(rt, i);
			if (dl[i].value == 0) {
				idl__dyn_desc_free_ports(rt, dl);
				return IDL_ENOMEM;
			}
		}
	}
	return 0;
}

void
idl__dyn_desc_after_call(const struct idl_routine_desc *rt, const idl_msg_header_t *in,
			 int32_t retcode, struct idl__dyn_dlocal *dl)
{
	/* The buffers of out inline arrays of ports go with the reply, or now. */
	if (retcode != KERN_SUCCESS)
		idl__dyn_desc_free_ports(rt, dl);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (a->dir == IDL_DIR_OTHER && (a->flags & IDL_ARGF_REPLY)) {
			if (retcode != MIG_NO_REPLY)
				idl_reply_discard((idl_reply_t)dl[i].value);
		} else if (a->dir == IDL_DIR_IN && idl__dyn_is_ports(a) &&
			   (a->flags & IDL_ARGF_INLINE) &&
			   (retcode == KERN_SUCCESS || retcode == MIG_NO_REPLY)) {
			/* An inline array is never the routine's to keep: its memory goes, the
			 * ports in it stay. */
			idl_desc_t d = dd_in(in, a);
			size_t bytes = (size_t)d.size * sizeof(idl_port_t);

			idl_ool_free((void *)(uintptr_t)d.addr, bytes);
		}
	}
}

bool
idl__dyn_desc_out_too_large(const struct idl_routine_desc *rt, const struct idl__dyn_dlocal *dl)
{
	for (unsigned i = 0; i < rt->nargs; i++)
		if (idl__dyn_travels(&rt->args[i], 1) && idl__dyn_is_desc(&rt->args[i]) &&
		    idl__dyn_desc_too_large(&rt->args[i], &dl[i]))
			return true;
	return false;
}

void
idl__dyn_desc_fill(const struct idl_routine_desc *rt, idl_msg_header_t *out,
		   const struct idl__dyn_dlocal *dl)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		idl_desc_t *d;

		if (!idl__dyn_travels(a, 1) || !idl__dyn_is_desc(a))
			continue;
		d = (idl_desc_t *)(void *)((char *)out + a->rep_offset);
		idl__dyn_desc_write(d, a, dl[i].value, dl[i].cnt, idl__dyn_has_poly(a, 1),
				    dl[i].poly, (a->flags & IDL_ARGF_DEALLOC_PARAM) != 0,
				    dl[i].dealloc);
		/* The stub's own buffer: the runtime frees it once sent. */
		if (dd_out_inline(a) && d->flags == 0)
			d->flags = IDL_DESCF_FREE_ARRAY;
		n++;
	}
	if (n != 0) {
		out->flags = IDL_MSGF_DESC;
		out->ndesc = n;
	}
}

uintptr_t
idl__dyn_desc_in_value(const idl_msg_header_t *in, const struct idl_arg_desc *a, int what)
{
	idl_desc_t d = dd_in(in, a);

	switch (what) {
	case 0:
		return (uintptr_t)d.addr;
	case 1:
		return idl_port_received_name(d.aux);
	default:
		return idl__dyn_desc_count(a, &d);
	}
}
