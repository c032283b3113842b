/*
 * emit_user.h - what the parts of a client stub share: emit_user.c builds and sends the
 * request (and a deferred reply, which is built the same way), emit_user_reply.c checks the
 * reply and copies it out to the caller, and emit_async.c makes the asynchronous stub and its
 * completion of the same two halves - the request packed by emit_user.c's code, the reply
 * checked by emit_user_reply.c's - and of the out arguments' list that <routine>_send_reply()
 * has too.
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
	bool checking; /* reply checks go to `bad_reply` (descriptors, or a completion) */
	bool replying; /* building a deferred reply (<routine>_send_reply) in `rq` */
	bool async; /* building the request of <routine>_async: inputs are values */
	bool completing; /* checking the reply in <routine>_async's completion, through `rp` */
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

/* The message structs a stub reaches its request or reply through (`want`: the local's name
 * wanted). */
void user_msg_init(struct user_stub *s, struct user_msg *msg, const char *want, bool reply);
/* Whether the stub refuses anything before it builds the request (user_precheck() writes
 * something), and the refusals. */
bool user_refuses(struct user_stub *s);
void user_precheck(struct user_stub *s);
/* The malloc()s of messages above EMIT_STACK_LIMIT, refused with IDL_ENOMEM. */
void user_alloc(struct user_stub *s);
/* The request (or a deferred reply) built in `rq`, its header's size last. */
void user_fill(struct user_stub *s);
/* What the call passes: the request port, the deadline; the lines that say why arguments
 * are not used; the tokens filled from the port after a call. */
const char *user_port(const struct idlc_routine *rt);
const char *user_timeout(struct user_stub *s);
void user_unused(struct user_stub *s);
void user_tokens(struct user_stub *s);

/* emit_user_reply.c: the whole reply checked, then copied out and the stub's end. */
void user_check_reply(struct user_stub *s);
void user_copy_out(struct user_stub *s);
/* The count an out argument arrived with, as the reply says it. */
const char *user_received_count(struct user_stub *s, const struct idlc_arg *a);

/*
 * The out arguments of a routine as one list (MIG's WriteList over the reply): the parameters
 * of <routine>_send_reply() after its reply handle and return code, those of the done
 * function of <routine>_async after its context and return code - one list, so that the two
 * cannot disagree - and what the asynchronous stub's completion passes in them. Each out
 * argument is one entry, then its <arg>Poly where that side has one, its <arg>Cnt unless it
 * shares its leader's (samecount), and, for a deferred reply, its <arg>Dealloc.
 */
enum user_list {
	USER_LIST_SEND_REPLY, /* <routine>_send_reply(): the server's C types, by value */
	USER_LIST_DONE, /* the done function: the client's C types; inline data borrowed */
	USER_LIST_VALUES, /* the completion's call of it: the checked reply's values */
	USER_LIST_ZEROS /* the completion's call on a failure: 0 and NULL */
};
struct user_list_data {
	struct user_stub *s;
	enum user_list which;
	const char *lead[2]; /* the two entries before the out arguments */
};
void user_reply_list(struct user_stub *s, enum user_list which, const char *lead0,
		     const char *lead1, const char *tail);
/* emit_async.c: one out argument's entry in the done function's list, and its value. */
const char *async_done_param(struct user_stub *s, const struct idlc_arg *a);
const char *async_done_value(struct user_stub *s, const struct idlc_arg *a, bool zero);

#endif /* IDLC_EMIT_USER_H */
