/*
 * peer.h - what idlbench's peer programs share: the one command line that every one of them
 * takes, the rows with their payloads and checks, addresses, and the report. Each peer program
 * (sdbus/, grpc/, capnp/) is a small program of its own around one RPC library; this part is
 * plain C so that the C and the C++ programs read and answer the same contract.
 *
 * The contract (docs/benchmarks.md, "Peers"), for a peer program PEER:
 *
 *   PEER version
 *       One line: the library and its version as built, then any library it carries the
 *       messages with ("grpc 1.51.1 protobuf 3.21.12", "sd-bus 252", "capnp 0.9.2").
 *   PEER rows
 *       One line per row it serves: NAME METRIC PAYLOAD CARRIAGE, where METRIC is latency (the
 *       figure is µs per call) or bandwidth (MB/s: PAYLOAD bytes per call over the time),
 *       PAYLOAD the bytes of the row's data argument, and CARRIAGE "-" for none or "inline":
 *       the bytes travel inside the message, where idlkit's ool rows pass them out of line.
 *   PEER transports
 *       One line per address scheme it serves: "unix", "tcp", "tls".
 *   PEER serve ADDRESS [--wrong ROW]
 *       Listens on ADDRESS (unix:PATH, the socket file 0600; tcp:HOST:PORT or
 *       tls:HOST:PORT, port 0 for any free one), prints "ready ADDRESS" on stdout with the port it
 * got, and serves until SIGTERM or SIGINT; then removes its socket file and exits 0. --wrong ROW
 * makes the server answer ROW (add, bigout, biginout, ool64k, ool1m) wrongly, for the tests. PEER
 * call ADDRESS ROW ITERATIONS REPS [--warmup N] [--inflight N] [--timeout-ms MS]
 *                                                                    [--corrupt]
 *       Connects, makes N warm-up calls (default: ITERATIONS / 5, at least 20), then REPS
 *       repetitions of ITERATIONS calls of ROW, every answer checked, and prints after each
 *       repetition one line "rep I NS": I from 0, NS the nanoseconds per call of that
 *       repetition (wall time / ITERATIONS). --inflight N keeps N calls in flight instead of
 *       one (NS is then the time per call of the whole pipeline, not a latency). Every call
 *       has a deadline of --timeout-ms (default 10000), the library's own: a gRPC deadline,
 *       sd-bus's method call timeout, a kj timer. --corrupt sends bigin and biginout one
 *       wrong byte, so that the server's check is seen to refuse it.
 *
 * The programs never pin themselves (idlbench forks, pins and execs them) and start no
 * thread of their own: the threads there are are the library's (docs/benchmarks.md).
 */
#ifndef IDLBENCH_PEER_H
#define IDLBENCH_PEER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses of `PEER call` (and of the other commands where they apply). */
#define PEER_EXIT_OK 0
#define PEER_EXIT_WRONG 1 /* an answer was wrong, or the server refused our data */
#define PEER_EXIT_USAGE 2 /* a bad command line */
#define PEER_EXIT_FAILED 3 /* a call failed: no server, the connection broke, an error */
#define PEER_EXIT_TIMEOUT 4 /* a call did not finish within --timeout-ms */

/* The rows, as bench.defs names its routines. */
enum peer_row_id {
	PEER_NULL = 0,
	PEER_ADD,
	PEER_BIGIN,
	PEER_BIGOUT,
	PEER_BIGINOUT,
	PEER_OOL64K,
	PEER_OOL1M,
	PEER_NROWS
};

#define PEER_BIG 200 /* bench.defs' big_t */

struct peer_row {
	const char *name;
	const char *metric; /* "latency" or "bandwidth" */
	size_t payload; /* bytes of the data argument */
	const char *carriage; /* "-" or "inline" */
};

extern const struct peer_row peer_rows[PEER_NROWS];

/* What a peer program says of itself. */
struct peer_info {
	const char *name; /* "sdbus", as in its messages */
	const char *transports; /* "unix" or "unix tcp" */
	/* Writes the version line (without a newline) into buf. */
	void (*version)(char *buf, size_t len);
};

enum peer_cmd {
	PEER_CMD_DONE = 0,
	PEER_CMD_SERVE,
	PEER_CMD_CALL
};

/* An address: unix:PATH, tcp:HOST:PORT or tls:HOST:PORT (HOST a numeric IPv4 address). A
 * tls: address is TCP with TLS on it: tcp and tls are both set, and the program takes its
 * certificates from IDL_TLS_CERT, IDL_TLS_KEY and IDL_TLS_CA, as idlkit's tls: does. */
struct peer_addr {
	int tcp;
	int tls; /* tls:, only for a program whose transports list "tls" */
	char path[108]; /* unix: the socket file (sun_path's size) */
	char host[64]; /* tcp: the numeric host */
	unsigned port; /* tcp: the port; 0 asks the server for any free one */
};

struct peer_args {
	enum peer_cmd cmd;
	struct peer_addr addr;
	enum peer_row_id row;
	unsigned long iterations, reps, warmup;
	unsigned inflight; /* calls kept in flight, 1 for one at a time */
	unsigned timeout_ms;
	int corrupt; /* call: send bigin / biginout a wrong byte */
	int wrong; /* serve: the row to answer wrongly, or -1 */
};

/*
 * Reads the command line. version, rows and transports are answered here (PEER_CMD_DONE);
 * serve and call are left to the program (PEER_CMD_SERVE, PEER_CMD_CALL). Returns -1 after
 * printing what is wrong and the usage on stderr.
 */
int peer_parse(int argc, char **argv, const struct peer_info *info, struct peer_args *a);

/* Formats an address back as the contract writes it ("unix:PATH", "tcp:HOST:PORT",
 * "tls:HOST:PORT"). */
int peer_addr_format(const struct peer_addr *a, char *buf, size_t len);

/* What the client sends and expects. Owns ool (peer_data_fini frees it). */
struct peer_data {
	char in[PEER_BIG]; /* bigin's argument */
	char inout[PEER_BIG]; /* biginout's argument */
	char out[PEER_BIG]; /* what bigout must answer */
	char inout_out[PEER_BIG]; /* what biginout must answer */
	unsigned char *ool; /* ool64k / ool1m: the payload, 'O' bytes as idlbench's */
	size_t ool_len;
	uint64_t ool_sum; /* what the server must answer for it */
};

/* Fills d for row (corrupt: one wrong byte in bigin's and biginout's arguments). Returns -1
 * when memory is short. */
int peer_data_init(struct peer_data *d, enum peer_row_id row, int corrupt);
void peer_data_fini(struct peer_data *d);

/* The server's side of every row, as bench_impl.c's routines: each takes `wrong`, the row
 * that serve --wrong names, and answers that row wrongly. */
int peer_srv_add(int wrong, int a, int b);
/* 0 when data is the 200 bytes of bench_pattern(salt), else -1. */
int peer_srv_check(const void *data, size_t len, unsigned salt);
/* Writes the 200 bytes of bench_pattern(salt) (row: the row answering). */
void peer_srv_fill(int wrong, enum peer_row_id row, void *data, unsigned salt);
/* The checksum of an ool row's data, or -1 when its size is not the row's. */
int peer_srv_ool(int wrong, enum peer_row_id row, const void *data, size_t len, uint64_t *sum);

/* The salts of the big rows (examples/bench/bench_impl.h). */
extern const unsigned peer_salt_in, peer_salt_out, peer_salt_inout_in, peer_salt_inout_out;

/* Time: CLOCK_MONOTONIC nanoseconds. */
double peer_now_ns(void);
/* Prints "rep I NS" and flushes. */
void peer_report(unsigned long rep, double ns_per_call);
/* Prints "ready ADDRESS" and flushes. */
void peer_ready(const struct peer_addr *a);
/* Prints "NAME: message" on stderr. */
void peer_err(const struct peer_info *info, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The process state both sides start from: SIGPIPE ignored (a broken connection is an error
 * the call reports, not a death), and for a server a umask that makes its socket file 0600,
 * and SIGTERM and SIGINT blocked, so that the program waits for them where it can (sigwait,
 * ppoll, kj's signal port) and every thread a library starts inherits the mask.
 */
void peer_setup_client(void);
void peer_setup_server(void);

#ifdef __cplusplus
}
#endif

#endif /* IDLBENCH_PEER_H */
