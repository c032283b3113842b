/*
 * xdemux.c - the dynamic server against the compiled stubs, request for request.
 *
 * For every golden interface (scalars, arrays, strings), bench.defs and xool.defs (every kind
 * of descriptor: out-of-line data and ports each way, dealloc, polymorphic ports, msgseqno,
 * sreplyport, countinout), linked here with their generated server stubs:
 *   - the descriptor idlcall builds from the .defs file at run time (tools/idlcall/idlcall_desc.c)
 *     equals the one idlc compiled into the stubs, field for field, hashes, flags and
 *     dispositions included;
 *   - thousands of requests, valid ones with random values and counts (one count for the
 *     arrays that share one) and broken ones
 *     (cut, grown, counts over their bounds or past the bytes, strings without their NUL,
 *     flipped bytes, foreign ids), go to the compiled demux and to the dynamic one (built on
 *     either descriptor alone, resolving the routines with dlsym: this program is linked with
 *     -export-dynamic), each into a reply buffer full of different garbage; the return
 *     value, the reply's retcode, size and every byte of it must be the same. Descriptors
 *     carry the same addresses to both (the routines return static memory and treat ports
 *     as numbers), so a reply's descriptors compare byte for byte too; broken descriptors
 *     (wrong type, flag, count, size, disposition) are among the broken requests.
 *
 *     xdemux [SEED]
 *     xdemux time     the cost of one demux call, compiled and dynamic, for a few routines
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>
#include <idl/idl_trace.h>
#include <idl/idl_transport.h>

#include "arraysServer.h"
#include "benchServer.h"
#include "idlcall.h"
#include "scalarsServer.h"
#include "stringsServer.h"
#include "xdemux.h"
#include "xoolServer.h"

#define XD_CAP (256 * 1024)
#define XD_VALID 300 /* valid requests per routine */

struct xd_iface {
	const char *defs; /* under the source tree */
	const char *incdir; /* its imports, for cpp */
	const struct idl_subsystem *ss;
	idl_demux_fn demux;
	const char *prefix;
};

static const struct xd_iface xd_ifaces[] = {
	{ "tests/golden/scalars.defs", "tests/golden", &scalars_subsystem, scalars_server, "s_" },
	{ "tests/golden/arrays.defs", "tests/golden", &arrays_subsystem, arrays_demux, "do_" },
	{ "tests/golden/strings.defs", "tests/golden", &strings_subsystem, strings_server,
	  "S_str_" },
	{ "examples/bench/bench.defs", "examples/bench", &bench_subsystem, bench_server,
	  "S_bench_" },
	{ "tests/dynamic/xool.defs", "data/include", &xool_subsystem, xool_server, "x_" },
};

static union xd_buf {
	idl_msg_header_t head;
	uint64_t align;
	unsigned char b[XD_CAP];
} xd_msg, xd_in1, xd_in2, xd_out1, xd_out2;

#define XD_MAX_ARGS 16
static unsigned char xd_data[XD_MAX_ARGS][XD_CAP / 2];
unsigned xd_failures;
static unsigned long xd_compared, xd_ok, xd_bad_args, xd_too_large, xd_server_codes;
static uint64_t xd_rng;

static uint32_t
xd_rand(void)
{
	xd_rng ^= xd_rng << 13;
	xd_rng ^= xd_rng >> 7;
	xd_rng ^= xd_rng << 17;
	return (uint32_t)(xd_rng >> 16);
}

static bool
xd_streq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The descriptor from the .defs file is the compiled one. */
static void
xd_compare_desc(const struct idl_subsystem *c, const struct idl_subsystem *r)
{
	XD_CHECK(c->magic == r->magic && c->nroutines == r->nroutines &&
			 xd_streq(c->name, r->name) && c->base == r->base &&
			 c->max_request == r->max_request && c->max_reply == r->max_reply,
		 "subsystem %s", c->name);
	for (uint32_t n = 0; n < c->nroutines && n < r->nroutines; n++) {
		const struct idl_routine_desc *a = &c->routines[n], *b = &r->routines[n];

		XD_CHECK(xd_streq(a->name, b->name) && a->number == b->number &&
				 a->kind == b->kind && a->nargs == b->nargs &&
				 a->sig_hash == b->sig_hash && a->waittime == b->waittime &&
				 a->req_fixed == b->req_fixed && a->req_max == b->req_max &&
				 a->rep_fixed == b->rep_fixed && a->rep_max == b->rep_max,
			 "%s routine %" PRIu32, c->name, n);
		XD_CHECK(idl_routine_sig_hash(b) == a->sig_hash, "%s.%s: hash", c->name,
			 a->name ? a->name : "(skip)");
		for (unsigned i = 0; i < a->nargs && i < b->nargs; i++) {
			const struct idl_arg_desc *x = &a->args[i], *y = &b->args[i];

			XD_CHECK(xd_streq(x->name, y->name) && xd_streq(x->ctype, y->ctype) &&
					 x->dir == y->dir && x->kind == y->kind &&
					 x->wire_type == y->wire_type &&
					 x->disposition == y->disposition && x->flags == y->flags &&
					 x->elem_size == y->elem_size && x->count == y->count &&
					 x->req_offset == y->req_offset &&
					 x->rep_offset == y->rep_offset,
				 "%s.%s argument %s (ctype %s vs %s, flags %#" PRIx32
				 " vs %#" PRIx32 ", disposition %u vs %u)",
				 c->name, a->name, x->name, x->ctype, y->ctype, x->flags, y->flags,
				 x->disposition, y->disposition);
		}
	}
}

/*
 * The arrays of ports a server stub sent from a buffer of its own (an out inline array of
 * ports, IDL_DESCF_FREE_ARRAY): the two demuxes allocated apart, so the addresses differ.
 * The ports in them must not; then the addresses are left out of the comparison and the
 * buffers freed, as the runtime frees them once sent.
 */
static void
xd_free_arrays(const char *what)
{
	idl_desc_t *d1 = (idl_desc_t *)(void *)(xd_out1.b + IDL_MSG_HEADER_SIZE);
	idl_desc_t *d2 = (idl_desc_t *)(void *)(xd_out2.b + IDL_MSG_HEADER_SIZE);

	if (xd_out1.head.retcode != 0 || xd_out2.head.retcode != 0 ||
	    !(xd_out1.head.flags & IDL_MSGF_DESC) || xd_out1.head.ndesc != xd_out2.head.ndesc ||
	    xd_out1.head.size != xd_out2.head.size ||
	    xd_out1.head.ndesc > (xd_out1.head.size - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE)
		return;
	for (uint32_t i = 0; i < xd_out1.head.ndesc; i++) {
		size_t bytes = (size_t)d1[i].size * sizeof(idl_port_t);

		if (d1[i].type != IDL_DESC_PORT_ARRAY || !(d1[i].flags & IDL_DESCF_FREE_ARRAY) ||
		    d2[i].type != d1[i].type || d2[i].flags != d1[i].flags ||
		    d2[i].size != d1[i].size)
			continue;
		XD_CHECK(memcmp((void *)(uintptr_t)d1[i].addr, (void *)(uintptr_t)d2[i].addr,
				bytes) == 0,
			 "%s: the ports of reply descriptor %" PRIu32 " differ", what, i);
		idl_ool_free((void *)(uintptr_t)d1[i].addr, bytes);
		idl_ool_free((void *)(uintptr_t)d2[i].addr, bytes);
		d1[i].addr = 0;
		d2[i].addr = 0;
	}
}

/* Serves one message with the compiled demux and a dynamic one; the replies must agree. */
static void
xd_serve(const struct xd_iface *xi, idl_dynamic_t *d, const char *what, size_t len)
{
	int r1, r2;

	xd_msg.head.size = (uint32_t)len;
	memcpy(xd_in1.b, xd_msg.b, len);
	memcpy(xd_in2.b, xd_msg.b, len);
	memset(xd_out1.b, 0xaa, xi->ss->max_reply + 64u);
	memset(xd_out2.b, 0x55, xi->ss->max_reply + 64u);
	r1 = xi->demux(&xd_in1.head, &xd_out1.head);
	r2 = idl_dynamic_demux(d, &xd_in2.head, &xd_out2.head);
	xd_compared++;
	XD_CHECK(r1 == r2 && xd_out1.head.retcode == xd_out2.head.retcode &&
			 xd_out1.head.size == xd_out2.head.size,
		 "%s id %" PRId32 " %s: compiled %d/%d/%" PRIu32 ", dynamic %d/%d/%" PRIu32,
		 xi->ss->name, xd_msg.head.id, what, r1, xd_out1.head.retcode, xd_out1.head.size,
		 r2, xd_out2.head.retcode, xd_out2.head.size);
	xd_free_arrays(what);
	if (xd_out1.head.size == xd_out2.head.size && xd_out1.head.size <= xi->ss->max_reply) {
		for (uint32_t k = 0; k < xd_out1.head.size; k++) {
			if (xd_out1.b[k] != xd_out2.b[k]) {
				XD_CHECK(0,
					 "%s id %" PRId32 " %s: reply byte %" PRIu32
					 " is %02x compiled, %02x dynamic",
					 xi->ss->name, xd_msg.head.id, what, k, xd_out1.b[k],
					 xd_out2.b[k]);
				break;
			}
		}
	}
	XD_CHECK(memcmp(xd_in1.b, xd_in2.b, len) == 0, "%s: the request was changed", what);
	if (xd_out1.head.retcode == 0)
		xd_ok++;
	else if (xd_out1.head.retcode == MIG_BAD_ARGUMENTS)
		xd_bad_args++;
	else if (xd_out1.head.retcode == MIG_ARRAY_TOO_LARGE)
		xd_too_large++;
	else if (xd_out1.head.retcode > 0)
		xd_server_codes++;
}

/* A count that finds the edges more often than chance would. */
static uint32_t
xd_count(uint32_t bound)
{
	switch (xd_rand() % 6) {
	case 0:
		return 0;
	case 1:
		return bound;
	case 2:
		return bound > 0 ? bound - 1 : 0;
	default:
		return xd_rand() % (bound + 1);
	}
}

static void
xd_text(unsigned char *p, uint32_t n)
{
	static const char first[] = "!?#ab";

	for (uint32_t k = 0; k < n; k++)
		p[k] = (unsigned char)(' ' + 1 + xd_rand() % 94);
	if (n > 0 && xd_rand() % 4 == 0)
		p[0] = (unsigned char)first[xd_rand() % 5];
	p[n] = '\0';
}

/* A descriptor argument's value: data of a random count, or ports, which are numbers to the
 * routines (never used), some of them null. */
static void
xd_desc_value(const struct idl_arg_desc *a, unsigned char *p, struct idl_arg_value *v)
{
	bool fixed = a->flags & IDL_ARGF_FIXED;
	uint32_t n;

	if (a->kind == IDL_ARG_PORT || a->wire_type == IDL_WT_PORT) {
		n = a->kind == IDL_ARG_PORT ? 1
		    : fixed		    ? a->count
					    : xd_count(a->count ? a->count : 9);
		for (uint32_t k = 0; k < n; k++) {
			idl_port_t port =
				(idl_port_t)(uintptr_t)(xd_rand() % 4 == 0
								? 0
								: 0x7000 + 8 * (xd_rand() % 512));

			memcpy(p + k * sizeof port, &port, sizeof port);
		}
	} else {
		n = fixed ? a->count : xd_count(xd_rand() % 3 ? 40 : 3000);
		for (size_t k = 0; k < (size_t)n * a->elem_size; k++)
			p[k] = (unsigned char)xd_rand();
	}
	v->data = p;
	v->count = n;
}

/* Bytes of the descriptors of a request, which the broken requests leave alone but for the
 * changes xd_desc_mutants() makes: a changed address would send the routine anywhere. */
static size_t
xd_desc_end(const struct idl_routine_desc *rt)
{
	size_t end = IDL_MSG_HEADER_SIZE;

	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if ((a->dir == IDL_DIR_IN || a->dir == IDL_DIR_INOUT) &&
		    (a->kind == IDL_ARG_OOL || a->kind == IDL_ARG_PORT) &&
		    a->req_offset + (size_t)IDL_DESC_SIZE > end)
			end = a->req_offset + (size_t)IDL_DESC_SIZE;
	}
	return end;
}

/* Arrays that share one count (samecount) are sent with one: the leader's, cut to the
 * smallest bound of the group. */
static void
xd_samecount(const struct idl_routine_desc *rt, struct idl_arg_value *vals)
{
	for (unsigned l = 0; l < rt->nargs; l++) {
		uint32_t room = rt->args[l].count, n;
		unsigned k;

		for (k = l + 1; k < rt->nargs && (rt->args[k].flags & IDL_ARGF_SAMECOUNT); k++)
			if (rt->args[k].count != 0 && (room == 0 || rt->args[k].count < room))
				room = rt->args[k].count;
		if (k == l + 1)
			continue;
		n = vals[l].count;
		if (room != 0 && n > room)
			n = xd_count(room);
		for (unsigned m = l; m < k; m++)
			vals[m].count = n;
	}
}

/* A valid request with random values; returns its size. */
static size_t
xd_valid(const struct idl_subsystem *ss, const struct idl_routine_desc *rt)
{
	struct idl_arg_value vals[UINT8_MAX + 1];
	int size;

	memset(vals, 0, sizeof vals);
	XD_CHECK(rt->nargs <= XD_MAX_ARGS, "%s.%s: too many arguments for the test", ss->name,
		 rt->name);
	for (unsigned i = 0; i < rt->nargs && i < XD_MAX_ARGS; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		unsigned char *p = xd_data[i];
		uint32_t n;

		if (a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT)
			continue;
		vals[i].data = p;
		switch (a->kind) {
		case IDL_ARG_CSTRING_FIXED:
		case IDL_ARG_CSTRING_VAR:
			n = xd_count(a->count - 1);
			xd_text(p, n);
			vals[i].count = n + 1;
			break;
		case IDL_ARG_SCALAR:
		case IDL_ARG_FIXED_ARRAY:
		case IDL_ARG_VAR_ARRAY:
			n = a->kind == IDL_ARG_SCALAR	     ? 1
			    : a->kind == IDL_ARG_FIXED_ARRAY ? a->count
							     : xd_count(a->count);
			for (size_t k = 0; k < (size_t)n * a->elem_size; k++)
				p[k] = (unsigned char)xd_rand();
			if (a->wire_type == IDL_WT_BOOLEAN && xd_rand() % 2) {
				memset(p, 0, 4);
				p[0] = (unsigned char)(xd_rand() % 2);
			}
			if (a->kind == IDL_ARG_VAR_ARRAY && xd_rand() % 3 == 0)
				memset(p, 0, (size_t)n * a->elem_size); /* small values too */
			vals[i].count = n;
			break;
		case IDL_ARG_PORT:
		case IDL_ARG_OOL:
			xd_desc_value(a, p, &vals[i]);
			break;
		default:
			break;
		}
	}
	xd_samecount(rt, vals);
	size = idl_msg_pack(rt, 0, vals, &xd_msg.head, sizeof xd_msg);
	XD_CHECK(size > 0, "%s.%s: pack: %d", ss->name, rt->name, size);
	xd_msg.head.magic = IDL_MSG_MAGIC;
	xd_msg.head.order = IDL_ORDER_NATIVE;
	xd_msg.head.kind = rt->kind == IDL_RT_ROUTINE ? IDL_KIND_REQUEST : IDL_KIND_ONEWAY;
	xd_msg.head.id = ss->base + (int32_t)rt->number;
	xd_msg.head.seqno = xd_rand();
	return size > 0 ? (size_t)size : IDL_MSG_HEADER_SIZE;
}

static void
xd_put32(uint32_t off, uint32_t v)
{
	memcpy(xd_msg.b + off, &v, sizeof v);
}

/* Broken descriptors of a valid request: the header's flag and count, each descriptor's
 * type, size, disposition. Sizes only shrink or grow by a little, within the test's
 * buffers, as a routine that accepts them reads that much. */
static void
xd_desc_mutants(const struct xd_iface *xi, idl_dynamic_t *d, const struct idl_routine_desc *rt,
		size_t len, const union xd_buf *orig)
{
	if (!(xd_msg.head.flags & IDL_MSGF_DESC))
		return;
	xd_msg.head.flags = 0;
	xd_serve(xi, d, "descriptor flag cleared", len);
	memcpy(xd_msg.b, orig->b, len);
	xd_msg.head.ndesc++;
	xd_serve(xi, d, "one descriptor more", len);
	memcpy(xd_msg.b, orig->b, len);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		idl_desc_t *dp = (idl_desc_t *)(void *)(xd_msg.b + a->req_offset);
		const uint32_t sizes[] = { 1, 3, 4, 5, 8, 9 };

		if ((a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT) ||
		    (a->kind != IDL_ARG_OOL && a->kind != IDL_ARG_PORT))
			continue;
		for (uint8_t type = 0; type <= 4; type++) {
			dp->type = type;
			xd_serve(xi, d, "descriptor type", len);
			memcpy(xd_msg.b, orig->b, len);
		}
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			uint32_t elem = a->elem_size != 0 ? a->elem_size : 1;

			/* Ports count elements; data counts bytes, whole elements or not. */
			if (a->kind == IDL_ARG_OOL && a->wire_type == IDL_WT_PORT)
				dp->size = sizes[k];
			else
				dp->size = sizes[k] * elem + (uint32_t)(k % 2);
			xd_serve(xi, d, "descriptor size", len);
			memcpy(xd_msg.b, orig->b, len);
		}
		for (uint16_t aux = 14; aux <= 22; aux += 2) {
			dp->aux = aux;
			xd_serve(xi, d, "descriptor disposition", len);
			memcpy(xd_msg.b, orig->b, len);
		}
		dp->flags = IDL_DESCF_DEALLOC;
		xd_serve(xi, d, "descriptor dealloc", len);
		memcpy(xd_msg.b, orig->b, len);
	}
}

/* Broken variants of a valid request of `len` bytes, each served by both demuxes. */
static void
xd_mutants(const struct xd_iface *xi, idl_dynamic_t *d, const struct idl_routine_desc *rt,
	   size_t len)
{
	static union xd_buf orig;
	uint32_t off = rt->req_fixed;

	memcpy(orig.b, xd_msg.b, len);
	if (len >= IDL_MSG_HEADER_SIZE + 8) {
		xd_serve(xi, d, "cut by 8", len - 8);
		memcpy(xd_msg.b, orig.b, len);
	}
	memset(xd_msg.b + len, 0, 8);
	xd_serve(xi, d, "grown by 8", len + 8);
	memcpy(xd_msg.b, orig.b, len);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		uint32_t n;

		if (a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT)
			continue;
		if (a->kind == IDL_ARG_CSTRING_FIXED) {
			memset(xd_msg.b + a->req_offset, 'A', a->count);
			xd_serve(xi, d, "fixed string without NUL", len);
			memcpy(xd_msg.b, orig.b, len);
		}
		if (a->kind != IDL_ARG_VAR_ARRAY && a->kind != IDL_ARG_CSTRING_VAR)
			continue;
		memcpy(&n, xd_msg.b + a->req_offset, sizeof n);
		{
			const uint32_t counts[] = { a->count + 1, 0,
						    UINT32_MAX,	  n + 1,
						    n + 8,	  UINT32_MAX / a->elem_size + 1 };

			for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
				xd_put32(a->req_offset, counts[k]);
				xd_serve(xi, d, "count changed", len);
				memcpy(xd_msg.b, orig.b, len);
			}
		}
		if (a->kind == IDL_ARG_CSTRING_VAR && n > 0 && off + n <= len) {
			xd_msg.b[off + n - 1] = 'Z';
			xd_serve(xi, d, "string without NUL", len);
			memcpy(xd_msg.b, orig.b, len);
		}
		off += (uint32_t)IDL_MSG_ROUND((size_t)n * a->elem_size);
	}
	/* The last variable argument one over its bound, with the bytes to match: only the
	 * bound check can refuse it. */
	for (unsigned i = rt->nargs; i-- > 0;) {
		const struct idl_arg_desc *a = &rt->args[i];
		size_t grow, n0;
		uint32_t n;

		if ((a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT) ||
		    (a->kind != IDL_ARG_VAR_ARRAY && a->kind != IDL_ARG_CSTRING_VAR))
			continue;
		memcpy(&n, xd_msg.b + a->req_offset, sizeof n);
		n0 = IDL_MSG_ROUND((size_t)n * a->elem_size);
		grow = IDL_MSG_ROUND(((size_t)a->count + 1) * a->elem_size) - n0;
		if (len + grow <= sizeof xd_msg) {
			memset(xd_msg.b + len, 0, grow);
			xd_put32(a->req_offset, a->count + 1);
			xd_serve(xi, d, "one over the bound", len + grow);
			memcpy(xd_msg.b, orig.b, len);
		}
		break;
	}
	for (int k = 0; k < 3 && len > xd_desc_end(rt); k++) {
		size_t at = xd_desc_end(rt) + xd_rand() % (len - xd_desc_end(rt));

		xd_msg.b[at] ^= (unsigned char)(1u << (xd_rand() % 8));
		xd_serve(xi, d, "flipped bit", len);
	}
	memcpy(xd_msg.b, orig.b, len);
	xd_desc_mutants(xi, d, rt, len, &orig);
	/* Descriptors announced that the routine does not have. */
	xd_msg.head.flags = IDL_MSGF_DESC;
	xd_msg.head.ndesc = 1;
	xd_serve(xi, d, "descriptors announced", len);
	memcpy(xd_msg.b, orig.b, len);
	xd_msg.head.id = xi->ss->base + (int32_t)xi->ss->nroutines;
	xd_serve(xi, d, "id past the last routine", len);
	xd_msg.head.id = xi->ss->base - 1;
	xd_serve(xi, d, "id below the base", len);
	memcpy(xd_msg.b, orig.b, len);
}

static void *
xd_resolve(void *arg, const char *symbol)
{
	/* No program symbol of that name: a resolver that finds nothing fails creation. */
	return NULL;
}

static void
xd_iface_run(const struct xd_iface *xi, const char *top)
{
	struct idlcall_iface ifc;
	idl_dynamic_t *dc = NULL, *dr = NULL, *bad = NULL;
	const char *cpp[2];
	char path[4096], inc[4096];

	snprintf(path, sizeof path, "%s/%s", top, xi->defs);
	snprintf(inc, sizeof inc, "%s/%s", top, xi->incdir);
	cpp[0] = "-I";
	cpp[1] = inc;
	if (idlcall_load(path, cpp, 2, &ifc) != 0) {
		XD_CHECK(0, "%s does not load", path);
		idlcall_unload(&ifc);
		return;
	}
	xd_compare_desc(xi->ss, &ifc.ss);
	XD_CHECK(strcmp(ifc.serverprefix, xi->prefix) == 0, "%s: prefix %s", xi->defs,
		 ifc.serverprefix);
	/* Each table alone: the compiled one must say all the stubs do (ports, dealloc,
	 * msgseqno, reply ports, records), as the one from the .defs file does. */
	XD_CHECK(idl_dynamic_create(xi->ss, xi->prefix, NULL, NULL, &dc) == 0,
		 "%s: create (compiled descriptor): %s", xi->defs, idl_errdetail());
	XD_CHECK(idl_dynamic_create(&ifc.ss, ifc.serverprefix, NULL, NULL, &dr) == 0,
		 "%s: create (descriptor from the .defs): %s", xi->defs, idl_errdetail());
	XD_CHECK(idl_dynamic_create(xi->ss, xi->prefix, xd_resolve, NULL, &bad) == IDL_EINVAL &&
			 bad == NULL && strstr(idl_errdetail(), xi->prefix) != NULL,
		 "%s: a routine the resolver lacks is refused by name (%s)", xi->defs,
		 idl_errdetail());
	for (uint32_t n = 0; dc != NULL && dr != NULL && n < xi->ss->nroutines; n++) {
		const struct idl_routine_desc *rt = &xi->ss->routines[n];

		if (rt->kind == IDL_RT_SKIP)
			continue;
		for (int k = 0; k < XD_VALID; k++) {
			size_t len = xd_valid(xi->ss, rt);

			xd_serve(xi, k % 2 ? dc : dr, "valid", len);
			if (k % 10 == 0)
				xd_mutants(xi, k % 20 ? dc : dr, rt, len);
		}
	}
	/* Garbage with each id of the subsystem. */
	for (int k = 0; dc != NULL && k < 2000; k++) {
		size_t len = IDL_MSG_HEADER_SIZE + 8u * (xd_rand() % 64);

		for (size_t j = IDL_MSG_HEADER_SIZE; j < len; j++)
			xd_msg.b[j] = (unsigned char)(xd_rand() % 4 ? xd_rand() % 4 : xd_rand());
		xd_msg.head.id = xi->ss->base + (int32_t)(xd_rand() % (xi->ss->nroutines + 1));
		xd_msg.head.kind = IDL_KIND_REQUEST;
		xd_msg.head.flags = 0;
		xd_msg.head.ndesc = 0;
		/* Garbage descriptors would send routines to garbage addresses. */
		if (idl_subsystem_routine(xi->ss, xd_msg.head.id) != NULL &&
		    xd_desc_end(idl_subsystem_routine(xi->ss, xd_msg.head.id)) >
			    IDL_MSG_HEADER_SIZE)
			continue;
		xd_serve(xi, dc, "garbage", len);
	}
	idl_dynamic_destroy(dc);
	idl_dynamic_destroy(dr);
	idlcall_unload(&ifc);
}

/* Nanoseconds per demux call of one bench routine, compiled and dynamic. */
static void
xd_time(idl_dynamic_t *d, const char *name, const char *const *args, int nargs)
{
	const struct idl_routine_desc *rt = idlcall_find(&bench_subsystem, name);
	struct idl_arg_value vals[8];
	void *owned[8] = { NULL };
	char err[256];
	int64_t t0, t1, t2;
	int j = 0, n = 1000000;

	memset(vals, 0, sizeof vals);
	for (unsigned i = 0; i < rt->nargs && j < nargs; i++) {
		if (rt->args[i].dir != IDL_DIR_IN && rt->args[i].dir != IDL_DIR_INOUT)
			continue;
		if (idlcall_parse_arg(&rt->args[i], args[j++], &owned[i], &vals[i].count, err,
				      sizeof err) != 0)
			return;
		vals[i].data = owned[i];
	}
	idl_msg_pack(rt, 0, vals, &xd_in1.head, sizeof xd_in1);
	xd_in1.head.id = bench_subsystem.base + (int32_t)rt->number;
	t0 = idl_now_ns();
	for (int k = 0; k < n; k++)
		bench_server(&xd_in1.head, &xd_out1.head);
	t1 = idl_now_ns();
	for (int k = 0; k < n; k++)
		idl_dynamic_demux(d, &xd_in1.head, &xd_out2.head);
	t2 = idl_now_ns();
	printf("%-8s compiled %6.1f ns   dynamic %6.1f ns\n", name, (double)(t1 - t0) / n,
	       (double)(t2 - t1) / n);
	for (int i = 0; i < 8; i++)
		free(owned[i]);
}

static int
xd_time_all(void)
{
	static const char *const add[] = { "2", "3" }, *const sum[] = { "[1,2,3,4,5,6,7,8]" },
				 *const echo[] = { "hello, world" };
	idl_dynamic_t *d;

	if (idl_dynamic_create(&bench_subsystem, "S_bench_", NULL, NULL, &d) != 0)
		return 1;
	xd_time(d, "null", NULL, 0);
	xd_time(d, "add", add, 2);
	xd_time(d, "bigout", NULL, 0);
	xd_time(d, "echo", echo, 1);
	xd_time(d, "sum", sum, 1);
	idl_dynamic_destroy(d);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *top = getenv("IDL_TOP_SRCDIR");

	if (argc > 1 && strcmp(argv[1], "time") == 0)
		return xd_time_all();

	xd_rng = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x9e3779b97f4a7c15ull;
	if (xd_rng == 0)
		xd_rng = 1;
	if (top == NULL || *top == '\0')
		top = IDL_TOP_SRCDIR;
	for (size_t i = 0; i < sizeof xd_ifaces / sizeof xd_ifaces[0]; i++)
		xd_iface_run(&xd_ifaces[i], top);
	xd_odd_descriptors();
	xd_many_servers();
	printf("xdemux: %lu requests compared: %lu succeeded, %lu MIG_BAD_ARGUMENTS, "
	       "%lu MIG_ARRAY_TOO_LARGE, %lu server codes; %u failures\n",
	       xd_compared, xd_ok, xd_bad_args, xd_too_large, xd_server_codes, xd_failures);
	/* Every path was taken, or the comparison proved less than it claims. */
	XD_CHECK(xd_ok > 1000 && xd_bad_args > 1000 && xd_too_large > 10 && xd_server_codes > 100,
		 "coverage");
	return xd_failures == 0 ? 0 : 1;
}
