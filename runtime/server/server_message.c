/*
 * server_message.c - idl_server_serve_message(): one message, given as bytes, served as a
 * receiving thread serves what a connection brings (<idl/idl_server.h>).
 *
 * It exists for fuzzing harnesses (idlc -fuzz) and tests: the bytes go through everything a
 * real server does before a demux runs - the descriptor conversion a transport makes, the
 * receive-size rule, then idl__srv_serve_one()'s checks of the header, the routine, its
 * descriptors, the limits and the authorisation hook - so that a harness finds only what a
 * server on a socket would suffer, not crashes the runtime's own checks prevent.
 *
 * Each call serves on a connection of its own that has said hello for every subsystem with
 * the server's own signature hashes (what a client generated from the same .defs sends).
 * The connection belongs to an in-memory transport, "message:", whose sends consume what a
 * message gives away and go nowhere; its ports are ports of that transport. A routine that
 * defers its reply keeps the connection until the reply is sent or discarded, by the
 * mechanism that keeps a closed connection for its deferred replies (server_loop.c).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_ool.h>

#include "server/server.h"

#define MSG_OOL_MAX (1u << 20) /* the largest out-of-line datum a message may bring */
#define MSG_PORTS_MAX 64u /* the most ports one array may bring */

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

/* Not registered: idl_port_open() never reaches it, only the ports made here use it. */
static const struct idl_transport msg_transport = {
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

/* A received port: a port of msg_transport, closed as any other. */
static idl_port_t
msg_port(void)
{
	void *state = idl__zalloc(msg_transport.conn_size);
	idl_port_t p = NULL;

	if (state == NULL)
		return NULL;
	return idl__port_adopt(&msg_transport, "message:port", state, &p) == 0 ? p : NULL;
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

/* internal.h says what it does; the fuzzers use it too. */
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

			if (x.size > MSG_OOL_MAX || x.size > len - off)
				break;
			if ((mem = idl_ool_alloc(x.size)) == NULL)
				break;
			memcpy(mem, (char *)buf + off, x.size);
			off += IDL_MSG_ROUND(x.size) < len - off ? IDL_MSG_ROUND(x.size)
								 : len - off;
			x.addr = (uint64_t)(uintptr_t)mem;
		} else if (x.type == IDL_DESC_PORT) {
			x.addr = (uint64_t)(uintptr_t)msg_port();
		} else if (x.type == IDL_DESC_PORT_ARRAY) {
			idl_port_t *ports;

			if (x.size > MSG_PORTS_MAX)
				break;
			if ((ports = idl_ool_alloc((size_t)x.size * sizeof *ports)) == NULL)
				break;
			for (uint32_t k = 0; k < x.size; k++)
				ports[k] = msg_port();
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

/* A connection and its endpoint in one block: the source comes first, so that freeing it
 * (idl__srv_src_free(), here or after the last deferred reply) frees both. Its connection
 * state is a block of its own, which the zombie's path frees apart. */
struct msg_conn {
	struct srv_src src;
	struct srv_ep ep;
};

/* A connection of srv that has said hello for every subsystem; NULL when out of memory. */
static struct srv_src *
msg_conn_new(struct idl_server *srv)
{
	struct msg_conn *c = calloc(1, sizeof *c);

	if (c == NULL)
		return NULL;
	c->ep.head.kind = IDL__PORT_ENDPOINT;
	c->ep.head.address = (char *)"message:";
	c->ep.srv = srv;
	c->ep.tr = &msg_transport;
	c->src.ep = &c->ep;
	c->src.cred_err = IDL_ENOTSUP;
	c->src.greeted = 1;
	if ((c->src.conn = idl__zalloc(msg_transport.conn_size)) == NULL ||
	    idl__srv_src_alloc(srv, &c->src) != 0) {
		free(c->src.conn);
		idl__srv_src_free(&c->src);
		return NULL;
	}
	/* The hello a client of the same interface says: its hashes are the server's. */
	for (size_t i = 0; i < srv->nsubs; i++) {
		const struct srv_ss *s = &srv->subs[i];
		const uint64_t *own = srv_ss_hashes(s, IDL_HELLO_VERSION);

		idl__hello_compare(s->ss, own, own, s->ss->nroutines,
				   c->src.hello.verdicts + s->vbase);
		c->src.hello.said[i] = 1;
	}
	return &c->src;
}

/* Done with a connection: freed now, or by the last of the deferred replies that hold it. */
static void
msg_conn_done(struct idl_server *srv, struct srv_src *src)
{
	int keep;

	pthread_mutex_lock(&srv->lock);
	keep = src->handles != 0;
	if (keep) {
		src->reaped = 1;
		idl__list_push_front(&srv->zombies, &src->link);
	}
	pthread_mutex_unlock(&srv->lock);
	if (!keep) {
		free(src->conn);
		idl__srv_src_free(src);
	}
}

int
idl_server_serve_message(idl_server_t *srv, const void *msg, size_t len, void *reply,
			 size_t reply_cap, size_t *reply_len)
{
	struct srv_src *src;
	unsigned char *wire;
	idl_msg_header_t *in, *out;
	size_t cap;
	uint32_t n;
	int running, rcv_err = 0, err = 0;

	idl__clear_detail();
	if (reply_len != NULL)
		*reply_len = 0;
	if (srv == NULL || (msg == NULL && len != 0) || (reply == NULL && reply_cap != 0))
		return idl__fail(IDL_EINVAL, "idl_server_serve_message: NULL argument");
	pthread_mutex_lock(&srv->lock);
	running = srv->running;
	if (!running)
		idl__srv_size_buffers(srv);
	pthread_mutex_unlock(&srv->lock);
	if (running)
		return idl__fail(IDL_EBUSY, "idl_server_serve_message: the server is running");

	/* The bytes as they came (cut at what a receive would take at most: 1 MiB of data
	 * beyond the largest request is more than any valid message brings), the request
	 * buffer and the reply buffer; 16-aligned, as a receiving thread's are. */
	cap = srv->rcap + MSG_OOL_MAX;
	if (len < cap)
		cap = len;
	wire = idl__zalloc(cap + IDL_MSG_HEADER_SIZE);
	in = idl__zalloc(srv->rcap);
	out = idl__zalloc(srv->scap);
	src = wire != NULL && in != NULL && out != NULL ? msg_conn_new(srv) : NULL;
	if (src == NULL) {
		err = idl__fail(IDL_ENOMEM, "idl_server_serve_message: out of memory");
		goto done;
	}
	if (cap > 0)
		memcpy(wire, msg, cap);
	if (idl__msg_convert(wire, cap) != 0) {
		/* Refused as a transport refuses it, its framing kept: answered from its header,
		 * nothing it names converted (idl__desc_refused()). */
		((idl_msg_header_t *)(void *)wire)->flags &= (uint8_t)~IDL_MSGF_DESC;
		rcv_err = IDL_EPROTO;
	} else if (idl__desc_msg(wire, cap)) {
		cap = ((idl_msg_header_t *)(void *)wire)->size;
	}
	/* The receive-size rule: a larger message is cut, with its true length, and what it
	 * carried is released. */
	if (cap > srv->rcap) {
		idl_msg_destroy((idl_msg_header_t *)(void *)wire);
		((idl_msg_header_t *)(void *)wire)->flags &= (uint8_t)~IDL_MSGF_DESC;
		memcpy(in, wire, srv->rcap);
		if (rcv_err == 0)
			rcv_err = IDL_EMSGSIZE;
	} else {
		memcpy(in, wire, cap);
	}
	n = idl__srv_serve_one(src, &src->hello, in, cap, rcv_err, out, NULL, NULL);
	if (n > reply_cap) {
		err = idl__fail(IDL_EMSGSIZE, "idl_server_serve_message: a reply of %u bytes",
				(unsigned)n);
	} else if (n > 0) {
		memcpy(reply, out, n);
		if (reply_len != NULL)
			*reply_len = n;
	}
	/* Sending consumes what the reply gives away. */
	if (n > 0 && idl__desc_msg(out, n))
		idl__msg_release_sent(out);
	msg_conn_done(srv, src);
done:
	free(wire);
	free(in);
	free(out);
	return err;
}

/*
 * The client's side of the same in-memory transport: idl_port_open_memory(), whose replies
 * come from the caller's struct idl_reply_source. Its connections are "memory:" ones; the
 * address carries nothing, each connection's state points at the source, so that the
 * connection a call makes again after giving one up reads the same source.
 */
struct mem_conn {
	struct idl_reply_source *src;
	idl_msg_header_t req; /* the header of the request last sent */
	int hello_pending;
};

static int
mem_connect(void *conn, const char *rest, struct idl_deadline *deadline)
{
	struct mem_conn *c = conn;
	void *src = NULL;

	(void)deadline;
	/* The address is the source's: "memory:" and its address, written by the open. */
	if (sscanf(rest, "%p", &src) != 1 || src == NULL)
		return IDL_EADDRINVAL;
	c->src = src;
	return 0;
}

static int
mem_send(void *conn, const struct idl_xmsg *m, struct idl_deadline *deadline)
{
	struct mem_conn *c = conn;

	(void)deadline;
	if (m->len >= sizeof c->req) {
		memcpy(&c->req, m->data, sizeof c->req);
		c->hello_pending = c->req.kind == IDL_KIND_HELLO;
	}
	if (idl__desc_msg(m->data, m->len))
		idl__msg_release_sent(m->data);
	return 0;
}

static int
mem_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *deadline)
{
	struct mem_conn *c = conn;
	struct idl_reply_source *src = c->src;
	unsigned char *wire;
	size_t n;
	int err = 0;

	(void)deadline;
	if (c->hello_pending) {
		uint64_t own[IDL_HELLO_MAX_ROUTINES];

		c->hello_pending = 0;
		if (m->cap < IDL_HELLO_MAX)
			return IDL_EMSGSIZE;
		idl__hello_hashes(src->ss, IDL_HELLO_VERSION, own);
		m->len = idl__hello_reply(src->ss, IDL_HELLO_VERSION, own, &c->req, m->data);
		return 0;
	}
	if (src->data == NULL)
		return IDL_ETIMEDOUT; /* one reply per call: a second wait times out */
	/* What a receive would take at most: the room given and 1 MiB of out-of-line data. */
	n = src->len < m->cap + MSG_OOL_MAX ? src->len : m->cap + MSG_OOL_MAX;
	if ((wire = idl__zalloc(n + IDL_MSG_HEADER_SIZE)) == NULL)
		return IDL_ENOMEM;
	memcpy(wire, src->data, n);
	src->data = NULL;
	if (n >= IDL_MSG_HEADER_SIZE)
		((idl_msg_header_t *)(void *)wire)->seqno = c->req.seqno;
	/* What a transport does: descriptors converted where the message came (a malformed
	 * one refused), then the message handed over. */
	if (idl__msg_convert(wire, n) != 0) {
		/* Refused, its framing kept: the call it answers fails, and only that one. */
		((idl_msg_header_t *)(void *)wire)->flags &= (uint8_t)~IDL_MSGF_DESC;
		memcpy(m->data, wire, n < m->cap ? n : m->cap);
		free(wire);
		m->len = n;
		return idl__fail(IDL_EPROTO, "memory: a reply with malformed descriptors");
	}
	if (idl__desc_msg(wire, n))
		n = ((idl_msg_header_t *)(void *)wire)->size;
	if (n > m->cap) {
		/* The receive-size rule: cut, its true size told, what it carried released. */
		idl_msg_destroy((idl_msg_header_t *)(void *)wire);
		if (n >= IDL_MSG_HEADER_SIZE)
			((idl_msg_header_t *)(void *)wire)->flags &= (uint8_t)~IDL_MSGF_DESC;
		memcpy(m->data, wire, m->cap);
		err = IDL_EMSGSIZE;
	} else {
		memcpy(m->data, wire, n);
	}
	m->len = n;
	free(wire);
	return err;
}

static const struct idl_transport mem_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "memory",
	.flags = IDL_TRF_DESC | IDL_TRF_FDPASS,
	.ep_size = 16,
	.conn_size = sizeof(struct mem_conn),
	.ep_listen = msg_listen,
	.ep_fd = msg_fd,
	.ep_accept = msg_accept,
	.ep_close = msg_void,
	.ep_fini = msg_void,
	.conn_connect = mem_connect,
	.conn_send = mem_send,
	.conn_recv = mem_recv,
	.conn_close = msg_void,
	.conn_fini = msg_void,
};

int
idl_port_open_memory(struct idl_reply_source *src, idl_port_t *portp)
{
	char address[64];
	void *state;

	idl__clear_detail();
	if (portp != NULL)
		*portp = NULL;
	if (src == NULL || src->ss == NULL || portp == NULL)
		return idl__fail(IDL_EINVAL, "idl_port_open_memory: NULL argument");
	if (src->ss->nroutines > IDL_HELLO_MAX_ROUTINES)
		return idl__fail(IDL_EINVAL, "idl_port_open_memory: too many routines");
	snprintf(address, sizeof address, "memory:%p", (void *)src);
	if ((state = idl__zalloc(mem_transport.conn_size)) == NULL)
		return idl__fail(IDL_ENOMEM, "idl_port_open_memory: out of memory");
	mem_connect(state, strchr(address, ':') + 1, NULL);
	return idl__port_adopt(&mem_transport, address, state, portp);
}
