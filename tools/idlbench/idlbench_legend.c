/*
 * idlbench_legend.c - the words around the figures, layer 5 (ib_report.h): the first lines
 * (the machine, the interface and how it was run, the rounds) and "Reading this output", the
 * legend printed once between the verdict and the tables: what each line and mark of the
 * verdict and the tables means, only those this run prints.
 *
 * It reads the run and measures nothing; it must not be used by the layers below it.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <idl/idl.h>

#include "ib_report.h"

/* The interface and how it was run, when it is the user's. */
static void
lg_interface(FILE *f, const struct ib_run *run)
{
	if (ib_user == NULL)
		return;
	fprintf(f, "interface: %s (subsystem %s), %zu row%s; client: %s", ib_user->path,
		ib_user->ss->name, ib_user->ncalls, ib_user->ncalls == 1 ? "" : "s",
		ib_user->interpreted ? "the interpreted client (descriptors)"
				     : "the compiled client stubs");
	if (ib_user->why[0] != '\0')
		fprintf(f, " (%s)", ib_user->why);
	fprintf(f, "; server: %s%s\n",
		ib_user->interpreted ? "the interpreted server with "
				     : "the compiled server stubs with ",
		ib_user->impl != NULL ? ib_user->impl
		: ib_user->resolve != NULL || !ib_user->interpreted
			? "the null routines (KERN_SUCCESS, out arguments empty: the messaging "
			  "alone)"
			: "replies made from the descriptors (no routines: the messaging alone)");
	if (run->keep)
		fprintf(f,
			"servers: one per transport and round, kept across its rows in the order "
			"given,\n         state accumulating (%zu --setup call%s first, then each "
			"row's warm-up and timed calls)\n",
			ib_user->nsetup, ib_user->nsetup == 1 ? "" : "s");
}

/* The peers of the run, with their versions; the bytes of their bandwidth rows travel
 * inside the message, where idlkit's go out of line. */
static void
lg_peers(FILE *f, const struct ib_run *run)
{
	int any = 0;

	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		int first = 1;

		if (!col->peer)
			continue;
		for (size_t k = 0; k < c && first; k++)
			first = !run->cols[k].peer || run->cols[k].prog != col->prog;
		if (first)
			fprintf(f, "%s%s: %s", any++ ? "; " : "peers: ",
				col->prog != NULL ? col->prog->name : "oncrpc",
				ib_peer_version(col));
	}
	if (any)
		fprintf(f, ".\n       A peer's ool64k and ool1m carry the bytes inline, in "
			   "the message.\n");
}

/* With calls in flight, what each floor's pipelined loop batches (floor_pipe.c). */
static void
lg_inflight(FILE *f, const struct ib_run *run)
{
	if (run->inflight <= 1 || run->connect != NULL)
		return;
	fprintf(f,
		"in flight: the latency rows keep %u calls in flight from one thread (the "
		"asynchronous stubs),\n       their floor the raw pipelined loop; it batches:\n",
		run->inflight);
	for (size_t c = 0; c < run->ncols; c++) {
		const struct ib_col *col = &run->cols[c];
		unsigned n = col->floor != NULL ? fl_pipe_depth(col->floor, run->inflight) : 0;

		if (col->floor == NULL || col->peer)
			continue;
		fprintf(f, "       %s: %s", col->name, col->floor->batching);
		if (n < run->inflight)
			fprintf(f, "; at most %u in flight (the queues' depth)", n);
		fputc('\n', f);
	}
}

void
ib_report_header(FILE *f, const struct ib_run *run)
{
	struct utsname u;

	uname(&u);
	fprintf(f, "idlbench %s on %s %s, %ld CPUs, %s\n", idl_version(), u.sysname, u.release,
		sysconf(_SC_NPROCESSORS_ONLN), run->date);
	lg_interface(f, run);
	if (run->nresults == 0)
		return;
	fprintf(f,
		"%u round%s per placement; each figure is the median of the rounds' figures (a "
		"round: %u x %u calls per cell).\n",
		run->rounds, run->rounds == 1 ? "" : "s", run->reps, run->iterations);
	lg_inflight(f, run);
	lg_peers(f, run);
	for (size_t c = 0; c < run->ncols; c++)
		if (run->cols[c].twin != NULL)
			fprintf(f,
				"%s: %s served by the interpreted server (descriptors and libffi) "
				"with %s's floor\n",
				run->cols[c].name, run->cols[c].scheme, run->cols[c].twin->name);
}

/* What the run's output holds, to say only what it prints. */
struct lg_has {
	int peers, dyn, sendto, missing, na;
};

static void
lg_scan(const struct ib_run *run, struct lg_has *h)
{
	memset(h, 0, sizeof *h);
	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];

		h->peers |= r->col->peer;
		h->dyn |= r->col->twin != NULL;
		h->sendto |= r->row->mode == IB_MODE_SENDTO && r->n[0] > 0;
		h->na |= r->why[0] != '\0';
	}
	/* A column that times only some rows leaves "-" in the others (the peers). */
	for (size_t c = 0; c < run->ncols; c++)
		for (size_t i = 0; i < ib_nrows; i++)
			if (ib_rows[i].present > 0 && ib_rows[i].mode != IB_MODE_SENDTO &&
			    run->nplacements > 0 &&
			    ib_find(run, run->placements[0], &ib_rows[i], &run->cols[c]) == NULL)
				h->missing = 1;
}

static void
lg_verdict(FILE *f)
{
	fprintf(f,
		"  verdict  per placement and kind of row (calls, in flight, one-way, bulk), "
		"idlkit's transports\n"
		"           fastest first, network (tcp, udp, tls) apart from local. \"xN\": the "
		"geometric mean over\n"
		"           the kind's rows of its median / the first's. Each is compared with the "
		"one before it\n"
		"           round by round (the geometric mean over their common rows of that "
		"round's ratio): the\n"
		"           order holds when the faster won every round (3 of 4 from 4 rounds on) "
		"by 5%% or more at\n"
		"           the median; else \"within noise\". One round orders nothing.\n"
		"  flags    a figure or floor whose rounds spread over 2x; a cell over 2%% faster "
		"than its floor\n"
		"           (within the floor's spread: noise); a cell over 3x slower than its "
		"floor; a transport\n"
		"           whose client and server CPU per call exceed its time per call by 25%%: "
		"it spins, its\n"
		"           speed bought with CPU.\n");
}

void
ib_report_legend(FILE *f, const struct ib_run *run)
{
	struct lg_has h;

	if (run->nresults == 0)
		return;
	lg_scan(run, &h);
	fprintf(f, "\nReading this output\n");
	lg_verdict(f);
	fprintf(f, "  figure   the median of the rounds' figures; the line beneath: the lowest and "
		   "highest round.\n");
	fprintf(f, "  cpu us   CPU time (user + system) per call, per message (one-way), per MB "
		   "(bulk), in us:\n"
		   "           client+server, the client alone where the server is not ours "
		   "(--connect); start-up\n"
		   "           and warm-up excluded. Beside a time per call, it says what else "
		   "could have run.\n");
	if (run->connect == NULL)
		fprintf(f,
			"  floor    the same bytes over the same kernel object, moved by a "
			"minimal program of our own\n"
			"           (no stubs, no runtime): the least these messages can cost.\n"
			"  ratio    idlkit's figure / the floor's, round by round: for a time 1.25 "
			"is 25%% slower than\n"
			"           the floor, for a rate 0.80 is 80%% of the floor's rate.\n");
	if (h.peers)
		fprintf(f,
			"  speedup  the peer's time / idlkit's over the same transport, round by "
			"round (a rate: idlkit's\n"
			"           / the peer's); above 1, idlkit is faster.\n");
	if (h.dyn)
		fprintf(f, "  cost     the interpreted server's figure / the compiled one's, round "
			   "by round (above 1: slower).\n");
	if (h.missing)
		fprintf(f, "  -        no such cell: the column does not time that row (the ONC "
			   "RPC peer has null, add and\n"
			   "           biginout only; each peer program the rows it serves).\n");
	if (h.na)
		fprintf(f, "  n/a      the cell could not be timed; the reason is under its "
			   "table.\n");
	if (h.sendto)
		fprintf(f, "  udp raw one-way  under a one-way table, two floors alone: UDP sent "
			   "with sendto() on an\n"
			   "           unconnected socket, as idlkit's udp server answers, against "
			   "send() on a connected one.\n");
}
