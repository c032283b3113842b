/*
 * core.h - the core room (runtime/core/), the bottom of the runtime: errors, the transport
 * registry, the clock, allocation and lock utilities, the hello, subsystems and the port
 * head. Every room above includes it (through its own header); it includes the transport
 * kit (transport_kit.h), the part of core and the out-of-line room that the transports use
 * too, and nothing of a room above (docs/architecture.md, "The runtime's rooms").
 *
 * Names here are idl__ (internal, non-static); the linker's export list (runtime/local.mk)
 * keeps them out of the library's interface.
 */
#ifndef IDL_RUNTIME_CORE_H
#define IDL_RUNTIME_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "transport_kit.h"

/* The registered name and message of a positive code, or NULL (error_reg.c). */
const struct idl_errdef *idl__error_lookup(int code);

/*
 * The hello (hello.c; the byte layout is in docs/wire-format.md, "The hello").
 */
#define IDL_HELLO_FIXED 40u /* header + base, nroutines, namelen, version word */
#define IDL_HELLO_VERSION 2u /* the newest version this runtime speaks */
#define IDL_HELLO_NAME_MAX 128u /* bytes of the name, its NUL included */
#define IDL_HELLO_MAX_ROUTINES 1000u
/* The largest hello or hello reply: fits an 8 KiB message queue message. */
#define IDL_HELLO_MAX (IDL_HELLO_FIXED + 8u * IDL_HELLO_MAX_ROUTINES + IDL_HELLO_NAME_MAX)

/*
 * The version word: bits 0-15 the version, bits 16-31 (version 2 on) the sender's features.
 * Defined on the 32-bit value, so that it reads the same in either byte order; a version 1
 * peer sends and expects exactly 1. Feature bits say what the sender understands beyond the
 * version's messages (docs/call-core.md, "Wire additions"); a receiver ignores bits it does
 * not know. None is set yet.
 */
#define IDL_HELLO_VERSION_OF(word) ((word)&0xffffu)
#define IDL_HELLO_FEATURES_OF(word) ((word) >> 16)
#define IDL_HELLO_WORD(version, features) ((uint32_t)(version) | (uint32_t)(features) << 16)
#define IDL_HELLO_F_CANCEL 0x0001u /* understands IDL_KIND_CANCEL from a client */
#define IDL_HELLO_F_GOODBYE 0x0002u /* understands IDL_KIND_GOODBYE from a server */
#define IDL_HELLO_FEATURES 0u /* the features this runtime sets */

/* The view of a hello's fields after the header, at offset 24. */
struct idl__hello_body {
	int32_t base;
	uint32_t nroutines;
	uint32_t namelen; /* hello: bytes of the name, NUL included; reply: 0 */
	uint32_t version; /* the version word above */
	uint64_t hashes[]; /* nroutines signature hashes of the version, then (hello) the
			    * name, padded to 8 */
};

/* Per-routine verdicts after a hello, one byte per routine number. */
enum idl__sig_state {
	IDL__SIG_OK = 0,
	IDL__SIG_MISMATCH = 1, /* both sides have it, with different signatures */
	IDL__SIG_ABSENT = 2, /* the other side does not have it, or either side has a skip */
};

/* The signature hashes of `version` (1 or 2) of every routine of ss, into
 * hashes[ss->nroutines]: what a hello of that version carries. */
void idl__hello_hashes(const struct idl_subsystem *ss, unsigned version, uint64_t *hashes);
/* Builds the hello of `version` for `ss`, with its hashes of that version (`own`), into buf
 * (IDL_HELLO_MAX bytes, 8-aligned); returns its size or a negative error. The header's
 * seqno is left for the caller. */
int idl__hello_build(const struct idl_subsystem *ss, unsigned version, const uint64_t *own,
		     idl_msg_header_t *buf);
/* Parses a client's hello of `len` bytes (header already checked); fills *name. Any version
 * from 1 on is accepted: the answer says which one the server speaks. */
int idl__hello_parse(const idl_msg_header_t *in, size_t len, const char **name,
		     const struct idl__hello_body **body);
/* Compares the peer's hashes with our own (`own`, ss->nroutines of the same version) and
 * fills verdicts[ss->nroutines]. */
void idl__hello_compare(const struct idl_subsystem *ss, const uint64_t *own, const uint64_t *peer,
			uint32_t npeer, uint8_t *verdicts);
/* Fills the server's hello reply of `version` (its hashes `own`, ss->nroutines of them) to
 * request `in`; returns its size. */
uint32_t idl__hello_reply(const struct idl_subsystem *ss, unsigned version, const uint64_t *own,
			  const idl_msg_header_t *in, idl_msg_header_t *out);

/*
 * The port head (port_head.c): the start of every idl_port_t, whichever room made it. A
 * handle is a client port (client/port.c: a connection to call through), or, on the server,
 * the endpoint handle (server/server_request.c, idl_request_port()): it names the endpoint
 * a request came in on and cannot be called through. Core reads the head alone; what a
 * handle does is in the ops its room installs, so that core, out-of-line memory and the
 * transports close a port or take memory for it without knowing the client or the server.
 */
enum idl__port_kind {
	IDL__PORT_CLIENT = 1,
	IDL__HANDLE_ENDPOINT = 2,
};

struct idl__port_ops {
	/* Closes the handle and frees it (idl_port_close()); NULL: a handle nobody closes. */
	void (*close)(idl_port_t port);
	/* Memory for out-of-line data to send on the handle, from its transport (the
	 * conn_ool_alloc op), or NULL when it has none: idl_ool_alloc_port() then takes plain
	 * out-of-line memory. NULL op: the same. */
	void *(*ool_alloc)(idl_port_t port, size_t size);
};

struct idl__port_head {
	int kind; /* enum idl__port_kind */
	char *address;
	const struct idl__port_ops *ops;
};

/* The port class: how a port is made around a connection a transport already has (a port
 * that arrived in a message). The client's, installed by runtime/builtins.c. */
struct idl__port_class {
	/* Takes tr_state (idl__zalloc(tr->conn_size), connected) in every case. */
	int (*adopt)(const struct idl_transport *tr, const char *address, void *tr_state,
		     idl_port_t *portp);
};

void idl__port_class_set(const struct idl__port_class *cls);

/* What the library is assembled from (runtime/builtins.c, the one upward call): registers
 * the built-in transports. Called once, by idl__registry_ready(). */
void idl__builtins(void);
/* Runs idl__builtins() once (registry.c): before any lookup, and before anything that needs
 * what it installs. */
void idl__registry_ready(void);

/* The transports' ool_free ops, in registration order (registry.c): 1 when one of them
 * owned addr. */
int idl__transport_ool_free(void *addr, size_t size);

/*
 * Reading a transport's table (registry.c). A table holds t->size bytes, at least the first
 * contract version's (idl_transport_register() checked), and an op past them is one the
 * transport was compiled without: IDL__TR_OP reads it as NULL. Every optional op is read
 * through it, so that ops added at the end of struct idl_transport later are safe with
 * tables compiled before them.
 */
#define IDL__TR_OP(t, op)                                                                          \
	(offsetof(struct idl_transport, op) + sizeof((t)->op) <= (t)->size ? (t)->op : NULL)

/*
 * Configuration objects as the rooms above use them (config.c): a port holds its
 * configuration and hands it to its transport before each connect; an endpoint hands it over
 * before it listens (<idl/idl_transport.h>, ep_config and conn_config).
 */
/* Whether cfg may configure an address of transport tr (its scheme, and the op `ep` says:
 * ep_config or conn_config): 0, or IDL_EINVAL / IDL_ENOTSUP with a detail naming address. */
int idl__config_check(const struct idl_transport *tr, const struct idl_config *cfg,
		      const char *address, int ep);
/* Takes a hold on cfg (NULL allowed) for a port, which frees it with idl_config_free(). */
struct idl_config *idl__config_hold(struct idl_config *cfg);
/* Before a port's connect: conn_config with the port's configuration; 0 when it has none. */
int idl__config_conn(const struct idl_transport *tr, struct idl_config *cfg, void *conn);

#endif /* IDL_RUNTIME_CORE_H */
