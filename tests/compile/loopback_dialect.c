/*
 * loopback_dialect.c - dialect.defs through the loopback transport of loopback.c: the
 * server routines, the runtime calls the dialect's stubs make (out-of-line memory with an
 * account of every byte, credentials), and the checks.
 *
 * Every region idl_ool_alloc() hands out is counted until idl_ool_free() takes it back, so
 * the end of lb_dialect() can check the ownership rule held on every path: what a sender
 * marked dealloc was freed once sent, what a receiver got was freed by whoever owned it,
 * and a refused message was destroyed. Ports are tokens (addresses of static objects) that
 * the loopback transport passes as they are.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dialect.h"
#include "dialect_S.h"
#include "loopback.h"

/*
 * The runtime's side, for this program.
 */

long lb_ool_live;

void *
idl_ool_alloc(size_t size)
{
	void *p = calloc(1, size != 0 ? size : 1);

	if (p != NULL)
		lb_ool_live++;
	return p;
}

void
idl_ool_free(void *addr, size_t size)
{
	(void)size;
	if (addr == NULL)
		return;
	lb_ool_live--;
	free(addr);
}

void
idl_msg_destroy(idl_msg_header_t *msg)
{
	idl_desc_t *d = (idl_desc_t *)(void *)(msg + 1);
	uint32_t n;

	if (!(msg->flags & IDL_MSGF_DESC) || msg->size < IDL_MSG_HEADER_SIZE)
		return;
	n = (msg->size - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE;
	if (msg->ndesc < n)
		n = msg->ndesc;
	for (uint32_t i = 0; i < n; i++) {
		if (d[i].type == IDL_DESC_OOL)
			idl_ool_free((void *)(uintptr_t)d[i].addr, d[i].size);
		else if (d[i].type == IDL_DESC_PORT_ARRAY)
			idl_ool_free((void *)(uintptr_t)d[i].addr, d[i].size * sizeof(idl_port_t));
		d[i].type = 0; /* destroyed once */
	}
}

int
idl_request_cred(struct idl_cred *cred)
{
	memset(cred, 0, sizeof *cred);
	cred->valid = 1;
	cred->uid = 4242;
	cred->gid = 42;
	return 0;
}

int
idl_port_cred(idl_port_t port, struct idl_cred *cred)
{
	(void)port;
	memset(cred, 0, sizeof *cred);
	cred->valid = 1;
	cred->uid = 77;
	return 0;
}

/* A descriptor's memory as the receiver gets it: a copy of its own. The sender's goes
 * away when it asked for that (dealloc, or a server stub's buffer of out ports). Ports are
 * the test's own tokens and pass as they are. */
void
lb_transfer(idl_msg_header_t *m, int sender_free)
{
	idl_desc_t *d = (idl_desc_t *)(void *)(m + 1);
	size_t bytes;
	void *copy;

	if (!(m->flags & IDL_MSGF_DESC))
		return;
	LB_CHECK(m->ndesc <= (m->size - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE);
	for (uint32_t i = 0; i < m->ndesc; i++) {
		if (d[i].type == IDL_DESC_PORT)
			continue;
		bytes = d[i].type == IDL_DESC_PORT_ARRAY ? d[i].size * sizeof(idl_port_t)
							 : d[i].size;
		copy = idl_ool_alloc(bytes);
		LB_CHECK(copy != NULL);
		if (bytes != 0)
			memcpy(copy, (void *)(uintptr_t)d[i].addr, bytes);
		if (sender_free && (d[i].flags & (IDL_DESCF_DEALLOC | IDL_DESCF_FREE_ARRAY)))
			idl_ool_free((void *)(uintptr_t)d[i].addr, bytes);
		d[i].addr = (uint64_t)(uintptr_t)copy;
		d[i].flags = 0;
	}
}

/* The runtime's side of deferred replies: the reply goes where the demux's would have. */
struct idl_reply {
	uint32_t seqno;
	int32_t id;
};

idl_reply_t
idl_request_reply(void)
{
	idl_reply_t r = malloc(sizeof *r);

	if (r != NULL && lb_reply_target != NULL) {
		r->seqno = lb_reply_target->seqno;
		r->id = lb_reply_target->id;
	}
	return r;
}

int
idl_reply_send(idl_reply_t reply, idl_msg_header_t *msg)
{
	LB_CHECK(reply != NULL && lb_reply_target != NULL);
	if (reply == NULL || lb_reply_target == NULL)
		return IDL_EINVAL;
	msg->magic = IDL_MSG_MAGIC;
	msg->order = IDL_ORDER_NATIVE;
	msg->kind = IDL_KIND_REPLY;
	msg->id = reply->id;
	msg->seqno = reply->seqno;
	LB_CHECK(msg->size <= LB_BUF);
	memcpy(lb_reply_target, msg, msg->size);
	free(reply);
	return KERN_SUCCESS;
}

void
idl_reply_discard(idl_reply_t reply)
{
	free(reply);
}

/* The reply bytes with descriptor addresses left out: two serves allocate apart. */
int
lb_same_reply(const idl_msg_header_t *a, const idl_msg_header_t *b)
{
	static unsigned char ca[LB_BUF], cb[LB_BUF];
	uint32_t n = a->size;

	if (n != b->size || n > LB_BUF)
		return 0;
	memcpy(ca, a, n);
	memcpy(cb, b, n);
	if (a->flags & IDL_MSGF_DESC)
		for (uint32_t i = 0; i < a->ndesc && i < (n - IDL_MSG_HEADER_SIZE) / 16; i++) {
			memset(ca + IDL_MSG_HEADER_SIZE + 16 * i, 0, 8);
			memset(cb + IDL_MSG_HEADER_SIZE + 16 * i, 0, 8);
		}
	return memcmp(ca, cb, n) == 0;
}

/*
 * Ports and translated objects: tokens.
 */

char lb_port_a, lb_port_b, lb_port_c, lb_port_d;

struct obj {
	mach_port_t port;
	int refs;
};
static struct obj lb_obj = { NULL, 0 };

obj_ref_t
obj_lookup(mach_port_t port)
{
	lb_obj.port = port;
	lb_obj.refs++;
	return &lb_obj;
}

mach_port_t
obj_port(obj_ref_t obj)
{
	return obj->port;
}

void
obj_release(obj_ref_t obj)
{
	obj->refs--;
}

ms_server_t
ms_in(int ms)
{
	return (ms_server_t)ms * 1000;
}

int
ms_out(ms_server_t ms)
{
	return (int)(ms / 1000);
}

/*
 * The server routines.
 */

static struct {
	mach_msg_type_name_t poly, once;
	int oneway;
	idl_reply_t reply;
	int deferred_x;
} lb_d;

kern_return_t
S_ool_in(mach_port_t server, dl_bytes_t data, mach_msg_type_number_t dataCnt, int *sum)
{
	*sum = 0;
	for (mach_msg_type_number_t k = 0; k < dataCnt; k++)
		*sum += (unsigned char)data[k];
	idl_ool_free(data, dataCnt); /* the routine owns what it received */
	return KERN_SUCCESS;
}

kern_return_t
S_ool_out(mach_port_t server, int n, dl_bytes_t *data, mach_msg_type_number_t *dataCnt)
{
	if (n < 0)
		return 1;
	*data = idl_ool_alloc((size_t)n);
	if (*data == NULL)
		return 2;
	for (int k = 0; k < n; k++)
		(*data)[k] = (char)('a' + k % 26);
	*dataCnt = (mach_msg_type_number_t)n; /* dealloc: the runtime frees it once sent */
	return KERN_SUCCESS;
}

kern_return_t
S_ool_inout(mach_port_t server, dl_ints_t *data, mach_msg_type_number_t *dataCnt)
{
	static int back[9];
	mach_msg_type_number_t n = *dataCnt < 8 ? *dataCnt : 8;

	for (mach_msg_type_number_t k = 0; k < n; k++)
		back[k] = (*data)[n - 1 - k];
	back[n] = 99;
	idl_ool_free(*data, *dataCnt * sizeof(int));
	*data = back; /* no dealloc: the server keeps its memory */
	*dataCnt = n + 1;
	return KERN_SUCCESS;
}

kern_return_t
S_ool_fixed(mach_port_t server, page_ptr_t page, page_ptr_t *back)
{
	*back = idl_ool_alloc(64);
	if (*back == NULL)
		return 2;
	for (int k = 0; k < 64; k++)
		(*back)[k] = (unsigned char)(page[k] + 1);
	idl_ool_free(page, 64);
	return KERN_SUCCESS;
}

kern_return_t
S_records(mach_port_t server, dl_recs_t recs, mach_msg_type_number_t recsCnt, dl_rec_t r,
	  dl_rec_t *first)
{
	*first = recsCnt > 0 ? recs[recsCnt - 1] : r;
	first->b += r.b;
	idl_ool_free(recs, recsCnt * sizeof *recs);
	return KERN_SUCCESS;
}

kern_return_t
S_ports(mach_port_t server, mach_port_t p, mach_port_t poly, mach_msg_type_name_t polyPoly,
	mach_port_t once, mach_msg_type_name_t oncePoly, mach_port_t *q, mach_port_t *qp,
	mach_msg_type_name_t *qpPoly)
{
	if (p != LB_PA || poly != LB_PB || once != LB_PC)
		return 1;
	lb_d.poly = polyPoly;
	lb_d.once = oncePoly;
	*q = poly;
	*qp = p;
	*qpPoly = MACH_MSG_TYPE_MAKE_SEND;
	return KERN_SUCCESS;
}

kern_return_t
S_port_array(mach_port_t server, mach_port_array_t ports, mach_msg_type_number_t portsCnt,
	     mach_port_array_t *back, mach_msg_type_number_t *backCnt)
{
	static mach_port_t mine[4];
	mach_msg_type_number_t n = portsCnt < 4 ? portsCnt : 4;

	for (mach_msg_type_number_t k = 0; k < n; k++)
		mine[k] = ports[n - 1 - k];
	idl_ool_free(ports, portsCnt * sizeof *ports);
	*back = mine;
	*backCnt = n;
	return KERN_SUCCESS;
}

kern_return_t
S_inline_ports(mach_port_t server, few_ports_t ports, mach_msg_type_number_t portsCnt, int *n)
{
	/* An inline array's memory is not the routine's: the stub frees it. */
	*n = (int)portsCnt;
	for (mach_msg_type_number_t k = 0; k < portsCnt; k++)
		if (ports[k] != LB_PD)
			*n = -1;
	return KERN_SUCCESS;
}

kern_return_t
S_counted(mach_port_t server, dl_vals_t vals, mach_msg_type_number_t *valsCnt)
{
	/* countinout: the caller's capacity, at most the bound. */
	for (mach_msg_type_number_t k = 0; k < *valsCnt; k++)
		vals[k] = (int)(k * k);
	return KERN_SUCCESS;
}

kern_return_t
S_seqno(mach_port_t server, mach_port_seqno_t seq, mach_port_seqno_t *got)
{
	*got = seq;
	return KERN_SUCCESS;
}

kern_return_t
S_deferred(mach_port_t server, idl_reply_t reply, int x, int *y, dl_bytes_t *data,
	   mach_msg_type_number_t *dataCnt)
{
	if (x == 0) {
		*y = 1;
		*data = idl_ool_alloc(1);
		*dataCnt = 1;
		return *data != NULL ? KERN_SUCCESS : 2;
	}
	if (reply == NULL)
		return 3;
	lb_d.reply = reply;
	lb_d.deferred_x = x;
	return MIG_NO_REPLY;
}

/* The deferred reply, sent later (here: as soon as the demux returned). */
void
lb_complete_deferred(void)
{
	char *data = idl_ool_alloc(3);
	idl_reply_t reply = lb_d.reply;

	LB_CHECK(reply != NULL && data != NULL);
	lb_d.reply = NULL;
	if (data == NULL)
		return;
	memcpy(data, "dfr", 3);
	LB_CHECK(S_deferred_send_reply(reply, KERN_SUCCESS, lb_d.deferred_x * 2, data, 3) == 0);
}

static void
lb_fail_deferred(void)
{
	idl_reply_t reply = lb_d.reply;

	lb_d.reply = NULL;
	LB_CHECK(S_deferred_send_reply(reply, 1234, 0, NULL, 0) == 0);
}

kern_return_t
S_timed(mach_port_t server, dl_word_t *v)
{
	*v = 5;
	return KERN_SUCCESS;
}

kern_return_t
S_creds(mach_port_t server, struct idl_cred atok, int *uid)
{
	*uid = atok.valid ? (int)atok.uid : -1;
	return KERN_SUCCESS;
}

kern_return_t
S_translated(obj_ref_t server, ms_server_t x, ms_server_t *y, obj_ref_t *o)
{
	if (server != &lb_obj || server->refs != 1)
		return 1;
	*y = x * 3;
	*o = server;
	return KERN_SUCCESS;
}

kern_return_t
S_dealloc_rt(mach_port_t server, dl_bytes_t data, mach_msg_type_number_t dataCnt)
{
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_scopy(mach_port_t server, dl_bytes_t data, mach_msg_type_number_t dataCnt, boolean_t dataSCopy,
	int *n)
{
	*n = dataSCopy ? -1 : (int)dataCnt;
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_overwrite_out(mach_port_t server, dl_bytes_t *data, mach_msg_type_number_t *dataCnt)
{
	static char text[] = "overwritten";

	*data = text;
	*dataCnt = sizeof text;
	return KERN_SUCCESS;
}

kern_return_t
S_oneway_ool(mach_port_t server, dl_bytes_t data, mach_msg_type_number_t dataCnt)
{
	lb_d.oneway = (int)dataCnt;
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_symbolic(mach_port_t server)
{
	return KERN_SUCCESS;
}

/*
 * The checks.
 */

static void
lb_break_ints_size(idl_msg_header_t *rep)
{
	((idl_desc_t *)(void *)(rep + 1))[0].size = 6; /* not a whole number of ints */
}

static void
lb_break_recs_size(idl_msg_header_t *req)
{
	((idl_desc_t *)(void *)(req + 1))[0].size += 1;
}

static void
lb_dialect_ool(void)
{
	char text[] = "hello", *out = NULL, buf[4];
	int sum = 0, in3[3] = { 1, 2, 3 };
	dl_ints_t io = in3;
	mach_msg_type_number_t n = 0;
	unsigned char page[64];
	page_ptr_t back = NULL;
	dl_rec_t recs[2], r, first;

	LB_CHECK(ool_in(NULL, text, 5, &sum) == 0 && sum == 'h' + 'e' + 'l' + 'l' + 'o');
	LB_CHECK(ool_in(NULL, text, 0, &sum) == 0 && sum == 0);
	LB_CHECK(ool_out(NULL, 30, &out, &n) == 0 && n == 30 && out != NULL);
	LB_CHECK(out != NULL && out[0] == 'a' && out[29] == 'd');
	idl_ool_free(out, n); /* the caller owns what came back */
	LB_CHECK(ool_out(NULL, -1, &out, &n) == 1);

	n = 3;
	io = in3;
	LB_CHECK(ool_inout(NULL, &io, &n) == 0 && n == 4);
	LB_CHECK(io != in3 && io[0] == 3 && io[2] == 1 && io[3] == 99);
	idl_ool_free(io, n * sizeof(int));
	lb_tamper_reply = lb_break_ints_size;
	n = 3;
	io = in3;
	LB_CHECK(ool_inout(NULL, &io, &n) == MIG_TYPE_ERROR && io == in3);
	lb_tamper_reply = NULL;

	for (int k = 0; k < 64; k++)
		page[k] = (unsigned char)k;
	LB_CHECK(ool_fixed(NULL, page, &back) == 0 && back != NULL);
	LB_CHECK(back != NULL && back[0] == 1 && back[63] == 64);
	idl_ool_free(back, 64);

	/* Records are sent whole, padding included: it is the caller's to clear. */
	memset(recs, 0, sizeof recs);
	memset(&r, 0, sizeof r);
	recs[0].a = 1;
	recs[0].b = 10;
	recs[0].c = 'x';
	recs[1].a = 2;
	recs[1].b = 20;
	recs[1].c = 'y';
	r.a = 9;
	r.b = 5;
	r.c = 'r';
	LB_CHECK(records(NULL, recs, 2, r, &first) == 0);
	LB_CHECK(first.a == 2 && first.b == 25 && first.c == 'y');
	LB_CHECK(records(NULL, recs, 0, r, &first) == 0 && first.a == 9 && first.b == 10);
	lb_tamper_request = lb_break_recs_size;
	LB_CHECK(records(NULL, recs, 2, r, &first) == MIG_BAD_ARGUMENTS);
	lb_tamper_request = NULL;

	LB_CHECK(dealloc_rt(NULL, text, 5, FALSE) == 0);
	out = idl_ool_alloc(8);
	LB_CHECK(out != NULL && dealloc_rt(NULL, out, 8, TRUE) == 0); /* freed once sent */
	LB_CHECK(scopy(NULL, text, 4, &sum) == 0 && sum == 4);

	/* overwrite: into the caller's buffer, what does not fit is reported. */
	memset(buf, 0, sizeof buf);
	out = buf;
	n = sizeof buf;
	LB_CHECK(overwrite_out(NULL, &out, &n) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(out == buf && n == 12 && memcmp(buf, "over", 4) == 0);

	LB_CHECK(oneway_ool(NULL, text, 5) == 0 && lb_d.oneway == 5);
}

static void
lb_dialect_ports(void)
{
	mach_port_t q = NULL, qp = NULL, arr[3] = { LB_PA, LB_PB, LB_PC };
	mach_port_t few[2] = { LB_PD, LB_PD };
	mach_port_array_t back = NULL;
	mach_msg_type_name_t qpPoly = 0;
	mach_msg_type_number_t n = 0;
	int count = 0;

	LB_CHECK(ports(NULL, LB_PA, LB_PB, MACH_MSG_TYPE_COPY_SEND, LB_PC, &q, &qp, &qpPoly) == 0);
	LB_CHECK(q == LB_PB && qp == LB_PA);
	/* What a receiver is told is the received name: made and copied send rights arrive
	 * as moved ones. */
	LB_CHECK(qpPoly == MACH_MSG_TYPE_MOVE_SEND);
	LB_CHECK(lb_d.poly == MACH_MSG_TYPE_MOVE_SEND && lb_d.once == MACH_MSG_TYPE_MOVE_SEND_ONCE);
	LB_CHECK(ports(NULL, LB_PA, LB_PB, 99, LB_PC, &q, &qp, &qpPoly) == MIG_BAD_ARGUMENTS);

	LB_CHECK(port_array(NULL, arr, 3, &back, &n) == 0 && n == 3 && back != NULL);
	LB_CHECK(back != NULL && back[0] == LB_PC && back[2] == LB_PA);
	idl_ool_free(back, n * sizeof *back);

	LB_CHECK(inline_ports(NULL, few, 2, &count) == 0 && count == 2);
	LB_CHECK(inline_ports(NULL, few, 5, &count) == MIG_ARRAY_TOO_LARGE);
}

static void
lb_dialect_calls(void)
{
	dl_vals_t vals;
	mach_msg_type_number_t n;
	mach_port_seqno_t got = 0;
	int y = 0, uid = 0;
	dl_word_t v = 0;
	dl_bytes_t data = NULL;
	struct idl_cred stok;
	obj_t o = NULL;
	ms_t ms = 0;

	n = 5;
	memset(vals, 0xff, sizeof vals);
	LB_CHECK(counted(NULL, vals, &n) == 0 && n == 5 && vals[4] == 16 && vals[5] == -1);
	n = 100; /* more than the bound: the server clamps it */
	LB_CHECK(counted(NULL, vals, &n) == 0 && n == 16 && vals[15] == 225);

	LB_CHECK(seqno(NULL, &got) == 0 && got == lb_seqno);

	LB_CHECK(deferred(NULL, 0, &y, &data, &n) == 0 && y == 1 && n == 1);
	idl_ool_free(data, n);
	lb_deferred = lb_complete_deferred;
	LB_CHECK(deferred(NULL, 21, &y, &data, &n) == 0 && y == 42 && n == 3);
	LB_CHECK(data != NULL && memcmp(data, "dfr", 3) == 0);
	idl_ool_free(data, n);
	lb_deferred = lb_fail_deferred;
	LB_CHECK(deferred(NULL, 1, &y, &data, &n) == 1234);
	lb_deferred = NULL;

	LB_CHECK(timed(NULL, 1234, &v) == 0 && v == 5 && lb_last_timeout == 1234);
	LB_CHECK(symbolic(NULL) == 0 && lb_last_timeout == DIALECT_TIMEOUT);
	LB_CHECK(seqno(NULL, &got) == 0 && lb_last_timeout == IDL_TIMEOUT_DEFAULT);

	memset(&stok, 0, sizeof stok);
	LB_CHECK(creds(NULL, &stok, &uid) == 0 && uid == 4242);
	LB_CHECK(stok.valid && stok.uid == 77);

	/* The server translates the port the request came on (none here: the loopback has
	 * no endpoints) and back. */
	LB_CHECK(translated(LB_PA, 7, &ms, &o) == 0 && ms == 21 && o == NULL);
	LB_CHECK(lb_obj.refs == 0); /* every lookup was released by its destructor */
}

/* A request that says it carries no descriptor, for a routine that has one. */
static void
lb_dialect_raw(void)
{
	union {
		idl_msg_header_t head;
		unsigned char bytes[128];
	} in, out;

	memset(&in, 0, sizeof in);
	in.head.id = 5000; /* ool_in */
	in.head.size = IDL_MSG_HEADER_SIZE + IDL_DESC_SIZE; /* the fixed request */
	LB_CHECK(dialect_server(&in.head, &out.head) == 1);
	LB_CHECK(out.head.retcode == MIG_BAD_ARGUMENTS && out.head.size == IDL_MSG_HEADER_SIZE);
	in.head.flags = IDL_MSGF_DESC;
	in.head.ndesc = 1;
	((idl_desc_t *)(void *)(&in.head + 1))->type = IDL_DESC_PORT;
	LB_CHECK(dialect_server(&in.head, &out.head) == 1 && out.head.retcode == MIG_BAD_ARGUMENTS);
	in.head.id = 5005; /* skipped by `skip 2` */
	LB_CHECK(dialect_server(&in.head, &out.head) == 0 && out.head.retcode == MIG_BAD_ID);
}

void
lb_dialect(void)
{
	lb_dialect_ool();
	lb_dialect_ports();
	lb_dialect_calls();
	lb_dialect_raw();
	/* Every region handed out went back exactly once. */
	LB_CHECK(lb_ool_live == 0);
	if (lb_ool_live != 0)
		fprintf(stderr, "loopback_dialect.c: %ld out-of-line regions leaked\n",
			lb_ool_live);
}
