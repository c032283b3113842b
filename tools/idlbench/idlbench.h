/*
 * idlbench.h - what the files of idlbench share: the rows (routine calls of the timed
 * interface), the columns (transports and their floors, and peers), the cells that one
 * measurement fills, and the raw floor channels of tools/idlbench/floor*.c.
 *
 * The timed interface is bench.defs (idlbench_idl.c) or, with --defs, the user's own: then
 * each --call is a row (idlbench_defs.c), its stubs are generated and compiled at run time
 * into shared objects (idlbench_gen.c, idlbench_build.c) and the cells run them
 * (idlbench_user.c).
 *
 * One measurement ("cell") is one routine over one transport, timed either through the
 * generated stubs and libidlrt (kind IB_IDL), through our own raw program on the same
 * kernel object with the same bytes (IB_FLOOR), or through the ONC RPC peer (IB_PEER). Each
 * cell runs in two forked processes, a server and a client, pinned as the placement says;
 * the client writes one figure per repetition back through a pipe (idlbench_cell.c).
 */
#ifndef IDLBENCH_H
#define IDLBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

#include <idl/idl_dynamic.h>

enum ib_metric {
	IB_LATENCY = 0, /* microseconds per call, smaller is better */
	IB_ONEWAY = 1, /* messages per second, bigger is better */
	IB_BANDWIDTH = 2, /* MB/s (10^6 bytes), bigger is better */
	/* Calls per second with --inflight N calls in flight from one thread, bigger is
	 * better: what the latency rows measure when N > 1 (idlbench_inflight.c). */
	IB_THROUGHPUT = 3,
};

enum ib_kind {
	IB_IDL = 0, /* the generated stubs over libidlrt (the server: or the interpreter) */
	IB_FLOOR = 1, /* our raw program: same kernel object, same bytes */
	IB_PEER = 2, /* ONC RPC (rpcgen + libtirpc) */
	IB_PROBE = 3, /* one call of each row, before the run: sizes, and whether it serves */
	IB_PROG = 4, /* a peer program: sd-bus, gRPC, Cap'n Proto (idlbench_peers.c) */
};

/* How a row is run. */
enum ib_mode {
	IB_MODE_CALL = 0, /* request, reply: a round trip per iteration */
	IB_MODE_ONEWAY = 1, /* n one-way messages, then one synchronising round trip */
	IB_MODE_PINGPONG = 2, /* two processes notify each other in turn */
	IB_MODE_SENDTO = 3, /* floor only: one-way over an unconnected UDP socket (sendto) */
};

struct ib_ucall;

/* One row: a routine of bench.defs (or a mode of one), or one --call of the user's. */
struct ib_row {
	const char *name; /* as printed and in the JSON */
	const char *routine; /* the routine it calls */
	enum ib_metric metric;
	enum ib_mode mode;
	uint32_t payload; /* bandwidth rows: bytes moved per call */
	unsigned iter_div; /* iterations are divided by this (big messages) */
	int (*call)(void *port, unsigned i, void *scratch); /* IB_MODE_CALL rows: one call */
	/* Filled at start from bench_subsystem: present, and the wire sizes for the floor. */
	int present;
	uint32_t req; /* request bytes, header included */
	uint32_t rep; /* reply bytes, header included (0 for a simpleroutine) */
	/* One-way rows: the synchronising round trip's reply bytes, for the floor (0: those of
	 * bench.defs's intrpc); and whether the rate counts the messages sent (the user's
	 * rows: their server counts nothing) rather than those the server counted. */
	uint32_t srep;
	int count_sent;
	const struct ib_ucall *u; /* the user's call (--defs), or NULL for bench.defs's rows */
	char why[96]; /* why the row cannot be timed (its one call before the run failed) */
};

/* The raw channel of a floor (tools/idlbench/floor*.c). Ours, no runtime: one send and one receive
 * system call per message where the kernel object allows it. */
/* The deadline a floor's waits carry, as a call's do: the library's default call timeout
 * (IDL_PORT_DEFAULT_TIMEOUT_MS), never reached in a cell, so what is timed is the cost of
 * waiting with a deadline (docs/benchmarks.md, "The floors"). */
#define FL_DEADLINE_S 30

struct fl_chan {
	int fd; /* the socket, or the queue we send to */
	int rfd; /* the queue we receive from (port), or -1 */
	void *map; /* shm: the mapped region */
	size_t maplen;
	int side; /* shm: 0 client, 1 server */
	/* shm: private ring indices. tcp's batches (floor_pipe.c): the bytes of a frame
	 * already sent (head) and already received (tail), where a non-blocking send or a
	 * read stopped inside one. */
	uint64_t head, tail;
};

struct fl_listener {
	int fd;
	int qfd[2]; /* port: the request and reply queues */
	char name[128]; /* what to remove at close */
};

struct fl_ops {
	const char *scheme;
	size_t max_msg; /* largest message one send can carry */
	size_t frame; /* bytes the transport adds to each message (tcp's length prefix) */
	/* rest is the address without "scheme:". msgmax is the largest message to expect. */
	int (*listen)(struct fl_listener *l, const char *rest, size_t msgmax);
	int (*accept)(struct fl_listener *l, struct fl_chan *c);
	int (*connect)(struct fl_chan *c, const char *rest, size_t msgmax);
	int (*send)(struct fl_chan *c, const void *buf, size_t len);
	/* Receives one message of exactly len bytes (streams read until they have it). Returns
	 * the bytes received (datagram kinds may see another size), 0 at end, -1 on error. */
	long (*recv)(struct fl_chan *c, void *buf, size_t len, size_t cap);
	void (*close)(struct fl_chan *c);
	void (*unlisten)(struct fl_listener *l);
	/* The pipelined loop of --inflight (floor_pipe.c). send_batch sends up to count
	 * messages of len bytes from buf, which holds count of them back to back, in as few
	 * system calls as the kernel allows, what goes without blocking; with wait it blocks
	 * until the first one can go. Returns the messages sent (a stream's message cut by a
	 * short send counts when its last byte goes), or -1. recv_batch waits for one
	 * message and takes those already there besides, up to max, into buf: max slots of
	 * cap bytes (a stream: len bytes each, back to back). Returns how many, 0 at end, -1. */
	long (*send_batch)(struct fl_chan *c, const void *buf, size_t len, unsigned count,
			   int wait);
	long (*recv_batch)(struct fl_chan *c, void *buf, size_t len, size_t cap, unsigned max);
	unsigned depth; /* 0, or the most messages the kernel object holds in one direction */
	const char *batching; /* how the batches go, in the output's words */
};

/* The floors of every kernel object idlbench knows (floor.c, floor_shm.c). */
const struct fl_ops *fl_find(const char *scheme);
extern const struct fl_ops fl_unix_ops, fl_tcp_ops, fl_udp_ops, fl_port_ops, fl_shm_ops;
/* Sends len bytes with sendto() to the address of an unconnected UDP socket (seed 003). */
int fl_udp_sendto(struct fl_chan *c, const void *buf, size_t len);
int fl_udp_disconnect(struct fl_chan *c, const char *rest);
/* The bandwidth rows' floors (floor_ool.c): the payload carried as each transport carries
 * out-of-line data, read by the server into a checksum. */
int fl_ool_supported(const struct fl_ops *o);
int fl_ool_serve(const struct fl_ops *o, struct fl_chan *c, size_t req, size_t rep, size_t payload);
struct ib_cell;
struct ib_reps;
int fl_ool_calls(const struct ib_cell *cell, const struct fl_ops *o, struct fl_chan *c,
		 struct ib_reps *out);
/* The pipelined floor of --inflight N (floor_pipe.c): the server answers every request
 * of a batch with one batch of replies; the client keeps N calls in flight. len: a
 * message with its frame; cap: a datagram slot. */
int fl_pipe_serve(const struct fl_ops *o, struct fl_chan *c, size_t req, size_t rep, size_t cap);
int fl_pipe_calls(const struct ib_cell *cell, const struct fl_ops *o, struct fl_chan *c, size_t req,
		  size_t rep, size_t cap, struct ib_reps *out);
/* How many calls the floor of o keeps in flight when asked for n. */
unsigned fl_pipe_depth(const struct fl_ops *o, unsigned n);
/* Removes the queues of a port floor whose server died before removing them. */
void fl_mq_cleanup(const char *rest);

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
	int no_server; /* --connect: the server is someone else's, at addr */
	unsigned inflight; /* calls in flight: 1, or --inflight N on an IB_THROUGHPUT row */
};

/* Results of one cell: one figure per repetition (us per call, msgs/s or MB/s). */
struct ib_reps {
	double v[64];
	unsigned n;
	char why[96]; /* why the cell could not run ("n/a"), empty if it ran */
};

/* idlbench_cell.c */
int ib_cell_run(const struct ib_cell *cell, int cpu_client, int cpu_server, struct ib_reps *out);
int ib_make_addr(const char *scheme, const char *dir, unsigned n, char *buf, size_t len);
int ib_set_cpu(int cpu);
/* idlbench_idl.c: the idlkit side of a cell (children). The probe cell (kind IB_PROBE)
 * calls each row once. */
int ib_idl_serve(const struct ib_cell *cell, int ready_fd);
int ib_idl_client(const struct ib_cell *cell, struct ib_reps *out);
int ib_serve_forever(const char *address, int print_ready, int dynamic);
/* idlbench_inflight.c: an IB_THROUGHPUT row's client, cell->inflight calls in flight
 * through the asynchronous stubs, every result checked; whether the row has them. */
int ib_inflight_client(const struct ib_cell *cell, struct ib_reps *out);
int ib_inflight_row(const struct ib_row *row);
/* floor.c: the floor side (children). */
int ib_floor_serve(const struct ib_cell *cell, int ready_fd);
int ib_floor_client(const struct ib_cell *cell, struct ib_reps *out);
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
/* Whether this idlbench runs from its build tree (idlbench_build.c). */
int ib_from_build_tree(void);
/* idlbench_marshal.c */
double ib_idl_biginout_ns(unsigned iterations);

/* The rows, in printing order: bench.defs's (idlbench_idl.c; ib_rows_init() marks those
 * present in bench_subsystem and takes their wire sizes from it), or the user's --call rows
 * (ib_user_rows(), idlbench_defs.c). */
extern struct ib_row *ib_rows;
extern size_t ib_nrows;
void ib_rows_init(void);

/* ---- The user's interface (--defs): idlbench_defs.c, _gen.c, _build.c, _user.c ---- */

#define IB_MAX_CALLS 16

/* One --call: a routine of the user's interface with its arguments, read as idlcall reads
 * them. Values are in wire form (<idl/idl_dynamic.h>), the buffers of fixed arrays and
 * strings at their full size; ports are opened by the client process from their text. */
struct ib_ucall {
	char name[32]; /* the row's name: the routine's, or NAME= */
	const struct idl_routine_desc *rt; /* in the table built from the .defs file */
	struct idl_arg_value *vals; /* rt->nargs entries; NULL data for the rest */
	char **ports; /* rt->nargs entries: a port argument's text (ADDRESS, null, [..]) */
	int consumes; /* a call gives away memory or ports: the values are made anew each time */
	/* Compiled stubs: the generated call of the client stub with these values. */
	int (*thunk)(void *port, const struct idl_arg_value *v);
};

/* The interface under test and how it is run. */
/* The name of the -types output in the build directory, included by the generated headers. */
#define IB_TYPES_H "idlbenchTypes.h"

struct ib_iface {
	const char *path; /* FILE.defs */
	struct ib_defs *defs; /* the loaded interface (idlbench_defs.c) */
	const struct idl_subsystem *ss; /* the table built from the .defs file */
	const char *impl; /* --impl LIB.so, or NULL: the null implementation */
	int interpreted; /* the interpreted client and server (--interpreted, or no compiler) */
	char why[160]; /* why interpreted when not asked, else "" */
	int own_types; /* the C types are idlc's -types output (no header imported) */
	struct ib_ucall calls[IB_MAX_CALLS];
	size_t ncalls;
	struct ib_row *rows; /* the calls' rows (ib_rows then points here) */
	/* One-way rows end with a round trip on the same connection, so that their time
	 * covers every message served: a routine of the interface (a --call's, else the
	 * first with zeroed arguments). */
	struct ib_ucall sync;
	int have_sync;
	int sync_own; /* the sync's values are zeroes of its own, not a --call's */
	/* What the build left (idlbench_build.c): the private directory, the client's and the
	 * server's shared objects. */
	char dir[256];
	void *client_so, *server_so;
	const struct idl_subsystem *server_ss; /* the compiled server's table */
	int (*demux)(idl_msg_header_t *in, idl_msg_header_t *out);
	void *(*resolve)(void *arg, const char *symbol); /* the interpreted server's functions */
	void *resolve_arg;
};

extern struct ib_iface *ib_user; /* NULL: bench.defs */

/* idlbench_defs.c: loads the .defs file (cpp arguments as idlcall takes them), reads each
 * --call ("ROUTINE ARG..." or "NAME=ROUTINE ARG..."). Prints the error and returns -1. */
int ib_defs_load(struct ib_iface *u, const char *const *cpp_args, size_t ncpp);
int ib_defs_call(struct ib_iface *u, const char *spec);
/* Picks the synchronising routine of one-way rows and makes the rows. */
int ib_user_rows(struct ib_iface *u);
/* The zero (and empty) value of every argument of one direction. */
struct idl_arg_value *ib_zero_values(const struct idl_routine_desc *rt, int reply);
struct idlc_ctx *ib_defs_ctx(const struct ib_iface *u);
/* Whether a call of the argument gives away what it sends (dealloc data, moved ports). */
int ib_arg_consumed(const struct idl_arg_desc *a);
/* Whether the argument is a port or an array of ports. */
int ib_arg_ports(const struct idl_arg_desc *a);
void ib_defs_unload(struct ib_iface *u);

/* idlbench_gen.c: C text generated from the compiler's model of the interface. */
struct strbuf;
/* The client's calls: one function per routine that the rows and the sync call,
 * `int ib_call_N(void *port, const struct idl_arg_value *v)`, N the routine's number. */
int ib_gen_calls(const struct ib_iface *u, const char *client_header, struct strbuf *out);
/* The null implementation: every server routine, answering KERN_SUCCESS with zeroed and
 * empty out arguments. */
int ib_gen_null(const struct ib_iface *u, const char *server_header, struct strbuf *out);

/* idlbench_build.c: generates the stubs into a private directory, compiles and loads them
 * (or, interpreted, loads the implementation). Prints the error and returns -1. */
int ib_build(struct ib_iface *u, const char *const *cc_args, size_t ncc);
void ib_build_cleanup(struct ib_iface *u);

/* idlbench_user.c: the user's rows in the cells, the probe and `serve --defs`. */
int ib_user_serve(const struct ib_cell *cell, int ready_fd);
int ib_user_client(const struct ib_cell *cell, struct ib_reps *out);
int ib_user_serve_forever(struct ib_iface *u, const char *address);
/* The probe's client side (kind IB_PROBE): each row called once, then the sync; out->v
 * holds three figures per call: the request's bytes, the reply's, the result. */
int ib_user_probe(const struct ib_cell *cell, struct ib_reps *out);
/* bench.defs's probe: one null call, its result in out->v[2]. */
int ib_bench_probe(const struct ib_cell *cell, struct ib_reps *out);

/* ---- A whole run (idlbench.c), and its reports (idlbench_report.c) ---- */

#define IB_MAX_ROUNDS 64
#define IB_MAX_COLS 16

/* One row x column x placement: the median of each round's repetitions. */
struct ib_result {
	enum ib_placement placement;
	const struct ib_row *row;
	const struct ib_col *col;
	double v[2][IB_MAX_ROUNDS]; /* [0]: idlkit (or the peer), [1]: the floor */
	unsigned n[2];
	char why[96]; /* why it did not run, or empty */
};

/* Median, min and max of the round medians. */
struct ib_stat {
	double median, min, max;
	unsigned n;
};

struct ib_run {
	struct ib_col cols[IB_MAX_COLS];
	size_t ncols;
	enum ib_placement placements[3];
	size_t nplacements;
	unsigned rounds, iterations, reps, warmup;
	unsigned inflight; /* --inflight N: calls in flight on the latency rows (1: one) */
	int quick;
	const char *connect; /* --connect ADDRESS, or NULL */
	int cpu0, cpu1; /* the CPUs of `same` and `split` */
	struct ib_result *results;
	size_t nresults;
	double marshal_idl_ns, marshal_xdr_ns; /* < 0: not measured */
	char date[32]; /* ISO 8601, UTC, when the run started */
	char notes[8][320]; /* what the tables cannot say (a transport without a floor...) */
	size_t nnotes;
	unsigned failed; /* rows that could not be timed: their call before the run failed */
};

/* ---- The rounds of cells (idlbench_run.c) ---- */

struct ib_loop {
	struct ib_run *run;
	const char *dir; /* the run's private directory of sockets */
	unsigned addr_n;
	unsigned done, total;
	int progress; /* a progress line on standard error */
	volatile sig_atomic_t *stop; /* set by SIGINT and SIGTERM */
};

/* Why a cell cannot run (a printed "n/a"), NULL if it can, or "" to leave it out. */
const char *ib_skip(const struct ib_run *run, const struct ib_row *row, const struct ib_col *col,
		    int side);
int ib_results(struct ib_run *run);
unsigned ib_count_cells(const struct ib_run *run);
void ib_loop(struct ib_loop *lp);
void ib_share_floors(struct ib_run *run);
void ib_rmdir(const char *dir);
/* Calls each row once against the server the run times (forked, or --connect's): the
 * sizes of the messages that went, for the floors; a row whose call fails is marked. Returns
 * -1 when the server does not serve the interface (`what` names it) or cannot be reached,
 * printed. */
int ib_probe(struct ib_loop *lp, const char *what);
/* idlbench_summary.c: the answer after the tables. */
void ib_report_summary(FILE *f, const struct ib_run *run);

const char *ib_placement_name(enum ib_placement p);
/* Statistics of side 0 or 1 of a result; the ratio is the median of the per-round ratios
 * side 0 / side 1 (NAN when either side is missing). */
struct ib_stat ib_stat_of(const struct ib_result *r, int side);
double ib_ratio_of(const struct ib_result *r);
/* A peer's speedup over idlkit on the same transport, round by round (NAN: none). */
double ib_speedup_of(const struct ib_run *run, const struct ib_result *peer);
void ib_report_text(FILE *f, const struct ib_run *run);
int ib_report_json(const char *path, const struct ib_run *run);
int ib_report_plot(const char *path, const struct ib_run *run);

/* Time: CLOCK_MONOTONIC seconds. */
double ib_now(void);
/* Writes "ready\n" (or an error line) to a cell's ready pipe and closes it. */
void ib_ready(int fd, const char *msg);

#endif /* IDLBENCH_H */
