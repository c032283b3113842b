/*
 * builtins.c - what libidlrt is assembled from: the transports built into it, registered
 * once before the registry's first lookup (core/registry.c calls idl__builtins() through
 * pthread_once), and the client's port class, with which core makes a port of a connection
 * that arrived in a message (core/port_head.c).
 *
 * This is the one file of the runtime that calls upward: the rooms under runtime/ depend
 * one way (core, ool, interp, trace, client, server, dynamic; docs/architecture.md), and
 * the transports stand above core and ool. The list below is the only place that names
 * them; tests/lint/rooms.sh allows these calls and no other upward one.
 */
#include <config.h>

#include "client/client.h"
#include "core/core.h"

void
idl__builtins(void)
{
	idl__port_class_set(&idl__client_port_class);
#if HAVE_TRANSPORT_UNIX
	idl__unix_register();
#endif
#if HAVE_TRANSPORT_TCP
	idl__tcp_register();
#endif
#if HAVE_TRANSPORT_UDP
	idl__udp_register();
#endif
#if HAVE_TRANSPORT_SHM
	idl__shm_register();
#endif
#if HAVE_TRANSPORT_PORT
	idl__mq_register();
#endif
#if HAVE_TRANSPORT_TLS
	idl__tls_register();
#endif
}
