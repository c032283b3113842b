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
#include "trace.h"

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
	src->peers = calloc(1, sizeof *src->peers);
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
		struct srv_peer *p = src->peers->newest, *next;

		for (; p != NULL; p = next) {
			next = p->older;
			free(p->hello.said);
			free(p->hello.verdicts);
			free(p);
		}
		free(src->peers->buckets);
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

		if (err == 0)
			IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_RECV, src->ep->head.address,
				   src->rbuf, m.len);

		/* A stream transport has closed the connection when a message did not fit:
		 * its framing is lost. */
		if (err != 0 && (err != IDL_EMSGSIZE || (tr->flags & IDL_TRF_STREAM)))
			break;
		n = serve_one(src, &src->hello, src->rbuf, m.len, err, src->sbuf, &rq);
		if (n != 0) {
			struct idl_xmsg r = { .data = src->sbuf, .len = n };

			IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_SEND, src->ep->head.address,
				   src->sbuf, n);
			if (tr->conn_send(src->conn, &r, idl_deadline_ms(SERVE_SEND_TIMEOUT_MS)))
				break;
		}
	}
	idl__srv_src_ended(src);
	return NULL;
}

static void
serve_peer_unlist(struct srv_peers *ps, struct srv_peer *p)
{
	if (p->newer != NULL)
		p->newer->older = p->older;
	else
		ps->newest = p->older;
	if (p->older != NULL)
		p->older->newer = p->newer;
	else
		ps->oldest = p->newer;
	p->newer = p->older = NULL;
}

static void
serve_peer_list(struct srv_peers *ps, struct srv_peer *p)
{
	p->older = ps->newest;
	p->newer = NULL;
	if (ps->newest != NULL)
		ps->newest->newer = p;
	else
		ps->oldest = p;
	ps->newest = p;
}

static void
serve_peer_unhash(struct srv_peers *ps, struct srv_peer *p)
{
	struct srv_peer **pp = &ps->buckets[p->hash & (ps->nbuckets - 1)];

	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
}

static void
serve_peer_hash(struct srv_peers *ps, struct srv_peer *p)
{
	struct srv_peer **b = &ps->buckets[p->hash & (ps->nbuckets - 1)];

	p->hnext = *b;
	*b = p;
}

/* Doubles the hash table; on failure the old one stays (longer chains, still right). */
static int
serve_peers_grow(struct srv_peers *ps)
{
	size_t n = ps->nbuckets ? 2 * ps->nbuckets : 16;
	struct srv_peer **nb = calloc(n, sizeof *nb), *p;

	if (nb == NULL)
		return ps->nbuckets != 0 ? 0 : IDL_ENOMEM;
	free(ps->buckets);
	ps->buckets = nb;
	ps->nbuckets = n;
	for (p = ps->newest; p != NULL; p = p->older)
		serve_peer_hash(ps, p);
	return 0;
}

/*
 * The hello state of a message endpoint's peer, made when it first appears. Past
 * SRV_PEERS_MAX peers the least recently heard one is forgotten and its entry reused; that
 * peer's next request gets IDL_EPROTO (no hello), and its client says hello again.
 */
static struct srv_hello *
serve_peer(struct srv_src *src, const struct idl_peer *from)
{
	struct srv_peers *ps = src->peers;
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t len = from->len < sizeof from->addr ? from->len : sizeof from->addr;
	struct srv_peer *p;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ from->addr[i]) * 0x100000001b3ull;
	if (ps->nbuckets != 0) {
		for (p = ps->buckets[h & (ps->nbuckets - 1)]; p != NULL; p = p->hnext) {
			if (p->hash == h && p->addr.len == len &&
			    memcmp(p->addr.addr, from->addr, len) == 0) {
				if (ps->newest != p) {
					serve_peer_unlist(ps, p);
					serve_peer_list(ps, p);
				}
				return &p->hello;
			}
		}
	}
	if (ps->count >= SRV_PEERS_MAX) {
		p = ps->oldest;
		serve_peer_unlist(ps, p);
		serve_peer_unhash(ps, p);
		memset(p->hello.said, 0, src->srv->nsubs);
	} else {
		if (ps->count >= ps->nbuckets && serve_peers_grow(ps) != 0)
			return NULL;
		if ((p = calloc(1, sizeof *p)) == NULL)
			return NULL;
		if (serve_hello_alloc(src->srv, &p->hello) != 0) {
			free(p->hello.said);
			free(p->hello.verdicts);
			free(p);
			return NULL;
		}
		ps->count++;
	}
	p->hash = h;
	p->addr.len = len;
	memcpy(p->addr.addr, from->addr, len);
	serve_peer_hash(ps, p);
	serve_peer_list(ps, p);
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
		if (err == 0)
			IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_RECV, src->ep->head.address,
				   src->rbuf, m.len);
		if ((hs = serve_peer(src, &from)) == NULL)
			continue;
		n = serve_one(src, hs, src->rbuf, m.len, err, src->sbuf, &rq);
		if (n != 0) {
			struct idl_xmsg r = { .data = src->sbuf, .len = n };

			IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_SEND, src->ep->head.address,
				   src->sbuf, n);
			tr->ep_reply(src->ep->state, &from, &r);
		}
	}
	idl__srv_src_ended(src);
	return NULL;
}
