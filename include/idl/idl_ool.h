/*
 * idl_ool.h - what generated stubs need of the runtime beyond calls and replies: out-of-line
 * memory, ports carried in messages, deferred replies and the peer's credentials.
 *
 * Stubs of an interface that uses none of these (no `^`, `array[]`, port arguments,
 * sreplyport or token arguments) do not include this header. docs/generated-code.md
 * ("Descriptors", "Deferred replies") is the contract in full.
 *
 * Descriptors are laid out by <idl/idl_msg.h>. In memory, as stubs write and read them:
 *   IDL_DESC_OOL         addr points to `size` bytes of data;
 *   IDL_DESC_PORT        addr is an idl_port_t; aux its disposition (MACH_MSG_TYPE_*);
 *   IDL_DESC_PORT_ARRAY  addr points to `size` idl_port_t (a count, not bytes); aux the
 *                        disposition of every one.
 * A sender's memory and ports stay the sender's unless IDL_DESCF_DEALLOC is set (or a port
 * goes with a MOVE disposition: MACH_MSG_TYPE_MOVE_RECEIVE, _MOVE_SEND, _MOVE_SEND_ONCE), in
 * which case the message consumes them: the runtime releases them (data with
 * idl_ool_free(), ports with idl_port_close(), an array's memory with idl_ool_free() after
 * its ports) once idl_call(), idl_send() or a reply's send has it, whatever they return, so
 * a caller never has to know how far a failed call got. What a receiver gets is its own:
 * the client stub hands it to its caller; a server routine that returns KERN_SUCCESS or
 * MIG_NO_REPLY keeps it; on any other return the runtime releases it.
 *
 * Which transports carry what (docs/wire-format.md, "Descriptors on the wire"): data out
 * of line on every transport (udp: up to the datagram limit); ports only on unix:, where a
 * port travels as a new connection to its address, passed as a file descriptor; the other
 * transports refuse a message with a port with IDL_ENOTSUP and say why.
 */
#ifndef IDL_OOL_H
#define IDL_OOL_H

#include <stddef.h>
#include <stdint.h>

#include <idl/idl_msg.h>
#include <idl/idl_port.h>
#include <idl/idl_server.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Out-of-line memory. idl_ool_alloc() returns `size` bytes (zeroed) that the runtime can
 * send without a copy where the transport allows, and that idl_ool_free() releases; NULL
 * when out of memory. idl_ool_free() releases such memory, and memory received out of
 * line; `size` is the size allocated or received. NULL is allowed (nothing happens).
 * Blocks of 16 KiB or more are recycled: a freed one is kept, up to one byte bound for the
 * process (IDL_OOL_CACHE; docs/runtime.md, "Out-of-line memory"), and handed out again,
 * cleared, so memory must not be used after it is freed - as with free().
 */
void *idl_ool_alloc(size_t size);
void idl_ool_free(void *addr, size_t size);

/*
 * Out-of-line memory for sending through `port` without a copy where its transport allows
 * (shm: a block of the connection's shared arena). `port` may be a client port (its
 * connection), or, in a server routine, idl_request_port() (the connection the request
 * came on, for data the routine returns); any other port, or a transport without such
 * memory, gets what idl_ool_alloc() gives. Send it with IDL_DESCF_DEALLOC (`dealloc`), or
 * free it with idl_ool_free(); NULL when out of memory.
 */
void *idl_ool_alloc_port(idl_port_t port, size_t size);

/*
 * Releases what a received message carries: every descriptor's data, ports and arrays, as
 * far as the header's size and ndesc say there are descriptors (a malformed message is
 * safe). Client stubs call it on a reply they refuse after idl_call() accepted it.
 */
void idl_msg_destroy(idl_msg_header_t *msg);

/* The received name of a port disposition, as MIG tells a receiver: a send right made,
 * copied or moved arrives as MOVE_SEND (17), a send-once right as MOVE_SEND_ONCE (18). */
static inline uint32_t
idl_port_received_name(uint16_t aux)
{
	switch (aux) {
	case 19: /* COPY_SEND */
	case 20: /* MAKE_SEND */
		return 17;
	case 21: /* MAKE_SEND_ONCE */
		return 18;
	default:
		return aux;
	}
}

/* Whether aux names a port disposition (PORT_NAME 15 ... MAKE_SEND_ONCE 21): what a
 * receiver that is told the disposition checks first. */
static inline int
idl_port_disposition_ok(uint16_t aux)
{
	return aux >= 15 && aux <= 21;
}

/*
 * Deferred replies (MIG's sreplyport and MIG_NO_REPLY).
 *
 * The server stub of a routine with an sreplyport (or replyport) argument calls
 * idl_request_reply() before the routine and passes the handle. A routine that returns
 * MIG_NO_REPLY keeps the handle and must later give it to exactly one idl_reply_send() or
 * idl_reply_discard(), from any thread; on any other return the stub discards it and the
 * reply goes out as usual. idlc generates `<server routine>_send_reply(reply, retcode,
 * out arguments...)` for each such routine, which builds the reply and calls
 * idl_reply_send().
 */
typedef struct idl_reply *idl_reply_t;

/* A handle to the request the calling thread is serving; NULL outside a request (a demux
 * called directly) or when memory ran out (the routine then cannot defer its reply). */
idl_reply_t idl_request_reply(void);

/* Sends `msg` as the reply to the request: the runtime fills its magic, order, kind, id
 * and seqno from the handle; the caller filled size, retcode, flags, ndesc and the
 * arguments. The handle is freed in every case. Returns 0, MIG_SERVER_DIED when the client
 * went away, or another runtime error. */
int idl_reply_send(idl_reply_t reply, idl_msg_header_t *msg);

/* Frees the handle without replying (the client's call then ends at its deadline). NULL is
 * allowed. */
void idl_reply_discard(idl_reply_t reply);

/* Whether the client cancelled the call this handle answers (idl_async_cancel() sent a
 * cancel message): the routine may skip the work and discard the handle. A reply still sent
 * is dropped by the client. Any thread. */
int idl_reply_cancelled(idl_reply_t reply);

/*
 * Credentials of the peer of a client's port (MIG's user security and audit tokens): what
 * the transport knows of the server. Returns 0 and fills *cred, IDL_ENOTSUP when the
 * transport cannot tell, IDL_EINVAL for a port that is not connected.
 */
int idl_port_cred(idl_port_t port, struct idl_cred *cred);

#ifdef __cplusplus
}
#endif
#endif /* IDL_OOL_H */
