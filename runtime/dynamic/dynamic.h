/*
 * ffi_num.h - scalars between their wire type and their C type in the libffi server
 * (ffi_num.c): which class and size each has, and the conversions C's casts make, so
 * that a value reaches a routine as the compiled stub would pass it.
 */
#ifndef IDL_RUNTIME_FFI_NUM_H
#define IDL_RUNTIME_FFI_NUM_H

#include <ffi.h>
#include <limits.h>
#include <stdint.h>

#include <idl/idl_subsystem.h>

/* The class of a C or wire scalar: what a value is converted through. */
enum dyn_cls {
	DC_SINT = 1,
	DC_UINT,
	DC_FLOAT,
	DC_RECORD, /* bytes: a struct passed by value or by pointer */
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

#define DYN_CHAR_CLS (CHAR_MIN < 0 ? DC_SINT : DC_UINT)

/* The class and size of an argument's wire element. */
void idl__dyn_wire_cls(const struct idl_arg_desc *a, uint8_t *cls, uint8_t *size);
/* The class and size of a scalar argument's C type (known by name, else its wire type's). */
void idl__dyn_c_cls(const struct idl_arg_desc *a, uint8_t *cls, uint8_t *size);
/* libffi's type of a scalar of that class and size, or NULL. */
ffi_type *idl__dyn_ffi_type(uint8_t cls, uint8_t size);
/* Loads a scalar from memory, and stores one converting as C's casts do. */
void idl__dyn_load(const void *p, uint8_t cls, uint8_t size, struct dyn_num *n);
void idl__dyn_store(void *p, uint8_t cls, uint8_t size, const struct dyn_num *n);

#endif /* IDL_RUNTIME_FFI_NUM_H */
