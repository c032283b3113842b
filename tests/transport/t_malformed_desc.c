/*
 * t_malformed_desc.c - malformed messages whose framing holds, one table row each: every
 * field of the header and its flags, with the descriptor flag and without, and descriptors
 * that lie (running past the message, a count that overflows, data outside the message, a
 * kind the transport does not carry, a file descriptor no descriptor names). Each gets the
 * reply docs/wire-format.md ("What the server checks") documents, with its id + 100 and its
 * sequence number, while a call sent before it on the same connection is answered and a
 * call after it works: only a lost framing may end a connection.
 *
 * A message with the descriptor flag goes past the sender's own transport, which would
 * refuse to send it: as a packet (unix:), a datagram (udp:) or a length-prefixed frame (tcp:)
 * written to the connection's socket, a frame written inside a TLS session of the test's own
 * (tls:, the scheme's wire: tests/transport/tls_wire.c), or a queue message (port:) put on
 * its request queue. shm:'s ring gets the rows without that flag here; its hostile peers are
 * tests/shm's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create */
#endif

#include <dirent.h>
#include <errno.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <CUnit/CUnit.h>

#include "bench.h"
#include "conformance.h"

#define TT_NO_REPLY 1 /* a row's `want`: no reply at all (a one-way message) */
#define TT_FD_STRAY 1 /* a row's `fd`: a pipe's end that no descriptor names */
#define TT_FD_MEMFD 2 /* an unsealed memfd, as descriptor 0's out-of-line data */
#define TT_FDS 4096 /* descriptors looked at for port:'s queues */
#define TT_FAKE_CONNS 4 /* connections the fake server accepts, of which it serves one */

/* One malformed message. Its bytes: the header (the fields below; the flags as given), then
 * at offset 24, when `dtype` is set, one descriptor (dtype, dsize, daddr, daux); `sent` bytes
 * go, whatever the size field says. */
struct tt_framed {
	const char *what;
	uint8_t kind; /* 0xFF: 0 */
	uint8_t flags;
	int32_t id; /* 0: add's */
	uint32_t size; /* the size field */
	uint32_t sent; /* bytes sent */
	uint32_t ndesc;
	uint8_t dtype;
	uint32_t dsize;
	uint64_t daddr;
	uint16_t daux;
	int fd; /* file descriptors passed beside it (unix: only) */
	int fdpass; /* only where descriptors name file descriptors (aux means something) */
	char magic; /* 0: the right one */
	int want; /* the reply's retcode, or TT_NO_REPLY */
};

#define D IDL_MSGF_DESC
#define REQ IDL_KIND_REQUEST
#define OOL IDL_DESC_OOL
static const struct tt_framed tt_framed_rows[] = {
	/* The descriptor count against the message. */
	{ "descriptors running past the message", REQ, D, 0, 32, 32, 1, .want = IDL_EPROTO },
	{ "a descriptor count of 0xFFFFFFFF", REQ, D, 0, 48, 48, 0xFFFFFFFFu, OOL,
	  .want = IDL_EPROTO },
	{ "65 descriptors", REQ, D, 0, 24 + 65 * 16, 24 + 65 * 16, 65, OOL, .want = IDL_EPROTO },
	/* The size field against the bytes received. */
	{ "size says 40, 32 sent", REQ, D, 0, 40, 32, .want = IDL_EPROTO },
	{ "size says 24, 32 sent", REQ, D, 0, 24, 32, .want = IDL_EPROTO },
	{ "size 0xFFFFFFFF, 32 sent", REQ, D, 0, 0xFFFFFFFFu, 32, .want = IDL_EPROTO },
	{ "size 0, 32 sent", REQ, D, 0, 0, 32, .want = IDL_EPROTO },
	{ "size 28 (not a multiple of 8)", REQ, D, 0, 28, 32, .want = IDL_EPROTO },
	{ "size 36 in 40 (not a multiple of 8)", REQ, D, 0, 36, 40, .want = IDL_EPROTO },
	/* Kinds. */
	{ "an unknown kind", 99, D, 0, 32, 32, .want = IDL_EPROTO },
	{ "kind 0", 0xFF, D, 0, 32, 32, .want = IDL_EPROTO },
	{ "kind HELLO", IDL_KIND_HELLO, D, 4200, 32, 32, .want = IDL_EPROTO },
	{ "kind REPLY, a datum well formed", IDL_KIND_REPLY, D, 0, 48, 56, 1, OOL, 8, 48,
	  .want = IDL_EPROTO },
	{ "kind HELLO_REPLY", IDL_KIND_HELLO_REPLY, D, 0, 32, 32, .want = IDL_EPROTO },
	{ "kind GOODBYE", IDL_KIND_GOODBYE, D, 0, 32, 32, .want = IDL_EPROTO },
	{ "one-way, descriptors past the message", IDL_KIND_ONEWAY, D, TT_ID_NOTIFY, 32, 32, 1,
	  .want = TT_NO_REPLY },
	/* A cancel is never answered, malformed or not. */
	{ "kind CANCEL with the descriptor flag", IDL_KIND_CANCEL, D, 0, 32, 32,
	  .want = TT_NO_REPLY },
	{ "kind CANCEL, size says 40, 32 sent", IDL_KIND_CANCEL, 0, 0, 40, 32,
	  .want = TT_NO_REPLY },
	/* Flags: bits that are not defined are 0 (docs/wire-format.md), with descriptors or
	 * without. */
	{ "flag 0x80 beside the descriptor flag", REQ, D | 0x80, 0, 32, 32, .want = IDL_EPROTO },
	{ "flag 0x02 beside the descriptor flag", REQ, D | 0x02, 0, 32, 32, .want = IDL_EPROTO },
	{ "flag 0x80", REQ, 0x80, 0, 32, 32, .want = IDL_EPROTO },
	{ "flag 0x02", REQ, 0x02, 0, 32, 32, .want = IDL_EPROTO },
	{ "flags 0xFE, a descriptor count", REQ, 0xFE, 0, 32, 32, 1, .want = IDL_EPROTO },
	{ "flags 0xFF, descriptors past the message", REQ, 0xFF, 0, 32, 32, 1, .want = IDL_EPROTO },
	/* The descriptors themselves. */
	{ "a descriptor of unknown type", REQ, D, 0, 48, 48, 1, 9, .want = IDL_EPROTO },
	{ "a descriptor of type 0", REQ, D, 0, 48, 48, 1, 0, .want = IDL_EPROTO },
	{ "a datum outside the message", REQ, D, 0, 48, 56, 1, OOL, 8, 1000, .want = IDL_EPROTO },
	{ "a datum inside the message", REQ, D, 0, 48, 56, 1, OOL, 8, 40, .want = IDL_EPROTO },
	{ "a datum cut short", REQ, D, 0, 48, 56, 1, OOL, 16, 48, .want = IDL_EPROTO },
	{ "a datum of 0xFFFFFFFF bytes", REQ, D, 0, 48, 56, 1, OOL, 0xFFFFFFFFu, 48,
	  .want = IDL_EPROTO },
	{ "an empty datum with an address", REQ, D, 0, 48, 48, 1, OOL, 0, 48, .want = IDL_EPROTO },
	{ "bytes after the data", REQ, D, 0, 48, 64, 1, OOL, 8, 48, .want = IDL_EPROTO },
	{ "a datum in an unknown form", REQ, D, 0, 48, 56, 1, OOL, 8, 48, 7, .fdpass = 1,
	  .want = IDL_EPROTO },
	{ "a port naming no file descriptor", REQ, D, 0, 48, 48, 1, IDL_DESC_PORT, 0, 0,
	  .want = IDL_EPROTO },
	{ "an array of ports naming none", REQ, D, 0, 48, 56, 1, IDL_DESC_PORT_ARRAY, 1, 48,
	  .want = IDL_EPROTO },
	{ "an array of 0xFFFFFFFF ports", REQ, D, 0, 48, 56, 1, IDL_DESC_PORT_ARRAY, 0xFFFFFFFFu,
	  48, .want = IDL_EPROTO },
	{ "a file descriptor no descriptor names", REQ, D, 0, 32, 32, .fd = TT_FD_STRAY,
	  .want = IDL_EPROTO },
	{ "an unsealed memfd", REQ, D, 0, 48, 48, 1, OOL, 8, 0, 1, .fd = TT_FD_MEMFD,
	  .want = IDL_EPROTO },
	/* Other header fields, with descriptors that lie. */
	{ "id INT32_MAX, descriptors past the message", REQ, D, INT32_MAX, 32, 32, 1,
	  .want = IDL_EPROTO },
	{ "id -1, descriptors past the message", REQ, D, -1, 32, 32, 1, .want = IDL_EPROTO },
	{ "a bad magic and the descriptor flag", REQ, D, 0, 32, 32, 1, .magic = 'X',
	  .want = IDL_EPROTO },
	/* Well formed on the wire, not the routine's: the runtime's own check. */
	{ "the descriptor flag, no descriptors", REQ, D, 0, 32, 32, .want = MIG_BAD_ARGUMENTS },
	{ "a datum add does not take", REQ, D, 0, 48, 56, 1, OOL, 8, 48,
	  .want = MIG_BAD_ARGUMENTS },
};
#undef D
#undef REQ
#undef OOL

/* Whether the bytes would be converted by a transport (native order, the magic, the flag). */
static int
tt_looks_desc(const union tt_buf *m, size_t len)
{
	return len >= IDL_MSG_HEADER_SIZE && (m->head.flags & IDL_MSGF_DESC) &&
	       m->head.magic == IDL_MSG_MAGIC && m->head.order == IDL_ORDER_NATIVE;
}

/* port:'s request queues of this process now open: each a bit of `set`, by descriptor. A
 * queue descriptor reads as its name in /proc, "/idlport.<pid>.<hex>.q" for a client's
 * request queue (docs/transports/port.md), also once the name is removed. */
static void
tt_port_queues(unsigned char *set, int max)
{
	char path[300], link[128], want[48];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	memset(set, 0, (size_t)max);
	snprintf(want, sizeof want, "/idlport.%d.", (int)getpid());
	while (d != NULL && (e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		ssize_t n;

		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		if (fd <= 0 || fd >= max || (n = readlink(path, link, sizeof link - 1)) <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, want, strlen(want)) == 0 && strstr(link, ".q") != NULL)
			set[fd] = 1;
	}
	if (d != NULL)
		closedir(d);
}

/* The connection's own socket, or port:'s request queue (new since `before`), where a
 * message goes past the transport's own send; -1 when it has none (shm:'s ring). */
static int
tt_raw_fd(const struct tt_raw *r, const unsigned char *before)
{
	unsigned char now[TT_FDS];
	unsigned ev = 0;

	if (strcmp(tt.tr->scheme, "port") == 0) {
		tt_port_queues(now, TT_FDS);
		for (int fd = 0; fd < TT_FDS; fd++)
			if (now[fd] && !before[fd])
				return fd;
		return -1;
	}
	if (r->wire != NULL)
		return tt.scheme->wire->fd(r->wire);
	if (tt.tr->conn_fd == NULL || (tt.tr->flags & IDL_TRF_OWNSET))
		return -1;
	return tt.tr->conn_fd(r->conn, &ev);
}

/* Whether a message of len bytes is more than one queue message of port:'s holds: port:
 * sends such a one through an object of its own, which this test does not make. */
static int
tt_too_large(int sock, size_t len)
{
	struct mq_attr a;

	return strcmp(tt.tr->scheme, "port") == 0 &&
	       (mq_getattr((mqd_t)sock, &a) != 0 || len > (size_t)a.mq_msgsize);
}

/* A file descriptor for a row to pass: -1 when it passes none or cannot make one. */
static int
tt_row_fd(const struct tt_framed *row)
{
	int p[2], fd;

	if (row->fd == TT_FD_STRAY) {
		if (pipe(p) != 0)
			return -1;
		close(p[1]);
		return p[0];
	}
	if (row->fd != TT_FD_MEMFD || (fd = memfd_create("tt-unsealed", MFD_CLOEXEC)) < 0)
		return -1;
	if (write(fd, "unsealed", 8) != 8) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Writes the bytes to the connection's socket as the transport frames them: a tcp: frame
 * with its length before it, else one packet or datagram, with `fd` passed beside it; or, on
 * the test's own connection of a wire (`wire` not NULL), a frame inside it. */
static int
tt_raw_write(int sock, void *wire, const void *b, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	uint32_t prefix = htonl((uint32_t)len);
	int tcp = strcmp(tt.tr->scheme, "tcp") == 0;
	struct iovec iov[2] = { { &prefix, 4 }, { (void *)b, len } };
	struct msghdr mh = { .msg_iov = tcp ? iov : iov + 1, .msg_iovlen = tcp ? 2 : 1 };
	size_t total = len + (tcp ? 4 : 0);
	ssize_t n;

	if (wire != NULL)
		return tt_wire_send(wire, b, len);
	if (strcmp(tt.tr->scheme, "port") == 0)
		return mq_send((mqd_t)sock, b, len, 0) == 0 ? 0 : IDL_ESYSERR(errno);
	if (fd >= 0) {
		memset(&cm, 0, sizeof cm);
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof cm.buf;
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &fd, sizeof fd);
	}
	/* Small enough to go whole on a connection nobody else writes to. */
	while ((n = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		continue;
	return n == (ssize_t)total ? 0 : IDL_ESYSERR(n < 0 ? errno : EIO);
}

/* Builds the row's message on m with sequence number seqno; returns the bytes to send. */
static size_t
tt_row_build(const struct tt_framed *row, union tt_buf *m, uint32_t seqno)
{
	idl_desc_t d = { .addr = row->daddr, .size = row->dsize, .type = row->dtype };
	int32_t v[2] = { 40, 2 };

	memset(m->b, 0, row->sent + 64);
	tt_head(m, row->kind == 0xFF ? 0 : row->kind, row->id != 0 ? row->id : TT_ID_ADD, row->size,
		seqno);
	m->head.flags = row->flags;
	m->head.ndesc = row->ndesc;
	if (row->magic != 0)
		m->head.magic = (uint8_t)row->magic;
	d.aux = row->daux;
	if (row->dtype != 0 || row->ndesc != 0) {
		if (row->sent >= IDL_MSG_HEADER_SIZE + sizeof d)
			memcpy(m->b + IDL_MSG_HEADER_SIZE, &d, sizeof d);
	}
	/* add's arguments where a request without descriptors has them. */
	if (row->sent >= 32 && row->ndesc == 0)
		memcpy(m->b + IDL_MSG_HEADER_SIZE, v, sizeof v);
	/* Inline data, if any, at its offset past the descriptor: a pattern. */
	if (row->dsize != 0 && row->daddr >= IDL_MSG_HEADER_SIZE + sizeof d &&
	    row->daddr < row->sent)
		memset(m->b + row->daddr, 0xA5, row->sent - row->daddr);
	return row->sent;
}

/* Checks that m holds a bare error reply to `id`/`seqno` of `kind` with retcode `want`. */
static void
tt_check_refusal(const struct tt_framed *row, const union tt_buf *m, size_t got, uint8_t kind,
		 int32_t id, uint32_t seqno)
{
	if (m->head.retcode != row->want || m->head.seqno != seqno || m->head.kind != kind)
		fprintf(stderr, "conformance: %s: retcode %s (%d), seqno %u (want %s, %u)\n",
			row->what, idl_errname(m->head.retcode), m->head.retcode, m->head.seqno,
			idl_errname(row->want), seqno);
	CU_ASSERT_EQUAL(m->head.retcode, row->want);
	CU_ASSERT_EQUAL(m->head.magic, IDL_MSG_MAGIC);
	CU_ASSERT_EQUAL(m->head.kind, kind);
	CU_ASSERT_EQUAL(m->head.id, (int32_t)((uint32_t)id + IDL_REPLY_ID_OFFSET));
	CU_ASSERT_EQUAL(m->head.seqno, seqno);
	CU_ASSERT_EQUAL(m->head.size, IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(m->head.flags, 0);
	CU_ASSERT_EQUAL(got, IDL_MSG_HEADER_SIZE);
}

/* One row on a connection of its own: an add sent first and still unanswered, then the
 * row's message, then both replies in order, then an add that works. */
static void
tt_framed_row(const struct tt_framed *row, union tt_buf *m, int i)
{
	int32_t v[2] = { i, 1000 }, sum = 0, id;
	struct tt_raw r;
	uint32_t first, seqno;
	size_t len, got = 0;
	int sock, fd = -1, err;
	unsigned char queues[TT_FDS];
	uint8_t kind;

	tt_port_queues(queues, TT_FDS);
	if (tt_raw_open_own(&r, m) != 0)
		return;
	sock = tt_raw_fd(&r, queues);
	len = tt_row_build(row, m, r.seqno + 2);
	if ((tt_looks_desc(m, len) && (sock < 0 || tt_too_large(sock, len))) ||
	    ((row->fd != 0 || row->fdpass) && !(tt.tr->flags & IDL_TRF_FDPASS)))
		goto out; /* not a message this transport's connection can carry here */

	/* The call in flight: sent, not yet answered. */
	first = ++r.seqno;
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 32, first);
	memcpy(m->b + IDL_MSG_HEADER_SIZE, v, sizeof v);
	TT_CHECK_KR(err = tt_raw_send(&r, m, 32), 0);
	if (err != 0)
		goto out;

	seqno = ++r.seqno;
	len = tt_row_build(row, m, seqno);
	id = m->head.id;
	kind = m->head.kind == IDL_KIND_HELLO ? IDL_KIND_HELLO_REPLY : IDL_KIND_REPLY;
	if (tt_looks_desc(m, len) || row->fd != 0) {
		if (row->fd != 0 && (fd = tt_row_fd(row)) < 0)
			CU_FAIL("no file descriptor to pass");
		TT_CHECK_KR(err = tt_raw_write(sock, r.wire, m->b, len, fd), 0);
	} else {
		TT_CHECK_KR(err = tt_raw_send(&r, m, len), 0);
	}
	if (fd >= 0)
		close(fd);
	if (err != 0)
		goto out;

	/* The call from before is answered: the message after it took nothing from it. */
	TT_CHECK_KR(err = tt_raw_recv_seq(&r, m, &got, first), 0);
	if (err != 0) {
		fprintf(stderr, "conformance: %s: the connection ended\n", row->what);
		goto out;
	}
	memcpy(&sum, m->b + IDL_MSG_HEADER_SIZE, sizeof sum);
	CU_ASSERT_EQUAL(m->head.seqno, first);
	TT_CHECK_KR(m->head.retcode, 0);
	CU_ASSERT_EQUAL(sum, i + 1000);

	if (row->want != TT_NO_REPLY) {
		TT_CHECK_KR(err = tt_raw_recv_seq(&r, m, &got, seqno), 0);
		if (err != 0) {
			fprintf(stderr, "conformance: %s: no reply\n", row->what);
			goto out;
		}
		tt_check_refusal(row, m, got, kind, id, seqno);
	}
	/* And the connection goes on: the next message is the reply to the next call (a
	 * one-way message got none). */
	tt_raw_add_works(&r, m);
out:
	tt_raw_close(&r);
}

/*
 * The client's side: a server whose reply to one of two calls in flight on a port carries
 * descriptors that lie. That call fails with IDL_EPROTO; the other gets its answer, and a
 * call after them goes through on the same connection (the server accepts one only).
 */

/* The fake server's connection: the transport's, or on a scheme with a wire (tls:) one the
 * test makes itself, so that the lie goes inside the session as any other frame. */
struct tt_fconn {
	void *conn;
	void *wire;
};

/* Receives one message into m (0, or the error). */
static int
tt_fake_recv(struct tt_fconn *f, union tt_buf *m, size_t *len)
{
	struct idl_xmsg x = { .data = m->b, .cap = sizeof m->b };
	int err;

	if (f->wire != NULL)
		return tt_wire_recv(f->wire, m, len);
	err = tt.tr->conn_recv(f->conn, &x, &(struct idl_deadline){ 0, TT_RAW_MS });
	*len = x.len;
	return err;
}

/* Sends len bytes of b as one message: 0, or -1. */
static int
tt_fake_send(struct tt_fconn *f, void *b, size_t len)
{
	struct idl_xmsg x = { .data = b, .len = len };

	if (f->wire != NULL)
		return tt_wire_send(f->wire, b, len) == 0 ? 0 : -1;
	return tt.tr->conn_send(f->conn, &x, &(struct idl_deadline){ 0, TT_RAW_MS }) == 0 ? 0 : -1;
}

/* Answers a hello with the client's own hashes: every routine agrees. */
static int
tt_fake_hello(struct tt_fconn *f, union tt_buf *m, size_t len)
{
	uint32_t n;

	if (len < 40 || m->head.kind != IDL_KIND_HELLO)
		return -1;
	memcpy(&n, m->b + 28, 4);
	if (n > 1000 || 40 + 8 * (size_t)n > len)
		return -1;
	m->head.kind = IDL_KIND_HELLO_REPLY;
	m->head.id = (int32_t)((uint32_t)m->head.id + IDL_REPLY_ID_OFFSET);
	m->head.size = 40 + 8 * n;
	memset(m->b + 32, 0, 4); /* namelen; the version stays the hello's */
	return tt_fake_send(f, m->b, m->head.size);
}

/* Replies to the add request in q: a sum, or (`lie`) a 32-byte reply whose one descriptor
 * runs past it, written straight to the socket (or inside the wire's session). */
static int
tt_fake_answer(struct tt_fconn *f, const union tt_buf *q, int lie)
{
	union tt_buf r;
	int32_t ab[2];
	unsigned ev;

	memcpy(ab, q->b + IDL_MSG_HEADER_SIZE, sizeof ab);
	tt_head(&r, IDL_KIND_REPLY, (int32_t)((uint32_t)q->head.id + IDL_REPLY_ID_OFFSET), 32,
		q->head.seqno);
	ab[0] += ab[1];
	memcpy(r.b + IDL_MSG_HEADER_SIZE, ab, 4);
	if (!lie)
		return tt_fake_send(f, r.b, 32);
	r.head.flags = IDL_MSGF_DESC;
	r.head.ndesc = 1;
	return tt_raw_write(f->wire != NULL ? -1 : tt.tr->conn_fd(f->conn, &ev), f->wire, r.b, 32,
			    -1) == 0
		       ? 0
		       : -1;
}

/* The fake server's connections while it waits for the one that says hello. */
struct tt_fake_conns {
	const struct tt_wire_ops *w; /* the scheme's wire, or NULL: the transport's */
	void *ep;
	int lfd;
	size_t csz;
	char *conns; /* the transport's, TT_FAKE_CONNS of csz bytes */
	void *wires[TT_FAKE_CONNS];
	int n;
};

/* Listens on address: 0, or -1. */
static int
tt_fake_listen(struct tt_fake_conns *fc, const char *address)
{
	const struct idl_transport *tr = tt.tr;
	const char *rest;

	fc->w = tt.scheme->wire;
	fc->csz = (tr->conn_size + 15) & ~(size_t)15;
	if (fc->w != NULL)
		return (fc->lfd = fc->w->listen(address)) >= 0 ? 0 : -1;
	fc->ep = calloc(1, tr->ep_size);
	fc->conns = aligned_alloc(16, TT_FAKE_CONNS * fc->csz);
	if (fc->ep == NULL || fc->conns == NULL || idl_transport_find(address, &rest) != tr ||
	    tr->ep_listen(fc->ep, rest, NULL) != 0)
		return -1;
	memset(fc->conns, 0, TT_FAKE_CONNS * fc->csz);
	fc->lfd = tr->ep_fd(fc->ep);
	return 0;
}

/* Connection i's socket to poll; -1 once it failed. */
static int
tt_fake_fd(struct tt_fake_conns *fc, int i)
{
	unsigned ev;

	if (fc->w != NULL)
		return fc->wires[i] != NULL ? fc->w->fd(fc->wires[i]) : -1;
	return tt.tr->conn_fd(fc->conns + (size_t)i * fc->csz, &ev);
}

/* The connection that says hello is the one served: a port's own connection and a pollable
 * port's may both come, one of them silent. 0 and *f, or -1. */
static int
tt_fake_first(struct tt_fake_conns *fc, struct tt_fconn *f)
{
	for (;;) {
		struct pollfd p[1 + TT_FAKE_CONNS] = { { .fd = fc->lfd, .events = POLLIN } };

		for (int i = 0; i < fc->n; i++)
			p[1 + i] = (struct pollfd){ .fd = tt_fake_fd(fc, i), .events = POLLIN };
		if (poll(p, 1 + (nfds_t)fc->n, TT_RAW_MS) <= 0)
			return -1;
		if ((p[0].revents & POLLIN) && fc->n < TT_FAKE_CONNS) {
			if (fc->w != NULL && (fc->wires[fc->n] = fc->w->accept(fc->lfd)) != NULL)
				fc->n++;
			else if (fc->w == NULL &&
				 tt.tr->ep_accept(fc->ep, fc->conns + (size_t)fc->n * fc->csz) == 0)
				fc->n++;
		}
		for (int i = 0; i < fc->n; i++) {
			int r = 1;

			if (p[1 + i].revents == 0 || p[1 + i].fd < 0)
				continue;
			/* A wire's connection makes its set-up first: only its first frame counts.
			 */
			if (fc->w != NULL && (r = fc->w->ready(fc->wires[i])) < 0) {
				fc->w->close(fc->wires[i]);
				fc->wires[i] = NULL;
			}
			if (r == 1 && (p[1 + i].revents & POLLIN)) {
				*f = (struct tt_fconn){ .conn = fc->conns + (size_t)i * fc->csz,
							.wire = fc->w != NULL ? fc->wires[i]
									      : NULL };
				return 0;
			}
		}
	}
}

/* The fake server (a child process): the connection that says hello; then add requests two at a
 * time, the one with a == 1 answered first, with the lie, then the other well, until the
 * client leaves. Exits 0 when all of that happened. */
static void
tt_fake_server(const char *address, int ready)
{
	struct tt_fake_conns fc = { .lfd = -1 };
	union tt_buf *m = malloc(2 * sizeof *m);
	struct tt_fconn f;
	size_t len;

	if (m == NULL || tt_fake_listen(&fc, address) != 0 || write(ready, "r", 1) != 1)
		_exit(2);
	if (tt_fake_first(&fc, &f) != 0)
		_exit(3);
	if (tt_fake_recv(&f, m, &len) != 0 || tt_fake_hello(&f, m, len) != 0)
		_exit(3);
	while (tt_fake_recv(&f, &m[0], &len) == 0) {
		if (tt_fake_recv(&f, &m[1], &len) != 0 || m[0].head.kind != IDL_KIND_REQUEST ||
		    m[1].head.kind != IDL_KIND_REQUEST)
			_exit(4);
		/* The lie first, so that the other call is still waiting behind it. */
		for (int lie = 1; lie >= 0; lie--) {
			for (int i = 0; i < 2; i++) {
				int32_t a;

				memcpy(&a, m[i].b + IDL_MSG_HEADER_SIZE, 4);
				if ((a == 1) == lie && tt_fake_answer(&f, &m[i], lie) != 0)
					_exit(5);
			}
		}
	}
	_exit(0);
}

struct tt_fake_call {
	idl_port_t port;
	int a, sum, kr, done;
	char detail[256];
};

static void *
tt_fake_call_main(void *arg)
{
	struct tt_fake_call *c = arg;

	c->kr = bench_add(c->port, c->a, 10 * c->a, &c->sum);
	snprintf(c->detail, sizeof c->detail, "%s", idl_errdetail());
	return NULL;
}

static void
tt_fake_done(void *ctx, kern_return_t kr, int sum)
{
	struct tt_fake_call *c = ctx;

	c->kr = kr;
	c->sum = sum;
	c->done = 1;
}

/* Two calls in flight on port, a = a0 and a0 + 1: from two threads, or as calls in flight
 * of the pollable port dispatched until both are done. */
static void
tt_fake_pair(idl_port_t port, int async, int a0, struct tt_fake_call *c)
{
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		c[i] = (struct tt_fake_call){ .port = port, .a = a0 + i, .kr = -1 };
	if (!async) {
		for (int i = 0; i < 2; i++)
			CU_ASSERT_FATAL(pthread_create(&th[i], NULL, tt_fake_call_main, &c[i]) ==
					0);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		return;
	}
	CU_ASSERT(idl_port_fd(port) >= 0);
	for (int i = 0; i < 2; i++)
		TT_CHECK_KR(bench_add_async(port, c[i].a, 10 * c[i].a, tt_fake_done, &c[i], NULL),
			    0);
	for (int k = 0; k < 100 && !(c[0].done && c[1].done); k++) {
		struct pollfd p = { .fd = idl_port_fd(port), .events = POLLIN };

		(void)poll(&p, 1, 100);
		CU_ASSERT(idl_port_dispatch(port, 0) >= 0);
	}
	CU_ASSERT(c[0].done && c[1].done);
}

/* A reply whose descriptors lie fails its own call only (tested where the server is a socket
 * of the transport's that the test can write to: unix:, tcp:, and tls: through its wire), for calls
 * of two threads and for calls in flight of a pollable port. */
static void
tt_bad_reply_framed(int async)
{
	char address[512];
	struct tt_fake_call c[2];
	int fds[2], status = -1;
	idl_port_t port = NULL;
	pid_t pid;
	char b;

	if (tt.tr->ep_accept == NULL || tt.tr->conn_fd == NULL ||
	    (tt.tr->flags & (IDL_TRF_OWNSET | IDL_TRF_DGRAM)))
		return; /* no socket of its own to write a lie to: tests/shm's hostile server */
	/* A fresh address beside the suite's server (unix:'s row names one path per directory). */
	if (strcmp(tt.tr->scheme, "unix") == 0)
		snprintf(address, sizeof address, "unix:%s/fake-server.sock", tt.dir);
	else
		CU_ASSERT_FATAL(tt.scheme->make_address(tt.dir, address, sizeof address) == 0);
	CU_ASSERT_FATAL(pipe(fds) == 0);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		tt_fake_server(address, fds[1]);
	}
	close(fds[1]);
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL(read(fds[0], &b, 1), 1);
	close(fds[0]);
	TT_CHECK_KR(idl_port_open(address, &port), 0);
	if (port != NULL) {
		idl_port_set_timeout(port, TT_RAW_MS);
		tt_fake_pair(port, async, 1, c);
		if (c[0].kr != IDL_EPROTO)
			fprintf(stderr, "conformance: the lied-to call%s: %s [%s]\n",
				async ? " in flight" : "", idl_errname(c[0].kr), c[0].detail);
		TT_CHECK_KR(c[0].kr, IDL_EPROTO);
		if (!async)
			CU_ASSERT(strstr(c[0].detail, "descriptors") != NULL);
		TT_CHECK_KR(c[1].kr, 0);
		CU_ASSERT_EQUAL(c[1].sum, 22);
		/* The same connection: the fake server accepts no other. */
		tt_fake_pair(port, async, 3, c);
		TT_CHECK_KR(c[0].kr, 0);
		TT_CHECK_KR(c[1].kr, 0);
		CU_ASSERT_EQUAL(c[0].sum, 33);
		CU_ASSERT_EQUAL(c[1].sum, 44);
		idl_port_close(port);
	}
	if (waitpid(pid, &status, 0) != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (strcmp(tt.tr->scheme, "unix") == 0)
		unlink(address + 5);
}

void
tt_bad_framed(void)
{
	union tt_buf *m = malloc(sizeof *m);

	if (m == NULL) {
		CU_FAIL("out of memory");
		return;
	}
	for (size_t i = 0; i < sizeof tt_framed_rows / sizeof tt_framed_rows[0]; i++)
		tt_framed_row(&tt_framed_rows[i], m, (int)i);
	free(m);
	tt_bad_reply_framed(0);
	tt_bad_reply_framed(1);
}
