/*
 * t_malformed.c - hand-built messages sent straight through the transport's ops, as a
 * hostile or broken client would: each must get the documented error reply, and the server
 * must go on serving the same connection (docs/wire-format.md has the layout used here).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <CUnit/CUnit.h>

#include "bench_types.h"
#include "bench.h"
#include "conformance.h"

#define TT_ID_ECHO 4207
#define TT_ID_SUM 4208
/* Room for a message larger than any receive buffer of the server (docs/wire-format.md,
 * "Limits": the largest request or hello, 8168 bytes). */
#define TT_OVERSIZE 9000

void
tt_head(union tt_buf *m, uint8_t kind, int32_t id, uint32_t size, uint32_t seqno)
{
	memset(&m->head, 0, sizeof m->head);
	m->head.magic = IDL_MSG_MAGIC;
	m->head.order = IDL_ORDER_NATIVE;
	m->head.kind = kind;
	m->head.size = size;
	m->head.id = id;
	m->head.seqno = seqno;
}

int
tt_wire_send(void *wire, const void *b, size_t len)
{
	unsigned char *f = malloc(4 + len);
	uint32_t prefix = htonl((uint32_t)len);
	int err;

	if (f == NULL)
		return IDL_ENOMEM;
	memcpy(f, &prefix, 4);
	memcpy(f + 4, b, len);
	err = tt.scheme->wire->write(wire, f, 4 + len) == 0 ? 0 : IDL_ESYSERR(EIO);
	free(f);
	return err;
}

int
tt_wire_recv(void *wire, union tt_buf *m, size_t *len)
{
	uint32_t prefix;

	*len = 0;
	if (tt.scheme->wire->read(wire, &prefix, 4) != 0)
		return MIG_SERVER_DIED;
	prefix = ntohl(prefix);
	if (prefix > sizeof m->b)
		return IDL_EMSGSIZE;
	if (tt.scheme->wire->read(wire, m->b, prefix) != 0)
		return MIG_SERVER_DIED;
	*len = prefix;
	return 0;
}

int
tt_raw_send(struct tt_raw *r, const union tt_buf *m, size_t len)
{
	struct idl_xmsg x = { .data = (void *)m->b, .len = len };

	if (r->wire != NULL)
		return tt_wire_send(r->wire, m->b, len);
	return tt.tr->conn_send(r->conn, &x, &(struct idl_deadline){ 0, TT_RAW_MS });
}

/* The reply to the request of `seqno`. On a datagram transport a slow answer makes the
 * transport send the request again, and the server answers the copy from its cache: a
 * second reply to an earlier request may come first, and is dropped as a client would. */
int
tt_raw_recv_seq(struct tt_raw *r, union tt_buf *m, size_t *len, uint32_t seqno)
{
	struct idl_deadline dl = { 0, TT_RAW_MS };
	struct idl_xmsg x;
	int err;

	if (r->wire != NULL)
		return tt_wire_recv(r->wire, m, len);
	do {
		x = (struct idl_xmsg){ .data = m->b, .cap = sizeof m->b };
		err = tt.tr->conn_recv(r->conn, &x, &dl);
	} while (err == 0 && (tt.tr->flags & IDL_TRF_DGRAM) && x.len >= IDL_MSG_HEADER_SIZE &&
		 m->head.seqno != seqno && __builtin_bswap32(m->head.seqno) != seqno);
	*len = x.len;
	return err;
}

/* The reply to the request sent last. */
static int
tt_raw_recv(struct tt_raw *r, union tt_buf *m, size_t *len)
{
	return tt_raw_recv_seq(r, m, len, r->seqno);
}

/* The hello for bench: header, base, routine count, name length, version, the hashes and
 * the name padded to 8 (docs/wire-format.md, "The hello"); routine number `differ` (none
 * when it is past the last) with a hash the server's does not match. */
static size_t
tt_hello_differing(union tt_buf *m, uint32_t seqno, uint32_t differ)
{
	const struct idl_subsystem *ss = &bench_subsystem;
	size_t namelen = strlen(ss->name) + 1;
	size_t size = 40 + 8 * (size_t)ss->nroutines + IDL_MSG_ROUND(namelen);
	unsigned char *p = m->b + sizeof m->head;
	uint32_t u;

	memset(m->b, 0, size);
	tt_head(m, IDL_KIND_HELLO, ss->base, (uint32_t)size, seqno);
	memcpy(p, &ss->base, 4);
	memcpy(p + 4, &ss->nroutines, 4);
	u = (uint32_t)namelen;
	memcpy(p + 8, &u, 4);
	u = 1;
	memcpy(p + 12, &u, 4);
	for (uint32_t i = 0; i < ss->nroutines; i++) {
		uint64_t hash = ss->routines[i].sig_hash ^ (i == differ ? 1 : 0);

		memcpy(p + 16 + 8 * i, &hash, 8);
	}
	memcpy(p + 16 + 8 * ss->nroutines, ss->name, namelen);
	return size;
}

/* Sends the hello (routine `differ` differing, as tt_hello_differing()) on r and checks
 * the server's answer. */
static int
tt_raw_hello_differing(struct tt_raw *r, union tt_buf *m, uint32_t differ)
{
	size_t len = tt_hello_differing(m, ++r->seqno, differ);
	int err;

	TT_CHECK_KR(err = tt_raw_send(r, m, len), 0);
	if (err == 0)
		TT_CHECK_KR(err = tt_raw_recv(r, m, &len), 0);
	if (err != 0)
		return -1;
	CU_ASSERT_EQUAL(m->head.kind, IDL_KIND_HELLO_REPLY);
	CU_ASSERT_EQUAL(m->head.seqno, r->seqno);
	CU_ASSERT_EQUAL(m->head.size, len);
	TT_CHECK_KR(m->head.retcode, 0);
	return m->head.kind == IDL_KIND_HELLO_REPLY && m->head.retcode == 0 ? 0 : -1;
}

static int
tt_raw_hello(struct tt_raw *r, union tt_buf *m)
{
	return tt_raw_hello_differing(r, m, UINT32_MAX);
}

/* Connects, and exchanges the hello when `hello` is set; returns 0, or -1 after a CUnit
 * failure was recorded. */
int
tt_raw_open(struct tt_raw *r, union tt_buf *m, int hello)
{
	const char *rest;
	size_t size = (tt.tr->conn_size + 15) & ~(size_t)15;
	int err;

	memset(r, 0, sizeof *r);
	r->seqno = 1000;
	r->conn = aligned_alloc(16, size ? size : 16);
	if (r->conn == NULL || idl_transport_find(tt.address, &rest) != tt.tr) {
		CU_FAIL("out of memory or no transport");
		free(r->conn);
		r->conn = NULL;
		return -1;
	}
	memset(r->conn, 0, size);
	TT_CHECK_KR(
		err = tt.tr->conn_connect(r->conn, rest, &(struct idl_deadline){ 0, TT_RAW_MS }),
		0);
	if (err == 0 && (!hello || tt_raw_hello(r, m) == 0))
		return 0;
	tt.tr->conn_close(r->conn);
	tt.tr->conn_fini(r->conn);
	free(r->conn);
	r->conn = NULL;
	return -1;
}

int
tt_raw_open_own(struct tt_raw *r, union tt_buf *m)
{
	if (tt.scheme->wire == NULL)
		return tt_raw_open(r, m, 1);
	memset(r, 0, sizeof *r);
	r->seqno = 1000;
	if ((r->wire = tt.scheme->wire->connect(tt.address)) == NULL) {
		CU_FAIL("the test's own connection failed");
		return -1;
	}
	if (tt_raw_hello(r, m) == 0)
		return 0;
	tt_raw_close(r);
	return -1;
}

void
tt_raw_close(struct tt_raw *r)
{
	if (r->wire != NULL) {
		tt.scheme->wire->close(r->wire);
		r->wire = NULL;
	}
	if (r->conn != NULL) {
		tt.tr->conn_close(r->conn);
		tt.tr->conn_fini(r->conn);
		free(r->conn);
		r->conn = NULL;
	}
}

/* Sends `len` bytes of m and checks that the reply is a bare error reply with retcode
 * `want` for the message's id and seqno; m is overwritten with the reply. */
static void
tt_expect_error(struct tt_raw *r, union tt_buf *m, size_t len, int want, const char *what)
{
	int32_t id = m->head.id;
	uint32_t seqno = m->head.seqno;
	size_t got = 0;
	int err;

	TT_CHECK_KR(err = tt_raw_send(r, m, len), 0);
	if (err == 0)
		TT_CHECK_KR(err = tt_raw_recv(r, m, &got), 0);
	if (err != 0) {
		fprintf(stderr, "conformance: %s: no reply\n", what);
		return;
	}
	if (m->head.retcode != want)
		fprintf(stderr, "conformance: %s: retcode %s (%d), want %s\n", what,
			idl_errname(m->head.retcode), m->head.retcode, idl_errname(want));
	CU_ASSERT_EQUAL(m->head.retcode, want);
	CU_ASSERT_EQUAL(m->head.magic, IDL_MSG_MAGIC);
	CU_ASSERT_EQUAL(m->head.kind, IDL_KIND_REPLY);
	CU_ASSERT_EQUAL(m->head.id, (int32_t)((uint32_t)id + IDL_REPLY_ID_OFFSET));
	CU_ASSERT_EQUAL(m->head.seqno, seqno);
	CU_ASSERT_EQUAL(m->head.size, IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(got, IDL_MSG_HEADER_SIZE);
}

/* A valid add on the connection: the server is still serving it. */
void
tt_raw_add_works(struct tt_raw *r, union tt_buf *m)
{
	int32_t v[2] = { 40, 2 }, sum = 0;
	size_t got = 0;
	int err;

	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 32, ++r->seqno);
	memcpy(m->b + 24, v, sizeof v);
	TT_CHECK_KR(err = tt_raw_send(r, m, 32), 0);
	if (err == 0)
		TT_CHECK_KR(err = tt_raw_recv(r, m, &got), 0);
	if (err != 0)
		return;
	TT_CHECK_KR(m->head.retcode, 0);
	CU_ASSERT_EQUAL(m->head.seqno, r->seqno);
	CU_ASSERT_EQUAL(m->head.id, TT_ID_ADD + 100);
	CU_ASSERT_EQUAL(got, 32);
	memcpy(&sum, m->b + 24, 4);
	CU_ASSERT_EQUAL(sum, 42);
}

/* A request for routine `id` with a uint32 count at offset 24, then `data` bytes. */
static size_t
tt_counted(union tt_buf *m, struct tt_raw *r, int32_t id, uint32_t count, const void *data,
	   size_t n)
{
	size_t size = 32 + IDL_MSG_ROUND(n);

	memset(m->b, 0, size);
	tt_head(m, IDL_KIND_REQUEST, id, (uint32_t)size, ++r->seqno);
	memcpy(m->b + 24, &count, 4);
	memcpy(m->b + 32, data, n);
	return size;
}

/* The arguments fail the demux's checks (docs/generated-code.md): MIG_BAD_ARGUMENTS or
 * MIG_BAD_ID. */
static void
tt_bad_arguments(void)
{
	/* The first is one past bench.defs's last routine, whatever their number. */
	int32_t bad_ids[] = { 0, 4199, INT32_MAX, INT32_MIN, -1 };
	static int32_t ints[1025];
	union tt_buf *m = malloc(sizeof *m);
	struct tt_raw r;
	size_t len;

	if (m == NULL || tt_raw_open(&r, m, 1) != 0) {
		free(m);
		return;
	}
	tt_raw_add_works(&r, m);
	bad_ids[0] = bench_subsystem.base + (int32_t)bench_subsystem.nroutines;

	/* A request shorter than its routine's fixed part. */
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 24, ++r.seqno);
	tt_expect_error(&r, m, 24, MIG_BAD_ARGUMENTS, "add, header only");
	tt_raw_add_works(&r, m);

	/* Ids that are not the subsystem's. */
	for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
		tt_head(m, IDL_KIND_REQUEST, bad_ids[i], 32, ++r.seqno);
		tt_expect_error(&r, m, 32, MIG_BAD_ID, "unknown id");
		tt_raw_add_works(&r, m);
	}

	/* sum with one int more than array[*:1024] allows, with all of its bytes. */
	len = tt_counted(m, &r, TT_ID_SUM, 1025, ints, sizeof ints);
	tt_expect_error(&r, m, len, MIG_BAD_ARGUMENTS, "sum, count over the bound");
	tt_raw_add_works(&r, m);

	/* A count whose byte length overflows 32 bits. */
	len = tt_counted(m, &r, TT_ID_SUM, 0xFFFFFFFFu, ints, 64);
	tt_expect_error(&r, m, len, MIG_BAD_ARGUMENTS, "sum, count 0xFFFFFFFF");
	tt_raw_add_works(&r, m);

	/* A count that says more than the message holds, and one that says less. */
	len = tt_counted(m, &r, TT_ID_SUM, 100, ints, 64);
	tt_expect_error(&r, m, len, MIG_BAD_ARGUMENTS, "sum, count beyond the message");
	tt_raw_add_works(&r, m);
	len = tt_counted(m, &r, TT_ID_SUM, 2, ints, 64);
	tt_expect_error(&r, m, len, MIG_BAD_ARGUMENTS, "sum, bytes beyond the count");
	tt_raw_add_works(&r, m);

	/* Strings: without their NUL, and with a zero count. */
	len = tt_counted(m, &r, TT_ID_ECHO, 5, "hello", 5);
	tt_expect_error(&r, m, len, MIG_BAD_ARGUMENTS, "echo, no NUL");
	tt_raw_add_works(&r, m);
	len = tt_counted(m, &r, TT_ID_ECHO, 0, "", 0);
	tt_expect_error(&r, m, len, MIG_BAD_ARGUMENTS, "echo, count 0");
	tt_raw_add_works(&r, m);

	tt_raw_close(&r);
	free(m);
}

/* The header fails the runtime's checks (docs/wire-format.md, "What the server checks"). */
static void
tt_bad_headers(void)
{
	union tt_buf *m = malloc(sizeof *m);
	struct tt_raw r;
	size_t got = 0;
	int err;

	if (m == NULL || tt_raw_open(&r, m, 1) != 0) {
		free(m);
		return;
	}

	/* The size field disagrees with the bytes sent, both ways, or is not a multiple of 8. */
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 40, ++r.seqno);
	tt_expect_error(&r, m, 32, IDL_EPROTO, "add, size says 40, 32 sent");
	tt_raw_add_works(&r, m);
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 32, ++r.seqno);
	tt_expect_error(&r, m, 40, IDL_EPROTO, "add, size says 32, 40 sent");
	tt_raw_add_works(&r, m);
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 28, ++r.seqno);
	tt_expect_error(&r, m, 28, IDL_EPROTO, "add, size 28");
	tt_raw_add_works(&r, m);

	/* Fewer bytes than a header: the fields that arrived (id, seqno) are answered. */
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 16, ++r.seqno);
	tt_expect_error(&r, m, 16, IDL_EPROTO, "16 bytes");
	tt_raw_add_works(&r, m);

	/* A bad magic, and a kind that a client does not send. */
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 32, ++r.seqno);
	m->head.magic = 'X';
	tt_expect_error(&r, m, 32, IDL_EPROTO, "bad magic");
	tt_raw_add_works(&r, m);
	tt_head(m, IDL_KIND_REPLY, TT_ID_ADD, 32, ++r.seqno);
	tt_expect_error(&r, m, 32, IDL_EPROTO, "kind REPLY");
	tt_raw_add_works(&r, m);
	tt_head(m, 99, TT_ID_ADD, 32, ++r.seqno);
	tt_expect_error(&r, m, 32, IDL_EPROTO, "kind 99");
	tt_raw_add_works(&r, m);

	/* The other byte order: refused, in the sender's order. */
	tt_head(m, IDL_KIND_REQUEST, 0, 0, 0);
	m->head.order = IDL_ORDER_NATIVE == IDL_ORDER_LITTLE ? IDL_ORDER_BIG : IDL_ORDER_LITTLE;
	m->head.size = __builtin_bswap32(32);
	m->head.id = (int32_t)__builtin_bswap32(TT_ID_ADD);
	m->head.seqno = __builtin_bswap32(++r.seqno);
	TT_CHECK_KR(err = tt_raw_send(&r, m, 32), 0);
	if (err == 0)
		TT_CHECK_KR(err = tt_raw_recv(&r, m, &got), 0);
	if (err == 0) {
		CU_ASSERT_EQUAL(got, IDL_MSG_HEADER_SIZE);
		CU_ASSERT_NOT_EQUAL(m->head.order, IDL_ORDER_NATIVE);
		CU_ASSERT_EQUAL(m->head.kind, IDL_KIND_REPLY);
		CU_ASSERT_EQUAL(__builtin_bswap32(m->head.seqno), r.seqno);
		CU_ASSERT_EQUAL(__builtin_bswap32(m->head.id), TT_ID_ADD + 100);
		TT_CHECK_KR((int)__builtin_bswap32((uint32_t)m->head.retcode), IDL_EBYTEORDER);
	}
	tt_raw_add_works(&r, m);

	/* Larger than any receive buffer of the server: refused, and the connection kept,
	 * except on a byte stream, which the receive-size rule of <idl/idl_transport.h>
	 * closes (its framing is lost). */
	memset(m->b, 0, TT_OVERSIZE);
	tt_head(m, IDL_KIND_REQUEST, TT_ID_SUM, TT_OVERSIZE, ++r.seqno);
	if (!(tt.tr->flags & IDL_TRF_STREAM)) {
		tt_expect_error(&r, m, TT_OVERSIZE, IDL_EMSGSIZE, "9000 bytes");
		tt_raw_add_works(&r, m);
	}

	tt_raw_close(&r);
	free(m);
}

/* The order of things on a connection: hello first, and the right kind for each routine. */
static void
tt_bad_sequence(void)
{
	union tt_buf *m = malloc(sizeof *m);
	int32_t v[2] = { 1, 2 };
	struct tt_raw r;

	if (m == NULL || tt_raw_open(&r, m, 0) != 0) {
		free(m);
		return;
	}
	/* A request before the subsystem's hello; then the hello makes the call work. */
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 32, ++r.seqno);
	memcpy(m->b + 24, v, sizeof v);
	tt_expect_error(&r, m, 32, IDL_EPROTO, "add before the hello");
	if (tt_raw_hello(&r, m) != 0)
		goto out;
	tt_raw_add_works(&r, m);

	/* notify is a simpleroutine: sent as a REQUEST it is refused with a reply. */
	tt_head(m, IDL_KIND_REQUEST, TT_ID_NOTIFY, 32, ++r.seqno);
	tt_expect_error(&r, m, 32, IDL_EPROTO, "notify as a REQUEST");
	tt_raw_add_works(&r, m);

	/* add is a routine: sent ONEWAY it is refused without a reply, so the next message
	 * to arrive must be the reply to the add after it. */
	tt_head(m, IDL_KIND_ONEWAY, TT_ID_ADD, 32, ++r.seqno);
	TT_CHECK_KR(tt_raw_send(&r, m, 32), 0);
	tt_raw_add_works(&r, m);

	/* A second hello replaces the first, and calls go on working. */
	if (tt_raw_hello(&r, m) == 0)
		tt_raw_add_works(&r, m);

	/* The server remembers a request that passed its checks, to pass the next like it
	 * at once: a header like it in all but its size, or a hello that changes the
	 * routine's verdict, must be checked again. */
	tt_raw_add_works(&r, m);
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 40, ++r.seqno);
	memcpy(m->b + 24, v, sizeof v);
	tt_expect_error(&r, m, 32, IDL_EPROTO, "add saying 40 bytes in 32, after an add");
	tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 32, ++r.seqno);
	memcpy(m->b + 24, v, sizeof v);
	m->head.ndesc = 1;
	tt_expect_error(&r, m, 32, MIG_BAD_ARGUMENTS, "add with a descriptor count, after an add");
	if (tt_raw_hello_differing(&r, m, (uint32_t)(TT_ID_ADD - bench_subsystem.base)) == 0) {
		tt_head(m, IDL_KIND_REQUEST, TT_ID_ADD, 32, ++r.seqno);
		memcpy(m->b + 24, v, sizeof v);
		tt_expect_error(&r, m, 32, IDL_ESIGNATURE, "add after a hello that differs on it");
	}
	if (tt_raw_hello(&r, m) == 0)
		tt_raw_add_works(&r, m);
out:
	tt_raw_close(&r);
	free(m);
}

const struct tt_case tt_malformed_cases[] = {
	{ "malformed arguments", tt_bad_arguments },
	{ "malformed headers", tt_bad_headers },
	{ "malformed sequences", tt_bad_sequence },
	{ "malformed framed messages", tt_bad_framed },
	{ NULL, NULL },
};
