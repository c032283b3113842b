/*
 * xool_impl.c - server routines for tests/dynamic/xool.defs, as xdemux.c calls them through
 * the compiled stubs and through the dynamic server.
 *
 * Each is deterministic: what it returns depends only on what it got, and the memory and
 * "ports" it returns are static (ports are numbers here, never used), so the two demuxes'
 * replies must agree byte for byte, descriptors included. In-values are folded into the
 * results, so a descriptor passed wrongly (its address, count or disposition) changes the
 * reply; some inputs return server codes, MIG_NO_REPLY or counts too large to send.
 */
#include <stdint.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>

#include "xoolServer.h"

static char xo_bytes[4096];
static natural_t xo_words[1024];
static mach_port_t xo_ports[64];

/* A positive code from bytes: 1 ... 100000. */
static uint64_t
xo_hash(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void
xo_init(void)
{
	if (xo_ports[1] != NULL)
		return;
	for (size_t i = 0; i < sizeof xo_bytes; i++)
		xo_bytes[i] = (char)(i * 7 + 1);
	for (size_t i = 0; i < sizeof xo_words / sizeof xo_words[0]; i++)
		xo_words[i] = (natural_t)(i * 2654435761u);
	for (size_t i = 0; i < sizeof xo_ports / sizeof xo_ports[0]; i++)
		xo_ports[i] =
			i % 5 == 0 ? MACH_PORT_NULL : (mach_port_t)(uintptr_t)(0x5000 + 8 * i);
}

static int
xo_result(uint64_t h)
{
	return (int)(h % 1000000u);
}

kern_return_t
x_din(mach_port_t server, pointer_t a, mach_msg_type_number_t aCnt, mach_port_type_array_t b,
      mach_msg_type_number_t bCnt, mach_port_type_array_t c, int x, int *r)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = xo_hash((const void *)a, aCnt, h);
	h = xo_hash(b, (size_t)bCnt * 4, h + bCnt);
	h = xo_hash(c, 16, h);
	if (x % 7 == 0)
		return 4000 + (kern_return_t)(h % 100);
	*r = xo_result(h + (uint64_t)x);
	return KERN_SUCCESS;
}

kern_return_t
x_dout(mach_port_t server, int n, pointer_t *a, mach_msg_type_number_t *aCnt,
       mach_port_type_array_t *b, mach_msg_type_number_t *bCnt, mach_port_type_array_t *c, int *r)
{
	uint32_t k = (uint32_t)n;

	xo_init();
	if (k % 11 == 0)
		return 4100;
	*a = (pointer_t)(uintptr_t)(xo_bytes + k % 64);
	*aCnt = k % 300;
	*b = xo_words + k % 32;
	/* Now and then more words than a 32-bit size of bytes holds: MIG_ARRAY_TOO_LARGE. */
	*bCnt = k % 13 == 0 ? UINT32_MAX / 4 + 1 : k % 100;
	*c = xo_words + 100 + k % 16;
	*r = (int)(k % 100000u) * 3;
	return KERN_SUCCESS;
}

kern_return_t
x_drt(mach_port_t server, int n, pointer_t *a, mach_msg_type_number_t *aCnt, boolean_t *aDealloc,
      mach_port_type_array_t *b, mach_msg_type_number_t *bCnt)
{
	uint32_t k = (uint32_t)n;

	xo_init();
	*a = (pointer_t)(uintptr_t)(xo_bytes + k % 50);
	*aCnt = k % 200;
	*aDealloc = (boolean_t)(k % 2);
	if (k % 3 == 0) {
		*b = xo_words + k % 40;
		*bCnt = k % 20;
	}
	return KERN_SUCCESS;
}

kern_return_t
x_dio(mach_port_t server, mach_port_type_array_t *a, mach_msg_type_number_t *aCnt, mach_port_t *p,
      mach_msg_type_name_t *pPoly, mach_port_array_t *q, mach_msg_type_number_t *qCnt)
{
	uint64_t h = xo_hash(*a, (size_t)*aCnt * 4, *aCnt);

	xo_init();
	h = xo_hash(p, sizeof *p, h + *pPoly);
	h = xo_hash(*q, (size_t)*qCnt * sizeof **q, h + *qCnt);
	switch (h % 4) {
	case 0:
		return 4200;
	case 1:
		/* Sent back as it came. */
		return KERN_SUCCESS;
	default:
		*aCnt /= 2;
		*a += h % 3;
		*p = xo_ports[h % 64];
		*pPoly = (mach_msg_type_name_t)(15 + h % 7);
		*q = xo_ports + h % 20;
		*qCnt = (mach_msg_type_number_t)(h % 30);
		return KERN_SUCCESS;
	}
}

kern_return_t
x_pin(mach_port_t server, mach_port_t p, mach_port_t q, mach_msg_type_name_t qPoly, mach_port_t m,
      int *r)
{
	uint64_t h = xo_hash(&p, sizeof p, qPoly);

	h = xo_hash(&q, sizeof q, h);
	h = xo_hash(&m, sizeof m, h);
	if (h % 9 == 0)
		return 4300;
	*r = xo_result(h);
	return KERN_SUCCESS;
}

kern_return_t
x_pout(mach_port_t server, int n, mach_port_t *p, mach_port_t *q, mach_msg_type_name_t *qPoly,
       mach_port_t *m)
{
	uint32_t k = (uint32_t)n;

	xo_init();
	*p = xo_ports[k % 64];
	*m = xo_ports[(k / 3) % 64];
	if (k % 2 == 0) {
		*q = xo_ports[(k / 5) % 64];
		*qPoly = 15 + k % 8; /* 22 is no disposition: the stub sends what it is given */
	}
	return k % 17 == 0 ? 4400 : KERN_SUCCESS;
}

kern_return_t
x_pain(mach_port_t server, mach_port_array_t p, mach_msg_type_number_t pCnt, mach_port_array_t f,
       int *r)
{
	uint64_t h = xo_hash(p, (size_t)pCnt * sizeof *p, pCnt);

	h = xo_hash(f, 3 * sizeof *f, h);
	if (h % 10 == 0)
		return 4500;
	*r = xo_result(h);
	return KERN_SUCCESS;
}

kern_return_t
x_paout(mach_port_t server, int n, mach_port_array_t *p, mach_msg_type_number_t *pCnt,
	mach_port_array_t *f)
{
	uint32_t k = (uint32_t)n;

	xo_init();
	*p = xo_ports + k % 30;
	*pCnt = k % 34;
	*f = xo_ports + k % 61;
	return KERN_SUCCESS;
}

kern_return_t
x_special(mach_port_t server, mach_port_seqno_t s, idl_reply_t reply, int x, int *y)
{
	/* Outside a server there is no request to defer: the handle is NULL. */
	if (reply != NULL)
		return 4600;
	if (x % 5 == 0)
		return MIG_NO_REPLY;
	*y = (int)((uint32_t)x + s % 1000);
	return KERN_SUCCESS;
}

kern_return_t
x_scopy(mach_port_t server, pointer_t a, mach_msg_type_number_t aCnt, boolean_t aSCopy, int *r)
{
	*r = xo_result(xo_hash((const void *)a, aCnt, aCnt)) + 7 * aSCopy;
	return KERN_SUCCESS;
}

kern_return_t
x_counted(mach_port_t server, int x, mach_port_type_array_t v, mach_msg_type_number_t *vCnt)
{
	for (mach_msg_type_number_t i = 0; i < *vCnt; i++)
		v[i] = (natural_t)((uint32_t)x + i);
	if (x % 4 == 0)
		/* Over the bound: MIG_ARRAY_TOO_LARGE. */
		*vCnt = 17 + (mach_msg_type_number_t)x % 3;
	return KERN_SUCCESS;
}

kern_return_t
x_oneway(mach_port_t server, mach_port_type_array_t a, mach_msg_type_number_t aCnt, mach_port_t p)
{
	return (kern_return_t)(1 + xo_hash(a, (size_t)aCnt * 4, (uint64_t)(uintptr_t)p) % 1000);
}

kern_return_t
x_reals(mach_port_t server, xfl_t a, int x, xdb_t b, xf3_t c, int *r, xdb_t *s)
{
	/* The bytes as received: a record passed in the wrong registers changes them. Nothing
	 * here computes with the values, so random NaNs keep their bits. */
	uint64_t h = xo_hash(&a, sizeof a, (uint64_t)(uint32_t)x);

	h = xo_hash(&b, sizeof b, h);
	h = xo_hash(&c, sizeof c, h);
	*r = xo_result(h);
	s->v[0] = b.v[1];
	s->v[1] = b.v[0];
	return x % 7 == 0 ? 4700 : KERN_SUCCESS;
}

kern_return_t
x_scout(mach_port_t server, int n, mach_port_type_array_t a, mach_msg_type_number_t *aCnt,
	mach_port_array_t p, mach_port_type_array_t b, mach_port_array_t q)
{
	uint32_t k = (uint32_t)n;

	xo_init();
	/* The room is that of the smallest array sharing the count. */
	if (*aCnt != 6)
		return 4800;
	if (k % 13 == 0)
		return 4801;
	/* 7 and 8 fit a and p but not b: MIG_ARRAY_TOO_LARGE. */
	*aCnt = k % 9;
	for (uint32_t i = 0; i < *aCnt && i < 6; i++) {
		a[i] = xo_words[(k + i) % 1024];
		p[i] = xo_ports[(k + 3 * i) % 64];
		b[i] = (natural_t)(k * 31 + i);
	}
	q[0] = xo_ports[k % 64];
	q[1] = xo_ports[(k / 2) % 64];
	return KERN_SUCCESS;
}

kern_return_t
x_scin(mach_port_t server, mach_port_type_array_t a, mach_msg_type_number_t aCnt,
       mach_port_array_t p, mach_port_type_array_t b, int *r)
{
	uint64_t h = xo_hash(a, (size_t)aCnt * 4, aCnt);

	h = xo_hash(p, (size_t)aCnt * sizeof *p, h);
	h = xo_hash(b, (size_t)aCnt * 4, h);
	if (h % 8 == 0)
		return 4900;
	*r = xo_result(h);
	return KERN_SUCCESS;
}

kern_return_t
x_ranges(mach_port_t server, xranges_t a, mach_msg_type_number_t aCnt, xranges_t b,
	 mach_msg_type_number_t *bCnt)
{
	if (*bCnt != 5)
		return 5000;
	/* Back in reverse order, one more than came now and then: MIG_ARRAY_TOO_LARGE. */
	for (mach_msg_type_number_t i = 0; i < aCnt; i++) {
		b[i].start = a[aCnt - 1 - i].end;
		b[i].end = a[aCnt - 1 - i].start;
	}
	*bCnt = aCnt == 5 && a[0].start % 3 == 0 ? 6 : aCnt;
	return KERN_SUCCESS;
}
