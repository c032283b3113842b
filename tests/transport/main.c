/*
 * main.c - registers one conformance suite per registered transport and runs them.
 *
 *     tests/transport/conformance                  every transport
 *     tests/transport/conformance SCHEME [CASE]    one transport, or one case of it
 *
 * A suite is named "transport:SCHEME"; its init finds the scheme from the name of the suite
 * CUnit is running, makes a fresh address and starts bench-server there. A transport whose
 * server can be embedded in an event loop has a second suite, "embedded:SCHEME": the same
 * cases against bench-server -e, one thread serving from a poll() loop. Run with
 * "--client ..." the program is one of the client processes of the concurrency case.
 *
 *     tests/transport/conformance embedded:SCHEME [CASE]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "conformance.h"

#define TT_SUITE_PREFIX "transport:"
#define TT_EMBEDDED_PREFIX "embedded:"

struct tt_ctx tt = { .server_out = -1 };

/* The suite of a scheme that has no row in addr.c: it fails, loudly. */
static void
tt_no_address_case(void)
{
	fprintf(stderr,
		"conformance: %s has no test address case: add a row to "
		"tests/transport/addr.c\n",
		CU_get_current_suite()->pName);
	CU_FAIL("this scheme has no row in tests/transport/addr.c");
}

static int
tt_suite_cleanup(void)
{
	tt_oolt_stop();
	tt_server_reap();
	return tt_rmtree(tt.dir);
}

static int
tt_suite_init(void)
{
	const char *name = CU_get_current_suite()->pName, *scheme, *rest;
	int embedded = strncmp(name, TT_EMBEDDED_PREFIX, strlen(TT_EMBEDDED_PREFIX)) == 0;

	scheme = name + strlen(embedded ? TT_EMBEDDED_PREFIX : TT_SUITE_PREFIX);
	memset(&tt, 0, sizeof tt);
	tt.server_out = -1;
	tt.embedded = embedded;
	/* Only schemes with a row get this init (tt_add_suite). */
	tt.scheme = tt_scheme_find(scheme);
	snprintf(tt.dir, sizeof tt.dir, "%s/idlkit-conformance.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	/* mkdtemp makes the directory 0700. */
	if (mkdtemp(tt.dir) == NULL) {
		perror("conformance: mkdtemp");
		return -1;
	}
	if (tt.scheme->make_address(tt.dir, tt.address, sizeof tt.address) != 0) {
		fprintf(stderr, "conformance: %s: cannot make a test address\n", scheme);
		goto fail;
	}
	tt.tr = idl_transport_find(tt.address, &rest);
	if (tt.tr == NULL || strcmp(tt.tr->scheme, scheme) != 0) {
		fprintf(stderr, "conformance: %s: the address belongs to no transport\n",
			tt.address);
		goto fail;
	}
	if (tt_server_start() == 0)
		return 0;
fail:
	/* CUnit runs no cleanup after a failed init. */
	tt_suite_cleanup();
	return -1;
}

static void
tt_add_cases(CU_pSuite suite, const struct tt_case *cases)
{
	for (; cases->name != NULL; cases++)
		CU_add_test(suite, cases->name, cases->fn);
}

static void
tt_add_all_cases(CU_pSuite suite)
{
	tt_add_cases(suite, tt_call_cases);
	tt_add_cases(suite, tt_ool_cases);
	tt_add_cases(suite, tt_oolt_cases);
	tt_add_cases(suite, tt_malformed_cases);
	tt_add_cases(suite, tt_async_cases);
	tt_add_cases(suite, tt_fault_cases);
}

/* Whether idl_server_fd() takes an endpoint of t (docs/api.md, "The embeddable server"):
 * connections it can pool, or a message endpoint with a descriptor. */
static int
tt_embeddable(const struct idl_transport *t)
{
	if (t->ep_accept != NULL)
		return t->conn_fd != NULL && t->conn_recv_nb != NULL && t->conn_sendv_nb != NULL;
	return t->ep_fd != NULL && t->ep_recv != NULL;
}

static void
tt_add_suite(const struct idl_transport *t, void *arg)
{
	char name[128];
	CU_pSuite suite;

	snprintf(name, sizeof name, "%s%s", TT_SUITE_PREFIX, t->scheme);
	if (tt_scheme_find(t->scheme) == NULL) {
		suite = CU_add_suite(name, NULL, NULL);
		CU_add_test(suite, "address case", tt_no_address_case);
		return;
	}
	tt_add_all_cases(CU_add_suite(name, tt_suite_init, tt_suite_cleanup));
	if (tt_embeddable(t)) {
		snprintf(name, sizeof name, "%s%s", TT_EMBEDDED_PREFIX, t->scheme);
		tt_add_all_cases(CU_add_suite(name, tt_suite_init, tt_suite_cleanup));
	}
}

static int
tt_run(int argc, char **argv)
{
	char name[128];
	CU_pSuite suite;
	CU_pTest test;

	if (argc < 2)
		return CU_basic_run_tests();
	/* A bare scheme names its threaded suite; "embedded:SCHEME" the other. */
	snprintf(name, sizeof name, "%s%s", strchr(argv[1], ':') ? "" : TT_SUITE_PREFIX, argv[1]);
	if ((suite = CU_get_suite(name)) == NULL) {
		fprintf(stderr, "conformance: no transport '%s' is registered\n", argv[1]);
		return -1;
	}
	if (argc < 3)
		return CU_basic_run_suite(suite);
	if ((test = CU_get_test(suite, argv[2])) == NULL) {
		fprintf(stderr, "conformance: no case named '%s'\n", argv[2]);
		return -1;
	}
	return CU_basic_run_test(suite, test);
}

int
main(int argc, char **argv)
{
	const char *rest;
	unsigned failed;
	int rc;

	if (argc > 1 && strcmp(argv[1], TT_CHILD_FLAG) == 0)
		return tt_child_main(argc, argv);
	if (argc > 3) {
		fprintf(stderr, "usage: conformance [SCHEME [CASE]]\n");
		return 2;
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "conformance: %s\n", CU_get_error_msg());
		return 1;
	}
	/* A lookup registers the built-in transports, so that foreach sees them. */
	(void)idl_transport_find("unix:", &rest);
	idl_transport_foreach(tt_add_suite, NULL);
	if (CU_get_registry()->uiNumberOfSuites == 0) {
		fprintf(stderr, "conformance: no transport is registered\n");
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	rc = tt_run(argc, argv);
	if (rc > 0)
		fprintf(stderr, "conformance: %s\n", CU_get_error_msg());
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failure_records();
	if (rc == 0 && CU_get_number_of_tests_run() == 0) {
		fprintf(stderr, "conformance: no case ran\n");
		rc = -1;
	}
	CU_cleanup_registry();
	return rc != 0 || failed != 0 ? 1 : 0;
}

/*
 * The client processes of the concurrency case: argv is
 *     --client ADDRESS SEED THREADS CALLS NOTIFIES
 * Every thread makes CALLS checked calls and NOTIFIES notifications through one shared port.
 */
struct tt_child_thread {
	pthread_t tid;
	idl_port_t port;
	unsigned seed, calls;
	int notifies;
	int rc;
};

static void *
tt_child_thread_main(void *arg)
{
	struct tt_child_thread *t = arg;

	t->rc = tt_client_calls(t->port, t->seed, t->calls, t->notifies);
	return NULL;
}

int
tt_child_main(int argc, char **argv)
{
	struct tt_child_thread th[16];
	unsigned nthreads;
	idl_port_t port;
	int err, rc = 0;

	if (argc != 7 || (nthreads = (unsigned)atoi(argv[4])) < 1 || nthreads > 16) {
		fprintf(stderr, "usage: conformance %s ADDRESS SEED THREADS CALLS NOTIFIES\n",
			TT_CHILD_FLAG);
		return 2;
	}
	if ((err = idl_port_open(argv[2], &port)) != 0) {
		fprintf(stderr, "conformance client %d: open %s: %s: %s\n", (int)getpid(), argv[2],
			idl_errname(err), idl_errdetail());
		return 1;
	}
	idl_port_set_timeout(port, 20000);
	for (unsigned i = 0; i < nthreads; i++) {
		th[i].port = port;
		th[i].seed = (unsigned)atoi(argv[3]) * 100 + i;
		th[i].calls = (unsigned)atoi(argv[5]);
		th[i].notifies = atoi(argv[6]);
		th[i].rc = -1;
		if (pthread_create(&th[i].tid, NULL, tt_child_thread_main, &th[i]) != 0) {
			fprintf(stderr, "conformance client: pthread_create failed\n");
			return 1;
		}
	}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(th[i].tid, NULL);
		if (th[i].rc != 0)
			rc = 1;
	}
	idl_port_close(port);
	return rc;
}
