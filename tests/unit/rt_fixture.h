/*
 * rt_fixture.h - a hand-written interface for the runtime's own tests, shaped exactly as
 * docs/generated-code.md says idlc generates it (descriptor, message structs, unpackers,
 * routine table, demux), so that the runtime can be tested without the compiler.
 *
 *     subsystem rtt 5000;
 *     routine null(server : mach_port_t);
 *     routine add(server : mach_port_t; a : int; b : int; out sum : int);
 *     routine nap(server : mach_port_t; ms : int);           (sleeps ms in the server)
 *     simpleroutine notify(server : mach_port_t; value : int);
 *     skip;
 *     routine fill(server : mach_port_t; seed : int; out data : array[1024] of byte);
 *     routine whoami(server : mach_port_t; out uid : int; out pid : int; out ok : int);
 */
#ifndef RT_FIXTURE_H
#define RT_FIXTURE_H

#include <idl/idl.h>

#define RTT_BASE 5000
#define RTT_NULL 0
#define RTT_ADD 1
#define RTT_NAP 2
#define RTT_NOTIFY 3
#define RTT_SKIP 4
#define RTT_FILL 5
#define RTT_WHOAMI 6

extern const struct idl_subsystem rtt_subsystem;
/* The same interface with another signature for `add` (an old client of a changed add). */
extern const struct idl_subsystem rtt_changed_subsystem;

int rtt_server(idl_msg_header_t *in, idl_msg_header_t *out);

/* Client stubs. */
kern_return_t rtt_null(idl_port_t port);
kern_return_t rtt_add(idl_port_t port, int a, int b, int *sum);
kern_return_t rtt_add_changed(idl_port_t port, int a, int b, int *sum);
kern_return_t rtt_nap(idl_port_t port, int ms, int timeout_ms);
kern_return_t rtt_notify(idl_port_t port, int value);
kern_return_t rtt_fill(idl_port_t port, int seed, unsigned char data[1024]);
kern_return_t rtt_whoami(idl_port_t port, int *uid, int *pid, int *ok);

/* What the server side saw (the fixture's routines record it). */
extern _Atomic int rtt_notified; /* sum of notify values */
extern _Atomic int rtt_naps_done;

/* Serves rtt at `address` in a new thread; returns the server (stop with rtt_stop). */
idl_server_t *rtt_start(const char *address);
void rtt_stop(idl_server_t *srv);

#endif
