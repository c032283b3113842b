/*
 * server_loop.c - a running server: idl_server_run() and the embeddable server's start,
 * accepting connections (with the connection limit, eviction and refusals), the receiving
 * threads of sources the event core does not pool, and their end.
 *
 * idl_server_run()'s thread is one of the event core's pool (server_event.c): the pool
 * waits on one epoll set holding the listening endpoints, the pooled connections, a timer
 * and an eventfd. A connection of a transport whose descriptor is a set of its own (shm:,
 * IDL_TRF_OWNSET) gets its own receiving thread, and a message endpoint (udp:, port:) has
 * one. Threads that end put
 * themselves on a list and poke the eventfd; a pool thread joins and frees them.
 * idl_server_stop() sets a flag and writes the eventfd, which is async-signal-safe.
 *
 * The server room: it knows core and ool, and never the client; a transport only through
 * its ops.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "server/server.h"

/* Whether the transport has the three event operations. */
static int
srv_ev_ops(const struct idl_transport *tr)
{
	return IDL__TR_OP(tr, conn_fd) != NULL && IDL__TR_OP(tr, conn_recv_nb) != NULL &&
	       IDL__TR_OP(tr, conn_sendv_nb) != NULL;
}

int
idl__srv_ev_poolable(const struct srv_ep *ep)
{
	/* A transport whose descriptor is a set of its own (IDL_TRF_OWNSET) is pooled only
	 * where no thread may be made for it. */
	return srv_ev_ops(ep->tr) && (ep->srv->embedded || !(ep->tr->flags & IDL_TRF_OWNSET));
}

int
idl__srv_ev_embeddable(const struct srv_ep *ep)
{
	if (IDL__TR_OP(ep->tr, ep_accept) != NULL)
		return srv_ev_ops(ep->tr);
	return IDL__TR_OP(ep->tr, ep_fd) != NULL && IDL__TR_OP(ep->tr, ep_recv) != NULL;
}

/* After accept fails for lack of descriptors or memory, stop accepting this long rather
 * than spin on a listening socket that stays readable (libtirpc CVE-2021-46828). */
/* Connections accepted per readiness of a listener before others get their turn. */
#define SRV_ACCEPT_BATCH 64
/* The stack of each receiving thread. A server has one thread per connection and per
 * message endpoint, so a set of a thousand endpoints must not reserve a thousand default
 * (8 MiB) stacks; the runtime's own frames are small, and this leaves server routines
 * room for ordinary work. */
#define SRV_THREAD_STACK (256u << 10)

/* Starts the receiving thread of a source; the source is live once this returns 0. */
static int
srv_src_start(struct idl_server *srv, struct srv_src *src, void *(*fn)(void *))
{
	pthread_attr_t attr;
	int err;

	idl__list_push_front(&srv->live, &src->link);
	pthread_attr_init(&attr);
	/* Refused only below PTHREAD_STACK_MIN: keep the default then. */
	(void)pthread_attr_setstacksize(&attr, SRV_THREAD_STACK);
	err = pthread_create(&src->thread, &attr, fn, src);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		idl__list_remove(&srv->live, &src->link);
		return idl__fail(IDL_ESYSERR(err), "pthread_create: %s", strerror(err));
	}
	return 0;
}

/* The refusal of an endpoint an embedded server cannot serve: a transport without the
 * event operations (none of the built-in ones). */
static int
srv_not_embeddable(const struct srv_ep *ep)
{
	return idl__fail(IDL_ENOTSUP,
			 "%s: this transport cannot be served from an event loop (idl_server_fd)",
			 ep->head.address);
}

/* Watches ep's descriptor in the set: a listener, or an embedded server's message
 * endpoint. */
static int
srv_ep_watch(struct idl_server *srv, struct srv_ep *ep)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
				  .data.u64 = SRV_EV_EP | (uintptr_t)ep };

	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, IDL__TR_OP(ep->tr, ep_fd)(ep->state), &ev) != 0)
		return idl__fail(IDL_ESYSERR(errno), "%s: epoll_ctl: %s", ep->head.address,
				 strerror(errno));
	return 0;
}

int
idl__srv_ep_start(struct idl_server *srv, struct srv_ep *ep)
{
	int err;

	if (srv->embedded && !idl__srv_ev_embeddable(ep))
		return srv_not_embeddable(ep);
	if (IDL__TR_OP(ep->tr, ep_accept) != NULL)
		return srv_ep_watch(srv, ep);
	if (ep->src != NULL)
		return 0;
	if ((ep->src = calloc(1, sizeof *ep->src)) == NULL)
		return IDL_ENOMEM;
	ep->src->ep = ep;
	if (idl__srv_src_alloc(srv, ep->src) != 0) {
		err = idl__fail(IDL_ENOMEM, "%s: out of memory", ep->head.address);
	} else if (srv->embedded || ep->adopted) {
		/* The loop's thread serves it when its descriptor is readable; so do the pool's
		 * a passed socket, whose receive no shutdown may wake (server.h). */
		ep->src->threadless = 1;
		idl__list_push_front(&srv->live, &ep->src->link);
		if ((err = srv_ep_watch(srv, ep)) != 0)
			idl__list_remove(&srv->live, &ep->src->link);
	} else if ((err = srv_src_start(srv, ep->src, idl__srv_ep_main)) != 0) {
		err = idl__fail(IDL_ENOMEM, "%s: cannot start its thread", ep->head.address);
	}
	if (err != 0) {
		idl__srv_src_free(ep->src);
		ep->src = NULL;
	}
	return err;
}

void
idl__srv_src_ended(struct srv_src *src)
{
	struct idl_server *srv = src->srv;
	uint64_t one = 1;

	pthread_mutex_lock(&srv->lock);
	idl__list_remove(&srv->live, &src->link);
	idl__list_push_front(&srv->ended, &src->link);
	if (src->conn != NULL)
		srv->nconns--;
	/* Its receives, which it counted itself (rstate), go to the server's count. */
	idl__srv_count(srv, atomic_load(&src->rstate) >> 2);
	pthread_mutex_unlock(&srv->lock);
	/* Cannot fail but for a counter at its maximum, which a poke need not raise. */
	if (write(srv->efd, &one, sizeof one) < 0)
		return;
}

/* Frees a joined source: its connection (message endpoints keep theirs), its buffers. */
void
idl__srv_src_destroy(struct srv_src *src)
{
	if (src->conn != NULL) {
		src->ep->tr->conn_close(src->conn);
		src->ep->tr->conn_fini(src->conn);
		free(src->conn);
	}
	idl__srv_src_free(src);
}

/* Joins and frees the sources whose threads ended. Lock held; dropped around joins. A
 * source that deferred replies still hold is closed (a late reply fails with
 * MIG_SERVER_DIED) and kept until the last of them is done. */
void
idl__srv_reap(struct idl_server *srv)
{
	struct idl__link *l;

	while ((l = idl__list_pop_front(&srv->ended)) != NULL) {
		struct srv_src *src = IDL__LIST_ENTRY(l, struct srv_src, link);

		pthread_mutex_unlock(&srv->lock);
		if (!src->threadless)
			pthread_join(src->thread, NULL);
		if (src->conn != NULL)
			src->ep->tr->conn_close(src->conn);
		pthread_mutex_lock(&srv->lock);
		if (src->conn == NULL)
			src->ep->src = NULL;
		if (src->handles != 0) {
			src->reaped = 1;
			idl__list_push_front(&srv->zombies, &src->link);
			continue;
		}
		pthread_mutex_unlock(&srv->lock);
		idl__srv_src_destroy(src);
		pthread_mutex_lock(&srv->lock);
	}
}

void
idl__srv_refuse(struct idl_server *srv, struct srv_src *src, enum idl_goodbye_reason why,
		const char *limit, uint64_t value)
{
	char who[IDL_CRED_ADDR_MAX + 32], text[IDL_GOODBYE_TEXT_MAX];
	struct srv_goodbye g;
	struct idl_xmsg x;
	size_t n;

	idl__srv_who(src, NULL, who, sizeof who);
	idl__srv_log(srv, "%s: %s: connection refused (%s %llu)", src->ep->head.address, who, limit,
		     (unsigned long long)value);
	atomic_fetch_add(&srv->st_refused[why], 1);
	n = (size_t)snprintf(text, sizeof text,
			     "connection refused by the server's %s limit (%s %llu)",
			     why == IDL_GOODBYE_PER_ADDRESS ? "per-address" : "connection", limit,
			     (unsigned long long)value);
	if (n >= sizeof text)
		n = sizeof text - 1;
	x = idl__srv_goodbye_make(&g, why, text, n);
	/* Without blocking: a refused client that does not read loses its goodbye. */
	if (IDL__TR_OP(src->ep->tr, conn_sendv_nb) != NULL)
		(void)IDL__TR_OP(src->ep->tr, conn_sendv_nb)(src->conn, &x, 1);
	else
		(void)src->ep->tr->conn_send(src->conn, &x, &(struct idl_deadline){ 0, 0 });
	src->ep->tr->conn_close(src->conn);
	src->ep->tr->conn_fini(src->conn);
	free(src->conn);
	src->conn = NULL;
	idl__srv_src_free(src);
}

/* What the transport knows of the peer, asked once at accept. */
static void
srv_src_cred(struct srv_src *src)
{
	int (*cred)(void *, struct idl_cred *) = IDL__TR_OP(src->ep->tr, conn_cred);

	src->cred_err = cred != NULL ? cred(src->conn, &src->cred) : IDL_ENOTSUP;
	if (src->cred_err != 0)
		memset(&src->cred, 0, sizeof src->cred);
	if (src->cred_err == 0 && !src->cred.valid && src->cred.addr[0] == '\0')
		src->cred_err = IDL_ENOTSUP;
}

/* Accepts one connection on ep and serves it: 0, 1 when none was pending, 2 when
 * accepting must pause (out of descriptors or memory). */
static int
srv_accept_one(struct idl_server *srv, struct srv_ep *ep)
{
	struct srv_src *src = calloc(1, sizeof *src);
	int pooled = idl__srv_ev_poolable(ep) && srv->slots != NULL, err;
	unsigned n;

	if (src == NULL || (src->conn = idl__zalloc(ep->tr->conn_size)) == NULL) {
		free(src);
		return 2;
	}
	src->ep = ep;
	src->srv = srv;
	src->pooled = pooled;
	err = IDL__TR_OP(ep->tr, ep_accept)(ep->state, src->conn);
	if ((err == IDL_ESYSERR(EMFILE) || err == IDL_ESYSERR(ENFILE)) && srv->reserve_fd >= 0) {
		/* The descriptor kept in reserve makes room to tell this client why. */
		ep->tr->conn_fini(src->conn);
		memset(src->conn, 0, ep->tr->conn_size);
		close(srv->reserve_fd);
		srv->reserve_fd = -1;
		if (IDL__TR_OP(ep->tr, ep_accept)(ep->state, src->conn) == 0 &&
		    idl__srv_src_alloc(srv, src) == 0) {
			srv_src_cred(src);
			idl__srv_refuse(srv, src, IDL_GOODBYE_CONNECTIONS, "descriptors",
					(unsigned long long)srv->nslots);
			src = NULL;
		}
		srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (src == NULL)
			return 2;
	}
	if (err == 0 && idl__srv_src_alloc(srv, src) != 0)
		err = IDL_ENOMEM;
	if (err != 0) {
		ep->tr->conn_close(src->conn);
		ep->tr->conn_fini(src->conn);
		free(src->conn);
		src->conn = NULL;
		idl__srv_src_free(src);
		if (err == IDL_ESYSERR(EAGAIN) || err == IDL_ESYSERR(EWOULDBLOCK))
			return 1;
		if (err != IDL_ENOMEM && err != IDL_ESYSERR(EMFILE) && err != IDL_ESYSERR(ENFILE) &&
		    err != IDL_ESYSERR(ENOBUFS) && err != IDL_ESYSERR(ENOMEM))
			return 0;
		idl__srv_log(srv, "%s: accept: %s: accepting paused 100 ms", ep->head.address,
			     idl_strerror(err));
		return 2;
	}
	srv_src_cred(src);
	pthread_mutex_lock(&srv->lock);
	n = srv->nconns;
	pthread_mutex_unlock(&srv->lock);
	if (n >= srv->nslots && !idl__srv_ev_evict(srv)) {
		idl__srv_refuse(srv, src, IDL_GOODBYE_CONNECTIONS, "connections", srv->nslots);
		return 0;
	}
	pthread_mutex_lock(&srv->lock);
	srv->nconns++;
	pthread_mutex_unlock(&srv->lock);
	if (pooled) {
		err = idl__srv_ev_adopt(srv, src);
	} else {
		pthread_mutex_lock(&srv->lock);
		err = srv_src_start(srv, src, idl__srv_conn_main);
		pthread_mutex_unlock(&srv->lock);
	}
	if (err == 0) {
		atomic_fetch_add(&srv->st_accepted, 1);
		return 0;
	}
	pthread_mutex_lock(&srv->lock);
	srv->nconns--;
	pthread_mutex_unlock(&srv->lock);
	if (err == IDL_EBUSY)
		idl__srv_refuse(srv, src, IDL_GOODBYE_PER_ADDRESS, "per_address", ep->per_address);
	else
		idl__srv_refuse(srv, src, IDL_GOODBYE_CONNECTIONS, "connections", srv->nslots);
	return 0;
}

int
idl__srv_accept(struct idl_server *srv, struct srv_ep *ep)
{
	for (int i = 0; i < SRV_ACCEPT_BATCH; i++) {
		int r = srv_accept_one(srv, ep);

		if (r == 1)
			break;
		if (r == 2)
			return 1;
	}
	return 0;
}

static size_t
srv_round(size_t n)
{
	return IDL_MSG_ROUND(n < IDL_HELLO_MAX ? IDL_HELLO_MAX : n);
}

void
idl__srv_size_buffers(struct idl_server *srv)
{
	uint64_t lim = srv->limits[IDL_LIMIT_MSG_SIZE];

	srv->rcap = 0;
	srv->scap = 0;
	for (size_t i = 0; i < srv->nsubs; i++) {
		if (srv->subs[i].ss->max_request > srv->rcap)
			srv->rcap = srv->subs[i].ss->max_request;
		if (srv->subs[i].ss->max_reply > srv->scap)
			srv->scap = srv->subs[i].ss->max_reply;
	}
	srv->rcap = srv_round(srv->rcap);
	srv->scap = srv_round(srv->scap);
	/* The limit only lowers the receive buffer: a larger message is then refused by the
	 * transport's receive-size rule, from its header, before anything is allocated for
	 * it. Message sizes are multiples of 8, so the limit is rounded down to one. */
	if (lim != 0 && lim < srv->rcap)
		srv->rcap = (size_t)lim & ~(size_t)(IDL_MSG_ALIGN - 1);
}

/* Wakes every receiving thread and waits until all have ended. */
static void
srv_drain(struct idl_server *srv)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	uint64_t v;

	/* From here only the eventfd is watched: the ended threads poke it. */
	close(srv->epfd);
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd >= 0)
		epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->efd, &ev);
	pthread_mutex_lock(&srv->lock);
	for (;;) {
		for (struct srv_src *s = IDL__LIST_FIRST(&srv->live, struct srv_src, link);
		     s != NULL; s = IDL__LIST_NEXT(s, struct srv_src, link)) {
			if (s->conn != NULL) {
				s->ep->tr->conn_close(s->conn);
			} else if (!s->ep->closed) {
				s->ep->tr->ep_close(s->ep->state);
				s->ep->closed = 1;
			}
		}
		/* An embedded server's message endpoints have no thread to end them. */
		for (struct srv_src *s = IDL__LIST_FIRST(&srv->live, struct srv_src, link), *next;
		     s != NULL; s = next) {
			next = IDL__LIST_NEXT(s, struct srv_src, link);
			if (s->threadless) {
				idl__list_remove(&srv->live, &s->link);
				idl__list_push_front(&srv->ended, &s->link);
			}
		}
		idl__srv_reap(srv);
		if (idl__list_empty(&srv->live))
			break;
		pthread_mutex_unlock(&srv->lock);
		if (srv->epfd >= 0)
			epoll_wait(srv->epfd, &ev, 1, 100);
		else
			usleep(1000);
		if (read(srv->efd, &v, sizeof v) < 0)
			v = 0;
		pthread_mutex_lock(&srv->lock);
	}
	pthread_mutex_unlock(&srv->lock);
	if (srv->epfd >= 0)
		close(srv->epfd);
	srv->epfd = -1;
}

/* Starts serving: the set, the event core, the endpoints. Lock held. */
static int
srv_start(struct idl_server *srv, int embedded)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UINT64_C(0xfffffffffffffffe) };
	int err = 0;

	if (srv->running || srv->nsubs == 0 || srv->eps == NULL)
		return idl__fail(srv->running ? IDL_EBUSY : IDL_EINVAL, "idl_server_run: %s",
				 srv->running ? "already running" : "no subsystem or no endpoint");
	if (embedded) {
		for (struct srv_ep *ep = srv->eps; ep != NULL; ep = ep->next)
			if (!idl__srv_ev_embeddable(ep))
				return srv_not_embeddable(ep);
	}
	idl__srv_size_buffers(srv);
	srv->embedded = embedded;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->efd, &ev) != 0)
		err = idl__fail(IDL_ESYSERR(errno), "idl_server_run: epoll: %s", strerror(errno));
	srv->running = 1;
	if (err == 0)
		err = idl__srv_ev_start(srv);
	for (struct srv_ep *ep = srv->eps; err == 0 && ep != NULL; ep = ep->next)
		err = idl__srv_ep_start(srv, ep);
	if (err == 0)
		idl__srv_svc_start(srv);
	return err;
}

/* Ends a run once no pool thread is left: every source closed, the core freed. */
static void
srv_finish(struct idl_server *srv)
{
	idl__srv_svc_stopping(srv);
	idl__srv_ev_close_all(srv);
	srv_drain(srv);
	idl__srv_ev_stop(srv);
	idl__srv_svc_stop(srv);
	pthread_mutex_lock(&srv->lock);
	atomic_store(&srv->stop_req, 0);
	atomic_store(&srv->drain_req, 0);
	atomic_store(&srv->drain_started, 0);
	srv->running = 0;
	srv->embedded = 0;
	pthread_cond_broadcast(&srv->idle);
	pthread_mutex_unlock(&srv->lock);
}

int
idl_server_run(idl_server_t *srv)
{
	int err, self = 0;

	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	if (srv->running) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_EBUSY, "idl_server_run: already running");
	}
	err = srv_start(srv, 0);
	pthread_mutex_unlock(&srv->lock);
	if (err == 0) {
		idl__srv_svc_ready(srv);
		/* This thread is one of the pool. */
		atomic_store(&srv->nthreads, 1);
		for (unsigned i = 1; i < srv->pool_size; i++)
			idl__srv_ev_spawn(srv);
		idl__srv_ev_loop(srv, -1, &self);
		pthread_mutex_lock(&srv->lock);
		atomic_fetch_sub(&srv->nthreads, 1);
		while (atomic_load(&srv->nthreads) != 0)
			pthread_cond_wait(&srv->threads_done, &srv->lock);
		pthread_mutex_unlock(&srv->lock);
	}
	srv_finish(srv);
	return err;
}

int
idl_server_fd(idl_server_t *srv)
{
	int err;

	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	if (srv->running && srv->embedded) {
		err = srv->epfd;
	} else if ((err = srv_start(srv, 1)) == 0) {
		err = srv->epfd;
		pthread_mutex_unlock(&srv->lock);
		idl__srv_svc_ready(srv);
		return err;
	} else if (srv->running) {
		pthread_mutex_unlock(&srv->lock);
		srv_finish(srv);
		return err;
	}
	pthread_mutex_unlock(&srv->lock);
	return err;
}

int
idl_server_dispatch(idl_server_t *srv, int max)
{
	int served = 0;

	idl__clear_detail();
	if (srv == NULL || max < 0)
		return IDL_EINVAL;
	if (!srv->running || !srv->embedded)
		return idl__fail(IDL_EINVAL, "idl_server_dispatch: idl_server_fd() first");
	if (atomic_load(&srv->stop_req)) {
		srv_finish(srv);
		return IDL_ECLOSED;
	}
	idl__srv_ev_loop(srv, max, &served);
	return served;
}

void
idl_server_stop(idl_server_t *srv)
{
	uint64_t one = 1;

	/* Only async-signal-safe operations: an atomic store and a write. */
	if (srv == NULL)
		return;
	atomic_store(&srv->stop_req, 1);
	if (write(srv->efd, &one, sizeof one) < 0)
		return;
}

void
idl__srv_handle_release(struct srv_src *src)
{
	struct idl_server *srv = src->srv;
	int free_src = 0, free_srv;

	pthread_mutex_lock(&srv->lock);
	src->handles--;
	if (src->handles == 0 && src->reaped) {
		idl__list_remove(&srv->zombies, &src->link);
		free_src = 1;
	}
	pthread_mutex_unlock(&srv->lock);
	/* The source's connection is closed through its endpoint: the server (and its
	 * endpoints) stay counted by this handle until that is done, so that a destroy in
	 * another thread leaves their freeing to the last handle. */
	if (free_src)
		idl__srv_src_destroy(src);
	pthread_mutex_lock(&srv->lock);
	srv->handles--;
	free_srv = srv->destroyed && srv->handles == 0;
	pthread_mutex_unlock(&srv->lock);
	if (free_srv)
		idl__srv_free(srv);
}

int
idl__srv_hello_alloc(const struct idl_server *srv, struct srv_hello *h)
{
	h->said = calloc(srv->nsubs, 1);
	h->verdicts = calloc(srv->nverdicts + 1u, 1);
	return h->said != NULL && h->verdicts != NULL ? 0 : IDL_ENOMEM;
}

int
idl__srv_src_alloc(struct idl_server *srv, struct srv_src *src)
{
	src->srv = srv;
	if (pthread_mutex_init(&src->send_lock, NULL) != 0)
		return IDL_ENOMEM;
	src->send_lock_ok = 1;
	/* A pooled connection receives into its serving thread's buffers. */
	if (src->pooled)
		return idl__srv_hello_alloc(srv, &src->hello);
	src->rbuf = idl__zalloc(srv->rcap);
	src->sbuf = idl__zalloc(srv->scap);
	if (src->rbuf == NULL || src->sbuf == NULL)
		return IDL_ENOMEM;
	if (src->conn != NULL)
		return idl__srv_hello_alloc(srv, &src->hello);
	/* A message endpoint's peers get their hello state when they first appear. */
	src->peers = calloc(1, sizeof *src->peers);
	return src->peers != NULL ? 0 : IDL_ENOMEM;
}

void
idl__srv_src_free(struct srv_src *src)
{
	free(src->rbuf);
	free(src->sbuf);
	free(src->hello.said);
	free(src->hello.verdicts);
	idl__srv_peers_free(src->peers);
	if (src->send_lock_ok)
		pthread_mutex_destroy(&src->send_lock);
	free(src);
}

/* An event on a listener or on a message endpoint served from the set (an embedded
 * server's, a passed socket's), for server_event.c's loop: d is the event's word. */
void
idl__srv_ep_event(struct idl_server *srv, struct srv_ep *ep, uint64_t d)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = d };

	if (IDL__TR_OP(ep->tr, ep_accept) == NULL) {
		/* A message endpoint served from the set (an embedded server's, a
		 * passed socket's): its messages, then it waits again, unless it is
		 * closed or broken (the stop then frees it). One thread at a time
		 * (EPOLLONESHOT); the count orders one pool thread's turn before the
		 * next's, as a pooled connection's slot word does. */
		atomic_load_explicit(&ep->src->ep_turns, memory_order_acquire);
		if (idl__srv_ep_ready(ep->src, SRV_BATCH) == 0) {
			atomic_fetch_add_explicit(&ep->src->ep_turns, 1, memory_order_release);
			epoll_ctl(srv->epfd, EPOLL_CTL_MOD, IDL__TR_OP(ep->tr, ep_fd)(ep->state),
				  &ev);
		}
		return;
	}
	if (idl__srv_accept(srv, ep)) {
		pthread_mutex_lock(&srv->conn_lock);
		srv->accept_resume = idl_now_ns() + 100 * 1000000ll;
		idl__srv_timer_lower(srv, srv->accept_resume);
		pthread_mutex_unlock(&srv->conn_lock);
		return;
	}
	pthread_mutex_lock(&srv->conn_lock);
	if (srv->accept_resume == 0)
		epoll_ctl(srv->epfd, EPOLL_CTL_MOD, IDL__TR_OP(ep->tr, ep_fd)(ep->state), &ev);
	pthread_mutex_unlock(&srv->conn_lock);
}

static void *
srv_pool_main(void *arg)
{
	struct idl_server *srv = arg;

	idl__srv_ev_loop(srv, -1, NULL);
	idl__srv_bufs_free();
	pthread_mutex_lock(&srv->lock);
	if (atomic_fetch_sub(&srv->nthreads, 1) == 1)
		pthread_cond_broadcast(&srv->threads_done);
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

void
idl__srv_ev_spawn(struct idl_server *srv)
{
	pthread_attr_t attr;
	pthread_t t;

	atomic_fetch_add(&srv->nthreads, 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	(void)pthread_attr_setstacksize(&attr, 256u << 10);
	if (pthread_create(&t, &attr, srv_pool_main, srv) != 0) {
		pthread_mutex_lock(&srv->lock);
		if (atomic_fetch_sub(&srv->nthreads, 1) == 1)
			pthread_cond_broadcast(&srv->threads_done);
		pthread_mutex_unlock(&srv->lock);
	}
	pthread_attr_destroy(&attr);
}
