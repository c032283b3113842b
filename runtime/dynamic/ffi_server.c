/*
 * ffi_server.c - the dynamic server: serves an interface from its descriptor table, calling
 * the implementation through libffi (<idl/idl_dynamic.h>).
 *
 * idl_dynamic_create() does the work that does not depend on a request: it resolves each
 * routine's function, plans its C parameters (what the generated stub would pass for each
 * argument: a value converted from the wire, a pointer into the request or the reply, a
 * count) and prepares libffi's call interface. Serving a request is then the generated
 * stub's steps read from that plan: the checks of idl_msg_check(), the reply's fixed part
 * cleared, inout data copied into the reply, the call, the out checks, the scalars, and the
 * variable parts packed in order (each written at its largest offset, moved down after the
 * call, as docs/generated-code.md describes), so the reply's bytes are the compiled stub's.
 * Descriptors (out-of-line data, ports) and the special arguments (msgseqno, sreplyport)
 * are interp/interp_desc.c's and ffi_desc.c's, read from the table's flags and
 * dispositions.
 *
 * The server core hands each request to idl_dynamic_demux() with the interface as the
 * demux's context (idl_server_add_subsystem_ctx()).
 *
 * The dynamic room, the top of the runtime: it uses the server's public API, the
 * interpreter and tracing, and nothing of the client.
 */
#include <config.h>

#include <dlfcn.h>
#include <ffi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamic/dynamic.h"
#include "ool/ool.h"
#include "interp/interp_desc.h"
#include "trace/trace.h"

#define DYN_MAX_ARGS 256 /* nargs is a uint8_t */
#define DYN_MAX_PARAMS (2 * DYN_MAX_ARGS)

/* What one C parameter of a server routine is, and where its value comes from. */
enum dyn_how {
	DH_PORT = 1, /* the request port: idl_request_port() */
	DH_IN_SCALAR, /* a value converted from the request's wire type to the C type */
	DH_IN_RECORD, /* a struct by value, straight from the request */
	DH_IN_PTR, /* a pointer into the request: arrays and strings */
	DH_IN_COUNT, /* a variable in-array's count, by value */
	DH_OUT_SCALAR, /* a pointer to a local, converted into the reply after the call */
	DH_OUT_PTR, /* a pointer into the reply: arrays, strings, records */
	DH_OUT_COUNT, /* a pointer to a variable out-array's count */
	DH_CONST, /* a constant (the stubs' FALSE for <arg>SCopy, a reply port's Poly) */
	DH_SEQNO, /* msgseqno: the request's seqno */
	DH_REPLY, /* sreplyport: the idl_reply_t fetched before the call */
	DH_DIN_VALUE, /* an in descriptor's value: data, a port, an array of ports */
	DH_DIN_POLY, /* its disposition as received */
	DH_DIN_COUNT, /* its element count */
	DH_DOUT_BUF, /* the buffer of an out inline array of ports, which the routine fills */
	DH_DOUT_VALUE, /* pointers to what the routine returns in an out descriptor */
	DH_DOUT_POLY,
	DH_DOUT_COUNT,
	DH_DOUT_DEALLOC,
};

/* The classes and sizes of a scalar argument's wire type and C type, found once. */
struct dyn_argcls {
	uint8_t wc, ws; /* wire */
	uint8_t cc, cs; /* C */
};

struct dyn_param {
	uint8_t how; /* enum dyn_how */
	uint8_t cls; /* DH_*_SCALAR: enum dyn_cls of the C type */
	uint8_t size; /* DH_*_SCALAR: bytes of the C type */
	uint8_t arg; /* index in the routine's args */
	uint32_t k; /* DH_CONST: the value */
};

struct dyn_routine {
	const struct idl_routine_desc *rt; /* NULL for a skip */
	void (*fn)(void);
	ffi_cif cif;
	unsigned nparams;
	struct dyn_param *params;
	ffi_type **types; /* nparams */
	ffi_type *records; /* struct types of records passed by value, one per argument */
	ffi_type ***elems; /* their element lists (NULL-terminated), owned */
	uint32_t *var_pos; /* per argument: where a variable reply argument is written */
	struct dyn_argcls *cls; /* per argument: its wire and C classes (scalars) */
	bool too_many; /* more C parameters than DYN_MAX_PARAMS: not served */
	bool unsupported; /* arguments only compiled stubs serve: answered IDL_ENOTSUP */
};

struct idl_dynamic {
	const struct idl_subsystem *ss;
	struct dyn_routine *routines; /* ss->nroutines */
};

/* Whether an argument is a record (a C struct): passed by value in, by pointer out. */
static bool
dyn_is_record(const struct idl_arg_desc *a)
{
	return (a->flags & IDL_ARGF_RECORD) != 0;
}

/* The libffi struct type of a record passed by value: its wire elements in order, which
 * is how the C ABI sees a struct of integers of those sizes. */
static int
dyn_record_type(struct dyn_routine *r, unsigned i, ffi_type **out)
{
	const struct idl_arg_desc *a = &r->rt->args[i];
	uint32_t n = a->kind == IDL_ARG_SCALAR ? 1 : a->count;
	uint8_t cls, size;
	ffi_type *et;
	ffi_type **el;

	idl__dyn_wire_cls(a, &cls, &size);
	et = cls == DC_RECORD ? NULL : idl__dyn_ffi_type(cls, size);
	if (et == NULL) {
		/* An opaque record: words of the largest size that divides it. */
		uint32_t bytes = a->elem_size * n, w = 8;

		while (bytes % w != 0)
			w /= 2;
		et = idl__dyn_ffi_type(DC_UINT, (uint8_t)w);
		n = bytes / w;
	}
	if (n == 0 || n > 64 * 1024 * 1024 || (el = calloc((size_t)n + 1, sizeof *el)) == NULL)
		return IDL_ENOMEM;
	for (uint32_t k = 0; k < n; k++)
		el[k] = et;
	r->elems[i] = el;
	r->records[i].size = 0;
	r->records[i].alignment = 0;
	r->records[i].type = FFI_TYPE_STRUCT;
	r->records[i].elements = el;
	*out = &r->records[i];
	return 0;
}

/* Adds one C parameter to a routine's plan. */
static void
dyn_add(struct dyn_routine *r, uint8_t how, unsigned arg, uint8_t cls, uint8_t size, ffi_type *t)
{
	struct dyn_param *p = &r->params[r->nparams];

	if (r->nparams >= DYN_MAX_PARAMS) {
		r->too_many = true;
		return;
	}
	p->how = how;
	p->arg = (uint8_t)arg;
	p->cls = cls;
	p->size = size;
	r->types[r->nparams++] = t;
}

/* The parameters of a special argument: what its flags say the server routine takes (none
 * for the client's own: ureplyport, waittime...). */
static void
dyn_plan_other(struct dyn_routine *r, unsigned i)
{
	const struct idl_arg_desc *a = &r->rt->args[i];

	if (a->flags & IDL_ARGF_SEQNO) {
		dyn_add(r, DH_SEQNO, i, DC_UINT, 4, &ffi_type_uint32);
	} else if (a->flags & IDL_ARGF_REPLY) {
		dyn_add(r, DH_REPLY, i, 0, 0, &ffi_type_pointer);
		if (a->flags & IDL_ARGF_POLY_OUT) {
			dyn_add(r, DH_CONST, i, DC_UINT, 4, &ffi_type_uint32);
			if (!r->too_many)
				r->params[r->nparams - 1].k = 18; /* MACH_MSG_TYPE_PORT_SEND_ONCE */
		}
	}
}

/* The parameters of a descriptor argument, in the stubs' order: in, the value, its Poly,
 * its count, SCopy; out, pointers to the value, Poly, count and Dealloc. */
static void
dyn_plan_desc(struct dyn_routine *r, unsigned i, bool out)
{
	const struct idl_arg_desc *a = &r->rt->args[i];
	bool poly = idl__dyn_has_poly(a, 1);
	bool count = a->kind == IDL_ARG_OOL && !idl__dyn_desc_fixed(a) &&
		     !(a->flags & IDL_ARGF_SAMECOUNT);

	if (out) {
		/* An inline array of ports is filled in place; other descriptors returned. */
		dyn_add(r, (a->flags & IDL_ARGF_INLINE) ? DH_DOUT_BUF : DH_DOUT_VALUE, i, 0, 0,
			&ffi_type_pointer);
		if (poly)
			dyn_add(r, DH_DOUT_POLY, i, 0, 0, &ffi_type_pointer);
		if (count)
			dyn_add(r, DH_DOUT_COUNT, i, 0, 0, &ffi_type_pointer);
		if (a->flags & IDL_ARGF_DEALLOC_PARAM)
			dyn_add(r, DH_DOUT_DEALLOC, i, 0, 0, &ffi_type_pointer);
		return;
	}
	dyn_add(r, DH_DIN_VALUE, i, 0, 0, &ffi_type_pointer);
	if (poly)
		dyn_add(r, DH_DIN_POLY, i, DC_UINT, 4, &ffi_type_uint32);
	if (count)
		dyn_add(r, DH_DIN_COUNT, i, DC_UINT, 4, &ffi_type_uint32);
	if (a->flags & IDL_ARGF_SERVERCOPY)
		dyn_add(r, DH_CONST, i, DC_SINT, 4, &ffi_type_sint32); /* FALSE */
}

/* Whether only compiled stubs can serve a routine: translated or token arguments. */
static bool
dyn_opaque(const struct idl_routine_desc *rt)
{
	for (unsigned i = 0; i < rt->nargs; i++)
		if (rt->args[i].flags & IDL_ARGF_OPAQUE)
			return true;
	return false;
}

/* Plans the parameters of one routine and prepares its call interface. */
static int
dyn_plan(struct dyn_routine *r)
{
	const struct idl_routine_desc *rt = r->rt;
	uint32_t pos = rt->rep_fixed;
	int err;

	r->params = calloc(DYN_MAX_PARAMS, sizeof *r->params);
	r->types = calloc(DYN_MAX_PARAMS, sizeof *r->types);
	r->records = calloc(rt->nargs + 1u, sizeof *r->records);
	r->elems = calloc(rt->nargs + 1u, sizeof *r->elems);
	r->var_pos = calloc(rt->nargs + 1u, sizeof *r->var_pos);
	r->cls = calloc(rt->nargs + 1u, sizeof *r->cls);
	if (r->params == NULL || r->types == NULL || r->records == NULL || r->elems == NULL ||
	    r->var_pos == NULL || r->cls == NULL)
		return IDL_ENOMEM;
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		bool out = a->dir == IDL_DIR_OUT || a->dir == IDL_DIR_INOUT;
		uint8_t cls, size;
		ffi_type *t;

		idl__dyn_wire_cls(a, &r->cls[i].wc, &r->cls[i].ws);
		idl__dyn_c_cls(a, &r->cls[i].cc, &r->cls[i].cs);
		if (a->dir == IDL_DIR_REQUESTPORT) {
			dyn_add(r, DH_PORT, i, 0, 0, &ffi_type_pointer);
			continue;
		}
		if (a->dir == IDL_DIR_OTHER) {
			dyn_plan_other(r, i);
			continue;
		}
		if (a->dir != IDL_DIR_IN && !out)
			continue; /* client-side only: not a parameter of the server routine */
		if (idl__dyn_is_desc(a)) {
			dyn_plan_desc(r, i, out);
			continue;
		}
		if (out && idl__dyn_is_var(a)) {
			/* Later variable arguments wait at their largest offsets. */
			r->var_pos[i] = pos;
			pos += (uint32_t)IDL_MSG_ROUND((uint64_t)a->elem_size * a->count);
		}
		if (a->kind == IDL_ARG_SCALAR && !dyn_is_record(a)) {
			idl__dyn_c_cls(a, &cls, &size);
			if ((t = idl__dyn_ffi_type(cls, size)) == NULL)
				return IDL_ENOTSUP;
			if (out)
				dyn_add(r, DH_OUT_SCALAR, i, cls, size, &ffi_type_pointer);
			else
				dyn_add(r, DH_IN_SCALAR, i, cls, size, t);
			continue;
		}
		if (dyn_is_record(a) && !out) {
			if ((err = dyn_record_type(r, i, &t)) != 0)
				return err;
			dyn_add(r, DH_IN_RECORD, i, DC_RECORD, 0, t);
			continue;
		}
		dyn_add(r, out ? DH_OUT_PTR : DH_IN_PTR, i, 0, 0, &ffi_type_pointer);
		/* An array that shares another's count (samecount) has none of its own. */
		if (a->kind == IDL_ARG_VAR_ARRAY && !(a->flags & IDL_ARGF_SAMECOUNT))
			dyn_add(r, out ? DH_OUT_COUNT : DH_IN_COUNT, i, DC_UINT, 4,
				out ? &ffi_type_pointer : &ffi_type_uint32);
	}
	if (r->too_many || ffi_prep_cif(&r->cif, FFI_DEFAULT_ABI, r->nparams, &ffi_type_sint32,
					r->types) != FFI_OK)
		return IDL_ENOTSUP;
	return 0;
}

static void
dyn_routine_free(struct dyn_routine *r)
{
	if (r->elems != NULL)
		for (unsigned i = 0; r->rt != NULL && i < r->rt->nargs; i++)
			free(r->elems[i]);
	free(r->params);
	free(r->types);
	free(r->records);
	free(r->elems);
	free(r->var_pos);
	free(r->cls);
}

int
idl_dynamic_create(const struct idl_subsystem *ss, const char *prefix, idl_resolver_fn resolve,
		   void *arg, idl_dynamic_t **dp)
{
	struct idl_dynamic *d;
	int err;

	idl__clear_detail();
	if (dp == NULL || ss == NULL || ss->magic != IDL_SUBSYSTEM_MAGIC ||
	    (ss->nroutines > 0 && ss->routines == NULL))
		return idl__fail(IDL_EINVAL, "idl_dynamic_create: bad descriptor");
	*dp = NULL;
	if ((d = calloc(1, sizeof *d)) == NULL ||
	    (d->routines = calloc(ss->nroutines + 1u, sizeof *d->routines)) == NULL) {
		free(d);
		return idl__fail(IDL_ENOMEM, "%s: out of memory", ss->name);
	}
	d->ss = ss;
	for (uint32_t n = 0; n < ss->nroutines; n++) {
		const struct idl_routine_desc *rt = &ss->routines[n];
		struct dyn_routine *r = &d->routines[n];
		char sym[512];

		if (rt->kind == IDL_RT_SKIP || rt->name == NULL)
			continue;
		r->rt = rt;
		err = idl__dyn_supported(rt);
		if (err == 0 && dyn_opaque(rt))
			err = IDL_ENOTSUP;
		if (err == IDL_ENOTSUP) {
			/* Served as "not supported", so the rest of the interface still is. */
			r->unsupported = true;
			continue;
		}
		if (err != 0) {
			idl__fail(err, "%s.%s: the descriptor contradicts itself", ss->name,
				  rt->name);
			goto fail;
		}
		if (snprintf(sym, sizeof sym, "%s%s", prefix != NULL ? prefix : "", rt->name) >=
		    (int)sizeof sym) {
			err = idl__fail(IDL_EINVAL, "%s.%s: name too long", ss->name, rt->name);
			goto fail;
		}
		r->fn = (void (*)(void))(resolve != NULL ? resolve(arg, sym)
							 : dlsym(RTLD_DEFAULT, sym));
		if (r->fn == NULL) {
			err = idl__fail(
				IDL_EINVAL, "%s.%s: no function %s%s", ss->name, rt->name, sym,
				resolve != NULL
					? ""
					: " (dlsym: is the program linked with -rdynamic?)");
			goto fail;
		}
		if ((err = dyn_plan(r)) != 0) {
			idl__fail(err, "%s.%s: cannot prepare the call of %s", ss->name, rt->name,
				  sym);
			goto fail;
		}
	}
	idl_trace_register(ss);
	*dp = d;
	return 0;

fail:
	idl_dynamic_destroy(d);
	return err;
}

const struct idl_subsystem *
idl_dynamic_subsystem(const idl_dynamic_t *d)
{
	return d != NULL ? d->ss : NULL;
}

int
idl_dynamic_served(const idl_dynamic_t *d, uint32_t number)
{
	return d != NULL && number < d->ss->nroutines && d->routines[number].rt != NULL &&
	       !d->routines[number].unsupported;
}

/* Before the call: the reply's fixed part cleared, inout data copied into it, and the
 * counts and scalars the routine starts with. */
static void
dyn_prepare(const struct dyn_routine *r, const unsigned char *ip, const struct idl_arg_span *sp,
	    unsigned char *op, union dyn_slot *locals)
{
	const struct idl_routine_desc *rt = r->rt;

	if (rt->kind != IDL_RT_ROUTINE)
		return;
	memset(op + IDL_MSG_HEADER_SIZE, 0, rt->rep_fixed - IDL_MSG_HEADER_SIZE);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		bool inout = a->dir == IDL_DIR_INOUT;

		if (!idl__dyn_travels(a, 1) || idl__dyn_is_desc(a))
			continue;
		if (idl__dyn_is_var(a)) {
			if (inout)
				memcpy(op + r->var_pos[i], ip + sp[i].off,
				       (size_t)sp[i].count * a->elem_size);
			locals[i].u32 = inout ? sp[i].count : idl__dyn_room(rt, i);
			if (idl__dyn_countinout(a)) {
				/* countinout: the caller's capacity, as GNU MIG clamps it. */
				uint32_t cap;

				memcpy(&cap, ip + a->req_offset, sizeof cap);
				locals[i].u32 = cap < a->count ? cap : a->count;
			}
		} else if (a->kind == IDL_ARG_SCALAR && r->cls[i].wc != DC_RECORD) {
			const struct dyn_argcls *c = &r->cls[i];
			struct dyn_num v;

			memset(&locals[i], 0, sizeof locals[i]);
			if (inout) {
				idl__dyn_load(ip + a->req_offset, c->wc, c->ws, &v);
				idl__dyn_store(&locals[i], c->cc, c->cs, &v);
			}
		} else if (inout) {
			memcpy(op + a->rep_offset, ip + a->req_offset,
			       (size_t)a->elem_size * (a->kind == IDL_ARG_SCALAR ? 1 : a->count));
		}
	}
}

/* Whether a returned string has no NUL within its bound or an array more than its bound. */
static bool
dyn_out_too_large(const struct dyn_routine *r, const unsigned char *op,
		  const union dyn_slot *locals)
{
	const struct idl_routine_desc *rt = r->rt;

	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (!idl__dyn_travels(a, 1))
			continue;
		if ((a->kind == IDL_ARG_CSTRING_FIXED &&
		     memchr(op + a->rep_offset, '\0', a->count) == NULL) ||
		    (a->kind == IDL_ARG_CSTRING_VAR &&
		     memchr(op + r->var_pos[i], '\0', a->count) == NULL) ||
		    (a->kind == IDL_ARG_VAR_ARRAY && locals[i].u32 > a->count))
			return true;
	}
	return false;
}

/* After the call: an array that shares another's count (samecount) has the count the
 * routine gave its leader. */
static void
dyn_shared_counts(const struct idl_routine_desc *rt, union dyn_slot *locals,
		  struct idl__dyn_dlocal *dl)
{
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		unsigned l = idl__dyn_leader(rt, i);
		uint32_t n;

		if (l == i || !idl__dyn_travels(a, 1))
			continue;
		n = idl__dyn_is_desc(&rt->args[l]) ? dl[l].cnt : locals[l].u32;
		if (idl__dyn_is_desc(a))
			dl[i].cnt = n;
		else
			locals[i].u32 = n;
	}
}

/* After a successful call: the out checks, the scalars, and the variable parts packed. */
static void
dyn_finish(const struct dyn_routine *r, idl_msg_header_t *out, union dyn_slot *locals,
	   struct idl__dyn_dlocal *dl)
{
	const struct idl_routine_desc *rt = r->rt;
	unsigned char *op = (unsigned char *)out;
	size_t off;

	dyn_shared_counts(rt, locals, dl);
	/* Every check answers the same code, so their order does not matter. */
	if (idl__dyn_desc_out_too_large(rt, dl) || dyn_out_too_large(r, op, locals)) {
		idl__dyn_desc_free_ports(rt, dl);
		out->retcode = MIG_ARRAY_TOO_LARGE;
		return;
	}
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		const struct dyn_argcls *c = &r->cls[i];
		struct dyn_num v;

		if (!idl__dyn_travels(a, 1) || a->kind != IDL_ARG_SCALAR || c->wc == DC_RECORD)
			continue;
		idl__dyn_load(&locals[i], c->cc, c->cs, &v);
		idl__dyn_store(op + a->rep_offset, c->wc, c->ws, &v);
	}
	idl__dyn_desc_fill(rt, out, dl);
	off = rt->rep_fixed;
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		uint32_t cnt;
		size_t len;

		if (!idl__dyn_travels(a, 1) || !idl__dyn_is_var(a))
			continue;
		if (a->kind == IDL_ARG_CSTRING_VAR)
			cnt = (uint32_t)strlen((const char *)op + r->var_pos[i]) + 1;
		else
			cnt = locals[i].u32;
		len = (size_t)cnt * a->elem_size;
		memcpy(op + a->rep_offset, &cnt, sizeof cnt);
		if (off != r->var_pos[i])
			memmove(op + off, op + r->var_pos[i], len);
		memset(op + off + len, 0, IDL_MSG_ROUND(len) - len);
		off += IDL_MSG_ROUND(len);
	}
	out->size = (uint32_t)off;
}

/* The value of parameter k of the routine's C function, in *v: what its generated _X
 * function passes. Returns where the value is for libffi: v, or the request's own bytes of
 * a record passed by value. */
static void *
dyn_param(const struct dyn_routine *r, unsigned k, idl_msg_header_t *in, unsigned char *op,
	  const struct idl_arg_span *sp, union dyn_slot *locals, struct idl__dyn_dlocal *dl,
	  union dyn_slot *v)
{
	const struct dyn_param *p = &r->params[k];
	const struct idl_arg_desc *a = &r->rt->args[p->arg];
	const struct dyn_argcls *c = &r->cls[p->arg];
	unsigned char *ip = (unsigned char *)in;
	struct dyn_num n;

	switch (p->how) {
	case DH_PORT:
		v->p = idl_request_port();
		break;
	case DH_IN_SCALAR:
		idl__dyn_load(ip + a->req_offset, c->wc, c->ws, &n);
		idl__dyn_store(v, p->cls, p->size, &n);
		break;
	case DH_IN_RECORD:
		return ip + a->req_offset;
	case DH_IN_PTR:
		v->p = ip + sp[p->arg].off;
		break;
	case DH_IN_COUNT:
		v->u32 = sp[p->arg].count;
		break;
	case DH_OUT_SCALAR:
	case DH_OUT_COUNT:
		v->p = &locals[p->arg];
		break;
	case DH_OUT_PTR:
		v->p = op + (idl__dyn_is_var(a) ? r->var_pos[p->arg] : a->rep_offset);
		break;
	case DH_CONST:
		v->u32 = p->k;
		break;
	case DH_SEQNO:
		v->u32 = in->seqno;
		break;
	case DH_REPLY:
		v->p = (void *)dl[p->arg].value;
		break;
	case DH_DIN_VALUE:
		v->p = (void *)idl__dyn_desc_in_value(in, a, 0);
		break;
	case DH_DIN_POLY:
		v->u32 = (uint32_t)idl__dyn_desc_in_value(in, a, 1);
		break;
	case DH_DIN_COUNT:
		v->u32 = (uint32_t)idl__dyn_desc_in_value(in, a, 2);
		break;
	case DH_DOUT_BUF:
		v->p = (void *)dl[p->arg].value;
		break;
	case DH_DOUT_VALUE:
		v->p = &dl[p->arg].value;
		break;
	case DH_DOUT_POLY:
		v->p = &dl[p->arg].poly;
		break;
	case DH_DOUT_COUNT:
		v->p = &dl[p->arg].cnt;
		break;
	case DH_DOUT_DEALLOC:
		v->p = &dl[p->arg].dealloc;
		break;
	default:
		v->p = NULL;
		break;
	}
	return v;
}

/* One request of a routine, as its generated _X function serves it. */
static void
dyn_serve(const struct dyn_routine *r, idl_msg_header_t *in, idl_msg_header_t *out)
{
	const struct idl_routine_desc *rt = r->rt;
	unsigned char *ip = (unsigned char *)in, *op = (unsigned char *)out;
	struct idl_arg_span sp[DYN_MAX_ARGS];
	union dyn_slot locals[DYN_MAX_ARGS];
	union dyn_slot vals[DYN_MAX_PARAMS];
	struct idl__dyn_dlocal dl[DYN_MAX_ARGS];
	void *av[DYN_MAX_PARAMS];
	ffi_arg rc = 0;

	if (idl__dyn_check(rt, in, in->size, 0, sp) != 0) {
		out->retcode = MIG_BAD_ARGUMENTS;
		return;
	}
	if (idl__dyn_desc_before(rt, in, dl) != 0) {
		out->retcode = IDL_ENOMEM;
		return;
	}
	dyn_prepare(r, ip, sp, op, locals);
	for (unsigned k = 0; k < r->nparams; k++)
		av[k] = dyn_param(r, k, in, op, sp, locals, dl, &vals[k]);
	ffi_call((ffi_cif *)&r->cif, r->fn, &rc, av);
	out->retcode = (int32_t)(ffi_sarg)rc;
	idl__dyn_desc_after_call(rt, in, out->retcode, dl);
	if (out->retcode != KERN_SUCCESS || rt->kind != IDL_RT_ROUTINE)
		return;
	dyn_finish(r, out, locals, dl);
}

static const char *
dyn_address(void)
{
	const struct idl__port_head *h = (const void *)idl_request_port();

	return h != NULL ? h->address : NULL;
}

int
idl_dynamic_demux(idl_dynamic_t *d, idl_msg_header_t *in, idl_msg_header_t *out)
{
	bool trace = atomic_load_explicit(&idl__trace_on, memory_order_relaxed) &&
		     !atomic_load_explicit(&idl__trace_core, memory_order_relaxed);
	uint32_t n;

	if (d == NULL) {
		idl_reply_init(in, out);
		out->retcode = MIG_BAD_ID;
		return 0;
	}
	/* The core traces what it receives and sends once its hooks are in; until then, and
	 * for programs that call the demux themselves, it is done here. */
	if (trace)
		idl__trace_local(IDL_TRACE_SERVER, IDL_TRACE_RECV, dyn_address(), in, in->size);
	idl_reply_init(in, out);
	n = (uint32_t)in->id - (uint32_t)d->ss->base;
	if (n >= d->ss->nroutines || d->routines[n].rt == NULL) {
		out->retcode = MIG_BAD_ID;
		if (trace && in->kind != IDL_KIND_ONEWAY)
			idl__trace_local(IDL_TRACE_SERVER, IDL_TRACE_SEND, dyn_address(), out,
					 out->size);
		return 0;
	}
	if (d->routines[n].unsupported)
		out->retcode = IDL_ENOTSUP;
	else
		dyn_serve(&d->routines[n], in, out);
	if (trace && in->kind != IDL_KIND_ONEWAY && out->retcode != MIG_NO_REPLY)
		idl__trace_local(IDL_TRACE_SERVER, IDL_TRACE_SEND, dyn_address(), out, out->size);
	return 1;
}

static int
dyn_demux_ctx(void *ctx, idl_msg_header_t *in, idl_msg_header_t *out)
{
	return idl_dynamic_demux(ctx, in, out);
}

int
idl_server_add_dynamic(idl_server_t *srv, idl_dynamic_t *d)
{
	if (d == NULL)
		return IDL_EINVAL;
	return idl_server_add_subsystem_ctx(srv, d->ss, dyn_demux_ctx, d);
}

void
idl_dynamic_destroy(idl_dynamic_t *d)
{
	if (d == NULL)
		return;
	for (uint32_t n = 0; n < d->ss->nroutines; n++)
		dyn_routine_free(&d->routines[n]);
	free(d->routines);
	free(d);
}
