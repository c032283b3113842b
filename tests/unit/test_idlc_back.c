/*
 * test_idlc_back.c - the compiler's back end through libidlc's API: layout, signature
 * hashes, generated text, and file output that leaves nothing behind on failure.
 *
 * The module under test is built by hand, as sema would leave it, so these tests pin the
 * back end's contract independently of the front end; the golden files test both together.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "idlc.h"

/* Diagnostics of the context under test, kept for the assertions. */
static struct strbuf back_diags = STRBUF_INIT;

static void
back_sink(void *data, const char *line)
{
	strbuf_puts(data, line);
}

static struct idlc_ctx *
back_ctx(const struct idlc_options *opts)
{
	struct idlc_options defaults;

	if (opts == NULL) {
		memset(&defaults, 0, sizeof defaults);
		opts = &defaults;
	}
	strbuf_reset(&back_diags);
	return idlc_create(opts, back_sink, &back_diags);
}

/* A resolved type, as sema leaves it. */
static struct idlc_type *
back_type(struct idlc_ctx *ctx, const char *name, enum idl_arg_kind kind, enum idl_wire_type wt,
	  uint32_t elem_size, uint32_t count, const char *c, const char *c_elem)
{
	struct idlc_type *t = idlc_alloc(ctx, sizeof *t);

	t->kind = kind == IDL_ARG_VAR_ARRAY	  ? IDLC_T_ARRAY_VAR
		  : kind == IDL_ARG_FIXED_ARRAY	  ? IDLC_T_ARRAY_FIXED
		  : kind == IDL_ARG_CSTRING_FIXED ? IDLC_T_CSTRING_FIXED
		  : kind == IDL_ARG_CSTRING_VAR	  ? IDLC_T_CSTRING_VAR
						  : IDLC_T_IPC;
	t->name = name;
	t->resolved = true;
	t->arg_kind = kind;
	t->wire_type = wt;
	t->is_signed =
		wt == IDL_WT_INT8 || wt == IDL_WT_INT16 || wt == IDL_WT_INT32 || wt == IDL_WT_INT64;
	t->elem_size = elem_size;
	t->wire_count = count;
	t->align = elem_size >= 8 ? 8 : elem_size;
	t->c_user = c;
	t->c_server = c;
	t->c_elem = c_elem;
	return t;
}

static struct idlc_arg *
back_arg(struct idlc_ctx *ctx, struct idlc_routine *rt, const char *name, enum idl_arg_dir dir,
	 struct idlc_type *t)
{
	struct idlc_arg *a = idlc_alloc(ctx, sizeof *a), **p;

	a->name = name;
	a->dir = dir;
	a->dir_written = dir == IDL_DIR_REQUESTPORT ? IDLC_DIR_NONE
			 : dir == IDL_DIR_OUT	    ? IDLC_DIR_OUT
			 : dir == IDL_DIR_INOUT	    ? IDLC_DIR_INOUT
						    : IDLC_DIR_IN;
	a->type = t;
	a->rtype = t;
	for (p = &rt->args; *p != NULL; p = &(*p)->next)
		;
	*p = a;
	rt->nargs++;
	return a;
}

static struct idlc_routine *
back_routine(struct idlc_ctx *ctx, struct idlc_module *m, const char *name,
	     enum idlc_routine_kind kind)
{
	struct idlc_routine *rt = idlc_alloc(ctx, sizeof *rt), **p;

	rt->kind = kind;
	rt->name = name;
	rt->number = m->nroutines++;
	rt->waittime = -1;
	for (p = &m->routines; *p != NULL; p = &(*p)->next)
		;
	*p = rt;
	return rt;
}

/*
 * The module "calc", base 100:
 *   0 mixed(server; c : int8; s : int16; q : int64; out d : double; out f : float;
 *           out ok : boolean)
 *   1 add(server; a : int; b : int; out sum : int)
 *   2 skip
 *   3 vec(server; data : array[*:16] of int; name : c_string[*:32];
 *         out r : array[*:8] of int64; out t : c_string[*:10]; out fx : array[3] of int16)
 *   4 simpleroutine note(server; v : int)
 */
static struct idlc_module *
back_calc(struct idlc_ctx *ctx)
{
	struct idlc_module *m = idlc_module_mut(ctx);
	struct idlc_type *port =
		back_type(ctx, "mach_port_t", IDL_ARG_PORT, IDL_WT_PORT, 0, 1, "mach_port_t", NULL);
	struct idlc_type *i32 =
		back_type(ctx, "int", IDL_ARG_SCALAR, IDL_WT_INT32, 4, 1, "int", "int");
	struct idlc_routine *rt;

	m->input_name = "calc.defs";
	m->subsystem = "calc";
	m->base = 100;
	m->userprefix = "calc_";
	m->serverprefix = "S_calc_";

	rt = back_routine(ctx, m, "mixed", IDLC_RT_ROUTINE);
	back_arg(ctx, rt, "server", IDL_DIR_REQUESTPORT, port);
	back_arg(ctx, rt, "c", IDL_DIR_IN,
		 back_type(ctx, "int8_t", IDL_ARG_SCALAR, IDL_WT_INT8, 1, 1, "int8_t", NULL));
	back_arg(ctx, rt, "s", IDL_DIR_IN,
		 back_type(ctx, "int16_t", IDL_ARG_SCALAR, IDL_WT_INT16, 2, 1, "int16_t", NULL));
	back_arg(ctx, rt, "q", IDL_DIR_IN,
		 back_type(ctx, "int64_t", IDL_ARG_SCALAR, IDL_WT_INT64, 8, 1, "int64_t", NULL));
	back_arg(ctx, rt, "d", IDL_DIR_OUT,
		 back_type(ctx, "double", IDL_ARG_SCALAR, IDL_WT_REAL64, 8, 1, "double", NULL));
	back_arg(ctx, rt, "f", IDL_DIR_OUT,
		 back_type(ctx, "float", IDL_ARG_SCALAR, IDL_WT_REAL32, 4, 1, "float", NULL));
	back_arg(ctx, rt, "ok", IDL_DIR_OUT,
		 back_type(ctx, "boolean_t", IDL_ARG_SCALAR, IDL_WT_BOOLEAN, 4, 1, "boolean_t",
			   NULL));

	rt = back_routine(ctx, m, "add", IDLC_RT_ROUTINE);
	back_arg(ctx, rt, "server", IDL_DIR_REQUESTPORT, port);
	back_arg(ctx, rt, "a", IDL_DIR_IN, i32);
	back_arg(ctx, rt, "b", IDL_DIR_IN, i32);
	back_arg(ctx, rt, "sum", IDL_DIR_OUT, i32);

	back_routine(ctx, m, NULL, IDLC_RT_SKIP);

	rt = back_routine(ctx, m, "vec", IDLC_RT_ROUTINE);
	back_arg(ctx, rt, "server", IDL_DIR_REQUESTPORT, port);
	back_arg(ctx, rt, "data", IDL_DIR_IN,
		 back_type(ctx, NULL, IDL_ARG_VAR_ARRAY, IDL_WT_INT32, 4, 16, "int", "int"));
	back_arg(ctx, rt, "name", IDL_DIR_IN,
		 back_type(ctx, NULL, IDL_ARG_CSTRING_VAR, IDL_WT_CHAR, 1, 32, "char", "char"));
	back_arg(ctx, rt, "r", IDL_DIR_OUT,
		 back_type(ctx, NULL, IDL_ARG_VAR_ARRAY, IDL_WT_INT64, 8, 8, "int64_t", "int64_t"));
	back_arg(ctx, rt, "t", IDL_DIR_OUT,
		 back_type(ctx, NULL, IDL_ARG_CSTRING_VAR, IDL_WT_CHAR, 1, 10, "char", "char"));
	back_arg(ctx, rt, "fx", IDL_DIR_OUT,
		 back_type(ctx, NULL, IDL_ARG_FIXED_ARRAY, IDL_WT_INT16, 2, 3, "int16_t",
			   "int16_t"));

	rt = back_routine(ctx, m, "note", IDLC_RT_SIMPLEROUTINE);
	back_arg(ctx, rt, "server", IDL_DIR_REQUESTPORT, port);
	back_arg(ctx, rt, "v", IDL_DIR_IN, i32);
	return m;
}

static struct idlc_routine *
back_find(struct idlc_module *m, const char *name)
{
	for (struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next)
		if (rt->name != NULL && strcmp(rt->name, name) == 0)
			return rt;
	return NULL;
}

static struct idlc_arg *
back_find_arg(struct idlc_routine *rt, const char *name)
{
	for (struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

/* A context with calc built and laid out, or NULL (after a CUnit failure). */
static struct idlc_ctx *
back_calc_ctx(const struct idlc_options *opts)
{
	struct idlc_ctx *ctx = back_ctx(opts);

	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	CU_ASSERT_EQUAL(idlc_middle(ctx, back_calc(ctx)), 0);
	CU_ASSERT_EQUAL(back_diags.len, 0);
	return ctx;
}

static void
test_layout_scalars(void)
{
	struct idlc_ctx *ctx = back_calc_ctx(NULL);
	struct idlc_module *m = idlc_module_mut(ctx);
	struct idlc_routine *rt = back_find(m, "mixed");

	/* int8 at 24, int16 aligned to 26, int64 aligned to 32; the fixed part ends at 40. */
	CU_ASSERT_EQUAL(back_find_arg(rt, "server")->req_offset, IDL_NO_OFFSET);
	CU_ASSERT_EQUAL(back_find_arg(rt, "c")->req_offset, 24);
	CU_ASSERT_EQUAL(back_find_arg(rt, "s")->req_offset, 26);
	CU_ASSERT_EQUAL(back_find_arg(rt, "q")->req_offset, 32);
	CU_ASSERT_EQUAL(back_find_arg(rt, "q")->rep_offset, IDL_NO_OFFSET);
	CU_ASSERT_EQUAL(rt->req_fixed, 40);
	CU_ASSERT_EQUAL(rt->req_max, 40);
	CU_ASSERT_EQUAL(back_find_arg(rt, "d")->rep_offset, 24);
	CU_ASSERT_EQUAL(back_find_arg(rt, "f")->rep_offset, 32);
	CU_ASSERT_EQUAL(back_find_arg(rt, "ok")->rep_offset, 36);
	CU_ASSERT_EQUAL(rt->rep_fixed, 40);
	CU_ASSERT_EQUAL(rt->rep_max, 40);

	rt = back_find(m, "add");
	CU_ASSERT_EQUAL(back_find_arg(rt, "a")->req_offset, 24);
	CU_ASSERT_EQUAL(back_find_arg(rt, "b")->req_offset, 28);
	CU_ASSERT_EQUAL(back_find_arg(rt, "sum")->rep_offset, 24);
	CU_ASSERT_EQUAL(rt->req_fixed, 32);
	CU_ASSERT_EQUAL(rt->rep_max, 32);

	/* A simpleroutine has no reply at all. */
	rt = back_find(m, "note");
	CU_ASSERT_EQUAL(rt->req_max, 32);
	CU_ASSERT_EQUAL(rt->rep_fixed, 0);
	CU_ASSERT_EQUAL(rt->rep_max, 0);
	idlc_destroy(ctx);
}

static void
test_layout_variable(void)
{
	struct idlc_ctx *ctx = back_calc_ctx(NULL);
	struct idlc_module *m = idlc_module_mut(ctx);
	struct idlc_routine *rt = back_find(m, "vec");

	/* Request: two counts, then 16 ints and 32 chars, each padded to 8. */
	CU_ASSERT_EQUAL(back_find_arg(rt, "data")->req_offset, 24);
	CU_ASSERT_EQUAL(back_find_arg(rt, "name")->req_offset, 28);
	CU_ASSERT_EQUAL(rt->req_fixed, 32);
	CU_ASSERT_EQUAL(rt->req_max, 32 + 64 + 32);
	/* Reply: two counts, the fixed int16[3] at 32 (6 bytes, padded to 40), then 8 int64s
	 * and 10 chars padded to 16. */
	CU_ASSERT_EQUAL(back_find_arg(rt, "r")->rep_offset, 24);
	CU_ASSERT_EQUAL(back_find_arg(rt, "t")->rep_offset, 28);
	CU_ASSERT_EQUAL(back_find_arg(rt, "fx")->rep_offset, 32);
	CU_ASSERT_EQUAL(rt->rep_fixed, 40);
	CU_ASSERT_EQUAL(rt->rep_max, 40 + 64 + 16);

	CU_ASSERT_EQUAL(m->max_request, 128);
	CU_ASSERT_EQUAL(m->max_reply, 120);
	CU_ASSERT_EQUAL(back_find(m, "add")->sig_hash != 0, 1);
	idlc_destroy(ctx);
}

static void
test_layout_limit(void)
{
	struct idlc_ctx *ctx = back_ctx(NULL);
	struct idlc_module *m;
	struct idlc_routine *rt;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	m = idlc_module_mut(ctx);
	m->input_name = "huge.defs";
	m->subsystem = "huge";
	rt = back_routine(ctx, m, "big", IDLC_RT_ROUTINE);
	back_arg(ctx, rt, "server", IDL_DIR_REQUESTPORT,
		 back_type(ctx, "mach_port_t", IDL_ARG_PORT, IDL_WT_PORT, 0, 1, "mach_port_t",
			   NULL));
	/* 9 Mi int64s: 72 MiB, above the 64 MiB limit though far below 4 GiB. */
	back_arg(ctx, rt, "data", IDL_DIR_OUT,
		 back_type(ctx, NULL, IDL_ARG_VAR_ARRAY, IDL_WT_INT64, 8, 9u << 20, "int64_t",
			   "int64_t"));
	/* A bound whose byte size does not even fit in 32 bits. */
	rt = back_routine(ctx, m, "bigger", IDLC_RT_ROUTINE);
	back_arg(ctx, rt, "data", IDL_DIR_IN,
		 back_type(ctx, NULL, IDL_ARG_FIXED_ARRAY, IDL_WT_INT64, 8, UINT32_MAX, "int64_t",
			   "int64_t"));
	CU_ASSERT_EQUAL(idlc_middle(ctx, m), 2);
	CU_ASSERT_PTR_NULL(m->desc);
	CU_ASSERT_PTR_NOT_NULL(strstr(strbuf_str(&back_diags),
				      "routine 'big': its reply would exceed the message limit"));
	CU_ASSERT_PTR_NOT_NULL(strstr(strbuf_str(&back_diags),
				      "routine 'bigger': its request would exceed the message "
				      "limit"));
	idlc_destroy(ctx);
}

/* FNV-1a 64, written again here from its definition. */
static uint64_t
back_fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	while (*s != '\0') {
		h ^= (uint8_t)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

static void
test_sig_hash(void)
{
	struct idlc_ctx *ctx = back_calc_ctx(NULL);
	struct idlc_module *m = idlc_module_mut(ctx);
	struct idlc_routine *add = back_find(m, "add");
	const struct idl_routine_desc *row = &m->desc->routines[1];
	struct idl_routine_desc copy = *row;
	struct idl_arg_desc args[4];
	uint64_t want = back_fnv1a("1 add routine(requestport port port 0 1;in scalar int32 4 1;"
				   "in scalar int32 4 1;out scalar int32 4 1;)");

	CU_ASSERT_EQUAL(add->number, 1);
	CU_ASSERT_PTR_EQUAL(add->row, row);
	CU_ASSERT_EQUAL(add->sig_hash, want);
	CU_ASSERT_EQUAL(row->sig_hash, want);
	CU_ASSERT_EQUAL(idl_routine_sig_hash(row), want);
	/* Argument names are not part of it; directions are. */
	CU_ASSERT_EQUAL_FATAL(row->nargs, 4);
	memcpy(args, row->args, sizeof args);
	copy.args = args;
	args[1].name = "x";
	CU_ASSERT_EQUAL(idl_routine_sig_hash(&copy), want);
	args[2].dir = IDL_DIR_INOUT;
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash(&copy), want);
	/* A skip hashes to 0, and is in the table all the same. */
	CU_ASSERT_EQUAL(m->desc->routines[2].kind, IDL_RT_SKIP);
	CU_ASSERT_EQUAL(m->desc->routines[2].sig_hash, 0);
	CU_ASSERT_EQUAL(idl_routine_sig_hash(&m->desc->routines[2]), 0);
	idlc_destroy(ctx);
}

static bool
back_has(const struct strbuf *sb, const char *line)
{
	if (strstr(strbuf_str(sb), line) != NULL)
		return true;
	fprintf(stderr, "\nmissing: %s\n", line);
	return false;
}

static void
test_generate_to(void)
{
	struct idlc_options opts;
	struct idlc_ctx *ctx;
	struct strbuf sb = STRBUF_INIT;

	memset(&opts, 0, sizeof opts);
	opts.version = "9.9";
	ctx = back_calc_ctx(&opts);

	CU_ASSERT_EQUAL(idlc_generate_to(ctx, IDLC_OUT_HEADER, &sb), 0);
	CU_ASSERT(back_has(&sb, "/* Generated by idlc 9.9 from calc.defs. Do not edit. */\n"));
	CU_ASSERT(back_has(&sb, "#ifndef IDLC_CALC_H\n"));
	CU_ASSERT(back_has(&sb, "extern const struct idl_subsystem calc_subsystem;\n"));
	CU_ASSERT(back_has(&sb, "#define calc_MSG_COUNT 5\n"));
	CU_ASSERT(back_has(&sb, "/* Routine add */\n"
				"kern_return_t calc_add(mach_port_t server, int a, int b, "
				"int *sum);\n"));
	CU_ASSERT(back_has(&sb, "/* SimpleRoutine note */\n"
				"kern_return_t calc_note(mach_port_t server, int v);\n"));
	CU_ASSERT(back_has(&sb, "kern_return_t calc_vec(mach_port_t server, int *data, "
				"mach_msg_type_number_t dataCnt, char *name,\n"
				"\t\t       int64_t *r, mach_msg_type_number_t *rCnt, char *t, "
				"int16_t *fx);\n"));

	strbuf_reset(&sb);
	CU_ASSERT_EQUAL(idlc_generate_to(ctx, IDLC_OUT_USER, &sb), 0);
	CU_ASSERT(back_has(&sb, "#include \"calc.h\"\n"));
	CU_ASSERT(back_has(&sb, "_Static_assert(offsetof(struct calc_add_request, b) == 28, "
				"\"calc.defs: add: layout of b\");\n"));
	CU_ASSERT(back_has(&sb, "\tint64_t q IDL_ALIGN8;\n"));
	CU_ASSERT(back_has(&sb, "__attribute__((weak)) const struct idl_subsystem "
				"calc_subsystem = {\n"));
	CU_ASSERT(back_has(&sb, "\tIDL_SUBSYSTEM_MAGIC, 5, \"calc\", 100, 128, 120, 0, "
				"calc_routines,\n"));
	CU_ASSERT(back_has(&sb, "\t{ NULL, 2, IDL_RT_SKIP, 0, 0, 0x0000000000000000ULL, -1, 0, "
				"0, 0, 0, NULL },\n"));
	CU_ASSERT(back_has(&sb, "\tkr = idl_call(server, &calc_subsystem, 1, &rq.head, "
				"&rp.head, sizeof rp,\n"));
	CU_ASSERT(back_has(&sb, "\treturn idl_send(server, &calc_subsystem, 4, &rq.head, "
				"IDL_TIMEOUT_DEFAULT);\n"));
	CU_ASSERT(back_has(&sb,
			   "\tif (dataCnt > 16)\n\t\treturn idl_stub_fail(MIG_ARRAY_TOO_LARGE,\n"
			   "\t\t\t\t     \"calc.vec: data: %u elements, above its bound 16\",\n"
			   "\t\t\t\t     (unsigned)dataCnt);\n"));

	strbuf_reset(&sb);
	CU_ASSERT_EQUAL(idlc_generate_to(ctx, IDLC_OUT_SERVER, &sb), 0);
	CU_ASSERT(back_has(&sb, "kern_return_t S_calc_add(mach_port_t server, int a, int b, "
				"int *sum);\n"));
	CU_ASSERT(back_has(&sb, "static void\n_Xadd(idl_msg_header_t *InHeadP, "
				"idl_msg_header_t *OutHeadP)\n"));
	CU_ASSERT(back_has(&sb, "\tOutHeadP->retcode = S_calc_add(idl_request_port(), In0P->a, "
				"In0P->b, &sum);\n"));
	/* The second variable out argument is moved down after the call. */
	CU_ASSERT(back_has(&sb, "\tt = (char *)OutHeadP + sizeof *OutP + 64;\n"));
	CU_ASSERT(back_has(&sb, "\tmemmove((char *)OutHeadP + off, t, len);\n"));
	CU_ASSERT(back_has(&sb, "\t_Xmixed, _Xadd, NULL, _Xvec, _Xnote,\n"));
	CU_ASSERT(back_has(&sb, "\tuint32_t n = (uint32_t)InHeadP->id - 100u;\n"));
	CU_ASSERT(back_has(&sb, "int\ncalc_server(idl_msg_header_t *InHeadP, "
				"idl_msg_header_t *OutHeadP)\n"));

	strbuf_reset(&sb);
	CU_ASSERT_EQUAL(idlc_generate_to(ctx, IDLC_OUT_SHEADER, &sb), 0);
	CU_ASSERT(back_has(&sb, "extern int calc_server(idl_msg_header_t *InHeadP, "
				"idl_msg_header_t *OutHeadP);\n"));
	CU_ASSERT(back_has(&sb, "extern idl_routine_t calc_server_routine(const "
				"idl_msg_header_t *InHeadP);\n"));

	strbuf_reset(&sb);
	CU_ASSERT_EQUAL(idlc_generate_to(ctx, IDLC_OUT_LIST, &sb), 0);
	CU_ASSERT_STRING_EQUAL(strbuf_str(&sb), "calc 100 mixed 0 100 200\n"
						"calc 100 add 1 101 201\n"
						"calc 100 vec 3 103 203\n"
						"calc 100 note 4 104 0\n");
	strbuf_fini(&sb);
	idlc_destroy(ctx);
}

static void
test_names(void)
{
	struct idlc_options opts;
	struct idlc_ctx *ctx;
	struct strbuf sb = STRBUF_INIT;

	memset(&opts, 0, sizeof opts);
	opts.prefix = "p_";
	ctx = back_calc_ctx(&opts);
	idlc_module_mut(ctx)->serverdemux = "calc_demux";
	CU_ASSERT_EQUAL(idlc_generate_to(ctx, IDLC_OUT_SERVER, &sb), 0);
	CU_ASSERT(back_has(&sb, "kern_return_t p_S_calc_add(mach_port_t server"));
	CU_ASSERT(back_has(&sb, "int\np_calc_demux(idl_msg_header_t *InHeadP"));
	CU_ASSERT(back_has(&sb, "idl_routine_t\np_calc_demux_routine(const idl_msg_header_t"));
	strbuf_reset(&sb);
	CU_ASSERT_EQUAL(idlc_generate_to(ctx, IDLC_OUT_HEADER, &sb), 0);
	CU_ASSERT(back_has(&sb, "kern_return_t p_calc_add(mach_port_t server"));
	strbuf_fini(&sb);
	idlc_destroy(ctx);
}

/* The entries of a directory other than . and .. */
static unsigned
back_count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	if (d == NULL)
		return UINT_MAX;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static char *
back_path(const char *dir, const char *name)
{
	static char buf[4][PATH_MAX];
	static unsigned next;
	char *p = buf[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static void
back_rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlink(back_path(dir, e->d_name));
	closedir(d);
	rmdir(dir);
}

static void
test_generate_files(void)
{
	char dir[] = "/tmp/idlc-back-XXXXXX";
	char cwd[PATH_MAX];
	struct idlc_options opts;
	struct idlc_ctx *ctx;
	struct stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));

	/* Defaults: the three main outputs, named after the subsystem, in the current
	 * directory; -sheader only when named. */
	memset(&opts, 0, sizeof opts);
	opts.out[IDLC_OUT_SHEADER] = "calc_S.h";
	ctx = back_calc_ctx(&opts);
	CU_ASSERT_EQUAL_FATAL(chdir(dir), 0);
	CU_ASSERT_EQUAL(idlc_generate(ctx), 0);
	CU_ASSERT_EQUAL(chdir(cwd), 0);
	idlc_destroy(ctx);
	CU_ASSERT_EQUAL(back_count_files(dir), 4);
	CU_ASSERT_EQUAL(stat(back_path(dir, "calc.h"), &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0644);
	CU_ASSERT_EQUAL(access(back_path(dir, "calcUser.c"), F_OK), 0);
	CU_ASSERT_EQUAL(access(back_path(dir, "calcServer.c"), F_OK), 0);
	CU_ASSERT_EQUAL(access(back_path(dir, "calc_S.h"), F_OK), 0);
	back_rm_dir(dir);
	memcpy(dir, "/tmp/idlc-back-XXXXXX", sizeof dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));

	/* -n and /dev/null: only what is named, and /dev/null is not written. */
	memset(&opts, 0, sizeof opts);
	opts.no_defaults = true;
	opts.out[IDLC_OUT_USER] = back_path(dir, "u.c");
	opts.out[IDLC_OUT_SERVER] = "/dev/null";
	ctx = back_calc_ctx(&opts);
	CU_ASSERT_EQUAL(idlc_generate(ctx), 0);
	idlc_destroy(ctx);
	CU_ASSERT_EQUAL(back_count_files(dir), 1);
	CU_ASSERT_EQUAL(access(back_path(dir, "u.c"), F_OK), 0);
	unlink(back_path(dir, "u.c"));

	/* One output cannot be written: none is, and no temporary stays behind. */
	memset(&opts, 0, sizeof opts);
	opts.out[IDLC_OUT_HEADER] = back_path(dir, "calc.h");
	opts.out[IDLC_OUT_USER] = back_path(dir, "calcUser.c");
	opts.out[IDLC_OUT_SERVER] = back_path(dir, "no/such/dir/calcServer.c");
	ctx = back_calc_ctx(&opts);
	CU_ASSERT_NOT_EQUAL(idlc_generate(ctx), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(strbuf_str(&back_diags), "idlc: error: cannot create '"));
	idlc_destroy(ctx);
	CU_ASSERT_EQUAL(back_count_files(dir), 0);

	/* A generation error (here a layout that was refused) writes nothing either. */
	memset(&opts, 0, sizeof opts);
	opts.out[IDLC_OUT_HEADER] = back_path(dir, "calc.h");
	opts.out[IDLC_OUT_USER] = back_path(dir, "calcUser.c");
	opts.out[IDLC_OUT_SERVER] = back_path(dir, "calcServer.c");
	ctx = back_calc_ctx(&opts);
	idlc_module_mut(ctx)->subsystem = NULL;
	CU_ASSERT_NOT_EQUAL(idlc_generate(ctx), 0);
	idlc_destroy(ctx);
	CU_ASSERT_EQUAL(back_count_files(dir), 0);

	/* Two outputs into one file are refused. */
	memset(&opts, 0, sizeof opts);
	opts.out[IDLC_OUT_HEADER] = back_path(dir, "same");
	opts.out[IDLC_OUT_SHEADER] = back_path(dir, "same");
	ctx = back_calc_ctx(&opts);
	CU_ASSERT_NOT_EQUAL(idlc_generate(ctx), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(strbuf_str(&back_diags), "-header and -sheader both name"));
	idlc_destroy(ctx);
	CU_ASSERT_EQUAL(back_count_files(dir), 0);
	back_rm_dir(dir);
}

static int
back_cleanup(void)
{
	strbuf_fini(&back_diags);
	return 0;
}

static CU_TestInfo idlc_back_tests[] = {
	{ "layout of scalars", test_layout_scalars },
	{ "layout of variable parts", test_layout_variable },
	{ "layout limit", test_layout_limit },
	{ "signature hash", test_sig_hash },
	{ "generate to memory", test_generate_to },
	{ "names and prefixes", test_names },
	{ "generate files", test_generate_files },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_idlc_back = {
	"idlc_back", NULL, back_cleanup, NULL, NULL, idlc_back_tests,
};
