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
 *
 * The ool room: it knows core (the port head's ops, the transports' ool_free through the
 * registry) and nothing of the client or the server.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <idl/idl_ool.h>

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

void *
idl_ool_alloc_port(idl_port_t port, size_t size)
{
	const struct idl__port_head *h = (const struct idl__port_head *)port;
	void *p = NULL;

	/* The handle's room knows its transport and connection (client/port.c, the server's
	 * endpoint handle in server/server_request.c). */
	if (size != 0 && h != NULL && h->ops != NULL && h->ops->ool_alloc != NULL)
		p = h->ops->ool_alloc(port, size);
	return p != NULL ? p : idl_ool_alloc(size);
}
