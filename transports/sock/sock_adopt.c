/*
 * sock_adopt.c - the checks of a socket the process was given (sock_adopt.h).
 *
 * A service manager passes a socket that it made from a unit file, and a unit file is easy
 * to get wrong (ListenStream= where ListenSequentialPacket= was meant, a datagram port for a
 * stream one, SocketMode= left at 0666). A transport that took such a socket as it came
 * would fail later, on the first client, with an error that names neither the socket nor
 * the unit; so the socket is checked when the endpoint is made, and the detail says what was
 * passed and what is needed.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "sock_adopt.h"

static const char *
sock_family_name(int f, char *buf, size_t n)
{
	switch (f) {
	case AF_UNIX:
		return "AF_UNIX";
	case AF_INET:
		return "AF_INET";
	case AF_INET6:
		return "AF_INET6";
	case AF_NETLINK:
		return "AF_NETLINK";
	default:
		snprintf(buf, n, "family %d", f);
		return buf;
	}
}

static const char *
sock_type_name(int t, char *buf, size_t n)
{
	switch (t) {
	case SOCK_STREAM:
		return "SOCK_STREAM";
	case SOCK_DGRAM:
		return "SOCK_DGRAM";
	case SOCK_SEQPACKET:
		return "SOCK_SEQPACKET";
	case SOCK_RAW:
		return "SOCK_RAW";
	default:
		snprintf(buf, n, "type %d", t);
		return buf;
	}
}

static int
sock_opt(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof v;

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) != 0)
		return -1;
	return v;
}

/* Whether a socket of the internet families is bound to a port. */
static int
sock_bound(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ((struct sockaddr_in *)&ss)->sin_port != 0;
	if (ss.ss_family == AF_INET6)
		return ((struct sockaddr_in6 *)&ss)->sin6_port != 0;
	return len > sizeof(sa_family_t);
}

/* Whether a socket has a peer (one accepted, as Accept=yes passes them, or connected). */
static int
sock_connected(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	return getpeername(fd, (struct sockaddr *)&ss, &len) == 0;
}

void
idl__sock_describe(int fd, char *buf, size_t n)
{
	char fb[24], tb[24], pb[24] = "";
	struct mq_attr a;
	struct stat st;
	int family, type, proto;

	if (fstat(fd, &st) != 0) {
		snprintf(buf, n, "no open descriptor (%s)", strerror(errno));
		return;
	}
	if (!S_ISSOCK(st.st_mode)) {
		if (mq_getattr((mqd_t)fd, &a) == 0)
			snprintf(buf, n, "a POSIX message queue");
		else
			snprintf(buf, n, "%s",
				 S_ISREG(st.st_mode)	? "a regular file"
				 : S_ISFIFO(st.st_mode) ? "a FIFO"
				 : S_ISCHR(st.st_mode)	? "a character device"
				 : S_ISDIR(st.st_mode)	? "a directory"
							: "not a socket");
		return;
	}
	family = sock_opt(fd, SO_DOMAIN);
	type = sock_opt(fd, SO_TYPE);
	proto = sock_opt(fd, SO_PROTOCOL);
	if ((family == AF_INET || family == AF_INET6) && proto != IPPROTO_TCP &&
	    proto != IPPROTO_UDP && proto > 0)
		snprintf(pb, sizeof pb, " (protocol %d)", proto);
	snprintf(buf, n, "a%s %s %s socket%s",
		 sock_opt(fd, SO_ACCEPTCONN) == 1 ? " listening"
		 : sock_connected(fd)		  ? " connected"
		 : sock_bound(fd)		  ? " bound"
						  : "n unbound",
		 sock_family_name(family, fb, sizeof fb), sock_type_name(type, tb, sizeof tb), pb);
}

int
idl__sock_mode_wider(unsigned mode, unsigned allowed)
{
	if (allowed == 0)
		allowed = 0600;
	/* Connecting to a socket file (and sending to a queue) takes write permission. */
	return (mode & 0022 & ~allowed) != 0;
}

/* Sets O_NONBLOCK as `on` says: 0 or a system error. */
static int
sock_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return IDL_ESYSERR(errno);
	if (((fl & O_NONBLOCK) != 0) == (on != 0))
		return 0;
	/* The flag is the open file's, which the manager shares: it only ever waits for the
	 * socket to be readable, which the flag does not change. */
	if (fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) != 0)
		return IDL_ESYSERR(errno);
	return 0;
}

int
idl__sock_adopt(const char *scheme, int fd, const struct idl__sock_want *w)
{
	int family = sock_opt(fd, SO_DOMAIN), type = sock_opt(fd, SO_TYPE);
	int proto = sock_opt(fd, SO_PROTOCOL), err;
	int family_ok = w->family == AF_INET ? family == AF_INET || family == AF_INET6
					     : family == w->family;
	char what[96];

	if (!family_ok || type != w->type || (w->protocol != 0 && proto != w->protocol) ||
	    (w->listening ? sock_opt(fd, SO_ACCEPTCONN) != 1
			  : sock_opt(fd, SO_ACCEPTCONN) == 1 || !sock_bound(fd))) {
		idl__sock_describe(fd, what, sizeof what);
		return idl__fail(IDL_EADDRINVAL, "the passed descriptor is %s; %s: needs %s", what,
				 scheme, w->needs);
	}
	if ((err = sock_set_nonblock(fd, w->nonblock)) != 0)
		return idl__fail(err, "%s: fcntl on the passed descriptor: %s", scheme,
				 strerror(IDL_SYSERR_ERRNO(err)));
	return 0;
}

int
idl__sockfile_adopt(struct idl__sockfile *l, const char *scheme, int fd,
		    const struct idl_listen_opts *opts)
{
	const struct idl__sock_want want = {
		.family = AF_UNIX,
		.type = SOCK_SEQPACKET,
		.listening = 1,
		.nonblock = 1,
		.needs = "a listening AF_UNIX SOCK_SEQPACKET socket file "
			 "(ListenSequentialPacket=/PATH)",
	};
	struct sockaddr_un sa;
	socklen_t len = sizeof sa;
	struct stat st;
	int err;

	/* The descriptor is the endpoint's from here, whatever the checks say. */
	l->fd = fd;
	l->open = 1;
	l->adopted = 1;
	if ((err = idl__sock_adopt(scheme, fd, &want)) != 0)
		return err;
	memset(&sa, 0, sizeof sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		return idl__fail(IDL_ESYSERR(errno), "%s: getsockname on the passed socket: %s",
				 scheme, strerror(errno));
	/* Only a socket file has permissions to check; an abstract name has none. */
	if (len <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0] == '\0')
		return idl__fail(IDL_EADDRINVAL,
				 "the passed socket is abstract or unnamed, which no file "
				 "permission protects; %s: needs a socket file",
				 scheme);
	sa.sun_path[sizeof sa.sun_path - 1] = '\0';
	memcpy(l->path, sa.sun_path, sizeof l->path);
	if (stat(l->path, &st) != 0)
		return idl__fail(IDL_EACCES,
				 "%s:%s: the passed socket's mode cannot be checked: stat: %s",
				 scheme, l->path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return idl__fail(IDL_EADDRINVAL, "%s:%s: the passed socket's path is not a socket",
				 scheme, l->path);
	if (idl__sock_mode_wider(st.st_mode, opts != NULL ? opts->mode : 0600))
		return idl__fail(IDL_EACCES,
				 "%s:%s: the passed socket file has mode %04o: others may connect "
				 "(idlkit serves owner-only sockets: SocketMode=0600)",
				 scheme, l->path, (unsigned)(st.st_mode & 07777));
	return 0;
}
