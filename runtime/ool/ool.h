/*
 * ool.h - the out-of-line room (runtime/ool/): out-of-line memory and what messages carry
 * by descriptor, as the rooms above it use them. What a transport uses of it is declared in
 * transport_kit.h, which core.h includes; this header adds what only the runtime's own
 * rooms use (interp, client, server and dynamic, docs/architecture.md).
 *
 * Names here are idl__ (internal, non-static); the linker's export list (runtime/local.mk)
 * keeps them out of the library's interface.
 */
#ifndef IDL_RUNTIME_OOL_H
#define IDL_RUNTIME_OOL_H

#include "core/core.h"

/*
 * Descriptors (ool_msg.c; the transport kit has the rest).
 */
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
/* Whether a receive that returned err left a message whose header the receiver can answer
 * (a server) or match to its call (a client), `len` bytes of it received: one that came
 * whole (0), one larger than the buffer (IDL_EMSGSIZE), or one the transport refused for its
 * descriptors with its framing kept (IDL_EPROTO with a length; a receive that lost the
 * framing says IDL_EPROTO with none, idl__desc_refused()). Anything else ends the
 * connection. Read only after a receive failed, or as its first test. */
static inline int
idl__rcv_has_msg(int err, size_t len)
{
	return err == 0 || err == IDL_EMSGSIZE || (err == IDL_EPROTO && len != 0);
}

/*
 * Messages converted in memory (ool_convert.c): what a transport with IDL_TRF_DESC does
 * before the rooms above see a message. The message (its header's size) is followed by the
 * data of its out-of-line descriptors in order, each padded to 8, as tcp: carries them;
 * each datum becomes memory of its own (at most IDL__MSG_OOL_MAX), each carried port a port
 * of idl__msg_transport, whose operations do nothing, each array of ports (at most 64)
 * both. Returns 0, or IDL_EPROTO when a transport would refuse the message (nothing then
 * stays allocated). A message without descriptors is left as it is.
 */
#define IDL__MSG_OOL_MAX (1u << 20) /* the largest out-of-line datum a message may bring */
int idl__msg_convert(void *buf, size_t len);
/* The in-memory transport "message:", not registered: its sends release what a message
 * gives away and go nowhere, its receives find nothing. */
extern const struct idl_transport idl__msg_transport;

#endif /* IDL_RUNTIME_OOL_H */
