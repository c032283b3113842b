/* echo_types.h - the C type echo_types.defs names (imported by the generated stubs). */
#ifndef ECHO_TYPES_H
#define ECHO_TYPES_H

/* line_t: a NUL-terminated string of at most 63 characters. */
typedef char line_t[64];

#endif
