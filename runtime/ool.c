/*
 * ool.c - out-of-line memory, the release of what messages carry, and the client's view of
 * its peer's credentials (<idl/idl_ool.h> is the contract).
 *
 * Memory. Blocks below IDL_OOL_MAP_MIN bytes come from calloc (malloc keeps and reuses small
 * chunks itself); blocks of that size or more are page-aligned mappings from the process's
 * cache of out-of-line blocks (ool_cache.c), which keeps freed ones, faulted in, for the next
 * block of their size class, up to one byte bound for the process. Whatever else in the
 * runtime hands out out-of-line memory follows the same split - a unix: receiver maps a
 * memfd of at least that size and copies a smaller one, tcp:/udp:/port: receivers allocate
 * here - so idl_ool_free(), once each transport that has memory of its own (shm:'s arenas)
 * has said the address is not its, tells the kinds apart: below the threshold, malloc
 * memory; from it up, the cache's block if its table has the address, else a mapping of
 * someone else's (a received memfd), unmapped.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <idl/idl_ool.h>

#include "client.h"
#include "ool_cache.h"

void *
idl_ool_alloc(size_t size)
{
	if (size < IDL_OOL_MAP_MIN)
		return calloc(1, size != 0 ? size : 1);
	return idl__ool_cache_get(size, 1);
}

void *
idl__ool_alloc_fill(size_t size)
{
	if (size < IDL_OOL_MAP_MIN)
		return calloc(1, size != 0 ? size : 1);
	return idl__ool_cache_get(size, 0);
}

void
idl__ool_free_plain(void *addr, size_t size)
{
	if (addr == NULL)
		return;
	if (size < IDL_OOL_MAP_MIN) {
		free(addr);
	} else if (!idl__ool_cache_put(addr, size)) {
		/* A mapping not in the cache's table - a block too large for it to keep, or a
		 * received memfd's - of `size` bytes, which munmap rounds up to whole pages. */
		munmap(addr, size);
	}
}

void
idl_ool_free(void *addr, size_t size)
{
	if (addr == NULL)
		return;
	if (idl__transport_ool_free(addr, size))
		return;
	idl__ool_free_plain(addr, size);
}

/* The transport and connection state of a client port's live connection, with a reference
 * taken (release with idl__cl_conn_unref, without the port's lock: the last reference frees
 * the connection, and a transport's clean-up may wait a moment for its peer); 0 when it has
 * none. */
static struct cl_conn *
ool_client_conn(struct idl_port *p)
{
	struct cl_conn *c;

	pthread_mutex_lock(&p->lock);
	c = p->conn;
	if (c != NULL && !c->dead)
		c->refs++;
	else
		c = NULL;
	pthread_mutex_unlock(&p->lock);
	return c;
}

void *
idl_ool_alloc_port(idl_port_t port, size_t size)
{
	const struct idl__port_head *h = (const struct idl__port_head *)port;
	const struct idl_transport *tr = NULL;
	void *conn = NULL, *p = NULL;

	if (size == 0 || port == NULL)
		return idl_ool_alloc(size);
	if (h->kind == IDL__PORT_CLIENT) {
		struct cl_conn *c;

		if (IDL__TR_OP(port->tr, conn_ool_alloc) == NULL ||
		    (c = ool_client_conn(port)) == NULL)
			return idl_ool_alloc(size);
		p = IDL__TR_OP(port->tr, conn_ool_alloc)(c->tr_state, size);
		idl__cl_conn_unref(port, c);
	} else if (h->kind == IDL__PORT_ENDPOINT && port == idl_request_port() &&
		   idl__request_conn(&tr, &conn) == 0 && IDL__TR_OP(tr, conn_ool_alloc) != NULL) {
		/* The request's connection is busy with this request until the routine
		 * returns, so it is alive while its memory is taken. */
		p = IDL__TR_OP(tr, conn_ool_alloc)(conn, size);
	}
	return p != NULL ? p : idl_ool_alloc(size);
}

/* Closes the ports of an array of n and frees the array's memory. */
static void
ool_port_array_free(idl_port_t *ports, uint32_t n)
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
			ool_port_array_free((idl_port_t *)(uintptr_t)d.addr, d.size);
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
			ool_port_array_free((idl_port_t *)(uintptr_t)d.addr, d.size);
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

int
idl_port_cred(idl_port_t port, struct idl_cred *cred)
{
	const struct idl__port_head *h = (const struct idl__port_head *)port;
	struct cl_conn *c;
	int err;

	if (cred == NULL)
		return IDL_EINVAL;
	memset(cred, 0, sizeof *cred);
	if (port == NULL || h->kind != IDL__PORT_CLIENT)
		return IDL_EINVAL;
	if ((c = ool_client_conn(port)) == NULL)
		return IDL_EINVAL;
	err = IDL__TR_OP(port->tr, conn_cred) != NULL
		      ? IDL__TR_OP(port->tr, conn_cred)(c->tr_state, cred)
		      : IDL_ENOTSUP;
	idl__cl_conn_unref(port, c);
	return err;
}
