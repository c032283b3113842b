/*
 * loopback.h - what loopback.c (the in-process transport), loopback_golden.c (the first
 * golden interfaces) and loopback_dialect.c (dialect.defs) share.
 */
#ifndef LOOPBACK_H
#define LOOPBACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <idl/idl.h>
#include <idl/idl_async.h>

extern int lb_failures;

/* The room of the loopback's message buffers. */
#define LB_BUF (160 * 1024)

#define LB_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			lb_failures++;                                                             \
		}                                                                                  \
	} while (0)

/* The timeout the last call passed, and the seqno the last request got. */
extern int lb_last_timeout;
extern uint32_t lb_seqno;
/* Test hooks: change the request before the demux sees it, or the reply before the stub;
 * complete a reply that a routine deferred (called when it returned MIG_NO_REPLY). */
extern void (*lb_tamper_request)(idl_msg_header_t *req);
extern void (*lb_tamper_reply)(idl_msg_header_t *rep);
extern void (*lb_deferred)(void);

/* The detail the last idl_stub_fail() recorded (the runtime's idl_errdetail()), and a check
 * that it is `want` (it is reset to "an earlier failure" after each check, so that a stub
 * that forgets its own detail leaves that one). */
extern char lb_detail[256];
int lb_detail_is(const char *want);

/* Where a deferred reply goes: the reply buffer of the serve in progress. */
extern idl_msg_header_t *lb_reply_target;

/* loopback_golden.c: the checks of scalars, arrays, strings and bench. */
void lb_scalars(void);
void lb_arrays(void);
void lb_strings(void);
void lb_bench(void);

/* loopback_dialect.c: the checks, the transport's handling of descriptors, and the regions
 * idl_ool_alloc() handed out and idl_ool_free() did not take back yet. */
extern long lb_ool_live;
void lb_dialect(void);
/* loopback_xnu.c: the checks of xnu.defs. */
void lb_xnu(void);
void lb_transfer(idl_msg_header_t *m, int sender_free);
/* Whether two replies are the same but for descriptor addresses. */
int lb_same_reply(const idl_msg_header_t *a, const idl_msg_header_t *b);

/* The ports of dialect.defs's checks: tokens (addresses of objects of loopback_dialect.c)
 * that the loopback passes as they are; and the deferred reply its routine completes. */
extern char lb_port_a, lb_port_b, lb_port_c, lb_port_d;
#define LB_PA ((mach_port_t)(void *)&lb_port_a)
#define LB_PB ((mach_port_t)(void *)&lb_port_b)
#define LB_PC ((mach_port_t)(void *)&lb_port_c)
#define LB_PD ((mach_port_t)(void *)&lb_port_d)
void lb_complete_deferred(void);

/*
 * The asynchronous stubs. loopback.c stands in for the runtime (<idl/idl_async.h>): a code
 * idl_call_async() refuses with instead of accepting (0: it accepts), the calls it accepted
 * that were not both completed and released yet, and the reply of the completion that runs
 * (NULL outside one, and in a failed one).
 */
extern int lb_async_refuse;
extern int lb_async_live;
extern const idl_msg_header_t *lb_async_rep;

/* What a done function saw (its ctx), for the checks once the dispatch returned. */
struct lb_seen {
	int ran; /* how many times it ran: once for an accepted call, never for a refused one */
	int order; /* its place among the completions so far */
	kern_return_t kr;
	int ok; /* every out argument was what the test expects (and 0 or NULL on a failure) */
	int64_t v[4]; /* values a check wants to see after the done function returned */
	char detail[256]; /* idl_errdetail() inside the done function */
};
/* Counts a done function's run: the struct its ctx names, with kr and the detail noted. */
struct lb_seen *lb_saw(void *ctx, kern_return_t kr);
/* Whether n bytes at p lie in the reply of the completion that runs (borrowed arguments). */
int lb_borrowed(const void *p, size_t n);
/* Runs every completion queued; returns how many ran. */
int lb_dispatch(void);
/* Whether the done function saw `want` as idl_errdetail() (lb_detail_is() for a done
 * function). */
int lb_saw_detail(struct lb_seen *w, const char *want);

/* A call its stub refuses itself: `call` (an asynchronous stub's, with the done function's
 * ctx &lb_w and the handle &lb_h) returns `code` with the detail `detail`, *callp NULL, and
 * its done function never runs. */
#define LB_REFUSED(call, code, detail)                                                             \
	do {                                                                                       \
		idl_async_t *lb_h = (idl_async_t *)&lb_h;                                          \
		struct lb_seen lb_w;                                                               \
		memset(&lb_w, 0, sizeof lb_w);                                                     \
		LB_CHECK((call) == (code) && lb_h == NULL);                                        \
		LB_CHECK(lb_detail_is(detail));                                                    \
		lb_dispatch();                                                                     \
		LB_CHECK(lb_w.ran == 0);                                                           \
	} while (0)

/* loopback_async.c: scalars, arrays, strings and bench; loopback_async_dialect.c:
 * dialect.defs; loopback_xnu.c: xnu.defs. */
void lb_async(void);
void lb_async_dialect(void);
void lb_async_xnu(void);

#endif
