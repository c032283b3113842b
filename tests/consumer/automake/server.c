/* server.c - adder-server ADDRESS: serves adder.defs until SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "adderServer.h"

static idl_server_t *srv;

kern_return_t
S_adder_add3(mach_port_t server, int a, int b, int c, int *sum)
{
	(void)server;
	*sum = a + b + c;
	return KERN_SUCCESS;
}

static void
on_term(int sig)
{
	(void)sig;
	idl_server_stop(srv);
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: adder-server ADDRESS\n");
		return 2;
	}
	err = idl_server_create(&srv);
	if (err == 0)
		err = idl_server_add_subsystem(srv, &adder_subsystem, adder_server);
	if (err == 0)
		err = idl_server_listen(srv, argv[1]);
	if (err != 0) {
		fprintf(stderr, "adder-server: %s: %s\n", argv[1], idl_strerror(err));
		return 1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	printf("ready %s\n", argv[1]);
	fflush(stdout);
	err = idl_server_run(srv);
	idl_server_destroy(srv);
	return err == 0 ? 0 : 1;
}
