/*
 * conformance.h - the transport conformance suite: one CUnit suite per registered transport,
 * each running the same cases against a real bench-server process on a fresh address of
 * that transport (docs/testing.md).
 */
#ifndef IDL_TESTS_CONFORMANCE_H
#define IDL_TESTS_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

/* What the suite of one scheme works on; set up by the suite's init, one suite at a time. */
struct tt_ctx {
	const struct idl_transport *tr;
	const struct tt_scheme *scheme;
	char dir[256]; /* a fresh 0700 directory, removed afterwards */
	char address[512];
	int embedded; /* the server runs embedded in a poll() loop (bench-server -e) */
	pid_t server; /* the bench-server process, or 0 */
	int server_out; /* the read end of its stdout, or -1 */
};
extern struct tt_ctx tt;

/* One row of the address table (addr.c): how to test a scheme. */
struct tt_scheme {
	const char *scheme;
	/* Writes a fresh address of the scheme to buf; `dir` is a fresh private directory. */
	int (*make_address)(const char *dir, char *buf, size_t len);
	/* After the server was killed: removes what a dead server leaves at its address, so
	 * that a new one can listen there. NULL when nothing is left behind. */
	void (*reclaim)(const char *address);
	/* After a clean stop: returns 0 if the server left nothing behind at the address. */
	int (*left_nothing)(const char *address);
	/* Where the connection's socket carries more than the transport's frames (tls:, whose
	 * bytes are TLS records): the connections the test makes itself to write frames the
	 * transport's own send would refuse. NULL: the bytes go straight to the socket. */
	const struct tt_wire_ops *wire;
};

/* A connection of the test's own that carries the transport's frames inside whatever the
 * transport wraps them in, with the suite's credentials: the test writes any bytes into it.
 * Every wait is bounded by TT_RAW_MS. */
struct tt_wire_ops {
	/* Connects to `address` and ends the session's set-up: the connection, or NULL (said on
	 * standard error). */
	void *(*connect)(const char *address);
	/* Listens on `address`: the listening socket, or -1. */
	int (*listen)(const char *address);
	/* The next connection on the listening socket, its set-up not yet made (ready() makes
	 * it without waiting): the connection, or NULL. */
	void *(*accept)(int lfd);
	/* Goes on with the set-up without waiting: 1 once the peer's first bytes of a frame
	 * can be read, 0 while they have not come, -1 when the connection failed. */
	int (*ready)(void *w);
	/* Writes n bytes inside the session: 0, or -1. */
	int (*write)(void *w, const void *b, size_t n);
	/* Reads exactly n bytes: 0, or -1 (the end of the stream, a failure or TT_RAW_MS). */
	int (*read)(void *w, void *b, size_t n);
	int (*fd)(void *w); /* its socket, to poll */
	void (*close)(void *w);
};
const struct tt_scheme *tt_scheme_find(const char *scheme);

/* The rows kept beside each transport (tests/transport/addr_<scheme>.c). */
extern const struct tt_scheme tt_scheme_tcp;
extern const struct tt_scheme tt_scheme_udp;
extern const struct tt_scheme tt_scheme_shm;
extern const struct tt_scheme tt_scheme_port;
extern const struct tt_scheme tt_scheme_tls;
extern const struct tt_wire_ops tt_tls_wire; /* wire_tls.c */
/* For the network rows (addr.c): binds 127.0.0.1:port (0: any) with SO_REUSEADDR and closes
 * it again: the port, or -1 when it is taken. left_nothing of a HOST:PORT address. */
int tt_inet_bind(unsigned port);
int tt_inet_left_nothing(const char *address);

/* The bench-server process (spawn.c). */
int tt_server_start(void); /* starts it on tt.address and waits for "ready" */
int tt_server_signal_wait(int sig); /* SIGSTOP/SIGCONT/SIGKILL, waiting for the effect */
int tt_server_stop(int *status); /* SIGTERM, then waits (10 s at most) for the exit */
void tt_server_reap(void); /* kills and reaps whatever is left, quietly */
int tt_rmtree(const char *dir);

/* Helpers for the cases. */
int64_t tt_ms_since(int64_t t0_ns);
idl_port_t tt_open(void); /* a new port to tt.address, or NULL after a CUnit failure */
int tt_is_conn_error(int kr); /* what a call may return when the server died */
/* Runs the calls of one client: `calls` mixed, checked calls on port; 0 if all were right. */
int tt_client_calls(idl_port_t port, unsigned seed, unsigned calls, int notifies);

/* Checks a return code; on a mismatch says what came back, with the runtime's detail. */
#define TT_CHECK_KR(kr, want)                                                                      \
	do {                                                                                       \
		int tt_k_ = (kr), tt_w_ = (want);                                                  \
		if (tt_k_ != tt_w_)                                                                \
			fprintf(stderr, "conformance: %s:%d: got %s (%d) [%s], want %s\n",         \
				__FILE__, __LINE__, idl_errname(tt_k_), tt_k_, idl_errdetail(),    \
				idl_errname(tt_w_));                                               \
		CU_ASSERT_EQUAL(tt_k_, tt_w_);                                                     \
	} while (0)

/* The cases: every suite runs each of them, in this order. */
struct tt_case {
	const char *name;
	void (*fn)(void);
};
extern const struct tt_case tt_call_cases[];
extern const struct tt_case tt_fault_cases[];
extern const struct tt_case tt_async_cases[]; /* calls in flight (t_async.c) */
extern const struct tt_case tt_malformed_cases[];
extern const struct tt_case tt_ool_cases[]; /* bench.defs's out-of-line routines */
extern const struct tt_case tt_oolt_cases[]; /* tests/ool/oolt.defs against oolt-server */
/* Stops the suite's oolt-server, if a case started one. */
void tt_oolt_stop(void);
/* The open file descriptors and mappings of this process (t_ool.c). */
void tt_ool_census(int *fds, int *maps);

/* Raw connections (t_malformed.c): messages built by hand, sent through the transport's own
 * ops after a hello built by hand. */
#define TT_RAW_MS 5000
#define TT_BUF 16384
#define TT_ID_ADD 4201
#define TT_ID_NOTIFY 4206
struct tt_raw {
	void *conn; /* the transport's connection state */
	void *wire; /* or the test's own connection (tt_scheme's wire) */
	uint32_t seqno; /* the last sequence number used */
};
/* Message buffers, 8-aligned as the transports expect. */
union tt_buf {
	idl_msg_header_t head;
	uint64_t align;
	unsigned char b[TT_BUF];
};
/* A header of this kind, id, size field and seqno; the other fields 0. */
void tt_head(union tt_buf *m, uint8_t kind, int32_t id, uint32_t size, uint32_t seqno);
/* Connects (and says hello when `hello`): 0, or -1 after a CUnit failure. */
int tt_raw_open(struct tt_raw *r, union tt_buf *m, int hello);
/* Connects and says hello on a connection whose socket the test may write any frame to: the
 * transport's own, or the scheme's wire (tt_scheme). */
int tt_raw_open_own(struct tt_raw *r, union tt_buf *m);
/* Sends len bytes of m as one message of the transport (a frame on a wire): 0 or the error. */
int tt_raw_send(struct tt_raw *r, const union tt_buf *m, size_t len);
/* A stream's frame on a wire: the 4-byte length, then the bytes, in one write; and the next
 * frame read into m (at most TT_BUF bytes). 0, or an error. */
int tt_wire_send(void *wire, const void *b, size_t len);
int tt_wire_recv(void *wire, union tt_buf *m, size_t *len);
void tt_raw_close(struct tt_raw *r);
/* The reply to the request of `seqno` into m: the receive's error; *len its size. */
int tt_raw_recv_seq(struct tt_raw *r, union tt_buf *m, size_t *len, uint32_t seqno);
/* A valid add on r gets its right answer: the server still serves the connection. */
void tt_raw_add_works(struct tt_raw *r, union tt_buf *m);
/* Malformed messages whose framing holds, with and without descriptors
 * (t_malformed_desc.c). */
void tt_bad_framed(void);

/* The mode in which the suite re-executes itself as a client process (main.c). */
#define TT_CHILD_FLAG "--client"
int tt_child_main(int argc, char **argv);

#endif /* IDL_TESTS_CONFORMANCE_H */
