/*
 * sema_type.c - type expressions: names resolved in the scope of their statement, wire facts
 * (kind, wire type, element size, count, alignment, signedness) and C types computed, bounds
 * checked.
 *
 * A fixed array of fixed arrays is one flat array of the innermost element, so that the
 * element's C type always has the element's wire size. Constructs the foundation cannot carry
 * set `unsupported` instead of failing: declaring them is fine, using them is not.
 */
#include <config.h>

#include <string.h>

#include "sema.h"

static bool
sema_streq(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Whether two type expressions are written the same (for redefinitions of built-ins). */
bool
idlc_sema_same(const struct idlc_type *a, const struct idlc_type *b)
{
	const struct idlc_field *fa, *fb;

	if (a == NULL || b == NULL)
		return a == b;
	if (a->kind != b->kind || a->ipc != b->ipc || a->ipc_out != b->ipc_out
	    || a->ipc_number != b->ipc_number || a->size_bits != b->size_bits
	    || a->count != b->count || a->flags != b->flags || !sema_streq(a->ref, b->ref)
	    || !sema_streq(a->ctype, b->ctype) || !sema_streq(a->cusertype, b->cusertype)
	    || !sema_streq(a->cservertype, b->cservertype) || !sema_streq(a->intran, b->intran)
	    || !sema_streq(a->intran_type, b->intran_type) || !sema_streq(a->outtran, b->outtran)
	    || !sema_streq(a->outtran_type, b->outtran_type)
	    || !sema_streq(a->destructor, b->destructor)
	    || !sema_streq(a->intranpayload, b->intranpayload)
	    || !sema_streq(a->native, b->native) || !sema_streq(a->native_alt, b->native_alt))
		return false;
	for (fa = a->fields, fb = b->fields; fa != NULL && fb != NULL; fa = fa->next, fb = fb->next)
		if (!sema_streq(fa->type_name, fb->type_name) || !sema_streq(fa->name, fb->name))
			return false;
	return fa == fb && idlc_sema_same(a->elem, b->elem);
}

/* How a message names a type expression: its name, or what it is. */
const char *
idlc_sema_type_name(struct sema *s, const struct idlc_type *t)
{
	if (t->name != NULL)
		return t->name;
	switch (t->kind) {
	case IDLC_T_NAMED:
		return t->ref;
	case IDLC_T_ARRAY_FIXED:
		return idlc_printf(s->ctx, "array[%u] of ...", t->count);
	case IDLC_T_ARRAY_VAR:
		return idlc_printf(s->ctx, "array[*:%u] of ...", t->count);
	case IDLC_T_STRUCT_ARRAY:
		return idlc_printf(s->ctx, "struct[%u] of ...", t->count);
	case IDLC_T_CSTRING_FIXED:
		return idlc_printf(s->ctx, "c_string[%u]", t->count);
	case IDLC_T_CSTRING_VAR:
		return idlc_printf(s->ctx, "c_string[*:%u]", t->count);
	case IDLC_T_ARRAY_UNBOUNDED:
		return "array[] of ...";
	case IDLC_T_POINTER:
		return "^...";
	default:
		return t->c_user != NULL ? t->c_user : "(anonymous)";
	}
}

/* C types of a resolved type: ctype:/cusertype:/cservertype: first, then the declared
 * name, then what an anonymous expression inherits. */
static void
sema_ctypes(struct idlc_type *t, const char *user, const char *server)
{
	t->c_user = t->cusertype != NULL ? t->cusertype
		  : t->ctype != NULL	 ? t->ctype
		  : t->name != NULL	 ? t->name
					 : user;
	t->c_server = t->cservertype != NULL ? t->cservertype
		    : t->ctype != NULL	     ? t->ctype
		    : t->name != NULL	     ? t->name
					     : server;
}

/* MIG has no signedness; C type names that read unsigned (uint32_t, unsigned, u_int)
 * mark the integer unsigned, everything else is signed. */
static bool
sema_signed_name(const char *c)
{
	return c == NULL || c[0] != 'u';
}

static bool
sema_broken(struct idlc_type *t)
{
	t->broken = true;
	return false;
}

static bool
sema_scalar(struct idlc_type *t, const struct idlc_ipc_info *info, uint32_t bits)
{
	t->arg_kind = info->arg_kind;
	t->wire_type = info->wire_type;
	t->wire_count = 1;
	if (info->arg_kind == IDL_ARG_PORT) {
		t->elem_size = 0;
		t->align = 1;
	} else {
		t->elem_size = bits / 8;
		t->align = t->elem_size;
	}
	sema_ctypes(t, info->c_type, info->c_type);
	t->c_elem = t->c_user;
	t->is_signed = (t->wire_type == IDL_WT_INT8 || t->wire_type == IDL_WT_INT16
			|| t->wire_type == IDL_WT_INT32 || t->wire_type == IDL_WT_INT64)
		       && sema_signed_name(t->c_user);
	return true;
}

static bool
sema_ipc(struct sema *s, struct idlc_type *t)
{
	const struct idlc_ipc_info *info = idlc_ipc_info(t->ipc);

	if (info == NULL)
		return sema_broken(t);
	if (t->ipc_out != IDLC_IPC_NONE) {
		t->unsupported = "an IPC type pair (in|out)";
		return true;
	}
	if (info->arg_kind == 0) {
		t->unsupported = t->ipc == IDLC_IPC_POLYMORPHIC ? "a polymorphic type"
			       : idlc_printf(s->ctx, "the IPC type %s", info->name);
		return true;
	}
	if (info->bits == 0 && info->arg_kind != IDL_ARG_PORT) {
		idlc_error(s->ctx, t->loc,
			   "%s has no size of its own: use the long form (%s, SIZE)", info->name,
			   info->name);
		return sema_broken(t);
	}
	return sema_scalar(t, info, info->bits);
}

static bool
sema_longform(struct sema *s, struct idlc_type *t)
{
	const struct idlc_ipc_info *info = idlc_ipc_info(t->ipc);
	static const struct idlc_ipc_info real32 = { "MACH_MSG_TYPE_REAL", IDLC_IPC_REAL, 32,
						     IDL_ARG_SCALAR, IDL_WT_REAL32, "float" };
	static const struct idlc_ipc_info real64 = { "MACH_MSG_TYPE_REAL", IDLC_IPC_REAL, 64,
						     IDL_ARG_SCALAR, IDL_WT_REAL64, "double" };

	if (info == NULL)
		return sema_broken(t);
	if (t->ipc_out != IDLC_IPC_NONE) {
		t->unsupported = "an IPC type pair (in|out)";
		return true;
	}
	if (info->arg_kind == 0) {
		t->unsupported = t->ipc == IDLC_IPC_POLYMORPHIC ? "a polymorphic type"
			       : idlc_printf(s->ctx, "the IPC type %s", info->name);
		return true;
	}
	if (t->flags != 0) {
		t->unsupported = "IPC flags in a long-form type";
		return true;
	}
	if (t->ipc == IDLC_IPC_REAL) {
		if (t->size_bits != 32 && t->size_bits != 64) {
			idlc_error(s->ctx, t->loc, "MACH_MSG_TYPE_REAL must be 32 or 64 bits, "
				   "not %u", t->size_bits);
			return sema_broken(t);
		}
		return sema_scalar(t, t->size_bits == 32 ? &real32 : &real64, t->size_bits);
	}
	if (t->ipc == IDLC_IPC_STRING || t->ipc == IDLC_IPC_STRING_C) {
		/* (MACH_MSG_TYPE_STRING, 8*N) is a string of N bytes, as c_string[N]. */
		if (t->size_bits == 0 || t->size_bits % 8 != 0) {
			idlc_error(s->ctx, t->loc,
				   "the size of %s must be a positive multiple of 8 bits, not %u",
				   info->name, t->size_bits);
			return sema_broken(t);
		}
		t->arg_kind = IDL_ARG_CSTRING_FIXED;
		t->wire_type = IDL_WT_CHAR;
		t->elem_size = 1;
		t->align = 1;
		t->wire_count = t->size_bits / 8;
		sema_ctypes(t, "char", "char");
		t->c_elem = "char";
		return true;
	}
	if (info->arg_kind != IDL_ARG_PORT && t->size_bits != info->bits) {
		idlc_error(s->ctx, t->loc, "size %u does not match %s, which is %u bits",
			   t->size_bits, info->name, info->bits);
		return sema_broken(t);
	}
	return sema_scalar(t, info, info->bits);
}

static bool
sema_named(struct sema *s, struct idlc_type *t)
{
	struct idlc_type *d = idlc_sema_lookup(&s->types, t->ref);

	if (d == NULL) {
		idlc_error(s->ctx, t->loc, "unknown type '%s'", t->ref);
		return sema_broken(t);
	}
	t->target = d;
	if (d->broken || !d->resolved)
		return sema_broken(t);
	t->unsupported = d->unsupported;
	t->arg_kind = d->arg_kind;
	t->wire_type = d->wire_type;
	t->is_signed = d->is_signed;
	t->elem_size = d->elem_size;
	t->wire_count = d->wire_count;
	t->align = d->align;
	sema_ctypes(t, d->c_user, d->c_server);
	/* A scalar's element is the value itself, in its own C type. */
	t->c_elem = d->arg_kind == IDL_ARG_SCALAR || d->arg_kind == IDL_ARG_PORT ? t->c_user
										  : d->c_elem;
	return true;
}

/* array[N], array[*:N], struct[N] of an element type. */
static bool
sema_array(struct sema *s, struct idlc_type *t)
{
	struct idlc_type *e = t->elem;
	const char *what = t->kind == IDLC_T_STRUCT_ARRAY ? "struct" : "array";
	uint32_t count, bytes, esize;

	if (!idlc_sema_resolve(s, e))
		return sema_broken(t);
	if (t->count == 0) {
		idlc_error(s->ctx, t->loc, "%s bound must be at least 1", what);
		return sema_broken(t);
	}
	if (e->unsupported != NULL) {
		t->unsupported = e->unsupported;
		return true;
	}
	switch (e->arg_kind) {
	case IDL_ARG_SCALAR:
		count = 1;
		break;
	case IDL_ARG_FIXED_ARRAY:
		if (t->kind == IDLC_T_ARRAY_VAR) {
			t->unsupported = "a variable-size array of arrays";
			return true;
		}
		count = e->wire_count; /* a fixed array of fixed arrays is one flat array */
		break;
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_VAR:
		idlc_error(s->ctx, t->loc,
			   "too complicated: an %s of variable-size arrays ('%s')", what,
			   idlc_sema_type_name(s, e));
		return sema_broken(t);
	case IDL_ARG_CSTRING_FIXED:
		t->unsupported = "an array of strings";
		return true;
	case IDL_ARG_PORT:
		t->unsupported = "an array of ports";
		return true;
	default:
		t->unsupported = idlc_printf(s->ctx, "an %s of '%s'", what,
					     idlc_sema_type_name(s, e));
		return true;
	}
	/* The element's own size fits: it was checked when the element was resolved. */
	esize = count * e->elem_size;
	if (__builtin_mul_overflow(count, t->count, &count)
	    || __builtin_mul_overflow(count, e->elem_size, &bytes)) {
		idlc_error(s->ctx, t->loc,
			   "%s bound %u times element size %u bytes does not fit in 32 bits", what,
			   t->count, esize);
		return sema_broken(t);
	}
	t->arg_kind = t->kind == IDLC_T_ARRAY_VAR ? IDL_ARG_VAR_ARRAY : IDL_ARG_FIXED_ARRAY;
	t->wire_type = e->wire_type;
	t->is_signed = e->is_signed;
	t->elem_size = e->elem_size;
	t->wire_count = count;
	t->align = e->align;
	t->c_elem = e->arg_kind == IDL_ARG_SCALAR ? e->c_user : e->c_elem;
	sema_ctypes(t, t->c_elem, e->arg_kind == IDL_ARG_SCALAR ? e->c_server : e->c_elem);
	return true;
}

static bool
sema_cstring(struct sema *s, struct idlc_type *t)
{
	if (t->count == 0) {
		idlc_error(s->ctx, t->loc, "c_string bound must be at least 1");
		return sema_broken(t);
	}
	t->arg_kind = t->kind == IDLC_T_CSTRING_VAR ? IDL_ARG_CSTRING_VAR : IDL_ARG_CSTRING_FIXED;
	t->wire_type = IDL_WT_CHAR;
	t->elem_size = 1;
	t->align = 1;
	t->wire_count = t->count;
	sema_ctypes(t, "char", "char");
	t->c_elem = "char";
	return true;
}

static bool
sema_fields(struct sema *s, struct idlc_type *t)
{
	struct idlc_field *f;
	bool ok = true;

	for (f = t->fields; f != NULL; f = f->next) {
		f->type = idlc_sema_lookup(&s->types, f->type_name);
		if (f->type == NULL) {
			idlc_error(s->ctx, f->loc, "unknown type '%s' of struct member '%s'",
				   f->type_name, f->name);
			ok = false;
		}
	}
	if (!ok)
		return sema_broken(t);
	t->unsupported = "a struct { } type";
	return true;
}

/* Resolves a type expression once; false when it is broken (the error was reported). */
bool
idlc_sema_resolve(struct sema *s, struct idlc_type *t)
{
	bool ok;

	if (t->resolved)
		return true;
	if (t->broken)
		return false;
	switch (t->kind) {
	case IDLC_T_NAMED:
		ok = sema_named(s, t);
		break;
	case IDLC_T_IPC:
		ok = sema_ipc(s, t);
		break;
	case IDLC_T_LONGFORM:
		ok = sema_longform(s, t);
		break;
	case IDLC_T_ARRAY_FIXED:
	case IDLC_T_ARRAY_VAR:
	case IDLC_T_STRUCT_ARRAY:
		ok = sema_array(s, t);
		break;
	case IDLC_T_ARRAY_UNBOUNDED:
		ok = idlc_sema_resolve(s, t->elem);
		t->unsupported = "an unbounded array (array[])";
		break;
	case IDLC_T_CSTRING_FIXED:
	case IDLC_T_CSTRING_VAR:
		ok = sema_cstring(s, t);
		break;
	case IDLC_T_POINTER:
		ok = idlc_sema_resolve(s, t->elem);
		t->unsupported = "out-of-line data (^)";
		break;
	case IDLC_T_STRUCT_FIELDS:
		ok = sema_fields(s, t);
		break;
	case IDLC_T_NATIVE:
		ok = true;
		t->unsupported = idlc_printf(s->ctx, "a native type (%s)", t->native);
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		return sema_broken(t);
	if (t->unsupported == NULL) {
		if (t->intran != NULL)
			t->unsupported = "a translation function (intran:)";
		else if (t->outtran != NULL)
			t->unsupported = "a translation function (outtran:)";
		else if (t->destructor != NULL)
			t->unsupported = "a destructor function (destructor:)";
		else if (t->intranpayload != NULL)
			t->unsupported = "a payload translation (intranpayload:)";
	}
	t->resolved = true;
	return true;
}

