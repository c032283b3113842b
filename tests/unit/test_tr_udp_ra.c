/*
 * test_tr_udp_ra.c - the udp: endpoint's read-ahead (transports/udp/udp_ra.c) on real
 * loopback sockets, through the transport's own ep_recv: a run of datagrams from two clients
 * taken by one receive and handed out in order, each with its sender's address; a receive
 * that must not wait, which reads nothing ahead; a retransmission inside a run, dropped by
 * the duplicate-reply cache as one received alone would be; and a datagram read ahead that
 * is larger than a later receive's buffer.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
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
	s->ep.ra_wait = UDP_RA_PROBE;
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
	CU_ASSERT_PTR_NULL(s->ep.ra);
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
	s.ep.ra_wait = 1; /* the next receive looks for a run */
	for (uint32_t i = 0; i < 20; i++) {
		CU_ASSERT_EQUAL_FATAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 256, &seqno, &who), 0);
		if (i == 0)
			CU_ASSERT_EQUAL(s.ep.ra_left, UDP_RA_SLOTS);
		CU_ASSERT_EQUAL(seqno, 100 + i);
		CU_ASSERT_EQUAL(who, (int)(i % 2));
	}
	CU_ASSERT_EQUAL(s.ep.ra_left, 0);
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
	s.ep.ra_wait = 1;
	for (uint32_t i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL_FATAL(ra_recv(&s, 0, 256, &seqno, &who), 0);
		CU_ASSERT_EQUAL(s.ep.ra_left, 0);
		CU_ASSERT_EQUAL(seqno, 200 + i);
	}
	CU_ASSERT_PTR_NULL(s.ep.ra);
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
	s.ep.ra_wait = 1;
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 256, &seqno, &who), 0);
	CU_ASSERT(seqno == 300 && who == 0);
	CU_ASSERT_EQUAL(s.ep.ra_left, 3);
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
	s.ep.ra_wait = 1;
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 512, &seqno, &who), 0);
	CU_ASSERT_EQUAL(seqno, 400);
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 128, &seqno, &who), IDL_EMSGSIZE);
	CU_ASSERT_EQUAL(ra_recv(&s, IDL_DEADLINE_MS_NONE, 128, &seqno, &who), 0);
	CU_ASSERT_EQUAL(seqno, 402);
	ra_close(&s);
}

static CU_TestInfo tr_udp_ra_tests[] = {
	{ "a run from two clients", test_run },
	{ "a receive that must not wait", test_try },
	{ "a retransmission in a run", test_duplicate },
	{ "a smaller receive", test_smaller },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_tr_udp_ra = { "tr_udp_ra", NULL, NULL, NULL, NULL, tr_udp_ra_tests };
