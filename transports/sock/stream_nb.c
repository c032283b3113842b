/*
 * stream_nb.c - the non-blocking operations of the tcp: transport, which the server's event
 * core and a pollable port drive a connection with (idl_transport.h has the contract).
 *
 * A stream has no message boundaries, so both directions keep state across calls: the rest
 * of a frame the kernel took only part of (written first by every later send, blocking or
 * not), and a partial frame received (in the carry buffer the blocking receive also serves
 * from). A peer that sends half a frame, or reads nothing, therefore holds no thread.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <arpa/inet.h>

#include "sock_timeo.h"
#include "sys_raw.h"
#include "stream.h"

/* Whether the carry buffer holds a whole frame (or a frame length over the limit, which
 * the receive refuses at once). */
static int
stream_carry_whole(const struct stream_conn *c)
{
	uint32_t prefix;

	if (c->carry_len < STREAM_PREFIX)
		return 0;
	memcpy(&prefix, c->carry + c->carry_off, STREAM_PREFIX);
	prefix = ntohl(prefix);
	return prefix > STREAM_FRAME_MAX || c->carry_len - STREAM_PREFIX >= prefix;
}

int
idl__stream_conn_fd(void *vconn, unsigned *events)
{
	struct stream_conn *c = vconn;

	*events = IDL_TR_EV_IN | (c->out_len != 0 ? IDL_TR_EV_OUT : 0) |
		  (stream_carry_whole(c) ? IDL_TR_EV_MORE : 0);
	return c->fd;
}

/* Writes what it can of the rest a non-blocking send left: 0 once all is out,
 * IDL_EAGAIN while some is left, or an error. */
static int
stream_out_nb(struct stream_conn *c)
{
	while (c->out_len != 0) {
		ssize_t n = stream_send(c, c->out + c->out_off, c->out_len,
					MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			c->out_off += (size_t)n;
			c->out_len -= (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return IDL_EAGAIN;
		} else {
			return idl__stream_conn_err(c, n < 0 ? errno : EPIPE);
		}
	}
	free(c->out);
	c->out = NULL;
	c->out_off = 0;
	return 0;
}

/* Keeps the `rest` bytes of a frame that follow the first `sent` ones of its pieces, to be
 * written before anything else. */
static int
stream_keep_rest(struct stream_conn *c, const struct iovec *iov, unsigned niov, size_t sent,
		 size_t rest)
{
	unsigned char *p;

	if ((c->out = malloc(rest)) == NULL) {
		shutdown(c->fd, SHUT_RDWR); /* the framing is lost */
		return IDL_ENOMEM;
	}
	p = c->out;
	for (unsigned i = 0; i < niov; i++) {
		size_t skip = sent < iov[i].iov_len ? sent : iov[i].iov_len;

		memcpy(p, (const unsigned char *)iov[i].iov_base + skip, iov[i].iov_len - skip);
		p += iov[i].iov_len - skip;
		sent -= skip;
	}
	c->out_off = 0;
	c->out_len = rest;
	return 0;
}

/*
 * A message with descriptors, whose data goes in the frame after it: what the kernel does
 * not take at once is kept as a copy (the frame's pieces may be the sender's memory, which
 * it may reuse once the send returns), so a peer that reads nothing holds no thread but at
 * most one frame of memory. A message that cannot go as it is (a port, a frame over the
 * limit) is left to the blocking send, which tells the peer why.
 */
static int
stream_sendv_desc_nb(struct stream_conn *c, const struct idl_xmsg *m)
{
	struct iovec iov[1 + IDL__OOL_IOV_MAX];
	struct msghdr mh = { .msg_iov = iov };
	struct idl__ool_out o;
	uint32_t prefix;
	size_t total;
	ssize_t k;
	int err = 0;

	o.iov = iov + 1;
	if (idl__ool_inline_out(m, stream_scheme(c), &o) != 0 || o.total > STREAM_FRAME_MAX)
		return IDL_ENOTSUP;
	prefix = htonl((uint32_t)o.total);
	iov[0] = (struct iovec){ &prefix, STREAM_PREFIX };
	mh.msg_iovlen = 1 + o.niov;
	total = STREAM_PREFIX + o.total;
	do
		k = stream_sendmsg(c, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (k < 0 && errno == EINTR);
	if (k < 0 && errno != EAGAIN)
		err = idl__stream_conn_err(c, errno);
	else if (k < 0 || (size_t)k < total)
		err = stream_keep_rest(c, iov, 1 + o.niov, k < 0 ? 0 : (size_t)k,
				       total - (k < 0 ? 0 : (size_t)k));
	idl__msg_release_sent(m->data);
	return err != 0 ? err : 1;
}

/* Frames gathered into one sendmsg: a pipelined client's batch goes to the kernel in one
 * system call, as the many frames of one write, instead of a call per frame. */
#define STREAM_NB_BATCH 32

/* How many of the k frames described by iov (a prefix and a body each) `sent` bytes cover
 * whole; *part is what was sent of the next one. */
static unsigned
stream_frames_sent(const struct iovec *iov, unsigned k, size_t sent, size_t *part)
{
	unsigned j = 0;

	while (j < k && sent >= STREAM_PREFIX + iov[2 * j + 1].iov_len) {
		sent -= STREAM_PREFIX + iov[2 * j + 1].iov_len;
		j++;
	}
	*part = sent;
	return j;
}

/* Every non-blocking send but one plain frame with nothing held before it (or that one's
 * send, after the fast path's sendmsg returned `raw` (sys_raw.h) other than the whole frame:
 * `raw` is IDL_RAW_NONE when it made none). */
__attribute__((noinline)) int
idl__stream_sendv_nb_gen(struct stream_conn *c, const struct idl_xmsg *msgs, unsigned n, long raw)
{
	int err;
	unsigned i = 0;

	if (c->smh.msg_iov == NULL)
		stream_conn_sargs(c);
	if (raw != IDL_RAW_NONE) {
		ssize_t k = idl__raw_errno(raw);

		/* The fast path's frame: c->siov holds it. */
		while (k < 0 && errno == EINTR)
			k = stream_sendmsg(c, &c->smh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno == EAGAIN)
			return 0;
		if (k <= 0)
			return idl__stream_conn_err(c, k < 0 ? errno : EPIPE);
		if ((size_t)k == STREAM_PREFIX + msgs[0].len)
			return 1;
		err = stream_keep_rest(c, c->siov, 2, (size_t)k,
				       STREAM_PREFIX + msgs[0].len - (size_t)k);
		return err != 0 ? err : 1;
	}
	/* Nothing left of an earlier frame, the usual case: no call to learn it. */
	err = c->out_len != 0 ? stream_out_nb(c) : 0;
	if (err != 0)
		return err == IDL_EAGAIN ? (n == 0 ? err : 0) : err;
	while (i < n) {
		uint32_t prefix[STREAM_NB_BATCH];
		struct iovec iov[2 * STREAM_NB_BATCH];
		struct msghdr mh = { .msg_iov = iov };
		size_t total = 0, part;
		unsigned k = 0, whole;
		ssize_t sent;

		if (idl__desc_msg(msgs[i].data, msgs[i].len))
			return i == 0 ? stream_sendv_desc_nb(c, &msgs[0]) : (int)i;
		if (msgs[i].len > STREAM_FRAME_MAX)
			return i == 0 ? IDL_EMSGSIZE : (int)i;
		/* Plain frames in a row, up to the batch: a message with descriptors or one over
		 * the limit ends the batch and is dealt with on its own, as above. */
		while (i + k < n && k < STREAM_NB_BATCH && msgs[i + k].len <= STREAM_FRAME_MAX &&
		       (k == 0 || !idl__desc_msg(msgs[i + k].data, msgs[i + k].len))) {
			prefix[k] = htonl((uint32_t)msgs[i + k].len);
			iov[2 * k] = (struct iovec){ &prefix[k], STREAM_PREFIX };
			iov[2 * k + 1] = (struct iovec){ msgs[i + k].data, msgs[i + k].len };
			total += STREAM_PREFIX + msgs[i + k].len;
			k++;
		}
		mh.msg_iovlen = 2 * k;
		do
			sent = stream_sendmsg(c, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		while (sent < 0 && errno == EINTR);
		if (sent < 0 && errno == EAGAIN)
			return (int)i;
		if (sent <= 0)
			return i == 0 ? idl__stream_conn_err(c, sent < 0 ? errno : EPIPE) : (int)i;
		if ((size_t)sent == total) {
			i += k;
			continue;
		}
		/* The kernel took part of the batch: the frames it took whole are sent, and the
		 * rest of the one it took part of is ours to write before anything else. */
		whole = stream_frames_sent(iov, k, (size_t)sent, &part);
		if (part == 0)
			return (int)(i + whole);
		if ((err = stream_keep_rest(c, &iov[2 * whole], 2, part,
					    STREAM_PREFIX + iov[2 * whole + 1].iov_len - part)) !=
		    0)
			return err;
		return (int)(i + whole + 1);
	}
	return (int)n;
}

/* One plain frame with nothing held before it, a server's reply: one sendmsg and no call,
 * where the batch's bookkeeping would cost it more than the system call it saves. */
int
idl__stream_conn_sendv_nb(void *vconn, const struct idl_xmsg *msgs, unsigned n)
{
	struct stream_conn *c = vconn;

	if (__builtin_expect(n == 1 && c->smh.msg_iov != NULL && c->out_len == 0 &&
				     msgs[0].len <= STREAM_FRAME_MAX &&
				     !idl__desc_msg(msgs[0].data, msgs[0].len),
			     1)) {
		size_t len = msgs[0].len;
		long k;

		c->sprefix = htonl((uint32_t)len);
		c->siov[1] = (struct iovec){ msgs[0].data, len };
		k = idl__raw_sendmsg(c->fd, &c->smh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if ((unsigned long)k == STREAM_PREFIX + len)
			return 1;
		return idl__stream_sendv_nb_gen(c, msgs, n, k);
	}
	return idl__stream_sendv_nb_gen(c, msgs, n, IDL_RAW_NONE);
}

/* Takes the whole frame at the head of the carry buffer when it is a plain message that fits
 * the caller's buffer: one copy, and none of the blocking receive's general path (the
 * pipelined case, many replies read by one receive). IDL_EAGAIN leaves anything else - a
 * frame too large, one with descriptors, a length over the limit - to that path. */
static int
stream_carry_take(struct stream_conn *c, struct idl_xmsg *m)
{
	const unsigned char *f = c->carry + c->carry_off;
	uint32_t len;

	memcpy(&len, f, STREAM_PREFIX);
	len = ntohl(len);
	if (len > STREAM_FRAME_MAX || len > m->cap || idl__desc_msg(f + STREAM_PREFIX, len))
		return IDL_EAGAIN;
	memcpy(m->data, f + STREAM_PREFIX, len);
	c->carry_off += STREAM_PREFIX + len;
	c->carry_len -= STREAM_PREFIX + len;
	m->len = len;
	m->nfds = 0;
	return 0;
}

/* Frees the carry buffer when it holds nothing. Called when a receive finds the socket
 * empty: a connection that goes quiet gives its buffer back, while one whose peer keeps
 * sending keeps it, rather than allocating and freeing one for every run of frames that one
 * receive brings in. */
static void
stream_carry_drop(struct stream_conn *c)
{
	if (c->carry_len != 0 || c->carry == NULL)
		return;
	free(c->carry);
	c->carry = NULL;
	c->carry_cap = c->carry_off = 0;
}

/*
 * conn_recv_nb and conn_recv_wait: reads what the socket has into the carry buffer until it
 * holds a whole frame, which is then taken from there without a system call (by
 * stream_carry_take(), or the blocking receive for a frame it leaves). A partial frame stays in
 * the carry buffer across calls: its memory is what the peer actually sent, never more than
 * one frame and the read-ahead. wait_ms > 0: the first receive, made when nothing is carried
 * over, waits up to that long for the first bytes (the socket's receive timeout, cached as
 * the blocking receive's is); every later one does not wait, so a partial frame is kept,
 * never waited for. `raw`: what the fast path's recvmsg returned (sys_raw.h), IDL_RAW_NONE
 * when it made none.
 */
__attribute__((noinline)) int
idl__stream_recv_nb_gen(struct stream_conn *c, struct idl_xmsg *m, int wait_ms, long raw)
{
	int err;

	if (c->rmh.msg_iov == NULL)
		stream_conn_rargs(c);
	/* The server's wait on a busy connection reads nothing while the rest of a reply is
	 * held: it waits for writability first (the contract's conn_recv_wait). */
	if (wait_ms > 0 && c->out_len != 0)
		return IDL_EAGAIN;
	/* The rest of a frame with out-of-line data goes straight into its blocks. */
	if (c->rx != NULL)
		return idl__stream_rx_recv(c, m, &(struct idl_deadline){ 0, wait_ms }, 1);
	/* With nothing carried over, the frame usually comes whole: one recvmsg scatters it
	 * into the caller's buffer as the blocking receive does, and no carry buffer is made
	 * and freed for it. Anything else - a partial frame, one too large for the caller -
	 * goes into the carry buffer, as if the loop below had read it. */
	if (c->carry_len == 0) {
		ssize_t n = idl__raw_errno(raw);
		int flags = MSG_CMSG_CLOEXEC | MSG_DONTWAIT;

		if (wait_ms > 0) {
			int t = idl__sock_timeo(c->fd, SO_RCVTIMEO, &c->rcvtimeo_us,
						&(struct idl_deadline){ 0, wait_ms });

			if (t < 0)
				return t;
			if (t == 0)
				flags = MSG_CMSG_CLOEXEC;
		}
		m->nfds = 0;
		c->riov[1] = (struct iovec){ m->data, m->cap };
		if (n == IDL_RAW_NONE)
			n = stream_recvmsg(c, &c->rmh, flags);
		while (n < 0 && errno == EINTR)
			n = stream_recvmsg(c, &c->rmh, flags);
		if (n == 0)
			return idl__stream_conn_err(c, EPIPE);
		if (n < 0 && errno == EAGAIN) {
			stream_carry_drop(c);
			return IDL_EAGAIN;
		}
		if (n < 0)
			return idl__stream_conn_err(c, errno);
		if ((size_t)n >= STREAM_PREFIX) {
			uint32_t len = ntohl(c->rprefix);
			size_t body = (size_t)n - STREAM_PREFIX;

			if (len <= STREAM_FRAME_MAX && len <= m->cap && body >= len) {
				if (body > len &&
				    (err = idl__stream_carry_put(c, (char *)m->data + len,
								 body - len)) != 0)
					return err;
				m->len = len;
				if (idl__desc_msg(m->data, len))
					return idl__stream_recv_desc(
						c, m, len, len, &(struct idl_deadline){ 0, 0 });
				return 0;
			}
			/* The start of a large frame with out-of-line data: the rest goes straight
			 * into its blocks. */
			if (idl__stream_rx_start(c, m->data, body, len, m->cap))
				return idl__stream_rx_recv(c, m,
							   &(struct idl_deadline){ 0, wait_ms }, 1);
		}
		err = idl__stream_carry_put(c, &c->rprefix,
					    (size_t)n < STREAM_PREFIX ? (size_t)n : STREAM_PREFIX);
		if (err == 0 && (size_t)n > STREAM_PREFIX)
			err = idl__stream_carry_put(c, m->data, (size_t)n - STREAM_PREFIX);
		if (err != 0)
			return err;
	}
	while (!stream_carry_whole(c)) {
		size_t want = STREAM_CARRY_MIN;
		ssize_t r;

		if (c->carry_len > STREAM_PREFIX) {
			uint32_t len;

			memcpy(&len, c->carry + c->carry_off, STREAM_PREFIX);
			if (idl__stream_rx_start(c, c->carry + c->carry_off + STREAM_PREFIX,
						 c->carry_len - STREAM_PREFIX, ntohl(len),
						 m->cap)) {
				c->carry_len = c->carry_off = 0;
				return idl__stream_rx_recv(c, m,
							   &(struct idl_deadline){ 0, wait_ms }, 1);
			}
		}

		if (c->carry_len >= STREAM_PREFIX) {
			uint32_t prefix;

			memcpy(&prefix, c->carry + c->carry_off, STREAM_PREFIX);
			want = STREAM_PREFIX + ntohl(prefix) - c->carry_len;
			if (want < STREAM_CARRY_MIN)
				want = STREAM_CARRY_MIN;
		}
		if (c->carry_len == 0)
			c->carry_off = 0;
		if (c->carry_off + c->carry_len + want > c->carry_cap) {
			size_t cap = c->carry_cap ? c->carry_cap : STREAM_CARRY_MIN;
			unsigned char *nb;

			while (cap < c->carry_len + want)
				cap *= 2;
			if (cap == c->carry_cap) {
				memmove(c->carry, c->carry + c->carry_off, c->carry_len);
			} else {
				if ((nb = malloc(cap)) == NULL)
					return IDL_ENOMEM;
				if (c->carry_len != 0)
					memcpy(nb, c->carry + c->carry_off, c->carry_len);
				free(c->carry);
				c->carry = nb;
				c->carry_cap = cap;
			}
			c->carry_off = 0;
		}
		r = stream_recv(c, c->carry + c->carry_off + c->carry_len,
				c->carry_cap - c->carry_off - c->carry_len, MSG_DONTWAIT);
		if (r > 0)
			c->carry_len += (size_t)r;
		else if (r == 0)
			return idl__stream_conn_err(c, EPIPE);
		else if (errno == EAGAIN)
			return IDL_EAGAIN;
		else if (errno != EINTR)
			return idl__stream_conn_err(c, errno);
	}
	err = stream_carry_take(c, m);
	if (err == IDL_EAGAIN)
		err = idl__stream_recv_gen(c, m, &(struct idl_deadline){ 0, 0 }, IDL_RAW_NONE, 0);
	/* A buffer grown for a large frame is not kept for the small ones after it. */
	if (c->carry_len == 0 && c->carry_cap > STREAM_CARRY_KEEP)
		stream_carry_drop(c);
	return err;
}

/* The common receive: nothing carried over or held, the socket's timeout already the wait's,
 * and one whole plain frame, nothing after it; one recvmsg and no call. The rest is
 * stream_recv_nb_gen()'s, which goes on from what that recvmsg returned. In line in both
 * entry points. */
static inline __attribute__((always_inline)) int
stream_recv_nb(struct stream_conn *c, struct idl_xmsg *m, int wait_ms)
{
	if (__builtin_expect(c->rmh.msg_iov != NULL && c->rx == NULL && c->carry_len == 0 &&
				     (wait_ms <= 0 || (c->out_len == 0 &&
						       c->rcvtimeo_us == (int64_t)wait_ms * 1000)),
			     1)) {
		long n;

		c->riov[1] = (struct iovec){ m->data, m->cap };
		n = idl__raw_recvmsg(c->fd, &c->rmh,
				     MSG_CMSG_CLOEXEC | (wait_ms > 0 ? 0 : MSG_DONTWAIT));
		if (stream_one_frame(c, m, n))
			return 0;
		return idl__stream_recv_nb_gen(c, m, wait_ms, n);
	}
	return idl__stream_recv_nb_gen(c, m, wait_ms, IDL_RAW_NONE);
}

int
idl__stream_conn_recv_nb(void *vconn, struct idl_xmsg *m)
{
	return stream_recv_nb(vconn, m, 0);
}

int
idl__stream_conn_recv_wait(void *vconn, struct idl_xmsg *m, int timeout_ms)
{
	return stream_recv_nb(vconn, m, timeout_ms);
}
