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
 * ownership rule says. loopback_bench.c, loopback_dialect.c and loopback_xnu.c hold the
 * routines and checks of bench.defs, dialect.defs and xnu.defs.
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

/*
 * scalars.defs
 */

static struct {
	int8_t a;
	int16_t b;
	int c;
	int64_t d;
	boolean_t e;
	char f;
	uint8_t g;
	float h;
	double i;
	int ping;
} lb_seen;

kern_return_t
s_all_in(mach_port_t server, int8_t a, int16_t b, int c, int64_t d, boolean_t e, char f, uint8_t g,
	 float h, double i)
{
	lb_seen.a = a;
	lb_seen.b = b;
	lb_seen.c = c;
	lb_seen.d = d;
	lb_seen.e = e;
	lb_seen.f = f;
	lb_seen.g = g;
	lb_seen.h = h;
	lb_seen.i = i;
	return KERN_SUCCESS;
}

kern_return_t
s_all_out(mach_port_t server, int8_t *a, int16_t *b, int *c, int64_t *d, boolean_t *e, char *f,
	  uint8_t *g, float *h, double *i)
{
	*a = -8;
	*b = -1600;
	*c = -320000;
	*d = -(INT64_C(1) << 40);
	*e = TRUE;
	*f = 'Z';
	*g = 0xfe;
	*h = 0.25f;
	*i = -1e300;
	return KERN_SUCCESS;
}

kern_return_t
s_all_inout(mach_port_t server, int8_t *a, int64_t *d, float *h, double *i, boolean_t *e)
{
	*a += 1;
	*d *= 2;
	*h /= 2;
	*i = -*i;
	*e = !*e;
	return KERN_SUCCESS;
}

kern_return_t
s_ping(mach_port_t server, int seq)
{
	lb_seen.ping = seq;
	return KERN_SUCCESS;
}

kern_return_t
s_swap(mach_port_t server, int *x, int *y)
{
	int t = *x;

	*x = *y;
	*y = t;
	return *x == 13 ? 1234 : KERN_SUCCESS;
}

static void
lb_scalars(void)
{
	int8_t a = 0;
	int16_t b;
	int c, x = 1, y = 2;
	int64_t d = 0;
	boolean_t e = FALSE;
	char f;
	uint8_t g;
	float h = 3.0f;
	double i = 2.5;

	LB_CHECK(u_all_in(NULL, -5, 30000, -7, INT64_MIN, TRUE, 'q', 200, 1.5f, 1e-300) == 0);
	LB_CHECK(lb_seen.a == -5 && lb_seen.b == 30000 && lb_seen.c == -7);
	LB_CHECK(lb_seen.d == INT64_MIN && lb_seen.e == TRUE && lb_seen.f == 'q');
	LB_CHECK(lb_seen.g == 200 && lb_seen.h == 1.5f && lb_seen.i == 1e-300);
	/* The global waittime is every routine's deadline. */
	LB_CHECK(lb_last_timeout == 2500);

	LB_CHECK(u_all_out(NULL, &a, &b, &c, &d, &e, &f, &g, &h, &i) == 0);
	LB_CHECK(a == -8 && b == -1600 && c == -320000 && d == -(INT64_C(1) << 40));
	LB_CHECK(e == TRUE && f == 'Z' && g == 0xfe && h == 0.25f && i == -1e300);

	a = 41;
	d = INT64_C(1) << 50;
	h = 3.0f;
	i = 2.5;
	e = FALSE;
	LB_CHECK(u_all_inout(NULL, &a, &d, &h, &i, &e) == 0);
	LB_CHECK(a == 42 && d == INT64_C(1) << 51 && h == 1.5f && i == -2.5 && e == TRUE);

	LB_CHECK(u_ping(NULL, 99) == 0 && lb_seen.ping == 99);
	LB_CHECK(u_swap(NULL, &x, &y) == 0 && x == 2 && y == 1);
	/* A server's error code comes back as it was, and no out value changes. */
	x = 5;
	y = 13;
	LB_CHECK(u_swap(NULL, &x, &y) == 1234 && x == 5 && y == 13);
}

/*
 * arrays.defs
 */

kern_return_t
do_fixed(mach_port_t server, vec3_t v, vec3_t w, vec3_t io)
{
	for (int k = 0; k < 3; k++) {
		w[k] = v[k] * 2;
		io[k] += v[k];
	}
	return KERN_SUCCESS;
}

kern_return_t
do_points(mach_port_t server, point_t p, point_t *q, point_t *r)
{
	q->x = p.y;
	q->y = p.x;
	r->x += p.x;
	r->y += p.y;
	return KERN_SUCCESS;
}

kern_return_t
do_samples(mach_port_t server, samples_t s, mach_msg_type_number_t sCnt, samples_t t,
	   mach_msg_type_number_t *tCnt)
{
	if (*tCnt != 64)
		return 1;
	for (mach_msg_type_number_t k = 0; k < sCnt; k++)
		t[k] = s[sCnt - 1 - k];
	*tCnt = sCnt;
	return KERN_SUCCESS;
}

kern_return_t
do_split(mach_port_t server, vals_t data, mach_msg_type_number_t dataCnt, vals_t lo,
	 mach_msg_type_number_t *loCnt, longs_t hi, mach_msg_type_number_t *hiCnt, int *n)
{
	mach_msg_type_number_t nlo = 0, nhi = 0;

	if (*loCnt != 100 || *hiCnt != 50)
		return 1;
	for (mach_msg_type_number_t k = 0; k < dataCnt; k++) {
		if (data[k] < 0)
			lo[nlo++] = data[k];
		else if (nhi < 50)
			hi[nhi++] = (int64_t)data[k] * 1000000000;
	}
	*loCnt = nlo;
	*hiCnt = dataCnt > 0 && data[0] == 777 ? 51 : nhi;
	*n = (int)dataCnt;
	return KERN_SUCCESS;
}

kern_return_t
do_handles(mach_port_t server, server_handle_t h, server_handle_t *g)
{
	*g = h + 1;
	return KERN_SUCCESS;
}

kern_return_t
do_bytes(mach_port_t server, bytes_t b, mach_msg_type_number_t *bCnt, char *c)
{
	for (mach_msg_type_number_t k = 0; k < *bCnt / 2; k++) {
		unsigned char t = b[k];

		b[k] = b[*bCnt - 1 - k];
		b[*bCnt - 1 - k] = t;
	}
	if (*bCnt < 40)
		b[(*bCnt)++] = '!';
	*c = 'x';
	return KERN_SUCCESS;
}

static void
lb_break_split_count(idl_msg_header_t *req)
{
	((uint32_t *)(void *)req)[6] = 101; /* dataCnt, at 24 */
}

static void
lb_grow_request(idl_msg_header_t *req)
{
	req->size += 8;
}

static void
lb_break_hi_count(idl_msg_header_t *rep)
{
	((uint32_t *)(void *)rep)[7] = 51; /* hiCnt, at 28 */
}

static void
lb_arrays(void)
{
	vec3_t v = { 1, 2, 3 }, w = { 0 }, io = { 10, 20, 30 };
	point_t p = { 3, 4 }, q = { 0, 0 }, r = { 100, 200 };
	samples_t s, t;
	mach_msg_type_number_t tCnt = 64, loCnt, hiCnt, bCnt;
	vals_t data, lo;
	longs_t hi;
	bytes_t b;
	user_handle_t g = 0;
	char c = 0;
	int n = 0;

	LB_CHECK(fixed(NULL, v, w, io) == 0);
	LB_CHECK(w[0] == 2 && w[2] == 6 && io[0] == 11 && io[2] == 33);
	LB_CHECK(points(NULL, p, &q, &r) == 0);
	LB_CHECK(q.x == 4 && q.y == 3 && r.x == 103 && r.y == 204);

	for (int k = 0; k < 64; k++)
		s[k] = (short)(k - 32);
	LB_CHECK(samples(NULL, s, 64, t, &tCnt) == 0 && tCnt == 64 && t[0] == 31);
	tCnt = 64;
	LB_CHECK(samples(NULL, s, 0, t, &tCnt) == 0 && tCnt == 0);
	LB_CHECK(samples(NULL, s, 65, t, &tCnt) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(lb_detail_is("arrays.samples: s: 65 elements, above its bound 64"));
	/* A caller's buffer too small: what fits is copied, the count is the true one. */
	memset(t, 0, sizeof t);
	tCnt = 3;
	LB_CHECK(samples(NULL, s, 10, t, &tCnt) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(tCnt == 10 && t[0] == -23 && t[2] == -25 && t[3] == 0);
	LB_CHECK(lb_detail_is("arrays.samples: t: 10 elements came, room for 3"));

	/* Two variable out arrays: the second one moves down behind the first. */
	for (int k = 0; k < 100; k++)
		data[k] = k % 3 == 0 ? -k - 1 : k;
	loCnt = 100;
	hiCnt = 50;
	LB_CHECK(split(NULL, data, 20, lo, &loCnt, hi, &hiCnt, &n) == 0);
	LB_CHECK(n == 20 && loCnt == 7 && hiCnt == 13);
	LB_CHECK(lo[0] == -1 && lo[6] == -19);
	LB_CHECK(hi[0] == INT64_C(1000000000) && hi[12] == INT64_C(19000000000));
	loCnt = 100;
	hiCnt = 50;
	LB_CHECK(split(NULL, data, 0, lo, &loCnt, hi, &hiCnt, &n) == 0);
	LB_CHECK(n == 0 && loCnt == 0 && hiCnt == 0);
	/* The server routine's count above the bound is refused by the server stub. */
	data[0] = 777;
	LB_CHECK(split(NULL, data, 5, lo, &loCnt, hi, &hiCnt, &n) == MIG_ARRAY_TOO_LARGE);
	data[0] = -1;

	/* Malformed requests and replies. */
	loCnt = 100;
	hiCnt = 50;
	lb_tamper_request = lb_break_split_count;
	LB_CHECK(split(NULL, data, 4, lo, &loCnt, hi, &hiCnt, &n) == MIG_BAD_ARGUMENTS);
	lb_tamper_request = lb_grow_request;
	LB_CHECK(split(NULL, data, 4, lo, &loCnt, hi, &hiCnt, &n) == MIG_BAD_ARGUMENTS);
	LB_CHECK(fixed(NULL, v, w, io) == MIG_BAD_ARGUMENTS);
	lb_tamper_request = NULL;
	lb_tamper_reply = lb_break_hi_count;
	LB_CHECK(split(NULL, data, 4, lo, &loCnt, hi, &hiCnt, &n) == MIG_TYPE_ERROR);
	LB_CHECK(lb_detail_is("arrays.split: malformed reply"));
	lb_tamper_reply = NULL;

	LB_CHECK(handles(NULL, 41, &g) == 0 && g == 42);

	memcpy(b, "abc", 3);
	bCnt = 3;
	LB_CHECK(bytes(NULL, b, &bCnt, &c) == 0);
	LB_CHECK(bCnt == 4 && memcmp(b, "cba!", 4) == 0 && c == 'x');
	bCnt = 41;
	LB_CHECK(bytes(NULL, b, &bCnt, &c) == MIG_ARRAY_TOO_LARGE);
}

/*
 * strings.defs
 */

static char lb_note[32];

kern_return_t
S_str_lookup(mach_port_t server, path_t path, path_t canon, name_t name)
{
	const char *slash = strrchr(path, '/');

	if (strlen(path) > 40)
		snprintf(canon, 64, "%s", path);
	else
		snprintf(canon, 64, "/canon%s", path);
	if (strcmp(path, "/unterminated") == 0)
		memset(canon, 'u', 64);
	snprintf(name, 32, "%s", slash != NULL ? slash + 1 : path);
	return KERN_SUCCESS;
}

kern_return_t
S_str_greet(mach_port_t server, name_t who, path_t msg, name_t tag)
{
	size_t len = strlen(msg);

	/* The test's strings are short: "hello" and a name. */
	if (len + 2 + strlen(who) >= 64)
		return 1;
	memcpy(msg + len, ", ", 2);
	memcpy(msg + len + 2, who, strlen(who) + 1);
	for (char *p = tag; *p != '\0'; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	return KERN_SUCCESS;
}

kern_return_t
S_str_note(mach_port_t server, name_t line)
{
	snprintf(lb_note, sizeof lb_note, "%s", line);
	return KERN_SUCCESS;
}

kern_return_t
S_str_blob(mach_port_t server, blob_t data, mach_msg_type_number_t dataCnt, blob_t back,
	   mach_msg_type_number_t *backCnt, int64_t *total)
{
	*total = 0;
	if (*backCnt != 20000)
		return 1;
	for (mach_msg_type_number_t k = 0; k < dataCnt; k++) {
		back[k] = data[dataCnt - 1 - k];
		*total += data[k];
	}
	*backCnt = dataCnt;
	return KERN_SUCCESS;
}

static void
lb_unterminate_who(idl_msg_header_t *req)
{
	/* greet: whoCnt at 88 (after msg[64] at 24), its data at 96. */
	uint32_t cnt = ((uint32_t *)(void *)req)[22];

	((char *)req)[96 + cnt - 1] = 'X';
}

static void
lb_unterminate_path(idl_msg_header_t *req)
{
	memset((char *)req + 24, 'p', 64);
}

/* String arguments are buffers of their declared type, as MIG's are. */
static char *
lb_path(path_t buf, const char *s)
{
	snprintf(buf, sizeof(path_t), "%s", s);
	return buf;
}

static char *
lb_name(name_t buf, const char *s)
{
	snprintf(buf, sizeof(name_t), "%s", s);
	return buf;
}

static void
lb_strings(void)
{
	path_t path, canon, msg;
	name_t who, name, tag;
	char long_name[40];
	mach_msg_type_number_t backCnt = 20000;
	int *data = malloc(sizeof(blob_t)), *back = malloc(sizeof(blob_t));
	int64_t total = 0;

	LB_CHECK(str_lookup(NULL, lb_path(path, "/usr/lib/x"), canon, name) == 0);
	LB_CHECK(strcmp(canon, "/canon/usr/lib/x") == 0 && strcmp(name, "x") == 0);
	lb_path(path, "/a/very/long/path/with/many/parts/in/it/xyz");
	LB_CHECK(str_lookup(NULL, path, canon, name) == 0 && strcmp(canon, path) == 0);
	lb_path(path, "/unterminated");
	LB_CHECK(str_lookup(NULL, path, canon, name) == MIG_ARRAY_TOO_LARGE);

	snprintf(msg, sizeof msg, "hello");
	snprintf(tag, sizeof tag, "mixed Case");
	LB_CHECK(str_greet(NULL, lb_name(who, "world"), msg, tag) == 0);
	LB_CHECK(strcmp(msg, "hello, world") == 0 && strcmp(tag, "MIXED CASE") == 0);
	/* A string of 32 characters has no room for its NUL in c_string[*:32]. */
	memset(long_name, 'n', sizeof long_name);
	long_name[32] = '\0';
	LB_CHECK(str_greet(NULL, long_name, msg, tag) == MIG_ARRAY_TOO_LARGE);
	long_name[31] = '\0';
	LB_CHECK(str_note(NULL, long_name) == 0 && strcmp(lb_note, long_name) == 0);
	lb_tamper_request = lb_unterminate_who;
	LB_CHECK(str_greet(NULL, lb_name(who, "who"), msg, tag) == MIG_BAD_ARGUMENTS);
	lb_tamper_request = lb_unterminate_path;
	LB_CHECK(str_lookup(NULL, lb_path(path, "/p"), canon, name) == MIG_BAD_ARGUMENTS);
	lb_tamper_request = NULL;

	/* Above 64 KiB the stubs build their messages on the heap. */
	LB_CHECK(data != NULL && back != NULL);
	if (data == NULL || back == NULL)
		return;
	for (int k = 0; k < 20000; k++)
		data[k] = k;
	LB_CHECK(str_blob(NULL, data, 20000, back, &backCnt, &total) == 0);
	LB_CHECK(backCnt == 20000 && back[0] == 19999 && back[19999] == 0);
	LB_CHECK(total == (int64_t)19999 * 20000 / 2);
	backCnt = 100;
	LB_CHECK(str_blob(NULL, data, 20000, back, &backCnt, &total) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(backCnt == 20000 && back[99] == 19900);
	LB_CHECK(str_blob(NULL, data, 20001, back, &backCnt, &total) == MIG_ARRAY_TOO_LARGE);
	free(data);
	free(back);
}

/* Ids outside a subsystem, and skipped ones, are MIG_BAD_ID with a well-formed reply. */
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
