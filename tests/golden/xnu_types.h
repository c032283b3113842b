/* xnu_types.h - the C types xnu.defs imports, as xnu's own Mach headers define them. */
#ifndef XNU_TYPES_H
#define XNU_TYPES_H

#include <stdint.h>

#include <idl/mig.h>

typedef int exception_mask_t;
typedef int exception_behavior_t;
typedef int thread_state_flavor_t;
typedef mach_port_t exception_handler_t;
typedef struct {
	natural_t port;
	natural_t id;
} exception_handler_info_t;
typedef exception_mask_t *exception_mask_array_t;
typedef exception_handler_t *exception_handler_array_t;
typedef exception_handler_info_t *exception_handler_info_array_t;
typedef exception_behavior_t *exception_behavior_array_t;
typedef thread_state_flavor_t *exception_flavor_array_t;
typedef exception_mask_t *masks_ool_t;
typedef mach_port_t eventlink_port_pair_t[2];
typedef struct {
	uint64_t location;
	uint16_t length;
	uint16_t recovery_offs;
	uint32_t flags;
} task_restartable_range_t;
typedef task_restartable_range_t *task_restartable_range_array_t;

#endif
