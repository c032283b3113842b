/*
 * async_loop.c - the call loop, what makes a port pollable: idl_port_fd(),
 * idl_port_dispatch(), idl_port_wait(), the asynchronous connection's send queue, and its
 * driving from the caller's loop (the connection itself - made, connected, its threads - is
 * async_conn.c). "The call loop" (struct idl__loop) is this machinery's name inside the
 * runtime, so that it is not taken for a client port or the port: transport; the user sees
 * a port with a descriptor. It knows the client's ports and nothing of the server.
 *
 * The port's descriptor is an epoll set (docs/call-core.md, "The pollable port") holding an
 * eventfd, written when a completion is queued and drained when none is left, a timerfd
 * armed to the earliest deadline of the calls in flight, and - for a transport with the
 * non-blocking operations - the connection's own descriptor. Such a connection is driven by
 * whoever dispatches: it receives until the transport has nothing more and sends the queue
 * in batches. A transport without them is driven by two threads of the connection's own, a
 * receiver blocked in conn_recv and a sender taking the queue, which complete calls under
 * the lock and write the eventfd; the caller's loop sees the same descriptor either way.
 * Nothing here waits for the peer with the lock held: a message with descriptors that the
 * transport cannot send without blocking goes with the lock released
 * (poll_send_blocking()).
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

#include "client/async.h"

/* Messages taken from the transport in one pass of a dispatch before the loop looks at its
 * other sources again; what is left keeps the descriptor readable. */
#define POLL_RECV_BATCH 256
/* Messages handed to conn_sendv_nb in one call. */
#define POLL_SEND_BATCH 64

_Thread_local char idl__loop_self __attribute__((tls_model("initial-exec")));

void
idl__loop_wake(struct idl__loop *lp)
{
	uint64_t one = 1;

	if (lp->ev_set)
		return;
	lp->ev_set = 1;
	while (write(lp->evfd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

/* Drains the eventfd once no completion is queued, so that the descriptor is readable
 * exactly while there is something to do. */
static void
poll_unwake(struct idl__loop *lp)
{
	uint64_t n;

	if (!lp->ev_set || lp->cfirst != NULL || (lp->conn != NULL && lp->conn->recv_more))
		return;
	while (read(lp->evfd, &n, sizeof n) < 0 && errno == EINTR)
		;
	lp->ev_set = 0;
}

void
idl__loop_arm(struct idl__loop *lp, int64_t deadline)
{
	struct itimerspec its;

	if (deadline >= lp->armed)
		return;
	memset(&its, 0, sizeof its);
	if (deadline != IDL_DEADLINE_NONE) {
		its.it_value.tv_sec = (time_t)(deadline / 1000000000);
		its.it_value.tv_nsec = (long)(deadline % 1000000000);
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	(void)timerfd_settime(lp->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	lp->armed = deadline;
}

/* Sets the timer to exactly `deadline` (later or earlier than before). */
static void
poll_rearm(struct idl__loop *lp, int64_t deadline)
{
	uint64_t n;

	/* A timer that fired stays readable until read. */
	while (read(lp->tfd, &n, sizeof n) < 0 && errno == EINTR)
		;
	lp->armed = IDL_DEADLINE_NONE;
	if (deadline == IDL_DEADLINE_NONE) {
		struct itimerspec its;

		memset(&its, 0, sizeof its);
		(void)timerfd_settime(lp->tfd, TFD_TIMER_ABSTIME, &its, NULL);
		return;
	}
	idl__loop_arm(lp, deadline);
}

int
idl__loop_get(struct idl_port *p, struct idl__loop **app)
{
	struct idl__loop *lp;
	struct epoll_event ev;

	/* Made once and kept until the port closes: every call after the first finds it
	 * without the port's lock (published with release order below). */
	if ((lp = __atomic_load_n(&p->loop, __ATOMIC_ACQUIRE)) != NULL) {
		*app = lp;
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	if ((lp = p->loop) != NULL) {
		pthread_mutex_unlock(&p->lock);
		*app = lp;
		return 0;
	}
	if ((lp = calloc(1, sizeof *lp)) == NULL) {
		pthread_mutex_unlock(&p->lock);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
	}
	lp->port = p;
	lp->armed = IDL_DEADLINE_NONE;
	/* Every connection's first reply is a hello's. */
	lp->max_rep = IDL_HELLO_MAX;
	lp->epfd = epoll_create1(EPOLL_CLOEXEC);
	lp->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	lp->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	if (lp->epfd < 0 || lp->evfd < 0 || lp->tfd < 0 ||
	    (ev.data.fd = lp->evfd, epoll_ctl(lp->epfd, EPOLL_CTL_ADD, lp->evfd, &ev)) != 0 ||
	    (ev.data.fd = lp->tfd, epoll_ctl(lp->epfd, EPOLL_CTL_ADD, lp->tfd, &ev)) != 0) {
		int e = errno;

		if (lp->epfd >= 0)
			close(lp->epfd);
		if (lp->evfd >= 0)
			close(lp->evfd);
		if (lp->tfd >= 0)
			close(lp->tfd);
		free(lp);
		pthread_mutex_unlock(&p->lock);
		return idl__fail(IDL_ESYSERR(e), "%s: the pollable port: %s", p->head.address,
				 strerror(e));
	}
	pthread_mutex_init(&lp->lock, NULL);
	pthread_mutex_init(&lp->dispatch_lock, NULL);
	__atomic_store_n(&p->loop, lp, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->lock);
	*app = lp;
	return 0;
}

int
idl__loop_enqueue(struct idl__loop *lp, struct idl_async *call, idl_msg_header_t *ctl)
{
	struct idl__aconn *c = lp->conn;
	struct idl__aqent *e;

	if (c->qlen == c->qcap || (call != NULL && c->qcalls >= IDL__ASYNC_SENDQ_MAX))
		return idl__fail(IDL_EAGAIN, "%s: %u requests wait to be sent already",
				 lp->port->head.address, c->qcalls);
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
poll_want_out(struct idl__loop *lp, struct idl__aconn *c, int want)
{
	struct epoll_event ev;

	if (c->want_out == want)
		return;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
	ev.data.fd = c->fd;
	(void)epoll_ctl(lp->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	c->want_out = want;
}

/* Whether the transport holds the rest of a frame it could not write yet. */
static int
poll_held(struct idl__loop *lp, struct idl__aconn *c)
{
	unsigned events = 0;

	(void)IDL__TR_OP(lp->port->tr, conn_fd)(c->tr_state, &events);
	return (events & IDL_TR_EV_OUT) != 0;
}

/*
 * Sends the head of the queue with the blocking conn_send, bounded by its call's deadline:
 * the contract's way for a message with descriptors that conn_sendv_nb refused (it cannot go
 * as it is, and conn_send says why). That send may wait - for room, or, on unix:, to connect
 * the port it passes on - so it runs without the lock, and the calls, their timers and the
 * receives go on meanwhile. The entry is taken off the queue first (its call SENT, as a
 * reply may come as soon as it is out); `blocking` keeps every other flush out until it is
 * done, so that requests go in their order, and keeps the connection from being freed.
 * 0, or the connection's error. Lock held; released meanwhile.
 */
static int
poll_send_blocking(struct idl__loop *lp, struct idl__aconn *c)
{
	struct idl__aqent *e = idl__aconn_head(c);
	struct idl_async *call = e->call;
	idl_msg_header_t *msg = call != NULL ? call->req : e->ctl;
	struct idl_deadline dl =
		call != NULL ? idl_deadline_at(call->deadline) : idl_deadline_in(1000);
	struct idl_xmsg m;
	int err;

	if (call != NULL)
		atomic_fetch_add(&call->refs, 1); /* the request outlives a completion */
	idl__aconn_pop(c);
	c->blocking = 1;
	pthread_mutex_unlock(&lp->lock);
	memset(&m, 0, sizeof m);
	m.data = msg;
	m.len = msg->size;
	idl__clear_detail();
	err = lp->port->tr->conn_send(c->tr_state, &m, &dl);
	pthread_mutex_lock(&lp->lock);
	c->blocking = 0;
	pthread_cond_broadcast(&c->scv);
	if (call == NULL)
		free(msg);
	if (err != 0 && err != IDL_ETIMEDOUT && err != IDL_EMSGSIZE) {
		if (call != NULL)
			idl__async_unref(call);
		return err;
	}
	if (err != 0 && call != NULL)
		idl__async_finish(lp, call, err,
				  err == IDL_EMSGSIZE
					  ? "request larger than the transport takes"
					  : "deadline passed before the request was sent");
	if (call != NULL)
		idl__async_unref(call);
	return 0;
}

/* Asks a transport that resends unanswered requests (conn_resend) to resend what is due
 * at `now`, and sets the timer for its next resend: 0, or the error that ends the
 * connection. Lock held. */
static int
poll_resend(struct idl__loop *lp, struct idl__aconn *c, int64_t now)
{
	int err = lp->port->tr->conn_resend(c->tr_state, now, &c->resend_at);

	if (err == 0)
		idl__loop_arm(lp, c->resend_at);
	return err;
}

/* The queue's next requests, at most POLL_SEND_BATCH, as one batch for conn_sendv_nb: their
 * count. Only the entries used are written, whole: clearing the batch's 64 first would cost
 * more than filling the few a call usually sends. */
static inline __attribute__((always_inline)) unsigned
poll_batch(struct idl__aconn *c, struct idl_xmsg *m)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->qlen && n < POLL_SEND_BATCH; i++) {
		struct idl__aqent *e = &c->q[(c->qhead + i) % c->qcap];
		idl_msg_header_t *msg = e->call != NULL ? e->call->req : e->ctl;

		if (msg == NULL)
			continue;
		m[n++] = (struct idl_xmsg){ .data = msg, .len = msg->size };
	}
	return n;
}

/* The queue's head is larger than the transport takes: its call fails (a cancel message
 * is dropped), and the queue goes on. */
static void
poll_too_large(struct idl__loop *lp, struct idl__aconn *c)
{
	struct idl__aqent *e = idl__aconn_head(c);

	if (e->call != NULL)
		idl__async_finish(lp, e->call, IDL_EMSGSIZE,
				  "request larger than the transport takes");
	else
		free(e->ctl);
	idl__aconn_pop(c);
}

/* The first `sent` entries of the queue went: they come off it, and a transport that keeps
 * requests for resending, which had none, says when the first resend is due. 0, or the
 * error that ends the connection. */
static inline __attribute__((always_inline)) int
poll_sent(struct idl__loop *lp, struct idl__aconn *c, int sent)
{
	for (int i = 0; i < sent; i++) {
		struct idl__aqent *e = idl__aconn_head(c);

		free(e->ctl);
		idl__aconn_pop(c);
	}
	if (sent > 0 && c->resend_at == IDL_DEADLINE_NONE &&
	    IDL__TR_OP(lp->port->tr, conn_resend) != NULL)
		return poll_resend(lp, c, idl_now_ns());
	return 0;
}

void
idl__loop_flush(struct idl__loop *lp)
{
	struct idl__aconn *c = lp->conn;
	int (*sendv)(void *, const struct idl_xmsg *, unsigned);
	int sent;

	if (c == NULL || c->dead || c->connecting || c->opening || c->blocking)
		return;
	if (!c->nb) {
		if (c->qlen != 0)
			pthread_cond_signal(&c->scv);
		return;
	}
	sendv = IDL__TR_OP(lp->port->tr, conn_sendv_nb);
	/* The rest of a frame the transport kept goes out before anything new. */
	if (poll_held(lp, c) && (sent = sendv(c->tr_state, NULL, 0)) != 0) {
		if (sent == IDL_EAGAIN) {
			poll_want_out(lp, c, 1);
			return;
		}
		goto dead;
	}
	while (idl__aconn_head(c) != NULL) {
		struct idl_xmsg m[POLL_SEND_BATCH];
		unsigned n = poll_batch(c, m);
		int err;

		sent = sendv(c->tr_state, m, n);
		if (sent == IDL_ENOTSUP) {
			if ((sent = poll_send_blocking(lp, c)) != 0)
				goto dead;
			/* The lock was released: the connection may have ended meanwhile. */
			if (c->dead)
				return;
			continue;
		}
		if (sent == IDL_EMSGSIZE) {
			poll_too_large(lp, c);
			continue;
		}
		if (sent < 0)
			goto dead;
		if ((err = poll_sent(lp, c, sent)) != 0) {
			sent = err;
			goto dead;
		}
		if ((unsigned)sent < n)
			break;
	}
	poll_want_out(lp, c, idl__aconn_head(c) != NULL || poll_held(lp, c));
	return;
dead:
	idl__loop_conn_failed(lp, c, "send failed", sent);
}

/* Takes a connect started without blocking one step further: once it is done the queue
 * may go (the hello first), and if it failed every call on the connection fails with its
 * error. Lock held. */
static void
poll_connect_step(struct idl__loop *lp, struct idl__aconn *c)
{
	const struct idl_transport *tr = lp->port->tr;
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
		if (epoll_ctl(lp->epfd, EPOLL_CTL_MOD, fd, &ev) != 0 &&
		    (errno != ENOENT || epoll_ctl(lp->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)) {
			err = idl__fail(IDL_ESYSERR(errno), "%s: epoll: %s", lp->port->head.address,
					strerror(errno));
			goto failed;
		}
		return;
	}
	if (err == 0) {
		c->connecting = 0;
		poll_want_out(lp, c, 0);
		return;
	}
failed:
	/* A failed step may have closed the socket already (the last address refused), so
	 * the number in c->fd may be another thread's new socket by now: the connection is
	 * forgotten by number, and the set loses the socket when it is closed, as the kernel
	 * removes a closed descriptor from every epoll set. */
	c->fd = -1;
	snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
	idl__loop_conn_dead(lp, c, err);
}

/* Connects again for the calls carried over from a connection that died (without waiting:
 * async_conn.c), and puts them on it; if no connection can be made, they fail with the
 * connect's error. Lock held. */
static void
poll_carry(struct idl__loop *lp)
{
	int64_t deadline = IDL_DEADLINE_NONE;
	int err;

	for (struct idl_async *call = lp->carry; call != NULL; call = call->next)
		if (call->deadline < deadline)
			deadline = call->deadline;
	if ((err = idl__loop_conn(lp, deadline)) != 0)
		idl__async_carry_resume(lp, err, idl_errdetail());
	else
		idl__async_carry_resume(lp, 0, NULL);
}

/* One pass of the machine without running done functions: finish connecting, receive what
 * is ready, connect again for calls carried over, fire the timers that are due, send what is
 * queued. Lock held. */
static void
poll_pump(struct idl__loop *lp)
{
	struct idl__aconn *c = lp->conn;
	int64_t next;

	if (c != NULL && c->connecting && !c->dead)
		poll_connect_step(lp, c);
	if (c != NULL && c->nb && !c->dead && !c->connecting && !c->opening) {
		int (*recv_nb)(void *, struct idl_xmsg *) = IDL__TR_OP(lp->port->tr, conn_recv_nb);

		idl__aconn_rbuf(lp, c);
		c->recv_more = 0;
		for (int i = 0; c->rbuf != NULL && !c->dead; i++) {
			struct idl_xmsg m;
			int err;

			/* The rest waits for the next pass; the transport may hold it read ahead,
			 * which its descriptor does not report, so the port's own says so. */
			if (i == POLL_RECV_BATCH) {
				c->recv_more = 1;
				idl__loop_wake(lp);
				break;
			}

			memset(&m, 0, sizeof m);
			m.data = c->rbuf;
			m.cap = c->rcap;
			err = recv_nb(c->tr_state, &m);
			if (err == IDL_EAGAIN)
				break;
			if (idl__rcv_has_msg(err, m.len)) {
				idl__async_deliver(lp, c->rbuf, m.len, err);
				continue;
			}
			idl__loop_conn_failed(lp, c, NULL, err);
		}
	}
	if (lp->carry != NULL && !lp->closing)
		poll_carry(lp);
	/* The timer is moved only once it is due (a call's start moves it earlier): calls that
	 * complete one after the other would otherwise cost a look at every call in flight and
	 * a timerfd_settime() each pass. It may fire for a call that completed since; that
	 * look finds the next deadline. */
	if (lp->armed != IDL_DEADLINE_NONE) {
		int64_t now = idl_now_ns();

		if (now >= lp->armed) {
			next = idl__async_timers(lp, now);
			poll_rearm(lp, next);
		}
		/* The transport's resends share the timer: due ones go now, and the timer is
		 * lowered to the next one. */
		if (c != NULL && c == lp->conn && !c->dead && c->resend_at != IDL_DEADLINE_NONE &&
		    now >= c->resend_at) {
			int err = poll_resend(lp, c, now);

			if (err != 0)
				idl__loop_conn_failed(lp, c, NULL, err);
		}
	}
	idl__loop_flush(lp);
}

/* Enters dispatch: 0, or IDL_EBUSY when called from a done function of this port. */
static int
poll_enter(struct idl__loop *lp)
{
	pthread_mutex_lock(&lp->lock);
	if (idl__loop_corked(lp)) {
		pthread_mutex_unlock(&lp->lock);
		return idl__fail(IDL_EBUSY, "%s: idl_port_dispatch() called from a done function",
				 lp->port->head.address);
	}
	pthread_mutex_unlock(&lp->lock);
	pthread_mutex_lock(&lp->dispatch_lock);
	pthread_mutex_lock(&lp->lock);
	lp->dispatcher = &idl__loop_self;
	lp->dispatching = 1;
	return 0;
}

static int
poll_dispatch(struct idl__loop *lp, int max)
{
	int ran;

	if (poll_enter(lp) != 0)
		return IDL_EBUSY;
	poll_pump(lp);
	pthread_mutex_unlock(&lp->lock);
	ran = idl__async_run(lp, max);
	pthread_mutex_lock(&lp->lock);
	lp->dispatching = 0;
	/* What the done functions started goes out in one batch. */
	idl__loop_flush(lp);
	/* Completions left for the next dispatch (max) were queued without a wake. */
	if (lp->cfirst != NULL)
		idl__loop_wake(lp);
	poll_unwake(lp);
	pthread_mutex_unlock(&lp->lock);
	pthread_mutex_unlock(&lp->dispatch_lock);
	return ran;
}

int
idl_port_fd(idl_port_t p)
{
	struct idl__loop *lp;
	int err;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL, "idl_port_fd: not a client port");
	if ((err = idl__loop_get(p, &lp)) != 0)
		return err;
	return lp->epfd;
}

int
idl_port_dispatch(idl_port_t p, int max)
{
	struct idl__loop *lp;
	int err;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL, "idl_port_dispatch: not a client port");
	if ((err = idl__loop_get(p, &lp)) != 0)
		return err;
	return poll_dispatch(lp, max <= 0 ? -1 : max);
}

int
idl_port_wait(idl_port_t p, int timeout_ms)
{
	struct idl__loop *lp;
	int64_t end = idl_deadline_ms(timeout_ms);
	int err;

	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return idl__fail(IDL_EINVAL, "idl_port_wait: not a client port");
	if ((err = idl__loop_get(p, &lp)) != 0)
		return err;
	for (;;) {
		struct epoll_event ev[4];
		int64_t left;
		int n = poll_dispatch(lp, -1), ms;

		if (n != 0)
			return n;
		left = end == IDL_DEADLINE_NONE ? -1 : end - idl_now_ns();
		if (end != IDL_DEADLINE_NONE && left <= 0)
			return idl__fail(IDL_ETIMEDOUT, "%s: no call completed within %d ms",
					 p->head.address, timeout_ms);
		ms = left < 0 ? -1 : (int)((left + 999999) / 1000000);
		if (epoll_wait(lp->epfd, ev, 4, ms) < 0 && errno != EINTR)
			return idl__fail(IDL_ESYSERR(errno), "%s: epoll_wait: %s", p->head.address,
					 strerror(errno));
	}
}

void
idl__async_close(struct idl_port *p)
{
	struct idl__loop *lp = p->loop;

	if (lp == NULL)
		return;
	pthread_mutex_lock(&lp->dispatch_lock);
	pthread_mutex_lock(&lp->lock);
	lp->closing = 1;
	idl__async_carry_resume(lp, IDL_ECANCELED, "the port was closed");
	idl__async_fail_all(lp, IDL_ECANCELED, "the port was closed");
	if (lp->conn != NULL) {
		idl__loop_conn_close(lp, lp->conn);
		lp->conn = NULL;
	}
	lp->dispatcher = &idl__loop_self;
	lp->dispatching = 1;
	pthread_mutex_unlock(&lp->lock);
	/* The done functions run here, on the closing thread: each call ends exactly once. */
	(void)idl__async_run(lp, -1);
	pthread_mutex_unlock(&lp->dispatch_lock);
	idl__async_spares_free(lp);
	pthread_mutex_destroy(&lp->lock);
	pthread_mutex_destroy(&lp->dispatch_lock);
	close(lp->epfd);
	close(lp->evfd);
	close(lp->tfd);
	free(lp);
	p->loop = NULL;
}
