/*
 * floor_ool.c - the floor of the bandwidth rows (ool64k, ool1m): the client sends the
 * request (header and descriptor, row->req bytes) with the payload carried the way its
 * transport carries out-of-line data, the server reads every byte of it into a checksum
 * (bench_ool_sum, as S_bench_ool* does) and answers the small reply. No runtime, no
 * marshaling: what is left is the kernel's and the memory's share of the idlkit figure.
 *
 *   unix  up to FO_UNIX_INLINE_MAX bytes inline after the request, one sendmsg of the two
 *         pieces on the SEQPACKET socket, read by one recvmsg; larger, a sealed memfd passed
 *         with SCM_RIGHTS beside the request; the receiver checks the seals and size, maps
 *         it privately and reads it there (transports/unix/unix_desc.c);
 *   tcp   the payload inline after the request, in one length-prefixed frame written by
 *         one sendmsg of the two pieces (transports/tcp/tcp.c);
 *   tls   tcp's frame inside TLS: the frame's head and the request in one SSL_write, the
 *         payload in another, which OpenSSL cuts into 16 KiB records (floor_tls.c);
 *   port  the whole message in a new POSIX shared-memory object, named by a control
 *         message on the queue; the receiver opens it, removes the name and preads it
 *         (transports/mqueue/mq_io.c);
 *   shm   the payload copied into an arena of the sender's, shared with the receiver at
 *         connection time; the request on the ring; the receiver reads in place
 *         (transports/shm/shm_ool.c).
 *
 * udp has none: the payload is above its datagram limit, and the cell says so.
 *
 * Layer 1, the floors (ib_floor.h): it knows the base and the job it is given; it must not
 * know rows, columns, cells, runs or reports.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create, F_ADD_SEALS */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench_impl.h"
#include "ib_floor.h"

#define FO_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
#define FO_NAME_OFF 24u /* where the port floor's object name sits in the control message */
#define FO_NAME_MAX 40u
/* The largest payload the unix: transport carries inline rather than in a memfd: its
 * UNIX_INLINE_MAX (transports/unix/unix_impl.h, which a tool may not include), so that the
 * floor moves the bytes the way the transport does. */
#define FO_UNIX_INLINE_MAX (64u * 1024u)

/* Where the checksums go, so that the compiler cannot skip the reads. */
static volatile uint64_t fo_sink;

struct fo {
	const struct fl_ops *o;
	struct fl_chan *c;
	size_t req, rep, payload, frame;
	unsigned char *msg; /* frame + request (+ payload, tcp's receiver) */
	size_t msgcap;
	unsigned char *arena; /* shm: the shared arena */
	unsigned serial; /* port: object names */
};

static int
fo_tls(const struct fl_ops *o)
{
#if HAVE_TRANSPORT_TLS
	return o == &fl_tls_ops;
#else
	(void)o;
	return 0;
#endif
}

int
fl_ool_supported(const struct fl_ops *o)
{
	return o == &fl_unix_ops || o == &fl_tcp_ops || o == &fl_port_ops || o == &fl_shm_ops ||
	       fo_tls(o);
}

static int
fo_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* shm: the client makes the arena and passes it over the setup socket, once. */
static int
fo_arena_give(struct fo *f)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	char byte = 'A';
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.buf,
			     .msg_controllen = sizeof cm.buf };
	int fd = memfd_create("idlbench-arena", MFD_CLOEXEC), r = -1;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)f->payload) != 0)
		goto out;
	f->arena = mmap(NULL, f->payload, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (f->arena == MAP_FAILED) {
		f->arena = NULL;
		goto out;
	}
	memset(cm.buf, 0, sizeof cm.buf);
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &fd, sizeof fd);
	r = sendmsg(f->c->fd, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
out:
	close(fd);
	return r;
}

static int
fo_arena_take(struct fo *f)
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
	struct cmsghdr *h;
	struct stat st;
	int fd;

	if (recvmsg(f->c->fd, &mh, MSG_CMSG_CLOEXEC) != 1 || (h = CMSG_FIRSTHDR(&mh)) == NULL ||
	    h->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(h), sizeof fd);
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != f->payload) {
		close(fd);
		return -1;
	}
	f->arena = mmap(NULL, f->payload, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (f->arena == MAP_FAILED) {
		f->arena = NULL;
		return -1;
	}
	return 0;
}

static int
fo_init(struct fo *f, const struct fl_ops *o, struct fl_chan *c, size_t req, size_t rep,
	size_t payload, int server)
{
	memset(f, 0, sizeof *f);
	f->o = o;
	f->c = c;
	f->req = req;
	/* port: the control message must hold the object's name (the queue's messages are
	 * 64 bytes at least, fl_mq_msgsize). */
	if (o == &fl_port_ops && req < FO_NAME_OFF + FO_NAME_MAX)
		f->req = FO_NAME_OFF + FO_NAME_MAX;
	f->rep = rep;
	f->payload = payload;
	f->frame = o->frame;
	f->msgcap = f->frame + f->req + f->rep + payload + 64;
	if ((f->msg = calloc(1, f->msgcap)) == NULL)
		return -1;
	if (o == &fl_shm_ops)
		return server ? fo_arena_take(f) : fo_arena_give(f);
	return 0;
}

static void
fo_fini(struct fo *f)
{
	if (f->arena != NULL)
		munmap(f->arena, f->payload);
	free(f->msg);
}

static void
fo_frame(struct fo *f, size_t len)
{
	if (f->frame == 4) {
		uint32_t be = __builtin_bswap32((uint32_t)len);

		memcpy(f->msg, &be, 4);
	}
}

/* unix, up to FO_UNIX_INLINE_MAX: the request and the payload after it, one packet. */
static int
fo_unix_send_inline(struct fo *f, const void *data)
{
	struct iovec iov[2] = { { f->msg, f->req }, { (void *)(uintptr_t)data, f->payload } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	do
		n = sendmsg(f->c->fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)(f->req + f->payload) ? 0 : -1;
}

static int
fo_unix_recv_inline(struct fo *f)
{
	ssize_t n;

	do
		n = recv(f->c->fd, f->msg, f->msgcap, 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)(f->req + f->payload))
		return -1;
	fo_sink = bench_ool_sum(f->msg + f->req, f->payload);
	return 0;
}

/* unix, larger: the payload in a new sealed memfd, sent with the request. */
static int
fo_unix_send(struct fo *f, const void *data)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { f->msg, f->req };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.buf,
			     .msg_controllen = sizeof cm.buf };
	int fd, r = -1;
	ssize_t n;

	if (f->payload <= FO_UNIX_INLINE_MAX)
		return fo_unix_send_inline(f, data);
	fd = memfd_create("idlbench-ool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (fo_write_all(fd, data, f->payload) != 0 ||
	    fcntl(fd, F_ADD_SEALS, FO_SEALS | F_SEAL_SEAL) != 0)
		goto out;
	memset(cm.buf, 0, sizeof cm.buf);
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &fd, sizeof fd);
	do
		n = sendmsg(f->c->fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	r = n == (ssize_t)f->req ? 0 : -1;
out:
	close(fd);
	return r;
}

static int
fo_unix_recv(struct fo *f)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { f->msg, f->msgcap };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.buf,
			     .msg_controllen = sizeof cm.buf };
	struct cmsghdr *h;
	struct stat st;
	ssize_t n;
	void *p;
	int fd, seals;

	if (f->payload <= FO_UNIX_INLINE_MAX)
		return fo_unix_recv_inline(f);
	do
		n = recvmsg(f->c->fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || (h = CMSG_FIRSTHDR(&mh)) == NULL || h->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(h), sizeof fd);
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != f->payload || seals < 0 ||
	    (seals & FO_SEALS) != FO_SEALS) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, f->payload, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	fo_sink = bench_ool_sum(p, f->payload);
	munmap(p, f->payload);
	return 0;
}

/* tcp: one frame, the request and the payload after it, one sendmsg. */
static int
fo_tcp_send(struct fo *f, const void *data)
{
	struct iovec iov[2] = { { f->msg, f->frame + f->req },
				{ (void *)(uintptr_t)data, f->payload } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t want = f->frame + f->req + f->payload, done = 0;

	fo_frame(f, f->req + f->payload);
	while (done < want) {
		ssize_t n = sendmsg(f->c->fd, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
		/* A short write: skip what went. */
		while (mh.msg_iovlen > 0 && (size_t)n >= mh.msg_iov[0].iov_len) {
			n -= (ssize_t)mh.msg_iov[0].iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen > 0) {
			mh.msg_iov[0].iov_base = (char *)mh.msg_iov[0].iov_base + n;
			mh.msg_iov[0].iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int
fo_tcp_recv(struct fo *f)
{
	size_t len = f->frame + f->req + f->payload;

	if (f->o->recv(f->c, f->msg, len, f->msgcap) <= 0)
		return -1;
	fo_sink = bench_ool_sum(f->msg + f->frame + f->req, f->payload);
	return 0;
}

/* port: the message in a new shared-memory object, its name on the queue. */
static int
fo_port_send(struct fo *f, const void *data)
{
	char *name = (char *)f->msg + FO_NAME_OFF;
	int fd;

	snprintf(name, FO_NAME_MAX, "/idlbench-ool.%ld.%u", (long)getpid(), f->serial++);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fo_write_all(fd, f->msg, f->req) != 0 || fo_write_all(fd, data, f->payload) != 0) {
		close(fd);
		shm_unlink(name);
		return -1;
	}
	close(fd);
	if (f->o->send(f->c, f->msg, f->req) != 0) {
		shm_unlink(name);
		return -1;
	}
	return 0;
}

static int
fo_port_recv(struct fo *f)
{
	char name[FO_NAME_MAX];
	size_t want = f->req + f->payload, off = 0;
	struct stat st;
	int fd;

	if (f->o->recv(f->c, f->msg, f->req, f->msgcap) <= 0)
		return -1;
	memcpy(name, f->msg + FO_NAME_OFF, sizeof name);
	name[sizeof name - 1] = '\0';
	if ((fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0)) < 0)
		return -1;
	shm_unlink(name);
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != want) {
		close(fd);
		return -1;
	}
	while (off < want) {
		ssize_t n = pread(fd, f->msg + off, want - off, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	close(fd);
	fo_sink = bench_ool_sum(f->msg + f->req, f->payload);
	return 0;
}

/* shm: a copy into the arena, the request on the ring. */
static int
fo_shm_send(struct fo *f, const void *data)
{
	memcpy(f->arena, data, f->payload);
	return f->o->send(f->c, f->msg, f->req);
}

static int
fo_shm_recv(struct fo *f)
{
	if (f->o->recv(f->c, f->msg, f->req, f->msgcap) <= 0)
		return -1;
	fo_sink = bench_ool_sum(f->arena, f->payload);
	return 0;
}

static int
fo_send(struct fo *f, const void *data)
{
	if (f->o == &fl_unix_ops)
		return fo_unix_send(f, data);
	if (f->o == &fl_tcp_ops)
		return fo_tcp_send(f, data);
	if (fo_tls(f->o)) {
		fo_frame(f, f->req + f->payload);
		return fl_tls_sendv(f->c, f->msg, f->frame + f->req, data, f->payload);
	}
	if (f->o == &fl_port_ops)
		return fo_port_send(f, data);
	return fo_shm_send(f, data);
}

static int
fo_recv(struct fo *f)
{
	if (f->o == &fl_unix_ops)
		return fo_unix_recv(f);
	if (f->o == &fl_tcp_ops || fo_tls(f->o))
		return fo_tcp_recv(f);
	if (f->o == &fl_port_ops)
		return fo_port_recv(f);
	return fo_shm_recv(f);
}

/* The small reply, both ways. */
static int
fo_reply(struct fo *f)
{
	fo_frame(f, f->rep);
	return f->o->send(f->c, f->msg, f->rep + f->frame);
}

static int
fo_get_reply(struct fo *f)
{
	return f->o->recv(f->c, f->msg, f->rep + f->frame, f->msgcap) > 0 ? 0 : -1;
}

int
fl_ool_serve(const struct fl_ops *o, struct fl_chan *c, size_t req, size_t rep, size_t payload)
{
	struct fo f;
	int r = -1;

	if (fo_init(&f, o, c, req, rep, payload, 1) == 0) {
		while (fo_recv(&f) == 0)
			if (fo_reply(&f) != 0)
				break;
		r = 0;
	}
	fo_fini(&f);
	return r;
}

int
fl_ool_calls(const struct fl_job *j, struct fl_chan *c, struct ib_reps *out)
{
	unsigned char *data = malloc(j->payload);
	struct fo f;
	int r = -1;

	if (data == NULL || fo_init(&f, j->ops, c, j->req, j->rep, j->payload, 0) != 0) {
		free(data);
		snprintf(out->why, sizeof out->why, "floor out of line: %s", strerror(errno));
		return -1;
	}
	memset(data, 'O', j->payload);
	memset(f.msg + f.frame, 'Q', f.req);
	ib_cpu_mark(out);
	for (unsigned i = 0; i < j->warmup; i++)
		if (fo_send(&f, data) != 0 || fo_get_reply(&f) != 0)
			goto done;
	for (unsigned k = 0; k < j->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; i < j->iterations; i++)
			if (fo_send(&f, data) != 0 || fo_get_reply(&f) != 0)
				goto done;
		t1 = ib_now();
		out->v[out->n++] = (double)j->payload * j->iterations / (t1 - t0) / 1e6;
	}
	ib_cpu_mark(out);
	r = 0;
done:
	if (r != 0)
		snprintf(out->why, sizeof out->why, "floor out of line: %s", strerror(errno));
	fo_fini(&f);
	free(data);
	return r;
}
