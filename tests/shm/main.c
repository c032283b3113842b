/*
 * main.c - the shm: transport's test program: registers the suites and runs them.
 *
 *     tests/shm/shm-test [SUITE [CASE]]
 *
 * Suites: hostile, ool, kill. IDL_SHM_KILL_LOOPS sets the iterations of the kill loops
 * (make check uses a few dozen; make check-long a thousand).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "shm_test.h"

static void
st_add(const char *name, const struct st_case *cases)
{
	CU_pSuite s = CU_add_suite(name, NULL, NULL);

	for (; cases->name != NULL; cases++)
		CU_add_test(s, cases->name, cases->fn);
}

int
main(int argc, char **argv)
{
	unsigned failed;
	int rc = 0;

	signal(SIGPIPE, SIG_IGN);
	snprintf(st_dir, sizeof st_dir, "%s/idlkit-shm.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(st_dir) == NULL || st_tr() == NULL) {
		fprintf(stderr, "shm-test: no private directory or no shm: transport\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	st_add("hostile", st_hostile_cases);
	st_add("ool", st_ool_cases);
	st_add("kill", st_kill_cases);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc == 1) {
		rc = CU_basic_run_tests();
	} else {
		CU_pSuite s = CU_get_suite(argv[1]);
		CU_pTest t = s != NULL && argc > 2 ? CU_get_test(s, argv[2]) : NULL;

		if (s == NULL || (argc > 2 && t == NULL)) {
			fprintf(stderr, "shm-test: no such suite or case\n");
			rc = -1;
		} else {
			rc = t != NULL ? CU_basic_run_test(s, t) : CU_basic_run_suite(s);
		}
	}
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failure_records();
	if (rc == 0 && CU_get_number_of_tests_run() == 0)
		rc = -1;
	CU_cleanup_registry();
	st_rmtree(st_dir);
	return rc != 0 || failed != 0 ? 1 : 0;
}
