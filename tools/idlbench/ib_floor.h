/*
 * ib_floor.h - the floors, layer 1: our own raw programs over each kernel object a transport
 * uses (tools/idlbench/floor*.c), with no stubs and no runtime, moving the bytes a job says
 * (docs/benchmarks.md, "The floor").
 *
 * A floor knows the base (ib_base.h) and nothing else of idlbench: it must not know rows,
 * columns, cells, runs or reports. What to send is a struct fl_job, which the cells fill from a row
 * (idlbench_cell.c); what comes back is a struct ib_reps.
 */
#ifndef IB_FLOOR_H
#define IB_FLOOR_H

#include <stddef.h>
#include <stdint.h>

#include "ib_base.h"

/* The deadline a floor's waits carry, as a call's do: the library's default call timeout
 * (IDL_PORT_DEFAULT_TIMEOUT_MS), never reached in a cell, so what is timed is the cost of
 * waiting with a deadline (docs/benchmarks.md, "The floors"). */
#define FL_DEADLINE_S 30

/* The raw channel of a floor. Ours, no runtime: one send and one receive system call per
 * message where the kernel object allows it. */
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
	void *tls; /* tls: the TLS session on fd (an SSL *), or NULL */
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

/* How a floor's client and server talk. */
enum fl_mode {
	FL_CALL = 0, /* request, reply: a round trip per iteration */
	FL_ONEWAY = 1, /* n one-way messages, then one synchronising round trip */
	FL_PINGPONG = 2, /* two processes pass a counter back and forth */
	FL_SENDTO = 3, /* one-way over an unconnected UDP socket (sendto) */
	/* A new connection per call: connect (and its handshake), one round trip, close. */
	FL_CONNECT = 4,
};

/* One floor measurement: the kernel object, the bytes, the loop. */
struct fl_job {
	const struct fl_ops *ops;
	enum fl_mode mode;
	size_t req, rep; /* the messages, header included, frame excluded */
	size_t sreq, srep; /* one-way: the synchronising round trip's messages */
	size_t payload; /* bandwidth: bytes carried as out-of-line data, or 0 */
	int count_sent; /* one-way: the rate is what was sent, not what the server counted */
	unsigned iterations, reps, warmup;
	unsigned inflight; /* calls kept in flight (FL_CALL): 1, or the pipelined loop's N */
	int resume; /* FL_CONNECT: each connection resumes the last one's TLS session */
	const char *addr; /* "scheme:rest": the server's endpoint */
	const char *addr2; /* ping-pong: the client process's own endpoint */
};

/* The floors of every kernel object idlbench knows (floor_sock.c, floor_mq.c, floor_shm.c,
 * floor_tls.c when the build has tls:). */
const struct fl_ops *fl_find(const char *scheme);
extern const struct fl_ops fl_unix_ops, fl_tcp_ops, fl_udp_ops, fl_port_ops, fl_shm_ops;
extern const struct fl_ops fl_tls_ops;
/* floor_tlscert.c: a throwaway CA and a certificate it issued for both sides, ECDSA P-256,
 * written into dir (the key 0600) and named in IDL_TLS_CERT, IDL_TLS_KEY and IDL_TLS_CA.
 * 0, or -1 with why. */
int fl_tls_certs(const char *dir, char *why, size_t len);

/* A job's two sides (floor.c), each in its own process: the server writes its ready line
 * to ready_fd (ib_ready()) and serves until its peer leaves; the client times the job. */
int fl_serve(const struct fl_job *j, int ready_fd);
int fl_client(const struct fl_job *j, struct ib_reps *out);

/* Whether the kernel object has a bandwidth floor (out-of-line data, floor_ool.c). */
int fl_ool_supported(const struct fl_ops *o);
/* How many calls the pipelined floor of o keeps in flight when asked for n (floor_pipe.c). */
unsigned fl_pipe_depth(const struct fl_ops *o, unsigned n);
/* Removes the queues of a port floor whose server died before removing them. */
void fl_mq_cleanup(const char *rest);

/* Inside the floors: the kernel objects' helpers and the loops of floor_ool.c and
 * floor_pipe.c, which floor.c runs. */
int fl_udp_sendto(struct fl_chan *c, const void *buf, size_t len);
/* tls: the two pieces, a then b, each its own SSL_write (a frame's head, its payload); the
 * connection rows' resumed form (the last connection's session offered by the next). */
int fl_tls_sendv(struct fl_chan *c, const void *a, size_t na, const void *b, size_t nb);
void fl_tls_keep_sessions(int on);
int fl_udp_disconnect(struct fl_chan *c, const char *rest);
int fl_ool_serve(const struct fl_ops *o, struct fl_chan *c, size_t req, size_t rep, size_t payload);
int fl_ool_calls(const struct fl_job *j, struct fl_chan *c, struct ib_reps *out);
/* The pipelined floor: len is a message with its frame; cap a datagram slot. */
int fl_pipe_serve(const struct fl_ops *o, struct fl_chan *c, size_t req, size_t rep, size_t cap);
int fl_pipe_calls(const struct fl_job *j, struct fl_chan *c, size_t req, size_t rep, size_t cap,
		  struct ib_reps *out);

#endif /* IB_FLOOR_H */
