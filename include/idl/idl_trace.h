/*
 * idl_trace.h - watching the messages a program sends and receives.
 *
 * With IDL_TRACE set in the environment, every message the runtime sends or receives is
 * printed, one line each, decoded through the descriptor tables with routine and argument
 * names, and timed:
 *
 *     IDL_TRACE=1          lines on standard error
 *     IDL_TRACE=/path/f    lines appended to that file (created 0600)
 *     IDL_TRACE=0 or unset nothing (one predictable branch per message)
 *
 *     idl-trace +0.000412 client send unix:b.sock REQUEST bench.add #seq=2 #size=32 a=2 b=3
 *     idl-trace +0.000503 client recv unix:b.sock REPLY bench.add #seq=2 #size=32 KERN_SUCCESS
 *         sum=5 (91.2us)
 *
 * The header's fields start with '#' (#seq=, #size=, #retcode=), the arguments do not.
 *
 * The time is seconds since tracing started; a reply shows in parentheses how long after its
 * request it was traced on the same side (the round trip on a client, the service time on a
 * server). A program may instead (or as well) install a hook that receives each event.
 * docs/idlcall.md shows the format in full.
 */
#ifndef IDL_TRACE_H
#define IDL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <idl/idl_msg.h>
#include <idl/idl_subsystem.h>

#ifdef __cplusplus
extern "C" {
#endif

enum idl_trace_side {
	IDL_TRACE_CLIENT = 1,
	IDL_TRACE_SERVER = 2,
};

enum idl_trace_dir {
	IDL_TRACE_SEND = 1,
	IDL_TRACE_RECV = 2,
};

/* One message seen by the runtime. Valid only during the hook's call. */
struct idl_trace_event {
	int side; /* enum idl_trace_side */
	int dir; /* enum idl_trace_dir */
	const char *address; /* the port's or the endpoint's address; NULL when unknown */
	const idl_msg_header_t *msg; /* `len` bytes as sent or received: possibly malformed */
	size_t len;
	int64_t time_ns; /* CLOCK_MONOTONIC, as idl_now_ns() */
	int64_t elapsed_ns; /* a reply: time since its request was traced on this side; else -1 */
	const struct idl_subsystem *ss; /* the subsystem of the message's id, or NULL */
	const struct idl_routine_desc *rt; /* its routine, or NULL (hellos, unknown ids) */
};

typedef void (*idl_trace_fn)(void *arg, const struct idl_trace_event *ev);

/* Installs a hook that gets every event (NULL removes it). Tracing is on while a hook or
 * the printer is. The hook runs on the thread that sends or receives; it must not call
 * the runtime's call or serve functions. */
void idl_trace_set_hook(idl_trace_fn fn, void *arg);

/* Turns the printer on, writing to `fd` (not closed by the runtime), or off with -1: what
 * IDL_TRACE does at start-up. */
void idl_trace_print_to(int fd);

/* Makes a subsystem known to the decoder. The runtime registers the subsystems it serves
 * and calls; a program registers others it wants decoded. At most 64 are remembered. */
void idl_trace_register(const struct idl_subsystem *ss);

/*
 * Reports a message that did not go through the runtime's own send and receive (a tool
 * that times its calls itself, a test harness). Fills in time (when time_ns is 0),
 * elapsed_ns, ss and rt when they are unset, then hands the event to the hook and printer.
 */
void idl_trace_emit(const struct idl_trace_event *ev);

/* How many events have been traced in this process so far. */
uint64_t idl_trace_count(void);

/* The line the printer writes for an event, without its newline: a malloc()ed string the
 * caller frees, or NULL when out of memory. */
char *idl_trace_format(const struct idl_trace_event *ev);

#ifdef __cplusplus
}
#endif
#endif /* IDL_TRACE_H */
