/*
 * svc_notify.c - the notify protocol (service.h): what a server tells its service manager.
 *
 * The manager names a datagram socket in NOTIFY_SOCKET (a path, or "@name" for an abstract
 * one); the service sends it newline-separated KEY=VALUE assignments, one datagram each
 * time. A server says READY=1 once every endpoint listens (idl_server_run(), and
 * idl_server_fd() for an embedded one), STOPPING=1 when it begins to stop or to drain,
 * STATUS= with its connection and call counts when they changed (at most once a period),
 * and WATCHDOG=1 every half of WATCHDOG_USEC, so that a manager that misses a period knows
 * the server wedged and restarts it. The period is a timerfd in the server's epoll set,
 * served by whichever thread waits there (an embedded server's caller, in its dispatch):
 * a server whose every thread is stuck stops saying it.
 *
 * The protocol is small and stable, so it is spoken here rather than through libsystemd,
 * and libidlrt depends on nothing for it. Without NOTIFY_SOCKET none of this runs: no
 * timer, no socket, no system call.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "server/server.h"
#include "server/service.h"

/* The status period without a watchdog: STATUS= is sent at most this often. */
#define SVC_STATUS_NS 1000000000ll

void
idl__svc_notify_parse(const char *sock, const char *usec, const char *wpid, pid_t self,
		      struct idl__svc_notify *out)
{
	size_t n = sock != NULL ? strlen(sock) : 0;
	char *end;
	long long v;

	memset(out, 0, sizeof *out);
	/* A path or an abstract name; anything else (a relative path, "vsock:...") is not a
	 * socket this side speaks to. */
	if (n < 2 || n >= sizeof out->addr.sun_path || (sock[0] != '/' && sock[0] != '@'))
		return;
	out->addr.sun_family = AF_UNIX;
	memcpy(out->addr.sun_path, sock, n);
	if (sock[0] == '@')
		out->addr.sun_path[0] = '\0';
	out->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (sock[0] == '/'));
	out->on = 1;
	if (usec == NULL || *usec < '0' || *usec > '9')
		return;
	errno = 0;
	v = strtoll(usec, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0 || v > INT64_MAX / 1000)
		return;
	/* The watchdog is this process's unless WATCHDOG_PID names another. */
	if (wpid != NULL && (strtoll(wpid, &end, 10) != (long long)self || *end != '\0'))
		return;
	out->watchdog_ns = v * 1000;
}

static struct idl__svc_notify svc_notify;
static pthread_once_t svc_notify_once = PTHREAD_ONCE_INIT;

static void
svc_notify_read(void)
{
	idl__svc_notify_parse(getenv("NOTIFY_SOCKET"), getenv("WATCHDOG_USEC"),
			      getenv("WATCHDOG_PID"), getpid(), &svc_notify);
}

const struct idl__svc_notify *
idl__svc_notify(void)
{
	pthread_once(&svc_notify_once, svc_notify_read);
	return &svc_notify;
}

int
idl__svc_send(const struct idl__svc_notify *n, const char *text)
{
	int fd, err = 0;

	if (!n->on)
		return 0;
	/* A socket per message, as sd_notify() makes one: nothing stays open between
	 * messages, and a fork()ed child shares nothing with its parent. */
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return IDL_ESYSERR(errno);
	if (sendto(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT,
		   (const struct sockaddr *)&n->addr, n->addrlen) < 0)
		err = IDL_ESYSERR(errno);
	close(fd);
	return err;
}

/* Sends `head` (may be ""), with the status when it changed since it was last sent (or
 * `force`). Ticks, the start and the stop may come from different threads: the last status
 * sent is kept under the server's lock. */
static void
svc_say(struct idl_server *srv, const char *head, int force)
{
	int draining = atomic_load(&srv->drain_started);
	char status[sizeof srv->svc_status], msg[sizeof srv->svc_status + 32];
	unsigned long long calls;
	unsigned conns;
	int changed;

	pthread_mutex_lock(&srv->lock);
	conns = srv->nconns;
	/* The messages served: the pool's count, and what each thread of a source counted;
	 * a source that ended added its own to the first (idl__srv_src_ended()). */
	calls = atomic_load_explicit(&srv->st_calls, memory_order_relaxed);
	for (struct srv_src *s = IDL__LIST_FIRST(&srv->live, struct srv_src, link); s != NULL;
	     s = IDL__LIST_NEXT(s, struct srv_src, link))
		calls += atomic_load_explicit(&s->rstate, memory_order_relaxed) >> 2;
	snprintf(status, sizeof status, "STATUS=%s%u connection%s%s, %llu message%s served",
		 draining ? "draining: " : "", conns, conns == 1 ? "" : "s",
		 draining ? " left" : "", calls, calls == 1 ? "" : "s");
	changed = force || strcmp(status, srv->svc_status) != 0;
	if (changed)
		memcpy(srv->svc_status, status, sizeof status);
	pthread_mutex_unlock(&srv->lock);
	if (!changed && head[0] == '\0')
		return;
	snprintf(msg, sizeof msg, "%s%s%s", head, head[0] != '\0' && changed ? "\n" : "",
		 changed ? status : "");
	(void)idl__svc_send(idl__svc_notify(), msg);
}

void
idl__srv_svc_start(struct idl_server *srv)
{
	const struct idl__svc_notify *n = idl__svc_notify();
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = SRV_EV_SVC };
	int64_t period = n->watchdog_ns != 0 ? n->watchdog_ns / 2 : SVC_STATUS_NS;
	struct itimerspec its;

	srv->svc_tfd = -1;
	if (!n->on)
		return;
	srv->svc_on = 1;
	atomic_store(&srv->svc_stopping, 0);
	if (period < 1000000)
		period = 1000000; /* a period below 1 ms is a typo, not a request */
	its.it_value.tv_sec = its.it_interval.tv_sec = period / 1000000000;
	its.it_value.tv_nsec = its.it_interval.tv_nsec = period % 1000000000;
	srv->svc_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (srv->svc_tfd >= 0 && (timerfd_settime(srv->svc_tfd, 0, &its, NULL) != 0 ||
				  epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->svc_tfd, &ev) != 0)) {
		close(srv->svc_tfd);
		srv->svc_tfd = -1;
	}
	if (srv->svc_tfd < 0)
		idl__srv_log(srv, "service manager: no timer for the watchdog and status (%s)",
			     strerror(errno));
}

void
idl__srv_svc_ready(struct idl_server *srv)
{
	if (srv->svc_on)
		svc_say(srv,
			idl__svc_notify()->watchdog_ns != 0 ? "READY=1\nWATCHDOG=1" : "READY=1", 1);
}

void
idl__srv_svc_tick(struct idl_server *srv)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = SRV_EV_SVC };
	uint64_t expired;

	/* Whoever read the expirations says it; a thread woken for nothing goes back. */
	if (read(srv->svc_tfd, &expired, sizeof expired) == (ssize_t)sizeof expired)
		svc_say(srv, idl__svc_notify()->watchdog_ns != 0 ? "WATCHDOG=1" : "", 0);
	epoll_ctl(srv->epfd, EPOLL_CTL_MOD, srv->svc_tfd, &ev);
}

void
idl__srv_svc_stopping(struct idl_server *srv)
{
	if (srv->svc_on && !atomic_exchange(&srv->svc_stopping, 1))
		svc_say(srv, "STOPPING=1", 1);
}

void
idl__srv_svc_stop(struct idl_server *srv)
{
	if (srv->svc_tfd >= 0)
		close(srv->svc_tfd);
	srv->svc_tfd = -1;
	srv->svc_on = 0;
}
