/*
 * floor_pipe.c - the floor of --inflight N: the raw programs' pipelined loop, the least that
 * N calls in flight from one thread can cost on each kernel object (docs/benchmarks.md,
 * "Calls in flight").
 *
 * The client writes up to N requests before it reads a reply: one batch of the requests
 * that fit in the window, then a wait for the first reply, taking every reply already
 * there besides, then the next batch, until `iterations` calls have come back. The server
 * reads what requests are there (at least one) and answers them with one batch of replies.
 * A batch is what the kernel object allows in few system calls (fl_ops.send_batch and
 * recv_batch: sendmmsg/recvmmsg on unix and udp, one send of many frames on tcp, one
 * publish per batch on shm's rings; on port none, one mq_send per message). That is the
 * batching idlkit's asynchronous calls may use (docs/call-core.md), so the ratio compares
 * like with like.
 *
 * A send never waits once one of its messages went, and the client waits to send only when
 * no call is in flight: where a socket's buffer or a ring is full it reads replies first,
 * so that the two sides can never both wait to send. A message queue holds few messages (10) and
 * has no non-blocking batch: its loop keeps at most that many calls in flight (fl_pipe_depth()),
 * and the output says so.
 *
 * Layer 1, the floors (ib_floor.h): it knows the base and the job it is given; it must not
 * know rows, columns, cells, runs or reports.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "ib_floor.h"

/* The most messages one batch holds on the server (recvmmsg's UIO_MAXIOV). */
#define FL_PIPE_MAX 1024u

unsigned
fl_pipe_depth(const struct fl_ops *o, unsigned n)
{
	return o->depth != 0 && n > o->depth ? o->depth : n;
}

/* n messages of len bytes back to back, each filled with `fill` after tcp's length prefix
 * (the frame: len includes it). */
static unsigned char *
fl_pipe_buf(const struct fl_ops *o, size_t len, size_t stride, unsigned n, int fill)
{
	unsigned char *b = calloc(n, stride);

	for (unsigned i = 0; b != NULL && i < n; i++) {
		unsigned char *m = b + (size_t)i * stride;

		memset(m + o->frame, fill, len - o->frame);
		if (o->frame == 4) {
			uint32_t be = __builtin_bswap32((uint32_t)(len - 4));

			memcpy(m, &be, 4);
		}
	}
	return b;
}

int
fl_pipe_serve(const struct fl_ops *o, struct fl_chan *c, size_t req, size_t rep, size_t cap)
{
	unsigned char *in = calloc(FL_PIPE_MAX, cap > req ? cap : req);
	unsigned char *out = fl_pipe_buf(o, rep, rep, FL_PIPE_MAX, 'R');
	int r = 0;

	if (in == NULL || out == NULL)
		r = -1;
	while (r == 0) {
		long n = o->recv_batch(c, in, req, cap, FL_PIPE_MAX);

		if (n <= 0)
			break;
		/* The client never waits to send while it has calls in flight, so it reads
		 * these replies and the server may wait for room. */
		for (long sent = 0, k; r == 0 && sent < n; sent += k)
			if ((k = o->send_batch(c, out, rep, (unsigned)(n - sent), 1)) <= 0)
				r = -1;
	}
	free(in);
	free(out);
	return r;
}

/* `total` calls with up to n in flight. */
static int
fl_pipe_run(const struct fl_ops *o, struct fl_chan *c, unsigned total, unsigned n,
	    const unsigned char *rq, size_t req, unsigned char *rp, size_t rep, size_t cap)
{
	unsigned sent = 0, got = 0;

	while (got < total) {
		unsigned room = n - (sent - got);

		if (room > total - sent)
			room = total - sent;
		if (room > 0) {
			/* Wait to send only when nothing is in flight: otherwise a full buffer
			 * means replies are there to read first. */
			long k = o->send_batch(c, rq, req, room, sent == got);

			if (k < 0)
				return -1;
			sent += (unsigned)k;
		}
		if (sent > got) {
			long k = o->recv_batch(c, rp, rep, cap, sent - got);

			if (k <= 0) {
				if (k == 0)
					errno = ECONNRESET;
				return -1;
			}
			got += (unsigned)k;
		}
	}
	return 0;
}

int
fl_pipe_calls(const struct fl_job *j, struct fl_chan *c, size_t req, size_t rep, size_t cap,
	      struct ib_reps *out)
{
	const struct fl_ops *o = j->ops;
	unsigned n = fl_pipe_depth(o, j->inflight);
	unsigned char *rq = fl_pipe_buf(o, req, req, n, 'Q');
	unsigned char *rp = calloc(n, cap > rep ? cap : rep);
	int r = -1;

	if (rq == NULL || rp == NULL)
		goto done;
	/* A datagram lost on udp would leave the loop waiting for its reply: the floor has
	 * no retransmission, so it gives up, and says so, rather than hang. */
	if (o == &fl_udp_ops) {
		struct timeval tv = { 2, 0 };

		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	}
	ib_cpu_mark(out);
	if (fl_pipe_run(o, c, j->warmup, n, rq, req, rp, rep, cap) != 0)
		goto done;
	for (unsigned k = 0; k < j->reps; k++) {
		double t0 = ib_now(), t1;

		if (fl_pipe_run(o, c, j->iterations, n, rq, req, rp, rep, cap) != 0)
			goto done;
		t1 = ib_now();
		out->v[out->n++] = j->iterations / (t1 - t0);
	}
	ib_cpu_mark(out);
	r = 0;
done:
	if (r != 0)
		snprintf(out->why, sizeof out->why, "in flight: %s",
			 o == &fl_udp_ops && (errno == EAGAIN || errno == EWOULDBLOCK)
				 ? "a datagram was lost (no reply in 2 s)"
				 : strerror(errno));
	free(rq);
	free(rp);
	return r;
}
