/*
 * test_tr_tcp_rx.c - the tcp: transport's receive of a frame with out-of-line data in pieces
 * (transports/sock/stream_rx.c), on a real stream socket pair: the non-blocking receive takes
 * the data straight into the blocks across as many calls as the pieces take, keeps the
 * framing for the frame after it, hands a half-received frame over to the blocking receive
 * (whose deadline leaves it intact), refuses a message too large for the caller from the
 * carry buffer as before, and frees the blocks of a frame the connection ends in the middle
 * of.
 */
#define _GNU_SOURCE 1

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <idl/idl_ool.h>

#include "sock/stream.h"

/* Two data of these sizes: one mapped block, one small one with padding after it. */
#define RX_BIG (60u * 1024u + 3u)
#define RX_SMALL 13u
#define RX_MSIZE (IDL_MSG_HEADER_SIZE + 2 * IDL_DESC_SIZE + 8)

struct rx_pair {
	struct stream_conn c; /* the receiving side */
	int peer;
	const struct idl_transport *tr;
};

static void
rx_open(struct rx_pair *p)
{
	int sv[2];

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	memset(p, 0, sizeof *p);
	p->c.fd = sv[0];
	p->c.open = 1;
	p->peer = sv[1];
	p->tr = idl_transport_find("tcp:", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->tr);
}

/* The connection's end as the transport makes it: its conn_fini. */
static void
rx_close(struct rx_pair *p)
{
	p->tr->conn_fini(&p->c);
	CU_ASSERT_PTR_NULL(p->c.rx);
	close(p->peer);
}

/* Byte k of datum i of frame `salt`. */
static unsigned char
rx_byte(unsigned salt, unsigned i, size_t k)
{
	return (unsigned char)(salt * 7u + i * 31u + k % 251u);
}

/* A whole frame: the prefix, the message (two descriptors and an 8-byte argument), each
 * datum padded to 8. *len gets its length. */
static unsigned char *
rx_frame(unsigned salt, uint32_t msize, size_t *len)
{
	size_t body = RX_MSIZE + IDL_MSG_ROUND(RX_BIG) + IDL_MSG_ROUND(RX_SMALL);
	unsigned char *f = calloc(1, STREAM_PREFIX + body);
	idl_msg_header_t h = { .magic = IDL_MSG_MAGIC,
			       .order = IDL_ORDER_NATIVE,
			       .kind = IDL_KIND_REQUEST,
			       .flags = IDL_MSGF_DESC,
			       .size = msize,
			       .id = 1000,
			       .seqno = salt,
			       .ndesc = 2 };
	idl_desc_t d[2] = {
		{ .addr = RX_MSIZE, .size = RX_BIG, .type = IDL_DESC_OOL },
		{ .addr = RX_MSIZE + IDL_MSG_ROUND(RX_BIG),
		  .size = RX_SMALL,
		  .type = IDL_DESC_OOL },
	};
	uint32_t prefix = htonl((uint32_t)body);
	unsigned char *m = f + STREAM_PREFIX;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	memcpy(f, &prefix, STREAM_PREFIX);
	memcpy(m, &h, sizeof h);
	memcpy(m + IDL_MSG_HEADER_SIZE, d, sizeof d);
	memset(m + RX_MSIZE - 8, 0x5a, 8);
	for (size_t k = 0; k < RX_BIG; k++)
		m[d[0].addr + k] = rx_byte(salt, 0, k);
	for (size_t k = 0; k < RX_SMALL; k++)
		m[d[1].addr + k] = rx_byte(salt, 1, k);
	*len = STREAM_PREFIX + body;
	return f;
}

static void
rx_put(struct rx_pair *p, const unsigned char *b, size_t n)
{
	while (n > 0) {
		ssize_t k = send(p->peer, b, n, MSG_NOSIGNAL);

		CU_ASSERT_FATAL(k > 0);
		b += k;
		n -= (size_t)k;
	}
}

/* Whether m holds frame `salt`'s message, its data in blocks of their own; frees them. */
static int
rx_check(const unsigned char *m, unsigned salt)
{
	const idl_msg_header_t *h = (const void *)m;
	idl_desc_t d[2];
	int ok;

	memcpy(d, m + IDL_MSG_HEADER_SIZE, sizeof d);
	ok = h->size == RX_MSIZE && h->seqno == salt && d[0].size == RX_BIG &&
	     d[1].size == RX_SMALL && m[RX_MSIZE - 1] == 0x5a;
	for (unsigned i = 0; ok && i < 2; i++) {
		const unsigned char *b = (const void *)(uintptr_t)d[i].addr;

		ok = b != NULL;
		for (size_t k = 0; ok && k < d[i].size; k++)
			ok = b[k] == rx_byte(salt, i, k);
	}
	for (unsigned i = 0; i < 2; i++)
		if (d[i].addr >= 4096)
			idl_ool_free((void *)(uintptr_t)d[i].addr, d[i].size);
	return ok;
}

/* The frame in five pieces, each followed by a non-blocking receive; the first piece ends
 * inside the message, the last brings the whole next frame along, which comes next. */
static void
test_pieces(void)
{
	unsigned char buf[512] __attribute__((aligned(16)));
	struct idl_xmsg m = { .data = buf, .cap = sizeof buf };
	size_t len, len2, cut[] = { 20, 60, 4096, 30000 };
	unsigned char *f = rx_frame(1, RX_MSIZE, &len), *g = rx_frame(2, RX_MSIZE, &len2);
	struct rx_pair p;
	size_t at = 0;

	rx_open(&p);
	for (unsigned i = 0; i < 4; i++) {
		rx_put(&p, f + at, cut[i] - at);
		at = cut[i];
		CU_ASSERT_EQUAL(idl__stream_conn_recv_nb(&p.c, &m), IDL_EAGAIN);
		/* Once the message is in, the data go to the blocks, not the carry buffer. */
		CU_ASSERT_EQUAL(p.c.rx != NULL, at >= STREAM_PREFIX + RX_MSIZE);
		if (p.c.rx != NULL)
			CU_ASSERT_EQUAL(p.c.carry_len, 0);
	}
	rx_put(&p, f + at, len - at);
	rx_put(&p, g, len2);
	CU_ASSERT_EQUAL(idl__stream_conn_recv_nb(&p.c, &m), 0);
	CU_ASSERT_EQUAL(m.len, RX_MSIZE);
	CU_ASSERT(rx_check(buf, 1));
	CU_ASSERT_PTR_NULL(p.c.rx);
	/* The next frame, whole in the socket: no frame of it was read with the first. */
	CU_ASSERT_EQUAL(p.c.carry_len, 0);
	CU_ASSERT_EQUAL(idl__stream_conn_recv_nb(&p.c, &m), 0);
	CU_ASSERT(rx_check(buf, 2));
	CU_ASSERT_EQUAL(idl__stream_conn_recv_nb(&p.c, &m), IDL_EAGAIN);
	rx_close(&p);
	free(f);
	free(g);
}

/* The lingering receive waits for more; the blocking one finishes what the non-blocking one
 * began, and a deadline that passes in the middle keeps the frame's place. */
static void
test_handover(void)
{
	unsigned char buf[512] __attribute__((aligned(16)));
	struct idl_xmsg m = { .data = buf, .cap = sizeof buf };
	size_t len;
	unsigned char *f = rx_frame(3, RX_MSIZE, &len);
	struct rx_pair p;

	rx_open(&p);
	rx_put(&p, f, 8192);
	CU_ASSERT_EQUAL(idl__stream_conn_recv_wait(&p.c, &m, 20), IDL_EAGAIN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p.c.rx);
	CU_ASSERT_EQUAL(idl__stream_conn_recv(&p.c, &m, &(struct idl_deadline){ 0, 30 }),
			IDL_ETIMEDOUT);
	CU_ASSERT_PTR_NOT_NULL(p.c.rx);
	rx_put(&p, f + 8192, 30000);
	CU_ASSERT_EQUAL(idl__stream_conn_recv_wait(&p.c, &m, 20), IDL_EAGAIN);
	rx_put(&p, f + 8192 + 30000, len - 8192 - 30000);
	CU_ASSERT_EQUAL(idl__stream_conn_recv(&p.c, &m, &(struct idl_deadline){ 0, 1000 }), 0);
	CU_ASSERT(rx_check(buf, 3));
	CU_ASSERT_PTR_NULL(p.c.rx);
	rx_close(&p);
	free(f);
}

/* A message larger than the caller's buffer is not taken into blocks: the carry buffer and
 * the blocking receive refuse it whole, and the frame after it is received. A connection
 * that ends in the middle of a frame frees its blocks (the leak checkers see it). */
static void
test_refused_and_ended(void)
{
	unsigned char buf[512] __attribute__((aligned(16)));
	struct idl_xmsg m = { .data = buf, .cap = RX_MSIZE - 8 };
	size_t len, len2;
	unsigned char *f = rx_frame(4, RX_MSIZE, &len), *g = rx_frame(5, RX_MSIZE, &len2);
	struct rx_pair p;
	int err = IDL_EAGAIN;

	rx_open(&p);
	rx_put(&p, f, 4096);
	CU_ASSERT_EQUAL(idl__stream_conn_recv_nb(&p.c, &m), IDL_EAGAIN);
	CU_ASSERT_PTR_NULL(p.c.rx);
	rx_put(&p, f + 4096, len - 4096);
	rx_put(&p, g, len2);
	for (int i = 0; i < 1000 && err == IDL_EAGAIN; i++)
		err = idl__stream_conn_recv_nb(&p.c, &m);
	CU_ASSERT_EQUAL(err, IDL_EMSGSIZE);
	m.cap = sizeof buf;
	err = IDL_EAGAIN;
	for (int i = 0; i < 1000 && err == IDL_EAGAIN; i++)
		err = idl__stream_conn_recv_nb(&p.c, &m);
	CU_ASSERT_EQUAL(err, 0);
	CU_ASSERT(rx_check(buf, 5));

	rx_put(&p, f, 30000);
	CU_ASSERT_EQUAL(idl__stream_conn_recv_nb(&p.c, &m), IDL_EAGAIN);
	CU_ASSERT_PTR_NOT_NULL(p.c.rx);
	rx_close(&p);
	free(f);
	free(g);
}

static CU_TestInfo tr_tcp_rx_tests[] = {
	{ "a frame in pieces", test_pieces },
	{ "handed over and timed out", test_handover },
	{ "refused, and ended midway", test_refused_and_ended },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_tr_tcp_rx = { "tr_tcp_rx", NULL, NULL, NULL, NULL, tr_tcp_rx_tests };
