/*
 * emit_ool.c - descriptors: out-of-line data, ports and arrays of ports, as both stubs write
 * and check them (docs/generated-code.md, "Descriptors").
 *
 * In memory a descriptor's addr is a pointer (out-of-line data, an array of idl_port_t) or an
 * idl_port_t; the transport converts it at send and receive. The stubs only ever write what
 * the interface says and check what arrives against it: the type, the size (a whole number
 * of elements; exactly the size of fixed data; at most the bound of a bounded port array)
 * and, where the receiver is told the disposition, that it is a port disposition.
 */
#include <config.h>

#include <inttypes.h>

#include "emit.h"

/* MIG's name for the disposition the argument's row says a sender names, for the stubs to
 * write into aux. */
static const char *
ool_disposition(const struct idlc_arg *a)
{
	switch (a->row->disposition) {
	case 15:
		return "MACH_MSG_TYPE_PORT_NAME";
	case 16:
		return "MACH_MSG_TYPE_MOVE_RECEIVE";
	case 17:
		return "MACH_MSG_TYPE_MOVE_SEND";
	case 18:
		return "MACH_MSG_TYPE_MOVE_SEND_ONCE";
	case 20:
		return "MACH_MSG_TYPE_MAKE_SEND";
	case 21:
		return "MACH_MSG_TYPE_MAKE_SEND_ONCE";
	case 19:
	default:
		return "MACH_MSG_TYPE_COPY_SEND";
	}
}

static const char *
ool_str(struct emit_out *o, const char *r)
{
	(void)o;
	return r != NULL ? r : "0";
}

void
emit_desc_fill(struct emit_out *o, const char *d, const struct idlc_arg *a, const char *value,
	       const char *count, const char *poly, const char *dealloc, bool free_array)
{
	const struct idlc_type *t = a->rtype;
	bool ports = idlc_is(a, IDLC_AK_PORTS);
	const char *type, *size, *flags, *aux, *kept;

	if (t->arg_kind == IDL_ARG_PORT) {
		type = "IDL_DESC_PORT";
		size = "0";
	} else if (ports) {
		type = "IDL_DESC_PORT_ARRAY";
		size = count != NULL ? idlc_printf(o->ctx, "(uint32_t)%s", count)
				     : idlc_printf(o->ctx, "%" PRIu32, t->wire_count);
	} else {
		type = "IDL_DESC_OOL";
		if (count == NULL)
			size = idlc_printf(o->ctx, "%" PRIu64,
					   (uint64_t)t->wire_count * t->elem_size);
		else if (t->elem_size == 1)
			size = idlc_printf(o->ctx, "(uint32_t)%s", count);
		else
			size = idlc_printf(o->ctx, "(uint32_t)((size_t)%s * %" PRIu32 ")", count,
					   t->elem_size);
	}
	/* What the runtime frees once sent when the sender keeps its memory: nothing, or the
	 * stub's own buffer of an inline array of ports. */
	kept = free_array ? "IDL_DESCF_FREE_ARRAY" : "0";
	if (dealloc != NULL)
		flags = idlc_printf(o->ctx, "%s ? IDL_DESCF_DEALLOC : %s", dealloc, kept);
	else
		flags = idlc_is(a, IDLC_AK_GIVEN) ? "IDL_DESCF_DEALLOC" : kept;
	if (t->arg_kind == IDL_ARG_PORT || ports)
		aux = poly != NULL ? idlc_printf(o->ctx, "(uint16_t)%s", poly) : ool_disposition(a);
	else
		aux = "0";
	emit(o, "%s.addr = (uint64_t)(uintptr_t)%s;\n", d, value);
	emit(o, "%s.size = %s;\n", d, ool_str(o, size));
	emit(o, "%s.type = %s;\n", d, type);
	emit(o, "%s.flags = %s;\n", d, ool_str(o, flags));
	emit(o, "%s.aux = %s;\n", d, aux);
}

const char *
emit_desc_bad(struct emit_out *o, const char *d, const struct idlc_arg *a)
{
	const struct idlc_type *t = a->rtype;
	const char *r;

	if (t->arg_kind == IDL_ARG_PORT) {
		if (t->poly_out)
			r = idlc_printf(o->ctx,
					"%s.type != IDL_DESC_PORT || "
					"!idl_port_disposition_ok(%s.aux)",
					d, d);
		else
			r = idlc_printf(o->ctx, "%s.type != IDL_DESC_PORT", d);
	} else if (idlc_is(a, IDLC_AK_PORTS)) {
		if (t->ool_fixed)
			r = idlc_printf(o->ctx,
					"%s.type != IDL_DESC_PORT_ARRAY || %s.size != %" PRIu32, d,
					d, t->wire_count);
		else if (t->wire_count != 0)
			r = idlc_printf(o->ctx,
					"%s.type != IDL_DESC_PORT_ARRAY || %s.size > %" PRIu32, d,
					d, t->wire_count);
		else
			r = idlc_printf(o->ctx, "%s.type != IDL_DESC_PORT_ARRAY", d);
		if (t->poly_out)
			r = idlc_printf(o->ctx, "%s || !idl_port_disposition_ok(%s.aux)", r, d);
	} else if (t->ool_fixed) {
		r = idlc_printf(o->ctx, "%s.type != IDL_DESC_OOL || %s.size != %" PRIu64, d, d,
				(uint64_t)t->wire_count * t->elem_size);
	} else if (t->elem_size == 1) {
		r = idlc_printf(o->ctx, "%s.type != IDL_DESC_OOL", d);
	} else {
		r = idlc_printf(o->ctx, "%s.type != IDL_DESC_OOL || %s.size %% %" PRIu32 " != 0", d,
				d, t->elem_size);
	}
	return ool_str(o, r);
}

const char *
emit_desc_value(struct emit_out *o, const char *d, const struct idlc_arg *a, enum emit_side side)
{
	const struct idlc_type *t = a->rtype;
	const char *c = side == EMIT_USER ? t->c_user : t->c_server;
	bool elem = t->arg_kind == IDL_ARG_OOL && idlc_is(a, IDLC_AK_ELEM(side));

	if (c == NULL)
		c = "void *";
	return ool_str(o, idlc_printf(o->ctx, "(%s%s)(uintptr_t)%s.addr", c, elem ? " *" : "", d));
}

const char *
emit_desc_count(struct emit_out *o, const char *d, const struct idlc_arg *a)
{
	if (idlc_is(a, IDLC_AK_PORTS) || a->rtype->elem_size == 1)
		return ool_str(o, idlc_printf(o->ctx, "%s.size", d));
	return ool_str(o, idlc_printf(o->ctx, "%s.size / %" PRIu32, d, a->rtype->elem_size));
}

const char *
emit_desc_poly(struct emit_out *o, const char *d)
{
	return ool_str(o, idlc_printf(o->ctx, "idl_port_received_name(%s.aux)", d));
}

void
emit_desc_header(struct emit_out *o, const char *head, uint32_t ndesc)
{
	emit(o, "%sflags = IDL_MSGF_DESC;\n", head);
	emit(o, "%sndesc = %" PRIu32 ";\n", head, ndesc);
}

const char *
emit_desc_count_bad(struct emit_out *o, const char *head, uint32_t ndesc)
{
	return ool_str(o, idlc_printf(o->ctx, "!(%sflags & IDL_MSGF_DESC) || %sndesc != %" PRIu32,
				      head, head, ndesc));
}
