/* client.c - adder-client ADDRESS: calls add3(1, 2, 3) and prints the sum. */
#include <stdio.h>

#include "adder.h"

int
main(int argc, char **argv)
{
	idl_port_t port;
	int sum = 0, err;

	if (argc != 2) {
		fprintf(stderr, "usage: adder-client ADDRESS\n");
		return 2;
	}
	err = idl_port_open(argv[1], &port);
	if (err == 0)
		err = adder_add3(port, 1, 2, 3, &sum);
	if (err != 0) {
		fprintf(stderr, "adder-client: %s: %s\n", argv[1], idl_strerror(err));
		return 1;
	}
	idl_port_close(port);
	printf("sum %d\n", sum);
	return 0;
}
