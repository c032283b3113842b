/*
 * whoami_types.h - the C types of whoami.defs's own types (the .defs imports this header).
 */
#ifndef WHOAMI_TYPES_H
#define WHOAMI_TYPES_H

typedef char name_t[512];

#endif
