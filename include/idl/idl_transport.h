/*
 * idl_transport.h - the contract between the runtime and a transport.
 *
 * A transport fills one `struct idl_transport` and registers it by scheme; the stubs and
 * the runtime core never change for a new one. The core allocates endpoint and connection
 * state (ep_size, conn_size bytes, zeroed, aligned to 16) and passes it to the ops as
 * `void *`; the transport initialises and finalises it. The built-in transports are one
 * folder each under transports/; one outside the library registers with
 * idl_transport_register() and needs nothing but this header.
 *
 * Versions of this contract: a table starts with the contract version it was written for
 * (abi, IDL_TRANSPORT_ABI) and the size of the struct it was compiled with (size); write
 * both with IDL_TRANSPORT_INIT. A new op is added at the end of the struct and is optional
 * (NULL: the core does without it); a table compiled before it existed is shorter, and the
 * core reads every op past its `size` as NULL, so such a transport keeps working unchanged.
 * IDL_TRANSPORT_ABI changes only when the meaning of something already in the table
 * changes; then a table of another version is refused (IDL_EINVAL).
 *
 * There are two kinds of endpoints:
 *   - connection endpoints (unix, tcp, shm) fill ep_accept: the server accepts a connection
 *     and receives from it with conn_recv and replies with conn_send;
 *   - message endpoints (udp) fill ep_recv and ep_reply: every client's messages arrive
 *     on the endpoint, each with an opaque peer address to reply to.
 *
 * Blocking and deadlines: conn_connect, conn_recv, conn_send, conn_call and ep_recv block
 * until done, until their deadline passes (IDL_ETIMEDOUT), or until close is called on the
 * object from another thread (IDL_ECLOSED). A fast path must make one send and one receive
 * system call per message and no others (no poll before a blocking read).
 *
 * A deadline is lazy (struct idl_deadline below): the ops get the call's timeout in
 * milliseconds, and its absolute CLOCK_MONOTONIC time only once someone needed it. An op
 * that can have the kernel enforce the timeout as it is (a socket whose cached SO_RCVTIMEO
 * already equals `ms`) waits without reading the clock, and a wait that ends by that timeout
 * means the deadline passed. An op that needs the absolute time - a wait that was cut short
 * and must know what is left, a timeout of another length - calls idl_deadline_abs(), which
 * reads the clock once and anchors the deadline there for every later op of the same call
 * (the caller passes the same struct to its send and its receive). So a call's limit is its
 * timeout plus whatever it did before its first wait: microseconds.
 *
 * Errors: a peer that went away (end of file, reset, broken pipe) is MIG_SERVER_DIED on
 * either side; an op woken by close on the object is IDL_ECLOSED; a message over the
 * transport's own size limit is IDL_EMSGSIZE; other system errors are IDL_ESYSERR(errno).
 * ep_accept never blocks (the core calls it when ep_fd is readable); when no connection
 * is pending after all it returns IDL_ESYSERR(EAGAIN).
 *
 * Concurrency: on one connection the core makes at most one conn_send and at most one
 * conn_recv at a time, but a send and a receive may run at once in two threads, and close
 * may come from any thread at any time. ep_recv runs in one thread at a time per endpoint:
 * the endpoint's receiving thread, or an embedded server's loop, which calls it with a
 * deadline of 0 ms when ep_fd is readable (a deadline of 0 tries once, without waiting,
 * and returns IDL_ETIMEDOUT when nothing is there). Only an ep_recv that may wait (any
 * other deadline) may read datagrams ahead of the one it returns: the caller that tries
 * without waiting waits for ep_fd's readiness between receives, which nothing read ahead
 * would report.
 *
 * Ownership: the data of a send belongs to the caller and may be reused when the op
 * returns. Received file descriptors belong to the receiver.
 *
 * Descriptors (<idl/idl_msg.h>): a transport with IDL_TRF_DESC converts them.
 * A message with IDL_MSGF_DESC is one whose header is in the native order with the right
 * magic and has that flag; the core never gives one to a transport without IDL_TRF_DESC.
 *   - conn_send, conn_call and ep_reply put its descriptors on the wire in the transport's
 *     own form (docs/wire-format.md, "Descriptors on the wire") without changing the
 *     caller's bytes, and once the op returns - whether it succeeded or not - the message
 *     has been consumed: what it marks for release (IDL_DESCF_DEALLOC data and ports, and
 *     ports moved with MACH_MSG_TYPE_MOVE_*) has been released (idl_msg_release_sent()).
 *   - conn_recv, conn_call and ep_recv turn a received message's descriptors into memory
 *     and ports the receiver owns (freed with idl_ool_free(), closed with idl_port_close()),
 *     set m->len to the header's size (what followed it on the wire is the transport's) and
 *     refuse a message whose descriptors are malformed (IDL_EPROTO), leaving nothing
 *     behind. A message dropped as too large (IDL_EMSGSIZE) has what it carried released
 *     and IDL_MSGF_DESC cleared in the bytes handed back, so nobody releases it again.
 *   - A refused message whose framing held - the receive took it whole, and the next one
 *     starts at the next message - is handed back as one too large is: its bytes in m->data
 *     (its header at least) with IDL_MSGF_DESC cleared and m->len the bytes that came, so
 *     that the server answers it (IDL_EPROTO, with its id + 100 and seqno) and a client
 *     fails the one call it answers; the connection goes on. A receive that lost the framing
 *     (a stream whose frame length cannot be trusted, or that broke midway through skipping
 *     a frame) ends the connection and returns its error with m->len 0.
 * Messages without the flag take the fast path, unchanged: one flag test.
 *
 * Close and fini: *_close is idempotent, never blocks, and wakes any thread blocked in an
 * op on the object; *_fini frees what init or connect/listen/accept made and must be safe
 * after any of them failed half-way (the state is zeroed before the first op).
 */
#ifndef IDL_TRANSPORT_H
#define IDL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include <idl/idl_server.h>
#include <idl/idl_time.h> /* idl_now_ns(), idl_deadline_ms(), IDL_DEADLINE_NONE */
#include <idl/idl_tls.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The deadline the blocking ops take (see "Blocking and deadlines" above). `ms` is the
 * timeout the caller asked for; `abs_ns` is 0 until the deadline is anchored, then the
 * absolute CLOCK_MONOTONIC time (IDL_DEADLINE_NONE for none). An op reads and anchors it
 * with the functions below and never writes the fields itself.
 */
struct idl_deadline {
	int64_t abs_ns; /* 0: not anchored yet */
	int32_t ms; /* >= 0: the timeout; IDL_DEADLINE_MS_NONE: none; IDL_DEADLINE_MS_ABS: only
		       abs_ns is known (a deadline made from an absolute time) */
};
#define IDL_DEADLINE_MS_NONE (-1)
#define IDL_DEADLINE_MS_ABS (-2)

/* A deadline `ms` milliseconds from its first use; a negative ms is none. */
static inline struct idl_deadline
idl_deadline_in(int ms)
{
	struct idl_deadline d = { 0, ms < 0 ? IDL_DEADLINE_MS_NONE : ms };

	return d;
}

/* A deadline at an absolute CLOCK_MONOTONIC time (IDL_DEADLINE_NONE: none). */
static inline struct idl_deadline
idl_deadline_at(int64_t abs_ns)
{
	struct idl_deadline d = { abs_ns, IDL_DEADLINE_MS_ABS };

	if (abs_ns == IDL_DEADLINE_NONE || abs_ns <= 0) {
		d.abs_ns = abs_ns == IDL_DEADLINE_NONE ? 0 : 1;
		d.ms = abs_ns == IDL_DEADLINE_NONE ? IDL_DEADLINE_MS_NONE : IDL_DEADLINE_MS_ABS;
	}
	return d;
}

/* Whether the deadline is no deadline at all. */
static inline int
idl_deadline_is_none(const struct idl_deadline *d)
{
	return d->abs_ns == 0 && d->ms == IDL_DEADLINE_MS_NONE;
}

/* The absolute time of the deadline (IDL_DEADLINE_NONE for none), anchoring it now (one
 * clock read) if nobody did before. */
static inline int64_t
idl_deadline_abs(struct idl_deadline *d)
{
	if (d->abs_ns == 0) {
		if (d->ms == IDL_DEADLINE_MS_NONE)
			return IDL_DEADLINE_NONE;
		d->abs_ns = idl_deadline_ms(d->ms);
		if (d->abs_ns == 0)
			d->abs_ns = 1;
	}
	return d->abs_ns;
}

/* Anchors a deadline not anchored yet as if its first use had been at start_ns (a
 * CLOCK_MONOTONIC time the op knows the call to have begun by, e.g. the start of a wait
 * that just ran out); an anchored one is left alone. */
static inline void
idl_deadline_start(struct idl_deadline *d, int64_t start_ns)
{
	if (d->abs_ns == 0 && d->ms >= 0) {
		d->abs_ns = start_ns + (int64_t)d->ms * 1000000;
		if (d->abs_ns <= 0)
			d->abs_ns = 1;
	}
}

/* Whether the deadline has passed (anchoring it if need be). */
static inline int
idl_deadline_passed(struct idl_deadline *d)
{
	int64_t a = idl_deadline_abs(d);

	return a != IDL_DEADLINE_NONE && idl_now_ns() >= a;
}

/* One message in transit. */
struct idl_xmsg {
	void *data; /* header + arguments */
	size_t len; /* send: bytes to send; recv: bytes received */
	size_t cap; /* recv: room in data */
	int *fds; /* descriptors carried with the message; NULL if none */
	unsigned nfds; /* send: count; recv: received */
	unsigned fds_cap; /* recv: room in fds */
};

/* A message endpoint's reply address, filled by ep_recv; opaque to the core. */
struct idl_peer {
	uint32_t len;
	unsigned char addr[124];
};

/* Listening options. */
struct idl_listen_opts {
	unsigned mode; /* permission bits for filesystem-visible endpoints; 0600 by default */
};

/* Transport flags. */
#define IDL_TRF_STREAM 0x01 /* byte stream: the transport frames messages itself */
#define IDL_TRF_DGRAM 0x02 /* unreliable datagrams */
#define IDL_TRF_FDPASS 0x04 /* can carry file descriptors */
#define IDL_TRF_ZEROCOPY 0x08 /* out-of-line data without a copy */
#define IDL_TRF_CRED 0x10 /* knows the peer's credentials */
#define IDL_TRF_DESC 0x20 /* converts descriptors: out-of-line data (ports: IDL_TRF_FDPASS) */
/* Messages arrive whole: a conn_recv that times out has consumed nothing, so the server may
 * wait on a busy connection with blocking receives (unix:'s seqpacket). */
#define IDL_TRF_WHOLE 0x40
/* conn_fd's descriptor is an epoll set of the transport's own (port:'s queues, its peer's
 * pidfd, its close eventfd; shm:'s rendezvous socket, which the peer writes a byte to when
 * asked, and an eventfd): it is only ever readable, so it is watched for reading whatever
 * *events says. While conn_sendv_nb could not send everything, the set is readable when
 * there is room again (and reading is left for then), else when a message, the peer's exit
 * or a close came. Driving it by readiness costs a wait and a receive a message where its
 * blocking receive is one system call: the embedded server, which may create no thread,
 * uses the three event operations of such a transport; the threaded server and the
 * pollable port keep a thread per connection for it. */
#define IDL_TRF_OWNSET 0x80

/* The version of the contract this header describes (see the top of this file). */
#define IDL_TRANSPORT_ABI 1u

/* The first members of every table: `static const struct idl_transport t = {
 * IDL_TRANSPORT_INIT, .scheme = "name", ... };` */
#define IDL_TRANSPORT_INIT .abi = IDL_TRANSPORT_ABI, .size = sizeof(struct idl_transport)

struct idl_transport {
	unsigned abi; /* IDL_TRANSPORT_ABI of the header the table was written for */
	size_t size; /* sizeof(struct idl_transport) where the table was compiled */

	const char *scheme; /* "unix", "tcp", ...: the part of an address before ':' */
	unsigned flags; /* IDL_TRF_* */
	size_t ep_size; /* bytes of endpoint state */
	size_t conn_size; /* bytes of connection state */

	int (*tr_init)(void); /* once per process, before any other op; may be NULL */
	void (*tr_fini)(void); /* may be NULL */

	/* Server side. `rest` is the address without "scheme:". */
	int (*ep_listen)(void *ep, const char *rest, const struct idl_listen_opts *opts);
	int (*ep_fd)(void *ep); /* readable when ep_accept or ep_recv would not block */
	int (*ep_accept)(void *ep, void *conn); /* connection endpoints; else NULL */
	int (*ep_recv)(void *ep, struct idl_xmsg *m, struct idl_peer *from,
		       struct idl_deadline *dl);
	int (*ep_reply)(void *ep, const struct idl_peer *to, const struct idl_xmsg *m);
	void (*ep_close)(void *ep);
	void (*ep_fini)(void *ep);

	/* Connections (client side, and server side for connection endpoints). */
	int (*conn_connect)(void *conn, const char *rest, struct idl_deadline *dl);
	int (*conn_send)(void *conn, const struct idl_xmsg *m, struct idl_deadline *dl);
	int (*conn_recv)(void *conn, struct idl_xmsg *m, struct idl_deadline *dl);
	/* Optional: send then receive as one operation, where the transport can do it in fewer
	 * steps than the two ops apart (shm). NULL: the core calls conn_send then conn_recv. */
	int (*conn_call)(void *conn, const struct idl_xmsg *req, struct idl_xmsg *rep,
			 struct idl_deadline *dl);
	int (*conn_cred)(void *conn, struct idl_cred *cred); /* NULL: IDL_ENOTSUP */
	void (*conn_close)(void *conn);
	void (*conn_fini)(void *conn);

	/* Optional: out-of-line memory the transport can send without a copy.
	 * conn_ool_alloc returns `size` zeroed bytes for sending on conn, or NULL (the
	 * runtime then allocates ordinary memory); ool_free releases such memory, or memory
	 * the transport received, and returns 1 when addr was the transport's, 0 when it was
	 * not (the runtime then frees it itself). Both are safe from any thread. */
	void *(*conn_ool_alloc)(void *conn, size_t size);
	int (*ool_free)(void *addr, size_t size);

	/*
	 * Event-driven use (docs/call-core.md, "The transport contract, version 2"), each
	 * optional: the server's event core and a pollable port (idl_port_fd) drive a
	 * connection with them (docs/runtime.md); a transport without all three keeps a thread
	 * per connection on the server and a receiver and a sender thread per pollable port.
	 *
	 * conn_fd returns a descriptor that is readable when conn_recv_nb can make progress,
	 * and sets *events to IDL_TR_EV_IN, with IDL_TR_EV_OUT added while the transport holds
	 * output it could not write yet (the rest of a frame): the descriptor is then watched
	 * for writability too; and IDL_TR_EV_MORE while it holds a whole message read ahead.
	 * Stable for the connection's life.
	 *
	 * conn_sendv_nb sends, without blocking, as many of the n messages (in order) as the
	 * kernel takes and returns how many it accepted (0 to n), or an error. A stream
	 * transport that could write part of a frame keeps the rest itself and counts the
	 * message accepted; every later send (blocking or not) writes that rest first. n == 0
	 * only flushes such a rest: 0 once it is out, IDL_EAGAIN while some is left.
	 * A message with descriptors may be refused with IDL_ENOTSUP before anything of it is
	 * written or released (the core sends it with conn_send); a transport that takes it
	 * releases what it gave away (idl__msg_release_sent) once it is written or kept.
	 *
	 * conn_recv_nb receives one whole message without blocking, or returns IDL_EAGAIN.
	 * A stream transport keeps a partial frame across calls (input state), so a peer that
	 * sends half a frame holds no thread. Otherwise as conn_recv.
	 *
	 * At most one conn_sendv_nb and one conn_recv_nb run at a time on a connection.
	 */
	int (*conn_fd)(void *conn, unsigned *events);
	int (*conn_sendv_nb)(void *conn, const struct idl_xmsg *msgs, unsigned n);
	int (*conn_recv_nb)(void *conn, struct idl_xmsg *m);

	/*
	 * Optional, for a stream transport with the three above: conn_recv_nb that may wait up
	 * to timeout_ms for the first bytes when it holds nothing read ahead, and never blocks
	 * after them (a partial frame is kept as conn_recv_nb keeps it). IDL_EAGAIN when
	 * nothing came, and at once while the transport holds output it could not write
	 * (IDL_TR_EV_OUT): nothing more is read until that is out. The server waits on a busy
	 * connection with it: one system call per message where readiness then a receive take two.
	 * Without it, the core polls the descriptor and calls conn_recv_nb.
	 */
	int (*conn_recv_wait)(void *conn, struct idl_xmsg *m, int timeout_ms);

	/*
	 * Optional, for a transport with the event operations: connecting without blocking,
	 * which the pollable port uses so that a loop never waits for a handshake.
	 * conn_connect_nb starts connecting `rest` (as conn_connect would): 0 when it is
	 * connected at once, IDL_EAGAIN while it is in progress, or an error. While in
	 * progress, conn_fd returns the descriptor to watch for writability, and each time it
	 * is writable the caller calls conn_connect_step: 0 once connected, IDL_EAGAIN while
	 * still in progress (conn_fd may then return another descriptor: an address that
	 * failed was followed by the next one the name has), or an error (conn_fini still
	 * follows). Nothing is sent or received before it is connected.
	 */
	int (*conn_connect_nb)(void *conn, const char *rest);
	int (*conn_connect_step)(void *conn);

	/*
	 * Optional, for a transport whose messages come whole (IDL_TRF_WHOLE) and that may read
	 * several ahead: conn_recv that may read ahead, and sets *events to IDL_TR_EV_MORE while
	 * whole messages wait read ahead after the message, else 0, so that the caller learns it
	 * without another call (output it holds is the caller's to ask conn_fd about). The
	 * server's busy connections are received from with it; conn_recv itself must not read
	 * ahead then, since a client may wait for readiness.
	 */
	int (*conn_recv_ev)(void *conn, struct idl_xmsg *m, struct idl_deadline *dl,
			    unsigned *events);

	/*
	 * Optional, for a datagram transport with the event operations that resends requests
	 * left unanswered (udp): the pollable port, which has no thread blocked in conn_recv to
	 * do it, asks for the resends. conn_resend resends what is due at `now` (ns, as
	 * idl_now_ns()), forgets requests past their window, and sets *next to when the next
	 * resend is due (IDL_DEADLINE_NONE: nothing is kept); 0, or the error that ends the
	 * connection (a peer that refused). A request taken by conn_sendv_nb is resent until
	 * its reply comes, conn_forget names its sequence number (its call ended otherwise:
	 * deadline, cancel) or the transport's own window ends. Called as conn_recv_nb is, never
	 * beside it.
	 */
	int (*conn_resend)(void *conn, int64_t now, int64_t *next);
	void (*conn_forget)(void *conn, uint32_t seqno);

	/*
	 * Optional: configuration of one port or endpoint, and what a secure channel knows of
	 * its peer (added after the table's first version; a table compiled before them ends
	 * before them and is read as not having them).
	 *
	 * A program gives a configuration object (struct idl_config, below) with
	 * idl_port_open_config() or idl_server_listen_config(); its scheme is this transport's
	 * (the runtime refuses another with IDL_EINVAL). ep_config is called on the endpoint's
	 * fresh state before ep_listen; conn_config on a connection's fresh state before each
	 * conn_connect or conn_connect_nb of that port (every reconnect too). The transport
	 * takes from the object what it needs for the state's life (the object may be freed
	 * after the state is); an error fails the listen or the connect. NULL: the transport
	 * takes no configuration, and idl_port_open_config() and idl_server_listen_config()
	 * refuse one (IDL_ENOTSUP).
	 *
	 * conn_tls_peer fills *peerp with what the connection's TLS session knows of the peer
	 * (<idl/idl_tls.h>: one malloc()ed block the caller frees with idl_tls_peer_free());
	 * IDL_ENOTSUP when the connection has no such session (yet). NULL: IDL_ENOTSUP.
	 */
	int (*ep_config)(void *ep, struct idl_config *cfg);
	int (*conn_config)(void *conn, struct idl_config *cfg);
	int (*conn_tls_peer)(void *conn, struct idl_tls_peer **peerp);

	/*
	 * Optional: an endpoint around a listening socket (or queue) that the process was given
	 * instead of one it makes, as a service manager passes them (socket activation:
	 * "unix:systemd:NAME", docs/deploy.md). Called instead of ep_listen on the endpoint's
	 * fresh state (after ep_config, when a configuration was given). `fd` is a
	 * close-on-exec duplicate that the endpoint owns from then on,
	 * whether the op succeeds or not (ep_fini closes it; the manager keeps its own). The op
	 * checks that fd is what ep_listen would have made - its family, type and protocol,
	 * listening or bound (getsockopt SO_DOMAIN, SO_TYPE, SO_PROTOCOL, SO_ACCEPTCONN) - and
	 * refuses anything else with IDL_EADDRINVAL and a detail that says what was passed and
	 * what is needed; a filesystem object whose mode lets group or others write (connect)
	 * beyond opts->mode is refused with IDL_EACCES. It makes the descriptor blocking or not
	 * as its own listener is. The socket is the manager's and serves its next instance:
	 * ep_close must not shut it down and ep_fini must not remove its name, only close fd.
	 * A message endpoint's (ep_recv) adopted socket is served from the server's epoll set,
	 * never by a thread blocked in ep_recv, so that no shutdown is needed to end it. NULL:
	 * the transport cannot adopt (the listen fails with IDL_ENOTSUP).
	 */
	int (*ep_adopt)(void *ep, int fd, const struct idl_listen_opts *opts);

	/*
	 * Optional: reads the endpoint's files again (idl_server_reload(): certificates, keys,
	 * trusted CAs, revocation lists), for the connections it accepts from then on; those
	 * already accepted keep what they had. On an error (the detail set) the endpoint keeps
	 * what it had. Called from any thread while the endpoint serves, never beside ep_fini.
	 * NULL: the endpoint has nothing to reload.
	 */
	int (*ep_reload)(void *ep);

	/* New ops go here, at the end, each optional. */
};

/* conn_fd's events. IN and OUT have the values of EPOLLIN and EPOLLOUT (and POLLIN,
 * POLLOUT). MORE is none of epoll's: the transport holds a whole message it read ahead,
 * which conn_recv_nb returns without a system call and which no readiness of the
 * descriptor would report; a transport that reads ahead must say so, because its caller
 * stops receiving when MORE is not set (rather than spend a receive to learn that nothing
 * is there). */
#define IDL_TR_EV_IN 0x001u
#define IDL_TR_EV_OUT 0x004u
#define IDL_TR_EV_MORE 0x10000u
/* While a connect started without blocking is in progress (conn_connect_nb): it waits for
 * input alone (a TLS handshake that sent its part), so the caller watches the descriptor for
 * readability only. Without it the caller watches for writability too, which ends a socket's
 * connect; a transport written before this flag never sets it. */
#define IDL_TR_EV_WAITIN 0x20000u

/*
 * Receive-size rule: when a message does not fit in m->cap, conn_recv and ep_recv set m->len
 * to its true size when known, discard it (closing a stream connection, whose framing is
 * then lost) and return IDL_EMSGSIZE.
 */

/*
 * Configuration objects, as a transport reads them: settings by name (string values) made by
 * the API of the transport's own header (<idl/idl_tls.h> for tls:), and one object of the
 * transport's own made from them once and kept with the configuration.
 */
/* The scheme the configuration is for ("tls"). */
const char *idl_config_scheme(const struct idl_config *cfg);
/* The value of setting `name`, or NULL when it is not set. Owned by cfg, which does not change
 * while a port or an endpoint holds it. */
const char *idl_config_get(const struct idl_config *cfg, const char *name);
/* The transport's own object made from cfg: made by make(cfg, errp) the first time (once,
 * under the configuration's lock) and kept until the configuration is freed, when drop(obj)
 * runs. NULL, *errp set (with the detail make gave), when make failed; nothing is kept then. */
void *idl_config_state(struct idl_config *cfg, void *(*make)(struct idl_config *cfg, int *errp),
		       void (*drop)(void *obj), int *errp);

/* Registers a transport; its scheme must be new. The table must outlive the process.
 * Returns IDL_EINVAL for a table of another contract version (abi), one shorter than the
 * first version's struct (size), or one missing a required op; IDL_EBUSY for a taken
 * scheme. idl_errdetail() says which. */
int idl_transport_register(const struct idl_transport *t);

/* The transport for an address ("unix:/x" -> unix), or NULL. *rest gets the part after
 * the scheme's colon. Registers the built-in transports on first use. */
const struct idl_transport *idl_transport_find(const char *address, const char **rest);

/* Calls fn for each registered transport, in registration order. */
void idl_transport_foreach(void (*fn)(const struct idl_transport *t, void *arg), void *arg);

/* Releases what a message that was sent (or is dropped unsent) gives away: the data of its
 * out-of-line descriptors marked IDL_DESCF_DEALLOC, its ports and arrays of ports marked so,
 * and ports moved with a MOVE disposition. For a transport's send ops, which consume such a
 * message whether they succeed or not (see "Descriptors" above). Bounded by the header's
 * size and descriptor count; nothing for a message without IDL_MSGF_DESC. */
void idl_msg_release_sent(const idl_msg_header_t *msg);

#ifdef __cplusplus
}
#endif
#endif /* IDL_TRANSPORT_H */
