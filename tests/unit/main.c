/*
 * main.c - the unit test runner: registers every suite of suites.h and runs them.
 *
 *     tests/unit/unit                  every suite
 *     tests/unit/unit SUITE [TEST]     one suite, or one test of it
 *
 * Exits 0 only when every test that ran passed and every suite set up and cleaned up; a
 * name that matches nothing is a failure too, so a typo cannot pass for a green run.
 */
#include <config.h> /* which transports are built: their suites are in suites.h */

#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#define IDL_SUITE(name) extern CU_SuiteInfo idl_suite_##name;
#include "suites.h"
#undef IDL_SUITE

static int
unit_run(int argc, char **argv)
{
	CU_pSuite suite;
	CU_pTest test;

	if (argc < 2)
		return CU_basic_run_tests();
	if ((suite = CU_get_suite(argv[1])) == NULL) {
		fprintf(stderr, "unit: no suite named '%s'\n", argv[1]);
		return -1;
	}
	if (argc < 3)
		return CU_basic_run_suite(suite);
	if ((test = CU_get_test(suite, argv[2])) == NULL) {
		fprintf(stderr, "unit: suite '%s' has no test named '%s'\n", argv[1], argv[2]);
		return -1;
	}
	return CU_basic_run_test(suite, test);
}

int
main(int argc, char **argv)
{
	/* CU_SuiteInfo values are copied in at run time: the suites are defined elsewhere. */
	CU_SuiteInfo suites[] = {
#define IDL_SUITE(name) idl_suite_##name,
#include "suites.h"
#undef IDL_SUITE
		CU_SUITE_INFO_NULL,
	};
	unsigned failed;
	int rc;

	if (argc > 3) {
		fprintf(stderr, "usage: unit [SUITE [TEST]]\n");
		return 2;
	}
	if (CU_initialize_registry() != CUE_SUCCESS || CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "unit: cannot register the suites: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	rc = unit_run(argc, argv);
	if (rc > 0)
		fprintf(stderr, "unit: %s\n", CU_get_error_msg());
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failure_records();
	if (rc == 0 && argc >= 2 && CU_get_number_of_tests_run() == 0) {
		fprintf(stderr, "unit: no test ran\n");
		rc = -1;
	}
	CU_cleanup_registry();
	return rc != 0 || failed != 0 ? 1 : 0;
}
