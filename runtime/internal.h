/*
 * internal.h - what the runtime's files share and nothing outside libidlrt sees.
 *
 * Names here are idl__ (internal, non-static); the linker's export list (runtime/local.mk)
 * keeps them out of the library's interface.
 */
#ifndef IDL_RUNTIME_INTERNAL_H
#define IDL_RUNTIME_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

/*
 * Error detail (error.c). idl__fail() records a printf-style detail for the calling thread
 * and returns `err`, so that a failing path reads `return idl__fail(IDL_EPROTO, "...")`.
 * idl__clear_detail() starts a public entry point with an empty detail.
 */
int idl__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void idl__clear_detail(void);

/* The transports built into the library: one registration function per transport file. */
#if HAVE_TRANSPORT_UNIX
void idl__unix_register(void);
#endif
#if HAVE_TRANSPORT_TCP
void idl__tcp_register(void);
#endif
#if HAVE_TRANSPORT_UDP
void idl__udp_register(void);
#endif
#if HAVE_TRANSPORT_SHM
void idl__shm_register(void);
#endif
#if HAVE_TRANSPORT_PORT
void idl__port_register(void);
#endif

/* Zeroed memory aligned to 16 for transport state and message buffers; free() releases it. */
void *idl__zalloc(size_t size);

/*
 * The hello (hello.c; the byte layout is in docs/wire-format.md, "The hello").
 */
#define IDL_HELLO_FIXED 40u /* header + base, nroutines, namelen, version */
#define IDL_HELLO_VERSION 1u
#define IDL_HELLO_NAME_MAX 128u /* bytes of the name, its NUL included */
#define IDL_HELLO_MAX_ROUTINES 1000u
/* The largest hello or hello reply: fits an 8 KiB message queue message. */
#define IDL_HELLO_MAX (IDL_HELLO_FIXED + 8u * IDL_HELLO_MAX_ROUTINES + IDL_HELLO_NAME_MAX)

/* The view of a hello's fields after the header, at offset 24. */
struct idl__hello_body {
	int32_t base;
	uint32_t nroutines;
	uint32_t namelen; /* hello: bytes of the name, NUL included; reply: 0 */
	uint32_t version; /* IDL_HELLO_VERSION */
	uint64_t hashes[]; /* nroutines signature hashes, then (hello) the name, padded to 8 */
};

/* Per-routine verdicts after a hello, one byte per routine number. */
enum idl__sig_state {
	IDL__SIG_OK = 0,
	IDL__SIG_MISMATCH = 1, /* both sides have it, with different signatures */
	IDL__SIG_ABSENT = 2, /* the other side does not have it */
};

/* Builds the hello for `ss` into buf (IDL_HELLO_MAX bytes, 8-aligned); returns its size or
 * a negative error. The header's seqno is left for the caller. */
int idl__hello_build(const struct idl_subsystem *ss, idl_msg_header_t *buf);
/* Parses a client's hello of `len` bytes (header already checked); fills *name. */
int idl__hello_parse(const idl_msg_header_t *in, size_t len, const char **name,
		     const struct idl__hello_body **body);
/* Compares the peer's hashes with the descriptor's and fills verdicts[ss->nroutines]. */
void idl__hello_compare(const struct idl_subsystem *ss, const uint64_t *peer, uint32_t npeer,
			uint8_t *verdicts);
/* Fills the server's hello reply for `ss` to request `in`; returns its size. */
uint32_t idl__hello_reply(const struct idl_subsystem *ss, const idl_msg_header_t *in,
			  idl_msg_header_t *out);

/*
 * Ports and the request-port handle (port.c, server.c). A port is a client connection, or,
 * on the server, a handle naming the endpoint a request came in on (idl_request_port()),
 * which cannot be called through.
 */
enum idl__port_kind {
	IDL__PORT_CLIENT = 1,
	IDL__PORT_ENDPOINT = 2,
};

/* The start of every struct idl_port, so that a handle's kind can be told. */
struct idl__port_head {
	int kind; /* enum idl__port_kind */
	char *address;
};

/*
 * Out-of-line data and descriptors (ool.c, ool_wire.c, docs/wire-format.md).
 */
/* Descriptors in one message, and file descriptors a unix: message carries: at most this
 * many (a sender is refused with IDL_ELIMIT, a receiver refuses with IDL_EPROTO). */
#define IDL_DESC_MAX 64u
/* idl_ool_alloc() maps memory of at least this many bytes (freed with munmap) and takes
 * smaller blocks from malloc; whatever hands out out-of-line memory follows the same rule,
 * so that idl_ool_free() can tell the two from the size alone. */
#define IDL_OOL_MAP_MIN (16u * 1024u)

/* Whether a message's header (`len` bytes of it here) says it carries descriptors in the
 * in-memory form a transport converts: native order, the magic, IDL_MSGF_DESC. */
static inline int
idl__desc_msg(const void *data, size_t len)
{
	const unsigned char *b = data;

	return len >= IDL_MSG_HEADER_SIZE && (b[3] & IDL_MSGF_DESC) && b[0] == IDL_MSG_MAGIC &&
	       b[1] == IDL_ORDER_NATIVE;
}

/* The descriptors of a message to send, checked: ndesc within IDL_DESC_MAX and within the
 * `len` bytes, a request, reply or one-way kind. 0 or an error with the detail naming
 * `scheme`. *nd gets the count. */
int idl__desc_out_check(const void *msg, size_t len, const char *scheme, uint32_t *nd);
/* The same for a received message of msize bytes (its header's size): IDL_EPROTO. */
int idl__desc_in_check(const void *msg, size_t msize, const char *scheme, uint32_t *nd);
/* Releases what a sent message gave away: IDL_DESCF_DEALLOC data, ports and arrays, ports
 * moved with a MOVE disposition, and the memory of IDL_DESCF_FREE_ARRAY arrays of ports.
 * Bounded by size and ndesc; nothing for a message without IDL_MSGF_DESC. */
void idl__msg_release_sent(const idl_msg_header_t *msg);
/* Whether sending msg releases anything (idl__msg_release_sent would). */
int idl__msg_consumes(const idl_msg_header_t *msg);
/* Whether a port descriptor's disposition moves the sender's right. */
static inline int
idl__desc_moves(const idl_desc_t *d)
{
	return (d->flags & IDL_DESCF_DEALLOC) ||
	       (d->type != IDL_DESC_OOL && d->aux >= 16 && d->aux <= 18);
}
/* Whether msg's descriptors agree in number with rt's port and out-of-line arguments of
 * that direction (request: in and inout; else out and inout). */
int idl__desc_count_ok(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, int request);
/* The transports' ool_free ops, in registration order (transport.c): 1 when one of them
 * owned addr. */
int idl__transport_ool_free(void *addr, size_t size);
/* Munmaps or frees memory that idl_ool_alloc() could have made, by the rule above. */
void idl__ool_free_plain(void *addr, size_t size);

/*
 * Descriptors inline after the message (ool_wire.c): tcp:, udp:, port: and the small data of
 * unix:. On the wire the message is followed by the data of each out-of-line descriptor in
 * descriptor order, each padded to 8; a descriptor's addr is the offset of its data from
 * the start of the message, and a receiver takes no other layout.
 */
struct idl__ool_out {
	/* The header and descriptors as they go on the wire. */
	unsigned char head[IDL_MSG_HEADER_SIZE + IDL_DESC_SIZE * IDL_DESC_MAX]
		__attribute__((aligned(8)));
	struct iovec *iov; /* the pieces, in order: caller's array of 2 + 2 * IDL_DESC_MAX */
	unsigned niov;
	size_t total; /* bytes on the wire: the message and its data */
	size_t inline_bytes; /* of them, the out-of-line data with its padding */
};
#define IDL__OOL_IOV_MAX (2u + 2u * IDL_DESC_MAX)
/* Lays out m (a message with IDL_MSGF_DESC) for a transport that carries data inline and no
 * ports: IDL_ENOTSUP naming `scheme` for a port. The pieces point into m and o->head. */
int idl__ool_inline_out(const struct idl_xmsg *m, const char *scheme, struct idl__ool_out *o);
/* Reads n bytes at offset `off` of the wire message into dst (NULL: skips them); offsets
 * only grow from call to call. Returns 0 or an error. */
typedef int (*idl__ool_reader)(void *arg, size_t off, void *dst, size_t n);
/* Converts the descriptors of a received message whose first msize bytes (its header's
 * size, already checked with idl__desc_in_check) are in msg and whose wire form is
 * wire_len bytes: each out-of-line datum is read into memory of its own with `rd`, up to
 * the end of the wire message. On failure nothing stays allocated. */
int idl__ool_inline_in(void *msg, size_t msize, size_t wire_len, const char *scheme,
		       idl__ool_reader rd, void *arg);
/* A reply whose descriptors cannot go (IDL_ENOTSUP for a port, a size over a limit...):
 * the client is told `err` by a bare reply instead, so that it does not wait for nothing
 * and the connection stays. Returns 1 and fills *bare and *out for a reply, 0 (the sender
 * returns err) for anything else. */
int idl__desc_bare_reply(const struct idl_xmsg *m, idl_msg_header_t *bare, int err,
			 struct idl_xmsg *out);
/* A reader over two pieces of memory: the bytes from offset `base` of the message. */
struct idl__ool_span {
	size_t base;
	const unsigned char *p0;
	size_t n0;
	const unsigned char *p1;
	size_t n1;
};
int idl__ool_span_read(void *arg, size_t off, void *dst, size_t n);

/* A client port made around a connection a transport already has (port.c): a port that
 * arrived in a message. Takes tr_state (idl__zalloc(tr->conn_size), connected) in every
 * case. */
int idl__port_adopt(const struct idl_transport *tr, const char *address, void *tr_state,
		    idl_port_t *portp);

/* The transport and connection state of the request the calling thread serves; 0, or
 * IDL_EINVAL outside a request or on a message endpoint (serve.c). */
int idl__request_conn(const struct idl_transport **tr, void **conn);

#endif /* IDL_RUNTIME_INTERNAL_H */
