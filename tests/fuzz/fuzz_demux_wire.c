/*
 * fuzz_demux_wire.c - the fuzzers' stand-in transport and descriptor conversion
 * (fuzz_demux_wire.h).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "fuzz_demux_wire.h"

#define FZ_OOL_MAX (1u << 20)
#define FZ_PORTS_MAX 64u

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

static idl_port_t
fz_port(void)
{
	void *state = idl__zalloc(fz_transport.conn_size);
	idl_port_t p = NULL;

	if (state == NULL)
		return NULL;
	return idl__port_adopt(&fz_transport, "fuzz:port", state, &p) == 0 ? p : NULL;
}

/* Releases the first n converted descriptors of msg. */
static void
fz_undo(idl_msg_header_t *msg, uint32_t n)
{
	uint32_t ndesc = msg->ndesc;

	msg->ndesc = n;
	idl_msg_destroy(msg);
	msg->ndesc = ndesc;
}

int
fz_convert(void *buf, size_t len)
{
	idl_msg_header_t *h = buf;
	idl_desc_t *d = (idl_desc_t *)(void *)(h + 1);
	size_t off;
	uint32_t nd, i;

	if (!idl__desc_msg(buf, len))
		return 0;
	if (h->size > len || idl__desc_in_check(buf, h->size, "fuzz", &nd) != 0)
		return -1;
	off = h->size;
	for (i = 0; i < nd; i++) {
		idl_desc_t x;

		memcpy(&x, &d[i], sizeof x);
		if (x.type == IDL_DESC_OOL) {
			void *mem;

			if (x.size > FZ_OOL_MAX || x.size > len - off)
				break;
			if ((mem = idl_ool_alloc(x.size)) == NULL && x.size != 0)
				break;
			memcpy(mem, (char *)buf + off, x.size);
			off += IDL_MSG_ROUND(x.size) < len - off ? IDL_MSG_ROUND(x.size)
								 : len - off;
			x.addr = (uint64_t)(uintptr_t)mem;
		} else if (x.type == IDL_DESC_PORT) {
			x.addr = (uint64_t)(uintptr_t)fz_port();
		} else if (x.type == IDL_DESC_PORT_ARRAY) {
			idl_port_t *ports;

			if (x.size > FZ_PORTS_MAX)
				break;
			if ((ports = idl_ool_alloc((size_t)x.size * sizeof *ports)) == NULL &&
			    x.size != 0)
				break;
			for (uint32_t k = 0; k < x.size; k++)
				ports[k] = fz_port();
			x.addr = (uint64_t)(uintptr_t)ports;
		} else {
			break;
		}
		memcpy(&d[i], &x, sizeof x);
	}
	if (i == nd)
		return 0;
	fz_undo(h, i);
	return -1;
}
