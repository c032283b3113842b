/*
 * mq_io.c - the data path of the port: transport: one mq_send and one mq_timedreceive per
 * message, messages too large for the queue out of line through a shared-memory object,
 * the control messages that stand in for the hang-up and the wake-up a queue lacks, and the
 * clean-up at the end of a connection. docs/transports/port.md has the design.
 */
#include <config.h>

/* pread, strerror: POSIX and GNU interfaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "mq.h"
#include "sock/sys_raw.h"

/* Without a pidfd, a wait wakes this often to ask whether the peer still lives. */
#define MQ_POLL_MS 100
/* A receive that got a wake-up meant for nobody (close not called): wait again. Errors are
 * negative, so this is none of them. */
#define MQ_AGAIN 1
/* The shortest deadline whose receive waits at a slice's end kept from an earlier receive
 * (mq_recv_gen()): the most a kept end can make it late, a slice, is 2% of it. */
#define MQ_KEEP_MIN_NS (50 * MQ_SLICE_NS)
/* How long the goodbye may wait for room in the peer's queue. */
#define MQ_BYE_MS 50

_Static_assert(sizeof(struct mq_ctl) <= 128, "a control message fits the smallest queue");

void
idl__mq_random(void *buf, size_t n)
{
	static atomic_uint counter;
	unsigned char *p = buf;
	ssize_t got = getrandom(buf, n, GRND_NONBLOCK);

	if (got == (ssize_t)n)
		return;
	/* No entropy yet (early boot): names then only need to be unlikely to collide, and
	 * O_EXCL catches a collision. */
	for (size_t i = 0; i < n; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		p[i] = (unsigned char)((uint64_t)ts.tv_nsec * 2654435761u >> 13 ^
				       (unsigned)getpid() ^ atomic_fetch_add(&counter, 1) << 3);
	}
}

void
idl__mq_name(char *buf, char kind)
{
	uint64_t r;

	idl__mq_random(&r, sizeof r);
	snprintf(buf, MQ_NAME_MAX, "/idlport.%ld.%016llx.%c", (long)getpid(), (unsigned long long)r,
		 kind);
}

int
idl__mq_name_ok(const char *s, char kind)
{
	static const char prefix[] = "/idlport.";
	size_t i = sizeof prefix - 1, digits = 0, hex = 0;

	if (memchr(s, '\0', MQ_NAME_MAX) == NULL || strncmp(s, prefix, i) != 0)
		return 0;
	for (; s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (digits == 0 || digits > 10 || s[i++] != '.')
		return 0;
	for (; (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'); i++)
		hex++;
	return hex == 16 && s[i] == '.' && s[i + 1] == kind && s[i + 2] == '\0';
}

void
idl__mq_abstime(int64_t deadline, int64_t wait_ns, struct timespec *ts)
{
	if (deadline != IDL_DEADLINE_NONE) {
		int64_t left = deadline - idl_now_ns();

		if (left < wait_ns)
			wait_ns = left > 0 ? left : 0;
	}
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(wait_ns / 1000000000);
	ts->tv_nsec += (long)(wait_ns % 1000000000);
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* The resolution of CLOCK_REALTIME_COARSE, ns: how much earlier than the precise clock it
 * may read. */
static int64_t mq_coarse_res;

void
idl__mq_slice_init(void)
{
	struct timespec res;

	mq_coarse_res = clock_getres(CLOCK_REALTIME_COARSE, &res) == 0
				? (int64_t)res.tv_sec * 1000000000 + res.tv_nsec
				: 0;
	/* A coarse clock as coarse as a slice cannot time one. */
	if (mq_coarse_res >= MQ_SLICE_NS / 2)
		mq_coarse_res = -1;
}

/*
 * The end of the fast path's first wait, a slice from now, for a deadline not anchored
 * yet; returns how long the wait is at least (ns), and whether it is the call's whole
 * timeout (*whole: the deadline then passes with it). A slice needs no precision, so it is
 * timed with the coarse clock (no clock read worth the name); a timeout shorter than a
 * slice ends the wait itself, timed with the precise one.
 */
static int64_t
mq_first_wait(const struct idl_deadline *dl, struct timespec *ts, int *whole)
{
	int64_t wait = MQ_SLICE_NS, least;

	*whole = dl->ms >= 0 && (int64_t)dl->ms * 1000000 <= MQ_SLICE_NS;
	if (*whole)
		wait = (int64_t)dl->ms * 1000000;
	if (*whole || mq_coarse_res < 0) {
		clock_gettime(CLOCK_REALTIME, ts);
		least = wait;
	} else {
		clock_gettime(CLOCK_REALTIME_COARSE, ts);
		least = wait - mq_coarse_res;
	}
	ts->tv_sec += (time_t)(wait / 1000000000);
	ts->tv_nsec += (long)(wait % 1000000000);
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
	return least;
}

int
idl__mq_ctl_put(mqd_t q, long msgsize, uint32_t type)
{
	char buf[8192] __attribute__((aligned(8)));
	struct mq_ctl *k = (struct mq_ctl *)buf;
	struct timespec ts;

	if (msgsize < (long)sizeof *k || msgsize > (long)sizeof buf)
		return IDL_EINVAL;
	memset(buf, 0, (size_t)msgsize);
	memcpy(k->magic, MQ_CTL_MAGIC, sizeof k->magic);
	k->type = type;
	/* A time already past: a full queue fails at once, blocking descriptor or not. */
	idl__mq_abstime(IDL_DEADLINE_NONE, 0, &ts);
	while (mq_timedsend(q, buf, (size_t)msgsize, 0, &ts) != 0)
		if (errno != EINTR)
			return IDL_ESYSERR(errno);
	return 0;
}

static int
mq_is_ctl(const void *buf, size_t n, long msgsize)
{
	return n == (size_t)msgsize && memcmp(buf, MQ_CTL_MAGIC, 8) == 0;
}

/* Whether the peer's process has exited, asked without waiting. */
static int
mq_peer_exited(struct mq_conn *c)
{
	struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

	if (atomic_load(&c->dead))
		return 1;
	if (c->pidfd >= 0)
		return poll(&p, 1, 0) == 1;
	return c->pid > 0 && kill(c->pid, 0) != 0 && errno == ESRCH;
}

/*
 * The slow path's wait: until q is ready for `events`, the peer's process exits, the
 * connection is closed, or the deadline passes. The epoll set is made the first time it is
 * needed, by the one thread that owns this direction. Returns 0 to try again, 1 when the
 * peer has exited, or an error.
 */
/* What a direction's epoll set holds, by its data: the queue, the peer's pidfd, the close
 * eventfd, and (the receive set of an embedded server's connection, while the peer's queue
 * is full) the send queue. */
enum {
	MQ_SET_Q = 0,
	MQ_SET_PID = 1,
	MQ_SET_CLOSE = 2,
	MQ_SET_SQ = 3
};

/* Makes q's epoll set, once: q's queue for `events`, the peer's exit, the close. */
static int
mq_set(struct mq_conn *c, struct mq_q *q, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.u32 = MQ_SET_Q };
	int saved;

	if (q->epfd >= 0)
		return 0;
	if ((q->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return IDL_ESYSERR(errno);
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->mq, &e) != 0)
		goto fail;
	e.events = EPOLLIN;
	e.data.u32 = MQ_SET_PID;
	if (c->pidfd >= 0 && epoll_ctl(q->epfd, EPOLL_CTL_ADD, c->pidfd, &e) != 0)
		goto fail;
	e.data.u32 = MQ_SET_CLOSE;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, c->evfd, &e) != 0)
		goto fail;
	return 0;
fail:
	saved = errno;
	close(q->epfd);
	q->epfd = -1;
	return IDL_ESYSERR(saved);
}

static int
mq_wait(struct mq_conn *c, struct mq_q *q, uint32_t events, int64_t deadline)
{
	struct epoll_event ev[3];
	int n, ms = -1, err;

	if ((err = mq_set(c, q, events)) != 0)
		return err;
	if (deadline != IDL_DEADLINE_NONE) {
		int64_t left = deadline - idl_now_ns();

		ms = left <= 0 ? 0 : left >= (int64_t)1 << 40 ? 1 << 30 : (int)(left / 1000000) + 1;
	}
	if (c->pidfd < 0 && (ms < 0 || ms > MQ_POLL_MS))
		ms = MQ_POLL_MS;
	n = epoll_wait(q->epfd, ev, 3, ms);
	if (n < 0)
		return errno == EINTR ? 0 : IDL_ESYSERR(errno);
	for (int i = 0; i < n; i++)
		if (ev[i].data.u32 == MQ_SET_PID)
			return 1;
	return c->pidfd < 0 && mq_peer_exited(c);
}

/* Maps an errno of a queue operation. */
static int
mq_err(struct mq_conn *c, int e)
{
	if (atomic_load(&c->closed))
		return IDL_ECLOSED;
	return IDL_ESYSERR(e);
}

/* Goes on sending len bytes on the connection's send queue after a send of them returned r
 * (sys_raw.h), waiting for room until the deadline. */
static __attribute__((noinline)) int
mq_put_more(struct mq_conn *c, const void *data, size_t len, struct idl_deadline *dl, long r)
{
	int dead = 0, w;

	for (;; r = idl__raw_mq_send(c->sq.mq, data, len)) {
		if (r == 0)
			return 0;
		if (r == -EINTR)
			continue;
		if (r != -EAGAIN)
			return mq_err(c, (int)-r);
		if (atomic_load(&c->closed))
			return IDL_ECLOSED;
		/* A full queue whose reader has exited never drains. */
		if (dead || atomic_load(&c->bye)) {
			if (dead)
				atomic_store(&c->dead, 1);
			return MIG_SERVER_DIED;
		}
		if (idl_deadline_passed(dl))
			return IDL_ETIMEDOUT;
		if ((w = mq_wait(c, &c->sq, EPOLLOUT, idl_deadline_abs(dl))) < 0)
			return w;
		dead = w;
	}
}

/* Sends len bytes on the connection's send queue, waiting for room until the deadline. The
 * send queue is O_NONBLOCK: room is the common case, and then this is the only system
 * call. */
static int
mq_put(struct mq_conn *c, const void *data, size_t len, struct idl_deadline *dl)
{
	long r = idl__raw_mq_send(c->sq.mq, data, len);

	return r == 0 ? 0 : mq_put_more(c, data, len, dl, r);
}

/* Sends the `total` bytes of the pieces in iov: in the queue when they fit, else out of
 * line. */
static int
mq_sendv(struct mq_conn *c, const struct iovec *iov, unsigned niov, size_t total,
	 struct idl_deadline *dl)
{
	char buf[8192] __attribute__((aligned(8)));
	struct mq_ctl *k = (struct mq_ctl *)buf;
	int err;

	if (total < (size_t)c->sq.msgsize && total <= sizeof buf) {
		char *p = buf;

		for (unsigned i = 0; i < niov; i++) {
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
			p += iov[i].iov_len;
		}
		return mq_put(c, buf, total, dl);
	}
	if ((err = idl__mq_ool_make(c, iov, niov, total, k)) != 0)
		return err;
	memset(buf + sizeof *k, 0, (size_t)c->sq.msgsize - sizeof *k);
	err = mq_put(c, buf, (size_t)c->sq.msgsize, dl);
	if (err != 0)
		shm_unlink(k->name);
	return err;
}

/* A message with descriptors: the message and its data after it (runtime/ool/ool_wire.c),
 * through the queue or, as any large message, a shared-memory object; what it gives away
 * is released once it went, or failed. */
static int
mq_send_desc(struct mq_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct iovec iov[IDL__OOL_IOV_MAX];
	struct idl__ool_out o;
	int err;

	o.iov = iov;
	if ((err = idl__ool_inline_out(m, "port", &o)) == 0) {
		err = mq_sendv(c, iov, o.niov, o.total, dl);
	} else {
		idl_msg_header_t bare;
		struct idl_xmsg b;

		if (idl__desc_bare_reply(m, &bare, err, &b))
			err = mq_put(c, b.data, b.len, dl);
	}
	idl__msg_release_sent(m->data);
	return err;
}

/* Every send but a plain message that fits the queue, which is room there now (or that one
 * after the fast path's send of it returned r, sys_raw.h; IDL_RAW_NONE when it made none). */
static __attribute__((noinline)) int
mq_send_gen(struct mq_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl, long r)
{
	struct iovec iov = { m->data, m->len };

	if (r != IDL_RAW_NONE)
		return mq_put_more(c, m->data, m->len, dl, r);
	if (atomic_load(&c->closed))
		return IDL_ECLOSED;
	if (atomic_load(&c->bye) || atomic_load(&c->dead))
		return MIG_SERVER_DIED;
	if (idl__desc_msg(m->data, m->len))
		return mq_send_desc(c, m, dl);
	if (m->len < (size_t)c->sq.msgsize)
		return mq_put(c, m->data, m->len, dl);
	return mq_sendv(c, &iov, 1, m->len, dl);
}

/* The common send - a live connection, a plain message that fits the queue, room there - is
 * one mq_send and no call; the rest is mq_send_gen()'s. */
int
idl__mq_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct mq_conn *c = vconn;

	if (__builtin_expect(
		    (atomic_load(&c->closed) | atomic_load(&c->bye) | atomic_load(&c->dead)) == 0 &&
			    m->len < (size_t)c->sq.msgsize && !idl__desc_msg(m->data, m->len),
		    1)) {
		long r = idl__raw_mq_send(c->sq.mq, m->data, m->len);

		if (r == 0)
			return 0;
		return mq_send_gen(c, m, dl, r);
	}
	return mq_send_gen(c, m, dl, IDL_RAW_NONE);
}

/* A message with descriptors received whole in buf (n bytes): the message into m->data,
 * its data into memory of the receiver's own. */
static int
mq_recv_desc(struct mq_conn *c, struct idl_xmsg *m, const char *buf, size_t n)
{
	const idl_msg_header_t *h = (const idl_msg_header_t *)(const void *)buf;
	struct idl__ool_span sp;
	uint32_t msize = h->size;
	int err;

	(void)c;
	m->len = n;
	if (msize > n || msize > m->cap) {
		if (buf != m->data)
			memcpy(m->data, buf, m->cap < n ? m->cap : n);
		((unsigned char *)m->data)[3] &= (unsigned char)~IDL_MSGF_DESC;
		return msize > n ? idl__fail(IDL_EPROTO, "port: a %u-byte message in %zu bytes",
					     msize, n)
				 : IDL_EMSGSIZE;
	}
	sp = (struct idl__ool_span){ msize, (const unsigned char *)buf + msize, n - msize, NULL,
				     0 };
	if (buf != m->data)
		memcpy(m->data, buf, msize);
	if ((err = idl__ool_inline_in(m->data, msize, n, "port", idl__ool_span_read, &sp)) != 0)
		return err;
	m->len = msize;
	return 0;
}

/* Why a receive on the connection must not wait: closed here, or the peer said goodbye;
 * 0 when it may. */
static inline int
mq_ended(struct mq_conn *c)
{
	if (atomic_load(&c->closed))
		return IDL_ECLOSED;
	return atomic_load(&c->bye) ? MIG_SERVER_DIED : 0;
}

/* A message of n bytes received in buf (m->data, or the connection's own buffer): into m,
 * or what a control message means; MQ_AGAIN for a wake-up (or junk), which is no
 * message. In line in both receives: the fast path's own work. */
static inline __attribute__((always_inline)) int
mq_got(struct mq_conn *c, struct idl_xmsg *m, const char *buf, size_t n)
{
	struct mq_ctl k;

	if (!mq_is_ctl(buf, n, c->rq.msgsize)) {
		m->len = n;
		if (idl__desc_msg(buf, n))
			return mq_recv_desc(c, m, buf, n);
		if (buf == m->data)
			return 0;
		memcpy(m->data, buf, m->len < m->cap ? m->len : m->cap);
		return m->len > m->cap ? IDL_EMSGSIZE : 0;
	}
	memcpy(&k, buf, sizeof k);
	if (k.type == MQ_CTL_OOL)
		return idl__mq_ool_take(c, &k, m);
	if (k.type == MQ_CTL_BYE) {
		atomic_store(&c->bye, 1);
		return MIG_SERVER_DIED;
	}
	return MQ_AGAIN;
}

/*
 * The receive, from the top or from what the fast path's receive returned (r, sys_raw.h;
 * IDL_RAW_NONE when it made none).
 *
 * The first wait of a receive is a slice, timed with the coarse clock (mq_first_wait()),
 * and the slice's end is kept for the first waits of the next receives (the fast path,
 * idl__mq_recv()): a reply that comes within microseconds, the usual case, then needs no
 * clock read. A first wait that ends at a kept end has waited somewhere between nothing and
 * a slice, as the receive cannot know when it began; it goes on as a first wait with a fresh
 * slice. So a kept end only ever shortens a wait, and a call whose deadline passes can end
 * after it by at most the part of a slice it waited first (as a socket's wait cut short by
 * a signal can, sock/sock_timeo.h); which is why only a deadline at least MQ_KEEP_MIN_NS
 * away, or none, waits at a kept end.
 */
static __attribute__((noinline)) int
mq_recv_gen(struct mq_conn *c, struct idl_xmsg *m, struct idl_deadline *dl, long r0)
{
	size_t msgsize = (size_t)c->rq.msgsize;
	char *buf = m->cap >= msgsize ? m->data : c->rbuf;
	int dead = 0, first = 1, whole = 0, w, r;
	int64_t least = 0;
	struct timespec ts;
	ssize_t n;

	m->nfds = 0;
	for (;;) {
		if (r0 != IDL_RAW_NONE) {
			/* The fast path's wait, at a kept end. */
			n = idl__raw_errno(r0);
			r0 = IDL_RAW_NONE;
			if (n < 0 && errno == ETIMEDOUT) {
				c->rq_end_kept = 0;
				continue;
			}
		} else {
			if ((r = mq_ended(c)) != 0)
				return r;
			/* The fast path blocks in this one call for a slice; later rounds only
			 * take what the wait below said is there. */
			if (first && dl->abs_ns == 0) {
				least = mq_first_wait(dl, &ts, &whole);
				/* A slice's end is kept; a whole timeout's is the deadline's. */
				if (!whole) {
					c->rq_end = ts;
					c->rq_end_kept = 1;
				}
			} else {
				idl__mq_abstime(idl_deadline_abs(dl), first ? MQ_SLICE_NS : 0, &ts);
			}
			n = mq_recv_sys(c->rq.mq, buf, msgsize, &ts);
		}
		if (n >= 0 && (r = mq_got(c, m, buf, (size_t)n)) != MQ_AGAIN)
			return r;
		if (n >= 0) {
			first = 1; /* a wake-up (or junk): look at the flags and wait again */
			idl_deadline_abs(dl);
			continue;
		}
		if (errno == EINTR) {
			idl_deadline_abs(dl);
			continue;
		}
		if (errno != ETIMEDOUT)
			return mq_err(c, errno);
		/* A first wait that was the call's whole timeout: the call is late. One that was
		 * a slice anchors the deadline where the call must have begun at the latest. */
		if (first && dl->abs_ns == 0) {
			if (whole)
				return IDL_ETIMEDOUT;
			idl_deadline_start(dl, idl_now_ns() - least);
		}
		first = 0;
		/* Death counts only once the queue is empty: a reply sent just before it is
		 * still delivered. */
		if (dead) {
			atomic_store(&c->dead, 1);
			return MIG_SERVER_DIED;
		}
		if (idl_deadline_passed(dl))
			return IDL_ETIMEDOUT;
		if ((w = mq_wait(c, &c->rq, EPOLLIN, idl_deadline_abs(dl))) < 0)
			return w;
		dead = w;
	}
}

/*
 * The common receive - a live connection, a deadline not anchored and at least
 * MQ_KEEP_MIN_NS away (or none), a kept slice end (mq_recv_gen()), and a plain message
 * that fits the caller's buffer - is one mq_timedreceive and no call, not even the clock's.
 * The rest is mq_recv_gen()'s, which goes on from what that receive returned.
 */
int
idl__mq_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct mq_conn *c = vconn;
	size_t msgsize = (size_t)c->rq.msgsize;

	if (__builtin_expect((atomic_load(&c->closed) | atomic_load(&c->bye)) == 0 &&
				     c->rq_end_kept && dl->abs_ns == 0 &&
				     (dl->ms == IDL_DEADLINE_MS_NONE ||
				      (int64_t)dl->ms * 1000000 >= MQ_KEEP_MIN_NS),
			     1)) {
		char *buf = m->cap >= msgsize ? m->data : c->rbuf;
		long n = idl__raw_mq_timedreceive(c->rq.mq, buf, msgsize, &c->rq_end);

		/* A data message is shorter than the queue's messages, a control message as
		 * long (mq_is_ctl()); an error is negative. */
		if ((unsigned long)n < msgsize && !idl__desc_msg(buf, (size_t)n)) {
			if (buf == m->data) {
				m->len = (size_t)n;
				m->nfds = 0;
				return 0;
			}
			/* The client's reply comes through the connection's buffer, its own
			 * being smaller than the queue's messages: a small one in line. */
			if ((size_t)n <= m->cap && n <= IDL__COPY_SMALL) {
				idl__copy_small(m->data, buf, (size_t)n);
				m->len = (size_t)n;
				m->nfds = 0;
				return 0;
			}
		}
		return mq_recv_gen(c, m, dl, n);
	}
	return mq_recv_gen(c, m, dl, IDL_RAW_NONE);
}

/*
 * The event operations (IDL_TRF_OWNSET), for a server embedded in a loop: the connection's
 * descriptor is the receive direction's epoll set (mq_set: the queue, the peer's pidfd,
 * the close eventfd); while a send found the peer's queue full, the receive queue leaves
 * the set and the send queue's room takes its place, so that the core flushes before it
 * reads again. No blocking receive runs on such a connection to wait in that set meanwhile.
 */
int
idl__mq_conn_fd(void *vconn, unsigned *events)
{
	struct mq_conn *c = vconn;

	*events = IDL_TR_EV_IN;
	return mq_set(c, &c->rq, EPOLLIN) == 0 ? c->rq.epfd : -1;
}

/* Watches the send queue's room instead of the receive queue (full: 1), or the other way
 * round (0). */
static void
mq_nb_full(struct mq_conn *c, int full)
{
	struct epoll_event r = { .events = full ? 0 : EPOLLIN, .data.u32 = MQ_SET_Q };
	struct epoll_event w = { .events = EPOLLOUT, .data.u32 = MQ_SET_SQ };

	if (c->rq.epfd < 0 || c->nb_full == full)
		return;
	c->nb_full = full;
	epoll_ctl(c->rq.epfd, EPOLL_CTL_MOD, c->rq.mq, &r);
	epoll_ctl(c->rq.epfd, full ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, c->sq.mq, &w);
}

int
idl__mq_sendv_nb(void *vconn, const struct idl_xmsg *msgs, unsigned n)
{
	struct mq_conn *c = vconn;
	unsigned i;

	for (i = 0; i < n; i++) {
		int err;

		/* Descriptors go with the blocking send (the contract's refusal), before
		 * anything of them is written. */
		if (idl__desc_msg(msgs[i].data, msgs[i].len))
			return i != 0 ? (int)i : IDL_ENOTSUP;
		err = idl__mq_send(c, &msgs[i], &(struct idl_deadline){ 0, 0 });
		if (err == IDL_ETIMEDOUT) {
			/* A full queue whose reader has exited never drains. */
			if (mq_peer_exited(c)) {
				atomic_store(&c->dead, 1);
				return MIG_SERVER_DIED;
			}
			mq_nb_full(c, 1);
			return (int)i;
		}
		if (err != 0)
			return err;
	}
	if (n != 0)
		mq_nb_full(c, 0);
	return (int)n;
}

int
idl__mq_recv_nb(void *vconn, struct idl_xmsg *m)
{
	struct mq_conn *c = vconn;
	size_t msgsize = (size_t)c->rq.msgsize;
	char *buf = m->cap >= msgsize ? m->data : c->rbuf;
	/* A time long past: an empty queue answers at once. */
	const struct timespec past = { 0, 0 };
	ssize_t n;
	int r;

	m->nfds = 0;
	for (;;) {
		if ((r = mq_ended(c)) != 0)
			return r;
		n = mq_recv_sys(c->rq.mq, buf, msgsize, &past);
		if (n >= 0 && (r = mq_got(c, m, buf, (size_t)n)) != MQ_AGAIN)
			return r;
		if (n >= 0 || errno == EINTR)
			continue;
		if (errno != ETIMEDOUT && errno != EAGAIN)
			return mq_err(c, errno);
		/* Death counts only once the queue is empty, as for the blocking receive. */
		if (mq_peer_exited(c)) {
			atomic_store(&c->dead, 1);
			return MIG_SERVER_DIED;
		}
		return IDL_EAGAIN;
	}
}

void
idl__mq_drain(struct mq_conn *c)
{
	struct timespec ts;
	struct mq_ctl k;
	ssize_t n;

	/* Nobody will read what is left in our queue: remove the objects it names. */
	if (c->rq.mq != (mqd_t)-1 && c->rbuf != NULL) {
		for (;;) {
			idl__mq_abstime(IDL_DEADLINE_NONE, 0, &ts);
			n = mq_timedreceive(c->rq.mq, c->rbuf, (size_t)c->rq.msgsize, NULL, &ts);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			if (!mq_is_ctl(c->rbuf, (size_t)n, c->rq.msgsize))
				continue;
			memcpy(&k, c->rbuf, sizeof k);
			if (k.type == MQ_CTL_BYE)
				atomic_store(&c->bye, 1);
			else if (k.type == MQ_CTL_OOL && idl__mq_name_ok(k.name, MQ_KIND_OOL))
				shm_unlink(k.name);
		}
	}
	if (c->sq.mq == (mqd_t)-1)
		return;
	/* A peer that left takes nothing more: what we sent it and it did not take is ours
	 * to remove. A peer still there takes or drains it. */
	if (atomic_load(&c->bye) || mq_peer_exited(c)) {
		for (unsigned i = 0; i < MQ_RING; i++)
			if (c->ring[i][0] != '\0')
				shm_unlink(c->ring[i]);
		return;
	}
	/* The goodbye waits a little for room: a peer that misses it learns of our leaving
	 * only when our process exits. */
	if (idl__mq_ctl_put(c->sq.mq, c->sq.msgsize, MQ_CTL_BYE) == IDL_ESYSERR(EAGAIN)) {
		struct pollfd p = { .fd = c->sq.mq, .events = POLLOUT };

		if (poll(&p, 1, MQ_BYE_MS) == 1)
			idl__mq_ctl_put(c->sq.mq, c->sq.msgsize, MQ_CTL_BYE);
	}
}
