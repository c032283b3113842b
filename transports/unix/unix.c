/*
 * unix.c - the unix: transport, "unix:/run/foo.sock" or "unix:relative/path".
 *
 * AF_UNIX SOCK_SEQPACKET: the kernel keeps message boundaries, so a message is one sendmsg
 * and one recvmsg, with no framing of our own (docs/runtime.md has the measurements that
 * chose it over SOCK_STREAM). Deadlines use SO_RCVTIMEO/SO_SNDTIMEO, whose value is cached
 * per socket and changed only when a call needs a shorter or much longer wait, so a call
 * makes no setsockopt (and no poll) on its fast path. Send and receive go through
 * sendmsg/recvmsg: a message with descriptors carries file descriptors
 * (unix_desc.c), and the fast path pays for it only with a flag test and a control buffer.
 */
#include <config.h>

/* strerrorname_np, accept4, struct ucred: GNU and Linux interfaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "sock/sock_adopt.h"
#include "sock/sock_timeo.h"
#include "unix_impl.h"

struct unix_ep {
	struct idl__sockfile sf; /* the listening socket file (sockfile.c) */
};

static int
unix_ep_listen(void *vep, const char *rest, const struct idl_listen_opts *opts)
{
	return idl__sockfile_listen(&((struct unix_ep *)vep)->sf, "unix", rest, opts);
}

/* A listening socket file the service manager passed (ListenSequentialPacket=). */
static int
unix_ep_adopt(void *vep, int fd, const struct idl_listen_opts *opts)
{
	return idl__sockfile_adopt(&((struct unix_ep *)vep)->sf, "unix", fd, opts);
}

static int
unix_ep_fd(void *vep)
{
	return ((struct unix_ep *)vep)->sf.fd;
}

static int
unix_ep_accept(void *vep, void *vconn)
{
	struct unix_ep *ep = vep;
	struct unix_conn *c = vconn;

	/* The listening socket is non-blocking, so a connection that went away between
	 * epoll and here costs an EAGAIN, not a stuck accept loop. */
	c->fd = accept4(ep->sf.fd, NULL, NULL, SOCK_CLOEXEC);
	if (c->fd < 0)
		return IDL_ESYSERR(errno);
	c->open = 1;
	c->sndmax = 0;
	idl__sock_ra_init(&c->ra);
	idl__sockfile_peercred(c->fd, &c->cred);
	if ((c->spill = malloc(UNIX_SPILL)) == NULL)
		return IDL_ENOMEM;
	return 0;
}

static void
unix_ep_close(void *vep)
{
	idl__sockfile_close(&((struct unix_ep *)vep)->sf);
}

static void
unix_ep_fini(void *vep)
{
	idl__sockfile_fini(&((struct unix_ep *)vep)->sf);
}

int
idl__unix_connect(void *vconn, const char *rest, struct idl_deadline *dl)
{
	struct unix_conn *c = vconn;
	struct sockaddr_un sa;
	int err;

	if ((err = idl__sockfile_addr("unix", rest, &sa)) != 0)
		return err;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return idl__fail(IDL_ESYSERR(errno), "unix:%s: socket: %s", rest, strerror(errno));
	c->open = 1;
	c->sndmax = 0;
	idl__sock_ra_init(&c->ra);
	/* connect on a unix socket waits for room in the listener's backlog, bounded by the
	 * send timeout. */
	if ((err = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl)) != 0)
		return err == 1
			       ? idl__fail(IDL_ETIMEDOUT, "unix:%s: connect: deadline passed", rest)
			       : err;
	if ((err = idl__sockfile_connect(c->fd, "unix", rest, &sa)) != 0)
		return err;
	idl__sockfile_peercred(c->fd, &c->cred);
	return 0;
}

static int
unix_conn_connect(void *vconn, const char *rest, struct idl_deadline *dl)
{
	struct unix_conn *c = vconn;
	int err = idl__unix_connect(c, rest, dl);

	if (err == 0 && (c->spill = malloc(UNIX_SPILL)) == NULL)
		err = IDL_ENOMEM;
	return err;
}

/* Maps an errno from a send or receive on a connection. */
int
idl__unix_conn_err(struct unix_conn *c, int e)
{
	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	if (e == EPIPE || e == ECONNRESET || e == ENOTCONN)
		return MIG_SERVER_DIED;
	return IDL_ESYSERR(e);
}

/* After a send that did not go: 0 to try again (a signal, or the socket's timeout ended
 * a wait before the deadline), or the send's error. t is what idl__sock_timeo() said. */
static int
unix_send_again(struct unix_conn *c, struct idl_deadline *dl, int t, int e)
{
	if (e == EINTR) {
		idl__sock_again(dl);
		return 0;
	}
	if (e == EAGAIN)
		return t == 1 || idl__sock_late(dl) ? IDL_ETIMEDOUT : 0;
	if (e == EMSGSIZE)
		return IDL_EMSGSIZE;
	return idl__unix_conn_err(c, e);
}

int
idl__unix_sendmsg(struct unix_conn *c, const struct msghdr *mhp, struct idl_deadline *dl)
{
	struct msghdr mh = *mhp;

	for (;;) {
		int t = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl);

		if (t < 0)
			return t;
		/* A seqpacket send is all or nothing. */
		if (idl__sys_sendmsg(c->fd, &mh, MSG_NOSIGNAL | (t == 1 ? MSG_DONTWAIT : 0)) >= 0)
			return 0;
		if ((t = unix_send_again(c, dl, t, errno)) != 0)
			return t;
	}
}

/* A message without descriptors is one send(): no msghdr to build, none for the kernel to
 * copy in and check. */
static int
unix_conn_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct unix_conn *c = vconn;
	int err;

	if (idl__desc_msg(m->data, m->len))
		return idl__unix_send_desc(c, m, dl);
	/* A message with descriptors a non-blocking send kept goes first. */
	if (__builtin_expect(c->pend != NULL, 0) && (err = idl__unix_pend_flush(c, dl)) != 0)
		return err;
	for (;;) {
		int t = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl);

		if (t < 0)
			return t;
		if (idl__sys_send(c->fd, m->data, m->len,
				  MSG_NOSIGNAL | (t == 1 ? MSG_DONTWAIT : 0)) >= 0)
			return 0;
		if ((t = unix_send_again(c, dl, t, errno)) != 0)
			return t;
	}
}

/*
 * After ECONNRESET: a peer that closed with a message of ours unread makes the kernel
 * report that once, ahead of what the peer sent before it closed - a server's goodbye
 * saying why is still there, and is read without waiting. Off the receive's common path.
 */
static __attribute__((noinline, cold)) int
unix_recv_after_reset(struct unix_conn *c, struct idl_xmsg *m, struct msghdr *mh, size_t controllen)
{
	ssize_t n;

	mh->msg_controllen = controllen;
	n = idl__sys_recvmsg(c->fd, mh, MSG_TRUNC | MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n > 0)
		return idl__unix_received(c, m, mh, (size_t)n);
	return idl__unix_conn_err(c, ECONNRESET);
}

/* One message, waiting at most until the deadline; `ahead` (a constant): with one
 * recvmmsg() that reads ahead what the peer sent behind it (sock/sock_ra.h). */
static inline __attribute__((always_inline)) int
unix_recv_loop(struct unix_conn *c, struct idl_xmsg *m, struct idl_deadline *dl, const int ahead)
{
	/* What does not fit the caller's buffer spills over: a message with descriptors
	 * brings its small data after it (unix_desc.c). */
	struct iovec iov[2] = { { m->data, m->cap }, { c->spill, UNIX_SPILL } };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * IDL_DESC_MAX)];
	} cm;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = c->spill != NULL ? 2 : 1 };

	m->nfds = 0;
	for (;;) {
		int t = idl__sock_timeo(c->fd, SO_RCVTIMEO, &c->rcvtimeo_us, dl);
		int flags = MSG_TRUNC | MSG_CMSG_CLOEXEC | (t == 1 ? MSG_DONTWAIT : 0);
		ssize_t n;

		if (t < 0)
			return t;
		/* MSG_TRUNC makes recvmsg return the message's true length. */
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof cm.buf;
		n = ahead ? idl__sock_ra_recv(&c->ra, c->fd, &mh, flags)
			  : idl__sys_recvmsg(c->fd, &mh, flags);
		if (n > 0)
			return idl__unix_received(c, m, &mh, (size_t)n);
		if (n == 0) /* end of file: the peer closed (or we shut the socket down) */
			return idl__unix_conn_err(c, EPIPE);
		if (errno == EINTR) {
			idl__sock_again(dl);
			continue;
		}
		if (errno == EAGAIN) {
			if (t == 1 || idl__sock_late(dl))
				return IDL_ETIMEDOUT;
			continue;
		}
		if (errno == ECONNRESET)
			return unix_recv_after_reset(c, m, &mh, sizeof cm.buf);
		return idl__unix_conn_err(c, errno);
	}
}

/* The next message read ahead, handed to m as the receive that took it would have. */
static inline __attribute__((always_inline)) int
unix_ra_take(struct unix_conn *c, struct idl_xmsg *m)
{
	size_t n, got;
	const struct msghdr *h = idl__sock_ra_next(&c->ra, &n, &got);
	size_t first;
	struct msghdr mh;

	m->nfds = 0;
	/* The usual message of a run - whole, no control data, no descriptors, room for it -
	 * needs nothing of what follows: the copy, and its length. */
	if (__builtin_expect(h->msg_controllen == 0 && got == n && n <= m->cap &&
				     !idl__desc_msg(h->msg_iov[0].iov_base, n),
			     1)) {
		memcpy(m->data, h->msg_iov[0].iov_base, n);
		m->len = n;
		return 0;
	}
	first = got < m->cap ? got : m->cap;
	mh = (struct msghdr){ .msg_control = h->msg_control,
			      .msg_controllen = h->msg_controllen,
			      .msg_flags = h->msg_flags };
	memcpy(m->data, h->msg_iov[0].iov_base, first);
	if (got > first) {
		/* The rest goes where the receive puts it: the spill, or nowhere. */
		size_t rest = got - first;

		if (c->spill != NULL)
			memcpy(c->spill, (const unsigned char *)h->msg_iov[0].iov_base + first,
			       rest < UNIX_SPILL ? rest : UNIX_SPILL);
		if (c->spill == NULL || rest > UNIX_SPILL)
			mh.msg_flags |= MSG_TRUNC;
	}
	return idl__unix_received(c, m, &mh, n);
}

static __attribute__((noinline)) int
unix_ra_pop(struct unix_conn *c, struct idl_xmsg *m)
{
	return unix_ra_take(c, m);
}

static __attribute__((noinline)) int
unix_recv_ahead(struct unix_conn *c, struct idl_xmsg *m, struct idl_deadline *dl)
{
	return unix_recv_loop(c, m, dl, 1);
}

/* One message; `may_ra` (a constant): this receive may read ahead (the server's, and a
 * pollable port's non-blocking one; never a client's blocking one, whose caller may wait for
 * readiness). Messages read ahead before are handed out first. Reading ahead happens while
 * the peer is seen sending several at once, and is looked for now and then (sock_ra.h); the
 * common receive of one message pays two tests for it. */
static inline __attribute__((always_inline)) int
unix_recv(struct unix_conn *c, struct idl_xmsg *m, struct idl_deadline *dl, const int may_ra)
{
	if (__builtin_expect(c->ra.left != 0, 0))
		return unix_ra_pop(c, m);
	if (may_ra && __builtin_expect(--c->ra.wait == 0, 0))
		return unix_recv_ahead(c, m, dl);
	return unix_recv_loop(c, m, dl, 0);
}

int
idl__unix_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	return unix_recv(vconn, m, dl, 0);
}

int
idl__unix_recv_ra(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	return unix_recv(vconn, m, dl, 1);
}

/* conn_recv_ev, the server's receive, which reads ahead and says whether it holds more, is
 * two functions that it jumps to: a message read ahead is popped without entering the
 * receive, whose registers would be saved and restored around every message of a run. */
static __attribute__((noinline)) int
unix_recv_ev_ra(struct unix_conn *c, struct idl_xmsg *m, unsigned *events)
{
	int err = unix_ra_take(c, m);

	*events = c->ra.left != 0 ? IDL_TR_EV_MORE : 0;
	return err;
}

static __attribute__((noinline)) int
unix_recv_ev_wait(struct unix_conn *c, struct idl_xmsg *m, struct idl_deadline *dl,
		  unsigned *events)
{
	int err = unix_recv(c, m, dl, 1);

	*events = c->ra.left != 0 ? IDL_TR_EV_MORE : 0;
	return err;
}

static int
unix_recv_ev(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl, unsigned *events)
{
	struct unix_conn *c = vconn;

	if (c->ra.left != 0)
		return unix_recv_ev_ra(c, m, events);
	return unix_recv_ev_wait(c, m, dl, events);
}

static int
unix_conn_cred(void *vconn, struct idl_cred *cred)
{
	struct unix_conn *c = vconn;

	*cred = c->cred;
	return c->cred.valid ? 0 : IDL_ENOTSUP;
}

static void
unix_conn_close(void *vconn)
{
	struct unix_conn *c = vconn;

	/* shutdown, not close: it wakes a thread blocked in recvmsg on this socket, and the
	 * descriptor stays valid (not reused) until conn_fini. */
	atomic_store(&c->closed, 1);
	if (c->open)
		shutdown(c->fd, SHUT_RDWR);
}

static void
unix_conn_fini(void *vconn)
{
	struct unix_conn *c = vconn;

	if (c->open)
		close(c->fd);
	c->open = 0;
	free(c->spill);
	c->spill = NULL;
	idl__unix_pend_free(c);
	idl__sock_ra_free(&c->ra);
}

static const struct idl_transport unix_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "unix",
	.flags = IDL_TRF_FDPASS | IDL_TRF_CRED | IDL_TRF_DESC | IDL_TRF_WHOLE,
	.ep_size = sizeof(struct unix_ep),
	.conn_size = sizeof(struct unix_conn),
	.ep_listen = unix_ep_listen,
	.ep_fd = unix_ep_fd,
	.ep_accept = unix_ep_accept,
	.ep_close = unix_ep_close,
	.ep_fini = unix_ep_fini,
	.conn_connect = unix_conn_connect,
	.conn_send = unix_conn_send,
	.conn_recv = idl__unix_recv,
	.conn_cred = unix_conn_cred,
	.conn_close = unix_conn_close,
	.conn_fini = unix_conn_fini,
	.conn_fd = idl__unix_fd,
	.conn_sendv_nb = idl__unix_sendv_nb,
	.conn_recv_nb = idl__unix_recv_nb,
	.conn_recv_ev = unix_recv_ev,
	.ep_adopt = unix_ep_adopt,
};

int
idl__unix_adopt(int fd, idl_port_t *portp)
{
	struct sockaddr_un sa;
	socklen_t sl = sizeof sa;
	char address[sizeof sa.sun_path + 8];
	struct unix_conn *c;

	*portp = NULL;
	memset(&sa, 0, sizeof sa);
	/* The path the peer's listening socket was bound to names the port, so that a call
	 * after the server restarts reconnects there. */
	if (getpeername(fd, (struct sockaddr *)&sa, &sl) != 0 || sa.sun_family != AF_UNIX ||
	    sl <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0] == '\0')
		sa.sun_path[0] = '\0';
	sa.sun_path[sizeof sa.sun_path - 1] = '\0';
	snprintf(address, sizeof address, "unix:%s", sa.sun_path);
	if ((c = idl__zalloc(sizeof *c)) == NULL) {
		close(fd);
		return idl__fail(IDL_ENOMEM, "unix: out of memory for a received port");
	}
	c->fd = fd;
	c->open = 1;
	idl__sock_ra_init(&c->ra);
	idl__sockfile_peercred(fd, &c->cred);
	if ((c->spill = malloc(UNIX_SPILL)) == NULL) {
		unix_conn_fini(c);
		free(c);
		return idl__fail(IDL_ENOMEM, "unix: out of memory for a received port");
	}
	return idl__port_adopt(&unix_transport, address, c, portp);
}

void
idl__unix_register(void)
{
	int err = idl_transport_register(&unix_transport);

	/* The built-in table is complete and registered first: failing is a bug here. */
	assert(err == 0);
	(void)err;
}
