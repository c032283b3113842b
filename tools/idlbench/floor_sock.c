/*
 * floor_sock.c - the raw floors of the socket transports: AF_UNIX SOCK_SEQPACKET, TCP with
 * TCP_NODELAY, and connected UDP. Ours, no runtime: a message is one send() and one recv()
 * (TCP reads with MSG_WAITALL, so a message is one recv() as well), blocking. The client's
 * socket carries a call's deadline, SO_RCVTIMEO and SO_SNDTIMEO set once, as a port's
 * socket keeps them set while its deadline does not change; the server's waits have none,
 * as the runtime's server waits have none.
 * They are what a row's stub overhead is measured against (DESIGN.md, "The floor").
 *
 * Layer 1, the floors (ib_floor.h): it knows the base and the job it is given; it must not
 * know rows, columns, cells, runs or reports.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ib_floor.h"

/* The most messages one sendmmsg() or recvmmsg() takes (UIO_MAXIOV), and --inflight's bound. */
#define FL_BATCH_MAX 1024u

/* The largest message one SEQPACKET send carries here (perf-notes: ~212 KB fails). */
#define FL_UNIX_MAX (200u * 1024u)
/* UDP over IPv4: 65,535 - 8 (UDP) - 20 (IP). */
#define FL_UDP_MAX 65507u

/* Gives a client's connected socket the deadline of its calls; 0 or -1. */
static int
fl_deadline(int fd)
{
	struct timeval tv = { FL_DEADLINE_S, 0 };

	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
			       setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0
		       ? 0
		       : -1;
}

static void
fl_chan_init(struct fl_chan *c)
{
	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->rfd = -1;
}

static int
fl_unix_addr(const char *rest, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(rest) >= sizeof sa->sun_path)
		return -1;
	memcpy(sa->sun_path, rest, strlen(rest) + 1);
	return 0;
}

/* "127.0.0.1:7000" (IPv4 only: the floors run on loopback). */
static int
fl_inet_addr(const char *rest, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(rest, ':');
	char *end;
	long port;

	if (colon == NULL || (size_t)(colon - rest) >= sizeof host)
		return -1;
	memcpy(host, rest, (size_t)(colon - rest));
	host[colon - rest] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port <= 0 || port > 65535)
		return -1;
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static int
fl_send(struct fl_chan *c, const void *buf, size_t len)
{
	ssize_t n;

	do
		n = send(c->fd, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

static long
fl_recv_msg(struct fl_chan *c, void *buf, size_t len, size_t cap)
{
	ssize_t n;

	(void)len;
	do
		n = recv(c->fd, buf, cap, 0);
	while (n < 0 && errno == EINTR);
	return (long)n;
}

static void
fl_close(struct fl_chan *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void
fl_unlisten(struct fl_listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->name[0] != '\0')
		unlink(l->name);
	l->name[0] = '\0';
}

static int
fl_accept(struct fl_listener *l, struct fl_chan *c)
{
	fl_chan_init(c);
	do
		c->fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	while (c->fd < 0 && errno == EINTR);
	return c->fd < 0 ? -1 : 0;
}

/* unix: SOCK_SEQPACKET, the socket file 0600 from the start (fchmod before bind). */
static int
fl_unix_listen(struct fl_listener *l, const char *rest, size_t msgmax)
{
	struct sockaddr_un sa;

	(void)msgmax;
	memset(l, 0, sizeof *l);
	if (fl_unix_addr(rest, &sa) != 0)
		return -1;
	l->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return -1;
	if (fchmod(l->fd, 0600) != 0 || bind(l->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return -1;
	snprintf(l->name, sizeof l->name, "%s", rest);
	return listen(l->fd, 16);
}

static int
fl_unix_connect(struct fl_chan *c, const char *rest, size_t msgmax)
{
	struct sockaddr_un sa;

	(void)msgmax;
	fl_chan_init(c);
	if (fl_unix_addr(rest, &sa) != 0)
		return -1;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return -1;
	return fl_deadline(c->fd);
}

/* Waits until the socket has room to write. */
static int
fl_wait_out(int fd)
{
	struct pollfd p = { fd, POLLOUT, 0 };
	int n;

	do
		n = poll(&p, 1, -1);
	while (n < 0 && errno == EINTR);
	return n > 0 ? 0 : -1;
}

/*
 * The batches of --inflight (floor_pipe.c) on a socket of messages (unix, udp): one
 * sendmmsg() for the messages to send, one recvmmsg() that waits for the first message and
 * takes those already queued behind it. A send never blocks once a message went: it stops
 * where the socket's buffer is full (and waits for room first only when asked to and
 * nothing went yet), so that a side waiting to send never waits for a peer that is itself
 * waiting to send.
 */
static long
fl_send_mmsg(struct fl_chan *c, const void *buf, size_t len, unsigned count, int wait)
{
	struct mmsghdr mm[FL_BATCH_MAX];
	struct iovec iov[FL_BATCH_MAX];
	unsigned sent = 0;

	if (count > FL_BATCH_MAX)
		count = FL_BATCH_MAX;
	for (unsigned i = 0; i < count; i++) {
		iov[i].iov_base = (char *)buf + (size_t)i * len;
		iov[i].iov_len = len;
		memset(&mm[i], 0, sizeof mm[i]);
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	while (sent < count) {
		int n = sendmmsg(c->fd, mm + sent, count - sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait || sent > 0)
				break;
			if (fl_wait_out(c->fd) != 0)
				return -1;
			continue;
		}
		if (n < 0)
			return -1;
		sent += (unsigned)n;
	}
	return (long)sent;
}

static long
fl_recv_mmsg(struct fl_chan *c, void *buf, size_t len, size_t cap, unsigned max)
{
	struct mmsghdr mm[FL_BATCH_MAX];
	struct iovec iov[FL_BATCH_MAX];
	int n;

	(void)len;
	if (max > FL_BATCH_MAX)
		max = FL_BATCH_MAX;
	for (unsigned i = 0; i < max; i++) {
		iov[i].iov_base = (char *)buf + (size_t)i * cap;
		iov[i].iov_len = cap;
		memset(&mm[i], 0, sizeof mm[i]);
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	do
		n = recvmmsg(c->fd, mm, max, MSG_WAITFORONE, NULL);
	while (n < 0 && errno == EINTR);
	/* A SEQPACKET socket whose peer closed gives one empty message: the end. */
	if (n > 0 && mm[0].msg_len == 0)
		return 0;
	return n;
}

const struct fl_ops fl_unix_ops = {
	.scheme = "unix",
	.max_msg = FL_UNIX_MAX,
	.listen = fl_unix_listen,
	.accept = fl_accept,
	.connect = fl_unix_connect,
	.send = fl_send,
	.recv = fl_recv_msg,
	.close = fl_close,
	.unlisten = fl_unlisten,
	.send_batch = fl_send_mmsg,
	.recv_batch = fl_recv_mmsg,
	.batching = "sendmmsg() and recvmmsg()",
};

/* tcp: a stream with TCP_NODELAY on both ends; a message is read whole with MSG_WAITALL. */
static void
fl_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int
fl_tcp_listen(struct fl_listener *l, const char *rest, size_t msgmax)
{
	struct sockaddr_in sa;
	int one = 1;

	(void)msgmax;
	memset(l, 0, sizeof *l);
	if (fl_inet_addr(rest, &sa) != 0)
		return -1;
	l->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return -1;
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return -1;
	return listen(l->fd, 16);
}

static int
fl_tcp_accept(struct fl_listener *l, struct fl_chan *c)
{
	if (fl_accept(l, c) != 0)
		return -1;
	fl_nodelay(c->fd);
	return 0;
}

static int
fl_tcp_connect(struct fl_chan *c, const char *rest, size_t msgmax)
{
	struct sockaddr_in sa;

	(void)msgmax;
	fl_chan_init(c);
	if (fl_inet_addr(rest, &sa) != 0)
		return -1;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -1;
	fl_nodelay(c->fd);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return -1;
	return fl_deadline(c->fd);
}

static long
fl_tcp_recv(struct fl_chan *c, void *buf, size_t len, size_t cap)
{
	size_t got = 0;

	(void)cap;
	while (got < len) {
		ssize_t n = recv(c->fd, (char *)buf + got, len - got, MSG_WAITALL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		got += (size_t)n;
	}
	return (long)got;
}

/*
 * tcp's batches: the frames to send go in one send() (they lie back to back in buf), and
 * one recv() takes what has arrived, up to max frames. A send stops where the socket's
 * buffer is full, as a socket of messages does (it waits for room only when asked to and
 * no frame went yet), so it may stop inside a frame, and a read may end inside one: head
 * and tail keep how far, so that the next send goes on from there and the next read
 * completes it.
 */
static long
fl_tcp_send_batch(struct fl_chan *c, const void *buf, size_t len, unsigned count, int wait)
{
	size_t total = (size_t)count * len, done = (size_t)c->head;

	while (done < total) {
		ssize_t n = send(c->fd, (const char *)buf + done, total - done,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait || done >= len)
				break;
			if (fl_wait_out(c->fd) != 0)
				return -1;
			continue;
		}
		if (n < 0)
			return -1;
		done += (size_t)n;
	}
	c->head = done % len;
	return (long)(done / len);
}

static long
fl_tcp_recv_batch(struct fl_chan *c, void *buf, size_t len, size_t cap, unsigned max)
{
	size_t have = (size_t)c->tail, want = (size_t)max * len;

	(void)cap;
	while (have < len) {
		ssize_t n = recv(c->fd, (char *)buf + have, want - have, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		have += (size_t)n;
	}
	c->tail = have % len;
	return (long)(have / len);
}

/* The tcp: transport frames each message with a 4-byte length (transports/tcp/tcp.c): the floor
 * sends the same bytes, prefix included, in one send. */
const struct fl_ops fl_tcp_ops = {
	.scheme = "tcp",
	.max_msg = SIZE_MAX,
	.frame = 4,
	.listen = fl_tcp_listen,
	.accept = fl_tcp_accept,
	.connect = fl_tcp_connect,
	.send = fl_send,
	.recv = fl_tcp_recv,
	.close = fl_close,
	.unlisten = fl_unlisten,
	.send_batch = fl_tcp_send_batch,
	.recv_batch = fl_tcp_recv_batch,
	.batching = "one send() of many frames, one recv() of what has arrived",
};

/*
 * udp: connected sockets on both ends. The client's connect sends a one-byte hello; the
 * server's accept takes it and connects its socket to the sender, so that from then on
 * both sides use send() and recv() (seed 003: connected sockets are the fast path).
 */
static int
fl_udp_listen(struct fl_listener *l, const char *rest, size_t msgmax)
{
	struct sockaddr_in sa;
	int big = 4 << 20;

	(void)msgmax;
	memset(l, 0, sizeof *l);
	if (fl_inet_addr(rest, &sa) != 0)
		return -1;
	l->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return -1;
	/* The same receive buffer as the udp: transport's server, so that one-way bursts are
	 * dropped (or not) alike. */
	if (setsockopt(l->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
		(void)setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	return bind(l->fd, (struct sockaddr *)&sa, sizeof sa);
}

static int
fl_udp_accept(struct fl_listener *l, struct fl_chan *c)
{
	struct sockaddr_in from;
	socklen_t fromlen = sizeof from;
	char hello;
	ssize_t n;

	fl_chan_init(c);
	do
		n = recvfrom(l->fd, &hello, 1, 0, (struct sockaddr *)&from, &fromlen);
	while (n < 0 && errno == EINTR);
	if (n != 1 || connect(l->fd, (struct sockaddr *)&from, fromlen) != 0)
		return -1;
	/* The channel takes the socket over. */
	c->fd = l->fd;
	l->fd = -1;
	return 0;
}

static int
fl_udp_connect(struct fl_chan *c, const char *rest, size_t msgmax)
{
	struct sockaddr_in sa, local;
	char hello = 'H';

	(void)msgmax;
	fl_chan_init(c);
	if (fl_inet_addr(rest, &sa) != 0)
		return -1;
	/* A bind to an explicit port keeps it when fl_udp_disconnect() undoes the connect
	 * (a port the kernel picked, even at bind, is released), so the server's connected
	 * socket still takes our datagrams. The port is found with a first socket. */
	memset(&local, 0, sizeof local);
	local.sin_family = AF_INET;
	local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 2; i++) {
		socklen_t len = sizeof local;

		if (c->fd >= 0)
			close(c->fd);
		c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&local, sizeof local) != 0 ||
		    getsockname(c->fd, (struct sockaddr *)&local, &len) != 0)
			return -1;
	}
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0 || fl_deadline(c->fd) != 0)
		return -1;
	return send(c->fd, &hello, 1, 0) == 1 ? 0 : -1;
}

const struct fl_ops fl_udp_ops = {
	.scheme = "udp",
	.max_msg = FL_UDP_MAX,
	.listen = fl_udp_listen,
	.accept = fl_udp_accept,
	.connect = fl_udp_connect,
	.send = fl_send,
	.recv = fl_recv_msg,
	.close = fl_close,
	.unlisten = fl_unlisten,
	.send_batch = fl_send_mmsg,
	.recv_batch = fl_recv_mmsg,
	.batching = "sendmmsg() and recvmmsg()",
};

/* Seed 003's other case: the same socket disconnected, every datagram sent with sendto()
 * to the server's address. */
static struct sockaddr_in fl_udp_dest;

int
fl_udp_disconnect(struct fl_chan *c, const char *rest)
{
	struct sockaddr unspec;

	if (fl_inet_addr(rest, &fl_udp_dest) != 0)
		return -1;
	memset(&unspec, 0, sizeof unspec);
	unspec.sa_family = AF_UNSPEC;
	return connect(c->fd, &unspec, sizeof unspec);
}

int
fl_udp_sendto(struct fl_chan *c, const void *buf, size_t len)
{
	ssize_t n;

	do
		n = sendto(c->fd, buf, len, MSG_NOSIGNAL, (struct sockaddr *)&fl_udp_dest,
			   sizeof fl_udp_dest);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}
