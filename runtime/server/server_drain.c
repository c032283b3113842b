/*
 * server_drain.c - a drain (idl_server_drain()): a stop that lets the calls in flight
 * finish.
 *
 * idl_server_stop() ends every connection at once, each with a STOPPING goodbye, and a
 * request that was being served, or waited in the connection to be read, is lost to its
 * client (MIG_SERVER_DIED). A drain stops accepting, then ends each connection only once it
 * is idle - no request of its client read and left unanswered, nothing more to read - with
 * the same goodbye, and stops the server once none is left or its deadline has passed (the
 * rest then get their goodbye at once, as from a stop). A message endpoint (udp:) is served
 * until nothing has come to it for a step and nothing waits to be read.
 *
 * The drain runs in steps on the server's timer, in whichever thread waits on the set (an
 * embedded server's caller, in its dispatch): every DRAIN_STEP_NS it looks at what is left.
 * A pooled connection is idle when it waits in the set, quiet, with its descriptor not
 * readable; it is taken (claimed) before it is ended, so no thread serves it meanwhile. A
 * connection with a receiving thread (shm:, port:) is idle when its thread has waited in
 * its receive since the previous step; the drain takes it from the thread (WAIT to CLOSING,
 * server.h), which then serves nothing more, says goodbye and closes it.
 */
#include <config.h>

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "server/server.h"

/* How often a drain looks at what is left. */
#define DRAIN_STEP_NS (10 * 1000000ll)
/* Connections taken at once, under the lock, to be ended outside it. */
#define DRAIN_BATCH 64
#define DRAIN_GOODBYE "the server stops (drained)"

void
idl_server_drain(idl_server_t *srv, int timeout_ms)
{
	int64_t deadline, old;
	uint64_t one = 1;

	/* Only async-signal-safe operations: a clock read, atomics and a write. */
	if (srv == NULL)
		return;
	deadline = timeout_ms < 0 ? IDL_DEADLINE_NONE : idl_deadline_ms(timeout_ms);
	/* A second drain may only bring the deadline closer. */
	old = atomic_load(&srv->drain_deadline);
	while (!(atomic_load(&srv->drain_req) && old <= deadline) &&
	       !atomic_compare_exchange_weak(&srv->drain_deadline, &old, deadline))
		;
	atomic_store(&srv->drain_req, 1);
	if (write(srv->efd, &one, sizeof one) < 0)
		return;
}

void
idl__srv_drain_begin(struct idl_server *srv)
{
	if (atomic_exchange(&srv->drain_started, 1))
		return;
	/* Accepting stops: the listeners leave the set. Clients that connect meanwhile wait
	 * in the backlog: a passed socket's backlog is the next instance's, and an own one's
	 * are refused when the server closes it. */
	pthread_mutex_lock(&srv->lock);
	for (struct srv_ep *ep = srv->eps; ep != NULL; ep = ep->next)
		if (IDL__TR_OP(ep->tr, ep_accept) != NULL && !ep->closed)
			epoll_ctl(srv->epfd, EPOLL_CTL_DEL, IDL__TR_OP(ep->tr, ep_fd)(ep->state),
				  NULL);
	pthread_mutex_unlock(&srv->lock);
	idl__srv_svc_stopping(srv);
	pthread_mutex_lock(&srv->conn_lock);
	idl__srv_timer_lower(srv, idl_now_ns());
	pthread_mutex_unlock(&srv->conn_lock);
}

/* Whether nothing waits to be read on fd. */
static int
drain_unreadable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

/* Whether an ARMED pooled source is idle: quiet, nothing held read ahead or unsent,
 * nothing to read. conn_lock held. */
static int
drain_pooled_idle(struct srv_src *s)
{
	unsigned ev = 0;
	int fd;

	if (s->more || !idl__srv_quiet(s))
		return 0;
	fd = IDL__TR_OP(s->ep->tr, conn_fd)(s->conn, &ev);
	return !(ev & (IDL_TR_EV_MORE | IDL_TR_EV_OUT)) && drain_unreadable(fd);
}

/* Takes up to `max` idle pooled sources for the caller, off their deadline lists. */
static unsigned
drain_take(struct idl_server *srv, struct srv_src **out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&srv->conn_lock);
	for (struct srv_ep *ep = srv->eps; ep != NULL && n < max; ep = ep->next) {
		struct idl__list *ls[2] = { &ep->hs_list, &ep->idle_list };

		for (int i = 0; i < 2 && n < max; i++) {
			struct srv_src *s = IDL__LIST_FIRST(ls[i], struct srv_src, tlink), *next;

			for (; s != NULL && n < max; s = next) {
				next = IDL__LIST_NEXT(s, struct srv_src, tlink);
				if (atomic_load(&srv->slots[s->slot].word) !=
					    idl__slot_word(s->gen, SRV_SLOT_ARMED) ||
				    !drain_pooled_idle(s) || !idl__srv_claim(srv, s))
					continue;
				idl__srv_tlist_remove(srv, s);
				out[n++] = s;
			}
		}
	}
	pthread_mutex_unlock(&srv->conn_lock);
	return n;
}

/* Ends the idle pooled connections, each with a goodbye. */
static void
drain_pooled(struct idl_server *srv)
{
	struct srv_src *idle[DRAIN_BATCH];
	unsigned n;

	do {
		n = drain_take(srv, idle, DRAIN_BATCH);
		for (unsigned i = 0; i < n; i++) {
			idl__srv_goodbye(idle[i], IDL_GOODBYE_STOPPING, DRAIN_GOODBYE);
			idl__srv_end(srv, idle[i]);
		}
	} while (n == DRAIN_BATCH);
}

/* A connection with a receiving thread: ended when its thread waited in the receive since
 * the last step (or, late, waits now) and no reply of it is deferred. Lock held, so that the
 * source outlives the goodbye. */
static void
drain_conn(struct srv_src *s, int late)
{
	unsigned v = atomic_load(&s->rstate);

	if ((v & SRV_RS_MASK) == SRV_RS_WAIT && (late || v == s->drain_seen) &&
	    atomic_load(&s->pending) == 0 && atomic_load(&s->deferred) == 0 &&
	    atomic_compare_exchange_strong(&s->rstate, &v, (v & ~SRV_RS_MASK) | SRV_RS_CLOSING)) {
		/* The thread sends nothing more: the goodbye is the last message. */
		idl__srv_goodbye(s, IDL_GOODBYE_STOPPING, DRAIN_GOODBYE);
		s->ep->tr->conn_close(s->conn);
	}
	s->drain_seen = v;
}

/* A message endpoint: done once nothing came to it for a step, nothing waits to be read and
 * no reply is deferred. Its thread's receive is woken by the close (ep_close); one served
 * from the set (an embedded server's, a passed socket's) leaves the set. Returns 1 while
 * it is not done. Lock held. */
static int
drain_ep(struct idl_server *srv, struct srv_src *s)
{
	struct srv_ep *ep = s->ep;
	int fd = IDL__TR_OP(ep->tr, ep_fd)(ep->state);
	int quiet = atomic_load(&s->deferred) == 0 && drain_unreadable(fd);

	if (s->threadless) {
		if (quiet && ep->drain_quiet) {
			epoll_ctl(srv->epfd, EPOLL_CTL_DEL, fd, NULL);
			ep->drained = 1;
		}
		ep->drain_quiet = quiet;
	} else {
		unsigned v = atomic_load(&s->rstate);

		if (quiet && (v & SRV_RS_MASK) == SRV_RS_WAIT && v == s->drain_seen) {
			ep->tr->ep_close(ep->state);
			ep->closed = 1;
			ep->drained = 1;
		}
		s->drain_seen = v;
	}
	return !ep->drained;
}

/* The sources with a thread of their own, and the message endpoints: returns how many
 * message endpoints are not done yet. */
static unsigned
drain_sources(struct idl_server *srv, int late)
{
	unsigned left = 0;

	pthread_mutex_lock(&srv->lock);
	for (struct srv_src *s = IDL__LIST_FIRST(&srv->live, struct srv_src, link); s != NULL;
	     s = IDL__LIST_NEXT(s, struct srv_src, link)) {
		if (s->conn != NULL)
			drain_conn(s, late);
		else if (!s->ep->drained && !s->ep->closed)
			left += (unsigned)drain_ep(srv, s);
	}
	pthread_mutex_unlock(&srv->lock);
	return left;
}

void
idl__srv_drain_step(struct idl_server *srv)
{
	int64_t now = idl_now_ns(), deadline = atomic_load(&srv->drain_deadline);
	int late = deadline != IDL_DEADLINE_NONE && now >= deadline;
	unsigned left;

	if (atomic_load(&srv->stop_req))
		return;
	if (!late)
		drain_pooled(srv);
	left = drain_sources(srv, late);
	pthread_mutex_lock(&srv->lock);
	left += srv->nconns;
	pthread_mutex_unlock(&srv->lock);
	if (left == 0 || late) {
		/* What is left gets its goodbye from the stop. */
		idl_server_stop(srv);
		return;
	}
	pthread_mutex_lock(&srv->conn_lock);
	idl__srv_timer_lower(srv, deadline - now > DRAIN_STEP_NS ? now + DRAIN_STEP_NS : deadline);
	pthread_mutex_unlock(&srv->conn_lock);
}
