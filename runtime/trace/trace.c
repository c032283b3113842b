/*
 * trace.c - message tracing: the IDL_TRACE printer, the hook, and the decoding of each
 * message through the descriptor tables (<idl/idl_trace.h>).
 *
 * The call sites in the core cost one relaxed load while tracing is off (IDL__TRACE in
 * trace.h). Everything else happens only while it is on, under one mutex: tracing is for
 * looking at a program, not for its fast path. A reply's elapsed time comes from a small
 * direct-mapped table of the times its request was seen, keyed by side, address, id and
 * sequence number; a collision costs one reply its elapsed time, nothing else.
 *
 * The trace room: it knows core, ool and the interpreter's describer, and nothing of the
 * client or the server, whose call sites it serves.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ool/ool.h"
#include "interp/interp.h"
#include "trace/trace.h"

/* The subsystems the decoder knows (idl_trace_register()); a message of any other is
 * printed by its header alone. */
#define TRACE_MAX_SUBSYSTEMS 64
/* Slots of the table of requests awaiting their answer, for the elapsed time. */
#define TRACE_PENDING 256

/* Read by every call site without the lock (trace.h); written under it. */
atomic_int idl__trace_on;
atomic_int idl__trace_core;

/* A request seen and not yet answered: who sent it where, and when. The address is the
 * port's or endpoint's own string, compared by pointer: it lives as long as they do. */
struct trace_pending {
	int side;
	const char *address;
	int32_t id;
	uint32_t seqno;
	int64_t time_ns;
	bool used;
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static idl_trace_fn trace_hook;
static void *trace_hook_arg;
static int trace_fd = -1;
static bool trace_fd_owned; /* opened from IDL_TRACE=path: ours to keep open */
static int64_t trace_t0;
static const struct idl_subsystem *trace_subs[TRACE_MAX_SUBSYSTEMS];
static unsigned trace_nsubs;
static struct trace_pending trace_pend[TRACE_PENDING];
static atomic_uint_fast64_t trace_count;

/* Lock held. */
static void
trace_update_on(void)
{
	atomic_store_explicit(&idl__trace_on, trace_hook != NULL || trace_fd >= 0,
			      memory_order_relaxed);
	if (trace_t0 == 0)
		trace_t0 = idl_now_ns();
}

/* IDL_TRACE, read once when the library is loaded, so that every program can be traced
 * without a change to it. */
__attribute__((constructor)) static void
trace_from_env(void)
{
	const char *v = getenv("IDL_TRACE");
	int fd;

	if (v == NULL || *v == '\0' || strcmp(v, "0") == 0)
		return;
	if (strcmp(v, "1") == 0 || strcmp(v, "stderr") == 0) {
		fd = STDERR_FILENO;
	} else {
		fd = open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "idl-trace: %s: %s; tracing to standard error\n", v,
				strerror(errno));
			fd = STDERR_FILENO;
		} else {
			trace_fd_owned = true;
		}
	}
	pthread_mutex_lock(&trace_lock);
	trace_fd = fd;
	trace_update_on();
	pthread_mutex_unlock(&trace_lock);
}

void
idl_trace_set_hook(idl_trace_fn fn, void *arg)
{
	pthread_mutex_lock(&trace_lock);
	trace_hook = fn;
	trace_hook_arg = arg;
	trace_update_on();
	pthread_mutex_unlock(&trace_lock);
}

void
idl_trace_print_to(int fd)
{
	pthread_mutex_lock(&trace_lock);
	if (trace_fd_owned && trace_fd != fd)
		close(trace_fd);
	trace_fd_owned = false;
	trace_fd = fd < 0 ? -1 : fd;
	trace_update_on();
	pthread_mutex_unlock(&trace_lock);
}

void
idl_trace_register(const struct idl_subsystem *ss)
{
	if (ss == NULL || ss->magic != IDL_SUBSYSTEM_MAGIC)
		return;
	pthread_mutex_lock(&trace_lock);
	for (unsigned i = 0; i < trace_nsubs; i++) {
		if (trace_subs[i] == ss) {
			pthread_mutex_unlock(&trace_lock);
			return;
		}
	}
	if (trace_nsubs < TRACE_MAX_SUBSYSTEMS)
		trace_subs[trace_nsubs++] = ss;
	pthread_mutex_unlock(&trace_lock);
}

uint64_t
idl_trace_count(void)
{
	return atomic_load(&trace_count);
}

/* Whether a message answers a request (its id is the request's plus the offset). */
static bool
trace_is_answer(uint8_t kind)
{
	return kind == IDL_KIND_REPLY || kind == IDL_KIND_HELLO_REPLY;
}

/* The subsystem and routine of a header's id. Lock held. */
static void
trace_lookup(const idl_msg_header_t *h, const struct idl_subsystem **ssp,
	     const struct idl_routine_desc **rtp)
{
	int32_t id = h->id;

	if (trace_is_answer(h->kind))
		id = (int32_t)((uint32_t)id - IDL_REPLY_ID_OFFSET);
	for (unsigned i = 0; i < trace_nsubs; i++) {
		const struct idl_subsystem *ss = trace_subs[i];

		if (h->kind == IDL_KIND_HELLO || h->kind == IDL_KIND_HELLO_REPLY) {
			if (ss->base == id) {
				*ssp = ss;
				return;
			}
		} else if ((uint32_t)id - (uint32_t)ss->base < ss->nroutines) {
			*ssp = ss;
			*rtp = idl_subsystem_routine(ss, id);
			return;
		}
	}
}

/* The slot of the pending table a request and its answer share: a multiplicative hash of
 * what identifies the call, so that calls of one port spread over the table. */
static unsigned
trace_slot(int side, const char *address, int32_t id, uint32_t seqno)
{
	uint64_t h = (uint64_t)(uintptr_t)address * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)(uint32_t)id << 32 | seqno) * 0xff51afd7ed558ccdull;
	h ^= (uint64_t)side;
	return (unsigned)((h >> 29) % TRACE_PENDING);
}

/* Remembers a request's time, or finds the request of an answer. Lock held. */
static int64_t
trace_match(const idl_msg_header_t *h, int side, const char *address, int64_t now)
{
	int32_t id = h->id;
	struct trace_pending *p;

	if (trace_is_answer(h->kind))
		id = (int32_t)((uint32_t)id - IDL_REPLY_ID_OFFSET);
	p = &trace_pend[trace_slot(side, address, id, h->seqno)];
	if (!trace_is_answer(h->kind)) {
		if (h->kind == IDL_KIND_ONEWAY)
			return -1;
		*p = (struct trace_pending){ side, address, id, h->seqno, now, true };
		return -1;
	}
	if (p->used && p->side == side && p->address == address && p->id == id &&
	    p->seqno == h->seqno) {
		p->used = false;
		return now - p->time_ns;
	}
	return -1;
}

/* The name printed for a header's kind. */
static const char *
trace_kind(uint8_t kind)
{
	static const char *const names[] = {
		"kind0", "REQUEST", "REPLY", "ONEWAY", "HELLO", "HELLO_REPLY",
	};

	return kind < sizeof names / sizeof names[0] ? names[kind] : "kind?";
}

/* One event as the printer's line (<idl/idl_trace.h> has its form): the time, side,
 * direction and address, the header's fields, then the arguments as the interpreter
 * describes them when the subsystem is known and the message passes its checks. */
char *
idl_trace_format(const struct idl_trace_event *ev)
{
	struct strbuf sb = STRBUF_INIT;
	idl_msg_header_t h;
	int64_t t = ev->time_ns - trace_t0;

	memset(&h, 0, sizeof h);
	if (ev->msg != NULL)
		memcpy(&h, ev->msg, ev->len < sizeof h ? ev->len : sizeof h);
	strbuf_printf(&sb, "idl-trace +%" PRId64 ".%06" PRId64 " %s %s %s ", t / 1000000000,
		      (t % 1000000000) / 1000, ev->side == IDL_TRACE_SERVER ? "server" : "client",
		      ev->dir == IDL_TRACE_SEND ? "send" : "recv",
		      ev->address != NULL ? ev->address : "-");
	if (ev->msg == NULL || ev->len < IDL_MSG_HEADER_SIZE || h.magic != IDL_MSG_MAGIC) {
		strbuf_printf(&sb, "malformed (%zu bytes)", ev->len);
		return strbuf_detach(&sb);
	}
	if (h.order != IDL_ORDER_NATIVE) {
		strbuf_printf(&sb, "%zu bytes in the other byte order", ev->len);
		return strbuf_detach(&sb);
	}
	strbuf_printf(&sb, "%s ", trace_kind(h.kind));
	if (ev->ss != NULL && ev->rt != NULL)
		strbuf_printf(&sb, "%s.%s", ev->ss->name, ev->rt->name);
	else if (ev->ss != NULL)
		strbuf_printf(&sb, "%s", ev->ss->name);
	else
		strbuf_printf(&sb, "id=%" PRId32, h.id);
	/* The header's fields start with '#', which no argument's name can: an argument
	 * called seq or size stays apart from them. */
	strbuf_printf(&sb, " #seq=%" PRIu32 " #size=%" PRIu32, h.seqno, h.size);
	if (trace_is_answer(h.kind)) {
		if (h.retcode == 0)
			strbuf_puts(&sb, " KERN_SUCCESS");
		else if (h.retcode > 0)
			strbuf_printf(&sb, " #retcode=%" PRId32, h.retcode);
		else
			strbuf_printf(&sb, " %s", idl_errname(h.retcode));
	}
	if (ev->rt != NULL && h.size == ev->len &&
	    (h.kind == IDL_KIND_REQUEST || h.kind == IDL_KIND_ONEWAY ||
	     (h.kind == IDL_KIND_REPLY && h.retcode == 0))) {
		size_t before = sb.len;

		strbuf_puts(&sb, " ");
		idl__dyn_describe(&sb, ev->rt, ev->msg, ev->len,
				  IDL_DESCRIBE_BRIEF |
					  (h.kind == IDL_KIND_REPLY ? IDL_DESCRIBE_REPLY : 0));
		if (!sb.failed && sb.len == before + 1)
			sb.data[--sb.len] = '\0'; /* no arguments: no trailing space */
	} else if (h.kind == IDL_KIND_HELLO || h.kind == IDL_KIND_HELLO_REPLY) {
		uint32_t n = 0;

		if (ev->len >= 32)
			memcpy(&n, (const char *)ev->msg + 28, sizeof n);
		strbuf_printf(&sb, " #routines=%" PRIu32, n);
	}
	if (ev->elapsed_ns >= 0)
		strbuf_printf(&sb, " (%" PRId64 ".%01" PRId64 "us)", ev->elapsed_ns / 1000,
			      (ev->elapsed_ns % 1000) / 100);
	return strbuf_detach(&sb);
}

/* Completes an event and hands it to the hook and the printer. */
static void
trace_deliver(struct idl_trace_event *ev)
{
	idl_msg_header_t h;
	idl_trace_fn hook;
	void *hook_arg;
	int fd;

	memset(&h, 0, sizeof h);
	if (ev->msg != NULL)
		memcpy(&h, ev->msg, ev->len < sizeof h ? ev->len : sizeof h);
	if (ev->time_ns == 0)
		ev->time_ns = idl_now_ns();
	pthread_mutex_lock(&trace_lock);
	if (ev->len >= IDL_MSG_HEADER_SIZE && h.magic == IDL_MSG_MAGIC &&
	    h.order == IDL_ORDER_NATIVE) {
		if (ev->ss == NULL)
			trace_lookup(&h, &ev->ss, &ev->rt);
		if (ev->elapsed_ns < 0)
			ev->elapsed_ns = trace_match(&h, ev->side, ev->address, ev->time_ns);
	}
	hook = trace_hook;
	hook_arg = trace_hook_arg;
	fd = trace_fd;
	pthread_mutex_unlock(&trace_lock);
	atomic_fetch_add(&trace_count, 1);

	if (hook != NULL)
		hook(hook_arg, ev);
	if (fd >= 0) {
		char *line = idl_trace_format(ev);
		ssize_t w;
		size_t n;

		if (line == NULL)
			return;
		/* One write per line, so that lines of several threads do not mix. A failed
		 * write has nowhere to be reported, and tracing must not fail a call. */
		n = strlen(line);
		line[n] = '\n';
		w = write(fd, line, n + 1);
		(void)w;
		free(line);
	}
}

void
idl_trace_emit(const struct idl_trace_event *ev)
{
	struct idl_trace_event e;

	if (ev == NULL || !atomic_load_explicit(&idl__trace_on, memory_order_relaxed))
		return;
	e = *ev;
	trace_deliver(&e);
}

/* A message seen outside the core (the libffi server's demux): printed as any other, with no
 * elapsed time. */
void
idl__trace_local(int side, int dir, const char *address, const void *msg, size_t len)
{
	struct idl_trace_event e = {
		.side = side,
		.dir = dir,
		.address = address,
		.msg = msg,
		.len = len,
		.elapsed_ns = -1,
	};

	trace_deliver(&e);
}

/* A message the core sent or received (IDL__TRACE): from the first one on, the dynamic
 * server and the tools leave the tracing of what the core sees to it, so that nothing is
 * printed twice. */
void
idl__trace_msg(int side, int dir, const char *address, const void *msg, size_t len)
{
	atomic_store_explicit(&idl__trace_core, 1, memory_order_relaxed);
	idl__trace_local(side, dir, address, msg, len);
}
