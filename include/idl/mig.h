/*
 * mig.h - MIG's C names for code written against MIG, and for the code idlc generates.
 *
 * Users' server routines and clients keep MIG's spellings: kern_return_t, KERN_SUCCESS,
 * mach_port_t, mach_msg_type_number_t, boolean_t, MIG_BAD_ID... with MIG's values. A port
 * is an idl_port_t (an opaque handle), and MACH_PORT_NULL is NULL.
 *
 * Define IDL_NO_MIG_NAMES before including <idl/idl.h> to keep these names out of a
 * translation unit that has its own.
 */
#ifndef IDL_MIG_H
#define IDL_MIG_H

#include <stdint.h>

#include <idl/idl_error.h>
#include <idl/idl_port.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int kern_return_t;
typedef int boolean_t;
typedef uint32_t natural_t;
typedef int32_t integer_t;
typedef uint32_t mach_msg_type_number_t;
typedef int32_t mach_msg_id_t;
typedef uint32_t mach_msg_timeout_t;
typedef uint32_t mach_msg_option_t;
typedef uint32_t mach_msg_type_name_t;
typedef uintptr_t vm_offset_t;
typedef uintptr_t vm_address_t;
typedef uintptr_t vm_size_t;

/* The integer types std_types.defs and machine_types.defs name. */
typedef natural_t mach_port_right_t;
typedef natural_t mach_port_type_t;
typedef natural_t mach_port_urefs_t;
typedef natural_t mach_port_seqno_t;
typedef integer_t mach_port_delta_t;
typedef unsigned mach_port_mscount_t;
typedef unsigned mach_port_msgcount_t;
typedef unsigned mach_port_rights_t;
#if UINTPTR_MAX > 0xffffffffu
typedef uint64_t rpc_long_natural_t;
typedef int64_t rpc_long_integer_t;
#else
typedef uint32_t rpc_long_natural_t;
typedef int32_t rpc_long_integer_t;
#endif
typedef uint64_t rpc_phys_addr_t;
typedef rpc_long_natural_t long_natural_t;
typedef rpc_long_integer_t long_integer_t;

/* Every port type of std_types.defs and mach_types.defs is an idl_port_t in C. */
typedef idl_port_t mach_port_t;
typedef idl_port_t mach_port_name_t;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#define MACH_PORT_NULL ((mach_port_t)0)
#define KERN_SUCCESS 0
#define KERN_FAILURE 5

#define MIG_TYPE_ERROR IDL_MIG_TYPE_ERROR
#define MIG_REPLY_MISMATCH IDL_MIG_REPLY_MISMATCH
#define MIG_REMOTE_ERROR IDL_MIG_REMOTE_ERROR
#define MIG_BAD_ID IDL_MIG_BAD_ID
#define MIG_BAD_ARGUMENTS IDL_MIG_BAD_ARGUMENTS
#define MIG_NO_REPLY IDL_MIG_NO_REPLY
#define MIG_EXCEPTION IDL_MIG_EXCEPTION
#define MIG_ARRAY_TOO_LARGE IDL_MIG_ARRAY_TOO_LARGE
#define MIG_SERVER_DIED IDL_MIG_SERVER_DIED
#define MIG_DESTROY_REQUEST IDL_MIG_DESTROY_REQUEST

#ifdef __cplusplus
}
#endif
#endif /* IDL_MIG_H */
