/*
 * test_rt_error.c - error names, messages and the per-thread detail.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include <idl/idl.h>

static void
test_table(void)
{
	CU_ASSERT_STRING_EQUAL(idl_errname(0), "KERN_SUCCESS");
	CU_ASSERT_STRING_EQUAL(idl_strerror(0), "success");
	CU_ASSERT_STRING_EQUAL(idl_errname(MIG_BAD_ID), "MIG_BAD_ID");
	CU_ASSERT_EQUAL(MIG_BAD_ID, -303);
	CU_ASSERT_EQUAL(MIG_SERVER_DIED, -308);
	CU_ASSERT_STRING_EQUAL(idl_errname(IDL_ETIMEDOUT), "ETIMEDOUT");
	CU_ASSERT_STRING_EQUAL(idl_strerror(IDL_ETIMEDOUT), "call deadline expired");
	CU_ASSERT_STRING_EQUAL(idl_errname(IDL_ELIMIT), "ELIMIT");
	/* Every table code has a distinct name and a message; success is named as MIG names
	 * it, KERN_SUCCESS. */
#define ERR_CHECK(name, value, msg)                                                                \
	CU_ASSERT_STRING_EQUAL(idl_errname(value), (value) == 0 ? "KERN_SUCCESS" : #name);         \
	CU_ASSERT_STRING_EQUAL(idl_strerror(value), msg);
	IDL_ERRNO_MAP(ERR_CHECK)
#undef ERR_CHECK
}

static void
test_syserr(void)
{
	int e = IDL_ESYSERR(EPIPE);

	CU_ASSERT(IDL_IS_SYSERR(e));
	CU_ASSERT_EQUAL(IDL_SYSERR_ERRNO(e), EPIPE);
	CU_ASSERT_FALSE(IDL_IS_SYSERR(MIG_BAD_ID));
	CU_ASSERT_STRING_EQUAL(idl_errname(e), "ESYSERR(EPIPE)");
	CU_ASSERT_STRING_EQUAL(idl_strerror(e), "Broken pipe");
	CU_ASSERT_STRING_EQUAL(idl_errname(IDL_ESYSERR(ENOENT)), "ESYSERR(ENOENT)");
	/* An errno the C library does not know still gets a name. */
	CU_ASSERT_STRING_EQUAL(idl_errname(IDL_ESYSERR(4000)), "ESYSERR(4000)");
	CU_ASSERT_PTR_NOT_NULL(idl_strerror(IDL_ESYSERR(4000)));
}

static void
test_other_codes(void)
{
	CU_ASSERT_STRING_EQUAL(idl_errname(5), "server-defined code 5");
	CU_ASSERT_STRING_EQUAL(idl_strerror(12345), "server-defined code 12345");
	CU_ASSERT_STRING_EQUAL(idl_errname(-999), "UNKNOWN");
	CU_ASSERT_STRING_EQUAL(idl_errname(-310), "UNKNOWN");
	CU_ASSERT_STRING_EQUAL(idl_strerror(-999), "unknown error");
}

static void *
err_other_thread(void *arg)
{
	idl_port_t p;

	(void)arg;
	/* A fresh thread starts with no detail, and its failures do not leak to others. */
	if (idl_errdetail()[0] != '\0')
		return (void *)1;
	idl_port_open("other-thread:/x", &p);
	return strstr(idl_errdetail(), "other-thread:/x") != NULL ? NULL : (void *)2;
}

static void
test_detail(void)
{
	idl_port_t p = IDL_PORT_NULL;
	idl_server_t *srv;
	pthread_t t;
	void *rv = (void *)-1;

	CU_ASSERT_EQUAL(idl_port_open("nosuch:/x", &p), IDL_ENOSCHEME);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "nosuch:/x"));
	pthread_create(&t, NULL, err_other_thread, NULL);
	pthread_join(t, &rv);
	CU_ASSERT_PTR_NULL(rv);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "nosuch:/x"));
	/* The next runtime call starts afresh. */
	CU_ASSERT_EQUAL(idl_port_open("noscheme", &p), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NULL(strstr(idl_errdetail(), "nosuch:/x"));
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "noscheme"));
	/* A call that succeeds leaves no detail behind, whether the runtime or a stub wrote
	 * the last one. */
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_STRING_EQUAL(idl_errdetail(), "");
	idl_server_destroy(srv);
	CU_ASSERT_EQUAL(idl_stub_fail(IDL_EPROTO, "stub %d", 7), IDL_EPROTO);
	CU_ASSERT_STRING_EQUAL(idl_errdetail(), "stub 7");
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_STRING_EQUAL(idl_errdetail(), "");
	idl_server_destroy(srv);
}

static void
test_version(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(idl_version());
	CU_ASSERT(strchr(idl_version(), '.') != NULL);
}

static CU_TestInfo err_tests[] = {
	{ "table", test_table },   { "syserr", test_syserr },	{ "other_codes", test_other_codes },
	{ "detail", test_detail }, { "version", test_version }, CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_error = { "rt_error", NULL, NULL, NULL, NULL, err_tests };
