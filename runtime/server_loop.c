/*
 * server_loop.c - a running server: idl_server_run()'s accept loop, the receiving threads
 * it starts, and their end.
 *
 * idl_server_run()'s thread blocks in epoll_wait on the listening endpoints and an eventfd.
 * It accepts connections and gives each its own receiving thread (server_request.c);
 * message endpoints get theirs when the server starts. Threads that end put themselves on a
 * list and poke the eventfd; this loop joins and frees them, so every free happens here.
 * idl_server_stop() sets a flag and writes the eventfd, which is async-signal-safe.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "server.h"

/* After accept fails for lack of descriptors or memory, stop accepting this long rather
 * than spin on a listening socket that stays readable (libtirpc CVE-2021-46828). */
#define SRV_ACCEPT_PAUSE_MS 100
#define SRV_EVENTS 16
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

int
idl__srv_ep_start(struct idl_server *srv, struct srv_ep *ep)
{
	if (IDL__TR_OP(ep->tr, ep_accept) != NULL) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ep };

		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, IDL__TR_OP(ep->tr, ep_fd)(ep->state),
			      &ev) != 0)
			return idl__fail(IDL_ESYSERR(errno), "%s: epoll_ctl: %s", ep->head.address,
					 strerror(errno));
		return 0;
	}
	if (ep->src != NULL)
		return 0;
	if ((ep->src = calloc(1, sizeof *ep->src)) == NULL)
		return IDL_ENOMEM;
	ep->src->ep = ep;
	if (idl__srv_src_alloc(srv, ep->src) != 0 ||
	    srv_src_start(srv, ep->src, idl__srv_ep_main) != 0) {
		idl__srv_src_free(ep->src);
		ep->src = NULL;
		return idl__fail(IDL_ENOMEM, "%s: cannot start its thread", ep->head.address);
	}
	return 0;
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
	pthread_mutex_unlock(&srv->lock);
	/* Cannot fail but for a counter at its maximum, which a poke need not raise. */
	if (write(srv->efd, &one, sizeof one) < 0)
		return;
}

/* Frees a joined source: its connection (message endpoints keep theirs), its buffers. */
static void
srv_src_destroy(struct srv_src *src)
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
static void
srv_reap(struct idl_server *srv)
{
	struct idl__link *l;

	while ((l = idl__list_pop_front(&srv->ended)) != NULL) {
		struct srv_src *src = IDL__LIST_ENTRY(l, struct srv_src, link);

		pthread_mutex_unlock(&srv->lock);
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
		srv_src_destroy(src);
		pthread_mutex_lock(&srv->lock);
	}
}

static void
srv_pause_accepts(struct idl_server *srv, uint32_t events)
{
	for (struct srv_ep *ep = srv->eps; ep != NULL; ep = ep->next) {
		struct epoll_event ev = { .events = events, .data.ptr = ep };

		if (IDL__TR_OP(ep->tr, ep_accept) != NULL)
			epoll_ctl(srv->epfd, EPOLL_CTL_MOD, IDL__TR_OP(ep->tr, ep_fd)(ep->state),
				  &ev);
	}
}

/* Accepts one connection on ep and starts its thread. Returns nonzero when accepting must
 * pause: the process is out of descriptors or memory. */
static int
srv_accept(struct idl_server *srv, struct srv_ep *ep)
{
	struct srv_src *src = calloc(1, sizeof *src);
	uint64_t max = srv->limits[IDL_LIMIT_CONNECTIONS];
	unsigned n;
	int err;

	if (src == NULL || (src->conn = idl__zalloc(ep->tr->conn_size)) == NULL) {
		free(src);
		return 1;
	}
	src->ep = ep;
	err = IDL__TR_OP(ep->tr, ep_accept)(ep->state, src->conn);
	pthread_mutex_lock(&srv->lock);
	n = srv->nconns;
	pthread_mutex_unlock(&srv->lock);
	if (err == 0 && max != 0 && n >= max) {
		/* Over the limit: accepted and closed at once, so that the backlog does not
		 * hold it and its client learns now (its call sees MIG_SERVER_DIED). */
		idl__srv_log(srv, "%s: connection refused (connections %llu)", ep->head.address,
			     (unsigned long long)max);
		err = IDL_ELIMIT;
	} else if (err == 0 && idl__srv_src_alloc(srv, src) == 0) {
		pthread_mutex_lock(&srv->lock);
		err = srv_src_start(srv, src, idl__srv_conn_main);
		if (err == 0)
			srv->nconns++;
		pthread_mutex_unlock(&srv->lock);
		if (err == 0)
			return 0;
	} else if (err == 0) {
		err = IDL_ENOMEM;
	}
	ep->tr->conn_close(src->conn);
	ep->tr->conn_fini(src->conn);
	free(src->conn);
	src->conn = NULL;
	idl__srv_src_free(src);
	if (err != IDL_ENOMEM && err != IDL_ESYSERR(EMFILE) && err != IDL_ESYSERR(ENFILE) &&
	    err != IDL_ESYSERR(ENOBUFS) && err != IDL_ESYSERR(ENOMEM))
		return 0;
	idl__srv_log(srv, "%s: accept: %s: accepting paused %d ms", ep->head.address,
		     idl_strerror(err), SRV_ACCEPT_PAUSE_MS);
	return 1;
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

/* Serving: wait for connections, stop requests and ended threads. */
static void
srv_loop(struct idl_server *srv)
{
	int64_t paused_until = 0;
	uint64_t v;

	while (!atomic_load(&srv->stop_req)) {
		struct epoll_event evs[SRV_EVENTS];
		int timeout = -1, n;

		if (paused_until != 0) {
			int64_t left = paused_until - idl_now_ns();

			if (left <= 0) {
				srv_pause_accepts(srv, EPOLLIN);
				paused_until = 0;
			} else {
				timeout = (int)(left / 1000000) + 1;
			}
		}
		n = epoll_wait(srv->epfd, evs, SRV_EVENTS, timeout);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL) {
				if (read(srv->efd, &v, sizeof v) < 0)
					continue; /* EAGAIN: another poke drained it */
			} else if (paused_until == 0 && srv_accept(srv, evs[i].data.ptr)) {
				srv_pause_accepts(srv, 0);
				paused_until = idl_now_ns() + SRV_ACCEPT_PAUSE_MS * 1000000ll;
			}
		}
		pthread_mutex_lock(&srv->lock);
		srv_reap(srv);
		pthread_mutex_unlock(&srv->lock);
	}
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
		srv_reap(srv);
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

int
idl_server_run(idl_server_t *srv)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int err = 0;

	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	if (srv->running || srv->nsubs == 0 || srv->eps == NULL) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(srv->running ? IDL_EBUSY : IDL_EINVAL, "idl_server_run: %s",
				 srv->running ? "already running" : "no subsystem or no endpoint");
	}
	idl__srv_size_buffers(srv);
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->efd, &ev) != 0)
		err = idl__fail(IDL_ESYSERR(errno), "idl_server_run: epoll: %s", strerror(errno));
	srv->running = 1;
	for (struct srv_ep *ep = srv->eps; err == 0 && ep != NULL; ep = ep->next)
		err = idl__srv_ep_start(srv, ep);
	pthread_mutex_unlock(&srv->lock);

	if (err == 0)
		srv_loop(srv);
	srv_drain(srv);

	pthread_mutex_lock(&srv->lock);
	atomic_store(&srv->stop_req, 0);
	srv->running = 0;
	pthread_cond_broadcast(&srv->idle);
	pthread_mutex_unlock(&srv->lock);
	return err;
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
	srv->handles--;
	if (src->handles == 0 && src->reaped) {
		idl__list_remove(&srv->zombies, &src->link);
		free_src = 1;
	}
	free_srv = srv->destroyed && srv->handles == 0;
	pthread_mutex_unlock(&srv->lock);
	if (free_src)
		srv_src_destroy(src);
	if (free_srv)
		idl__srv_free(srv);
}
