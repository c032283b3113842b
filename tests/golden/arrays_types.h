/* arrays_types.h - the C types arrays.defs names, for both sides. */
#ifndef ARRAYS_TYPES_H
#define ARRAYS_TYPES_H

#include <stdint.h>

typedef int vec3_t[3];
typedef struct {
	int x, y;
} point_t;
typedef short samples_t[64];
typedef int vals_t[100];
typedef int64_t longs_t[50];
typedef unsigned char bytes_t[40];

#endif
