/*
 * ib_iface.h - the interface under test, layer 2: its rows (the routine calls that are timed)
 * and, with --defs, the user's interface loaded, its calls read and its code built.
 *
 * The timed interface is bench.defs (idlbench_rows.c) or, with --defs, the user's own: then
 * each --call is a row (idlbench_defs.c), its stubs are generated and compiled at run time
 * into shared objects (idlbench_gen.c, idlbench_build.c), and the cells run them.
 *
 * This layer knows the base (ib_base.h) and the runtime's public headers; it must not know
 * columns, cells, floors, runs or reports (tests/lint/idlbench.sh).
 */
#ifndef IB_IFACE_H
#define IB_IFACE_H

#include <stddef.h>
#include <stdint.h>

#include <idl/idl_dynamic.h>

#include "ib_base.h"

enum ib_metric {
	IB_LATENCY = 0, /* microseconds per call, smaller is better */
	IB_ONEWAY = 1, /* messages per second, bigger is better */
	IB_BANDWIDTH = 2, /* MB/s (10^6 bytes), bigger is better */
	/* Calls per second with --inflight N calls in flight from one thread, bigger is
	 * better: what the latency rows measure when N > 1. */
	IB_THROUGHPUT = 3,
	/* Connections per second, each with its one call (the connection rows), bigger is
	 * better. */
	IB_CONNECT = 4,
};

/* How a row is run. */
enum ib_mode {
	IB_MODE_CALL = 0, /* request, reply: a round trip per iteration */
	IB_MODE_ONEWAY = 1, /* n one-way messages, then one synchronising round trip */
	IB_MODE_PINGPONG = 2, /* two processes notify each other in turn */
	IB_MODE_SENDTO = 3, /* floor only: one-way over an unconnected UDP socket (sendto) */
	/* A new connection for every call: a port opened (its connect, TLS handshake and
	 * hello), one call, the port closed; tls: only (the connection rows). */
	IB_MODE_CONNECT = 4,
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
	int resume; /* IB_MODE_CONNECT: each connection resumes the last one's TLS session */
	const struct ib_ucall *u; /* the user's call (--defs), or NULL for bench.defs's rows */
	char why[96]; /* why the row cannot be timed (its one call before the run failed) */
};

/* The rows, in printing order: bench.defs's (idlbench_rows.c; ib_rows_init() marks those
 * present in bench_subsystem and takes their wire sizes from it), or the user's --call rows
 * (ib_user_rows(), idlbench_defs.c). */
extern struct ib_row *ib_rows;
extern size_t ib_nrows;
void ib_rows_init(void);
const struct ib_row *ib_row_named(const char *name);
/* The data a bench.defs row's calls move (its big arguments, its out-of-line payload). */
void *ib_scratch_new(const struct ib_row *row);
void ib_scratch_free(void *scratch);

/* ---- The user's interface (--defs): idlbench_defs.c, _gen.c, _build.c ---- */

#define IB_MAX_CALLS 16

/* One --call or --setup: a routine of the user's interface with its arguments, read as
 * idlcall reads them. Values are in wire form (<idl/idl_dynamic.h>), the buffers of fixed
 * arrays and strings at their full size; ports are opened by the client process from their
 * text. */
struct ib_ucall {
	char name[32]; /* the row's name: the routine's, or NAME= */
	const char *spec; /* as given on the command line */
	const struct idl_routine_desc *rt; /* in the table built from the .defs file */
	struct idl_arg_value *vals; /* rt->nargs entries; NULL data for the rest */
	char **ports; /* rt->nargs entries: a port argument's text (ADDRESS, null, [..]) */
	int consumes; /* a call gives away memory or ports: the values are made anew each time */
	/* Compiled stubs: the generated call of the client stub with these values, and (a
	 * routine) of its asynchronous stub, whose done function ends in ib_async_done(ctx,
	 * kr) of client.so. */
	int (*thunk)(void *port, const struct idl_arg_value *v);
	int (*athunk)(void *port, const struct idl_arg_value *v, void *ctx);
};

/* The name of the -types output in the build directory, included by the generated headers. */
#define IB_TYPES_H "idlbenchTypes.h"

/* The interface under test and how it is run. */
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
	/* --setup: calls made once on each server before its rows are timed. */
	struct ib_ucall setup[IB_MAX_CALLS];
	size_t nsetup;
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
	/* client.so's hook for the asynchronous calls' done functions (set by the cells). */
	void (**async_done)(void *ctx, int kr);
};

extern struct ib_iface *ib_user; /* NULL: bench.defs */

/* idlbench_defs.c: loads the .defs file (cpp arguments as idlcall takes them), reads each
 * --call or --setup ("ROUTINE ARG..." or "NAME=ROUTINE ARG...") into calls[] or setup[].
 * Prints the error and returns -1. */
int ib_defs_load(struct ib_iface *u, const char *const *cpp_args, size_t ncpp);
int ib_defs_call(struct ib_iface *u, const char *spec, int setup);
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
/* Each call the client side makes (rows, sync, setup) once: f(u, call, arg). */
void ib_ucalls_each(const struct ib_iface *u, void (*f)(struct ib_ucall *c, void *arg), void *arg);

/* idlbench_gen.c: C text generated from the compiler's model of the interface. */
struct strbuf;
/* The client's calls: one function per routine that the rows, the setup and the sync call,
 * `int ib_call_N(void *port, const struct idl_arg_value *v)`, N the routine's number, and
 * for a routine its asynchronous call `int ib_acall_N(void *port, const struct
 * idl_arg_value *v, void *ctx)` (0 when the stub accepted it) whose done function releases
 * what the reply gave and calls `ib_async_done(ctx, kr)`. */
int ib_gen_calls(const struct ib_iface *u, const char *client_header, struct strbuf *out);
/* The null implementation: every server routine, answering KERN_SUCCESS with zeroed and
 * empty out arguments. */
int ib_gen_null(const struct ib_iface *u, const char *server_header, struct strbuf *out);

/* idlbench_build.c: generates the stubs into a private directory, compiles and loads them
 * (or, interpreted, loads the implementation). Prints the error and returns -1. */
int ib_build(struct ib_iface *u, const char *const *cc_args, size_t ncc);
void ib_build_cleanup(struct ib_iface *u);
/* Whether this idlbench runs from its build tree (idlbench_build.c). */
int ib_from_build_tree(void);

#endif /* IB_IFACE_H */
