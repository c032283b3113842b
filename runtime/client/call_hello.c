/*
 * call_hello.c - the client's side of the hello: exchanged once per connection and
 * subsystem, lazily, by the first call that needs it (concurrent first callers wait for the
 * one that does it); after it a call reads its routine's verdict from the connection.
 *
 * It knows the client's connection and core's hello (core/hello.c builds and compares the
 * bytes), and nothing of the server.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "client/client.h"

static void
call_hello_drop(struct cl_conn *c, const struct idl_subsystem *ss)
{
	for (size_t i = 0; i < c->nhellos; i++) {
		if (c->hellos[i].ss == ss) {
			if (c->last_verdicts == c->hellos[i].verdicts) {
				c->last_ss = NULL;
				c->last_verdicts = NULL;
			}
			free(c->hellos[i].verdicts);
			c->hellos[i] = c->hellos[--c->nhellos];
			return;
		}
	}
}

void
idl__call_hello_forget(struct cl_conn *c, const struct idl_subsystem *ss, const uint8_t *verdicts)
{
	for (size_t i = 0; i < c->nhellos; i++) {
		if (c->hellos[i].ss == ss) {
			/* Unless another thread already replaced it (or is exchanging it). */
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
		    struct idl_deadline *dl)
{
	unsigned version = IDL_HELLO_VERSION, again;
	struct idl__call w;
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
		w.rep_kind = IDL_KIND_HELLO_REPLY;
		w.rep = (idl_msg_header_t *)((char *)req + IDL_HELLO_MAX);
		w.rep_max = IDL_HELLO_MAX;
		w.dl = *dl;
		w.complete = idl__call_wake;
		err = idl__call_transact(p, c, req, &w, &(int){ 0 });
		*dl = w.dl; /* anchored there, perhaps: the call goes on from that */
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

int
idl__call_hello(struct idl_port *p, struct cl_conn *c, const struct idl_subsystem *ss,
		struct idl_deadline *dl, const uint8_t **verdicts)
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
			c->last_ss = ss;
			c->last_verdicts = h->verdicts;
			return 0;
		}
		if (h->state == CL_HELLO_FAILED)
			return idl__fail(h->err, "%s: the server does not serve subsystem %s (%s)",
					 p->head.address, ss->name, idl_errname(h->err));
		if (idl__cl_wait(&c->hello_cv, &p->lock, idl_deadline_abs(dl)) != 0 &&
		    idl_deadline_passed(dl))
			return idl__fail(IDL_ETIMEDOUT, "%s: %s: deadline passed during the hello",
					 p->head.address, ss->name);
	}
	if (c->nhellos == c->hellos_cap) {
		size_t ncap = c->hellos_cap ? 2 * c->hellos_cap : 4;
		struct cl_hello *nh = realloc(c->hellos, ncap * sizeof *nh);

		if (nh == NULL)
			return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
		/* The verdicts are the hellos' own allocations: the cached pointer stays. */
		c->hellos = nh;
		c->hellos_cap = ncap;
	}
	memset(&c->hellos[c->nhellos], 0, sizeof c->hellos[0]);
	c->hellos[c->nhellos].ss = ss;
	c->hellos[c->nhellos++].state = CL_HELLO_PENDING;
	err = call_hello_exchange(p, c, ss, dl);
	if (err != 0)
		return err;
	return idl__call_hello(p, c, ss, dl, verdicts);
}
