/*
 * stream_connect.c - connecting a tcp: client: with a deadline (conn_connect), or without
 * blocking (conn_connect_nb, then conn_connect_step each time the socket becomes writable),
 * which the pollable port uses so that an event loop never waits for a handshake.
 *
 * Both try the addresses the name has in the resolver's order until one answers. The
 * socket is non-blocking while it connects, and blocking afterwards (the blocking operations
 * bound their waits with socket timeouts); TCP_NODELAY is set, since every message is a
 * whole frame that must leave at once. A numeric address is resolved without a system call;
 * a name asks the resolver, which may block for as long as the system's resolver does.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inet.h"
#include "stream.h"

/* Waits for a non-blocking connect to finish within the deadline; 0 or an errno. */
static int
stream_connect_wait(int fd, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t sl = sizeof(int);
	int e = 0;

	for (;;) {
		int64_t left =
			deadline == IDL_DEADLINE_NONE ? -1 : (deadline - idl_now_ns()) / 1000000;
		int r;

		if (deadline != IDL_DEADLINE_NONE && left <= 0)
			return ETIMEDOUT;
		r = poll(&pfd, 1, left < 0 ? -1 : left > 60000 ? 60000 : (int)left + 1);
		if (r < 0 && errno != EINTR)
			return errno;
		if (r > 0)
			break;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) != 0)
		return errno;
	return e;
}

/* A connected socket becomes the connection's: blocking, TCP_NODELAY. 0 or an errno (fd
 * closed); ECONNREFUSED for a socket connected to itself (idl__inet_self()). */
static int
stream_connected(struct stream_conn *c, int fd)
{
	if (idl__inet_self(fd)) {
		close(fd);
		return ECONNREFUSED;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
	    idl__stream_nodelay(fd) != 0) {
		int e = errno;

		close(fd);
		return e;
	}
	c->fd = fd;
	c->open = 1;
	return 0;
}

int
idl__stream_conn_connect(void *vconn, const char *rest, struct idl_deadline *dl)
{
	struct stream_conn *c = vconn;
	int64_t deadline = idl_deadline_abs(dl); /* connecting is not the fast path */
	struct inet_addrs as;
	int err, e = 0;

	if ((err = idl__inet_resolve(stream_scheme(c), rest, 0, &as)) != 0)
		return err;
	snprintf(c->name, sizeof c->name, "%s", rest);
	for (unsigned i = 0; i < as.n; i++) {
		int fd = idl__inet_socket(stream_scheme(c), &as.a[i], SOCK_STREAM, 0, 1);

		if (fd < 0) {
			e = IDL_SYSERR_ERRNO(fd);
			continue;
		}
		if (connect(fd, (struct sockaddr *)&as.a[i].sa, as.a[i].len) == 0)
			e = 0;
		else if (errno == EINPROGRESS)
			e = stream_connect_wait(fd, deadline);
		else
			e = errno;
		if (e == 0) {
			if ((e = stream_connected(c, fd)) == 0)
				return 0;
		} else {
			close(fd);
		}
		if (e == ETIMEDOUT)
			break;
	}
	if (e == ETIMEDOUT)
		return idl__fail(IDL_ETIMEDOUT, "%s:%s: connect: no answer before the deadline",
				 stream_scheme(c), rest);
	return idl__inet_sysfail(e, stream_scheme(c), rest, "connect");
}

/* Starts a connect to the next address of c->pend: IDL_EAGAIN while it is in progress
 * (c->fd is its socket), 0 once connected, or the error of the last address tried when none
 * is left (c->pend freed then, as on success). */
static int
stream_connect_next(struct stream_conn *c, int e)
{
	while (c->pend_next < c->pend->n) {
		struct inet_addr *a = &c->pend->a[c->pend_next++];
		int fd = idl__inet_socket(stream_scheme(c), a, SOCK_STREAM, 0, 1);

		if (fd < 0) {
			e = IDL_SYSERR_ERRNO(fd);
			continue;
		}
		if (connect(fd, (struct sockaddr *)&a->sa, a->len) == 0) {
			if ((e = stream_connected(c, fd)) == 0)
				break;
			continue;
		}
		if (errno == EINPROGRESS) {
			/* Open while it connects, so that conn_fini closes it. */
			c->fd = fd;
			c->open = 1;
			return IDL_EAGAIN;
		}
		e = errno;
		close(fd);
	}
	free(c->pend);
	c->pend = NULL;
	return e == 0 ? 0 : idl__inet_sysfail(e, stream_scheme(c), c->name, "connect");
}

int
idl__stream_connect_nb(void *vconn, const char *rest)
{
	struct stream_conn *c = vconn;
	int err;

	snprintf(c->name, sizeof c->name, "%s", rest);
	if ((c->pend = malloc(sizeof *c->pend)) == NULL)
		return idl__fail(IDL_ENOMEM, "%s:%s: out of memory", stream_scheme(c), rest);
	if ((err = idl__inet_resolve(stream_scheme(c), rest, 0, c->pend)) != 0) {
		free(c->pend);
		c->pend = NULL;
		return err;
	}
	c->pend_next = 0;
	return stream_connect_next(c, ENOTCONN);
}

int
idl__stream_connect_step(void *vconn)
{
	struct stream_conn *c = vconn;
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	socklen_t sl = sizeof(int);
	int e = 0, fd = c->fd;

	if (c->pend == NULL)
		return 0;
	/* SO_ERROR is 0 while the handshake is still going on: writability says it ended. */
	if (poll(&pfd, 1, 0) == 0)
		return IDL_EAGAIN;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) != 0)
		e = errno;
	c->open = 0;
	if (e == 0) {
		if ((e = stream_connected(c, fd)) == 0) {
			free(c->pend);
			c->pend = NULL;
			return 0;
		}
	} else {
		close(fd);
	}
	/* The next address, if the name has another. */
	return stream_connect_next(c, e);
}
