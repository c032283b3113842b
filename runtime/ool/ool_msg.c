/*
 * ool_msg.c - what a message carries by descriptor: its release when the message is
 * destroyed or sent (out-of-line memory freed, carried ports closed), and the checks of a
 * message's descriptors that every transport and both sides make. It knows ports only
 * through core's port head (idl_port_close()), and nothing of the client or the server.
 */
#include <config.h>

#include <string.h>

#include <idl/idl_ool.h>

#include "ool/ool.h"

/* Closes the ports of an array of n and frees the array's memory. */
static void
ool_carried_ports_free(idl_port_t *ports, uint32_t n)
{
	if (ports == NULL)
		return;
	for (uint32_t i = 0; i < n; i++)
		idl_port_close(ports[i]);
	idl_ool_free(ports, (size_t)n * sizeof(idl_port_t));
}

/* The descriptors of msg within its size: how many there may be read. */
static uint32_t
ool_ndesc(const idl_msg_header_t *msg)
{
	uint32_t n;

	if (msg == NULL || !idl__desc_msg(msg, IDL_MSG_HEADER_SIZE) ||
	    msg->size < IDL_MSG_HEADER_SIZE)
		return 0;
	n = (msg->size - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE;
	return msg->ndesc < n ? msg->ndesc : n;
}

void
idl_msg_destroy(idl_msg_header_t *msg)
{
	idl_desc_t *descs = (idl_desc_t *)(void *)(msg + 1);
	uint32_t n = ool_ndesc(msg);

	for (uint32_t i = 0; i < n; i++) {
		idl_desc_t d;

		memcpy(&d, &descs[i], sizeof d);
		switch (d.type) {
		case IDL_DESC_OOL:
			idl_ool_free((void *)(uintptr_t)d.addr, d.size);
			break;
		case IDL_DESC_PORT:
			idl_port_close((idl_port_t)(uintptr_t)d.addr);
			break;
		case IDL_DESC_PORT_ARRAY:
			ool_carried_ports_free((idl_port_t *)(uintptr_t)d.addr, d.size);
			break;
		default:
			break; /* destroyed before, or not a type the runtime made */
		}
		/* Once: a second destroy of the same message finds nothing. */
		d.type = 0;
		d.addr = 0;
		memcpy(&descs[i], &d, sizeof d);
	}
}

void
idl_msg_release_sent(const idl_msg_header_t *msg)
{
	idl__msg_release_sent(msg);
}

void
idl__msg_release_sent(const idl_msg_header_t *msg)
{
	const idl_desc_t *descs = (const idl_desc_t *)(const void *)(msg + 1);
	uint32_t n = ool_ndesc(msg);

	for (uint32_t i = 0; i < n; i++) {
		idl_desc_t d;

		memcpy(&d, &descs[i], sizeof d);
		/* The sender's own buffer of an array of ports it keeps: the memory only. */
		if (d.type == IDL_DESC_PORT_ARRAY && (d.flags & IDL_DESCF_FREE_ARRAY) &&
		    !idl__desc_moves(&d))
			idl_ool_free((void *)(uintptr_t)d.addr,
				     (size_t)d.size * sizeof(idl_port_t));
		if (!idl__desc_moves(&d))
			continue;
		if (d.type == IDL_DESC_OOL)
			idl_ool_free((void *)(uintptr_t)d.addr, d.size);
		else if (d.type == IDL_DESC_PORT)
			idl_port_close((idl_port_t)(uintptr_t)d.addr);
		else if (d.type == IDL_DESC_PORT_ARRAY)
			ool_carried_ports_free((idl_port_t *)(uintptr_t)d.addr, d.size);
	}
}

int
idl__msg_consumes(const idl_msg_header_t *msg)
{
	const idl_desc_t *descs = (const idl_desc_t *)(const void *)(msg + 1);
	uint32_t n = ool_ndesc(msg);

	for (uint32_t i = 0; i < n; i++) {
		idl_desc_t d;

		memcpy(&d, &descs[i], sizeof d);
		if (idl__desc_moves(&d) || (d.flags & IDL_DESCF_FREE_ARRAY))
			return 1;
	}
	return 0;
}

int
idl__desc_count_ok(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, int request)
{
	uint32_t want = 0;

	for (uint32_t i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		int dir_ok = a->dir == IDL_DIR_INOUT ||
			     (request ? a->dir == IDL_DIR_IN : a->dir == IDL_DIR_OUT);

		if (dir_ok && (a->kind == IDL_ARG_PORT || a->kind == IDL_ARG_OOL))
			want++;
	}
	if (msg->size < IDL_MSG_HEADER_SIZE)
		return 0;
	if (want == 0)
		return !(msg->flags & IDL_MSGF_DESC) && msg->ndesc == 0;
	return (msg->flags & IDL_MSGF_DESC) && msg->ndesc == want &&
	       want <= (msg->size - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE;
}

int
idl__desc_out_check(const void *msg, size_t len, const char *scheme, uint32_t *nd)
{
	const idl_msg_header_t *h = msg;

	*nd = 0;
	if (h->kind != IDL_KIND_REQUEST && h->kind != IDL_KIND_REPLY && h->kind != IDL_KIND_ONEWAY)
		return idl__fail(IDL_EINVAL, "%s: descriptors in a message of kind %u", scheme,
				 h->kind);
	if (h->ndesc > IDL_DESC_MAX)
		return idl__fail(IDL_ELIMIT, "%s: %u descriptors in one message (at most %u)",
				 scheme, h->ndesc, IDL_DESC_MAX);
	if (len != h->size || h->ndesc > (len - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE)
		return idl__fail(IDL_EINVAL, "%s: %u descriptors in a %zu-byte message", scheme,
				 h->ndesc, len);
	*nd = h->ndesc;
	return 0;
}

int
idl__desc_in_check(const void *msg, size_t msize, const char *scheme, uint32_t *nd)
{
	const idl_msg_header_t *h = msg;

	*nd = 0;
	if (h->kind != IDL_KIND_REQUEST && h->kind != IDL_KIND_REPLY && h->kind != IDL_KIND_ONEWAY)
		return idl__fail(IDL_EPROTO, "%s: descriptors in a message of kind %u", scheme,
				 h->kind);
	if (msize < IDL_MSG_HEADER_SIZE || msize % IDL_MSG_ALIGN != 0)
		return idl__fail(IDL_EPROTO, "%s: a size field of %zu bytes", scheme, msize);
	if (h->ndesc > IDL_DESC_MAX || h->ndesc > (msize - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE)
		return idl__fail(IDL_EPROTO, "%s: %u descriptors in a %zu-byte message", scheme,
				 h->ndesc, msize);
	*nd = h->ndesc;
	return 0;
}
