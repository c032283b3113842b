/*
 * test_idlc_middle.c - the compiler's middle end through libidlc: the facts of arguments
 * (middle.h), samecount's leaders and warnings, and the descriptor table built in memory, the
 * one idlcall takes with idlc_subsystem() and idlc prints into generated code.
 */
#include <config.h>

#include <string.h>

#include <CUnit/CUnit.h>

#include "middle.h"

static struct strbuf mid_diags = STRBUF_INIT;

static void
mid_sink(void *data, const char *line)
{
	strbuf_puts(data, line);
}

/* A checked context for `text`, or one with errors (*rc > 0). */
static struct idlc_ctx *
mid_run(const char *text, int *rc)
{
	struct idlc_options opts;
	struct idlc_ctx *ctx;

	memset(&opts, 0, sizeof opts);
	strbuf_reset(&mid_diags);
	ctx = idlc_create(&opts, mid_sink, &mid_diags);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	*rc = idlc_parse_string(ctx, "m.defs", text, strlen(text));
	if (*rc == 0)
		*rc = idlc_check(ctx);
	return ctx;
}

static const struct idlc_arg *
mid_arg(struct idlc_ctx *ctx, const char *routine, const char *name)
{
	for (const struct idlc_routine *rt = idlc_module(ctx)->routines; rt != NULL; rt = rt->next)
		if (rt->name != NULL && strcmp(rt->name, routine) == 0)
			for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
				if (strcmp(a->name, name) == 0)
					return a;
	CU_FAIL("no such argument");
	return NULL;
}

/* FNV-1a 64, written again here from its definition. */
static uint64_t
mid_fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	while (*s != '\0') {
		h ^= (uint8_t)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

static const char mid_defs[] =
	"subsystem m 100;\n"
	"type vals_t = array[*:8] of int;\n"
	"type few_t = array[*:6] of int;\n"
	"type ports_t = array[*:4] of mach_port_t;\n"
	"type pair_t = array[2] of mach_port_t;\n"
	"type range_t = array[2] of int64_t;\n"
	"type ranges_t = array[*:16] of range_t;\n"
	"routine get(server : mach_port_t; out a : vals_t; out p : ports_t, samecount;\n"
	"	out b : few_t, SameCount; out q : pair_t);\n"
	"routine put(server : mach_port_t; a : vals_t; p : ports_t, samecount; n : int);\n"
	"routine ranges(server : mach_port_t; r : ranges_t; out s : ranges_t);\n";

/* Each argument's facts, as the emitters and the table read them. */
static void
test_facts(void)
{
	int rc;
	struct idlc_ctx *ctx = mid_run(mid_defs, &rc);
	const struct idlc_arg *a, *p, *b, *q;

	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(mid_diags.len, 0);
	a = mid_arg(ctx, "get", "a");
	p = mid_arg(ctx, "get", "p");
	b = mid_arg(ctx, "get", "b");
	q = mid_arg(ctx, "get", "q");
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT(idlc_is(a, IDLC_AK_TRAVELS | IDLC_AK_REPLY | IDLC_AK_VAR | IDLC_AK_COUNTED |
				     IDLC_AK_LEADER | IDLC_AK_CAPACITY | IDLC_AK_USER_PARAM |
				     IDLC_AK_SERVER_PARAM));
	CU_ASSERT(!idlc_is(a, IDLC_AK_REQUEST) && !idlc_is(a, IDLC_AK_SAMECOUNT));
	/* The count is the first array's; the routine's room is the smallest of the three. */
	CU_ASSERT_PTR_NULL(a->leader);
	CU_ASSERT_PTR_EQUAL(p->leader, a);
	CU_ASSERT_PTR_EQUAL(b->leader, a);
	CU_ASSERT_EQUAL(a->shared_bound, 4);
	CU_ASSERT(idlc_is(p, IDLC_AK_DESC | IDLC_AK_PORTS | IDLC_AK_INLINE_PORTS | IDLC_AK_COUNTED |
				     IDLC_AK_SAMECOUNT | IDLC_AK_CAPACITY | IDLC_AK_SERVER_LOCAL));
	CU_ASSERT(!idlc_is(p, IDLC_AK_OOL_DATA));
	CU_ASSERT(idlc_is(b, IDLC_AK_VAR | IDLC_AK_SAMECOUNT));
	/* A fixed pair of ports: no count, no room to say. */
	CU_ASSERT(idlc_is(q, IDLC_AK_INLINE_PORTS) && !idlc_is(q, IDLC_AK_COUNTED) &&
		  !idlc_is(q, IDLC_AK_CAPACITY));
	CU_ASSERT(idlc_any_arg(idlc_module(ctx)->routines, IDLC_AK_INLINE_PORTS | IDLC_AK_REPLY));
	/* The request port is a parameter of both sides and travels not. */
	a = mid_arg(ctx, "get", "server");
	CU_ASSERT(idlc_is(a, IDLC_AK_USER_PARAM | IDLC_AK_SERVER_PARAM));
	CU_ASSERT(!idlc_is(a, IDLC_AK_TRAVELS));
	/* An in inline array of ports sharing an in count. */
	p = mid_arg(ctx, "put", "p");
	CU_ASSERT(idlc_is(p, IDLC_AK_REQUEST | IDLC_AK_INLINE_PORTS | IDLC_AK_SAMECOUNT));
	CU_ASSERT(!idlc_is(p, IDLC_AK_CAPACITY));
	CU_ASSERT_STRING_EQUAL(mid_arg(ctx, "ranges", "r")->c_elem, "range_t");
	CU_ASSERT(idlc_module(ctx)->needs_ool);
	/* Arrays a caller may pass less of are element pointers to the client (const when
	 * in, but not to arrays of arrays); the server routine keeps the array type. */
	a = mid_arg(ctx, "put", "a");
	CU_ASSERT(idlc_is(a, IDLC_AK_USER_ELEM) && !idlc_is(a, IDLC_AK_SERVER_ELEM));
	CU_ASSERT_STRING_EQUAL(a->c_type[IDLC_USER], "const int");
	CU_ASSERT_STRING_EQUAL(a->c_type[IDLC_SERVER], "vals_t");
	a = mid_arg(ctx, "get", "a");
	CU_ASSERT(idlc_is(a, IDLC_AK_USER_ELEM));
	CU_ASSERT_STRING_EQUAL(a->c_type[IDLC_USER], "int");
	a = mid_arg(ctx, "ranges", "r");
	CU_ASSERT(idlc_is(a, IDLC_AK_USER_ELEM));
	CU_ASSERT_STRING_EQUAL(a->c_type[IDLC_USER], "range_t");
	/* An out fixed pair keeps its type: the caller's buffer holds the whole pair. */
	CU_ASSERT(!idlc_is(mid_arg(ctx, "get", "q"), IDLC_AK_USER_ELEM));
	idlc_destroy(ctx);
}

/* The table: what generated code and idlcall carry, row by row. */
static void
test_table(void)
{
	int rc;
	struct idlc_ctx *ctx = mid_run(mid_defs, &rc);
	const struct idl_subsystem *ss = idlc_subsystem(ctx);
	const struct idl_routine_desc *get, *ranges;

	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ss);
	CU_ASSERT_PTR_EQUAL(ss, idlc_module(ctx)->desc);
	CU_ASSERT_EQUAL(ss->magic, IDL_SUBSYSTEM_MAGIC);
	CU_ASSERT_STRING_EQUAL(ss->name, "m");
	CU_ASSERT_EQUAL(ss->base, 100);
	CU_ASSERT_EQUAL_FATAL(ss->nroutines, 3);
	get = &ss->routines[0];
	CU_ASSERT_EQUAL_FATAL(get->nargs, 5);
	CU_ASSERT_EQUAL(get->args[1].flags & IDL_ARGF_SAMECOUNT, 0);
	CU_ASSERT_EQUAL(get->args[2].flags, IDL_ARGF_INLINE | IDL_ARGF_SAMECOUNT);
	CU_ASSERT_EQUAL(get->args[2].kind, IDL_ARG_OOL);
	CU_ASSERT_EQUAL(get->args[2].wire_type, IDL_WT_PORT);
	CU_ASSERT_EQUAL(get->args[2].count, 4);
	CU_ASSERT_EQUAL(get->args[2].disposition, 19);
	CU_ASSERT_NOT_EQUAL(get->args[3].flags & IDL_ARGF_SAMECOUNT, 0);
	CU_ASSERT_EQUAL(get->args[4].flags, IDL_ARGF_INLINE | IDL_ARGF_FIXED);
	/* The hash is the wire contract's, from the row, and its canonical form is the
	 * header's: samecount and names are not part of it. */
	CU_ASSERT_EQUAL(get->sig_hash, idl_routine_sig_hash(get));
	CU_ASSERT_EQUAL(get->sig_hash, idlc_module(ctx)->routines->sig_hash);
	CU_ASSERT_EQUAL(get->sig_hash, mid_fnv1a("0 get routine(requestport port port 0 1;"
						 "out var int32 4 8;out ool port 0 4;"
						 "out var int32 4 6;out ool port 0 2;)"));
	/* A variable array of fixed arrays: records of the inner array, counted as such. */
	ranges = &ss->routines[2];
	CU_ASSERT_EQUAL(ranges->args[1].kind, IDL_ARG_VAR_ARRAY);
	CU_ASSERT_EQUAL(ranges->args[1].wire_type, IDL_WT_STRUCT);
	CU_ASSERT_EQUAL(ranges->args[1].elem_size, 16);
	CU_ASSERT_EQUAL(ranges->args[1].count, 16);
	CU_ASSERT_STRING_EQUAL(ranges->args[1].ctype, "range_t");
	CU_ASSERT_EQUAL(ranges->req_max, ranges->req_fixed + 16 * 16);
	idlc_destroy(ctx);
}

/* samecount where it cannot hold: ignored with a warning, a count of its own kept. */
static void
test_samecount_ignored(void)
{
	int rc;
	struct idlc_ctx *ctx =
		mid_run("subsystem m 100;\n"
			"type vals_t = array[*:8] of int;\n"
			"routine a(server : mach_port_t; n : int; x : vals_t, samecount);\n"
			"routine b(server : mach_port_t; x : vals_t;\n"
			"	out y : vals_t, samecount);\n",
			&rc);

	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(strbuf_str(&mid_diags),
		       "m.defs:3:42: warning: 'samecount' on argument 'x' of routine "
		       "'a' is ignored: the argument before it has no count to share"));
	CU_ASSERT_PTR_NOT_NULL(strstr(strbuf_str(&mid_diags), "it is out and 'x', whose count"));
	CU_ASSERT(!idlc_is(mid_arg(ctx, "a", "x"), IDLC_AK_SAMECOUNT));
	CU_ASSERT_PTR_NULL(mid_arg(ctx, "b", "y")->leader);
	CU_ASSERT_EQUAL(idlc_subsystem(ctx)->routines[1].args[2].flags & IDL_ARGF_SAMECOUNT, 0);
	idlc_destroy(ctx);
}

/* Errors leave no table, and the table counts arguments in 8 bits. */
static void
test_no_table(void)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;
	struct idlc_ctx *ctx = mid_run("subsystem m 100;\n"
				       "routine a(server : mach_port_t; x : nosuch_t);\n",
				       &rc);

	CU_ASSERT(rc > 0);
	CU_ASSERT_PTR_NULL(idlc_subsystem(ctx));
	idlc_destroy(ctx);
	strbuf_puts(&sb, "subsystem m 100;\nroutine many(server : mach_port_t");
	for (int i = 0; i < 255; i++)
		strbuf_printf(&sb, "; a%d : int", i);
	strbuf_puts(&sb, ");\n");
	ctx = mid_run(strbuf_str(&sb), &rc);
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(strbuf_str(&mid_diags), "routine 'many' has 256 arguments"));
	CU_ASSERT_PTR_NULL(idlc_subsystem(ctx));
	idlc_destroy(ctx);
	strbuf_fini(&sb);
}

static int
mid_cleanup(void)
{
	strbuf_fini(&mid_diags);
	return 0;
}

static CU_TestInfo idlc_middle_tests[] = {
	{ "argument facts", test_facts },
	{ "descriptor table", test_table },
	{ "samecount ignored", test_samecount_ignored },
	{ "no table", test_no_table },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_idlc_middle = {
	"idlc_middle", NULL, mid_cleanup, NULL, NULL, idlc_middle_tests,
};
