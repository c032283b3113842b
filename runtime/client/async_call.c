/*
 * async_call.c - calls in flight: idl_call_async(), idl_async_cancel(),
 * idl_async_release(), the table that matches replies to calls, the hello of a subsystem
 * on the asynchronous connection, and the completions that idl_port_dispatch() runs.
 *
 * A call is one allocation (the record, its request's copy and its reply buffer), reused
 * by the port's next call once its done function ran and no handle names it. It is
 * completed exactly once, under the port's async lock (idl__async_finish()), and its
 * complete function runs later, with no lock held, from the port's dispatch, wait or close
 * (idl__async_run()). docs/call-core.md says why; docs/runtime.md, "Calls in flight", what
 * a user may rely on.
 *
 * The client room: it knows the client's ports and the call loop (async.h), core, ool and
 * trace, and nothing of the server or a transport's insides.
 */
#include <config.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_ool.h>

#include "client/async.h"
#include "core/mem_hide.h"

/* A call's record, rounded so that its request's copy and its reply buffer that follow it in
 * one allocation are aligned. */
#define ASYNC_HEAD ((sizeof(struct idl_async) + 15u) & ~(size_t)15u)
#define ASYNC_OTHER_ORDER (IDL_ORDER_NATIVE == IDL_ORDER_LITTLE ? IDL_ORDER_BIG : IDL_ORDER_LITTLE)

void
idl__async_unref(struct idl_async *call)
{
	if (atomic_fetch_sub_explicit(&call->refs, 1, memory_order_acq_rel) == 1)
		free(call);
}

/* Takes a call's entry out of the send queue: its request will not go. */
static void
async_unqueue(struct idl__loop *lp, struct idl_async *call)
{
	struct idl__aconn *c = lp->conn;

	if (!call->queued || c == NULL)
		return;
	for (unsigned i = 0; i < c->qlen; i++) {
		struct idl__aqent *e = &c->q[(c->qhead + i) % c->qcap];

		if (e->call == call) {
			e->call = NULL;
			c->qcalls--;
			break;
		}
	}
	call->queued = 0;
}

void
idl__async_finish(struct idl__loop *lp, struct idl_async *call, int result, const char *why)
{
	int st = atomic_load_explicit(&call->state, memory_order_relaxed);

	if (st >= IDL__ASYNC_DONE)
		return;
	if (call->complete == NULL) {
		/* The runtime's hello: its waiters learn the outcome. */
		async_unqueue(lp, call);
		idl__async_hello_done(lp, call, NULL, result, why);
		return;
	}
	if (st == IDL__ASYNC_HELLO)
		idl__async_unwait(lp, call);
	if (call->carrying)
		idl__async_uncarry(lp, call);
	idl__async_table_remove(lp, call);
	async_unqueue(lp, call);
	call->result = result;
	/* A copy, not a format: most calls end with no reason at all, and snprintf() would
	 * cost them more than the rest of their completion. */
	if (why == NULL) {
		call->why[0] = '\0';
	} else {
		size_t n = strnlen(why, sizeof call->why - 1);

		memcpy(call->why, why, n);
		call->why[n] = '\0';
	}
	atomic_store_explicit(&call->state, IDL__ASYNC_DONE, memory_order_release);
	call->next = NULL;
	if (lp->clast != NULL)
		lp->clast->next = call;
	else
		lp->cfirst = call;
	lp->clast = call;
	/* The thread dispatching runs it before it leaves (and keeps the descriptor readable
	 * for what it leaves queued): only another thread's completion must wake the loop. */
	if (!idl__loop_corked(lp))
		idl__loop_wake(lp);
}

void
idl__async_fail_all(struct idl__loop *lp, int err, const char *why)
{
	for (unsigned i = 0; i < IDL__ASYNC_BUCKETS; i++) {
		struct idl_async **pp = &lp->table[i];

		/* Carried calls wait for the next connection. */
		while (*pp != NULL) {
			if ((*pp)->carrying)
				pp = &(*pp)->hnext;
			else
				idl__async_finish(lp, *pp, err, why);
		}
	}
}

/* A call that was sent ends without its reply: a transport that resends unanswered
 * requests (conn_forget) stops resending its request. Lock held. */
static void
async_forget(struct idl__loop *lp, struct idl_async *call)
{
	struct idl__aconn *c = lp->conn;

	if (c != NULL && c->nb && !c->dead && IDL__TR_OP(lp->port->tr, conn_forget) != NULL)
		lp->port->tr->conn_forget(c->tr_state, call->seqno);
}

int64_t
idl__async_timers(struct idl__loop *lp, int64_t now)
{
	int64_t next = IDL_DEADLINE_NONE;

	for (unsigned i = 0; i < IDL__ASYNC_BUCKETS; i++) {
		struct idl_async *c = lp->table[i], *n;

		for (; c != NULL; c = n) {
			n = c->hnext;
			if (c->deadline <= now) {
				int sent = atomic_load(&c->state) == IDL__ASYNC_SENT;

				if (sent)
					async_forget(lp, c);
				idl__async_finish(
					lp, c, IDL_ETIMEDOUT,
					sent ? "deadline passed waiting for the reply"
					     : "deadline passed before the request was sent");
			} else if (c->deadline < next)
				next = c->deadline;
		}
	}
	return next;
}

/* The checks a reply passes before it is the call's: those of the synchronous path
 * (call_wait.c, idl__call_take). NULL when it is the call's, else what is wrong. */
static const char *
async_reply_bad(const struct idl_async *call, const idl_msg_header_t *h, size_t len, int rcv_err,
		int *result)
{
	*result = MIG_TYPE_ERROR;
	if (h->order == ASYNC_OTHER_ORDER) {
		*result = IDL_EBYTEORDER;
		return "the server uses the other byte order";
	}
	if (h->magic != IDL_MSG_MAGIC || h->order != IDL_ORDER_NATIVE) {
		*result = MIG_REPLY_MISMATCH;
		return "reply with a bad magic or byte order byte";
	}
	if (rcv_err == IDL_EPROTO) {
		*result = IDL_EPROTO;
		return idl__call_refused;
	}
	if (rcv_err == IDL_EMSGSIZE || len > call->rep_max)
		return "reply larger than the caller's buffer";
	if (len < IDL_MSG_HEADER_SIZE)
		return "reply shorter than a header";
	if (h->kind != call->rep_kind || h->id != call->rep_id) {
		*result = MIG_REPLY_MISMATCH;
		return "reply kind or id does not match the request";
	}
	if (h->size != len)
		return "reply size field differs from the bytes received";
	if (h->retcode != 0 && len != IDL_MSG_HEADER_SIZE)
		return "error reply with a body";
	if ((h->flags & IDL_MSGF_DESC) && call->rep_kind != IDL_KIND_REPLY)
		return "hello reply with descriptors";
	return NULL;
}

void
idl__async_deliver(struct idl__loop *lp, void *buf, size_t len, int rcv_err)
{
	const idl_msg_header_t *h = buf;
	struct idl_async *call;
	const char *bad;
	uint32_t seqno;
	int result;

	if (len < offsetof(idl_msg_header_t, retcode))
		return;
	if (h->kind == IDL_KIND_GOODBYE && lp->conn != NULL) {
		/* The server ends the connection and says why: the calls in flight end with
		 * that reason (IDL_ELIMIT for a limit), and the next call connects again. */
		struct idl__aconn *c = lp->conn;
		uint32_t reason = idl__goodbye_read(buf, len, rcv_err == 0 ? len : 0, c->dead_why,
						    sizeof c->dead_why);

		if (reason != 0) {
			idl__call_drop(buf, len, rcv_err);
			c->goodbye = reason;
			idl__loop_conn_dead(lp, c, idl__goodbye_err(reason));
			return;
		}
	}
	seqno = h->order == ASYNC_OTHER_ORDER ? __builtin_bswap32(h->seqno) : h->seqno;
	call = idl__async_table_find(lp, seqno);
	if (call == NULL || atomic_load(&call->state) != IDL__ASYNC_SENT) {
		/* A late reply to a call that timed out or was cancelled, or a stray. */
		idl__call_drop(buf, len, rcv_err);
		return;
	}
	bad = async_reply_bad(call, h, len, rcv_err, &result);
	if (call->complete == NULL) {
		if (bad != NULL)
			idl__call_drop(buf, len, rcv_err);
		idl__async_hello_done(lp, call, h, bad != NULL ? result : 0, bad);
		return;
	}
	if (bad != NULL) {
		idl__call_drop(buf, len, rcv_err);
		idl__async_finish(lp, call, result, bad);
		return;
	}
	/* The reply's memory and ports go with its bytes, to the call. */
	memcpy(call->rep, buf, len);
	if (((h->flags & IDL_MSGF_DESC) || h->ndesc != 0) &&
	    !idl__desc_count_ok(&call->ss->routines[call->number], call->rep, 0)) {
		idl_msg_destroy(call->rep);
		idl__async_finish(lp, call, MIG_TYPE_ERROR,
				  "reply with descriptors that are not the routine's");
		return;
	}
	idl__async_finish(lp, call, h->retcode, h->retcode != 0 ? "the server replied so" : NULL);
}

struct idl_async *
idl__async_new(struct idl__loop *lp, const idl_msg_header_t *req, uint32_t rep_max, int locked)
{
	size_t head = ASYNC_HEAD;
	size_t reqsz = ((size_t)req->size + 15u) & ~(size_t)15u;
	size_t need = head + reqsz + rep_max;
	struct idl_async *call = locked ? lp->spare : NULL;

	/* The port's spare record on top, when it is big enough (calls of one routine reuse
	 * each other's); else a new one. */
	if (call != NULL && call->cap >= need) {
		lp->spare = call->next;
		lp->nspare--;
		lp->spare_bytes -= call->cap;
		need = call->cap;
		idl__mem_show((char *)call + head, need - head);
	} else if ((call = malloc(need)) == NULL) {
		return NULL;
	}
	/* The detail text is cleared by its first byte: nothing reads past the NUL. */
	memset(call, 0, offsetof(struct idl_async, why));
	call->why[0] = '\0';
	call->complete = NULL;
	call->done = NULL;
	call->ctx = NULL;
	call->cap = need;
	call->lp = lp;
	call->req = (idl_msg_header_t *)((char *)call + head);
	call->rep = (idl_msg_header_t *)((char *)call + head + reqsz);
	call->rep_max = rep_max;
	memcpy(call->req, req, req->size);
	atomic_init(&call->refs, 1);
	atomic_init(&call->state, IDL__ASYNC_HELLO);
	return call;
}

/* Keeps the record of a call that ended for the next call, within the bounds. Lock held. */
static void
async_spare_put(struct idl__loop *lp, struct idl_async *call)
{
	if (lp->nspare >= IDL__ASYNC_SPARE_MAX ||
	    lp->spare_bytes + call->cap > IDL__ASYNC_SPARE_BYTES) {
		free(call);
		return;
	}
	call->next = lp->spare;
	lp->spare = call;
	lp->nspare++;
	lp->spare_bytes += call->cap;
	/* A done function that kept a pointer into its reply is caught by the sanitizers as if
	 * the record had been freed: all but the record itself, whose list link and size stay
	 * readable here. */
	idl__mem_hide((char *)call + ASYNC_HEAD, call->cap - ASYNC_HEAD);
}

void
idl__async_spares_free(struct idl__loop *lp)
{
	while (lp->spare != NULL) {
		struct idl_async *call = lp->spare;

		lp->spare = call->next;
		free(call);
	}
	lp->nspare = 0;
	lp->spare_bytes = 0;
}

/* The checks of idl_call() on its arguments, for a routine. */
static int
async_args(idl_port_t p, const struct idl_subsystem *ss, uint32_t number,
	   const idl_msg_header_t *req, uint32_t rep_max, idl_async_complete_fn *complete)
{
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL, "idl_call_async: not a client port");
	if (ss == NULL || ss->magic != IDL_SUBSYSTEM_MAGIC || number >= ss->nroutines)
		return idl__fail(IDL_EINVAL, "bad subsystem descriptor or routine number %u",
				 number);
	if (ss->routines[number].kind != IDL_RT_ROUTINE)
		return idl__fail(IDL_EINVAL, "%s.%s: called as a routine", ss->name,
				 ss->routines[number].name ? ss->routines[number].name : "(skip)");
	if (req == NULL || complete == NULL || req->size < IDL_MSG_HEADER_SIZE ||
	    req->size % IDL_MSG_ALIGN != 0 || rep_max < IDL_MSG_HEADER_SIZE)
		return idl__fail(IDL_EINVAL, "%s.%s: bad request, reply room %u or done function",
				 ss->name, ss->routines[number].name, rep_max);
	if ((req->flags & IDL_MSGF_DESC) && !(p->tr->flags & IDL_TRF_DESC))
		return idl__fail(
			IDL_ENOTSUP,
			"%s: %s.%s: the %s: transport carries no out-of-line data or ports",
			p->head.address, ss->name, ss->routines[number].name, p->tr->scheme);
	return 0;
}

/* Accepts a call under the lock: connected, its hello said or asked for, queued. */
static int
async_accept(struct idl__loop *lp, struct idl_async *call)
{
	struct idl_port *p = lp->port;
	int err;

	if (lp->closing)
		return idl__fail(IDL_ECLOSED, "%s: the port is closing", p->head.address);
	if ((err = idl__loop_conn(lp, call->deadline)) != 0)
		return err;
	/* Calls carried over from a connection that died go first, in their order. */
	if (lp->carry != NULL)
		idl__async_carry_resume(lp, 0, NULL);
	/* Calls waiting for a hello count too: each goes into the queue once it is answered,
	 * which must then not refuse it. */
	if (lp->conn->qcalls + lp->conn->hwait >= IDL__ASYNC_SENDQ_MAX)
		return idl__fail(IDL_EAGAIN, "%s: %u requests wait to be sent already",
				 p->head.address, IDL__ASYNC_SENDQ_MAX);
	call->seqno = atomic_fetch_add_explicit(&p->seqno, 1, memory_order_relaxed);
	call->req->seqno = call->seqno;
	if ((err = idl__async_place(lp, call)) != 0)
		return err;
	idl__async_table_add(lp, call);
	idl__loop_arm(lp, call->deadline);
	if (!idl__loop_corked(lp))
		idl__loop_flush(lp);
	return 0;
}

int
idl_call_async(idl_port_t p, const struct idl_subsystem *ss, uint32_t number,
	       const idl_msg_header_t *req, uint32_t rep_max, int timeout_ms,
	       idl_async_complete_fn *complete, void *done, void *ctx, idl_async_t **callp)
{
	struct idl__loop *lp = NULL;
	struct idl_async *call = NULL;
	int err;

	idl__clear_detail();
	if (callp != NULL)
		*callp = NULL;
	if ((err = async_args(p, ss, number, req, rep_max, complete)) != 0)
		goto refused;
	if (timeout_ms < 0)
		timeout_ms = ss->routines[number].waittime >= 0
				     ? ss->routines[number].waittime
				     : atomic_load_explicit(&p->timeout_ms, memory_order_relaxed);
	if ((err = idl__loop_get(p, &lp)) != 0)
		goto refused;
	pthread_mutex_lock(&lp->lock);
	if ((call = idl__async_new(lp, req, rep_max, 1)) == NULL) {
		pthread_mutex_unlock(&lp->lock);
		err = idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
		goto refused;
	}
	call->ss = ss;
	call->number = number;
	call->complete = complete;
	call->done = done;
	call->ctx = ctx;
	call->rep_kind = IDL_KIND_REPLY;
	call->req->magic = IDL_MSG_MAGIC;
	call->req->order = IDL_ORDER_NATIVE;
	call->req->kind = IDL_KIND_REQUEST;
	call->req->id = (int32_t)((uint32_t)ss->base + number);
	call->req->retcode = 0;
	call->rep_id = (int32_t)((uint32_t)call->req->id + IDL_REPLY_ID_OFFSET);
	call->deadline = idl_deadline_ms(timeout_ms);
	if (callp != NULL)
		atomic_store(&call->refs, 2);
	if (rep_max > lp->max_rep)
		lp->max_rep = rep_max;
	err = async_accept(lp, call);
	pthread_mutex_unlock(&lp->lock);
	if (err == 0) {
		if (callp != NULL)
			*callp = call;
		return 0;
	}
refused:
	/* A refused call still consumes what its request gives away. */
	if (req != NULL && req->size >= IDL_MSG_HEADER_SIZE && (req->flags & IDL_MSGF_DESC)) {
		idl_msg_header_t *r = call != NULL ? call->req : (idl_msg_header_t *)req;

		r->magic = IDL_MSG_MAGIC;
		r->order = IDL_ORDER_NATIVE;
		idl__msg_release_sent(r);
	}
	free(call);
	return err;
}

int
idl_async_cancel(idl_async_t *call)
{
	struct idl__loop *lp;
	idl_msg_header_t *msg;
	int st;

	idl__clear_detail();
	if (call == NULL)
		return idl__fail(IDL_EINVAL, "idl_async_cancel: NULL call");
	/* A completed call's port may be gone (closed): its state alone says so. */
	if (atomic_load_explicit(&call->state, memory_order_acquire) >= IDL__ASYNC_DONE)
		return 0;
	lp = call->lp;
	pthread_mutex_lock(&lp->lock);
	st = atomic_load(&call->state);
	if (st == IDL__ASYNC_SENT && lp->conn != NULL && !lp->conn->dead &&
	    (msg = idl__zalloc(IDL_MSG_HEADER_SIZE)) != NULL) {
		/* The server is told; a reply that still comes finds no call and is dropped. */
		msg->magic = IDL_MSG_MAGIC;
		msg->order = IDL_ORDER_NATIVE;
		msg->kind = IDL_KIND_CANCEL;
		msg->size = IDL_MSG_HEADER_SIZE;
		msg->id = call->req->id;
		msg->seqno = call->seqno;
		if (idl__loop_enqueue(lp, NULL, msg) != 0)
			free(msg);
		else if (!idl__loop_corked(lp))
			idl__loop_flush(lp);
	}
	if (st == IDL__ASYNC_SENT)
		async_forget(lp, call);
	if (st < IDL__ASYNC_DONE)
		idl__async_finish(lp, call, IDL_ECANCELED,
				  st == IDL__ASYNC_SENT ? "cancelled while in flight"
							: "cancelled before it was sent");
	pthread_mutex_unlock(&lp->lock);
	return 0;
}

void
idl_async_release(idl_async_t *call)
{
	if (call != NULL)
		idl__async_unref(call);
}

int
idl__async_run(struct idl__loop *lp, int max)
{
	struct idl_port *p = lp->port;
	struct idl_async *spent = NULL;
	int ran = 0;

	for (;;) {
		struct idl_async *batch, **cut;
		int k = 0;

		/* Under one lock: the records of the calls that ran go back to the port, and the
		 * completions queued by now (up to max) are taken, to run without it. Nobody
		 * else touches a completed call's link: a cancel or a late reply finds it done. */
		pthread_mutex_lock(&lp->lock);
		while (spent != NULL) {
			struct idl_async *n = spent->next;

			async_spare_put(lp, spent);
			spent = n;
		}
		for (cut = &lp->cfirst; *cut != NULL && (max < 0 || ran + k < max); k++)
			cut = &(*cut)->next;
		if (k == 0) {
			pthread_mutex_unlock(&lp->lock);
			break;
		}
		batch = lp->cfirst;
		lp->cfirst = *cut;
		*cut = NULL;
		if (lp->cfirst == NULL)
			lp->clast = NULL;
		pthread_mutex_unlock(&lp->lock);
		while (batch != NULL) {
			struct idl_async *call = batch;
			const char *rt = call->ss->routines[call->number].name;

			batch = call->next;
			call->next = NULL;
			/* The done function's idl_errdetail() names the failure. */
			idl__clear_detail();
			if (call->result != 0)
				idl__fail(call->result, "%s: %s.%s: %s", p->head.address,
					  call->ss->name, rt,
					  call->why[0] != '\0' ? call->why
							       : idl_strerror(call->result));
			call->complete(call->done, call->ctx, call->result,
				       call->result == 0 ? call->rep : NULL);
			atomic_store_explicit(&call->state, IDL__ASYNC_RAN, memory_order_release);
			/* The last reference: nobody holds a handle, so the port may reuse it. A
			 * handle released later frees the record itself (the port may be gone). */
			if (atomic_fetch_sub_explicit(&call->refs, 1, memory_order_acq_rel) == 1) {
				call->next = spent;
				spent = call;
			}
			ran++;
		}
	}
	return ran;
}
