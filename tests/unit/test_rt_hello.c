/*
 * test_rt_hello.c - the hello's versions over real SEQPACKET sockets: a client that speaks
 * only version 1 (a hello built here byte by byte, as docs/wire-format.md lays it out)
 * still works against this server, and this runtime's client still works against a server
 * that speaks only version 1 (a thread here that answers as such a server does: version 1
 * hellos with version 1 hashes, any other version with IDL_EPROTO).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ool/ool.h"
#include "rt_fixture.h"

static char hel_dir[64];
static char hel_path[96];
static idl_server_t *hel_srv;

union hel_buf {
	idl_msg_header_t h;
	unsigned char b[16384];
};

static int
hel_init(void)
{
	char addr[160];

	snprintf(hel_dir, sizeof hel_dir, "/tmp/idlrt-hello-XXXXXX");
	if (mkdtemp(hel_dir) == NULL)
		return -1;
	snprintf(hel_path, sizeof hel_path, "%s/h.sock", hel_dir);
	snprintf(addr, sizeof addr, "unix:%s", hel_path);
	return (hel_srv = rtt_start(addr)) != NULL ? 0 : -1;
}

static int
hel_clean(void)
{
	rtt_stop(hel_srv);
	return rmdir(hel_dir);
}

static int
hel_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
hel_put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t
hel_get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A hello written out from the documented layout: the header, base, routine count, name
 * length, the version word, the hashes and the name padded to 8. */
static size_t
hel_hello(union hel_buf *m, uint32_t seqno, uint32_t word, const uint64_t *hashes)
{
	const struct idl_subsystem *ss = &rtt_subsystem;
	size_t namelen = strlen(ss->name) + 1;
	size_t size = 40 + 8 * (size_t)ss->nroutines + IDL_MSG_ROUND(namelen);

	memset(m, 0, sizeof *m);
	m->h.magic = IDL_MSG_MAGIC;
	m->h.order = IDL_ORDER_NATIVE;
	m->h.kind = IDL_KIND_HELLO;
	m->h.size = (uint32_t)size;
	m->h.id = ss->base;
	m->h.seqno = seqno;
	hel_put32(m->b + 24, (uint32_t)ss->base);
	hel_put32(m->b + 28, ss->nroutines);
	hel_put32(m->b + 32, (uint32_t)namelen);
	hel_put32(m->b + 36, word);
	memcpy(m->b + 40, hashes, 8 * (size_t)ss->nroutines);
	memcpy(m->b + 40 + 8 * ss->nroutines, ss->name, namelen);
	return size;
}

static ssize_t
hel_xchg(int fd, union hel_buf *out, size_t len, union hel_buf *in)
{
	if (send(fd, out->b, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -1;
	memset(in, 0xee, sizeof *in);
	return recv(fd, in->b, sizeof in->b, 0);
}

/* add(20, 22) as raw bytes: its retcode, and the sum when it worked. */
static int
hel_add(int fd, uint32_t seqno, int32_t *sum)
{
	union hel_buf out, in;
	int32_t ab[2] = { 20, 22 };

	memset(&out, 0, sizeof out);
	out.h.magic = IDL_MSG_MAGIC;
	out.h.order = IDL_ORDER_NATIVE;
	out.h.kind = IDL_KIND_REQUEST;
	out.h.size = 32;
	out.h.id = RTT_BASE + RTT_ADD;
	out.h.seqno = seqno;
	memcpy(out.b + 24, ab, sizeof ab);
	if (hel_xchg(fd, &out, 32, &in) < (ssize_t)IDL_MSG_HEADER_SIZE || in.h.seqno != seqno)
		return -1;
	if (in.h.retcode == 0)
		memcpy(sum, in.b + 24, 4);
	return in.h.retcode;
}

static void
hel_hashes(unsigned version, uint64_t *h)
{
	for (uint32_t i = 0; i < rtt_subsystem.nroutines; i++)
		h[i] = version == 1 ? rtt_subsystem.routines[i].sig_hash
				    : idl_routine_sig_hash_v2(&rtt_subsystem.routines[i]);
}

/* A client of version 1: answered in version 1, with the table's hashes; its calls work. */
static void
test_v1_client(void)
{
	union hel_buf out, in;
	uint64_t h[7];
	int32_t sum = 0;
	int fd = hel_connect(hel_path);
	ssize_t n;

	CU_ASSERT_FATAL(fd >= 0);
	hel_hashes(1, h);
	n = hel_xchg(fd, &out, hel_hello(&out, 1, 1, h), &in);
	CU_ASSERT_EQUAL(n, 40 + 7 * 8);
	CU_ASSERT_EQUAL(in.h.kind, IDL_KIND_HELLO_REPLY);
	CU_ASSERT_EQUAL(in.h.retcode, 0);
	CU_ASSERT_EQUAL(hel_get32(in.b + 36), 1); /* the version word: exactly 1 */
	CU_ASSERT_EQUAL(memcmp(in.b + 40, h, sizeof h), 0);
	CU_ASSERT_EQUAL(hel_add(fd, 2, &sum), 0);
	CU_ASSERT_EQUAL(sum, 42);
	/* Its version 1 hash for add, wrong: add alone is refused. */
	h[RTT_ADD] = rtt_changed_subsystem.routines[RTT_ADD].sig_hash;
	CU_ASSERT_EQUAL(hel_xchg(fd, &out, hel_hello(&out, 3, 1, h), &in), 40 + 7 * 8);
	CU_ASSERT_EQUAL(hel_add(fd, 4, &sum), IDL_ESIGNATURE);
	close(fd);
}

/* A client of version 2 with features set: answered in version 2 with version 2 hashes,
 * and no feature of ours (none is set yet). */
static void
test_v2_client(void)
{
	union hel_buf out, in;
	uint64_t h[7];
	int32_t sum = 0;
	int fd = hel_connect(hel_path);

	CU_ASSERT_FATAL(fd >= 0);
	hel_hashes(2, h);
	CU_ASSERT_EQUAL(
		hel_xchg(fd, &out,
			 hel_hello(&out, 1,
				   IDL_HELLO_WORD(2, IDL_HELLO_F_CANCEL | IDL_HELLO_F_GOODBYE), h),
			 &in),
		40 + 7 * 8);
	CU_ASSERT_EQUAL(in.h.retcode, 0);
	CU_ASSERT_EQUAL(hel_get32(in.b + 36), IDL_HELLO_WORD(2, 0));
	CU_ASSERT_EQUAL(memcmp(in.b + 40, h, sizeof h), 0);
	CU_ASSERT_EQUAL(hel_add(fd, 2, &sum), 0);
	CU_ASSERT_EQUAL(sum, 42);
	/* Version 1's hashes in a version 2 hello agree with nothing but the skip. */
	hel_hashes(1, h);
	hel_xchg(fd, &out, hel_hello(&out, 3, 2, h), &in);
	CU_ASSERT_EQUAL(in.h.retcode, 0);
	CU_ASSERT_EQUAL(hel_add(fd, 4, &sum), IDL_ESIGNATURE);
	close(fd);
}

/* A client newer than the server: answered in version 2, nothing compared; its calls are
 * refused as coming before a hello until it says hello again in version 2. */
static void
test_newer_client(void)
{
	union hel_buf out, in;
	uint64_t h[7];
	int32_t sum = 0;
	int fd = hel_connect(hel_path);

	CU_ASSERT_FATAL(fd >= 0);
	hel_hashes(2, h);
	CU_ASSERT_EQUAL(hel_xchg(fd, &out, hel_hello(&out, 1, 3, h), &in), 40 + 7 * 8);
	CU_ASSERT_EQUAL(in.h.retcode, 0);
	CU_ASSERT_EQUAL(IDL_HELLO_VERSION_OF(hel_get32(in.b + 36)), 2);
	CU_ASSERT_EQUAL(memcmp(in.b + 40, h, sizeof h), 0);
	CU_ASSERT_EQUAL(hel_add(fd, 2, &sum), IDL_EPROTO);
	hel_xchg(fd, &out, hel_hello(&out, 3, 2, h), &in);
	CU_ASSERT_EQUAL(hel_add(fd, 4, &sum), 0);
	CU_ASSERT_EQUAL(sum, 42);
	/* Version 0 is no version. */
	hel_xchg(fd, &out, hel_hello(&out, 5, 0, h), &in);
	CU_ASSERT_EQUAL(in.h.retcode, IDL_EPROTO);
	close(fd);
}

/*
 * A server of version 1, as its runtime behaves: a hello whose version word is not 1 gets
 * a bare IDL_EPROTO; a version 1 hello gets its version 1 hashes; add is answered. It
 * serves one connection and counts the hellos of each version.
 */
struct hel_old {
	int lfd;
	const struct idl_subsystem *ss; /* whose version 1 hashes it has */
	int hellos[3]; /* [1]: version 1, [2]: any other */
};

static void *
hel_old_main(void *arg)
{
	struct hel_old *o = arg;
	union hel_buf in, out;
	int fd = accept(o->lfd, NULL, NULL);
	ssize_t n;

	while (fd >= 0 && (n = recv(fd, in.b, sizeof in.b, 0)) >= (ssize_t)IDL_MSG_HEADER_SIZE) {
		memset(&out, 0, sizeof out);
		idl_reply_init(&in.h, &out.h);
		if (in.h.kind == IDL_KIND_HELLO) {
			out.h.kind = IDL_KIND_HELLO_REPLY;
			if (hel_get32(in.b + 36) != 1) {
				o->hellos[2]++;
				out.h.retcode = IDL_EPROTO;
			} else {
				o->hellos[1]++;
				out.h.size = 40 + 8 * o->ss->nroutines;
				hel_put32(out.b + 24, (uint32_t)o->ss->base);
				hel_put32(out.b + 28, o->ss->nroutines);
				hel_put32(out.b + 36, 1);
				for (uint32_t i = 0; i < o->ss->nroutines; i++)
					memcpy(out.b + 40 + 8 * i, &o->ss->routines[i].sig_hash, 8);
			}
		} else if (in.h.id == RTT_BASE + RTT_ADD) {
			int32_t ab[2], sum;

			memcpy(ab, in.b + 24, sizeof ab);
			sum = ab[0] + ab[1];
			out.h.size = 32;
			memcpy(out.b + 24, &sum, 4);
		} else {
			out.h.retcode = MIG_BAD_ID;
		}
		if (send(fd, out.b, out.h.size, MSG_NOSIGNAL) != (ssize_t)out.h.size)
			break;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Runs one client port against an old server of `ss`'s hashes; returns add's result. */
static int
hel_against_old(const struct idl_subsystem *ss, int changed, int *hellos, int32_t *sum)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct hel_old o = { .ss = ss };
	char path[100], addr[128];
	idl_port_t port = NULL;
	pthread_t th;
	int kr;

	snprintf(path, sizeof path, "%s/old.sock", hel_dir);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	snprintf(addr, sizeof addr, "unix:%s", path);
	o.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (o.lfd < 0 || bind(o.lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(o.lfd, 4) != 0 || pthread_create(&th, NULL, hel_old_main, &o) != 0) {
		CU_FAIL("old server");
		return -1;
	}
	kr = idl_port_open(addr, &port);
	if (kr == 0)
		kr = changed ? rtt_add_changed(port, 20, 22, sum) : rtt_add(port, 20, 22, sum);
	idl_port_close(port);
	pthread_join(th, NULL);
	close(o.lfd);
	unlink(path);
	memcpy(hellos, o.hellos, sizeof o.hellos);
	return kr;
}

/* Our client against a server of version 1: refused in version 2, it says hello again in
 * version 1, and the verdicts are version 1's. */
static void
test_v1_server(void)
{
	int hellos[3];
	int32_t sum = 0;

	CU_ASSERT_EQUAL(hel_against_old(&rtt_subsystem, 0, hellos, &sum), 0);
	CU_ASSERT_EQUAL(sum, 42);
	CU_ASSERT_EQUAL(hellos[2], 1);
	CU_ASSERT_EQUAL(hellos[1], 1);
	/* A client whose add differs from the old server's: refused by the client itself
	 * after the version 1 hello, never sent. */
	CU_ASSERT_EQUAL(hel_against_old(&rtt_subsystem, 1, hellos, &sum), IDL_ESIGNATURE);
	CU_ASSERT_EQUAL(hellos[1], 1);
}

static CU_TestInfo hel_tests[] = {
	{ "version 1 client", test_v1_client },
	{ "version 2 client", test_v2_client },
	{ "newer client", test_newer_client },
	{ "version 1 server", test_v1_server },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_hello = { "rt_hello", hel_init, hel_clean, NULL, NULL, hel_tests };
