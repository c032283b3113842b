/*
 * idlcall.c - call any routine of a running server from its .defs file, without stubs; or
 * serve an interface from a shared library, without generated code (idlcall_serve.c).
 *
 *     idlcall [-I DIR] [-D NAME[=VALUE]] [-U NAME] [--json] [--trace] [-t MS]
 *             FILE.defs ADDRESS ROUTINE [ARG...]
 *     idlcall [-I DIR] [-D NAME[=VALUE]] FILE.defs --list
 *     idlcall [-I DIR] [-D NAME[=VALUE]] [--trace] --serve FILE.defs ADDRESS LIB.so
 *             [--prefix P]
 *
 * The .defs file goes through cpp and the compiler's front end (libidlc.a) at run time; the
 * descriptor built from it gives the same signature hashes and the same message bytes as
 * compiled stubs, so idlcall can call any idlkit server. docs/idlcall.md is the manual.
 *
 * Exit status: 0 when the call succeeded (or serving stopped on a signal), 1 when it failed
 * (the error is printed by name), 2 for a usage error or an interface that does not compile.
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>
#include <idl/idl_ool.h>
#include <idl/idl_trace.h>
#include <idl/idl_transport.h>

#include "idlcall.h"

struct call_opts {
	const char **cpp_args;
	size_t ncpp_args;
	bool json;
	bool trace;
	bool list;
	bool serve;
	const char *prefix; /* --prefix: the functions' prefix for --serve, NULL: the .defs's */
	int timeout_ms; /* 0: the routine's or the port's default */
};

static void
call_usage(FILE *f)
{
	fputs("usage: idlcall [OPTIONS] FILE.defs ADDRESS ROUTINE [ARG...]\n"
	      "       idlcall [OPTIONS] FILE.defs --list\n"
	      "       idlcall [OPTIONS] --serve FILE.defs ADDRESS LIB.so [--prefix P]\n"
	      "  -I DIR, -D NAME[=VALUE], -U NAME   passed to cpp\n"
	      "  -j, --json         print the reply as one JSON object\n"
	      "  --trace            print every message sent and received, decoded\n"
	      "  -t, --timeout MS   the call's deadline in milliseconds\n"
	      "  -l, --list         list the routines of FILE.defs with their signatures\n"
	      "  --serve            serve FILE.defs on ADDRESS with the functions of LIB.so\n"
	      "                     until SIGINT or SIGTERM\n"
	      "  --prefix P         with --serve: the functions' names are P<routine>\n"
	      "                     (default: the server prefix of FILE.defs)\n"
	      "  -h, --help         this text\n"
	      "Arguments: integers, true/false, reals, text for chars and strings, [1,2,3] for\n"
	      "arrays, hex digits or @FILE for bytes and out-of-line data, an ADDRESS (or null)\n"
	      "for a port, [ADDRESS,...] for ports. See idlcall(1).\n",
	      f);
}

static int
call_parse_opts(int argc, char **argv, struct call_opts *o)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "trace", no_argument, NULL, 'T' },
		{ "timeout", required_argument, NULL, 't' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "serve", no_argument, NULL, 'S' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	/* Every argument may go to cpp, with its value. */
	if ((o->cpp_args = calloc((size_t)argc * 2 + 1, sizeof *o->cpp_args)) == NULL)
		return -1;
	/* '+': options end at FILE.defs, so that negative numbers stay arguments. */
	while ((c = getopt_long(argc, argv, "+I:D:U:jt:lh", longs, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'I':
		case 'D':
		case 'U':
			/* cpp takes "-I DIR" as two words as well as "-IDIR" as one. */
			o->cpp_args[o->ncpp_args++] = c == 'I' ? "-I" : c == 'D' ? "-D" : "-U";
			o->cpp_args[o->ncpp_args++] = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'T':
			o->trace = true;
			break;
		case 't':
			o->timeout_ms = (int)strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || o->timeout_ms <= 0) {
				fprintf(stderr, "idlcall: -t wants a positive number of "
						"milliseconds\n");
				return -1;
			}
			break;
		case 'l':
			o->list = true;
			break;
		case 'S':
			o->serve = true;
			break;
		case 'P':
			o->prefix = optarg;
			break;
		case 'h':
			call_usage(stdout);
			exit(0);
		case 'V':
			printf("idlcall (idlkit) %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			return -1;
		}
	}
	return 0;
}

static int
call_list(const struct idl_subsystem *ss)
{
	printf("subsystem %s %d: %u routines\n", ss->name, ss->base, ss->nroutines);
	for (uint32_t n = 0; n < ss->nroutines; n++) {
		const struct idl_routine_desc *rt = &ss->routines[n];
		char *sig;

		if (rt->kind == IDL_RT_SKIP) {
			printf("  %d skip\n", (int)((uint32_t)ss->base + n));
			continue;
		}
		if ((sig = idlcall_signature(rt)) == NULL)
			return 1;
		printf("  %d %s\n", (int)((uint32_t)ss->base + n), sig);
		free(sig);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

/* Reports a failed call: on standard error by name, and as JSON when asked. */
static int
call_failed(const struct call_opts *o, const struct idl_subsystem *ss,
	    const struct idl_routine_desc *rt, int kr)
{
	char what[160];

	snprintf(what, sizeof what, "%s.%s", ss->name, rt->name);
	if (kr > 0) /* what failed first (the detail, which may name the routine), then the code */
		fprintf(stderr, "idlcall: %s: the server returned %d\n", what, kr);
	else
		fprintf(stderr, "idlcall: %s\n", idl_errmsg(kr, what));
	if (o->json)
		printf("{\"return\": %d, \"error\": \"%s\"}\n", kr,
		       kr > 0 ? "server-defined" : idl_errname(kr));
	return 1;
}

/* Reports a message to the tracer (a no-op while tracing is off) when the runtime's own
 * trace points did not: a runtime built without them still traces idlcall's calls. */
static void
call_trace(const char *address, int dir, const idl_msg_header_t *m, int64_t t)
{
	struct idl_trace_event ev = {
		.side = IDL_TRACE_CLIENT,
		.dir = dir,
		.address = address,
		.msg = m,
		.len = m->size,
		.time_ns = t,
		.elapsed_ns = -1,
	};

	idl_trace_emit(&ev);
}

/* A port argument: the port opened to an ADDRESS, or null. */
static int
call_open_port(const char *text, idl_port_t *port)
{
	*port = IDL_PORT_NULL;
	if (strcmp(text, "null") == 0)
		return 0;
	return idl_port_open(text, port);
}

/* A port (one idl_port_t, malloc()ed) or an array of ports (idl_ool_alloc()ed, which the
 * runtime frees when it is dealloc) from text. Returns 0, 2 for bad text, or the error of
 * the port that did not open. */
static int
call_port_arg(const struct idl_arg_desc *a, const char *text, void **data, uint32_t *count)
{
	char *copy, *p, *tok, *save = NULL;
	idl_port_t *ports;
	size_t len, n = 0, cap = 1;
	int err;

	if (a->kind == IDL_ARG_PORT) {
		if ((ports = malloc(sizeof *ports)) == NULL)
			return IDL_ENOMEM;
		if ((err = call_open_port(text, ports)) != 0) {
			free(ports);
			return err;
		}
		*data = ports;
		*count = 1;
		return 0;
	}
	for (const char *c = text; *c != '\0'; c++)
		cap += *c == ',';
	if ((copy = strdup(text)) == NULL || (ports = idl_ool_alloc(cap * sizeof *ports)) == NULL) {
		free(copy);
		return IDL_ENOMEM;
	}
	p = copy;
	len = strlen(p);
	if (len >= 2 && p[0] == '[' && p[len - 1] == ']') {
		p[len - 1] = '\0';
		p++;
	}
	err = 0;
	for (tok = strtok_r(p, ", ", &save); tok != NULL && err == 0;
	     tok = strtok_r(NULL, ", ", &save))
		if ((err = call_open_port(tok, &ports[n])) == 0)
			n++;
	free(copy);
	if (err != 0) {
		while (n > 0)
			idl_port_close(ports[--n]);
		idl_ool_free(ports, cap * sizeof *ports);
		return err;
	}
	*data = ports;
	*count = (uint32_t)n;
	return 0;
}

/* Out-of-line data moved into memory of the runtime's (the runtime frees it with
 * idl_ool_free() when it is dealloc); a fixed size filled up with zeroes. */
static int
call_ool_data(const struct idl_arg_desc *a, void **data, uint32_t *count)
{
	uint32_t n = (a->flags & IDL_ARGF_FIXED) ? a->count : *count;
	size_t bytes = (size_t)n * a->elem_size;
	void *mem = idl_ool_alloc(bytes);

	if (mem == NULL)
		return IDL_ENOMEM;
	if (*count > 0)
		memcpy(mem, *data, (size_t)*count * a->elem_size);
	free(*data);
	*data = mem;
	*count = n;
	return 0;
}

/*
 * Releases the data and ports of the request's descriptor arguments: everything when no
 * call had the message, else what the call did not consume (MIG's rule: data marked dealloc
 * and ports moved are the runtime's once idl_call() or idl_send() has the message).
 */
static void
call_release(const struct idl_routine_desc *rt, const struct idl_arg_value *vals, int handed)
{
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		unsigned disp = a->disposition != 0 ? a->disposition : 19;
		bool ports = a->kind == IDL_ARG_PORT || a->wire_type == IDL_WT_PORT;
		bool moves = (a->flags & IDL_ARGF_DEALLOC) || (ports && disp >= 16 && disp <= 18);

		if ((a->kind != IDL_ARG_OOL && a->kind != IDL_ARG_PORT) ||
		    (a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT) || vals[i].data == NULL ||
		    (handed && moves))
			continue;
		if (a->kind == IDL_ARG_PORT) {
			idl_port_close(*(idl_port_t const *)vals[i].data);
		} else if (ports) {
			for (uint32_t k = 0; k < vals[i].count; k++)
				idl_port_close(((idl_port_t const *)vals[i].data)[k]);
			idl_ool_free((void *)vals[i].data,
				     (size_t)vals[i].count * sizeof(idl_port_t));
		} else {
			idl_ool_free((void *)vals[i].data, (size_t)vals[i].count * a->elem_size);
		}
	}
}

/* Packs the arguments from text, calls, checks and prints the reply. */
static int
call_run(const struct call_opts *o, const struct idlcall_iface *ifc,
	 const struct idl_routine_desc *rt, const char *address, char **texts, int ntexts)
{
	const struct idl_subsystem *ss = &ifc->ss;
	int handed = 0;
	struct idl_arg_value vals[UINT8_MAX + 1];
	void *owned[UINT8_MAX + 1];
	uint64_t *req = NULL, *rep = NULL;
	size_t req_cap = rt->req_max, rep_cap = rt->rep_max < 24 ? 24 : rt->rep_max;
	idl_port_t port = IDL_PORT_NULL;
	int need = 0, t = 0, kr, rc = 1;
	uint64_t traced;
	int64_t t0, t1;
	char err[512];
	char *out;

	memset(vals, 0, sizeof vals);
	memset(owned, 0, sizeof owned);
	for (unsigned i = 0; i < rt->nargs; i++)
		if (rt->args[i].dir == IDL_DIR_IN || rt->args[i].dir == IDL_DIR_INOUT)
			need++;
	if (ntexts != need) {
		char *sig = idlcall_signature(rt);

		fprintf(stderr, "idlcall: %s takes %d argument%s, not %d: %s\n", rt->name, need,
			need == 1 ? "" : "s", ntexts, sig != NULL ? sig : "");
		free(sig);
		return 2;
	}
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		uint32_t count;
		void *data;

		if (a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT)
			continue;
		if (a->kind == IDL_ARG_PORT ||
		    (a->kind == IDL_ARG_OOL && a->wire_type == IDL_WT_PORT)) {
			/* Ports are opened here, released with the request's descriptors. */
			if ((kr = call_port_arg(a, texts[t++], &data, &count)) != 0) {
				rc = call_failed(o, ss, rt, kr);
				goto out;
			}
			if (a->kind == IDL_ARG_PORT)
				owned[i] = data;
			vals[i].data = data;
			vals[i].count = count;
			continue;
		}
		if (idlcall_parse_arg(a, texts[t++], &data, &count, err, sizeof err) != 0) {
			fprintf(stderr, "idlcall: %s: %s\n", rt->name, err);
			rc = 2;
			goto out;
		}
		if (a->kind == IDL_ARG_OOL && call_ool_data(a, &data, &count) != 0) {
			free(data);
			fputs("idlcall: out of memory\n", stderr);
			goto out;
		}
		if (a->kind != IDL_ARG_OOL)
			owned[i] = data;
		vals[i].data = data;
		vals[i].count = count;
	}
	req = calloc(req_cap / 8 + 1, 8);
	rep = calloc(rep_cap / 8 + 1, 8);
	if (req == NULL || rep == NULL) {
		fputs("idlcall: out of memory\n", stderr);
		goto out;
	}
	if ((kr = idl_msg_pack(rt, 0, vals, (idl_msg_header_t *)req, req_cap)) < 0) {
		rc = call_failed(o, ss, rt, kr);
		goto out;
	}
	if ((kr = idl_port_open(address, &port)) != 0) {
		rc = call_failed(o, ss, rt, kr);
		goto out;
	}
	if (o->timeout_ms > 0)
		idl_port_set_timeout(port, o->timeout_ms);

	traced = idl_trace_count();
	t0 = idl_now_ns();
	handed = 1;
	if (rt->kind == IDL_RT_SIMPLEROUTINE)
		kr = idl_send(port, ss, rt->number, (idl_msg_header_t *)req, IDL_TIMEOUT_DEFAULT);
	else
		kr = idl_call(port, ss, rt->number, (idl_msg_header_t *)req,
			      (idl_msg_header_t *)rep, (uint32_t)rep_cap, IDL_TIMEOUT_DEFAULT);
	t1 = idl_now_ns();
	if (idl_trace_count() == traced) {
		const idl_msg_header_t *r = (const idl_msg_header_t *)rep;

		call_trace(address, IDL_TRACE_SEND, (const idl_msg_header_t *)req, t0);
		if (rt->kind == IDL_RT_ROUTINE && r->magic == IDL_MSG_MAGIC &&
		    r->kind == IDL_KIND_REPLY && r->retcode == kr)
			call_trace(address, IDL_TRACE_RECV, r, t1);
	}
	if (kr != 0) {
		rc = call_failed(o, ss, rt, kr);
		goto out;
	}
	if (rt->kind == IDL_RT_ROUTINE &&
	    idl_msg_check(rt, (idl_msg_header_t *)rep, ((idl_msg_header_t *)rep)->size, 1, NULL) !=
		    0) {
		/* As a stub does: a refused reply's descriptors are released. */
		idl_msg_destroy((idl_msg_header_t *)rep);
		rc = call_failed(o, ss, rt, MIG_TYPE_ERROR);
		goto out;
	}
	if (rt->kind == IDL_RT_SIMPLEROUTINE) {
		if (o->json)
			puts("{\"return\": 0}");
		rc = 0;
		goto out;
	}
	out = idl_msg_describe(rt, (idl_msg_header_t *)rep, ((idl_msg_header_t *)rep)->size,
			       IDL_DESCRIBE_REPLY |
				       (o->json ? IDL_DESCRIBE_JSON : IDL_DESCRIBE_LINES));
	/* The reply's data and ports are idlcall's: printed, then released. */
	idl_msg_destroy((idl_msg_header_t *)rep);
	if (out == NULL) {
		fputs("idlcall: out of memory\n", stderr);
		goto out;
	}
	if (o->json)
		printf("{%s%s\"return\": 0}\n", out, *out ? ", " : "");
	else
		fputs(out, stdout);
	free(out);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	call_release(rt, vals, handed);
	idl_port_close(port);
	for (unsigned i = 0; i <= UINT8_MAX; i++)
		free(owned[i]);
	free(req);
	free(rep);
	return rc;
}

/*
 * The operands of --serve: FILE.defs ADDRESS LIB.so, then --prefix P (or --prefix=P) may
 * follow the library, as the synopsis puts it, or come with the options before FILE.defs.
 * The options that shape a call mean nothing to a server and are refused.
 */
static int
call_serve_args(int argc, char **argv, struct call_opts *o)
{
	int n = argc - optind;

	if (o->json || o->list || o->timeout_ms > 0) {
		fputs("idlcall: --serve takes no --json, --list or --timeout\n", stderr);
		return -1;
	}
	if (n == 5 && strcmp(argv[optind + 3], "--prefix") == 0)
		o->prefix = argv[optind + 4];
	else if (n == 4 && strncmp(argv[optind + 3], "--prefix=", 9) == 0)
		o->prefix = argv[optind + 3] + 9;
	else if (n != 3)
		return -1;
	return 0;
}

/* idlcall --serve: the interface loaded, then served until a signal stops it. */
static int
call_serve(int argc, char **argv, struct call_opts *o)
{
	struct idlcall_iface ifc;
	int rc;

	if (call_serve_args(argc, argv, o) != 0) {
		call_usage(stderr);
		return 2;
	}
	if (idlcall_load(argv[optind], o->cpp_args, o->ncpp_args, &ifc) != 0) {
		idlcall_unload(&ifc);
		return 2;
	}
	/* The server's side of every message: the dynamic server registers the subsystem
	 * for decoding. */
	if (o->trace)
		idl_trace_print_to(2);
	rc = idlcall_serve(&ifc, argv[optind + 1], argv[optind + 2], o->prefix);
	idlcall_unload(&ifc);
	return rc;
}

int
main(int argc, char **argv)
{
	struct call_opts o;
	struct idlcall_iface ifc;
	const struct idl_routine_desc *rt;
	const char *defs;
	int rc;

	memset(&o, 0, sizeof o);
	if (call_parse_opts(argc, argv, &o) != 0) {
		call_usage(stderr);
		free(o.cpp_args);
		return 2;
	}
	if (o.serve) {
		rc = call_serve(argc, argv, &o);
		free(o.cpp_args);
		return rc;
	}
	if (o.prefix != NULL) {
		fputs("idlcall: --prefix goes with --serve\n", stderr);
		call_usage(stderr);
		free(o.cpp_args);
		return 2;
	}
	if (optind < argc - 1 &&
	    (strcmp(argv[optind + 1], "--list") == 0 || strcmp(argv[optind + 1], "-l") == 0)) {
		o.list = true;
		argv[optind + 1] = argv[optind];
		optind++;
	}
	if (optind >= argc || (!o.list && argc - optind < 3) || (o.list && argc - optind != 1)) {
		call_usage(stderr);
		free(o.cpp_args);
		return 2;
	}
	defs = argv[optind];
	if (idlcall_load(defs, o.cpp_args, o.ncpp_args, &ifc) != 0) {
		idlcall_unload(&ifc);
		free(o.cpp_args);
		return 2;
	}
	if (o.list) {
		rc = call_list(&ifc.ss);
	} else if ((rt = idlcall_find(&ifc.ss, argv[optind + 2])) == NULL) {
		fprintf(stderr,
			"idlcall: %s: subsystem %s has no routine '%s' (--list shows "
			"them)\n",
			defs, ifc.ss.name, argv[optind + 2]);
		rc = 2;
	} else {
		idl_trace_register(&ifc.ss);
		if (o.trace)
			idl_trace_print_to(2);
		rc = call_run(&o, &ifc, rt, argv[optind + 1], argv + optind + 3, argc - optind - 3);
	}
	idlcall_unload(&ifc);
	free(o.cpp_args);
	return rc;
}
