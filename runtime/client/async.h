/*
 * async.h - calls in flight on a pollable port, shared by async_call.c (the calls:
 * accepting, completing, cancelling, the hello), async_carry.c (calls carried over to a new
 * connection), async_conn.c (the connection's life) and async_loop.c (the call loop: the
 * port's descriptor, how the connection is driven, dispatch and wait).
 *
 * A port's asynchronous calls use a connection of their own, beside the one idl_call()
 * uses, so that the synchronous lean path stays as it is (docs/call-core.md, "The pollable
 * port"). Everything below is guarded by the port's async lock (`lock`), except what says
 * otherwise; done functions run with no lock held, one at a time (`dispatch_lock`).
 */
#ifndef IDL_RUNTIME_CLIENT_ASYNC_H
#define IDL_RUNTIME_CLIENT_ASYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <idl/idl_async.h>

#include "client/client.h"

/* The most messages a connection's send queue holds: beyond it, idl_call_async() returns
 * IDL_EAGAIN. Cancel messages may use as many again, so that a cancel is never refused. */
#define IDL__ASYNC_SENDQ_MAX IDL_ASYNC_QUEUE_MAX
/* Buckets of the table of calls in flight, keyed by sequence number. */
#define IDL__ASYNC_BUCKETS 256u
/* The least a receive buffer of the threaded driver holds. */
#define IDL__ASYNC_RBUF_MIN (64u * 1024u)
/* The bounds of a port's spare call records. */
#define IDL__ASYNC_SPARE_MAX 64u
#define IDL__ASYNC_SPARE_BYTES (1024u * 1024u)

enum idl__async_state {
	IDL__ASYNC_HELLO = 0, /* accepted, waiting for its subsystem's hello */
	IDL__ASYNC_QUEUED = 1, /* in the send queue */
	IDL__ASYNC_SENT = 2, /* handed to the transport */
	IDL__ASYNC_DONE = 3, /* completed: on the completion list */
	IDL__ASYNC_RAN = 4, /* its complete function ran */
};

struct idl__loop;

struct idl_async {
	struct idl__loop *lp;
	struct idl_async *hnext; /* in its bucket of the table */
	struct idl_async *next; /* on the completion list */
	struct idl_async *wnext; /* on its hello's waiters */
	const struct idl_subsystem *ss;
	uint32_t number;
	uint32_t seqno;
	int32_t rep_id;
	uint8_t rep_kind; /* IDL_KIND_REPLY; IDL_KIND_HELLO_REPLY for the runtime's hello */
	uint8_t in_table;
	uint8_t queued; /* its request is in the send queue (not yet taken by a sender) */
	uint8_t carrying; /* on the port's carry list, waiting for a new connection */
	uint8_t carried; /* carried over to a new connection once already */
	atomic_int state; /* enum idl__async_state; written under the lock */
	atomic_int refs; /* the runtime's until its complete function ran, the handle's, and
			    a sending thread's while it sends */
	int64_t deadline; /* absolute CLOCK_MONOTONIC ns, or IDL_DEADLINE_NONE */
	idl_msg_header_t *req; /* the copy that is sent, in this allocation */
	idl_msg_header_t *rep; /* rep_max bytes, in this allocation */
	uint32_t rep_max;
	int result;
	char why[192];
	idl_async_complete_fn *complete; /* NULL for the runtime's hello */
	void *done;
	void *ctx;
	size_t cap; /* bytes of this allocation, for its reuse */
};

/* One subsystem's hello on the asynchronous connection. */
struct idl__ahello {
	const struct idl_subsystem *ss;
	int state; /* enum cl_hello_state */
	int err;
	uint8_t *verdicts;
	unsigned version; /* the version of the hello in flight or answered */
	uint64_t *own; /* our hashes of that version, ss->nroutines of them; owned */
	struct idl_async *waiters; /* calls waiting for it, the oldest first */
	struct idl_async *last;
};

/* One entry of the send queue: a call's request, or a cancel message the queue owns. A
 * cancelled or timed-out call leaves its entry empty (call and ctl NULL). */
struct idl__aqent {
	struct idl_async *call;
	idl_msg_header_t *ctl;
};

/* The connect of a connection made with the blocking conn_connect, on a thread of its own
 * (async_conn.c): running, done (the thread is about to take the lock to say so), or given
 * up by a port that closed meanwhile (the thread then frees the connection itself). */
enum idl__aopen {
	IDL__AOPEN_RUNNING = 0,
	IDL__AOPEN_DONE = 1,
	IDL__AOPEN_ORPHAN = 2,
};

struct idl__aconn {
	struct idl__loop *lp;
	const struct idl_transport *tr;
	void *tr_state;
	int nb; /* driven by the non-blocking ops in dispatch; else by two threads */
	int fd; /* conn_fd, in the port's epoll set (nb); -1 until then */
	int want_out; /* EPOLLOUT asked for: the queue waits for room */
	/* A flush sends the queue's head with the blocking conn_send, without the lock
	 * (async_loop.c): no other flush sends, and the connection is not freed, meanwhile. */
	int blocking;
	int connecting; /* a connect started without blocking is in progress (nb only) */
	/* A blocking connect runs on the connection's first thread, without the lock: calls
	 * queue meanwhile, nothing is sent or received, and only that thread (or the port's
	 * close, which then leaves the connection to it) ends the connection. */
	int opening;
	atomic_int open_state; /* enum idl__aopen, while opening */
	struct idl_deadline open_dl; /* the connect's: the call's that made the connection */
	char *addr; /* the port's address, and the part after the scheme (rest): the */
	char *rest; /* connecting thread's own copy, which outlives a port that closed */
	int tr_used; /* tr_state went to a connect: conn_fini ends it */
	int recv_more; /* a pass stopped at its bound: messages may wait read ahead */
	/* A transport that resends unanswered requests (conn_resend): when its next resend is
	 * due, or IDL_DEADLINE_NONE when it was not asked since it last had none. */
	int64_t resend_at;
	int dead;
	int dead_err;
	char dead_why[192];
	uint32_t goodbye; /* the reason of the server's goodbye that ended it, or 0 */
	struct idl__ahello *hellos;
	size_t nhellos, hellos_cap;
	/* Calls on the hellos' waiters: they count toward the send queue's bound with the
	 * calls in it, since each goes into it once its hello is answered. */
	unsigned hwait;
	/* The send queue: a ring. */
	struct idl__aqent *q;
	unsigned qcap, qhead, qlen, qcalls; /* qcalls: entries that are calls (the bound) */
	/* The connection's threads: the first (othread) connects, where the connect blocks,
	 * and then, for the threaded driver, is its sender and starts its receiver
	 * (rthread). */
	pthread_t othread, rthread;
	int has_othread, has_rthread;
	pthread_cond_t scv; /* the sender: the queue got work, or the connection ended */
	void *rbuf;
	size_t rcap;
};

struct idl__loop {
	struct idl_port *port;
	pthread_mutex_t lock;
	/* Held while dispatching, so that done functions of one port never run at once. */
	pthread_mutex_t dispatch_lock;
	const char *dispatcher; /* &idl__loop_self of the thread inside dispatch */
	int dispatching; /* a thread is inside dispatch: sends are corked */
	int closing;
	int epfd, evfd, tfd;
	int ev_set; /* the eventfd was written and not drained */
	int64_t armed; /* the timerfd's expiry, or IDL_DEADLINE_NONE */
	struct idl__aconn *conn;
	struct idl_async *table[IDL__ASYNC_BUCKETS];
	unsigned live; /* calls in the table */
	uint32_t max_rep; /* the largest rep_max of a call so far */
	struct idl_async *cfirst, *clast; /* completions, oldest first */
	/* Records of calls that ended, kept for the next calls (linked by `next`): a call
	 * costs no allocation once the port is busy. At most IDL__ASYNC_SPARE_MAX records and
	 * IDL__ASYNC_SPARE_BYTES bytes. */
	struct idl_async *spare;
	unsigned nspare;
	size_t spare_bytes;
	/* Calls whose connection died before their request reached the transport: they go on
	 * the next connection, in the order they were accepted (linked by `next`). */
	struct idl_async *carry;
};

/* The table of calls in flight, by sequence number. Lock held. */
static inline struct idl_async **
idl__async_bucket(struct idl__loop *lp, uint32_t seqno)
{
	return &lp->table[seqno % IDL__ASYNC_BUCKETS];
}

static inline void
idl__async_table_add(struct idl__loop *lp, struct idl_async *call)
{
	struct idl_async **b = idl__async_bucket(lp, call->seqno);

	call->hnext = *b;
	*b = call;
	call->in_table = 1;
	lp->live++;
}

static inline void
idl__async_table_remove(struct idl__loop *lp, struct idl_async *call)
{
	struct idl_async **b = idl__async_bucket(lp, call->seqno);

	if (!call->in_table)
		return;
	while (*b != call)
		b = &(*b)->hnext;
	*b = call->hnext;
	call->in_table = 0;
	lp->live--;
}

static inline struct idl_async *
idl__async_table_find(struct idl__loop *lp, uint32_t seqno)
{
	struct idl_async *c = *idl__async_bucket(lp, seqno);

	while (c != NULL && c->seqno != seqno)
		c = c->hnext;
	return c;
}

/* async_call.c: lock held unless said. */
/* A new call record with room for the request (copied) and the reply; `locked`: the lock is
 * held (the port's spare records may be taken). NULL when out of memory. */
struct idl_async *idl__async_new(struct idl__loop *lp, const idl_msg_header_t *req,
				 uint32_t rep_max, int locked);
/* Completes a call: out of the table and the queue, result and detail set, on the
 * completion list (the eventfd written when the list was empty). */
void idl__async_finish(struct idl__loop *lp, struct idl_async *call, int result, const char *why);
/* A received message: handed to the call it answers, or dropped. */
void idl__async_deliver(struct idl__loop *lp, void *buf, size_t len, int rcv_err);
/* Completes every call of the port with err (the connection died, or the port closes),
 * but those carried over to the next connection. */
void idl__async_fail_all(struct idl__loop *lp, int err, const char *why);
/* Drops a reference; the last frees the call. Any thread, no lock needed. */
void idl__async_unref(struct idl_async *call);
/* async_hello.c: places an accepted call (numbered, in no list) on the live connection:
 * behind its subsystem's hello, or in the send queue once the hello is known. 0 or an error
 * (the call then in no list). */
int idl__async_place(struct idl__loop *lp, struct idl_async *call);
/* async_hello.c: the runtime's hello call hc ended: with its reply rep (result 0), or with
 * result and why. Its waiters go on or fail. */
void idl__async_hello_done(struct idl__loop *lp, struct idl_async *hc, const idl_msg_header_t *rep,
			   int result, const char *why);
/* async_hello.c: takes a call off its hello's waiters. */
void idl__async_unwait(struct idl__loop *lp, struct idl_async *call);

/* async_carry.c: lock held. */
/* Takes a carried call off the carry list (it completes). */
void idl__async_uncarry(struct idl__loop *lp, struct idl_async *call);
/* The connection c died with err: the calls whose request never reached the transport
 * move to the carry list (once per call, and only after a connection that worked died;
 * c->connecting, a limit or a closing port: none), and after an IDLE or EVICTED goodbye the
 * calls it had taken too; then every other call fails. */
void idl__async_conn_died(struct idl__loop *lp, struct idl__aconn *c, int err, const char *why);
/* Puts the carried calls on the live connection lp->conn (hello first where needed), or,
 * with err != 0 (no connection could be made), fails them with err. */
void idl__async_carry_resume(struct idl__loop *lp, int err, const char *why);
/* Frees the port's spare records (the port closes). */
void idl__async_spares_free(struct idl__loop *lp);
/* Fires the calls whose deadline passed; returns the earliest deadline left. */
int64_t idl__async_timers(struct idl__loop *lp, int64_t now);

/* async_conn.c: the connection's life. Lock held. */
/* Makes a connection when there is none, or the last one died: 0 once lp->conn is one that
 * is alive, or connecting - on tcp: without blocking, in the port's loop; elsewhere on a
 * thread of the connection, bounded by deadline, while the calls queue behind it. Never
 * waits for the peer. */
int idl__loop_connect(struct idl__loop *lp, int64_t deadline);
/* The connection ended: every call fails with err. */
void idl__loop_conn_dead(struct idl__loop *lp, struct idl__aconn *c, int err);
/* The transport failed with err (IDL_ECLOSED: the peer went away): the connection ends,
 * with `what` (or nothing) and the transport's detail as its reason, or what err means
 * when the transport gave no detail. */
void idl__loop_conn_failed(struct idl__loop *lp, struct idl__aconn *c, const char *what, int err);
/* Frees a connection that ended (its threads joined first, with the lock released). */
void idl__loop_conn_free(struct idl__loop *lp, struct idl__aconn *c);
/* The port closes: its connection (no longer lp->conn) is ended and freed, or, while its
 * connect still runs, left to the thread that connects, which frees it when the connect
 * returns. Its calls have completed already. */
void idl__loop_conn_close(struct idl__loop *lp, struct idl__aconn *c);

/* The first entry of the queue, or NULL when it is empty; empty entries are skipped. */
static inline struct idl__aqent *
idl__aconn_head(struct idl__aconn *c)
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
static inline void
idl__aconn_pop(struct idl__aconn *c)
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

/* Grows the connection's receive buffer to the largest reply a call of the port accepts;
 * on no memory it stays as it is. */
static inline void
idl__aconn_rbuf(struct idl__loop *lp, struct idl__aconn *c)
{
	if (c->rcap < lp->max_rep) {
		void *nb = idl__zalloc(lp->max_rep);

		if (nb != NULL) {
			free(c->rbuf);
			c->rbuf = nb;
			c->rcap = lp->max_rep;
		}
	}
}

/* async_loop.c: the call loop. Lock held unless said. */
/* The port's asynchronous state, made on first use (no lock held). */
int idl__loop_get(struct idl_port *p, struct idl__loop **app);

/* A live connection, connecting first if needed: the common case, a connection that is
 * there and alive, is a test in line. */
static inline int
idl__loop_conn(struct idl__loop *lp, int64_t deadline)
{
	if (lp->conn != NULL && !lp->conn->dead)
		return 0;
	return idl__loop_connect(lp, deadline);
}
/* Appends a call's request (or, with call NULL, the cancel message ctl) to the queue. */
int idl__loop_enqueue(struct idl__loop *lp, struct idl_async *call, idl_msg_header_t *ctl);
/* Sends what the queue holds as far as it goes now (nb), or wakes the sender. */
void idl__loop_flush(struct idl__loop *lp);
/* Re-arms the timer when `deadline` comes before what it is set to. */
void idl__loop_arm(struct idl__loop *lp, int64_t deadline);
/* Writes the eventfd (once until drained). */
void idl__loop_wake(struct idl__loop *lp);
/* A thread's identity for the dispatch check: the address of a thread-local byte, a fixed
 * offset from the thread pointer (initial-exec), where pthread_self() would be a call. Only
 * the thread inside dispatch is ever compared, and it is alive while it is. */
extern _Thread_local char idl__loop_self __attribute__((tls_model("initial-exec")));

/* Whether sends are held for the end of a dispatch on this thread. */
static inline int
idl__loop_corked(const struct idl__loop *lp)
{
	return lp->dispatching && lp->dispatcher == &idl__loop_self;
}
/* Runs the completions on the list (at most max; all for max < 0) with no lock held;
 * returns how many ran. dispatch_lock held. */
int idl__async_run(struct idl__loop *lp, int max);

#endif /* IDL_RUNTIME_CLIENT_ASYNC_H */
