/*
 * floor_mq.c - the raw floor of the port: transport: two POSIX message queues, one for
 * requests and one for replies, mq_send() and mq_timedreceive() with a deadline (read from
 * the clock for each receive, as the transport's receive does; one that passes is waited
 * again), blocking, nothing else. The queues are created 0600 and removed by the server when
 * the cell ends (and by idlbench itself if a process died first).
 *
 * Layer 1, the floors (ib_floor.h): it knows the base and the job it is given; it must not
 * know rows, columns, cells, runs or reports.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ib_floor.h"

/* Queue depth: the default (and, without CAP_SYS_RESOURCE, the largest) of this kernel. */
#define FL_MQ_DEPTH 10
#define FL_MQ_MAX (64u * 1024u)

static int fl_mq_send(struct fl_chan *c, const void *buf, size_t len);
static long fl_mq_recv(struct fl_chan *c, void *buf, size_t len, size_t cap);

static void
fl_mq_names(const char *rest, char *q, char *r, size_t len)
{
	/* Names longer than NAME_MAX fail at mq_open; cut here only so it stays a C string. */
	snprintf(q, len, "%.*s.q", (int)len - 3, rest);
	snprintf(r, len, "%.*s.r", (int)len - 3, rest);
}

/* The per-user budget (RLIMIT_MSGQUEUE, 800 KiB) counts depth x size: ask for no more than
 * the largest message needs. */
static long
fl_mq_msgsize(size_t msgmax)
{
	size_t n = msgmax < 64 ? 64 : msgmax;

	return (long)((n + 63) & ~(size_t)63);
}

static int
fl_mq_listen(struct fl_listener *l, const char *rest, size_t msgmax)
{
	struct mq_attr a;
	char q[128], r[128];

	memset(l, 0, sizeof *l);
	l->fd = -1;
	l->qfd[0] = l->qfd[1] = -1;
	memset(&a, 0, sizeof a);
	a.mq_maxmsg = FL_MQ_DEPTH;
	a.mq_msgsize = fl_mq_msgsize(msgmax);
	fl_mq_names(rest, q, r, sizeof q);
	l->qfd[0] = mq_open(q, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
	if (l->qfd[0] < 0)
		return -1;
	snprintf(l->name, sizeof l->name, "%s", rest);
	l->qfd[1] = mq_open(r, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
	return l->qfd[1] < 0 ? -1 : 0;
}

/* A queue has no connection to wait for: the client's first message (a hello) stands for
 * it, so that accept returns once the client is there, as it does on a socket. */
static int
fl_mq_accept(struct fl_listener *l, struct fl_chan *c)
{
	char hello[FL_MQ_MAX];

	memset(c, 0, sizeof *c);
	c->rfd = l->qfd[0];
	c->fd = l->qfd[1];
	l->qfd[0] = l->qfd[1] = -1;
	if (c->rfd < 0 || c->fd < 0)
		return -1;
	return fl_mq_recv(c, hello, 1, sizeof hello) == 1 ? 0 : -1;
}

static int
fl_mq_connect(struct fl_chan *c, const char *rest, size_t msgmax)
{
	char q[128], r[128];

	(void)msgmax;
	memset(c, 0, sizeof *c);
	fl_mq_names(rest, q, r, sizeof q);
	c->fd = mq_open(q, O_WRONLY | O_CLOEXEC);
	c->rfd = mq_open(r, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0 || c->rfd < 0)
		return -1;
	return fl_mq_send(c, "H", 1);
}

static int
fl_mq_send(struct fl_chan *c, const void *buf, size_t len)
{
	int r;

	do
		r = mq_send(c->fd, buf, len, 0);
	while (r != 0 && errno == EINTR);
	return r;
}

static long
fl_mq_recv(struct fl_chan *c, void *buf, size_t len, size_t cap)
{
	ssize_t n;

	(void)len;
	do {
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += FL_DEADLINE_S;
		n = mq_timedreceive(c->rfd, buf, cap, NULL, &dl);
	} while (n < 0 && (errno == EINTR || errno == ETIMEDOUT));
	return (long)n;
}

static void
fl_mq_close(struct fl_chan *c)
{
	if (c->fd >= 0)
		mq_close(c->fd);
	if (c->rfd >= 0)
		mq_close(c->rfd);
	c->fd = c->rfd = -1;
}

static void
fl_mq_unlisten(struct fl_listener *l)
{
	char q[128], r[128];

	for (int i = 0; i < 2; i++)
		if (l->qfd[i] >= 0)
			mq_close(l->qfd[i]);
	l->qfd[0] = l->qfd[1] = -1;
	if (l->name[0] != '\0') {
		fl_mq_names(l->name, q, r, sizeof q);
		mq_unlink(q);
		mq_unlink(r);
	}
	l->name[0] = '\0';
}

void
fl_mq_cleanup(const char *rest)
{
	char q[128], r[128];

	fl_mq_names(rest, q, r, sizeof q);
	mq_unlink(q);
	mq_unlink(r);
}

/* A message queue has no call that moves several messages: the batches are one mq_send()
 * and one mq_receive() per message, and the loop keeps no more calls in flight than the
 * queues hold (fl_pipe_depth()), so that neither side ever blocks on a full queue. */
static long
fl_mq_send_batch(struct fl_chan *c, const void *buf, size_t len, unsigned count, int wait)
{
	(void)wait;
	for (unsigned i = 0; i < count; i++)
		if (fl_mq_send(c, (const char *)buf + (size_t)i * len, len) != 0)
			return -1;
	return (long)count;
}

static long
fl_mq_recv_batch(struct fl_chan *c, void *buf, size_t len, size_t cap, unsigned max)
{
	(void)max;
	return fl_mq_recv(c, buf, len, cap) < 0 ? -1 : 1;
}

const struct fl_ops fl_port_ops = {
	.scheme = "port",
	.max_msg = FL_MQ_MAX,
	.listen = fl_mq_listen,
	.accept = fl_mq_accept,
	.connect = fl_mq_connect,
	.send = fl_mq_send,
	.recv = fl_mq_recv,
	.close = fl_mq_close,
	.unlisten = fl_mq_unlisten,
	.send_batch = fl_mq_send_batch,
	.recv_batch = fl_mq_recv_batch,
	.depth = FL_MQ_DEPTH,
	.batching = "none: one mq_send() and one mq_receive() per message",
};
