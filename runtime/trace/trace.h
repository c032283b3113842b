/*
 * trace.h - the runtime's side of <idl/idl_trace.h>: the guard and the one call that the
 * core's send and receive paths make.
 *
 * A call site costs one relaxed load and a predictable branch while tracing is off:
 *
 *     IDL__TRACE(IDL_TRACE_CLIENT, IDL_TRACE_SEND, p->head.address, req, req->size);
 */
#ifndef IDL_RUNTIME_TRACE_H
#define IDL_RUNTIME_TRACE_H

#include <stdatomic.h>
#include <stddef.h>

#include <idl/idl_trace.h>

/* Nonzero while a hook or the printer is on (set from IDL_TRACE at start-up). */
extern atomic_int idl__trace_on;
/* Nonzero once the core's own call sites have traced a message: the dynamic server and
 * tools then leave the tracing of what the core sees to it. */
extern atomic_int idl__trace_core;

/* Traces one message the core sent or received (len bytes at msg, possibly malformed). */
void idl__trace_msg(int side, int dir, const char *address, const void *msg, size_t len);
/* Traces one message seen outside the core (the dynamic server's demux). */
void idl__trace_local(int side, int dir, const char *address, const void *msg, size_t len);

#define IDL__TRACE(side, dir, address, msg, len)                                                   \
	do {                                                                                       \
		if (__builtin_expect(atomic_load_explicit(&idl__trace_on, memory_order_relaxed),   \
				     0))                                                           \
			idl__trace_msg((side), (dir), (address), (msg), (len));                    \
	} while (0)

/* Makes a subsystem known to the decoder while tracing is on (the call path's one line). */
#define IDL__TRACE_REGISTER(ss)                                                                    \
	do {                                                                                       \
		if (__builtin_expect(atomic_load_explicit(&idl__trace_on, memory_order_relaxed),   \
				     0))                                                           \
			idl_trace_register(ss);                                                    \
	} while (0)

#endif /* IDL_RUNTIME_TRACE_H */
