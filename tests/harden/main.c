/*
 * main.c - the hardening tests' program: registers the suites and runs them.
 *
 *     tests/harden/harden [SUITE [CASE]]
 *
 * Suites: limits, auth, reply, death, scale, reconnect (harden.h). The every-server it
 * starts comes from $IDL_HARDEN_SERVER, else the build's own tests/harden/every-server.
 */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "harden.h"

static void
hd_rmtree(const char *dir)
{
	char cmd[300];

	/* The directory is ours and made by mkdtemp: its name needs no quoting. */
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "harden: could not remove %s\n", dir);
}

int
main(int argc, char **argv)
{
	CU_SuiteInfo suites[] = {
		{ "limits", NULL, NULL, NULL, NULL, hd_limit_tests },
		{ "auth", NULL, NULL, NULL, NULL, hd_auth_tests },
		{ "reply", NULL, NULL, NULL, NULL, hd_reply_tests },
		{ "death", NULL, NULL, NULL, NULL, hd_death_tests },
		{ "scale", NULL, NULL, NULL, NULL, hd_scale_tests },
		{ "reconnect", NULL, NULL, NULL, NULL, hd_reconnect_tests },
		CU_SUITE_INFO_NULL,
	};
	unsigned failed;
	int rc = 0;

	signal(SIGPIPE, SIG_IGN);
	snprintf(hd_dir, sizeof hd_dir, "%s/idlkit-harden.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(hd_dir) == NULL) {
		perror("harden: mkdtemp");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS || CU_register_suites(suites) != CUE_SUCCESS)
		return 1;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc == 1) {
		rc = CU_basic_run_tests();
	} else {
		CU_pSuite s = CU_get_suite(argv[1]);
		CU_pTest t = s != NULL && argc > 2 ? CU_get_test(s, argv[2]) : NULL;

		if (s == NULL || (argc > 2 && t == NULL)) {
			fprintf(stderr, "harden: no such suite or case\n");
			rc = -1;
		} else {
			rc = t != NULL ? CU_basic_run_test(s, t) : CU_basic_run_suite(s);
		}
	}
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failure_records();
	if (rc == 0 && CU_get_number_of_tests_run() == 0)
		rc = -1;
	CU_cleanup_registry();
	hd_rmtree(hd_dir);
	return rc != 0 || failed != 0 ? 1 : 0;
}
