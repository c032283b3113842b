/*
 * interp_msg.c - checking and building messages from a routine's descriptor, as the
 * generated stubs do with compile-time offsets (docs/generated-code.md, "Wire layout", "The
 * client stubs", "The server stubs").
 *
 * Everything a descriptor says is trusted no more than a message: a descriptor built at run
 * time (idlcall's, from a .defs file) goes through the same code, so offsets are checked
 * against the fixed part before they are used. Arithmetic on counts is in 64 bits or in the
 * "n > len - off" form, never "off + n > len".
 *
 * The interp room: it knows core and ool, and nothing of the client, the server or tracing.
 */
#include <config.h>

#include <string.h>

#include "ool/ool.h"
#include "interp/interp_desc.h"

/* Bytes of `count` elements of `a`, or UINT64_MAX when no message could hold them. */
static uint64_t
dm_bytes(const struct idl_arg_desc *a, uint64_t count)
{
	return count * (uint64_t)a->elem_size;
}

static uint32_t
dm_get32(const void *base, uint32_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)base + off, sizeof v);
	return v;
}

/* The fixed part's size of one direction; 0 when the routine has no such message. */
static uint32_t
dm_fixed(const struct idl_routine_desc *rt, int reply)
{
	return reply ? rt->rep_fixed : rt->req_fixed;
}

/* Whether an argument of one direction lies inside that direction's fixed part. */
static bool
dm_fits(const struct idl_routine_desc *rt, const struct idl_arg_desc *a, int reply)
{
	uint32_t fixed = dm_fixed(rt, reply);
	uint32_t off = idl__dyn_offset(a, reply);
	uint64_t size;

	if (off < IDL_MSG_HEADER_SIZE || off >= fixed)
		return false;
	if (idl__dyn_is_var(a))
		size = sizeof(uint32_t);
	else if (a->kind == IDL_ARG_SCALAR)
		size = a->elem_size;
	else
		size = dm_bytes(a, a->count);
	return size <= (uint64_t)fixed - off;
}

/* Whether argument i's `samecount` is one the stubs could have: counted, after a counted
 * leader of its direction, neither of them `countinout`. */
static bool
dm_samecount_ok(const struct idl_routine_desc *rt, unsigned i)
{
	const struct idl_arg_desc *a = &rt->args[i];
	unsigned l = idl__dyn_leader(rt, i);
	const struct idl_arg_desc *lead = &rt->args[l];

	return l != i && idl__dyn_counted(a) && idl__dyn_counted(lead) && lead->dir == a->dir &&
	       !idl__dyn_countinout(a) && !idl__dyn_countinout(lead);
}

/* Whether some argument of the routine shares another's count. */
static bool
dm_has_samecount(const struct idl_routine_desc *rt)
{
	for (unsigned i = 0; i < rt->nargs; i++)
		if (rt->args[i].flags & IDL_ARGF_SAMECOUNT)
			return true;
	return false;
}

int
idl__dyn_supported(const struct idl_routine_desc *rt)
{
	if (rt == NULL || rt->kind == IDL_RT_SKIP || rt->name == NULL ||
	    (rt->nargs > 0 && rt->args == NULL))
		return IDL_EINVAL;
	if (rt->req_fixed < IDL_MSG_HEADER_SIZE || rt->req_fixed % IDL_MSG_ALIGN != 0 ||
	    (rt->kind == IDL_RT_ROUTINE &&
	     (rt->rep_fixed < IDL_MSG_HEADER_SIZE || rt->rep_fixed % IDL_MSG_ALIGN != 0)))
		return IDL_EINVAL;
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		switch (a->dir) {
		case IDL_DIR_REQUESTPORT:
			if (a->kind != IDL_ARG_PORT)
				return IDL_ENOTSUP;
			continue;
		case IDL_DIR_IN:
		case IDL_DIR_OUT:
		case IDL_DIR_INOUT:
			break;
		default:
			/* Client-side and MIG-only arguments do not travel. */
			if (a->kind != IDL_ARG_IMPLICIT)
				return IDL_ENOTSUP;
			continue;
		}
		if ((a->flags & IDL_ARGF_SAMECOUNT) && !dm_samecount_ok(rt, i))
			return IDL_EINVAL;
		switch (a->kind) {
		case IDL_ARG_SCALAR:
		case IDL_ARG_FIXED_ARRAY:
		case IDL_ARG_VAR_ARRAY:
		case IDL_ARG_CSTRING_FIXED:
		case IDL_ARG_CSTRING_VAR:
			break;
		case IDL_ARG_OOL:
		case IDL_ARG_PORT:
			if (idl__dyn_desc_valid(rt, a) != 0)
				return IDL_EINVAL;
			continue;
		default:
			return IDL_EINVAL;
		}
		if (a->elem_size == 0 || a->elem_size > IDL_MSG_ALIGN * 1024u * 1024u ||
		    (a->kind != IDL_ARG_SCALAR && a->count == 0))
			return IDL_EINVAL;
		if (idl__dyn_is_string(a) && a->elem_size != 1)
			return IDL_EINVAL;
		if (idl__dyn_travels(a, 0) && !dm_fits(rt, a, 0))
			return IDL_EINVAL;
		if (rt->kind == IDL_RT_ROUTINE && idl__dyn_travels(a, 1) && !dm_fits(rt, a, 1))
			return IDL_EINVAL;
		if (rt->kind != IDL_RT_ROUTINE && idl__dyn_travels(a, 1))
			return IDL_EINVAL; /* a simpleroutine has no reply */
		/* countinout: the capacity lies in the request's fixed part. */
		if (idl__dyn_countinout(a) &&
		    (a->req_offset < IDL_MSG_HEADER_SIZE || a->req_offset >= rt->req_fixed ||
		     rt->req_fixed - a->req_offset < sizeof(uint32_t)))
			return IDL_EINVAL;
	}
	return 0;
}

static void
dm_span_none(struct idl_arg_span *spans, unsigned nargs)
{
	for (unsigned i = 0; i < nargs; i++) {
		spans[i].off = IDL_NO_OFFSET;
		spans[i].count = 0;
	}
}

static int dm_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len,
		    int reply, struct idl_arg_span *spans);

/* Arrays that share one count (samecount) came with the same count: 0 or -1. */
static int
dm_samecount_check(const struct idl_routine_desc *rt, int reply, const struct idl_arg_span *spans)
{
	for (unsigned i = 0; i < rt->nargs; i++)
		if ((rt->args[i].flags & IDL_ARGF_SAMECOUNT) &&
		    idl__dyn_travels(&rt->args[i], reply) &&
		    spans[i].count != spans[idl__dyn_leader(rt, i)].count)
			return -1;
	return 0;
}

int
idl__dyn_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len,
	       int reply, struct idl_arg_span *spans)
{
	struct idl_arg_span own[UINT8_MAX + 1];

	/* samecount compares counts: the spans are needed even when the caller wants none. */
	if (spans == NULL && dm_has_samecount(rt))
		spans = own;
	if (dm_check(rt, msg, len, reply, spans) != 0)
		return -1;
	return dm_has_samecount(rt) ? dm_samecount_check(rt, reply, spans) : 0;
}

/* The checks of idl__dyn_check() but samecount's, in the stubs' order. */
static int
dm_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len, int reply,
	 struct idl_arg_span *spans)
{
	const unsigned char *p = (const unsigned char *)msg;
	uint32_t fixed;
	bool has_var = false;
	size_t off;

	if (spans != NULL)
		dm_span_none(spans, rt->nargs);
	fixed = dm_fixed(rt, reply);
	for (unsigned i = 0; i < rt->nargs; i++)
		if (idl__dyn_travels(&rt->args[i], reply) && idl__dyn_is_var(&rt->args[i]))
			has_var = true;

	/* The size: exactly the fixed part, or at least it when a variable part follows. */
	if (has_var ? len < fixed : len != fixed)
		return -1;
	/* The descriptors: the header's flag and count, then each one's type and size. */
	if (idl__dyn_desc_check(rt, msg, reply, spans) != 0)
		return -1;
	/* Every fixed c_string holds its NUL. */
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (idl__dyn_travels(a, reply) && a->kind == IDL_ARG_CSTRING_FIXED &&
		    memchr(p + idl__dyn_offset(a, reply), '\0', a->count) == NULL)
			return -1;
	}
	/* Each variable argument in order: its count within its bound, its padded bytes
	 * within what is left, a string's last byte NUL. */
	off = fixed;
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		uint32_t n;
		uint64_t bytes;

		if (!idl__dyn_travels(a, reply) || idl__dyn_is_desc(a))
			continue;
		if (!idl__dyn_is_var(a)) {
			if (spans != NULL) {
				spans[i].off = idl__dyn_offset(a, reply);
				spans[i].count = a->kind == IDL_ARG_SCALAR ? 1 : a->count;
			}
			continue;
		}
		n = dm_get32(p, idl__dyn_offset(a, reply));
		if (a->kind == IDL_ARG_CSTRING_VAR && n == 0)
			return -1;
		if (n > a->count)
			return -1;
		bytes = IDL_MSG_ROUND(dm_bytes(a, n));
		if (bytes > len - off)
			return -1;
		if (a->kind == IDL_ARG_CSTRING_VAR && p[off + n - 1] != '\0')
			return -1;
		if (spans != NULL) {
			spans[i].off = (uint32_t)off;
			spans[i].count = n;
		}
		off += (size_t)bytes;
	}
	return off == len ? 0 : -1;
}

int
idl_msg_check(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len, int reply,
	      struct idl_arg_span *spans)
{
	int err;

	if ((err = idl__dyn_supported(rt)) != 0)
		return err;
	if ((reply && rt->kind != IDL_RT_ROUTINE) || msg == NULL)
		return IDL_EINVAL;
	return idl__dyn_check(rt, msg, len, reply, spans);
}

/* Refuses what a client stub refuses before building anything. */
static int
dm_pack_check(const struct idl_arg_desc *a, const struct idl_arg_value *v)
{
	const char *s = v->data;

	if (v->count > 0 && v->data == NULL)
		return IDL_EINVAL;
	switch (a->kind) {
	case IDL_ARG_SCALAR:
		return v->count == 1 ? 0 : IDL_EINVAL;
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_VAR_ARRAY:
		return v->count > a->count ? MIG_ARRAY_TOO_LARGE : 0;
	case IDL_ARG_CSTRING_FIXED:
		/* A string of N characters has no room for its NUL in c_string[N]. */
		if (v->count > a->count ||
		    (v->count == a->count && memchr(s, '\0', v->count) == NULL))
			return MIG_ARRAY_TOO_LARGE;
		return 0;
	case IDL_ARG_CSTRING_VAR:
		if (v->count == 0 || s[v->count - 1] != '\0')
			return IDL_EINVAL;
		return v->count > a->count ? MIG_ARRAY_TOO_LARGE : 0;
	default:
		return IDL_ENOTSUP;
	}
}

/* The checks of every value before anything is built, and the message's size: 0 with
 * *total its bytes, or the error the call returns. */
static int
dm_pack_size(const struct idl_routine_desc *rt, int reply, const struct idl_arg_value *vals,
	     uint64_t *total)
{
	int err;

	*total = dm_fixed(rt, reply);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (!idl__dyn_travels(a, reply))
			continue;
		if (idl__dyn_is_desc(a))
			err = idl__dyn_desc_pack_check(a, &vals[i]);
		else
			err = dm_pack_check(a, &vals[i]);
		if (err != 0)
			return err;
		/* Arrays that share one count are sent with one: counts that differ are the
		 * caller's mistake, refused before anything is built. */
		if ((a->flags & IDL_ARGF_SAMECOUNT) &&
		    vals[i].count != vals[idl__dyn_leader(rt, i)].count)
			return IDL_EINVAL;
		if (idl__dyn_is_var(a))
			*total += IDL_MSG_ROUND(dm_bytes(a, vals[i].count));
	}
	return 0;
}

/* Writes one argument that travels into the message at p; the variable parts go at *off,
 * which grows past them. */
static void
dm_pack_arg(const struct idl_arg_desc *a, int reply, const struct idl_arg_value *v,
	    unsigned char *p, size_t *off)
{
	uint32_t at = idl__dyn_offset(a, reply);
	size_t n;

	if (idl__dyn_is_desc(a)) {
		uintptr_t value = (uintptr_t)v->data;
		idl_port_t port;

		if (a->kind == IDL_ARG_PORT) {
			memcpy(&port, v->data, sizeof port);
			value = (uintptr_t)port;
		}
		/* The sender names no Poly or Dealloc of its own here: the table's. */
		idl__dyn_desc_write((idl_desc_t *)(void *)(p + at), a, value, v->count, false, 0,
				    (a->flags & IDL_ARGF_DEALLOC_PARAM) != 0, 0);
		return;
	}
	n = (size_t)dm_bytes(a, v->count);
	if (!idl__dyn_is_var(a)) {
		if (n > 0)
			memcpy(p + at, v->data, n);
		return;
	}
	memcpy(p + at, &v->count, sizeof(uint32_t));
	if (n > 0)
		memcpy(p + *off, v->data, n);
	memset(p + *off + n, 0, IDL_MSG_ROUND(n) - n);
	*off += IDL_MSG_ROUND(n);
}

int
idl_msg_pack(const struct idl_routine_desc *rt, int reply, const struct idl_arg_value *vals,
	     idl_msg_header_t *buf, size_t cap)
{
	uint32_t ndesc;
	unsigned char *p = (unsigned char *)buf;
	uint64_t total;
	size_t off;
	int err;

	if ((err = idl__dyn_supported(rt)) != 0)
		return err;
	if ((reply && rt->kind != IDL_RT_ROUTINE) || vals == NULL || buf == NULL)
		return IDL_EINVAL;
	if ((err = dm_pack_size(rt, reply, vals, &total)) != 0)
		return err;
	if (total > cap || total > INT32_MAX)
		return IDL_EMSGSIZE;

	memset(p, 0, dm_fixed(rt, reply));
	off = dm_fixed(rt, reply);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (!reply && idl__dyn_countinout(a)) {
			/* The capacity sent is the bound: a buffer of the largest reply takes
			 * whatever comes. */
			memcpy(p + a->req_offset, &a->count, sizeof a->count);
			continue;
		}
		if (idl__dyn_travels(a, reply))
			dm_pack_arg(a, reply, &vals[i], p, &off);
	}
	if ((ndesc = idl__dyn_ndesc(rt, reply)) != 0) {
		buf->flags = IDL_MSGF_DESC;
		buf->ndesc = ndesc;
	}
	buf->size = (uint32_t)off;
	return (int)off;
}
