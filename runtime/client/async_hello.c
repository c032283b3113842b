/*
 * async_hello.c - the hello of a subsystem on the asynchronous connection: said once per
 * connection as a call of the runtime's own, queued before the calls that wait for it; its
 * reply's verdicts admit each waiting call to the send queue or fail it, and a server of an
 * older version is asked again in its version (docs/call-core.md, "The pollable port").
 * The lock of the port's call loop is held throughout. It knows the client's ports and
 * nothing of the server.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/async.h"

static struct idl__ahello *
async_hello_find(struct idl__aconn *c, const struct idl_subsystem *ss)
{
	for (size_t i = 0; i < c->nhellos; i++)
		if (c->hellos[i].ss == ss)
			return &c->hellos[i];
	return NULL;
}

/* Takes a call off its hello's waiters. */
void
idl__async_unwait(struct idl__loop *lp, struct idl_async *call)
{
	struct idl__ahello *h = lp->conn != NULL ? async_hello_find(lp->conn, call->ss) : NULL;
	struct idl_async **pp, *prev = NULL;

	if (h == NULL)
		return;
	for (pp = &h->waiters; *pp != NULL; prev = *pp, pp = &(*pp)->wnext) {
		if (*pp == call) {
			*pp = call->wnext;
			if (h->last == call)
				h->last = prev;
			call->wnext = NULL;
			lp->conn->hwait--;
			return;
		}
	}
}

/* The routine's verdict as an error (0: alike on both sides), with its detail in buf. */
static int
async_verdict(const struct idl_port *p, const struct idl_subsystem *ss, uint32_t number, uint8_t v,
	      char *buf, size_t len)
{
	const char *name = ss->routines[number].name;

	if (v == IDL__SIG_OK)
		return 0;
	if (v == IDL__SIG_MISMATCH) {
		snprintf(buf, len, "%s.%s: signature differs from the server's", ss->name, name);
		return IDL_ESIGNATURE;
	}
	snprintf(buf, len, "%s.%s: the server at %s does not have this routine", ss->name, name,
		 p->head.address);
	return MIG_BAD_ID;
}

/* A call whose subsystem's hello is done goes to the send queue, or fails by its verdict. */
static void
async_admit(struct idl__loop *lp, struct idl__ahello *h, struct idl_async *call)
{
	char why[192];
	int err;

	if (h->state == CL_HELLO_FAILED) {
		snprintf(why, sizeof why, "the server does not serve subsystem %s (%s)",
			 call->ss->name, idl_errname(h->err));
		idl__async_finish(lp, call, h->err, why);
		return;
	}
	err = async_verdict(lp->port, call->ss, call->number, h->verdicts[call->number], why,
			    sizeof why);
	if (err != 0) {
		idl__async_finish(lp, call, err, why);
		return;
	}
	atomic_store(&call->state, IDL__ASYNC_QUEUED);
	if ((err = idl__loop_enqueue(lp, call, NULL)) != 0)
		idl__async_finish(lp, call, err, "the send queue is full");
}

/* Sends h's hello, in h->version (a call of the runtime's own, queued first). */
static int
async_hello_send(struct idl__loop *lp, struct idl__ahello *h, int64_t deadline)
{
	const struct idl_subsystem *ss = h->ss;
	idl_msg_header_t *msg;
	struct idl_async *hc;
	int err;

	idl__hello_hashes(ss, h->version, h->own);
	if ((msg = idl__zalloc(IDL_HELLO_MAX)) == NULL)
		return IDL_ENOMEM;
	if ((err = idl__hello_build(ss, h->version, h->own, msg)) < 0) {
		free(msg);
		return err;
	}
	hc = idl__async_new(lp, msg, IDL_HELLO_MAX, 0);
	free(msg);
	if (hc == NULL)
		return IDL_ENOMEM;
	hc->ss = ss;
	hc->rep_kind = IDL_KIND_HELLO_REPLY;
	hc->rep_id = (int32_t)((uint32_t)hc->req->id + IDL_REPLY_ID_OFFSET);
	hc->seqno = atomic_fetch_add_explicit(&lp->port->seqno, 1, memory_order_relaxed);
	hc->req->seqno = hc->seqno;
	hc->deadline = deadline;
	atomic_store(&hc->state, IDL__ASYNC_QUEUED);
	if ((err = idl__loop_enqueue(lp, hc, NULL)) != 0) {
		free(hc);
		return err;
	}
	idl__async_table_add(lp, hc);
	return 0;
}

/* Says hello for ss on the connection, in our newest version. */
static int
async_hello_start(struct idl__loop *lp, const struct idl_subsystem *ss, int64_t deadline,
		  struct idl__ahello **hp)
{
	struct idl__aconn *c = lp->conn;
	struct idl__ahello *h;
	uint64_t *own;
	int err;

	if (c->nhellos == c->hellos_cap) {
		size_t ncap = c->hellos_cap ? 2 * c->hellos_cap : 4;
		struct idl__ahello *nh = realloc(c->hellos, ncap * sizeof *nh);

		if (nh == NULL)
			return IDL_ENOMEM;
		c->hellos = nh;
		c->hellos_cap = ncap;
	}
	if ((own = calloc((size_t)ss->nroutines + 1u, sizeof *own)) == NULL)
		return IDL_ENOMEM;
	h = &c->hellos[c->nhellos];
	memset(h, 0, sizeof *h);
	h->ss = ss;
	h->state = CL_HELLO_PENDING;
	h->version = IDL_HELLO_VERSION;
	h->own = own;
	if ((err = async_hello_send(lp, h, deadline)) != 0) {
		free(own);
		return err;
	}
	c->nhellos++;
	*hp = h;
	return 0;
}

/* The hello's reply (or failure) came: its waiters go on or fail. A server that speaks an
 * older version answers in it, and a version 1 server refuses every other version with
 * IDL_EPROTO: either way the hello goes again in that version, and its waiters wait on. */
void
idl__async_hello_done(struct idl__loop *lp, struct idl_async *hc, const idl_msg_header_t *rep,
		      int result, const char *why)
{
	struct idl__ahello *h = lp->conn != NULL ? async_hello_find(lp->conn, hc->ss) : NULL;
	const struct idl__hello_body *b =
		rep != NULL ? (const struct idl__hello_body *)(rep + 1) : NULL;
	struct idl_async *w, *n;

	unsigned rv, again = 0;

	idl__async_table_remove(lp, hc);
	atomic_store(&hc->state, IDL__ASYNC_RAN);
	if (h == NULL) {
		idl__async_unref(hc);
		return;
	}
	rv = result == 0 && rep->size >= IDL_HELLO_FIXED ? IDL_HELLO_VERSION_OF(b->version) : 0;
	if (result == 0 && rep->retcode == 0 && rv >= 1 && rv < h->version)
		again = rv;
	else if (result == 0 && rep->retcode == IDL_EPROTO && h->version > 1)
		again = 1;
	if (again != 0) {
		int64_t deadline = hc->deadline;

		h->version = again;
		idl__async_unref(hc);
		if ((result = async_hello_send(lp, h, deadline)) == 0) {
			if (!idl__loop_corked(lp))
				idl__loop_flush(lp);
			return;
		}
		hc = NULL;
		why = "cannot say hello again in an older version";
	} else if (result == 0 && rep->retcode == 0 &&
		   (rep->size < IDL_HELLO_FIXED || rv != h->version ||
		    b->nroutines > IDL_HELLO_MAX_ROUTINES ||
		    rep->size != IDL_HELLO_FIXED + 8u * b->nroutines || b->base != hc->ss->base)) {
		result = IDL_EPROTO;
		why = "malformed hello reply";
	} else if (result == 0 && rep->retcode != 0) {
		result = rep->retcode;
		h->state = CL_HELLO_FAILED;
		h->err = result;
	} else if (result == 0 && (h->verdicts = malloc(hc->ss->nroutines + 1u)) == NULL) {
		result = IDL_ENOMEM;
		why = "out of memory";
	} else if (result == 0) {
		idl__hello_compare(h->ss, h->own, b->hashes, b->nroutines, h->verdicts);
		h->state = CL_HELLO_DONE;
	}
	w = h->waiters;
	h->waiters = h->last = NULL;
	for (; w != NULL; w = n) {
		n = w->wnext;
		w->wnext = NULL;
		lp->conn->hwait--;
		if (h->state == CL_HELLO_PENDING)
			idl__async_finish(lp, w, result, why);
		else
			async_admit(lp, h, w);
	}
	if (h->state == CL_HELLO_PENDING) {
		/* Not answered: the next call says hello again. */
		free(h->verdicts);
		free(h->own);
		*h = lp->conn->hellos[--lp->conn->nhellos];
	}
	if (hc != NULL)
		idl__async_unref(hc);
	/* The calls admitted go out now (a dispatch flushes at its end). */
	if (!idl__loop_corked(lp))
		idl__loop_flush(lp);
}

int
idl__async_place(struct idl__loop *lp, struct idl_async *call)
{
	struct idl_port *p = lp->port;
	struct idl__ahello *h;
	int err;

	atomic_store(&call->state, IDL__ASYNC_HELLO);
	h = async_hello_find(lp->conn, call->ss);
	if (h == NULL && (err = async_hello_start(lp, call->ss, call->deadline, &h)) != 0)
		return idl__fail(err, "%s: %s: cannot say hello: %s", p->head.address,
				 call->ss->name, idl_strerror(err));
	if (h->state == CL_HELLO_PENDING) {
		if (h->last != NULL)
			h->last->wnext = call;
		else
			h->waiters = call;
		h->last = call;
		lp->conn->hwait++;
	} else if (h->state == CL_HELLO_FAILED) {
		return idl__fail(h->err, "%s: the server does not serve subsystem %s (%s)",
				 p->head.address, call->ss->name, idl_errname(h->err));
	} else {
		char why[192];

		if ((err = async_verdict(p, call->ss, call->number, h->verdicts[call->number], why,
					 sizeof why)) != 0)
			return idl__fail(err, "%s", why);
		atomic_store(&call->state, IDL__ASYNC_QUEUED);
		if ((err = idl__loop_enqueue(lp, call, NULL)) != 0)
			return err;
	}
	return 0;
}
