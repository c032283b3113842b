/*
 * fuzz_reply_calls.c - one call of each routine of every.defs with a reply, with valid
 * arguments: what the reply fuzzer drives and the seed generator records. Whatever an
 * accepted reply hands to the caller is released here.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "every.h"
#include "fuzz_demux_wire.h"

#define FC_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_reply_calls: %s\n", #cond);                          \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int
fz_call(idl_port_t fr_port, unsigned which)
{
	union {
		char c[600];
		ev_rec_t r[8];
	} buf;
	int kr = 0, a = 0, b = 0, c = 0;

	memset(&buf, 0, sizeof buf);
	switch (which % FZ_NCALLS) {
	case 0:
		kr = every_null(fr_port);
		break;
	case 1: {
		int64_t sum;
		double g;

		kr = every_scalars(fr_port, 1, 2, 3, 4, 1, 0.5, &sum, &g);
		break;
	}
	case 2: {
		ev_vec_t v = { 1, 2, 3, 4 }, w, io = { 0 };
		ev_pair_t p = { 1, 2 }, q;

		kr = every_fixed(fr_port, v, w, io, p, &q);
		break;
	}
	case 3: {
		short s[16] = { 0 }, t[16];
		unsigned char bb[512] = { 0 };
		mach_msg_type_number_t tn = 16, bn = 10;

		kr = every_arrays(fr_port, s, 4, t, &tn, bb, &bn, &a);
		if (kr == 0)
			FC_CHECK(tn <= 16 && bn <= 512);
		break;
	}
	case 4: {
		ev_name_t name = "n", io = "io";
		char back[128];

		kr = every_strings(fr_port, name, "text", back, io);
		if (kr == 0)
			FC_CHECK(memchr(back, '\0', sizeof back) != NULL &&
				 memchr(io, '\0', sizeof io) != NULL);
		break;
	}
	case 5: {
		ev_rec_t r = { 1, 2, 3 }, first;
		mach_msg_type_number_t an = 8;

		kr = every_records(fr_port, r, buf.r, 2, &first, buf.r, &an);
		if (kr == 0)
			FC_CHECK(an <= 8);
		break;
	}
	case 6: {
		int ints[4] = { 1, 2, 3, 4 };

		kr = every_ool_in(fr_port, buf.c, 10, ints, 4, &a);
		break;
	}
	case 7: {
		ev_ool_t d = NULL;
		mach_msg_type_number_t dn = 0;

		kr = every_ool_out(fr_port, 10, &d, &dn);
		if (kr == 0)
			idl_ool_free(d, dn);
		break;
	}
	case 8: {
		unsigned char page[64] = { 0 }, *back = NULL;

		kr = every_ool_page(fr_port, page, &back);
		if (kr == 0)
			idl_ool_free(back, 64);
		break;
	}
	case 9: {
		ev_ints_t d = idl_ool_alloc(16);
		mach_msg_type_number_t dn = 4;

		kr = every_ool_inout(fr_port, &d, &dn);
		if (kr == 0)
			idl_ool_free(d, (size_t)dn * sizeof(int));
		break;
	}
	case 10:
		kr = every_port_in(fr_port, IDL_PORT_NULL, &a);
		break;
	case 11: {
		mach_port_t p = IDL_PORT_NULL;

		kr = every_port_out(fr_port, &p);
		if (kr == 0)
			idl_port_close(p);
		break;
	}
	case 12: {
		mach_port_t ports[2] = { IDL_PORT_NULL, IDL_PORT_NULL };

		kr = every_port_array(fr_port, ports, 2, &a);
		break;
	}
	case 13: {
		mach_port_t ports[2] = { IDL_PORT_NULL, IDL_PORT_NULL };

		kr = every_inline_ports(fr_port, ports, 2, &a);
		break;
	}
	case 14:
		kr = every_deferred(fr_port, 1, &a);
		break;
	case 15:
		kr = every_sleep_ms(fr_port, 1, &a);
		break;
	case 16:
		kr = every_count(fr_port, &a);
		break;
	case 17:
		kr = every_stats(fr_port, &a, &b, &c);
		break;
	default: {
		ev_addr_t addr;

		kr = every_whoami(fr_port, &a, &b, &c, addr);
		if (kr == 0)
			FC_CHECK(memchr(addr, '\0', sizeof addr) != NULL);
		break;
	}
	}
	return kr;
}
