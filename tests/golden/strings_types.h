/* strings_types.h - the C types strings.defs names. */
#ifndef STRINGS_TYPES_H
#define STRINGS_TYPES_H

typedef char path_t[64];
typedef char name_t[32];
typedef int blob_t[20000];

#endif
