/*
 * xool_types.h - the C types of xool.defs's records of reals (structs of floats and doubles,
 * which the C ABI passes by value in floating-point registers, not as integers) and of its
 * array of ranges.
 */
#ifndef XOOL_TYPES_H
#define XOOL_TYPES_H

#include <stdint.h>

typedef struct {
	float v[2];
} xfl_t;

typedef struct {
	double v[2];
} xdb_t;

typedef struct {
	float v[3];
} xf3_t;

typedef struct {
	uint64_t start, end;
} xrange_t;
typedef xrange_t *xranges_t;

#endif /* XOOL_TYPES_H */
