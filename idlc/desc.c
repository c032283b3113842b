/*
 * desc.c - the middle end's last stage: the descriptor table (struct idl_subsystem,
 * <idl/idl_subsystem.h>), built once in memory from every argument's facts and the layout.
 *
 * emit_desc.c prints this table into <sub>User.c and <sub>Server.c; idlcall serves and calls
 * with it (idlc_subsystem()); each routine's signature hash is computed from its row by the
 * wire contract's own function (wire/sighash.c), the one the runtime uses for a peer's
 * table. So the generated table, idlcall's table and the hashes are one thing.
 *
 * A row says how an argument travels (kind, wire type, element size, count, offsets) and,
 * in its flags and disposition, what the stubs do with it (IDL_ARGF_*), so that whoever
 * marshals or serves from the table alone does what the compiled stubs do.
 */
#include <config.h>

#include "middle.h"

/* MIG's number for the disposition a sender names (MACH_MSG_TYPE_*). */
static uint8_t
desc_disposition(enum idlc_ipc ipc)
{
	switch (ipc) {
	case IDLC_IPC_MOVE_RECEIVE:
	case IDLC_IPC_PORT_RECEIVE:
		return 16;
	case IDLC_IPC_MOVE_SEND:
	case IDLC_IPC_PORT_SEND:
		return 17;
	case IDLC_IPC_MOVE_SEND_ONCE:
	case IDLC_IPC_PORT_SEND_ONCE:
		return 18;
	case IDLC_IPC_MAKE_SEND:
		return 20;
	case IDLC_IPC_MAKE_SEND_ONCE:
		return 21;
	case IDLC_IPC_PORT_NAME:
		return 15;
	case IDLC_IPC_COPY_SEND:
	default:
		return 19;
	}
}

/* How the argument travels: kind, wire type, element size, count. */
static void
desc_travel(const struct idlc_arg *a, struct idl_arg_desc *d)
{
	const struct idlc_type *t = a->rtype;

	if (a->dir == IDL_DIR_REQUESTPORT) {
		/* The request port is the connection itself: nothing of it travels. */
		d->kind = IDL_ARG_PORT;
		d->wire_type = IDL_WT_PORT;
		d->elem_size = 0;
		d->count = 1;
	} else if (a->facts & IDLC_AK_TRAVELS) {
		d->kind = (uint8_t)t->arg_kind;
		d->wire_type = (uint8_t)t->wire_type;
		d->elem_size = t->elem_size;
		d->count = t->arg_kind == IDL_ARG_SCALAR ? 1 : t->wire_count;
	} else {
		d->kind = IDL_ARG_IMPLICIT;
		d->wire_type = IDL_WT_NONE;
		d->elem_size = 0;
		d->count = 0;
	}
}

/* What the stubs do with it: IDL_ARGF_* and the disposition a sender names. */
static void
desc_flags(const struct idlc_arg *a, struct idl_arg_desc *d)
{
	const struct idlc_type *t = a->rtype;
	uint32_t f = 0;

	if (a->facts & IDLC_AK_SEQNO)
		f |= IDL_ARGF_SEQNO;
	if (idlc_is(a, IDLC_AK_REPLY_HANDLE | IDLC_AK_SERVER_PARAM))
		f |= IDL_ARGF_REPLY;
	if (idlc_is(a, IDLC_AK_TOKEN | IDLC_AK_SERVER_PARAM))
		f |= IDL_ARGF_OPAQUE;
	if (d->kind != IDL_ARG_IMPLICIT && d->kind != IDL_ARG_PORT && t->is_signed)
		f |= IDL_ARGF_SIGNED;
	if (a->facts & IDLC_AK_RECORD)
		f |= IDL_ARGF_RECORD;
	if ((t->intran != NULL || t->outtran != NULL || t->destructor != NULL) &&
	    (a->facts & IDLC_AK_SERVER_PARAM))
		f |= IDL_ARGF_OPAQUE;
	if (t->arg_kind == IDL_ARG_PORT || t->wire_type == IDL_WT_PORT) {
		if (t->poly_in)
			f |= IDL_ARGF_POLY_IN;
		if (t->poly_out)
			f |= IDL_ARGF_POLY_OUT;
		if (a->facts & IDLC_AK_DESC)
			d->disposition = desc_disposition(t->port_ipc);
	}
	if (idlc_is(a, IDLC_AK_DESC) && t->arg_kind == IDL_ARG_OOL) {
		if (t->ool_fixed)
			f |= IDL_ARGF_FIXED;
		if (a->facts & IDLC_AK_INLINE_PORTS)
			f |= IDL_ARGF_INLINE;
	}
	if (a->facts & IDLC_AK_GIVEN)
		f |= IDL_ARGF_DEALLOC;
	if (a->facts & (IDLC_AK_USER_DEALLOC | IDLC_AK_SERVER_DEALLOC))
		f |= IDL_ARGF_DEALLOC_PARAM;
	if (a->facts & IDLC_AK_SERVERCOPY)
		f |= IDL_ARGF_SERVERCOPY;
	if (a->facts & IDLC_AK_SAMECOUNT)
		f |= IDL_ARGF_SAMECOUNT;
	d->flags = f;
}

/* The C type the row names for one element: the server's, which the dynamic server calls
 * with (the element's for arrays and strings, which are passed as pointers to it). */
static const char *
desc_ctype(const struct idlc_arg *a)
{
	switch (a->rtype->arg_kind) {
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_FIXED:
	case IDL_ARG_CSTRING_VAR:
		if ((a->facts & IDLC_AK_TRAVELS) && !(a->facts & IDLC_AK_RECORD) &&
		    a->c_elem != NULL)
			return a->c_elem;
		break;
	default:
		break;
	}
	return a->c_type[IDLC_SERVER];
}

static void
desc_arg(const struct idlc_arg *a, struct idl_arg_desc *d)
{
	d->name = a->name;
	d->ctype = desc_ctype(a);
	d->dir = (uint8_t)a->dir;
	desc_travel(a, d);
	desc_flags(a, d);
	d->req_offset = a->req_offset;
	d->rep_offset = a->rep_offset;
}

/* One routine's row and its arguments' rows (at `args`); false after an error. */
static bool
desc_routine(struct idlc_ctx *ctx, struct idlc_routine *rt, struct idl_routine_desc *d,
	     struct idl_arg_desc *args)
{
	unsigned n = 0;

	d->number = rt->number;
	d->kind = (uint8_t)rt->kind;
	d->waittime = -1;
	rt->row = d;
	if (rt->kind == IDLC_RT_SKIP) {
		rt->sig_hash = 0;
		return true;
	}
	for (struct idlc_arg *a = rt->args; a != NULL; a = a->next, n++) {
		desc_arg(a, &args[n]);
		a->row = &args[n];
	}
	if (n > UINT8_MAX) {
		idlc_error(ctx, rt->loc,
			   "routine '%s' has %u arguments: the descriptor table counts them in 8 "
			   "bits (at most %u)",
			   rt->name, n, UINT8_MAX);
		return false;
	}
	d->name = rt->name;
	d->nargs = (uint8_t)n;
	d->waittime = rt->waittime;
	d->req_fixed = rt->req_fixed;
	d->req_max = rt->req_max;
	d->rep_fixed = rt->rep_fixed;
	d->rep_max = rt->rep_max;
	d->args = n > 0 ? args : NULL;
	d->sig_hash = idl_routine_sig_hash(d);
	rt->sig_hash = d->sig_hash;
	return true;
}

int
idlc_desc(struct idlc_ctx *ctx, struct idlc_module *m)
{
	struct idl_subsystem *ss = idlc_alloc(ctx, sizeof *ss);
	struct idl_routine_desc *rows;
	struct idl_arg_desc *args;
	struct idlc_routine *rt;
	size_t nargs = 0, ai = 0;
	uint32_t n = 0;
	bool ok = true;

	m->desc = NULL;
	for (rt = m->routines; rt != NULL; rt = rt->next, n++)
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
			nargs++;
	rows = idlc_alloc(ctx, ((size_t)n + 1) * sizeof *rows);
	args = idlc_alloc(ctx, (nargs + 1) * sizeof *args);
	if (ss == NULL || rows == NULL || args == NULL)
		return (int)idlc_error_count(ctx);
	n = 0;
	for (rt = m->routines; rt != NULL; rt = rt->next, n++) {
		ok = desc_routine(ctx, rt, &rows[n], &args[ai]) && ok;
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
			ai++;
	}
	if (!ok)
		return (int)idlc_error_count(ctx);
	ss->magic = IDL_SUBSYSTEM_MAGIC;
	ss->nroutines = n;
	ss->name = m->subsystem;
	ss->base = m->base;
	ss->max_request = m->max_request;
	ss->max_reply = m->max_reply;
	ss->routines = n > 0 ? rows : NULL;
	m->desc = ss;
	return (int)idlc_error_count(ctx);
}

const struct idl_subsystem *
idlc_subsystem(const struct idlc_ctx *ctx)
{
	return idlc_module(ctx)->desc;
}
