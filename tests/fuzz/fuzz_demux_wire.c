/*
 * fuzz_demux_wire.c - the fuzzers' stand-in transport (fuzz_demux_wire.h).
 */
#include <config.h>

#include "ool/ool.h"

#include "fuzz_demux_wire.h"

static int
fz_ok(void)
{
	return 0;
}

static int
fz_listen(void *ep, const char *rest, const struct idl_listen_opts *o)
{
	(void)ep;
	(void)rest;
	(void)o;
	return IDL_ENOTSUP;
}

static int
fz_fd(void *ep)
{
	(void)ep;
	return -1;
}

static int
fz_accept(void *ep, void *conn)
{
	(void)ep;
	(void)conn;
	return IDL_ENOTSUP;
}

static void
fz_void(void *p)
{
	(void)p;
}

static int
fz_connect(void *conn, const char *rest, struct idl_deadline *dl)
{
	(void)conn;
	(void)rest;
	(void)dl;
	return fz_ok();
}

/* A send consumes what the message gives away, as every transport's does. */
static int
fz_send(void *conn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	(void)conn;
	(void)dl;
	if (idl__desc_msg(m->data, m->len))
		idl__msg_release_sent(m->data);
	return 0;
}

static int
fz_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	(void)conn;
	(void)m;
	(void)dl;
	return MIG_SERVER_DIED;
}

const struct idl_transport fz_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "fuzz",
	.flags = IDL_TRF_DESC | IDL_TRF_FDPASS,
	.ep_size = 16,
	.conn_size = 16,
	.ep_listen = fz_listen,
	.ep_fd = fz_fd,
	.ep_accept = fz_accept,
	.ep_close = fz_void,
	.ep_fini = fz_void,
	.conn_connect = fz_connect,
	.conn_send = fz_send,
	.conn_recv = fz_recv,
	.conn_close = fz_void,
	.conn_fini = fz_void,
};
