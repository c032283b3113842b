/*
 * call.c - idl_call() and idl_send(): the client's hot path.
 *
 * A call alone on its connection - the case of a program with one thread per port, and of
 * every benchmark row - takes the lean path: the port's lock once, to find the connection
 * and the routine's verdict and to see that no other call is in flight; then the request
 * goes out and the reply comes in with no lock, no condition variable and, when the
 * socket's timeout already is the call's, no clock read (the lazy deadline). A call that
 * finds others in flight takes the general path (call_wait.c), which matches replies to
 * calls by sequence number. docs/runtime.md, "The call path", and docs/call-core.md say
 * why the two paths are shaped so.
 *
 * The client room: it knows the client's port and connection (client.h), core, ool and
 * trace, and nothing of the server; a transport only through its ops.
 */
#include <config.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_ool.h>

#include "client/client.h"
#include "trace/trace.h"

/* A lean call's completion: its thread is the one that completes it. */
static void
call_lean_done(struct idl__call *w)
{
	(void)w;
}

/* The connection failed under a lean call: it ends, and the call with it. The call keeps
 * a reference, so that the connection (and the reason kept in it) outlives its detaching
 * until the call has reported it. A combined send and receive may have failed in its send,
 * having found the peer gone before the request went (shm:): the server's goodbye, if it
 * left one, is read first, as after any failed send, so that an idle close is seen as
 * one and the call goes again. */
static void
call_lean_dead(struct idl_port *p, struct cl_conn *c, struct idl__call *w, int err)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	pthread_mutex_lock(&p->lock);
	(void)idl__call_send_failed(p, c, err);
	idl__call_finish(w, c->dead_err,
			 c->dead_why[0] != '\0'		  ? c->dead_why
			 : c->dead_err == MIG_SERVER_DIED ? "the server went away"
							  : "the connection failed");
	pthread_mutex_unlock(&p->lock);
	w->held = c;
}

/* A lean call's send failed. */
static void
call_lean_unsent(struct idl_port *p, struct cl_conn *c, struct idl__call *w, int err)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	pthread_mutex_lock(&p->lock);
	err = idl__call_send_failed(p, c, err);
	pthread_mutex_unlock(&p->lock);
	w->held = c;
	snprintf(w->why_buf, sizeof w->why_buf, "send failed: %s", idl_errdetail());
	idl__call_finish(w, err, idl_errdetail()[0] != '\0' ? w->why_buf : "send failed");
}

/* Two 32-bit halves as the 64-bit word they make in memory, and four bytes as the 32-bit
 * word they make: the header's words, whatever the byte order. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CALL_W64(lo, hi) ((uint64_t)(uint32_t)(lo) | (uint64_t)(uint32_t)(hi) << 32)
#define CALL_W32(b0, b1, b2, b3)                                                                   \
	((uint32_t)(b0) | (uint32_t)(b1) << 8 | (uint32_t)(b2) << 16 | (uint32_t)(b3) << 24)
#else
#define CALL_W64(lo, hi) ((uint64_t)(uint32_t)(lo) << 32 | (uint64_t)(uint32_t)(hi))
#define CALL_W32(b0, b1, b2, b3)                                                                   \
	((uint32_t)(b0) << 24 | (uint32_t)(b1) << 16 | (uint32_t)(b2) << 8 | (uint32_t)(b3))
#endif

_Static_assert(offsetof(idl_msg_header_t, size) == 4 && offsetof(idl_msg_header_t, id) == 8 &&
		       offsetof(idl_msg_header_t, seqno) == 12 &&
		       offsetof(idl_msg_header_t, retcode) == 16 &&
		       offsetof(idl_msg_header_t, ndesc) == 20 &&
		       sizeof(idl_msg_header_t) == 3 * sizeof(uint64_t),
	       "call_reply_plain() reads the header as three words");

/* Whether h, len bytes received, is this call's plain reply: magic, order, kind, size, id and
 * seqno as expected, IDL_MSGF_DESC clear (the other flags are not looked at), the retcode
 * KERN_SUCCESS and no descriptors. The header's three words compared at once, without a
 * branch per field. */
static inline __attribute__((always_inline)) int
call_reply_plain(const idl_msg_header_t *h, uint32_t len, int32_t rep_id, uint32_t seqno)
{
	const uint64_t mask0 = CALL_W64(CALL_W32(0xff, 0xff, 0xff, IDL_MSGF_DESC), UINT32_MAX);
	const uint64_t want0 =
		CALL_W64(CALL_W32(IDL_MSG_MAGIC, IDL_ORDER_NATIVE, IDL_KIND_REPLY, 0), len);
	uint64_t got[3];

	memcpy(got, h, sizeof got);
	return (((got[0] & mask0) ^ want0) | (got[1] ^ CALL_W64(rep_id, seqno)) | got[2]) == 0;
}

/* The lean call's request is out: calls of other threads may send from now on, and its
 * receive delivers their replies (call_enter()). */
static inline __attribute__((always_inline)) void
call_lean_receiving(struct idl_port *p, struct cl_conn *c, const struct idl__call *w)
{
	c->lean_cap = w->rep_max;
	atomic_store(&c->lean, 1);
	/* A call that counted itself before this store waits to be told (both sides' accesses
	 * are sequentially consistent: one of them sees the other). */
	if ((atomic_load(&p->calls) & ~IDL__PORT_LEAN) > 1) {
		pthread_mutex_lock(&p->lock);
		pthread_cond_broadcast(&p->lean_cv);
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * The lean call's exchange: the call numbered, its request handed to the transport and its
 * first message received into rep (one op where the transport combines them). Returns the
 * receive's error; or, with *over set, what the call returns when it ended without a
 * receive (a one-way call sent, or a send that failed).
 */
static inline __attribute__((always_inline)) int
call_lean_exchange(struct idl_port *p, struct cl_conn *c, idl_msg_header_t *req,
		   struct idl__call *w, struct idl_xmsg *rep, int *handed, int *over)
{
	int (*combined)(void *, const struct idl_xmsg *, struct idl_xmsg *, struct idl_deadline *) =
		IDL__TR_OP(p->tr, conn_call);
	struct idl_xmsg m = { .data = req, .len = req->size };
	int err;

	w->seqno = atomic_fetch_add_explicit(&p->seqno, 1, memory_order_relaxed);
	req->seqno = w->seqno;
	w->rep_id = (int32_t)((uint32_t)req->id + IDL_REPLY_ID_OFFSET);
	/* From here the transport has the request, and releases what it gives away. */
	*handed = 1;
	w->state = IDL__CALL_SENT;
	if (w->rep_kind != 0 && combined != NULL)
		return combined(c->tr_state, &m, rep, &w->dl);
	err = p->tr->conn_send(c->tr_state, &m, &w->dl);
	if (err != 0) {
		call_lean_unsent(p, c, w, err);
		*over = 1;
		return w->result;
	}
	if (w->rep_kind == 0) {
		w->state = IDL__CALL_DONE;
		*over = 1;
		return 0;
	}
	call_lean_receiving(p, c, w);
	return p->tr->conn_recv(c->tr_state, rep, &w->dl);
}

/* The server's goodbye, received by a lean call: 1 when it ended the connection, and the
 * call with it (which then holds a reference to it until it has reported), 0 when it was
 * not one (it is dropped). */
static int
call_lean_goodbye(struct idl_port *p, struct cl_conn *c, struct idl__call *w, size_t len)
{
	int gone;

	/* The goodbye ends the connection, which may drop the port's reference to it: the
	 * call holds one of its own until it has reported. */
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	pthread_mutex_lock(&p->lock);
	gone = idl__call_goodbye(p, c, w->rep, len, len < w->rep_max ? len : w->rep_max);
	if (gone)
		idl__call_finish(w, c->dead_err, c->dead_why);
	pthread_mutex_unlock(&p->lock);
	if (gone)
		w->held = c;
	else
		idl__cl_conn_unref(p, c);
	return gone;
}

/*
 * Anything but the lean call's plain reply: a reply of this call that is an error or
 * carries descriptors, the server's goodbye, another thread's reply or a late one (the
 * receive then goes on within what is left of the deadline), or the receive's failure.
 * Returns the call's result.
 */
static __attribute__((noinline)) int
call_lean_other(struct idl_port *p, struct cl_conn *c, struct idl__call *w, struct idl_xmsg rep,
		int err)
{
	while (idl__rcv_has_msg(err, rep.len)) {
		const idl_msg_header_t *h = w->rep;
		uint32_t seqno;
		int ok;

		/* Any other reply of this call in one test: this call's well-formed reply, without
		 * a body if it is an error (idl__call_take() checks the same, one case at a time).
		 */
		if (err == 0 && rep.len >= IDL_MSG_HEADER_SIZE && h->seqno == w->seqno &&
		    h->magic == IDL_MSG_MAGIC && h->order == IDL_ORDER_NATIVE &&
		    h->kind == IDL_KIND_REPLY && h->id == w->rep_id && h->size == rep.len &&
		    (h->retcode == 0 || rep.len == IDL_MSG_HEADER_SIZE)) {
			w->state = IDL__CALL_DONE;
			w->result = h->retcode;
			return w->result;
		}
		if (h->kind == IDL_KIND_GOODBYE && call_lean_goodbye(p, c, w, rep.len))
			return w->result;
		seqno = idl__call_seqno(w->rep, rep.len, &ok);
		if (ok && seqno == w->seqno) {
			if (idl__call_take(w, w->rep, rep.len, err) != 0)
				idl__call_drop(w->rep, rep.len, err);
			return w->result;
		}
		/* Another thread's call that came while this one received, or a late reply to
		 * a call that gave up (or a stray): delivered or dropped. */
		if ((atomic_load_explicit(&p->calls, memory_order_acquire) & ~IDL__PORT_LEAN) > 1) {
			pthread_mutex_lock(&p->lock);
			idl__call_deliver(c, w->rep, rep.len, err);
			pthread_mutex_unlock(&p->lock);
		} else {
			idl__call_drop(w->rep, rep.len, err);
		}
		(void)idl_deadline_abs(&w->dl);
		rep = (struct idl_xmsg){ .data = w->rep, .cap = w->rep_max };
		err = p->tr->conn_recv(c->tr_state, &rep, &w->dl);
	}
	if (err == IDL_ETIMEDOUT)
		idl__call_finish(w, IDL_ETIMEDOUT, idl__call_late);
	else
		call_lean_dead(p, c, w, err);
	return w->result;
}

/*
 * The lean path: this call holds the port alone. Sends, then receives into the caller's
 * buffer until its own reply (a late reply to an earlier call that gave up is dropped). No
 * lock is taken unless the connection fails. Inlined, as call_lean_run() is; only the
 * common case - this call's well-formed reply, KERN_SUCCESS, no descriptors - is tested in
 * line, in three compares of the header's words.
 */
static inline __attribute__((always_inline)) int
call_lean(struct idl_port *p, struct cl_conn *c, idl_msg_header_t *req, struct idl__call *w,
	  int *handed, int *plain)
{
	struct idl_xmsg rep = { .data = w->rep, .cap = w->rep_max };
	int over = 0;
	int err = call_lean_exchange(p, c, req, w, &rep, handed, &over);

	if (over)
		return err;
	if (err == 0 && rep.len >= IDL_MSG_HEADER_SIZE &&
	    call_reply_plain(w->rep, (uint32_t)rep.len, w->rep_id, w->seqno)) {
		w->state = IDL__CALL_DONE;
		w->result = 0;
		*plain = 1;
		return 0;
	}
	return call_lean_other(p, c, w, rep, err);
}

/* The rest of a lean call's leaving when others came meanwhile (call_lean_leave()). */
static __attribute__((noinline)) void
call_lean_leave_busy(struct idl_port *p, struct cl_conn *c)
{
	int proxied = 0;

	pthread_mutex_lock(&p->lock);
	/* The calls that sent while this one received wait for a leader: one of them takes
	 * the role now. */
	if (c != NULL && c->lean_proxy) {
		c->lean_proxy = 0;
		c->receiving = 0;
		c->leader_cap = 0;
		idl__call_poke_all(c);
		proxied = 1;
	}
	pthread_cond_broadcast(&p->lean_cv);
	pthread_mutex_unlock(&p->lock);
	/* The reference call_enter() took for this call. */
	if (proxied)
		idl__cl_conn_unref(p, c);
}

/* The lean call leaves the port: the calls that came meanwhile (each counted itself, then
 * waits for IDL__PORT_LEAN to clear, under the lock) are woken. Either one counted itself
 * before this, and is woken here, or after, and finds the flag clear. A call that sent
 * beside it may have come and gone: its proxy role and its reference end here too. In line:
 * alone, leaving is two atomic operations, less than a call would cost around them. */
static inline __attribute__((always_inline)) void
call_lean_leave(struct idl_port *p, struct cl_conn *c)
{
	if (c != NULL)
		atomic_store_explicit(&c->lean, 0, memory_order_relaxed);
	/* A call that sent beside this one and has already left set lean_proxy (and took a
	 * reference for it) before its own count went; the acquire here sees that. */
	if (atomic_fetch_sub_explicit(&p->calls, IDL__PORT_LEAN | 1, memory_order_acq_rel) !=
		    (IDL__PORT_LEAN | 1) ||
	    (c != NULL && atomic_load_explicit(&c->lean_proxy, memory_order_acquire) != 0))
		call_lean_leave_busy(p, c);
}

/* A call on the general path enters: counted, then under the lock once no lean call holds
 * the port. 0, or IDL_ETIMEDOUT when the deadline passed waiting (the call has then left
 * again). */
static int
call_enter(struct idl_port *p, struct idl_deadline *dl)
{
	atomic_fetch_add(&p->calls, 1);
	pthread_mutex_lock(&p->lock);
	while (atomic_load(&p->calls) & IDL__PORT_LEAN) {
		struct cl_conn *c = p->conn;

		/* A lean call that receives is this connection's leader: this call may send,
		 * and waits for its reply as behind any leader. */
		if (c != NULL && atomic_load(&c->lean) != 0) {
			if (!c->lean_proxy) {
				/* A reference for the lean call, which took none: this call
				 * could see the connection die and be freed under it. */
				atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
				c->lean_proxy = 1;
				c->receiving = 1;
				c->leader_cap = c->lean_cap;
			}
			return 0;
		}
		/* It is sending, or in a combined send and receive, or leaving: it wakes this
		 * call when it receives alone or has left. */
		if (idl__cl_wait(&p->lean_cv, &p->lock, idl_deadline_abs(dl)) != 0 &&
		    idl_deadline_passed(dl)) {
			atomic_fetch_sub(&p->calls, 1);
			pthread_mutex_unlock(&p->lock);
			return idl__fail(IDL_ETIMEDOUT,
					 "%s: deadline passed before the request was sent",
					 p->head.address);
		}
	}
	return 0;
}

/* A call on the general path leaves: its last touch of the port's state, under the lock. */
static void
call_leave(struct idl_port *p)
{
	atomic_fetch_sub(&p->calls, 1);
	pthread_mutex_unlock(&p->lock);
}

/* Drops the call's reference to a connection (one that died, or failed its hello), with
 * the port's lock released meanwhile: the last reference frees it, and a transport's
 * clean-up may wait a moment for its peer (port:'s goodbye waits up to 50 ms for room). */
static void
call_unref_dead(struct idl_port *p, struct cl_conn *c)
{
	pthread_mutex_unlock(&p->lock);
	idl__cl_conn_unref(p, c);
	pthread_mutex_lock(&p->lock);
}

/* The connection and the verdicts of ss on it, connecting and saying hello first when
 * needed. Lock held; a reference is taken on *cp when it returns 0. */
static int
call_setup(struct idl_port *p, const struct idl_subsystem *ss, struct idl_deadline *dl,
	   struct cl_conn **cp, const uint8_t **verdicts)
{
	struct cl_conn *c;
	int err;

	if ((err = idl__cl_conn_get(p, dl, &c)) != 0)
		return err;
	err = idl__call_hello(p, c, ss, dl, verdicts);
	if (err == MIG_SERVER_DIED) {
		/* A hello runs no server code, so trying it once more on a new connection is
		 * always safe: a server drops a connection that stays silent past its handshake
		 * timeout, and a port may be opened long before its first call. */
		call_unref_dead(p, c);
		if ((err = idl__cl_conn_get(p, dl, &c)) != 0)
			return err;
		err = idl__call_hello(p, c, ss, dl, verdicts);
	}
	if (err != 0) {
		call_unref_dead(p, c);
		return err;
	}
	*cp = c;
	return 0;
}

static void
call_init(struct idl__call *w, uint8_t kind, idl_msg_header_t *rep, uint32_t rep_max,
	  const struct idl_deadline *dl)
{
	w->state = IDL__CALL_QUEUED;
	w->rep_kind = kind == IDL_KIND_REQUEST ? IDL_KIND_REPLY : 0;
	w->rep = rep;
	w->rep_max = rep_max;
	w->result = 0;
	w->why = NULL;
	w->dl = *dl;
	w->complete = idl__call_wake;
	w->held = NULL;
	atomic_init(&w->wake, 0);
}

/* The routine's verdict on this connection, as an error (0: the server has it alike). */
static int
call_verdict(struct idl_port *p, const struct idl_subsystem *ss, const struct idl_routine_desc *rt,
	     uint8_t verdict)
{
	if (verdict == IDL__SIG_OK)
		return 0;
	if (verdict == IDL__SIG_MISMATCH)
		return idl__fail(IDL_ESIGNATURE, "%s.%s: signature differs from the server's",
				 ss->name, rt->name);
	return idl__fail(MIG_BAD_ID, "%s.%s: the server at %s does not have this routine", ss->name,
			 rt->name, p->head.address);
}

/* What a finished routine call tells its caller: the detail of a failure, and the
 * descriptor count the runtime promises the stubs. */
static int
call_report(struct idl_port *p, const struct idl_subsystem *ss, const struct idl_routine_desc *rt,
	    const struct idl__call *w, idl_msg_header_t *rep, int err)
{
	if (err != 0 && w->why != NULL)
		return idl__fail(err, "%s: %s.%s: %s", p->head.address, ss->name, rt->name, w->why);
	if (err != 0)
		return idl__fail(err, "%s: %s.%s: the server replied %s", p->head.address, ss->name,
				 rt->name, idl_errname(err));
	if (((rep->flags & IDL_MSGF_DESC) || rep->ndesc != 0) && !idl__desc_count_ok(rt, rep, 0)) {
		/* The stubs need not look at descriptors a routine does not have. */
		idl_msg_destroy(rep);
		return idl__fail(MIG_TYPE_ERROR,
				 "%s: %s.%s: reply with %u descriptors, "
				 "not as many as the routine has",
				 p->head.address, ss->name, rt->name, rep->ndesc);
	}
	return 0;
}

/* Whether a call refused with `err` may be made again after a new hello: the server refused
 * a well-formed request as coming before its hello - a message endpoint that forgot this
 * peer (its table is bounded) or a restarted server behind a datagram transport. It refused
 * before anything ran, so saying hello again and resending once is safe, unless what the
 * request gave away went with the first send. */
static int
call_may_retry(const struct idl__call *w, const idl_msg_header_t *req, int err)
{
	return err == IDL_EPROTO && w->rep_kind != 0 && w->why == NULL && !idl__msg_consumes(req);
}

/*
 * The general path: under the port's lock once no lean call holds it, connecting and
 * saying hello as needed, then the call on the general path (call_wait.c). `stale` is the
 * verdicts of a lean attempt the server refused for want of a hello (call_may_retry()),
 * or NULL.
 */
static int
call_general(struct idl_port *p, const struct idl_subsystem *ss, const struct idl_routine_desc *rt,
	     idl_msg_header_t *req, idl_msg_header_t *rep, uint32_t rep_max, uint8_t kind,
	     struct idl_deadline *dl, const uint8_t *stale, int *handed)
{
	const uint8_t *verdicts = NULL;
	struct idl__call w;
	struct cl_conn *c;
	int err, retried = stale != NULL;

	if ((err = call_enter(p, dl)) != 0)
		return err;
	if ((err = call_setup(p, ss, dl, &c, &verdicts)) != 0) {
		call_leave(p);
		return err;
	}
	for (;;) {
		if (stale != NULL) {
			idl__call_hello_forget(c, ss, stale);
			if ((err = idl__call_hello(p, c, ss, dl, &verdicts)) != 0)
				break;
		}
		if ((err = call_verdict(p, ss, rt, verdicts[rt->number])) != 0)
			break;
		call_init(&w, kind, rep, rep_max, dl);
		err = idl__call_transact(p, c, req, &w, handed);
		*dl = w.dl;
		if (!retried && c->dead && idl__call_goodbye_retry(c) && !idl__msg_consumes(req)) {
			/* The server closed an idle connection and read nothing of this request:
			 * it goes again, once, on a new connection. */
			call_unref_dead(p, c);
			if ((err = call_setup(p, ss, dl, &c, &verdicts)) != 0) {
				call_leave(p);
				return err;
			}
			retried = 1;
			stale = NULL;
			continue;
		}
		if (retried || !call_may_retry(&w, req, err) || c->dead) {
			if (kind == IDL_KIND_REQUEST)
				err = call_report(p, ss, rt, &w, rep, err);
			break;
		}
		stale = verdicts;
		retried = 1;
	}
	call_leave(p);
	/* The last reference frees a dead connection, and a transport's clean-up may wait a
	 * moment for its peer (port:'s goodbye): not under the lock. */
	idl__cl_conn_unref(p, c);
	return err;
}

/* The lean path from the port taken to the port left: the call, then what its caller is
 * told; a call the server refused for want of a hello goes on to the general path. Inlined
 * into its one caller, as is that caller into idl_call() and idl_send(): each call between
 * them would move ten arguments and save as many registers, about a tenth of a null call. */
static inline __attribute__((always_inline)) int
call_lean_run(struct idl_port *p, struct cl_conn *c, const struct idl_subsystem *ss,
	      const struct idl_routine_desc *rt, idl_msg_header_t *req, idl_msg_header_t *rep,
	      uint32_t rep_max, int timeout_ms, uint8_t kind, int *handed)
{
	const uint8_t *verdicts = c->last_verdicts;
	struct idl__call w;
	int err, retry, plain = 0;

	w.state = IDL__CALL_QUEUED;
	w.rep_kind = kind == IDL_KIND_REQUEST ? IDL_KIND_REPLY : 0;
	w.rep = rep;
	w.rep_max = rep_max;
	w.result = 0;
	w.why = NULL;
	w.held = NULL;
	w.dl = idl_deadline_in(timeout_ms);
	w.complete = call_lean_done;
	err = call_lean(p, c, req, &w, handed, &plain);
	if (plain || (err == 0 && (kind != IDL_KIND_REQUEST ||
				   (!(rep->flags & IDL_MSGF_DESC) && rep->ndesc == 0)))) {
		call_lean_leave(p, c);
		return 0;
	}
	retry = call_may_retry(&w, req, err) ||
		(w.held != NULL && idl__call_goodbye_retry(w.held) && !idl__msg_consumes(req));
	if (!retry && kind == IDL_KIND_REQUEST)
		err = call_report(p, ss, rt, &w, rep, err);
	/* Leaving touches c, which the call's own reference (held, when the connection
	 * failed under it) keeps alive until after. */
	call_lean_leave(p, c);
	if (w.held != NULL)
		idl__cl_conn_unref(p, w.held);
	if (!retry)
		return err;
	return call_general(p, ss, rt, req, rep, rep_max, kind, &w.dl, verdicts, handed);
}

/* A lean one-way message whose send failed: what call_lean_run() does with a call whose
 * send failed - the connection's failure recorded, and the message sent once more on a new
 * connection when the server had closed an idle one and read nothing of it. */
static __attribute__((noinline)) int
call_oneway_unsent(struct idl_port *p, struct cl_conn *c, const struct idl_subsystem *ss,
		   const struct idl_routine_desc *rt, idl_msg_header_t *req,
		   const struct idl_deadline *dl, int err, int *handed)
{
	const uint8_t *verdicts = c->last_verdicts;
	struct idl__call w;
	int retry;

	call_init(&w, IDL_KIND_ONEWAY, NULL, 0, dl);
	w.complete = call_lean_done;
	w.seqno = req->seqno;
	w.rep_id = (int32_t)((uint32_t)req->id + IDL_REPLY_ID_OFFSET);
	w.state = IDL__CALL_SENT;
	call_lean_unsent(p, c, &w, err);
	retry = w.held != NULL && idl__call_goodbye_retry(w.held) && !idl__msg_consumes(req);
	call_lean_leave(p, c);
	if (w.held != NULL)
		idl__cl_conn_unref(p, w.held);
	if (!retry)
		return w.result;
	return call_general(p, ss, rt, req, NULL, 0, IDL_KIND_ONEWAY, &w.dl, verdicts, handed);
}

/* The lean path of a one-way message: numbered and handed to the transport, and nothing
 * else - no call record, since no reply will complete one, and no receiver role, since it
 * receives nothing (c->lean stays 0, so no other call proxies through it, and leaving need
 * not look at the connection). In line in idl_send(), as call_lean_run() is. */
static inline __attribute__((always_inline)) int
call_lean_oneway(struct idl_port *p, struct cl_conn *c, const struct idl_subsystem *ss,
		 const struct idl_routine_desc *rt, idl_msg_header_t *req, int timeout_ms,
		 int *handed)
{
	struct idl_xmsg m = { .data = req, .len = req->size };
	struct idl_deadline dl = idl_deadline_in(timeout_ms);
	int err;

	req->seqno = atomic_fetch_add_explicit(&p->seqno, 1, memory_order_relaxed);
	/* From here the transport has the message, and releases what it gives away. */
	*handed = 1;
	err = p->tr->conn_send(c->tr_state, &m, &dl);
	if (__builtin_expect(err != 0, 0))
		return call_oneway_unsent(p, c, ss, rt, req, &dl, err, handed);
	call_lean_leave(p, NULL);
	return 0;
}

/* The arguments of a call that failed the checks of call_common(), with the detail of the
 * first that fails. */
static int
call_bad_args(idl_port_t p, const struct idl_subsystem *ss, uint32_t number,
	      const idl_msg_header_t *req, uint32_t rep_max, uint8_t kind)
{
	const struct idl_routine_desc *rt;

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
	return idl__fail(IDL_EINVAL, "%s.%s: bad request size %u or reply room %u", ss->name,
			 rt->name, req->size, rep_max);
}

static inline __attribute__((always_inline)) int
call_common(idl_port_t p, const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req,
	    idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms, uint8_t kind, int *handed)
{
	const struct idl_routine_desc *rt;
	struct idl_deadline dl;
	struct cl_conn *c;
	unsigned zero = 0;
	int tracing;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT || ss == NULL ||
	    ss->magic != IDL_SUBSYSTEM_MAGIC || number >= ss->nroutines)
		return call_bad_args(p, ss, number, req, rep_max, kind);
	rt = &ss->routines[number];
	if (rt->kind != (kind == IDL_KIND_REQUEST ? IDL_RT_ROUTINE : IDL_RT_SIMPLEROUTINE) ||
	    req->size < IDL_MSG_HEADER_SIZE || req->size % IDL_MSG_ALIGN != 0 ||
	    (kind == IDL_KIND_REQUEST && rep_max < IDL_MSG_HEADER_SIZE))
		return call_bad_args(p, ss, number, req, rep_max, kind);
	if (timeout_ms < 0)
		timeout_ms = rt->waittime >= 0
				     ? rt->waittime
				     : atomic_load_explicit(&p->timeout_ms, memory_order_relaxed);
	req->magic = IDL_MSG_MAGIC;
	req->order = IDL_ORDER_NATIVE;
	req->kind = kind;
	req->id = (int32_t)((uint32_t)ss->base + number);
	req->retcode = 0;
	tracing = atomic_load_explicit(&idl__trace_on, memory_order_relaxed);
	if (__builtin_expect(tracing, 0))
		idl_trace_register(ss);
	if ((req->flags & IDL_MSGF_DESC) && !(p->tr->flags & IDL_TRF_DESC))
		return idl__fail(IDL_ENOTSUP,
				 "%s: %s.%s: the %s: transport carries no "
				 "out-of-line data or ports",
				 p->head.address, ss->name, rt->name, p->tr->scheme);

	/* Alone on the port, connected, the hello for ss done and the routine alike on both
	 * sides, and not traced (the general path traces what it sends and receives): the
	 * lean path. */
	if (!tracing &&
	    atomic_compare_exchange_strong_explicit(&p->calls, &zero, IDL__PORT_LEAN | 1,
						    memory_order_acquire, memory_order_relaxed)) {
		c = p->conn;
		if (c != NULL && c->last_ss == ss && c->last_verdicts[number] == IDL__SIG_OK) {
			if (kind == IDL_KIND_ONEWAY)
				return call_lean_oneway(p, c, ss, rt, req, timeout_ms, handed);
			return call_lean_run(p, c, ss, rt, req, rep, rep_max, timeout_ms, kind,
					     handed);
		}
		call_lean_leave(p, NULL);
	}
	dl = idl_deadline_in(timeout_ms);
	return call_general(p, ss, rt, req, rep, rep_max, kind, &dl, NULL, handed);
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
