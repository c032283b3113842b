/*
 * idl.h - the umbrella header of libidlrt, the idlkit runtime.
 *
 * Generated stubs include this header; so may users. Every public name is idl_ / IDL_,
 * except MIG's own spellings, which <idl/mig.h> supplies unless IDL_NO_MIG_NAMES is defined.
 */
#ifndef IDL_IDL_H
#define IDL_IDL_H

#include <idl/idl_error.h>
#include <idl/idl_msg.h>
#include <idl/idl_subsystem.h>
#include <idl/idl_port.h>
#include <idl/idl_server.h>
#include <idl/idl_time.h>
#include <idl/idl_tls.h>
#ifndef IDL_NO_MIG_NAMES
#include <idl/mig.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's version, e.g. "0.1.0". */
const char *idl_version(void);

#ifdef __cplusplus
}
#endif
#endif /* IDL_IDL_H */
