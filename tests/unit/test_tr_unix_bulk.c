/*
 * test_tr_unix_bulk.c - how the unix: transport carries out-of-line data
 * (transports/unix/unix_desc.c), on a real SOCK_SEQPACKET socket pair: the packet the send
 * makes is read raw, so that the test sees what the wire carries. UNIX_INLINE_MAX (64 KiB)
 * bytes and fewer travel inline after the message, with no file descriptor; one byte more
 * travels in a sealed memfd; a send buffer too small for the inline packet makes the send put the
 * data in a memfd instead, and the message still arrives. Every time the transport's receive then
 * gives the receiver the sender's bytes.
 */
#define _GNU_SOURCE 1

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <idl/idl_ool.h>

#include "ool/ool_cache.h"
#include "unix/unix_impl.h"

#define BK_AUX_INLINE 0u /* unix_desc.c's UNIX_AUX_INLINE */
#define BK_AUX_MEMFD 1u
/* The message: header, one descriptor, 8 bytes of arguments. */
#define BK_MSG (IDL_MSG_HEADER_SIZE + IDL_DESC_SIZE + 8u)

struct bk_pair {
	struct unix_conn tx, rx; /* the two ends of one socket pair, as the transport's */
};

static void
bk_end(struct unix_conn *c, int fd)
{
	memset(c, 0, sizeof *c);
	c->fd = fd;
	c->open = 1;
	idl__sock_ra_init(&c->ra);
	c->spill = malloc(UNIX_SPILL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->spill);
}

static void
bk_open(struct bk_pair *p)
{
	int sv[2];

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	bk_end(&p->tx, sv[0]);
	bk_end(&p->rx, sv[1]);
}

static void
bk_close(struct bk_pair *p)
{
	struct unix_conn *ends[2] = { &p->tx, &p->rx };

	for (int i = 0; i < 2; i++) {
		idl__unix_pend_free(ends[i]);
		idl__sock_ra_free(&ends[i]->ra);
		free(ends[i]->spill);
		close(ends[i]->fd);
	}
}

static unsigned char
bk_byte(size_t k)
{
	return (unsigned char)(k * 7u + (k >> 9));
}

/* Sends a request with one out-of-line datum of `size` patterned bytes over p->tx. */
static void
bk_send(struct bk_pair *p, size_t size)
{
	unsigned char msg[BK_MSG] __attribute__((aligned(8)));
	unsigned char *data = malloc(size);
	idl_msg_header_t h = { IDL_MSG_MAGIC,
			       IDL_ORDER_NATIVE,
			       IDL_KIND_REQUEST,
			       IDL_MSGF_DESC,
			       BK_MSG,
			       4000,
			       7,
			       0,
			       1 };
	idl_desc_t d = { (uint64_t)(uintptr_t)data, (uint32_t)size, IDL_DESC_OOL, 0, 0 };
	struct idl_xmsg m = { msg, BK_MSG, 0, NULL, 0, 0 };
	struct idl_deadline dl = { 0, 5000 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	for (size_t k = 0; k < size; k++)
		data[k] = bk_byte(k);
	memset(msg, 0, sizeof msg);
	memcpy(msg, &h, sizeof h);
	memcpy(msg + IDL_MSG_HEADER_SIZE, &d, sizeof d);
	CU_ASSERT_EQUAL(idl__unix_send_desc(&p->tx, &m, &dl), 0);
	free(data);
}

/* Reads the next packet raw, as the wire has it, without taking it off the socket or waiting
 * for it (the send has put it there, or failed): its length, the number of file descriptors
 * with it (closed here) and its descriptor. */
static size_t
bk_peek(struct bk_pair *p, unsigned *nfds, idl_desc_t *d)
{
	static unsigned char buf[BK_MSG + UNIX_SPILL + 64];
	int fds[IDL_DESC_MAX];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * IDL_DESC_MAX)];
	} cm;
	struct iovec iov = { buf, sizeof buf };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.buf,
			     .msg_controllen = sizeof cm.buf };
	ssize_t n = recvmsg(p->rx.fd, &mh, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	CU_ASSERT_FATAL(n >= (ssize_t)BK_MSG);
	*nfds = idl__unix_cmsg_fds(&mh, fds, IDL_DESC_MAX);
	for (unsigned k = 0; k < *nfds; k++)
		close(fds[k]);
	memcpy(d, buf + IDL_MSG_HEADER_SIZE, sizeof *d);
	return (size_t)n;
}

/* Receives the packet with the transport and checks the datum's `size` bytes. */
static void
bk_recv_check(struct bk_pair *p, size_t size)
{
	unsigned char buf[BK_MSG + 64] __attribute__((aligned(8)));
	struct idl_xmsg m = { buf, 0, sizeof buf, NULL, 0, 0 };
	struct idl_deadline dl = { 0, 5000 };
	const unsigned char *data;
	idl_desc_t d;
	size_t bad = 0;

	CU_ASSERT_EQUAL_FATAL(idl__unix_recv(&p->rx, &m, &dl), 0);
	CU_ASSERT_EQUAL(m.len, BK_MSG);
	memcpy(&d, buf + IDL_MSG_HEADER_SIZE, sizeof d);
	CU_ASSERT_EQUAL_FATAL(d.size, size);
	data = (const unsigned char *)(uintptr_t)d.addr;
	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	for (size_t k = 0; k < size; k++)
		bad += data[k] != bk_byte(k);
	CU_ASSERT_EQUAL(bad, 0);
	idl_ool_free((void *)(uintptr_t)d.addr, d.size);
}

/* One datum of `size` bytes sent and received: whether it went inline (no file descriptor,
 * the data after the message) or in a memfd (one file descriptor, the message alone). */
static void
bk_round(struct bk_pair *p, size_t size, int inline_expected)
{
	unsigned nfds = 99;
	idl_desc_t d;
	size_t n;

	bk_send(p, size);
	n = bk_peek(p, &nfds, &d);
	if (inline_expected) {
		CU_ASSERT_EQUAL(nfds, 0);
		CU_ASSERT_EQUAL(d.aux, BK_AUX_INLINE);
		CU_ASSERT_EQUAL(n, BK_MSG + IDL_MSG_ROUND(size));
	} else {
		CU_ASSERT_EQUAL(nfds, 1);
		CU_ASSERT_EQUAL(d.aux, BK_AUX_MEMFD);
		CU_ASSERT_EQUAL(n, BK_MSG);
	}
	bk_recv_check(p, size);
}

static void
test_inline_64k(void)
{
	struct bk_pair p;

	bk_open(&p);
	bk_round(&p, 64u * 1024u, 1);
	bk_round(&p, 64u * 1024u - 3u, 1);
	bk_round(&p, UNIX_INLINE_MAX, 1);
	bk_close(&p);
}

static void
test_memfd_above(void)
{
	struct bk_pair p;

	bk_open(&p);
	bk_round(&p, UNIX_INLINE_MAX + 1u, 0);
	bk_round(&p, 1024u * 1024u, 0);
	/* Small data still goes inline after a large one went in a memfd. */
	bk_round(&p, 100u, 1);
	bk_close(&p);
}

/* A send buffer that cannot take the inline packet: the data goes in a memfd, the message
 * arrives whole, nothing waits. The kernel doubles the value set; 16 KiB gives 32 KiB. */
static void
test_small_sndbuf(void)
{
	struct bk_pair p;
	int v = 16 * 1024;

	bk_open(&p);
	CU_ASSERT_EQUAL_FATAL(setsockopt(p.tx.fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v), 0);
	bk_round(&p, 64u * 1024u, 0);
	bk_round(&p, 20u * 1024u, 1);
	bk_round(&p, 100u, 1);
	bk_close(&p);
}

/* A hostile packet: one inline datum of 100000 bytes claimed, 8 sent. The receive refuses
 * it (its framing kept) without taking a block of that size from the cache first. */
static void
test_inline_claim(void)
{
	unsigned char pkt[BK_MSG + 8] __attribute__((aligned(8)));
	unsigned char buf[BK_MSG + 64] __attribute__((aligned(8)));
	idl_msg_header_t h = { IDL_MSG_MAGIC,
			       IDL_ORDER_NATIVE,
			       IDL_KIND_REQUEST,
			       IDL_MSGF_DESC,
			       BK_MSG,
			       4000,
			       8,
			       0,
			       1 };
	idl_desc_t d = { BK_MSG, 100000, IDL_DESC_OOL, 0, BK_AUX_INLINE };
	struct idl_xmsg m = { buf, 0, sizeof buf, NULL, 0, 0 };
	struct idl_deadline dl = { 0, 5000 };
	struct idl__ool_cache_stats st0, st1;
	struct bk_pair p;

	memset(pkt, 0, sizeof pkt);
	memcpy(pkt, &h, sizeof h);
	memcpy(pkt + IDL_MSG_HEADER_SIZE, &d, sizeof d);
	bk_open(&p);
	CU_ASSERT_EQUAL(send(p.tx.fd, pkt, sizeof pkt, 0), (ssize_t)sizeof pkt);
	idl__ool_cache_stats(&st0);
	CU_ASSERT_EQUAL(idl__unix_recv(&p.rx, &m, &dl), IDL_EPROTO);
	CU_ASSERT_EQUAL(m.len, sizeof pkt);
	idl__ool_cache_stats(&st1);
	CU_ASSERT_EQUAL(st1.hits + st1.misses, st0.hits + st0.misses);
	bk_close(&p);
}

static CU_TestInfo tr_unix_bulk_tests[] = {
	{ "64 KiB inline", test_inline_64k },
	{ "a memfd above the limit", test_memfd_above },
	{ "a small send buffer", test_small_sndbuf },
	{ "more inline bytes claimed than came", test_inline_claim },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_tr_unix_bulk = {
	"tr_unix_bulk", NULL, NULL, NULL, NULL, tr_unix_bulk_tests
};
