/*
 * ib_user.h - the user's rows in the cells, layer 3: the values one call sends, made in the
 * client process, and one call of a row, compiled or interpreted (idlbench_user.c), which
 * the client's loops, the probe and the setup calls use (idlbench_uclient.c).
 *
 * It knows the base, the interface and the cells; it must not know runs or reports.
 */
#ifndef IB_USER_H
#define IB_USER_H

#include <stdint.h>

#include <idl/idl.h>

#include "ib_cell.h"

/* The values of one call, made once, and again before each call for what the previous one
 * gave away. */
struct ib_uvals {
	const struct ib_ucall *c;
	struct idl_arg_value *v; /* rt->nargs entries */
	idl_port_t *one; /* rt->nargs: the storage of single ports */
	int made; /* the first make happened */
	/* Interpreted: the request packed once into tmpl (when nothing is given away) and
	 * copied for each call, the reply room. */
	uint64_t *req, *rep, *tmpl;
	size_t req_cap, rep_cap;
	uint32_t req_len;
};

int ib_vals_init(struct ib_uvals *s, const struct ib_ucall *c);
/* Makes anew what the previous call gave away (dealloc data, moved ports). */
int ib_vals_remake(struct ib_uvals *s);
void ib_vals_fini(struct ib_uvals *s);
/* One synchronous call of s's routine over port; its result. */
int ib_once(struct ib_uvals *s, idl_port_t port);

#endif /* IB_USER_H */
