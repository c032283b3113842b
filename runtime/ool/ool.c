/*
 * ool.c - out-of-line memory (<idl/idl_ool.h> is the contract): its allocation, its release
 * to whichever owner it has, and memory for sending on a port.
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

#include "client/client.h"
#include "ool/ool.h"
#include "ool/ool_cache.h"

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
