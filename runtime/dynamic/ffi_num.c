/*
 * ffi_num.c - scalars between wire types and C types for the libffi server (dynamic.h).
 * A C type is known by name (the common typedefs of <idl/mig.h> and C's own) or taken to be
 * what its wire type is; a value is converted as the compiled stub's assignment would
 * convert it, bit for bit when both sides have the same type.
 *
 * It knows libffi and C's conversions, and nothing of messages or the server.
 */
#include <config.h>

#include <string.h>

#include "dynamic/dynamic.h"

struct dyn_ctype {
	const char *name;
	uint8_t cls;
	uint8_t size;
};

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
void
idl__dyn_wire_cls(const struct idl_arg_desc *a, uint8_t *cls, uint8_t *size)
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
void
idl__dyn_c_cls(const struct idl_arg_desc *a, uint8_t *cls, uint8_t *size)
{
	idl__dyn_wire_cls(a, cls, size);
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

ffi_type *
idl__dyn_ffi_type(uint8_t cls, uint8_t size)
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

void
idl__dyn_load(const void *p, uint8_t cls, uint8_t size, struct dyn_num *n)
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
void
idl__dyn_store(void *p, uint8_t cls, uint8_t size, const struct dyn_num *n)
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
		double d = n->cls == DC_FLOAT  ? n->d
			   : n->cls == DC_SINT ? (double)n->i
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
