/*
 * test_idlc_types.c - the -types output (idlc/emit_types.c): which declared types get a
 * typedef and in which shape, the bound macros, that the headers include the file, and that
 * idlc never redefines a C type <idl/idl.h> already has (every typedef of <idl/mig.h>).
 */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "emit.h"

static struct strbuf types_diags = STRBUF_INIT;

static void
types_sink(void *data, const char *line)
{
	strbuf_puts(data, line);
}

/* Checks `text` with -types written to `types_path`, and emits output `which` into `out`. */
static int
types_run(const char *text, enum idlc_output which, struct strbuf *out)
{
	struct idlc_options opts;
	struct idlc_ctx *ctx;
	int rc;

	memset(&opts, 0, sizeof opts);
	opts.out[IDLC_OUT_TYPES] = "gen/ledgerTypes.h";
	strbuf_reset(&types_diags);
	ctx = idlc_create(&opts, types_sink, &types_diags);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rc = idlc_parse_string(ctx, "ledger.defs", text, strlen(text));
	if (rc == 0)
		rc = idlc_check(ctx);
	if (rc == 0)
		rc = idlc_generate_to(ctx, which, out);
	idlc_destroy(ctx);
	return rc;
}

static const char types_defs[] =
	"subsystem ledger 5100;\n"
	"type memo_t = array[*:512] of MACH_MSG_TYPE_BYTE;\n"
	"type name_t = array[32] of char;\n"
	"type names_t = array[*:16] of name_t;\n"
	"type label_t = c_string[*:64];\n"
	"type code_t = c_string[8];\n"
	"type grid_t = array[2] of array[3] of short;\n"
	"type stamp_t = struct[2] of uint32_t;\n"
	"type rec_t = struct { int64_t a; int b; };\n"
	"type blob_t = array[] of char;\n"
	"type page_t = ^array[64] of MACH_MSG_TYPE_BYTE;\n"
	"type flag_t = MACH_MSG_TYPE_BOOLEAN;\n"
	"type acct_t = int;\n"
	/* The user's own C types, and names <idl/mig.h> already has: no typedef. */
	"type handle_t = int ctype: user_handle_t;\n"
	"type task_t = mach_port_t;\n"
	"type uint8_t = MACH_MSG_TYPE_INTEGER_8;\n"
	"routine deposit(server : mach_port_t; a : acct_t; memo : memo_t);\n";

/* Each declared type in the shape a MIG user writes it, in declaration order. */
static void
test_shapes(void)
{
	struct strbuf out = STRBUF_INIT;
	const char *t;

	CU_ASSERT_EQUAL_FATAL(types_run(types_defs, IDLC_OUT_TYPES, &out), 0);
	t = strbuf_str(&out);
	CU_ASSERT(strstr(t, "#ifndef IDLC_LEDGERTYPES_H\n") != NULL);
	CU_ASSERT(strstr(t, "#include <idl/idl.h>\n") != NULL);
	CU_ASSERT(
		strstr(t, "#define MEMO_T_MAX 512\ntypedef unsigned char memo_t[MEMO_T_MAX];\n") !=
		NULL);
	CU_ASSERT(strstr(t, "typedef char name_t[32];\n") != NULL);
	CU_ASSERT(strstr(t, "#define NAMES_T_MAX 16\ntypedef name_t names_t[NAMES_T_MAX];\n") !=
		  NULL);
	CU_ASSERT(strstr(t, "#define LABEL_T_MAX 64\ntypedef char label_t[LABEL_T_MAX];\n") !=
		  NULL);
	CU_ASSERT(strstr(t, "typedef char code_t[8];\n") != NULL);
	/* A fixed array of arrays is flat, as it travels. */
	CU_ASSERT(strstr(t, "typedef short grid_t[6];\n") != NULL);
	/* Records travel by value: structs. */
	CU_ASSERT(strstr(t, "typedef struct {\n\tuint32_t elem[2];\n} stamp_t;\n") != NULL);
	CU_ASSERT(strstr(t, "typedef struct {\n\tint64_t a;\n\tint b;\n} rec_t;\n") != NULL);
	CU_ASSERT(strstr(t, "typedef char *blob_t;\n") != NULL);
	CU_ASSERT(strstr(t, "typedef unsigned char *page_t;\n") != NULL);
	CU_ASSERT(strstr(t, "typedef boolean_t flag_t;\n") != NULL);
	CU_ASSERT(strstr(t, "typedef int acct_t;\n") != NULL);
	CU_ASSERT(strstr(t, "memo_t") < strstr(t, "acct_t"));
	CU_ASSERT(strstr(t, "handle_t") == NULL);
	CU_ASSERT(strstr(t, "task_t") == NULL);
	CU_ASSERT(strstr(t, "uint8_t") == NULL);
	/* Nothing of the built-ins. */
	CU_ASSERT(strstr(t, "natural_t") == NULL && strstr(t, "mach_port_t") == NULL);
	strbuf_fini(&out);
}

/* The headers and Server.c include the file, by its base name, after the imports. */
static void
test_included(void)
{
	static const char *const with_import =
		"subsystem ledger 5100;\nimport \"mine.h\";\ntype acct_t = int;\n"
		"routine r(server : mach_port_t; a : acct_t);\n";
	static const enum idlc_output outs[] = { IDLC_OUT_HEADER, IDLC_OUT_SHEADER,
						 IDLC_OUT_SERVER };
	struct strbuf out = STRBUF_INIT;

	for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
		const char *inc, *imp;

		strbuf_reset(&out);
		CU_ASSERT_EQUAL_FATAL(types_run(with_import, outs[i], &out), 0);
		inc = strstr(strbuf_str(&out), "#include \"ledgerTypes.h\"\n");
		imp = strstr(strbuf_str(&out), "#include \"mine.h\"\n");
		CU_ASSERT(inc != NULL && imp != NULL && imp < inc);
	}
	strbuf_fini(&out);
}

/* Two types whose bound macros would be one are refused, not written twice. */
static void
test_macro_clash(void)
{
	struct strbuf out = STRBUF_INIT;

	CU_ASSERT(types_run("subsystem s 1;\ntype memo_t = c_string[*:8];\n"
			    "type MEMO_T = c_string[*:9];\n",
			    IDLC_OUT_TYPES, &out) > 0);
	CU_ASSERT(strstr(strbuf_str(&types_diags), "would be named MEMO_T_MAX") != NULL);
	strbuf_fini(&out);
}

/* Every name <idl/mig.h> typedefs is one idlc knows <idl/idl.h> defines: a .defs that
 * declares it (as GNU Mach's own .defs files do) never gets a second, different typedef. */
static void
test_mig_h_names(void)
{
	char path[4096], line[512], last[128];
	FILE *f;
	unsigned n = 0;
	bool in_struct = false;

	snprintf(path, sizeof path, "%s/include/idl/mig.h", IDL_TOP_SRCDIR);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	while (fgets(line, sizeof line, f) != NULL) {
		char *semi = strchr(line, ';'), *p, *start;

		if (strncmp(line, "typedef struct", 14) == 0 && strchr(line, '{') != NULL) {
			in_struct = true;
			continue;
		}
		if (in_struct && line[0] == '}')
			in_struct = false;
		else if (strncmp(line, "typedef ", 8) != 0)
			continue;
		if (semi == NULL)
			continue;
		/* The name is the last identifier before the ';' (an array's before its '['). */
		p = strchr(line, '[') != NULL && strchr(line, '[') < semi ? strchr(line, '[')
									  : semi;
		while (p > line && !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			p--;
		start = p;
		while (start > line && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
			start--;
		snprintf(last, sizeof last, "%.*s", (int)(p - start), start);
		if (!emit_types_c_defined(last)) {
			fprintf(stderr,
				"\n    <idl/mig.h> typedefs %s, emit_types.c does not know it\n",
				last);
			CU_FAIL("a typedef of <idl/mig.h> that -types does not know");
		}
		n++;
	}
	fclose(f);
	/* The parse found the typedefs (there are dozens). */
	CU_ASSERT(n > 50);
}

static int
types_cleanup(void)
{
	strbuf_fini(&types_diags);
	return 0;
}

static CU_TestInfo idlc_types_tests[] = {
	{ "shapes", test_shapes },
	{ "included by the headers", test_included },
	{ "bound macro clash", test_macro_clash },
	{ "names of <idl/mig.h>", test_mig_h_names },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_idlc_types = {
	"idlc_types", NULL, types_cleanup, NULL, NULL, idlc_types_tests,
};
