/*
 * xdemux_impl.c - server routines for the golden interfaces (scalars, arrays, strings), as
 * xdemux.c calls them through the compiled stubs and through the dynamic server.
 *
 * Each is deterministic (the same request gives the same reply, whichever stub calls it),
 * and each path the stubs must handle is reachable from some input: in-values folded into
 * a returned code (so a value converted wrongly on its way in changes the reply), error
 * codes, counts over their bounds and strings without their NUL (MIG_ARRAY_TOO_LARGE).
 */
#include <stdint.h>
#include <string.h>

#include <idl/idl.h>

#include "arraysServer.h"
#include "scalarsServer.h"
#include "stringsServer.h"

/* A positive code from the bytes of the values received: 1 ... 100000. */
static kern_return_t
xd_hash(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return (kern_return_t)(1 + h % 100000u);
}

kern_return_t
s_all_in(mach_port_t server, int8_t a, int16_t b, int c, int64_t d, boolean_t e, char f, uint8_t g,
	 float h, double i)
{
	uint64_t x = 0xcbf29ce484222325ull;

	if (c % 2 == 0)
		return KERN_SUCCESS;
	x = (uint64_t)xd_hash(&a, sizeof a, x);
	x = (uint64_t)xd_hash(&b, sizeof b, x);
	x = (uint64_t)xd_hash(&d, sizeof d, x);
	x = (uint64_t)xd_hash(&e, sizeof e, x);
	x = (uint64_t)xd_hash(&f, sizeof f, x);
	x = (uint64_t)xd_hash(&g, sizeof g, x);
	x = (uint64_t)xd_hash(&h, sizeof h, x);
	return xd_hash(&i, sizeof i, x);
}

kern_return_t
s_all_out(mach_port_t server, int8_t *a, int16_t *b, int *c, int64_t *d, boolean_t *e, char *f,
	  uint8_t *g, float *h, double *i)
{
	*a = -5;
	*b = -300;
	*c = 0x7fffffff;
	*d = INT64_MIN + 3;
	*e = TRUE;
	*f = 'z';
	*g = 200;
	*h = 1.5f;
	*i = -2.25;
	return KERN_SUCCESS;
}

kern_return_t
s_all_inout(mach_port_t server, int8_t *a, int64_t *d, float *h, double *i, boolean_t *e)
{
	if (*a == 7)
		return 4242;
	*a = (int8_t)(*a * 3 + 1);
	*d = ~*d;
	*h = *h * 2;
	*i = -*i;
	*e = !*e;
	return KERN_SUCCESS;
}

kern_return_t
s_ping(mach_port_t server, int seq)
{
	return seq % 3 == 0 ? 4242 : KERN_SUCCESS;
}

kern_return_t
s_swap(mach_port_t server, int *x, int *y)
{
	int t = *x;

	*x = *y;
	*y = t;
	return KERN_SUCCESS;
}

kern_return_t
do_fixed(mach_port_t server, vec3_t v, vec3_t w, vec3_t io)
{
	for (int k = 0; k < 3; k++) {
		w[k] = (int)((uint32_t)v[k] * 2u);
		io[k] = (int)((uint32_t)io[k] + (uint32_t)v[k]);
	}
	return v[0] == 99 ? 4242 : KERN_SUCCESS;
}

kern_return_t
do_points(mach_port_t server, point_t p, point_t *q, point_t *r)
{
	q->x = p.y;
	q->y = p.x;
	r->x = (int)((uint32_t)r->x + (uint32_t)p.x);
	return KERN_SUCCESS;
}

kern_return_t
do_samples(mach_port_t server, samples_t s, mach_msg_type_number_t sCnt, samples_t t,
	   mach_msg_type_number_t *tCnt)
{
	if (sCnt == 63) {
		*tCnt = 65; /* over the bound: the stub must send MIG_ARRAY_TOO_LARGE */
		return KERN_SUCCESS;
	}
	for (mach_msg_type_number_t k = 0; k < sCnt; k++)
		t[k] = s[sCnt - 1 - k];
	*tCnt = sCnt;
	return KERN_SUCCESS;
}

kern_return_t
do_split(mach_port_t server, vals_t data, mach_msg_type_number_t dataCnt, vals_t lo,
	 mach_msg_type_number_t *loCnt, longs_t hi, mach_msg_type_number_t *hiCnt, int *n)
{
	mach_msg_type_number_t nl = 0, nh = 0;

	for (mach_msg_type_number_t k = 0; k < dataCnt; k++) {
		if (data[k] < 0)
			lo[nl++] = data[k];
		else if (nh < 50)
			hi[nh++] = (int64_t)data[k] * 1000000007;
		else
			nh = 51; /* more than hi holds: over the bound */
	}
	*loCnt = nl;
	*hiCnt = nh;
	*n = (int)dataCnt;
	return KERN_SUCCESS;
}

kern_return_t
do_handles(mach_port_t server, server_handle_t h, server_handle_t *g)
{
	*g = h ^ 0xffff0000u;
	return KERN_SUCCESS;
}

kern_return_t
do_bytes(mach_port_t server, bytes_t b, mach_msg_type_number_t *bCnt, char *c)
{
	mach_msg_type_number_t n = *bCnt;

	for (mach_msg_type_number_t k = 0; k < n / 2; k++) {
		unsigned char t = b[k];

		b[k] = b[n - 1 - k];
		b[n - 1 - k] = t;
	}
	*c = (char)('a' + n % 26);
	if (n == 39)
		*bCnt = 41;
	return KERN_SUCCESS;
}

kern_return_t
S_str_lookup(mach_port_t server, path_t path, path_t canon, name_t name)
{
	size_t k;

	if (path[0] == '!') {
		memset(canon, 'x', sizeof(path_t)); /* no NUL: MIG_ARRAY_TOO_LARGE */
		return KERN_SUCCESS;
	}
	for (k = 0; path[k] != '\0'; k++)
		canon[k] = (char)(path[k] >= 'a' && path[k] <= 'z' ? path[k] - 32 : path[k]);
	canon[k] = '\0';
	if (path[0] == '?') {
		memset(name, 'y', sizeof(name_t));
		return KERN_SUCCESS;
	}
	k = strnlen(path, sizeof(name_t) - 1);
	memcpy(name, path, k);
	name[k] = '\0';
	return path[0] == '#' ? 4242 : KERN_SUCCESS;
}

kern_return_t
S_str_greet(mach_port_t server, name_t who, path_t msg, name_t tag)
{
	size_t n = strlen(tag);

	memcpy(msg, "hi ", 3);
	memcpy(msg + 3, who, strlen(who) + 1);
	if (n + 1 < sizeof(name_t)) {
		tag[n] = '+';
		tag[n + 1] = '\0';
	}
	return KERN_SUCCESS;
}

kern_return_t
S_str_note(mach_port_t server, name_t line)
{
	return strlen(line) % 2 ? 4242 : KERN_SUCCESS;
}

kern_return_t
S_str_blob(mach_port_t server, blob_t data, mach_msg_type_number_t dataCnt, blob_t back,
	   mach_msg_type_number_t *backCnt, int64_t *total)
{
	int64_t t = 0;

	for (mach_msg_type_number_t k = 0; k < dataCnt; k++) {
		back[dataCnt - 1 - k] = (int)((uint32_t)data[k] * 2u);
		t += data[k];
	}
	*backCnt = dataCnt;
	*total = t;
	return KERN_SUCCESS;
}
