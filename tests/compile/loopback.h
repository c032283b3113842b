/*
 * loopback.h - what loopback.c (the in-process transport), loopback_golden.c (the first
 * golden interfaces) and loopback_dialect.c (dialect.defs) share.
 */
#ifndef LOOPBACK_H
#define LOOPBACK_H

#include <stdint.h>
#include <stdio.h>

#include <idl/idl.h>

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

#endif
