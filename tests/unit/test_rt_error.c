/*
 * test_rt_error.c - error names, messages and the per-thread detail; the line a program
 * prints for a failure (idl_errmsg()); names registered for a server's own codes.
 */
#include <config.h> /* which transports are built */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
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

/* The line a program prints leads with what failed: the detail, then the code. */
static void
test_errmsg(void)
{
	idl_port_t p = IDL_PORT_NULL;
	idl_server_t *srv;
	const char *m;

	CU_ASSERT_EQUAL(idl_port_open("nosuch:/x", &p), IDL_ENOSCHEME);
	m = idl_errmsg(IDL_ENOSCHEME, NULL);
	CU_ASSERT_EQUAL(strncmp(m, idl_errdetail(), strlen(idl_errdetail())), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "(no transport registered for the address scheme: "
					 "ENOSCHEME)"));
	/* The caller's context is left out when the detail names it already. */
	CU_ASSERT_STRING_EQUAL(idl_errmsg(IDL_ENOSCHEME, "nosuch:/x"), m);
	CU_ASSERT_EQUAL(strncmp(idl_errmsg(IDL_ENOSCHEME, "opening"), "opening: nosuch:/x", 18), 0);
	/* Without a detail: the context, the message and the name. */
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	idl_server_destroy(srv);
	CU_ASSERT_STRING_EQUAL(idl_errmsg(IDL_ETIMEDOUT, "bench.add"),
			       "bench.add: call deadline expired (ETIMEDOUT)");
	CU_ASSERT_STRING_EQUAL(idl_errmsg(IDL_ETIMEDOUT, NULL),
			       "call deadline expired (ETIMEDOUT)");
	CU_ASSERT_STRING_EQUAL(idl_errmsg(4243, NULL), "server-defined code 4243");
	/* A code outside every table: its message survives its name's formatting. */
	CU_ASSERT_STRING_EQUAL(idl_errmsg(IDL_ESYSERR(4000), NULL),
			       "system error 4000 (ESYSERR(4000))");
}

/* A name that does not resolve: the detail says the lookup of which host failed, first. */
static void
test_unresolvable(void)
{
#ifdef HAVE_TRANSPORT_TCP
	static const char addr[] = "tcp:no-such-host.invalid:7000";
	static const char want[] = "tcp:no-such-host.invalid:7000: cannot resolve host "
				   "'no-such-host.invalid': ";
	idl_port_t p = IDL_PORT_NULL;
	const char *m;

	CU_ASSERT_EQUAL(idl_port_open(addr, &p), IDL_EADDRINVAL);
	CU_ASSERT_EQUAL(strncmp(idl_errdetail(), want, strlen(want)), 0);
	m = idl_errmsg(IDL_EADDRINVAL, addr);
	CU_ASSERT_EQUAL(strncmp(m, want, strlen(want)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, ": EADDRINVAL)"));
#endif
}

/* Names registered for a server's own codes, as idl_errname() and idl_strerror() give them;
 * the codes used here are no other test's. */
static const struct idl_errdef calc_errors[] = {
	{ 1001, "CALC_OVERFLOW", "sum does not fit an int" },
	{ 1002, "CALC_NEGATIVE", NULL },
};

static void
test_register(void)
{
	static const struct idl_errdef clash[] = { { 1100, "OTHER_A", NULL },
						   { 1001, "OTHER_OVERFLOW", NULL } };
	static const struct idl_errdef twice[] = { { 1200, "TWICE_A", NULL },
						   { 1200, "TWICE_B", NULL } };
	static const struct idl_errdef zero[] = { { 0, "ZERO", NULL } };
	static const struct idl_errdef noname[] = { { 1300, NULL, "x" } };

	CU_ASSERT_STRING_EQUAL(idl_errname(1001), "server-defined code 1001");
	CU_ASSERT_EQUAL(idl_error_register(calc_errors, 2), 0);
	CU_ASSERT_STRING_EQUAL(idl_errname(1001), "CALC_OVERFLOW");
	CU_ASSERT_STRING_EQUAL(idl_strerror(1001), "sum does not fit an int");
	CU_ASSERT_STRING_EQUAL(idl_errname(1002), "CALC_NEGATIVE");
	CU_ASSERT_STRING_EQUAL(idl_strerror(1002), "CALC_NEGATIVE");
	CU_ASSERT_STRING_EQUAL(idl_errname(1003), "server-defined code 1003");
	CU_ASSERT_STRING_EQUAL(idl_errmsg(1001, "calc.add"),
			       "calc.add: sum does not fit an int (CALC_OVERFLOW)");
	CU_ASSERT_STRING_EQUAL(idl_errmsg(1002, NULL), "CALC_NEGATIVE");
	/* The same table again is harmless; another name for a known code is refused whole. */
	CU_ASSERT_EQUAL(idl_error_register(calc_errors, 2), 0);
	CU_ASSERT_EQUAL(idl_error_register(clash, 2), IDL_EBUSY);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "1001"));
	CU_ASSERT_STRING_EQUAL(idl_errname(1001), "CALC_OVERFLOW");
	CU_ASSERT_STRING_EQUAL(idl_errname(1100), "server-defined code 1100");
	CU_ASSERT_EQUAL(idl_error_register(twice, 2), IDL_EBUSY);
	CU_ASSERT_STRING_EQUAL(idl_errname(1200), "server-defined code 1200");
	CU_ASSERT_EQUAL(idl_error_register(zero, 1), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_error_register(noname, 1), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_error_register(calc_errors, 0), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_error_register(NULL, 1), IDL_EINVAL);
	/* The runtime's own codes are not renamed. */
	CU_ASSERT_STRING_EQUAL(idl_errname(MIG_BAD_ID), "MIG_BAD_ID");
}

/* Threads register tables of their own while others name codes: each name is either not
 * there yet or whole (ThreadSanitizer runs this suite too). */
#define REG_THREADS 4
#define REG_CODES 64
static struct idl_errdef reg_defs[REG_THREADS][REG_CODES];
static char reg_names[REG_THREADS][REG_CODES][16];

static void *
reg_thread(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uintptr_t bad = 0;

	for (unsigned i = 0; i < REG_CODES; i++) {
		if (idl_error_register(&reg_defs[t][i], 1) != 0)
			bad++;
		for (unsigned o = 0; o < REG_THREADS; o++) {
			const char *n = idl_errname(reg_defs[o][i].code);

			if (strcmp(n, reg_names[o][i]) != 0 &&
			    strncmp(n, "server-defined", 14) != 0)
				bad++;
		}
		if (strcmp(idl_errname(reg_defs[t][i].code), reg_names[t][i]) != 0)
			bad++;
	}
	return (void *)bad;
}

static void
test_register_threads(void)
{
	pthread_t th[REG_THREADS];

	for (unsigned t = 0; t < REG_THREADS; t++)
		for (unsigned i = 0; i < REG_CODES; i++) {
			snprintf(reg_names[t][i], sizeof reg_names[t][i], "T%u_CODE%u", t, i);
			reg_defs[t][i].code = 20000 + (int)(t * REG_CODES + i);
			reg_defs[t][i].name = reg_names[t][i];
		}
	for (unsigned t = 0; t < REG_THREADS; t++)
		CU_ASSERT_EQUAL_FATAL(
			pthread_create(&th[t], NULL, reg_thread, (void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < REG_THREADS; t++) {
		void *rv = (void *)1;

		pthread_join(th[t], &rv);
		CU_ASSERT_PTR_NULL(rv);
	}
	CU_ASSERT_STRING_EQUAL(idl_errname(20000 + REG_THREADS * REG_CODES - 1), "T3_CODE63");
}

static void
test_version(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(idl_version());
	CU_ASSERT(strchr(idl_version(), '.') != NULL);
}

static CU_TestInfo err_tests[] = {
	{ "table", test_table },
	{ "syserr", test_syserr },
	{ "other_codes", test_other_codes },
	{ "detail", test_detail },
	{ "errmsg", test_errmsg },
	{ "unresolvable", test_unresolvable },
	{ "register", test_register },
	{ "register_threads", test_register_threads },
	{ "version", test_version },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_error = { "rt_error", NULL, NULL, NULL, NULL, err_tests };
