/*
 * stream.c - the blocking send and receive of a length-framed stream (stream.h), the tcp:
 * transport's (docs/transports/tcp.md).
 *
 * A message travels as a frame: a 4-byte big-endian length, then the message. The frame
 * is written with one sendmsg of two iovecs (never a separate write for the prefix) and
 * read with one recvmsg that scatters the prefix into a word of the connection's and the
 * message straight into the caller's buffer, so a call makes one send and one receive
 * system call on each side and no copy. The common send and receive are fast paths that
 * make no call but the system call's (stream.h, sys_raw.h say why); anything else
 * goes on in a general path from what their system call returned. A receive may take in
 * more than one frame (pipelined requests, replies of concurrent calls); the surplus is kept
 * in a per-connection carry buffer and served from there by the next receive without a
 * system call.
 *
 * The frame length is independent of the header's size field, so a message whose header
 * lies about its size is still delimited, and an oversized one is skipped whole: the
 * connection keeps its framing, and only a length over STREAM_FRAME_MAX (a peer that is not
 * speaking this protocol) closes it.
 *
 * Deadlines use cached SO_RCVTIMEO/SO_SNDTIMEO as unix: does; connecting is stream_connect.c,
 * the non-blocking operations stream_nb.c, endpoints stream_ep.c.
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

#include "inet.h"
#include "sock_timeo.h"
#include "sys_raw.h"
#include "stream.h"

/* Maps an errno from a send or receive on a connection. */
int
idl__stream_conn_err(struct stream_conn *c, int e)
{
	int err;

	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	if (c->io != NULL && (err = c->io->err(c, e)) != 0)
		return err;
	if (e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ETIMEDOUT || e == EHOSTUNREACH ||
	    e == ENETUNREACH)
		return idl__fail(MIG_SERVER_DIED, "%s:%s: %s", stream_scheme(c), c->name,
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
stream_send_more(struct stream_conn *c, struct msghdr *mh, size_t total, ssize_t n, int t,
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
			return idl__stream_conn_err(c, n < 0 ? errno : EPIPE);
		}
		if ((t = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl)) < 0)
			return t;
		n = stream_sendmsg(c, mh, MSG_NOSIGNAL | (t == 1 ? MSG_DONTWAIT : 0));
	}
}

/* Goes on with the frame of `total` bytes in c->siov after the fast path's sendmsg of it
 * returned `raw` (sys_raw.h): with a copy of the pieces, which stream_send_more() advances. */
static __attribute__((noinline)) int
stream_send_rest(struct stream_conn *c, size_t total, long raw, struct idl_deadline *dl)
{
	uint32_t prefix = c->sprefix;
	struct iovec iov[2] = { { &prefix, STREAM_PREFIX }, c->siov[1] };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	return stream_send_more(c, &mh, total, idl__raw_errno(raw), 0, dl);
}

/* Writes the `total` bytes of the pieces in iov (advanced in place) as one frame. */
static int
stream_sendv(struct stream_conn *c, struct iovec *iov, size_t niov, size_t total,
	     struct idl_deadline *dl)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = niov };
	int t = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl);
	ssize_t n;

	if (t < 0)
		return t;
	n = stream_sendmsg(c, &mh, MSG_NOSIGNAL | (t == 1 ? MSG_DONTWAIT : 0));
	if (n > 0 && (size_t)n == total)
		return 0;
	return stream_send_more(c, &mh, total, n, t, dl);
}

/* A message with descriptors: the frame holds the message and its data after it
 * (runtime/ool/ool_wire.c), written by one sendmsg of the pieces; the data marked dealloc is
 * released once the frame is out, or failed. */
static int
stream_send_desc(struct stream_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct iovec iov[1 + IDL__OOL_IOV_MAX];
	struct idl__ool_out o;
	uint32_t prefix;
	int err;

	o.iov = iov + 1;
	err = idl__ool_inline_out(m, stream_scheme(c), &o);
	if (err == 0 && o.total > STREAM_FRAME_MAX)
		err = idl__fail(IDL_EMSGSIZE,
				"%s:%s: message of %zu bytes (%zu of them out of "
				"line) exceeds the frame limit of %u bytes",
				stream_scheme(c), c->name, o.total, o.inline_bytes,
				STREAM_FRAME_MAX);
	if (err == 0) {
		prefix = htonl((uint32_t)o.total);
		iov[0] = (struct iovec){ &prefix, STREAM_PREFIX };
		err = stream_sendv(c, iov, 1 + o.niov, STREAM_PREFIX + o.total, dl);
	} else {
		idl_msg_header_t bare;
		struct idl_xmsg b;

		if (idl__desc_bare_reply(m, &bare, err, &b)) {
			prefix = htonl((uint32_t)b.len);
			iov[0] = (struct iovec){ &prefix, STREAM_PREFIX };
			iov[1] = (struct iovec){ b.data, b.len };
			err = stream_sendv(c, iov, 2, STREAM_PREFIX + b.len, dl);
		}
	}
	idl__msg_release_sent(m->data);
	return err;
}

/* Writes the rest of a frame a non-blocking send left, before another frame may go. Only a
 * server's connection ever has such a rest: kept out of line, off the client's send path. */
static __attribute__((noinline, cold)) int
stream_flush_out(struct stream_conn *c, struct idl_deadline *dl)
{
	struct iovec iov = { c->out + c->out_off, c->out_len };
	int err = stream_sendv(c, &iov, 1, c->out_len, dl);

	free(c->out);
	c->out = NULL;
	c->out_off = c->out_len = 0;
	return err;
}

/* Every send but the common one (stream_conn_send()): the rest of an earlier frame to write
 * first, descriptors, a frame over the limit, a socket timeout to set. */
__attribute__((noinline)) int
idl__stream_send_gen(struct stream_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	uint32_t prefix = htonl((uint32_t)m->len);
	struct iovec iov[2] = {
		{ .iov_base = &prefix, .iov_len = STREAM_PREFIX },
		{ .iov_base = m->data, .iov_len = m->len },
	};
	int err;

	if (c->smh.msg_iov == NULL)
		stream_conn_sargs(c);
	if (c->out_len != 0 && (err = stream_flush_out(c, dl)) != 0) {
		if (idl__desc_msg(m->data, m->len))
			idl__msg_release_sent(m->data);
		return err;
	}
	if (idl__desc_msg(m->data, m->len))
		return stream_send_desc(c, m, dl);
	if (m->len > STREAM_FRAME_MAX)
		return idl__fail(IDL_EMSGSIZE,
				 "%s:%s: message of %zu bytes exceeds the frame "
				 "limit of %u bytes",
				 stream_scheme(c), c->name, m->len, STREAM_FRAME_MAX);
	return stream_sendv(c, iov, 2, STREAM_PREFIX + m->len, dl);
}

/* The common send - a plain frame, nothing left of an earlier one, the socket's timeout
 * already the call's - is one sendmsg and no call: the rest is stream_send_gen(). */
int
idl__stream_conn_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct stream_conn *c = vconn;
	size_t len = m->len;

	if (__builtin_expect(c->smh.msg_iov != NULL && c->out_len == 0 && len <= STREAM_FRAME_MAX &&
				     !idl__desc_msg(m->data, len) &&
				     idl__sock_timeo_kept(dl, c->sndtimeo_us),
			     1)) {
		long n;

		c->sprefix = htonl((uint32_t)len);
		c->siov[1] = (struct iovec){ m->data, len };
		n = idl__raw_sendmsg(c->fd, &c->smh, MSG_NOSIGNAL);
		if ((unsigned long)n == STREAM_PREFIX + len)
			return 0;
		return stream_send_rest(c, STREAM_PREFIX + len, n, dl);
	}
	return idl__stream_send_gen(c, m, dl);
}

int
idl__stream_buf_put(struct stream_buf *b, const void *p, size_t n, size_t min)
{
	if (b->len == 0)
		b->off = 0;
	if (b->off + b->len + n > b->cap) {
		size_t need = b->len + n, cap = b->cap ? b->cap : min;
		unsigned char *nb;

		while (cap < need)
			cap *= 2;
		if ((nb = malloc(cap)) == NULL)
			return -1;
		if (b->len != 0)
			memcpy(nb, *b->p + b->off, b->len);
		free(*b->p);
		*b->p = nb;
		b->cap = cap;
		b->off = 0;
	}
	memcpy(*b->p + b->off + b->len, p, n);
	b->len += n;
	return 0;
}

/* Keeps bytes received beyond the current frame for the next receive. */
int
idl__stream_carry_put(struct stream_conn *c, const void *p, size_t n)
{
	struct stream_buf b = { &c->carry, c->carry_off, c->carry_len, c->carry_cap };
	int err;

	if (n == 0)
		return 0;
	err = idl__stream_buf_put(&b, p, n, STREAM_CARRY_MIN);
	c->carry_off = b.off;
	c->carry_len = b.len;
	c->carry_cap = b.cap;
	return err != 0 ? IDL_ENOMEM : 0;
}

/* After a blocking receive prepared by idl__sock_timeo() (its verdict t) returned r, 0 or -1
 * with errno: the error that ends the receive, or 0 when it is to be made again (a signal, a
 * wait the socket's timeout cut short before the deadline). */
static int
stream_recv_again(struct stream_conn *c, ssize_t r, int t, struct idl_deadline *dl)
{
	if (r == 0)
		return idl__stream_conn_err(c, EPIPE);
	if (errno == EAGAIN)
		return t == 1 || idl__sock_late(dl) ? IDL_ETIMEDOUT : 0;
	if (errno == EINTR) {
		idl__sock_again(dl);
		return 0;
	}
	return idl__stream_conn_err(c, errno);
}

/* Reads exactly n bytes of the stream into buf (NULL: discard), from the carry first. */
static int
stream_read_exact(struct stream_conn *c, void *buf, size_t n, struct idl_deadline *dl)
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
		r = stream_recv(c, buf != NULL ? buf : sink, k, t == 1 ? MSG_DONTWAIT : 0);
		if (r > 0) {
			buf = buf != NULL ? (char *)buf + r : NULL;
			n -= (size_t)r;
			if (n > 0)
				idl__sock_again(dl);
		} else if ((t = stream_recv_again(c, r, t, dl)) != 0) {
			return t;
		}
	}
	return 0;
}

/* Reads the data of a message with descriptors: first what the frame's first receive left
 * in the caller's buffer beyond the message, then the stream. */
struct stream_ool_rd {
	struct stream_conn *c;
	const unsigned char *buf; /* the caller's buffer */
	size_t have; /* bytes of the frame in it */
	size_t pos; /* the next offset of the frame to take */
	struct idl_deadline *dl;
};

static int
stream_ool_read(void *arg, size_t off, void *dst, size_t n)
{
	struct stream_ool_rd *r = arg;
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
		if ((err = stream_read_exact(r->c, to, want, r->dl)) != 0)
			return err;
		r->pos += want;
	}
	return 0;
}

/* Skips the rest of a refused frame, of which r->have bytes were read: the refusal `err`,
 * the frame's `len` bytes in m->len (idl__desc_refused()); or, when the rest did not come,
 * the framing is lost: the connection ends and m->len is 0. */
static int
stream_refuse_frame(struct stream_conn *c, struct idl_xmsg *m, struct stream_ool_rd *r,
		    uint32_t len, int err)
{
	if (stream_ool_read(r, len, NULL, 0) != 0) {
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
idl__stream_recv_desc(struct stream_conn *c, struct idl_xmsg *m, uint32_t len, size_t body,
		      struct idl_deadline *dl)
{
	idl_msg_header_t h;
	struct stream_ool_rd r = { c, m->data, body < m->cap ? body : m->cap, 0, dl };
	uint32_t nd;
	int err;

	memcpy(&h, m->data, sizeof h);
	if (h.size > len)
		err = idl__fail(IDL_EPROTO, "%s:%s: a %u-byte message in a %u-byte frame",
				stream_scheme(c), c->name, h.size, len);
	else if ((err = idl__desc_in_check(m->data, h.size, stream_scheme(c), &nd)) != 0)
		;
	else if (h.size > m->cap)
		err = IDL_EMSGSIZE;
	if (err != 0)
		return stream_refuse_frame(c, m, &r, len, err);
	if (body < h.size) {
		if ((err = stream_read_exact(c, (char *)m->data + body, h.size - body, dl)) != 0)
			return err;
	}
	r.have = body > h.size ? body : h.size;
	r.pos = h.size;
	err = idl__ool_inline_in(m->data, h.size, len, stream_scheme(c), stream_ool_read, &r);
	if (err == IDL_EPROTO || err == IDL_ENOMEM) {
		/* Descriptors that lie about the layout, or no memory for the data: skip the
		 * rest of the frame and keep the stream. */
		return stream_refuse_frame(c, m, &r, len, err);
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
__attribute__((noinline)) int
idl__stream_recv_gen(struct stream_conn *c, struct idl_xmsg *m, struct idl_deadline *dl, long raw,
		     uint32_t prefix)
{
	ssize_t n = idl__raw_errno(raw);
	uint32_t len;
	size_t body = 0; /* bytes of the message already in m->data */
	int err;

	if (c->rmh.msg_iov == NULL)
		stream_conn_rargs(c);
	m->nfds = 0;
	if (__builtin_expect(c->rx != NULL, 0))
		return idl__stream_rx_recv(c, m, dl, 0);
	if (c->carry_len == 0) {
		struct iovec iov[2] = {
			{ .iov_base = &prefix, .iov_len = STREAM_PREFIX },
			{ .iov_base = m->data, .iov_len = m->cap },
		};
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		int t = 0;

		for (;;) {
			if (n > 0)
				break;
			/* IDL_RAW_NONE: the fast path's receive was not made. */
			if (n != IDL_RAW_NONE && (err = stream_recv_again(c, n, t, dl)) != 0)
				return err;
			if ((t = idl__sock_timeo(c->fd, SO_RCVTIMEO, &c->rcvtimeo_us, dl)) < 0)
				return t;
			n = stream_recvmsg(c, &mh, MSG_CMSG_CLOEXEC | (t == 1 ? MSG_DONTWAIT : 0));
		}
		if ((size_t)n < STREAM_PREFIX) {
			/* A prefix split across segments: read the rest of it. */
			if ((err = stream_read_exact(c, (char *)&prefix + n,
						     STREAM_PREFIX - (size_t)n, dl)) != 0)
				return err;
			n = STREAM_PREFIX;
		}
		body = (size_t)n - STREAM_PREFIX;
		len = ntohl(prefix);
		if (len > STREAM_FRAME_MAX)
			goto bad_frame;
		if (body > len) {
			/* The next frames came along: keep them for the next receives. */
			if ((err = idl__stream_carry_put(c, (char *)m->data + len, body - len)) !=
			    0)
				return err;
			body = len;
		}
	} else {
		if ((err = stream_read_exact(c, &prefix, STREAM_PREFIX, dl)) != 0)
			return err;
		len = ntohl(prefix);
		if (len > STREAM_FRAME_MAX)
			goto bad_frame;
	}

	if (len > m->cap) {
		/* Too large for the caller: skip the rest of the frame, keep the stream; unless
		 * it is a message with its data after it that fits without them. */
		size_t have = body < m->cap ? body : m->cap;
		size_t hb = len < IDL_MSG_HEADER_SIZE ? len : IDL_MSG_HEADER_SIZE;

		if (m->cap >= hb && have < hb) {
			if ((err = stream_read_exact(c, (char *)m->data + have, hb - have, dl)) !=
			    0)
				return err;
			have = body = hb;
		}
		if (idl__desc_msg(m->data, have))
			return idl__stream_recv_desc(c, m, len, body, dl);
		if ((err = stream_read_exact(c, NULL, len - have, dl)) != 0)
			return err;
		m->len = len;
		return IDL_EMSGSIZE;
	}
	if (body < len && (err = stream_read_exact(c, (char *)m->data + body, len - body, dl)) != 0)
		return err;
	m->len = len;
	if (idl__desc_msg(m->data, len))
		return idl__stream_recv_desc(c, m, len, len, dl);
	return 0;

bad_frame:
	/* Not a frame of ours: the stream cannot be resynchronised (m->len 0 says so). A TLS
	 * record (a ClientHello: 0x16, then version 3.x) is a tls: client that came to a tcp:
	 * endpoint. */
	shutdown(c->fd, SHUT_RDWR);
	m->len = 0;
	if ((len >> 24) == 0x16 && (len >> 16 & 0xff) == 0x03)
		return idl__fail(IDL_ETLS,
				 "%s:%s: a TLS client on a %s: endpoint (a tls: address calls a "
				 "tls: server)",
				 stream_scheme(c), c->name, stream_scheme(c));
	return idl__fail(IDL_EPROTO, "%s:%s: frame length %u over the limit of %u bytes",
			 stream_scheme(c), c->name, len, STREAM_FRAME_MAX);
}

/* The common receive - nothing carried over, the socket's timeout already the call's, one
 * whole plain frame and nothing after it - is one recvmsg and no call; everything else is
 * stream_recv_gen()'s, which goes on from what that recvmsg returned. */
int
idl__stream_conn_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct stream_conn *c = vconn;

	if (__builtin_expect(c->rmh.msg_iov != NULL && c->rx == NULL && c->carry_len == 0 &&
				     idl__sock_timeo_kept(dl, c->rcvtimeo_us),
			     1)) {
		long n;

		c->riov[1] = (struct iovec){ m->data, m->cap };
		n = idl__raw_recvmsg(c->fd, &c->rmh, MSG_CMSG_CLOEXEC);
		if (stream_one_frame(c, m, n))
			return 0;
		return idl__stream_recv_gen(c, m, dl, n, c->rprefix);
	}
	return idl__stream_recv_gen(c, m, dl, IDL_RAW_NONE, 0);
}
