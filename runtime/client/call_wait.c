/*
 * call_wait.c - the general path of a call: several calls in flight on one connection,
 * their replies matched by sequence number with a leader/follower scheme.
 *
 * At most one thread (the leader) receives on a connection at a time; a reply for another
 * call is checked and copied into that call's buffer and its thread woken; the leader role
 * passes on when the leader's own reply arrives or its deadline passes. A call alone on its
 * port does not come here (call.c, the lean path); one that comes while a lean call holds
 * the port has waited for it to leave (call.c) before it comes here.
 *
 * A waiting thread sleeps on a word of its call record (a private futex), woken by whoever
 * changed what it waits for, always under the port's lock: no wake-up is lost, and no
 * condition variable is made or destroyed per call.
 *
 * It knows the client's port, connection and calls (client.h) and nothing of the server; a
 * transport only through its ops.
 */
#include <config.h>

#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl_ool.h>

#include "client/client.h"
#include "trace/trace.h"

/* Details of a call's failure, for idl_errdetail(). */
const char idl__call_late[] = "deadline passed waiting for the reply";
static const char call_unsent[] = "deadline passed before the request was sent";
static const char call_died[] = "the server went away";
const char idl__call_refused[] = "reply with descriptors the transport refused";

#define CALL_OTHER_ORDER (IDL_ORDER_NATIVE == IDL_ORDER_LITTLE ? IDL_ORDER_BIG : IDL_ORDER_LITTLE)

void
idl__call_poke(struct idl__call *w)
{
	atomic_fetch_add_explicit(&w->wake, 1, memory_order_relaxed);
	syscall(SYS_futex, (uint32_t *)&w->wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void
idl__call_wake(struct idl__call *w)
{
	idl__call_poke(w);
}

void
idl__call_finish(struct idl__call *w, int result, const char *why)
{
	w->state = IDL__CALL_DONE;
	w->result = result;
	w->why = why;
	w->complete(w);
}

/*
 * Sleeps until poked or the call's deadline passes. Called with the port's lock held and
 * returns with it held; the word is read under the lock, so a poke made after (under the
 * lock) changes it and the futex returns at once. ETIMEDOUT when the sleep reached the
 * deadline, else 0 (poked, a signal, or a spurious return: the caller looks again).
 */
static int
call_sleep(struct idl_port *p, struct idl__call *w)
{
	unsigned seq = atomic_load_explicit(&w->wake, memory_order_relaxed);
	int64_t abs = idl_deadline_abs(&w->dl);
	struct timespec ts;
	long r;
	int e = 0;

	pthread_mutex_unlock(&p->lock);
	if (abs == IDL_DEADLINE_NONE) {
		r = syscall(SYS_futex, (uint32_t *)&w->wake, FUTEX_WAIT_PRIVATE, seq, NULL, NULL,
			    0);
	} else {
		/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time: the deadline's. */
		ts.tv_sec = (time_t)(abs / 1000000000);
		ts.tv_nsec = (long)(abs % 1000000000);
		r = syscall(SYS_futex, (uint32_t *)&w->wake, FUTEX_WAIT_BITSET_PRIVATE, seq, &ts,
			    NULL, FUTEX_BITSET_MATCH_ANY);
	}
	if (r != 0)
		e = errno;
	pthread_mutex_lock(&p->lock);
	return e == ETIMEDOUT ? ETIMEDOUT : 0;
}

/* Whether a sleep that returned `slept` leaves the call late. */
static int
call_late_now(struct idl__call *w, int slept)
{
	return slept == ETIMEDOUT || idl_deadline_passed(&w->dl);
}

void
idl__call_drop(void *buf, size_t len, int rcv_err)
{
	idl_msg_header_t *h = buf;

	if (rcv_err == 0 && idl__desc_msg(buf, len) && h->size == len)
		idl_msg_destroy(h);
}

uint32_t
idl__call_seqno(const void *buf, size_t len, int *ok)
{
	const idl_msg_header_t *h = buf;

	*ok = len >= offsetof(idl_msg_header_t, retcode);
	if (!*ok)
		return 0;
	return h->order == CALL_OTHER_ORDER ? __builtin_bswap32(h->seqno) : h->seqno;
}

int
idl__call_take(struct idl__call *w, const void *buf, size_t len, int rcv_err)
{
	const idl_msg_header_t *h = buf;
	int result = MIG_TYPE_ERROR;
	const char *why;

	if (h->order == CALL_OTHER_ORDER) {
		result = IDL_EBYTEORDER;
		why = "the server uses the other byte order";
	} else if (h->magic != IDL_MSG_MAGIC || h->order != IDL_ORDER_NATIVE) {
		result = MIG_REPLY_MISMATCH;
		why = "reply with a bad magic or byte order byte";
	} else if (rcv_err == IDL_EPROTO) {
		result = IDL_EPROTO;
		why = idl__call_refused;
	} else if (rcv_err == IDL_EMSGSIZE || len > w->rep_max) {
		why = "reply larger than the caller's buffer";
	} else if (len < IDL_MSG_HEADER_SIZE) {
		why = "reply shorter than a header";
	} else if (h->kind != w->rep_kind || h->id != w->rep_id) {
		result = MIG_REPLY_MISMATCH;
		why = "reply kind or id does not match the request";
	} else if (h->size != len) {
		why = "reply size field differs from the bytes received";
	} else if (h->retcode != 0 && len != IDL_MSG_HEADER_SIZE) {
		why = "error reply with a body";
	} else if ((h->flags & IDL_MSGF_DESC) && w->rep_kind != IDL_KIND_REPLY) {
		why = "hello reply with descriptors";
	} else {
		/* The reply's memory and ports go with its bytes, to the caller. */
		if (buf != w->rep)
			memcpy(w->rep, buf, len);
		idl__call_finish(w, h->retcode, NULL);
		return 0;
	}
	idl__call_finish(w, result, why);
	return 1;
}

void
idl__call_deliver(struct cl_conn *c, void *buf, size_t len, int rcv_err)
{
	struct idl__call *w;
	uint32_t seqno;
	int ok;

	seqno = idl__call_seqno(buf, len, &ok);
	/* Too short to carry a sequence number: nobody can be told, drop it. */
	if (!ok)
		return;
	for (w = CL_CALLS_FIRST(c); w != NULL; w = CL_CALLS_NEXT(w))
		if (w->seqno == seqno && w->rep_kind != 0 && w->state != IDL__CALL_DONE)
			break;
	/* A late reply to a call that timed out, or a stray; or one its call refused. */
	if (w == NULL || idl__call_take(w, buf, len, rcv_err) != 0)
		idl__call_drop(buf, len, rcv_err);
}

uint32_t
idl__goodbye_read(const void *buf, size_t len, size_t have, char *why, size_t whysz)
{
	const idl_msg_header_t *h = buf;
	const unsigned char *b = buf;
	uint32_t reason, tl = 0;

	/* The reason is in the header's id too: a receive with room for a header alone (a
	 * reply buffer cut short the rest) still knows it. */
	if (have < IDL_MSG_HEADER_SIZE || h->magic != IDL_MSG_MAGIC ||
	    h->order != IDL_ORDER_NATIVE || h->kind != IDL_KIND_GOODBYE || h->size != len)
		return 0;
	reason = (uint32_t)h->id;
	/* A reason this client does not know ends the connection as the server stopping. */
	if (reason == 0 || reason >= IDL_GOODBYE_REASONS)
		reason = IDL_GOODBYE_STOPPING;
	if (have >= IDL_MSG_HEADER_SIZE + 8)
		memcpy(&tl, b + IDL_MSG_HEADER_SIZE + 4, 4);
	if (tl > IDL_GOODBYE_TEXT_MAX || have < IDL_MSG_HEADER_SIZE + 8 ||
	    tl > have - IDL_MSG_HEADER_SIZE - 8)
		tl = 0;
	if (tl != 0)
		snprintf(why, whysz, "%.*s", (int)tl, (const char *)b + IDL_MSG_HEADER_SIZE + 8);
	else
		snprintf(why, whysz, "the server closed the connection (goodbye reason %u)",
			 (unsigned)reason);
	return reason;
}

int
idl__goodbye_err(uint32_t reason)
{
	return reason == IDL_GOODBYE_CONNECTIONS || reason == IDL_GOODBYE_PER_ADDRESS
		       ? IDL_ELIMIT
		       : MIG_SERVER_DIED;
}

int
idl__call_goodbye(struct idl_port *p, struct cl_conn *c, const void *buf, size_t len, size_t have)
{
	char why[sizeof c->dead_why];
	uint32_t reason = idl__goodbye_read(buf, len, have, why, sizeof why);

	if (reason == 0)
		return 0;
	if (!c->dead) {
		memcpy(c->dead_why, why, sizeof why);
		c->goodbye = reason;
		idl__cl_conn_dead(p, c, idl__goodbye_err(reason));
	}
	return 1;
}

int
idl__call_goodbye_retry(const struct cl_conn *c)
{
	return c->goodbye == IDL_GOODBYE_IDLE || c->goodbye == IDL_GOODBYE_EVICTED;
}

void
idl__call_dead_why(struct cl_conn *c)
{
	if (!c->dead)
		snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
}

void
idl__call_poke_all(struct cl_conn *c)
{
	for (struct idl__call *o = CL_CALLS_FIRST(c); o != NULL; o = CL_CALLS_NEXT(o))
		if (o->state != IDL__CALL_DONE)
			idl__call_poke(o);
}

/* Receives for every call on the connection until this call's reply came, its deadline
 * passed, or the connection died; then lets another waiting thread take the role. */
static void
call_lead(struct idl_port *p, struct cl_conn *c, struct idl__call *w)
{
	int again = 0;

	c->receiving = 1;
	while (w->state != IDL__CALL_DONE && !c->dead) {
		uint32_t cap = w->rep_max;
		void *buf = w->rep;
		struct idl_xmsg m;
		int err;

		/* Receive into a buffer that fits the largest reply any waiting call accepts,
		 * so that no reply is cut short because another thread happened to lead. */
		for (struct idl__call *o = CL_CALLS_FIRST(c); o != NULL; o = CL_CALLS_NEXT(o))
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
		/* A receive that brought another call's reply is followed by one bounded by
		 * what is left of this call's deadline. */
		if (again++)
			(void)idl_deadline_abs(&w->dl);
		pthread_mutex_unlock(&p->lock);
		memset(&m, 0, sizeof m);
		m.data = buf;
		m.cap = cap;
		err = p->tr->conn_recv(c->tr_state, &m, &w->dl);
		if (err == 0)
			IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_RECV, p->head.address, buf, m.len);
		pthread_mutex_lock(&p->lock);
		if (idl__rcv_has_msg(err, m.len)) {
			if (!idl__call_goodbye(p, c, buf, m.len, m.len < cap ? m.len : cap))
				idl__call_deliver(c, buf, m.len, err);
			continue;
		}
		if (err == IDL_ETIMEDOUT)
			break;
		idl__call_dead_why(c);
		idl__cl_conn_dead(p, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
	}
	c->receiving = 0;
	c->leader_cap = 0;
	idl__call_poke_all(c);
}

int
idl__call_send_failed(struct idl_port *p, struct cl_conn *c, int err)
{
	if (c->dead)
		return c->dead_err;
	if (err == IDL_ETIMEDOUT || err == IDL_EMSGSIZE)
		return err;
	if (!c->receiving) {
		/* A server that closed the connection on purpose said why before: read it, without
		 * waiting, when nobody else receives. */
		uint64_t gb[(IDL_MSG_HEADER_SIZE + 8 + IDL_GOODBYE_TEXT_MAX) / 8 + 1];
		struct idl_xmsg m = { .data = gb, .cap = sizeof gb };

		if (p->tr->conn_recv(c->tr_state, &m, &(struct idl_deadline){ 0, 0 }) == 0 &&
		    idl__call_goodbye(p, c, gb, m.len, m.len))
			return c->dead_err;
	}
	idl__call_dead_why(c);
	idl__cl_conn_dead(p, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
	return c->dead_err;
}

/* The transport's combined send and receive, for a call alone on its connection: it
 * leads, and other calls wait at the send gate until it is back. Called with the port's
 * lock and the connection's send lock held; releases the send lock. */
static void
call_combined(struct idl_port *p, struct cl_conn *c, struct idl__call *w,
	      const struct idl_xmsg *req)
{
	struct idl_xmsg rep;
	int err;

	memset(&rep, 0, sizeof rep);
	rep.data = w->rep;
	rep.cap = w->rep_max;
	c->receiving = 1;
	c->calling = 1;
	c->leader_cap = w->rep_max;
	w->state = IDL__CALL_SENT;
	pthread_mutex_unlock(&p->lock);
	IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_SEND, p->head.address, req->data, req->len);
	err = IDL__TR_OP(p->tr, conn_call)(c->tr_state, req, &rep, &w->dl);
	pthread_mutex_unlock(&c->send_lock);
	if (err == 0)
		IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_RECV, p->head.address, rep.data, rep.len);
	pthread_mutex_lock(&p->lock);
	c->calling = 0;
	c->receiving = 0;
	if (idl__rcv_has_msg(err, rep.len)) {
		/* What came may be the server's goodbye (it refused the connection, or ended
		 * it): then the call fails with the server's reason. */
		if (!idl__call_goodbye(p, c, w->rep, rep.len,
				       rep.len < rep.cap ? rep.len : rep.cap))
			idl__call_deliver(c, w->rep, rep.len, err);
	} else if (err == IDL_ETIMEDOUT && w->state != IDL__CALL_DONE)
		idl__call_finish(w, IDL_ETIMEDOUT, idl__call_late);
	else if (w->state != IDL__CALL_DONE && (err = idl__call_send_failed(p, c, err)) != 0 &&
		 w->state != IDL__CALL_DONE)
		idl__call_finish(w, err, "the call failed");
	/* What came may have been a late reply to an earlier call: then receive on. */
	if (w->state != IDL__CALL_DONE && !c->dead)
		call_lead(p, c, w);
	if (w->state != IDL__CALL_DONE)
		idl__call_finish(w, c->dead ? c->dead_err : IDL_ETIMEDOUT,
				 c->dead ? call_died : idl__call_late);
	idl__call_poke_all(c);
}

/*
 * Takes the connection's send lock within the call's deadline. A send holds it while it
 * waits for room (a peer that reads nothing), up to its own deadline, and a combined send
 * and receive while it waits for its reply: a call whose deadline comes first must not wait
 * past it. 0, or ETIMEDOUT.
 */
static int
call_send_lock(struct cl_conn *c, struct idl__call *w)
{
	int64_t abs, left;
	struct timespec ts;

	if (pthread_mutex_trylock(&c->send_lock) == 0)
		return 0;
	if ((abs = idl_deadline_abs(&w->dl)) == IDL_DEADLINE_NONE)
		return pthread_mutex_lock(&c->send_lock);
	/* pthread_mutex_timedlock() measures CLOCK_REALTIME: what is left, from now there. */
	left = abs - idl_now_ns();
	if (left < 0)
		left = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(left / 1000000000);
	ts.tv_nsec += (long)(left % 1000000000);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return pthread_mutex_timedlock(&c->send_lock, &ts);
}

/* Whether call w must wait before it may send: a combined send-and-receive is in the
 * transport, or a leader is blocked with a buffer too small for w's reply. A one-way send
 * waits at the send lock instead. */
static int
call_gated(const struct cl_conn *c, const struct idl__call *w)
{
	if (w->rep_kind == 0)
		return 0;
	return (c->receiving && c->leader_cap < w->rep_max) || c->calling;
}

int
idl__call_transact(struct idl_port *p, struct cl_conn *c, idl_msg_header_t *req,
		   struct idl__call *w, int *handed)
{
	struct idl_xmsg m;
	int err;

	w->seqno = atomic_fetch_add_explicit(&p->seqno, 1, memory_order_relaxed);
	req->seqno = w->seqno;
	w->rep_id = (int32_t)((uint32_t)req->id + IDL_REPLY_ID_OFFSET);
	idl__list_push_front(&c->calls, &w->link);

	/* The send gate. */
	while (call_gated(c, w) && !c->dead && w->state != IDL__CALL_DONE) {
		int slept = call_sleep(p, w);

		if (call_gated(c, w) && call_late_now(w, slept)) {
			idl__call_finish(w, IDL_ETIMEDOUT, call_unsent);
			break;
		}
	}
	if (w->state != IDL__CALL_DONE && c->dead)
		idl__call_finish(w, c->dead_err, call_died);
	if (w->state == IDL__CALL_DONE)
		goto out;

	memset(&m, 0, sizeof m);
	m.data = req;
	m.len = req->size;
	/* From here the transport has the request, and releases what it gives away. */
	*handed = 1;
	/* A one-way send holds the send lock, so the combined path must hold it too, or two
	 * producers could meet in a transport that has one (shm's ring). */
	if (w->rep_kind != 0 && IDL__TR_OP(p->tr, conn_call) != NULL && !c->receiving &&
	    idl__list_only(&c->calls, &w->link) && pthread_mutex_trylock(&c->send_lock) == 0) {
		call_combined(p, c, w, &m);
		goto out;
	}
	w->state = IDL__CALL_SENT;
	pthread_mutex_unlock(&p->lock);
	if (call_send_lock(c, w) != 0) {
		/* Another call's send still waits for room, within its own later deadline
		 * (or a combined call its reply): this request never went. */
		*handed = 0;
		pthread_mutex_lock(&p->lock);
		if (w->state != IDL__CALL_DONE)
			idl__call_finish(w, IDL_ETIMEDOUT, call_unsent);
		goto out;
	}
	IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_SEND, p->head.address, req, req->size);
	err = p->tr->conn_send(c->tr_state, &m, &w->dl);
	pthread_mutex_unlock(&c->send_lock);
	pthread_mutex_lock(&p->lock);
	/* A send that killed the connection has already failed this call, with the
	 * transport's reason. */
	if (err != 0 && w->state != IDL__CALL_DONE &&
	    (err = idl__call_send_failed(p, c, err)) != 0 && w->state != IDL__CALL_DONE) {
		snprintf(w->why_buf, sizeof w->why_buf, "send failed: %s", idl_errdetail());
		idl__call_finish(w, err, idl_errdetail()[0] != '\0' ? w->why_buf : "send failed");
	}
	if (w->rep_kind == 0 && w->state != IDL__CALL_DONE)
		idl__call_finish(w, 0, NULL);

	while (w->state != IDL__CALL_DONE) {
		if (c->dead) {
			idl__call_finish(w, c->dead_err, call_died);
		} else if (!c->receiving) {
			call_lead(p, c, w);
			if (w->state != IDL__CALL_DONE && !c->dead)
				idl__call_finish(w, IDL_ETIMEDOUT, idl__call_late);
		} else if (call_late_now(w, call_sleep(p, w)) && w->state != IDL__CALL_DONE) {
			idl__call_finish(w, IDL_ETIMEDOUT, idl__call_late);
		}
	}
out:
	idl__list_remove(&c->calls, &w->link);
	return w->result;
}
