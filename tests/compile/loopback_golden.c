/*
 * loopback_golden.c - the routines and checks of the first golden interfaces (scalars,
 * arrays, strings, bench) in the loopback program: every value in every direction, the
 * counts and strings the stubs must refuse, and malformed requests and replies
 * (loopback.c carries the messages).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void
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

void
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

void
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

/*
 * bench.defs
 */

static int lb_notified;

kern_return_t
S_bench_null(mach_port_t server)
{
	return KERN_SUCCESS;
}

kern_return_t
S_bench_add(mach_port_t server, int a, int b, int *sum)
{
	*sum = (int)((unsigned)a + (unsigned)b);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_intrpc(mach_port_t server, int x, int *y, int *err)
{
	*y = x * 2;
	*err = x < 0 ? -1 : 0;
	return KERN_SUCCESS;
}

kern_return_t
S_bench_bigin(mach_port_t server, big_t data)
{
	return data[0] == 'B' && data[199] == 'E' ? KERN_SUCCESS : 1;
}

kern_return_t
S_bench_bigout(mach_port_t server, big_t data)
{
	memset(data, 'o', 200);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_biginout(mach_port_t server, big_t data)
{
	data[100] = (char)(data[100] + 1);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_notify(mach_port_t server, int value)
{
	lb_notified = value;
	return KERN_SUCCESS;
}

kern_return_t
S_bench_echo(mach_port_t server, text_t s, text_t r)
{
	snprintf(r, 256, "%s", s);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_sum(mach_port_t server, ints_t data, mach_msg_type_number_t dataCnt, int64_t *total)
{
	*total = 0;
	for (mach_msg_type_number_t k = 0; k < dataCnt; k++)
		*total += data[k];
	return KERN_SUCCESS;
}

/* ool64k and ool1m: the routine owns what it received when it succeeds. */
kern_return_t
S_bench_ool64k(mach_port_t server, ool_t data, mach_msg_type_number_t dataCnt)
{
	if (dataCnt != 64u * 1024u)
		return 1;
	LB_CHECK(data[0] == 'O' && data[dataCnt - 1] == 'O');
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_ool1m(mach_port_t server, ool_t data, mach_msg_type_number_t dataCnt)
{
	if (dataCnt != 1024u * 1024u)
		return 1;
	LB_CHECK(data[0] == 'O' && data[dataCnt - 1] == 'O');
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

void
lb_bench(void)
{
	big_t big;
	text_t s, r;
	ints_t data;
	int sum = 0, y = 0, err = 0;
	int64_t total = 0;

	LB_CHECK(bench_null(NULL) == 0);
	LB_CHECK(lb_last_timeout == IDL_TIMEOUT_DEFAULT);
	LB_CHECK(bench_add(NULL, 2, 40, &sum) == 0 && sum == 42);
	LB_CHECK(bench_add(NULL, INT32_MAX, 1, &sum) == 0 && sum == INT32_MIN);
	LB_CHECK(bench_intrpc(NULL, -4, &y, &err) == 0 && y == -8 && err == -1);
	memset(big, 'x', sizeof big);
	big[0] = 'B';
	big[199] = 'E';
	LB_CHECK(bench_bigin(NULL, big) == 0);
	big[199] = 'F';
	LB_CHECK(bench_bigin(NULL, big) == 1);
	LB_CHECK(bench_bigout(NULL, big) == 0 && big[0] == 'o' && big[199] == 'o');
	big[100] = 'a';
	LB_CHECK(bench_biginout(NULL, big) == 0 && big[100] == 'b' && big[99] == 'o');
	LB_CHECK(bench_notify(NULL, 7) == 0 && lb_notified == 7);
	for (int len = 0; len < 256; len += 51) {
		memset(s, 'e', (size_t)len);
		s[len] = '\0';
		memset(r, 0, sizeof r);
		LB_CHECK(bench_echo(NULL, s, r) == 0 && strcmp(r, s) == 0);
	}
	memset(s, 'e', sizeof s);
	LB_CHECK(bench_echo(NULL, s, r) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(lb_detail_is("bench.echo: s: longer than 255 characters"));
	for (int k = 0; k < 1024; k++)
		data[k] = k;
	LB_CHECK(bench_sum(NULL, data, 1024, &total) == 0 && total == 1023 * 1024 / 2);
	LB_CHECK(bench_sum(NULL, data, 0, &total) == 0 && total == 0);
	LB_CHECK(bench_sum(NULL, data, 1025, &total) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(lb_detail_is("bench.sum: data: 1025 elements, above its bound 1024"));
	{
		char *ool = idl_ool_alloc(1024u * 1024u);

		LB_CHECK(ool != NULL);
		memset(ool, 'O', 1024u * 1024u);
		LB_CHECK(bench_ool64k(NULL, ool, 64u * 1024u) == 0);
		LB_CHECK(bench_ool1m(NULL, ool, 1024u * 1024u) == 0);
		LB_CHECK(bench_ool64k(NULL, ool, 100) == 1);
		idl_ool_free(ool, 1024u * 1024u);
	}
}

/* Ids outside a subsystem, and skipped ones, are MIG_BAD_ID with a well-formed reply. */
