/*
 * fuzz_demux_wire.h - what the two message fuzzers share: a stand-in transport ("fuzz:")
 * that does to a received message what a transport with IDL_TRF_DESC does before the core
 * sees it (docs/wire-format.md, "Descriptors on the wire"), so that hostile bytes reach the
 * demux and the stubs' reply checks exactly as they would from a socket.
 */
#ifndef FUZZ_DEMUX_WIRE_H
#define FUZZ_DEMUX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>
#include <idl/idl_transport.h>

/* The transport: connections whose ops do nothing; received ports are adopted with it. */
extern const struct idl_transport fz_transport;

/*
 * Converts the descriptors of the message in buf (len bytes, of which the header's size
 * are the message and the rest the out-of-line data, each padded to 8, as tcp: carries
 * them): an out-of-line datum becomes memory of its own (at most 1 MiB), a port a port of
 * fz_transport, an array of ports (at most 64) both. Returns 0, or -1 when a transport
 * would refuse the message (nothing then stays allocated). A message without descriptors
 * is left as it is.
 */
int fz_convert(void *buf, size_t len);

/* Calls routine `which` (modulo FZ_NCALLS: the routines with a reply) of every.defs on
 * port with valid arguments, frees what a successful call hands back, and returns the
 * stub's result (fuzz_reply_calls.c). */
#define FZ_NCALLS 19u
int fz_call(idl_port_t port, unsigned which);

#endif
