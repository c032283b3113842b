/*
 * tcp.c - the tcp: transport, "tcp:HOST:PORT" (inet.h has the syntax; docs/transports/tcp.md
 * the semantics).
 *
 * A message travels as a frame: a 4-byte big-endian length, then the message. The frame
 * is written with one sendmsg of two iovecs (never a separate write for the prefix) and
 * read with one recvmsg that scatters the prefix into a word of the connection's and the
 * message straight into the caller's buffer, so a call makes one send and one receive
 * system call on each side and no copy. The common send and receive are fast paths that
 * make no call but the system call's (tcp_impl.h, sock/sys_raw.h say why); anything else
 * goes on in a general path from what their system call returned. A receive may take in
 * more than one frame (pipelined requests, replies of concurrent calls); the surplus is kept
 * in a per-connection carry buffer and served from there by the next receive without a
 * system call.
 *
 * The frame length is independent of the header's size field, so a message whose header
 * lies about its size is still delimited, and an oversized one is skipped whole: the
 * connection keeps its framing, and only a length over TCP_FRAME_MAX (a peer that is not
 * speaking this protocol) closes it.
 *
 * Deadlines use cached SO_RCVTIMEO/SO_SNDTIMEO as unix: does; connecting is tcp_connect.c.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "sock/inet.h"
#include "sock/sock_timeo.h"
#include "sock/sys_raw.h"
#include "tcp_impl.h"

/* A server drops a client that stays silent and unreachable this long: keepalive after
 * TCP_KEEPIDLE_S idle seconds, every TCP_KEEPINTVL_S, TCP_KEEPCNT probes. */
#define TCP_KEEPIDLE_S 60
#define TCP_KEEPINTVL_S 10
#define TCP_KEEPCNT 6

struct tcp_ep {
	int fd;
	int open;
	char name[80]; /* the bound address, for details */
};

int
idl__tcp_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int
tcp_ep_listen(void *vep, const char *rest, const struct idl_listen_opts *opts)
{
	struct tcp_ep *ep = vep;
	struct inet_addrs as;
	int err, fd = IDL_EADDRINVAL;

	(void)opts; /* no filesystem object: the mode does not apply */
	if ((err = idl__inet_resolve("tcp", rest, 1, &as)) != 0)
		return err;
	for (unsigned i = 0; i < as.n; i++) {
		idl__clear_detail();
		fd = idl__inet_socket("tcp", &as.a[i], SOCK_STREAM, 1, 1);
		/* Only the absence of a family makes the next address worth trying. */
		if (fd >= 0 || fd != IDL_ESYSERR(EAFNOSUPPORT))
			break;
	}
	if (fd < 0)
		return idl_errdetail()[0] != '\0'
			       ? fd
			       : idl__inet_sysfail(IDL_SYSERR_ERRNO(fd), "tcp", rest, "socket");
	ep->fd = fd;
	ep->open = 1;
	snprintf(ep->name, sizeof ep->name, "%s", rest);
	if (listen(fd, SOMAXCONN) != 0)
		return idl__inet_sysfail(errno, "tcp", rest, "listen");
	return 0;
}

static int
tcp_ep_fd(void *vep)
{
	return ((struct tcp_ep *)vep)->fd;
}

static int
tcp_ep_accept(void *vep, void *vconn)
{
	struct tcp_ep *ep = vep;
	struct tcp_conn *c = vconn;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int one = 1, idle = TCP_KEEPIDLE_S, intvl = TCP_KEEPINTVL_S, cnt = TCP_KEEPCNT;

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
	if (idl__tcp_nodelay(c->fd) != 0)
		return IDL_ESYSERR(errno);
	return 0;
}

static void
tcp_ep_close(void *vep)
{
	struct tcp_ep *ep = vep;

	if (ep->open)
		shutdown(ep->fd, SHUT_RDWR);
}

static void
tcp_ep_fini(void *vep)
{
	struct tcp_ep *ep = vep;

	if (ep->open)
		close(ep->fd);
	ep->open = 0;
}

/* Maps an errno from a send or receive on a connection. */
int
idl__tcp_conn_err(struct tcp_conn *c, int e)
{
	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	if (e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ETIMEDOUT || e == EHOSTUNREACH ||
	    e == ENETUNREACH)
		return idl__fail(MIG_SERVER_DIED, "tcp:%s: %s", c->name,
				 e == EPIPE ? "the peer closed the connection" : strerror(e));
	return IDL_ESYSERR(e);
}

/*
 * Goes on writing a frame of `total` bytes, the pieces mh holds (advanced in place), after a
 * sendmsg of it that returned n (the count, or -1 with errno set) with `t` the socket
 * timeout's verdict it was made with (idl__sock_timeo()). Out of line: the kernel nearly
 * always takes a whole frame at once, and its callers' fast paths then return at once.
 */
static __attribute__((noinline)) int
tcp_send_more(struct tcp_conn *c, struct msghdr *mh, size_t total, ssize_t n, int t,
	      struct idl_deadline *dl)
{
	size_t sent = 0;

	for (;;) {
		if (n > 0) {
			sent += (size_t)n;
			if (sent == total)
				return 0;
			idl__sock_again(dl);
			/* Advance the iovecs past what went out. */
			while (n > 0 && mh->msg_iovlen > 0) {
				size_t k = (size_t)n < mh->msg_iov->iov_len ? (size_t)n
									    : mh->msg_iov->iov_len;

				mh->msg_iov->iov_base = (char *)mh->msg_iov->iov_base + k;
				mh->msg_iov->iov_len -= k;
				n -= (ssize_t)k;
				if (mh->msg_iov->iov_len == 0) {
					mh->msg_iov++;
					mh->msg_iovlen--;
				}
			}
		} else if (n < 0 && errno == EINTR) {
			idl__sock_again(dl);
		} else if (n < 0 && errno == EAGAIN) {
			if (t == 1 || idl__sock_late(dl)) {
				/* Half a frame on the wire cannot be taken back: the stream has
				 * lost its framing, and the connection must end. */
				if (sent != 0)
					shutdown(c->fd, SHUT_RDWR);
				return IDL_ETIMEDOUT;
			}
		} else {
			return idl__tcp_conn_err(c, n < 0 ? errno : EPIPE);
		}
		if ((t = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl)) < 0)
			return t;
		n = idl__sys_sendmsg(c->fd, mh, MSG_NOSIGNAL | (t == 1 ? MSG_DONTWAIT : 0));
	}
}

/* Goes on with the frame of `total` bytes in c->siov after the fast path's sendmsg of it
 * returned `raw` (sys_raw.h): with a copy of the pieces, which tcp_send_more() advances. */
static __attribute__((noinline)) int
tcp_send_rest(struct tcp_conn *c, size_t total, long raw, struct idl_deadline *dl)
{
	uint32_t prefix = c->sprefix;
	struct iovec iov[2] = { { &prefix, TCP_PREFIX }, c->siov[1] };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	return tcp_send_more(c, &mh, total, idl__raw_errno(raw), 0, dl);
}

/* Writes the `total` bytes of the pieces in iov (advanced in place) as one frame. */
static int
tcp_sendv(struct tcp_conn *c, struct iovec *iov, size_t niov, size_t total, struct idl_deadline *dl)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = niov };
	int t = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl);
	ssize_t n;

	if (t < 0)
		return t;
	n = idl__sys_sendmsg(c->fd, &mh, MSG_NOSIGNAL | (t == 1 ? MSG_DONTWAIT : 0));
	if (n > 0 && (size_t)n == total)
		return 0;
	return tcp_send_more(c, &mh, total, n, t, dl);
}

/* A message with descriptors: the frame holds the message and its data after it
 * (runtime/ool_wire.c), written by one sendmsg of the pieces; the data marked dealloc is
 * released once the frame is out, or failed. */
static int
tcp_send_desc(struct tcp_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct iovec iov[1 + IDL__OOL_IOV_MAX];
	struct idl__ool_out o;
	uint32_t prefix;
	int err;

	o.iov = iov + 1;
	err = idl__ool_inline_out(m, "tcp", &o);
	if (err == 0 && o.total > TCP_FRAME_MAX)
		err = idl__fail(IDL_EMSGSIZE,
				"tcp:%s: message of %zu bytes (%zu of them out of "
				"line) exceeds the frame limit of %u bytes",
				c->name, o.total, o.inline_bytes, TCP_FRAME_MAX);
	if (err == 0) {
		prefix = htonl((uint32_t)o.total);
		iov[0] = (struct iovec){ &prefix, TCP_PREFIX };
		err = tcp_sendv(c, iov, 1 + o.niov, TCP_PREFIX + o.total, dl);
	} else {
		idl_msg_header_t bare;
		struct idl_xmsg b;

		if (idl__desc_bare_reply(m, &bare, err, &b)) {
			prefix = htonl((uint32_t)b.len);
			iov[0] = (struct iovec){ &prefix, TCP_PREFIX };
			iov[1] = (struct iovec){ b.data, b.len };
			err = tcp_sendv(c, iov, 2, TCP_PREFIX + b.len, dl);
		}
	}
	idl__msg_release_sent(m->data);
	return err;
}

/* Writes the rest of a frame a non-blocking send left, before another frame may go. Only a
 * server's connection ever has such a rest: kept out of line, off the client's send path. */
static __attribute__((noinline, cold)) int
tcp_flush_out(struct tcp_conn *c, struct idl_deadline *dl)
{
	struct iovec iov = { c->out + c->out_off, c->out_len };
	int err = tcp_sendv(c, &iov, 1, c->out_len, dl);

	free(c->out);
	c->out = NULL;
	c->out_off = c->out_len = 0;
	return err;
}

/* Every send but the common one (tcp_conn_send()): the rest of an earlier frame to write
 * first, descriptors, a frame over the limit, a socket timeout to set. */
static __attribute__((noinline)) int
tcp_send_gen(struct tcp_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	uint32_t prefix = htonl((uint32_t)m->len);
	struct iovec iov[2] = {
		{ .iov_base = &prefix, .iov_len = TCP_PREFIX },
		{ .iov_base = m->data, .iov_len = m->len },
	};
	int err;

	if (c->smh.msg_iov == NULL)
		tcp_conn_sargs(c);
	if (c->out_len != 0 && (err = tcp_flush_out(c, dl)) != 0) {
		if (idl__desc_msg(m->data, m->len))
			idl__msg_release_sent(m->data);
		return err;
	}
	if (idl__desc_msg(m->data, m->len))
		return tcp_send_desc(c, m, dl);
	if (m->len > TCP_FRAME_MAX)
		return idl__fail(IDL_EMSGSIZE,
				 "tcp:%s: message of %zu bytes exceeds the frame "
				 "limit of %u bytes",
				 c->name, m->len, TCP_FRAME_MAX);
	return tcp_sendv(c, iov, 2, TCP_PREFIX + m->len, dl);
}

/* The common send - a plain frame, nothing left of an earlier one, the socket's timeout
 * already the call's - is one sendmsg and no call: the rest is tcp_send_gen(). */
static int
tcp_conn_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct tcp_conn *c = vconn;
	size_t len = m->len;

	if (__builtin_expect(c->smh.msg_iov != NULL && c->out_len == 0 && len <= TCP_FRAME_MAX &&
				     !idl__desc_msg(m->data, len) &&
				     idl__sock_timeo_kept(dl, c->sndtimeo_us),
			     1)) {
		long n;

		c->sprefix = htonl((uint32_t)len);
		c->siov[1] = (struct iovec){ m->data, len };
		n = idl__raw_sendmsg(c->fd, &c->smh, MSG_NOSIGNAL);
		if ((unsigned long)n == TCP_PREFIX + len)
			return 0;
		return tcp_send_rest(c, TCP_PREFIX + len, n, dl);
	}
	return tcp_send_gen(c, m, dl);
}

/* Keeps bytes received beyond the current frame for the next receive. */
int
idl__tcp_carry_put(struct tcp_conn *c, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (c->carry_len == 0)
		c->carry_off = 0;
	if (c->carry_off + c->carry_len + n > c->carry_cap) {
		size_t need = c->carry_len + n, cap = c->carry_cap ? c->carry_cap : TCP_CARRY_MIN;
		unsigned char *nb;

		while (cap < need)
			cap *= 2;
		if ((nb = malloc(cap)) == NULL)
			return IDL_ENOMEM;
		if (c->carry_len != 0)
			memcpy(nb, c->carry + c->carry_off, c->carry_len);
		free(c->carry);
		c->carry = nb;
		c->carry_cap = cap;
		c->carry_off = 0;
	}
	memcpy(c->carry + c->carry_off + c->carry_len, p, n);
	c->carry_len += n;
	return 0;
}

/* Reads exactly n bytes of the stream into buf (NULL: discard), from the carry first. */
static int
tcp_read_exact(struct tcp_conn *c, void *buf, size_t n, struct idl_deadline *dl)
{
	unsigned char sink[512];

	while (n > 0) {
		size_t k;
		ssize_t r;
		int t;

		if (c->carry_len > 0) {
			k = n < c->carry_len ? n : c->carry_len;
			if (buf != NULL)
				memcpy(buf, c->carry + c->carry_off, k);
			c->carry_off += k;
			c->carry_len -= k;
			buf = buf != NULL ? (char *)buf + k : NULL;
			n -= k;
			continue;
		}
		if ((t = idl__sock_timeo(c->fd, SO_RCVTIMEO, &c->rcvtimeo_us, dl)) < 0)
			return t;
		k = buf != NULL ? n : n < sizeof sink ? n : sizeof sink;
		r = idl__sys_recv(c->fd, buf != NULL ? buf : sink, k, t == 1 ? MSG_DONTWAIT : 0);
		if (r > 0) {
			buf = buf != NULL ? (char *)buf + r : NULL;
			n -= (size_t)r;
			if (n > 0)
				idl__sock_again(dl);
		} else if (r == 0) {
			return idl__tcp_conn_err(c, EPIPE);
		} else if (errno == EAGAIN) {
			if (t == 1 || idl__sock_late(dl))
				return IDL_ETIMEDOUT;
		} else if (errno == EINTR) {
			idl__sock_again(dl);
		} else {
			return idl__tcp_conn_err(c, errno);
		}
	}
	return 0;
}

/* Reads the data of a message with descriptors: first what the frame's first receive left
 * in the caller's buffer beyond the message, then the stream. */
struct tcp_ool_rd {
	struct tcp_conn *c;
	const unsigned char *buf; /* the caller's buffer */
	size_t have; /* bytes of the frame in it */
	size_t pos; /* the next offset of the frame to take */
	struct idl_deadline *dl;
};

static int
tcp_ool_read(void *arg, size_t off, void *dst, size_t n)
{
	struct tcp_ool_rd *r = arg;
	unsigned char *out = dst;
	int err;

	if (off < r->pos)
		return IDL_EPROTO;
	/* Skip to off (padding), then read n bytes; ranges are consecutive but for that. */
	while (r->pos < off + n) {
		size_t want = r->pos < off ? off - r->pos : off + n - r->pos;
		unsigned char *to = r->pos < off || out == NULL ? NULL : out + (r->pos - off);

		if (r->pos < r->have) {
			size_t k = want < r->have - r->pos ? want : r->have - r->pos;

			if (to != NULL)
				memcpy(to, r->buf + r->pos, k);
			r->pos += k;
			continue;
		}
		if ((err = tcp_read_exact(r->c, to, want, r->dl)) != 0)
			return err;
		r->pos += want;
	}
	return 0;
}

/* Skips the rest of a refused frame, of which `have` bytes were read: the refusal `err`,
 * the frame's `len` bytes in m->len (idl__desc_refused()); or, when the rest did not come,
 * the framing is lost: the connection ends and m->len is 0. */
static int
tcp_refuse_frame(struct tcp_conn *c, struct idl_xmsg *m, struct tcp_ool_rd *r, uint32_t len,
		 int err)
{
	if (tcp_ool_read(r, len, NULL, 0) != 0) {
		shutdown(c->fd, SHUT_RDWR);
		return idl__desc_refused(m, 0, err);
	}
	return idl__desc_refused(m, len, err);
}

/*
 * A frame of `len` bytes holding a message with descriptors, `body` bytes of it in m->data:
 * the message proper (its header's size) is read into m->data, each datum after it into
 * memory of the receiver's own. A malformed one is skipped whole (the framing stays) and
 * refused; a read that fails midway has lost the framing, and the connection ends.
 */
int
idl__tcp_recv_desc(struct tcp_conn *c, struct idl_xmsg *m, uint32_t len, size_t body,
		   struct idl_deadline *dl)
{
	idl_msg_header_t h;
	struct tcp_ool_rd r = { c, m->data, body < m->cap ? body : m->cap, 0, dl };
	uint32_t nd;
	int err;

	memcpy(&h, m->data, sizeof h);
	if (h.size > len)
		err = idl__fail(IDL_EPROTO, "tcp:%s: a %u-byte message in a %u-byte frame", c->name,
				h.size, len);
	else if ((err = idl__desc_in_check(m->data, h.size, "tcp", &nd)) != 0)
		;
	else if (h.size > m->cap)
		err = IDL_EMSGSIZE;
	if (err != 0)
		return tcp_refuse_frame(c, m, &r, len, err);
	if (body < h.size) {
		if ((err = tcp_read_exact(c, (char *)m->data + body, h.size - body, dl)) != 0)
			return err;
	}
	r.have = body > h.size ? body : h.size;
	r.pos = h.size;
	err = idl__ool_inline_in(m->data, h.size, len, "tcp", tcp_ool_read, &r);
	if (err == IDL_EPROTO || err == IDL_ENOMEM) {
		/* Descriptors that lie about the layout, or no memory for the data: skip the
		 * rest of the frame and keep the stream. */
		return tcp_refuse_frame(c, m, &r, len, err);
	}
	if (err != 0) {
		/* A read that failed midway has lost the stream. */
		shutdown(c->fd, SHUT_RDWR);
		m->len = 0;
		return err;
	}
	m->len = h.size;
	return 0;
}

/*
 * Receives one frame. With nothing carried over, one recvmsg scatters the prefix into
 * `prefix` and the message (and whatever follows it, up to m->cap) into m->data; when it
 * brought the whole frame, that is the only system call. Everything else - a frame split
 * across segments, bytes of the next frames, an oversized frame - takes the slow path.
 * `raw` and prefix: what the fast path's recvmsg returned (sys_raw.h; IDL_RAW_NONE when it
 * made none) and received.
 */
static __attribute__((noinline)) int
tcp_recv_gen(struct tcp_conn *c, struct idl_xmsg *m, struct idl_deadline *dl, long raw,
	     uint32_t prefix)
{
	ssize_t n = idl__raw_errno(raw);
	uint32_t len;
	size_t body = 0; /* bytes of the message already in m->data */
	int err;

	if (c->rmh.msg_iov == NULL)
		tcp_conn_rargs(c);
	m->nfds = 0;
	if (__builtin_expect(c->rx != NULL, 0))
		return idl__tcp_rx_recv(c, m, dl, 0);
	if (c->carry_len == 0) {
		struct iovec iov[2] = {
			{ .iov_base = &prefix, .iov_len = TCP_PREFIX },
			{ .iov_base = m->data, .iov_len = m->cap },
		};
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		int t = 0;

		for (;;) {
			if (n > 0)
				break;
			if (n == 0)
				return idl__tcp_conn_err(c, EPIPE);
			if (n == IDL_RAW_NONE) {
				/* The fast path's receive was not made. */
			} else if (errno == EAGAIN) {
				if (t == 1 || idl__sock_late(dl))
					return IDL_ETIMEDOUT;
			} else if (errno == EINTR) {
				idl__sock_again(dl);
			} else {
				return idl__tcp_conn_err(c, errno);
			}
			if ((t = idl__sock_timeo(c->fd, SO_RCVTIMEO, &c->rcvtimeo_us, dl)) < 0)
				return t;
			n = idl__sys_recvmsg(c->fd, &mh,
					     MSG_CMSG_CLOEXEC | (t == 1 ? MSG_DONTWAIT : 0));
		}
		if ((size_t)n < TCP_PREFIX) {
			/* A prefix split across segments: read the rest of it. */
			if ((err = tcp_read_exact(c, (char *)&prefix + n, TCP_PREFIX - (size_t)n,
						  dl)) != 0)
				return err;
			n = TCP_PREFIX;
		}
		body = (size_t)n - TCP_PREFIX;
		len = ntohl(prefix);
		if (len > TCP_FRAME_MAX)
			goto bad_frame;
		if (body > len) {
			/* The next frames came along: keep them for the next receives. */
			if ((err = idl__tcp_carry_put(c, (char *)m->data + len, body - len)) != 0)
				return err;
			body = len;
		}
	} else {
		if ((err = tcp_read_exact(c, &prefix, TCP_PREFIX, dl)) != 0)
			return err;
		len = ntohl(prefix);
		if (len > TCP_FRAME_MAX)
			goto bad_frame;
	}

	if (len > m->cap) {
		/* Too large for the caller: skip the rest of the frame, keep the stream; unless
		 * it is a message with its data after it that fits without them. */
		size_t have = body < m->cap ? body : m->cap;
		size_t hb = len < IDL_MSG_HEADER_SIZE ? len : IDL_MSG_HEADER_SIZE;

		if (m->cap >= hb && have < hb) {
			if ((err = tcp_read_exact(c, (char *)m->data + have, hb - have, dl)) != 0)
				return err;
			have = body = hb;
		}
		if (idl__desc_msg(m->data, have))
			return idl__tcp_recv_desc(c, m, len, body, dl);
		if ((err = tcp_read_exact(c, NULL, len - have, dl)) != 0)
			return err;
		m->len = len;
		return IDL_EMSGSIZE;
	}
	if (body < len && (err = tcp_read_exact(c, (char *)m->data + body, len - body, dl)) != 0)
		return err;
	m->len = len;
	if (idl__desc_msg(m->data, len))
		return idl__tcp_recv_desc(c, m, len, len, dl);
	return 0;

bad_frame:
	/* Not a frame of ours: the stream cannot be resynchronised (m->len 0 says so). */
	shutdown(c->fd, SHUT_RDWR);
	m->len = 0;
	return idl__fail(IDL_EPROTO, "tcp:%s: frame length %u over the limit of %u bytes", c->name,
			 len, TCP_FRAME_MAX);
}

/* The common receive - nothing carried over, the socket's timeout already the call's, one
 * whole plain frame and nothing after it - is one recvmsg and no call; everything else is
 * tcp_recv_gen()'s, which goes on from what that recvmsg returned. */
int
idl__tcp_conn_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct tcp_conn *c = vconn;

	if (__builtin_expect(c->rmh.msg_iov != NULL && c->rx == NULL && c->carry_len == 0 &&
				     idl__sock_timeo_kept(dl, c->rcvtimeo_us),
			     1)) {
		long n;
		uint32_t len;

		c->riov[1] = (struct iovec){ m->data, m->cap };
		n = idl__raw_recvmsg(c->fd, &c->rmh, MSG_CMSG_CLOEXEC);
		len = ntohl(c->rprefix);

		/* Exactly one frame, so no more than m->cap; an error is negative, which no
		 * frame's length matches. */
		if ((unsigned long)n == TCP_PREFIX + (unsigned long)len && len <= TCP_FRAME_MAX &&
		    !idl__desc_msg(m->data, len)) {
			m->len = len;
			m->nfds = 0;
			return 0;
		}
		return tcp_recv_gen(c, m, dl, n, c->rprefix);
	}
	return tcp_recv_gen(c, m, dl, IDL_RAW_NONE, 0);
}

static void
tcp_conn_close(void *vconn)
{
	struct tcp_conn *c = vconn;

	/* shutdown, not close: it wakes a thread blocked in recvmsg, and the descriptor
	 * number is not reused until conn_fini. */
	atomic_store(&c->closed, 1);
	if (c->open)
		shutdown(c->fd, SHUT_RDWR);
}

static void
tcp_conn_fini(void *vconn)
{
	struct tcp_conn *c = vconn;

	if (c->open)
		close(c->fd);
	c->open = 0;
	free(c->carry);
	c->carry = NULL;
	idl__tcp_rx_drop(c);
	free(c->out);
	c->out = NULL;
	c->out_len = 0;
	free(c->pend);
	c->pend = NULL;
}

/* What TCP can tell of the peer: its address, never its identity (docs/security.md). The
 * peer's address as the socket has it, so a client's port reports the server it reached. */
static int
tcp_conn_cred(void *vconn, struct idl_cred *cred)
{
	struct tcp_conn *c = vconn;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[80];

	memset(cred, 0, sizeof *cred);
	if (!c->open || getpeername(c->fd, (struct sockaddr *)&ss, &sl) != 0)
		return IDL_ENOTSUP;
	idl__inet_format((struct sockaddr *)&ss, sl, host, sizeof host);
	snprintf(cred->addr, sizeof cred->addr, "tcp:%s", host);
	return 0;
}

static const struct idl_transport tcp_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "tcp",
	/* Not IDL_TRF_STREAM: the length prefix keeps the framing even across an oversized
	 * message, so the core need not close a connection after IDL_EMSGSIZE. */
	.flags = IDL_TRF_DESC,
	.ep_size = sizeof(struct tcp_ep),
	.conn_size = sizeof(struct tcp_conn),
	.ep_listen = tcp_ep_listen,
	.ep_fd = tcp_ep_fd,
	.ep_accept = tcp_ep_accept,
	.ep_close = tcp_ep_close,
	.ep_fini = tcp_ep_fini,
	.conn_connect = idl__tcp_conn_connect,
	.conn_send = tcp_conn_send,
	.conn_recv = idl__tcp_conn_recv,
	.conn_close = tcp_conn_close,
	.conn_fini = tcp_conn_fini,
	.conn_cred = tcp_conn_cred,
	.conn_fd = idl__tcp_conn_fd,
	.conn_sendv_nb = idl__tcp_conn_sendv_nb,
	.conn_recv_nb = idl__tcp_conn_recv_nb,
	.conn_recv_wait = idl__tcp_conn_recv_wait,
	.conn_connect_nb = idl__tcp_connect_nb,
	.conn_connect_step = idl__tcp_connect_step,
};

void
idl__tcp_register(void)
{
	int err = idl_transport_register(&tcp_transport);

	assert(err == 0);
	(void)err;
}
