/*
 * server.h - the server's state, shared by server.c (the API and the accept loop) and
 * serve.c (the receiving threads and the checks every request goes through).
 */
#ifndef IDL_RUNTIME_SERVER_H
#define IDL_RUNTIME_SERVER_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "internal.h"

struct srv_ss {
	const struct idl_subsystem *ss;
	idl_demux_fn demux;
	uint32_t vbase; /* where its routines' verdicts start in a source's verdict array */
};

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
	struct srv_peer *hnext; /* hash chain */
	struct srv_peer *newer; /* recency list */
	struct srv_peer *older;
};

/* The peers of a message endpoint: a hash table grown with the count, and a recency list. */
struct srv_peers {
	struct srv_peer **buckets;
	size_t nbuckets;
	size_t count;
	struct srv_peer *newest;
	struct srv_peer *oldest;
};

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
	struct srv_src *next;
	struct srv_src *prev;
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
	struct srv_src *live; /* sources whose thread runs */
	struct srv_src *ended; /* sources whose thread ended, to join and free */
	unsigned concurrency;
	pthread_mutex_t dispatch_mutex; /* concurrency 1 */
	sem_t dispatch_sem; /* concurrency > 1 */
	int efd; /* eventfd: stop requests and ended sources wake the accept loop */
	int epfd; /* the accept loop's epoll set while running, else -1 */
	atomic_int stop_req;
	int running;
	size_t rcap; /* receive buffer: the largest request or hello, rounded to 8 */
	size_t scap; /* reply buffer: the largest reply or hello reply */
};

/* serve.c */
void *idl__srv_conn_main(void *arg);
void *idl__srv_ep_main(void *arg);
int idl__srv_src_alloc(struct idl_server *srv, struct srv_src *src);
void idl__srv_src_free(struct srv_src *src);
/* server.c: a receiving thread is ending; the accept loop will join and free it. */
void idl__srv_src_ended(struct srv_src *src);

#endif /* IDL_RUNTIME_SERVER_H */
