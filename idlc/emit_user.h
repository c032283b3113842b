/*
 * emit_user.h - what the two halves of a client stub share: emit_user.c builds and sends the
 * request (and a deferred reply, which is built the same way), emit_user_reply.c checks the
 * reply and copies it out to the caller.
 */
#ifndef IDLC_EMIT_USER_H
#define IDLC_EMIT_USER_H

#include "emit.h"

/* How the stub reaches one message: a struct on the stack, a union with a byte buffer
 * (variable part), or a malloc()ed struct. */
struct user_msg {
	const char *var; /* the local's name */
	bool var_part;
	bool heap;
	uint32_t max;
	const char *f; /* field prefix: "rq.", "rq.m.", "rq->" */
	const char *head; /* "&rq.head" ... */
	const char *buf; /* the message as bytes */
	const char *size; /* "sizeof rq" ... */
};

struct user_stub {
	struct emit_out *o;
	const struct idlc_routine *rt;
	struct user_msg rq, rp;
	bool heap; /* failures after allocation go through the `out` label */
	bool checking; /* reply checks with descriptors: failures destroy the reply */
	bool replying; /* building a deferred reply (<routine>_send_reply) in `rq` */
	const char *kr, *off, *len, *n;
};

/* `if (cond) return code;`, or through the cleanup once buffers were allocated, or to
 * `bad_reply` once a reply with descriptors is being checked. A refusal of the stub's own
 * goes through idl_stub_fail() with the detail "<subsystem>.<routine>: <what>" (printf-style,
 * with `args`, ", "-less, or NULL), so that idl_errdetail() names it; user_fail() says
 * "malformed reply" for MIG_TYPE_ERROR and nothing for a code the runtime returned. */
void user_refuse(struct user_stub *s, const char *cond, const char *code, const char *what,
		 const char *args);
void user_fail(struct user_stub *s, const char *cond, const char *code);
/* Emits `<lhs>code<tail>`, or `<lhs>idl_stub_fail(code, "<sub>.<routine>: <what>"[,
 * args])<tail>` when `what` is not NULL. */
void user_fail_value(struct user_stub *s, const char *lhs, const char *code, const char *what,
		     const char *args, const char *tail);
/* The caller's count of an argument as the stub reaches it: its own <arg>Cnt or its samecount
 * leader's, through the pointer where the caller passes one. */
const char *user_count(struct user_stub *s, const struct idlc_arg *a);

/* The local a string's precheck leaves pointing at its NUL (<arg>End), and the declarations
 * of those locals for the strings the message being built carries. */
const char *user_end(struct user_stub *s, const struct idlc_arg *a);
void user_declare_ends(struct user_stub *s);

/* emit_user_reply.c: the whole reply checked, then copied out and the stub's end. */
void user_check_reply(struct user_stub *s);
void user_copy_out(struct user_stub *s);

#endif /* IDLC_EMIT_USER_H */
