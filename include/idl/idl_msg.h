/*
 * idl_msg.h - the message header that every idlkit message starts with, and the rules that
 * generated stubs and the runtime share about the bytes that follow it.
 *
 * The full wire format is written up in docs/wire-format.md; this header is its C form.
 *
 * A message is the 24-byte header below followed by the arguments of one direction of one
 * routine, at offsets idlc computed:
 *   - the fixed part: every fixed-size argument in declaration order, each at its natural
 *     alignment (1, 2, 4 or 8 bytes), a uint32_t count for each variable-size array, padded
 *     at its end to a multiple of 8;
 *   - the variable part: the data of each variable-size array in declaration order, each
 *     padded to a multiple of 8.
 * So every message size is a multiple of 8, and a receiver checks each count against its
 * bound and against the bytes received before anything reads the data.
 *
 * All fields are in the sender's byte order, named by `order`. Receivers refuse a message in
 * the other order with IDL_EBYTEORDER (docs/wire-format.md explains why nothing is converted).
 */
#ifndef IDL_MSG_H
#define IDL_MSG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IDL_MSG_MAGIC 0x49 /* 'I' */
#define IDL_ORDER_LITTLE 0x6c /* 'l' */
#define IDL_ORDER_BIG 0x42 /* 'B' */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define IDL_ORDER_NATIVE IDL_ORDER_BIG
#else
#define IDL_ORDER_NATIVE IDL_ORDER_LITTLE
#endif

/* Generated structs mark 8-byte wire fields with IDL_ALIGN8 so that the layout is the same
 * on ABIs (i386) whose structs align 64-bit integers to 4. The header itself is 8-aligned,
 * so every message struct is too, and its sizeof is a multiple of 8. */
#define IDL_ALIGN8 __attribute__((aligned(8)))
/* Wire alignment of the variable part and of message sizes. */
#define IDL_MSG_ALIGN 8u
#define IDL_MSG_ROUND(n) (((n) + (IDL_MSG_ALIGN - 1)) & ~(size_t)(IDL_MSG_ALIGN - 1))

/* Message kinds (the header's `kind` byte). */
enum idl_msg_kind {
	IDL_KIND_REQUEST = 1, /* a routine's request: a reply follows */
	IDL_KIND_REPLY = 2, /* the reply to a request with the same seqno */
	IDL_KIND_ONEWAY = 3, /* a simpleroutine's request: no reply, ever */
	IDL_KIND_HELLO = 4, /* client -> server: subsystem name, base, signature hashes */
	IDL_KIND_HELLO_REPLY = 5, /* server -> client: the server's hashes */
	IDL_KIND_CANCEL = 6, /* client -> server: header only, the id and seqno of a request
				the client no longer waits for; never answered */
	IDL_KIND_GOODBYE = 7, /* server -> client: the connection ends now, and why */
};

/*
 * A goodbye (docs/wire-format.md): the header (id: the reason, seqno 0, retcode IDL_ELIMIT),
 * then the reason again (u32), the length of a text (u32) and the text (at most
 * IDL_GOODBYE_TEXT_MAX bytes, no terminator, padded to 8). The server sends it before it closes a
 * connection on purpose; nothing follows it. IDLE and EVICTED are sent only when no request of the
 * client was read and left unanswered, so the client may send its request again on a new
 * connection.
 */
enum idl_goodbye_reason {
	IDL_GOODBYE_CONNECTIONS = 1, /* refused: the server's connection limit */
	IDL_GOODBYE_PER_ADDRESS = 2, /* refused: the limit of connections from one address */
	IDL_GOODBYE_IDLE = 3, /* closed: idle longer than the idle timeout */
	IDL_GOODBYE_EVICTED = 4, /* closed: the oldest idle connection made room for a new one */
	IDL_GOODBYE_STOPPING = 5, /* closed: the server stops */
};
#define IDL_GOODBYE_REASONS 6 /* one more than the largest reason */
#define IDL_GOODBYE_TEXT_MAX 128u

/* Header flags (the header's `flags` byte). */
#define IDL_MSGF_DESC 0x01 /* out-of-line or port descriptors follow the arguments */

typedef struct IDL_ALIGN8 idl_msg_header {
	uint8_t magic; /* IDL_MSG_MAGIC */
	uint8_t order; /* IDL_ORDER_LITTLE or IDL_ORDER_BIG: the byte order of all that follows */
	uint8_t kind; /* enum idl_msg_kind */
	uint8_t flags; /* IDL_MSGF_* */
	uint32_t size; /* bytes in the whole message, header included; a multiple of 8 */
	int32_t id; /* request: subsystem base + routine number; reply: request id + 100 */
	uint32_t seqno; /* chosen by the caller; a reply carries its request's seqno */
	int32_t retcode; /* replies: KERN_SUCCESS, a server code, or an IDL_/MIG_ error */
	uint32_t ndesc; /* descriptors that follow the arguments; 0 without IDL_MSGF_DESC */
} idl_msg_header_t;

#define IDL_MSG_HEADER_SIZE 24u

/*
 * Descriptors: out-of-line data and ports.
 *
 * A message with IDL_MSGF_DESC set carries `ndesc` descriptors at the start of its body,
 * right after the header, one per out-of-line or port argument of that direction in
 * declaration order, before the fixed part of the other arguments (Apple MIG's "complex
 * message" order). The transports alone know what a descriptor's `addr` holds on the wire
 * (a file-descriptor index on unix:, an offset into the message on tcp:/udp:, an offset into
 * the shared region on shm:); in memory - what a stub writes before idl_call() and reads
 * after it, and what a demux gets - `addr` is always a pointer (OOL data) or an idl_port_t
 * (ports), and the transport converts at send and receive.
 *
 * Ownership (MIG's rule): a sender's OOL data stays the sender's unless IDL_DESCF_DEALLOC is
 * set, in which case the runtime frees it with idl_ool_free() once it is sent. Received OOL
 * data belongs to the receiver: the client stub hands it to its caller; a server routine
 * that returns KERN_SUCCESS (or MIG_NO_REPLY) owns it; on any other return the runtime frees
 * it. Free received data with idl_ool_free().
 */
enum idl_desc_type {
	IDL_DESC_OOL = 1, /* out-of-line data: addr, size */
	IDL_DESC_PORT = 2, /* a port: addr is an idl_port_t in memory */
	IDL_DESC_PORT_ARRAY = 3, /* an array of ports: addr points to `size` idl_port_t */
};

#define IDL_DESCF_DEALLOC 0x01 /* free the sender's data (or port) once sent */
/* An array of ports: free the array's memory (idl_ool_free(), size x sizeof(idl_port_t)) once
 * sent, and nothing else: its ports stay the sender's unless IDL_DESCF_DEALLOC or a MOVE
 * disposition gives them away too. A server stub sends an out inline array of ports so. */
#define IDL_DESCF_FREE_ARRAY 0x02

typedef struct IDL_ALIGN8 idl_desc {
	uint64_t addr; /* see above */
	uint32_t size; /* OOL: bytes of data; PORT: 0 */
	uint8_t type; /* enum idl_desc_type */
	uint8_t flags; /* IDL_DESCF_* */
	uint16_t aux; /* PORT: MIG's disposition (MACH_MSG_TYPE_*), informational */
} idl_desc_t;

#define IDL_DESC_SIZE 16u
#define IDL_REPLY_ID_OFFSET 100u

/*
 * Fills the reply header for request `in`: magic, native order, kind, id + 100, the same
 * seqno, size of a bare header, KERN_SUCCESS. Generated demuxes call it first, so that a
 * request refused at any later point still gets a well-formed error reply. The id is
 * computed unsigned, so a hostile id near INT32_MAX cannot overflow.
 */
static inline void
idl_reply_init(const idl_msg_header_t *in, idl_msg_header_t *out)
{
	out->magic = IDL_MSG_MAGIC;
	out->order = IDL_ORDER_NATIVE;
	out->kind = IDL_KIND_REPLY;
	out->flags = 0;
	out->size = IDL_MSG_HEADER_SIZE;
	out->id = (int32_t)((uint32_t)in->id + IDL_REPLY_ID_OFFSET);
	out->seqno = in->seqno;
	out->retcode = 0;
	out->ndesc = 0;
}

#ifdef __cplusplus
}
#endif
#endif /* IDL_MSG_H */
