/*
 * main.c - the idlc command: MIG's options, then the library does the work.
 *
 * Exit status: 0 success, 1 errors in the input (or writing outputs), 2 a bad command line.
 * With -compat: 0 nothing breaks, 1 something breaks (or, with -Werror, a warning), 2 an
 * input could not be read or has errors, or a bad command line.
 * This is the only place in the compiler that exits.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idlc.h"

#ifndef IDLC_PKGINCLUDEDIR
#define IDLC_PKGINCLUDEDIR NULL
#define IDLC_PKGINCLUDEDIR_TEXT "none"
#else
#define IDLC_PKGINCLUDEDIR_TEXT IDLC_PKGINCLUDEDIR
#endif

static const char usage_text[] =
	"usage: idlc [options] file.defs\n"
	"       idlc -compat [options] old.defs new.defs\n"
	"Compiles a MIG .defs interface into C client and server stubs, or tells what a new\n"
	"version of an interface does to the clients of the old one.\n"
	"\n"
	"Outputs (named after the subsystem unless given; /dev/null writes nothing):\n"
	"  -header FILE      the client header (SUB.h)\n"
	"  -user FILE        the client stubs (SUBUser.c)\n"
	"  -server FILE      the server stubs (SUBServer.c)\n"
	"  -sheader FILE     the server header (only when asked)\n"
	"  -iheader FILE     the internal header (only when asked)\n"
	"  -list FILE        the message id list (only when asked)\n"
	"  -types FILE       the C typedefs of the types the interface declares, which\n"
	"                    the headers then include (only when asked; idlc's own)\n"
	"  -fuzz FILE        a libFuzzer harness for the server: it serves each input as a\n"
	"                    request through idl_server_serve_message() and seeds an empty\n"
	"                    corpus directory (only when asked; idlc's own)\n"
	"  -fuzz-client FILE a libFuzzer harness for the client stubs: the first byte\n"
	"                    of each input picks the call (a stub, or its _async one),\n"
	"                    the rest is its reply, through idl_port_open_memory(); it\n"
	"                    seeds an empty corpus directory (only when asked; idlc's own)\n"
	"  -n                write only the outputs named\n"
	"  -prefix P         prefix for user and server function names\n"
	"  -subrprefix P     prefix of MIG's runtime calls (accepted; idlkit's have none)\n"
	"  -noasync          no asynchronous client stubs (ROUTINE_async, idlc's own)\n"
	"\n"
	"Comparing versions (docs/evolution.md):\n"
	"  -compat           compare old.defs with new.defs routine by routine: one line per\n"
	"                    difference (errors break old or new clients, warnings may;\n"
	"                    compatible changes are notes, shown with -v), then a summary;\n"
	"                    exit 1 when something breaks (with -Werror: or warns)\n"
	"  --json            -compat's result as JSON on standard output\n"
	"\n"
	"Dependencies (for make):\n"
	"  -MD               write BASE-mig.d: every output depends on the input and on\n"
	"                    every file it included (as GNU MIG does)\n"
	"  -MF FILE          write the dependencies to FILE instead (implies -MD)\n"
	"  -MT TARGET        the rule's target instead of the outputs (repeatable)\n"
	"  -MP               an empty rule for every included file\n"
	"\n"
	"Preprocessing (the input goes through the C preprocessor first):\n"
	"  -cc CMD           the preprocessor command (default: $IDLC_CPP, else " IDLC_DEFAULT_CPP
	")\n"
	"  -I DIR, -D NAME[=VAL], -U NAME, -imacros FILE, -isystem DIR\n"
	"                    passed to the preprocessor\n"
	"  -nostdinc         no system directories, and not idlkit's own include directory\n"
	"                    ($IDLC_INCLUDE_DIR, else " IDLC_PKGINCLUDEDIR_TEXT ")\n"
	"\n"
	"Diagnostics:\n"
	"  -q                no warnings\n"
	"  -Q                warnings (the default)\n"
	"  -Werror           warnings are errors\n"
	"  -v                verbose: list the routines, their ids and arguments\n"
	"  -V                not verbose (the default)\n"
	"  -r, -s, -S        accepted for MIG command lines; no effect\n"
	"\n"
	"  -                 read the interface from standard input (with a /dev/null input\n"
	"                    beside it, as GNU Mach's `mig -cc cat - /dev/null`)\n"
	"  --help            this text\n"
	"  --version         the version\n";

struct cli {
	struct idlc_options opts;
	const char **cpp_args;
	size_t ncpp_args;
	const char *input;
	const char *input2; /* -compat: the new version (input is the old one) */
	bool compat;
	bool json;
	bool outputs; /* an output or dependency option was given */
	bool verbose;
	bool deps; /* -MD or -MF */
	struct idlc_deps dep;
	const char **targets; /* -MT */
};

static void
cli_diag(void *data, const char *line)
{
	(void)data;
	fputs(line, stderr);
}

static void __attribute__((noreturn)) cli_usage_error(const char *fmt, const char *arg)
{
	fputs("idlc: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'idlc --help' for more information.\n", stderr);
	exit(2);
}

static void
cli_cpp_arg(struct cli *c, const char *arg)
{
	c->cpp_args[c->ncpp_args++] = arg;
}

/* The value of an option that takes one: the next argument. */
static const char *
cli_value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		cli_usage_error("option '%s' needs a value", argv[*i]);
	return argv[++*i];
}

static void
cli_parse(struct cli *c, int argc, char **argv)
{
	static const struct {
		const char *name;
		enum idlc_output out;
	} outs[] = {
		{ "-header", IDLC_OUT_HEADER },
		{ "-user", IDLC_OUT_USER },
		{ "-server", IDLC_OUT_SERVER },
		{ "-sheader", IDLC_OUT_SHEADER },
		{ "-iheader", IDLC_OUT_IHEADER },
		{ "-list", IDLC_OUT_LIST },
		{ "-types", IDLC_OUT_TYPES },
		{ "-fuzz", IDLC_OUT_FUZZ },
		{ "-fuzz-client", IDLC_OUT_FUZZ_CLIENT },
	};
	const char *a;
	size_t k;
	int i;

	/* At most every argument (or its pair) goes to cpp. */
	c->cpp_args = calloc((size_t)argc * 2 + 1, sizeof *c->cpp_args);
	c->targets = calloc((size_t)argc + 1, sizeof *c->targets);
	if (c->cpp_args == NULL || c->targets == NULL) {
		fputs("idlc: out of memory\n", stderr);
		exit(1);
	}
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-help") == 0) {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (strcmp(a, "--version") == 0 || strcmp(a, "-version") == 0) {
			printf("idlc (idlkit) %s\n", PACKAGE_VERSION);
			exit(0);
		}
		if (a[0] != '-' || strcmp(a, "-") == 0) {
			if (c->compat && c->input != NULL && c->input2 == NULL) {
				c->input2 = a;
				continue;
			}
			if (c->compat && c->input2 != NULL)
				cli_usage_error("-compat takes two input files ('%s' is a third)",
						a);
			/* GNU Mach runs `mig -cc cat - /dev/null < x.defs.i`: the empty file
			 * beside another input adds nothing. */
			if (c->input != NULL && strcmp(a, "/dev/null") == 0)
				continue;
			if (c->input != NULL && strcmp(c->input, "/dev/null") != 0)
				cli_usage_error("more than one input file ('%s')", a);
			c->input = a;
			continue;
		}
		for (k = 0; k < sizeof outs / sizeof outs[0]; k++)
			if (strcmp(a, outs[k].name) == 0)
				break;
		if (k < sizeof outs / sizeof outs[0]) {
			c->opts.out[outs[k].out] = cli_value(argc, argv, &i);
			c->outputs = true;
		} else if (strcmp(a, "-compat") == 0) {
			if (c->input != NULL)
				cli_usage_error("%s comes before the input files", a);
			c->compat = true;
		} else if (strcmp(a, "--json") == 0 || strcmp(a, "-json") == 0) {
			c->json = true;
		} else if (strcmp(a, "-prefix") == 0) {
			c->opts.prefix = cli_value(argc, argv, &i);
		} else if (strcmp(a, "-subrprefix") == 0) {
			c->opts.subrprefix = cli_value(argc, argv, &i);
		} else if (strcmp(a, "-noasync") == 0) {
			c->opts.no_async = true;
		} else if (strcmp(a, "-n") == 0) {
			c->opts.no_defaults = true;
		} else if (strcmp(a, "-q") == 0) {
			c->opts.quiet = true;
		} else if (strcmp(a, "-Q") == 0) {
			c->opts.quiet = false;
		} else if (strcmp(a, "-v") == 0) {
			c->verbose = true;
		} else if (strcmp(a, "-V") == 0) {
			c->verbose = false;
		} else if (strcmp(a, "-r") == 0 || strcmp(a, "-s") == 0 || strcmp(a, "-S") == 0) {
			/* RPC stubs are the only kind; symbol tables are the descriptor's. */
		} else if (strcmp(a, "-R") == 0) {
			cli_usage_error("%s: non-RPC stubs were removed from MIG; idlc writes RPC "
					"stubs only",
					a);
		} else if (strcmp(a, "-MD") == 0) {
			c->deps = true;
			c->outputs = true;
		} else if (strcmp(a, "-MF") == 0) {
			c->deps = true;
			c->outputs = true;
			c->dep.file = cli_value(argc, argv, &i);
		} else if (strcmp(a, "-MT") == 0) {
			c->targets[c->dep.ntargets++] = cli_value(argc, argv, &i);
		} else if (strcmp(a, "-MP") == 0) {
			c->dep.phony = true;
		} else if (strcmp(a, "-Werror") == 0) {
			c->opts.werror = true;
		} else if (strcmp(a, "-cc") == 0) {
			c->opts.cpp = cli_value(argc, argv, &i);
		} else if (strcmp(a, "-nostdinc") == 0) {
			c->opts.no_stdinc = true;
			cli_cpp_arg(c, a);
		} else if (strcmp(a, "-imacros") == 0 || strcmp(a, "-isystem") == 0) {
			cli_cpp_arg(c, a);
			cli_cpp_arg(c, cli_value(argc, argv, &i));
		} else if (a[1] == 'I' || a[1] == 'D' || a[1] == 'U') {
			/* -IDIR as one argument, -I DIR as two: cpp takes both forms. */
			cli_cpp_arg(c, a);
			if (a[2] == '\0')
				cli_cpp_arg(c, cli_value(argc, argv, &i));
		} else {
			cli_usage_error("unknown option '%s'", a);
		}
	}
	if (c->input == NULL)
		cli_usage_error("%s", "no input file");
	if (c->compat && c->input2 == NULL)
		cli_usage_error("%s", "-compat needs two input files: the old and the new version");
	if (c->compat && c->outputs)
		cli_usage_error("%s", "-compat writes no stubs: output options do not apply");
	if (c->json && !c->compat)
		cli_usage_error("%s", "--json applies to -compat only");
	c->opts.cpp_args = c->cpp_args;
	c->opts.ncpp_args = c->ncpp_args;
	c->dep.targets = c->targets;
}

/* GNU MIG's -MD file name: the input's base name without its extension, + "-mig.d". */
static char *
cli_deps_name(const char *input)
{
	const char *base = strrchr(input, '/');
	const char *dot;
	size_t len;
	char *name;

	base = base != NULL ? base + 1 : input;
	if (strcmp(input, "-") == 0)
		base = "stdin";
	dot = strrchr(base, '.');
	len = dot != NULL && dot != base ? (size_t)(dot - base) : strlen(base);
	name = malloc(len + sizeof "-mig.d");
	if (name != NULL) {
		memcpy(name, base, len);
		memcpy(name + len, "-mig.d", sizeof "-mig.d");
	}
	return name;
}

static const char *const cli_dir_words[] = {
	"-", "requestport", "in", "out", "inout", "waittime", "msgoption", "special",
};

/* -v: what idlc understood, one line per routine and argument. */
static void
cli_verbose(const struct idlc_module *m)
{
	printf("subsystem %s %d: %u message ids\n", m->subsystem, (int)m->base, m->nroutines);
	for (const struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next) {
		if (rt->kind == IDLC_RT_SKIP) {
			printf("  %u: skip\n", (unsigned)rt->number);
			continue;
		}
		printf("  %u: %s %s, request id %d, request %u..%u bytes", (unsigned)rt->number,
		       rt->kind == IDLC_RT_ROUTINE ? "routine" : "simpleroutine", rt->name,
		       (int)((uint32_t)m->base + rt->number), (unsigned)rt->req_fixed,
		       (unsigned)rt->req_max);
		if (rt->kind == IDLC_RT_ROUTINE)
			printf(", reply %u..%u bytes", (unsigned)rt->rep_fixed,
			       (unsigned)rt->rep_max);
		printf("\n");
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
			printf("      %-11s %s : %s\n",
			       (size_t)a->dir < sizeof cli_dir_words / sizeof cli_dir_words[0]
				       ? cli_dir_words[a->dir]
				       : "?",
			       a->name,
			       a->rtype != NULL && a->rtype->c_user != NULL ? a->rtype->c_user
									    : "?");
	}
}

/* Reads and checks one version for -compat; NULL after its diagnostics were printed. */
static struct idlc_ctx *
cli_compat_read(const struct cli *c, const char *input)
{
	struct idlc_options opts = c->opts;
	struct idlc_ctx *ctx;

	/* The files' own warnings are not the comparison's, and -Werror is about its own. */
	opts.quiet = true;
	opts.werror = false;
	if ((ctx = idlc_create(&opts, cli_diag, NULL)) == NULL) {
		fputs("idlc: out of memory\n", stderr);
		return NULL;
	}
	if (idlc_parse_file(ctx, input) == 0 && idlc_check(ctx) == 0)
		return ctx;
	idlc_destroy(ctx);
	return NULL;
}

/* idlc -compat OLD NEW: 0 nothing breaks, 1 something does, 2 an input is unusable. */
static int
cli_compat(const struct cli *c)
{
	struct idlc_ctx *old = cli_compat_read(c, c->input);
	struct idlc_ctx *new = old != NULL ? cli_compat_read(c, c->input2) : NULL;
	struct strbuf sb = STRBUF_INIT;
	struct idlc_compat r;
	int rc = 2;

	if (new != NULL && idlc_compat(old, new, &r) == 0) {
		if (c->json)
			idlc_compat_json(&r, &sb);
		else
			idlc_compat_text(&r, c->verbose, &sb);
		if (sb.failed) {
			fputs("idlc: out of memory\n", stderr);
		} else {
			fputs(strbuf_str(&sb), stdout);
			rc = r.errors > 0 || (c->opts.werror && r.warnings > 0) ? 1 : 0;
		}
	} else if (new != NULL) {
		fputs("idlc: out of memory\n", stderr);
	}
	strbuf_fini(&sb);
	idlc_destroy(new);
	idlc_destroy(old);
	return fflush(stdout) == 0 ? rc : 2;
}

int
main(int argc, char **argv)
{
	struct cli c;
	struct idlc_ctx *ctx;
	const char *env;
	int rc;

	memset(&c, 0, sizeof c);
	c.opts.include_dir = IDLC_PKGINCLUDEDIR;
	/* The build and the tests use the source tree's copy before installation. */
	env = getenv("IDLC_INCLUDE_DIR");
	if (env != NULL && env[0] != '\0')
		c.opts.include_dir = env;
	env = getenv("IDLC_CPP");
	if (env != NULL && env[0] != '\0')
		c.opts.cpp = env;
	cli_parse(&c, argc, argv);
	if (c.compat) {
		rc = cli_compat(&c);
		free(c.cpp_args);
		free(c.targets);
		return rc;
	}

	ctx = idlc_create(&c.opts, cli_diag, NULL);
	if (ctx == NULL) {
		fputs("idlc: out of memory\n", stderr);
		return 1;
	}
	/* The checks run after syntax errors too, on what parsed: one run reports them all. */
	idlc_parse_file(ctx, c.input);
	rc = idlc_check(ctx);
	if (rc == 0 && c.verbose)
		cli_verbose(idlc_module(ctx));
	if (rc == 0)
		rc = idlc_generate(ctx);
	if (rc == 0 && c.deps) {
		char *name = c.dep.file == NULL ? cli_deps_name(c.input) : NULL;

		if (c.dep.file == NULL)
			c.dep.file = name;
		if (c.dep.file == NULL) {
			fputs("idlc: out of memory\n", stderr);
			rc = 1;
		} else {
			rc = idlc_write_deps(ctx, &c.dep);
		}
		free(name);
	}
	idlc_destroy(ctx);
	free(c.cpp_args);
	free(c.targets);
	return rc == 0 ? 0 : 1;
}
