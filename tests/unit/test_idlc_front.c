/*
 * test_idlc_front.c - the compiler's front end through libidlc's API: the lexer, the parser,
 * sema's model and its diagnostics, on in-memory text (no cpp) except where cpp itself is
 * under test.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "idlc.h"

/* Diagnostics of the context under test, one line each, for the assertions. */
static struct strbuf front_diags = STRBUF_INIT;

static void
front_sink(void *data, const char *line)
{
	strbuf_puts(data, line);
}

/* Parses and checks `text` (as file "t.defs") with the given options; *rc gets the result
 * of the last step. */
static struct idlc_ctx *
front_run_opts(const char *text, const struct idlc_options *opts, int *rc)
{
	struct idlc_options defaults;
	struct idlc_ctx *ctx;
	int r;

	if (opts == NULL) {
		memset(&defaults, 0, sizeof defaults);
		opts = &defaults;
	}
	strbuf_reset(&front_diags);
	ctx = idlc_create(opts, front_sink, &front_diags);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	r = idlc_parse_string(ctx, "t.defs", text, strlen(text));
	if (r == 0)
		r = idlc_check(ctx);
	if (rc != NULL)
		*rc = r;
	return ctx;
}

static struct idlc_ctx *
front_run(const char *text, int *rc)
{
	return front_run_opts(text, NULL, rc);
}

static const char *
front_diag_text(void)
{
	return strbuf_str(&front_diags);
}

static bool
front_has(const char *needle)
{
	return strstr(front_diag_text(), needle) != NULL;
}

static unsigned
front_lines(void)
{
	const char *p;
	unsigned n = 0;

	for (p = front_diag_text(); *p != '\0'; p++)
		n += *p == '\n';
	return n;
}

static const struct idlc_routine *
front_routine(struct idlc_ctx *ctx, const char *name)
{
	const struct idlc_routine *rt;

	for (rt = idlc_module(ctx)->routines; rt != NULL; rt = rt->next)
		if (rt->name != NULL && strcmp(rt->name, name) == 0)
			return rt;
	return NULL;
}

static const struct idlc_arg *
front_arg(struct idlc_ctx *ctx, const char *routine, const char *name)
{
	const struct idlc_routine *rt = front_routine(ctx, routine);
	const struct idlc_arg *a;

	if (rt == NULL)
		return NULL;
	for (a = rt->args; a != NULL; a = a->next)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

static const struct idlc_type *
front_type(struct idlc_ctx *ctx, const char *name)
{
	const struct idlc_type *t;

	for (t = idlc_module(ctx)->types; t != NULL; t = t->next)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

#define FRONT_OK(ctx, rc)                                                                          \
	do {                                                                                       \
		if ((rc) != 0)                                                                     \
			fprintf(stderr, "\nunexpected diagnostics:\n%s", front_diag_text());       \
		CU_ASSERT_EQUAL_FATAL((rc), 0);                                                    \
	} while (0)

/* Every scalar built-in and IPC name, with the wire facts sema must give it. */
static void
test_scalar_facts(void)
{
	static const struct {
		const char *type;
		enum idl_wire_type wt;
		uint32_t size;
		bool is_signed;
		const char *c;
	} cases[] = {
		{ "char", IDL_WT_CHAR, 1, false, "char" },
		{ "short", IDL_WT_INT16, 2, true, "short" },
		{ "int", IDL_WT_INT32, 4, true, "int" },
		{ "int64", IDL_WT_INT64, 8, true, "int64_t" },
		{ "uintptr_t", sizeof(void *) == 8 ? IDL_WT_INT64 : IDL_WT_INT32, sizeof(void *),
		  false, "uintptr_t" },
		{ "intptr_t", sizeof(void *) == 8 ? IDL_WT_INT64 : IDL_WT_INT32, sizeof(void *),
		  true, "intptr_t" },
		{ "int32_t", IDL_WT_INT32, 4, true, "int32_t" },
		{ "int64_t", IDL_WT_INT64, 8, true, "int64_t" },
		{ "uint32_t", IDL_WT_INT32, 4, false, "uint32_t" },
		{ "uint64_t", IDL_WT_INT64, 8, false, "uint64_t" },
		{ "unsigned", IDL_WT_INT32, 4, false, "unsigned" },
		{ "boolean_t", IDL_WT_BOOLEAN, 4, false, "boolean_t" },
		{ "natural_t", IDL_WT_INT32, 4, false, "natural_t" },
		{ "integer_t", IDL_WT_INT32, 4, true, "integer_t" },
		{ "kern_return_t", IDL_WT_INT32, 4, true, "kern_return_t" },
		{ "mach_msg_type_number_t", IDL_WT_INT32, 4, false, "mach_msg_type_number_t" },
		{ "mach_msg_id_t", IDL_WT_INT32, 4, true, "mach_msg_id_t" },
		{ "mach_port_seqno_t", IDL_WT_INT32, 4, false, "mach_port_seqno_t" },
		{ "rpc_phys_addr_t", IDL_WT_INT64, 8, false, "rpc_phys_addr_t" },
		{ "i8_t", IDL_WT_INT8, 1, true, "i8_t" },
		{ "byte_t", IDL_WT_BYTE, 1, false, "byte_t" },
		{ "f32_t", IDL_WT_REAL32, 4, false, "f32_t" },
		{ "f64_t", IDL_WT_REAL64, 8, false, "f64_t" },
		{ "real_t", IDL_WT_REAL64, 8, false, "real_t" },
		{ "u16_t", IDL_WT_INT16, 2, false, "u16_t" },
	};
	struct strbuf text = STRBUF_INIT;
	struct idlc_ctx *ctx;
	const struct idlc_arg *a;
	char name[16];
	size_t i;
	int rc;

	strbuf_puts(&text, "subsystem facts 100;\n"
			   "type i8_t = MACH_MSG_TYPE_INTEGER_8;\n"
			   "type u16_t = MACH_MSG_TYPE_INTEGER_16;\n"
			   "type byte_t = MACH_MSG_TYPE_BYTE;\n"
			   "type f32_t = MACH_MSG_TYPE_REAL_32;\n"
			   "type f64_t = MACH_MSG_TYPE_REAL_64;\n"
			   "type real_t = (MACH_MSG_TYPE_REAL, 64);\n"
			   "routine r(server : mach_port_t");
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		strbuf_printf(&text, "; a%zu : %s", i, cases[i].type);
	strbuf_puts(&text, ");\n");
	ctx = front_run(strbuf_str(&text), &rc);
	FRONT_OK(ctx, rc);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(name, sizeof name, "a%zu", i);
		a = front_arg(ctx, "r", name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		CU_ASSERT_PTR_NOT_NULL_FATAL(a->rtype);
		if (a->rtype->wire_type != cases[i].wt || a->rtype->elem_size != cases[i].size ||
		    a->rtype->is_signed != cases[i].is_signed ||
		    strcmp(a->rtype->c_user, cases[i].c) != 0)
			fprintf(stderr, "\n%s: wire %d size %u signed %d c %s\n", cases[i].type,
				a->rtype->wire_type, a->rtype->elem_size, a->rtype->is_signed,
				a->rtype->c_user);
		CU_ASSERT_EQUAL(a->rtype->arg_kind, IDL_ARG_SCALAR);
		CU_ASSERT_EQUAL(a->rtype->wire_type, cases[i].wt);
		CU_ASSERT_EQUAL(a->rtype->elem_size, cases[i].size);
		CU_ASSERT_EQUAL(a->rtype->align, cases[i].size);
		CU_ASSERT_EQUAL(a->rtype->wire_count, 1);
		CU_ASSERT_EQUAL(a->rtype->is_signed, cases[i].is_signed);
		CU_ASSERT_STRING_EQUAL(a->rtype->c_user, cases[i].c);
		CU_ASSERT_STRING_EQUAL(a->rtype->c_server, cases[i].c);
		CU_ASSERT_STRING_EQUAL(a->rtype->c_elem, cases[i].c);
		CU_ASSERT_EQUAL(a->dir, IDL_DIR_IN);
	}
	a = front_arg(ctx, "r", "server");
	CU_ASSERT_EQUAL(a->dir, IDL_DIR_REQUESTPORT);
	CU_ASSERT_EQUAL(a->rtype->arg_kind, IDL_ARG_PORT);
	CU_ASSERT_EQUAL(a->rtype->wire_type, IDL_WT_PORT);
	CU_ASSERT_EQUAL(a->rtype->elem_size, 0);
	CU_ASSERT_EQUAL(a->rtype->wire_count, 1);
	CU_ASSERT_STRING_EQUAL(a->rtype->c_user, "mach_port_t");
	strbuf_fini(&text);
	idlc_destroy(ctx);
}

static void
test_arrays_and_strings(void)
{
	static const char text[] =
		"subsystem arr 100;\n"
		"type big_t = array[200] of char;\n"
		"type ints_t = array[*:1024] of int;\n"
		"type text_t = c_string[*:256];\n"
		"type name_t = c_string[32];\n"
		"type pt_t = struct[2] of int64_t;\n"
		"type grid_t = array[3] of array[4] of short;\n"
		"type rows_t = array[5] of big_t;\n"
		"type kv_t = (MACH_MSG_TYPE_STRING, 8*64);\n"
		"type ud_t = int ctype: my_t;\n"
		"type sv_t = int cusertype: user_t cservertype: server_t;\n"
		"routine r(server : mach_port_t; a : big_t; b : ints_t; c : text_t; d : name_t;\n"
		"	e : pt_t; f : grid_t; g : rows_t; h : kv_t; i : ud_t; j : sv_t;\n"
		"	k : inline_t = array[*:8] of uint64_t);\n";
	struct idlc_ctx *ctx;
	const struct idlc_type *t;
	int rc;

	ctx = front_run(text, &rc);
	FRONT_OK(ctx, rc);

	t = front_arg(ctx, "r", "a")->rtype;
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_FIXED_ARRAY);
	CU_ASSERT_EQUAL(t->wire_type, IDL_WT_CHAR);
	CU_ASSERT_EQUAL(t->elem_size, 1);
	CU_ASSERT_EQUAL(t->wire_count, 200);
	CU_ASSERT_STRING_EQUAL(t->c_user, "big_t");
	CU_ASSERT_STRING_EQUAL(t->c_elem, "char");

	t = front_arg(ctx, "r", "b")->rtype;
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_VAR_ARRAY);
	CU_ASSERT_EQUAL(t->wire_type, IDL_WT_INT32);
	CU_ASSERT_EQUAL(t->elem_size, 4);
	CU_ASSERT_EQUAL(t->wire_count, 1024);
	CU_ASSERT_TRUE(t->is_signed);
	CU_ASSERT_STRING_EQUAL(t->c_elem, "int");

	t = front_arg(ctx, "r", "c")->rtype;
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_CSTRING_VAR);
	CU_ASSERT_EQUAL(t->wire_count, 256);
	CU_ASSERT_EQUAL(t->elem_size, 1);
	CU_ASSERT_STRING_EQUAL(t->c_user, "text_t");
	CU_ASSERT_STRING_EQUAL(t->c_elem, "char");

	t = front_arg(ctx, "r", "d")->rtype;
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_CSTRING_FIXED);
	CU_ASSERT_EQUAL(t->wire_count, 32);

	t = front_arg(ctx, "r", "e")->rtype;
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_FIXED_ARRAY);
	CU_ASSERT_EQUAL(t->kind, IDLC_T_STRUCT_ARRAY);
	CU_ASSERT_EQUAL(t->wire_count, 2);
	CU_ASSERT_EQUAL(t->elem_size, 8);
	CU_ASSERT_EQUAL(t->align, 8);

	/* A fixed array of fixed arrays is one flat array of the innermost element. */
	t = front_arg(ctx, "r", "f")->rtype;
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_FIXED_ARRAY);
	CU_ASSERT_EQUAL(t->wire_type, IDL_WT_INT16);
	CU_ASSERT_EQUAL(t->wire_count, 12);
	CU_ASSERT_STRING_EQUAL(t->c_elem, "short");
	t = front_arg(ctx, "r", "g")->rtype;
	CU_ASSERT_EQUAL(t->wire_count, 1000);
	CU_ASSERT_STRING_EQUAL(t->c_elem, "char");

	t = front_arg(ctx, "r", "h")->rtype;
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_CSTRING_FIXED);
	CU_ASSERT_EQUAL(t->wire_count, 64);

	t = front_arg(ctx, "r", "i")->rtype;
	CU_ASSERT_STRING_EQUAL(t->c_user, "my_t");
	CU_ASSERT_STRING_EQUAL(t->c_server, "my_t");
	CU_ASSERT_STRING_EQUAL(t->c_elem, "my_t");
	t = front_arg(ctx, "r", "j")->rtype;
	CU_ASSERT_STRING_EQUAL(t->c_user, "user_t");
	CU_ASSERT_STRING_EQUAL(t->c_server, "server_t");

	/* An inline declaration names the type and declares it for what follows. */
	t = front_arg(ctx, "r", "k")->rtype;
	CU_ASSERT_STRING_EQUAL(t->name, "inline_t");
	CU_ASSERT_EQUAL(t->arg_kind, IDL_ARG_VAR_ARRAY);
	CU_ASSERT_FALSE(t->is_signed);
	CU_ASSERT_PTR_EQUAL(front_type(ctx, "inline_t"), t);
	idlc_destroy(ctx);
}

static void
test_numbering_and_statements(void)
{
	static const char text[] =
		"SubSystem numbers 4200;\n"
		"UserPrefix u_;\n"
		"serverprefix S_;\n"
		"serverdemux my_demux;\n"
		"import \"a.h\";\n"
		"uimport <b.h>;\n"
		"simport \"c.h\";\n"
		"rcsid \"$Id: x $\";\n"
		"ROUTINE first(server : mach_port_t);\n"
		"skip;\n"
		"Routine second(server : mach_port_t; out x : int; inout y : int);\n"
		"skip 3;\n"
		"waittime 250;\n"
		"simpleroutine third(server : mach_port_t; in z : int);\n"
		"nowaittime;\n"
		"routine fourth(requestport p : mach_port_t);\n";
	struct idlc_ctx *ctx;
	const struct idlc_module *m;
	const struct idlc_routine *rt;
	const struct idlc_import *imp;
	unsigned nskips = 0;
	int rc;

	ctx = front_run(text, &rc);
	FRONT_OK(ctx, rc);
	m = idlc_module(ctx);
	CU_ASSERT_STRING_EQUAL(m->subsystem, "numbers");
	CU_ASSERT_EQUAL(m->base, 4200);
	CU_ASSERT_STRING_EQUAL(m->userprefix, "u_");
	CU_ASSERT_STRING_EQUAL(m->serverprefix, "S_");
	CU_ASSERT_STRING_EQUAL(m->serverdemux, "my_demux");
	CU_ASSERT_STRING_EQUAL(m->rcsid, "\"$Id: x $\"");
	CU_ASSERT_EQUAL(m->nroutines, 8);
	for (rt = m->routines; rt != NULL; rt = rt->next)
		nskips += rt->kind == IDLC_RT_SKIP;
	CU_ASSERT_EQUAL(nskips, 4);

	CU_ASSERT_EQUAL(front_routine(ctx, "first")->number, 0);
	CU_ASSERT_EQUAL(front_routine(ctx, "second")->number, 2);
	CU_ASSERT_EQUAL(front_routine(ctx, "third")->number, 6);
	CU_ASSERT_EQUAL(front_routine(ctx, "fourth")->number, 7);
	CU_ASSERT_EQUAL(front_routine(ctx, "third")->kind, IDLC_RT_SIMPLEROUTINE);
	CU_ASSERT_EQUAL(front_routine(ctx, "second")->nargs, 3);
	CU_ASSERT_EQUAL(front_routine(ctx, "second")->waittime, -1);
	CU_ASSERT_EQUAL(front_routine(ctx, "third")->waittime, 250);
	CU_ASSERT_EQUAL(front_routine(ctx, "fourth")->waittime, -1);

	CU_ASSERT_EQUAL(front_arg(ctx, "second", "server")->dir, IDL_DIR_REQUESTPORT);
	CU_ASSERT_EQUAL(front_arg(ctx, "second", "x")->dir, IDL_DIR_OUT);
	CU_ASSERT_EQUAL(front_arg(ctx, "second", "y")->dir, IDL_DIR_INOUT);
	CU_ASSERT_EQUAL(front_arg(ctx, "third", "z")->dir, IDL_DIR_IN);
	CU_ASSERT_EQUAL(front_arg(ctx, "fourth", "p")->dir, IDL_DIR_REQUESTPORT);
	CU_ASSERT_EQUAL(front_arg(ctx, "second", "x")->dir_written, IDLC_DIR_OUT);
	CU_ASSERT_EQUAL(front_arg(ctx, "second", "server")->dir_written, IDLC_DIR_NONE);

	imp = m->imports;
	CU_ASSERT_PTR_NOT_NULL_FATAL(imp);
	CU_ASSERT_EQUAL(imp->kind, IDLC_IMPORT);
	CU_ASSERT_STRING_EQUAL(imp->file, "\"a.h\"");
	imp = imp->next;
	CU_ASSERT_PTR_NOT_NULL_FATAL(imp);
	CU_ASSERT_EQUAL(imp->kind, IDLC_UIMPORT);
	CU_ASSERT_STRING_EQUAL(imp->file, "<b.h>");
	imp = imp->next;
	CU_ASSERT_PTR_NOT_NULL_FATAL(imp);
	CU_ASSERT_EQUAL(imp->kind, IDLC_SIMPORT);
	CU_ASSERT_PTR_NULL(imp->next);
	idlc_destroy(ctx);
}

static void
test_redefinition(void)
{
	static const char text[] =
		"subsystem redef 1;\n"
		"type v_t = int;\n"
		"routine before(server : mach_port_t; x : v_t);\n"
		"type v_t = int64_t;\n"
		"routine after(server : mach_port_t; x : v_t);\n"
		/* The built-ins repeated word for word, as std_types.defs does: silent. */
		"type int32_t = MACH_MSG_TYPE_INTEGER_32;\n"
		"type mach_port_t = MACH_MSG_TYPE_COPY_SEND;\n"
		"type pointer_t = ^array[] of MACH_MSG_TYPE_BYTE ctype: vm_offset_t;\n"
		"type natural_t = uint32_t;\n";
	struct idlc_ctx *ctx;
	unsigned n = 0;
	const struct idlc_type *t;
	int rc;

	ctx = front_run(text, &rc);
	FRONT_OK(ctx, rc);
	CU_ASSERT_STRING_EQUAL(front_diag_text(),
			       "t.defs:4:6: warning: redefinition of type 'v_t'\n"
			       "t.defs:2:6: note: previous definition of 'v_t' is here\n");
	CU_ASSERT_EQUAL(front_arg(ctx, "before", "x")->rtype->elem_size, 4);
	CU_ASSERT_EQUAL(front_arg(ctx, "after", "x")->rtype->elem_size, 8);
	/* The module lists each name once: the definition in force. */
	for (t = idlc_module(ctx)->types; t != NULL; t = t->next)
		n += strcmp(t->name, "v_t") == 0;
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(front_type(ctx, "v_t")->wire_type, IDL_WT_INT64);
	CU_ASSERT_STRING_EQUAL(idlc_module(ctx)->types->name, "char");
	idlc_destroy(ctx);

	/* A built-in redefined differently warns; -q silences warnings. */
	ctx = front_run("subsystem s 1; type int = MACH_MSG_TYPE_INTEGER_64;", &rc);
	FRONT_OK(ctx, rc);
	CU_ASSERT_STRING_EQUAL(front_diag_text(),
			       "t.defs:1:21: warning: redefinition of built-in type 'int'\n");
	CU_ASSERT_EQUAL(front_type(ctx, "int")->elem_size, 8);
	idlc_destroy(ctx);
}

static void
test_werror_and_quiet(void)
{
	static const char text[] = "subsystem w 1; type a = int; type a = char;";
	struct idlc_options o;
	struct idlc_ctx *ctx;
	int rc;

	memset(&o, 0, sizeof o);
	o.werror = true;
	ctx = front_run_opts(text, &o, &rc);
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_TRUE(front_has("t.defs:1:35: error: redefinition of type 'a' [-Werror]\n"));
	CU_ASSERT_TRUE(front_has("note: previous definition"));
	idlc_destroy(ctx);

	memset(&o, 0, sizeof o);
	o.quiet = true;
	ctx = front_run_opts(text, &o, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(front_diag_text(), "");
	idlc_destroy(ctx);
}

static void
test_diagnostics(void)
{
	static const struct {
		const char *text;
		const char *diag;
	} cases[] = {
		{ "subsystem s 1; simpleroutine x(p : mach_port_t; out y : int);",
		  "t.defs:1:53: error: simpleroutine 'x' has out argument 'y'\n" },
		{ "subsystem s 1;\nroutine x(p : mach_port_t; y : nope_t);",
		  "t.defs:2:32: error: unknown type 'nope_t'\n" },
		{ "subsystem s 1;\nroutine x(p : mach_port_t; y int);",
		  "t.defs:2:30: error: syntax error: unexpected identifier 'int', "
		  "expecting ':'\n" },
		{ "routine x(p : mach_port_t);", "t.defs: error: missing 'subsystem' statement\n" },
		{ "subsystem s 1; routine x(p : mach_port_t); routine x(p : mach_port_t);",
		  "t.defs:1:52: error: duplicate routine 'x'\n"
		  "t.defs:1:24: note: previous definition of 'x' is here\n" },
		{ "subsystem s 1; routine x(p : int);",
		  "t.defs:1:26: error: request port 'p' of routine 'x' has type 'int', which is "
		  "not a port type\n" },
		{ "subsystem s 1; type a = array[*:0] of int;",
		  "t.defs:1:25: error: array bound must be at least 1\n" },
		{ "subsystem s 1; type a = array[*:1073741824] of int64_t;",
		  "t.defs:1:25: error: array bound 1073741824 times element size 8 bytes does not "
		  "fit in 32 bits\n" },
		{ "subsystem s 1; type a = array[2 / 0] of int;",
		  "t.defs:1:33: error: division by zero in constant expression\n" },
		{ "subsystem s 1; type a = c_string[0];",
		  "t.defs:1:25: error: c_string bound must be at least 1\n" },
		{ "subsystem s 1; type v = array[*:2] of int; type a = array[2] of v;",
		  "t.defs:1:53: error: too complicated: an array of variable-size arrays ('v')\n" },
		{ "subsystem s 1; type a = ^array[*:4] of int;",
		  "t.defs:1:25: error: too complicated: '^' of a bounded variable-size array "
		  "('array[*:4] of ...'); use '^array[] of'\n" },
		{ "subsystem s 1; routine x(p : mach_port_t; sreplyport r : int);",
		  "t.defs:1:54: error: sreplyport 'r' of routine 'x' has type 'int', which is not "
		  "a port type\n" },
		{ "subsystem s 1; routine x(p : mach_port_t; servercontexttoken q : int);",
		  "t.defs:1:62: error: 'servercontexttoken' arguments have no meaning off Mach: no "
		  "POSIX transport carries a message trailer (argument 'q' of routine 'x')\n" },
		{ "subsystem s 1; waittime 99999999999;",
		  "t.defs:1:16: error: waittime 99999999999 is too large (at most 2147483647 "
		  "ms)\n" },
		{ "subsystem s 1; type a = int; /* open",
		  "t.defs:1:30: error: unterminated comment\n" },
		{ "subsystem s 1;\n#ident \"x\"\n",
		  "t.defs:2:1: error: unexpected directive '#ident' (after preprocessing only line "
		  "markers, #define and #pragma may remain)\n" },
		{ "subsystem s 1; import \"x.h;\n",
		  "t.defs:1:23: error: missing terminating '\"' character\n"
		  "t.defs:2:1: error: syntax error: unexpected end of file, expecting ';'\n" },
		{ "subsystem s 1; type a = mach_msg_type_integer_32;",
		  "t.defs:1:25: error: unknown type 'mach_msg_type_integer_32'\n" },
		{ "subsystem s 1; type a = MACH_MSG_TYPE_REAL;",
		  "t.defs:1:25: error: MACH_MSG_TYPE_REAL has no size of its own: use the long "
		  "form (MACH_MSG_TYPE_REAL, SIZE)\n" },
		{ "subsystem s 1; type a = (MACH_MSG_TYPE_INTEGER_32, 64);",
		  "t.defs:1:25: error: size 64 does not match MACH_MSG_TYPE_INTEGER_32, "
		  "which is 32 bits\n" },
		{ "subsystem s 1; routine x(p : mach_port_t; d : v = array[*:4] of int; "
		  "dCnt : int);",
		  "t.defs:1:70: error: argument 'dCnt' of routine 'x' has the name of the implicit "
		  "count of 'd'\n" },
		{ "subsystem s 1; procedure x(p : mach_port_t);",
		  "t.defs:1:16: error: 'procedure' (an obsolete CMU MIG routine kind) is not "
		  "supported\n" },
		{ "subsystem KernelUser s 1;",
		  "t.defs:1:11: warning: KernelUser changes nothing in idlkit; ignored\n" },
		{ "subsystem s 1;\n\x01", "t.defs:2:1: error: invalid byte 0x01 in input\n" },
	};
	struct idlc_ctx *ctx;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ctx = front_run(cases[i].text, NULL);
		if (strcmp(front_diag_text(), cases[i].diag) != 0)
			fprintf(stderr, "\ncase %zu: got:\n%sexpected:\n%s", i, front_diag_text(),
				cases[i].diag);
		CU_ASSERT_STRING_EQUAL(front_diag_text(), cases[i].diag);
		idlc_destroy(ctx);
	}
}

/* Several errors in one run, the cap, and counting past it. */
static void
test_recovery_and_cap(void)
{
	struct strbuf text = STRBUF_INIT;
	struct idlc_options o;
	struct idlc_ctx *ctx;
	int rc, i;

	ctx = front_run("subsystem s 1;\nroutine a(p : mach_port_t;;\ntype t = ;\n"
			"routine b(p : mach_port_t) x;\nroutine c(p : mach_port_t);\n",
			&rc);
	CU_ASSERT_EQUAL(rc, 3);
	CU_ASSERT_EQUAL(front_lines(), 3);
	CU_ASSERT_TRUE(front_has("t.defs:2:27: error: syntax error"));
	CU_ASSERT_TRUE(front_has("t.defs:3:10: error: syntax error"));
	CU_ASSERT_TRUE(front_has("t.defs:4:28: error: syntax error"));
	idlc_destroy(ctx);

	strbuf_puts(&text, "subsystem s 1;\n");
	for (i = 0; i < 10; i++)
		strbuf_printf(&text, "routine r%d(p : mach_port_t; x : nope%d);\n", i, i);
	memset(&o, 0, sizeof o);
	o.max_errors = 3;
	ctx = front_run_opts(strbuf_str(&text), &o, &rc);
	CU_ASSERT_EQUAL(front_lines(), 4);
	CU_ASSERT_TRUE(front_has("t.defs:5:"));
	CU_ASSERT_TRUE(front_has("error: too many errors; stopping\n"));
	CU_ASSERT_FALSE(front_has("nope3"));
	CU_ASSERT_TRUE(idlc_error_count(ctx) >= 4);
	CU_ASSERT_TRUE(rc >= 4);
	idlc_destroy(ctx);
	strbuf_fini(&text);
}

/* Line markers and #line move locations; #define and #pragma lines are skipped. */
static void
test_line_markers(void)
{
	static const char text[] = "# 1 \"main.defs\"\n"
				   "subsystem s 1;\n"
				   "#define FOO 1\n"
				   "#pragma whatever\n"
				   "# 1 \"inc/types.defs\" 1\n"
				   "type a = int;\n"
				   "\n"
				   "  type b = nope_t;\n"
				   "# 5 \"main.defs\" 2\n"
				   "routine x(p : mach_port_t; y : also_nope);\n"
				   "#line 40 \"other\\\\dir.defs\"\n"
				   "routine z(p : mach_port_t; y : third_nope);\n";
	struct idlc_ctx *ctx;

	ctx = front_run(text, NULL);
	CU_ASSERT_STRING_EQUAL(front_diag_text(),
			       "inc/types.defs:3:12: error: unknown type 'nope_t'\n"
			       "main.defs:5:32: error: unknown type 'also_nope'\n"
			       "other\\dir.defs:40:32: error: unknown type 'third_nope'\n");
	idlc_destroy(ctx);
}

/* The special start states: waittime's String, import's FileName, rcsid's QString. */
static void
test_lexer_states(void)
{
	static const char text[] = "subsystem s 1;\n"
				   "waittime 1500;\n"
				   "msgoption MACH_MSG_OPTION_NONE;\n"
				   "import <sys/types.h>;\n"
				   "routine in_(p : mach_port_t);\n"
				   "routine r(p : mach_port_t; waittime_ : int);\n";
	struct idlc_ctx *ctx;
	int rc;

	ctx = front_run(text, &rc);
	FRONT_OK(ctx, rc);
	CU_ASSERT_STRING_EQUAL(idlc_module(ctx)->waittime, "1500");
	CU_ASSERT_EQUAL(front_routine(ctx, "r")->waittime, 1500);
	CU_ASSERT_STRING_EQUAL(idlc_module(ctx)->imports->file, "<sys/types.h>");
	idlc_destroy(ctx);

	/* A keyword is reserved: an argument cannot be called `in`. */
	ctx = front_run("subsystem s 1; routine r(p : mach_port_t; in : int);", &rc);
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_TRUE(front_has("syntax error: unexpected ':', expecting identifier"));
	idlc_destroy(ctx);
}

/* Types idlkit cannot carry may be declared; using them is one error each. */
static void
test_unsupported_declared(void)
{
	static const char text[] =
		"subsystem s 1;\n"
		"type ool_t = ^array[] of char;\n"
		"type poly_t = polymorphic;\n"
		"type tr_t = mach_port_t intran: tr_t conv(mach_port_t) destructor: d(tr_t);\n"
		"type st_t = struct { int a; char b; };\n"
		"type nat_t = PointerTo(char *);\n"
		"type pair_t = MACH_MSG_TYPE_MOVE_SEND | MACH_MSG_TYPE_PORT_SEND;\n"
		"type long_t = (MACH_MSG_TYPE_INTEGER_32, 32, dealloc);\n"
		"routine ok(p : mach_port_t);\n";
	struct idlc_ctx *ctx;
	const struct idlc_type *t;
	int rc;

	ctx = front_run(text, &rc);
	FRONT_OK(ctx, rc);
	CU_ASSERT_STRING_EQUAL(front_diag_text(), "");
	t = front_type(ctx, "tr_t");
	CU_ASSERT_STRING_EQUAL(t->intran, "conv");
	CU_ASSERT_STRING_EQUAL(t->intran_type, "tr_t");
	CU_ASSERT_STRING_EQUAL(t->intran_arg, "mach_port_t");
	CU_ASSERT_STRING_EQUAL(t->destructor, "d");
	CU_ASSERT_PTR_NULL(t->unsupported);
	t = front_type(ctx, "st_t");
	CU_ASSERT_EQUAL(t->kind, IDLC_T_STRUCT_FIELDS);
	CU_ASSERT_STRING_EQUAL(t->fields->name, "a");
	CU_ASSERT_STRING_EQUAL(t->fields->next->type_name, "char");
	t = front_type(ctx, "nat_t");
	CU_ASSERT_EQUAL(t->kind, IDLC_T_NATIVE);
	CU_ASSERT_STRING_EQUAL(t->ref, "char *");
	t = front_type(ctx, "pair_t");
	CU_ASSERT_EQUAL(t->ipc, IDLC_IPC_MOVE_SEND);
	CU_ASSERT_EQUAL(t->ipc_out, IDLC_IPC_PORT_SEND);
	t = front_type(ctx, "long_t");
	CU_ASSERT_EQUAL(t->flags, IDLC_AF_DEALLOC);
	idlc_destroy(ctx);

	ctx = front_run("subsystem s 1; type nat_t = PointerTo(char *); type b_t = "
			"MACH_MSG_TYPE_BIT;\nroutine r(p : mach_port_t; a : nat_t; b : b_t);",
			&rc);
	CU_ASSERT_EQUAL(rc, 2);
	CU_ASSERT_TRUE(front_has("t.defs:2:28: error: an Apple native type (PointerTo: a C value "
				 "with no wire form) is not supported"));
	CU_ASSERT_TRUE(front_has("t.defs:2:39: error: the IPC type MACH_MSG_TYPE_BIT (no wire "
				 "form in idlkit) is not supported"));
	idlc_destroy(ctx);
}

static void
test_many_routines(void)
{
	struct strbuf text = STRBUF_INIT;
	struct idlc_ctx *ctx;
	int rc, i;

	strbuf_puts(&text, "subsystem s 1000;\nskip 99;\n");
	for (i = 0; i < 3; i++)
		strbuf_printf(&text, "routine r%d(p : mach_port_t);\n", i);
	ctx = front_run(strbuf_str(&text), &rc);
	FRONT_OK(ctx, rc);
	CU_ASSERT_STRING_EQUAL(front_diag_text(),
			       "t.defs:4:9: warning: more than 100 routines: reply ids "
			       "(request id + 100) collide with request ids of this subsystem\n");
	CU_ASSERT_EQUAL(idlc_module(ctx)->nroutines, 102);
	CU_ASSERT_EQUAL(front_routine(ctx, "r2")->number, 101);
	idlc_destroy(ctx);
	strbuf_fini(&text);

	ctx = front_run("subsystem s 1000; skip 4000000000;", &rc);
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_TRUE(front_has("error: too many routines"));
	idlc_destroy(ctx);
}

/* A real preprocessor run: an include, a failing cpp, a missing cpp. */
static void
test_cpp(void)
{
	char dir[] = "/tmp/idlc-front.XXXXXX";
	char main_path[64], inc_path[64];
	struct idlc_options o;
	struct idlc_ctx *ctx;
	const char *args[2];
	FILE *f;
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(main_path, sizeof main_path, "%s/m.defs", dir);
	snprintf(inc_path, sizeof inc_path, "%s/inc.defs", dir);
	f = fopen(inc_path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("// a C++ comment: cpp must not run in -ansi mode\n"
	      "type v_t = VALUE_T;\n"
	      "type w_t = nope_t;\n",
	      f);
	fclose(f);
	f = fopen(main_path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("subsystem m 10;\n#include \"inc.defs\"\nroutine r(p : mach_port_t; v : v_t);\n", f);
	fclose(f);

	memset(&o, 0, sizeof o);
	args[0] = "-DVALUE_T=int64_t";
	o.cpp_args = args;
	o.ncpp_args = 1;
	strbuf_reset(&front_diags);
	ctx = idlc_create(&o, front_sink, &front_diags);
	rc = idlc_parse_file(ctx, main_path);
	CU_ASSERT_EQUAL(rc, 0);
	rc = idlc_sema(ctx, idlc_module_mut(ctx));
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_TRUE(front_has("/inc.defs:3:12: error: unknown type 'nope_t'\n"));
	idlc_destroy(ctx);

	/* A preprocessor that fails is an error, and nothing is parsed. */
	o.cpp = "false";
	strbuf_reset(&front_diags);
	ctx = idlc_create(&o, front_sink, &front_diags);
	rc = idlc_parse_file(ctx, main_path);
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_TRUE(front_has("m.defs: error: the preprocessor 'false' failed "
				 "(exit status 1)\n"));
	CU_ASSERT_EQUAL(idlc_check(ctx), 1);
	idlc_destroy(ctx);

	o.cpp = "/nonexistent/cpp -E";
	strbuf_reset(&front_diags);
	ctx = idlc_create(&o, front_sink, &front_diags);
	rc = idlc_parse_file(ctx, main_path);
	CU_ASSERT_EQUAL(rc, 1);
	/* posix_spawn reports the missing command, or (where it is fork and exec, as under
	 * valgrind) the child fails with an exit status (127, or valgrind's own). */
	CU_ASSERT_TRUE(front_has("error: cannot run the preprocessor '/nonexistent/cpp': No such "
				 "file or directory\n") ||
		       front_has("error: the preprocessor '/nonexistent/cpp' failed "
				 "(exit status "));
	idlc_destroy(ctx);

	unlink(inc_path);
	unlink(main_path);
	rmdir(dir);
}

static CU_TestInfo front_tests[] = {
	{ "scalar_facts", test_scalar_facts },
	{ "arrays_and_strings", test_arrays_and_strings },
	{ "numbering_and_statements", test_numbering_and_statements },
	{ "redefinition", test_redefinition },
	{ "werror_and_quiet", test_werror_and_quiet },
	{ "diagnostics", test_diagnostics },
	{ "recovery_and_cap", test_recovery_and_cap },
	{ "line_markers", test_line_markers },
	{ "lexer_states", test_lexer_states },
	{ "unsupported_declared", test_unsupported_declared },
	{ "many_routines", test_many_routines },
	{ "cpp", test_cpp },
	CU_TEST_INFO_NULL,
};

static int
front_cleanup(void)
{
	strbuf_fini(&front_diags);
	return 0;
}

CU_SuiteInfo idl_suite_idlc_front = {
	"idlc_front", NULL, front_cleanup, NULL, NULL, front_tests,
};
