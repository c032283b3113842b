/*
 * emit_fuzz.c - the -fuzz output: a libFuzzer harness for an interface's server
 * (docs/integration.md, "Fuzzing a server").
 *
 * The harness feeds each input to idl_server_serve_message(), which puts it through every
 * check a server on a socket makes before the demux runs, so that what it finds is what a
 * real server would suffer. It is the same for every interface but for the names of the
 * subsystem and its demux: the seeds it writes come from the descriptor table at run time
 * (idl_msg_pack()), one valid request per routine, so nothing here restates a routine.
 * The user links it with the generated server stubs and their own routines.
 */
#include <config.h>

#include <string.h>

#include "emit.h"

/* The seed builder of both harnesses (-fuzz and -fuzz-client): one message of routine
 * `number` of IDL_FUZZ_SS, the request or the reply, from the descriptor table at run time. */
const char emit_fuzz_seed[] =
	"/*\n"
	" * The request (reply 0) or the reply (reply 1) of routine `number` with every argument\n"
	" * at its simplest valid value (zeros, empty strings and arrays, null ports, out-of-line\n"
	" * data of its fixed size or none), in the form idl_server_serve_message() and\n"
	" * idl_port_open_memory() take: the message, then each out-of-line datum padded to 8.\n"
	" * Returns its size, or 0 when it cannot be built.\n"
	" */\n"
	"static size_t\n"
	"fuzz_seed(uint32_t number, int reply, unsigned char *buf, size_t cap)\n"
	"{\n"
	"\tstatic const unsigned char zeros[1 << 16];\n"
	"\tstatic const idl_port_t nulls[64];\n"
	"\tconst struct idl_routine_desc *rt = &IDL_FUZZ_SS.routines[number];\n"
	"\tstruct idl_arg_value vals[256]; /* nargs is 8 bits */\n"
	"\tidl_msg_header_t *h = (idl_msg_header_t *)(void *)buf;\n"
	"\tidl_desc_t *d;\n"
	"\tsize_t len;\n"
	"\tint n;\n"
	"\n"
	"\tif (rt->kind == IDL_RT_SKIP)\n"
	"\t\treturn 0;\n"
	"\tmemset(vals, 0, sizeof vals);\n"
	"\tfor (unsigned i = 0; i < rt->nargs; i++) {\n"
	"\t\tconst struct idl_arg_desc *a = &rt->args[i];\n"
	"\n"
	"\t\tif (a->kind == IDL_ARG_PORT || a->wire_type == IDL_WT_PORT)\n"
	"\t\t\tvals[i].data = nulls;\n"
	"\t\telse\n"
	"\t\t\tvals[i].data = zeros;\n"
	"\t\tif (a->kind == IDL_ARG_SCALAR || a->kind == IDL_ARG_PORT)\n"
	"\t\t\tvals[i].count = 1;\n"
	"\t\telse if (a->kind == IDL_ARG_FIXED_ARRAY)\n"
	"\t\t\tvals[i].count = a->count;\n"
	"\t\telse if (a->kind == IDL_ARG_CSTRING_FIXED || a->kind == IDL_ARG_CSTRING_VAR)\n"
	"\t\t\tvals[i].count = 1; /* the NUL */\n"
	"\t\telse if (a->kind == IDL_ARG_OOL && (a->flags & IDL_ARGF_FIXED))\n"
	"\t\t\tvals[i].count = a->count;\n"
	"\t\tif ((uint64_t)vals[i].count * (a->elem_size ? a->elem_size : 1) > sizeof zeros)\n"
	"\t\t\treturn 0;\n"
	"\t}\n"
	"\tif ((n = idl_msg_pack(rt, reply, vals, h, cap)) <= 0)\n"
	"\t\treturn 0;\n"
	"\th->magic = IDL_MSG_MAGIC;\n"
	"\th->order = IDL_ORDER_NATIVE;\n"
	"\th->kind = reply ? IDL_KIND_REPLY\n"
	"\t\t\t: rt->kind == IDL_RT_ROUTINE ? IDL_KIND_REQUEST : IDL_KIND_ONEWAY;\n"
	"\th->id = (int32_t)((uint32_t)IDL_FUZZ_SS.base + number + (reply ? 100u : 0u));\n"
	"\tlen = (size_t)n;\n"
	"\td = (idl_desc_t *)(void *)(buf + len - (size_t)h->ndesc * sizeof *d);\n"
	"\tfor (uint32_t i = 0; (h->flags & IDL_MSGF_DESC) && i < h->ndesc; i++) {\n"
	"\t\tsize_t pad = (d[i].size + 7u) & ~(size_t)7u;\n"
	"\n"
	"\t\td[i].addr = 0; /* an address means nothing in a file */\n"
	"\t\tif (d[i].type != IDL_DESC_OOL)\n"
	"\t\t\tcontinue;\n"
	"\t\tif (pad > cap - len)\n"
	"\t\t\treturn 0;\n"
	"\t\tmemset(buf + len, 0, pad);\n"
	"\t\tlen += pad;\n"
	"\t}\n"
	"\treturn len;\n"
	"}\n"
	"\n"
	"/* Where a seed is built: aligned for the header, large enough for any message. */\n"
	"static unsigned char fuzz_seed_buf[1 << 18] __attribute__((aligned(16)));\n"
	"\n"
	"/* The corpus directory on the command line (the first argument that is not an option)\n"
	" * when it is empty, else NULL: an empty one gets seeds, a corpus with files is the\n"
	" * user's. */\n"
	"static const char *\n"
	"fuzz_seed_dir(int argc, char **argv)\n"
	"{\n"
	"\tstruct dirent *e = NULL;\n"
	"\tDIR *dp = NULL;\n"
	"\tint i;\n"
	"\n"
	"\tfor (i = 1; i < argc && argv[i][0] == '-'; i++)\n"
	"\t\t;\n"
	"\tif (i == argc || (dp = opendir(argv[i])) == NULL)\n"
	"\t\treturn NULL;\n"
	"\twhile ((e = readdir(dp)) != NULL)\n"
	"\t\tif (e->d_name[0] != '.')\n"
	"\t\t\tbreak;\n"
	"\tclosedir(dp);\n"
	"\treturn e == NULL ? argv[i] : NULL;\n"
	"}\n"
	"\n"
	"/* Writes DIR/seed-NAME: `nlead` bytes of `lead`, then the message of `len` bytes. */\n"
	"static void\n"
	"fuzz_seed_file(const char *dir, const char *name, const void *lead, size_t nlead,\n"
	"\t       const void *msg, size_t len)\n"
	"{\n"
	"\tchar path[4096];\n"
	"\tFILE *f;\n"
	"\n"
	"\tsnprintf(path, sizeof path, \"%s/seed-%s\", dir, name);\n"
	"\tif ((f = fopen(path, \"wb\")) == NULL) {\n"
	"\t\tperror(path);\n"
	"\t\treturn;\n"
	"\t}\n"
	"\tif (fwrite(lead, 1, nlead, f) != nlead || fwrite(msg, 1, len, f) != len)\n"
	"\t\tperror(path);\n"
	"\tfclose(f);\n"
	"}\n";

/* The harness after its declarations and the seed builder; it names the subsystem
 * IDL_FUZZ_SS and the demux IDL_FUZZ_DEMUX, defined before. */
static const char fuzz_body[] =
	"/* An empty corpus directory given on the command line gets one valid request per\n"
	" * routine, for libFuzzer to start from. */\n"
	"int\n"
	"LLVMFuzzerInitialize(int *argc, char ***argv)\n"
	"{\n"
	"\tconst char *dir = fuzz_seed_dir(*argc, *argv);\n"
	"\n"
	"\tfor (uint32_t i = 0; dir != NULL && i < IDL_FUZZ_SS.nroutines; i++) {\n"
	"\t\tsize_t len = fuzz_seed(i, 0, fuzz_seed_buf, sizeof fuzz_seed_buf);\n"
	"\n"
	"\t\tif (len != 0)\n"
	"\t\t\tfuzz_seed_file(dir, IDL_FUZZ_SS.routines[i].name, \"\", 0, fuzz_seed_buf,\n"
	"\t\t\t\t       len);\n"
	"\t}\n"
	"\tif (idl_server_create(&fuzz_server) != 0 ||\n"
	"\t    idl_server_add_subsystem(fuzz_server, &IDL_FUZZ_SS, IDL_FUZZ_DEMUX) != 0 ||\n"
	"\t    idl_server_set_log(fuzz_server, NULL, NULL) != 0 ||\n"
	"\t    (fuzz_reply = malloc(IDL_FUZZ_SS.max_reply)) == NULL) {\n"
	"\t\tfprintf(stderr, \"fuzz: cannot make the server: %s\\n\", idl_errdetail());\n"
	"\t\texit(1);\n"
	"\t}\n"
	"\treturn 0;\n"
	"}\n"
	"\n"
	"/* One input, served as one message from a client that said hello; the sanitizers and\n"
	" * the routines' own checks are the oracles. */\n"
	"int\n"
	"LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)\n"
	"{\n"
	"\tsize_t n;\n"
	"\n"
	"\tidl_server_serve_message(fuzz_server, data, size, fuzz_reply, IDL_FUZZ_SS.max_reply, "
	"&n);\n"
	"\treturn 0;\n"
	"}\n";

void
emit_fuzz(struct emit_out *o)
{
	const struct idlc_module *m = o->m;
	const char *base = strrchr(m->input_name, '/');

	emit(o, "/*\n");
	emit(o, " * A libFuzzer harness for the server of subsystem %s, generated by idlc\n",
	     m->subsystem);
	emit(o, " * from %s.\n", base != NULL ? base + 1 : m->input_name);
	emit(o, " *\n");
	emit(o, " * Each input is one request as a client's connection brings it, served by\n");
	emit(o,
	     " * idl_server_serve_message() with every check a server makes before the demux.\n");
	emit(o, " * Link it with the server stubs and the routines (docs/integration.md):\n");
	emit(o, " *\n");
	emit(o,
	     " *     clang -g -O1 -fsanitize=fuzzer,address,undefined THIS.c %sServer.c "
	     "ROUTINES.c \\\n",
	     m->subsystem);
	emit(o, " *         $(pkg-config --cflags --libs idlrt) -o %s-fuzz\n", m->subsystem);
	emit(o, " *     mkdir corpus && ./%s-fuzz corpus\n", m->subsystem);
	emit(o, " *\n");
	emit(o, " * An empty corpus directory first gets a valid request for every routine.\n");
	emit(o, " */\n");
	emit(o, "#include <dirent.h>\n#include <stdint.h>\n#include <stdio.h>\n"
		"#include <stdlib.h>\n#include <string.h>\n\n");
	emit(o, "#include <idl/idl.h>\n#include <idl/idl_dynamic.h>\n\n");
	emit(o, "extern const struct idl_subsystem %s_subsystem;\n", m->subsystem);
	emit(o, "extern int %s(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP);\n\n",
	     emit_demux_name(o));
	emit(o, "#define IDL_FUZZ_SS %s_subsystem\n", m->subsystem);
	emit(o, "#define IDL_FUZZ_DEMUX %s\n\n", emit_demux_name(o));
	emit(o, "int LLVMFuzzerInitialize(int *argc, char ***argv);\n");
	emit(o, "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);\n\n");
	emit(o, "static idl_server_t *fuzz_server;\n");
	emit(o, "static void *fuzz_reply;\n\n");
	emit(o, "%s\n%s", emit_fuzz_seed, fuzz_body);
}
