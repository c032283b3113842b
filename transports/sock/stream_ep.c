/*
 * stream_ep.c - a stream's endpoints and the ends of its connections (stream.h): listening
 * on HOST:PORT, accepting with keepalive and TCP_NODELAY, closing, and what the socket tells
 * of the peer.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inet.h"
#include "sock_adopt.h"
#include "stream.h"

/* A server drops a client that stays silent and unreachable this long: keepalive after
 * STREAM_KEEPIDLE_S idle seconds, every STREAM_KEEPINTVL_S, STREAM_KEEPCNT probes. */
#define STREAM_KEEPIDLE_S 60
#define STREAM_KEEPINTVL_S 10
#define STREAM_KEEPCNT 6

int
idl__stream_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int
idl__stream_ep_listen(void *vep, const char *rest, const struct idl_listen_opts *opts)
{
	struct stream_ep *ep = vep;
	const char *scheme = ep->scheme != NULL ? ep->scheme : "tcp";
	struct inet_addrs as;
	int err, fd = IDL_EADDRINVAL;

	(void)opts; /* no filesystem object: the mode does not apply */
	if ((err = idl__inet_resolve(scheme, rest, 1, &as)) != 0)
		return err;
	for (unsigned i = 0; i < as.n; i++) {
		idl__clear_detail();
		fd = idl__inet_socket(scheme, &as.a[i], SOCK_STREAM, 1, 1);
		/* Only the absence of a family makes the next address worth trying. */
		if (fd >= 0 || fd != IDL_ESYSERR(EAFNOSUPPORT))
			break;
	}
	if (fd < 0)
		return idl_errdetail()[0] != '\0'
			       ? fd
			       : idl__inet_sysfail(IDL_SYSERR_ERRNO(fd), scheme, rest, "socket");
	ep->fd = fd;
	ep->open = 1;
	snprintf(ep->name, sizeof ep->name, "%s", rest);
	if (listen(fd, SOMAXCONN) != 0)
		return idl__inet_sysfail(errno, scheme, rest, "listen");
	return 0;
}

int
idl__stream_ep_adopt(void *vep, int fd, const struct idl_listen_opts *opts)
{
	static const struct idl__sock_want want = {
		.family = AF_INET,
		.type = SOCK_STREAM,
		.protocol = IPPROTO_TCP,
		.listening = 1,
		.nonblock = 1,
		.needs = "a listening TCP socket (ListenStream=[HOST:]PORT)",
	};
	struct stream_ep *ep = vep;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	(void)opts; /* no filesystem object: the mode does not apply */
	ep->fd = fd;
	ep->open = 1;
	ep->adopted = 1;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		idl__inet_format((struct sockaddr *)&ss, sl, ep->name, sizeof ep->name);
	return idl__sock_adopt(ep->scheme != NULL ? ep->scheme : "tcp", fd, &want);
}

int
idl__stream_ep_fd(void *vep)
{
	return ((struct stream_ep *)vep)->fd;
}

int
idl__stream_ep_accept(void *vep, void *vconn)
{
	struct stream_ep *ep = vep;
	struct stream_conn *c = vconn;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int one = 1, idle = STREAM_KEEPIDLE_S, intvl = STREAM_KEEPINTVL_S, cnt = STREAM_KEEPCNT;

	c->fd = accept4(ep->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	if (c->fd < 0)
		return IDL_ESYSERR(errno);
	c->open = 1;
	idl__inet_format((struct sockaddr *)&ss, sl, c->name, sizeof c->name);
	/* The server blocks in a receive without a deadline: keepalive is how it learns
	 * that a client's machine went away without a word. Failing to set it is not fatal. */
	(void)setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	if (idl__stream_nodelay(c->fd) != 0)
		return IDL_ESYSERR(errno);
	return 0;
}

void
idl__stream_ep_close(void *vep)
{
	struct stream_ep *ep = vep;

	if (ep->open && !ep->adopted)
		shutdown(ep->fd, SHUT_RDWR);
}

void
idl__stream_ep_fini(void *vep)
{
	struct stream_ep *ep = vep;

	if (ep->open)
		close(ep->fd);
	ep->open = 0;
}

void
idl__stream_conn_close(void *vconn)
{
	struct stream_conn *c = vconn;

	/* shutdown, not close: it wakes a thread blocked in recvmsg, and the descriptor
	 * number is not reused until conn_fini. */
	atomic_store(&c->closed, 1);
	if (c->open)
		shutdown(c->fd, SHUT_RDWR);
}

void
idl__stream_conn_fini(void *vconn)
{
	struct stream_conn *c = vconn;

	if (c->open)
		close(c->fd);
	c->open = 0;
	free(c->carry);
	c->carry = NULL;
	idl__stream_rx_drop(c);
	free(c->out);
	c->out = NULL;
	c->out_len = 0;
	free(c->pend);
	c->pend = NULL;
}

/* What TCP can tell of the peer: its address, never its identity (docs/security.md). The
 * peer's address as the socket has it, so a client's port reports the server it reached. */
int
idl__stream_conn_cred(void *vconn, struct idl_cred *cred)
{
	struct stream_conn *c = vconn;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[80];

	memset(cred, 0, sizeof *cred);
	if (!c->open || getpeername(c->fd, (struct sockaddr *)&ss, &sl) != 0)
		return IDL_ENOTSUP;
	idl__inet_format((struct sockaddr *)&ss, sl, host, sizeof host);
	snprintf(cred->addr, sizeof cred->addr, "%s:%s", stream_scheme(c), host);
	return 0;
}
