/*
 * test_rt_transport.c - the transport registry, the versioned transport contract and what
 * it gives a transport (the release of a sent message, the deadline clock).
 */
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>
#include <idl/idl_transport.h>

#include "ool/ool.h"
#include "ool/ool_cache.h"
#include "server/server.h"
#include "sock/sock_timeo.h"

/* Ops that are never called: the registry only looks at which are filled. */
static int
fk_listen(void *ep, const char *rest, const struct idl_listen_opts *o)
{
	return IDL_ENOTSUP;
}
static int
fk_recv(void *ep, struct idl_xmsg *m, struct idl_peer *from, struct idl_deadline *dl)
{
	return IDL_ENOTSUP;
}
static int
fk_reply(void *ep, const struct idl_peer *to, const struct idl_xmsg *m)
{
	return IDL_ENOTSUP;
}
static void
fk_void(void *p)
{
}
static int
fk_connect(void *c, const char *rest, struct idl_deadline *dl)
{
	return IDL_ENOTSUP;
}
static int
fk_send(void *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	return IDL_ENOTSUP;
}
static int
fk_crecv(void *c, struct idl_xmsg *m, struct idl_deadline *dl)
{
	return IDL_ENOTSUP;
}
static int
fk_accept(void *ep, void *c)
{
	return IDL_ENOTSUP;
}

static int fk_inits;
static int
fk_init(void)
{
	fk_inits++;
	return 0;
}

/* A message-endpoint transport (ep_recv + ep_reply), complete. */
static const struct idl_transport fk_msg = {
	IDL_TRANSPORT_INIT,	.scheme = "rt-test-msg", .tr_init = fk_init,
	.ep_listen = fk_listen, .ep_recv = fk_recv,	 .ep_reply = fk_reply,
	.ep_close = fk_void,	.ep_fini = fk_void,	 .conn_connect = fk_connect,
	.conn_send = fk_send,	.conn_recv = fk_crecv,	 .conn_close = fk_void,
	.conn_fini = fk_void,
};

static void
test_find(void)
{
	const char *rest = NULL;
	const struct idl_transport *t = idl_transport_find("unix:/run/x.sock", &rest);

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_STRING_EQUAL(t->scheme, "unix");
	CU_ASSERT_STRING_EQUAL(rest, "/run/x.sock");
	CU_ASSERT(t->flags & IDL_TRF_CRED);
	CU_ASSERT_PTR_NOT_NULL(idl_transport_find("unix:", NULL));
	/* The scheme must match whole. */
	CU_ASSERT_PTR_NULL(idl_transport_find("uni:/x", &rest));
	CU_ASSERT_PTR_NULL(idl_transport_find("unixx:/x", &rest));
	CU_ASSERT_PTR_NULL(idl_transport_find("/no/scheme", &rest));
	CU_ASSERT_PTR_NULL(idl_transport_find(NULL, &rest));
	CU_ASSERT_PTR_NULL(idl_transport_find(":x", &rest));
}

static void
fk_collect(const struct idl_transport *t, void *arg)
{
	char *seen = arg;

	if (strcmp(t->scheme, "unix") == 0)
		seen[0]++;
	if (strcmp(t->scheme, fk_msg.scheme) == 0)
		seen[1]++;
}

static void
test_register(void)
{
	struct idl_transport bad = fk_msg;
	char seen[2] = { 0, 0 };
	const char *rest;

	/* Required ops. */
	bad.scheme = "rt-test-bad";
	bad.conn_send = NULL;
	CU_ASSERT_EQUAL(idl_transport_register(&bad), IDL_EINVAL);
	bad = fk_msg;
	bad.scheme = "rt-test-bad";
	bad.ep_reply = NULL; /* ep_recv without ep_reply, and no ep_accept */
	CU_ASSERT_EQUAL(idl_transport_register(&bad), IDL_EINVAL);
	bad.ep_recv = NULL;
	bad.ep_accept = fk_accept; /* ep_accept without ep_fd */
	CU_ASSERT_EQUAL(idl_transport_register(&bad), IDL_EINVAL);
	bad.scheme = "bad:scheme";
	CU_ASSERT_EQUAL(idl_transport_register(&bad), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_transport_register(NULL), IDL_EINVAL);
	CU_ASSERT_PTR_NULL(idl_transport_find("rt-test-bad:x", &rest));

	/* A complete table registers once; tr_init runs at registration. */
	CU_ASSERT_EQUAL(idl_transport_register(&fk_msg), 0);
	CU_ASSERT_EQUAL(fk_inits, 1);
	CU_ASSERT_PTR_EQUAL(idl_transport_find("rt-test-msg:anything", &rest), &fk_msg);
	CU_ASSERT_STRING_EQUAL(rest, "anything");
	CU_ASSERT_EQUAL(idl_transport_register(&fk_msg), IDL_EBUSY);
	CU_ASSERT_EQUAL(fk_inits, 1);
	idl_transport_foreach(fk_collect, seen);
	CU_ASSERT_EQUAL(seen[0], 1);
	CU_ASSERT_EQUAL(seen[1], 1);
}

static int
fk_call(void *c, const struct idl_xmsg *req, struct idl_xmsg *rep, struct idl_deadline *dl)
{
	return IDL_ENOTSUP;
}

/* A table says which contract it was written for and how long it is: another version, or a
 * table shorter than the first version's, is refused with a detail that says so. */
static void
test_contract(void)
{
	struct idl_transport t = fk_msg;
	/* A table compiled with a later header: longer, with ops this runtime does not know.
	 * Registered tables must outlive the process. */
	static struct {
		struct idl_transport t;
		void (*later_ops[2])(void);
	} longer;
	const char *rest;

	CU_ASSERT_EQUAL(fk_msg.abi, IDL_TRANSPORT_ABI);
	CU_ASSERT_EQUAL(fk_msg.size, sizeof(struct idl_transport));

	t.scheme = "rt-test-abi";
	t.abi = IDL_TRANSPORT_ABI + 1;
	CU_ASSERT_EQUAL(idl_transport_register(&t), IDL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "contract version 2"));
	t.abi = 0; /* a table without IDL_TRANSPORT_INIT */
	CU_ASSERT_EQUAL(idl_transport_register(&t), IDL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "IDL_TRANSPORT_INIT"));
	t.abi = IDL_TRANSPORT_ABI;
	t.size = offsetof(struct idl_transport, ool_free);
	CU_ASSERT_EQUAL(idl_transport_register(&t), IDL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "bytes: the first version's is"));
	t.size = 0;
	CU_ASSERT_EQUAL(idl_transport_register(&t), IDL_EINVAL);
	CU_ASSERT_PTR_NULL(idl_transport_find("rt-test-abi:x", &rest));

	longer.t = fk_msg;
	longer.t.scheme = "rt-test-longer";
	longer.t.size = sizeof longer;
	CU_ASSERT_EQUAL(idl_transport_register(&longer.t), 0);
	CU_ASSERT_PTR_EQUAL(idl_transport_find("rt-test-longer:x", &rest), &longer.t);
}

/* The runtime reads an op past the table's size as NULL: the op of a table compiled before
 * it existed. */
static void
test_op_past_size(void)
{
	struct idl_transport t = fk_msg;

	t.conn_call = fk_call;
	CU_ASSERT_PTR_EQUAL(IDL__TR_OP(&t, conn_call), fk_call);
	CU_ASSERT_PTR_EQUAL(IDL__TR_OP(&t, ep_recv), fk_recv);
	t.size = offsetof(struct idl_transport, conn_call) + sizeof t.conn_call;
	CU_ASSERT_PTR_EQUAL(IDL__TR_OP(&t, conn_call), fk_call);
	t.size = offsetof(struct idl_transport, conn_call);
	CU_ASSERT_PTR_NULL(IDL__TR_OP(&t, conn_call));
	CU_ASSERT_PTR_NULL(IDL__TR_OP(&t, conn_cred));
	CU_ASSERT_PTR_EQUAL(IDL__TR_OP(&t, ep_recv), fk_recv);
}

/* idl_msg_release_sent(), exported for transports outside the library: a sent message's
 * out-of-line data marked dealloc is released, data not so marked stays the caller's. */
static void
test_release_sent(void)
{
	size_t big = 64u << 10;
	struct {
		idl_msg_header_t h;
		idl_desc_t d[2];
	} m;
	char *given = idl_ool_alloc(big), *kept = idl_ool_alloc(big);

	CU_ASSERT_PTR_NOT_NULL_FATAL(given);
	CU_ASSERT_PTR_NOT_NULL_FATAL(kept);
	memset(&m, 0, sizeof m);
	m.h.magic = IDL_MSG_MAGIC;
	m.h.order = IDL_ORDER_NATIVE;
	m.h.kind = IDL_KIND_REQUEST;
	m.h.flags = IDL_MSGF_DESC;
	m.h.size = sizeof m;
	m.h.ndesc = 2;
	m.d[0].type = IDL_DESC_OOL;
	m.d[0].flags = IDL_DESCF_DEALLOC;
	m.d[0].addr = (uint64_t)(uintptr_t)given;
	m.d[0].size = (uint32_t)big;
	m.d[1].type = IDL_DESC_OOL;
	m.d[1].addr = (uint64_t)(uintptr_t)kept;
	m.d[1].size = (uint32_t)big;
	CU_ASSERT_EQUAL(msync(given, big, MS_ASYNC), 0);
	idl_msg_release_sent(&m.h);
	/* Released: unmapped, or kept in the process's cache of blocks for the next one. */
	CU_ASSERT(idl__ool_cache_state(given) == IDL__OOL_CACHE_CACHED ||
		  msync(given, big, MS_ASYNC) != 0);
	CU_ASSERT_EQUAL(msync(kept, big, MS_ASYNC), 0);
	kept[big - 1] = 1;
	idl_ool_free(kept, big);
}

static void
test_clock(void)
{
	int64_t a = idl_now_ns(), d, b;
	struct timespec ts = { 0, 2000000 };

	CU_ASSERT_EQUAL(idl_deadline_ms(-1), IDL_DEADLINE_NONE);
	d = idl_deadline_ms(100);
	CU_ASSERT(d >= a + 100000000 && d < a + 200000000);
	CU_ASSERT(idl_deadline_ms(0) >= a);
	CU_ASSERT(idl_deadline_ms(0x7fffffff) > a);
	nanosleep(&ts, NULL);
	b = idl_now_ns();
	CU_ASSERT(b - a >= 2000000);
}

/* The lazy deadline: a timeout until someone needs the time, anchored once, then fixed. */
static void
test_deadline_lazy(void)
{
	struct idl_deadline d = idl_deadline_in(100), n = idl_deadline_in(-7),
			    z = idl_deadline_in(0);
	int64_t a = idl_now_ns(), abs;

	CU_ASSERT_EQUAL(d.abs_ns, 0);
	CU_ASSERT_EQUAL(d.ms, 100);
	abs = idl_deadline_abs(&d);
	CU_ASSERT(abs >= a + 100000000 && abs < a + 200000000);
	CU_ASSERT_EQUAL(idl_deadline_abs(&d), abs); /* anchored once */
	CU_ASSERT_FALSE(idl_deadline_passed(&d));
	/* Anchoring an anchored deadline at another start changes nothing. */
	idl_deadline_start(&d, a - 1000000000);
	CU_ASSERT_EQUAL(d.abs_ns, abs);

	CU_ASSERT(idl_deadline_is_none(&n));
	CU_ASSERT_EQUAL(idl_deadline_abs(&n), IDL_DEADLINE_NONE);
	CU_ASSERT_FALSE(idl_deadline_passed(&n));
	CU_ASSERT(idl_deadline_is_none(&n)); /* none stays unanchored */

	CU_ASSERT(idl_deadline_passed(&z)); /* a timeout of 0 has passed once used */

	n = idl_deadline_at(IDL_DEADLINE_NONE);
	CU_ASSERT(idl_deadline_is_none(&n));
	d = idl_deadline_at(a - 1);
	CU_ASSERT_EQUAL(d.ms, IDL_DEADLINE_MS_ABS);
	CU_ASSERT(idl_deadline_passed(&d));
	d = idl_deadline_at(a + 1000000000);
	CU_ASSERT_EQUAL(idl_deadline_abs(&d), a + 1000000000);

	/* An op that knows when the call began anchors it there. */
	d = idl_deadline_in(50);
	idl_deadline_start(&d, a - 60000000);
	CU_ASSERT_EQUAL(d.abs_ns, a - 60000000 + 50000000);
	CU_ASSERT(idl_deadline_passed(&d));
}

static int64_t
tr_rcvtimeo_us(int fd)
{
	struct timeval tv;
	socklen_t sl = sizeof tv;

	if (getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &sl) != 0)
		return -1;
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* The socket timeout cache: an unanchored deadline's timeout is set on the socket exactly
 * and the deadline stays unanchored (no clock read), so a wait that runs out is the
 * deadline passing; an anchored one gets what is left. */
static void
test_sock_timeo(void)
{
	int sv[2], r;
	int64_t cached = 0, t0, t1;
	char b;
	struct idl_deadline d = idl_deadline_in(60);

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	CU_ASSERT_EQUAL(idl__sock_timeo(sv[0], SO_RCVTIMEO, &cached, &d), 0);
	CU_ASSERT_EQUAL(cached, 60000);
	/* The kernel keeps it in ticks: read back, it may be rounded up by one. */
	CU_ASSERT(tr_rcvtimeo_us(sv[0]) >= 60000 && tr_rcvtimeo_us(sv[0]) < 70000);
	CU_ASSERT_EQUAL(d.abs_ns, 0);
	t0 = idl_now_ns();
	r = (int)recv(sv[0], &b, 1, 0);
	t1 = idl_now_ns();
	CU_ASSERT(r < 0 && errno == EAGAIN);
	CU_ASSERT(t1 - t0 >= 55000000); /* the kernel's timer, not ours */
	CU_ASSERT(idl__sock_late(&d));

	/* The same timeout again: nothing to set. A different one is set exactly. */
	d = idl_deadline_in(60);
	CU_ASSERT_EQUAL(idl__sock_timeo(sv[0], SO_RCVTIMEO, &cached, &d), 0);
	d = idl_deadline_in(250);
	CU_ASSERT_EQUAL(idl__sock_timeo(sv[0], SO_RCVTIMEO, &cached, &d), 0);
	CU_ASSERT(tr_rcvtimeo_us(sv[0]) >= 250000 && tr_rcvtimeo_us(sv[0]) < 260000);
	CU_ASSERT_EQUAL(d.abs_ns, 0);

	/* A wait cut short anchors it: the next wait is bounded by what is left, and a wait
	 * that ends early is not the deadline passing. */
	idl__sock_again(&d);
	CU_ASSERT(d.abs_ns != 0);
	CU_ASSERT_EQUAL(idl__sock_timeo(sv[0], SO_RCVTIMEO, &cached, &d), 0);
	CU_ASSERT(cached <= 250000 && cached >= 100000);
	CU_ASSERT_FALSE(idl__sock_late(&d));

	/* Passed: try once without blocking. None: block. Zero: passed at once. */
	d = idl_deadline_at(idl_now_ns() - 1);
	CU_ASSERT_EQUAL(idl__sock_timeo(sv[0], SO_RCVTIMEO, &cached, &d), 1);
	d = idl_deadline_in(-1);
	CU_ASSERT_EQUAL(idl__sock_timeo(sv[0], SO_RCVTIMEO, &cached, &d), 0);
	CU_ASSERT_EQUAL(cached, 0);
	CU_ASSERT_EQUAL(tr_rcvtimeo_us(sv[0]), 0);
	CU_ASSERT_FALSE(idl__sock_late(&d));
	d = idl_deadline_in(0);
	CU_ASSERT_EQUAL(idl__sock_timeo(sv[0], SO_RCVTIMEO, &cached, &d), 1);
	close(sv[0]);
	close(sv[1]);
}

/* A knob in the environment is a decimal integer within its bounds, or the default: a
 * mistyped value must not become an arbitrary one. */
static void
test_env_int(void)
{
	static const struct {
		const char *v;
		int64_t want;
	} cases[] = {
		{ "250", 250 },
		{ "1", 1 },
		{ "60000", 60000 },
		{ "-5", -5 },
		{ "", 20 },
		{ "0", 20 },
		{ "60001", 20 },
		{ "12ms", 20 },
		{ " 7", 20 },
		{ "0x10", 20 },
		{ "1e3", 20 },
		{ "+9", 20 },
		{ "99999999999999999999", 20 },
	};
	const char *name = "IDL_TEST_ENV_INT";

	unsetenv(name);
	CU_ASSERT_EQUAL(idl__env_int(name, 20, 1, 60000), 20);
	setenv(name, "-0", 1);
	CU_ASSERT_EQUAL(idl__env_int(name, 20, 0, 60000), 20);
	setenv(name, "0", 1);
	CU_ASSERT_EQUAL(idl__env_int(name, 20, 0, 60000), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t min = cases[i].want < 0 ? -10 : 1;

		setenv(name, cases[i].v, 1);
		CU_ASSERT_EQUAL(idl__env_int(name, 20, min, 60000), cases[i].want);
	}
	unsetenv(name);
}

/* A server takes its linger time from the environment when it is created. */
static void
test_server_linger(void)
{
	idl_server_t *srv;

	setenv("IDL_SERVER_LINGER_MS", "250", 1);
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_EQUAL(srv->linger_ms, 250);
	idl_server_destroy(srv);
	setenv("IDL_SERVER_LINGER_MS", "a while", 1);
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_EQUAL(srv->linger_ms, SRV_LINGER_MS);
	idl_server_destroy(srv);
	unsetenv("IDL_SERVER_LINGER_MS");
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_EQUAL(srv->linger_ms, SRV_LINGER_MS);
	idl_server_destroy(srv);
}

static CU_TestInfo tr_tests[] = {
	{ "find", test_find },
	{ "register", test_register },
	{ "contract", test_contract },
	{ "op past size", test_op_past_size },
	{ "release sent", test_release_sent },
	{ "clock", test_clock },
	{ "deadline lazy", test_deadline_lazy },
	{ "sock timeo", test_sock_timeo },
	{ "env int", test_env_int },
	{ "server linger", test_server_linger },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_transport = { "rt_transport", NULL, NULL, NULL, NULL, tr_tests };
