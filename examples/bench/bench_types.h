/* bench_types.h - the C types that bench.defs names (imported by its generated stubs). */
#ifndef BENCH_TYPES_H
#define BENCH_TYPES_H

/* big_t: seed 001's 200-byte string, passed by value. */
typedef char big_t[200];
/* text_t: a NUL-terminated string of at most 255 characters. */
typedef char text_t[256];
/* ints_t: up to 1024 ints, with a count beside them. */
typedef int ints_t[1024];
/* ool_t: bytes out of line, with a count beside them (ool64k, ool1m). */
typedef char *ool_t;

#endif
