/*
 * idlbench_nopeer.c - the peer's entry points when configure found no rpcgen or libtirpc:
 * the ONC RPC columns and the XDR half of --marshal are then left out, and say so. A side of
 * a cell, layer 3: it must not know runs or reports.
 */
#include <config.h>

#include "ib_cell.h"

int
ib_peer_available(void)
{
	return 0;
}

int
ib_peer_serve(const struct ib_cell *cell, int ready_fd)
{
	(void)cell;
	ib_ready(ready_fd, "this idlbench was built without the ONC RPC peer");
	return 1;
}

int
ib_peer_client(const struct ib_cell *cell, struct ib_reps *out)
{
	(void)cell;
	(void)out;
	return -1;
}

double
ib_xdr_biginout_ns(unsigned iterations)
{
	(void)iterations;
	return -1;
}
