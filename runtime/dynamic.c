/*
 * dynamic.c - the dynamic server: serves an interface from its descriptor table, calling
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
 *
 * The server core takes a plain demux function with no context, so each dynamic interface
 * served is bound to one of a fixed set of trampolines (dyn_tramps) that find it in a
 * table. A demux with a context pointer in the core would make the table unnecessary.
 */
#include <config.h>

#include <dlfcn.h>
#include <ffi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamic.h"
#include "internal.h"
#include "trace.h"

#define DYN_MAX_ARGS 256 /* nargs is a uint8_t */
#define DYN_MAX_PARAMS (2 * DYN_MAX_ARGS)
#define DYN_SLOTS 64

/* The class of a C or wire scalar: what a value is converted through. */
enum dyn_cls {
	DC_SINT = 1,
	DC_UINT,
	DC_FLOAT,
	DC_RECORD, /* bytes: a struct passed by value or by pointer */
};

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
	bool unsupported; /* out-of-line data or ports: answered with IDL_ENOTSUP */
};

struct idl_dynamic {
	const struct idl_subsystem *ss;
	struct dyn_routine *routines; /* ss->nroutines */
	int slot; /* its trampoline, or -1 */
};

/* One value of any scalar C type, at offset 0 whatever its type. */
union dyn_slot {
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;
	uint32_t u32;
	float f;
	double d;
	void *p;
	unsigned char bytes[8];
};

/* A scalar on its way between a wire type and a C type. */
struct dyn_num {
	uint8_t cls;
	uint8_t size;
	unsigned char raw[8]; /* the bytes as loaded: copied as they are to the same type */
	int64_t i;
	uint64_t u;
	double d;
};

struct dyn_ctype {
	const char *name;
	uint8_t cls;
	uint8_t size;
};

#define DYN_CHAR_CLS (CHAR_MIN < 0 ? DC_SINT : DC_UINT)

/* The C types whose ABI class is known by name; others are taken to be what their wire
 * type is (a typedef of a same-sized integer passes the same way). */
static const struct dyn_ctype dyn_ctypes[] = {
	{ "char", DYN_CHAR_CLS, 1 },
	{ "signed char", DC_SINT, 1 },
	{ "unsigned char", DC_UINT, 1 },
	{ "int8_t", DC_SINT, 1 },
	{ "uint8_t", DC_UINT, 1 },
	{ "short", DC_SINT, sizeof(short) },
	{ "unsigned short", DC_UINT, sizeof(short) },
	{ "int16_t", DC_SINT, 2 },
	{ "uint16_t", DC_UINT, 2 },
	{ "int", DC_SINT, sizeof(int) },
	{ "unsigned", DC_UINT, sizeof(int) },
	{ "unsigned int", DC_UINT, sizeof(int) },
	{ "int32_t", DC_SINT, 4 },
	{ "uint32_t", DC_UINT, 4 },
	{ "boolean_t", DC_SINT, 4 },
	{ "integer_t", DC_SINT, 4 },
	{ "natural_t", DC_UINT, 4 },
	{ "kern_return_t", DC_SINT, 4 },
	{ "mach_msg_type_number_t", DC_UINT, 4 },
	{ "long", DC_SINT, sizeof(long) },
	{ "unsigned long", DC_UINT, sizeof(long) },
	{ "long long", DC_SINT, sizeof(long long) },
	{ "unsigned long long", DC_UINT, sizeof(long long) },
	{ "int64_t", DC_SINT, 8 },
	{ "uint64_t", DC_UINT, 8 },
	{ "size_t", DC_UINT, sizeof(size_t) },
	{ "intptr_t", DC_SINT, sizeof(intptr_t) },
	{ "uintptr_t", DC_UINT, sizeof(uintptr_t) },
	{ "vm_offset_t", DC_UINT, sizeof(uintptr_t) },
	{ "vm_address_t", DC_UINT, sizeof(uintptr_t) },
	{ "vm_size_t", DC_UINT, sizeof(uintptr_t) },
	{ "float", DC_FLOAT, sizeof(float) },
	{ "double", DC_FLOAT, sizeof(double) },
};

/* The class and size of an argument's wire element. */
static void
dyn_wire_cls(const struct idl_arg_desc *a, uint8_t *cls, uint8_t *size)
{
	*size = (uint8_t)(a->elem_size <= 8 ? a->elem_size : 8);
	switch (a->wire_type) {
	case IDL_WT_INT8:
	case IDL_WT_INT16:
	case IDL_WT_INT32:
	case IDL_WT_INT64:
		*cls = (a->flags & IDL_ARGF_SIGNED) ? DC_SINT : DC_UINT;
		return;
	case IDL_WT_BOOLEAN:
		*cls = DC_SINT;
		return;
	case IDL_WT_CHAR:
		*cls = DYN_CHAR_CLS;
		return;
	case IDL_WT_BYTE:
		*cls = DC_UINT;
		return;
	case IDL_WT_REAL32:
	case IDL_WT_REAL64:
		*cls = DC_FLOAT;
		return;
	default:
		*cls = DC_RECORD;
		return;
	}
}

/* The class and size of a scalar argument's C type. */
static void
dyn_c_cls(const struct idl_arg_desc *a, uint8_t *cls, uint8_t *size)
{
	dyn_wire_cls(a, cls, size);
	if (*cls == DC_RECORD || a->ctype == NULL)
		return;
	for (size_t i = 0; i < sizeof dyn_ctypes / sizeof dyn_ctypes[0]; i++) {
		if (strcmp(dyn_ctypes[i].name, a->ctype) == 0) {
			*cls = dyn_ctypes[i].cls;
			*size = dyn_ctypes[i].size;
			return;
		}
	}
}

static ffi_type *
dyn_ffi_type(uint8_t cls, uint8_t size)
{
	switch (size) {
	case 1:
		return cls == DC_SINT ? &ffi_type_sint8 : &ffi_type_uint8;
	case 2:
		return cls == DC_SINT ? &ffi_type_sint16 : &ffi_type_uint16;
	case 4:
		if (cls == DC_FLOAT)
			return &ffi_type_float;
		return cls == DC_SINT ? &ffi_type_sint32 : &ffi_type_uint32;
	case 8:
		if (cls == DC_FLOAT)
			return &ffi_type_double;
		return cls == DC_SINT ? &ffi_type_sint64 : &ffi_type_uint64;
	default:
		return NULL;
	}
}

static void
dyn_load(const void *p, uint8_t cls, uint8_t size, struct dyn_num *n)
{
	union dyn_slot v;

	memcpy(&v, p, size);
	memcpy(n->raw, p, size);
	n->size = size;
	n->cls = cls;
	n->i = 0;
	n->u = 0;
	n->d = 0;
	if (cls == DC_FLOAT) {
		n->d = size == 4 ? (double)v.f : v.d;
		return;
	}
	switch (size) {
	case 1:
		n->i = cls == DC_SINT ? v.i8 : (int64_t)(uint8_t)v.i8;
		break;
	case 2:
		n->i = cls == DC_SINT ? v.i16 : (int64_t)(uint16_t)v.i16;
		break;
	case 4:
		n->i = cls == DC_SINT ? v.i32 : (int64_t)(uint32_t)v.i32;
		break;
	default:
		n->i = v.i64;
		break;
	}
	n->u = (uint64_t)n->i;
}

/* Stores a value as a C type or wire type would hold it, converting as C's casts do. */
static void
dyn_store(void *p, uint8_t cls, uint8_t size, const struct dyn_num *n)
{
	union dyn_slot v;
	int64_t i;

	/* The same type on both sides (the common case) is copied bit for bit: a conversion
	 * through double would quieten a signalling NaN that the compiled stub passes on. */
	if (cls == n->cls && size == n->size) {
		memcpy(p, n->raw, size);
		return;
	}
	memset(&v, 0, sizeof v);
	if (cls == DC_FLOAT) {
		double d = n->cls == DC_FLOAT ? n->d : n->cls == DC_SINT ? (double)n->i
									: (double)n->u;

		if (size == 4)
			v.f = (float)d;
		else
			v.d = d;
		memcpy(p, &v, size);
		return;
	}
	if (n->cls == DC_FLOAT)
		i = cls == DC_SINT ? (int64_t)n->d : (int64_t)(uint64_t)n->d;
	else
		i = n->i;
	switch (size) {
	case 1:
		v.i8 = (int8_t)i;
		break;
	case 2:
		v.i16 = (int16_t)i;
		break;
	case 4:
		v.i32 = (int32_t)i;
		break;
	default:
		v.i64 = i;
		break;
	}
	memcpy(p, &v, size);
}

/* Whether an argument is a record (a C struct): passed by value in, by pointer out. */
static bool
dyn_is_record(const struct idl_arg_desc *a)
{
	if (a->kind == IDL_ARG_SCALAR && a->wire_type == IDL_WT_STRUCT)
		return true;
#ifdef IDL_ARGF_RECORD
	if (a->flags & IDL_ARGF_RECORD)
		return true;
#endif
	return false;
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

	dyn_wire_cls(a, &cls, &size);
	et = cls == DC_RECORD ? NULL : dyn_ffi_type(cls, size);
	if (et == NULL) {
		/* An opaque record: words of the largest size that divides it. */
		uint32_t bytes = a->elem_size * n, w = 8;

		while (bytes % w != 0)
			w /= 2;
		et = dyn_ffi_type(DC_UINT, (uint8_t)w);
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
dyn_add(struct dyn_routine *r, uint8_t how, unsigned arg, uint8_t cls, uint8_t size,
	ffi_type *t)
{
	struct dyn_param *p = &r->params[r->nparams];

	p->how = how;
	p->arg = (uint8_t)arg;
	p->cls = cls;
	p->size = size;
	r->types[r->nparams++] = t;
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

		dyn_wire_cls(a, &r->cls[i].wc, &r->cls[i].ws);
		dyn_c_cls(a, &r->cls[i].cc, &r->cls[i].cs);
		if (a->dir == IDL_DIR_REQUESTPORT) {
			dyn_add(r, DH_PORT, i, 0, 0, &ffi_type_pointer);
			continue;
		}
		if (a->dir != IDL_DIR_IN && !out)
			continue; /* client-side only: not a parameter of the server routine */
		if (out && idl__dyn_is_var(a)) {
			/* Later variable arguments wait at their largest offsets. */
			r->var_pos[i] = pos;
			pos += (uint32_t)IDL_MSG_ROUND((uint64_t)a->elem_size * a->count);
		}
		if (a->kind == IDL_ARG_SCALAR && !dyn_is_record(a)) {
			dyn_c_cls(a, &cls, &size);
			if ((t = dyn_ffi_type(cls, size)) == NULL)
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
		if (a->kind == IDL_ARG_VAR_ARRAY)
			dyn_add(r, out ? DH_OUT_COUNT : DH_IN_COUNT, i, DC_UINT, 4,
				out ? &ffi_type_pointer : &ffi_type_uint32);
	}
	if (ffi_prep_cif(&r->cif, FFI_DEFAULT_ABI, r->nparams, &ffi_type_sint32, r->types) !=
	    FFI_OK)
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
	d->slot = -1;
	for (uint32_t n = 0; n < ss->nroutines; n++) {
		const struct idl_routine_desc *rt = &ss->routines[n];
		struct dyn_routine *r = &d->routines[n];
		char sym[512];

		if (rt->kind == IDL_RT_SKIP || rt->name == NULL)
			continue;
		r->rt = rt;
		err = idl__dyn_supported(rt);
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
			err = idl__fail(IDL_EINVAL, "%s.%s: no function %s%s", ss->name, rt->name,
					sym, resolve != NULL ? "" :
					" (dlsym: is the program linked with -rdynamic?)");
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

/* Before the call: the reply's fixed part cleared, inout data copied into it, and the
 * counts and scalars the routine starts with. */
static void
dyn_prepare(const struct dyn_routine *r, const unsigned char *ip,
	    const struct idl_arg_span *sp, unsigned char *op, union dyn_slot *locals)
{
	const struct idl_routine_desc *rt = r->rt;

	if (rt->kind != IDL_RT_ROUTINE)
		return;
	memset(op + IDL_MSG_HEADER_SIZE, 0, rt->rep_fixed - IDL_MSG_HEADER_SIZE);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		bool inout = a->dir == IDL_DIR_INOUT;

		if (!idl__dyn_travels(a, 1))
			continue;
		if (idl__dyn_is_var(a)) {
			if (inout)
				memcpy(op + r->var_pos[i], ip + sp[i].off,
				       (size_t)sp[i].count * a->elem_size);
			locals[i].u32 = inout ? sp[i].count : a->count;
		} else if (a->kind == IDL_ARG_SCALAR && r->cls[i].wc != DC_RECORD) {
			const struct dyn_argcls *c = &r->cls[i];
			struct dyn_num v;

			memset(&locals[i], 0, sizeof locals[i]);
			if (inout) {
				dyn_load(ip + a->req_offset, c->wc, c->ws, &v);
				dyn_store(&locals[i], c->cc, c->cs, &v);
			}
		} else if (inout) {
			memcpy(op + a->rep_offset, ip + a->req_offset,
			       (size_t)a->elem_size * (a->kind == IDL_ARG_SCALAR ? 1 : a->count));
		}
	}
}

/* After a successful call: the out checks, the scalars, and the variable parts packed. */
static void
dyn_finish(const struct dyn_routine *r, idl_msg_header_t *out, const union dyn_slot *locals)
{
	const struct idl_routine_desc *rt = r->rt;
	unsigned char *op = (unsigned char *)out;
	size_t off;

	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (!idl__dyn_travels(a, 1))
			continue;
		if ((a->kind == IDL_ARG_CSTRING_FIXED &&
		     memchr(op + a->rep_offset, '\0', a->count) == NULL) ||
		    (a->kind == IDL_ARG_CSTRING_VAR &&
		     memchr(op + r->var_pos[i], '\0', a->count) == NULL) ||
		    (a->kind == IDL_ARG_VAR_ARRAY && locals[i].u32 > a->count)) {
			out->retcode = MIG_ARRAY_TOO_LARGE;
			return;
		}
	}
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		const struct dyn_argcls *c = &r->cls[i];
		struct dyn_num v;

		if (!idl__dyn_travels(a, 1) || a->kind != IDL_ARG_SCALAR || c->wc == DC_RECORD)
			continue;
		dyn_load(&locals[i], c->cc, c->cs, &v);
		dyn_store(op + a->rep_offset, c->wc, c->ws, &v);
	}
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

/* One request of a routine, as its generated _X function serves it. */
static void
dyn_serve(const struct dyn_routine *r, idl_msg_header_t *in, idl_msg_header_t *out)
{
	const struct idl_routine_desc *rt = r->rt;
	unsigned char *ip = (unsigned char *)in, *op = (unsigned char *)out;
	struct idl_arg_span sp[DYN_MAX_ARGS];
	union dyn_slot locals[DYN_MAX_ARGS];
	union dyn_slot vals[DYN_MAX_PARAMS];
	void *av[DYN_MAX_PARAMS];
	ffi_arg rc = 0;

	if (idl__dyn_check(rt, in, in->size, 0, sp) != 0) {
		out->retcode = MIG_BAD_ARGUMENTS;
		return;
	}
	dyn_prepare(r, ip, sp, op, locals);
	for (unsigned k = 0; k < r->nparams; k++) {
		const struct dyn_param *p = &r->params[k];
		const struct idl_arg_desc *a = &rt->args[p->arg];
		const struct dyn_argcls *c = &r->cls[p->arg];
		struct dyn_num v;

		av[k] = &vals[k];
		switch (p->how) {
		case DH_PORT:
			vals[k].p = idl_request_port();
			break;
		case DH_IN_SCALAR:
			dyn_load(ip + a->req_offset, c->wc, c->ws, &v);
			dyn_store(&vals[k], p->cls, p->size, &v);
			break;
		case DH_IN_RECORD:
			av[k] = ip + a->req_offset;
			break;
		case DH_IN_PTR:
			vals[k].p = ip + sp[p->arg].off;
			break;
		case DH_IN_COUNT:
			vals[k].u32 = sp[p->arg].count;
			break;
		case DH_OUT_SCALAR:
		case DH_OUT_COUNT:
			vals[k].p = &locals[p->arg];
			break;
		case DH_OUT_PTR:
			vals[k].p = op + (idl__dyn_is_var(a) ? r->var_pos[p->arg] : a->rep_offset);
			break;
		default:
			vals[k].p = NULL;
			break;
		}
	}
	ffi_call((ffi_cif *)&r->cif, r->fn, &rc, av);
	out->retcode = (int32_t)(ffi_sarg)rc;
	if (out->retcode != KERN_SUCCESS || rt->kind != IDL_RT_ROUTINE)
		return;
	dyn_finish(r, out, locals);
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
		/* A trampoline whose interface was destroyed while still served. */
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

/*
 * The trampolines: plain demux functions, each bound to one slot of the table.
 */
static _Atomic(idl_dynamic_t *) dyn_slots[DYN_SLOTS];

#define DYN_TRAMP(j, k)                                                                 \
	static int dyn_tramp_##j##k(idl_msg_header_t *in, idl_msg_header_t *out)        \
	{                                                                               \
		return idl_dynamic_demux(atomic_load_explicit(&dyn_slots[(j) * 8 + (k)], \
							      memory_order_acquire),    \
					 in, out);                                      \
	}
#define DYN_TRAMP8(j)                                                                   \
	DYN_TRAMP(j, 0) DYN_TRAMP(j, 1) DYN_TRAMP(j, 2) DYN_TRAMP(j, 3) DYN_TRAMP(j, 4) \
	DYN_TRAMP(j, 5) DYN_TRAMP(j, 6) DYN_TRAMP(j, 7)
DYN_TRAMP8(0)
DYN_TRAMP8(1)
DYN_TRAMP8(2)
DYN_TRAMP8(3)
DYN_TRAMP8(4)
DYN_TRAMP8(5)
DYN_TRAMP8(6)
DYN_TRAMP8(7)

#define DYN_NAMES8(j)                                                                   \
	dyn_tramp_##j##0, dyn_tramp_##j##1, dyn_tramp_##j##2, dyn_tramp_##j##3,         \
		dyn_tramp_##j##4, dyn_tramp_##j##5, dyn_tramp_##j##6, dyn_tramp_##j##7
static const idl_demux_fn dyn_tramps[DYN_SLOTS] = {
	DYN_NAMES8(0), DYN_NAMES8(1), DYN_NAMES8(2), DYN_NAMES8(3),
	DYN_NAMES8(4), DYN_NAMES8(5), DYN_NAMES8(6), DYN_NAMES8(7),
};

int
idl_server_add_dynamic(idl_server_t *srv, idl_dynamic_t *d)
{
	int err;

	if (d == NULL)
		return IDL_EINVAL;
	if (d->slot < 0) {
		for (int i = 0; i < DYN_SLOTS && d->slot < 0; i++) {
			idl_dynamic_t *none = NULL;

			if (atomic_compare_exchange_strong(&dyn_slots[i], &none, d))
				d->slot = i;
		}
		if (d->slot < 0)
			return idl__fail(IDL_ELIMIT, "%s: more than %d dynamic interfaces",
					 d->ss->name, DYN_SLOTS);
	}
	err = idl_server_add_subsystem(srv, d->ss, dyn_tramps[d->slot]);
	return err;
}

void
idl_dynamic_destroy(idl_dynamic_t *d)
{
	if (d == NULL)
		return;
	if (d->slot >= 0)
		atomic_store(&dyn_slots[d->slot], NULL);
	for (uint32_t n = 0; n < d->ss->nroutines; n++)
		dyn_routine_free(&d->routines[n]);
	free(d->routines);
	free(d);
}
