/*
 * serve.c - the receiving threads of a server and the checks every message goes through
 * before a demux sees it.
 *
 * Each source (an accepted connection, or a message endpoint) has one thread that blocks in
 * the transport's receive: one kernel entry per message. The runtime checks the header,
 * answers hellos, refuses requests that came before their subsystem's hello or whose
 * routine's signature differs, then calls the demux under the dispatch lock and sends its
 * reply. A malformed message gets an error reply and the source keeps being served.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "server.h"

#define SERVE_OTHER_ORDER \
	(IDL_ORDER_NATIVE == IDL_ORDER_LITTLE ? IDL_ORDER_BIG : IDL_ORDER_LITTLE)
/* A reply to a client that does not read fails after this long and drops the client. */
#define SERVE_SEND_TIMEOUT_MS 30000
/* Consecutive receive errors after which a message endpoint's thread gives up. */
#define SERVE_EP_MAX_FAILURES 1000

static _Thread_local const struct idl__request *serve_current;

void
idl__set_request(const struct idl__request *rq)
{
	serve_current = rq;
}

int
idl_request_cred(struct idl_cred *cred)
{
	const struct idl__request *rq = serve_current;

	if (cred == NULL)
		return IDL_EINVAL;
	memset(cred, 0, sizeof *cred);
	if (rq == NULL)
		return IDL_EINVAL;
	if (rq->conn == NULL || rq->tr->conn_cred == NULL)
		return IDL_ENOTSUP;
	return rq->tr->conn_cred(rq->conn, cred);
}

idl_port_t
idl_request_port(void)
{
	const struct idl__request *rq = serve_current;

	return rq != NULL ? rq->port : IDL_PORT_NULL;
}

static int
serve_hello_alloc(const struct idl_server *srv, struct srv_hello *h)
{
	h->said = calloc(srv->nsubs, 1);
	h->verdicts = calloc(srv->nverdicts + 1u, 1);
	return h->said != NULL && h->verdicts != NULL ? 0 : IDL_ENOMEM;
}

int
idl__srv_src_alloc(struct idl_server *srv, struct srv_src *src)
{
	src->srv = srv;
	src->rbuf = idl__zalloc(srv->rcap);
	src->sbuf = idl__zalloc(srv->scap);
	if (src->rbuf == NULL || src->sbuf == NULL)
		return IDL_ENOMEM;
	if (src->conn != NULL)
		return serve_hello_alloc(srv, &src->hello);
	/* A message endpoint's peers get their hello state when they first appear. */
	src->peers = calloc(SRV_PEER_SLOTS, sizeof *src->peers);
	return src->peers != NULL ? 0 : IDL_ENOMEM;
}

void
idl__srv_src_free(struct srv_src *src)
{
	free(src->rbuf);
	free(src->sbuf);
	free(src->hello.said);
	free(src->hello.verdicts);
	if (src->peers != NULL) {
		for (unsigned i = 0; i < SRV_PEER_SLOTS; i++) {
			free(src->peers[i].hello.said);
			free(src->peers[i].hello.verdicts);
		}
		free(src->peers);
	}
	free(src);
}

/* The reply to a message in the other byte order, written in that order so that the
 * sender can read it. */
static uint32_t
serve_other_order(const idl_msg_header_t *in, idl_msg_header_t *out)
{
	memset(out, 0, sizeof *out);
	out->magic = IDL_MSG_MAGIC;
	out->order = in->order;
	out->kind = in->kind == IDL_KIND_HELLO ? IDL_KIND_HELLO_REPLY : IDL_KIND_REPLY;
	out->size = __builtin_bswap32(IDL_MSG_HEADER_SIZE);
	out->id = (int32_t)__builtin_bswap32(__builtin_bswap32((uint32_t)in->id) +
					     IDL_REPLY_ID_OFFSET);
	out->seqno = in->seqno;
	out->retcode = (int32_t)__builtin_bswap32((uint32_t)IDL_EBYTEORDER);
	return IDL_MSG_HEADER_SIZE;
}

static const struct srv_ss *
serve_find_id(const struct idl_server *srv, int32_t id, size_t *index)
{
	for (size_t i = 0; i < srv->nsubs; i++) {
		const struct idl_subsystem *ss = srv->subs[i].ss;

		if ((uint32_t)id - (uint32_t)ss->base < ss->nroutines) {
			*index = i;
			return &srv->subs[i];
		}
	}
	return NULL;
}

static int
serve_hello(const struct idl_server *srv, struct srv_hello *hs, const idl_msg_header_t *in,
	    size_t len, idl_msg_header_t *out, uint32_t *outlen)
{
	const struct idl__hello_body *b;
	const char *name;
	int err;

	if ((err = idl__hello_parse(in, len, &name, &b)) != 0)
		return err;
	for (size_t i = 0; i < srv->nsubs; i++) {
		const struct srv_ss *s = &srv->subs[i];

		if (strcmp(s->ss->name, name) != 0 || s->ss->base != b->base)
			continue;
		idl__hello_compare(s->ss, b->hashes, b->nroutines, hs->verdicts + s->vbase);
		hs->said[i] = 1;
		*outlen = idl__hello_reply(s->ss, in, out);
		return 0;
	}
	return MIG_BAD_ID;
}

static void
serve_dispatch_enter(struct idl_server *srv)
{
	if (srv->concurrency == 1)
		pthread_mutex_lock(&srv->dispatch_mutex);
	else if (srv->concurrency > 1)
		while (sem_wait(&srv->dispatch_sem) != 0)
			continue; /* EINTR */
}

static void
serve_dispatch_leave(struct idl_server *srv)
{
	if (srv->concurrency == 1)
		pthread_mutex_unlock(&srv->dispatch_mutex);
	else if (srv->concurrency > 1)
		sem_post(&srv->dispatch_sem);
}

/* Checks and serves one request or hello of `len` bytes; returns the size of the reply
 * left in `out`, or 0 when none is due. `rcv_err` is IDL_EMSGSIZE for a message cut to
 * the buffer (len is then its true size). */
static uint32_t
serve_one(struct srv_src *src, struct srv_hello *hs, idl_msg_header_t *in, size_t len,
	  int rcv_err, idl_msg_header_t *out, const struct idl__request *rq)
{
	struct idl_server *srv = src->srv;
	const struct idl_routine_desc *rt;
	const struct srv_ss *s;
	idl_msg_header_t h;
	uint32_t outlen = IDL_MSG_HEADER_SIZE;
	size_t si;
	int err;

	/* Work on a copy of whatever header bytes came, so that a runt still gets a reply
	 * naming its id and seqno when it has them. */
	memset(&h, 0, sizeof h);
	memcpy(&h, in, len < sizeof h ? len : sizeof h);
	if (h.order == SERVE_OTHER_ORDER && h.magic == IDL_MSG_MAGIC && len >= sizeof h)
		return h.kind == IDL_KIND_ONEWAY ? 0 : serve_other_order(&h, out);

	if (len < IDL_MSG_HEADER_SIZE || h.magic != IDL_MSG_MAGIC ||
	    h.order != IDL_ORDER_NATIVE)
		err = IDL_EPROTO;
	else if (rcv_err == IDL_EMSGSIZE)
		err = IDL_EMSGSIZE;
	else if (h.size != len || h.size % IDL_MSG_ALIGN != 0)
		err = IDL_EPROTO;
	else if (h.kind == IDL_KIND_HELLO)
		err = serve_hello(srv, hs, in, len, out, &outlen);
	else if (h.kind != IDL_KIND_REQUEST && h.kind != IDL_KIND_ONEWAY)
		err = IDL_EPROTO;
	else if ((s = serve_find_id(srv, h.id, &si)) == NULL ||
		 (rt = idl_subsystem_routine(s->ss, h.id)) == NULL)
		err = MIG_BAD_ID;
	else if (!hs->said[si])
		err = IDL_EPROTO; /* no hello for this subsystem on this source */
	else if (hs->verdicts[s->vbase + rt->number] != IDL__SIG_OK)
		err = IDL_ESIGNATURE;
	else if ((rt->kind == IDL_RT_ROUTINE) != (h.kind == IDL_KIND_REQUEST))
		err = IDL_EPROTO; /* a routine sent one-way, or a simpleroutine awaiting a reply */
	else {
		serve_dispatch_enter(srv);
		idl__set_request(rq);
		s->demux(in, out);
		idl__set_request(NULL);
		serve_dispatch_leave(srv);
		if (h.kind == IDL_KIND_ONEWAY || out->retcode == MIG_NO_REPLY)
			return 0;
		/* A demux never writes past max_reply; a size that says otherwise is a bug in
		 * user code, and the client gets a clean error instead of stray bytes. */
		if (out->size < IDL_MSG_HEADER_SIZE || out->size > s->ss->max_reply ||
		    (out->retcode != 0 && out->size != IDL_MSG_HEADER_SIZE)) {
			out->size = IDL_MSG_HEADER_SIZE;
			if (out->retcode == 0)
				out->retcode = MIG_TYPE_ERROR;
		}
		return out->size;
	}
	if (err == 0)
		return outlen; /* a hello answered */
	if (h.kind == IDL_KIND_ONEWAY)
		return 0; /* one-way messages never get a reply, not even an error */
	idl_reply_init(&h, out);
	if (h.kind == IDL_KIND_HELLO)
		out->kind = IDL_KIND_HELLO_REPLY;
	out->retcode = err;
	return IDL_MSG_HEADER_SIZE;
}

void *
idl__srv_conn_main(void *arg)
{
	struct srv_src *src = arg;
	struct idl_server *srv = src->srv;
	const struct idl_transport *tr = src->ep->tr;
	struct idl__request rq = { tr, src->conn, (idl_port_t)(void *)&src->ep->head };

	while (!atomic_load_explicit(&srv->stop_req, memory_order_relaxed)) {
		struct idl_xmsg m = { .data = src->rbuf, .cap = srv->rcap };
		uint32_t n;
		int err = tr->conn_recv(src->conn, &m, IDL_DEADLINE_NONE);

		/* A stream transport has closed the connection when a message did not fit:
		 * its framing is lost. */
		if (err != 0 && (err != IDL_EMSGSIZE || (tr->flags & IDL_TRF_STREAM)))
			break;
		n = serve_one(src, &src->hello, src->rbuf, m.len, err, src->sbuf, &rq);
		if (n != 0) {
			struct idl_xmsg r = { .data = src->sbuf, .len = n };

			if (tr->conn_send(src->conn, &r, idl_deadline_ms(SERVE_SEND_TIMEOUT_MS)))
				break;
		}
	}
	idl__srv_src_ended(src);
	return NULL;
}

/* The hello state of a message endpoint's peer; a peer that takes the slot of another
 * starts without hellos (and that other peer must say hello again). */
static struct srv_hello *
serve_peer(struct srv_src *src, const struct idl_peer *from)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t len = from->len < sizeof from->addr ? from->len : sizeof from->addr;
	struct srv_peer *p;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ from->addr[i]) * 0x100000001b3ull;
	p = &src->peers[h % SRV_PEER_SLOTS];
	if (p->hello.said == NULL && serve_hello_alloc(src->srv, &p->hello) != 0)
		return NULL;
	if (p->addr.len != len || memcmp(p->addr.addr, from->addr, len) != 0) {
		p->addr.len = len;
		memcpy(p->addr.addr, from->addr, len);
		memset(p->hello.said, 0, src->srv->nsubs);
	}
	return &p->hello;
}

void *
idl__srv_ep_main(void *arg)
{
	struct srv_src *src = arg;
	struct idl_server *srv = src->srv;
	const struct idl_transport *tr = src->ep->tr;
	struct idl__request rq = { tr, NULL, (idl_port_t)(void *)&src->ep->head };
	unsigned failures = 0;

	while (!atomic_load_explicit(&srv->stop_req, memory_order_relaxed)) {
		struct idl_xmsg m = { .data = src->rbuf, .cap = srv->rcap };
		struct idl_peer from;
		struct srv_hello *hs;
		uint32_t n;
		int err;

		memset(&from, 0, sizeof from);
		err = tr->ep_recv(src->ep->state, &m, &from, IDL_DEADLINE_NONE);
		if (err == IDL_ECLOSED)
			break;
		/* Other errors (an ICMP error surfacing on a datagram socket) concern one
		 * peer, and the endpoint goes on; but an endpoint that fails every time is
		 * broken, and its thread must not spin. */
		if (err != 0 && err != IDL_EMSGSIZE) {
			if (++failures == SERVE_EP_MAX_FAILURES)
				break;
			continue;
		}
		failures = 0;
		if ((hs = serve_peer(src, &from)) == NULL)
			continue;
		n = serve_one(src, hs, src->rbuf, m.len, err, src->sbuf, &rq);
		if (n != 0) {
			struct idl_xmsg r = { .data = src->sbuf, .len = n };

			tr->ep_reply(src->ep->state, &from, &r);
		}
	}
	idl__srv_src_ended(src);
	return NULL;
}
