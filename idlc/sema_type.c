/*
 * sema_type.c - type expressions: names resolved in the scope of their statement, wire facts
 * (kind, wire type, element size, count, alignment, signedness) and C types computed, bounds
 * checked.
 *
 * A fixed array of fixed arrays is one flat array of the innermost element, so that the
 * element's C type always has the element's wire size; a variable array of fixed arrays
 * carries each inner array as one record of its named C type. Unbounded arrays and ^T are
 * out-of-line data (IDL_ARG_OOL); ports and arrays of ports travel as descriptors. Constructs
 * idlkit cannot carry set `unsupported` instead of failing: declaring them is fine, using them is
 * not.
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
	if (a->kind != b->kind || a->ipc != b->ipc || a->ipc_out != b->ipc_out ||
	    a->ipc_number != b->ipc_number || a->size_bits != b->size_bits ||
	    a->count != b->count || a->flags != b->flags || !sema_streq(a->ref, b->ref) ||
	    !sema_streq(a->ctype, b->ctype) || !sema_streq(a->cusertype, b->cusertype) ||
	    !sema_streq(a->cservertype, b->cservertype) || !sema_streq(a->intran, b->intran) ||
	    !sema_streq(a->intran_type, b->intran_type) || !sema_streq(a->outtran, b->outtran) ||
	    !sema_streq(a->outtran_type, b->outtran_type) ||
	    !sema_streq(a->destructor, b->destructor) ||
	    !sema_streq(a->intranpayload, b->intranpayload) || !sema_streq(a->native, b->native) ||
	    !sema_streq(a->native_alt, b->native_alt))
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
		      : t->ctype != NULL     ? t->ctype
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

/* The in-names a sender may leave to run time: the receiver is told what it got. */
static bool
sema_ipc_poly_in(enum idlc_ipc ipc)
{
	return ipc == IDLC_IPC_POLYMORPHIC || ipc == IDLC_IPC_PORT_RECEIVE ||
	       ipc == IDLC_IPC_PORT_SEND || ipc == IDLC_IPC_PORT_SEND_ONCE;
}

static bool
sema_scalar(struct idlc_type *t, const struct idlc_ipc_info *info, uint32_t bits)
{
	t->arg_kind = info->arg_kind;
	t->wire_type = info->wire_type;
	t->wire_count = 1;
	if (info->arg_kind == IDL_ARG_PORT) {
		enum idlc_ipc out = t->ipc_out != IDLC_IPC_NONE ? t->ipc_out : info->ipc;

		t->elem_size = 0;
		t->align = 1;
		t->port_ipc = info->ipc;
		t->poly_in = sema_ipc_poly_in(info->ipc);
		t->poly_out = out == IDLC_IPC_POLYMORPHIC;
	} else {
		t->elem_size = bits / 8;
		t->align = t->elem_size;
	}
	sema_ctypes(t, info->c_type, info->c_type);
	t->c_elem = t->c_user;
	t->is_signed = (t->wire_type == IDL_WT_INT8 || t->wire_type == IDL_WT_INT16 ||
			t->wire_type == IDL_WT_INT32 || t->wire_type == IDL_WT_INT64) &&
		       sema_signed_name(t->c_user);
	return true;
}

/* The IPC type's own facts, or NULL with `unsupported` set (or an error reported and the
 * type broken) when it has none idlkit can carry. An `in|out` pair must name two ports,
 * or two data types of one size: the sender uses the first, the receiver sees the second. */
static const struct idlc_ipc_info *
sema_ipc_info(struct sema *s, struct idlc_type *t, bool *ok)
{
	const struct idlc_ipc_info *info = idlc_ipc_info(t->ipc), *out;

	*ok = true;
	if (info == NULL) {
		*ok = sema_broken(t);
		return NULL;
	}
	if (t->ipc_out != IDLC_IPC_NONE) {
		out = idlc_ipc_info(t->ipc_out);
		if (out == NULL) {
			*ok = sema_broken(t);
			return NULL;
		}
		if ((info->arg_kind == IDL_ARG_PORT) != (out->arg_kind == IDL_ARG_PORT) ||
		    (info->arg_kind != IDL_ARG_PORT && info->bits != out->bits)) {
			idlc_error(s->ctx, t->loc,
				   "IPC type pair %s|%s: both must be ports, or data of one size",
				   info->name, out->name);
			*ok = sema_broken(t);
			return NULL;
		}
	}
	if (info->arg_kind == 0) {
		t->unsupported =
			idlc_printf(s->ctx, "the IPC type %s (no wire form in idlkit)", info->name);
		return NULL;
	}
	return info;
}

static bool
sema_ipc(struct sema *s, struct idlc_type *t)
{
	bool ok;
	const struct idlc_ipc_info *info = sema_ipc_info(s, t, &ok);

	if (info == NULL)
		return ok;
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
	static const struct idlc_ipc_info real32 = { "MACH_MSG_TYPE_REAL", IDLC_IPC_REAL, 32,
						     IDL_ARG_SCALAR,	   IDL_WT_REAL32, "float" };
	static const struct idlc_ipc_info real64 = {
		"MACH_MSG_TYPE_REAL", IDLC_IPC_REAL, 64, IDL_ARG_SCALAR, IDL_WT_REAL64, "double"
	};
	bool ok;
	const struct idlc_ipc_info *info = sema_ipc_info(s, t, &ok);

	if (info == NULL)
		return ok;
	/* The flags after the size (dealloc, ...) are the arguments' business: sema_arg
	 * merges them into every argument of this type. */
	if (t->ipc == IDLC_IPC_REAL) {
		if (t->size_bits != 32 && t->size_bits != 64) {
			idlc_error(s->ctx, t->loc,
				   "MACH_MSG_TYPE_REAL must be 32 or 64 bits, "
				   "not %u",
				   t->size_bits);
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

/* Translation clauses a named type inherits when it has none of its own. */
static void
sema_inherit_trans(struct idlc_type *t, const struct idlc_type *d)
{
	if (t->intran == NULL && t->outtran == NULL && t->destructor == NULL &&
	    t->intranpayload == NULL) {
		t->intran = d->intran;
		t->intran_type = d->intran_type;
		t->intran_arg = d->intran_arg;
		t->outtran = d->outtran;
		t->outtran_type = d->outtran_type;
		t->outtran_arg = d->outtran_arg;
		t->destructor = d->destructor;
		t->destructor_arg = d->destructor_arg;
		t->intranpayload = d->intranpayload;
		t->intranpayload_type = d->intranpayload_type;
	}
	if (t->flags == 0)
		t->flags = d->flags;
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
	t->port_ipc = d->port_ipc;
	t->poly_in = d->poly_in;
	t->poly_out = d->poly_out;
	t->ool_fixed = d->ool_fixed;
	t->ool_inline = d->ool_inline;
	sema_inherit_trans(t, d);
	sema_ctypes(t, d->c_user, d->c_server);
	/* A scalar's element is the value itself, in its own C type. */
	t->c_elem = d->arg_kind == IDL_ARG_SCALAR || d->arg_kind == IDL_ARG_PORT ? t->c_user
										 : d->c_elem;
	return true;
}

/* What an element type cannot be, for arrays of every kind; NULL when it can. */
static const char *
sema_elem_problem(struct sema *s, struct idlc_type *t, struct idlc_type *e, const char *what)
{
	switch (e->arg_kind) {
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_VAR:
		idlc_error(s->ctx, t->loc, "too complicated: an %s of variable-size arrays ('%s')",
			   what, idlc_sema_type_name(s, e));
		return "";
	case IDL_ARG_OOL:
		idlc_error(s->ctx, t->loc, "too complicated: an %s of out-of-line data ('%s')",
			   what, idlc_sema_type_name(s, e));
		return "";
	case IDL_ARG_CSTRING_FIXED:
		t->unsupported = "an array of strings";
		return "";
	default:
		return NULL;
	}
}

/* An array's element facts, from its element type e: wire type, size, alignment, and for
 * ports the disposition and polymorphism. */
static void
sema_elem_facts(struct idlc_type *t, const struct idlc_type *e)
{
	t->wire_type = e->wire_type;
	t->is_signed = e->is_signed;
	t->elem_size = e->elem_size;
	t->align = e->align != 0 ? e->align : 1;
	t->port_ipc = e->port_ipc;
	t->poly_in = e->poly_in;
	t->poly_out = e->poly_out;
}

/* Out-of-line data of `e`'s elements. */
static bool
sema_ool_of(struct idlc_type *t, const struct idlc_type *e, bool fixed, uint32_t count)
{
	sema_elem_facts(t, e);
	t->arg_kind = IDL_ARG_OOL;
	t->ool_fixed = fixed;
	t->wire_count = count;
	t->c_elem = e->arg_kind == IDL_ARG_SCALAR || e->arg_kind == IDL_ARG_PORT ? e->c_user
										 : e->c_elem;
	sema_ctypes(t, t->c_elem, t->c_elem);
	return true;
}

/* Whether a fixed array element type has a C type of its own: a name (a declared type, or a
 * reference to one). Arrays of arrays carry each element as one record of that type. */
static bool
sema_named_elem(const struct idlc_type *e)
{
	return e->name != NULL || (e->kind == IDLC_T_NAMED && e->target->name != NULL);
}

/*
 * array[*:N] of a fixed array (xnu's task_restartable_range_array_t = array[*:64] of
 * task_restartable_range_t, itself array[2] of uint64_t): up to N elements, each the whole
 * inner array carried as one record of its bytes, so that the count counts inner arrays as
 * the C interface does (MIG's rangesCnt). The element's C type is the inner array's name.
 */
static bool
sema_var_of_arrays(struct sema *s, struct idlc_type *t, const struct idlc_type *e)
{
	uint32_t esize, bytes;

	if (!sema_named_elem(e)) {
		t->unsupported = "a variable-size array of anonymous arrays (declare the inner "
				 "array as a named type)";
		return true;
	}
	if (__builtin_mul_overflow(e->elem_size, e->wire_count, &esize) ||
	    __builtin_mul_overflow(esize, t->count, &bytes)) {
		idlc_error(
			s->ctx, t->loc,
			"array bound %u times element size %u x %u bytes does not fit in 32 bits",
			t->count, e->wire_count, e->elem_size);
		return sema_broken(t);
	}
	sema_elem_facts(t, e);
	/* One element is the whole inner array: an opaque record of its bytes, of its type. */
	t->wire_type = IDL_WT_STRUCT;
	t->is_signed = false;
	t->elem_size = esize;
	t->c_elem = e->c_user;
	sema_ctypes(t, t->c_elem, t->c_elem);
	/* Up to N of them, counted as the C interface counts them. */
	t->arg_kind = IDL_ARG_VAR_ARRAY;
	t->wire_count = t->count;
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
	if (sema_elem_problem(s, t, e, what) != NULL)
		return t->unsupported != NULL ? true : sema_broken(t);
	switch (e->arg_kind) {
	case IDL_ARG_SCALAR:
		count = 1;
		break;
	case IDL_ARG_FIXED_ARRAY:
		if (t->kind == IDLC_T_ARRAY_VAR)
			return sema_var_of_arrays(s, t, e);
		count = e->wire_count; /* a fixed array of fixed arrays is one flat array */
		break;
	case IDL_ARG_PORT:
		/* Ports never travel inline: the array goes as an array of ports, with the
		 * bound checked, and keeps the C interface of an inline array. */
		if (t->kind == IDLC_T_STRUCT_ARRAY) {
			t->unsupported = "an inline array of ports of this kind";
			return true;
		}
		sema_ool_of(t, e, t->kind == IDLC_T_ARRAY_FIXED, t->count);
		t->ool_inline = true;
		return true;
	default:
		t->unsupported =
			idlc_printf(s->ctx, "an %s of '%s'", what, idlc_sema_type_name(s, e));
		return true;
	}
	/* The element's own size fits: it was checked when the element was resolved. */
	esize = count * e->elem_size;
	if (__builtin_mul_overflow(count, t->count, &count) ||
	    __builtin_mul_overflow(count, e->elem_size, &bytes)) {
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

/* array[] of T, array[*] of T: always out of line in idlkit (Apple MIG's choice; GNU MIG
 * decides at run time). */
static bool
sema_unbounded(struct sema *s, struct idlc_type *t)
{
	struct idlc_type *e = t->elem;

	if (!idlc_sema_resolve(s, e))
		return sema_broken(t);
	if (e->unsupported != NULL) {
		t->unsupported = e->unsupported;
		return true;
	}
	if (sema_elem_problem(s, t, e, "array") != NULL)
		return t->unsupported != NULL ? true : sema_broken(t);
	if (e->arg_kind == IDL_ARG_FIXED_ARRAY) {
		/* An array of a named fixed array (descriptor_t = struct[2] of int): each
		 * element is a record of that C type. An anonymous one has no C type. */
		if (!sema_named_elem(e)) {
			t->unsupported = "an out-of-line array of anonymous arrays";
			return true;
		}
		sema_ool_of(t, e, false, 0);
		t->wire_type = IDL_WT_STRUCT;
		t->is_signed = false;
		t->elem_size = e->elem_size * e->wire_count;
		t->c_elem = e->c_user;
		sema_ctypes(t, t->c_elem, t->c_elem);
		return true;
	}
	return sema_ool_of(t, e, false, 0);
}

/* ^T: T out of line. ^array[] of T is the same as array[] of T; ^array[N] of T and ^T are
 * out of line with a fixed size. */
static bool
sema_pointer(struct sema *s, struct idlc_type *t)
{
	struct idlc_type *e = t->elem;

	if (!idlc_sema_resolve(s, e))
		return sema_broken(t);
	if (e->unsupported != NULL) {
		t->unsupported = e->unsupported;
		return true;
	}
	switch (e->arg_kind) {
	case IDL_ARG_OOL:
		if (e->ool_inline)
			return sema_ool_of(t, e, e->ool_fixed, e->wire_count);
		if (e->ool_fixed) {
			idlc_error(s->ctx, t->loc, "too complicated: '^' of out-of-line data");
			return sema_broken(t);
		}
		return sema_ool_of(t, e, false, 0);
	case IDL_ARG_FIXED_ARRAY:
		return sema_ool_of(t, e, true, e->wire_count);
	case IDL_ARG_SCALAR:
		return sema_ool_of(t, e, true, 1);
	case IDL_ARG_VAR_ARRAY:
	case IDL_ARG_CSTRING_VAR:
		idlc_error(s->ctx, t->loc,
			   "too complicated: '^' of a bounded variable-size array "
			   "('%s'); use '^array[] of'",
			   idlc_sema_type_name(s, e));
		return sema_broken(t);
	case IDL_ARG_PORT:
		t->unsupported = "a single port out of line ('^' of a port type)";
		return true;
	default:
		t->unsupported = idlc_printf(s->ctx, "'^' of '%s'", idlc_sema_type_name(s, e));
		return true;
	}
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

/* One member of a GNU struct { }: its size and alignment as C lays it out, or false. */
static bool
sema_field(struct sema *s, struct idlc_field *f, uint32_t *size, uint32_t *align)
{
	const struct idlc_type *ft = f->type;

	if (ft->broken || !ft->resolved)
		return false;
	switch (ft->arg_kind) {
	case IDL_ARG_SCALAR:
		*size = ft->elem_size;
		break;
	case IDL_ARG_FIXED_ARRAY:
		*size = ft->elem_size * ft->wire_count; /* checked when it was resolved */
		break;
	case IDL_ARG_PORT:
		/* A port name inside a record is the number it is on Mach: 32 bits. */
		if (ft->port_ipc == IDLC_IPC_PORT_NAME && !ft->poly_in) {
			*size = 4;
			*align = 4;
			return true;
		}
		/* fall through */
	default:
		idlc_error(s->ctx, f->loc,
			   "struct member '%s' has type '%s', which cannot be part of a record",
			   f->name, f->type_name);
		return false;
	}
	*align = ft->align != 0 ? ft->align : 1;
	return true;
}

/* GNU struct { T a; U b; }: a record laid out as C lays it out (each member at its
 * alignment, the whole padded to the largest), carried as opaque words of that alignment. */
static bool
sema_fields(struct sema *s, struct idlc_type *t)
{
	struct idlc_field *f;
	uint64_t off = 0;
	uint32_t size, align, max_align = 1;
	bool ok = true;

	for (f = t->fields; f != NULL; f = f->next) {
		f->type = idlc_sema_lookup(&s->types, f->type_name);
		if (f->type == NULL) {
			idlc_error(s->ctx, f->loc, "unknown type '%s' of struct member '%s'",
				   f->type_name, f->name);
			ok = false;
			continue;
		}
		if (!sema_field(s, f, &size, &align)) {
			ok = false;
			continue;
		}
		off = (off + align - 1) / align * align + size;
		if (align > max_align)
			max_align = align;
		if (off > UINT32_MAX / 2) {
			idlc_error(s->ctx, t->loc, "struct is too large");
			return sema_broken(t);
		}
	}
	if (!ok)
		return sema_broken(t);
	off = (off + max_align - 1) / max_align * max_align;
	if (off == 0) {
		idlc_error(s->ctx, t->loc, "struct has no members");
		return sema_broken(t);
	}
	t->arg_kind = IDL_ARG_SCALAR;
	t->wire_type = IDL_WT_STRUCT;
	t->elem_size = (uint32_t)off;
	t->wire_count = 1;
	t->align = max_align;
	sema_ctypes(t, NULL, NULL);
	t->c_elem = t->c_user;
	if (t->c_user == NULL)
		t->unsupported = "an anonymous struct { } (give it a type name)";
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
		ok = sema_unbounded(s, t);
		break;
	case IDLC_T_CSTRING_FIXED:
	case IDLC_T_CSTRING_VAR:
		ok = sema_cstring(s, t);
		break;
	case IDLC_T_POINTER:
		ok = sema_pointer(s, t);
		break;
	case IDLC_T_STRUCT_FIELDS:
		ok = sema_fields(s, t);
		break;
	case IDLC_T_NATIVE:
		ok = true;
		t->unsupported = idlc_printf(s->ctx,
					     "an Apple native type (%s: a C value with no "
					     "wire form)",
					     t->native);
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		return sema_broken(t);
	t->resolved = true;
	return true;
}
