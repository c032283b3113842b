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

/* A received message's descriptors are converted by the runtime's own idl__msg_convert()
 * (ool/ool.h), the conversion idl_server_serve_message() makes: the fuzzers call it on
 * every input, so that what they feed the demux is what a transport would hand it. */

/* Calls routine `which` (modulo FZ_NCALLS: the routines with a reply) of every.defs on
 * port with valid arguments, frees what a successful call hands back, and returns the
 * stub's result (fuzz_reply_calls.c). */
#define FZ_NCALLS 19u
int fz_call(idl_port_t port, unsigned which);

#endif
