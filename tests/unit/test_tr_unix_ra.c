/*
 * test_tr_unix_ra.c - the unix: transport's read-ahead (transports/sock/sock_ra.c) on a real
 * SOCK_SEQPACKET socket pair: a run of messages taken by one receive and handed out in order,
 * conn_fd saying after each whether more wait; the probe that turns reading ahead on and the quiet
 * receives that turn it off; a message read ahead that does not fit a later, smaller receive; and
 * the descriptors that came with messages read ahead, closed whether they are handed out or left
 * when the connection ends.
 */
#define _GNU_SOURCE 1

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "unix/unix_impl.h"

struct ra_pair {
	struct unix_conn c; /* the receiving side, as an accepted connection */
	int peer;
};

static void
ra_open(struct ra_pair *p)
{
	int sv[2];

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	memset(p, 0, sizeof *p);
	p->c.fd = sv[0];
	p->c.open = 1;
	idl__sock_ra_init(&p->c.ra);
	p->c.spill = malloc(UNIX_SPILL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->c.spill);
	p->peer = sv[1];
}

static void
ra_close(struct ra_pair *p)
{
	idl__sock_ra_free(&p->c.ra);
	CU_ASSERT_PTR_NULL(p->c.ra.slots);
	free(p->c.spill);
	close(p->c.fd);
	close(p->peer);
}

/* Sends message i: `len` bytes, each (i + k) & 0xff, with fd attached unless it is -1. */
static void
ra_send(int s, unsigned i, size_t len, int fd)
{
	unsigned char *b = malloc(len);
	struct iovec iov = { b, len };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	for (size_t k = 0; k < len; k++)
		b[k] = (unsigned char)(i + k);
	if (fd >= 0) {
		memset(&cm, 0, sizeof cm);
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof cm.buf;
		CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &fd, sizeof fd);
	}
	CU_ASSERT_EQUAL((size_t)sendmsg(s, &mh, 0), len);
	free(b);
}

/* Whether buf holds message i of len bytes. */
static int
ra_is(const unsigned char *buf, unsigned i, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (buf[k] != (unsigned char)(i + k))
			return 0;
	return 1;
}

/* Whether conn_fd says that messages wait read ahead (IDL_TR_EV_MORE). */
static int
ra_more(struct ra_pair *p)
{
	unsigned ev = 0;

	(void)idl__unix_fd(&p->c, &ev);
	return (ev & IDL_TR_EV_MORE) != 0;
}

/* Receives one message into buf (cap bytes) as the non-blocking receive does: 0,
 * IDL_EAGAIN or the transport's error. */
static int
ra_recv(struct ra_pair *p, void *buf, size_t cap, struct idl_xmsg *m)
{
	memset(m, 0, sizeof *m);
	m->data = buf;
	m->cap = cap;
	return idl__unix_recv_nb(&p->c, m);
}

static unsigned
ra_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static void
test_run_in_order(void)
{
	struct ra_pair p;
	unsigned char buf[512];
	struct idl_xmsg m;
	unsigned got = 0, batches = 0;

	ra_open(&p);
	p.c.ra.on = 1;
	p.c.ra.wait = 1;
	for (unsigned i = 0; i < 40; i++)
		ra_send(p.peer, i, 8 + i * 7, -1);
	/* One receive takes the first and IDL_SOCK_RA_SLOTS behind it; after each, conn_fd says
	 * whether more wait. */
	while (ra_recv(&p, buf, sizeof buf, &m) == 0) {
		if (p.c.ra.left == IDL_SOCK_RA_SLOTS)
			batches++;
		CU_ASSERT_EQUAL(m.len, 8 + got * 7);
		CU_ASSERT(ra_is(buf, got, m.len));
		CU_ASSERT_EQUAL(ra_more(&p), (got + 1) % (IDL_SOCK_RA_SLOTS + 1) != 0 && got != 39);
		got++;
	}
	CU_ASSERT_EQUAL(got, 40);
	CU_ASSERT_EQUAL(batches, 2); /* 16, 16, then the last 8 */
	CU_ASSERT_EQUAL(ra_recv(&p, buf, sizeof buf, &m), IDL_EAGAIN);
	ra_close(&p);
}

static void
test_probe_and_quiet(void)
{
	struct ra_pair p;
	unsigned char buf[256];
	struct idl_xmsg m;
	unsigned i;

	ra_open(&p);
	/* One message at a time: nothing is read ahead, and reading ahead stays off; the
	 * IDL_SOCK_RA_PROBE-th receive asks for more, finds none. */
	for (i = 0; i < IDL_SOCK_RA_PROBE; i++) {
		ra_send(p.peer, i, 16, -1);
		CU_ASSERT_EQUAL(ra_recv(&p, buf, sizeof buf, &m), 0);
		CU_ASSERT_EQUAL(ra_more(&p), 0);
		CU_ASSERT(ra_is(buf, i, 16));
	}
	CU_ASSERT_EQUAL(p.c.ra.on, 0);
	CU_ASSERT_PTR_NOT_NULL(p.c.ra.slots);
	/* A run waiting when the next probe comes turns it on. */
	for (i = 0; i < IDL_SOCK_RA_PROBE - 1; i++) {
		ra_send(p.peer, i, 16, -1);
		CU_ASSERT_EQUAL(ra_recv(&p, buf, sizeof buf, &m), 0);
	}
	ra_send(p.peer, 100, 16, -1);
	ra_send(p.peer, 101, 16, -1);
	CU_ASSERT_EQUAL(ra_recv(&p, buf, sizeof buf, &m), 0);
	CU_ASSERT(ra_is(buf, 100, 16));
	CU_ASSERT_EQUAL(ra_more(&p), 1);
	CU_ASSERT_EQUAL(p.c.ra.on, 1);
	CU_ASSERT_EQUAL(ra_recv(&p, buf, sizeof buf, &m), 0);
	CU_ASSERT(ra_is(buf, 101, 16));
	CU_ASSERT_EQUAL(ra_more(&p), 0);
	/* IDL_SOCK_RA_QUIET receives that find one message each turn it off. */
	for (i = 0; i < IDL_SOCK_RA_QUIET; i++) {
		CU_ASSERT_EQUAL(p.c.ra.on, 1);
		ra_send(p.peer, i, 16, -1);
		CU_ASSERT_EQUAL(ra_recv(&p, buf, sizeof buf, &m), 0);
	}
	CU_ASSERT_EQUAL(p.c.ra.on, 0);
	/* The blocking receive (conn_recv, a client's) never reads ahead: its caller may wait
	 * for readiness. */
	p.c.ra.on = 1;
	p.c.ra.wait = 1;
	ra_send(p.peer, 1, 16, -1);
	ra_send(p.peer, 2, 16, -1);
	memset(&m, 0, sizeof m);
	m.data = buf;
	m.cap = sizeof buf;
	CU_ASSERT_EQUAL(idl__unix_recv(&p.c, &m, &(struct idl_deadline){ 0, 0 }), 0);
	CU_ASSERT_EQUAL(p.c.ra.left, 0);
	CU_ASSERT_EQUAL(ra_more(&p), 0);
	ra_close(&p);
}

static void
test_smaller_receive(void)
{
	struct ra_pair p;
	unsigned char big[4096], small[1024];
	struct idl_xmsg m;

	ra_open(&p);
	p.c.ra.on = 1;
	p.c.ra.wait = 1;
	ra_send(p.peer, 1, 64, -1);
	ra_send(p.peer, 2, 3000, -1);
	ra_send(p.peer, 3, 900, -1);
	CU_ASSERT_EQUAL(ra_recv(&p, big, sizeof big, &m), 0);
	CU_ASSERT_EQUAL(p.c.ra.left, 2);
	/* Read ahead into room for 4096 bytes, 3000 do not fit a receive of 1024: the error a
	 * receive without reading ahead gives, with the message's length; the next is whole. */
	CU_ASSERT_EQUAL(ra_recv(&p, small, sizeof small, &m), IDL_EMSGSIZE);
	CU_ASSERT_EQUAL(m.len, 3000);
	CU_ASSERT(ra_is(small, 2, sizeof small));
	CU_ASSERT_EQUAL(ra_recv(&p, small, sizeof small, &m), 0);
	CU_ASSERT_EQUAL(m.len, 900);
	CU_ASSERT(ra_is(small, 3, 900));
	ra_close(&p);
}

static void
test_descriptors(void)
{
	struct ra_pair p;
	unsigned char buf[256];
	struct idl_xmsg m;
	unsigned before = ra_open_fds();
	int pfd[2];

	CU_ASSERT_EQUAL_FATAL(pipe(pfd), 0);
	/* Descriptors that come with messages that are no message of ours are closed, handed
	 * out from the read-ahead or not. */
	ra_open(&p);
	p.c.ra.on = 1;
	p.c.ra.wait = 1;
	for (unsigned i = 0; i < 6; i++)
		ra_send(p.peer, i, 32, pfd[0]);
	for (unsigned i = 0; i < 3; i++) {
		ra_recv(&p, buf, sizeof buf, &m);
		CU_ASSERT_EQUAL(m.len, 32);
		CU_ASSERT(ra_is(buf, i, 32));
	}
	CU_ASSERT_EQUAL(p.c.ra.left, 3);
	/* Three are still read ahead, each with a descriptor installed here. */
	CU_ASSERT_EQUAL(ra_open_fds(), before + 2 + 2 + 3);
	ra_close(&p);
	close(pfd[0]);
	close(pfd[1]);
	CU_ASSERT_EQUAL(ra_open_fds(), before);
}

static CU_TestInfo tr_unix_ra_tests[] = {
	{ "a run in order", test_run_in_order },
	{ "probe and quiet", test_probe_and_quiet },
	{ "a smaller receive", test_smaller_receive },
	{ "descriptors", test_descriptors },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_tr_unix_ra = { "tr_unix_ra", NULL, NULL, NULL, NULL, tr_unix_ra_tests };
