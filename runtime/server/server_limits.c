/*
 * server_limits.c - the limits of the server's event core (docs/runtime.md, "Limits"): the
 * connection limit and its default from the descriptor limit, eviction of the oldest idle
 * connection, the per-address limit on network transports, handshake and idle timeouts
 * swept by one timer, and the start and end of a run's event core.
 *
 * Every connection closed on purpose is first told why with a goodbye (idl_msg.h), sent
 * here.
 *
 * The server room: it knows core and ool, and never the client; a transport only through
 * its ops.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "server/server.h"

/* Sets the timer to `due` when that is earlier than what it is set to. conn_lock held. */
void
idl__srv_timer_lower(struct idl_server *srv, int64_t due)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (due >= srv->next_due || srv->tfd < 0)
		return;
	srv->next_due = due;
	if (due <= 0)
		due = 1;
	its.it_value.tv_sec = due / 1000000000;
	its.it_value.tv_nsec = due % 1000000000;
	timerfd_settime(srv->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Takes src off its deadline list. conn_lock held. */
void
idl__srv_tlist_remove(struct idl_server *srv, struct srv_src *src)
{
	if (src->tlist == 1)
		idl__list_remove(&src->ep->hs_list, &src->tlink);
	else if (src->tlist == 2)
		idl__list_remove(&src->ep->idle_list, &src->tlink);
	src->tlist = 0;
}

struct idl_xmsg
idl__srv_goodbye_make(struct srv_goodbye *g, enum idl_goodbye_reason why, const char *text,
		      size_t n)
{
	struct idl_xmsg x;

	if (n > IDL_GOODBYE_TEXT_MAX)
		n = IDL_GOODBYE_TEXT_MAX;
	memset(g, 0, sizeof *g);
	g->h.magic = IDL_MSG_MAGIC;
	g->h.order = IDL_ORDER_NATIVE;
	g->h.kind = IDL_KIND_GOODBYE;
	g->h.retcode = IDL_ELIMIT;
	g->h.id = (int32_t)why;
	g->reason = (uint32_t)why;
	g->len = (uint32_t)n;
	memcpy(g->text, text, n);
	g->h.size = (uint32_t)IDL_MSG_ROUND(sizeof g->h + 8 + n);
	memset(&x, 0, sizeof x);
	x.data = g;
	x.len = g->h.size;
	return x;
}

/* Sends a goodbye on a source that is about to end: best effort, never blocking. */
void
idl__srv_goodbye(struct srv_src *src, enum idl_goodbye_reason why, const char *text)
{
	struct srv_goodbye g;
	struct idl_xmsg x = idl__srv_goodbye_make(&g, why, text, strlen(text));

	pthread_mutex_lock(&src->send_lock);
	if (src->outq == NULL) {
		if (src->pooled)
			(void)IDL__TR_OP(src->ep->tr, conn_sendv_nb)(src->conn, &x, 1);
		else
			(void)src->ep->tr->conn_send(src->conn, &x, &(struct idl_deadline){ 0, 0 });
	}
	pthread_mutex_unlock(&src->send_lock);
}

/* What a connection closed at its handshake or idle timeout is told, by the event core and
 * by a connection's own thread alike. */
static const char srv_hs_text[] = "no hello in time (handshake_ms)";

/* The text of an idle close's goodbye: it names the limit that applied (idle_ms, or
 * net_idle_ms on tcp:) and its value, as the log line does. */
static void
srv_idle_text(const struct srv_ep *ep, char *text, size_t size)
{
	snprintf(text, size, "idle: closed by the server's idle timeout (%s %lld)",
		 idl_limit_name(ep->idle_limit), (long long)(ep->idle_ns / 1000000));
}

void
idl__srv_timeout_goodbye(struct srv_src *src)
{
	/* A deferred reply not yet sent is a request read and unanswered: the goodbye would
	 * promise otherwise, so the connection just ends. */
	if (atomic_load(&src->pending) != 0 || atomic_load(&src->deferred) != 0)
		return;
	if (src->greeted) {
		char text[IDL_GOODBYE_TEXT_MAX + 1];

		atomic_fetch_add(&src->srv->st_refused[IDL_GOODBYE_IDLE], 1);
		srv_idle_text(src->ep, text, sizeof text);
		idl__srv_goodbye(src, IDL_GOODBYE_IDLE, text);
	} else {
		idl__srv_goodbye(src, IDL_GOODBYE_IDLE, srv_hs_text);
	}
}

/* Whether an ARMED source may be closed as idle: no request of its client read and left
 * unanswered (a deferred reply, a reply still queued), so that its client may send again
 * what it sent meanwhile. */
int
idl__srv_quiet(struct srv_src *src)
{
	unsigned ev = 0;

	IDL__TR_OP(src->ep->tr, conn_fd)(src->conn, &ev);
	return atomic_load(&src->pending) == 0 && atomic_load(&src->deferred) == 0 &&
	       src->outq == NULL && !(ev & IDL_TR_EV_OUT);
}

/* The first quiet ARMED source of a list whose deadline (since + timeout) is before
 * `before`, taken for the caller; or NULL. *next gets the deadline of the first one not
 * due. conn_lock held. */
static struct srv_src *
srv_take_due(struct idl_server *srv, struct idl__list *l, int64_t timeout, int64_t before,
	     int64_t *next)
{
	for (struct srv_src *s = IDL__LIST_FIRST(l, struct srv_src, tlink); s != NULL;
	     s = IDL__LIST_NEXT(s, struct srv_src, tlink)) {
		if (s->since + timeout > before) {
			if (next != NULL && s->since + timeout < *next)
				*next = s->since + timeout;
			return NULL;
		}
		if (idl__srv_quiet(s) && idl__srv_claim(srv, s)) {
			idl__srv_tlist_remove(srv, s);
			return s;
		}
	}
	return NULL;
}

/* Closes the connections whose handshake or idle time is up, each with a goodbye, and sets
 * the timer to the next deadline. */
void
idl__srv_sweep(struct idl_server *srv)
{
	for (;;) {
		int64_t now = idl_now_ns(), next = IDL_DEADLINE_NONE;
		struct srv_src *due = NULL;
		int idle = 0;

		pthread_mutex_lock(&srv->conn_lock);
		srv->next_due = IDL_DEADLINE_NONE;
		for (struct srv_ep *ep = srv->eps; ep != NULL && due == NULL; ep = ep->next) {
			if (ep->hs_ns != 0)
				due = srv_take_due(srv, &ep->hs_list, ep->hs_ns, now, &next);
			if (due == NULL && ep->idle_ns != 0) {
				due = srv_take_due(srv, &ep->idle_list, ep->idle_ns, now, &next);
				idle = due != NULL;
			}
		}
		if (srv->accept_resume != 0 && srv->accept_resume <= now) {
			srv->accept_resume = 0;
			for (struct srv_ep *ep = srv->eps; ep != NULL; ep = ep->next) {
				struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
							  .data.u64 = SRV_EV_EP | (uintptr_t)ep };

				if (IDL__TR_OP(ep->tr, ep_accept) != NULL && !ep->closed)
					epoll_ctl(srv->epfd, EPOLL_CTL_MOD,
						  IDL__TR_OP(ep->tr, ep_fd)(ep->state), &ev);
			}
		} else if (srv->accept_resume != 0 && srv->accept_resume < next) {
			next = srv->accept_resume;
		}
		idl__srv_timer_lower(srv, due != NULL ? now : next);
		pthread_mutex_unlock(&srv->conn_lock);
		if (due == NULL)
			return;
		/* Logged as the threaded server logs it (handshake or idle), then told; an idle
		 * close names the limit that applied (idle_ms, or net_idle_ms on tcp:). */
		if (idle) {
			char who[IDL_CRED_ADDR_MAX + 32], text[IDL_GOODBYE_TEXT_MAX + 1];
			const char *limit = idl_limit_name(due->ep->idle_limit);
			long long ms = (long long)(due->ep->idle_ns / 1000000);

			idl__srv_who(due, NULL, who, sizeof who);
			idl__srv_log(srv, "%s: %s: idle, connection closed (%s %lld)",
				     due->ep->head.address, who, limit, ms);
			atomic_fetch_add(&srv->st_refused[IDL_GOODBYE_IDLE], 1);
			srv_idle_text(due->ep, text, sizeof text);
			idl__srv_goodbye(due, IDL_GOODBYE_IDLE, text);
		} else {
			idl__srv_conn_log(due, IDL_ETIMEDOUT, 0, 1);
			idl__srv_goodbye(due, IDL_GOODBYE_IDLE, srv_hs_text);
		}
		idl__srv_end(srv, due);
	}
}

/* The oldest quiet ARMED pooled source, taken for the caller; or NULL. */
static struct srv_src *
srv_victim(struct idl_server *srv)
{
	struct srv_src *victim = NULL, *cand;
	int64_t oldest = IDL_DEADLINE_NONE;

	pthread_mutex_lock(&srv->conn_lock);
	/* The oldest idle across the endpoints: each list's first quiet one. */
	for (struct srv_ep *ep = srv->eps; ep != NULL; ep = ep->next) {
		struct idl__list *ls[2] = { &ep->idle_list, &ep->hs_list };

		for (int i = 0; i < 2; i++) {
			for (cand = IDL__LIST_FIRST(ls[i], struct srv_src, tlink); cand != NULL;
			     cand = IDL__LIST_NEXT(cand, struct srv_src, tlink)) {
				if (atomic_load(&srv->slots[cand->slot].word) ==
					    idl__slot_word(cand->gen, SRV_SLOT_ARMED) &&
				    idl__srv_quiet(cand))
					break;
			}
			if (cand != NULL && cand->since < oldest) {
				oldest = cand->since;
				victim = cand;
			}
		}
	}
	if (victim != NULL && idl__srv_claim(srv, victim))
		idl__srv_tlist_remove(srv, victim);
	else
		victim = NULL;
	pthread_mutex_unlock(&srv->conn_lock);
	return victim;
}

int
idl__srv_ev_evict(struct idl_server *srv)
{
	struct srv_src *victim = srv_victim(srv);
	char who[IDL_CRED_ADDR_MAX + 32];

	/* A source that keeps a thread is busy until it has been quiet for the linger time:
	 * wait that long for one to come back to the set before refusing. */
	for (int i = 0; victim == NULL && i < 2 * srv->linger_ms && atomic_load(&srv->ndedicated);
	     i++) {
		usleep(1000);
		victim = srv_victim(srv);
	}
	if (victim == NULL)
		return 0;
	idl__srv_who(victim, NULL, who, sizeof who);
	idl__srv_log(srv,
		     "%s: %s: the oldest idle connection, closed to make room (connections %u)",
		     victim->ep->head.address, who, srv->nslots);
	atomic_fetch_add(&srv->st_refused[IDL_GOODBYE_EVICTED], 1);
	idl__srv_goodbye(victim, IDL_GOODBYE_EVICTED,
			 "evicted: the oldest idle connection made room at the connection limit");
	idl__srv_end(srv, victim);
	return 1;
}

/* Connections per peer address (tcp:): a small hash table of counts. */
#define SRV_ADDR_BUCKETS 1024u
struct srv_addr {
	struct srv_addr *next;
	uint64_t key;
	uint64_t n;
};
struct srv_addrs {
	struct srv_addr *b[SRV_ADDR_BUCKETS];
};

/* The key of a connection's peer address on its endpoint ("tcp:HOST:PORT": HOST, hashed
 * with the endpoint, whose limit it counts against); 0 for none. */
static uint64_t
srv_addr_key(const struct srv_src *src)
{
	const char *end = strrchr(src->cred.addr, ':');
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)src->ep;

	if (src->cred.addr[0] == '\0' || end == NULL)
		return 0;
	for (const char *p = src->cred.addr; p < end; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return h != 0 ? h : 1;
}

void
idl__srv_addr_drop(struct idl_server *srv, struct srv_src *src)
{
	struct srv_addr **pp;

	if (src->addr_key == 0 || srv->addrs == NULL)
		return;
	for (pp = &srv->addrs->b[src->addr_key % SRV_ADDR_BUCKETS]; *pp != NULL;
	     pp = &(*pp)->next) {
		if ((*pp)->key == src->addr_key) {
			if (--(*pp)->n == 0) {
				struct srv_addr *a = *pp;

				*pp = a->next;
				free(a);
			}
			break;
		}
	}
	src->addr_key = 0;
}

/* Counts src against its address's limit: 0, or IDL_ELIMIT. conn_lock held. */
static int
srv_addr_take(struct idl_server *srv, struct srv_src *src, uint64_t key)
{
	struct srv_addr *a;

	if (key == 0 || src->ep->per_address == 0)
		return 0;
	if (srv->addrs == NULL && (srv->addrs = calloc(1, sizeof *srv->addrs)) == NULL)
		return IDL_ENOMEM;
	for (a = srv->addrs->b[key % SRV_ADDR_BUCKETS]; a != NULL; a = a->next)
		if (a->key == key)
			break;
	if (a != NULL && a->n >= src->ep->per_address)
		return IDL_ELIMIT;
	if (a == NULL) {
		if ((a = calloc(1, sizeof *a)) == NULL)
			return IDL_ENOMEM;
		a->key = key;
		a->next = srv->addrs->b[key % SRV_ADDR_BUCKETS];
		srv->addrs->b[key % SRV_ADDR_BUCKETS] = a;
	}
	a->n++;
	src->addr_key = key;
	return 0;
}

int
idl__srv_ev_adopt(struct idl_server *srv, struct srv_src *src)
{
	struct epoll_event ev;
	int64_t now = idl_now_ns();
	int fd, err;

	pthread_mutex_lock(&srv->conn_lock);
	if (srv->nfree == 0) {
		pthread_mutex_unlock(&srv->conn_lock);
		return IDL_ELIMIT;
	}
	if ((err = srv_addr_take(srv, src, srv_addr_key(src))) != 0) {
		pthread_mutex_unlock(&srv->conn_lock);
		return err == IDL_ELIMIT ? IDL_EBUSY : err;
	}
	src->pooled = 1;
	src->slot = srv->free_slots[--srv->nfree];
	src->gen = (uint32_t)(atomic_load(&srv->slots[src->slot].word) >> 8);
	srv->slots[src->slot].src = src;
	src->since = src->armed_at = now;
	idl__list_push_back(&src->ep->hs_list, &src->tlink);
	src->tlist = 1;
	if (src->ep->hs_ns != 0)
		idl__srv_timer_lower(srv, now + src->ep->hs_ns);
	ev.data.u64 = (uint64_t)src->gen << 32 | src->slot;
	ev.events = idl__srv_events(src, &fd);
	atomic_store(&srv->slots[src->slot].word, idl__slot_word(src->gen, SRV_SLOT_ARMED));
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		err = idl__fail(IDL_ESYSERR(errno), "epoll_ctl: %s", strerror(errno));
		idl__srv_tlist_remove(srv, src);
		idl__srv_addr_drop(srv, src);
		atomic_store(&srv->slots[src->slot].word,
			     idl__slot_word(src->gen + 1, SRV_SLOT_FREE));
		srv->slots[src->slot].src = NULL;
		srv->free_slots[srv->nfree++] = src->slot;
		src->pooled = 0;
		pthread_mutex_unlock(&srv->conn_lock);
		return err;
	}
	pthread_mutex_unlock(&srv->conn_lock);
	return 0;
}

/* The connection limit of a run: the one set, or the default from the descriptor limit,
 * whose soft value is raised to the hard one first. */
static uint32_t
srv_conn_limit(struct idl_server *srv)
{
	uint64_t v = srv->limits[IDL_LIMIT_CONNECTIONS];
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = { rl.rlim_max, rl.rlim_max };

		if (up.rlim_cur > SRV_NOFILE_MAX)
			up.rlim_cur = up.rlim_max > SRV_NOFILE_MAX ? SRV_NOFILE_MAX : up.rlim_max;
		if (up.rlim_cur > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	if (v == 0 || v == IDL__LIMIT_CONN_DEFAULT)
		v = idl__srv_conn_default();
	return v > SRV_NOFILE_MAX ? SRV_NOFILE_MAX : (uint32_t)v;
}

int
idl__srv_ev_start(struct idl_server *srv)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = SRV_EV_TIMER };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t idle = srv->limits[IDL_LIMIT_IDLE_MS];

	srv->nslots = srv_conn_limit(srv);
	srv->slots = calloc(srv->nslots, sizeof *srv->slots);
	srv->free_slots = malloc(srv->nslots * sizeof *srv->free_slots);
	if (srv->slots == NULL || srv->free_slots == NULL)
		return idl__fail(IDL_ENOMEM, "idl_server_run: out of memory for %u connections",
				 srv->nslots);
	for (uint32_t i = 0; i < srv->nslots; i++)
		srv->free_slots[i] = srv->nslots - 1 - i;
	srv->nfree = srv->nslots;
	srv->next_due = IDL_DEADLINE_NONE;
	srv->accept_resume = 0;
	srv->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (srv->tfd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->tfd, &ev) != 0)
		return idl__fail(IDL_ESYSERR(errno), "idl_server_run: timerfd: %s",
				 strerror(errno));
	srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ncpu < 1)
		ncpu = 1;
	srv->pool_size = ncpu * SRV_POOL_PER_CPU < SRV_POOL_MIN ? SRV_POOL_MIN
			 : ncpu * SRV_POOL_PER_CPU > SRV_POOL_MAX
				 ? SRV_POOL_MAX
				 : (unsigned)ncpu * SRV_POOL_PER_CPU;
	srv->dedicated_max = SRV_DEDICATED_MAX;
	atomic_store(&srv->ndedicated, 0);
	for (struct srv_ep *ep = srv->eps; ep != NULL; ep = ep->next) {
		int net = strcmp(ep->tr->scheme, "tcp") == 0;

		memset(&ep->hs_list, 0, sizeof ep->hs_list);
		memset(&ep->idle_list, 0, sizeof ep->idle_list);
		ep->hs_ns = (int64_t)srv->limits[IDL_LIMIT_HANDSHAKE_MS] * 1000000;
		ep->idle_limit = idle != 0 || !net ? IDL_LIMIT_IDLE_MS : IDL_LIMIT_NET_IDLE_MS;
		ep->idle_ns = (int64_t)srv->limits[ep->idle_limit] * 1000000;
		ep->per_address = net ? srv->limits[IDL_LIMIT_PER_ADDRESS] : 0;
	}
	return 0;
}

void
idl__srv_ev_close_all(struct idl_server *srv)
{
	for (uint32_t i = 0; i < srv->nslots; i++) {
		struct srv_src *src;
		int mine;

		pthread_mutex_lock(&srv->conn_lock);
		src = srv->slots[i].src;
		mine = src != NULL && idl__srv_claim(srv, src);
		pthread_mutex_unlock(&srv->conn_lock);
		if (!mine)
			continue;
		idl__srv_goodbye(src, IDL_GOODBYE_STOPPING, "the server stops");
		idl__srv_end(srv, src);
	}
}

void
idl__srv_ev_stop(struct idl_server *srv)
{
	free(srv->slots);
	free(srv->free_slots);
	srv->slots = NULL;
	srv->free_slots = NULL;
	srv->nslots = srv->nfree = 0;
	if (srv->addrs != NULL) {
		for (unsigned i = 0; i < SRV_ADDR_BUCKETS; i++) {
			while (srv->addrs->b[i] != NULL) {
				struct srv_addr *a = srv->addrs->b[i];

				srv->addrs->b[i] = a->next;
				free(a);
			}
		}
		free(srv->addrs);
		srv->addrs = NULL;
	}
	if (srv->tfd >= 0)
		close(srv->tfd);
	srv->tfd = -1;
	if (srv->reserve_fd >= 0)
		close(srv->reserve_fd);
	srv->reserve_fd = -1;
	idl__srv_bufs_free();
}
