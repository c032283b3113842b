/*
 * idlbench.c - the command line, layer 6, the top: times an interface over every transport
 * built, beside each transport's floor (and, for bench.defs, the peers), and prints the
 * verdict, seed 004's tables and a summary (docs/benchmarks.md). The interface is bench.defs,
 * or the user's own (--defs, --call, --setup).
 *
 *     idlbench [--placement same|split|free|all] [--transports LIST] [--routines LIST]
 *              [--rounds N] [--iterations N] [--reps N] [--json FILE] [--plot FILE]
 *              [--markdown FILE] [--quick] [--marshal] [--connect ADDRESS] [--inflight N]
 *              [--defs FILE.defs [-I DIR] [-D NAME[=VALUE]] [-U NAME]
 *               --call '[NAME=]ROUTINE ARG...'... [--setup 'ROUTINE ARG...']...
 *               [--impl LIB.so] [--interpreted]]
 *     idlbench serve [--dynamic] ADDRESS
 *     idlbench serve --defs FILE.defs [-I DIR] [-D ...] [--impl LIB.so] [--interpreted]
 *              ADDRESS
 *
 * This file reads the command line and puts the run together: the interface (bench.defs's
 * rows, or the user's calls built and loaded by idlbench_build.c), the columns and
 * placements (idlbench_cols.c), the probe, the rounds (idlbench_run.c) and the reports
 * (ib_report.h). Every layer below may be used here; it must not be used by any other file
 * (tests/lint/idlbench.sh).
 */
#include <config.h>

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl.h>

#include "ib_report.h"

struct ib_opts {
	unsigned placements; /* bit per enum ib_placement */
	const char *transports; /* comma list, or NULL for all */
	const char *routines;
	long rounds, iterations, reps;
	long inflight; /* 0: not given */
	const char *json;
	const char *plot;
	const char *markdown;
	int quick;
	int marshal_only;
	/* The user's interface: --defs, its cpp options (also the C compiler's), --call,
	 * --setup. */
	const char *defs;
	const char **cpp;
	size_t ncpp;
	const char **calls, **setup;
	size_t ncalls, nsetup;
	const char *impl;
	int interpreted;
	int serve; /* idlbench serve --defs */
	int dynamic; /* idlbench serve --dynamic */
};

static volatile sig_atomic_t ib_interrupted;

static void
ib_on_interrupt(int sig)
{
	(void)sig;
	ib_interrupted = 1;
}

static void
ib_usage(FILE *f)
{
	fprintf(f,
		"usage: idlbench [OPTIONS]\n"
		"       idlbench --defs FILE.defs --call 'ROUTINE ARG...' [--call ...] [OPTIONS]\n"
		"       idlbench serve [--dynamic] ADDRESS\n"
		"       idlbench serve --defs FILE.defs [--impl LIB.so] [--interpreted] ADDRESS\n"
		"Times an interface over every transport built, beside each one's floor (the same\n"
		"bytes moved by a minimal program of our own), and says which is fastest: "
		"bench.defs\n"
		"(with the ONC RPC peer), or your own with --defs and --call.\n"
		"  --placement same|split|free|all   client and server on one CPU, two, or\n"
		"                                    left alone (default all)\n"
		"  --transports LIST    e.g. unix,tcp,oncrpc (default: every one built);\n"
		"                       unix-dyn: unix served by the interpreted server\n"
		"  --routines LIST      bench.defs's rows, e.g. null,add,notify (default: all)\n"
		"  --rounds N           rounds per placement (default 5; --quick 3)\n"
		"  --iterations N       calls per repetition (default 2000; --quick 300;\n"
		"                       the marshaling row 200000, 20000 when quick)\n"
		"  --reps N             repetitions per cell and round (default 3)\n"
		"  --json FILE          the results as JSON (- for standard output)\n"
		"  --plot FILE.png|svg  a chart of every table through gnuplot:\n"
		"                       FILE-PLACEMENT-TABLE.png|svg\n"
		"  --markdown FILE      the verdict and the tables as Markdown (- for standard\n"
		"                       output, instead of the text)\n"
		"  --quick              a run of under a minute\n"
		"  --marshal            only the in-process marshaling row (stubs vs XDR)\n"
		"  --connect ADDRESS    time the calls against a running `idlbench serve`\n"
		"  --inflight N         keep N calls in flight (1-1024) from one thread on the\n"
		"                       latency rows: calls per second, beside the floor's\n"
		"                       pipelined loop (default 1: one call at a time)\n"
		"Your own interface:\n"
		"  --defs FILE.defs     time its routines, with stubs generated and compiled "
		"($CC)\n"
		"  -I DIR, -D NAME[=VALUE], -U NAME   for cpp and the C compiler\n"
		"  --call '[NAME=]ROUTINE ARG...'     a row: the routine called with these\n"
		"                       arguments, written as idlcall takes them (@FILE too)\n"
		"  --setup 'ROUTINE ARG...'           a call made once on each server before\n"
		"                       its rows are timed (with --impl: state they need)\n"
		"  --impl LIB.so        the server's routines (default: null ones that answer\n"
		"                       KERN_SUCCESS with empty out arguments); one server per\n"
		"                       transport and round, kept across its rows\n"
		"  --interpreted        the interpreted client and server instead of compiled "
		"stubs\n"
		"serve options:\n"
		"  --dynamic            serve bench.defs through the interpreted server (no "
		"stubs)\n");
}

static long
ib_number(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "idlbench: %s wants a number from %ld to %ld\n", opt, lo, hi);
		exit(2);
	}
	return v;
}

/* Appends s to a list of strings; -1 when memory is short. */
static int
ib_push(const char ***list, size_t *n, const char *s)
{
	const char **v = realloc(*list, (*n + 1) * sizeof *v);

	if (v == NULL)
		return -1;
	*list = v;
	v[(*n)++] = s;
	return 0;
}

/* -I DIR, -D NAME, -U NAME: for cpp (as idlcall takes them) and the C compiler alike. */
static int
ib_cpp_arg(struct ib_opts *o, int c, const char *value)
{
	char *arg = malloc(strlen(value) + 3);

	if (arg == NULL)
		return -1;
	snprintf(arg, strlen(value) + 3, "-%c%s", c, value);
	if (ib_push(&o->cpp, &o->ncpp, arg) == 0)
		return 0;
	free(arg);
	return -1;
}

static int
ib_placement_opt(struct ib_opts *o, const char *v)
{
	static const char *const names[] = { "same", "split", "free" };

	if (strcmp(v, "all") == 0) {
		o->placements = 7;
		return 0;
	}
	for (unsigned p = 0; p < 3; p++)
		if (strcmp(v, names[p]) == 0) {
			o->placements = 1u << p;
			return 0;
		}
	fprintf(stderr, "idlbench: --placement: same, split, free or all\n");
	return -1;
}

/* One option of the run's (the rest are ib_opt_iface()'s); 1 when it is not one. */
static int
ib_opt_run(int opt, struct ib_opts *o, struct ib_run *run)
{
	switch (opt) {
	case 'p':
		return ib_placement_opt(o, optarg);
	case 't':
		o->transports = optarg;
		break;
	case 'r':
		o->routines = optarg;
		break;
	case 'R':
		o->rounds = ib_number("--rounds", optarg, 1, IB_MAX_ROUNDS);
		break;
	case 'n':
		o->iterations = ib_number("--iterations", optarg, 1, 100000000);
		break;
	case 'k':
		o->reps = ib_number("--reps", optarg, 1, 64);
		break;
	case 'j':
		o->json = optarg;
		break;
	case 'P':
		o->plot = optarg;
		break;
	case 'M':
		o->markdown = optarg;
		break;
	case 'q':
		o->quick = 1;
		break;
	case 'm':
		o->marshal_only = 1;
		break;
	case 'c':
		run->connect = optarg;
		break;
	case 'F':
		o->inflight = ib_number("--inflight", optarg, 1, 1024);
		break;
	default:
		return 1;
	}
	return 0;
}

/* The options of the user's interface and of serve; 1 when it is not one. */
static int
ib_opt_iface(int opt, struct ib_opts *o)
{
	switch (opt) {
	case 'd':
		o->defs = optarg;
		return 0;
	case 'C':
		return ib_push(&o->calls, &o->ncalls, optarg);
	case 'S':
		return ib_push(&o->setup, &o->nsetup, optarg);
	case 'L':
		o->impl = optarg;
		return 0;
	case 'i':
		o->interpreted = 1;
		return 0;
	case 'y':
		o->dynamic = 1;
		return 0;
	case 'I':
	case 'D':
	case 'U':
		return ib_cpp_arg(o, opt, optarg);
	}
	return 1;
}

static int
ib_parse(int argc, char **argv, struct ib_opts *o, struct ib_run *run)
{
	static const struct option longopts[] = {
		{ "placement", required_argument, NULL, 'p' },
		{ "transports", required_argument, NULL, 't' },
		{ "routines", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'R' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "reps", required_argument, NULL, 'k' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'P' },
		{ "markdown", required_argument, NULL, 'M' },
		{ "quick", no_argument, NULL, 'q' },
		{ "marshal", no_argument, NULL, 'm' },
		{ "connect", required_argument, NULL, 'c' },
		{ "inflight", required_argument, NULL, 'F' },
		{ "defs", required_argument, NULL, 'd' },
		{ "call", required_argument, NULL, 'C' },
		{ "setup", required_argument, NULL, 'S' },
		{ "impl", required_argument, NULL, 'L' },
		{ "interpreted", no_argument, NULL, 'i' },
		{ "dynamic", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, r;

	while ((opt = getopt_long(argc, argv, "hI:D:U:", longopts, NULL)) != -1) {
		if (opt == 'h') {
			ib_usage(stdout);
			exit(0);
		}
		if (opt == 'V') {
			printf("idlbench %s\n", idl_version());
			exit(0);
		}
		if ((r = ib_opt_run(opt, o, run)) == 1)
			r = ib_opt_iface(opt, o);
		if (r == 1)
			ib_usage(stderr);
		if (r != 0)
			return -1;
	}
	return 0;
}

/* What goes with what: the options of the user's interface need --defs, and some of
 * bench.defs's mean nothing with it. */
static int
ib_check_opts(const struct ib_opts *o, int operands)
{
	const char *bad = NULL;

	if (o->defs == NULL &&
	    (o->ncalls > 0 || o->nsetup > 0 || o->impl != NULL || o->interpreted || o->ncpp > 0))
		bad = "--call, --setup, --impl, --interpreted, -I, -D and -U go with --defs";
	else if (o->defs != NULL && (o->routines != NULL || o->marshal_only || o->dynamic))
		bad = "--routines, --marshal and --dynamic time bench.defs: with --defs, the rows "
		      "are the --call options and --interpreted the interpreted server";
	else if (o->serve && (o->ncalls > 0 || o->nsetup > 0))
		bad = "serve takes no --call or --setup";
	else if (o->inflight > 1 && (o->marshal_only || o->serve))
		bad = "--inflight times the latency rows through their asynchronous stubs: not "
		      "with --marshal or serve";
	else if (o->inflight > 1 && o->interpreted)
		bad = "--inflight with --defs times the compiled asynchronous stubs: not with "
		      "--interpreted";
	else if (!o->serve && o->dynamic)
		bad = "--dynamic goes with serve";
	else if (o->defs != NULL && !o->serve && o->ncalls == 0)
		bad = "--defs wants one or more --call 'ROUTINE ARG...': the calls to time";
	else if (o->markdown != NULL && o->json != NULL && strcmp(o->markdown, "-") == 0 &&
		 strcmp(o->json, "-") == 0)
		bad = "--markdown - and --json - cannot both have standard output";
	else if (operands != (o->serve ? 1 : 0))
		bad = o->serve ? "serve wants one ADDRESS" : "unexpected operands";
	if (bad == NULL)
		return 0;
	fprintf(stderr, "idlbench: %s\n", bad);
	return -1;
}

static void
ib_setup(struct ib_run *run, const struct ib_opts *o)
{
	time_t now = time(NULL);
	struct tm tm;

	run->quick = o->quick;
	run->rounds = (unsigned)(o->rounds > 0 ? o->rounds : o->quick ? 3 : 5);
	run->iterations = (unsigned)(o->iterations > 0 ? o->iterations : o->quick ? 300 : 2000);
	run->reps = (unsigned)(o->reps > 0 ? o->reps : 3);
	run->warmup = run->iterations / 5;
	run->inflight = (unsigned)(o->inflight > 0 ? o->inflight : 1);
	run->keep = o->impl != NULL && run->connect == NULL;
	run->marshal_idl_ns = run->marshal_xdr_ns = -1;
	gmtime_r(&now, &tm);
	strftime(run->date, sizeof run->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The user's interface, loaded, its rows read and its code built; exit status on failure. */
static int
ib_user_load(struct ib_iface *u, const struct ib_opts *o)
{
	memset(u, 0, sizeof *u);
	u->path = o->defs;
	u->impl = o->impl;
	u->interpreted = o->interpreted;
	if (ib_defs_load(u, o->cpp, o->ncpp) != 0)
		return 2;
	for (size_t i = 0; i < o->ncalls; i++)
		if (ib_defs_call(u, o->calls[i], 0) != 0)
			return 2;
	for (size_t i = 0; i < o->nsetup; i++)
		if (ib_defs_call(u, o->setup[i], 1) != 0)
			return 2;
	if (ib_user_rows(u) != 0) {
		fputs("idlbench: out of memory\n", stderr);
		return 1;
	}
	ib_user = u;
	return ib_build(u, o->cpp, o->ncpp) == 0 ? 0 : 1;
}

static void
ib_user_free(struct ib_iface *u)
{
	ib_build_cleanup(u);
	ib_defs_unload(u);
	ib_user = NULL;
}

/* The rows this run times: calls in flight where asked and possible, --routines's. */
static int
ib_pick_rows(struct ib_run *run, const struct ib_opts *o)
{
	static const char *const rownames[] = { "null",	  "add",      "intrpc",	   "bigin",
						"bigout", "biginout", "ool64k",	   "ool1m",
						"notify", "notifypp", "handshake", "resumed" };

	/* With calls in flight, the latency rows that have an asynchronous call are timed in
	 * calls per second; the other rows run as they do without it. */
	for (size_t i = 0; run->inflight > 1 && i < ib_nrows; i++)
		if (ib_rows[i].metric == IB_LATENCY &&
		    (ib_inflight_row(&ib_rows[i]) || ib_user_inflight_row(&ib_rows[i])))
			ib_rows[i].metric = IB_THROUGHPUT;
	if (o->routines == NULL)
		return 0;
	if (ib_check_list("routine", o->routines, rownames, sizeof rownames / sizeof rownames[0]))
		return -1;
	for (size_t i = 0; i < ib_nrows; i++)
		if (!ib_in_list(o->routines, ib_rows[i].name) &&
		    !(ib_rows[i].mode == IB_MODE_SENDTO && ib_in_list(o->routines, "notify")))
			ib_rows[i].present = -1;
	return 0;
}

/* tls: without certificates in the IDL_TLS_* variables, a throwaway CA's, made in the run's
 * private directory and gone with it (floor_tlscert.c), so that the column runs with no
 * set-up. With --connect the server is not ours: its certificates are the user's to give. */
static void
ib_tls_certs(struct ib_run *run, const char *dir)
{
#if HAVE_TRANSPORT_TLS
	const char *cert = getenv("IDL_TLS_CERT");
	char why[400];
	int tls = 0;

	for (size_t i = 0; i < run->ncols; i++)
		tls |= strcmp(run->cols[i].scheme, "tls") == 0;
	if (!tls || run->connect != NULL || (cert != NULL && *cert != '\0'))
		return;
	if (fl_tls_certs(dir, why, sizeof why) != 0)
		ib_note(run, "tls: %s", why);
	else
		ib_note(run, "%s",
			"tls: no certificates in IDL_TLS_CERT: a throwaway CA's (ECDSA P-256), "
			"made for this run and removed with it");
#else
	(void)run;
	(void)dir;
#endif
}

/* The rounds of cells, in a private directory of sockets; exit status on failure. */
static int
ib_measure(struct ib_run *run, const struct ib_opts *o)
{
	const char *tmp = getenv("TMPDIR");
	struct ib_loop lp;
	char dir[256];

	if (ib_columns(run, o->transports) != 0)
		return 2;
	ib_placements(run, o->placements);
	snprintf(dir, sizeof dir, "%s/idlbench.XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("idlbench: mkdtemp");
		return 1;
	}
	ib_tls_certs(run, dir);
	signal(SIGINT, ib_on_interrupt);
	signal(SIGTERM, ib_on_interrupt);
	signal(SIGPIPE, SIG_IGN);
	memset(&lp, 0, sizeof lp);
	lp.run = run;
	lp.dir = dir;
	lp.progress = isatty(2);
	lp.stop = &ib_interrupted;
	/* One call of each row first: the sizes the floors move, and a server that does not
	 * serve the interface is told now rather than as a table of n/a. */
	if ((o->defs != NULL || run->connect != NULL) && ib_probe(&lp, "bench.defs") != 0) {
		ib_rmdir(dir);
		return 1;
	}
	if (ib_results(run) != 0) {
		fprintf(stderr, "idlbench: out of memory\n");
		ib_rmdir(dir);
		return 1;
	}
	lp.total = ib_count_cells(run);
	ib_loop(&lp);
	ib_share_floors(run);
	ib_rmdir(dir);
	if (ib_interrupted) {
		fprintf(stderr, "idlbench: interrupted\n");
		return 130;
	}
	return 0;
}

/* What the run prints and writes: the verdict first, then the legend, the tables and the
 * summary (or Markdown instead, with --markdown -), then the files asked for. */
static int
ib_reports(const struct ib_run *run, const struct ib_opts *o)
{
	int rc = 0, text = o->markdown == NULL || strcmp(o->markdown, "-") != 0;
	FILE *f = stdout;
	struct ib_judgement *j;
	size_t n;

	if (text) {
		ib_report_header(f, run);
		j = ib_judge(run, &n);
		ib_report_verdict(f, run, j, n);
		free(j);
		ib_report_legend(f, run);
		ib_report_text(f, run);
		ib_report_summary(f, run);
	}
	if (o->markdown != NULL && ib_report_markdown(o->markdown, run) != 0)
		rc = 1;
	if (o->json != NULL && ib_report_json(o->json, run) != 0)
		rc = 1;
	if (o->plot != NULL && ib_report_plot(o->plot, run) != 0)
		rc = 1;
	if (run->failed > 0) {
		fprintf(stderr,
			"idlbench: %u row%s could not be timed: its call failed (n/a above)\n",
			run->failed, run->failed == 1 ? "" : "s");
		rc = 1;
	}
	return rc;
}

/* idlbench serve: bench.defs's server, or the user's. */
static int
ib_serve(struct ib_iface *user, const struct ib_opts *o, const char *address)
{
	if (address[0] == '-') {
		ib_usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	return o->defs != NULL ? ib_user_serve_forever(user, address)
			       : ib_serve_forever(address, 1, o->dynamic);
}

static int
ib_main(struct ib_opts *o, struct ib_run *run, struct ib_iface *user, int argc, char **argv)
{
	int rc;

	if (ib_parse(argc, argv, o, run) != 0 || ib_check_opts(o, argc - optind) != 0)
		return 2;
	if (o->defs != NULL && (rc = ib_user_load(user, o)) != 0)
		return rc;
	if (o->serve)
		return ib_serve(user, o, argv[optind]);
	if (run->connect != NULL && o->placements == 7)
		o->placements = 1u
				<< IB_FREE; /* the server is elsewhere: only ours can be pinned */
	ib_setup(run, o);
	if (o->defs == NULL)
		ib_rows_init();
	if (ib_pick_rows(run, o) != 0)
		return 2;
	if (!o->marshal_only && (rc = ib_measure(run, o)) != 0)
		return rc;
	if (run->connect == NULL && o->defs == NULL &&
	    (o->marshal_only || o->routines == NULL || ib_in_list(o->routines, "biginout"))) {
		/* --iterations sets the calls per repetition here too, so that a profiler can
		 * run the loop a known number of times (docs/benchmarks.md). */
		unsigned n = o->iterations > 0 ? (unsigned)o->iterations
			     : o->quick	       ? 20000
					       : 200000;

		run->marshal_idl_ns = ib_idl_biginout_ns(n);
		run->marshal_xdr_ns = ib_xdr_biginout_ns(n);
	}
	return ib_reports(run, o);
}

int
main(int argc, char **argv)
{
	/* Static: the options (the --call list among them) live as long as the program, on
	 * every way out of it. */
	static struct ib_opts o;
	static struct ib_run run;
	static struct ib_iface user;
	int rc;

	o.placements = 7;
	if (argc >= 2 && strcmp(argv[1], "serve") == 0) {
		o.serve = 1;
		argc--;
		argv++;
	}
	rc = ib_main(&o, &run, &user, argc, argv);
	free(run.results);
	ib_user_free(&user);
	for (size_t i = 0; i < o.ncpp; i++)
		free((void *)o.cpp[i]);
	free(o.cpp);
	free(o.calls);
	free(o.setup);
	return rc;
}
