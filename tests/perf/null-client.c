/*
 * null-client.c - the smallest program that calls through idlkit: it opens a port to
 * ADDRESS and makes COUNT null calls of bench.defs, one thread alone on its port, as a user's
 * program does (linked against the shared libidlrt). tests/perf/budget.sh runs it under
 * callgrind twice, with N and 2N calls, so that the difference divided by N is what one
 * call costs in user space, start-up and hello left out.
 *
 * usage: null-client ADDRESS COUNT [notify]
 *   with "notify", the calls are notify simpleroutines (one-way), followed by one intrpc
 *   call that asks the server how many it received: its reply comes after the last of them
 *   (a connection keeps their order), and the count, printed as "notified N", is what a
 *   datagram transport delivered (udp: drops what finds its receive buffer full).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>

#include "bench.h"
#include "bench_impl.h"

int
main(int argc, char **argv)
{
	idl_port_t port;
	unsigned long n;
	int oneway, err;

	if (argc < 3 || (n = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: null-client ADDRESS COUNT [notify]\n");
		return 2;
	}
	oneway = argc > 3 && strcmp(argv[3], "notify") == 0;
	if ((err = idl_port_open(argv[1], &port)) != 0) {
		fprintf(stderr, "null-client: %s: %s (%s)\n", argv[1], idl_strerror(err),
			idl_errdetail());
		return 1;
	}
	/* The hello and the first connection's set-up happen in the first call, which both
	 * runs make: the difference between them is calls alone. */
	for (unsigned long i = 0; i < n; i++) {
		err = oneway ? bench_notify(port, (int)i) : bench_null(port);
		if (err != 0) {
			fprintf(stderr, "null-client: call %lu: %s (%s)\n", i, idl_strerror(err),
				idl_errdetail());
			idl_port_close(port);
			return 1;
		}
	}
	if (oneway) {
		int got = 0, sum = 0;

		if ((err = bench_intrpc(port, BENCH_X_NOTIFIED, &got, &sum)) != 0) {
			fprintf(stderr, "null-client: final intrpc: %s (%s)\n", idl_strerror(err),
				idl_errdetail());
			idl_port_close(port);
			return 1;
		}
		printf("notified %d\n", got);
	}
	idl_port_close(port);
	return 0;
}
