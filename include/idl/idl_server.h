/*
 * idl_server.h - the server side: a port set that receives, demultiplexes and replies.
 *
 * A server is a set of endpoints of any transports ("unix:/run/a.sock", later "tcp:...").
 * Every source of messages in the set - each accepted connection, or a connectionless
 * endpoint - is served by its own receiving thread that blocks in the transport's receive,
 * so receiving costs one kernel entry per message whatever the size of the set
 * (docs/runtime.md explains this choice over an epoll loop). One extra thread per server
 * blocks in epoll_wait on the listening endpoints and accepts.
 *
 * Dispatch is serialised by default: at most one routine of the server runs at a time, as
 * with MIG's single-threaded mach_msg_server, so routines need no locking of their own.
 * idl_server_set_concurrency() allows more.
 *
 * Every request is checked before user code sees it: the runtime checks the header (magic,
 * byte order, kind, that `size` equals the bytes received, that a hello for the subsystem
 * came first); the generated demux checks the id, every size, count and string. A failed
 * check gets a MIG-style error reply (MIG_BAD_ID, MIG_BAD_ARGUMENTS, IDL_EBYTEORDER ...) and
 * the server keeps serving. A simpleroutine's request never gets a reply.
 */
#ifndef IDL_SERVER_H
#define IDL_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include <idl/idl_msg.h>
#include <idl/idl_port.h>
#include <idl/idl_subsystem.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idl_server idl_server_t;

/*
 * A generated demux, `<subsystem>_server` (or the name `serverdemux` gives): checks and
 * unpacks `in` (in->size bytes, aligned to 8), calls the routine and fills `out` (room for
 * the subsystem's max_reply bytes) with the reply header and out-arguments. Returns 1 if the
 * id was the subsystem's, 0 otherwise (out->retcode is then MIG_BAD_ID). Thread-safe if the
 * server routines are.
 */
typedef int (*idl_demux_fn)(idl_msg_header_t *in, idl_msg_header_t *out);

/* One generated unpacker (`_X<routine>`): the entries of a demux's routine table. */
typedef void (*idl_routine_t)(idl_msg_header_t *in, idl_msg_header_t *out);

/* Creates an empty server; the caller owns it (idl_server_destroy()). */
int idl_server_create(idl_server_t **srvp);

/* Adds a subsystem with its demux. The descriptor must outlive the server. Subsystems
 * whose id ranges overlap are refused with IDL_EINVAL. Call before idl_server_run(). */
int idl_server_add_subsystem(idl_server_t *srv, const struct idl_subsystem *ss,
			     idl_demux_fn demux);

/* Adds an endpoint and starts listening on it at once, so a client may connect as soon as
 * this returns (its calls are served once idl_server_run() starts). UNIX sockets are
 * created 0600. Errors: IDL_ENOSCHEME, IDL_EADDRINVAL, IDL_EADDRINUSE, IDL_ESYSERR(e). */
int idl_server_listen(idl_server_t *srv, const char *address);

/* At most `n` routines run at once (default 1: serialised). 0 means no limit. */
int idl_server_set_concurrency(idl_server_t *srv, unsigned n);

/* Serves until idl_server_stop(); returns 0 then, or an error if serving could not start. */
int idl_server_run(idl_server_t *srv);

/* Asks a running server to stop: wakes every receiving thread and makes idl_server_run()
 * return once they have ended. Safe from any thread and from a signal handler. */
void idl_server_stop(idl_server_t *srv);

/* Stops (if running), closes every endpoint, removes UNIX socket files it created, frees. */
void idl_server_destroy(idl_server_t *srv);

/* What the transport knows of the caller of the request being served. */
struct idl_cred {
	int valid; /* 0 when the transport cannot tell (or outside a request) */
	pid_t pid; /* informational only: pids are recycled, never authorise by pid */
	uid_t uid;
	gid_t gid;
};

/* The credentials of the caller of the request the calling thread is serving. Returns 0
 * and fills *cred, or IDL_ENOTSUP when the transport does not know them, or IDL_EINVAL when
 * the thread is not serving a request. */
int idl_request_cred(struct idl_cred *cred);

/* A handle naming the endpoint the calling thread's current request arrived on, passed by
 * generated server stubs as a routine's request-port argument. It identifies; it cannot be
 * called through. IDL_PORT_NULL outside a request (a demux called directly, as in tests). */
idl_port_t idl_request_port(void);

#ifdef __cplusplus
}
#endif
#endif /* IDL_SERVER_H */
