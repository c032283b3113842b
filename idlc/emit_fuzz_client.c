/*
 * emit_fuzz_client.c - the -fuzz-client output: a libFuzzer harness for an interface's
 * client stubs (docs/integration.md, "Fuzzing a client").
 *
 * The harness makes one call per input, chosen by the input's first byte: a routine's
 * synchronous stub, or (unless -noasync) its asynchronous stub, whose completion then runs
 * in the port's dispatch. The port is one of idl_port_open_memory(), whose reply is the rest
 * of the input: it goes through what a transport and idl_call() check on a received reply,
 * then the stub's (or the completion's) own checks. Every argument is its simplest value,
 * written so that it needs no knowledge of the types: a compound literal of the parameter's
 * type, or a pointer into a zeroed scratch buffer with a count that says how much of it
 * there is. Started on an empty corpus directory, the harness writes one valid reply per
 * call into it (emit_fuzz.c's seed builder, from the descriptor table at run time), so that
 * the fuzzer starts past the reply's header.
 */
#include <config.h>

#include <string.h>

#include "emit.h"

/* The stars a parameter's C type carries beyond a->c_type[EMIT_USER], as
 * emit_param_item() writes them. */
static unsigned
fuzz_stars(const struct idlc_arg *a)
{
	bool elem = idlc_is(a, IDLC_AK_ELEM(EMIT_USER));
	bool by_ref = idlc_is(a, IDLC_AK_REPLY);

	switch (a->rtype->arg_kind) {
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_FIXED:
	case IDL_ARG_CSTRING_VAR:
		if (idlc_is(a, IDLC_AK_RECORD))
			return by_ref;
		return elem;
	case IDL_ARG_OOL:
		if (idlc_is(a, IDLC_AK_INLINE_PORTS))
			return elem;
		return by_ref ? 1u + elem : elem;
	default:
		return by_ref;
	}
}

/* An inline array or string that is no record (records are passed by value). */
static bool
fuzz_is_array(const struct idlc_arg *a)
{
	return emit_inline_array(a) && !idlc_is(a, IDLC_AK_RECORD);
}

/* One argument of the call, and those that follow it in the prototype. An out count is the
 * argument's own element of fuzz_cnt[] (its position `i`): two counts set in one call's
 * arguments must not be one variable. */
static void
fuzz_arg(struct emit_out *o, const struct idlc_arg *a, unsigned i, bool first, bool *more)
{
	const char *c = a->c_type[EMIT_USER];
	bool by_ref = idlc_is(a, IDLC_AK_REPLY);
	unsigned k;

#define SEP (*more ? ", " : "")
	if (idlc_is(a, IDLC_AK_TOKEN)) {
		emit(o, "%s(struct idl_cred *)(void *)fuzz_scratch", SEP);
	} else if (!idlc_is(a, IDLC_AK_TRAVELS)) {
		if (first)
			emit(o, "%sfuzz_port", SEP);
		else
			emit(o, "%s(%s){0}", SEP, c);
	} else if ((k = fuzz_stars(a)) == 0) {
		/* An array or string taken by its type's name may be an array typedef or, as MIG
		 * headers often write it, a pointer one: the zeroed scratch buffer converts to
		 * either (a compound literal of a pointer type would be NULL). */
		if (a->rtype->arg_kind == IDL_ARG_OOL && !idlc_is(a, IDLC_AK_INLINE_PORTS))
			emit(o, "%s(%s)(void *)fuzz_scratch", SEP, c);
		else if (fuzz_is_array(a))
			emit(o, "%s(void *)fuzz_scratch", SEP);
		else
			emit(o, "%s(%s){0}", SEP, c);
	} else {
		emit(o, "%s(%s %.*s)(void *)fuzz_scratch", SEP, c, (int)k, "**");
	}
	*more = true;
	if (idlc_is(a, IDLC_AK_TOKEN) || !idlc_is(a, IDLC_AK_TRAVELS))
		return;
	if (idlc_is(a, IDLC_AK_POLY(EMIT_USER)))
		emit(o, ", %s", by_ref ? "&fuzz_poly" : "0");
	if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT)) {
		if (!by_ref)
			emit(o, ", 0");
		else if (idlc_is(a, IDLC_AK_ELEM(EMIT_USER)))
			emit(o,
			     ", (fuzz_cnt[%u] = sizeof fuzz_scratch / sizeof(%s), &fuzz_cnt[%u])",
			     i, c, i);
		else /* an inout array sends none; its buffer holds the bound */
			emit(o, ", (fuzz_cnt[%u] = 0, &fuzz_cnt[%u])", i, i);
	}
	if (idlc_is(a, IDLC_AK_DEALLOC(EMIT_USER)))
		emit(o, ", 0");
#undef SEP
}

/* One argument of an asynchronous stub's call (emit_async.c's parameters): in arguments as
 * the synchronous call passes them, inout ones as values, a `countinout` array's room. */
static void
fuzz_async_arg(struct emit_out *o, const struct idlc_arg *a, unsigned i, bool first, bool *more)
{
	if (idlc_is(a, IDLC_AK_COUNTINOUT)) {
		emit(o, ", (mach_msg_type_number_t)%u", a->rtype->count);
	} else if (a->dir == IDL_DIR_INOUT) {
		if (idlc_is(a, IDLC_AK_IN_ELEM))
			emit(o, ", (%s *)(void *)fuzz_scratch", a->c_in);
		else if (fuzz_is_array(a))
			emit(o, ", (void *)fuzz_scratch");
		else
			emit(o, ", (%s){0}", a->c_in);
		if (idlc_is(a, IDLC_AK_USER_POLY))
			emit(o, ", 0");
		if (idlc_is(a, IDLC_AK_COUNTED) && !idlc_is(a, IDLC_AK_SAMECOUNT))
			emit(o, ", 0");
		if (idlc_is(a, IDLC_AK_USER_DEALLOC))
			emit(o, ", 0");
	} else if (a->dir != IDL_DIR_OUT && idlc_is(a, IDLC_AK_PARAM(EMIT_USER))) {
		fuzz_arg(o, a, i, first, more);
	}
	*more = true;
}

/* The arguments of a routine's synchronous (async false) or asynchronous call. */
static void
fuzz_args(struct emit_out *o, const struct idlc_routine *rt, bool async)
{
	bool more = false, first = true;
	unsigned i = 0;

	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next, first = false, i++) {
		if (async)
			fuzz_async_arg(o, a, i, first, &more);
		else if (idlc_is(a, IDLC_AK_PARAM(EMIT_USER)))
			fuzz_arg(o, a, i, first, &more);
	}
}

/* The part of the harness that is the same for every interface, after the seed builder. */
static const char fuzz_client_body[] =
	"/* An empty corpus directory given on the command line gets one valid reply per call\n"
	" * (the call's byte, then the reply), for libFuzzer to start from. */\n"
	"int\n"
	"LLVMFuzzerInitialize(int *argc, char ***argv)\n"
	"{\n"
	"\tconst char *dir = fuzz_seed_dir(*argc, *argv);\n"
	"\n"
	"\tfor (unsigned i = 0; dir != NULL && i < FUZZ_NCALLS; i++) {\n"
	"\t\tuint32_t number = fuzz_routines[i % FUZZ_NROUTINES];\n"
	"\t\tsize_t len = fuzz_seed(number, 1, fuzz_seed_buf, sizeof fuzz_seed_buf);\n"
	"\t\tunsigned char lead = (unsigned char)i;\n"
	"\t\tchar name[512];\n"
	"\n"
	"\t\tsnprintf(name, sizeof name, \"%s%s\", IDL_FUZZ_SS.routines[number].name,\n"
	"\t\t\t i < FUZZ_NROUTINES ? \"\" : \"-async\");\n"
	"\t\tif (len != 0)\n"
	"\t\t\tfuzz_seed_file(dir, name, &lead, 1, fuzz_seed_buf, len);\n"
	"\t}\n"
	"\tif (idl_port_open_memory(&fuzz_source, &fuzz_port) != 0) {\n"
	"\t\tfprintf(stderr, \"fuzz: cannot open the port: %s\\n\", idl_errdetail());\n"
	"\t\texit(1);\n"
	"\t}\n"
	"\tidl_port_set_timeout(fuzz_port, 1000);\n"
	"\treturn 0;\n"
	"}\n";

/* Dispatches the port until an asynchronous call's done function ran: its reply is in the
 * source already, so a few passes take the hello and the reply; a reply the runtime dropped
 * (another id, say) leaves the call to a cancel. A done function that runs twice, or not at
 * all, is a finding. */
static const char fuzz_client_wait[] =
	"static void\n"
	"fuzz_async_wait(idl_async_t *call)\n"
	"{\n"
	"\tfor (int i = 0; i < 8 && fuzz_done_runs == 0; i++)\n"
	"\t\tidl_port_dispatch(fuzz_port, 0);\n"
	"\tif (fuzz_done_runs == 0) {\n"
	"\t\tidl_async_cancel(call);\n"
	"\t\tidl_port_wait(fuzz_port, 5000);\n"
	"\t}\n"
	"\tidl_async_release(call);\n"
	"\tif (fuzz_done_runs != 1) {\n"
	"\t\tfprintf(stderr, \"fuzz: a done function ran %d times\\n\", fuzz_done_runs);\n"
	"\t\tabort();\n"
	"\t}\n"
	"}\n\n";

void
emit_fuzz_client(struct emit_out *o)
{
	const struct idlc_module *m = o->m;
	const char *base = strrchr(m->input_name, '/');
	bool async = emit_async_any(o);
	unsigned n = 0, k;

	for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next)
		n += rt->kind == IDLC_RT_ROUTINE;
	emit(o, "/*\n");
	emit(o, " * A libFuzzer harness for the client stubs of subsystem %s, generated by idlc\n",
	     m->subsystem);
	emit(o, " * from %s.\n", base != NULL ? base + 1 : m->input_name);
	emit(o, " *\n");
	emit(o, " * An input is one call and its reply. The first byte, modulo %u, chooses the\n",
	     async ? 2 * n : n);
	if (async && n > 0)
		emit(o,
		     " * call: 0 to %u the synchronous stub of routine fuzz_routines[byte], %u to "
		     "%u\n"
		     " * the asynchronous stub of fuzz_routines[byte - %u], whose done function "
		     "runs\n"
		     " * in the port's dispatch (exactly once, or the harness aborts).",
		     n - 1, n, 2 * n - 1, n);
	else
		emit(o, " * call: the stub of routine fuzz_routines[byte].");
	emit(o, " The rest is\n");
	emit(o,
	     " * the reply, as tcp: carries it (the message, then its out-of-line data padded\n");
	emit(o,
	     " * to 8), which the call gets through idl_port_open_memory() with every check a\n");
	emit(o, " * client makes on a received reply. An empty corpus directory first gets one\n");
	emit(o, " * valid reply per call (seed-ROUTINE, seed-ROUTINE-async). What an accepted\n");
	emit(o,
	     " * reply gives the caller (out-of-line data, ports) is not released here: run it\n");
	emit(o, " * with ASAN_OPTIONS=detect_leaks=0. Link it with the client stubs\n");
	emit(o, " * (docs/integration.md, \"Fuzzing a client\"):\n");
	emit(o, " *\n");
	emit(o, " *     clang -g -O1 -fsanitize=fuzzer,address,undefined THIS.c %sUser.c \\\n",
	     m->subsystem);
	emit(o, " *         $(pkg-config --cflags --libs idlrt) -o %s-fuzz-client\n", m->subsystem);
	emit(o, " *     mkdir corpus && ASAN_OPTIONS=detect_leaks=0 ./%s-fuzz-client corpus\n",
	     m->subsystem);
	emit(o, " */\n");
	emit(o, "#include <dirent.h>\n#include <stdint.h>\n#include <stdio.h>\n"
		"#include <stdlib.h>\n#include <string.h>\n\n");
	emit(o, "#include <idl/idl.h>\n%s#include <idl/idl_dynamic.h>\n\n",
	     async ? "#include <idl/idl_async.h>\n" : "");
	emit(o, "#include \"%s\"\n\n", emit_header_include(o));
	emit(o, "#define IDL_FUZZ_SS %s_subsystem\n\n", m->subsystem);
	emit(o, "int LLVMFuzzerInitialize(int *argc, char ***argv);\n");
	emit(o, "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);\n\n");
	emit(o, "static struct idl_reply_source fuzz_source = { &IDL_FUZZ_SS, NULL, 0 };\n");
	emit(o, "static idl_port_t fuzz_port;\n");
	/* The scratch buffer holds any inline array a reply may fill. */
	emit(o, "/* Room for what each argument points at, zeroed before each call. */\n");
	emit(o, "static _Alignas(16) unsigned char fuzz_scratch[%u];\n",
	     m->max_reply > 1u << 16 ? (m->max_reply + 15u) & ~15u : 1u << 16);
	emit(o, "/* The routines with a reply, by number, in the order the first byte counts them. "
		"*/\n");
	emit(o, "static const uint32_t fuzz_routines[] = {");
	k = 0;
	for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next)
		if (rt->kind == IDLC_RT_ROUTINE)
			emit(o, "%s %u", k++ > 0 ? "," : "", rt->number);
	emit(o, "%s};\n", n == 0 ? " 0 " : " ");
	emit(o, "#define FUZZ_NROUTINES %uu\n#define FUZZ_NCALLS %uu\n\n", n, async ? 2 * n : n);
	emit(o, "%s\n%s\n", emit_fuzz_seed, fuzz_client_body);
	if (async && n > 0) {
		emit(o, "/* The done functions: each counts its runs (exactly one per call). */\n");
		emit(o, "static int fuzz_done_runs;\n\n");
		emit(o, "#pragma GCC diagnostic push\n");
		emit(o, "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n");
		k = 0;
		for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next) {
			if (rt->kind != IDLC_RT_ROUTINE)
				continue;
			emit(o, "static void\nfuzz_done_%u(", k++);
			emit_async_done_params(o, rt, ")\n{\n\tfuzz_done_runs++;\n}\n\n");
		}
		emit(o, "#pragma GCC diagnostic pop\n\n");
		emit(o, "%s", fuzz_client_wait);
	}
	emit(o, "/* One input: one call, whose reply is the input after its first byte. */\n");
	emit(o, "int\nLLVMFuzzerTestOneInput(const uint8_t *data, size_t size)\n{\n");
	emit(o, "\tmach_msg_type_number_t fuzz_cnt[256]; /* an argument's out count */\n");
	emit(o, "\tmach_msg_type_name_t fuzz_poly;\n");
	if (async && n > 0)
		emit(o, "\tidl_async_t *fuzz_call;\n");
	emit(o, "\n\tif (size == 0)\n\t\treturn 0;\n");
	emit(o, "\tmemset(fuzz_scratch, 0, sizeof fuzz_scratch);\n");
	emit(o, "\tfuzz_source.data = data + 1;\n\tfuzz_source.len = size - 1;\n");
	emit(o, "\tswitch (data[0] %% %u) {\n", n > 0 ? (async ? 2 * n : n) : 1u);
	k = 0;
	for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind != IDLC_RT_ROUTINE)
			continue;
		emit(o, "\tcase %u:\n\t\t(void)%s(", k, emit_user_name(o, rt));
		fuzz_args(o, rt, false);
		emit(o, ");\n\t\tbreak;\n");
		if (async) {
			emit(o, "\tcase %u:\n\t\tfuzz_done_runs = 0;\n", n + k);
			emit(o, "\t\tif (%s(", emit_async_name(o, rt));
			fuzz_args(o, rt, true);
			emit(o, ", fuzz_done_%u, NULL, &fuzz_call) == 0)\n", k);
			emit(o, "\t\t\tfuzz_async_wait(fuzz_call);\n\t\tbreak;\n");
		}
		k++;
	}
	emit(o, "\tdefault:\n\t\tbreak;\n\t}\n");
	emit(o, "\t(void)fuzz_cnt;\n\t(void)fuzz_poly;\n");
	emit(o, "\tfuzz_source.data = NULL;\n\treturn 0;\n}\n");
}
