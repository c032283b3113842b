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

/* The server's per-thread view of the request being served (server.c). */
struct idl__request {
	const struct idl_transport *tr;
	void *conn; /* connection state, or NULL for a message endpoint */
	idl_port_t port; /* the endpoint handle */
};
void idl__set_request(const struct idl__request *rq);

#endif /* IDL_RUNTIME_INTERNAL_H */
