/*
 * tcp.c - the tcp: transport, "tcp:HOST:PORT" (sock/inet.h has the syntax;
 * docs/transports/tcp.md the semantics): the length-framed stream of sock/stream.h over a
 * TCP connection, registered as it is.
 */
#include <config.h>

#include <assert.h>

#include "sock/stream.h"

static const struct idl_transport tcp_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "tcp",
	/* Not IDL_TRF_STREAM: the length prefix keeps the framing even across an oversized
	 * message, so the core need not close a connection after IDL_EMSGSIZE. */
	.flags = IDL_TRF_DESC,
	.ep_size = sizeof(struct stream_ep),
	.conn_size = sizeof(struct stream_conn),
	.ep_listen = idl__stream_ep_listen,
	.ep_fd = idl__stream_ep_fd,
	.ep_accept = idl__stream_ep_accept,
	.ep_close = idl__stream_ep_close,
	.ep_fini = idl__stream_ep_fini,
	.conn_connect = idl__stream_conn_connect,
	.conn_send = idl__stream_conn_send,
	.conn_recv = idl__stream_conn_recv,
	.conn_close = idl__stream_conn_close,
	.conn_fini = idl__stream_conn_fini,
	.conn_cred = idl__stream_conn_cred,
	.conn_fd = idl__stream_conn_fd,
	.conn_sendv_nb = idl__stream_conn_sendv_nb,
	.conn_recv_nb = idl__stream_conn_recv_nb,
	.conn_recv_wait = idl__stream_conn_recv_wait,
	.conn_connect_nb = idl__stream_connect_nb,
	.conn_connect_step = idl__stream_connect_step,
	.ep_adopt = idl__stream_ep_adopt,
};

void
idl__tcp_register(void)
{
	int err = idl_transport_register(&tcp_transport);

	assert(err == 0);
	(void)err;
}
