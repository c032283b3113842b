/*
 * cred.c - the client's view of its peer's credentials (idl_port_cred(), <idl/idl_ool.h>):
 * what the transport of a client port's live connection says of the process at its other
 * end, and the identity of a TLS session's peer (idl_port_peer_tls(), <idl/idl_tls.h>). It
 * knows the client's port and connection (client.h) and nothing of the server.
 */
#include <config.h>

#include <string.h>

#include <idl/idl_ool.h>
#include <idl/idl_tls.h>

#include "client/client.h"

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
	if ((c = idl__cl_conn_live(port)) == NULL)
		return IDL_EINVAL;
	err = IDL__TR_OP(port->tr, conn_cred) != NULL
		      ? IDL__TR_OP(port->tr, conn_cred)(c->tr_state, cred)
		      : IDL_ENOTSUP;
	idl__cl_conn_unref(port, c);
	return err;
}

int
idl_port_peer_tls(idl_port_t port, struct idl_tls_peer **peerp)
{
	const struct idl__port_head *h = (const struct idl__port_head *)port;
	struct cl_conn *c;
	int err;

	idl__clear_detail();
	if (peerp == NULL)
		return IDL_EINVAL;
	*peerp = NULL;
	if (port == NULL || h->kind != IDL__PORT_CLIENT)
		return IDL_EINVAL;
	if (IDL__TR_OP(port->tr, conn_tls_peer) == NULL)
		return IDL_ENOTSUP;
	pthread_mutex_lock(&port->lock);
	err = idl__cl_conn_get(port, &(struct idl_deadline){ 0, atomic_load(&port->timeout_ms) },
			       &c);
	pthread_mutex_unlock(&port->lock);
	if (err != 0)
		return err;
	err = IDL__TR_OP(port->tr, conn_tls_peer)(c->tr_state, peerp);
	pthread_mutex_lock(&port->lock);
	idl__cl_conn_unref(port, c);
	pthread_mutex_unlock(&port->lock);
	return err;
}
