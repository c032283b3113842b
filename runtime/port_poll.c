/*
 * port_poll.c - the pollable port: idl_port_fd(), idl_port_dispatch(), idl_port_wait(),
 * the asynchronous connection and its send queue, and the two ways a connection is driven.
 *
 * The port's descriptor is an epoll set (docs/call-core.md, "The pollable port") holding an
 * eventfd, written when a completion is queued and drained when none is left, a timerfd
 * armed to the earliest deadline of the calls in flight, and - for a transport with the
 * non-blocking operations - the connection's own descriptor. Such a connection is driven by
 * whoever dispatches: it receives until the transport has nothing more and sends the queue
 * in batches. A transport without them is driven by two threads of the connection's own, a
 * receiver blocked in conn_recv and a sender taking the queue, which complete calls under
 * the lock and write the eventfd; the caller's loop sees the same descriptor either way.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "call_async.h"
#include "tr_config.h"

/* Messages taken from the transport in one pass of a dispatch before the loop looks at its
 * other sources again; what is left keeps the descriptor readable. */
#define POLL_RECV_BATCH 256
/* Messages handed to conn_sendv_nb in one call. */
#define POLL_SEND_BATCH 64

_Thread_local char idl__aport_self __attribute__((tls_model("initial-exec")));

void
idl__aport_wake(struct idl__aport *ap)
{
	uint64_t one = 1;

	if (ap->ev_set)
		return;
	ap->ev_set = 1;
	while (write(ap->evfd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

/* Drains the eventfd once no completion is queued, so that the descriptor is readable
 * exactly while there is something to do. */
static void
poll_unwake(struct idl__aport *ap)
{
	uint64_t n;

	if (!ap->ev_set || ap->cfirst != NULL || (ap->conn != NULL && ap->conn->recv_more))
		return;
	while (read(ap->evfd, &n, sizeof n) < 0 && errno == EINTR)
		;
	ap->ev_set = 0;
}

void
idl__aport_arm(struct idl__aport *ap, int64_t deadline)
{
	struct itimerspec its;

	if (deadline >= ap->armed)
		return;
	memset(&its, 0, sizeof its);
	if (deadline != IDL_DEADLINE_NONE) {
		its.it_value.tv_sec = (time_t)(deadline / 1000000000);
		its.it_value.tv_nsec = (long)(deadline % 1000000000);
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	(void)timerfd_settime(ap->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	ap->armed = deadline;
}

/* Sets the timer to exactly `deadline` (later or earlier than before). */
static void
poll_rearm(struct idl__aport *ap, int64_t deadline)
{
	uint64_t n;

	/* A timer that fired stays readable until read. */
	while (read(ap->tfd, &n, sizeof n) < 0 && errno == EINTR)
		;
	ap->armed = IDL_DEADLINE_NONE;
	if (deadline == IDL_DEADLINE_NONE) {
		struct itimerspec its;

		memset(&its, 0, sizeof its);
		(void)timerfd_settime(ap->tfd, TFD_TIMER_ABSTIME, &its, NULL);
		return;
	}
	idl__aport_arm(ap, deadline);
}

int
idl__aport_get(struct idl_port *p, struct idl__aport **app)
{
	struct idl__aport *ap;
	struct epoll_event ev;

	/* Made once and kept until the port closes: every call after the first finds it
	 * without the port's lock (published with release order below). */
	if ((ap = __atomic_load_n(&p->async, __ATOMIC_ACQUIRE)) != NULL) {
		*app = ap;
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	if ((ap = p->async) != NULL) {
		pthread_mutex_unlock(&p->lock);
		*app = ap;
		return 0;
	}
	if ((ap = calloc(1, sizeof *ap)) == NULL) {
		pthread_mutex_unlock(&p->lock);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
	}
	ap->port = p;
	ap->armed = IDL_DEADLINE_NONE;
	/* Every connection's first reply is a hello's. */
	ap->max_rep = IDL_HELLO_MAX;
	ap->epfd = epoll_create1(EPOLL_CLOEXEC);
	ap->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ap->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	if (ap->epfd < 0 || ap->evfd < 0 || ap->tfd < 0 ||
	    (ev.data.fd = ap->evfd, epoll_ctl(ap->epfd, EPOLL_CTL_ADD, ap->evfd, &ev)) != 0 ||
	    (ev.data.fd = ap->tfd, epoll_ctl(ap->epfd, EPOLL_CTL_ADD, ap->tfd, &ev)) != 0) {
		int e = errno;

		if (ap->epfd >= 0)
			close(ap->epfd);
		if (ap->evfd >= 0)
			close(ap->evfd);
		if (ap->tfd >= 0)
			close(ap->tfd);
		free(ap);
		pthread_mutex_unlock(&p->lock);
		return idl__fail(IDL_ESYSERR(e), "%s: the pollable port: %s", p->head.address,
				 strerror(e));
	}
	pthread_mutex_init(&ap->lock, NULL);
	pthread_mutex_init(&ap->dispatch_lock, NULL);
	__atomic_store_n(&p->async, ap, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->lock);
	*app = ap;
	return 0;
}

/* The threaded driver's receiver: blocks in conn_recv, hands each message over under the
 * lock, and ends the connection when the transport fails (the port's close included). */
static void *
poll_receiver(void *arg)
{
	struct idl__aconn *c = arg;
	struct idl__aport *ap = c->ap;
	const struct idl_transport *tr = ap->port->tr;

	for (;;) {
		struct idl_deadline dl = idl_deadline_in(-1);
		struct idl_xmsg m;
		int err;

		pthread_mutex_lock(&ap->lock);
		if (c->dead) {
			pthread_mutex_unlock(&ap->lock);
			break;
		}
		if (c->rcap < ap->max_rep) {
			void *nb = idl__zalloc(ap->max_rep);

			if (nb != NULL) {
				free(c->rbuf);
				c->rbuf = nb;
				c->rcap = ap->max_rep;
			}
		}
		pthread_mutex_unlock(&ap->lock);
		memset(&m, 0, sizeof m);
		m.data = c->rbuf;
		m.cap = c->rcap;
		err = tr->conn_recv(c->tr_state, &m, &dl);
		pthread_mutex_lock(&ap->lock);
		if (err == 0 || err == IDL_EMSGSIZE) {
			idl__async_deliver(ap, c->rbuf, m.len, err);
		} else if (err != IDL_ETIMEDOUT) {
			if (!c->dead)
				snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
			idl__aport_conn_dead(ap, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
		}
		pthread_mutex_unlock(&ap->lock);
	}
	return NULL;
}

/* The first entry of the queue, or NULL when it is empty; empty entries are skipped. */
static struct idl__aqent *
poll_head(struct idl__aconn *c)
{
	while (c->qlen > 0) {
		struct idl__aqent *e = &c->q[c->qhead];

		if (e->call != NULL || e->ctl != NULL)
			return e;
		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
	}
	return NULL;
}

/* Takes the queue's first entry off; its call, if any, is SENT from here. */
static void
poll_pop(struct idl__aconn *c)
{
	struct idl__aqent *e = &c->q[c->qhead];

	if (e->call != NULL) {
		e->call->queued = 0;
		atomic_store(&e->call->state, IDL__ASYNC_SENT);
		c->qcalls--;
	}
	e->call = NULL;
	e->ctl = NULL;
	c->qhead = (c->qhead + 1) % c->qcap;
	c->qlen--;
}

/* The threaded driver's sender: sends the queue's entries one at a time with the blocking
 * conn_send, each bounded by its call's deadline. */
static void *
poll_sender(void *arg)
{
	struct idl__aconn *c = arg;
	struct idl__aport *ap = c->ap;
	const struct idl_transport *tr = ap->port->tr;

	pthread_mutex_lock(&ap->lock);
	for (;;) {
		struct idl__aqent *e = NULL;
		struct idl_async *call;
		idl_msg_header_t *msg;
		struct idl_deadline dl;
		struct idl_xmsg m;
		int err;

		while (!c->dead && (e = poll_head(c)) == NULL)
			pthread_cond_wait(&c->scv, &ap->lock);
		if (c->dead)
			break;
		call = e->call;
		msg = call != NULL ? call->req : e->ctl;
		dl = call != NULL ? idl_deadline_at(call->deadline) : idl_deadline_in(1000);
		if (call != NULL)
			atomic_fetch_add(&call->refs, 1); /* the request outlives a completion */
		poll_pop(c);
		pthread_mutex_unlock(&ap->lock);
		memset(&m, 0, sizeof m);
		m.data = msg;
		m.len = msg->size;
		err = tr->conn_send(c->tr_state, &m, &dl);
		pthread_mutex_lock(&ap->lock);
		if (call == NULL)
			free(msg);
		if (err == IDL_ETIMEDOUT || err == IDL_EMSGSIZE) {
			if (call != NULL)
				idl__async_finish(
					ap, call, err,
					err == IDL_EMSGSIZE
						? "request larger than the transport takes"
						: "deadline passed before the request was sent");
		} else if (err != 0) {
			if (!c->dead)
				snprintf(c->dead_why, sizeof c->dead_why, "send failed: %s",
					 idl_errdetail());
			idl__aport_conn_dead(ap, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
		}
		if (call != NULL)
			idl__async_unref(call);
	}
	pthread_mutex_unlock(&ap->lock);
	return NULL;
}

/* Frees a connection that ended (its threads joined first, with the lock released). */
static void
poll_conn_free(struct idl__aport *ap, struct idl__aconn *c)
{
	const struct idl_transport *tr = ap->port->tr;

	if (c->threads > 0) {
		pthread_mutex_unlock(&ap->lock);
		pthread_join(c->rthread, NULL);
		if (c->threads > 1)
			pthread_join(c->sthread, NULL);
		pthread_mutex_lock(&ap->lock);
	}
	for (unsigned i = 0; i < c->qlen; i++)
		free(c->q[(c->qhead + i) % c->qcap].ctl);
	for (size_t i = 0; i < c->nhellos; i++) {
		free(c->hellos[i].verdicts);
		free(c->hellos[i].own);
	}
	free(c->hellos);
	free(c->q);
	free(c->rbuf);
	pthread_cond_destroy(&c->scv);
	tr->conn_fini(c->tr_state);
	free(c->tr_state);
	free(c);
}

void
idl__aport_conn_dead(struct idl__aport *ap, struct idl__aconn *c, int err)
{
	if (c->dead)
		return;
	/* Every call in flight completes, each once; a request still in the queue goes on the
	 * next connection instead (idl__async_conn_died() says when). */
	idl__async_conn_died(ap, c, err,
			     c->dead_why[0] != '\0'   ? c->dead_why
			     : err == MIG_SERVER_DIED ? "the server went away"
						      : "the connection failed");
	c->dead = 1;
	c->dead_err = err;
	ap->port->tr->conn_close(c->tr_state);
	if (c->nb)
		(void)epoll_ctl(ap->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	pthread_cond_broadcast(&c->scv);
}

int
idl__aport_connect(struct idl__aport *ap, int64_t deadline)
{
	struct idl_port *p = ap->port;
	const struct idl_transport *tr = p->tr;
	struct idl_deadline dl = idl_deadline_at(deadline);
	struct idl__aconn *c = ap->conn;
	struct epoll_event ev;
	int err;

	if (c != NULL && !c->dead)
		return 0;
	if (c != NULL) {
		/* The next call after the peer's death reconnects. */
		ap->conn = NULL;
		poll_conn_free(ap, c);
		if (ap->conn != NULL)
			return ap->conn->dead ? ap->conn->dead_err : 0;
	}
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->tr_state = idl__zalloc(tr->conn_size)) == NULL ||
	    (c->q = calloc(2 * IDL__ASYNC_SENDQ_MAX, sizeof *c->q)) == NULL) {
		if (c != NULL)
			free(c->tr_state);
		free(c);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
	}
	c->qcap = 2 * IDL__ASYNC_SENDQ_MAX;
	c->ap = ap;
	c->resend_at = IDL_DEADLINE_NONE;
	pthread_cond_init(&c->scv, NULL);
	/* A transport whose descriptor is a set of its own (IDL_TRF_OWNSET) is cheaper with
	 * its blocking operations on threads. */
	c->nb = IDL__TR_OP(tr, conn_fd) != NULL && IDL__TR_OP(tr, conn_sendv_nb) != NULL &&
		IDL__TR_OP(tr, conn_recv_nb) != NULL && !(tr->flags & IDL_TRF_OWNSET);
	idl__clear_detail();
	/* A transport that connects without blocking does so in the caller's loop: the calls
	 * queue behind the connect (poll_connect_step). Otherwise connecting holds the lock,
	 * bounded by the call's deadline: every call of the port needs this connection. */
	if (c->nb && IDL__TR_OP(tr, conn_connect_nb) != NULL &&
	    IDL__TR_OP(tr, conn_connect_step) != NULL) {
		err = idl__config_conn(tr, p->cfg, c->tr_state);
		if (err == 0)
			err = tr->conn_connect_nb(c->tr_state, p->rest);
		if (err == IDL_EAGAIN) {
			c->connecting = 1;
			err = 0;
		}
	} else if ((err = idl__config_conn(tr, p->cfg, c->tr_state)) == 0) {
		err = tr->conn_connect(c->tr_state, p->rest, &dl);
	}
	if (err != 0) {
		if (idl_errdetail()[0] == '\0')
			idl__fail(err, "%s: connect: %s", p->head.address, idl_strerror(err));
		c->dead = 1;
		poll_conn_free(ap, c);
		return err;
	}
	ap->conn = c;
	if (c->nb) {
		unsigned events;

		c->fd = tr->conn_fd(c->tr_state, &events);
		memset(&ev, 0, sizeof ev);
		/* A connect in progress ends with writability; a handshake that waits for the
		 * peer's answer alone (IDL_TR_EV_WAITIN) is not woken by room to write. */
		c->want_out = c->connecting && !(events & IDL_TR_EV_WAITIN);
		ev.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0);
		ev.data.fd = c->fd;
		if (c->fd < 0 || epoll_ctl(ap->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
			err = idl__fail(IDL_ESYSERR(errno), "%s: epoll: %s", p->head.address,
					strerror(errno));
	} else {
		if ((c->rbuf = idl__zalloc(IDL__ASYNC_RBUF_MIN)) != NULL)
			c->rcap = IDL__ASYNC_RBUF_MIN;
		if (c->rbuf == NULL)
			err = idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
		else if ((err = pthread_create(&c->rthread, NULL, poll_receiver, c)) == 0 &&
			 ++c->threads &&
			 (err = pthread_create(&c->sthread, NULL, poll_sender, c)) == 0)
			c->threads++;
		if (err > 0)
			err = idl__fail(IDL_ESYSERR(err), "%s: cannot start a thread",
					p->head.address);
	}
	if (err != 0) {
		idl__aport_conn_dead(ap, c, err);
		ap->conn = NULL;
		poll_conn_free(ap, c);
	}
	return err;
}

int
idl__aport_enqueue(struct idl__aport *ap, struct idl_async *call, idl_msg_header_t *ctl)
{
	struct idl__aconn *c = ap->conn;
	struct idl__aqent *e;

	if (c->qlen == c->qcap || (call != NULL && c->qcalls >= IDL__ASYNC_SENDQ_MAX))
		return idl__fail(IDL_EAGAIN, "%s: %u requests wait to be sent already",
				 ap->port->head.address, c->qcalls);
	e = &c->q[(c->qhead + c->qlen) % c->qcap];
	e->call = call;
	e->ctl = ctl;
	c->qlen++;
	if (call != NULL) {
		call->queued = 1;
		c->qcalls++;
	}
	return 0;
}

/* Sets whether the connection's descriptor is watched for room to write. */
static void
poll_want_out(struct idl__aport *ap, struct idl__aconn *c, int want)
{
	struct epoll_event ev;

	if (c->want_out == want)
		return;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
	ev.data.fd = c->fd;
	(void)epoll_ctl(ap->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	c->want_out = want;
}

/* Whether the transport holds the rest of a frame it could not write yet. */
static int
poll_held(struct idl__aport *ap, struct idl__aconn *c)
{
	unsigned events = 0;

	(void)IDL__TR_OP(ap->port->tr, conn_fd)(c->tr_state, &events);
	return (events & IDL_TR_EV_OUT) != 0;
}

/* Sends the head of the queue with the blocking conn_send, bounded by its call's deadline:
 * the contract's way for a message with descriptors that conn_sendv_nb refused (it cannot go
 * as it is, and conn_send says why). 0, or the connection's error. Lock held. */
static int
poll_send_blocking(struct idl__aport *ap, struct idl__aconn *c)
{
	struct idl__aqent *e = poll_head(c);
	struct idl_async *call = e->call;
	idl_msg_header_t *msg = call != NULL ? call->req : e->ctl;
	struct idl_deadline dl =
		call != NULL ? idl_deadline_at(call->deadline) : idl_deadline_in(1000);
	struct idl_xmsg m;
	int err;

	memset(&m, 0, sizeof m);
	m.data = msg;
	m.len = msg->size;
	err = ap->port->tr->conn_send(c->tr_state, &m, &dl);
	if (err != 0 && err != IDL_ETIMEDOUT && err != IDL_EMSGSIZE)
		return err;
	if (err != 0 && call != NULL)
		idl__async_finish(ap, call, err,
				  err == IDL_EMSGSIZE
					  ? "request larger than the transport takes"
					  : "deadline passed before the request was sent");
	free(e->ctl);
	poll_pop(c);
	return 0;
}

/* Asks a transport that resends unanswered requests (conn_resend) to resend what is due
 * at `now`, and sets the timer for its next resend: 0, or the error that ends the
 * connection. Lock held. */
static int
poll_resend(struct idl__aport *ap, struct idl__aconn *c, int64_t now)
{
	int err = ap->port->tr->conn_resend(c->tr_state, now, &c->resend_at);

	if (err == 0)
		idl__aport_arm(ap, c->resend_at);
	return err;
}

void
idl__aport_flush(struct idl__aport *ap)
{
	struct idl__aconn *c = ap->conn;
	int (*sendv)(void *, const struct idl_xmsg *, unsigned);
	int sent;

	if (c == NULL || c->dead || c->connecting)
		return;
	if (!c->nb) {
		if (c->qlen != 0)
			pthread_cond_signal(&c->scv);
		return;
	}
	sendv = IDL__TR_OP(ap->port->tr, conn_sendv_nb);
	/* The rest of a frame the transport kept goes out before anything new. */
	if (poll_held(ap, c) && (sent = sendv(c->tr_state, NULL, 0)) != 0) {
		if (sent == IDL_EAGAIN) {
			poll_want_out(ap, c, 1);
			return;
		}
		goto dead;
	}
	while (poll_head(c) != NULL) {
		struct idl_xmsg m[POLL_SEND_BATCH];
		unsigned n = 0;

		/* Only the entries used are written, whole: clearing the batch's 64 first would
		 * cost more than filling the few a call usually sends. */
		for (unsigned i = 0; i < c->qlen && n < POLL_SEND_BATCH; i++) {
			struct idl__aqent *e = &c->q[(c->qhead + i) % c->qcap];
			idl_msg_header_t *msg = e->call != NULL ? e->call->req : e->ctl;

			if (msg == NULL)
				continue;
			m[n++] = (struct idl_xmsg){ .data = msg, .len = msg->size };
		}
		sent = sendv(c->tr_state, m, n);
		if (sent == IDL_ENOTSUP) {
			if ((sent = poll_send_blocking(ap, c)) != 0)
				goto dead;
			continue;
		}
		if (sent == IDL_EMSGSIZE) {
			struct idl__aqent *e = poll_head(c);

			if (e->call != NULL)
				idl__async_finish(ap, e->call, sent,
						  "request larger than the transport takes");
			else
				free(e->ctl);
			poll_pop(c);
			continue;
		}
		if (sent < 0)
			goto dead;
		for (int i = 0; i < sent; i++) {
			struct idl__aqent *e = poll_head(c);

			free(e->ctl);
			poll_pop(c);
		}
		/* The first requests kept for resending since there were none: the transport
		 * says when the first resend is due. */
		if (sent > 0 && c->resend_at == IDL_DEADLINE_NONE &&
		    IDL__TR_OP(ap->port->tr, conn_resend) != NULL) {
			int err = poll_resend(ap, c, idl_now_ns());

			if (err != 0) {
				sent = err;
				goto dead;
			}
		}
		if ((unsigned)sent < n)
			break;
	}
	poll_want_out(ap, c, poll_head(c) != NULL || poll_held(ap, c));
	return;
dead:
	snprintf(c->dead_why, sizeof c->dead_why, "send failed: %s", idl_errdetail());
	idl__aport_conn_dead(ap, c, sent == IDL_ECLOSED ? MIG_SERVER_DIED : sent);
}

/* Takes a connect started without blocking one step further: once it is done the queue
 * may go (the hello first), and if it failed every call on the connection fails with its
 * error. Lock held. */
static void
poll_connect_step(struct idl__aport *ap, struct idl__aconn *c)
{
	const struct idl_transport *tr = ap->port->tr;
	int err = tr->conn_connect_step(c->tr_state);
	unsigned events;
	int fd;

	if (err == IDL_EAGAIN) {
		struct epoll_event ev;

		/* It may be the socket of the next address the name has (whose number may be
		 * the last one's, closed and so gone from the set): watched either way. */
		memset(&ev, 0, sizeof ev);
		ev.data.fd = fd = tr->conn_fd(c->tr_state, &events);
		c->fd = fd;
		c->want_out = !(events & IDL_TR_EV_WAITIN);
		ev.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0);
		if (epoll_ctl(ap->epfd, EPOLL_CTL_MOD, fd, &ev) != 0 &&
		    (errno != ENOENT || epoll_ctl(ap->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)) {
			err = idl__fail(IDL_ESYSERR(errno), "%s: epoll: %s", ap->port->head.address,
					strerror(errno));
			goto failed;
		}
		return;
	}
	if (err == 0) {
		c->connecting = 0;
		poll_want_out(ap, c, 0);
		return;
	}
failed:
	snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
	idl__aport_conn_dead(ap, c, err);
}

/* Connects again for the calls carried over from a connection that died, and puts them on
 * it; if no connection can be made, they fail with the connect's error. Lock held. */
static void
poll_carry(struct idl__aport *ap)
{
	int64_t deadline = IDL_DEADLINE_NONE;
	int err;

	for (struct idl_async *call = ap->carry; call != NULL; call = call->next)
		if (call->deadline < deadline)
			deadline = call->deadline;
	if ((err = idl__aport_conn(ap, deadline)) != 0)
		idl__async_carry_resume(ap, err, idl_errdetail());
	else
		idl__async_carry_resume(ap, 0, NULL);
}

/* One pass of the machine without running done functions: finish connecting, receive what
 * is ready, connect again for calls carried over, fire the timers that are due, send what is
 * queued. Lock held. */
static void
poll_pump(struct idl__aport *ap)
{
	struct idl__aconn *c = ap->conn;
	int64_t next;

	if (c != NULL && c->connecting && !c->dead)
		poll_connect_step(ap, c);
	if (c != NULL && c->nb && !c->dead && !c->connecting) {
		int (*recv_nb)(void *, struct idl_xmsg *) = IDL__TR_OP(ap->port->tr, conn_recv_nb);

		if (c->rcap < ap->max_rep) {
			void *nb = idl__zalloc(ap->max_rep);

			if (nb != NULL) {
				free(c->rbuf);
				c->rbuf = nb;
				c->rcap = ap->max_rep;
			}
		}
		c->recv_more = 0;
		for (int i = 0; c->rbuf != NULL && !c->dead; i++) {
			struct idl_xmsg m;
			int err;

			/* The rest waits for the next pass; the transport may hold it read ahead,
			 * which its descriptor does not report, so the port's own says so. */
			if (i == POLL_RECV_BATCH) {
				c->recv_more = 1;
				idl__aport_wake(ap);
				break;
			}

			memset(&m, 0, sizeof m);
			m.data = c->rbuf;
			m.cap = c->rcap;
			err = recv_nb(c->tr_state, &m);
			if (err == IDL_EAGAIN)
				break;
			if (err == 0 || err == IDL_EMSGSIZE) {
				idl__async_deliver(ap, c->rbuf, m.len, err);
				continue;
			}
			snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
			idl__aport_conn_dead(ap, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
		}
	}
	if (ap->carry != NULL && !ap->closing)
		poll_carry(ap);
	/* The timer is moved only once it is due (a call's start moves it earlier): calls that
	 * complete one after the other would otherwise cost a look at every call in flight and
	 * a timerfd_settime() each pass. It may fire for a call that completed since; that
	 * look finds the next deadline. */
	if (ap->armed != IDL_DEADLINE_NONE) {
		int64_t now = idl_now_ns();

		if (now >= ap->armed) {
			next = idl__async_timers(ap, now);
			poll_rearm(ap, next);
		}
		/* The transport's resends share the timer: due ones go now, and the timer is
		 * lowered to the next one. */
		if (c != NULL && c == ap->conn && !c->dead && c->resend_at != IDL_DEADLINE_NONE &&
		    now >= c->resend_at) {
			int err = poll_resend(ap, c, now);

			if (err != 0) {
				snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
				idl__aport_conn_dead(ap, c,
						     err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
			}
		}
	}
	idl__aport_flush(ap);
}

/* Enters dispatch: 0, or IDL_EBUSY when called from a done function of this port. */
static int
poll_enter(struct idl__aport *ap)
{
	pthread_mutex_lock(&ap->lock);
	if (idl__aport_corked(ap)) {
		pthread_mutex_unlock(&ap->lock);
		return idl__fail(IDL_EBUSY, "%s: idl_port_dispatch() called from a done function",
				 ap->port->head.address);
	}
	pthread_mutex_unlock(&ap->lock);
	pthread_mutex_lock(&ap->dispatch_lock);
	pthread_mutex_lock(&ap->lock);
	ap->dispatcher = &idl__aport_self;
	ap->dispatching = 1;
	return 0;
}

static int
poll_dispatch(struct idl__aport *ap, int max)
{
	int ran;

	if (poll_enter(ap) != 0)
		return IDL_EBUSY;
	poll_pump(ap);
	pthread_mutex_unlock(&ap->lock);
	ran = idl__async_run(ap, max);
	pthread_mutex_lock(&ap->lock);
	ap->dispatching = 0;
	/* What the done functions started goes out in one batch. */
	idl__aport_flush(ap);
	/* Completions left for the next dispatch (max) were queued without a wake. */
	if (ap->cfirst != NULL)
		idl__aport_wake(ap);
	poll_unwake(ap);
	pthread_mutex_unlock(&ap->lock);
	pthread_mutex_unlock(&ap->dispatch_lock);
	return ran;
}

int
idl_port_fd(idl_port_t p)
{
	struct idl__aport *ap;
	int err;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL, "idl_port_fd: not a client port");
	if ((err = idl__aport_get(p, &ap)) != 0)
		return err;
	return ap->epfd;
}

int
idl_port_dispatch(idl_port_t p, int max)
{
	struct idl__aport *ap;
	int err;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL, "idl_port_dispatch: not a client port");
	if ((err = idl__aport_get(p, &ap)) != 0)
		return err;
	return poll_dispatch(ap, max <= 0 ? -1 : max);
}

int
idl_port_wait(idl_port_t p, int timeout_ms)
{
	struct idl__aport *ap;
	int64_t end = idl_deadline_ms(timeout_ms);
	int err;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL, "idl_port_wait: not a client port");
	if ((err = idl__aport_get(p, &ap)) != 0)
		return err;
	for (;;) {
		struct epoll_event ev[4];
		int64_t left;
		int n = poll_dispatch(ap, -1), ms;

		if (n != 0)
			return n;
		left = end == IDL_DEADLINE_NONE ? -1 : end - idl_now_ns();
		if (end != IDL_DEADLINE_NONE && left <= 0)
			return idl__fail(IDL_ETIMEDOUT, "%s: no call completed within %d ms",
					 p->head.address, timeout_ms);
		ms = left < 0 ? -1 : (int)((left + 999999) / 1000000);
		if (epoll_wait(ap->epfd, ev, 4, ms) < 0 && errno != EINTR)
			return idl__fail(IDL_ESYSERR(errno), "%s: epoll_wait: %s", p->head.address,
					 strerror(errno));
	}
}

void
idl__async_close(struct idl_port *p)
{
	struct idl__aport *ap = p->async;

	if (ap == NULL)
		return;
	pthread_mutex_lock(&ap->dispatch_lock);
	pthread_mutex_lock(&ap->lock);
	ap->closing = 1;
	idl__async_carry_resume(ap, IDL_ECANCELED, "the port was closed");
	idl__async_fail_all(ap, IDL_ECANCELED, "the port was closed");
	if (ap->conn != NULL) {
		struct idl__aconn *c = ap->conn;

		snprintf(c->dead_why, sizeof c->dead_why, "the port was closed");
		idl__aport_conn_dead(ap, c, IDL_ECANCELED);
		poll_conn_free(ap, c);
		ap->conn = NULL;
	}
	ap->dispatcher = &idl__aport_self;
	ap->dispatching = 1;
	pthread_mutex_unlock(&ap->lock);
	/* The done functions run here, on the closing thread: each call ends exactly once. */
	(void)idl__async_run(ap, -1);
	pthread_mutex_unlock(&ap->dispatch_lock);
	idl__async_spares_free(ap);
	pthread_mutex_destroy(&ap->lock);
	pthread_mutex_destroy(&ap->dispatch_lock);
	close(ap->epfd);
	close(ap->evfd);
	close(ap->tfd);
	free(ap);
	p->async = NULL;
}
