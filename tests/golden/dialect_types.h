/* dialect_types.h - the C types dialect.defs imports. */
#ifndef DIALECT_TYPES_H
#define DIALECT_TYPES_H

#include <stdint.h>

#include <idl/mig.h>

typedef char *dl_bytes_t;
typedef int *dl_ints_t;
typedef unsigned char *page_ptr_t;
typedef struct rec {
	int a;
	int64_t b;
	char c;
} dl_rec_t;
typedef dl_rec_t *dl_recs_t;
typedef int dl_vals_t[16];
typedef int dl_word_t;
typedef mach_port_t *few_ports_t;

/* The client's view of obj_t and ms_t, and what the server side translates them into. */
typedef mach_port_t obj_t;
typedef int ms_t;
typedef struct obj *obj_ref_t;
obj_ref_t obj_lookup(mach_port_t port);
mach_port_t obj_port(obj_ref_t obj);
void obj_release(obj_ref_t obj);
typedef long ms_server_t;
ms_server_t ms_in(int ms);
int ms_out(ms_server_t ms);

#define DIALECT_TIMEOUT 750

#endif
