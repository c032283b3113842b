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
#include <string.h>

#include <idl/idl_ool.h>

#include "ool/ool.h"

/* Messages served from one connection (or message endpoint) of the event core before it is
 * armed again: others get their turn. */
#define SRV_BATCH 16

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
	/* The last request that passed every check of idl__srv_serve_one() carrying no
	 * descriptors, so that the next one like it is known good by two compares: its
	 * header's first word (magic, order, kind, flags; never 0 for a real header) and its
	 * id, and its subsystem's index. Zeroed by every hello, which may change a verdict. */
	uint32_t fast_w0;
	int32_t fast_id;
	uint32_t fast_si;
};

/* Forgets the request remembered in h, as a hello or a forgotten peer must. */
static inline void
idl__srv_hello_unfast(struct srv_hello *h)
{
	h->fast_w0 = 0;
	h->fast_id = 0;
	h->fast_si = 0;
}

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

/* A reply that a non-blocking send could not hand to the kernel yet: a copy, queued on
 * its source until the descriptor is writable (server_event.c). */
struct srv_out {
	struct srv_out *next;
	size_t len;
	uint64_t data[]; /* len bytes, the message */
};

/*
 * A pooled connection's place in the event core (server_event.c): a generation and a state
 * in one word. The epoll set names a connection by slot and generation, never by pointer,
 * so that an event that arrives for a connection which has since ended (its slot reused) is
 * recognised and dropped without touching freed memory. Whoever moves the state from ARMED
 * to BUSY (a compare-and-swap) serves the connection alone until it arms it again.
 */
enum {
	SRV_SLOT_FREE = 0,
	SRV_SLOT_ARMED = 1,
	SRV_SLOT_BUSY = 2
};
struct srv_slot {
	_Atomic uint64_t word; /* generation << 8 | state */
	struct srv_src *src;
};

/* One source of messages: an accepted connection, or a message endpoint (conn == NULL).
 * A connection of a transport with the event operations is pooled (served by the event
 * core's threads); others, and message endpoints, have a receiving thread of their own. */
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
	/* The event core's (pooled connections). Under srv->conn_lock: */
	int pooled;
	uint32_t slot; /* its index in srv->slots */
	uint32_t gen; /* its slot's generation while it lives */
	int tlist; /* 0: on no list; 1: srv->hs_list; 2: srv->idle_list */
	struct idl__link tlink;
	int64_t since; /* CLOCK_MONOTONIC ns: accepted, or last armed after a message */
	uint64_t addr_key; /* tcp: its peer's address, hashed (0: none) */
	/* Without a lock, by the thread that serves it: */
	int64_t armed_at; /* when it was last armed: a source back soon after is busy */
	unsigned quick; /* consecutive returns soon after being armed */
	int more; /* a batch ended with messages perhaps left in the transport's read-ahead */
	int batched; /* replies wait in the serving thread's batch (server_event.c) */
	unsigned ep_failures; /* an embedded message endpoint's receive errors in a row */
	atomic_uint ep_turns; /* a message endpoint served from the set: its turns so far */
	/* A message endpoint of an embedded server: served by the loop's thread, it has no
	 * thread of its own to join. */
	int threadless;
	/* Under send_lock: replies waiting for the descriptor to be writable. */
	struct srv_out *outq, *outq_tail;
	/* A source with a receiving thread: what the thread does, for a drain (server_drain.c):
	 * a count of its receives << 2 | SRV_RS_*. A connection's thread takes a message only
	 * by moving WAIT to BUSY (a drain that moved it to CLOSING has said goodbye); a message
	 * endpoint's thread only stores it. */
	atomic_uint rstate;
	unsigned drain_seen; /* rstate at the drain's last step (0: none yet) */
};
#define SRV_RS_WAIT 1u /* in (or about to be in) the transport's receive */
#define SRV_RS_BUSY 2u /* serving what it received */
#define SRV_RS_CLOSING 3u /* a drain ended it: the thread takes nothing more */
#define SRV_RS_MASK 3u

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

/* The endpoint handle's ops (core.h, "The port head"; server_request.c). */
extern const struct idl__port_ops idl__srv_endpoint_ops;

struct srv_ep {
	struct idl__port_head head; /* the endpoint handle idl_request_port() gives out */
	struct idl_server *srv;
	const struct idl_transport *tr;
	void *state;
	int closed;
	struct srv_src *src; /* message endpoints: the source receiving on it */
	struct srv_ep *next;
	/* Its pooled connections by deadline (server_event.c), under srv->conn_lock: */
	struct idl__list hs_list; /* not greeted yet, oldest first */
	struct idl__list idle_list; /* greeted, least recently armed first */
	int64_t hs_ns, idle_ns; /* their timeouts for a run (0: none) */
	enum idl_limit idle_limit; /* the limit idle_ns is: idle_ms, or net_idle_ms on tcp: */
	uint64_t per_address; /* the per-address limit for a run (0: none) */
	/* Made around a socket the service manager passed (svc_listen.c): a message endpoint
	 * is then served from the set, since shutting it down to wake a receiving thread would
	 * end the manager's socket too. */
	int adopted;
	/* A drain's (server_drain.c): the endpoint was found quiet at the last step; it is
	 * done (out of the set, or closed). */
	int drain_quiet;
	int drained;
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
	int linger_ms; /* how long a busy source keeps its thread (SRV_LINGER_MS) */
	struct srv_gate gate; /* concurrency != 0: the routines that may still start */
	uint8_t *plain; /* nverdicts: 1 when the routine's requests carry no descriptors */
	int efd; /* eventfd: stop requests and ended sources wake the accept loop */
	int epfd; /* the accept loop's epoll set while running, else -1 */
	atomic_int stop_req;
	atomic_int reload_req; /* idl_server_reload_async() asked: the loop reloads (server.c) */
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
	/* The event core (server_event.c): */
	pthread_mutex_t conn_lock; /* the slots' owners, the lists below, arming, addresses */
	struct srv_slot *slots; /* nslots: pooled connections */
	uint32_t nslots;
	uint32_t *free_slots; /* a stack of the free ones */
	uint32_t nfree;
	int tfd; /* timerfd: the earliest handshake or idle deadline, or accepts resuming */
	int reserve_fd; /* kept open to refuse a connection with a goodbye at EMFILE */
	int64_t accept_resume; /* accepting paused until then (0: not paused) */
	int64_t next_due; /* what tfd is set to (IDL_DEADLINE_NONE: nothing) */
	unsigned pool_size; /* threads waiting on the set */
	unsigned dedicated_max; /* busy sources that may keep a thread */
	atomic_uint nthreads; /* pool threads running, the dedicated included */
	atomic_uint nwaiting; /* of them, in epoll_wait */
	atomic_uint ndedicated; /* of them, holding a busy source */
	pthread_cond_t threads_done; /* with lock: nthreads dropped to 0 */
	int embedded; /* driven by idl_server_dispatch(), no threads */
	struct srv_addrs *addrs; /* tcp: connections per peer address */
	/* Statistics (idl_server_stats()), atomically updated. */
	atomic_ullong st_accepted;
	atomic_ullong st_refused[IDL_GOODBYE_REASONS];
	/* Under a service manager (svc_notify.c): its timer in the set, the messages served
	 * (counted only then: svc_on; idl__srv_count()), what it was told last (under lock). */
	int svc_on;
	int svc_tfd;
	atomic_int svc_stopping;
	atomic_ullong st_calls;
	char svc_status[96];
	/* The drain (server_drain.c): asked, with its deadline (CLOCK_MONOTONIC ns); begun
	 * (listeners out of the set). */
	atomic_int drain_req;
	_Atomic int64_t drain_deadline;
	atomic_int drain_started;
};

/* Adds n messages served to what the service manager's STATUS= tells (svc_notify.c), only
 * while one listens. A source with a thread counts its own receives instead (rstate). */
static inline void
idl__srv_count(struct idl_server *srv, unsigned n)
{
	if (__builtin_expect(srv->svc_on, 0))
		atomic_fetch_add_explicit(&srv->st_calls, n, memory_order_relaxed);
}

/* The descriptors a server leaves out of its default connection limit, for its own use. */
#define SRV_FDS_KEPT 64u
/* The most descriptors (and connections) a run takes. */
#define SRV_NOFILE_MAX 1048576u
/* limits[IDL_LIMIT_CONNECTIONS] when not set: worked out from the descriptor limit. */
#define IDL__LIMIT_CONN_DEFAULT UINT64_MAX
/* The event core's pool: SRV_POOL_PER_CPU threads a CPU, within [MIN, MAX]; at most
 * SRV_DEDICATED_MAX of its threads hold a busy source at once (more are started then). */
#define SRV_POOL_PER_CPU 2u
#define SRV_POOL_MIN 2u
#define SRV_POOL_MAX 16u
#define SRV_DEDICATED_MAX 16u
/* A busy source keeps its thread while messages come within this many milliseconds
 * (srv->linger_ms): SRV_LINGER_MS unless IDL_SERVER_LINGER_MS says otherwise, within
 * [1, SRV_LINGER_MAX_MS]. At the connection limit an accept waits twice that for a busy
 * source to become idle. */
#define SRV_LINGER_MS 20
#define SRV_LINGER_MAX_MS 60000

/* server.c */
/* The default connection limit (IDL_LIMIT_CONNECTIONS). */
uint64_t idl__srv_conn_default(void);
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
 * thread (a message endpoint; an embedded server's is watched in the set instead). Lock
 * held. */
int idl__srv_ep_start(struct idl_server *srv, struct srv_ep *ep);
/* Accepts connections on ep (its descriptor was readable): 1 when accepting must pause. */
int idl__srv_accept(struct idl_server *srv, struct srv_ep *ep);
/* Joins and frees the sources whose threads ended. Lock held. */
void idl__srv_reap(struct idl_server *srv);
/* Frees a source that ended and no deferred reply holds. */
void idl__srv_src_destroy(struct srv_src *src);
/* A receiving thread is ending; the accept loop will join and free it. */
void idl__srv_src_ended(struct srv_src *src);
/* Sizes the receive and reply buffers from the subsystems and the limits (run does it). */
void idl__srv_size_buffers(struct idl_server *srv);
/* A deferred reply's handle is done: drops its hold on the source (and server). */
void idl__srv_handle_release(struct srv_src *src);

/* server_request.c */
void *idl__srv_conn_main(void *arg);
void *idl__srv_ep_main(void *arg);
/* Serves what is queued on an embedded message endpoint (its descriptor was readable),
 * at most max messages, without waiting: 0, or -1 when the endpoint is closed or broken. */
int idl__srv_ep_ready(struct srv_src *src, unsigned max);
/* server_loop.c: a source's state (its buffers, its hello state or its peers) made, and
 * freed with the source. */
int idl__srv_src_alloc(struct idl_server *srv, struct srv_src *src);
void idl__srv_src_free(struct srv_src *src);
/* server_loop.c: a source's or a peer's hello state, for the server's subsystems: 0 or
 * IDL_ENOMEM (what was allocated is the caller's to free). */
int idl__srv_hello_alloc(const struct idl_server *srv, struct srv_hello *h);
/* Checks and serves one message of `len` bytes received on src (from `from` on a message
 * endpoint), as a receiving thread does; returns the size of the reply left in `out`, or 0
 * when none is due. rcv_err is the receive's IDL_EMSGSIZE or 0. The fuzzers call it too. */
uint32_t idl__srv_serve_one(struct srv_src *src, struct srv_hello *hs, idl_msg_header_t *in,
			    size_t len, int rcv_err, idl_msg_header_t *out,
			    const struct idl_peer *from, struct srv_peer *peer);
/* idl__srv_serve_one()'s every check, one at a time, each refusal answered as the protocol
 * says; what passes is dispatched and, when it carries no descriptors, remembered in hs for
 * the fast path (idl__srv_serve() below). */
uint32_t idl__srv_serve_checked(struct srv_src *src, struct srv_hello *hs, idl_msg_header_t *in,
				size_t len, int rcv_err, idl_msg_header_t *out,
				const struct idl_peer *from, struct srv_peer *peer);

/* The epoll data of what is not a connection: the stop eventfd, the timer, the service
 * manager's timer, listeners (whose pointer is stored with the top bit set); a
 * connection's is slot | gen << 32. */
#define SRV_EV_WAKE UINT64_C(0xfffffffffffffffe)
#define SRV_EV_TIMER UINT64_C(0xfffffffffffffffd)
#define SRV_EV_SVC UINT64_C(0xfffffffffffffffc)
#define SRV_EV_EP UINT64_C(0x8000000000000000)

static inline uint64_t
idl__slot_word(uint32_t gen, unsigned state)
{
	return (uint64_t)gen << 8 | state;
}

/* server_event.c */
/* Takes an ARMED source for the caller, who then serves or ends it. conn_lock held. */
int idl__srv_claim(struct idl_server *srv, struct srv_src *src);
/* Takes src off its endpoint's deadline list. conn_lock held. */
void idl__srv_tlist_remove(struct idl_server *srv, struct srv_src *src);
/* Sets the timer to `due` when that is earlier than what it is set to. conn_lock held. */
void idl__srv_timer_lower(struct idl_server *srv, int64_t due);
/* Sends a goodbye on a source about to end: best effort, never blocking. */
void idl__srv_goodbye(struct srv_src *src, enum idl_goodbye_reason why, const char *text);
/* A connection's own thread ends it at its handshake or idle timeout (its receive timed
 * out: nothing of it was read since): an IDLE goodbye first, as the event core's sweep
 * says it, unless a deferred reply of it is still out (then nothing is promised). The
 * client's next call then connects again and goes through. */
void idl__srv_timeout_goodbye(struct srv_src *src);
/* A goodbye message: its header, its reason and its text (idl_msg.h). */
struct srv_goodbye {
	idl_msg_header_t h;
	uint32_t reason, len;
	char text[IDL_GOODBYE_TEXT_MAX];
};
/* Fills g with a goodbye for `why` saying n bytes of text (at most IDL_GOODBYE_TEXT_MAX are
 * kept); returns the message to send. */
struct idl_xmsg idl__srv_goodbye_make(struct srv_goodbye *g, enum idl_goodbye_reason why,
				      const char *text, size_t n);
/* Arms a pooled source the caller took again, as it was (its idle time unchanged). */
void idl__srv_rearm(struct idl_server *srv, struct srv_src *src);
/* Whether a pooled source may be closed as idle: no request of its client read and left
 * unanswered (server_limits.c). */
int idl__srv_quiet(struct srv_src *src);
/* Ends a pooled source the caller owns: out of the set, closed, its slot free. */
void idl__srv_end(struct idl_server *srv, struct srv_src *src);
/* The epoll events src waits for now, and its descriptor. */
uint32_t idl__srv_events(struct srv_src *src, int *fd);
/* Frees the calling thread's receive and reply buffers. */
void idl__srv_bufs_free(void);

/* server_limits.c */
/* Closes connections whose handshake or idle time is up; sets the timer to the next. */
void idl__srv_sweep(struct idl_server *srv);
/* Sizes and makes the event core's set for a run: the slots, the timer. Lock held. */
int idl__srv_ev_start(struct idl_server *srv);
/* Frees what idl__srv_ev_start made once no thread uses it. */
void idl__srv_ev_stop(struct idl_server *srv);
/* One pool thread's loop; returns when the server stops. */
void idl__srv_ev_loop(struct idl_server *srv, int embedded_max, int *served);
/* Takes a connection accepted on ep into the event core: 0, or an error (src not taken). */
int idl__srv_ev_adopt(struct idl_server *srv, struct srv_src *src);
/* Whether ep's connections can be pooled. */
int idl__srv_ev_poolable(const struct srv_ep *ep);
/* Whether ep can be served from an event loop (idl_server_fd): pooled connections, or a
 * message endpoint with a descriptor. */
int idl__srv_ev_embeddable(const struct srv_ep *ep);
/* A deferred reply on a pooled source: sent now, or queued for the loop. */
int idl__srv_ev_send(struct srv_src *src, const struct idl_xmsg *x);
/* Ends every pooled source (the server stops). */
void idl__srv_ev_close_all(struct idl_server *srv);

/* The log line for a connection a secure channel refused with err (IDL_ECERT, IDL_ETLS,
 * IDL_EINTEGRITY), the calling thread's detail saying why (server.c). */
void idl__srv_tls_log(struct srv_src *src, int err);
/* Logs a refusal by a limit on a connection (server.c). */
void idl__srv_conn_log(struct srv_src *src, int err, size_t len, int closing);
/* Logs a message the transport refused with IDL_EPROTO (server.c). */
void idl__srv_refused_log(struct srv_src *src, const struct idl_peer *from, size_t len);
/* server_loop.c: an event on a listener or a message endpoint served from the set; d is the
 * event's word (server_event.c's loop hands it over). */
void idl__srv_ep_event(struct idl_server *srv, struct srv_ep *ep, uint64_t d);
/* server_loop.c: starts one more pool thread (detached), which runs the event loop. */
void idl__srv_ev_spawn(struct idl_server *srv);
/* At the connection limit: ends the oldest idle pooled connection with a goodbye; 1 when
 * one went. */
int idl__srv_ev_evict(struct idl_server *srv);
/* Refuses a connection just accepted with a goodbye and a log line; frees it. */
void idl__srv_refuse(struct idl_server *srv, struct srv_src *src, enum idl_goodbye_reason why,
		     const char *limit, uint64_t value);
/* Forgets src's peer address in the per-address counts. conn_lock held. */
void idl__srv_addr_drop(struct idl_server *srv, struct srv_src *src);

/* svc_notify.c: the notify protocol (service.h), for a running server. */
/* Makes the watchdog and status timer, in the set, when a manager listens. Lock held. */
void idl__srv_svc_start(struct idl_server *srv);
/* Says READY=1 (every endpoint listens). Lock not held. */
void idl__srv_svc_ready(struct idl_server *srv);
/* The timer fired: WATCHDOG=1, and the status if it changed. */
void idl__srv_svc_tick(struct idl_server *srv);
/* Says STOPPING=1, once a run. */
void idl__srv_svc_stopping(struct idl_server *srv);
/* Closes the timer (the run ended). */
void idl__srv_svc_stop(struct idl_server *srv);

/* server_drain.c */
/* The drain was asked: begins it (once): the listeners leave the set, STOPPING=1. */
void idl__srv_drain_begin(struct idl_server *srv);
/* One step of the drain (the timer fired): ends what is idle, stops the server once
 * nothing is left or the deadline passed, else sets the timer for the next step. */
void idl__srv_drain_step(struct idl_server *srv);

/* server_peers.c */
/* The hello state of a message endpoint's peer, made when it first appears; NULL when
 * there is no room for it (every remembered peer has deferred replies out, or no memory). */
struct srv_peer *idl__srv_peer(struct srv_src *src, const struct idl_peer *from);
/* Frees a message endpoint's peers (NULL: nothing). */
void idl__srv_peers_free(struct srv_peers *ps);

/* The request the calling thread is serving. Written twice and read by idl_request_port() and
 * its kin on every request: in the initial-exec model each touch is one %fs-relative move,
 * where the dynamic models cost a call each. The static TLS block reserves room for a
 * pointer even when the library is loaded with dlopen(). */
extern _Thread_local struct srv_req *idl__srv_current __attribute__((tls_model("initial-exec")));

/*
 * A request that passed the checks goes to its subsystem's demux; returns the reply's size
 * (0: none is sent). `kind` is the request's, read before the demux ran. In line in both
 * paths of idl__srv_serve().
 */
static inline __attribute__((always_inline)) uint32_t
idl__srv_dispatch(struct srv_src *src, const struct idl_peer *from, struct srv_peer *peer,
		  idl_msg_header_t *in, const struct srv_ss *s, idl_msg_header_t *out, uint8_t kind,
		  int carries)
{
	struct idl_server *srv = src->srv;
	struct srv_req rq = { src, from, peer, in, s };

	if (srv->concurrency != 0)
		idl__srv_gate_enter(&srv->gate);
	idl__srv_current = &rq;
	if (s->demux != NULL)
		s->demux(in, out);
	else
		s->demux_ctx(s->ctx, in, out);
	idl__srv_current = NULL;
	if (srv->concurrency != 0)
		idl__srv_gate_leave(&srv->gate);
	/* MIG's rule: the routine keeps what the request carried only when it returned
	 * KERN_SUCCESS or MIG_NO_REPLY. A request without descriptors carries nothing. */
	if (carries && out->retcode != KERN_SUCCESS && out->retcode != MIG_NO_REPLY)
		idl_msg_destroy(in);
	if (kind == IDL_KIND_ONEWAY || out->retcode == MIG_NO_REPLY)
		return 0;
	/* A demux never writes past max_reply; a size that says otherwise is a bug in user
	 * code, and the client gets a clean error instead of stray bytes. */
	if (__builtin_expect(out->size < IDL_MSG_HEADER_SIZE || out->size > s->ss->max_reply ||
				     (out->retcode != 0 && out->size != IDL_MSG_HEADER_SIZE),
			     0)) {
		out->size = IDL_MSG_HEADER_SIZE;
		out->flags = 0;
		out->ndesc = 0;
		if (out->retcode == 0)
			out->retcode = MIG_TYPE_ERROR;
	}
	return out->size;
}

/*
 * idl__srv_serve_one() in line in the receive loops, whose registers are saved already: a
 * call of eight arguments saved and restored as many again on every message. The fast path:
 * a request whose header's first word and id are those of the last one that passed every
 * check on this source (hs), received whole, of the size it says and without descriptors,
 * has passed them too - the hello's verdicts and the routine's kind are what they were, and
 * no authorisation hook is set - so only the client's in-flight limit is asked again.
 * Anything else takes idl__srv_serve_checked().
 */
static inline __attribute__((always_inline)) uint32_t
idl__srv_serve(struct srv_src *src, struct srv_hello *hs, idl_msg_header_t *in, size_t len,
	       int rcv_err, idl_msg_header_t *out, const struct idl_peer *from,
	       struct srv_peer *peer)
{
	struct idl_server *srv = src->srv;
	uint32_t w0;

	if (__builtin_expect(rcv_err == 0 && len >= IDL_MSG_HEADER_SIZE, 1)) {
		memcpy(&w0, in, sizeof w0);
		if (__builtin_expect(w0 == hs->fast_w0 && in->id == hs->fast_id &&
					     in->size == len && len % IDL_MSG_ALIGN == 0 &&
					     in->ndesc == 0 && srv->auth == NULL &&
					     atomic_load_explicit(peer != NULL ? &peer->pending
									       : &src->pending,
								  memory_order_relaxed) <
						     srv->limits[IDL_LIMIT_INFLIGHT],
				     1))
			return idl__srv_dispatch(src, from, peer, in, &srv->subs[hs->fast_si], out,
						 in->kind, 0);
	}
	return idl__srv_serve_checked(src, hs, in, len, rcv_err, out, from, peer);
}

#endif /* IDL_RUNTIME_SERVER_H */
