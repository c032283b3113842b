/*
 * loopback_async.c - the asynchronous stubs of scalars, arrays, strings and bench through
 * loopback.c's stand-in of the asynchronous runtime: several calls in flight, completed out
 * of order (the newest first) in a dispatch, never inside <routine>_async; every out argument
 * the done functions get, the borrowed ones inside the call's reply; calls the stubs refuse
 * themselves, calls the runtime refuses, cancelled calls, and malformed replies, whose done
 * functions get the MIG error, idl_errdetail() naming it, and every out argument 0 or NULL.
 *
 * Each done function checks what it got while it runs (a borrowed argument is valid only
 * then) and notes in its ctx, a struct lb_seen, that it ran, in which order, with which code
 * and whether every argument was as expected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "bench.h"
#include "loopback.h"
#include "scalars.h"
#include "strings.h"

static int lb_order;

struct lb_seen *
lb_saw(void *ctx, kern_return_t kr)
{
	struct lb_seen *w = ctx;

	w->ran++;
	w->order = ++lb_order;
	w->kr = kr;
	snprintf(w->detail, sizeof w->detail, "%s", lb_detail);
	return w;
}

int
lb_borrowed(const void *p, size_t n)
{
	const char *rep = (const char *)lb_async_rep, *q = p;

	return rep != NULL && q != NULL && q >= rep + IDL_MSG_HEADER_SIZE &&
	       n <= lb_async_rep->size && q - rep <= (ptrdiff_t)(lb_async_rep->size - n);
}

int
lb_dispatch(void)
{
	return idl_port_dispatch(NULL, 1000);
}

int
lb_saw_detail(struct lb_seen *w, const char *want)
{
	int same = strcmp(w->detail, want) == 0;

	if (!same)
		fprintf(stderr, "done saw detail \"%s\", expected \"%s\"\n", w->detail, want);
	snprintf(lb_detail, sizeof lb_detail, "an earlier failure");
	return same;
}

/*
 * scalars.defs
 */

static void
lb_all_in_done(void *ctx, kern_return_t kr)
{
	lb_saw(ctx, kr)->ok = 1;
}

static void
lb_all_out_done(void *ctx, kern_return_t kr, int8_t a, int16_t b, int c, int64_t d, boolean_t e,
		char f, uint8_t g, float h, double i)
{
	lb_saw(ctx, kr)->ok = a == -8 && b == -1600 && c == -320000 && d == -(INT64_C(1) << 40) &&
			      e == TRUE && f == 'Z' && g == 0xfe && h == 0.25f && i == -1e300;
}

static void
lb_all_inout_done(void *ctx, kern_return_t kr, int8_t a, int64_t d, float h, double i, boolean_t e)
{
	lb_saw(ctx, kr)->ok =
		a == 42 && d == INT64_C(1) << 51 && h == 1.5f && i == -2.5 && e == TRUE;
}

static void
lb_swap_done(void *ctx, kern_return_t kr, int x, int y)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = 1;
	w->v[0] = x;
	w->v[1] = y;
}

static void
lb_async_scalars(void)
{
	struct lb_seen in, out, io, sw, err;
	idl_async_t *h = NULL;

	memset(&in, 0, sizeof in);
	memset(&out, 0, sizeof out);
	memset(&io, 0, sizeof io);
	memset(&sw, 0, sizeof sw);
	memset(&err, 0, sizeof err);
	/* Five calls in flight; nothing completes inside a stub. */
	LB_CHECK(u_all_in_async(NULL, -5, 30000, -7, INT64_MIN, TRUE, 'q', 200, 1.5f, 1e-300,
				lb_all_in_done, &in, &h) == 0);
	LB_CHECK(h != NULL && lb_last_timeout == 2500);
	idl_async_release(h); /* before it completed: the call goes on */
	LB_CHECK(u_all_out_async(NULL, lb_all_out_done, &out, NULL) == 0);
	LB_CHECK(u_all_inout_async(NULL, 41, INT64_C(1) << 50, 3.0f, 2.5, FALSE, lb_all_inout_done,
				   &io, NULL) == 0);
	LB_CHECK(u_swap_async(NULL, 1, 2, lb_swap_done, &sw, NULL) == 0);
	/* A server's error comes back as the call's code, with no out value. */
	LB_CHECK(u_swap_async(NULL, 5, 13, lb_swap_done, &err, NULL) == 0);
	LB_CHECK(in.ran + out.ran + io.ran + sw.ran + err.ran == 0);
	lb_order = 0;
	LB_CHECK(lb_dispatch() == 5);
	LB_CHECK(in.ran == 1 && out.ran == 1 && io.ran == 1 && sw.ran == 1 && err.ran == 1);
	/* Out of order: the newest first. */
	LB_CHECK(err.order == 1 && sw.order == 2 && io.order == 3 && out.order == 4 &&
		 in.order == 5);
	LB_CHECK(in.kr == 0 && in.ok && out.kr == 0 && out.ok && io.kr == 0 && io.ok);
	LB_CHECK(sw.kr == 0 && sw.v[0] == 2 && sw.v[1] == 1);
	LB_CHECK(err.kr == 1234 && err.v[0] == 0 && err.v[1] == 0);
	LB_CHECK(lb_dispatch() == 0);
}

/*
 * arrays.defs
 */

static void
lb_fixed_done(void *ctx, kern_return_t kr, const int *w, const int *io)
{
	lb_saw(ctx, kr)->ok = lb_borrowed(w, 3 * sizeof *w) && lb_borrowed(io, 3 * sizeof *io) &&
			      w[0] == 2 && w[2] == 6 && io[0] == 11 && io[2] == 33;
}

static void
lb_points_done(void *ctx, kern_return_t kr, const point_t *q, const point_t *r)
{
	lb_saw(ctx, kr)->ok = lb_borrowed(q, sizeof *q) && lb_borrowed(r, sizeof *r) && q->x == 4 &&
			      q->y == 3 && r->x == 103 && r->y == 204;
}

static void
lb_samples_done(void *ctx, kern_return_t kr, const short *t, mach_msg_type_number_t tCnt)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = lb_borrowed(t, tCnt * sizeof *t);
	for (mach_msg_type_number_t k = 0; k < tCnt; k++)
		if (t[k] != (short)(tCnt - 1 - k - 32))
			w->ok = 0;
	w->v[0] = tCnt;
}

static void
lb_split_done(void *ctx, kern_return_t kr, const int *lo, mach_msg_type_number_t loCnt,
	      const int64_t *hi, mach_msg_type_number_t hiCnt, int n)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	if (kr != KERN_SUCCESS) {
		w->ok = lo == NULL && loCnt == 0 && hi == NULL && hiCnt == 0 && n == 0;
		return;
	}
	w->ok = lb_borrowed(lo, loCnt * sizeof *lo) && lb_borrowed(hi, hiCnt * sizeof *hi) &&
		n == 20 && loCnt == 7 && hiCnt == 13 && lo[0] == -1 && lo[6] == -19 &&
		hi[0] == INT64_C(1000000000) && hi[12] == INT64_C(19000000000);
}

static void
lb_handles_done(void *ctx, kern_return_t kr, user_handle_t g)
{
	lb_saw(ctx, kr)->ok = g == 42;
}

static void
lb_bytes_done(void *ctx, kern_return_t kr, const unsigned char *b, mach_msg_type_number_t bCnt,
	      char c)
{
	lb_saw(ctx, kr)->ok =
		lb_borrowed(b, bCnt) && bCnt == 4 && memcmp(b, "cba!", 4) == 0 && c == 'x';
}

/* split's reply: hiCnt (at 28) one above its bound. */
static void
lb_break_hi(idl_msg_header_t *rep)
{
	((uint32_t *)(void *)rep)[7] = 51;
}

static void
lb_async_arrays(void)
{
	vec3_t v = { 1, 2, 3 }, io = { 10, 20, 30 };
	point_t p = { 3, 4 }, r = { 100, 200 };
	samples_t s;
	vals_t data;
	struct lb_seen fx, pt, sm, sp, bad, hd, by;
	idl_async_t *h = NULL;

	memset(&fx, 0, sizeof fx);
	memset(&pt, 0, sizeof pt);
	memset(&sm, 0, sizeof sm);
	memset(&sp, 0, sizeof sp);
	memset(&bad, 0, sizeof bad);
	memset(&hd, 0, sizeof hd);
	memset(&by, 0, sizeof by);
	for (int k = 0; k < 64; k++)
		s[k] = (short)(k - 32);
	for (int k = 0; k < 100; k++)
		data[k] = k % 3 == 0 ? -k - 1 : k;
	LB_CHECK(fixed_async(NULL, v, io, lb_fixed_done, &fx, NULL) == 0);
	/* Inline arguments were copied: the caller may change them at once. */
	v[0] = io[0] = -1000;
	LB_CHECK(points_async(NULL, p, r, lb_points_done, &pt, NULL) == 0);
	LB_CHECK(samples_async(NULL, s, 10, lb_samples_done, &sm, NULL) == 0);
	LB_CHECK(split_async(NULL, data, 20, lb_split_done, &sp, NULL) == 0);
	LB_CHECK(handles_async(NULL, 41, lb_handles_done, &hd, NULL) == 0);
	LB_CHECK(bytes_async(NULL, (const unsigned char *)"abc", 3, lb_bytes_done, &by, NULL) == 0);
	memset(s, 0, sizeof s);
	memset(data, 0, sizeof data);
	LB_CHECK(lb_dispatch() == 6);
	LB_CHECK(fx.ran == 1 && fx.kr == 0 && fx.ok && pt.ran == 1 && pt.kr == 0 && pt.ok);
	LB_CHECK(sm.ran == 1 && sm.kr == 0 && sm.ok && sm.v[0] == 10);
	LB_CHECK(sp.ran == 1 && sp.kr == 0 && sp.ok && hd.kr == 0 && hd.ok);
	LB_CHECK(by.ran == 1 && by.kr == 0 && by.ok);
	LB_CHECK(by.order < hd.order && hd.order < sp.order && sp.order < fx.order);

	/* Refused by the stub, as the synchronous stub refuses: nothing queued. */
	h = (idl_async_t *)&h;
	LB_CHECK(samples_async(NULL, s, 65, lb_samples_done, &sm, &h) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(h == NULL && lb_detail_is("arrays.samples: s: 65 elements, above its bound 64"));
	LB_CHECK(lb_dispatch() == 0 && sm.ran == 1);

	/* A malformed reply: the MIG error, its detail, every out argument 0 or NULL. */
	for (int k = 0; k < 100; k++)
		data[k] = k % 3 == 0 ? -k - 1 : k;
	LB_CHECK(split_async(NULL, data, 20, lb_split_done, &bad, NULL) == 0);
	lb_tamper_reply = lb_break_hi;
	LB_CHECK(lb_dispatch() == 1);
	lb_tamper_reply = NULL;
	LB_CHECK(bad.ran == 1 && bad.kr == MIG_TYPE_ERROR && bad.ok);
	LB_CHECK(lb_saw_detail(&bad, "arrays.split: malformed reply"));
}

/*
 * strings.defs
 */

static void
lb_lookup_done(void *ctx, kern_return_t kr, const char *canon, const char *name)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	if (kr != KERN_SUCCESS) {
		w->ok = canon == NULL && name == NULL;
		return;
	}
	w->ok = lb_borrowed(canon, 64) && lb_borrowed(name, strlen(name) + 1) &&
		strcmp(canon, "/canon/usr/lib/x") == 0 && strcmp(name, "x") == 0;
}

static void
lb_greet_done(void *ctx, kern_return_t kr, const char *msg, const char *tag)
{
	lb_saw(ctx, kr)->ok = lb_borrowed(msg, 64) && lb_borrowed(tag, strlen(tag) + 1) &&
			      strcmp(msg, "hello, world") == 0 && strcmp(tag, "MIXED CASE") == 0;
}

static void
lb_blob_done(void *ctx, kern_return_t kr, const int *back, mach_msg_type_number_t backCnt,
	     int64_t total)
{
	lb_saw(ctx, kr)->ok = lb_borrowed(back, backCnt * sizeof *back) && backCnt == 20000 &&
			      back[0] == 19999 && back[19999] == 0 &&
			      total == (int64_t)19999 * 20000 / 2;
}

static void
lb_async_strings(void)
{
	struct lb_seen lk, un, gr, bl;
	char who[40], msg[8], tag[16];
	int *data = malloc(20000 * sizeof *data);

	memset(&lk, 0, sizeof lk);
	memset(&un, 0, sizeof un);
	memset(&gr, 0, sizeof gr);
	memset(&bl, 0, sizeof bl);
	LB_CHECK(data != NULL);
	if (data == NULL)
		return;
	LB_CHECK(str_lookup_async(NULL, "/usr/lib/x", lb_lookup_done, &lk, NULL) == 0);
	/* The server's canon has no NUL: its stub sends MIG_ARRAY_TOO_LARGE instead. */
	LB_CHECK(str_lookup_async(NULL, "/unterminated", lb_lookup_done, &un, NULL) == 0);
	snprintf(who, sizeof who, "world");
	snprintf(msg, sizeof msg, "hello");
	snprintf(tag, sizeof tag, "mixed Case");
	LB_CHECK(str_greet_async(NULL, who, msg, tag, lb_greet_done, &gr, NULL) == 0);
	memset(who, 'x', sizeof who - 1); /* copied at the call */
	who[sizeof who - 1] = '\0';
	/* Above 64 KiB: the request in a malloc()ed buffer, freed when the stub returns. */
	for (int k = 0; k < 20000; k++)
		data[k] = k;
	LB_CHECK(str_blob_async(NULL, data, 20000, lb_blob_done, &bl, NULL) == 0);
	memset(data, 0, 20000 * sizeof *data);
	LB_CHECK(lb_dispatch() == 4);
	LB_CHECK(lk.ran == 1 && lk.kr == 0 && lk.ok);
	LB_CHECK(un.ran == 1 && un.kr == MIG_ARRAY_TOO_LARGE && un.ok);
	LB_CHECK(gr.ran == 1 && gr.kr == 0 && gr.ok && bl.ran == 1 && bl.kr == 0 && bl.ok);
	/* who has 39 characters, c_string[*:32] room for 31. */
	LB_REFUSED(str_greet_async(NULL, who, msg, tag, lb_greet_done, &lb_w, &lb_h),
		   MIG_ARRAY_TOO_LARGE, "strings.greet: who: longer than 31 characters");
	LB_REFUSED(str_blob_async(NULL, data, 20001, lb_blob_done, &lb_w, &lb_h),
		   MIG_ARRAY_TOO_LARGE,
		   "strings.blob: data: 20001 elements, above its bound 20000");
	free(data);
}

/*
 * bench.defs
 */

static void
lb_null_done(void *ctx, kern_return_t kr)
{
	lb_saw(ctx, kr)->ok = 1;
}

static void
lb_add_done(void *ctx, kern_return_t kr, int sum)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = 1;
	w->v[0] = sum;
}

static void
lb_intrpc_done(void *ctx, kern_return_t kr, int y, int err)
{
	lb_saw(ctx, kr)->ok = y == -8 && err == -1;
}

static void
lb_big_done(void *ctx, kern_return_t kr, const char *data)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = lb_borrowed(data, 200);
	w->v[0] = w->ok ? data[0] : 0;
	w->v[1] = w->ok ? data[100] : 0;
	w->v[2] = w->ok ? data[199] : 0;
}

static void
lb_echo_done(void *ctx, kern_return_t kr, const char *r)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = lb_borrowed(r, strlen(r) + 1);
	w->v[0] = (int64_t)strlen(r);
	for (size_t k = 0; r[k] != '\0'; k++)
		if (r[k] != 'e')
			w->ok = 0;
}

static void
lb_sum_done(void *ctx, kern_return_t kr, int64_t total)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = 1;
	w->v[0] = total;
}

static void
lb_ool_done(void *ctx, kern_return_t kr)
{
	lb_saw(ctx, kr)->ok = 1;
}

static void
lb_async_bench_calls(void)
{
	struct lb_seen nl, add[3], rpc, bo, bio, echo[6], sum, o64, o1m, obad;
	big_t big;
	text_t s;
	ints_t data;
	long live = lb_ool_live;
	char *ool = idl_ool_alloc(1024u * 1024u);

	memset(&nl, 0, sizeof nl);
	memset(add, 0, sizeof add);
	memset(&rpc, 0, sizeof rpc);
	memset(&bo, 0, sizeof bo);
	memset(&bio, 0, sizeof bio);
	memset(echo, 0, sizeof echo);
	memset(&sum, 0, sizeof sum);
	memset(&o64, 0, sizeof o64);
	memset(&o1m, 0, sizeof o1m);
	memset(&obad, 0, sizeof obad);
	LB_CHECK(ool != NULL);
	if (ool == NULL)
		return;
	LB_CHECK(bench_null_async(NULL, lb_null_done, &nl, NULL) == 0);
	LB_CHECK(lb_last_timeout == IDL_TIMEOUT_DEFAULT);
	LB_CHECK(bench_add_async(NULL, 2, 40, lb_add_done, &add[0], NULL) == 0);
	LB_CHECK(bench_add_async(NULL, INT32_MAX, 1, lb_add_done, &add[1], NULL) == 0);
	LB_CHECK(bench_add_async(NULL, -3, -4, lb_add_done, &add[2], NULL) == 0);
	LB_CHECK(bench_intrpc_async(NULL, -4, lb_intrpc_done, &rpc, NULL) == 0);
	LB_CHECK(bench_bigout_async(NULL, lb_big_done, &bo, NULL) == 0);
	memset(big, 'x', sizeof big);
	big[100] = 'a';
	LB_CHECK(bench_biginout_async(NULL, big, lb_big_done, &bio, NULL) == 0);
	memset(big, 0, sizeof big);
	for (int k = 0; k < 6; k++) {
		memset(s, 'e', (size_t)(k * 51));
		s[k * 51] = '\0';
		LB_CHECK(bench_echo_async(NULL, s, lb_echo_done, &echo[k], NULL) == 0);
	}
	for (int k = 0; k < 1024; k++)
		data[k] = k;
	LB_CHECK(bench_sum_async(NULL, data, 1024, lb_sum_done, &sum, NULL) == 0);
	/* Out of line: read when the request is sent, in the dispatch; kept until then. */
	memset(ool, 'O', 1024u * 1024u);
	LB_CHECK(bench_ool64k_async(NULL, ool, 64u * 1024u, lb_ool_done, &o64, NULL) == 0);
	LB_CHECK(bench_ool1m_async(NULL, ool, 1024u * 1024u, lb_ool_done, &o1m, NULL) == 0);
	LB_CHECK(bench_ool64k_async(NULL, ool, 100, lb_ool_done, &obad, NULL) == 0);
	LB_CHECK(lb_dispatch() == 17);
	idl_ool_free(ool, 1024u * 1024u);
	LB_CHECK(nl.ran == 1 && nl.kr == 0 && nl.ok);
	LB_CHECK(add[0].kr == 0 && add[0].v[0] == 42 && add[1].v[0] == INT32_MIN &&
		 add[2].v[0] == -7);
	LB_CHECK(add[2].order < add[1].order && add[1].order < add[0].order);
	LB_CHECK(rpc.ran == 1 && rpc.kr == 0 && rpc.ok);
	LB_CHECK(bo.kr == 0 && bo.ok && bo.v[0] == 'o' && bo.v[2] == 'o');
	LB_CHECK(bio.kr == 0 && bio.ok && bio.v[0] == 'x' && bio.v[1] == 'b');
	for (int k = 0; k < 6; k++)
		LB_CHECK(echo[k].ran == 1 && echo[k].kr == 0 && echo[k].ok &&
			 echo[k].v[0] == k * 51);
	LB_CHECK(sum.kr == 0 && sum.v[0] == 1023 * 1024 / 2);
	LB_CHECK(o64.kr == 0 && o1m.kr == 0 && obad.ran == 1 && obad.kr == 1);
	LB_CHECK(lb_ool_live == live);
}

static void
lb_async_bench(void)
{
	struct lb_seen a, c, rel;
	idl_async_t *h = NULL, *hc = NULL;
	text_t s;
	ints_t data;
	uint32_t seqno;

	lb_async_bench_calls();
	memset(&a, 0, sizeof a);
	memset(&c, 0, sizeof c);
	memset(&rel, 0, sizeof rel);

	/* Refused by the stub. */
	memset(s, 'e', sizeof s);
	LB_REFUSED(bench_echo_async(NULL, s, lb_echo_done, &lb_w, &lb_h), MIG_ARRAY_TOO_LARGE,
		   "bench.echo: s: longer than 255 characters");
	memset(data, 0, sizeof data);
	LB_REFUSED(bench_sum_async(NULL, data, 1025, lb_sum_done, &lb_w, &lb_h),
		   MIG_ARRAY_TOO_LARGE, "bench.sum: data: 1025 elements, above its bound 1024");
	/* Refused by the runtime (a full send queue): its code, and no done function. */
	lb_async_refuse = IDL_EAGAIN;
	h = (idl_async_t *)&h;
	LB_CHECK(bench_add_async(NULL, 1, 2, lb_add_done, &a, &h) == IDL_EAGAIN && h == NULL);
	lb_async_refuse = 0;
	LB_CHECK(lb_dispatch() == 0 && a.ran == 0);

	/* Cancelled: never served; the done function runs once, in the dispatch, with
	 * IDL_ECANCELED and no out value. A handle released before completion, and one
	 * released after. */
	seqno = lb_seqno;
	LB_CHECK(bench_add_async(NULL, 1, 2, lb_add_done, &c, &hc) == 0 && hc != NULL);
	LB_CHECK(idl_async_cancel(hc) == 0 && c.ran == 0);
	LB_CHECK(bench_add_async(NULL, 3, 4, lb_add_done, &rel, &h) == 0 && h != NULL);
	idl_async_release(h);
	LB_CHECK(lb_dispatch() == 2);
	LB_CHECK(c.ran == 1 && c.kr == IDL_ECANCELED && c.v[0] == 0);
	LB_CHECK(rel.ran == 1 && rel.kr == 0 && rel.v[0] == 7);
	LB_CHECK(lb_seqno == seqno + 1); /* only the second was served */
	LB_CHECK(idl_async_cancel(hc) == 0); /* completed already: nothing happens */
	idl_async_release(hc);
	LB_CHECK(c.ran == 1 && lb_dispatch() == 0);
}

void
lb_async(void)
{
	lb_async_scalars();
	lb_async_arrays();
	lb_async_strings();
	lb_async_bench();
}
