/*
 * idl_server.h - the server side: a port set that receives, demultiplexes and replies.
 *
 * A server is a set of endpoints of any transports ("unix:/run/a.sock", "tcp:...").
 * Connections of transports with the event operations (unix:, tcp:) wait in one epoll set
 * and a bounded pool of threads (twice the CPUs, 2 to 16) serves whichever is ready, so an
 * idle connection costs no thread and no receive buffer; a busy one keeps a thread of its
 * own while it goes on sending (at most 16 such), with one kernel entry per message. Other
 * sources (shm: connections, udp: and port: endpoints) have a receiving thread each
 * (docs/runtime.md). The same core runs on the caller's thread without any thread of the
 * library's: idl_server_fd() and idl_server_dispatch().

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

/* A demux with state of its own (an interpreter, a wrapper around a generated demux): the
 * contract of idl_demux_fn, with the `ctx` given to idl_server_add_subsystem_ctx(). */
typedef int (*idl_demux_ctx_fn)(void *ctx, idl_msg_header_t *in, idl_msg_header_t *out);

/* One generated unpacker (`_X<routine>`): the entries of a demux's routine table. */
typedef void (*idl_routine_t)(idl_msg_header_t *in, idl_msg_header_t *out);

/* Creates an empty server; the caller owns it (idl_server_destroy()). */
int idl_server_create(idl_server_t **srvp);

/* Adds a subsystem with its demux. The descriptor must outlive the server. Subsystems
 * whose id ranges overlap are refused with IDL_EINVAL. Call before idl_server_run(). */
int idl_server_add_subsystem(idl_server_t *srv, const struct idl_subsystem *ss, idl_demux_fn demux);

/* idl_server_add_subsystem() for a demux that takes a context: each request is handed to
 * demux(ctx, in, out). The descriptor and ctx must outlive the server. */
int idl_server_add_subsystem_ctx(idl_server_t *srv, const struct idl_subsystem *ss,
				 idl_demux_ctx_fn demux, void *ctx);

/* Adds an endpoint and starts listening on it at once, so a client may connect as soon as
 * this returns (its calls are served once idl_server_run() starts). UNIX sockets are
 * created 0600. "SCHEME:systemd:NAME" (unix:, tcp:, udp:, shm:, port:, tls:) adopts
 * instead the socket a service manager passed under that name (socket activation:
 * LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID, read at the first such address and then removed
 * from the environment; docs/deploy.md), after checking that it is what the transport would
 * have made: IDL_EADDRINVAL names what was passed instead, IDL_EACCES refuses a socket file
 * others may connect to. Errors: IDL_ENOSCHEME, IDL_EADDRINVAL, IDL_EADDRINUSE, IDL_EACCES,
 * IDL_ENOTSUP (a transport that cannot adopt), IDL_ESYSERR(e). */
int idl_server_listen(idl_server_t *srv, const char *address);

/* idl_server_listen() with a configuration for the address's transport (<idl/idl_port.h>,
 * idl_config_t: the tls: transport's certificate, trusted CAs ...), which the endpoint holds
 * while it lives. NULL cfg is idl_server_listen(). Errors: as idl_server_listen(); IDL_EINVAL
 * for a configuration of another transport's scheme, IDL_ENOTSUP for a transport that takes
 * none; the transport's own. */
int idl_server_listen_config(idl_server_t *srv, const char *address, idl_config_t *cfg);

/* At most `n` routines run at once (default 1: serialised). 0 means no limit. */
int idl_server_set_concurrency(idl_server_t *srv, unsigned n);

/* Serves until idl_server_stop(); returns 0 then, or an error if serving could not start. */
int idl_server_run(idl_server_t *srv);

/*
 * The embeddable server: the event core driven from the caller's event loop. The first
 * call of idl_server_fd() starts the server without a thread (as idl_server_run() would
 * start it, with the limits and the authorisation hook as set) and returns the epoll
 * descriptor of its set, owned by the server: readable when idl_server_dispatch() has work.
 * idl_server_dispatch() handles at most `max` ready events (a connection, a listener, a
 * timer) on the calling thread and never blocks; it returns how many it handled, or an
 * error. A reply deferred with idl_request_reply() and sent from another thread goes out
 * at once when the socket takes it, and otherwise wakes the descriptor. Only endpoints
 * whose transport has the event operations (unix:, tcp:) can be served so: idl_server_fd()
 * refuses a server with others (IDL_ENOTSUP). idl_server_stop() then
 * idl_server_destroy() end it; dispatch from one thread at a time.
 */
int idl_server_fd(idl_server_t *srv);
int idl_server_dispatch(idl_server_t *srv, int max);

/* Asks a running server to stop: wakes every receiving thread and makes idl_server_run()
 * return once they have ended. Every connection ends at once, with a STOPPING goodbye; a
 * call its server routine was running, or whose request was not read yet, fails in its
 * client (MIG_SERVER_DIED). Safe from any thread and from a signal handler. */
void idl_server_stop(idl_server_t *srv);

/*
 * Asks a running server to stop once the calls in flight are done: it accepts no more
 * connections (a passed socket's clients wait in its backlog for the next instance), serves
 * every connection on until no request of its client is read and unanswered and nothing
 * more waits to be read, then ends it with a STOPPING goodbye; a message endpoint (udp:) is
 * served until nothing has come to it for a while (a few ms) and nothing waits. Once no
 * connection is left, or timeout_ms have passed (negative: no limit; 0: now), it stops as
 * idl_server_stop() does, the rest getting their goodbye at once; idl_server_run() (or the
 * embedded dispatch, with IDL_ECLOSED) returns then. A service manager hears STOPPING=1 when
 * it begins (docs/deploy.md). A second drain may bring the deadline closer; a stop during a
 * drain stops at once. Safe from any thread and from a signal handler.
 */
void idl_server_drain(idl_server_t *srv, int timeout_ms);

/*
 * Certificate rotation without a restart (docs/transports/tls.md, "Reloading certificates"): reads
 * again the files of every endpoint that has any (tls:'s certificate, key, trusted CAs and
 * revocation lists, from the paths it was configured with). Connections made after it returns get
 * the new material; connections already up keep the identity they verified and go on. An endpoint
 * whose files cannot be read, or whose key is not its certificate's, keeps what it had. Each
 * endpoint's outcome goes to the server's log (idl_server_set_log()). Returns 0, or the first
 * endpoint's error with idl_errdetail() saying which file and why; the others are reloaded all the
 * same. Any thread but a signal handler's, running or not.
 */
int idl_server_reload(idl_server_t *srv);
/* The same from a signal handler (SIGHUP): async-signal-safe, it only asks; the server's
 * loop (a thread of idl_server_run(), or idl_server_dispatch() of an embedded server) reloads
 * at its next event, and the log says how it went. */
void idl_server_reload_async(idl_server_t *srv);

/* Stops (if running), closes every endpoint, removes UNIX socket files it created, frees.
 * Replies that routines deferred (idl_reply_t) and still hold stay valid: sending one then
 * returns MIG_SERVER_DIED, and the last one sent or discarded frees what remains. */
void idl_server_destroy(idl_server_t *srv);

/*
 * What the transport knows of the caller of a request (docs/security.md, per transport).
 * `valid` says that uid and gid are the kernel's word (SO_PEERCRED on unix: and shm:, the
 * owner of the client's queues on port:); pid is 0 when unknown or unverified. `addr` is the
 * peer's network address with its scheme ("tcp:127.0.0.1:40312", "udp:[::1]:5000"), empty
 * on local transports.
 */
#define IDL_CRED_ADDR_MAX 96
struct idl_cred {
	int valid; /* uid and gid are known (0 when the transport cannot tell) */
	pid_t pid; /* informational only: pids are recycled, never authorise by pid */
	uid_t uid;
	gid_t gid;
	char addr[IDL_CRED_ADDR_MAX]; /* network transports: "scheme:host:port"; else "" */
};

/* The credentials of the caller of the request the calling thread is serving. Returns 0
 * and fills *cred when the transport knows anything of the caller (uid and gid, or its
 * address), IDL_ENOTSUP when it knows nothing, IDL_EINVAL when the thread is not serving a
 * request. */
int idl_request_cred(struct idl_cred *cred);

/*
 * Limits. Every refusal is logged (idl_server_set_log()) with the limit's name and value,
 * and the client gets a defined error. Limits are set before idl_server_run() (IDL_EBUSY
 * while it runs); a value of 0 means "no limit" where the table says so.
 *
 *   IDL_LIMIT_MSG_SIZE      bytes of one request, header included (default and maximum: the
 *                           largest request of the served subsystems, or a hello). A larger
 *                           request is refused from its header, before anything is
 *                           allocated for it: IDL_EMSGSIZE (a stream transport closes the
 *                           connection instead). At least 24.
 *   IDL_LIMIT_INFLIGHT      requests of one client (a connection, or a peer of a message
 *                           endpoint) received and not yet answered: the one running plus
 *                           the replies deferred with MIG_NO_REPLY (default 64). Beyond it a
 *                           request gets IDL_ELIMIT and never runs. At least 1.
 *   IDL_LIMIT_CONNECTIONS   connections served at once. Default: the descriptor limit
 *                           (RLIMIT_NOFILE, whose soft value the server raises to the hard
 *                           one when it runs; at most 1048576) less 64 kept for the
 *                           server's own use, at least 16; 0 is that default too. At the
 *                           limit the oldest idle connection (no request unanswered) is
 *                           closed to make room, with an EVICTED goodbye; when none is idle
 *                           the new one is refused with a CONNECTIONS goodbye, and its
 *                           client's call fails with IDL_ELIMIT. One descriptor is kept in
 *                           reserve so that a refusal can still be told at EMFILE.
 *   IDL_LIMIT_FDS           file descriptors carried by one message (default 16): a message
 *                           with more is refused (MIG_BAD_ARGUMENTS) and every descriptor
 *                           of it closed.
 *   IDL_LIMIT_HANDSHAKE_MS  a new connection that has not completed a hello within this
 *                           many milliseconds is closed (default 30000; 0: never).
 *   IDL_LIMIT_IDLE_MS       a connection on which no message arrives for this many
 *                           milliseconds, and no request waits for its reply, is closed
 *                           with an IDLE goodbye (default 0: never, but see net_idle_ms).
 *                           Its client's next call connects again and goes through.
 *   IDL_LIMIT_PER_ADDRESS   connections from one network address to one endpoint (tcp:)
 *                           at once (default 256; 0: no limit). Beyond it a new one is
 *                           refused with a PER_ADDRESS goodbye: its client's call fails
 *                           with IDL_ELIMIT.
 *   IDL_LIMIT_NET_IDLE_MS   the idle timeout of network connections (tcp:) when idle_ms is
 *                           0 (default 300000, five minutes; 0: never).
 */
enum idl_limit {
	IDL_LIMIT_MSG_SIZE = 0,
	IDL_LIMIT_INFLIGHT = 1,
	IDL_LIMIT_CONNECTIONS = 2,
	IDL_LIMIT_FDS = 3,
	IDL_LIMIT_HANDSHAKE_MS = 4,
	IDL_LIMIT_IDLE_MS = 5,
	IDL_LIMIT_PER_ADDRESS = 6,
	IDL_LIMIT_NET_IDLE_MS = 7,
};
#define IDL_LIMIT_COUNT 8

/* Sets a limit. Returns 0, IDL_EINVAL (unknown limit, or a value out of its range),
 * IDL_EBUSY (the server is running). */
int idl_server_set_limit(idl_server_t *srv, enum idl_limit which, uint64_t value);

/* The limit's value as set (or its default); UINT64_MAX for an unknown limit. */
uint64_t idl_server_limit(idl_server_t *srv, enum idl_limit which);

/* The name of a limit as logs and docs/security.md spell it ("msg_size", "inflight", ...),
 * or "?" for an unknown one. */
const char *idl_limit_name(enum idl_limit which);

/*
 * Authorisation. The hook is called for every request (and one-way message) that passed
 * the runtime's checks, before the routine's demux runs, with the caller's credentials (as
 * idl_request_cred() gives them; cred->valid is 0 when the transport knows nothing), the
 * subsystem and the routine. It returns 0 to allow the call; anything else denies it: the
 * routine never runs, the request's out-of-line data and ports are released, and the client
 * gets IDL_EACCES (a one-way message gets nothing). Hellos are not passed to the hook:
 * they run no server code and tell only the routines' signature hashes.
 * The hook runs in the receiving thread of the request, outside the dispatch lock, so
 * several may run at once: it must be thread-safe. NULL removes it. Set before
 * idl_server_run() (IDL_EBUSY while it runs).
 */
typedef int (*idl_auth_fn)(void *ctx, const struct idl_cred *cred, const struct idl_subsystem *ss,
			   const struct idl_routine_desc *rt);
int idl_server_set_auth(idl_server_t *srv, idl_auth_fn hook, void *ctx);

/*
 * Where the server's log lines go: refusals by a limit or the authorisation hook, dropped
 * connections. Each line names the endpoint, the client where known, and the limit with
 * its value, e.g. "unix:/run/a.sock: uid 1000 pid 4242: handshake timeout (handshake_ms
 * 30000)". Lines come from the server's threads, at most 20 a second (then one line says
 * how many were dropped). By default they go to stderr; a NULL fn discards them. Set before
 * idl_server_run().
 */
typedef void (*idl_log_fn)(void *ctx, const char *line);
int idl_server_set_log(idl_server_t *srv, idl_log_fn fn, void *ctx);

/*
 * Counters of a server since it was created: connections served now and accepted, and the
 * connections each goodbye reason ended or refused (docs/runtime.md). Safe from any
 * thread, at any time; the counts are read one by one, not as one snapshot.
 */
struct idl_server_stats {
	uint64_t connections; /* served now */
	uint64_t accepted; /* accepted and served, since creation */
	uint64_t refused_connections; /* refused at the connection limit */
	uint64_t refused_per_address; /* refused at the per-address limit */
	uint64_t closed_idle; /* closed by the idle timeout */
	uint64_t evicted; /* the oldest idle, closed to make room */
	unsigned threads; /* threads of the event core now (dedicated ones included) */
};
int idl_server_stats(idl_server_t *srv, struct idl_server_stats *st);

/* A handle naming the endpoint the calling thread's current request arrived on, passed by
 * generated server stubs as a routine's request-port argument. It identifies; it cannot be
 * called through. IDL_PORT_NULL outside a request (a demux called directly, as in tests). */
idl_port_t idl_request_port(void);

/*
 * Serves one message given as bytes, with every check a receiving thread makes before the
 * demux runs, for fuzzing harnesses (idlc -fuzz) and tests. `msg` holds `len` bytes as a
 * stream transport carries them: the message (header, arguments, descriptors), then the
 * data of each out-of-line descriptor in order, each padded to 8. The message is served on
 * a connection of its own that has said hello for every subsystem of srv with the server's
 * own signature hashes; its ports arrive as ports that go nowhere. The bytes go through the
 * descriptor conversion a transport makes (malformed descriptors are refused with an
 * IDL_EPROTO reply, as a transport's receive path answers them, nothing converted kept),
 * the receive-size limit, then the checks of the header, the
 * routine, its descriptors, the limits and the authorisation hook; the demux runs only
 * when all pass, as on a socket.
 *
 * The reply, when one is due (not for one-way messages and deferred replies), is copied
 * into `reply` (reply_cap bytes) and its size stored in *reply_len (0 when none); what it
 * gives away (out-of-line data, ports) is released as a send would, so its descriptors must
 * not be followed. Returns 0 when the message was served - refused or not: the reply's
 * retcode says which - IDL_EMSGSIZE (the reply does not fit; it was
 * released), IDL_EBUSY (srv is running: serve messages before idl_server_run() or after
 * it returned), IDL_EINVAL or IDL_ENOMEM. `msg` stays the caller's. Not concurrently with
 * other calls on srv.
 */
int idl_server_serve_message(idl_server_t *srv, const void *msg, size_t len, void *reply,
			     size_t reply_cap, size_t *reply_len);

#ifdef __cplusplus
}
#endif
#endif /* IDL_SERVER_H */
