/*
 * mig.h - MIG's C names for code written against MIG, and for the code idlc generates.
 *
 * Users' server routines and clients keep MIG's spellings: kern_return_t, KERN_SUCCESS,
 * mach_port_t, mach_msg_type_number_t, boolean_t, MIG_BAD_ID... with MIG's values. A port
 * is an idl_port_t (an opaque handle), and MACH_PORT_NULL is NULL.
 *
 * The C types of every type in idlkit's std_types.defs and mach_types.defs are here (a
 * task, a thread, a host are ports; VM quantities are pointer-sized), and the dispositions
 * (MACH_MSG_TYPE_MOVE_SEND ...) that polymorphic port arguments take, with Mach's values.
 *
 * Define IDL_NO_MIG_NAMES before including <idl/idl.h> to keep these names out of a
 * translation unit that has its own.
 */
#ifndef IDL_MIG_H
#define IDL_MIG_H

#include <stdint.h>

#include <idl/idl_error.h>
#include <idl/idl_port.h>
#include <idl/idl_server.h>

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
typedef uintptr_t rpc_vm_offset_t;
typedef uintptr_t rpc_vm_size_t;
typedef vm_offset_t pointer_t;

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

/* Every port type of std_types.defs and mach_types.defs is an idl_port_t in C; an array
 * of ports (out of line) is a pointer to its first. */
typedef idl_port_t mach_port_t;
typedef idl_port_t mach_port_name_t;
typedef mach_port_t *mach_port_array_t;
typedef mach_port_name_t *mach_port_name_array_t;
typedef mach_port_type_t *mach_port_type_array_t;
typedef mach_port_t task_t;
typedef mach_port_t thread_t;
typedef mach_port_t vm_task_t;
typedef mach_port_t ipc_space_t;
typedef mach_port_t host_t;
typedef mach_port_t host_priv_t;
typedef mach_port_t processor_t;
typedef mach_port_t processor_set_t;
typedef mach_port_t processor_set_name_t;
typedef mach_port_t memory_object_t;
typedef mach_port_t memory_object_control_t;
typedef mach_port_t memory_object_name_t;
typedef task_t *task_array_t;
typedef thread_t *thread_array_t;
typedef processor_t *processor_array_t;
typedef processor_set_t *processor_set_array_t;
typedef processor_set_name_t *processor_set_name_array_t;
typedef memory_object_t *memory_object_array_t; /* GNU Mach's mach4.defs */

/* mach_types.defs: integers, inline arrays (pointers to their first element), records. */
typedef int vm_prot_t;
typedef int vm_inherit_t;
typedef int vm_machine_attribute_t;
typedef int vm_machine_attribute_val_t;
typedef int vm_sync_t;
typedef int memory_object_copy_strategy_t;
typedef int memory_object_return_t;
typedef natural_t *thread_state_t;
typedef integer_t *thread_info_t;
typedef integer_t *task_info_t;
typedef integer_t *host_info_t;
typedef integer_t *processor_info_t;
typedef integer_t *processor_set_info_t;
typedef int *rpc_signature_info_t;
typedef vm_offset_t *emulation_vector_t;
typedef vm_offset_t *vm_offset_array_t;
typedef vm_size_t *vm_size_array_t;
typedef char kernel_version_t[512];
typedef char kernel_boot_info_t[4096];

typedef struct vm_statistics {
	integer_t pagesize, free_count, active_count, inactive_count, wire_count;
	integer_t zero_fill_count, reactivations, pageins, pageouts, faults, cow_faults;
	integer_t lookups, hits;
} vm_statistics_data_t;

/* A port name inside a record is a 32-bit number, as on Mach. */
typedef struct mach_port_status {
	natural_t mps_pset;
	mach_port_seqno_t mps_seqno;
	mach_port_mscount_t mps_mscount;
	mach_port_msgcount_t mps_qlimit;
	mach_port_msgcount_t mps_msgcount;
	mach_port_rights_t mps_sorights;
	boolean_t mps_srights;
	boolean_t mps_pdrequest;
	boolean_t mps_nsrequest;
} mach_port_status_t;

typedef struct rpc_time_value {
	rpc_long_integer_t seconds;
	integer_t microseconds;
} rpc_time_value_t;
typedef rpc_time_value_t time_value_t;

/* Apple's security and audit tokens are what the transport knows of the peer. */
typedef struct idl_cred security_token_t;
typedef struct idl_cred audit_token_t;

/* Port dispositions (mach_msg_type_name_t), with Mach's values: what a polymorphic port
 * argument's <arg>Poly says, and what a descriptor's aux carries. */
#define MACH_MSG_TYPE_PORT_NAME 15
#define MACH_MSG_TYPE_MOVE_RECEIVE 16
#define MACH_MSG_TYPE_MOVE_SEND 17
#define MACH_MSG_TYPE_MOVE_SEND_ONCE 18
#define MACH_MSG_TYPE_COPY_SEND 19
#define MACH_MSG_TYPE_MAKE_SEND 20
#define MACH_MSG_TYPE_MAKE_SEND_ONCE 21
#define MACH_MSG_TYPE_PORT_RECEIVE MACH_MSG_TYPE_MOVE_RECEIVE
#define MACH_MSG_TYPE_PORT_SEND MACH_MSG_TYPE_MOVE_SEND
#define MACH_MSG_TYPE_PORT_SEND_ONCE MACH_MSG_TYPE_MOVE_SEND_ONCE
#define MACH_MSG_TYPE_POLYMORPHIC ((mach_msg_type_name_t)-1)

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
