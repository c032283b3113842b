/*
 * stream_rx.c - a frame with out-of-line data received straight into the blocks the receiver
 * hands on, across as many receives as it takes (stream.h).
 *
 * The non-blocking receive reads what the socket has into the carry buffer until a frame is
 * whole. For a frame carrying out-of-line data that would put every byte of the data in the
 * carry buffer first and then copy it into the blocks the routine gets: for bulk data a
 * second pass over all of it, the largest cost of the call. So once the carry buffer holds
 * the frame's message (its header and descriptors) and their layout checks out, each datum
 * gets its block at once, what the carry buffer already has of the data is copied over, and
 * every later read scatters the stream straight into the blocks.
 *
 * The state lives in the connection between receives, as a partial frame in the carry
 * buffer does, so a peer that stops midway still holds no thread. What it holds is the
 * blocks its descriptors announced, within STREAM_FRAME_MAX: the memory the blocking receive
 * would allocate for the same frame, mapped but not touched until the data comes. A frame
 * that is not right - a layout that lies, a message larger than the receiver's buffer, no
 * memory - is left to the carry buffer and the blocking receive, which refuse it and keep
 * the framing.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <arpa/inet.h>

#include "sock_timeo.h"
#include "stream.h"

struct stream_rx {
	size_t len; /* the frame's length: the message and its data */
	size_t pos; /* bytes of the frame received */
	uint32_t nd; /* the message's descriptors */
	unsigned char pad[IDL_MSG_ALIGN]; /* where padding is read to, and dropped */
	/* The message (len bytes of it are the header's size), each descriptor's addr
	 * pointing at its block. */
	unsigned char msg[] __attribute__((aligned(8)));
};

static size_t
rx_msize(const struct stream_rx *rx)
{
	return ((const idl_msg_header_t *)(const void *)rx->msg)->size;
}

/* Copies n bytes of the frame at rx->pos from p into the blocks. */
static void
rx_copy(struct stream_rx *rx, const unsigned char *p, size_t n)
{
	struct iovec iov[2 * IDL_DESC_MAX];
	unsigned k = idl__ool_inline_iov(rx->msg, rx_msize(rx), rx->nd, rx->pos, iov, rx->pad);

	rx->pos += n;
	for (unsigned i = 0; i < k && n > 0; i++) {
		size_t m = n < iov[i].iov_len ? n : iov[i].iov_len;

		memcpy(iov[i].iov_base, p, m);
		p += m;
		n -= m;
	}
}

void
idl__stream_rx_drop(struct stream_conn *c)
{
	if (c->rx == NULL)
		return;
	idl__ool_inline_free(c->rx->msg, c->rx->nd);
	free(c->rx);
	c->rx = NULL;
}

int
idl__stream_rx_start(struct stream_conn *c, const unsigned char *body, size_t have, uint32_t len,
		     size_t cap)
{
	idl_msg_header_t h;
	struct stream_rx *rx;
	uint32_t nd;

	/* Only a frame still coming whose message is all here and fits the caller. */
	if (have < IDL_MSG_HEADER_SIZE || !idl__desc_msg(body, have) || len > STREAM_FRAME_MAX ||
	    have >= len)
		return 0;
	memcpy(&h, body, sizeof h);
	if (h.size > have || h.size > cap)
		return 0;
	if ((rx = malloc(sizeof *rx + h.size)) == NULL)
		return 0;
	memcpy(rx->msg, body, h.size);
	if (idl__ool_inline_layout(rx->msg, h.size, len, stream_scheme(c), &nd) != 0 ||
	    idl__ool_inline_alloc(rx->msg, nd, stream_scheme(c)) != 0) {
		free(rx);
		return 0;
	}
	rx->len = len;
	rx->nd = nd;
	rx->pos = h.size;
	rx_copy(rx, body + h.size, have - h.size);
	c->rx = rx;
	return 1;
}

/* The frame is whole: its message goes to the caller, the blocks with it. */
static int
rx_done(struct stream_conn *c, struct idl_xmsg *m)
{
	struct stream_rx *rx = c->rx;
	size_t msize = rx_msize(rx);

	if (msize > m->cap) {
		/* A caller whose buffer shrank since the frame began: refused whole. */
		idl__stream_rx_drop(c);
		return IDL_EMSGSIZE;
	}
	memcpy(m->data, rx->msg, msize);
	m->len = msize;
	m->nfds = 0;
	free(rx);
	c->rx = NULL;
	return 0;
}

int
idl__stream_rx_recv(struct stream_conn *c, struct idl_xmsg *m, struct idl_deadline *dl, int linger)
{
	struct stream_rx *rx = c->rx;

	for (;;) {
		struct iovec iov[2 * IDL_DESC_MAX];
		struct msghdr mh = { .msg_iov = iov };
		int t = idl__sock_timeo(c->fd, SO_RCVTIMEO, &c->rcvtimeo_us, dl);
		ssize_t n;

		if (t < 0)
			return t;
		mh.msg_iovlen =
			idl__ool_inline_iov(rx->msg, rx_msize(rx), rx->nd, rx->pos, iov, rx->pad);
		n = stream_recvmsg(c, &mh, t == 1 ? MSG_DONTWAIT : 0);
		if (n > 0) {
			rx->pos += (size_t)n;
			if (rx->pos == rx->len)
				return rx_done(c, m);
			/* A lingering wait waits its whole time again for the next bytes; a
			 * receive under a deadline waits for what is left of it. */
			if (!linger)
				idl__sock_again(dl);
		} else if (n == 0) {
			return idl__stream_conn_err(c, EPIPE);
		} else if (errno == EAGAIN) {
			if (t == 1 || idl__sock_late(dl))
				return linger ? IDL_EAGAIN : IDL_ETIMEDOUT;
		} else if (errno == EINTR) {
			if (!linger)
				idl__sock_again(dl);
		} else {
			return idl__stream_conn_err(c, errno);
		}
	}
}
