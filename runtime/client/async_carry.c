/*
 * async_carry.c - calls carried over to a new connection: when a pollable port's connection
 * dies, a call whose request had not reached the transport (still in the send queue, or
 * waiting for its subsystem's hello) cannot have run at the server, so it goes on the next
 * connection instead of failing; the calls already sent fail, unless the server's goodbye
 * promised that it read none of them (docs/runtime.md, "Deadlines, death, cancel"). A call
 * is carried at most once, so that a server that dies at every connection does not keep a
 * call going round. The lock of the port is held throughout.
 *
 * It knows the call loop's connection and queue (async.h) and nothing of the server or a
 * transport's insides.
 */
#include <config.h>

#include <stdint.h>

#include "client/async.h"

void
idl__async_uncarry(struct idl__loop *lp, struct idl_async *call)
{
	for (struct idl_async **pp = &lp->carry; *pp != NULL; pp = &(*pp)->next)
		if (*pp == call) {
			*pp = call->next;
			break;
		}
	call->next = NULL;
	call->carrying = 0;
}

/* Puts a call on the carry list, in sequence-number order (the order calls were accepted). */
static void
async_carry_add(struct idl__loop *lp, struct idl_async *call)
{
	struct idl_async **pp = &lp->carry;

	while (*pp != NULL && (int32_t)((*pp)->seqno - call->seqno) < 0)
		pp = &(*pp)->next;
	call->next = *pp;
	*pp = call;
	call->carrying = 1;
	call->queued = 0;
	atomic_store(&call->state, IDL__ASYNC_QUEUED);
}

/* The calls whose requests the transport took, when the server's goodbye promised that it
 * read none it did not answer (IDLE, EVICTED): their replies would have come before the
 * goodbye, so the server never saw them, and they go on the next connection - but not one
 * whose first send gave away what it carried (its memory freed, its ports moved). */
static void
async_carry_sent(struct idl__loop *lp)
{
	for (unsigned i = 0; i < IDL__ASYNC_BUCKETS; i++)
		for (struct idl_async *call = lp->table[i]; call != NULL; call = call->hnext)
			if (call->complete != NULL && !call->carried && !call->carrying &&
			    atomic_load(&call->state) == IDL__ASYNC_SENT &&
			    !idl__msg_consumes(call->req))
				async_carry_add(lp, call);
}

void
idl__async_conn_died(struct idl__loop *lp, struct idl__aconn *c, int err, const char *why)
{
	/* A request that never reached the transport cannot have run: it may go on the next
	 * connection. Not after a connect that failed (the next would fail alike), a limit's
	 * goodbye (the server refused us) or a close, and only once per call, so that a server
	 * that dies at every connection does not keep a call going round. */
	if (err == MIG_SERVER_DIED && !c->connecting && !c->opening && !lp->closing) {
		for (unsigned i = 0; i < c->qlen; i++) {
			struct idl__aqent *e = &c->q[(c->qhead + i) % c->qcap];
			struct idl_async *call = e->call;

			if (call == NULL || call->complete == NULL || call->carried)
				continue;
			e->call = NULL;
			c->qcalls--;
			async_carry_add(lp, call);
		}
		for (size_t i = 0; i < c->nhellos; i++) {
			struct idl__ahello *h = &c->hellos[i];
			struct idl_async *w = h->waiters, *next;

			h->waiters = h->last = NULL;
			for (; w != NULL; w = next) {
				next = w->wnext;
				w->wnext = NULL;
				if (!w->carried) {
					c->hwait--;
					async_carry_add(lp, w);
				} else if (h->last != NULL) {
					h->last->wnext = w;
					h->last = w;
				} else {
					h->waiters = h->last = w;
				}
			}
		}
		if (c->goodbye == IDL_GOODBYE_IDLE || c->goodbye == IDL_GOODBYE_EVICTED)
			async_carry_sent(lp);
	}
	idl__async_fail_all(lp, err, why);
	if (lp->carry != NULL)
		idl__loop_wake(lp);
}

void
idl__async_carry_resume(struct idl__loop *lp, int err, const char *why)
{
	while (lp->carry != NULL) {
		struct idl_async *call = lp->carry;
		const char *w = why;
		int e = err;

		lp->carry = call->next;
		call->next = NULL;
		call->carrying = 0;
		call->carried = 1;
		if (e == 0 && (e = idl__async_place(lp, call)) != 0)
			w = idl_errdetail();
		if (e != 0)
			idl__async_finish(lp, call, e, w);
	}
	if (!idl__loop_corked(lp))
		idl__loop_flush(lp);
}
