/* server.c - counter-server ADDRESS: serves counter.defs until SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "counterServer.h"

static idl_server_t *srv;
/* The count; routines are serialised (the server's default concurrency is 1). */
static int count;

kern_return_t
S_counter_bump(mach_port_t server, int by, int *total)
{
	(void)server;
	count += by;
	*total = count;
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
		fprintf(stderr, "usage: counter-server ADDRESS\n");
		return 2;
	}
	err = idl_server_create(&srv);
	if (err == 0)
		err = idl_server_add_subsystem(srv, &counter_subsystem, counter_server);
	if (err == 0)
		err = idl_server_listen(srv, argv[1]);
	if (err != 0) {
		fprintf(stderr, "counter-server: %s: %s\n", argv[1], idl_strerror(err));
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
