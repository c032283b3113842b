/*
 * ool_convert.c - what a transport with IDL_TRF_DESC does to a message before the rooms
 * above see it, done in memory (idl__msg_convert()): the data of its out-of-line
 * descriptors, carried inline after the message, become memory of their own, and its
 * carried ports become ports of the in-memory transport "message:", whose operations do
 * nothing. The server's harness (server/server_message.c), the client's memory port
 * (client/port_memory.c) and the fuzzers use it. It knows ports through core's port head
 * (idl__port_adopt()) and nothing of the client or the server.
 */
#include <config.h>

#include <string.h>

#include <idl/idl_ool.h>

#include "ool/ool.h"

#define CONV_PORTS_MAX 64u /* the most ports one array may bring */

static int
msg_listen(void *ep, const char *rest, const struct idl_listen_opts *o)
{
	(void)ep;
	(void)rest;
	(void)o;
	return IDL_ENOTSUP;
}

static int
msg_fd(void *ep)
{
	(void)ep;
	return -1;
}

static int
msg_accept(void *ep, void *conn)
{
	(void)ep;
	(void)conn;
	return IDL_ENOTSUP;
}

static void
msg_void(void *p)
{
	(void)p;
}

static int
msg_connect(void *conn, const char *rest, struct idl_deadline *deadline)
{
	(void)conn;
	(void)rest;
	(void)deadline;
	return 0;
}

/* A send consumes what the message gives away, as every transport's does. */
static int
msg_send(void *conn, const struct idl_xmsg *m, struct idl_deadline *deadline)
{
	(void)conn;
	(void)deadline;
	if (idl__desc_msg(m->data, m->len))
		idl__msg_release_sent(m->data);
	return 0;
}

static int
msg_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *deadline)
{
	(void)conn;
	(void)m;
	(void)deadline;
	return MIG_SERVER_DIED;
}

/* Not registered: idl_port_open() never reaches it, only the carried ports made here and
 * the server's in-memory connections (server/server_message.c) use it. */
const struct idl_transport idl__msg_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "message",
	.flags = IDL_TRF_DESC | IDL_TRF_FDPASS,
	.ep_size = 16,
	.conn_size = 16,
	.ep_listen = msg_listen,
	.ep_fd = msg_fd,
	.ep_accept = msg_accept,
	.ep_close = msg_void,
	.ep_fini = msg_void,
	.conn_connect = msg_connect,
	.conn_send = msg_send,
	.conn_recv = msg_recv,
	.conn_close = msg_void,
	.conn_fini = msg_void,
};

/* A carried port that arrived: a port of idl__msg_transport, closed as any other. */
static idl_port_t
conv_carried_port(void)
{
	void *state = idl__zalloc(idl__msg_transport.conn_size);
	idl_port_t p = NULL;

	if (state == NULL)
		return NULL;
	return idl__port_adopt(&idl__msg_transport, "message:port", state, &p) == 0 ? p : NULL;
}

/* Releases the first n converted descriptors of msg. */
static void
msg_undo(idl_msg_header_t *msg, uint32_t n)
{
	uint32_t ndesc = msg->ndesc;

	msg->ndesc = n;
	idl_msg_destroy(msg);
	msg->ndesc = ndesc;
}

/* ool.h says what it does; the fuzzers use it too. */
int
idl__msg_convert(void *buf, size_t len)
{
	idl_msg_header_t *h = buf;
	idl_desc_t *d = (idl_desc_t *)(void *)(h + 1);
	size_t off;
	uint32_t nd, i;

	if (!idl__desc_msg(buf, len))
		return 0;
	if (h->size > len || idl__desc_in_check(buf, h->size, "message", &nd) != 0)
		return IDL_EPROTO;
	off = h->size;
	for (i = 0; i < nd; i++) {
		idl_desc_t x;

		memcpy(&x, &d[i], sizeof x);
		if (x.type == IDL_DESC_OOL) {
			void *mem;

			if (x.size > IDL__MSG_OOL_MAX || x.size > len - off)
				break;
			if ((mem = idl_ool_alloc(x.size)) == NULL)
				break;
			memcpy(mem, (char *)buf + off, x.size);
			off += IDL_MSG_ROUND(x.size) < len - off ? IDL_MSG_ROUND(x.size)
								 : len - off;
			x.addr = (uint64_t)(uintptr_t)mem;
		} else if (x.type == IDL_DESC_PORT) {
			x.addr = (uint64_t)(uintptr_t)conv_carried_port();
		} else if (x.type == IDL_DESC_PORT_ARRAY) {
			idl_port_t *ports;

			if (x.size > CONV_PORTS_MAX)
				break;
			if ((ports = idl_ool_alloc((size_t)x.size * sizeof *ports)) == NULL)
				break;
			for (uint32_t k = 0; k < x.size; k++)
				ports[k] = conv_carried_port();
			x.addr = (uint64_t)(uintptr_t)ports;
		} else {
			break;
		}
		memcpy(&d[i], &x, sizeof x);
	}
	if (i == nd)
		return 0;
	msg_undo(h, i);
	return IDL_EPROTO;
}
