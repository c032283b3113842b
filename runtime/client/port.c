/*
 * port.c - opening and closing client ports, and the life of their connections; the
 * client's port class and port ops, through which core closes a client port, makes one of a
 * connection that arrived in a message, and takes memory for sending on it. It knows
 * nothing of the server.
 *
 * A port holds at most one live connection. When the peer dies the connection is marked
 * dead and detached from the port at once, so the next call makes a new one (and exchanges
 * its hellos again); the old one is freed when the last call that used it has left.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"

static pthread_once_t port_once = PTHREAD_ONCE_INIT;
static pthread_condattr_t port_condattr;

static void
port_init_condattr(void)
{
	/* Deadlines are CLOCK_MONOTONIC; condition waits must measure the same clock. */
	pthread_condattr_init(&port_condattr);
	pthread_condattr_setclock(&port_condattr, CLOCK_MONOTONIC);
}

/*
 * The first sequence number of a new port: random, so that a port opened after another
 * closed - in this process or in a restarted one that got the same source address - does
 * not repeat the numbers its predecessor used. A datagram server's duplicate-reply cache
 * (transports/udp/udp.c) keys on the address and the number.
 */
static uint32_t
port_first_seqno(void)
{
	uint32_t s = 0;

	if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		s = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^
		    (uint32_t)getpid() << 16;
	}
	return s;
}

void
idl__cl_cond_init(pthread_cond_t *cv)
{
	pthread_once(&port_once, port_init_condattr);
	pthread_cond_init(cv, &port_condattr);
}

int
idl__cl_wait(pthread_cond_t *cv, pthread_mutex_t *m, int64_t deadline)
{
	struct timespec ts;

	if (deadline == IDL_DEADLINE_NONE)
		return pthread_cond_wait(cv, m);
	ts.tv_sec = (time_t)(deadline / 1000000000);
	ts.tv_nsec = (long)(deadline % 1000000000);
	return pthread_cond_timedwait(cv, m, &ts);
}

static void port_close(idl_port_t p);
static void *port_ool_alloc(idl_port_t port, size_t size);

/* What core does with a client port (core.h, "The port head"). */
static const struct idl__port_ops port_ops = {
	.close = port_close,
	.ool_alloc = port_ool_alloc,
};

/* A new port to `address` of transport tr, the part after the scheme at offset `rest`; no
 * connection yet. NULL when out of memory. */
static struct idl_port *
port_alloc(const struct idl_transport *tr, const char *address, size_t rest)
{
	struct idl_port *p;

	if ((p = calloc(1, sizeof *p)) == NULL || (p->head.address = strdup(address)) == NULL) {
		free(p);
		return NULL;
	}
	p->head.kind = IDL__PORT_CLIENT;
	p->head.ops = &port_ops;
	p->tr = tr;
	p->rest = p->head.address + rest;
	atomic_init(&p->timeout_ms, IDL_PORT_DEFAULT_TIMEOUT_MS);
	atomic_init(&p->seqno, port_first_seqno());
	atomic_init(&p->calls, 0);
	pthread_mutex_init(&p->lock, NULL);
	idl__cl_cond_init(&p->lean_cv);
	idl__cl_cond_init(&p->conn_cv);
	return p;
}

/* A port to `address`, not connected yet: its scheme found, its state made. */
static int
port_new(const char *address, struct idl_port **pp)
{
	const char *rest;
	const struct idl_transport *tr;

	*pp = NULL;
	if (address == NULL)
		return idl__fail(IDL_EINVAL, "idl_port_open: NULL argument");
	if (strchr(address, ':') == NULL)
		return idl__fail(IDL_EADDRINVAL, "%s: no scheme (expected e.g. unix:/path)",
				 address);
	tr = idl_transport_find(address, &rest);
	if (tr == NULL)
		return idl__fail(IDL_ENOSCHEME, "%s: no transport for this scheme", address);
	if ((*pp = port_alloc(tr, address, (size_t)(rest - address))) == NULL)
		return idl__fail(IDL_ENOMEM, "%s: out of memory", address);
	return 0;
}

/* idl_port_open() with a configuration already checked (idl__config_check()), or NULL. */
static int
port_open_cfg(const char *address, struct idl_config *cfg, idl_port_t *portp)
{
	struct idl_port *p;
	struct cl_conn *c;
	int err;

	if (portp == NULL)
		return idl__fail(IDL_EINVAL, "idl_port_open: NULL argument");
	if ((err = port_new(address, portp)) != 0)
		return err;
	p = *portp;
	p->cfg = idl__config_hold(cfg);
	/* Connected now, so that a wrong address or a server that is not there shows here. */
	pthread_mutex_lock(&p->lock);
	err = idl__cl_conn_get(p, &(struct idl_deadline){ 0, IDL_PORT_DEFAULT_TIMEOUT_MS }, &c);
	if (err == 0)
		idl__cl_conn_unref(p, c);
	pthread_mutex_unlock(&p->lock);
	if (err != 0) {
		*portp = NULL;
		port_close(p);
		return err;
	}
	return 0;
}

int
idl_port_open(const char *address, idl_port_t *portp)
{
	idl__clear_detail();
	return port_open_cfg(address, NULL, portp);
}

int
idl_port_open_config(const char *address, idl_config_t *cfg, idl_port_t *portp)
{
	const struct idl_transport *tr;
	const char *rest;
	int err;

	idl__clear_detail();
	if (cfg != NULL && address != NULL && (tr = idl_transport_find(address, &rest)) != NULL &&
	    (err = idl__config_check(tr, cfg, address, 0)) != 0) {
		if (portp != NULL)
			*portp = NULL;
		return err;
	}
	return port_open_cfg(address, cfg, portp);
}

int
idl_port_open_deferred(const char *address, idl_port_t *portp)
{
	idl__clear_detail();
	if (portp == NULL)
		return idl__fail(IDL_EINVAL, "idl_port_open_deferred: NULL argument");
	return port_new(address, portp);
}

int
idl__cl_port_adopt(const struct idl_transport *tr, const char *address, void *tr_state,
		   idl_port_t *portp)
{
	const char *colon = strchr(address, ':');
	struct idl_port *p = NULL;
	struct cl_conn *c = NULL;

	*portp = NULL;
	if (colon == NULL || (p = port_alloc(tr, address, (size_t)(colon + 1 - address))) == NULL ||
	    (c = calloc(1, sizeof *c)) == NULL) {
		if (p != NULL)
			port_close(p);
		tr->conn_fini(tr_state);
		free(tr_state);
		return idl__fail(IDL_ENOMEM, "%s: out of memory for a received port", address);
	}
	/* The connection is made: the port holds it as a call would have left it. */
	c->tr_state = tr_state;
	idl__cl_cond_init(&c->hello_cv);
	pthread_mutex_init(&c->send_lock, NULL);
	atomic_init(&c->refs, 1);
	p->conn = c;
	*portp = p;
	return 0;
}

const struct idl__port_class idl__client_port_class = { .adopt = idl__cl_port_adopt };

/* idl_port_close() of a client port, through its ops. */
static void
port_close(idl_port_t p)
{
	idl__async_close(p);
	pthread_mutex_lock(&p->lock);
	if (p->conn != NULL)
		idl__cl_conn_dead(p, p->conn, IDL_ECLOSED);
	pthread_mutex_unlock(&p->lock);
	pthread_cond_destroy(&p->lean_cv);
	pthread_cond_destroy(&p->conn_cv);
	pthread_mutex_destroy(&p->lock);
	idl_config_free(p->cfg);
	free(p->head.address);
	free(p);
}

int
idl_port_set_timeout(idl_port_t p, int timeout_ms)
{
	idl__clear_detail();
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT || timeout_ms <= 0)
		return idl__fail(IDL_EINVAL, "idl_port_set_timeout: bad port or timeout %d",
				 timeout_ms);
	atomic_store_explicit(&p->timeout_ms, timeout_ms, memory_order_relaxed);
	return 0;
}

int
idl_port_timeout(idl_port_t p)
{
	if (p == NULL || p->head.kind != IDL__PORT_CLIENT)
		return IDL_EINVAL;
	return atomic_load_explicit(&p->timeout_ms, memory_order_relaxed);
}

struct cl_conn *
idl__cl_conn_live(struct idl_port *p)
{
	struct cl_conn *c;

	pthread_mutex_lock(&p->lock);
	c = p->conn;
	if (c != NULL && !c->dead)
		c->refs++;
	else
		c = NULL;
	pthread_mutex_unlock(&p->lock);
	return c;
}

/* idl_ool_alloc_port() on a client port: its transport's memory for its live connection. */
static void *
port_ool_alloc(idl_port_t port, size_t size)
{
	void *(*alloc)(void *conn, size_t size) = IDL__TR_OP(port->tr, conn_ool_alloc);
	struct cl_conn *c;
	void *mem;

	if (alloc == NULL || (c = idl__cl_conn_live(port)) == NULL)
		return NULL;
	mem = alloc(c->tr_state, size);
	idl__cl_conn_unref(port, c);
	return mem;
}

static void
port_conn_free(struct idl_port *p, struct cl_conn *c)
{
	p->tr->conn_fini(c->tr_state);
	free(c->tr_state);
	for (size_t i = 0; i < c->nhellos; i++)
		free(c->hellos[i].verdicts);
	free(c->hellos);
	free(c->scratch);
	pthread_cond_destroy(&c->hello_cv);
	pthread_mutex_destroy(&c->send_lock);
	free(c);
}

/* Waits, the lock held, for the connect another thread makes: 0 once it ended, or
 * IDL_ETIMEDOUT when this call's deadline passed first. */
static int
port_connect_wait(struct idl_port *p, struct idl_deadline *dl)
{
	unsigned seen = p->connects;

	while (p->connecting && p->connects == seen)
		if (idl__cl_wait(&p->conn_cv, &p->lock, idl_deadline_abs(dl)) != 0 &&
		    idl_deadline_passed(dl))
			return idl__fail(IDL_ETIMEDOUT,
					 "%s: deadline passed waiting for another call's connect",
					 p->head.address);
	return 0;
}

/*
 * Returns the port's connection, making one if there is none, with a reference taken.
 * Called with the lock held; returns with it held, but releases it while it connects, so
 * that the calls still in flight on a dead connection end meanwhile (they need the lock to
 * learn of the death and to leave), and the calls that came meanwhile wait for this connect
 * within their own deadlines, not on the lock. The connect is bounded by this call's
 * deadline. A call that waited for another's connect takes its outcome: its connection, or
 * its error, unless that was the other call's deadline passing (then it connects itself,
 * within its own).
 */
int
idl__cl_conn_get(struct idl_port *p, struct idl_deadline *dl, struct cl_conn **cp)
{
	struct cl_conn *c;
	int err;

	while ((c = p->conn) == NULL && p->connecting) {
		if ((err = port_connect_wait(p, dl)) != 0)
			return err;
		if (p->conn == NULL && p->connect_err != 0 && p->connect_err != IDL_ETIMEDOUT)
			return idl__fail(p->connect_err, "%s", p->connect_why);
	}
	if (c != NULL) {
		atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
		*cp = c;
		return 0;
	}
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->tr_state = idl__zalloc(p->tr->conn_size)) == NULL) {
		free(c);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", p->head.address);
	}
	idl__cl_cond_init(&c->hello_cv);
	pthread_mutex_init(&c->send_lock, NULL);
	p->connecting = 1;
	pthread_mutex_unlock(&p->lock);
	idl__clear_detail();
	err = idl__config_conn(p->tr, p->cfg, c->tr_state);
	if (err == 0)
		err = p->tr->conn_connect(c->tr_state, p->rest, dl);
	/* Keep the transport's detail when it gave one. */
	if (err != 0 && idl_errdetail()[0] == '\0')
		idl__fail(err, "%s: connect: %s", p->head.address, idl_strerror(err));
	if (err != 0)
		port_conn_free(p, c);
	pthread_mutex_lock(&p->lock);
	p->connecting = 0;
	p->connects++;
	p->connect_err = err;
	snprintf(p->connect_why, sizeof p->connect_why, "%s", err != 0 ? idl_errdetail() : "");
	pthread_cond_broadcast(&p->conn_cv);
	if (err != 0)
		return err;
	atomic_init(&c->refs, 2); /* the port's, and the caller's */
	p->conn = c;
	*cp = c;
	return 0;
}

/* Any thread, with or without the port's lock: the last reference frees the connection,
 * which by then is no longer the port's (no new reference can be taken). The release
 * pairs with the acquire so that the one that frees sees every use before. */
void
idl__cl_conn_unref(struct idl_port *p, struct cl_conn *c)
{
	if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
		port_conn_free(p, c);
}

/*
 * The connection is unusable (the peer died, or the port is closing): fail every call
 * waiting on it, wake the thread blocked in the transport, and detach it from the port so
 * that the next call reconnects.
 */
void
idl__cl_conn_dead(struct idl_port *p, struct cl_conn *c, int err)
{
	if (!c->dead) {
		c->dead = 1;
		c->dead_err = err;
		for (struct idl__call *w = CL_CALLS_FIRST(c); w != NULL; w = CL_CALLS_NEXT(w))
			if (w->state != IDL__CALL_DONE)
				idl__call_finish(w, err,
						 c->dead_why[0] != '\0' ? c->dead_why
						 : err == MIG_SERVER_DIED
							 ? "the server went away"
							 : "the connection failed");
		pthread_cond_broadcast(&c->hello_cv);
		p->tr->conn_close(c->tr_state);
	}
	if (p->conn == c) {
		p->conn = NULL;
		idl__cl_conn_unref(p, c);
	}
}
