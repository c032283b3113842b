/* every_types.h - the C types every.defs imports. */
#ifndef EVERY_TYPES_H
#define EVERY_TYPES_H

#include <stdint.h>

#include <idl/mig.h>

typedef int ev_vec_t[4];
typedef short *ev_shorts_t;
typedef unsigned char *ev_bytes_t;
typedef char ev_name_t[32];
typedef char *ev_text_t;
typedef int ev_pair_t[2];
typedef struct ev_rec {
	int a;
	int64_t b;
	char c;
} ev_rec_t;
typedef ev_rec_t *ev_recs_t;
typedef char *ev_ool_t;
typedef int *ev_ints_t;
typedef unsigned char *ev_page_ptr_t;
typedef mach_port_t *ev_ports_t;
typedef mach_port_t *ev_few_ports_t;
typedef char ev_addr_t[96];

#endif
