/*
 * call.c - idl_call() and idl_send(): the client's hot path, the hello, and the matching
 * of replies to calls when several threads call on one port.
 *
 * Replies are matched by sequence number with a leader/follower scheme: at most one thread
 * (the leader) receives on a connection at a time; a reply for another waiting call is
 * copied into that call's buffer and its thread woken; the leader role passes on when the
 * leader's own reply arrives or its deadline passes. A single-threaded caller is always the
 * leader and receives straight into its own reply buffer: one send and one receive system
 * call per call, nothing else.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_ool.h>

#include "client.h"
#include "trace.h"

/* Details of a call's failure, for idl_errdetail(). */
static const char call_late[] = "deadline passed waiting for the reply";
static const char call_unsent[] = "deadline passed before the request was sent";
static const char call_died[] = "the server went away";

#define CALL_OTHER_ORDER (IDL_ORDER_NATIVE == IDL_ORDER_LITTLE ? IDL_ORDER_BIG : IDL_ORDER_LITTLE)

static void
call_link(struct cl_conn *c, struct cl_waiter *w)
{
	idl__list_push_front(&c->waiters, &w->link);
}

static void
call_unlink(struct cl_conn *c, struct cl_waiter *w)
{
	idl__list_remove(&c->waiters, &w->link);
}

static void
call_finish(struct cl_waiter *w, int result, const char *why)
{
	w->done = 1;
	w->result = result;
	w->why = why;
	pthread_cond_signal(&w->cv);
}

/* A received message nobody takes: what the transport made of its descriptors (memory,
 * ports) is released. A message the transport cut short carries nothing any more. */
static void
call_drop(void *buf, size_t len, int rcv_err)
{
	idl_msg_header_t *h = buf;

	if (rcv_err == 0 && idl__desc_msg(buf, len) && h->size == len)
		idl_msg_destroy(h);
}

/* Hands a received message to the call it answers, checking it on the way. */
static void
call_deliver(struct cl_conn *c, void *buf, size_t len, int rcv_err)
{
	const idl_msg_header_t *h = buf;
	struct cl_waiter *w;
	uint32_t seqno;

	/* Too short to carry a sequence number: nobody can be told, drop it. */
	if (len < offsetof(idl_msg_header_t, retcode))
		return;
	seqno = h->order == CALL_OTHER_ORDER ? __builtin_bswap32(h->seqno) : h->seqno;
	for (w = CL_WAITERS_FIRST(c); w != NULL; w = CL_WAITERS_NEXT(w))
		if (w->seqno == seqno && !w->done)
			break;
	if (w == NULL) {
		/* A late reply to a call that timed out, or a stray. */
		call_drop(buf, len, rcv_err);
		return;
	}

	if (h->order == CALL_OTHER_ORDER)
		call_finish(w, IDL_EBYTEORDER, "the server uses the other byte order");
	else if (h->magic != IDL_MSG_MAGIC || h->order != IDL_ORDER_NATIVE)
		call_finish(w, MIG_REPLY_MISMATCH, "reply with a bad magic or byte order byte");
	else if (rcv_err == IDL_EMSGSIZE || len > w->rep_max)
		call_finish(w, MIG_TYPE_ERROR, "reply larger than the caller's buffer");
	else if (len < IDL_MSG_HEADER_SIZE)
		call_finish(w, MIG_TYPE_ERROR, "reply shorter than a header");
	else if (h->kind != w->rep_kind || h->id != w->rep_id)
		call_finish(w, MIG_REPLY_MISMATCH, "reply kind or id does not match the request");
	else if (h->size != len)
		call_finish(w, MIG_TYPE_ERROR, "reply size field differs from the bytes received");
	else if (h->retcode != 0 && len != IDL_MSG_HEADER_SIZE)
		call_finish(w, MIG_TYPE_ERROR, "error reply with a body");
	else if ((h->flags & IDL_MSGF_DESC) && w->rep_kind != IDL_KIND_REPLY)
		call_finish(w, MIG_TYPE_ERROR, "hello reply with descriptors");
	else {
		/* The reply's memory and ports go with its bytes, to the caller. */
		if (buf != w->rep)
			memcpy(w->rep, buf, len);
		call_finish(w, h->retcode, NULL);
		return;
	}
	call_drop(buf, len, rcv_err);
}

/* Keeps what the transport said about the failure that ends the connection, so that
 * every call it fails can tell its caller (idl_errdetail()). */
static void
call_dead_why(struct cl_conn *c)
{
	if (!c->dead)
		snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
}

/* Receives for every call on the connection until this call's reply came, its deadline
 * passed, or the connection died; then lets another waiting thread take the role. */
static void
call_lead(struct idl_port *p, struct cl_conn *c, struct cl_waiter *w, int64_t deadline)
{
	c->receiving = 1;
	while (!w->done && !c->dead) {
		uint32_t cap = w->rep_max;
		void *buf = w->rep;
		struct idl_xmsg m;
		int err;

		/* Receive into a buffer that fits the largest reply any waiting call accepts,
		 * so that no reply is cut short because another thread happened to lead. */
		for (struct cl_waiter *o = CL_WAITERS_FIRST(c); o != NULL; o = CL_WAITERS_NEXT(o))
			if (o->rep_max > cap)
				cap = o->rep_max;
		if (cap > w->rep_max) {
			if (c->scratch_cap < cap) {
				void *nb = idl__zalloc(cap);

				if (nb != NULL) {
					free(c->scratch);
					c->scratch = nb;
					c->scratch_cap = cap;
				}
			}
			if (c->scratch_cap >= cap)
				buf = c->scratch;
			else
				cap = w->rep_max;
		}
		c->leader_cap = cap;
		pthread_mutex_unlock(&p->lock);
		memset(&m, 0, sizeof m);
		m.data = buf;
		m.cap = cap;
		err = p->tr->conn_recv(c->tr_state, &m, deadline);
		if (err == 0)
			IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_RECV, p->head.address, buf, m.len);
		pthread_mutex_lock(&p->lock);
		if (err == 0 || err == IDL_EMSGSIZE) {
			call_deliver(c, buf, m.len, err);
			continue;
		}
		if (err == IDL_ETIMEDOUT)
			break;
		call_dead_why(c);
		idl__cl_conn_dead(p, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
	}
	c->receiving = 0;
	c->leader_cap = 0;
	for (struct cl_waiter *o = CL_WAITERS_FIRST(c); o != NULL; o = CL_WAITERS_NEXT(o))
		if (!o->done)
			pthread_cond_signal(&o->cv);
}

/* A transport error on send: the peer's death ends the connection. */
static int
call_send_failed(struct idl_port *p, struct cl_conn *c, int err)
{
	if (c->dead)
		return c->dead_err;
	if (err == IDL_ETIMEDOUT || err == IDL_EMSGSIZE)
		return err;
	call_dead_why(c);
	idl__cl_conn_dead(p, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
	return c->dead_err;
}

/* The transport's combined send and receive, for a call alone on its connection: it
 * leads, and other calls wait at the send gate until it is back. Called with the port's
 * lock and the connection's send lock held; releases the send lock. */
static void
call_combined(struct idl_port *p, struct cl_conn *c, struct cl_waiter *w,
	      const struct idl_xmsg *req, int64_t deadline)
{
	struct idl_xmsg rep;
	int err;

	memset(&rep, 0, sizeof rep);
	rep.data = w->rep;
	rep.cap = w->rep_max;
	c->receiving = 1;
	c->calling = 1;
	c->leader_cap = w->rep_max;
	pthread_mutex_unlock(&p->lock);
	IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_SEND, p->head.address, req->data, req->len);
	err = IDL__TR_OP(p->tr, conn_call)(c->tr_state, req, &rep, deadline);
	pthread_mutex_unlock(&c->send_lock);
	if (err == 0)
		IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_RECV, p->head.address, rep.data, rep.len);
	pthread_mutex_lock(&p->lock);
	c->calling = 0;
	c->receiving = 0;
	if (err == 0 || err == IDL_EMSGSIZE)
		call_deliver(c, w->rep, rep.len, err);
	else if (err == IDL_ETIMEDOUT && !w->done)
		call_finish(w, IDL_ETIMEDOUT, call_late);
	else if (!w->done && (err = call_send_failed(p, c, err)) != 0 && !w->done)
		call_finish(w, err, "the call failed");
	/* What came may have been a late reply to an earlier call: then receive on. */
	if (!w->done && !c->dead)
		call_lead(p, c, w, deadline);
	if (!w->done)
		call_finish(w, c->dead ? c->dead_err : IDL_ETIMEDOUT,
			    c->dead ? call_died : call_late);
	for (struct cl_waiter *o = CL_WAITERS_FIRST(c); o != NULL; o = CL_WAITERS_NEXT(o))
		if (!o->done)
			pthread_cond_signal(&o->cv);
}

/* Sends `req` and waits for the matching reply into w->rep. Called and returns with the
 * port's lock held; w is linked while the call is in flight. */
static int
call_transact(struct idl_port *p, struct cl_conn *c, idl_msg_header_t *req, struct cl_waiter *w,
	      int64_t deadline, int *handed)
{
	struct idl_xmsg m;
	int err;

	w->seqno = atomic_fetch_add_explicit(&p->seqno, 1, memory_order_relaxed);
	req->seqno = w->seqno;
	w->rep_id = (int32_t)((uint32_t)req->id + IDL_REPLY_ID_OFFSET);
	call_link(c, w);

	/* The send gate: a leader blocked with a buffer too small for this call's reply
	 * must hand over before the request may go out, and nothing may be sent while a
	 * combined send-and-receive is in the transport. */
	while (((c->receiving && c->leader_cap < w->rep_max) || c->calling) && !c->dead &&
	       !w->done) {
		if (idl__cl_wait(&w->cv, &p->lock, deadline) != 0 && idl_now_ns() >= deadline) {
			call_finish(w, IDL_ETIMEDOUT, call_unsent);
			break;
		}
	}
	if (!w->done && c->dead)
		call_finish(w, c->dead_err, call_died);
	if (w->done)
		goto out;

	memset(&m, 0, sizeof m);
	m.data = req;
	m.len = req->size;
	/* From here the transport has the request, and releases what it gives away. */
	*handed = 1;
	/* A simpleroutine's send is not linked as a waiter and does not stop at the gate: it
	 * holds the send lock instead, so the combined path must hold it too, or two
	 * producers could meet in a transport that has one (shm's ring). */
	if (IDL__TR_OP(p->tr, conn_call) != NULL && !c->receiving &&
	    idl__list_only(&c->waiters, &w->link) && pthread_mutex_trylock(&c->send_lock) == 0) {
		call_combined(p, c, w, &m, deadline);
		goto out;
	}
	pthread_mutex_unlock(&p->lock);
	IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_SEND, p->head.address, req, req->size);
	pthread_mutex_lock(&c->send_lock);
	err = p->tr->conn_send(c->tr_state, &m, deadline);
	pthread_mutex_unlock(&c->send_lock);
	pthread_mutex_lock(&p->lock);
	/* A send that killed the connection has already failed this call, with the
	 * transport's reason. */
	if (err != 0 && !w->done && (err = call_send_failed(p, c, err)) != 0 && !w->done) {
		snprintf(w->why_buf, sizeof w->why_buf, "send failed: %s", idl_errdetail());
		call_finish(w, err, idl_errdetail()[0] != '\0' ? w->why_buf : "send failed");
	}

	while (!w->done) {
		if (c->dead) {
			call_finish(w, c->dead_err, call_died);
		} else if (!c->receiving) {
			call_lead(p, c, w, deadline);
			if (!w->done && !c->dead)
				call_finish(w, IDL_ETIMEDOUT, call_late);
		} else if (idl__cl_wait(&w->cv, &p->lock, deadline) != 0 && !w->done &&
			   idl_now_ns() >= deadline) {
			call_finish(w, IDL_ETIMEDOUT, call_late);
		}
	}
out:
	call_unlink(c, w);
	return w->result;
}

static void
call_hello_drop(struct cl_conn *c, const struct idl_subsystem *ss)
{
	for (size_t i = 0; i < c->nhellos; i++) {
		if (c->hellos[i].ss == ss) {
			free(c->hellos[i].verdicts);
			c->hellos[i] = c->hellos[--c->nhellos];
			return;
		}
	}
}

/* Forgets the hello for ss whose verdicts a call relied on, unless another thread already
 * replaced it (or is exchanging it again). */
static void
call_hello_forget(struct cl_conn *c, const struct idl_subsystem *ss, const uint8_t *verdicts)
{
	for (size_t i = 0; i < c->nhellos; i++) {
		if (c->hellos[i].ss == ss) {
			if (c->hellos[i].state == CL_HELLO_DONE &&
			    c->hellos[i].verdicts == verdicts)
				call_hello_drop(c, ss);
			return;
		}
	}
}

static struct cl_hello *
call_hello_find(struct cl_conn *c, const struct idl_subsystem *ss)
{
	for (size_t i = 0; i < c->nhellos; i++)
		if (c->hellos[i].ss == ss)
			return &c->hellos[i];
	return NULL;
}

/* Checks the server's reply to our hello of `version`, whose hashes were `own`, and turns
 * it into per-routine verdicts; or, when the server answered in an older version, sets
 * *again to it: it compared nothing, and we say hello again in that version. */
static int
call_hello_verdicts(struct idl_port *p, const struct idl_subsystem *ss, unsigned version,
		    const uint64_t *own, const idl_msg_header_t *rep, uint8_t **vp, unsigned *again)
{
	const struct idl__hello_body *b = (const struct idl__hello_body *)(rep + 1);
	unsigned rv = rep->size >= IDL_HELLO_FIXED ? IDL_HELLO_VERSION_OF(b->version) : 0;
	uint8_t *v;

	if (rv >= 1 && rv < version) {
		*again = rv;
		return 0;
	}
	if (rv != version || b->nroutines > IDL_HELLO_MAX_ROUTINES ||
	    rep->size != IDL_HELLO_FIXED + 8u * b->nroutines || b->base != ss->base)
		return idl__fail(IDL_EPROTO, "%s: %s: malformed hello reply", p->head.address,
				 ss->name);
	if ((v = malloc(ss->nroutines + 1u)) == NULL)
		return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
	idl__hello_compare(ss, own, b->hashes, b->nroutines, v);
	*vp = v;
	return 0;
}

/* Exchanges the hello for ss on this connection. Lock held. The hello goes in our newest
 * version; a server that speaks an older one answers in it (and is asked again in it), and
 * a version 1 server, which refuses every other version with IDL_EPROTO, is asked again in
 * version 1. */
static int
call_hello_exchange(struct idl_port *p, struct cl_conn *c, const struct idl_subsystem *ss,
		    int64_t deadline)
{
	unsigned version = IDL_HELLO_VERSION, again;
	struct cl_waiter w;
	struct cl_hello *h;
	idl_msg_header_t *req;
	uint64_t *own;
	uint8_t *verdicts = NULL;
	int err;

	memset(&w, 0, sizeof w);
	if ((req = idl__zalloc(2 * (size_t)IDL_HELLO_MAX + 8u * ((size_t)ss->nroutines + 1))) ==
	    NULL)
		return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
	own = (uint64_t *)(void *)((char *)req + 2 * (size_t)IDL_HELLO_MAX);
	for (;;) {
		idl__hello_hashes(ss, version, own);
		if ((err = idl__hello_build(ss, version, own, req)) < 0)
			break;
		memset(&w, 0, sizeof w);
		idl__cl_cond_init(&w.cv);
		w.rep_kind = IDL_KIND_HELLO_REPLY;
		w.rep = (idl_msg_header_t *)((char *)req + IDL_HELLO_MAX);
		w.rep_max = IDL_HELLO_MAX;
		err = call_transact(p, c, req, &w, deadline, &(int){ 0 });
		pthread_cond_destroy(&w.cv);
		again = 0;
		if (err == 0)
			err = call_hello_verdicts(p, ss, version, own, w.rep, &verdicts, &again);
		else if (err == IDL_EPROTO && w.why == NULL && version > 1)
			again = 1;
		else if (w.why == NULL)
			idl__fail(err, "%s: the server does not serve subsystem %s (%s)",
				  p->head.address, ss->name, idl_errname(err));
		else
			idl__fail(err, "%s: %s: hello: %s", p->head.address, ss->name, w.why);
		if (again == 0)
			break;
		version = again;
	}
	free(req);

	h = call_hello_find(c, ss);
	if (err == 0) {
		h->state = CL_HELLO_DONE;
		h->verdicts = verdicts;
	} else if (w.why == NULL && err != IDL_ENOMEM && err != IDL_EPROTO) {
		/* The server answered: remember its verdict for this connection. */
		h->state = CL_HELLO_FAILED;
		h->err = err;
	} else {
		call_hello_drop(c, ss);
	}
	pthread_cond_broadcast(&c->hello_cv);
	return err;
}

/* The verdicts for ss on this connection, exchanging the hello first if needed. */
static int
call_hello(struct idl_port *p, struct cl_conn *c, const struct idl_subsystem *ss, int64_t deadline,
	   const uint8_t **verdicts)
{
	int err;

	for (;;) {
		struct cl_hello *h;

		if (c->dead)
			return c->dead_err;
		h = call_hello_find(c, ss);
		if (h == NULL)
			break;
		if (h->state == CL_HELLO_DONE) {
			*verdicts = h->verdicts;
			return 0;
		}
		if (h->state == CL_HELLO_FAILED)
			return idl__fail(h->err, "%s: the server does not serve subsystem %s (%s)",
					 p->head.address, ss->name, idl_errname(h->err));
		if (idl__cl_wait(&c->hello_cv, &p->lock, deadline) != 0 && idl_now_ns() >= deadline)
			return idl__fail(IDL_ETIMEDOUT, "%s: %s: deadline passed during the hello",
					 p->head.address, ss->name);
	}
	if (c->nhellos == c->hellos_cap) {
		size_t ncap = c->hellos_cap ? 2 * c->hellos_cap : 4;
		struct cl_hello *nh = realloc(c->hellos, ncap * sizeof *nh);

		if (nh == NULL)
			return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
		c->hellos = nh;
		c->hellos_cap = ncap;
	}
	memset(&c->hellos[c->nhellos], 0, sizeof c->hellos[0]);
	c->hellos[c->nhellos].ss = ss;
	c->hellos[c->nhellos++].state = CL_HELLO_PENDING;
	err = call_hello_exchange(p, c, ss, deadline);
	if (err != 0)
		return err;
	return call_hello(p, c, ss, deadline, verdicts);
}

/* Sends a simpleroutine's request. Lock held. */
static int
call_oneway(struct idl_port *p, struct cl_conn *c, idl_msg_header_t *req, int64_t deadline,
	    int *handed)
{
	struct idl_xmsg m;
	int err;

	req->seqno = atomic_fetch_add_explicit(&p->seqno, 1, memory_order_relaxed);
	memset(&m, 0, sizeof m);
	m.data = req;
	m.len = req->size;
	*handed = 1;
	pthread_mutex_unlock(&p->lock);
	IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_SEND, p->head.address, req, req->size);
	pthread_mutex_lock(&c->send_lock);
	err = p->tr->conn_send(c->tr_state, &m, deadline);
	pthread_mutex_unlock(&c->send_lock);
	pthread_mutex_lock(&p->lock);
	return err == 0 ? 0 : call_send_failed(p, c, err);
}

static int
call_common(idl_port_t p, const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req,
	    idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms, uint8_t kind, int *handed)
{
	const struct idl_routine_desc *rt;
	const uint8_t *verdicts = NULL;
	struct cl_conn *c;
	struct cl_waiter w;
	int64_t deadline;
	int err;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL,
				 "%s: not a client port (a request port cannot "
				 "be called through)",
				 p != NULL ? p->head.address : "NULL port");
	if (ss == NULL || ss->magic != IDL_SUBSYSTEM_MAGIC || number >= ss->nroutines)
		return idl__fail(IDL_EINVAL, "bad subsystem descriptor or routine number %u",
				 number);
	rt = &ss->routines[number];
	if (rt->kind != (kind == IDL_KIND_REQUEST ? IDL_RT_ROUTINE : IDL_RT_SIMPLEROUTINE))
		return idl__fail(IDL_EINVAL, "%s.%s: called as a %s", ss->name,
				 rt->name ? rt->name : "(skip)",
				 kind == IDL_KIND_REQUEST ? "routine" : "simpleroutine");
	if (req->size < IDL_MSG_HEADER_SIZE || req->size % IDL_MSG_ALIGN != 0 ||
	    (kind == IDL_KIND_REQUEST && rep_max < IDL_MSG_HEADER_SIZE))
		return idl__fail(IDL_EINVAL, "%s.%s: bad request size %u or reply room %u",
				 ss->name, rt->name, req->size, rep_max);

	if (timeout_ms < 0)
		timeout_ms = rt->waittime >= 0
				     ? rt->waittime
				     : atomic_load_explicit(&p->timeout_ms, memory_order_relaxed);
	deadline = idl_deadline_ms(timeout_ms);
	req->magic = IDL_MSG_MAGIC;
	req->order = IDL_ORDER_NATIVE;
	req->kind = kind;
	req->id = (int32_t)((uint32_t)ss->base + number);
	req->retcode = 0;
	IDL__TRACE_REGISTER(ss);
	if ((req->flags & IDL_MSGF_DESC) && !(p->tr->flags & IDL_TRF_DESC))
		return idl__fail(IDL_ENOTSUP,
				 "%s: %s.%s: the %s: transport carries no "
				 "out-of-line data or ports",
				 p->head.address, ss->name, rt->name, p->tr->scheme);

	pthread_mutex_lock(&p->lock);
	err = idl__cl_conn_get(p, deadline, &c);
	if (err != 0) {
		pthread_mutex_unlock(&p->lock);
		return err;
	}
	err = call_hello(p, c, ss, deadline, &verdicts);
	if (err == MIG_SERVER_DIED) {
		/* A hello runs no server code, so trying it once more on a new connection is
		 * always safe: a server drops a connection that stays silent past its handshake
		 * timeout, and a port may be opened long before its first call. */
		idl__cl_conn_unref(p, c);
		err = idl__cl_conn_get(p, deadline, &c);
		if (err != 0) {
			pthread_mutex_unlock(&p->lock);
			return err;
		}
		err = call_hello(p, c, ss, deadline, &verdicts);
	}
	if (err == 0 && verdicts[number] == IDL__SIG_MISMATCH)
		err = idl__fail(IDL_ESIGNATURE, "%s.%s: signature differs from the server's",
				ss->name, rt->name);
	else if (err == 0 && verdicts[number] == IDL__SIG_ABSENT)
		err = idl__fail(MIG_BAD_ID, "%s.%s: the server at %s does not have this routine",
				ss->name, rt->name, p->head.address);
	else if (err == 0 && kind == IDL_KIND_ONEWAY)
		err = call_oneway(p, c, req, deadline, handed);
	else if (err == 0) {
		for (int retried = 0;; retried = 1) {
			memset(&w, 0, sizeof w);
			idl__cl_cond_init(&w.cv);
			w.rep_kind = IDL_KIND_REPLY;
			w.rep = rep;
			w.rep_max = rep_max;
			err = call_transact(p, c, req, &w, deadline, handed);
			pthread_cond_destroy(&w.cv);
			/* What the request gave away went with the first send: it cannot go
			 * again. */
			if (retried || err != IDL_EPROTO || w.why != NULL || c->dead ||
			    idl__msg_consumes(req))
				break;
			/* The server refused a well-formed request as coming before its hello:
			 * a message endpoint that forgot this peer (its table is bounded) or a
			 * restarted server behind a datagram transport. It refused before
			 * anything ran, so saying hello again and resending once is safe. */
			call_hello_forget(c, ss, verdicts);
			err = call_hello(p, c, ss, deadline, &verdicts);
			if (err == 0 && verdicts[number] != IDL__SIG_OK)
				err = idl__fail(verdicts[number] == IDL__SIG_MISMATCH
							? IDL_ESIGNATURE
							: MIG_BAD_ID,
						"%s.%s: the server at %s changed this routine",
						ss->name, rt->name, p->head.address);
			if (err != 0)
				goto out;
		}
		if (err != 0 && w.why != NULL)
			idl__fail(err, "%s: %s.%s: %s", p->head.address, ss->name, rt->name, w.why);
		else if (err != 0)
			idl__fail(err, "%s: %s.%s: the server replied %s", p->head.address,
				  ss->name, rt->name, idl_errname(err));
		else if (((rep->flags & IDL_MSGF_DESC) || rep->ndesc != 0) &&
			 !idl__desc_count_ok(rt, rep, 0)) {
			/* The runtime's promise to the stubs: the descriptors are the routine's
			 * in number, so a stub without any need not look. */
			idl_msg_destroy(rep);
			err = idl__fail(MIG_TYPE_ERROR,
					"%s: %s.%s: reply with %u descriptors, "
					"not as many as the routine has",
					p->head.address, ss->name, rt->name, rep->ndesc);
		}
	}
out:
	idl__cl_conn_unref(p, c);
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* A request that never reached the transport still gives away what it marks so: the
 * caller cannot tell how far a failed call got, so a call always consumes it. */
static void
call_release_unsent(idl_msg_header_t *req, int handed)
{
	if (handed || req == NULL || req->size < IDL_MSG_HEADER_SIZE ||
	    !(req->flags & IDL_MSGF_DESC))
		return;
	req->magic = IDL_MSG_MAGIC;
	req->order = IDL_ORDER_NATIVE;
	idl__msg_release_sent(req);
}

int
idl_call(idl_port_t port, const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req,
	 idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms)
{
	int handed = 0;
	int err = call_common(port, ss, number, req, rep, rep_max, timeout_ms, IDL_KIND_REQUEST,
			      &handed);

	call_release_unsent(req, handed);
	return err;
}

int
idl_send(idl_port_t port, const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req,
	 int timeout_ms)
{
	int handed = 0;
	int err = call_common(port, ss, number, req, NULL, 0, timeout_ms, IDL_KIND_ONEWAY, &handed);

	call_release_unsent(req, handed);

	if (err != 0 && idl_errdetail()[0] == '\0')
		idl__fail(err, "%s: %s: send: %s", idl_port_address(port),
			  ss != NULL && number < ss->nroutines ? ss->routines[number].name : "?",
			  idl_strerror(err));
	return err;
}
