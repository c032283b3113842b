/*
 * server_event.c - the server's event core (docs/call-core.md, "The server's event core"):
 * pooled connections wait in one epoll set and a bounded pool of threads serves whichever
 * becomes ready, so an idle connection costs no thread.
 *
 * Every pooled connection is registered with EPOLLONESHOT: exactly one thread serves it at
 * a time, in order. The thread receives without blocking until the connection has nothing
 * more (or a batch is done, for fairness), answers each request, and arms it again. A
 * reply the kernel does not take at once is queued on the connection, and the connection
 * is then watched for writability only: it sends no more replies than the socket takes,
 * and it is not read until they are out (the output limit, docs/runtime.md). A connection
 * that comes back soon after being armed, several times in a row, is busy: its thread keeps
 * it (a dedicated thread, up to dedicated_max of them) and waits on it with blocking
 * receives, one kernel entry per message, until it is quiet for its linger time (srv->linger_ms).
 *
 * Handshake and idle deadlines are kept by two lists ordered by deadline (not greeted
 * yet, by accept time; greeted, by the time they were last armed) and one timerfd; the
 * head of the idle list is also the connection evicted when a new one needs its place.
 * Receive and reply buffers belong to the threads, so an idle connection holds no buffer.
 *
 * The server room: it knows core, ool and trace, and never the client; a transport only
 * through its ops.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "server/server.h"
#include "trace/trace.h"

/* A connection whose descriptor is a set of the transport's own (IDL_TRF_OWNSET) gets a
 * longer turn than SRV_BATCH (server.h): arming it again costs an epoll_ctl() and the loop's
 * next wait, where what it holds (shm:'s records) costs nothing to take. */
#define SRV_TURN_OWNSET 64
/* A source armed and back within this long is "quick"; two in a row make it busy. */
#define SRV_QUICK_NS 2000000
#define SRV_QUICK_RUN 2
/* A blocking send of a reply with descriptors (which cannot be queued) or of queued
 * replies before it: bounded as the threaded server's sends are. */
#define SRV_SEND_TIMEOUT_MS 30000

/* Replies to frames a stream read ahead wait in the serving thread's batch and go out in
 * one send with the reply to the last of them: a pipelining client's requests then cost the
 * server one receive and one send per batch, not per call (the kernel wakes the client once
 * per send, and on one CPU each wake-up makes the pipeline a ping-pong). Up to SRV_BATCH
 * replies, of SRV_BATCH_BYTES in all; a larger reply, or one with descriptors, is sent as
 * it comes, after the batch. */
#define SRV_BATCH_BYTES 16384

/* The thread's receive and reply buffers, made on its first message, and its batch of
 * replies, which is empty whenever the thread does not hold a source. */
struct srv_bufs {
	void *rbuf;
	void *sbuf;
	size_t rcap, scap;
	unsigned char *batch;
	struct idl_xmsg bm[SRV_BATCH];
	unsigned bn;
	size_t bused;
};
static _Thread_local struct srv_bufs srv_tbufs;

static int
srv_bufs_get(struct idl_server *srv)
{
	struct srv_bufs *b = &srv_tbufs;

	if (b->rbuf != NULL && b->rcap >= srv->rcap && b->scap >= srv->scap)
		return 0;
	free(b->rbuf);
	free(b->sbuf);
	b->rbuf = idl__zalloc(srv->rcap);
	b->sbuf = idl__zalloc(srv->scap);
	b->rcap = srv->rcap;
	b->scap = srv->scap;
	if (b->batch == NULL)
		b->batch = malloc(SRV_BATCH_BYTES);
	if (b->rbuf != NULL && b->sbuf != NULL && b->batch != NULL)
		return 0;
	free(b->rbuf);
	free(b->sbuf);
	free(b->batch);
	b->rbuf = b->sbuf = NULL;
	b->batch = NULL;
	return IDL_ENOMEM;
}

void
idl__srv_bufs_free(void)
{
	free(srv_tbufs.rbuf);
	free(srv_tbufs.sbuf);
	free(srv_tbufs.batch);
	memset(&srv_tbufs, 0, sizeof srv_tbufs);
}

/* The events to wait for on src: writability while replies wait (and nothing is read
 * meanwhile), else readability. */
uint32_t
idl__srv_events(struct srv_src *src, int *fd)
{
	unsigned want = 0;

	*fd = IDL__TR_OP(src->ep->tr, conn_fd)(src->conn, &want);
	/* A set of the transport's own is readable when room comes as when input does. */
	if (src->ep->tr->flags & IDL_TRF_OWNSET)
		return EPOLLONESHOT | EPOLLIN;
	/* Messages read ahead are served first: writability reports at once. */
	pthread_mutex_lock(&src->send_lock);
	if (src->outq != NULL || src->more || (want & IDL_TR_EV_MORE))
		want |= IDL_TR_EV_OUT;
	pthread_mutex_unlock(&src->send_lock);
	return EPOLLONESHOT | ((want & IDL_TR_EV_OUT) ? EPOLLOUT : EPOLLIN);
}

/* Arms a source the calling thread serves (BUSY): it waits in the set again, and its
 * idle time starts now. */
static void
srv_arm(struct idl_server *srv, struct srv_src *src, int64_t now)
{
	struct epoll_event ev;
	int fd;

	ev.data.u64 = (uint64_t)src->gen << 32 | src->slot;
	src->armed_at = now;
	pthread_mutex_lock(&srv->conn_lock);
	ev.events = idl__srv_events(src, &fd);
	if (src->greeted) {
		idl__srv_tlist_remove(srv, src);
		src->since = now;
		idl__list_push_back(&src->ep->idle_list, &src->tlink);
		src->tlist = 2;
		if (src->ep->idle_ns != 0)
			idl__srv_timer_lower(srv, now + src->ep->idle_ns);
	} else if (src->tlist == 1 && src->ep->hs_ns != 0) {
		/* A sweep skips a source it finds busy: its handshake deadline, perhaps
		 * passed meanwhile, is due again once it waits in the set. */
		idl__srv_timer_lower(srv, src->since + src->ep->hs_ns);
	}
	/* Under conn_lock, with the state ARMED before the set can report it: a sweep or an
	 * eviction takes an ARMED source only under this lock, so the registration below is
	 * never made for a descriptor someone else closed meanwhile. */
	atomic_store(&srv->slots[src->slot].word, idl__slot_word(src->gen, SRV_SLOT_ARMED));
	if (epoll_ctl(srv->epfd, EPOLL_CTL_MOD, fd, &ev) != 0)
		epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev);
	pthread_mutex_unlock(&srv->conn_lock);
}

void
idl__srv_rearm(struct idl_server *srv, struct srv_src *src)
{
	srv_arm(srv, src, src->armed_at);
}

/* Takes an ARMED source for the caller (it then serves or ends it). conn_lock held. */
int
idl__srv_claim(struct idl_server *srv, struct srv_src *src)
{
	uint64_t want = idl__slot_word(src->gen, SRV_SLOT_ARMED);

	return atomic_compare_exchange_strong(&srv->slots[src->slot].word, &want,
					      idl__slot_word(src->gen, SRV_SLOT_BUSY));
}

/* Frees src's queued replies. */
static void
srv_outq_free(struct srv_src *src)
{
	while (src->outq != NULL) {
		struct srv_out *o = src->outq;

		src->outq = o->next;
		free(o);
	}
	src->outq_tail = NULL;
}

/* Ends a pooled source the caller owns (BUSY, or just taken): out of the set, closed, its
 * slot free; freed now or, while deferred replies hold it, by the last of them. */
void
idl__srv_end(struct idl_server *srv, struct srv_src *src)
{
	unsigned ev;
	int fd = IDL__TR_OP(src->ep->tr, conn_fd)(src->conn, &ev), free_it;

	pthread_mutex_lock(&srv->conn_lock);
	idl__srv_tlist_remove(srv, src);
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, fd, NULL);
	atomic_store(&srv->slots[src->slot].word, idl__slot_word(src->gen + 1, SRV_SLOT_FREE));
	srv->slots[src->slot].src = NULL;
	srv->free_slots[srv->nfree++] = src->slot;
	idl__srv_addr_drop(srv, src);
	pthread_mutex_unlock(&srv->conn_lock);
	src->ep->tr->conn_close(src->conn);
	pthread_mutex_lock(&src->send_lock);
	srv_outq_free(src);
	pthread_mutex_unlock(&src->send_lock);
	pthread_mutex_lock(&srv->lock);
	srv->nconns--;
	free_it = src->handles == 0;
	if (!free_it) {
		src->reaped = 1;
		idl__list_push_front(&srv->zombies, &src->link);
	}
	pthread_mutex_unlock(&srv->lock);
	if (free_it)
		idl__srv_src_destroy(src);
}

/* Hands queued replies to the kernel: 0 when none is left, 1 while some wait, or an error.
 * send_lock held. */
static int
srv_flush(struct srv_src *src)
{
	int (*sendv)(void *, const struct idl_xmsg *, unsigned) =
		IDL__TR_OP(src->ep->tr, conn_sendv_nb);
	int n = sendv(src->conn, NULL, 0);

	if (n == IDL_EAGAIN)
		return 1;
	if (n < 0)
		return n;
	while (src->outq != NULL) {
		struct srv_out *o = src->outq;
		struct idl_xmsg x = { .data = o->data, .len = o->len };

		if ((n = sendv(src->conn, &x, 1)) < 0)
			return n;
		if (n == 0)
			return 1;
		src->outq = o->next;
		free(o);
	}
	src->outq_tail = NULL;
	return 0;
}

/* Queues a copy of a reply. send_lock held. */
static int
srv_queue(struct srv_src *src, const struct idl_xmsg *x)
{
	struct srv_out *o = malloc(sizeof *o + x->len);

	if (o == NULL)
		return IDL_ENOMEM;
	o->next = NULL;
	o->len = x->len;
	memcpy(o->data, x->data, x->len);
	if (src->outq_tail != NULL)
		src->outq_tail->next = o;
	else
		src->outq = o;
	src->outq_tail = o;
	return 0;
}

/* Sends a reply without blocking: 0 sent, 1 queued, or an error. A reply with descriptors
 * cannot be copied: when the transport does not take it without blocking (unix: passes
 * descriptors; tcp: takes it unless the rest of an earlier frame still waits), it goes with
 * a blocking send, after what waits. send_lock held. */
static int
srv_send_locked(struct srv_src *src, const struct idl_xmsg *x)
{
	int n;

	if (src->outq == NULL) {
		n = IDL__TR_OP(src->ep->tr, conn_sendv_nb)(src->conn, x, 1);
		if (n == 1)
			return 0;
		if (n != 0 && n != IDL_ENOTSUP)
			return n;
		if (n == 0 && !idl__desc_msg(x->data, x->len))
			return srv_queue(src, x) == 0 ? 1 : IDL_ENOMEM;
	}
	if (!idl__desc_msg(x->data, x->len))
		return srv_queue(src, x) == 0 ? 1 : IDL_ENOMEM;
	while (src->outq != NULL) {
		struct srv_out *o = src->outq;
		struct idl_xmsg q = { .data = o->data, .len = o->len };

		if ((n = src->ep->tr->conn_send(
			     src->conn, &q, &(struct idl_deadline){ 0, SRV_SEND_TIMEOUT_MS })) !=
		    0) {
			idl__msg_release_sent(x->data);
			return n;
		}
		src->outq = o->next;
		free(o);
	}
	src->outq_tail = NULL;
	return src->ep->tr->conn_send(src->conn, x,
				      &(struct idl_deadline){ 0, SRV_SEND_TIMEOUT_MS });
}

int
idl__srv_ev_send(struct srv_src *src, const struct idl_xmsg *x)
{
	struct idl_server *srv = src->srv;
	int r;

	pthread_mutex_lock(&src->send_lock);
	r = srv_send_locked(src, x);
	pthread_mutex_unlock(&src->send_lock);
	if (r != 1)
		return r;
	/* Queued: a source waiting in the set only for readability must now be watched for
	 * writability. The thread serving a BUSY one sees the queue when it arms it. */
	pthread_mutex_lock(&srv->conn_lock);
	r = srv->slots != NULL && src->slot < srv->nslots && srv->slots[src->slot].src == src &&
	    idl__srv_claim(srv, src);
	pthread_mutex_unlock(&srv->conn_lock);
	if (r)
		srv_arm(srv, src, src->armed_at);
	return 0;
}

/* A busy source's dedicated wait: the next message within the linger time. 0 and a message,
 * IDL_EAGAIN when it stayed quiet, or the receive's error. `ev`: what a stream's transport
 * said it holds after the last message (srv_tr_events()). (A transport whose messages come
 * whole and that says with each what it holds after it, conn_recv_ev, is received from by
 * srv_serve() itself.) */
static int
srv_linger_recv(struct srv_src *src, struct idl_xmsg *m, unsigned ev)
{
	const struct idl_transport *tr = src->ep->tr;
	int linger = src->srv->linger_ms, err;

	if (tr->flags & IDL_TRF_WHOLE) {
		err = tr->conn_recv(src->conn, m, &(struct idl_deadline){ 0, linger });
		return err == IDL_ETIMEDOUT ? IDL_EAGAIN : err;
	}
	/* A stream keeps partial frames across receives only without blocking: it waits for
	 * the first bytes of the next frame (conn_recv_wait, or readability), then takes what
	 * came; a whole frame read ahead is taken at once. While the stream holds the rest of
	 * a reply the kernel did not take, nothing more is read: the source goes back to the
	 * set to wait for writability. */
	if (ev & IDL_TR_EV_OUT)
		return IDL_EAGAIN;
	if (!(ev & IDL_TR_EV_MORE) && IDL__TR_OP(tr, conn_recv_wait) != NULL)
		return tr->conn_recv_wait(src->conn, m, linger);
	if (!(ev & IDL_TR_EV_MORE)) {
		/* `ev` was read before the last reply went: ask again. */
		struct pollfd p = { .fd = IDL__TR_OP(tr, conn_fd)(src->conn, &ev),
				    .events = POLLIN };

		if ((ev & IDL_TR_EV_OUT) || idl__sys_poll(&p, 1, linger) <= 0)
			return IDL_EAGAIN;
	}
	return IDL__TR_OP(tr, conn_recv_nb)(src->conn, m);
}

/* Whether the calling thread may keep a busy source: a dedicated place is free. The set
 * must keep a thread waiting on it meanwhile: one is started when none waits. */
static int
srv_dedicate_take(struct idl_server *srv)
{
	if (srv->embedded)
		return 0;
	if (atomic_fetch_add(&srv->ndedicated, 1) >= srv->dedicated_max) {
		atomic_fetch_sub(&srv->ndedicated, 1);
		return 0;
	}
	if (atomic_load(&srv->nwaiting) == 0 &&
	    atomic_load(&srv->nthreads) < srv->pool_size + srv->dedicated_max)
		idl__srv_ev_spawn(srv);
	return 1;
}

/* What src's transport says it holds (conn_fd's events): IDL_TR_EV_OUT, the rest of a
 * reply the kernel did not take; IDL_TR_EV_MORE, a whole message read ahead. */
static unsigned
srv_tr_events(struct srv_src *src)
{
	unsigned events = 0;

	(void)IDL__TR_OP(src->ep->tr, conn_fd)(src->conn, &events);
	return events;
}

/* After a reply with descriptors went without blocking: 1 when the transport kept it for
 * want of room (the source then waits for writability, reading nothing more), else 0. */
static int
srv_kept(struct srv_src *src)
{
	return (srv_tr_events(src) & IDL_TR_EV_OUT) != 0;
}

/* Adds a copy of reply x to the thread's batch: 1, or 0 when it does not fit. */
static int
srv_batch_add(struct srv_src *src, const struct idl_xmsg *x)
{
	struct srv_bufs *b = &srv_tbufs;
	size_t at = (b->bused + IDL_MSG_ALIGN - 1) & ~(size_t)(IDL_MSG_ALIGN - 1);

	if (b->bn == SRV_BATCH || x->len > SRV_BATCH_BYTES - at || idl__desc_msg(x->data, x->len))
		return 0;
	memcpy(b->batch + at, x->data, x->len);
	b->bm[b->bn++] = (struct idl_xmsg){ .data = b->batch + at, .len = x->len };
	b->bused = at + x->len;
	src->batched = 1;
	return 1;
}

/* Sends the thread's batch of replies in one send, queueing what the transport does not take
 * now: 0, 1 when replies wait in the queue (the source must wait for writability), or an
 * error. Nothing else may be sent on src meanwhile: send_lock held, or no deferred reply
 * out. */
static int
srv_batch_flush(struct srv_src *src)
{
	struct srv_bufs *b = &srv_tbufs;
	int n = 0, r = 0;

	if (b->bn == 0)
		return 0;
	if (src->outq == NULL)
		n = IDL__TR_OP(src->ep->tr, conn_sendv_nb)(src->conn, b->bm, b->bn);
	if (n < 0)
		r = n;
	/* Every reply the transport did not take waits in the queue, in order. */
	for (unsigned i = n < 0 ? b->bn : (unsigned)n; i < b->bn && r >= 0; i++)
		r = srv_queue(src, &b->bm[i]) == 0 ? 1 : IDL_ENOMEM;
	b->bn = 0;
	b->bused = 0;
	src->batched = 0;
	return r;
}

/* Sends reply x (NULL: the message had none) after what the batch holds, or adds it to the
 * batch while the stream has more frames read ahead (`more`): 0, 1 when a reply waits in
 * the queue, or an error. The usual case, a reply alone, is srv_serve_msg()'s. */
static int
srv_reply(struct srv_src *src, const struct idl_xmsg *x, int more)
{
	int r = 0, r2;

	if (atomic_load_explicit(&src->deferred, memory_order_acquire) != 0) {
		pthread_mutex_lock(&src->send_lock);
		r = srv_batch_flush(src);
		r2 = r >= 0 && x != NULL ? srv_send_locked(src, x) : 0;
		pthread_mutex_unlock(&src->send_lock);
		if (r2 == 0 && x != NULL && idl__desc_msg(x->data, x->len))
			r2 = srv_kept(src);
		return r < 0 || r2 < 0 ? (r < 0 ? r : r2) : r | r2;
	}
	if (x != NULL && src->outq == NULL && srv_batch_add(src, x)) {
		if (more)
			return 0;
		x = NULL; /* the last reply goes with the batch */
	}
	if (more && x == NULL)
		return 0;
	if ((r = srv_batch_flush(src)) < 0 || x == NULL)
		return r;
	/* A reply with descriptors the transport kept part of: nothing more is read until it
	 * is out (the source waits for writability), as after a reply alone. */
	if ((r2 = srv_send_locked(src, x)) == 0 && idl__desc_msg(x->data, x->len))
		r2 = srv_kept(src);
	return r2 < 0 ? r2 : r | r2;
}

/* Serves one message received on src: 0 to go on, 1 when a reply waits in the queue (the
 * source must wait for writability), or an error that ends the source. *tev is what the
 * transport holds after it (whole messages read ahead, the rest of a reply): asked of it
 * (srv_tr_events()) when `ask`, else as the receive said. In line in the two receive
 * loops: a call would cost more than its work. */
static inline __attribute__((always_inline)) int
srv_serve_msg(struct srv_src *src, struct idl_xmsg *m, int err, void *sbuf, int ask, unsigned *tev)
{
	uint32_t n;
	int more;

	if (__builtin_expect(err != 0, 0)) {
		/* A stream transport has closed the connection when a message did not fit. A
		 * message refused for its descriptors is answered while its framing held. */
		if (err == IDL_EPROTO)
			idl__srv_refused_log(src, NULL, m->len);
		if (!idl__rcv_has_msg(err, m->len) ||
		    (err == IDL_EMSGSIZE && (src->ep->tr->flags & IDL_TRF_STREAM))) {
			/* The replies to the frames before it still go. */
			pthread_mutex_lock(&src->send_lock);
			srv_batch_flush(src);
			pthread_mutex_unlock(&src->send_lock);
			idl__srv_conn_log(src, err, m->len, 1);
			return err;
		}
		if (err == IDL_EMSGSIZE)
			idl__srv_conn_log(src, err, m->len, 0);
	} else {
		IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_RECV, src->ep->head.address, m->data,
			   m->len);
	}
	n = idl__srv_serve(src, &src->hello, m->data, m->len, err, sbuf, NULL, NULL);
	if (ask)
		*tev = srv_tr_events(src);
	more = (*tev & (IDL_TR_EV_MORE | IDL_TR_EV_OUT)) == IDL_TR_EV_MORE;
	if (n != 0) {
		struct idl_xmsg x = { .data = sbuf, .len = n };

		IDL__TRACE(IDL_TRACE_SERVER, IDL_TRACE_SEND, src->ep->head.address, x.data, n);
		/* While no deferred reply is out - a handle is made only by this thread, in a
		 * routine, and counted before it can be sent - nobody else sends on the source
		 * (a goodbye goes only to an armed one): no lock. */
		if (!more && !src->batched &&
		    atomic_load_explicit(&src->deferred, memory_order_acquire) == 0) {
			if (src->outq == NULL &&
			    IDL__TR_OP(src->ep->tr, conn_sendv_nb)(src->conn, &x, 1) == 1)
				return idl__desc_msg(x.data, x.len) ? srv_kept(src) : 0;
			return srv_send_locked(src, &x);
		}
		return srv_reply(src, &x, more);
	}
	return src->batched ? srv_reply(src, NULL, more) : 0;
}

/* Sends what the thread's batch still holds before the thread lets src go or waits on it
 * (a run of frames read ahead was cut short by the bound or a stop): 0, with *r set to 1
 * when replies wait in the queue and *tev to what the transport holds now; or 1 when the
 * source ended. */
static int
srv_serve_batch_out(struct idl_server *srv, struct srv_src *src, int *r, unsigned *tev)
{
	int f = 0;

	if (src->batched) {
		pthread_mutex_lock(&src->send_lock);
		f = srv_batch_flush(src);
		pthread_mutex_unlock(&src->send_lock);
		*tev = srv_tr_events(src);
	}
	if (f < 0) {
		idl__srv_end(srv, src);
		return 1;
	}
	if (f == 1)
		*r = 1;
	return 0;
}

/* The replies waiting in src's queue, sent as far as the socket takes them when it became
 * writable (a set of the transport's own says so as readability): 0, or -1 when the source
 * ended. */
static inline __attribute__((always_inline)) int
srv_serve_out(struct srv_src *src, uint32_t events)
{
	int r = 0;

	if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) ||
	    ((src->ep->tr->flags & IDL_TRF_OWNSET) && src->outq != NULL)) {
		pthread_mutex_lock(&src->send_lock);
		r = srv_flush(src);
		pthread_mutex_unlock(&src->send_lock);
	}
	return r;
}

/*
 * One batch of src: messages are taken one per readiness, since the set reports the next at
 * once when it is there, so no receive is spent learning that nothing is. A stream's
 * receive may hold whole frames read ahead, which no readiness would report: while the
 * transport says so (IDL_TR_EV_MORE) they are taken too, at most `turn` of them before
 * others' turn. Returns what srv_serve_msg() does (<0: the source ended); *got counts the
 * messages (the end of the stream is none), *tev is what the transport holds after the last.
 */
static inline __attribute__((always_inline)) int
srv_serve_batch(struct idl_server *srv, struct srv_src *src, int turn, int *got, unsigned *tev)
{
	int (*recv_nb)(void *, struct idl_xmsg *) = IDL__TR_OP(src->ep->tr, conn_recv_nb);
	int whole = (src->ep->tr->flags & IDL_TRF_WHOLE) != 0;
	int r = 0, i;

	for (i = 0; r == 0 && i < turn; i++) {
		struct idl_xmsg m = { .data = srv_tbufs.rbuf, .cap = srv->rcap };
		int err = recv_nb(src->conn, &m);

		if (err == IDL_EAGAIN)
			break;
		(*got)++;
		if ((r = srv_serve_msg(src, &m, err, srv_tbufs.sbuf, 1, tev)) < 0) {
			*got -= err != 0;
			return r;
		}
		if ((*tev & (IDL_TR_EV_MORE | IDL_TR_EV_OUT)) != IDL_TR_EV_MORE)
			break;
	}
	/* The rest is served next: the source is armed for writability, which reports at
	 * once. */
	if (i == turn && (!whole || (*tev & IDL_TR_EV_MORE)))
		src->more = 1;
	return r;
}

/* A busy source keeps this thread while it goes on sending: one blocking receive per
 * message, as a thread of its own would, until it is quiet for the linger time or the
 * server stops. Returns what srv_serve_msg() does last (<0: the source ended); *got counts
 * the messages. */
static inline __attribute__((always_inline)) int
srv_serve_dedicated(struct idl_server *srv, struct srv_src *src, unsigned *tev, int *got)
{
	void *rbuf = srv_tbufs.rbuf, *sbuf = srv_tbufs.sbuf;
	size_t rcap = srv->rcap;
	int whole = (src->ep->tr->flags & IDL_TRF_WHOLE) != 0;
	/* Messages that come whole: the receive says what it read ahead (or there is nothing
	 * read ahead). A stream's transport is asked after each message. */
	int (*recv_ev)(void *, struct idl_xmsg *, struct idl_deadline *, unsigned *) =
		whole ? IDL__TR_OP(src->ep->tr, conn_recv_ev) : NULL;
	int r = 0;

	while (!atomic_load_explicit(&srv->stop_req, memory_order_relaxed)) {
		struct idl_xmsg m = { .data = rbuf, .cap = rcap };
		int err;

		if (recv_ev != NULL) {
			err = recv_ev(src->conn, &m, &(struct idl_deadline){ 0, srv->linger_ms },
				      tev);
			if (err == IDL_ETIMEDOUT)
				break;
		} else if ((err = srv_linger_recv(src, &m, *tev)) == IDL_EAGAIN) {
			break;
		} else if (whole) {
			*tev = 0;
		}
		(*got)++;
		if ((r = srv_serve_msg(src, &m, err, sbuf, !whole, tev)) != 0) {
			*got -= r < 0 && err != 0;
			break;
		}
	}
	atomic_fetch_sub(&srv->ndedicated, 1);
	return r;
}

/* Serves a source the calling thread has taken (BUSY), then arms or ends it; returns how
 * many messages it served. */
static unsigned
srv_serve_turn(struct idl_server *srv, struct srv_src *src, uint32_t events, int dedicate)
{
	int turn = (src->ep->tr->flags & IDL_TRF_OWNSET) ? SRV_TURN_OWNSET : SRV_BATCH;
	int64_t now = idl_now_ns();
	unsigned tev = 0;
	int got = 0, r;

	if (now - src->armed_at < SRV_QUICK_NS)
		src->quick++;
	else
		src->quick = 0;
	src->more = 0;
	if (srv_bufs_get(srv) != 0 || (r = srv_serve_out(src, events)) < 0 ||
	    (r == 0 && (r = srv_serve_batch(srv, src, turn, &got, &tev)) < 0)) {
		idl__srv_end(srv, src);
		return (unsigned)got;
	}
	if (srv_serve_batch_out(srv, src, &r, &tev) != 0)
		return (unsigned)got;
	if (r == 0 && got != 0 && !src->more && dedicate && src->quick >= SRV_QUICK_RUN &&
	    srv_dedicate_take(srv)) {
		if ((r = srv_serve_dedicated(srv, src, &tev, &got)) < 0) {
			idl__srv_end(srv, src);
			return (unsigned)got;
		}
		if (srv_serve_batch_out(srv, src, &r, &tev) != 0)
			return (unsigned)got;
		now = idl_now_ns();
	}
	srv_arm(srv, src, got != 0 ? now : src->armed_at);
	return (unsigned)got;
}

/* Serves a source the calling thread has taken; what it served is counted for the service
 * manager (idl__srv_count()), once a turn rather than once a message. */
static void
srv_serve(struct idl_server *srv, struct srv_src *src, uint32_t events, int dedicate)
{
	idl__srv_count(srv, srv_serve_turn(srv, src, events, dedicate));
}

/* An event on the set: a connection, a listener, an embedded server's message endpoint, the
 * timer or the wake descriptor. Returns
 * 1 when the thread must leave the loop (the server stops). */
static int
srv_event(struct idl_server *srv, const struct epoll_event *e, int dedicate)
{
	uint64_t d = e->data.u64, v;

	if (d == SRV_EV_WAKE) {
		if (atomic_load(&srv->stop_req))
			return 1;
		if (read(srv->efd, &v, sizeof v) > 0) {
			pthread_mutex_lock(&srv->lock);
			idl__srv_reap(srv);
			pthread_mutex_unlock(&srv->lock);
		}
		if (atomic_exchange(&srv->reload_req, 0))
			(void)idl_server_reload(srv);
		/* A stop that came between the look above and the read was read here with the
		 * poke: it is made again, so that every thread waiting in the set still wakes to
		 * it (nothing reads the eventfd once the stop is seen, so it stays readable). */
		if (atomic_load(&srv->stop_req)) {
			idl_server_stop(srv);
			return 1;
		}
		if (atomic_load(&srv->drain_req))
			idl__srv_drain_begin(srv);
		return 0;
	}
	if (d == SRV_EV_TIMER) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
					  .data.u64 = SRV_EV_TIMER };

		if (read(srv->tfd, &v, sizeof v) < 0)
			v = 0;
		idl__srv_sweep(srv);
		if (atomic_load(&srv->drain_started))
			idl__srv_drain_step(srv);
		epoll_ctl(srv->epfd, EPOLL_CTL_MOD, srv->tfd, &ev);
		return 0;
	}
	if (d == SRV_EV_SVC) {
		idl__srv_svc_tick(srv);
		return 0;
	}
	if (d & SRV_EV_EP) {
		idl__srv_ep_event(srv, (struct srv_ep *)(uintptr_t)(d & ~SRV_EV_EP), d);
		return 0;
	}
	{
		uint32_t slot = (uint32_t)d, gen = (uint32_t)(d >> 32);
		uint64_t want = idl__slot_word(gen, SRV_SLOT_ARMED);

		if (slot < srv->nslots &&
		    atomic_compare_exchange_strong(&srv->slots[slot].word, &want,
						   idl__slot_word(gen, SRV_SLOT_BUSY)))
			srv_serve(srv, srv->slots[slot].src, e->events, dedicate);
	}
	return 0;
}

void
idl__srv_ev_loop(struct idl_server *srv, int max, int *served)
{
	struct epoll_event e;
	int n;

	if (max >= 0) {
		/* Embedded: what is ready now, without blocking. */
		*served = 0;
		while (*served < max && !atomic_load(&srv->stop_req) &&
		       (n = epoll_wait(srv->epfd, &e, 1, 0)) == 1) {
			(*served)++;
			if (srv_event(srv, &e, 0))
				break;
		}
		return;
	}
	for (;;) {
		atomic_fetch_add(&srv->nwaiting, 1);
		n = epoll_wait(srv->epfd, &e, 1, -1);
		atomic_fetch_sub(&srv->nwaiting, 1);
		if (atomic_load(&srv->stop_req))
			break;
		if (n == 1 && srv_event(srv, &e, 1))
			break;
		/* A thread started for a busy source leaves when enough others wait. */
		if (served == NULL && atomic_load(&srv->nthreads) > srv->pool_size &&
		    atomic_load(&srv->nwaiting) >= 1)
			break;
	}
}
