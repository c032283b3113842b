/*
 * ib_cell.h - the cells, layer 3: the columns (a transport, its floor, a peer), and one
 * measurement ("cell"): one row over one column, timed through the generated stubs and
 * libidlrt (kind IB_IDL), through our own raw program on the same kernel object with the same
 * bytes (IB_FLOOR, ib_floor.h), or through a peer (IB_PEER: ONC RPC; IB_PROG: a peer
 * program). Each cell runs in two forked processes, a server and a client, pinned as the
 * placement says; the client writes one figure per repetition back through a pipe, and the
 * CPU both processes spent comes back with them (idlbench_cell.c).
 *
 * The cells know the base, the floors and the interface (its rows); they must not know runs
 * (rounds, results) or reports (tests/lint/idlbench.sh).
 */
#ifndef IB_CELL_H
#define IB_CELL_H

#include <stddef.h>
#include <sys/types.h>

#include "ib_base.h"
#include "ib_floor.h"
#include "ib_iface.h"

enum ib_kind {
	IB_IDL = 0, /* the generated stubs over libidlrt (the server: or the interpreter) */
	IB_FLOOR = 1, /* our raw program: same kernel object, same bytes */
	IB_PEER = 2, /* ONC RPC (rpcgen + libtirpc) */
	IB_PROBE = 3, /* one call of each row, before the run: sizes, and whether it serves */
	IB_PROG = 4, /* a peer program: sd-bus, gRPC, Cap'n Proto (idlbench_peers.c) */
	IB_SETUP = 5, /* the --setup calls, once, on a server kept across rows */
};

/* A peer program (tools/idlbench/peers/, peer.h's contract): what it said of itself. */
struct ib_prog {
	char name[16]; /* "sdbus", "grpc", "capnp": its columns are NAME-SCHEME */
	char path[512]; /* the program */
	char version[96]; /* its `version` line: "grpc 1.51.1 protobuf 3.21.12" */
	char rows[160]; /* its rows, " null add ... " (blank-separated, blanks around) */
	char transports[32]; /* " unix tcp " */
};

/* One column: a registered transport that idlbench can address, or a peer. */
struct ib_col {
	char name[32]; /* "unix", "tcp", ... or "oncrpc-tcp", "grpc-unix" */
	const char *scheme; /* the idlkit scheme ("unix"); for a peer, the one it is compared to */
	const struct fl_ops *floor; /* NULL: no floor */
	int peer; /* a peer's column: ONC RPC, or a peer program's (prog) */
	const struct ib_prog *prog; /* the peer program, or NULL (ONC RPC, idlkit) */
	size_t dgram_max; /* 0, or the largest message the transport can carry */
	/* Served by the interpreted server (<idl/idl_dynamic.h>: the descriptor table and
	 * libffi) instead of the generated stubs, with the same client, transport and floor.
	 * twin is the compiled column of the same scheme when the run has one: the dynamic
	 * column then shares its floor and prints its cost, interpreted / compiled. */
	int dynamic;
	const struct ib_col *twin;
};

enum ib_placement {
	IB_SAME = 0, /* client and server on one CPU */
	IB_SPLIT = 1, /* on two CPUs */
	IB_FREE = 2, /* left to the scheduler */
};

/* What one cell's processes need to know. */
struct ib_cell {
	const struct ib_row *row;
	const struct ib_col *col;
	enum ib_kind kind;
	enum ib_placement placement;
	unsigned iterations; /* per repetition */
	unsigned reps;
	unsigned warmup;
	char addr[160]; /* the server's address, "scheme:rest" */
	char addr2[160]; /* ping-pong: the client process's own address */
	int no_server; /* --connect, or a kept server: the server is not the cell's own */
	unsigned inflight; /* calls in flight: 1, or --inflight N on an IB_THROUGHPUT row */
};

/* The CPU a cell's processes spent on its calls, per call (message, MB), in us: each side's
 * user and system time together, and apart; NAN where not measured (the server's with
 * --connect; the user and system split of a kept server's, whose CPU clock gives only the
 * sum). */
struct ib_use {
	double client, server;
	struct ib_cpu csplit, ssplit;
};

/* A server process started for one cell or kept across a transport's rows (the client reads
 * its CPU clock around its calls). */
struct ib_server {
	pid_t pid; /* -1: none */
	char addr[160];
};

/* idlbench_cell.c: runs one cell (its server too, unless cell->no_server, or a kept server's
 * given in srv), the client's figures in out, and the CPU per call in use (may be NULL). */
int ib_cell_run(const struct ib_cell *cell, int cpu_client, int cpu_server, struct ib_reps *out,
		struct ib_use *use, struct ib_server *srv);
/* A server kept across rows: started for cell's column (its kind IB_IDL) and pinned, then
 * stopped. Returns 0, or -1 with why. */
int ib_server_start(const struct ib_cell *cell, int cpu, struct ib_server *srv, char *why,
		    size_t len);
void ib_server_stop(struct ib_server *srv);
int ib_make_addr(const char *scheme, const char *dir, unsigned n, char *buf, size_t len);
/* How many calls (messages, MB) a cell's CPU is divided by. */
double ib_cell_ops(const struct ib_cell *cell);

/* The sides of a cell, each in its child process. */
/* idlbench_idl.c: bench.defs served by the generated demux (or the interpreter) and called
 * by its stubs; the probe's one null call. */
int ib_idl_serve(const struct ib_cell *cell, int ready_fd);
int ib_idl_client(const struct ib_cell *cell, struct ib_reps *out);
int ib_serve_forever(const char *address, int print_ready, int dynamic);
int ib_bench_probe(const struct ib_cell *cell, struct ib_reps *out);
/* idlbench_inflight.c: a bench.defs IB_THROUGHPUT row's client, cell->inflight calls in
 * flight through the asynchronous stubs, every result checked; whether the row has them. */
int ib_inflight_client(const struct ib_cell *cell, struct ib_reps *out);
int ib_inflight_row(const struct ib_row *row);
/* idlbench_user.c, idlbench_uclient.c: the user's rows. The probe's client side (kind
 * IB_PROBE): the setup calls, then each row called once, then the sync; out->v holds three
 * figures per call: the request's bytes, the reply's, the result. IB_SETUP: the setup calls,
 * out->v one result per call. */
int ib_user_serve(const struct ib_cell *cell, int ready_fd);
int ib_user_client(const struct ib_cell *cell, struct ib_reps *out);
int ib_user_serve_forever(struct ib_iface *u, const char *address);
int ib_user_probe(const struct ib_cell *cell, struct ib_reps *out);
int ib_user_setup(const struct ib_cell *cell, struct ib_reps *out);
/* Whether a user's row can be timed with calls in flight (a routine, compiled stubs). */
int ib_user_inflight_row(const struct ib_row *row);
/* idlbench_oncrpc.c: the peer (children), and XDR for --marshal. */
int ib_peer_available(void);
int ib_peer_serve(const struct ib_cell *cell, int ready_fd);
int ib_peer_client(const struct ib_cell *cell, struct ib_reps *out);
double ib_xdr_biginout_ns(unsigned iterations);
/* idlbench_peers.c: the peer programs. ib_progs_find() asks each program built its version,
 * rows and transports; for those it cannot use, a line each in why (NUL-separated reasons
 * are joined with "; "). The cell's sides exec the program (children). */
size_t ib_progs_find(struct ib_prog *progs, size_t max, char *why, size_t whylen);
int ib_prog_serves(const struct ib_prog *p, const char *word, const char *list);
int ib_prog_serve(const struct ib_cell *cell, int ready_fd);
int ib_prog_client(const struct ib_cell *cell, struct ib_reps *out);
/* The version of a peer column's library, for the JSON. */
const char *ib_peer_version(const struct ib_col *col);
/* idlbench_marshal.c */
double ib_idl_biginout_ns(unsigned iterations);

#endif /* IB_CELL_H */
