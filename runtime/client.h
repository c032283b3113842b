/*
 * client.h - the client's port and connection state, shared by client_port.c and call.c.
 *
 * Locking: one mutex per port guards the port's connection pointer and everything in the
 * connection below except the transport state, which belongs to whoever holds the role
 * for it: the sender (send_lock) or the one receiving thread (`receiving`). See
 * docs/runtime.md, "Calls on one port from many threads".
 */
#ifndef IDL_RUNTIME_CLIENT_H
#define IDL_RUNTIME_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>

#include "internal.h"

/* One call waiting for its reply. Lives on the caller's stack. */
struct cl_waiter {
	struct idl__link link; /* on its connection's waiters */
	uint32_t seqno;
	int32_t rep_id; /* the reply id expected: request id + 100 */
	uint8_t rep_kind; /* IDL_KIND_REPLY or IDL_KIND_HELLO_REPLY */
	int done; /* result is final */
	int result;
	const char *why; /* text for the detail when result is a runtime error */
	char why_buf[160]; /* the transport's own detail, when why points here */
	idl_msg_header_t *rep;
	uint32_t rep_max;
	pthread_cond_t cv;
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
	unsigned refs; /* calls using this connection, plus one while it is the port's */
	int dead; /* the peer went away or the port closed it: no new calls */
	int dead_err;
	char dead_why[192]; /* the transport's detail of the failure that ended it, or "" */
	int receiving; /* a leader is (or is about to be) in conn_recv */
	int calling; /* a leader is in conn_call: nobody else may send */
	uint32_t leader_cap; /* room in the buffer the leader receives into */
	struct idl__list waiters; /* struct cl_waiter, the newest first */
	struct cl_hello *hellos; /* a small array: ports rarely use more than one subsystem */
	size_t nhellos;
	size_t hellos_cap;
	pthread_cond_t hello_cv; /* a pending hello finished */
	pthread_mutex_t send_lock; /* one conn_send at a time: stream transports frame */
	void *scratch; /* the leader's buffer when its own reply buffer is too small */
	size_t scratch_cap;
};

struct idl_port {
	struct idl__port_head head;
	const struct idl_transport *tr;
	const char *rest; /* inside head.address */
	atomic_int timeout_ms;
	atomic_uint seqno;
	pthread_mutex_t lock;
	struct cl_conn *conn; /* NULL: the next call connects */
};

/* The waiters of connection c, newest first. */
#define CL_WAITERS_FIRST(c) IDL__LIST_FIRST(&(c)->waiters, struct cl_waiter, link)
#define CL_WAITERS_NEXT(w) IDL__LIST_NEXT(w, struct cl_waiter, link)

/* client_port.c: with port->lock held. */
int idl__cl_conn_get(struct idl_port *p, int64_t deadline, struct cl_conn **cp);
void idl__cl_conn_unref(struct idl_port *p, struct cl_conn *c);
void idl__cl_conn_dead(struct idl_port *p, struct cl_conn *c, int err);
int idl__cl_wait(pthread_cond_t *cv, pthread_mutex_t *m, int64_t deadline);
void idl__cl_cond_init(pthread_cond_t *cv);

#endif /* IDL_RUNTIME_CLIENT_H */
