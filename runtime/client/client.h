/*
 * client.h - the client room (runtime/client/): the client's port, connection and call
 * state, shared by port.c (ports and connections), cred.c (the peer's credentials),
 * port_memory.c (the memory port), call.c (the calls and the lean path), call_hello.c (the
 * hello) and call_wait.c (the general path: many calls on one connection); async.h adds
 * calls in flight. The client uses core, ool, interp and trace, and never the server.
 *
 * Locking: one mutex per port guards the port's connection pointer and everything in the
 * connection below that is not atomic, except the transport state, which belongs to
 * whoever holds the role for it: the connecting thread (`connecting`, without the mutex),
 * the sender (send_lock) or the one receiving thread (`receiving`). Nothing that waits for
 * the peer - a connect, a send, a receive - runs with the mutex held. A call alone on its
 * port (the lean path) holds all of it without the mutex: it took the port's `calls` word
 * from 0 to IDL__PORT_LEAN | 1, and every other call waits, counted in that word, until it
 * is back to a plain count. See docs/runtime.md, "The call path".
 */
#ifndef IDL_RUNTIME_CLIENT_H
#define IDL_RUNTIME_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>

#include "ool/ool.h"

/*
 * One call: what its reply must carry, where it goes, and how it ends. A synchronous call's
 * record lives on the caller's stack. The states are those a call passes through; a
 * synchronous call is QUEUED from its entry until its request is handed to the transport.
 */
enum idl__call_state {
	IDL__CALL_QUEUED = 0, /* accepted, not yet handed to the transport */
	IDL__CALL_SENT = 1, /* handed to the transport: a reply may complete it */
	IDL__CALL_DONE = 2, /* result (and why) are final */
};

struct idl__call {
	struct idl__link link; /* on its connection's calls (the general path) */
	uint32_t seqno;
	int32_t rep_id; /* the reply id expected: request id + 100 */
	uint8_t rep_kind; /* IDL_KIND_REPLY, IDL_KIND_HELLO_REPLY; 0: a one-way send */
	int state; /* enum idl__call_state; on the general path under the port's lock */
	/* The word the owner sleeps on (a futex, private to the process): bumped under the
	 * port's lock by whoever changes what the owner waits for. No condition variable is
	 * made or destroyed per call. */
	atomic_uint wake;
	struct idl_deadline dl; /* the call's: every wait and transport op of it takes this */
	idl_msg_header_t *rep;
	uint32_t rep_max;
	int result;
	const char *why; /* text for the detail when result is a runtime error */
	char why_buf[160]; /* the transport's own detail, when why points here */
	/* How the owner learns that the call is done: for a synchronous call, a wake of its
	 * thread. Called with the port's lock held, after result and why are set. */
	void (*complete)(struct idl__call *call);
	struct cl_conn *held; /* a reference the call took on its connection, to drop */
};

/* What a hello taught us about one subsystem on one connection. */
enum cl_hello_state {
	CL_HELLO_PENDING = 0, /* a thread is exchanging it */
	CL_HELLO_DONE = 1,
	CL_HELLO_FAILED = 2, /* the server does not serve it: err says how */
};

struct cl_hello {
	const struct idl_subsystem *ss;
	int state;
	int err;
	uint8_t *verdicts; /* ss->nroutines enum idl__sig_state */
};

struct cl_conn {
	void *tr_state; /* the transport's connection state */
	atomic_uint refs; /* calls using this connection, plus one while it is the port's */
	int dead; /* the peer went away or the port closed it: no new calls */
	int dead_err;
	char dead_why[192]; /* the transport's detail of the failure that ended it, or "" */
	uint32_t goodbye; /* the reason of the server's goodbye that ended it (idl_msg.h), or 0 */
	int receiving; /* a leader is (or is about to be) in conn_recv */
	int calling; /* a leader is in conn_call: nobody else may send */
	uint32_t leader_cap; /* room in the buffer the leader receives into */
	struct idl__list calls; /* struct idl__call on the general path, the newest first */
	struct cl_hello *hellos; /* a small array: ports rarely use more than one subsystem */
	size_t nhellos;
	size_t hellos_cap;
	/* The subsystem whose hello a call found done last, and its verdicts: a call of the
	 * same subsystem reads its verdict with one compare. */
	const struct idl_subsystem *last_ss;
	const uint8_t *last_verdicts;
	pthread_cond_t hello_cv; /* a pending hello finished */
	pthread_mutex_t send_lock; /* one conn_send at a time: stream transports frame */
	/* 1 while a lean call's request is out and it receives (the general path's calls may
	 * then send, and it delivers their replies as a leader would), else 0. Written by the
	 * lean call alone; read under the port's lock. */
	atomic_uint lean;
	uint32_t lean_cap; /* the lean call's reply room, while lean is 1 */
	/* 1 while receiving and leader_cap stand for the lean call's receive: set under the
	 * port's lock by the first general-path call that sends beside it (with a reference
	 * for it), cleared by the lean call as it leaves. Atomic, because the lean call reads
	 * it without the lock to see whether it must take the slow way out. */
	atomic_int lean_proxy;
	void *scratch; /* the leader's buffer when its own reply buffer is too small */
	size_t scratch_cap;
};

/* In a port's `calls` word: one call holds the port alone (the lean path). */
#define IDL__PORT_LEAN 0x80000000u

struct idl_port {
	struct idl__port_head head;
	const struct idl_transport *tr;
	const char *rest; /* inside head.address */
	atomic_int timeout_ms;
	atomic_uint seqno;
	/* The calls inside idl_call()/idl_send() on this port, from their entry to their exit,
	 * and IDL__PORT_LEAN while one of them holds the port alone. A call that finds it 0
	 * takes it to IDL__PORT_LEAN | 1 and goes the lean path; any other counts itself and
	 * goes the general path, under the lock, after waiting for the lean call to leave. */
	atomic_uint calls;
	pthread_mutex_t lock;
	pthread_cond_t lean_cv; /* the lean call left (broadcast under the lock) */
	struct cl_conn *conn; /* NULL: the next call connects */
	/* A connect runs without the lock (idl__cl_conn_get()): calls in flight on a dead
	 * connection must still be able to end, and no call may wait for another's connect
	 * past its own deadline. `connecting` is 1 while one does; `connects` counts those
	 * that ended, each broadcasting conn_cv; connect_err and connect_why are the last
	 * one's outcome (0 and "" when it connected). */
	int connecting;
	unsigned connects;
	int connect_err;
	char connect_why[192];
	pthread_cond_t conn_cv;
	/* The calls in flight and the pollable port (async.h), made on first use under
	 * the lock and published with release order, so that later calls read it without the
	 * lock (an acquire load); NULL until then. */
	struct idl__loop *loop;
	/* The transport's configuration (core/config.c), held while the port lives; NULL: none. */
	struct idl_config *cfg;
};

/* The calls of connection c on the general path, newest first. */
#define CL_CALLS_FIRST(c) IDL__LIST_FIRST(&(c)->calls, struct idl__call, link)
#define CL_CALLS_NEXT(w) IDL__LIST_NEXT(w, struct idl__call, link)

/* port.c: with port->lock held, but for unref, which any thread may call. */
int idl__cl_conn_get(struct idl_port *p, struct idl_deadline *dl, struct cl_conn **cp);
void idl__cl_conn_unref(struct idl_port *p, struct cl_conn *c);
void idl__cl_conn_dead(struct idl_port *p, struct cl_conn *c, int err);
int idl__cl_wait(pthread_cond_t *cv, pthread_mutex_t *m, int64_t deadline);
void idl__cl_cond_init(pthread_cond_t *cv);
/* The port's live connection with a reference taken (release with idl__cl_conn_unref,
 * without the port's lock: the last reference frees the connection, and a transport's
 * clean-up may wait a moment for its peer); NULL when it has none. Takes the lock. */
struct cl_conn *idl__cl_conn_live(struct idl_port *p);
/* The client's port class (core.h): a port made around a connection a transport already
 * has. runtime/builtins.c installs it; idl_port_open_memory() uses it directly. */
int idl__cl_port_adopt(const struct idl_transport *tr, const char *address, void *tr_state,
		       idl_port_t *portp);
extern const struct idl__port_class idl__client_port_class;

/* async_loop.c: ends the port's calls in flight (each done function runs, with
 * IDL_ECANCELED) and frees what the pollable port holds. No lock held. */
void idl__async_close(struct idl_port *p);

/* call_wait.c: the general path. Port lock held. */
/* Sends `req` and waits for the matching reply into call->rep (a one-way call: for the send
 * alone); call is linked while in flight. *handed is set once the transport has the
 * request. Returns the call's result. */
int idl__call_transact(struct idl_port *p, struct cl_conn *c, idl_msg_header_t *req,
		       struct idl__call *call, int *handed);
/* Finishes a call: result and why set, state DONE, its owner told. */
void idl__call_finish(struct idl__call *call, int result, const char *why);
/* Wakes a call's owner to look again at what it waits for (not a completion). */
void idl__call_poke(struct idl__call *call);
/* The synchronous call's completion: a wake of its thread. */
void idl__call_wake(struct idl__call *call);
/* Checks a received reply against the call it answers (by seqno) and completes it: the
 * reply's bytes are copied into call->rep unless buf is it. Returns 0 when the reply was
 * taken, or nonzero when it was refused (the call then failed with why; what the reply
 * carried must be released by the caller). */
int idl__call_take(struct idl__call *call, const void *buf, size_t len, int rcv_err);
/* Why a call failed whose reply the transport refused for its descriptors (IDL_EPROTO, the
 * framing kept): that call fails, and the connection and its other calls go on. */
extern const char idl__call_refused[];
/* Why a call failed whose deadline passed before its reply came (the lean path's and the
 * general path's). */
extern const char idl__call_late[];
/* A received message nobody takes: what the transport made of its descriptors is
 * released. */
void idl__call_drop(void *buf, size_t len, int rcv_err);
/* The sequence number a received message carries (in either byte order), or 0 with
 * *ok = 0 when it is too short to carry one. */
uint32_t idl__call_seqno(const void *buf, size_t len, int *ok);
/* Hands a received message to the call it answers, checking it on the way. */
void idl__call_deliver(struct cl_conn *c, void *buf, size_t len, int rcv_err);
/* Every call of c that is not done looks again at what it waits for. */
void idl__call_poke_all(struct cl_conn *c);
/* Keeps the transport's detail of the failure that ends the connection. */
void idl__call_dead_why(struct cl_conn *c);
/* The reason of a message that is the server's goodbye (idl_msg.h), with its text (or a
 * sentence naming the reason) in why; 0 for any other message. len: the message's size;
 * have: its bytes in buf. Used by the synchronous and the asynchronous client. */
uint32_t idl__goodbye_read(const void *buf, size_t len, size_t have, char *why, size_t whysz);
/* The error a goodbye's reason gives the calls it ends: IDL_ELIMIT for a limit, else
 * MIG_SERVER_DIED. */
int idl__goodbye_err(uint32_t reason);
/* A message that is the server's goodbye (idl_msg.h): ends c with the error its reason
 * means (IDL_ELIMIT for a limit, else MIG_SERVER_DIED), the reason and text kept in c.
 * Returns 1 for a goodbye (which the caller then drops), 0 for any other message. The
 * lock held, or, on the lean path, taken inside. */
int idl__call_goodbye(struct idl_port *p, struct cl_conn *c, const void *buf, size_t len,
		      size_t have); /* len: the message's size; have: its bytes in buf */
/* Whether c ended by a goodbye that promises its calls' requests were not read (IDLE,
 * EVICTED): a call may then be sent again on a new connection. */
int idl__call_goodbye_retry(const struct cl_conn *c);
/* A transport error on a send (or on a combined send and receive): the server's goodbye,
 * when it left one and nobody else receives, ends the connection with its reason (read
 * without waiting); else the peer's death does. Returns the call's error. */
int idl__call_send_failed(struct idl_port *p, struct cl_conn *c, int err);

/* call_hello.c: port lock held. */
/* The verdicts for ss on this connection, exchanging the hello first if needed. */
int idl__call_hello(struct idl_port *p, struct cl_conn *c, const struct idl_subsystem *ss,
		    struct idl_deadline *dl, const uint8_t **verdicts);
/* Forgets the hello for ss whose verdicts a call relied on (the server forgot it). */
void idl__call_hello_forget(struct cl_conn *c, const struct idl_subsystem *ss,
			    const uint8_t *verdicts);

#endif /* IDL_RUNTIME_CLIENT_H */
