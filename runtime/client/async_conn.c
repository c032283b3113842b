/*
 * async_conn.c - the call loop's connection (the pollable port's): made, connected, driven
 * by two threads of its own where the transport has no non-blocking operations, ended and
 * freed. It knows the client's ports and nothing of the server.
 *
 * Nothing here waits for the peer with the port's async lock held: every call of the port,
 * its dispatch and its timers need that lock. A transport that connects without blocking
 * (conn_connect_nb: tcp) connects in the port's loop (async_loop.c); any other connects on
 * the connection's first thread, with the lock released, while the calls queue behind the
 * connect and their deadlines run - so a connect that waits (a dead server's port: queue
 * is known dead only after about a second; a frozen server's shm: rendezvous or full unix:
 * backlog answers at the deadline) holds up no call, no dispatch and no other thread. For
 * the threaded driver (shm, port) that thread then is the connection's sender and starts
 * its receiver; otherwise it ends once the connection's descriptor is in the port's set.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "client/async.h"

/* Keeps why the connection ends: `what` (or nothing) and the transport's detail, or, when
 * the transport gave none, what its error means - never an empty reason. */
static void
aconn_why(struct idl__aconn *c, const char *what, int err)
{
	const char *d = idl_errdetail();

	if (c->dead)
		return;
	if (d[0] == '\0')
		d = err == IDL_ECLOSED || err == MIG_SERVER_DIED ? "the server went away"
								 : idl_strerror(err);
	if (what != NULL)
		snprintf(c->dead_why, sizeof c->dead_why, "%s: %s", what, d);
	else
		snprintf(c->dead_why, sizeof c->dead_why, "%s", d);
}

void
idl__loop_conn_failed(struct idl__loop *lp, struct idl__aconn *c, const char *what, int err)
{
	aconn_why(c, what, err);
	idl__loop_conn_dead(lp, c, err == IDL_ECLOSED ? MIG_SERVER_DIED : err);
}

/* The threaded driver's receiver: blocks in conn_recv, hands each message over under the
 * lock, and ends the connection when the transport fails (the port's close included). */
static void *
aconn_receiver(void *arg)
{
	struct idl__aconn *c = arg;
	struct idl__loop *lp = c->lp;

	for (;;) {
		struct idl_deadline dl = idl_deadline_in(-1);
		struct idl_xmsg m;
		int err;

		pthread_mutex_lock(&lp->lock);
		if (c->dead) {
			pthread_mutex_unlock(&lp->lock);
			break;
		}
		idl__aconn_rbuf(lp, c);
		pthread_mutex_unlock(&lp->lock);
		memset(&m, 0, sizeof m);
		m.data = c->rbuf;
		m.cap = c->rcap;
		idl__clear_detail();
		err = c->tr->conn_recv(c->tr_state, &m, &dl);
		pthread_mutex_lock(&lp->lock);
		if (idl__rcv_has_msg(err, m.len))
			idl__async_deliver(lp, c->rbuf, m.len, err);
		else if (err != IDL_ETIMEDOUT)
			idl__loop_conn_failed(lp, c, NULL, err);
		pthread_mutex_unlock(&lp->lock);
	}
	return NULL;
}

/* The threaded driver's sender: sends the queue's entries one at a time with the blocking
 * conn_send, each bounded by its call's deadline, the lock released meanwhile. Lock held;
 * returns, with it held, once the connection ended. */
static void
aconn_send_loop(struct idl__aconn *c)
{
	struct idl__loop *lp = c->lp;

	for (;;) {
		struct idl__aqent *e = NULL;
		struct idl_async *call;
		idl_msg_header_t *msg;
		struct idl_deadline dl;
		struct idl_xmsg m;
		int err;

		while (!c->dead && (e = idl__aconn_head(c)) == NULL)
			pthread_cond_wait(&c->scv, &lp->lock);
		if (c->dead)
			break;
		call = e->call;
		msg = call != NULL ? call->req : e->ctl;
		dl = call != NULL ? idl_deadline_at(call->deadline) : idl_deadline_in(1000);
		if (call != NULL)
			atomic_fetch_add(&call->refs, 1); /* the request outlives a completion */
		idl__aconn_pop(c);
		pthread_mutex_unlock(&lp->lock);
		memset(&m, 0, sizeof m);
		m.data = msg;
		m.len = msg->size;
		idl__clear_detail();
		err = c->tr->conn_send(c->tr_state, &m, &dl);
		pthread_mutex_lock(&lp->lock);
		if (call == NULL)
			free(msg);
		if (err == IDL_ETIMEDOUT || err == IDL_EMSGSIZE) {
			if (call != NULL)
				idl__async_finish(
					lp, call, err,
					err == IDL_EMSGSIZE
						? "request larger than the transport takes"
						: "deadline passed before the request was sent");
		} else if (err != 0) {
			idl__loop_conn_failed(lp, c, "send failed", err);
		}
		if (call != NULL)
			idl__async_unref(call);
	}
}

/* Starts driving a connection whose connect is done or under way without blocking: its
 * descriptor into the port's set, or its receiving thread started (the caller is its first
 * thread, which then sends). 0 or an error. Lock held. */
static int
aconn_start(struct idl__loop *lp, struct idl__aconn *c)
{
	const char *addr = lp->port->head.address;
	struct epoll_event ev;
	unsigned events;
	int err;

	if (c->nb) {
		c->fd = c->tr->conn_fd(c->tr_state, &events);
		memset(&ev, 0, sizeof ev);
		/* A connect in progress ends with writability; a handshake that waits for the
		 * peer's answer alone (IDL_TR_EV_WAITIN) is not woken by room to write. */
		c->want_out = c->connecting && !(events & IDL_TR_EV_WAITIN);
		ev.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0);
		ev.data.fd = c->fd;
		if (c->fd < 0 || epoll_ctl(lp->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
			c->fd = -1;
			return idl__fail(IDL_ESYSERR(errno), "%s: epoll: %s", addr,
					 strerror(errno));
		}
		/* What queued behind the connect goes now (a connect in progress: later). */
		idl__loop_flush(lp);
		return 0;
	}
	if ((c->rbuf = idl__zalloc(IDL__ASYNC_RBUF_MIN)) == NULL)
		return idl__fail(IDL_ENOMEM, "%s: out of memory", addr);
	c->rcap = IDL__ASYNC_RBUF_MIN;
	if ((err = pthread_create(&c->rthread, NULL, aconn_receiver, c)) != 0)
		return idl__fail(IDL_ESYSERR(err), "%s: cannot start a thread", addr);
	c->has_rthread = 1;
	return 0;
}

/* Frees what a connection holds; its threads are joined or gone. */
static void
aconn_release(struct idl__aconn *c)
{
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
	if (c->tr_used)
		c->tr->conn_fini(c->tr_state);
	free(c->tr_state);
	free(c->addr);
	free(c);
}

/*
 * The connection's first thread, for a transport that connects with the blocking
 * conn_connect: connects without the lock, bounded by the deadline of the call that made
 * the connection, then says so under the lock - the calls queued meanwhile go, or fail with
 * the connect's error - and, for the threaded driver, goes on as the connection's sender.
 * If the port closed meanwhile, the connection is this thread's alone, and it frees it.
 */
static void *
aconn_open_main(void *arg)
{
	struct idl__aconn *c = arg;
	struct idl__loop *lp = c->lp;
	int expect = IDL__AOPEN_RUNNING;
	char why[sizeof c->dead_why];
	int err;

	idl__clear_detail();
	err = c->tr->conn_connect(c->tr_state, c->rest, &c->open_dl);
	if (err != 0 && idl_errdetail()[0] == '\0')
		idl__fail(err, "%s: connect: %s", c->addr, idl_strerror(err));
	snprintf(why, sizeof why, "%s", idl_errdetail());
	if (!atomic_compare_exchange_strong(&c->open_state, &expect, IDL__AOPEN_DONE)) {
		if (err == 0)
			c->tr->conn_close(c->tr_state);
		aconn_release(c);
		return NULL;
	}
	pthread_mutex_lock(&lp->lock);
	c->opening = 0;
	/* Ended meanwhile by the port's close, which left the transport to this thread. */
	if (c->dead && err == 0)
		c->tr->conn_close(c->tr_state);
	if (!c->dead && err == 0 && (err = aconn_start(lp, c)) != 0)
		snprintf(why, sizeof why, "%s", idl_errdetail());
	if (!c->dead && err != 0) {
		snprintf(c->dead_why, sizeof c->dead_why, "%s", why);
		idl__loop_conn_dead(lp, c, err);
	}
	if (!c->dead && !c->nb)
		aconn_send_loop(c);
	pthread_mutex_unlock(&lp->lock);
	return NULL;
}

void
idl__loop_conn_free(struct idl__loop *lp, struct idl__aconn *c)
{
	/* A flush's blocking send (async_loop.c) ends within its call's deadline, sooner for
	 * the connection closed under it. */
	while (c->blocking)
		pthread_cond_wait(&c->scv, &lp->lock);
	if (c->has_othread || c->has_rthread) {
		pthread_mutex_unlock(&lp->lock);
		/* The first thread starts the receiver: joined first, it has said whether. */
		if (c->has_othread)
			pthread_join(c->othread, NULL);
		if (c->has_rthread)
			pthread_join(c->rthread, NULL);
		pthread_mutex_lock(&lp->lock);
	}
	aconn_release(c);
}

void
idl__loop_conn_dead(struct idl__loop *lp, struct idl__aconn *c, int err)
{
	if (c->dead)
		return;
	/* Every call in flight completes, each once; a request still in the queue goes on the
	 * next connection instead (idl__async_conn_died() says when). */
	idl__async_conn_died(lp, c, err,
			     c->dead_why[0] != '\0'   ? c->dead_why
			     : err == MIG_SERVER_DIED ? "the server went away"
						      : "the connection failed");
	c->dead = 1;
	c->dead_err = err;
	/* Out of the set before the transport may close the descriptor, whose number another
	 * thread's socket() could then take. A connect still under way is its thread's: that
	 * thread says when it ended. */
	if (c->nb && c->fd >= 0)
		(void)epoll_ctl(lp->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (!c->opening)
		c->tr->conn_close(c->tr_state);
	pthread_cond_broadcast(&c->scv);
}

void
idl__loop_conn_close(struct idl__loop *lp, struct idl__aconn *c)
{
	int expect = IDL__AOPEN_RUNNING;

	if (c->opening &&
	    atomic_compare_exchange_strong(&c->open_state, &expect, IDL__AOPEN_ORPHAN)) {
		/* Its connect still runs: the thread frees the connection when it returns. */
		pthread_detach(c->othread);
		return;
	}
	snprintf(c->dead_why, sizeof c->dead_why, "the port was closed");
	idl__loop_conn_dead(lp, c, IDL_ECANCELED);
	idl__loop_conn_free(lp, c);
}

int
idl__loop_connect(struct idl__loop *lp, int64_t deadline)
{
	struct idl_port *p = lp->port;
	const struct idl_transport *tr = p->tr;
	struct idl__aconn *c = lp->conn;
	int err;

	if (c != NULL && !c->dead)
		return 0;
	if (c != NULL) {
		/* The next call after the peer's death reconnects. */
		lp->conn = NULL;
		idl__loop_conn_free(lp, c);
		if (lp->conn != NULL)
			return lp->conn->dead ? lp->conn->dead_err : 0;
	}
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->tr_state = idl__zalloc(tr->conn_size)) == NULL ||
	    (c->q = calloc(2 * IDL__ASYNC_SENDQ_MAX, sizeof *c->q)) == NULL ||
	    (c->addr = strdup(p->head.address)) == NULL) {
		if (c != NULL) {
			free(c->q);
			free(c->tr_state);
		}
		free(c);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
	}
	c->qcap = 2 * IDL__ASYNC_SENDQ_MAX;
	c->lp = lp;
	c->tr = tr;
	c->fd = -1;
	c->rest = c->addr + (p->rest - p->head.address);
	c->resend_at = IDL_DEADLINE_NONE;
	pthread_cond_init(&c->scv, NULL);
	/* A transport whose descriptor is a set of its own (IDL_TRF_OWNSET) is cheaper with
	 * its blocking operations on threads. */
	c->nb = IDL__TR_OP(tr, conn_fd) != NULL && IDL__TR_OP(tr, conn_sendv_nb) != NULL &&
		IDL__TR_OP(tr, conn_recv_nb) != NULL && !(tr->flags & IDL_TRF_OWNSET);
	idl__clear_detail();
	lp->conn = c;
	c->tr_used = 1;
	/* The port's configuration (a tls: identity, say) is the connection's before it
	 * connects; giving it blocks on nothing. */
	if ((err = idl__config_conn(tr, p->cfg, c->tr_state)) != 0)
		goto failed;
	if (c->nb && IDL__TR_OP(tr, conn_connect_nb) != NULL &&
	    IDL__TR_OP(tr, conn_connect_step) != NULL) {
		/* In the caller's loop: the calls queue behind the connect (async_loop.c). */
		err = tr->conn_connect_nb(c->tr_state, c->rest);
		if (err == IDL_EAGAIN)
			c->connecting = 1;
		else if (err != 0)
			goto failed;
		if ((err = aconn_start(lp, c)) != 0) {
			snprintf(c->dead_why, sizeof c->dead_why, "%s", idl_errdetail());
			idl__loop_conn_dead(lp, c, err);
			goto failed;
		}
		return 0;
	}
	c->opening = 1;
	c->open_dl = idl_deadline_at(deadline);
	atomic_init(&c->open_state, IDL__AOPEN_RUNNING);
	if ((err = pthread_create(&c->othread, NULL, aconn_open_main, c)) == 0) {
		c->has_othread = 1;
		return 0;
	}
	c->tr_used = 0;
	err = idl__fail(IDL_ESYSERR(err), "%s: cannot start a thread", p->head.address);
failed:
	if (idl_errdetail()[0] == '\0')
		idl__fail(err, "%s: connect: %s", p->head.address, idl_strerror(err));
	c->dead = 1;
	lp->conn = NULL;
	idl__loop_conn_free(lp, c);
	return err;
}
