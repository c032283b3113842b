/*
 * idlbench.c - times an interface over every transport built, beside each transport's floor
 * (and, for bench.defs, the ONC RPC peer), prints seed 004's tables and then a summary
 * (docs/benchmarks.md). The interface is bench.defs, or the user's own (--defs, --call).
 *
 *     idlbench [--placement same|split|free|all] [--transports LIST] [--routines LIST]
 *              [--rounds N] [--iterations N] [--reps N] [--json FILE] [--plot FILE]
 *              [--quick] [--marshal] [--connect ADDRESS] [--inflight N]
 *              [--defs FILE.defs [-I DIR] [-D NAME[=VALUE]] [-U NAME]
 *               --call '[NAME=]ROUTINE ARG...'... [--impl LIB.so] [--interpreted]]
 *     idlbench serve [--dynamic] ADDRESS
 *     idlbench serve --defs FILE.defs [-I DIR] [-D ...] [--impl LIB.so] [--interpreted]
 *              ADDRESS
 *
 * This file reads the command line and puts the run together: the columns (every
 * transport idlbench can address and floor, then the peers), the placements, the rows
 * (bench.defs's, or the user's calls built and loaded by idlbench_build.c), the probe, the
 * rounds (idlbench_run.c) and the reports (idlbench_report.c, idlbench_summary.c).
 *
 * Beside `unix` runs `unix-dyn` for bench.defs: the same client, transport and floor, with
 * the server interpreting bench.defs's descriptors (<idl/idl_dynamic.h>) instead of running
 * the generated demux, so that its cost line reads what the dynamic path costs.
 */
#include <config.h>

#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "idlbench.h"

/* The columns in seed 004's order: the local paths first, the network ones after. */
static const char *const ib_order[] = { "unix", "udp", "tcp", "shm", "port" };

struct ib_opts {
	unsigned placements; /* bit per enum ib_placement */
	const char *transports; /* comma list, or NULL for all */
	const char *routines;
	long rounds, iterations, reps;
	long inflight; /* 0: not given */
	const char *json;
	const char *plot;
	int quick;
	int marshal_only;
	/* The user's interface: --defs, its cpp options (also the C compiler's), --call. */
	const char *defs;
	const char **cpp;
	size_t ncpp;
	const char **calls;
	size_t ncalls;
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
		"  --json FILE          the results as JSON\n"
		"  --plot FILE.png|svg  a chart through gnuplot\n"
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
		"  --impl LIB.so        the server's routines (default: null ones that answer\n"
		"                       KERN_SUCCESS with empty out arguments)\n"
		"  --interpreted        the interpreted client and server instead of compiled "
		"stubs\n"
		"serve options:\n"
		"  --dynamic            serve bench.defs through the interpreted server (no "
		"stubs)\n");
}

static int
ib_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	if (list == NULL)
		return 1;
	for (const char *p = list; *p != '\0';) {
		size_t k = strcspn(p, ",");

		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		p += k;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Every name in a list must be known: a typo should not silently run nothing. */
static int
ib_check_list(const char *what, const char *list, const char *const *known, size_t nknown)
{
	for (const char *p = list; p != NULL && *p != '\0';) {
		size_t k = strcspn(p, ","), i;

		for (i = 0; i < nknown; i++)
			if (strlen(known[i]) == k && strncmp(known[i], p, k) == 0)
				break;
		if (i == nknown) {
			fprintf(stderr, "idlbench: unknown %s '%.*s'; known:", what, (int)k, p);
			for (i = 0; i < nknown; i++)
				fprintf(stderr, " %s", known[i]);
			fputc('\n', stderr);
			return -1;
		}
		p += k;
		if (*p == ',')
			p++;
	}
	return 0;
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

struct ib_schemes {
	const char *names[IB_MAX_COLS];
	size_t n;
};

static void
ib_collect(const struct idl_transport *t, void *arg)
{
	struct ib_schemes *s = arg;

	if (s->n < IB_MAX_COLS)
		s->names[s->n++] = t->scheme;
}

static void
ib_note(struct ib_run *run, const char *fmt, const char *a)
{
	if (run->nnotes < sizeof run->notes / sizeof run->notes[0])
		snprintf(run->notes[run->nnotes++], sizeof run->notes[0], fmt, a);
}

static void
ib_add_col(struct ib_run *run, const char *name, const char *scheme, int peer)
{
	struct ib_col *c = &run->cols[run->ncols++];

	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%s", name);
	c->scheme = scheme;
	c->peer = peer;
	c->floor = peer || run->connect != NULL ? NULL : fl_find(scheme);
	/* One datagram per message: 65,507 bytes over IPv4. */
	c->dgram_max = strcmp(scheme, "udp") == 0 ? 65507 : 0;
}

/* The interpreted server's column beside the compiled one: what the dynamic path costs
 * (Flick's comparison of compiled and interpretive stubs). Same client, transport and
 * floor; only the server's demux differs. */
static void
ib_add_dynamic(struct ib_run *run, const struct ib_opts *o, const char *scheme)
{
	char name[32];

	snprintf(name, sizeof name, "%s-dyn", scheme);
	if (run->ncols < IB_MAX_COLS && ib_in_list(o->transports, name)) {
		ib_add_col(run, name, scheme, 0);
		run->cols[run->ncols - 1].dynamic = 1;
	}
}

/* A dynamic column shares the floor of the compiled column of its scheme, when the run has
 * one, and is compared with it. */
static void
ib_twins(struct ib_run *run)
{
	for (size_t i = 0; i < run->ncols; i++)
		for (size_t k = 0; k < run->ncols && run->cols[i].dynamic; k++)
			if (!run->cols[k].peer && !run->cols[k].dynamic &&
			    strcmp(run->cols[k].scheme, run->cols[i].scheme) == 0) {
				run->cols[i].twin = &run->cols[k];
				run->cols[i].floor = NULL;
				break;
			}
}

/* The peer programs' columns (idlbench_peers.c), after ONC RPC's: NAME-SCHEME for each
 * transport a program serves. "grpc" adds gRPC's column of each transport chosen, as
 * "oncrpc" does; "grpc-tcp" that one. A program that cannot run is a note that says why. */
static struct ib_prog ib_progs[4];

static void
ib_prog_cols(struct ib_run *run, const struct ib_opts *o)
{
	static const char *const schemes[] = { "unix", "tcp" };
	char why[320], name[32];
	size_t n = ib_progs_find(ib_progs, sizeof ib_progs / sizeof ib_progs[0], why, sizeof why);

	if (why[0] != '\0')
		ib_note(run, "peers: %s", why);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < 2 && run->ncols < IB_MAX_COLS; k++) {
			if (!ib_prog_serves(&ib_progs[i], schemes[k], ib_progs[i].transports))
				continue;
			snprintf(name, sizeof name, "%.15s-%.8s", ib_progs[i].name, schemes[k]);
			if (o->transports == NULL || ib_in_list(o->transports, name) ||
			    (ib_in_list(o->transports, ib_progs[i].name) &&
			     ib_in_list(o->transports, schemes[k]))) {
				ib_add_col(run, name, schemes[k], 1);
				run->cols[run->ncols - 1].prog = &ib_progs[i];
			}
		}
}

/* The columns: every registered transport idlbench can address, then the peers. */
static int
ib_columns(struct ib_run *run, const struct ib_opts *o)
{
	/* The transports, then from IB_FIRST_PEER on the peers' names. */
	enum {
		IB_FIRST_PEER = 6
	};
	static const char *const known[] = { "unix",	   "unix-dyn",	  "udp",      "tcp",
					     "shm",	   "port",	  "oncrpc",   "oncrpc-udp",
					     "oncrpc-tcp", "oncrpc-unix", "sdbus",    "sdbus-unix",
					     "grpc",	   "grpc-unix",	  "grpc-tcp", "capnp",
					     "capnp-unix", "capnp-tcp" };
	struct ib_schemes s = { { NULL }, 0 };
	int used[IB_MAX_COLS] = { 0 };

	if (o->transports != NULL && run->connect == NULL &&
	    ib_check_list("transport", o->transports, known, sizeof known / sizeof known[0]))
		return -1;
	idl_transport_foreach(ib_collect, &s);
	if (run->connect != NULL) {
		for (size_t i = 0; i < s.n; i++)
			if (strncmp(run->connect, s.names[i], strlen(s.names[i])) == 0 &&
			    run->connect[strlen(s.names[i])] == ':')
				ib_add_col(run, s.names[i], s.names[i], 0);
		if (run->ncols == 0)
			fprintf(stderr, "idlbench: %s: no transport for this address\n",
				run->connect);
		return run->ncols == 0 ? -1 : 0;
	}
	for (size_t k = 0; k < sizeof ib_order / sizeof ib_order[0]; k++)
		for (size_t i = 0; i < s.n; i++)
			if (!used[i] && strcmp(s.names[i], ib_order[k]) == 0) {
				used[i] = 1;
				if (ib_in_list(o->transports, s.names[i]))
					ib_add_col(run, s.names[i], s.names[i], 0);
				if (strcmp(s.names[i], "unix") == 0 && ib_user == NULL)
					ib_add_dynamic(run, o, "unix");
			}
	for (size_t i = 0; i < s.n; i++)
		if (!used[i])
			ib_note(run, "transport %s: idlbench has no address maker or floor for it",
				s.names[i]);
	if (ib_user != NULL) {
		/* The peers' programs call bench.defs's routines; --interpreted is the interpreted
		 * server of the user's own. */
		for (size_t i = 0; o->transports != NULL && i < sizeof known / sizeof known[0]; i++)
			if ((strcmp(known[i], "unix-dyn") == 0 || i >= IB_FIRST_PEER) &&
			    ib_in_list(o->transports, known[i])) {
				fprintf(stderr,
					"idlbench: --transports %s: with --defs, only transports "
					"(--interpreted times your interface interpreted)\n",
					known[i]);
				return -1;
			}
	} else if (ib_peer_available()) {
		static const char *const peers[][2] = { { "oncrpc-udp", "udp" },
							{ "oncrpc-tcp", "tcp" },
							{ "oncrpc-unix", "unix" } };

		/* "oncrpc" adds the peer of each transport chosen; "oncrpc-tcp" that one. */
		for (size_t i = 0; i < 3 && run->ncols < IB_MAX_COLS; i++)
			if (o->transports == NULL || ib_in_list(o->transports, peers[i][0]) ||
			    (ib_in_list(o->transports, "oncrpc") &&
			     ib_in_list(o->transports, peers[i][1])))
				ib_add_col(run, peers[i][0], peers[i][1], 1);
	} else {
		ib_note(run, "%s", "ONC RPC peer: not built (configure found no rpcgen/libtirpc)");
	}
	if (ib_user == NULL)
		ib_prog_cols(run, o);
	ib_twins(run);
	for (size_t i = 0; run->inflight > 1 && i < run->ncols; i++)
		if (run->cols[i].peer) {
			ib_note(run, "%s",
				"--inflight: the peers are timed one call at a time, so they are "
				"left out of the rows with calls in flight");
			break;
		}
	return 0;
}

/* -I DIR, -D NAME, -U NAME: for cpp (as idlcall takes them) and the C compiler alike. */
static int
ib_cpp_arg(struct ib_opts *o, int c, const char *value)
{
	const char **n = realloc(o->cpp, (o->ncpp + 1) * sizeof *n);
	char *arg = malloc(strlen(value) + 3);

	if (n == NULL || arg == NULL) {
		free(arg);
		if (n != NULL)
			o->cpp = n;
		return -1;
	}
	snprintf(arg, strlen(value) + 3, "-%c%s", c, value);
	o->cpp = n;
	o->cpp[o->ncpp++] = arg;
	return 0;
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
		{ "quick", no_argument, NULL, 'q' },
		{ "marshal", no_argument, NULL, 'm' },
		{ "connect", required_argument, NULL, 'c' },
		{ "inflight", required_argument, NULL, 'F' },
		{ "defs", required_argument, NULL, 'd' },
		{ "call", required_argument, NULL, 'C' },
		{ "impl", required_argument, NULL, 'L' },
		{ "interpreted", no_argument, NULL, 'i' },
		{ "dynamic", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "hI:D:U:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (strcmp(optarg, "all") == 0)
				o->placements = 7;
			else if (strcmp(optarg, "same") == 0)
				o->placements = 1u << IB_SAME;
			else if (strcmp(optarg, "split") == 0)
				o->placements = 1u << IB_SPLIT;
			else if (strcmp(optarg, "free") == 0)
				o->placements = 1u << IB_FREE;
			else {
				fprintf(stderr,
					"idlbench: --placement: same, split, free or all\n");
				return -1;
			}
			break;
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
		case 'd':
			o->defs = optarg;
			break;
		case 'C': {
			const char **n = realloc(o->calls, (o->ncalls + 1) * sizeof *n);

			if (n == NULL)
				return -1;
			o->calls = n;
			o->calls[o->ncalls++] = optarg;
			break;
		}
		case 'L':
			o->impl = optarg;
			break;
		case 'i':
			o->interpreted = 1;
			break;
		case 'y':
			o->dynamic = 1;
			break;
		case 'I':
		case 'D':
		case 'U':
			if (ib_cpp_arg(o, opt, optarg) != 0)
				return -1;
			break;
		case 'h':
			ib_usage(stdout);
			exit(0);
		case 'V':
			printf("idlbench %s\n", idl_version());
			exit(0);
		default:
			ib_usage(stderr);
			return -1;
		}
	}
	return 0;
}

/* What goes with what: the options of the user's interface need --defs, and some of
 * bench.defs's mean nothing with it. */
static int
ib_check_opts(const struct ib_opts *o, int operands)
{
	const char *bad = NULL;

	if (o->defs == NULL && (o->ncalls > 0 || o->impl != NULL || o->interpreted || o->ncpp > 0))
		bad = "--call, --impl, --interpreted, -I, -D and -U go with --defs";
	else if (o->defs != NULL && (o->routines != NULL || o->marshal_only || o->dynamic))
		bad = "--routines, --marshal and --dynamic time bench.defs: with --defs, the rows "
		      "are the --call options and --interpreted the interpreted server";
	else if (o->serve && o->ncalls > 0)
		bad = "serve takes no --call";
	else if (o->inflight > 1 && (o->defs != NULL || o->marshal_only || o->serve))
		bad = "--inflight times bench.defs's latency rows through their asynchronous "
		      "stubs: not with --defs, --marshal or serve";
	else if (!o->serve && o->dynamic)
		bad = "--dynamic goes with serve";
	else if (o->defs != NULL && !o->serve && o->ncalls == 0)
		bad = "--defs wants one or more --call 'ROUTINE ARG...': the calls to time";
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
	run->marshal_idl_ns = run->marshal_xdr_ns = -1;
	gmtime_r(&now, &tm);
	strftime(run->date, sizeof run->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Placements: `split` needs two CPUs. */
static void
ib_placements(struct ib_run *run, const struct ib_opts *o)
{
	cpu_set_t set;

	ib_set_cpu(-1);
	run->cpu0 = run->cpu1 = -1;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				if (run->cpu0 < 0)
					run->cpu0 = c;
				else if (run->cpu1 < 0)
					run->cpu1 = c;
			}
	for (int p = 0; p < 3; p++) {
		if (!(o->placements & (1u << p)))
			continue;
		if (p == IB_SPLIT && run->cpu1 < 0) {
			ib_note(run, "%s", "placement split: this process may use only one CPU");
			continue;
		}
		run->placements[run->nplacements++] = (enum ib_placement)p;
	}
}

/* The user's interface, loaded, its rows read and its code built; exit status on failure. */
static int
ib_user_setup(struct ib_iface *u, const struct ib_opts *o)
{
	memset(u, 0, sizeof *u);
	u->path = o->defs;
	u->impl = o->impl;
	u->interpreted = o->interpreted;
	if (ib_defs_load(u, o->cpp, o->ncpp) != 0)
		return 2;
	for (size_t i = 0; i < o->ncalls; i++)
		if (ib_defs_call(u, o->calls[i]) != 0)
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

int
main(int argc, char **argv)
{
	static const char *const rownames[] = {
		"null",	    "add",    "intrpc", "bigin",  "bigout",
		"biginout", "ool64k", "ool1m",	"notify", "notifypp"
	};
	/* Static: the options (the --call list among them) live as long as the program, on
	 * every way out of it. */
	static struct ib_opts o;
	struct ib_run run;
	struct ib_loop lp;
	struct ib_iface user;
	char dir[256];
	const char *tmp = getenv("TMPDIR");
	int rc = 0;

	memset(&o, 0, sizeof o);
	memset(&run, 0, sizeof run);
	memset(&user, 0, sizeof user);
	o.placements = 7;
	if (argc >= 2 && strcmp(argv[1], "serve") == 0) {
		o.serve = 1;
		argc--;
		argv++;
	}
	if (ib_parse(argc, argv, &o, &run) != 0 || ib_check_opts(&o, argc - optind) != 0)
		return 2;
	if (o.defs != NULL && (rc = ib_user_setup(&user, &o)) != 0) {
		ib_user_free(&user);
		return rc;
	}
	if (o.serve) {
		if (argv[optind][0] == '-') {
			ib_usage(stderr);
			rc = 2;
		} else {
			signal(SIGPIPE, SIG_IGN);
			rc = o.defs != NULL ? ib_user_serve_forever(&user, argv[optind])
					    : ib_serve_forever(argv[optind], 1, o.dynamic);
		}
		ib_user_free(&user);
		return rc;
	}
	if (run.connect != NULL && o.placements == 7)
		o.placements = 1u << IB_FREE; /* the server is elsewhere: only ours can be pinned */
	ib_setup(&run, &o);
	if (o.defs == NULL)
		ib_rows_init();
	/* With calls in flight, the latency rows that have an asynchronous call are timed in
	 * calls per second (idlbench_inflight.c); the other rows run as they do without it. */
	for (size_t i = 0; run.inflight > 1 && i < ib_nrows; i++)
		if (ib_rows[i].metric == IB_LATENCY && ib_inflight_row(&ib_rows[i]))
			ib_rows[i].metric = IB_THROUGHPUT;
	if (o.routines != NULL) {
		if (ib_check_list("routine", o.routines, rownames,
				  sizeof rownames / sizeof rownames[0]))
			return 2;
		for (size_t i = 0; i < ib_nrows; i++)
			if (!ib_in_list(o.routines, ib_rows[i].name) &&
			    !(ib_rows[i].mode == IB_MODE_SENDTO &&
			      ib_in_list(o.routines, "notify")))
				ib_rows[i].present = -1;
	}

	if (!o.marshal_only) {
		if (ib_columns(&run, &o) != 0) {
			ib_user_free(&user);
			return 2;
		}
		ib_placements(&run, &o);
		snprintf(dir, sizeof dir, "%s/idlbench.XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
		if (mkdtemp(dir) == NULL) {
			perror("idlbench: mkdtemp");
			ib_user_free(&user);
			return 1;
		}
		signal(SIGINT, ib_on_interrupt);
		signal(SIGTERM, ib_on_interrupt);
		signal(SIGPIPE, SIG_IGN);
		memset(&lp, 0, sizeof lp);
		lp.run = &run;
		lp.dir = dir;
		lp.progress = isatty(2);
		lp.stop = &ib_interrupted;
		/* One call of each row first: the sizes the floors move, and a server that does
		 * not serve the interface is told now rather than as a table of n/a. */
		if ((o.defs != NULL || run.connect != NULL) && ib_probe(&lp, "bench.defs") != 0) {
			ib_rmdir(dir);
			ib_user_free(&user);
			return 1;
		}
		if (ib_results(&run) != 0) {
			fprintf(stderr, "idlbench: out of memory\n");
			ib_rmdir(dir);
			ib_user_free(&user);
			return 1;
		}
		lp.total = ib_count_cells(&run);
		ib_loop(&lp);
		ib_share_floors(&run);
		ib_rmdir(dir);
		if (ib_interrupted) {
			fprintf(stderr, "idlbench: interrupted\n");
			free(run.results);
			ib_user_free(&user);
			return 130;
		}
	}
	if (run.connect == NULL && o.defs == NULL &&
	    (o.marshal_only || o.routines == NULL || ib_in_list(o.routines, "biginout"))) {
		/* --iterations sets the calls per repetition here too, so that a profiler can
		 * run the loop a known number of times (docs/benchmarks.md). */
		unsigned n = o.iterations > 0 ? (unsigned)o.iterations : o.quick ? 20000 : 200000;

		run.marshal_idl_ns = ib_idl_biginout_ns(n);
		run.marshal_xdr_ns = ib_xdr_biginout_ns(n);
	}
	ib_report_text(stdout, &run);
	ib_report_summary(stdout, &run);
	if (o.json != NULL && ib_report_json(o.json, &run) != 0)
		rc = 1;
	if (o.plot != NULL && ib_report_plot(o.plot, &run) != 0)
		rc = 1;
	if (run.failed > 0) {
		fprintf(stderr,
			"idlbench: %u row%s could not be timed: its call failed (n/a above)\n",
			run.failed, run.failed == 1 ? "" : "s");
		rc = 1;
	}
	free(run.results);
	ib_user_free(&user);
	for (size_t i = 0; i < o.ncpp; i++)
		free((void *)o.cpp[i]);
	free(o.cpp);
	free(o.calls);
	return rc;
}
