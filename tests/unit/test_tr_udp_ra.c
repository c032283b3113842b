/*
 * test_tr_udp_ra.c - reading ahead on udp: (transports/sock/sock_ra.c) on real loopback
 * sockets, through the transport's own operations: a run of datagrams from two clients
 * taken by one receive and handed out in order, each with its sender's address; a receive
 * that must not wait, which reads nothing ahead; a retransmission inside a run, dropped by
 * the duplicate-reply cache as one received alone would be; a datagram read ahead that is
 * larger than a later receive's buffer; the replies to a run, held and sent together
 * (transports/udp/udp_hold.c); and a client's run of replies read ahead for a pollable port.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "udp/udp_impl.h"

struct ra_setup {
	struct udp_ep ep; /* the server's endpoint, around a socket of the test's own */
	const struct idl_transport *tr;
	int cli[2]; /* two clients, connected to it */
	struct sockaddr_in cli_addr[2];
};

static void
ra_open(struct ra_setup *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	const char *rest;

	memset(s, 0, sizeof *s);
	s->tr = idl_transport_find("udp:127.0.0.1:1", &rest);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->tr);
	s->ep.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(s->ep.fd >= 0);
	CU_ASSERT_EQUAL_FATAL(bind(s->ep.fd, (struct sockaddr *)&a, sizeof a), 0);
	CU_ASSERT_EQUAL_FATAL(getsockname(s->ep.fd, (struct sockaddr *)&a, &len), 0);
	s->ep.open = 1;
	s->ep.limit = UDP_LIMIT_V4;
	s->ep.spill = malloc(UDP_SPILL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->ep.spill);
	idl__sock_ra_init(&s->ep.ra);
	for (int i = 0; i < 2; i++) {
		len = sizeof s->cli_addr[i];
		s->cli[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		CU_ASSERT_FATAL(s->cli[i] >= 0);
		CU_ASSERT_EQUAL_FATAL(connect(s->cli[i], (struct sockaddr *)&a, sizeof a), 0);
		CU_ASSERT_EQUAL(getsockname(s->cli[i], (struct sockaddr *)&s->cli_addr[i], &len),
				0);
	}
}

static void
ra_close(struct ra_setup *s)
{
	s->tr->ep_fini(&s->ep);
	CU_ASSERT_PTR_NULL(s->ep.ra.slots);
	close(s->cli[0]);
	close(s->cli[1]);
}

/* Sends request `seqno` of `len` bytes (a header, then bytes of seqno) from client c. */
static void
ra_send(struct ra_setup *s, int c, uint32_t seqno, size_t len)
{
	unsigned char b[512];
	idl_msg_header_t h = { .magic = IDL_MSG_MAGIC,
			       .order = IDL_ORDER_NATIVE,
			       .kind = IDL_KIND_REQUEST,
			       .size = (uint32_t)len,
			       .seqno = seqno };

	memset(b, (int)(seqno & 0xff), sizeof b);
	memcpy(b, &h, sizeof h);
	CU_ASSERT_EQUAL((size_t)send(s->cli[c], b, len, 0), len);
}

/* Receives the next new request (deadline: `ms`, IDL_DEADLINE_MS_NONE to wait) into a
 * buffer of `cap` bytes; 0 with its seqno and sender, or the receive's error. */
static int
ra_recv(struct ra_setup *s, int32_t ms, size_t cap, uint32_t *seqno, int *from_cli)
{
	uint64_t buf[64];
	struct idl_xmsg m = { .data = buf, .cap = cap };
	struct idl_peer from;
	struct idl_deadline dl = { 0, ms };
	int err;

	from.len = 0;
	err = s->tr->ep_recv(&s->ep, &m, &from, &dl);
	if (err != 0)
		return err;
	*seqno = udp_seqno(buf);
	*from_cli = -1;
	for (int i = 0; i < 2; i++)
		if (from.len >= sizeof s->cli_addr[i] &&
		    memcmp(from.addr, &s->cli_addr[i], sizeof s->cli_addr[i]) == 0)
			*from_cli = i;
	return 0;
}

/* Twenty datagrams from two clients: the first receive reads fifteen ahead, and all come
 * out in order, each with its own sender. */
static void
test_run(void)
{
	struct ra_setup s;
	uint32_t seqno;
	int who;

	ra_open(&s);
	for (uint32_t i = 0; i < 20; i++)
		ra_send(&s, (int)(i % 2), 100 + i, 64);
	s.ep.ra.wait = 1; /* the next receive looks for a run */
	for (uint32_t i = 0; i < 20; i++) {
		CU_ASSERT_EQUAL_FATAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 256, &seqno, &who), 0);
		if (i == 0)
			CU_ASSERT_EQUAL(s.ep.ra.left, IDL_SOCK_RA_SLOTS);
		CU_ASSERT_EQUAL(seqno, 100 + i);
		CU_ASSERT_EQUAL(who, (int)(i % 2));
	}
	CU_ASSERT_EQUAL(s.ep.ra.left, 0);
	CU_ASSERT_EQUAL(ra_recv(&s, 0, 256, &seqno, &who), IDL_ETIMEDOUT);
	ra_close(&s);
}

/* A receive that must not wait (the embedded server's) reads nothing ahead, even when the
 * probe is due: its caller waits for readiness between receives. */
static void
test_try(void)
{
	struct ra_setup s;
	uint32_t seqno;
	int who;

	ra_open(&s);
	for (uint32_t i = 0; i < 5; i++)
		ra_send(&s, 0, 200 + i, 64);
	s.ep.ra.wait = 1;
	for (uint32_t i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL_FATAL(ra_recv(&s, 0, 256, &seqno, &who), 0);
		CU_ASSERT_EQUAL(s.ep.ra.left, 0);
		CU_ASSERT_EQUAL(seqno, 200 + i);
	}
	CU_ASSERT_PTR_NULL(s.ep.ra.slots);
	ra_close(&s);
}

/* A retransmission inside a run is dropped while its request is in progress, as one that
 * came alone; the same number from the other client is another request. */
static void
test_duplicate(void)
{
	struct ra_setup s;
	uint32_t seqno;
	int who;

	ra_open(&s);
	ra_send(&s, 0, 300, 64);
	ra_send(&s, 0, 300, 64);
	ra_send(&s, 1, 300, 64);
	ra_send(&s, 0, 301, 64);
	s.ep.ra.wait = 1;
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 256, &seqno, &who), 0);
	CU_ASSERT(seqno == 300 && who == 0);
	CU_ASSERT_EQUAL(s.ep.ra.left, 3);
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 256, &seqno, &who), 0);
	CU_ASSERT(seqno == 300 && who == 1);
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 256, &seqno, &who), 0);
	CU_ASSERT(seqno == 301 && who == 0);
	CU_ASSERT_EQUAL(ra_recv(&s, 0, 256, &seqno, &who), IDL_ETIMEDOUT);
	ra_close(&s);
}

/* A datagram read ahead with the room of a large receive, handed to a smaller one: the part
 * beyond its buffer goes to the spill, and a message that needs more than the buffer is
 * refused by size as the receive itself would refuse it. */
static void
test_smaller(void)
{
	struct ra_setup s;
	uint32_t seqno;
	int who;

	ra_open(&s);
	ra_send(&s, 0, 400, 64);
	ra_send(&s, 0, 401, 480);
	ra_send(&s, 0, 402, 64);
	s.ep.ra.wait = 1;
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 512, &seqno, &who), 0);
	CU_ASSERT_EQUAL(seqno, 400);
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 128, &seqno, &who), IDL_EMSGSIZE);
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 128, &seqno, &who), 0);
	CU_ASSERT_EQUAL(seqno, 402);
	ra_close(&s);
}

/* Sends a reply of `len` bytes to request `seqno` from `to` through the endpoint. */
static void
ra_reply(struct ra_setup *s, const struct idl_peer *to, uint32_t seqno, size_t len)
{
	static unsigned char b[UDP_HOLD_BYTES + 256];
	idl_msg_header_t h = { .magic = IDL_MSG_MAGIC,
			       .order = IDL_ORDER_NATIVE,
			       .kind = IDL_KIND_REPLY,
			       .size = (uint32_t)len,
			       .seqno = seqno };
	struct idl_xmsg m = { .data = b, .len = len };

	memset(b, 0, sizeof b);
	memcpy(b, &h, sizeof h);
	CU_ASSERT_EQUAL(s->tr->ep_reply(&s->ep, to, &m), 0);
}

/* The seqno of the next reply waiting at socket fd, waiting up to `ms` for it; 0 when none
 * came. */
static uint32_t
ra_reply_seqno(int fd, int ms)
{
	unsigned char b[UDP_HOLD_BYTES + 256];
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1 || recv(fd, b, sizeof b, MSG_DONTWAIT) < (ssize_t)UDP_KEYED_MIN)
		return 0;
	return udp_seqno(b);
}

/* The replies to a run read ahead are held until the next receive that asks the kernel for
 * more, then go together; a reply too large to hold goes at once, with those held. */
static void
test_replies_held(void)
{
	struct ra_setup s;

	ra_open(&s);
	idl__udp_hold_make(&s.ep);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s.ep.hold);
	for (uint32_t i = 0; i < 4; i++)
		ra_send(&s, 0, 500 + i, 64);
	s.ep.ra.wait = 1;
	for (uint32_t i = 0; i < 4; i++) {
		uint64_t buf[64];
		struct idl_xmsg m = { .data = buf, .cap = sizeof buf };
		struct idl_peer from = { 0 };
		struct idl_deadline dl = { 0, IDL_DEADLINE_MS_NONE };

		CU_ASSERT_EQUAL_FATAL(s.tr->ep_recv(&s.ep, &m, &from, &dl), 0);
		CU_ASSERT_EQUAL(udp_seqno(buf), 500 + i);
		ra_reply(&s, &from, 500 + i, i == 2 ? UDP_HOLD_BYTES + 100 : 64);
		if (i < 2)
			CU_ASSERT_EQUAL(ra_reply_seqno(s.cli[0], 0), 0);
		if (i == 2) {
			/* The large one went, after the two held. */
			for (uint32_t k = 0; k < 3; k++)
				CU_ASSERT_EQUAL(ra_reply_seqno(s.cli[0], 1000), 500 + k);
		}
	}
	/* The last one is held until the receive after it asks the kernel. */
	CU_ASSERT_EQUAL(ra_reply_seqno(s.cli[0], 0), 0);
	CU_ASSERT_EQUAL(s.ep.nheld, 1);
	{
		uint32_t seqno;
		int who;

		CU_ASSERT_EQUAL(ra_recv(&s, 0, 256, &seqno, &who), IDL_ETIMEDOUT);
	}
	CU_ASSERT_EQUAL(ra_reply_seqno(s.cli[0], 1000), 503);
	CU_ASSERT_EQUAL(s.ep.hold_on, 0);
	ra_close(&s);
}

/* A client's receive for a pollable port reads a run of replies ahead; its descriptor says
 * so while some wait, and the blocking receive hands them out before asking the kernel. */
static void
test_client_run(void)
{
	struct ra_setup s;
	struct udp_conn c;
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	char rest[64];
	struct idl_deadline dl = { 0, 1000 };
	uint64_t buf[64];
	struct idl_xmsg m;
	unsigned ev = 0;
	int srv;

	ra_open(&s);
	srv = s.ep.fd;
	CU_ASSERT_EQUAL_FATAL(getsockname(srv, (struct sockaddr *)&a, &len), 0);
	snprintf(rest, sizeof rest, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
	memset(&c, 0, sizeof c);
	CU_ASSERT_EQUAL_FATAL(s.tr->conn_connect(&c, rest, &dl), 0);
	len = sizeof a;
	CU_ASSERT_EQUAL_FATAL(getsockname(c.fd, (struct sockaddr *)&a, &len), 0);
	for (uint32_t i = 0; i < 5; i++) {
		unsigned char b[64];
		idl_msg_header_t h = { .magic = IDL_MSG_MAGIC,
				       .order = IDL_ORDER_NATIVE,
				       .kind = IDL_KIND_REPLY,
				       .size = sizeof b,
				       .seqno = 600 + i };

		memset(b, 0, sizeof b);
		memcpy(b, &h, sizeof h);
		CU_ASSERT_EQUAL(sendto(srv, b, sizeof b, 0, (struct sockaddr *)&a, len),
				(ssize_t)sizeof b);
	}
	c.ra.wait = 1;
	m = (struct idl_xmsg){ .data = buf, .cap = sizeof buf };
	CU_ASSERT_EQUAL(s.tr->conn_recv_nb(&c, &m), 0);
	CU_ASSERT_EQUAL(udp_seqno(buf), 600);
	CU_ASSERT_EQUAL(c.ra.left, 4);
	(void)s.tr->conn_fd(&c, &ev);
	CU_ASSERT(ev & IDL_TR_EV_MORE);
	m = (struct idl_xmsg){ .data = buf, .cap = sizeof buf };
	CU_ASSERT_EQUAL(s.tr->conn_recv(&c, &m, &dl), 0);
	CU_ASSERT_EQUAL(udp_seqno(buf), 601);
	for (uint32_t i = 2; i < 5; i++) {
		m = (struct idl_xmsg){ .data = buf, .cap = sizeof buf };
		CU_ASSERT_EQUAL(s.tr->conn_recv_nb(&c, &m), 0);
		CU_ASSERT_EQUAL(m.len, 64);
		CU_ASSERT_EQUAL(udp_seqno(buf), 600 + i);
	}
	m = (struct idl_xmsg){ .data = buf, .cap = sizeof buf };
	CU_ASSERT_EQUAL(s.tr->conn_recv_nb(&c, &m), IDL_EAGAIN);
	(void)s.tr->conn_fd(&c, &ev);
	CU_ASSERT_EQUAL(ev & IDL_TR_EV_MORE, 0);
	s.tr->conn_fini(&c);
	CU_ASSERT_PTR_NULL(c.ra.slots);
	ra_close(&s);
}

static CU_TestInfo tr_udp_ra_tests[] = {
	{ "a run from two clients", test_run },
	{ "a receive that must not wait", test_try },
	{ "a retransmission in a run", test_duplicate },
	{ "a smaller receive", test_smaller },
	{ "replies to a run held", test_replies_held },
	{ "a client's run of replies", test_client_run },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_tr_udp_ra = { "tr_udp_ra", NULL, NULL, NULL, NULL, tr_udp_ra_tests };
