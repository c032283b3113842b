/* client.c - echo-client ADDRESS: sends "hello" and prints what comes back. */
#include <stdio.h>

#include "echo.h"

int
main(int argc, char **argv)
{
	idl_port_t port;
	/* line_t is a char[64]: the stub reads and writes whole buffers of that size. */
	line_t msg = "hello";
	line_t reply = "";
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: echo-client ADDRESS\n");
		return 2;
	}
	err = idl_port_open(argv[1], &port);
	if (err == 0)
		err = echo_shout(port, msg, reply);
	if (err != 0) {
		fprintf(stderr, "echo-client: %s: %s\n", argv[1], idl_strerror(err));
		return 1;
	}
	idl_port_close(port);
	printf("%s\n", reply);
	return 0;
}
