/*
 * port_memory.c - idl_port_open_memory() (<idl/idl_server.h>): a client port whose replies
 * come from the caller's struct idl_reply_source, for tests and fuzzing harnesses of the
 * client's stubs. Its connections are "memory:" ones: the address carries nothing, each
 * connection's state points at the source, so that the connection a call makes again after
 * giving one up reads the same source. A reply goes through what a transport does to it
 * (ool/ool_convert.c) and the receive-size rule, as one from a socket would.
 *
 * It has the event operations too, and connects without waiting, so that a pollable port
 * (calls in flight, <idl/idl_async.h>) drives it on the caller's thread, without the threads
 * a transport without them gets (one to connect, a receiver and a sender): a harness's
 * asynchronous call then completes in its own dispatch, deterministically. The descriptor is
 * an eventfd, readable while a receive has something to give (a hello reply owed, or the
 * source's reply to a request sent), as a socket's would be. It knows the client's port
 * class and nothing of the server.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <idl/idl_ool.h>
#include <idl/idl_port.h>

#include "client/client.h"

struct mem_conn {
	struct idl_reply_source *src;
	idl_msg_header_t req; /* the header of the request last sent */
	int hello_pending;
	int awaiting; /* a request went since the last reply (the event operations') */
	int efd; /* the eventfd: valid once src is set */
	int signalled; /* efd holds a count: readable */
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
	if ((c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return idl__fail(IDL_ESYSERR(errno), "memory: eventfd: %s", strerror(errno));
	c->src = src;
	return 0;
}

/* Connecting never waits: it is done at once, on the caller's thread (a pollable port would
 * otherwise connect a transport without this on a thread of its own). */
static int
mem_connect_nb(void *conn, const char *rest)
{
	return mem_connect(conn, rest, NULL);
}

static int
mem_connect_step(void *conn)
{
	(void)conn;
	return 0;
}

static void
mem_conn_fini(void *conn)
{
	struct mem_conn *c = conn;

	if (c->src != NULL)
		close(c->efd);
	c->src = NULL;
}

/* Whether mem_recv_nb() has a message to give: the source's reply waits for its request,
 * so that a reply is never taken for the hello that goes before it. */
static int
mem_has(const struct mem_conn *c)
{
	return c->hello_pending || (c->awaiting && c->src->data != NULL);
}

/* Makes the descriptor readable exactly while a receive would give a message. */
static void
mem_ready(struct mem_conn *c)
{
	int ready = mem_has(c);
	uint64_t v = 1;

	if (ready && !c->signalled)
		c->signalled = write(c->efd, &v, sizeof v) == (ssize_t)sizeof v;
	else if (!ready && c->signalled)
		c->signalled = read(c->efd, &v, sizeof v) != (ssize_t)sizeof v;
}

static int
mem_fd(void *conn, unsigned *events)
{
	struct mem_conn *c = conn;

	*events = IDL_TR_EV_IN;
	return c->efd;
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
	n = src->len < m->cap + IDL__MSG_OOL_MAX ? src->len : m->cap + IDL__MSG_OOL_MAX;
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

/* Sends are what mem_send does with each; the source's reply is then there to receive. */
static int
mem_sendv_nb(void *conn, const struct idl_xmsg *msgs, unsigned n)
{
	struct mem_conn *c = conn;

	for (unsigned i = 0; i < n; i++) {
		mem_send(conn, &msgs[i], NULL);
		if (c->req.kind == IDL_KIND_REQUEST)
			c->awaiting = 1;
	}
	mem_ready(c);
	return (int)n;
}

static int
mem_recv_nb(void *conn, struct idl_xmsg *m)
{
	struct mem_conn *c = conn;
	int err = IDL_EAGAIN;

	if (mem_has(c)) {
		if (!c->hello_pending)
			c->awaiting = 0;
		err = mem_recv(conn, m, NULL);
	}
	mem_ready(c);
	return err;
}

static void
mem_void(void *conn)
{
	(void)conn;
}

/* Not registered, and never listened on: only the ports idl_port_open_memory() makes use
 * it, so it has the ops of a client's connection alone. */
static const struct idl_transport mem_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "memory",
	.flags = IDL_TRF_DESC | IDL_TRF_FDPASS,
	.conn_size = sizeof(struct mem_conn),
	.conn_connect = mem_connect,
	.conn_send = mem_send,
	.conn_recv = mem_recv,
	.conn_close = mem_void,
	.conn_fini = mem_conn_fini,
	.conn_fd = mem_fd,
	.conn_sendv_nb = mem_sendv_nb,
	.conn_recv_nb = mem_recv_nb,
	.conn_connect_nb = mem_connect_nb,
	.conn_connect_step = mem_connect_step,
};
int
idl_port_open_memory(struct idl_reply_source *src, idl_port_t *portp)
{
	char address[64];
	void *state;
	int err;

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
	if ((err = mem_connect(state, strchr(address, ':') + 1, NULL)) != 0) {
		free(state);
		return err;
	}
	return idl__cl_port_adopt(&mem_transport, address, state, portp);
}
