// client.cc - counter-client ADDRESS: a C++ program calling C stubs; bumps the counter by 5
// and by 2, and prints the total.
#include <cstdio>

#include "counter.h"

int
main(int argc, char **argv)
{
	idl_port_t port;
	int total = 0;
	int err;

	if (argc != 2) {
		std::fprintf(stderr, "usage: counter-client ADDRESS\n");
		return 2;
	}
	err = idl_port_open(argv[1], &port);
	if (err == 0)
		err = counter_bump(port, 5, &total);
	if (err == 0)
		err = counter_bump(port, 2, &total);
	if (err != 0) {
		std::fprintf(stderr, "counter-client: %s: %s\n", argv[1], idl_strerror(err));
		return 1;
	}
	idl_port_close(port);
	std::printf("total %d\n", total);
	return 0;
}
