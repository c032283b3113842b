/*
 * idl_time.h - the runtime's clock: CLOCK_MONOTONIC in nanoseconds, the clock of every
 * deadline (calls, transports, servers), for programs that time or bound their own work the
 * way the runtime does. <idl/idl.h> includes it; so does <idl/idl_transport.h>.
 */
#ifndef IDL_TIME_H
#define IDL_TIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An absolute deadline that never comes. */
#define IDL_DEADLINE_NONE INT64_MAX

/* CLOCK_MONOTONIC now, in nanoseconds. Any thread. */
int64_t idl_now_ns(void);
/* now + ms milliseconds, saturating; a negative ms gives IDL_DEADLINE_NONE. Any thread. */
int64_t idl_deadline_ms(int ms);

#ifdef __cplusplus
}
#endif
#endif /* IDL_TIME_H */
