/*
 * test_rt_wire.c - the server's checks, seen from a raw SEQPACKET socket: every malformed
 * message gets the documented error reply, and the connection keeps being served.
 */
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

static char wire_dir[64];
static char wire_addr[128];
static idl_server_t *wire_srv;
static int wire_fd = -1;
static uint32_t wire_seq = 100;

/* Messages are built and received here: 8-aligned, roomy. */
static union {
	idl_msg_header_t h;
	unsigned char b[16384];
} wire_out, wire_in;

static int
wire_init(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };

	snprintf(wire_dir, sizeof wire_dir, "/tmp/idlrt-wire-XXXXXX");
	if (mkdtemp(wire_dir) == NULL)
		return -1;
	snprintf(wire_addr, sizeof wire_addr, "unix:%s/w.sock", wire_dir);
	if ((wire_srv = rtt_start(wire_addr)) == NULL)
		return -1;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/w.sock", wire_dir);
	wire_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	setsockopt(wire_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return connect(wire_fd, (struct sockaddr *)&sa, sizeof sa);
}

static int
wire_clean(void)
{
	close(wire_fd);
	rtt_stop(wire_srv);
	return rmdir(wire_dir);
}

/* Sends len bytes of wire_out; returns the bytes of the reply in wire_in, or -1. */
static ssize_t
wire_xchg(size_t len)
{
	if (send(wire_fd, wire_out.b, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -1;
	memset(&wire_in, 0xee, sizeof wire_in);
	return recv(wire_fd, wire_in.b, sizeof wire_in.b, 0);
}

static void
wire_header(uint8_t kind, int32_t id, uint32_t size)
{
	memset(&wire_out, 0, sizeof wire_out);
	wire_out.h.magic = IDL_MSG_MAGIC;
	wire_out.h.order = IDL_ORDER_NATIVE;
	wire_out.h.kind = kind;
	wire_out.h.size = size;
	wire_out.h.id = id;
	wire_out.h.seqno = ++wire_seq;
}

/* Checks that the reply is a bare error header answering the message just sent. */
static void
wire_expect(uint8_t kind, int32_t id, int retcode)
{
	CU_ASSERT_EQUAL(wire_in.h.magic, IDL_MSG_MAGIC);
	CU_ASSERT_EQUAL(wire_in.h.order, IDL_ORDER_NATIVE);
	CU_ASSERT_EQUAL(wire_in.h.kind, kind);
	CU_ASSERT_EQUAL(wire_in.h.size, IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(wire_in.h.id, (int32_t)((uint32_t)id + 100u));
	CU_ASSERT_EQUAL(wire_in.h.seqno, wire_seq);
	CU_ASSERT_EQUAL(wire_in.h.retcode, retcode);
}

/* A well-formed add(20, 22) gets its answer: the connection is still served. */
static void
wire_add_works(void)
{
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_ADD, 32);
	((int32_t *)wire_out.b)[6] = 20;
	((int32_t *)wire_out.b)[7] = 22;
	CU_ASSERT_EQUAL(wire_xchg(32), 32);
	CU_ASSERT_EQUAL(wire_in.h.retcode, 0);
	CU_ASSERT_EQUAL(wire_in.h.seqno, wire_seq);
	CU_ASSERT_EQUAL(((int32_t *)wire_in.b)[6], 42);
}

/* Builds the hello of `version` for ss into wire_out; returns its size. */
static int
wire_build_hello(const struct idl_subsystem *ss, unsigned version)
{
	uint64_t own[16];

	CU_ASSERT_FATAL(ss->nroutines <= 16);
	idl__hello_hashes(ss, version, own);
	return idl__hello_build(ss, version, own, &wire_out.h);
}

static void
wire_hello(const struct idl_subsystem *ss)
{
	int n = wire_build_hello(ss, IDL_HELLO_VERSION);

	CU_ASSERT_FATAL(n > 0);
	wire_out.h.seqno = ++wire_seq;
	CU_ASSERT_EQUAL(wire_xchg((size_t)n), IDL_HELLO_FIXED + 8 * 7);
	CU_ASSERT_EQUAL(wire_in.h.kind, IDL_KIND_HELLO_REPLY);
	CU_ASSERT_EQUAL(wire_in.h.retcode, 0);
	CU_ASSERT_EQUAL(wire_in.h.id, RTT_BASE + 100);
	CU_ASSERT_EQUAL(wire_in.h.seqno, wire_seq);
}

static void
test_before_hello(void)
{
	/* A call before its subsystem's hello is refused. */
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_ADD, 32);
	CU_ASSERT_EQUAL(wire_xchg(32), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_ADD, IDL_EPROTO);
	/* A hello for a subsystem the server does not serve. */
	{
		struct idl_subsystem other = rtt_subsystem;
		int n;

		other.name = "nosuch";
		n = wire_build_hello(&other, IDL_HELLO_VERSION);
		wire_out.h.seqno = ++wire_seq;
		CU_ASSERT_EQUAL(wire_xchg((size_t)n), IDL_MSG_HEADER_SIZE);
		wire_expect(IDL_KIND_HELLO_REPLY, RTT_BASE, MIG_BAD_ID);
	}
	/* A hello whose size does not match its counts. */
	{
		int n = wire_build_hello(&rtt_subsystem, IDL_HELLO_VERSION);

		wire_out.h.seqno = ++wire_seq;
		wire_out.h.size = (uint32_t)n + 8;
		CU_ASSERT_EQUAL(wire_xchg((size_t)n + 8), IDL_MSG_HEADER_SIZE);
		wire_expect(IDL_KIND_HELLO_REPLY, RTT_BASE, IDL_EPROTO);
	}
	wire_hello(&rtt_subsystem);
	wire_add_works();
}

static void
test_header_checks(void)
{
	/* Bad magic. */
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_NULL, 24);
	wire_out.h.magic = 'X';
	CU_ASSERT_EQUAL(wire_xchg(24), IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(wire_in.h.retcode, IDL_EPROTO);
	CU_ASSERT_EQUAL(wire_in.h.seqno, wire_seq);
	wire_add_works();
	/* The size field says more, or less, than arrived. */
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_ADD, 40);
	CU_ASSERT_EQUAL(wire_xchg(32), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_ADD, IDL_EPROTO);
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_ADD, 24);
	CU_ASSERT_EQUAL(wire_xchg(32), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_ADD, IDL_EPROTO);
	wire_add_works();
	/* A runt shorter than a header still gets an answer. */
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_NULL, 24);
	CU_ASSERT_EQUAL(wire_xchg(20), IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(wire_in.h.retcode, IDL_EPROTO);
	CU_ASSERT_EQUAL(wire_in.h.seqno, wire_seq);
	wire_add_works();
	/* A kind a client never sends. */
	wire_header(IDL_KIND_REPLY, RTT_BASE + RTT_NULL, 24);
	CU_ASSERT_EQUAL(wire_xchg(24), IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(wire_in.h.retcode, IDL_EPROTO);
	wire_add_works();
	/* Larger than any request or hello: refused from the header, nothing read on. */
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_ADD, 12000);
	CU_ASSERT_EQUAL(wire_xchg(12000), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_ADD, IDL_EMSGSIZE);
	wire_add_works();
}

static void
test_byte_order(void)
{
	/* A peer of the other byte order is answered in its own order, so it can read it. */
	uint8_t other = IDL_ORDER_NATIVE == IDL_ORDER_LITTLE ? IDL_ORDER_BIG : IDL_ORDER_LITTLE;

	wire_header(IDL_KIND_REQUEST, 0, 0);
	wire_out.h.order = other;
	wire_out.h.size = __builtin_bswap32(32);
	wire_out.h.id = (int32_t)__builtin_bswap32(RTT_BASE + RTT_ADD);
	wire_out.h.seqno = __builtin_bswap32(wire_seq);
	CU_ASSERT_EQUAL(wire_xchg(32), IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(wire_in.h.order, other);
	CU_ASSERT_EQUAL(wire_in.h.kind, IDL_KIND_REPLY);
	CU_ASSERT_EQUAL(__builtin_bswap32(wire_in.h.size), IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL((int32_t)__builtin_bswap32((uint32_t)wire_in.h.id),
			RTT_BASE + RTT_ADD + 100);
	CU_ASSERT_EQUAL(__builtin_bswap32(wire_in.h.seqno), wire_seq);
	CU_ASSERT_EQUAL((int32_t)__builtin_bswap32((uint32_t)wire_in.h.retcode), IDL_EBYTEORDER);
	wire_add_works();
}

static void
test_ids(void)
{
	static const int32_t bad[] = {
		RTT_BASE - 1, RTT_BASE + 7, RTT_BASE + RTT_SKIP, 0, INT32_MAX, INT32_MIN,
	};

	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		wire_header(IDL_KIND_REQUEST, bad[i], 24);
		CU_ASSERT_EQUAL(wire_xchg(24), IDL_MSG_HEADER_SIZE);
		wire_expect(IDL_KIND_REPLY, (int32_t)((uint32_t)bad[i]), MIG_BAD_ID);
	}
	wire_add_works();
	/* The routine's own checks (the demux's): a request of the wrong size. */
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_ADD, 40);
	CU_ASSERT_EQUAL(wire_xchg(40), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_ADD, MIG_BAD_ARGUMENTS);
	/* A simpleroutine sent as a request expecting a reply, and the reverse. */
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_NOTIFY, 32);
	CU_ASSERT_EQUAL(wire_xchg(32), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_NOTIFY, IDL_EPROTO);
	/* A one-way message never gets a reply, even a refusal: the add's reply comes next. */
	wire_header(IDL_KIND_ONEWAY, RTT_BASE + RTT_ADD, 32);
	CU_ASSERT_EQUAL(send(wire_fd, wire_out.b, 32, MSG_NOSIGNAL), 32);
	wire_header(IDL_KIND_ONEWAY, RTT_BASE + 99, 24);
	CU_ASSERT_EQUAL(send(wire_fd, wire_out.b, 24, MSG_NOSIGNAL), 24);
	wire_add_works();
}

static void
test_signature_refused(void)
{
	/* A client whose add differs: the server refuses add, and serves the rest. */
	wire_hello(&rtt_changed_subsystem);
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_ADD, 32);
	CU_ASSERT_EQUAL(wire_xchg(32), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_ADD, IDL_ESIGNATURE);
	wire_header(IDL_KIND_REQUEST, RTT_BASE + RTT_NULL, 24);
	CU_ASSERT_EQUAL(wire_xchg(24), IDL_MSG_HEADER_SIZE);
	wire_expect(IDL_KIND_REPLY, RTT_BASE + RTT_NULL, 0);
	/* A new hello on the connection replaces the old verdicts. */
	wire_hello(&rtt_subsystem);
	wire_add_works();
}

static CU_TestInfo wire_tests[] = {
	{ "before_hello", test_before_hello },
	{ "header_checks", test_header_checks },
	{ "byte_order", test_byte_order },
	{ "ids", test_ids },
	{ "signature_refused", test_signature_refused },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_wire = { "rt_wire", wire_init, wire_clean, NULL, NULL, wire_tests };
