/*
 * idl_port.h - the client side: ports, calls and deadlines.
 *
 * A port (idl_port_t, what a `.defs` file calls mach_port_t) is a client's handle to a
 * server address such as "unix:/run/foo.sock". Generated client stubs take the port as
 * their first argument and call idl_call() or idl_send(); users only open and close ports.
 *
 * Thread safety: a port may be used by any number of threads at once. Calls in flight on
 * one port share its connection; each carries its own sequence number and its reply is
 * matched by it, so concurrent calls complete in any order. idl_port_close() must not race
 * with calls on the same port (the caller ends its calls first).
 *
 * Deadlines: every call has one. A routine's `waittime` (milliseconds) is used when it has
 * one; otherwise the port's default (IDL_PORT_DEFAULT_TIMEOUT_MS unless set). When the
 * deadline passes the call fails with IDL_ETIMEDOUT; a reply that arrives later is dropped.
 *
 * Peer death: if the server goes away, every call in flight on the port fails with
 * MIG_SERVER_DIED within its deadline, and the next call reconnects.
 */
#ifndef IDL_PORT_H
#define IDL_PORT_H

#include <stdint.h>

#include <idl/idl_msg.h>
#include <idl/idl_subsystem.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idl_port *idl_port_t;

#define IDL_PORT_NULL ((idl_port_t)0)
#define IDL_PORT_DEFAULT_TIMEOUT_MS 30000
/* Pass as timeout_ms to use the routine's waittime or, failing that, the port's default. */
#define IDL_TIMEOUT_DEFAULT (-1)

/* Opens a port to `address` and connects to it, waiting at most the default timeout.
 * On success *portp is a new port the caller owns (release with idl_port_close()).
 * Errors: IDL_ENOSCHEME, IDL_EADDRINVAL, IDL_ECONNREFUSED, IDL_ETIMEDOUT, IDL_ESYSERR(e). */
int idl_port_open(const char *address, idl_port_t *portp);

/* Opens a port to `address` without connecting it, so that nothing waits: the first call
 * connects - a synchronous one within its deadline, an asynchronous one in the port's event
 * loop (docs/api.md, "Calls in flight") - and reports what idl_port_open() would have.
 * Errors: IDL_ENOSCHEME, IDL_EADDRINVAL (no scheme), IDL_ENOMEM. */
int idl_port_open_deferred(const char *address, idl_port_t *portp);

/*
 * A configuration for the ports and endpoints of one transport (the tls: transport's:
 * <idl/idl_tls.h> makes and fills one). A port or an endpoint given one holds it while it
 * lives, so the caller may free it (idl_config_free()) as soon as the port is open.
 */
typedef struct idl_config idl_config_t;

/* idl_port_open() with a configuration for the address's transport, which the port uses for
 * every connection it makes (its reconnects too). NULL cfg is idl_port_open(). Errors: as
 * idl_port_open(); IDL_EINVAL for a configuration of another transport's scheme,
 * IDL_ENOTSUP for a transport that takes none; the transport's own (an unreadable key:
 * docs/transports/tls.md). */
int idl_port_open_config(const char *address, idl_config_t *cfg, idl_port_t *portp);

/* Drops the caller's hold on a configuration; ports and endpoints that use it keep theirs,
 * and the last one frees it. NULL is allowed. */
void idl_config_free(idl_config_t *cfg);

/* Closes the connection and frees the port. NULL is allowed. */
void idl_port_close(idl_port_t port);

/* Sets the port's default deadline for calls, in milliseconds (> 0). */
int idl_port_set_timeout(idl_port_t port, int timeout_ms);
int idl_port_timeout(idl_port_t port);

/* The address the port was opened with; owned by the port. */
const char *idl_port_address(idl_port_t port);

/*
 * A port whose replies come from memory, for fuzzing harnesses (idlc -fuzz-client) and
 * tests. Its requests go nowhere (what they give away is released, as a send does); the
 * hello is answered as a server of `ss` generated from the same .defs answers it; and the
 * reply to the next call is the `len` bytes at `data` (the message, then the data of its
 * out-of-line descriptors padded to 8, as tcp: carries them), with the request's sequence
 * number written into its header so that the call takes it as its reply. The bytes then go
 * through what a transport and idl_call() check on a received reply. One reply per call:
 * `data` is cleared when taken, and a call that finds it NULL times out.
 *
 * The caller owns the source, fills ss, and sets data and len before each call; the source
 * must outlive the port. The port is an ordinary one: close it with idl_port_close().
 */
struct idl_reply_source {
	const struct idl_subsystem *ss;
	const void *data; /* the next reply, or NULL */
	size_t len;
};

/* Opens a port whose replies come from `src` (above). Errors: IDL_EINVAL, IDL_ENOMEM. */
int idl_port_open_memory(struct idl_reply_source *src, idl_port_t *portp);

/*
 * Used by generated stubs.
 *
 * idl_call() sends the request `req` (req->size bytes, the arguments filled in by the stub)
 * as routine `number` of subsystem `ss` and waits for the reply in `rep`, a buffer of
 * rep_max bytes aligned to 8. The runtime fills the request header's magic, order, kind,
 * id and seqno. On the first call of a subsystem on a connection it exchanges the hello.
 *
 * Returns KERN_SUCCESS when a well-formed reply with retcode KERN_SUCCESS arrived (the stub
 * then checks the reply's size and arguments); the server's return code when it was not
 * KERN_SUCCESS (and the reply was a bare header); or a runtime error: IDL_ETIMEDOUT,
 * MIG_SERVER_DIED, MIG_REPLY_MISMATCH, MIG_TYPE_ERROR (reply malformed or larger than
 * rep_max), IDL_ESIGNATURE (the server's routine has another signature), IDL_EBYTEORDER,
 * IDL_ESYSERR(e). No byte of `rep` beyond the header is meaningful unless KERN_SUCCESS.
 */
int idl_call(idl_port_t port, const struct idl_subsystem *ss, uint32_t number,
	     idl_msg_header_t *req, idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms);

/* Sends a simpleroutine's request; no reply is awaited. The deadline bounds the send. */
int idl_send(idl_port_t port, const struct idl_subsystem *ss, uint32_t number,
	     idl_msg_header_t *req, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* IDL_PORT_H */
