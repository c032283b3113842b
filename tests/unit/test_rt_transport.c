/*
 * test_rt_transport.c - the transport registry and the deadline clock.
 */
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

/* Ops that are never called: the registry only looks at which are filled. */
static int
fk_listen(void *ep, const char *rest, const struct idl_listen_opts *o)
{
	return IDL_ENOTSUP;
}
static int
fk_recv(void *ep, struct idl_xmsg *m, struct idl_peer *from, int64_t deadline)
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
fk_connect(void *c, const char *rest, int64_t deadline)
{
	return IDL_ENOTSUP;
}
static int
fk_send(void *c, const struct idl_xmsg *m, int64_t deadline)
{
	return IDL_ENOTSUP;
}
static int
fk_crecv(void *c, struct idl_xmsg *m, int64_t deadline)
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
	.scheme = "rt-test-msg",
	.tr_init = fk_init,
	.ep_listen = fk_listen,
	.ep_recv = fk_recv,
	.ep_reply = fk_reply,
	.ep_close = fk_void,
	.ep_fini = fk_void,
	.conn_connect = fk_connect,
	.conn_send = fk_send,
	.conn_recv = fk_crecv,
	.conn_close = fk_void,
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

static CU_TestInfo tr_tests[] = {
	{ "find", test_find },
	{ "register", test_register },
	{ "clock", test_clock },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_transport = { "rt_transport", NULL, NULL, NULL, NULL, tr_tests };
