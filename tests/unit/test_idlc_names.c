/*
 * test_idlc_names.c - sema_names.c: a routine whose client stub or server routine would have
 * the name of a well-known C library function gets a warning naming the function's header,
 * on the side whose name clashes; prefixes (userprefix, serverprefix, -prefix) avoid it.
 */
#include <config.h>

#include <string.h>

#include <CUnit/CUnit.h>

#include "idlc.h"

static struct strbuf names_diags = STRBUF_INIT;

static void
names_sink(void *data, const char *line)
{
	strbuf_puts(data, line);
}

/* Checks `text` (with -prefix `prefix`, or none); the diagnostics are in names_diags. */
static int
names_run(const char *text, const char *prefix)
{
	struct idlc_options opts;
	struct idlc_ctx *ctx;
	int rc;

	memset(&opts, 0, sizeof opts);
	opts.prefix = prefix;
	strbuf_reset(&names_diags);
	ctx = idlc_create(&opts, names_sink, &names_diags);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rc = idlc_parse_string(ctx, "n.defs", text, strlen(text));
	if (rc == 0)
		rc = idlc_check(ctx);
	idlc_destroy(ctx);
	return rc;
}

static void
test_clashes(void)
{
	/* The client stub of log, without a userprefix. */
	CU_ASSERT_EQUAL(names_run("subsystem n 1;\nserverprefix S_;\n"
				  "simpleroutine log(server : mach_port_t; v : int);\n",
				  NULL),
			0);
	CU_ASSERT(strstr(strbuf_str(&names_diags),
			 "n.defs:3:15: warning: routine 'log': its client stub 'log' has the name "
			 "of the C library's log() (<math.h>)") != NULL);
	/* The server routine of read, without a serverprefix. */
	CU_ASSERT_EQUAL(names_run("subsystem n 1;\nuserprefix n_;\n"
				  "routine read(server : mach_port_t; out v : int);\n",
				  NULL),
			0);
	CU_ASSERT(strstr(strbuf_str(&names_diags),
			 "its server routine 'read' has the name of the C library's read() "
			 "(<unistd.h>); a serverprefix") != NULL);
	/* Both prefixed, or -prefix: nothing to say. */
	CU_ASSERT_EQUAL(names_run("subsystem n 1;\nuserprefix n_;\nserverprefix S_;\n"
				  "routine read(server : mach_port_t; out v : int);\n",
				  NULL),
			0);
	CU_ASSERT_EQUAL(names_diags.len, 0);
	CU_ASSERT_EQUAL(names_run("subsystem n 1;\nroutine log(server : mach_port_t);\n", "x_"), 0);
	CU_ASSERT_EQUAL(names_diags.len, 0);
	/* A name that merely contains one (logger, reader) is no clash. */
	CU_ASSERT_EQUAL(names_run("subsystem n 1;\nroutine logger(server : mach_port_t);\n"
				  "routine reader(server : mach_port_t);\n",
				  NULL),
			0);
	CU_ASSERT_EQUAL(names_diags.len, 0);
}

static int
names_cleanup(void)
{
	strbuf_fini(&names_diags);
	return 0;
}

static CU_TestInfo idlc_names_tests[] = {
	{ "clashes with C library functions", test_clashes },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_idlc_names = {
	"idlc_names", NULL, names_cleanup, NULL, NULL, idlc_names_tests,
};
