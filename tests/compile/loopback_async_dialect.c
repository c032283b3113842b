/*
 * loopback_async_dialect.c - the asynchronous stubs of dialect.defs through loopback.c's
 * stand-in of the asynchronous runtime: out-of-line data and ports the done functions own
 * (and free: the ownership account of loopback_dialect.c, lb_ool_live, comes back to where
 * it was), records borrowed from the reply, a `countinout` array checked against the room
 * the caller gave, dealloc data consumed by calls that are accepted, refused or cancelled,
 * the deadline and the tokens, and a malformed reply whose descriptors are released.
 */
#include <stdint.h>
#include <string.h>

#include "dialect.h"
#include "loopback.h"

static void
lb_ool_in_done(void *ctx, kern_return_t kr, int sum)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = 1;
	w->v[0] = sum;
}

/* Owned: the done function frees what it got. */
static void
lb_ool_out_done(void *ctx, kern_return_t kr, dl_bytes_t data, mach_msg_type_number_t dataCnt)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	if (kr != KERN_SUCCESS) {
		w->ok = data == NULL && dataCnt == 0;
		return;
	}
	w->ok = data != NULL && dataCnt == 30 && data[0] == 'a' && data[29] == 'd' &&
		!lb_borrowed(data, 1);
	idl_ool_free(data, dataCnt);
}

static void
lb_ool_inout_done(void *ctx, kern_return_t kr, dl_ints_t data, mach_msg_type_number_t dataCnt)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	if (kr != KERN_SUCCESS) {
		w->ok = data == NULL && dataCnt == 0;
		return;
	}
	w->ok = data != NULL && dataCnt == 4 && data[0] == 3 && data[2] == 1 && data[3] == 99;
	idl_ool_free(data, dataCnt * sizeof *data);
}

static void
lb_ool_fixed_done(void *ctx, kern_return_t kr, page_ptr_t back)
{
	lb_saw(ctx, kr)->ok = back != NULL && back[0] == 1 && back[63] == 64;
	idl_ool_free(back, 64);
}

static void
lb_records_done(void *ctx, kern_return_t kr, const dl_rec_t *first)
{
	lb_saw(ctx, kr)->ok = lb_borrowed(first, sizeof *first) && first->a == 2 &&
			      first->b == 25 && first->c == 'y';
}

static void
lb_ports_done(void *ctx, kern_return_t kr, mach_port_t q, mach_port_t qp,
	      mach_msg_type_name_t qpPoly)
{
	lb_saw(ctx, kr)->ok = q == LB_PB && qp == LB_PA && qpPoly == MACH_MSG_TYPE_MOVE_SEND;
}

static void
lb_port_array_done(void *ctx, kern_return_t kr, mach_port_array_t back,
		   mach_msg_type_number_t backCnt)
{
	lb_saw(ctx, kr)->ok = back != NULL && backCnt == 3 && back[0] == LB_PC && back[2] == LB_PA;
	idl_ool_free(back, backCnt * sizeof *back);
}

static void
lb_inline_ports_done(void *ctx, kern_return_t kr, int n)
{
	lb_saw(ctx, kr)->ok = n == 2;
}

static void
lb_counted_done(void *ctx, kern_return_t kr, const int *vals, mach_msg_type_number_t valsCnt)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->v[0] = valsCnt;
	if (kr != KERN_SUCCESS) {
		w->ok = vals == NULL && valsCnt == 0;
		return;
	}
	w->ok = lb_borrowed(vals, valsCnt * sizeof *vals);
	for (mach_msg_type_number_t k = 0; k < valsCnt; k++)
		if (vals[k] != (int)(k * k))
			w->ok = 0;
}

static void
lb_seqno_done(void *ctx, kern_return_t kr, mach_port_seqno_t got)
{
	lb_saw(ctx, kr)->ok = got == lb_seqno;
}

static void
lb_deferred_done(void *ctx, kern_return_t kr, int y, dl_bytes_t data,
		 mach_msg_type_number_t dataCnt)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->v[0] = y;
	w->ok = data != NULL && dataCnt == 3 && memcmp(data, "dfr", 3) == 0;
	idl_ool_free(data, dataCnt);
}

static void
lb_timed_done(void *ctx, kern_return_t kr, dl_word_t v)
{
	lb_saw(ctx, kr)->ok = v == 5;
}

static void
lb_creds_done(void *ctx, kern_return_t kr, int uid)
{
	lb_saw(ctx, kr)->ok = uid == 4242;
}

static void
lb_translated_done(void *ctx, kern_return_t kr, ms_t y, obj_t o)
{
	lb_saw(ctx, kr)->ok = y == 21 && o == NULL;
}

static void
lb_nothing_done(void *ctx, kern_return_t kr)
{
	lb_saw(ctx, kr)->ok = 1;
}

static void
lb_scopy_done(void *ctx, kern_return_t kr, int n)
{
	lb_saw(ctx, kr)->ok = n == 4;
}

static void
lb_overwrite_done(void *ctx, kern_return_t kr, dl_bytes_t data, mach_msg_type_number_t dataCnt)
{
	lb_saw(ctx, kr)->ok = data != NULL && dataCnt == 12 && strcmp(data, "overwritten") == 0;
	idl_ool_free(data, dataCnt);
}

/* ool_inout's reply: a size that is no whole number of ints. */
static void
lb_break_ints(idl_msg_header_t *rep)
{
	((idl_desc_t *)(void *)(rep + 1))[0].size = 6;
}

/* counted's request: a room of 10 instead of the 5 the caller gave. */
static void
lb_widen_room(idl_msg_header_t *req)
{
	((uint32_t *)(void *)req)[6] = 10;
}

static void
lb_async_dialect_ool(void)
{
	char text[] = "hello";
	int in3[3] = { 1, 2, 3 };
	unsigned char page[64];
	dl_rec_t recs[2], r;
	mach_port_t arr[3] = { LB_PA, LB_PB, LB_PC }, few[2] = { LB_PD, LB_PD };
	struct lb_seen in, out, outerr, io, iobad, fx, rc, pt, pa, ip, ow, sc;

	memset(&in, 0, sizeof in);
	memset(&out, 0, sizeof out);
	memset(&outerr, 0, sizeof outerr);
	memset(&io, 0, sizeof io);
	memset(&iobad, 0, sizeof iobad);
	memset(&fx, 0, sizeof fx);
	memset(&rc, 0, sizeof rc);
	memset(&pt, 0, sizeof pt);
	memset(&pa, 0, sizeof pa);
	memset(&ip, 0, sizeof ip);
	memset(&ow, 0, sizeof ow);
	memset(&sc, 0, sizeof sc);
	for (int k = 0; k < 64; k++)
		page[k] = (unsigned char)k;
	memset(recs, 0, sizeof recs);
	memset(&r, 0, sizeof r);
	recs[1].a = 2;
	recs[1].b = 20;
	recs[1].c = 'y';
	r.b = 5;
	LB_CHECK(ool_in_async(NULL, text, 5, lb_ool_in_done, &in, NULL) == 0);
	LB_CHECK(ool_out_async(NULL, 30, lb_ool_out_done, &out, NULL) == 0);
	LB_CHECK(ool_out_async(NULL, -1, lb_ool_out_done, &outerr, NULL) == 0);
	LB_CHECK(ool_inout_async(NULL, in3, 3, lb_ool_inout_done, &io, NULL) == 0);
	LB_CHECK(ool_fixed_async(NULL, page, lb_ool_fixed_done, &fx, NULL) == 0);
	LB_CHECK(records_async(NULL, recs, 2, r, lb_records_done, &rc, NULL) == 0);
	LB_CHECK(ports_async(NULL, LB_PA, LB_PB, MACH_MSG_TYPE_COPY_SEND, LB_PC, lb_ports_done, &pt,
			     NULL) == 0);
	LB_CHECK(port_array_async(NULL, arr, 3, lb_port_array_done, &pa, NULL) == 0);
	LB_CHECK(inline_ports_async(NULL, few, 2, lb_inline_ports_done, &ip, NULL) == 0);
	LB_CHECK(overwrite_out_async(NULL, lb_overwrite_done, &ow, NULL) == 0);
	LB_CHECK(scopy_async(NULL, text, 4, lb_scopy_done, &sc, NULL) == 0);
	LB_CHECK(lb_dispatch() == 11);
	LB_CHECK(in.kr == 0 && in.v[0] == 'h' + 'e' + 'l' + 'l' + 'o');
	LB_CHECK(out.ran == 1 && out.kr == 0 && out.ok && outerr.kr == 1 && outerr.ok);
	LB_CHECK(io.kr == 0 && io.ok && fx.kr == 0 && fx.ok && rc.kr == 0 && rc.ok);
	LB_CHECK(pt.kr == 0 && pt.ok && pa.kr == 0 && pa.ok && ip.kr == 0 && ip.ok);
	LB_CHECK(ow.kr == 0 && ow.ok && sc.kr == 0 && sc.ok);
	LB_CHECK(sc.order < in.order);

	/* A malformed reply with out-of-line data: released by the completion. */
	LB_CHECK(ool_inout_async(NULL, in3, 3, lb_ool_inout_done, &iobad, NULL) == 0);
	lb_tamper_reply = lb_break_ints;
	LB_CHECK(lb_dispatch() == 1);
	lb_tamper_reply = NULL;
	LB_CHECK(iobad.kr == MIG_TYPE_ERROR && iobad.ok);
	LB_CHECK(lb_saw_detail(&iobad, "dialect.ool_inout: malformed reply"));

	/* More ports than the bound: refused by the stub. */
	LB_REFUSED(inline_ports_async(NULL, few, 5, lb_inline_ports_done, &lb_w, &lb_h),
		   MIG_ARRAY_TOO_LARGE, "dialect.inline_ports: ports: 5 ports, above its bound 4");
}

static void
lb_async_dialect_calls(void)
{
	struct lb_seen cn, cnbig, room, sq, df, tm, cr, tr, dr, drc, dre, cne;
	struct idl_cred stok;
	idl_async_t *h = NULL;
	long live;
	char *given;

	memset(&cn, 0, sizeof cn);
	memset(&cnbig, 0, sizeof cnbig);
	memset(&room, 0, sizeof room);
	memset(&sq, 0, sizeof sq);
	memset(&df, 0, sizeof df);
	memset(&tm, 0, sizeof tm);
	memset(&cr, 0, sizeof cr);
	memset(&tr, 0, sizeof tr);
	memset(&dr, 0, sizeof dr);
	memset(&drc, 0, sizeof drc);
	memset(&dre, 0, sizeof dre);
	memset(&cne, 0, sizeof cne);
	/* countinout: the room travels in the request, the reply is checked against it. */
	LB_CHECK(counted_async(NULL, 5, lb_counted_done, &cn, NULL) == 0);
	LB_CHECK(counted_async(NULL, 100, lb_counted_done, &cnbig, NULL) == 0);
	LB_CHECK(lb_dispatch() == 2);
	LB_CHECK(cn.kr == 0 && cn.ok && cn.v[0] == 5 && cnbig.kr == 0 && cnbig.ok &&
		 cnbig.v[0] == 16);
	lb_tamper_request = lb_widen_room;
	LB_CHECK(counted_async(NULL, 5, lb_counted_done, &room, NULL) == 0);
	LB_CHECK(lb_dispatch() == 1);
	lb_tamper_request = NULL;
	LB_CHECK(room.kr == MIG_ARRAY_TOO_LARGE && room.ok);
	LB_CHECK(lb_saw_detail(&room, "dialect.counted: vals: 10 elements came, room for 5"));
	/* Refused by the runtime: the record the stub made for the completion is freed (the
	 * loopback runs under memcheck's leak check). */
	lb_async_refuse = IDL_EAGAIN;
	LB_CHECK(counted_async(NULL, 5, lb_counted_done, &cne, &h) == IDL_EAGAIN && h == NULL);
	lb_async_refuse = 0;

	LB_CHECK(seqno_async(NULL, lb_seqno_done, &sq, NULL) == 0);
	lb_deferred = lb_complete_deferred;
	LB_CHECK(deferred_async(NULL, 21, lb_deferred_done, &df, NULL) == 0);
	LB_CHECK(timed_async(NULL, 1234, lb_timed_done, &tm, NULL) == 0);
	LB_CHECK(lb_last_timeout == 1234); /* the deadline goes with the call */
	memset(&stok, 0, sizeof stok);
	LB_CHECK(creds_async(NULL, &stok, lb_creds_done, &cr, NULL) == 0);
	LB_CHECK(stok.valid && stok.uid == 77); /* filled when the call is accepted */
	LB_CHECK(translated_async(LB_PA, 7, lb_translated_done, &tr, NULL) == 0);
	LB_CHECK(lb_dispatch() == 5);
	lb_deferred = NULL;
	LB_CHECK(sq.kr == 0 && sq.ok && df.kr == 0 && df.ok && df.v[0] == 42);
	LB_CHECK(tm.kr == 0 && tm.ok && cr.kr == 0 && cr.ok && tr.kr == 0 && tr.ok);
	LB_CHECK(cne.ran == 0);

	/* dealloc[]: what the caller gives away is consumed by the call, whether the runtime
	 * accepts it, refuses it, or it is cancelled before it is sent. */
	live = lb_ool_live;
	given = idl_ool_alloc(8);
	LB_CHECK(given != NULL &&
		 dealloc_rt_async(NULL, given, 8, TRUE, lb_nothing_done, &dr, NULL) == 0);
	given = idl_ool_alloc(8);
	LB_CHECK(given != NULL &&
		 dealloc_rt_async(NULL, given, 8, TRUE, lb_nothing_done, &drc, &h) == 0);
	LB_CHECK(idl_async_cancel(h) == 0);
	idl_async_release(h);
	lb_async_refuse = IDL_EAGAIN;
	given = idl_ool_alloc(8);
	LB_CHECK(given != NULL &&
		 dealloc_rt_async(NULL, given, 8, TRUE, lb_nothing_done, &dre, NULL) == IDL_EAGAIN);
	lb_async_refuse = 0;
	LB_CHECK(lb_dispatch() == 2);
	LB_CHECK(dr.ran == 1 && dr.kr == 0 && drc.ran == 1 && drc.kr == IDL_ECANCELED);
	LB_CHECK(dre.ran == 0 && lb_ool_live == live);
}

void
lb_async_dialect(void)
{
	long live = lb_ool_live;

	lb_async_dialect_ool();
	lb_async_dialect_calls();
	/* Every region the done functions got, they freed; every reply refused was released. */
	LB_CHECK(lb_ool_live == live);
}
