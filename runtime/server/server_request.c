/*
 * server_request.c - the receiving threads of a server, the checks every message goes
 * through before a demux sees it, and deferred replies.
 *
 * Each source (an accepted connection, or a message endpoint) has one thread that blocks in
 * the transport's receive: one kernel entry per message. The runtime checks the header,
 * answers hellos, refuses requests that came before their subsystem's hello, whose
 * routine's signature differs, whose descriptors do not match the routine, that exceed the
 * client's calls in flight or that the authorisation hook denies; then it calls the demux
 * under the dispatch lock and sends its reply. A malformed message gets an error reply and
 * the source keeps being served.
 *
 * Ownership (MIG's rule, docs/security.md): what a request carries out of line belongs to
 * the routine when it returns KERN_SUCCESS or MIG_NO_REPLY; for any other return, and for
 * every request refused before dispatch, the runtime releases it with idl_msg_destroy().
 *
 * The server room: it knows core, ool and trace, and never the client; a transport only
 * through its ops. It installs the endpoint handle's ops (core.h, "The port head").
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_ool.h>
#include <idl/idl_tls.h>

#include "server/server.h"
#include "trace/trace.h"

#define SERVE_OTHER_ORDER (IDL_ORDER_NATIVE == IDL_ORDER_LITTLE ? IDL_ORDER_BIG : IDL_ORDER_LITTLE)
/* A reply to a client that does not read fails after this long and drops the client. */
#define SERVE_SEND_TIMEOUT_MS 30000
/* Consecutive receive errors after which a message endpoint's thread gives up. */
#define SERVE_EP_MAX_FAILURES 1000
#define SERVE_MS 1000000ll

/* The request the calling thread is serving (server.h). */
_Thread_local struct srv_req *idl__srv_current __attribute__((tls_model("initial-exec")));

int
idl_request_cred(struct idl_cred *cred)
{
	const struct srv_req *rq = idl__srv_current;

	if (cred == NULL)
		return IDL_EINVAL;
	memset(cred, 0, sizeof *cred);
	if (rq == NULL)
		return IDL_EINVAL;
	return idl__srv_cred(rq->src, rq->from, cred);
}

/* The peer's identity as the request's connection's TLS session knows it (conn_tls_peer):
 * none outside a request or on a message endpoint. */
int
idl_request_peer_tls(struct idl_tls_peer **peerp)
{
	const struct srv_req *rq = idl__srv_current;
	int (*peer)(void *conn, struct idl_tls_peer **peerp);

	if (peerp == NULL)
		return IDL_EINVAL;
	*peerp = NULL;
	if (rq == NULL || rq->src->conn == NULL)
		return IDL_EINVAL;
	peer = IDL__TR_OP(rq->src->ep->tr, conn_tls_peer);
	return peer != NULL ? peer(rq->src->conn, peerp) : IDL_ENOTSUP;
}

idl_port_t
idl_request_port(void)
{
	const struct srv_req *rq = idl__srv_current;

	return rq != NULL ? (idl_port_t)(void *)&rq->src->ep->head : IDL_PORT_NULL;
}

/* idl_ool_alloc_port() on the endpoint handle, inside a request on it: memory from the
 * transport of the request's connection (none on a message endpoint). The connection is
 * busy with this request until the routine returns, so it is alive while its memory is
 * taken. */
static void *
request_ool_alloc(idl_port_t port, size_t size)
{
	const struct srv_req *rq = idl__srv_current;
	void *(*alloc)(void *conn, size_t size);

	if (rq == NULL || rq->src->conn == NULL || port != (idl_port_t)(void *)&rq->src->ep->head)
		return NULL;
	alloc = IDL__TR_OP(rq->src->ep->tr, conn_ool_alloc);
	return alloc != NULL ? alloc(rq->src->conn, size) : NULL;
}

/* The endpoint handle is never closed: idl_port_close() leaves it. */
const struct idl__port_ops idl__srv_endpoint_ops = { .ool_alloc = request_ool_alloc };

/*
 * Deferred replies. The handle holds its source (and so the server) until it is sent or
 * discarded: the source's thread may end meanwhile (the client left, or the server stopped),
 * and the accept loop then keeps the source, closed, for the handle (server_loop.c,
 * srv_reap). A handle counts as one of its client's calls in flight (IDL_LIMIT_INFLIGHT).
 */
idl_reply_t
idl_request_reply(void)
{
	const struct srv_req *rq = idl__srv_current;
	struct idl_reply *r;
	struct idl_server *srv;

	if (rq == NULL || rq->in == NULL || (r = calloc(1, sizeof *r)) == NULL)
		return NULL; /* outside a routine (the authorisation hook has no request to defer)
			      */
	srv = rq->src->srv;
	r->src = rq->src;
	r->peer = rq->peer;
	if (rq->from != NULL)
		r->to = *rq->from;
	r->id = rq->in->id;
	r->seqno = rq->in->seqno;
	r->max_reply = rq->ss->ss->max_reply;
	pthread_mutex_lock(&srv->lock);
	rq->src->handles++;
	srv->handles++;
	r->next = rq->src->replies;
	if (r->next != NULL)
		r->next->prev = r;
	rq->src->replies = r;
	pthread_mutex_unlock(&srv->lock);
	atomic_fetch_add(r->peer != NULL ? &r->peer->pending : &r->src->pending, 1);
	atomic_fetch_add(&r->src->deferred, 1);
	return r;
}

static void
serve_reply_free(struct idl_reply *r)
{
	pthread_mutex_lock(&r->src->srv->lock);
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		r->src->replies = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&r->src->srv->lock);
	atomic_fetch_sub(r->peer != NULL ? &r->peer->pending : &r->src->pending, 1);
	/* After its send, if any, and before the source may go with the last handle. */
	atomic_fetch_sub(&r->src->deferred, 1);
	idl__srv_handle_release(r->src);
	free(r);
}

int
idl_reply_cancelled(idl_reply_t r)
{
	return r != NULL && atomic_load_explicit(&r->cancelled, memory_order_relaxed);
}

/* A client's cancel message: the deferred reply it names, if any, learns of it. The request
 * itself was dispatched already (a source's messages are served in order). */
static void
serve_cancel(struct srv_src *src, const idl_msg_header_t *h, const struct srv_peer *peer)
{
	pthread_mutex_lock(&src->srv->lock);
	for (struct idl_reply *r = src->replies; r != NULL; r = r->next)
		if (r->seqno == h->seqno && r->id == h->id && r->peer == peer)
			atomic_store_explicit(&r->cancelled, 1, memory_order_relaxed);
	pthread_mutex_unlock(&src->srv->lock);
}

void
idl_reply_discard(idl_reply_t r)
{
	if (r != NULL)
		serve_reply_free(r);
}

int
idl_reply_send(idl_reply_t r, idl_msg_header_t *msg)
{
	struct srv_src *src;
	struct idl_xmsg x;
	int err, closed = 0;

	idl__clear_detail();
	if (r == NULL)
		return idl__fail(IDL_EINVAL, "idl_reply_send: NULL reply handle");
	src = r->src;
	if (msg == NULL) {
		serve_reply_free(r);
		return idl__fail(IDL_EINVAL, "idl_reply_send: NULL message");
	}
	msg->magic = IDL_MSG_MAGIC;
	msg->order = IDL_ORDER_NATIVE;
	msg->kind = IDL_KIND_REPLY;
	msg->id = (int32_t)((uint32_t)r->id + IDL_REPLY_ID_OFFSET);
	msg->seqno = r->seqno;
	/* The same rule as for a demux's reply: a malformed one goes out as a bare error. */
	if (msg->size < IDL_MSG_HEADER_SIZE || msg->size > r->max_reply ||
	    msg->size % IDL_MSG_ALIGN != 0 ||
	    (msg->retcode != 0 && msg->size != IDL_MSG_HEADER_SIZE)) {
		msg->size = IDL_MSG_HEADER_SIZE;
		msg->flags = 0;
		msg->ndesc = 0;
		if (msg->retcode == 0)
			msg->retcode = MIG_TYPE_ERROR;
	}
	memset(&x, 0, sizeof x);
	x.data = msg;
	x.len = msg->size;
	/* A message endpoint has no connection to see closed: its closing (the server
	 * stopped or was destroyed) is the server's to tell. */
	if (src->conn == NULL) {
		pthread_mutex_lock(&src->srv->lock);
		closed = src->ep->closed;
		pthread_mutex_unlock(&src->srv->lock);
	}
	if (src->pooled && !closed) {
		err = idl__srv_ev_send(src, &x);
		goto sent;
	}
	pthread_mutex_lock(&src->send_lock);
	if (closed) {
		/* Not sent, yet consumed, as a transport's send would have it. */
		if (idl__desc_msg(msg, msg->size))
			idl__msg_release_sent(msg);
		err = IDL_ECLOSED;
	} else if (src->conn != NULL)
		err = src->ep->tr->conn_send(src->conn, &x,
					     &(struct idl_deadline){ 0, SERVE_SEND_TIMEOUT_MS });
	else
		err = IDL__TR_OP(src->ep->tr, ep_reply)(src->ep->state, &r->to, &x);
	pthread_mutex_unlock(&src->send_lock);
sent:
	if (err == 0)
		IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_SEND, src->ep->head.address, msg, msg->size);
	/* Once the source is closed every send fails: the client is gone as far as the
	 * routine can tell, whether it left or the server stopped. The detail is written
	 * before the handle goes: the last handle may free the source and the server. */
	if (err == IDL_ECLOSED || err == MIG_SERVER_DIED || err == IDL_ESYSERR(EPIPE) ||
	    err == IDL_ESYSERR(ECONNRESET))
		err = idl__fail(MIG_SERVER_DIED, "%s: the client went away before the reply",
				src->ep->head.address);
	else if (err != 0)
		err = idl__fail(err, "%s: reply: %s", src->ep->head.address, idl_strerror(err));
	serve_reply_free(r);
	return err;
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

/* Answers a hello in the older of its version and ours (docs/wire-format.md, "The
 * hello"): compared with our hashes of that version. A client newer than us is answered
 * in our version with nothing compared, and says hello again in it. */
static int
serve_hello(const struct idl_server *srv, struct srv_hello *hs, const idl_msg_header_t *in,
	    size_t len, idl_msg_header_t *out, uint32_t *outlen)
{
	const struct idl__hello_body *b;
	const char *name;
	unsigned version;
	int err;

	/* Whatever it says may change a verdict the fast path relies on. */
	idl__srv_hello_unfast(hs);
	if ((err = idl__hello_parse(in, len, &name, &b)) != 0)
		return err;
	version = IDL_HELLO_VERSION_OF(b->version);
	for (size_t i = 0; i < srv->nsubs; i++) {
		const struct srv_ss *s = &srv->subs[i];

		if (strcmp(s->ss->name, name) != 0 || s->ss->base != b->base)
			continue;
		if (version > IDL_HELLO_VERSION) {
			hs->said[i] = 0;
			*outlen = idl__hello_reply(s->ss, IDL_HELLO_VERSION,
						   srv_ss_hashes(s, IDL_HELLO_VERSION), in, out);
			return 0;
		}
		idl__hello_compare(s->ss, srv_ss_hashes(s, version), b->hashes, b->nroutines,
				   hs->verdicts + s->vbase);
		hs->said[i] = 1;
		*outlen = idl__hello_reply(s->ss, version, srv_ss_hashes(s, version), in, out);
		return 0;
	}
	return MIG_BAD_ID;
}

/* Whether a request carries no more ports (file descriptors on unix:) than the limit;
 * logs the refusal. Only messages with descriptors, which the transport checked and
 * converted, are counted: the fast path is the flag test. */
static int
serve_fds_ok(struct srv_src *src, const idl_msg_header_t *in, const struct idl_peer *from)
{
	const idl_desc_t *d = (const idl_desc_t *)(const void *)(in + 1);
	uint64_t max = src->srv->limits[IDL_LIMIT_FDS], n = 0;
	char who[IDL_CRED_ADDR_MAX + 32];

	if (!(in->flags & IDL_MSGF_DESC))
		return 1;
	/* idl__desc_count_ok() made sure that ndesc descriptors fit in the message. */
	for (uint32_t i = 0; i < in->ndesc; i++) {
		if (d[i].type == IDL_DESC_PORT)
			n++;
		else if (d[i].type == IDL_DESC_PORT_ARRAY)
			n += d[i].size;
	}
	if (n <= max)
		return 1;
	idl__srv_who(src, from, who, sizeof who);
	idl__srv_log(src->srv, "%s: %s: message with %llu ports refused (fds %llu)",
		     src->ep->head.address, who, (unsigned long long)n, (unsigned long long)max);
	return 0;
}

/* Whether the client may have one more call in flight; logs the refusal. */
static int
serve_inflight_ok(struct srv_src *src, const struct idl_peer *from, struct srv_peer *peer)
{
	uint64_t max = src->srv->limits[IDL_LIMIT_INFLIGHT];
	unsigned n = atomic_load_explicit(peer != NULL ? &peer->pending : &src->pending,
					  memory_order_relaxed);
	char who[IDL_CRED_ADDR_MAX + 32];

	if (n < max)
		return 1;
	idl__srv_who(src, from, who, sizeof who);
	idl__srv_log(src->srv, "%s: %s: request refused (inflight %llu)", src->ep->head.address,
		     who, (unsigned long long)max);
	return 0;
}

/* The authorisation hook's verdict on a request; logs a denial. */
static int
serve_auth_ok(struct srv_src *src, const struct idl_peer *from, const struct srv_ss *s,
	      const struct idl_routine_desc *rt)
{
	struct idl_server *srv = src->srv;
	struct srv_req rq = { src, from, NULL, NULL, s };
	struct idl_cred cred;
	char who[IDL_CRED_ADDR_MAX + 32];
	int verdict;

	idl__srv_cred(src, from, &cred);
	/* The hook may ask what idl_request_cred() and idl_request_peer_tls() say. */
	idl__srv_current = &rq;
	verdict = srv->auth(srv->auth_ctx, &cred, s->ss, rt);
	idl__srv_current = NULL;
	if (verdict == 0)
		return 1;
	idl__srv_who(src, from, who, sizeof who);
	idl__srv_log(srv, "%s: %s: %s.%s denied by the authorisation hook", src->ep->head.address,
		     who, s->ss->name, rt->name);
	return 0;
}

/* The checks of a request or one-way message whose header holds, in order: its routine
 * is one of the server's, its subsystem was greeted on this source with the same
 * signature, its kind is the routine's, its descriptors are the routine's, and the
 * client's calls in flight and the authorisation hook allow it. 0 with *sp and *si its
 * subsystem, or the error its reply carries. */
static int
serve_request_ok(struct srv_src *src, const struct srv_hello *hs, const idl_msg_header_t *h,
		 const idl_msg_header_t *in, const struct idl_peer *from, struct srv_peer *peer,
		 const struct srv_ss **sp, size_t *si)
{
	struct idl_server *srv = src->srv;
	const struct idl_routine_desc *rt;
	const struct srv_ss *s;

	if ((s = serve_find_id(srv, h->id, si)) == NULL ||
	    (rt = &s->ss->routines[(uint32_t)h->id - (uint32_t)s->ss->base])->kind == IDL_RT_SKIP ||
	    rt->name == NULL)
		return MIG_BAD_ID;
	if (!hs->said[*si])
		return IDL_EPROTO; /* no hello for this subsystem on this source */
	if (hs->verdicts[s->vbase + rt->number] != IDL__SIG_OK)
		return IDL_ESIGNATURE;
	if ((rt->kind == IDL_RT_ROUTINE) != (h->kind == IDL_KIND_REQUEST))
		return IDL_EPROTO; /* a routine sent one-way, or a simpleroutine awaiting a reply */
	if (!((h->flags & IDL_MSGF_DESC) == 0 && h->ndesc == 0 ? srv->plain[s->vbase + rt->number]
							       : idl__desc_count_ok(rt, in, 1)) ||
	    !serve_fds_ok(src, in, from))
		return MIG_BAD_ARGUMENTS; /* descriptors that are not the routine's, or too many */
	if (!serve_inflight_ok(src, from, peer))
		return IDL_ELIMIT;
	if (srv->auth != NULL && !serve_auth_ok(src, from, s, rt))
		return IDL_EACCES;
	*sp = s;
	return 0;
}

/* A message refused before dispatch (err), or a hello answered (err 0, its reply outlen
 * bytes): what the message carries is released, and the reply's size returned (0: none). */
static uint32_t
serve_refused(idl_msg_header_t *in, size_t len, int rcv_err, const idl_msg_header_t *h, int err,
	      uint32_t outlen, idl_msg_header_t *out)
{
	/* Only a message whose header was read whole and agrees with the bytes received can
	 * carry anything (the transport converts descriptors of nothing else), and reading
	 * the count of a shorter one would read a previous message's stale bytes. */
	if (len >= IDL_MSG_HEADER_SIZE && rcv_err == 0 && h->size == len &&
	    h->magic == IDL_MSG_MAGIC && (h->flags & IDL_MSGF_DESC))
		idl_msg_destroy(in);
	if (err == 0)
		return outlen; /* a hello answered */
	if (h->kind == IDL_KIND_ONEWAY || h->kind == IDL_KIND_CANCEL)
		return 0; /* one-way messages and cancels never get a reply, not even an error */
	idl_reply_init(h, out);
	if (h->kind == IDL_KIND_HELLO)
		out->kind = IDL_KIND_HELLO_REPLY;
	out->retcode = err;
	return IDL_MSG_HEADER_SIZE;
}

/* Every check of a message, one at a time, each refusal answered as the protocol says;
 * what passes is dispatched and, when it carries no descriptors, remembered in hs for
 * the fast path. */
uint32_t
idl__srv_serve_checked(struct srv_src *src, struct srv_hello *hs, idl_msg_header_t *in, size_t len,
		       int rcv_err, idl_msg_header_t *out, const struct idl_peer *from,
		       struct srv_peer *peer)
{
	const struct srv_ss *s = NULL;
	idl_msg_header_t h;
	uint32_t outlen = IDL_MSG_HEADER_SIZE;
	size_t si = 0;
	int err;

	/* Work on a copy of whatever header bytes came, so that a runt still gets a reply
	 * naming its id and seqno when it has them. */
	if (len >= sizeof h) {
		memcpy(&h, in, sizeof h);
	} else {
		memset(&h, 0, sizeof h);
		memcpy(&h, in, len);
	}
	if (h.order == SERVE_OTHER_ORDER && h.magic == IDL_MSG_MAGIC && len >= sizeof h)
		return h.kind == IDL_KIND_ONEWAY ? 0 : serve_other_order(&h, out);

	if (len < IDL_MSG_HEADER_SIZE || h.magic != IDL_MSG_MAGIC || h.order != IDL_ORDER_NATIVE)
		err = IDL_EPROTO;
	else if (rcv_err == IDL_EMSGSIZE)
		err = IDL_EMSGSIZE;
	else if (rcv_err != 0 || h.size != len || h.size % IDL_MSG_ALIGN != 0 ||
		 (h.flags & ~IDL_MSGF_DESC) != 0)
		err = IDL_EPROTO; /* the transport refused its descriptors, or a header that lies */
	else if (h.kind == IDL_KIND_CANCEL) {
		if (len == IDL_MSG_HEADER_SIZE)
			serve_cancel(src, &h, peer);
		return 0; /* never answered */
	} else if (h.kind == IDL_KIND_HELLO) {
		err = serve_hello(src->srv, hs, in, len, out, &outlen);
		if (err == 0)
			src->greeted = 1;
	} else if (h.kind != IDL_KIND_REQUEST && h.kind != IDL_KIND_ONEWAY)
		err = IDL_EPROTO;
	else if ((err = serve_request_ok(src, hs, &h, in, from, peer, &s, &si)) == 0) {
		int carries = (h.flags & IDL_MSGF_DESC) != 0 || h.ndesc != 0;

		/* Everything checked here holds for the next request with this header's first
		 * word and id until a hello: the fast path takes it with two compares. The
		 * authorisation hook is asked about every request, so none is remembered
		 * while there is one. */
		if (!carries && src->srv->auth == NULL) {
			memcpy(&hs->fast_w0, &h, sizeof hs->fast_w0);
			hs->fast_id = h.id;
			hs->fast_si = (uint32_t)si;
		}
		return idl__srv_dispatch(src, from, peer, in, s, out, h.kind, carries);
	}
	return serve_refused(in, len, rcv_err, &h, err, outlen, out);
}

uint32_t
idl__srv_serve_one(struct srv_src *src, struct srv_hello *hs, idl_msg_header_t *in, size_t len,
		   int rcv_err, idl_msg_header_t *out, const struct idl_peer *from,
		   struct srv_peer *peer)
{
	return idl__srv_serve(src, hs, in, len, rcv_err, out, from, peer);
}

/* Sends a reply of n bytes from src's reply buffer (to `to` on a message endpoint).
 * Deferred replies from other threads take the source's send lock; while none is out - a
 * handle is made only by this thread, in a routine, and counted before it can be sent -
 * nobody else can send on the source, and this send takes no lock. In line in the receive
 * loops: a call would cost more than the function's own work. */
static inline __attribute__((always_inline)) int
serve_send(struct srv_src *src, uint32_t n, const struct idl_peer *to)
{
	struct idl_xmsg r = { .data = src->sbuf, .len = n };
	int locked = atomic_load_explicit(&src->deferred, memory_order_acquire) != 0;
	int err;

	IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_SEND, src->ep->head.address, src->sbuf, n);
	if (locked)
		pthread_mutex_lock(&src->send_lock);
	if (src->conn != NULL)
		err = src->ep->tr->conn_send(src->conn, &r,
					     &(struct idl_deadline){ 0, SERVE_SEND_TIMEOUT_MS });
	else
		err = IDL__TR_OP(src->ep->tr, ep_reply)(src->ep->state, to, &r);
	if (locked)
		pthread_mutex_unlock(&src->send_lock);
	return err;
}

/* Releases what a message received whole (len bytes) and never served carries. */
static void
serve_drop(void *buf, size_t len)
{
	idl_msg_header_t *in = buf;

	if (len >= IDL_MSG_HEADER_SIZE && in->size == len && in->magic == IDL_MSG_MAGIC &&
	    (in->flags & IDL_MSGF_DESC))
		idl_msg_destroy(in);
}

void *
idl__srv_conn_main(void *arg)
{
	struct srv_src *src = arg;
	struct idl_server *srv = src->srv;
	const struct idl_transport *tr = src->ep->tr;
	uint64_t hs_ms = srv->limits[IDL_LIMIT_HANDSHAKE_MS], idle = srv->limits[IDL_LIMIT_IDLE_MS];
	/* The receive's deadline: the handshake's, fixed from the accept until a hello is
	 * answered; then the idle timeout's, from the start of each receive (a lazy deadline:
	 * the transport's socket timeout is the idle timeout itself, so a message costs neither
	 * a clock read nor a system call for it); else none. Both worked out once: limits do not
	 * change while a server runs. */
	const struct idl_deadline hs_dl = idl_deadline_at(
		hs_ms != 0 ? idl_now_ns() + (int64_t)hs_ms * SERVE_MS : IDL_DEADLINE_NONE);
	const struct idl_deadline idle_dl =
		idl_deadline_in(idle != 0 && idle <= INT32_MAX ? (int)idle : -1);
	/* What the thread stores while it waits in its receive: the receives so far << 2 |
	 * SRV_RS_WAIT (server.h). */
	unsigned wait = SRV_RS_WAIT;

	while (!atomic_load_explicit(&srv->stop_req, memory_order_relaxed)) {
		struct idl_xmsg m = { .data = src->rbuf, .cap = srv->rcap };
		struct idl_deadline dl = src->greeted ? idle_dl : hs_dl;
		unsigned busy = wait;
		uint32_t n;
		int err;

		/* A drain takes the connection only while this thread waits in its receive
		 * (WAIT to CLOSING), says the goodbye and closes it: what the receive brings
		 * then is not served (server_drain.c). */
		atomic_store_explicit(&src->rstate, wait, memory_order_relaxed);
		err = tr->conn_recv(src->conn, &m, &dl);
		if (__builtin_expect(!atomic_compare_exchange_strong(
					     &src->rstate, &busy, wait - SRV_RS_WAIT + SRV_RS_BUSY),
				     0)) {
			if (err == 0)
				serve_drop(src->rbuf, m.len);
			break;
		}
		wait += 1u << 2;
		if (err == 0)
			IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_RECV, src->ep->head.address,
				   src->rbuf, m.len);

		/* A stream transport has closed the connection when a message did not fit:
		 * its framing is lost. A timeout is a limit: the connection ends, told why as
		 * the event core tells its own (an IDLE goodbye), so that the client's next
		 * call connects again rather than fail. A message refused for its descriptors
		 * is answered while its framing held. */
		if (__builtin_expect(err != 0, 0)) {
			if (err == IDL_EPROTO)
				idl__srv_refused_log(src, NULL, m.len);
			if (!idl__rcv_has_msg(err, m.len) ||
			    (err == IDL_EMSGSIZE && (tr->flags & IDL_TRF_STREAM))) {
				idl__srv_conn_log(src, err, m.len, 1);
				if (err == IDL_ETIMEDOUT)
					idl__srv_timeout_goodbye(src);
				break;
			}
			if (err == IDL_EMSGSIZE)
				idl__srv_conn_log(src, err, m.len, 0);
		}
		n = idl__srv_serve(src, &src->hello, src->rbuf, m.len, err, src->sbuf, NULL, NULL);
		if (n != 0 && serve_send(src, n, NULL) != 0)
			break;
	}
	idl__srv_src_ended(src);
	return NULL;
}

/* Serves one receive on a message endpoint: its message, or its error (err). Returns 1
 * when the endpoint is closed or broken (its loop ends), else 0. In line in both loops, as
 * serve_send() is. */
static inline __attribute__((always_inline)) int
serve_ep_one(struct srv_src *src, struct idl_xmsg *m, struct idl_peer *from, int err,
	     unsigned *failures)
{
	struct idl_server *srv = src->srv;
	struct srv_peer *peer;
	uint32_t n;

	if (err == IDL_ECLOSED)
		return 1;
	/* Other errors (an ICMP error surfacing on a datagram socket) concern one peer, and
	 * the endpoint goes on; but an endpoint that fails every time is broken, and its
	 * loop must not spin. */
	if (!idl__rcv_has_msg(err, m->len))
		return ++*failures == SERVE_EP_MAX_FAILURES;
	*failures = 0;
	if (err == 0)
		IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_RECV, src->ep->head.address, src->rbuf,
			   m->len);
	if ((peer = idl__srv_peer(src, from)) == NULL) {
		/* No room for its state: refused, and what it carries released. */
		if (err == 0)
			serve_drop(src->rbuf, m->len);
		return 0;
	}
	if (err == IDL_EMSGSIZE) {
		char who[IDL_CRED_ADDR_MAX + 32];

		idl__srv_who(src, from, who, sizeof who);
		idl__srv_log(srv, "%s: %s: message of %zu bytes refused (msg_size %zu)",
			     src->ep->head.address, who, m->len, srv->rcap);
	} else if (err == IDL_EPROTO) {
		idl__srv_refused_log(src, from, m->len);
	}
	n = idl__srv_serve(src, &peer->hello, src->rbuf, m->len, err, src->sbuf, from, peer);
	if (n != 0)
		serve_send(src, n, from);
	return 0;
}

void *
idl__srv_ep_main(void *arg)
{
	struct srv_src *src = arg;
	struct idl_server *srv = src->srv;
	const struct idl_transport *tr = src->ep->tr;
	unsigned failures = 0, wait = SRV_RS_WAIT;

	while (!atomic_load_explicit(&srv->stop_req, memory_order_relaxed)) {
		struct idl_xmsg m = { .data = src->rbuf, .cap = srv->rcap };
		struct idl_peer from;
		int err;

		/* The transport fills the address; what follows its length is never read. */
		from.len = 0;
		/* What a drain looks at: a receive that waited across two of its steps found
		 * nothing to read (server_drain.c). */
		atomic_store_explicit(&src->rstate, wait, memory_order_relaxed);
		err = IDL__TR_OP(tr, ep_recv)(src->ep->state, &m, &from,
					      &(struct idl_deadline){ 0, IDL_DEADLINE_MS_NONE });
		atomic_store_explicit(&src->rstate, wait - SRV_RS_WAIT + SRV_RS_BUSY,
				      memory_order_relaxed);
		wait += 1u << 2;
		if (serve_ep_one(src, &m, &from, err, &failures))
			break;
	}
	idl__srv_src_ended(src);
	return NULL;
}

int
idl__srv_ep_ready(struct srv_src *src, unsigned max)
{
	const struct idl_transport *tr = src->ep->tr;
	unsigned i;

	/* The endpoint's descriptor was readable: what is queued now, each receive without
	 * waiting (a deadline of 0 ms tries once), at most `max` so that the loop's other
	 * sources get their turn; the level-triggered descriptor reports the rest. */
	for (i = 0; i < max; i++) {
		struct idl_xmsg m = { .data = src->rbuf, .cap = src->srv->rcap };
		struct idl_peer from;
		int err;

		from.len = 0;
		err = IDL__TR_OP(tr, ep_recv)(src->ep->state, &m, &from,
					      &(struct idl_deadline){ 0, 0 });
		if (err == IDL_ETIMEDOUT || err == IDL_EAGAIN)
			break;
		if (serve_ep_one(src, &m, &from, err, &src->ep_failures))
			return -1;
	}
	idl__srv_count(src->srv, i);
	return 0;
}
