/*
 * floor_shm.c - the raw floor of the shm: transport: a shared memfd (passed over a UNIX
 * socket, as the transport does) holding one single-producer, single-consumer byte ring per
 * direction, with the transport's wait policy (transports/shm/shm.c):
 *
 *   - a waiter spins for up to 20 us (IDL_SHM_SPIN_NS, the transport's default and its
 *     environment variable), unless the machine has one CPU or the peer last waited on the
 *     CPU we run on (then spinning only delays the peer), and then sleeps on a futex word in
 *     the region after raising its waiter flag;
 *   - a publisher wakes the peer only when that flag is up, so a round trip between two
 *     running CPUs makes no system call at all.
 *
 * A sleep is a timed futex wait, as the transport's are (its sleeps are cut into timed
 * slices); one that times out looks again. What the floor leaves out is what the transport
 * needs and a floor does not: the liveness check after a slice, the call's deadline,
 * validation of the peer's indices, out-of-line data. Records are the transport's: an 8-byte header
 * (length and tag) and the message padded to 8, copied in and copied out.
 *
 * Layer 1, the floors (ib_floor.h): it knows the base and the job it is given; it must not
 * know rows, columns, cells, runs or reports.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ib_floor.h"

#define FS_RING (64u * 1024u) /* the transport's default ring */
#define FS_LINE 64
#define FS_HDR 8u
#define FS_SPIN_NS 20000
/* A sleep's timeout: the transport's first slice (SHM_SLICE_FIRST_MS in shm.c). */
static const struct timespec fs_slice = { 0, 2000000 };

struct fs_dir {
	_Alignas(FS_LINE) uint64_t head; /* written by the producer */
	uint32_t cons_sleep; /* the consumer sleeps (or is about to) */
	_Alignas(FS_LINE) uint64_t tail; /* written by the consumer */
	uint32_t prod_sleep;
};

struct fs_ctl {
	struct fs_dir dir[2]; /* 0: client to server, 1: server to client */
	_Alignas(FS_LINE) int32_t cpu[2]; /* where each side last waited */
};

#define FS_RING_OFF 4096u
#define FS_SIZE (FS_RING_OFF + 2 * FS_RING)

static int64_t fs_spin_ns = -1;

static int64_t
fs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
fs_config(void)
{
	const char *s = getenv("IDL_SHM_SPIN_NS");

	if (fs_spin_ns >= 0)
		return;
	fs_spin_ns = s != NULL && *s != '\0' ? strtoll(s, NULL, 10) : FS_SPIN_NS;
	if (sysconf(_SC_NPROCESSORS_ONLN) == 1)
		fs_spin_ns = 0;
}

static struct fs_ctl *
fs_ctl(struct fl_chan *c)
{
	return c->map;
}

static unsigned char *
fs_ring(struct fl_chan *c, int d)
{
	return (unsigned char *)c->map + FS_RING_OFF + (size_t)d * FS_RING;
}

static void
fs_kick(uint32_t *word)
{
	if (__atomic_load_n(word, __ATOMIC_RELAXED) != 0 &&
	    __atomic_exchange_n(word, 0, __ATOMIC_SEQ_CST) != 0)
		syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static inline void
fs_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int
fs_may_spin(struct fl_chan *c)
{
	struct fs_ctl *ctl = fs_ctl(c);
	int cpu, peer;

	if (fs_spin_ns == 0)
		return 0;
	cpu = sched_getcpu();
	__atomic_store_n(&ctl->cpu[c->side], cpu, __ATOMIC_RELAXED);
	peer = __atomic_load_n(&ctl->cpu[1 - c->side], __ATOMIC_RELAXED);
	return cpu < 0 || peer != cpu;
}

/* Bytes to read in direction d (room == 0) or free to write (room == 1). */
static uint64_t
fs_have(struct fl_chan *c, int d, int room)
{
	struct fs_dir *dir = &fs_ctl(c)->dir[d];

	if (room)
		return FS_RING - (c->head - __atomic_load_n(&dir->tail, __ATOMIC_ACQUIRE));
	return __atomic_load_n(&dir->head, __ATOMIC_ACQUIRE) - c->tail;
}

static void
fs_wait(struct fl_chan *c, int d, int room, uint64_t need)
{
	struct fs_dir *dir = &fs_ctl(c)->dir[d];
	uint32_t *word = room ? &dir->prod_sleep : &dir->cons_sleep;

	if (fs_may_spin(c)) {
		int64_t end = fs_now() + fs_spin_ns;

		for (unsigned i = 1;; i++) {
			if (fs_have(c, d, room) >= need)
				return;
			fs_pause();
			if (i % 64 == 0 && fs_now() >= end)
				break;
		}
	}
	for (;;) {
		__atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
		if (fs_have(c, d, room) >= need) {
			__atomic_store_n(word, 0, __ATOMIC_RELAXED);
			return;
		}
		syscall(SYS_futex, word, FUTEX_WAIT, 1, &fs_slice, NULL, 0);
	}
}

static void
fs_copy(unsigned char *ring, uint64_t pos, void *buf, size_t n, int out)
{
	size_t off = (size_t)(pos & (FS_RING - 1)), first = FS_RING - off;

	if (n > first) {
		fs_copy(ring, pos, buf, first, out);
		fs_copy(ring, pos + first, (unsigned char *)buf + first, n - first, out);
	} else if (out) {
		memcpy(buf, ring + off, n);
	} else {
		memcpy(ring + off, buf, n);
	}
}

static int
fs_send(struct fl_chan *c, const void *buf, size_t len)
{
	int d = c->side;
	struct fs_dir *dir = &fs_ctl(c)->dir[d];
	uint64_t rec = FS_HDR + ((len + 7) & ~(size_t)7), word = (uint64_t)len | 0x52ull << 32;

	if (rec > FS_RING)
		return -1;
	if (fs_have(c, d, 1) < rec)
		fs_wait(c, d, 1, rec);
	fs_copy(fs_ring(c, d), c->head + FS_HDR, (void *)buf, len, 0);
	__atomic_store_n((uint64_t *)(fs_ring(c, d) + (c->head & (FS_RING - 1))), word,
			 __ATOMIC_RELAXED);
	c->head += rec;
	__atomic_store_n(&dir->head, c->head, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	fs_kick(&dir->cons_sleep);
	return 0;
}

static long
fs_recv(struct fl_chan *c, void *buf, size_t len, size_t cap)
{
	int d = 1 - c->side;
	struct fs_dir *dir = &fs_ctl(c)->dir[d];
	uint64_t word;
	uint32_t n;

	(void)len;
	if (fs_have(c, d, 0) < FS_HDR)
		fs_wait(c, d, 0, FS_HDR);
	word = __atomic_load_n((uint64_t *)(fs_ring(c, d) + (c->tail & (FS_RING - 1))),
			       __ATOMIC_RELAXED);
	n = (uint32_t)word;
	fs_copy(fs_ring(c, d), c->tail + FS_HDR, buf, n < cap ? n : cap, 1);
	c->tail += FS_HDR + ((n + 7u) & ~7u);
	__atomic_store_n(&dir->tail, c->tail, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	fs_kick(&dir->prod_sleep);
	return (long)n;
}

/*
 * The batches of --inflight (floor_pipe.c): records are written (or read) one after the
 * other with the private index, and the shared one is published once per batch, with at
 * most one wake of a sleeping peer. A send stops where the ring is full, publishing what
 * it wrote; it waits for room only when asked to and nothing went yet.
 */
static void
fs_publish(struct fl_chan *c, int d, int prod)
{
	struct fs_dir *dir = &fs_ctl(c)->dir[d];

	if (prod)
		__atomic_store_n(&dir->head, c->head, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&dir->tail, c->tail, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	fs_kick(prod ? &dir->cons_sleep : &dir->prod_sleep);
}

static long
fs_send_batch(struct fl_chan *c, const void *buf, size_t len, unsigned count, int wait)
{
	int d = c->side;
	uint64_t rec = FS_HDR + ((len + 7) & ~(size_t)7), word = (uint64_t)len | 0x52ull << 32;
	unsigned i;

	if (rec > FS_RING)
		return -1;
	for (i = 0; i < count; i++) {
		if (fs_have(c, d, 1) < rec) {
			if (!wait || i > 0)
				break;
			fs_wait(c, d, 1, rec);
		}
		fs_copy(fs_ring(c, d), c->head + FS_HDR, (char *)buf + (size_t)i * len, len, 0);
		__atomic_store_n((uint64_t *)(fs_ring(c, d) + (c->head & (FS_RING - 1))), word,
				 __ATOMIC_RELAXED);
		c->head += rec;
	}
	fs_publish(c, d, 1);
	return (long)i;
}

static long
fs_recv_batch(struct fl_chan *c, void *buf, size_t len, size_t cap, unsigned max)
{
	int d = 1 - c->side;
	unsigned k = 0;

	(void)len;
	if (fs_have(c, d, 0) < FS_HDR)
		fs_wait(c, d, 0, FS_HDR);
	while (k < max && fs_have(c, d, 0) >= FS_HDR) {
		uint64_t word = __atomic_load_n(
			(uint64_t *)(fs_ring(c, d) + (c->tail & (FS_RING - 1))), __ATOMIC_RELAXED);
		uint32_t n = (uint32_t)word;

		fs_copy(fs_ring(c, d), c->tail + FS_HDR, (char *)buf + (size_t)k * cap,
			n < cap ? n : cap, 1);
		c->tail += FS_HDR + ((n + 7u) & ~7u);
		k++;
	}
	fs_publish(c, d, 0);
	return (long)k;
}

static int
fs_listen(struct fl_listener *l, const char *rest, size_t msgmax)
{
	struct sockaddr_un sa;

	(void)msgmax;
	memset(l, 0, sizeof *l);
	fs_config();
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(rest) >= sizeof sa.sun_path)
		return -1;
	memcpy(sa.sun_path, rest, strlen(rest) + 1);
	l->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (l->fd < 0 || fchmod(l->fd, 0600) != 0 ||
	    bind(l->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return -1;
	snprintf(l->name, sizeof l->name, "%s", rest);
	return listen(l->fd, 16);
}

static int
fs_map(struct fl_chan *c, int memfd, int side)
{
	c->map = mmap(NULL, FS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	close(memfd);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return -1;
	}
	c->maplen = FS_SIZE;
	c->side = side;
	/* The transport's hello has the client wait once for a reply, which publishes its CPU;
	 * a floor has no hello, so the client publishes it here. Without it, a ping-pong
	 * side that only sends on a connection would leave the other side spinning on a CPU it
	 * shares with it. */
	__atomic_store_n(&fs_ctl(c)->cpu[side], sched_getcpu(), __ATOMIC_RELAXED);
	return 0;
}

/* The server makes the region and passes it with SCM_RIGHTS. */
static int
fs_accept(struct fl_listener *l, struct fl_chan *c)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	char byte = 'M';
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.buf,
			     .msg_controllen = sizeof cm.buf };
	int memfd;

	memset(c, 0, sizeof *c);
	c->rfd = -1;
	c->fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	if (c->fd < 0)
		return -1;
	memfd = memfd_create("idlbench-floor", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, FS_SIZE) != 0)
		return -1;
	/* Mapped and initialised before the client has it. */
	c->map = mmap(NULL, FS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		close(memfd);
		return -1;
	}
	c->maplen = FS_SIZE;
	c->side = 1;
	fs_ctl(c)->cpu[0] = fs_ctl(c)->cpu[1] = -1;
	memset(cm.buf, 0, sizeof cm.buf);
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &memfd, sizeof memfd);
	if (sendmsg(c->fd, &mh, MSG_NOSIGNAL) != 1) {
		close(memfd);
		return -1;
	}
	close(memfd);
	return 0;
}

static int
fs_connect(struct fl_chan *c, const char *rest, size_t msgmax)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.buf,
			     .msg_controllen = sizeof cm.buf };
	struct sockaddr_un sa;
	struct cmsghdr *h;
	int memfd;

	(void)msgmax;
	memset(c, 0, sizeof *c);
	c->rfd = -1;
	fs_config();
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(rest) >= sizeof sa.sun_path)
		return -1;
	memcpy(sa.sun_path, rest, strlen(rest) + 1);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return -1;
	if (recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC) != 1 || (h = CMSG_FIRSTHDR(&mh)) == NULL ||
	    h->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&memfd, CMSG_DATA(h), sizeof memfd);
	return fs_map(c, memfd, 0);
}

static void
fs_close(struct fl_chan *c)
{
	if (c->map != NULL)
		munmap(c->map, c->maplen);
	c->map = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void
fs_unlisten(struct fl_listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->name[0] != '\0')
		unlink(l->name);
	l->name[0] = '\0';
}

const struct fl_ops fl_shm_ops = {
	.scheme = "shm",
	.max_msg = FS_RING / 2,
	.listen = fs_listen,
	.accept = fs_accept,
	.connect = fs_connect,
	.send = fs_send,
	.recv = fs_recv,
	.close = fs_close,
	.unlisten = fs_unlisten,
	.send_batch = fs_send_batch,
	.recv_batch = fs_recv_batch,
	.batching = "ring batches: one publish and at most one wake per batch",
};
