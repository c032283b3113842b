/*
 * port_io.c - the data path of the port: transport: one mq_send and one mq_timedreceive per
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

#include "port.h"

/* Without a pidfd, a wait wakes this often to ask whether the peer still lives. */
#define PORT_POLL_MS 100
/* A receive that got a wake-up meant for nobody (close not called): wait again. */
#define PORT_AGAIN 1
/* How long the goodbye may wait for room in the peer's queue. */
#define PORT_BYE_MS 50
/* The first read of an out-of-line message: its header and, for a message with descriptors,
 * its descriptors and arguments, usually whole. */
#define PORT_OOL_HEAD 4096u

_Static_assert(sizeof(struct port_ctl) <= 128, "a control message fits the smallest queue");

void
idl__port_random(void *buf, size_t n)
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
idl__port_name(char *buf, char kind)
{
	uint64_t r;

	idl__port_random(&r, sizeof r);
	snprintf(buf, PORT_NAME_MAX, "/idlport.%ld.%016llx.%c", (long)getpid(),
		 (unsigned long long)r, kind);
}

int
idl__port_name_ok(const char *s, char kind)
{
	static const char prefix[] = "/idlport.";
	size_t i = sizeof prefix - 1, digits = 0, hex = 0;

	if (memchr(s, '\0', PORT_NAME_MAX) == NULL || strncmp(s, prefix, i) != 0)
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
idl__port_abstime(int64_t deadline, int64_t wait_ns, struct timespec *ts)
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
static int64_t port_coarse_res;

void
idl__port_slice_init(void)
{
	struct timespec res;

	port_coarse_res = clock_getres(CLOCK_REALTIME_COARSE, &res) == 0
				  ? (int64_t)res.tv_sec * 1000000000 + res.tv_nsec
				  : 0;
	/* A coarse clock as coarse as a slice cannot time one. */
	if (port_coarse_res >= PORT_SLICE_NS / 2)
		port_coarse_res = -1;
}

/*
 * The end of the fast path's first wait, a slice from now, for a deadline not anchored
 * yet; returns how long the wait is at least (ns), and whether it is the call's whole
 * timeout (*whole: the deadline then passes with it). A slice needs no precision, so it is
 * timed with the coarse clock (no clock read worth the name); a timeout shorter than a
 * slice ends the wait itself, timed with the precise one.
 */
static int64_t
port_first_wait(const struct idl_deadline *dl, struct timespec *ts, int *whole)
{
	int64_t wait = PORT_SLICE_NS, least;

	*whole = dl->ms >= 0 && (int64_t)dl->ms * 1000000 <= PORT_SLICE_NS;
	if (*whole)
		wait = (int64_t)dl->ms * 1000000;
	if (*whole || port_coarse_res < 0) {
		clock_gettime(CLOCK_REALTIME, ts);
		least = wait;
	} else {
		clock_gettime(CLOCK_REALTIME_COARSE, ts);
		least = wait - port_coarse_res;
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
idl__port_ctl_put(mqd_t q, long msgsize, uint32_t type)
{
	char buf[8192] __attribute__((aligned(8)));
	struct port_ctl *k = (struct port_ctl *)buf;
	struct timespec ts;

	if (msgsize < (long)sizeof *k || msgsize > (long)sizeof buf)
		return IDL_EINVAL;
	memset(buf, 0, (size_t)msgsize);
	memcpy(k->magic, PORT_CTL_MAGIC, sizeof k->magic);
	k->type = type;
	/* A time already past: a full queue fails at once, blocking descriptor or not. */
	idl__port_abstime(IDL_DEADLINE_NONE, 0, &ts);
	while (mq_timedsend(q, buf, (size_t)msgsize, 0, &ts) != 0)
		if (errno != EINTR)
			return IDL_ESYSERR(errno);
	return 0;
}

static int
port_is_ctl(const void *buf, size_t n, long msgsize)
{
	return n == (size_t)msgsize && memcmp(buf, PORT_CTL_MAGIC, 8) == 0;
}

/* Whether the peer's process has exited, asked without waiting. */
static int
port_peer_exited(struct port_conn *c)
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
static int
port_wait(struct port_conn *c, struct port_q *q, uint32_t events, int64_t deadline)
{
	struct epoll_event ev[3];
	int n, ms = -1;

	if (q->epfd < 0) {
		struct epoll_event e = { .events = events, .data.u32 = 0 };

		q->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (q->epfd < 0)
			return IDL_ESYSERR(errno);
		if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->mq, &e) != 0)
			return IDL_ESYSERR(errno);
		e.events = EPOLLIN;
		e.data.u32 = 1;
		if (c->pidfd >= 0 && epoll_ctl(q->epfd, EPOLL_CTL_ADD, c->pidfd, &e) != 0)
			return IDL_ESYSERR(errno);
		e.data.u32 = 2;
		if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, c->evfd, &e) != 0)
			return IDL_ESYSERR(errno);
	}
	if (deadline != IDL_DEADLINE_NONE) {
		int64_t left = deadline - idl_now_ns();

		ms = left <= 0 ? 0 : left >= (int64_t)1 << 40 ? 1 << 30 : (int)(left / 1000000) + 1;
	}
	if (c->pidfd < 0 && (ms < 0 || ms > PORT_POLL_MS))
		ms = PORT_POLL_MS;
	n = epoll_wait(q->epfd, ev, 3, ms);
	if (n < 0)
		return errno == EINTR ? 0 : IDL_ESYSERR(errno);
	for (int i = 0; i < n; i++)
		if (ev[i].data.u32 == 1)
			return 1;
	return c->pidfd < 0 && port_peer_exited(c);
}

/* Maps an errno of a queue operation. */
static int
port_err(struct port_conn *c, int e)
{
	if (atomic_load(&c->closed))
		return IDL_ECLOSED;
	return IDL_ESYSERR(e);
}

/* Sends len bytes on the connection's send queue, waiting for room until the deadline. */
static int
port_put(struct port_conn *c, const void *data, size_t len, struct idl_deadline *dl)
{
	int dead = 0, w;

	for (;;) {
		/* The send queue is O_NONBLOCK: room is the common case, and then this is the
		 * only system call. */
		if (port_mq_send(c->sq.mq, data, len) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return port_err(c, errno);
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
		if ((w = port_wait(c, &c->sq, EPOLLOUT, idl_deadline_abs(dl))) < 0)
			return w;
		dead = w;
	}
}

/* Writes the pieces in iov (at most IDL__OOL_IOV_MAX) to fd, all of them: one writev when
 * the object takes them at once. 0 or an errno value. */
static int
port_writev_all(int fd, const struct iovec *iov, unsigned niov)
{
	struct iovec left[IDL__OOL_IOV_MAX];
	unsigned first = 0;

	if (niov > IDL__OOL_IOV_MAX)
		return EINVAL;
	memcpy(left, iov, niov * sizeof *iov);
	while (first < niov) {
		ssize_t n = writev(fd, left + first, (int)(niov - first));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		/* Past what went: whole pieces, then part of one. */
		while (first < niov && (size_t)n >= left[first].iov_len) {
			n -= (ssize_t)left[first].iov_len;
			first++;
		}
		if (first < niov) {
			left[first].iov_base = (char *)left[first].iov_base + n;
			left[first].iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Writes the message - the `total` bytes of the pieces in iov - into a new shared-memory
 * object and fills the control message that names it. The object is the receiver's to
 * remove; the sender remembers its name in case the receiver dies first. */
static int
port_ool_make(struct port_conn *c, const struct iovec *iov, unsigned niov, size_t total,
	      struct port_ctl *k)
{
	int fd, err;

	if (total > PORT_OOL_MAX)
		return idl__fail(IDL_EMSGSIZE,
				 "port: a %zu-byte message exceeds the %u-byte "
				 "limit of messages out of line",
				 total, PORT_OOL_MAX);
	memset(k, 0, sizeof *k);
	memcpy(k->magic, PORT_CTL_MAGIC, sizeof k->magic);
	k->type = PORT_CTL_OOL;
	k->len = total;
	idl__port_name(k->name, PORT_KIND_OOL);
	fd = shm_open(k->name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return idl__fail(IDL_ESYSERR(errno), "port: shm_open %s: %s", k->name,
				 strerror(errno));
	/* A root server answering another user's client gives the object to that user, who
	 * could not open a 0600 object of root's otherwise. */
	if (c->cred.valid && c->cred.uid != geteuid() && fchown(fd, c->cred.uid, (gid_t)-1) != 0) {
		close(fd);
		shm_unlink(k->name);
		return idl__fail(IDL_EACCES, "port: the peer (uid %u) could not read %s",
				 (unsigned)c->cred.uid, k->name);
	}
	if ((err = port_writev_all(fd, iov, niov)) != 0) {
		close(fd);
		shm_unlink(k->name);
		return idl__fail(IDL_ESYSERR(err), "port: writing %s: %s", k->name, strerror(err));
	}
	close(fd);
	memcpy(c->ring[c->ring_next], k->name, PORT_NAME_MAX);
	c->ring_next = (c->ring_next + 1) % PORT_RING;
	return 0;
}

/* Sends the `total` bytes of the pieces in iov: in the queue when they fit, else out of
 * line. */
static int
port_sendv(struct port_conn *c, const struct iovec *iov, unsigned niov, size_t total,
	   struct idl_deadline *dl)
{
	char buf[8192] __attribute__((aligned(8)));
	struct port_ctl *k = (struct port_ctl *)buf;
	int err;

	if (total < (size_t)c->sq.msgsize && total <= sizeof buf) {
		char *p = buf;

		for (unsigned i = 0; i < niov; i++) {
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
			p += iov[i].iov_len;
		}
		return port_put(c, buf, total, dl);
	}
	if ((err = port_ool_make(c, iov, niov, total, k)) != 0)
		return err;
	memset(buf + sizeof *k, 0, (size_t)c->sq.msgsize - sizeof *k);
	err = port_put(c, buf, (size_t)c->sq.msgsize, dl);
	if (err != 0)
		shm_unlink(k->name);
	return err;
}

/* A message with descriptors: the message and its data after it (runtime/ool_wire.c),
 * through the queue or, as any large message, a shared-memory object; what it gives away
 * is released once it went, or failed. */
static int
port_send_desc(struct port_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct iovec iov[IDL__OOL_IOV_MAX];
	struct idl__ool_out o;
	int err;

	o.iov = iov;
	if ((err = idl__ool_inline_out(m, "port", &o)) == 0) {
		err = port_sendv(c, iov, o.niov, o.total, dl);
	} else {
		idl_msg_header_t bare;
		struct idl_xmsg b;

		if (idl__desc_bare_reply(m, &bare, err, &b))
			err = port_put(c, b.data, b.len, dl);
	}
	idl__msg_release_sent(m->data);
	return err;
}

int
idl__port_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct port_conn *c = vconn;
	struct iovec iov = { m->data, m->len };

	if (atomic_load(&c->closed))
		return IDL_ECLOSED;
	if (atomic_load(&c->bye) || atomic_load(&c->dead))
		return MIG_SERVER_DIED;
	if (idl__desc_msg(m->data, m->len))
		return port_send_desc(c, m, dl);
	if (m->len < (size_t)c->sq.msgsize)
		return port_put(c, m->data, m->len, dl);
	return port_sendv(c, &iov, 1, m->len, dl);
}

/* A message with descriptors received whole in buf (n bytes): the message into m->data,
 * its data into memory of the receiver's own. */
static int
port_recv_desc(struct port_conn *c, struct idl_xmsg *m, const char *buf, size_t n)
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

/* Reads `n` bytes of the object at `off` into dst, all of them or an error. */
static int
port_pread_all(int fd, size_t off, void *dst, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)dst + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? IDL_ESYSERR(errno) : IDL_EPROTO;
		done += (size_t)r;
	}
	return 0;
}

/* The data of an out-of-line message with descriptors: the bytes of it the first read left
 * in the receive buffer, then the object. */
struct port_ool_rd {
	int fd;
	const unsigned char *buf;
	size_t have; /* bytes of the object in buf, from its start */
};

static int
port_ool_read(void *arg, size_t off, void *dst, size_t n)
{
	const struct port_ool_rd *r = arg;
	size_t k = 0;

	if (dst == NULL)
		return 0;
	if (off < r->have) {
		k = n < r->have - off ? n : r->have - off;
		memcpy(dst, r->buf + off, k);
	}
	if (k < n && port_pread_all(r->fd, off + k, (char *)dst + k, n - k) != 0)
		return idl__fail(IDL_EPROTO, "port: out-of-line data cut short");
	return 0;
}

/* Takes an out-of-line message: opens the object, removes its name at once, checks it and
 * copies it into m. Reading with pread rather than mapping it means a peer that truncates
 * the object cannot make us fault, and what we checked is what we keep. A message with
 * descriptors is read in two parts, each byte once: the message (a first read of at most
 * PORT_OOL_HEAD bytes tells its size), then its data straight into the receiver's blocks. */
static int
port_ool_take(struct port_conn *c, const struct port_ctl *k, struct idl_xmsg *m)
{
	struct port_ool_rd rd;
	struct stat st;
	size_t want, first;
	int fd, err = 0;

	if (!idl__port_name_ok(k->name, PORT_KIND_OOL) || k->len > PORT_OOL_MAX)
		return idl__fail(IDL_EPROTO, "port: malformed out-of-line message");
	fd = shm_open(k->name, O_RDONLY, 0);
	if (fd < 0)
		return idl__fail(errno == ENOENT ? IDL_EPROTO : IDL_ESYSERR(errno),
				 "port: out-of-line message %s: %s", k->name, strerror(errno));
	/* Only the peer's objects (or ours, given to us by a root peer) are ours to remove. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && (!c->cred.valid || st.st_uid != c->cred.uid))) {
		close(fd);
		return idl__fail(IDL_EPROTO, "port: %s is not the peer's object", k->name);
	}
	shm_unlink(k->name);
	if ((uint64_t)st.st_size != k->len) {
		close(fd);
		return idl__fail(IDL_EPROTO, "port: %s holds %lld bytes, not %llu", k->name,
				 (long long)st.st_size, (unsigned long long)k->len);
	}
	/* Too large: like a datagram cut to the buffer, what fits is read (the header, for
	 * the error reply) and m->len says the true size. */
	m->len = (size_t)k->len;
	want = m->len < m->cap ? m->len : m->cap;
	first = want < PORT_OOL_HEAD ? want : PORT_OOL_HEAD;
	if ((err = port_pread_all(fd, 0, m->data, first)) != 0) {
		close(fd);
		return idl__fail(err, "port: reading %s: short", k->name);
	}
	if (!idl__desc_msg(m->data, first)) {
		if ((err = port_pread_all(fd, first, (char *)m->data + first, want - first)) != 0)
			err = idl__fail(err, "port: reading %s: short", k->name);
	} else {
		/* The message in m->data, its data after it in the object. */
		uint32_t msize = ((const idl_msg_header_t *)m->data)->size;

		if (msize > m->len || msize > want) {
			((unsigned char *)m->data)[3] &= (unsigned char)~IDL_MSGF_DESC;
			err = msize > m->len ? idl__fail(IDL_EPROTO,
							 "port: a %u-byte message in "
							 "%zu bytes",
							 msize, m->len)
					     : IDL_EMSGSIZE;
		} else if (msize > first &&
			   (err = port_pread_all(fd, first, (char *)m->data + first,
						 msize - first)) != 0) {
			err = idl__fail(err, "port: reading %s: short", k->name);
		} else {
			rd = (struct port_ool_rd){ fd, m->data, first };
			if ((err = idl__ool_inline_in(m->data, msize, m->len, "port", port_ool_read,
						      &rd)) == 0) {
				m->len = msize;
				want = msize;
			}
		}
	}
	close(fd);
	return err != 0 ? err : want < m->len ? IDL_EMSGSIZE : 0;
}

int
idl__port_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct port_conn *c = vconn;
	size_t msgsize = (size_t)c->rq.msgsize;
	char *buf = m->cap >= msgsize ? m->data : c->rbuf;
	int dead = 0, first = 1, whole = 0, w;
	int64_t least = 0;
	struct timespec ts;
	struct port_ctl k;
	ssize_t n;

	m->nfds = 0;
	for (;;) {
		if (atomic_load(&c->closed))
			return IDL_ECLOSED;
		if (atomic_load(&c->bye))
			return MIG_SERVER_DIED;
		/* The fast path blocks in this one call for a slice; later rounds only take
		 * what the wait below said is there. */
		if (first && dl->abs_ns == 0)
			least = port_first_wait(dl, &ts, &whole);
		else
			idl__port_abstime(idl_deadline_abs(dl), first ? PORT_SLICE_NS : 0, &ts);
		n = port_mq_timedreceive(c->rq.mq, buf, msgsize, &ts);
		if (n >= 0 && !port_is_ctl(buf, (size_t)n, c->rq.msgsize)) {
			m->len = (size_t)n;
			if (idl__desc_msg(buf, (size_t)n))
				return port_recv_desc(c, m, buf, (size_t)n);
			if (buf == m->data)
				return 0;
			memcpy(m->data, buf, m->len < m->cap ? m->len : m->cap);
			return m->len > m->cap ? IDL_EMSGSIZE : 0;
		}
		if (n >= 0) {
			memcpy(&k, buf, sizeof k);
			if (k.type == PORT_CTL_OOL)
				return port_ool_take(c, &k, m);
			if (k.type == PORT_CTL_BYE) {
				atomic_store(&c->bye, 1);
				return MIG_SERVER_DIED;
			}
			first = 1; /* a wake-up (or junk): look at the flags and wait again */
			idl_deadline_abs(dl);
			continue;
		}
		if (errno == EINTR) {
			idl_deadline_abs(dl);
			continue;
		}
		if (errno != ETIMEDOUT)
			return port_err(c, errno);
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
		if ((w = port_wait(c, &c->rq, EPOLLIN, idl_deadline_abs(dl))) < 0)
			return w;
		dead = w;
	}
}

void
idl__port_drain(struct port_conn *c)
{
	struct timespec ts;
	struct port_ctl k;
	ssize_t n;

	/* Nobody will read what is left in our queue: remove the objects it names. */
	if (c->rq.mq != (mqd_t)-1 && c->rbuf != NULL) {
		for (;;) {
			idl__port_abstime(IDL_DEADLINE_NONE, 0, &ts);
			n = mq_timedreceive(c->rq.mq, c->rbuf, (size_t)c->rq.msgsize, NULL, &ts);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			if (!port_is_ctl(c->rbuf, (size_t)n, c->rq.msgsize))
				continue;
			memcpy(&k, c->rbuf, sizeof k);
			if (k.type == PORT_CTL_BYE)
				atomic_store(&c->bye, 1);
			else if (k.type == PORT_CTL_OOL && idl__port_name_ok(k.name, PORT_KIND_OOL))
				shm_unlink(k.name);
		}
	}
	if (c->sq.mq == (mqd_t)-1)
		return;
	/* A peer that left takes nothing more: what we sent it and it did not take is ours
	 * to remove. A peer still there takes or drains it. */
	if (atomic_load(&c->bye) || port_peer_exited(c)) {
		for (unsigned i = 0; i < PORT_RING; i++)
			if (c->ring[i][0] != '\0')
				shm_unlink(c->ring[i]);
		return;
	}
	/* The goodbye waits a little for room: a peer that misses it learns of our leaving
	 * only when our process exits. */
	if (idl__port_ctl_put(c->sq.mq, c->sq.msgsize, PORT_CTL_BYE) == IDL_ESYSERR(EAGAIN)) {
		struct pollfd p = { .fd = c->sq.mq, .events = POLLOUT };

		if (poll(&p, 1, PORT_BYE_MS) == 1)
			idl__port_ctl_put(c->sq.mq, c->sq.msgsize, PORT_CTL_BYE);
	}
}
