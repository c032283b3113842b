/*
 * cred.c - the client's view of its peer's credentials (idl_port_cred(), <idl/idl_ool.h>):
 * what the transport of a client port's live connection says of the process at its other
 * end. It knows the client's port and connection (client.h) and nothing of the server.
 */
#include <config.h>

#include <string.h>

#include <idl/idl_ool.h>

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
