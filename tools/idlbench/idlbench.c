/*
 * idlbench.c - times bench.defs over every transport built, beside each transport's floor
 * and the ONC RPC peer, and prints seed 004's tables (docs/benchmarks.md).
 *
 *     idlbench [--placement same|split|free|all] [--transports LIST] [--routines LIST]
 *              [--rounds N] [--iterations N] [--reps N] [--json FILE] [--plot FILE]
 *              [--quick] [--marshal] [--connect ADDRESS]
 *     idlbench serve [--dynamic] ADDRESS
 *
 * A run is placements x rounds; a round runs every cell once - each routine over each
 * transport, idlkit and floor side by side - so that the ratios compare figures taken under
 * the same conditions (this VM's cross-CPU figures are bimodal, perf-notes). A cell is a
 * forked server and a forked client (idlbench_cell.c) that warm up and then time `reps`
 * repetitions of `iterations` calls; the round's figure is the median of the repetitions.
 * The tables print the median of the round figures and their min-max.
 *
 * Beside `unix` runs `unix-dyn`: the same client, transport and floor, with the server
 * interpreting bench.defs's descriptors (<idl/idl_dynamic.h>) instead of running the
 * generated demux, so that its cost line reads what the dynamic path costs.
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
	const char *json;
	const char *plot;
	int quick;
	int marshal_only;
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
	fprintf(f, "usage: idlbench [OPTIONS]\n"
		   "       idlbench serve [--dynamic] ADDRESS\n"
		   "Times bench.defs over every transport built, beside each one's raw floor and\n"
		   "the ONC RPC peer, and prints lmbench-style tables (docs/benchmarks.md).\n"
		   "  --placement same|split|free|all   client and server on one CPU, two, or\n"
		   "                                    left alone (default all)\n"
		   "  --transports LIST    e.g. unix,tcp,oncrpc (default: every one built);\n"
		   "                       unix-dyn: unix served by the interpreted server\n"
		   "  --routines LIST      e.g. null,add,notify (default: every row)\n"
		   "  --rounds N           rounds per placement (default 5; --quick 3)\n"
		   "  --iterations N       calls per repetition (default 2000; --quick 300;\n"
		   "                       the marshaling row 200000, 20000 when quick)\n"
		   "  --reps N             repetitions per cell and round (default 3)\n"
		   "  --json FILE          the results as JSON\n"
		   "  --plot FILE.png|svg  a chart through gnuplot\n"
		   "  --quick              a run of under a minute\n"
		   "  --marshal            only the in-process marshaling row (stubs vs XDR)\n"
		   "  --connect ADDRESS    time the calls against a running `idlbench serve`\n"
		   "serve options:\n"
		   "  --dynamic            serve through the interpreted server (no stubs)\n");
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

/* The columns: every registered transport idlbench can address, then the peers. */
static int
ib_columns(struct ib_run *run, const struct ib_opts *o)
{
	static const char *const known[] = { "unix",	   "unix-dyn",	 "udp",	   "tcp",
					     "shm",	   "port",	 "oncrpc", "oncrpc-udp",
					     "oncrpc-tcp", "oncrpc-unix" };
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
				if (strcmp(s.names[i], "unix") == 0)
					ib_add_dynamic(run, o, "unix");
			}
	for (size_t i = 0; i < s.n; i++)
		if (!used[i])
			ib_note(run, "transport %s: idlbench has no address maker or floor for it",
				s.names[i]);
	if (ib_peer_available()) {
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
	ib_twins(run);
	return 0;
}

/* Why a cell cannot run (a printed "n/a"), NULL if it can, or "" to leave it out. */
static const char *
ib_skip(const struct ib_run *run, const struct ib_row *row, const struct ib_col *col, int side)
{
	if (col->peer)
		return side == 0 && (strcmp(row->name, "null") == 0 ||
				     strcmp(row->name, "add") == 0 ||
				     strcmp(row->name, "biginout") == 0)
			       ? NULL
			       : "";
	if (row->mode == IB_MODE_SENDTO)
		return row->present > 0 && strcmp(col->scheme, "udp") == 0 && run->connect == NULL
			       ? NULL
			       : "";
	if (!row->present)
		return "not in bench.defs";
	if (side == 1 && col->twin != NULL)
		return ""; /* the compiled column's floor, shared after the run (ib_share_floors) */
	if (col->dgram_max != 0 && (row->req > col->dgram_max || row->rep > col->dgram_max ||
				    row->payload > col->dgram_max))
		return "above the datagram limit";
	if (run->connect != NULL && row->mode == IB_MODE_PINGPONG)
		return "";
	if (side == 1 && col->floor == NULL)
		return run->connect != NULL ? "" : "no floor";
	if (side == 1 && row->metric == IB_BANDWIDTH && !fl_ool_supported(col->floor))
		return "no floor";
	return NULL;
}

static int
ib_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
ib_median(double *v, unsigned n)
{
	qsort(v, n, sizeof v[0], ib_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const struct ib_row *
ib_row_named(const char *name)
{
	for (size_t i = 0; i < ib_nrows; i++)
		if (strcmp(ib_rows[i].name, name) == 0)
			return &ib_rows[i];
	return NULL;
}

struct ib_loop {
	struct ib_run *run;
	const char *dir;
	unsigned addr_n;
	unsigned done, total;
	int progress;
};

static void
ib_progress(struct ib_loop *lp, const struct ib_result *r, unsigned round, const char *kind)
{
	lp->done++;
	if (!lp->progress)
		return;
	fprintf(stderr, "\ridlbench: %s round %u/%u  %-9s %-11s %-6s [%u/%u]\033[K",
		ib_placement_name(r->placement), round + 1, lp->run->rounds, r->row->name,
		r->col->name, kind, lp->done, lp->total);
}

/* Runs one side of one result for one round. */
static void
ib_one(struct ib_loop *lp, struct ib_result *r, int side, unsigned round)
{
	struct ib_run *run = lp->run;
	struct ib_cell cell;
	struct ib_reps reps;
	int cc = -1, cs = -1;

	memset(&cell, 0, sizeof cell);
	cell.row = r->row;
	cell.col = r->col;
	cell.kind = r->col->peer ? IB_PEER : side == 1 ? IB_FLOOR : IB_IDL;
	/* notify-sendto: side 0 is the unconnected sendto() floor, side 1 the connected one. */
	if (r->row->mode == IB_MODE_SENDTO) {
		cell.kind = IB_FLOOR;
		if (side == 1)
			cell.row = ib_row_named("notify");
	}
	cell.placement = r->placement;
	cell.reps = run->reps;
	cell.iterations = run->iterations / r->row->iter_div;
	if (cell.iterations < 5)
		cell.iterations = 5;
	cell.warmup = cell.iterations / 5 < 20 ? 20 : cell.iterations / 5;
	if (r->placement == IB_SAME)
		cc = cs = run->cpu0;
	else if (r->placement == IB_SPLIT)
		cc = run->cpu0, cs = run->cpu1;
	if (run->connect != NULL) {
		cell.no_server = 1;
		snprintf(cell.addr, sizeof cell.addr, "%s", run->connect);
	} else if (ib_make_addr(r->col->scheme, lp->dir, lp->addr_n++, cell.addr,
				sizeof cell.addr) != 0 ||
		   (cell.row->mode == IB_MODE_PINGPONG &&
		    ib_make_addr(r->col->scheme, lp->dir, lp->addr_n++, cell.addr2,
				 sizeof cell.addr2) != 0)) {
		snprintf(r->why, sizeof r->why, "cannot make an address");
		return;
	}
	ib_progress(lp, r, round,
		    cell.kind == IB_FLOOR ? "floor"
		    : r->col->peer	  ? "peer"
					  : "idlkit");
	if (ib_cell_run(&cell, cc, cs, &reps) != 0 || reps.n == 0) {
		/* A failure is printed as n/a with its reason; the first reason stays. */
		if (r->why[0] == '\0')
			snprintf(r->why, sizeof r->why, "%s%.80s", side == 1 ? "floor: " : "",
				 reps.why[0] != '\0' ? reps.why : "failed");
		return;
	}
	r->v[side][r->n[side]++] = ib_median(reps.v, reps.n);
}

static void
ib_loop(struct ib_loop *lp)
{
	struct ib_run *run = lp->run;

	for (size_t p = 0; p < run->nplacements && !ib_interrupted; p++) {
		for (unsigned round = 0; round < run->rounds && !ib_interrupted; round++) {
			for (size_t i = 0; i < run->nresults && !ib_interrupted; i++) {
				struct ib_result *r = &run->results[i];

				if (r->placement != run->placements[p])
					continue;
				/* idlkit first in even rounds, the floor first in odd ones, so that
				 * neither always runs on a machine the other just warmed. */
				for (int k = 0; k < 2; k++) {
					int side = (k + (int)round) % 2;
					const char *why = ib_skip(run, r->row, r->col, side);

					if (why == NULL)
						ib_one(lp, r, side, round);
				}
			}
		}
	}
	if (lp->progress)
		fprintf(stderr, "\r\033[K");
}

/* A dynamic column's floor is its twin's, taken in the same rounds and placements: copied so
 * that its ratio and its JSON floor read as every column's do. */
static void
ib_share_floors(struct ib_run *run)
{
	for (size_t i = 0; i < run->nresults; i++) {
		struct ib_result *r = &run->results[i];

		if (r->col->twin == NULL)
			continue;
		for (size_t k = 0; k < run->nresults; k++) {
			const struct ib_result *t = &run->results[k];

			if (t->col == r->col->twin && t->row == r->row &&
			    t->placement == r->placement) {
				memcpy(r->v[1], t->v[1], sizeof r->v[1]);
				r->n[1] = t->n[1];
				break;
			}
		}
	}
}

static int
ib_results(struct ib_run *run)
{
	size_t n = 0;

	run->results = calloc(run->nplacements * ib_nrows * run->ncols, sizeof *run->results);
	if (run->results == NULL)
		return -1;
	for (size_t p = 0; p < run->nplacements; p++)
		for (size_t i = 0; i < ib_nrows; i++)
			for (size_t c = 0; c < run->ncols; c++) {
				struct ib_result *r = &run->results[n];
				const char *why0 = ib_skip(run, &ib_rows[i], &run->cols[c], 0);
				const char *why1 = ib_skip(run, &ib_rows[i], &run->cols[c], 1);

				if (ib_rows[i].present < 0)
					continue; /* filtered out by --routines */
				if (why0 != NULL && why0[0] == '\0')
					continue;
				r->placement = run->placements[p];
				r->row = &ib_rows[i];
				r->col = &run->cols[c];
				if (why0 != NULL)
					snprintf(r->why, sizeof r->why, "%s", why0);
				else if (why1 != NULL && why1[0] != '\0')
					snprintf(r->why, sizeof r->why, "floor: %s", why1);
				n++;
			}
	run->nresults = n;
	return 0;
}

static unsigned
ib_count_cells(const struct ib_run *run)
{
	unsigned n = 0;

	for (size_t i = 0; i < run->nresults; i++)
		for (int side = 0; side < 2; side++)
			if (ib_skip(run, run->results[i].row, run->results[i].col, side) == NULL)
				n++;
	return n * run->rounds;
}

static void
ib_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
	if (optind != argc) {
		ib_usage(stderr);
		return -1;
	}
	return 0;
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

int
main(int argc, char **argv)
{
	static const char *const rownames[] = {
		"null",	    "add",    "intrpc", "bigin",  "bigout",
		"biginout", "ool64k", "ool1m",	"notify", "notifypp"
	};
	struct ib_opts o;
	struct ib_run run;
	struct ib_loop lp;
	char dir[256];
	const char *tmp = getenv("TMPDIR");
	int rc = 0;

	if (argc >= 2 && strcmp(argv[1], "serve") == 0) {
		int dynamic = argc == 4 && strcmp(argv[2], "--dynamic") == 0;

		if (argc != 3 + dynamic || argv[2 + dynamic][0] == '-') {
			ib_usage(stderr);
			return 2;
		}
		return ib_serve_forever(argv[2 + dynamic], 1, dynamic);
	}
	memset(&o, 0, sizeof o);
	memset(&run, 0, sizeof run);
	o.placements = 7;
	if (ib_parse(argc, argv, &o, &run) != 0)
		return 2;
	if (run.connect != NULL && o.placements == 7)
		o.placements = 1u << IB_FREE; /* the server is elsewhere: only ours can be pinned */
	ib_setup(&run, &o);
	ib_rows_init();
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
		if (ib_columns(&run, &o) != 0)
			return 2;
		ib_placements(&run, &o);
		if (ib_results(&run) != 0) {
			fprintf(stderr, "idlbench: out of memory\n");
			return 1;
		}
		snprintf(dir, sizeof dir, "%s/idlbench.XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
		if (mkdtemp(dir) == NULL) {
			perror("idlbench: mkdtemp");
			return 1;
		}
		signal(SIGINT, ib_on_interrupt);
		signal(SIGTERM, ib_on_interrupt);
		signal(SIGPIPE, SIG_IGN);
		memset(&lp, 0, sizeof lp);
		lp.run = &run;
		lp.dir = dir;
		lp.progress = isatty(2);
		lp.total = ib_count_cells(&run);
		ib_loop(&lp);
		ib_share_floors(&run);
		ib_rmdir(dir);
		if (ib_interrupted) {
			fprintf(stderr, "idlbench: interrupted\n");
			return 130;
		}
	}
	if (run.connect == NULL &&
	    (o.marshal_only || o.routines == NULL || ib_in_list(o.routines, "biginout"))) {
		/* --iterations sets the calls per repetition here too, so that a profiler can
		 * run the loop a known number of times (docs/benchmarks.md). */
		unsigned n = o.iterations > 0 ? (unsigned)o.iterations : o.quick ? 20000 : 200000;

		run.marshal_idl_ns = ib_idl_biginout_ns(n);
		run.marshal_xdr_ns = ib_xdr_biginout_ns(n);
	}
	ib_report_text(stdout, &run);
	if (o.json != NULL && ib_report_json(o.json, &run) != 0)
		rc = 1;
	if (o.plot != NULL && ib_report_plot(o.plot, &run) != 0)
		rc = 1;
	free(run.results);
	return rc;
}
