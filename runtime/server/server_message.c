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
 * The connection belongs to the in-memory transport "message:" (ool/ool_convert.c), whose
 * sends consume what a message gives away and go nowhere; its carried ports are ports of
 * that transport. The client's memory port is client/port_memory.c. A routine that
 * defers its reply keeps the connection until the reply is sent or discarded, by the
 * mechanism that keeps a closed connection for its deferred replies (server_loop.c).
 *
 * The server room: it uses ool's in-memory transport, and never the client (whose memory
 * port is client/port_memory.c).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_ool.h>

#include "server/server.h"

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
	c->ep.head.kind = IDL__HANDLE_ENDPOINT;
	c->ep.head.ops = &idl__srv_endpoint_ops;
	c->ep.head.address = (char *)"message:";
	c->ep.srv = srv;
	c->ep.tr = &idl__msg_transport;
	c->src.ep = &c->ep;
	c->src.cred_err = IDL_ENOTSUP;
	c->src.greeted = 1;
	if ((c->src.conn = idl__zalloc(idl__msg_transport.conn_size)) == NULL ||
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
	cap = srv->rcap + IDL__MSG_OOL_MAX;
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
