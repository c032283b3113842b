/*
 * idlbench_cols.c - a run's columns and placements, layer 4 (ib_run.h): every transport the
 * runtime registered that idlbench can address, in the table's order (local paths and network
 * ones, seed 004's order), the interpreted server beside unix, then the peers (ONC RPC, the
 * peer programs); and the placements this machine allows.
 *
 * Whether a column is network or local is the table's too (ib_col_network()): a transport
 * added to the table lands in its group in the verdict, its address made as its kind's.
 *
 * It knows the cells and the run; it must not know the reports.
 */
#include <config.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "ib_run.h"

/* The transports idlbench can address, in seed 004's order, and which of them carry their
 * messages over IP (the verdict's "network" group; the rest are local). */
static const struct {
	const char *name;
	int network;
} ib_schemes[] = {
	{ "unix", 0 }, { "udp", 1 }, { "tcp", 1 }, { "tls", 1 }, { "shm", 0 }, { "port", 0 },
};

int
ib_col_network(const struct ib_col *col)
{
	for (size_t k = 0; k < sizeof ib_schemes / sizeof ib_schemes[0]; k++)
		if (strcmp(ib_schemes[k].name, col->scheme) == 0)
			return ib_schemes[k].network;
	return 0;
}

int
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
int
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

void
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
ib_add_dynamic(struct ib_run *run, const char *transports, const char *scheme)
{
	char name[32];

	snprintf(name, sizeof name, "%s-dyn", scheme);
	if (run->ncols < IB_MAX_COLS && ib_in_list(transports, name)) {
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
 * "oncrpc" does; "grpc-tcp" that one. A column's scheme is idlkit's column it is compared
 * with: grpc-tls, gRPC over its own TLS, with idlkit's tls:. A program that cannot run is a
 * note that says why. */
static struct ib_prog ib_progs[4];

static void
ib_prog_cols(struct ib_run *run, const char *transports)
{
	static const char *const schemes[] = { "unix", "tcp", "tls" };
	char why[300], name[32];
	size_t n = ib_progs_find(ib_progs, sizeof ib_progs / sizeof ib_progs[0], why, sizeof why);

	if (why[0] != '\0')
		ib_note(run, "peers: %s", why);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0;
		     k < sizeof schemes / sizeof schemes[0] && run->ncols < IB_MAX_COLS; k++) {
			if (!ib_prog_serves(&ib_progs[i], schemes[k], ib_progs[i].transports))
				continue;
			snprintf(name, sizeof name, "%.15s-%.8s", ib_progs[i].name, schemes[k]);
			if (transports == NULL || ib_in_list(transports, name) ||
			    (ib_in_list(transports, ib_progs[i].name) &&
			     ib_in_list(transports, schemes[k]))) {
				ib_add_col(run, name, schemes[k], 1);
				run->cols[run->ncols - 1].prog = &ib_progs[i];
			}
		}
}

/* idlkit's columns: the transports registered that idlbench can address, in the table's
 * order (the compiled server's, and beside unix the interpreted server's); a note for each
 * it cannot. */
static void
ib_transport_cols(struct ib_run *run, const char *transports, const struct ib_schemes *s)
{
	int used[IB_MAX_COLS] = { 0 };

	for (size_t k = 0; k < sizeof ib_schemes / sizeof ib_schemes[0]; k++)
		for (size_t i = 0; i < s->n; i++)
			if (!used[i] && strcmp(s->names[i], ib_schemes[k].name) == 0) {
				used[i] = 1;
				if (ib_in_list(transports, s->names[i]))
					ib_add_col(run, s->names[i], s->names[i], 0);
				if (strcmp(s->names[i], "unix") == 0 && ib_user == NULL)
					ib_add_dynamic(run, transports, "unix");
			}
	for (size_t i = 0; i < s->n; i++)
		if (!used[i])
			ib_note(run, "transport %s: idlbench has no address maker or floor for it",
				s->names[i]);
}

/* The columns: every registered transport idlbench can address, then the peers. */
int
ib_columns(struct ib_run *run, const char *transports)
{
	/* The transports, then from IB_FIRST_PEER on the peers' names. */
	enum {
		IB_FIRST_PEER = 7
	};
	static const char *const known[] = {
		"unix",	       "unix-dyn", "udp",	 "tcp",	       "tls",
		"shm",	       "port",	   "oncrpc",	 "oncrpc-udp", "oncrpc-tcp",
		"oncrpc-unix", "sdbus",	   "sdbus-unix", "grpc",       "grpc-unix",
		"grpc-tcp",    "grpc-tls", "capnp",	 "capnp-unix", "capnp-tcp"
	};
	struct ib_schemes s = { { NULL }, 0 };

	if (transports != NULL && run->connect == NULL &&
	    ib_check_list("transport", transports, known, sizeof known / sizeof known[0]))
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
	ib_transport_cols(run, transports, &s);
	if (ib_user != NULL) {
		/* The peers' programs call bench.defs's routines; --interpreted is the interpreted
		 * server of the user's own. */
		for (size_t i = 0; transports != NULL && i < sizeof known / sizeof known[0]; i++)
			if ((strcmp(known[i], "unix-dyn") == 0 || i >= IB_FIRST_PEER) &&
			    ib_in_list(transports, known[i])) {
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
			if (transports == NULL || ib_in_list(transports, peers[i][0]) ||
			    (ib_in_list(transports, "oncrpc") &&
			     ib_in_list(transports, peers[i][1])))
				ib_add_col(run, peers[i][0], peers[i][1], 1);
	} else {
		ib_note(run, "%s", "ONC RPC peer: not built (configure found no rpcgen/libtirpc)");
	}
	if (ib_user == NULL)
		ib_prog_cols(run, transports);
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

/* Placements: `split` needs two CPUs. */
void
ib_placements(struct ib_run *run, unsigned placements)
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
		if (!(placements & (1u << p)))
			continue;
		if (p == IB_SPLIT && run->cpu1 < 0) {
			ib_note(run, "%s", "placement split: this process may use only one CPU");
			continue;
		}
		run->placements[run->nplacements++] = (enum ib_placement)p;
	}
}
