/*
 * server.h - the server's state, shared by server.c (the API), server_loop.c (the accept
 * loop, the receiving threads' start and end), server_request.c (the receiving threads, the
 * checks every request goes through, deferred replies) and server_peers.c (a message
 * endpoint's peers).
 */
#ifndef IDL_RUNTIME_SERVER_H
#define IDL_RUNTIME_SERVER_H

#include <pthread.h>
#include <stdatomic.h>

#include "internal.h"

struct srv_ss {
	const struct idl_subsystem *ss;
	idl_demux_fn demux; /* a generated demux, or NULL: */
	idl_demux_ctx_fn demux_ctx; /* one with a context */
	void *ctx;
	uint32_t vbase; /* where its routines' verdicts start in a source's verdict array */
	uint64_t *hashes; /* the signature hashes a hello compares, by version: nroutines of
			   * version 1, then nroutines of version 2 (srv_ss_hashes()) */
};

/* The signature hashes of s's routines of hello `version` (1 or 2). */
static inline const uint64_t *
srv_ss_hashes(const struct srv_ss *s, unsigned version)
{
	return s->hashes + (size_t)(version - 1) * s->ss->nroutines;
}

/* What hellos a client has sent on one source: one flag per subsystem of the server,
 * one verdict per routine of every subsystem. */
struct srv_hello {
	uint8_t *said; /* nsubs flags */
	uint8_t *verdicts; /* nverdicts enum idl__sig_state */
};

/* A message endpoint remembers the hellos of this many peers; beyond, the one heard from
 * least recently is forgotten (and must say hello again: the client does so by itself). */
#define SRV_PEERS_MAX 4096

struct srv_peer {
	struct idl_peer addr;
	uint64_t hash;
	struct srv_hello hello;
	atomic_uint pending; /* its replies deferred and not yet sent or discarded */
	struct srv_peer *hnext; /* hash chain */
	struct idl__link link; /* on the recency list */
};

/* The peers of a message endpoint: a hash table grown with the count, and a recency list. */
struct srv_peers {
	struct srv_peer **buckets;
	size_t nbuckets;
	size_t count;
	struct idl__list recency; /* struct srv_peer: the one heard from last first */
};

/*
 * The dispatch gate: at most `concurrency` routines at a time (a counting semaphore on a
 * futex). Uncontended, entering is one compare-and-swap and leaving one atomic add and a
 * load, with no call into libc; a thread finds no slot only when as many routines run
 * already, and then sleeps on the slot count until one leaves.
 */
struct srv_gate {
	atomic_uint slots; /* routines that may still start */
	atomic_uint sleepers; /* threads waiting for a slot */
};

void idl__srv_gate_wait(struct srv_gate *g);
void idl__srv_gate_wake(struct srv_gate *g);

static inline void
idl__srv_gate_enter(struct srv_gate *g)
{
	unsigned v = atomic_load_explicit(&g->slots, memory_order_relaxed);

	if (v == 0 || !atomic_compare_exchange_strong_explicit(
			      &g->slots, &v, v - 1, memory_order_acquire, memory_order_relaxed))
		idl__srv_gate_wait(g);
}

static inline void
idl__srv_gate_leave(struct srv_gate *g)
{
	/* Both sequentially consistent, as the sleeper's count and load: either it counted
	 * itself before this load (and is woken) or it sees the slot. */
	atomic_fetch_add(&g->slots, 1);
	if (atomic_load(&g->sleepers) != 0)
		idl__srv_gate_wake(g);
}

struct srv_ep;

/* One source of messages with its receiving thread: an accepted connection, or a message
 * endpoint (conn == NULL). */
struct srv_src {
	struct idl_server *srv;
	struct srv_ep *ep;
	void *conn;
	pthread_t thread;
	void *rbuf; /* srv->rcap bytes, 16-aligned */
	void *sbuf; /* srv->scap bytes, 16-aligned */
	struct srv_hello hello; /* connections */
	struct srv_peers *peers; /* message endpoints */
	struct idl__link link; /* on the server's live, ended or zombies list */
	/* Replies go out from this thread and, deferred, from any other: one at a time. */
	pthread_mutex_t send_lock;
	int send_lock_ok;
	struct idl_cred cred; /* connections: what the transport knows, asked once */
	int cred_err; /* its answer: 0 or IDL_ENOTSUP */
	atomic_uint pending; /* connections: replies deferred and not yet sent or discarded */
	/* Deferred replies of this source not yet sent or discarded, of any peer: while there
	 * are none, only the receiving thread sends on the source, and it needs no lock. */
	atomic_uint deferred;
	int greeted; /* a hello was answered: the handshake is over */
	/* Under srv->lock: the deferred replies of this source not yet sent or discarded, so
	 * that a client's cancel message can mark its own (idl_reply_cancelled()). */
	struct idl_reply *replies;
	/* Under srv->lock: the deferred replies that hold this source, and whether its thread
	 * was joined (the last reply then frees it). */
	unsigned handles;
	int reaped;
};

/* The request a receiving thread is serving: what idl_request_cred(), idl_request_port()
 * and idl_request_reply() see. */
struct srv_req {
	struct srv_src *src;
	const struct idl_peer *from; /* message endpoints: the sender's address */
	struct srv_peer *peer; /* message endpoints: its entry */
	const idl_msg_header_t *in;
	const struct srv_ss *ss;
};

/* A reply a routine deferred (idl_reply_t). */
struct idl_reply {
	struct srv_src *src;
	struct srv_peer *peer; /* message endpoints */
	struct idl_peer to; /* message endpoints */
	int32_t id; /* the request's */
	uint32_t seqno;
	uint32_t max_reply;
	struct idl_reply *next, *prev; /* on src->replies, under srv->lock */
	atomic_int cancelled; /* the client sent a cancel message for this request */
};

struct srv_ep {
	struct idl__port_head head; /* the handle idl_request_port() gives out */
	struct idl_server *srv;
	const struct idl_transport *tr;
	void *state;
	int closed;
	struct srv_src *src; /* message endpoints: the source receiving on it */
	struct srv_ep *next;
};

struct idl_server {
	pthread_mutex_t lock;
	pthread_cond_t idle; /* run returned */
	struct srv_ss *subs;
	size_t nsubs;
	uint32_t nverdicts;
	struct srv_ep *eps;
	struct idl__list live; /* struct srv_src whose thread runs */
	struct idl__list ended; /* struct srv_src whose thread ended, to join and free */
	unsigned concurrency; /* routines that may run at once; 0: no limit */
	struct srv_gate gate; /* concurrency != 0: the routines that may still start */
	uint8_t *plain; /* nverdicts: 1 when the routine's requests carry no descriptors */
	int efd; /* eventfd: stop requests and ended sources wake the accept loop */
	int epfd; /* the accept loop's epoll set while running, else -1 */
	atomic_int stop_req;
	int running;
	size_t rcap; /* receive buffer: the largest request or hello, rounded to 8 */
	size_t scap; /* reply buffer: the largest reply or hello reply */
	uint64_t limits[IDL_LIMIT_COUNT];
	idl_auth_fn auth;
	void *auth_ctx;
	idl_log_fn log;
	void *log_ctx;
	pthread_mutex_t log_lock; /* the rate limit below */
	int64_t log_window; /* start of the current second */
	unsigned log_lines; /* lines in it */
	unsigned log_dropped;
	/* Under lock: */
	unsigned nconns; /* connections whose thread runs */
	unsigned handles; /* deferred replies not yet sent or discarded */
	int destroyed; /* idl_server_destroy() ran while handles were out: the last frees */
	struct idl__list zombies; /* joined struct srv_src that deferred replies still hold */
};

/* server.c */
/* A log line, rate-limited (idl_server_set_log()). */
void idl__srv_log(struct idl_server *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The credentials of src's client (from: a message endpoint's peer), as
 * idl_request_cred() gives them. */
int idl__srv_cred(const struct srv_src *src, const struct idl_peer *from, struct idl_cred *cred);
/* Describes the client of src (from: a message endpoint's peer) for log lines. */
void idl__srv_who(const struct srv_src *src, const struct idl_peer *from, char *buf, size_t n);
/* Frees what is left of a server once it is stopped and no deferred reply holds it. */
void idl__srv_free(struct idl_server *srv);

/* server_loop.c */
/* Makes a running server serve ep: watched by the accept loop, or given its receiving
 * thread (a message endpoint). Lock held. */
int idl__srv_ep_start(struct idl_server *srv, struct srv_ep *ep);
/* A receiving thread is ending; the accept loop will join and free it. */
void idl__srv_src_ended(struct srv_src *src);
/* Sizes the receive and reply buffers from the subsystems and the limits (run does it). */
void idl__srv_size_buffers(struct idl_server *srv);
/* A deferred reply's handle is done: drops its hold on the source (and server). */
void idl__srv_handle_release(struct srv_src *src);

/* server_request.c */
void *idl__srv_conn_main(void *arg);
void *idl__srv_ep_main(void *arg);
int idl__srv_src_alloc(struct idl_server *srv, struct srv_src *src);
void idl__srv_src_free(struct srv_src *src);
/* A source's or a peer's hello state, for the server's subsystems: 0 or IDL_ENOMEM (what
 * was allocated is the caller's to free). */
int idl__srv_hello_alloc(const struct idl_server *srv, struct srv_hello *h);
/* Checks and serves one message of `len` bytes received on src (from `from` on a message
 * endpoint), as a receiving thread does; returns the size of the reply left in `out`, or 0
 * when none is due. rcv_err is the receive's IDL_EMSGSIZE or 0. The fuzzers call it too. */
uint32_t idl__srv_serve_one(struct srv_src *src, struct srv_hello *hs, idl_msg_header_t *in,
			    size_t len, int rcv_err, idl_msg_header_t *out,
			    const struct idl_peer *from, struct srv_peer *peer);

/* server_peers.c */
/* The hello state of a message endpoint's peer, made when it first appears; NULL when
 * there is no room for it (every remembered peer has deferred replies out, or no memory). */
struct srv_peer *idl__srv_peer(struct srv_src *src, const struct idl_peer *from);
/* Frees a message endpoint's peers (NULL: nothing). */
void idl__srv_peers_free(struct srv_peers *ps);

#endif /* IDL_RUNTIME_SERVER_H */
