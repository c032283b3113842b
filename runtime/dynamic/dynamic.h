/*
 * dynamic.h - the dynamic room (runtime/dynamic/), the top of the runtime: the libffi server
 * (ffi_server.c), which serves a descriptor table without stubs. It uses the interpreter,
 * tracing and the server; nothing below includes this header.
 *
 * Scalars between their wire type and their C type (ffi_num.c): which class and size each
 * has, and the conversions C's casts make, so that a value reaches a routine as the compiled
 * stub would pass it. Descriptors around a routine's call (ffi_desc.c).
 */
#ifndef IDL_RUNTIME_DYNAMIC_H
#define IDL_RUNTIME_DYNAMIC_H

#include <ffi.h>
#include <limits.h>
#include <stdint.h>

#include <idl/idl_subsystem.h>

#include "interp/interp_desc.h"
#include "ool/ool.h"

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

/*
 * Descriptors around a routine's call (ffi_desc.c).
 */
/* What an out (or inout) descriptor argument's server routine fills. */
struct idl__dyn_dlocal {
	uintptr_t value;
	uint32_t cnt;
	uint32_t poly;
	int32_t dealloc;
};

/* Before the call: the locals of out descriptors start empty, inout ones as received. */
void idl__dyn_desc_prepare(const struct idl_arg_desc *a, const idl_desc_t *in,
			   struct idl__dyn_dlocal *l);

/* After the call: whether an out descriptor's count is too large: for its 32-bit size, or for
 * the room of an inline array of ports. */
bool idl__dyn_desc_too_large(const struct idl_arg_desc *a, const struct idl__dyn_dlocal *l);

/* The room an out array starts with: its bound, or the smallest bound of the arrays that
 * share its count (samecount), 0 for none. */
uint32_t idl__dyn_room(const struct idl_routine_desc *rt, unsigned i);

/*
 * Serving a request, around the call (dl: one per argument):
 *   before: reply handles fetched (sreplyport), out descriptors' locals prepared, the buffers
 *   of out inline arrays of ports allocated (IDL_ENOMEM, with nothing left allocated);
 *   after_call: reply handles not kept released, inline arrays of ports' memory freed when
 *   the routine keeps the request, out inline arrays' buffers freed when it failed;
 *   free_ports: out inline arrays' buffers freed (a reply refused after the call);
 *   out_too_large: whether a returned count does not fit a descriptor (MIG_ARRAY_TOO_LARGE);
 *   fill: the reply's descriptors and the header's flag and count.
 */
int idl__dyn_desc_before(const struct idl_routine_desc *rt, const idl_msg_header_t *in,
			 struct idl__dyn_dlocal *dl);
void idl__dyn_desc_after_call(const struct idl_routine_desc *rt, const idl_msg_header_t *in,
			      int32_t retcode, struct idl__dyn_dlocal *dl);
void idl__dyn_desc_free_ports(const struct idl_routine_desc *rt, struct idl__dyn_dlocal *dl);
bool idl__dyn_desc_out_too_large(const struct idl_routine_desc *rt,
				 const struct idl__dyn_dlocal *dl);
void idl__dyn_desc_fill(const struct idl_routine_desc *rt, idl_msg_header_t *out,
			const struct idl__dyn_dlocal *dl);

/* What an in descriptor gives its server routine: what = 0 the value (addr), 1 its Poly
 * (the received name of its disposition), 2 its count. */
uintptr_t idl__dyn_desc_in_value(const idl_msg_header_t *in, const struct idl_arg_desc *a,
				 int what);

#endif /* IDL_RUNTIME_DYNAMIC_H */
