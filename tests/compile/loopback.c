/*
 * loopback.c - the generated stubs of every golden interface, client and server linked into
 * one program (their weak descriptor tables included), talking through an in-process
 * idl_call() that hands each request straight to the subsystem's demux.
 *
 * run-golden.sh builds it from the freshly generated <sub>User.c and <sub>Server.c of
 * scalars, arrays, strings, dialect, xnu and bench. It checks what the text comparison
 * cannot: values survive the round trip in every direction, the stubs refuse what they must
 * (counts over their bounds, strings without room for their NUL, malformed requests and
 * replies), and no reply carries a byte the server did not write (each request is served
 * twice, into reply buffers filled with different garbage, and the replies must be
 * identical). Under valgrind (run-golden.sh runs it so when valgrind is installed), every
 * byte of every request a stub sends and of every reply a demux fills must be defined:
 * memcheck's client check finds a byte of a stub's stack that no one wrote.
 *
 * Descriptors travel as a transport would carry them (lb_transfer): out-of-line data and
 * arrays of ports arrive in memory of the receiver's own, the sender's is freed when it set
 * IDL_DESCF_DEALLOC, and a request a routine refused is destroyed, as the runtime's
 * ownership rule says. loopback_golden.c holds the routines and checks of the first
 * interfaces, loopback_dialect.c the dialect's, loopback_xnu.c xnu.defs's.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_CHECK_MEM_IS_DEFINED
#define VALGRIND_CHECK_MEM_IS_DEFINED(addr, len) ((void)(addr), (void)(len), 0)
#endif

#include "arrays.h"
#include "arrays_S.h"
#include "bench.h"
#include "bench_S.h"
#include "dialect.h"
#include "dialect_S.h"
#include "loopback.h"
#include "scalars.h"
#include "scalars_S.h"
#include "strings.h"
#include "strings_S.h"
#include "xnu.h"
#include "xnu_S.h"

int lb_failures;

/*
 * The in-process transport.
 */

static union {
	idl_msg_header_t head;
	unsigned char bytes[LB_BUF];
} lb_req, lb_req2, lb_rep, lb_rep2;

int lb_last_timeout;
uint32_t lb_seqno;
void (*lb_tamper_request)(idl_msg_header_t *req);
void (*lb_tamper_reply)(idl_msg_header_t *rep);
void (*lb_deferred)(void);
idl_msg_header_t *lb_reply_target;

static idl_demux_fn
lb_demux(const struct idl_subsystem *ss)
{
	if (ss == &scalars_subsystem)
		return scalars_server;
	if (ss == &arrays_subsystem)
		return arrays_demux;
	if (ss == &strings_subsystem)
		return strings_server;
	if (ss == &bench_subsystem)
		return bench_server;
	if (ss == &dialect_subsystem)
		return dialect_server;
	if (ss == &xnu_subsystem)
		return xnu_server;
	return NULL;
}

/* Serves one copy of the request into `out`, completing a deferred reply at once, and
 * applies the ownership rule to the request's descriptors. */
static int
lb_serve(idl_demux_fn demux, idl_msg_header_t *in, idl_msg_header_t *out)
{
	int r, kept;

	lb_reply_target = out;
	r = demux(in, out);
	/* The routine keeps what it received when it succeeds or defers its reply. */
	kept = r && (out->retcode == KERN_SUCCESS || out->retcode == MIG_NO_REPLY);
	if (r && out->retcode == MIG_NO_REPLY && lb_deferred != NULL)
		lb_deferred();
	lb_reply_target = NULL;
	if (!kept)
		idl_msg_destroy(in);
	return r;
}

/* Copies the request as a transport would deliver it, checking what the stub filled. */
static void
lb_deliver(const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req)
{
	const struct idl_routine_desc *rt = &ss->routines[number];

	req->magic = IDL_MSG_MAGIC;
	req->order = IDL_ORDER_NATIVE;
	req->kind = rt->kind == IDL_RT_ROUTINE ? IDL_KIND_REQUEST : IDL_KIND_ONEWAY;
	req->id = ss->base + (int32_t)number;
	req->seqno = ++lb_seqno;
	LB_CHECK(req->size % 8 == 0);
	LB_CHECK(req->size >= rt->req_fixed && req->size <= rt->req_max);
	LB_CHECK(rt->sig_hash == idl_routine_sig_hash(rt));
	/* Every byte that goes out was written (no error, outside valgrind, is possible). */
	LB_CHECK(VALGRIND_CHECK_MEM_IS_DEFINED(req, req->size) == 0);
	memcpy(lb_req.bytes, req, req->size);
	memcpy(lb_req2.bytes, req, req->size);
	/* Two copies for two serves; the sender's memory goes (if it asked) after both. */
	lb_transfer(&lb_req2.head, 0);
	lb_transfer(&lb_req.head, 1);
	if (lb_tamper_request != NULL) {
		lb_tamper_request(&lb_req.head);
		lb_tamper_request(&lb_req2.head);
	}
}

int
idl_call(idl_port_t port, const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req,
	 idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms)
{
	idl_demux_fn demux = lb_demux(ss);

	(void)port;
	lb_last_timeout = timeout_ms;
	LB_CHECK(demux != NULL && number < ss->nroutines);
	lb_deliver(ss, number, req);
	/* Served twice into differently dirty buffers: every byte sent must be written. */
	memset(lb_rep.bytes, 0xa5, sizeof lb_rep.bytes);
	memset(lb_rep2.bytes, 0x5a, sizeof lb_rep2.bytes);
	if (!lb_serve(demux, &lb_req.head, &lb_rep.head))
		return MIG_BAD_ID;
	if (!lb_serve(demux, &lb_req2.head, &lb_rep2.head))
		return MIG_BAD_ID;
	LB_CHECK(VALGRIND_CHECK_MEM_IS_DEFINED(lb_rep.bytes, lb_rep.head.size) == 0);
	/* What the replies carry is the client's (the first) or gone (the second). */
	lb_transfer(&lb_rep.head, 1);
	lb_transfer(&lb_rep2.head, 1);
	LB_CHECK(lb_same_reply(&lb_rep.head, &lb_rep2.head));
	if (lb_rep2.head.retcode == KERN_SUCCESS)
		idl_msg_destroy(&lb_rep2.head);
	LB_CHECK(lb_rep.head.id == req->id + 100 && lb_rep.head.seqno == req->seqno);
	if (lb_rep.head.retcode != KERN_SUCCESS) {
		LB_CHECK(lb_rep.head.size == IDL_MSG_HEADER_SIZE);
		return lb_rep.head.retcode;
	}
	LB_CHECK(lb_rep.head.size % 8 == 0);
	LB_CHECK(lb_rep.head.size >= ss->routines[number].rep_fixed);
	LB_CHECK(lb_rep.head.size <= ss->routines[number].rep_max);
	if (lb_tamper_reply != NULL)
		lb_tamper_reply(&lb_rep.head);
	if (lb_rep.head.size > rep_max)
		return MIG_TYPE_ERROR;
	memcpy(rep, lb_rep.bytes, lb_rep.head.size);
	return KERN_SUCCESS;
}

int
idl_send(idl_port_t port, const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req,
	 int timeout_ms)
{
	idl_demux_fn demux = lb_demux(ss);

	(void)port;
	lb_last_timeout = timeout_ms;
	LB_CHECK(demux != NULL && ss->routines[number].kind == IDL_RT_SIMPLEROUTINE);
	lb_deliver(ss, number, req);
	lb_serve(demux, &lb_req.head, &lb_rep.head);
	idl_msg_destroy(&lb_req2.head); /* served once: the second copy is not used */
	return KERN_SUCCESS;
}

idl_port_t
idl_request_port(void)
{
	return NULL;
}

char lb_detail[256] = "an earlier failure";

int
idl_stub_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lb_detail, sizeof lb_detail, fmt, ap);
	va_end(ap);
	return err;
}

int
lb_detail_is(const char *want)
{
	int same = strcmp(lb_detail, want) == 0;

	if (!same)
		fprintf(stderr, "detail \"%s\", expected \"%s\"\n", lb_detail, want);
	snprintf(lb_detail, sizeof lb_detail, "an earlier failure");
	return same;
}

/* The runtime's hash, computed here from the descriptor as the runtime does, so the
 * program needs no library: it must agree with the hash idlc wrote into the table. */
static uint64_t
lb_fnv(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t
idl_routine_sig_hash(const struct idl_routine_desc *rt)
{
	static const char *const kinds[] = { "-", "routine", "simpleroutine", "skip" };
	static const char *const dirs[] = { "-",     "requestport", "in",	 "out",
					    "inout", "waittime",    "msgoption", "other" };
	static const char *const akinds[] = { "-",	    "scalar", "fixed", "var",	  "cstring",
					      "cstringvar", "port",   "ool",   "implicit" };
	static const char *const wts[] = { "none", "int8", "int16",  "int32",  "int64", "boolean",
					   "char", "byte", "real32", "real64", "port",	"struct" };
	uint64_t h = 0xcbf29ce484222325ull;
	char buf[64];

	if (rt->kind == IDL_RT_SKIP)
		return 0;
	snprintf(buf, sizeof buf, "%u ", (unsigned)rt->number);
	h = lb_fnv(h, buf);
	h = lb_fnv(h, rt->name);
	h = lb_fnv(h, " ");
	h = lb_fnv(h, kinds[rt->kind]);
	h = lb_fnv(h, "(");
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (a->kind == IDL_ARG_IMPLICIT)
			continue;
		snprintf(buf, sizeof buf, "%s %s %s %u %u;", dirs[a->dir], akinds[a->kind],
			 wts[a->wire_type], (unsigned)a->elem_size, (unsigned)a->count);
		h = lb_fnv(h, buf);
	}
	return lb_fnv(h, ")");
}

static void
lb_bad_ids(void)
{
	idl_msg_header_t in, out;
	int32_t ids[] = { 999, 1002, 1006, INT32_MAX, INT32_MIN };

	for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
		memset(&in, 0, sizeof in);
		in.id = ids[k];
		in.size = sizeof in;
		in.seqno = 5;
		LB_CHECK(scalars_server(&in, &out) == 0);
		LB_CHECK(out.retcode == MIG_BAD_ID && out.size == IDL_MSG_HEADER_SIZE);
		LB_CHECK(out.seqno == 5 && out.kind == IDL_KIND_REPLY);
	}
	LB_CHECK(scalars_server_routine(&in) == NULL);
	in.id = 1000;
	LB_CHECK(scalars_server_routine(&in) != NULL);
	in.id = 1002; /* the skip */
	LB_CHECK(scalars_server_routine(&in) == NULL);
	in.id = 2000;
	LB_CHECK(arrays_demux_routine(&in) != NULL);
}

int
main(void)
{
	lb_scalars();
	lb_arrays();
	lb_strings();
	lb_bench();
	lb_bad_ids();
	lb_dialect();
	lb_xnu();
	if (lb_failures != 0) {
		fprintf(stderr, "loopback: %d checks failed\n", lb_failures);
		return 1;
	}
	printf("loopback: every check passed\n");
	return 0;
}
