/*
 * server.c - the server's API and its accept loop.
 *
 * idl_server_run()'s thread blocks in epoll_wait on the listening endpoints and an eventfd.
 * It accepts connections and gives each its own receiving thread (serve.c); message
 * endpoints get theirs when the server starts. Threads that end put themselves on a list
 * and poke the eventfd; this loop joins and frees them, so every free happens here.
 * idl_server_stop() sets a flag and writes the eventfd, which is async-signal-safe.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "trace.h"

/* After accept fails for lack of descriptors or memory, stop accepting this long rather
 * than spin on a listening socket that stays readable (libtirpc CVE-2021-46828). */
#define SRV_ACCEPT_PAUSE_MS 100
#define SRV_EVENTS 16
/* The stack of each receiving thread. A server has one thread per connection and per
 * message endpoint, so a set of a thousand endpoints must not reserve a thousand default
 * (8 MiB) stacks; the runtime's own frames are small, and this leaves server routines
 * room for ordinary work. */
#define SRV_THREAD_STACK (256u << 10)
/* Log lines per second before the rest of that second's are counted instead. */
#define SRV_LOG_PER_SEC 20u

/* Defaults of the limits (docs/security.md); msg_size 0 stands for "the subsystems'". */
static const uint64_t srv_limit_default[IDL_LIMIT_COUNT] = {
	[IDL_LIMIT_MSG_SIZE] = 0, [IDL_LIMIT_INFLIGHT] = 64,	    [IDL_LIMIT_CONNECTIONS] = 1024,
	[IDL_LIMIT_FDS] = 16,	  [IDL_LIMIT_HANDSHAKE_MS] = 30000, [IDL_LIMIT_IDLE_MS] = 0,
};

static const char *const srv_limit_names[IDL_LIMIT_COUNT] = {
	[IDL_LIMIT_MSG_SIZE] = "msg_size",	   [IDL_LIMIT_INFLIGHT] = "inflight",
	[IDL_LIMIT_CONNECTIONS] = "connections",   [IDL_LIMIT_FDS] = "fds",
	[IDL_LIMIT_HANDSHAKE_MS] = "handshake_ms", [IDL_LIMIT_IDLE_MS] = "idle_ms",
};

static void
srv_log_stderr(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "idlkit server: %s\n", line);
}

int
idl_server_create(idl_server_t **srvp)
{
	struct idl_server *srv;

	idl__clear_detail();
	if (srvp == NULL)
		return IDL_EINVAL;
	if ((srv = calloc(1, sizeof *srv)) == NULL)
		return idl__fail(IDL_ENOMEM, "idl_server_create: out of memory");
	srv->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv->efd < 0) {
		int e = errno;

		free(srv);
		return idl__fail(IDL_ESYSERR(e), "idl_server_create: eventfd: %s", strerror(e));
	}
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->idle, NULL);
	pthread_mutex_init(&srv->dispatch_mutex, NULL);
	pthread_mutex_init(&srv->log_lock, NULL);
	srv->concurrency = 1;
	srv->epfd = -1;
	memcpy(srv->limits, srv_limit_default, sizeof srv->limits);
	srv->log = srv_log_stderr;
	*srvp = srv;
	return 0;
}

const char *
idl_limit_name(enum idl_limit which)
{
	return (unsigned)which < IDL_LIMIT_COUNT ? srv_limit_names[which] : "?";
}

int
idl_server_set_limit(idl_server_t *srv, enum idl_limit which, uint64_t value)
{
	idl__clear_detail();
	if (srv == NULL || (unsigned)which >= IDL_LIMIT_COUNT)
		return idl__fail(IDL_EINVAL, "idl_server_set_limit: bad server or limit %d",
				 (int)which);
	if ((which == IDL_LIMIT_MSG_SIZE && value < IDL_MSG_HEADER_SIZE) ||
	    (which == IDL_LIMIT_INFLIGHT && value < 1) ||
	    (which == IDL_LIMIT_CONNECTIONS && value > UINT_MAX) ||
	    ((which == IDL_LIMIT_HANDSHAKE_MS || which == IDL_LIMIT_IDLE_MS) &&
	     value > (uint64_t)INT64_MAX / 1000000))
		return idl__fail(IDL_EINVAL, "idl_server_set_limit: %s %llu is out of range",
				 srv_limit_names[which], (unsigned long long)value);
	pthread_mutex_lock(&srv->lock);
	if (srv->running) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_EBUSY, "idl_server_set_limit: the server is running");
	}
	srv->limits[which] = value;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

uint64_t
idl_server_limit(idl_server_t *srv, enum idl_limit which)
{
	uint64_t v;

	if (srv == NULL || (unsigned)which >= IDL_LIMIT_COUNT)
		return UINT64_MAX;
	pthread_mutex_lock(&srv->lock);
	v = srv->limits[which];
	if (which == IDL_LIMIT_MSG_SIZE && v == 0) {
		/* The default: the largest request of the subsystems added so far, or a hello. */
		v = IDL_HELLO_MAX;
		for (size_t i = 0; i < srv->nsubs; i++)
			if (srv->subs[i].ss->max_request > v)
				v = srv->subs[i].ss->max_request;
		v = IDL_MSG_ROUND(v);
	}
	pthread_mutex_unlock(&srv->lock);
	return v;
}

int
idl_server_set_auth(idl_server_t *srv, idl_auth_fn hook, void *ctx)
{
	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	if (srv->running) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_EBUSY, "idl_server_set_auth: the server is running");
	}
	srv->auth = hook;
	srv->auth_ctx = ctx;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

int
idl_server_set_log(idl_server_t *srv, idl_log_fn fn, void *ctx)
{
	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	if (srv->running) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_EBUSY, "idl_server_set_log: the server is running");
	}
	srv->log = fn;
	srv->log_ctx = ctx;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

/*
 * A hostile client can make every message a refusal, so the log is rate-limited: a flood
 * costs a counter, not a line per message. The line is formatted only when it will be
 * written.
 */
void
idl__srv_log(struct idl_server *srv, const char *fmt, ...)
{
	char line[512];
	unsigned dropped = 0;
	int64_t now;
	va_list ap;

	if (srv->log == NULL)
		return;
	now = idl_now_ns();
	pthread_mutex_lock(&srv->log_lock);
	if (now - srv->log_window >= 1000000000) {
		dropped = srv->log_dropped;
		srv->log_window = now;
		srv->log_lines = 0;
		srv->log_dropped = 0;
	}
	if (srv->log_lines >= SRV_LOG_PER_SEC) {
		srv->log_dropped++;
		pthread_mutex_unlock(&srv->log_lock);
		return;
	}
	srv->log_lines++;
	pthread_mutex_unlock(&srv->log_lock);
	if (dropped != 0) {
		snprintf(line, sizeof line, "(%u lines dropped by the rate limit)", dropped);
		srv->log(srv->log_ctx, line);
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	srv->log(srv->log_ctx, line);
}

/* A message endpoint's peer, when it is a socket address (udp:): "scheme:host:port". */
static int
srv_format_peer(const char *scheme, const struct idl_peer *from, char *buf, size_t n)
{
	char host[INET6_ADDRSTRLEN];
	struct sockaddr_storage ss;

	if (from == NULL || from->len < sizeof(sa_family_t) || from->len > sizeof ss)
		return 0;
	memset(&ss, 0, sizeof ss);
	memcpy(&ss, from->addr, from->len);
	if (ss.ss_family == AF_INET && from->len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
		snprintf(buf, n, "%s:%s:%u", scheme, host, ntohs(a->sin_port));
		return 1;
	}
	if (ss.ss_family == AF_INET6 && from->len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
		snprintf(buf, n, "%s:[%s]:%u", scheme, host, ntohs(a->sin6_port));
		return 1;
	}
	return 0;
}

int
idl__srv_cred(const struct srv_src *src, const struct idl_peer *from, struct idl_cred *cred)
{
	memset(cred, 0, sizeof *cred);
	if (src->conn != NULL) {
		*cred = src->cred;
		return src->cred_err;
	}
	return srv_format_peer(src->ep->tr->scheme, from, cred->addr, sizeof cred->addr)
		       ? 0
		       : IDL_ENOTSUP;
}

void
idl__srv_who(const struct srv_src *src, const struct idl_peer *from, char *buf, size_t n)
{
	struct idl_cred c;

	idl__srv_cred(src, from, &c);
	if (c.addr[0] != '\0')
		snprintf(buf, n, "%s", c.addr);
	else if (c.valid)
		snprintf(buf, n, "uid %u pid %d", (unsigned)c.uid, (int)c.pid);
	else
		snprintf(buf, n, "a client");
}

/* Adds ss with either demux or demux_ctx (and its ctx). */
static int
srv_add_subsystem(idl_server_t *srv, const struct idl_subsystem *ss, idl_demux_fn demux,
		  idl_demux_ctx_fn demux_ctx, void *ctx)
{
	struct srv_ss *ns;

	idl__clear_detail();
	if (srv == NULL || ss == NULL || (demux == NULL && demux_ctx == NULL) ||
	    ss->magic != IDL_SUBSYSTEM_MAGIC)
		return idl__fail(IDL_EINVAL, "idl_server_add_subsystem: bad argument");
	if (ss->nroutines > IDL_HELLO_MAX_ROUTINES || strlen(ss->name) >= IDL_HELLO_NAME_MAX)
		return idl__fail(IDL_ELIMIT, "%s: more than %u routines or a name over %u bytes",
				 ss->name, IDL_HELLO_MAX_ROUTINES, IDL_HELLO_NAME_MAX - 1);
	pthread_mutex_lock(&srv->lock);
	if (srv->running) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_EBUSY, "%s: the server is running", ss->name);
	}
	for (size_t i = 0; i < srv->nsubs; i++) {
		const struct idl_subsystem *o = srv->subs[i].ss;
		/* Ranges [base, base + n) overlap unless one ends before the other starts;
		 * in 64 bits, so that no sum overflows. */
		int64_t a0 = ss->base, a1 = a0 + ss->nroutines, b0 = o->base,
			b1 = b0 + o->nroutines;

		if ((a0 < b1 && b0 < a1) || strcmp(o->name, ss->name) == 0) {
			pthread_mutex_unlock(&srv->lock);
			return idl__fail(IDL_EINVAL, "%s: ids or name overlap subsystem %s",
					 ss->name, o->name);
		}
	}
	ns = realloc(srv->subs, (srv->nsubs + 1) * sizeof *ns);
	if (ns == NULL) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", ss->name);
	}
	srv->subs = ns;
	ns[srv->nsubs].ss = ss;
	ns[srv->nsubs].demux = demux;
	ns[srv->nsubs].demux_ctx = demux_ctx;
	ns[srv->nsubs].ctx = ctx;
	ns[srv->nsubs].vbase = srv->nverdicts;
	srv->nsubs++;
	srv->nverdicts += ss->nroutines;
	pthread_mutex_unlock(&srv->lock);
	/* Trace lines name its routines, whenever tracing is turned on. */
	idl_trace_register(ss);
	return 0;
}

int
idl_server_add_subsystem(idl_server_t *srv, const struct idl_subsystem *ss, idl_demux_fn demux)
{
	return srv_add_subsystem(srv, ss, demux, NULL, NULL);
}

int
idl_server_add_subsystem_ctx(idl_server_t *srv, const struct idl_subsystem *ss,
			     idl_demux_ctx_fn demux, void *ctx)
{
	return srv_add_subsystem(srv, ss, NULL, demux, ctx);
}

int
idl_server_set_concurrency(idl_server_t *srv, unsigned n)
{
	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	if (srv->running) {
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_EBUSY, "idl_server_set_concurrency: the server is running");
	}
	if (srv->concurrency > 1)
		sem_destroy(&srv->dispatch_sem);
	if (n > 1 && sem_init(&srv->dispatch_sem, 0, n > SEM_VALUE_MAX ? SEM_VALUE_MAX : n)) {
		srv->concurrency = 1;
		pthread_mutex_unlock(&srv->lock);
		return idl__fail(IDL_EINVAL, "idl_server_set_concurrency: %u", n);
	}
	srv->concurrency = n;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

static void
srv_ep_free(struct srv_ep *ep)
{
	if (!ep->closed)
		ep->tr->ep_close(ep->state);
	ep->tr->ep_fini(ep->state);
	free(ep->state);
	free(ep->head.address);
	free(ep);
}

/* Starts the receiving thread of a source; the source is live once this returns 0. */
static int
srv_src_start(struct idl_server *srv, struct srv_src *src, void *(*fn)(void *))
{
	pthread_attr_t attr;
	int err;

	src->next = srv->live;
	src->prev = NULL;
	if (srv->live != NULL)
		srv->live->prev = src;
	srv->live = src;
	pthread_attr_init(&attr);
	/* Refused only below PTHREAD_STACK_MIN: keep the default then. */
	(void)pthread_attr_setstacksize(&attr, SRV_THREAD_STACK);
	err = pthread_create(&src->thread, &attr, fn, src);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		srv->live = src->next;
		if (src->next != NULL)
			src->next->prev = NULL;
		return idl__fail(IDL_ESYSERR(err), "pthread_create: %s", strerror(err));
	}
	return 0;
}

static int
srv_ep_start(struct idl_server *srv, struct srv_ep *ep)
{
	if (ep->tr->ep_accept != NULL) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ep };

		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, ep->tr->ep_fd(ep->state), &ev) != 0)
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

int
idl_server_listen(idl_server_t *srv, const char *address)
{
	struct idl_listen_opts opts = { .mode = 0600 };
	const struct idl_transport *tr;
	struct srv_ep *ep;
	const char *rest;
	int err;

	idl__clear_detail();
	if (srv == NULL || address == NULL)
		return idl__fail(IDL_EINVAL, "idl_server_listen: NULL argument");
	if (strchr(address, ':') == NULL)
		return idl__fail(IDL_EADDRINVAL, "%s: no scheme (expected e.g. unix:/path)",
				 address);
	if ((tr = idl_transport_find(address, &rest)) == NULL)
		return idl__fail(IDL_ENOSCHEME, "%s: no transport for this scheme", address);
	if ((ep = calloc(1, sizeof *ep)) == NULL || (ep->head.address = strdup(address)) == NULL ||
	    (ep->state = idl__zalloc(tr->ep_size)) == NULL) {
		if (ep != NULL)
			free(ep->head.address);
		free(ep);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", address);
	}
	ep->head.kind = IDL__PORT_ENDPOINT;
	ep->srv = srv;
	ep->tr = tr;
	if ((err = tr->ep_listen(ep->state, rest, &opts)) != 0) {
		if (idl_errdetail()[0] == '\0')
			idl__fail(err, "%s: listen: %s", address, idl_strerror(err));
		ep->closed = 1;
		srv_ep_free(ep);
		return err;
	}
	pthread_mutex_lock(&srv->lock);
	ep->next = srv->eps;
	srv->eps = ep;
	err = srv->running ? srv_ep_start(srv, ep) : 0;
	pthread_mutex_unlock(&srv->lock);
	return err;
}

void
idl__srv_src_ended(struct srv_src *src)
{
	struct idl_server *srv = src->srv;
	uint64_t one = 1;

	pthread_mutex_lock(&srv->lock);
	if (src->prev != NULL)
		src->prev->next = src->next;
	else
		srv->live = src->next;
	if (src->next != NULL)
		src->next->prev = src->prev;
	src->prev = NULL;
	src->next = srv->ended;
	srv->ended = src;
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
	while (srv->ended != NULL) {
		struct srv_src *src = srv->ended;

		srv->ended = src->next;
		pthread_mutex_unlock(&srv->lock);
		pthread_join(src->thread, NULL);
		if (src->conn != NULL)
			src->ep->tr->conn_close(src->conn);
		pthread_mutex_lock(&srv->lock);
		if (src->conn == NULL)
			src->ep->src = NULL;
		if (src->handles != 0) {
			src->reaped = 1;
			src->next = srv->zombies;
			src->prev = NULL;
			if (srv->zombies != NULL)
				srv->zombies->prev = src;
			srv->zombies = src;
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

		if (ep->tr->ep_accept != NULL)
			epoll_ctl(srv->epfd, EPOLL_CTL_MOD, ep->tr->ep_fd(ep->state), &ev);
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
	err = ep->tr->ep_accept(ep->state, src->conn);
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
		for (struct srv_src *s = srv->live; s != NULL; s = s->next) {
			if (s->conn != NULL) {
				s->ep->tr->conn_close(s->conn);
			} else if (!s->ep->closed) {
				s->ep->tr->ep_close(s->ep->state);
				s->ep->closed = 1;
			}
		}
		srv_reap(srv);
		if (srv->live == NULL)
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
		err = srv_ep_start(srv, ep);
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

/* Frees what is left of a server once it is stopped and no deferred reply holds it. */
static void
srv_final_free(struct idl_server *srv)
{
	while (srv->eps != NULL) {
		struct srv_ep *ep = srv->eps;

		srv->eps = ep->next;
		srv_ep_free(ep);
	}
	if (srv->concurrency > 1)
		sem_destroy(&srv->dispatch_sem);
	pthread_mutex_destroy(&srv->dispatch_mutex);
	pthread_mutex_destroy(&srv->log_lock);
	pthread_cond_destroy(&srv->idle);
	pthread_mutex_destroy(&srv->lock);
	close(srv->efd);
	free(srv->subs);
	free(srv);
}

void
idl_server_destroy(idl_server_t *srv)
{
	if (srv == NULL)
		return;
	pthread_mutex_lock(&srv->lock);
	while (srv->running) {
		idl_server_stop(srv);
		pthread_cond_wait(&srv->idle, &srv->lock);
	}
	if (srv->handles != 0) {
		/* Deferred replies still refer to sources and endpoints: close the endpoints so
		 * that they fail, and let the last one free the rest. */
		for (struct srv_ep *ep = srv->eps; ep != NULL; ep = ep->next) {
			if (!ep->closed)
				ep->tr->ep_close(ep->state);
			ep->closed = 1;
		}
		srv->destroyed = 1;
		pthread_mutex_unlock(&srv->lock);
		return;
	}
	pthread_mutex_unlock(&srv->lock);
	srv_final_free(srv);
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
		if (src->prev != NULL)
			src->prev->next = src->next;
		else
			srv->zombies = src->next;
		if (src->next != NULL)
			src->next->prev = src->prev;
		free_src = 1;
	}
	free_srv = srv->destroyed && srv->handles == 0;
	pthread_mutex_unlock(&srv->lock);
	if (free_src)
		srv_src_destroy(src);
	if (free_srv)
		srv_final_free(srv);
}
