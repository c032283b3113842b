/*
 * floor.c - the floor of every row: our own raw program over the same kernel object, with
 * the same byte counts as the row's request and reply (header included, and the transport's
 * own framing), blocking sends and receives, in the same round and placement as the row it
 * is printed beside (docs/benchmarks.md, "The floor"). The kernel objects are in floor_sock.c,
 * floor_mq.c and floor_shm.c; this file has the loops, the same for all of them.
 *
 *   call      the client sends the request and receives the reply, `iterations` times;
 *   one-way   the client sends `iterations` messages, then a sync message that the server
 *             answers with the count it received (a datagram may be lost: the rate is what
 *             arrived); idlkit's row does the same with notify and one intrpc;
 *   ping-pong two processes, each receiving on its own endpoint and sending to the
 *             other's, pass a counter back and forth (seed 002);
 *   sendto    one-way over UDP with the client's socket unconnected (seed 003);
 *   bandwidth the call loop with the payload carried as the transport carries out-of-line
 *             data (floor_ool.c);
 *   in flight the call loop with --inflight N requests sent before their replies are read,
 *             in batches (floor_pipe.c);
 *   connect   a new connection for every call: connect (its TLS handshake on tls:, full or
 *             resuming the last one's session), one round trip, close; the server accepts
 *             and serves one connection after the other.
 *
 * Layer 1, the floors (ib_floor.h): a floor knows the base and the job it is given; it must
 * not know rows, columns, cells, runs or reports. The cells turn a row into a job
 * (idlbench_cell.c).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ib_floor.h"

#define FL_SYNC 'S'
#define FL_DATA 'N'
/* Where the ping-pong counter sits: where notify's `value` is in idlkit's message. */
#define FL_VALUE_OFF 24u

struct fl_sizes {
	size_t req, rep; /* the row's messages */
	size_t sreq, srep; /* the one-way sync round trip */
	size_t frame;
	size_t msgmax; /* the largest of them, without the frame */
	size_t cap; /* receive buffer */
};

const struct fl_ops *
fl_find(const char *scheme)
{
	static const struct fl_ops *const all[] = {
		&fl_unix_ops,
		&fl_udp_ops,
		&fl_tcp_ops,
		&fl_shm_ops,
		&fl_port_ops,
#if HAVE_TRANSPORT_TLS
		&fl_tls_ops,
#endif
	};

	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (strcmp(all[i]->scheme, scheme) == 0)
			return all[i];
	return NULL;
}

static void
fl_sizes(const struct fl_job *j, struct fl_sizes *z)
{
	size_t m;

	memset(z, 0, sizeof z[0]);
	z->req = j->req;
	z->rep = j->rep;
	z->sreq = j->sreq;
	z->srep = j->srep;
	z->frame = j->ops->frame;
	m = z->req;
	if (z->rep > m)
		m = z->rep;
	if (z->sreq > m)
		m = z->sreq;
	if (z->srep > m)
		m = z->srep;
	z->msgmax = m;
	z->cap = (m + z->frame + 64 + 63) & ~(size_t)63;
}

static void *
fl_buf(const struct fl_sizes *z, int fill)
{
	unsigned char *b = calloc(1, z->cap);

	if (b != NULL)
		memset(b + z->frame, fill, z->cap - z->frame - 64);
	return b;
}

/* Sends a message of len bytes (plus the frame) from b. */
static int
fl_put(const struct fl_ops *o, struct fl_chan *c, unsigned char *b, size_t len, size_t frame)
{
	if (frame == 4) {
		uint32_t be = __builtin_bswap32((uint32_t)len);

		memcpy(b, &be, 4);
	}
	return o->send(c, b, len + frame);
}

static long
fl_get(const struct fl_ops *o, struct fl_chan *c, unsigned char *b, size_t len,
       const struct fl_sizes *z)
{
	return o->recv(c, b, len + z->frame, z->cap);
}

static int
fl_serve_calls(const struct fl_ops *o, struct fl_chan *c, const struct fl_sizes *z)
{
	unsigned char *in = fl_buf(z, 0), *out = fl_buf(z, 'R');

	if (in == NULL || out == NULL)
		return -1;
	while (fl_get(o, c, in, z->req, z) > 0)
		if (fl_put(o, c, out, z->rep, z->frame) != 0)
			break;
	free(in);
	free(out);
	return 0;
}

static int
fl_serve_oneway(const struct fl_ops *o, struct fl_chan *c, const struct fl_sizes *z)
{
	unsigned char *in = fl_buf(z, 0), *out = fl_buf(z, 'A');
	uint32_t count = 0;

	if (in == NULL || out == NULL)
		return -1;
	for (;;) {
		long n = fl_get(o, c, in, z->req, z);

		if (n <= 0)
			break;
		if (in[z->frame] != FL_SYNC) {
			count++;
			continue;
		}
		memcpy(out + z->frame + FL_VALUE_OFF, &count, sizeof count);
		count = 0;
		if (fl_put(o, c, out, z->srep, z->frame) != 0)
			break;
	}
	free(in);
	free(out);
	return 0;
}

/* The connection rows' server: each connection accepted is served to its end, then the next,
 * until the cell stops the process. c is the first one, closed here. */
static int
fl_serve_connects(const struct fl_ops *o, struct fl_listener *l, struct fl_chan *c,
		  const struct fl_sizes *z)
{
	int r;

	do {
		r = fl_serve_calls(o, c, z);
		o->close(c);
	} while (r == 0 && o->accept(l, c) == 0);
	return r;
}

/* One side of the ping-pong: receive the counter, send it on less one; the driver stops
 * when it receives 1. Returns 1 when the driver saw the end, 0 at end of input, -1 on error. */
static int
fl_pingpong(const struct fl_ops *o, struct fl_chan *in, struct fl_chan *out,
	    const struct fl_sizes *z, unsigned char *b, int driver)
{
	for (;;) {
		uint32_t v;

		if (fl_get(o, in, b, z->req, z) <= 0)
			return 0;
		memcpy(&v, b + z->frame + FL_VALUE_OFF, sizeof v);
		if (driver && v <= 1)
			return 1;
		v--;
		memcpy(b + z->frame + FL_VALUE_OFF, &v, sizeof v);
		if (fl_put(o, out, b, z->req, z->frame) != 0)
			return -1;
	}
}

int
fl_serve(const struct fl_job *j, int ready_fd)
{
	const struct fl_ops *o = j->ops;
	const char *rest = strchr(j->addr, ':') + 1;
	struct fl_listener l;
	struct fl_chan c, back;
	struct fl_sizes z;
	unsigned char *b;
	int r = -1;

	fl_sizes(j, &z);
	if (o->listen(&l, rest, z.msgmax + z.frame) != 0) {
		char msg[200];

		snprintf(msg, sizeof msg, "floor listen %s: %s", j->addr, strerror(errno));
		ib_ready(ready_fd, msg);
		o->unlisten(&l);
		return 1;
	}
	ib_ready(ready_fd, NULL);
	if (o->accept(&l, &c) != 0)
		goto out;
	switch (j->mode) {
	case FL_CALL:
		if (j->inflight > 1)
			r = fl_pipe_serve(o, &c, z.req + z.frame, z.rep + z.frame, z.cap);
		else if (j->payload != 0)
			r = fl_ool_serve(o, &c, z.req, z.rep, j->payload);
		else
			r = fl_serve_calls(o, &c, &z);
		break;
	case FL_ONEWAY:
	case FL_SENDTO:
		r = fl_serve_oneway(o, &c, &z);
		break;
	case FL_CONNECT:
		r = fl_serve_connects(o, &l, &c, &z);
		break;
	case FL_PINGPONG:
		/* Connect back to the driver, which listens on addr2 before it connects. */
		if (o->connect(&back, strchr(j->addr2, ':') + 1, z.msgmax + z.frame) != 0)
			break;
		if ((b = fl_buf(&z, 'P')) != NULL) {
			r = fl_pingpong(o, &c, &back, &z, b, 0) < 0 ? -1 : 0;
			free(b);
		}
		o->close(&back);
		break;
	}
	o->close(&c);
out:
	o->unlisten(&l);
	return r == 0 ? 0 : 1;
}

static int
fl_fail(struct ib_reps *out, const char *what)
{
	snprintf(out->why, sizeof out->why, "floor %s: %s", what, strerror(errno));
	return -1;
}

/* One iteration of the call loop: a round trip on c. */
static int
fl_call_once(const struct fl_job *j, struct fl_chan *c, const struct fl_sizes *z, unsigned char *rq,
	     unsigned char *rp)
{
	return fl_put(j->ops, c, rq, z->req, z->frame) == 0 && fl_get(j->ops, c, rp, z->rep, z) > 0
		       ? 0
		       : -1;
}

/* One iteration of the connection rows: a connection of its own (c unused), a round trip on
 * it, the close. */
static int
fl_connect_once(const struct fl_job *j, struct fl_chan *c, const struct fl_sizes *z,
		unsigned char *rq, unsigned char *rp)
{
	const struct fl_ops *o = j->ops;
	struct fl_chan own;
	int r;

	(void)c;
	memset(&own, 0, sizeof own);
	own.fd = own.rfd = -1;
	r = o->connect(&own, strchr(j->addr, ':') + 1, z->msgmax + z->frame) == 0 &&
			    fl_call_once(j, &own, z, rq, rp) == 0
		    ? 0
		    : -1;
	o->close(&own);
	return r;
}

/* The timed loop of calls (microseconds per call) or of connections (connections per
 * second): the warm-up, then each repetition's iterations. */
static int
fl_timed(const struct fl_job *j, struct fl_chan *c, const struct fl_sizes *z,
	 int (*once)(const struct fl_job *, struct fl_chan *, const struct fl_sizes *,
		     unsigned char *, unsigned char *),
	 const char *what, struct ib_reps *out)
{
	unsigned char *rq = fl_buf(z, 'Q'), *rp = fl_buf(z, 0);
	int r = -1;

	if (rq == NULL || rp == NULL)
		goto done;
	ib_cpu_mark(out);
	for (unsigned i = 0; i < j->warmup; i++)
		if (once(j, c, z, rq, rp) != 0)
			goto done;
	for (unsigned k = 0; k < j->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; i < j->iterations; i++)
			if (once(j, c, z, rq, rp) != 0)
				goto done;
		t1 = ib_now();
		out->v[out->n++] = j->mode == FL_CONNECT ? j->iterations / (t1 - t0)
							 : (t1 - t0) * 1e6 / j->iterations;
	}
	ib_cpu_mark(out);
	r = 0;
done:
	free(rq);
	free(rp);
	return r == 0 ? 0 : fl_fail(out, what);
}

/* n one-way messages and the sync; returns what the server counted, or -1. */
static long
fl_burst(const struct fl_ops *o, struct fl_chan *c, const struct fl_sizes *z, unsigned n,
	 unsigned char *msg, unsigned char *sync, unsigned char *ack, int use_sendto)
{
	uint32_t count;

	for (unsigned i = 0; i < n; i++) {
		int r = use_sendto ? fl_udp_sendto(c, msg, z->req)
				   : fl_put(o, c, msg, z->req, z->frame);

		if (r != 0)
			return -1;
	}
	/* Datagrams get lost: the sync is resent until its answer comes (the client's socket
	 * has a receive timeout for that, set before the timing starts). */
	for (int tries = 0; tries < 50; tries++) {
		int r = use_sendto ? fl_udp_sendto(c, sync, z->sreq)
				   : fl_put(o, c, sync, z->sreq, z->frame);

		if (r != 0)
			return -1;
		if (fl_get(o, c, ack, z->srep, z) > 0) {
			memcpy(&count, ack + z->frame + FL_VALUE_OFF, sizeof count);
			return count;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
	}
	errno = ETIMEDOUT;
	return -1;
}

static int
fl_oneway(const struct fl_job *j, struct fl_chan *c, const struct fl_sizes *z, struct ib_reps *out)
{
	const struct fl_ops *o = j->ops;
	unsigned char *msg = fl_buf(z, FL_DATA), *sync = fl_buf(z, FL_SYNC), *ack = fl_buf(z, 0);
	int use_sendto = j->mode == FL_SENDTO;
	int r = -1;

	if (msg == NULL || sync == NULL || ack == NULL)
		goto done;
	if (o == &fl_udp_ops) {
		struct timeval tv = { 0, 200000 };

		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		if (use_sendto && fl_udp_disconnect(c, strchr(j->addr, ':') + 1) != 0)
			goto done;
	}
	ib_cpu_mark(out);
	if (fl_burst(o, c, z, j->warmup, msg, sync, ack, use_sendto) < 0)
		goto done;
	for (unsigned k = 0; k < j->reps; k++) {
		double t0 = ib_now(), t1;
		long got = fl_burst(o, c, z, j->iterations, msg, sync, ack, use_sendto);

		if (got < 0)
			goto done;
		t1 = ib_now();
		/* The user's rows count what was sent: their server counts nothing. */
		out->v[out->n++] =
			(double)(j->count_sent ? j->iterations : (unsigned long)got) / (t1 - t0);
	}
	ib_cpu_mark(out);
	r = 0;
done:
	free(msg);
	free(sync);
	free(ack);
	return r == 0 ? 0 : fl_fail(out, "one-way");
}

static int
fl_drive_pingpong(const struct fl_job *j, struct fl_chan *c, const struct fl_sizes *z,
		  struct ib_reps *out)
{
	const struct fl_ops *o = j->ops;
	const char *rest2 = strchr(j->addr2, ':') + 1;
	unsigned char *b = fl_buf(z, 'P');
	struct fl_listener l;
	struct fl_chan in;
	int listening = 0, accepted = 0, r = -1;

	if (b == NULL)
		return fl_fail(out, "ping-pong");
	/* Our own endpoint, before the other side connects back to it (floor_serve). */
	memset(&l, 0, sizeof l);
	if (o->listen(&l, rest2, z->msgmax + z->frame) != 0)
		goto done;
	listening = 1;
	if (o->connect(c, strchr(j->addr, ':') + 1, z->msgmax + z->frame) != 0 ||
	    o->accept(&l, &in) != 0)
		goto done;
	accepted = 1;
	ib_cpu_mark(out);
	for (unsigned k = 0; k <= j->reps; k++) {
		unsigned n = k == 0 ? j->warmup : j->iterations;
		uint32_t v = 2 * n;
		double t0 = ib_now(), t1;

		memcpy(b + z->frame + FL_VALUE_OFF, &v, sizeof v);
		if (fl_put(o, c, b, z->req, z->frame) != 0 || fl_pingpong(o, &in, c, z, b, 1) != 1)
			goto done;
		t1 = ib_now();
		if (k > 0)
			out->v[out->n++] = 2.0 * n / (t1 - t0);
	}
	ib_cpu_mark(out);
	r = 0;
done:
	if (r != 0)
		fl_fail(out, "ping-pong");
	if (accepted)
		o->close(&in);
	if (listening)
		o->unlisten(&l);
	free(b);
	return r;
}

int
fl_client(const struct fl_job *j, struct ib_reps *out)
{
	const struct fl_ops *o = j->ops;
	struct fl_chan c;
	struct fl_sizes z;
	int r;

	memset(&c, 0, sizeof c);
	c.fd = c.rfd = -1;
	fl_sizes(j, &z);
	if (j->mode == FL_PINGPONG) {
		r = fl_drive_pingpong(j, &c, &z, out);
		o->close(&c);
		return r;
	}
	if (j->mode == FL_CONNECT) {
#if HAVE_TRANSPORT_TLS
		if (o == &fl_tls_ops)
			fl_tls_keep_sessions(j->resume);
#endif
		return fl_timed(j, &c, &z, fl_connect_once, "connect", out);
	}
	if (o->connect(&c, strchr(j->addr, ':') + 1, z.msgmax + z.frame) != 0) {
		fl_fail(out, "connect");
		o->close(&c);
		return -1;
	}
	if (j->mode == FL_CALL && j->inflight > 1)
		r = fl_pipe_calls(j, &c, z.req + z.frame, z.rep + z.frame, z.cap, out);
	else if (j->mode == FL_CALL && j->payload != 0)
		r = fl_ool_calls(j, &c, out);
	else if (j->mode == FL_CALL)
		r = fl_timed(j, &c, &z, fl_call_once, "call", out);
	else
		r = fl_oneway(j, &c, &z, out);
	o->close(&c);
	return r;
}
