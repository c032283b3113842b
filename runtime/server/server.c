/*
 * server.c - the server's API: creating one, its limits, authorisation hook and log, the
 * subsystems it serves, the addresses it listens on, its endpoints' files read again
 * (idl_server_reload()), and destroying it. Running it is
 * server_loop.c's; serving each request, server_request.c's.
 *
 * The server room: it knows core, ool and trace, and never the client; a transport only
 * through its ops.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/server.h"
#include "server/service.h"
#include "trace/trace.h"

/* Log lines per second before the rest of that second's are counted instead. */
#define SRV_LOG_PER_SEC 20u

/* Defaults of the limits (docs/security.md); msg_size 0 stands for "the subsystems'". */
static const uint64_t srv_limit_default[IDL_LIMIT_COUNT] = {
	[IDL_LIMIT_MSG_SIZE] = 0,
	[IDL_LIMIT_INFLIGHT] = 64,
	[IDL_LIMIT_CONNECTIONS] = IDL__LIMIT_CONN_DEFAULT,
	[IDL_LIMIT_FDS] = 16,
	[IDL_LIMIT_HANDSHAKE_MS] = 30000,
	[IDL_LIMIT_IDLE_MS] = 0,
	[IDL_LIMIT_PER_ADDRESS] = 256,
	[IDL_LIMIT_NET_IDLE_MS] = 300000,
};

static const char *const srv_limit_names[IDL_LIMIT_COUNT] = {
	[IDL_LIMIT_MSG_SIZE] = "msg_size",	   [IDL_LIMIT_INFLIGHT] = "inflight",
	[IDL_LIMIT_CONNECTIONS] = "connections",   [IDL_LIMIT_FDS] = "fds",
	[IDL_LIMIT_HANDSHAKE_MS] = "handshake_ms", [IDL_LIMIT_IDLE_MS] = "idle_ms",
	[IDL_LIMIT_PER_ADDRESS] = "per_address",   [IDL_LIMIT_NET_IDLE_MS] = "net_idle_ms",
};

/* The connections limit's default: what the descriptors a run may open allow, less those
 * the server keeps for itself (listeners, its sets, a reserve for refusing one more). */
uint64_t
idl__srv_conn_default(void)
{
	struct rlimit rl;
	uint64_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	/* What the run will raise the soft limit to. */
	n = rl.rlim_max > SRV_NOFILE_MAX ? SRV_NOFILE_MAX : rl.rlim_max;
	if (n < rl.rlim_cur)
		n = rl.rlim_cur > SRV_NOFILE_MAX ? SRV_NOFILE_MAX : rl.rlim_cur;
	return n > SRV_FDS_KEPT + 16 ? n - SRV_FDS_KEPT : 16;
}

/* The log a server has until idl_server_set_log() gives it another. */
static void
srv_log_stderr(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "idlkit server: %s\n", line);
}

/* Everything a server needs before it runs is made here, so that running it allocates
 * only per endpoint and per connection; the limits start at their defaults. */
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
	pthread_mutex_init(&srv->conn_lock, NULL);
	pthread_cond_init(&srv->idle, NULL);
	pthread_cond_init(&srv->threads_done, NULL);
	srv->tfd = -1;
	srv->svc_tfd = -1;
	srv->reserve_fd = -1;
	atomic_init(&srv->gate.slots, 1);
	pthread_mutex_init(&srv->log_lock, NULL);
	srv->concurrency = 1;
	srv->linger_ms =
		(int)idl__env_int("IDL_SERVER_LINGER_MS", SRV_LINGER_MS, 1, SRV_LINGER_MAX_MS);
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

/* Takes srv's lock for a change only a server that is not running takes (the detail
 * cleared first): 0 with the lock held, or IDL_EINVAL for no server, IDL_EBUSY naming `what`
 * for a running one, without it. */
static int
srv_lock_idle(idl_server_t *srv, const char *what)
{
	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	if (!srv->running)
		return 0;
	pthread_mutex_unlock(&srv->lock);
	return idl__fail(IDL_EBUSY, "%s: the server is running", what);
}

int
idl_server_set_limit(idl_server_t *srv, enum idl_limit which, uint64_t value)
{
	int err;

	idl__clear_detail();
	if (srv == NULL || (unsigned)which >= IDL_LIMIT_COUNT)
		return idl__fail(IDL_EINVAL, "idl_server_set_limit: bad server or limit %d",
				 (int)which);
	if ((which == IDL_LIMIT_MSG_SIZE && value < IDL_MSG_HEADER_SIZE) ||
	    (which == IDL_LIMIT_INFLIGHT && value < 1) ||
	    (which == IDL_LIMIT_CONNECTIONS && value > SRV_NOFILE_MAX) ||
	    ((which == IDL_LIMIT_HANDSHAKE_MS || which == IDL_LIMIT_IDLE_MS ||
	      which == IDL_LIMIT_NET_IDLE_MS) &&
	     value > (uint64_t)INT64_MAX / 1000000))
		return idl__fail(IDL_EINVAL, "idl_server_set_limit: %s %llu is out of range",
				 srv_limit_names[which], (unsigned long long)value);
	if ((err = srv_lock_idle(srv, "idl_server_set_limit")) != 0)
		return err;
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
	if (which == IDL_LIMIT_CONNECTIONS && (v == 0 || v == IDL__LIMIT_CONN_DEFAULT))
		v = idl__srv_conn_default();
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
	int err = srv_lock_idle(srv, "idl_server_set_auth");

	if (err != 0)
		return err;
	srv->auth = hook;
	srv->auth_ctx = ctx;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

int
idl_server_set_log(idl_server_t *srv, idl_log_fn fn, void *ctx)
{
	int err = srv_lock_idle(srv, "idl_server_set_log");

	if (err != 0)
		return err;
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

/* A connection's peer as its transport told at accept time; a message endpoint's sender
 * by the address it came from, which is all a datagram says. */
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

/* The client as a log line names it: its address, else its uid and pid, never more than
 * the transport vouches for. */
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

/*
 * The server's log line for a connection a secure channel refused (a certificate, a protocol,
 * a record changed on the way): the transport's detail, which names the client already.
 */
void
idl__srv_tls_log(struct srv_src *src, int err)
{
	const char *why = idl_errdetail();
	char who[IDL_CRED_ADDR_MAX + 32];
	size_t n;

	idl__srv_who(src, NULL, who, sizeof who);
	n = strlen(who);
	if (strncmp(why, who, n) == 0 && why[n] == ':' && why[n + 1] == ' ')
		why += n + 2;
	idl__srv_log(src->srv, "%s: %s: %s: %s, connection closed", src->ep->head.address, who,
		     idl_errname(err), why[0] != '\0' ? why : idl_strerror(err));
}

/*
 * Rotation (ep_reload): each endpoint of the server that has files reads them again. The list
 * of endpoints only ever grows at its head, and its entries are freed with the server, so it
 * is walked without the server's lock, which a reload's file reading would hold too long.
 */
int
idl_server_reload(idl_server_t *srv)
{
	char why[512] = "";
	struct srv_ep *ep;
	int first = 0;

	idl__clear_detail();
	if (srv == NULL)
		return IDL_EINVAL;
	pthread_mutex_lock(&srv->lock);
	ep = srv->eps;
	pthread_mutex_unlock(&srv->lock);
	for (; ep != NULL; ep = ep->next) {
		int (*reload)(void *) = IDL__TR_OP(ep->tr, ep_reload);
		int err;

		if (reload == NULL)
			continue;
		idl__clear_detail();
		if ((err = reload(ep->state)) == 0) {
			idl__srv_log(srv, "%s: certificates reloaded", ep->head.address);
			continue;
		}
		idl__srv_log(srv, "%s: reload failed, the certificates it had stay: %s",
			     ep->head.address, idl_errdetail());
		if (first == 0) {
			first = err;
			snprintf(why, sizeof why, "%s: %s", ep->head.address, idl_errdetail());
		}
	}
	return first != 0 ? idl__fail(first, "%s", why) : 0;
}

void
idl_server_reload_async(idl_server_t *srv)
{
	uint64_t one = 1;

	/* Only async-signal-safe operations, as idl_server_stop(): a store and a write. */
	if (srv == NULL)
		return;
	atomic_store(&srv->reload_req, 1);
	if (write(srv->efd, &one, sizeof one) < 0)
		return;
}

/* Logs a refusal by a limit: an oversized message, or a connection that timed out (which
 * then ends; `closing` says whether an oversized one does too); or what a secure channel
 * refused (a certificate, a protocol, a record). */
void
idl__srv_conn_log(struct srv_src *src, int err, size_t len, int closing)
{
	struct idl_server *srv = src->srv;
	char who[IDL_CRED_ADDR_MAX + 32];

	if (err == IDL_ECERT || err == IDL_ETLS || err == IDL_EINTEGRITY) {
		idl__srv_tls_log(src, err);
		return;
	}
	if (err != IDL_ETIMEDOUT && err != IDL_EMSGSIZE)
		return;
	idl__srv_who(src, NULL, who, sizeof who);
	if (err == IDL_EMSGSIZE)
		idl__srv_log(srv, "%s: %s: message of %zu bytes refused%s (msg_size %zu)",
			     src->ep->head.address, who, len, closing ? ", connection closed" : "",
			     srv->rcap);
	else if (!src->greeted)
		idl__srv_log(srv,
			     "%s: %s: no hello in time, connection closed (handshake_ms "
			     "%llu)",
			     src->ep->head.address, who,
			     (unsigned long long)srv->limits[IDL_LIMIT_HANDSHAKE_MS]);
	else
		idl__srv_log(srv, "%s: %s: idle, connection closed (idle_ms %llu)",
			     src->ep->head.address, who,
			     (unsigned long long)srv->limits[IDL_LIMIT_IDLE_MS]);
}

/* Logs a message the transport refused for what it holds (IDL_EPROTO), with the transport's
 * detail: `len` bytes of it came; none when the framing was lost and the connection ends. */
void
idl__srv_refused_log(struct srv_src *src, const struct idl_peer *from, size_t len)
{
	char who[IDL_CRED_ADDR_MAX + 32], size[48] = "", why[256];

	/* The detail first: asking for the client's credentials may set another. */
	snprintf(why, sizeof why, "%s",
		 idl_errdetail()[0] != '\0' ? idl_errdetail() : idl_strerror(IDL_EPROTO));
	idl__srv_who(src, from, who, sizeof who);
	if (len != 0)
		snprintf(size, sizeof size, " of %zu bytes", len);
	idl__srv_log(src->srv, "%s: %s: message%s refused: %s%s", src->ep->head.address, who, size,
		     why, len != 0 ? "" : ", connection closed");
}

/* Adds ss with either demux or demux_ctx (and its ctx). */
static int
srv_add_subsystem(idl_server_t *srv, const struct idl_subsystem *ss, idl_demux_fn demux,
		  idl_demux_ctx_fn demux_ctx, void *ctx)
{
	struct srv_ss *ns;
	uint64_t *hashes;
	uint8_t *plain;

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
	/* The hashes a hello compares, once for every hello to come: version 2's are
	 * computed from the table. */
	hashes = malloc(2 * ((size_t)ss->nroutines + 1) * sizeof *hashes);
	ns = hashes != NULL ? realloc(srv->subs, (srv->nsubs + 1) * sizeof *ns) : NULL;
	if (ns != NULL)
		srv->subs = ns;
	plain = ns != NULL ? realloc(srv->plain, srv->nverdicts + ss->nroutines + 1u) : NULL;
	if (plain != NULL)
		srv->plain = plain;
	if (ns == NULL || plain == NULL) {
		pthread_mutex_unlock(&srv->lock);
		free(hashes);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", ss->name);
	}
	idl__hello_hashes(ss, 1, hashes);
	idl__hello_hashes(ss, 2, hashes + ss->nroutines);
	ns[srv->nsubs].hashes = hashes;
	/* Whether each routine's requests carry descriptors, worked out once: a request
	 * without any is checked against it with one load. */
	for (uint32_t i = 0; i < ss->nroutines; i++) {
		static const idl_msg_header_t none = { .size = IDL_MSG_HEADER_SIZE };

		plain[srv->nverdicts + i] = idl__desc_count_ok(&ss->routines[i], &none, 1);
	}
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
	int err = srv_lock_idle(srv, "idl_server_set_concurrency");

	if (err != 0)
		return err;
	/* The gate counts the routines that may still start: n (none is kept for 0). */
	atomic_store(&srv->gate.slots, n);
	srv->concurrency = n;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

/* An endpoint's end: its transport closes it (waking what waits on it) unless that happened
 * at the stop, then frees its state. */
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

/* idl_server_listen() with a configuration, or NULL. */
static int
srv_listen(idl_server_t *srv, const char *address, struct idl_config *cfg)
{
	struct idl_listen_opts opts = { .mode = 0600 };
	const struct idl_transport *tr;
	struct srv_ep *ep;
	const char *rest;
	int err;

	if (srv == NULL || address == NULL)
		return idl__fail(IDL_EINVAL, "idl_server_listen: NULL argument");
	if (strchr(address, ':') == NULL)
		return idl__fail(IDL_EADDRINVAL, "%s: no scheme (expected e.g. unix:/path)",
				 address);
	if ((tr = idl_transport_find(address, &rest)) == NULL)
		return idl__fail(IDL_ENOSCHEME, "%s: no transport for this scheme", address);
	if (cfg != NULL && (err = idl__config_check(tr, cfg, address, 1)) != 0)
		return err;
	if ((ep = calloc(1, sizeof *ep)) == NULL || (ep->head.address = strdup(address)) == NULL ||
	    (ep->state = idl__zalloc(tr->ep_size)) == NULL) {
		if (ep != NULL)
			free(ep->head.address);
		free(ep);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", address);
	}
	ep->head.kind = IDL__HANDLE_ENDPOINT;
	ep->head.ops = &idl__srv_endpoint_ops;
	ep->srv = srv;
	ep->tr = tr;
	err = cfg != NULL ? IDL__TR_OP(tr, ep_config)(ep->state, cfg) : 0;
	/* "SCHEME:systemd:NAME": the socket the service manager passed under NAME. */
	ep->adopted = strncmp(rest, IDL__SVC_PREFIX, IDL__SVC_PREFIX_LEN) == 0;
	if (err == 0)
		err = ep->adopted ? idl__svc_adopt(tr, ep->state, rest + IDL__SVC_PREFIX_LEN, &opts,
						   cfg, address)
				  : tr->ep_listen(ep->state, rest, &opts);
	if (err != 0) {
		if (idl_errdetail()[0] == '\0')
			idl__fail(err, "%s: listen: %s", address, idl_strerror(err));
		ep->closed = 1;
		srv_ep_free(ep);
		return err;
	}
	pthread_mutex_lock(&srv->lock);
	ep->next = srv->eps;
	srv->eps = ep;
	err = srv->running ? idl__srv_ep_start(srv, ep) : 0;
	pthread_mutex_unlock(&srv->lock);
	return err;
}

/* The endpoint listens at once, owner-only (mode 0600), so that an address in use or
 * forbidden shows here, not when the server runs; it is served from the next run on. */
int
idl_server_listen(idl_server_t *srv, const char *address)
{
	idl__clear_detail();
	return srv_listen(srv, address, NULL);
}

int
idl_server_listen_config(idl_server_t *srv, const char *address, idl_config_t *cfg)
{
	idl__clear_detail();
	return srv_listen(srv, address, cfg);
}

/* Frees what idl_server_create() and the listens made, once nothing refers to the server:
 * from idl_server_destroy(), or from the last deferred reply after it. */
void
idl__srv_free(struct idl_server *srv)
{
	while (srv->eps != NULL) {
		struct srv_ep *ep = srv->eps;

		srv->eps = ep->next;
		srv_ep_free(ep);
	}
	pthread_mutex_destroy(&srv->log_lock);
	pthread_cond_destroy(&srv->idle);
	pthread_cond_destroy(&srv->threads_done);
	pthread_mutex_destroy(&srv->conn_lock);
	pthread_mutex_destroy(&srv->lock);
	close(srv->efd);
	for (size_t i = 0; i < srv->nsubs; i++)
		free(srv->subs[i].hashes);
	free(srv->subs);
	free(srv->plain);
	free(srv);
}

/* The counters are atomics read one by one: a snapshot that may be a moment apart, never a
 * torn value. */
int
idl_server_stats(idl_server_t *srv, struct idl_server_stats *st)
{
	if (srv == NULL || st == NULL)
		return IDL_EINVAL;
	memset(st, 0, sizeof *st);
	pthread_mutex_lock(&srv->lock);
	st->connections = srv->nconns;
	pthread_mutex_unlock(&srv->lock);
	st->accepted = atomic_load(&srv->st_accepted);
	st->refused_connections = atomic_load(&srv->st_refused[IDL_GOODBYE_CONNECTIONS]);
	st->refused_per_address = atomic_load(&srv->st_refused[IDL_GOODBYE_PER_ADDRESS]);
	st->closed_idle = atomic_load(&srv->st_refused[IDL_GOODBYE_IDLE]);
	st->evicted = atomic_load(&srv->st_refused[IDL_GOODBYE_EVICTED]);
	st->threads = atomic_load(&srv->nthreads);
	return 0;
}

/* The dispatch gate's slow ways (server.h): a thread that found no slot counts itself a
 * sleeper and sleeps on the slot word until a leave wakes it; a leave wakes one sleeper. */
void
idl__srv_gate_wait(struct srv_gate *g)
{
	atomic_fetch_add(&g->sleepers, 1);
	for (;;) {
		unsigned v = atomic_load(&g->slots);

		while (v != 0) {
			if (atomic_compare_exchange_weak(&g->slots, &v, v - 1)) {
				atomic_fetch_sub(&g->sleepers, 1);
				return;
			}
		}
		/* Sleeps only while there is still no slot: a leave after the load above
		 * changed the word, and the wait returns at once. */
		syscall(SYS_futex, (uint32_t *)&g->slots, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	}
}

void
idl__srv_gate_wake(struct srv_gate *g)
{
	syscall(SYS_futex, (uint32_t *)&g->slots, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* A running server is stopped first (an embedded one by dispatching until it ends, since
 * nobody else does); deferred replies that still hold its sources keep what they need until
 * the last is sent or discarded. */
void
idl_server_destroy(idl_server_t *srv)
{
	if (srv == NULL)
		return;
	pthread_mutex_lock(&srv->lock);
	if (srv->running && srv->embedded) {
		/* Nobody else dispatches: the caller ends its own run. */
		pthread_mutex_unlock(&srv->lock);
		idl_server_stop(srv);
		while (idl_server_dispatch(srv, 0) != IDL_ECLOSED)
			;
		pthread_mutex_lock(&srv->lock);
	}
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
	idl__srv_free(srv);
}
