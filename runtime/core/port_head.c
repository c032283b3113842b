/*
 * port_head.c - what every idl_port_t is to the rooms that do not make ports: its head
 * (core.h). The address is read from the head; a close, and memory for sending on it, go
 * through the ops the room that made the handle installed (the client's port, the server's
 * endpoint handle); a port is made around a received connection by the port class that
 * runtime/builtins.c installs (the client's). This file knows nothing of either room.
 */
#include <config.h>

#include <stdlib.h>

#include "core/core.h"

/* Written once, by idl__builtins() inside the registry's pthread_once, and read after
 * idl__registry_ready(), which orders the two. */
static const struct idl__port_class *port_class;

void
idl__port_class_set(const struct idl__port_class *cls)
{
	port_class = cls;
}

int
idl__port_adopt(const struct idl_transport *tr, const char *address, void *tr_state,
		idl_port_t *portp)
{
	*portp = NULL;
	idl__registry_ready();
	if (port_class == NULL) {
		tr->conn_fini(tr_state);
		free(tr_state);
		return idl__fail(IDL_ENOTSUP, "%s: this library makes no client ports", address);
	}
	return port_class->adopt(tr, address, tr_state, portp);
}

void
idl_port_close(idl_port_t port)
{
	const struct idl__port_head *h = (const struct idl__port_head *)port;

	if (h != NULL && h->ops != NULL && h->ops->close != NULL)
		h->ops->close(port);
}

const char *
idl_port_address(idl_port_t port)
{
	/* Client ports and server endpoint handles both start with the head. */
	if (port == NULL)
		return NULL;
	return ((const struct idl__port_head *)port)->address;
}

const char *
idl__port_address(idl_port_t port)
{
	const struct idl__port_head *h = (const struct idl__port_head *)port;

	if (h == NULL || (h->kind != IDL__PORT_CLIENT && h->kind != IDL__HANDLE_ENDPOINT))
		return NULL;
	return h->address;
}
