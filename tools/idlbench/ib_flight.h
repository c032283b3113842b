/*
 * ib_flight.h - calls in flight, layer 3 (a part of the cells): the loop of --inflight N that
 * keeps N calls of one row in flight from the client's one thread (idlbench_flight.c), shared
 * by bench.defs's asynchronous calls (idlbench_inflight.c) and the user's (idlbench_uclient.c).
 *
 * It knows the base, the interface's rows and the cells; it must not know runs or reports.
 */
#ifndef IB_FLIGHT_H
#define IB_FLIGHT_H

#include <idl/idl.h>

#include "ib_cell.h"

struct ib_flight;

/* One call in flight: what its done function needs. */
struct ib_slot {
	struct ib_flight *f;
	int i; /* the call's number: add's and intrpc's argument */
};

/* Starts the call of slot s through an asynchronous stub: 0 when accepted (its done function
 * then calls ib_flight_finish() exactly once), else the error. */
typedef int ib_flight_start_fn(struct ib_flight *f, struct ib_slot *s);

struct ib_flight {
	idl_port_t port;
	ib_flight_start_fn *start;
	void *arg; /* the starter's own */
	struct ib_slot *slots; /* N */
	unsigned *free; /* the slots not in flight: a stack of nfree */
	unsigned nfree;
	unsigned started, total; /* calls started in this run, and its calls */
	unsigned done; /* calls completed in this run */
	int kr; /* the first failure: an error, or -1 for a wrong result */
	char why[64]; /* idl_errdetail() of that failure */
};

/* Times cell's row with cell->inflight calls in flight over a port to cell->addr: the
 * warm-up, then each repetition's calls per second into out. */
int ib_flight_cell(const struct ib_cell *cell, ib_flight_start_fn *start, void *arg,
		   struct ib_reps *out);
/* Every done function ends here with the call's outcome (-1: a wrong result). */
void ib_flight_finish(struct ib_slot *s, int kr);

#endif /* IB_FLIGHT_H */
