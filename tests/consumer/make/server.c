/* server.c - echo-server ADDRESS: serves echo.defs until SIGTERM. */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "echoServer.h"

static idl_server_t *srv;

kern_return_t
S_echo_shout(mach_port_t server, line_t s, line_t r)
{
	size_t i;

	(void)server;
	for (i = 0; s[i] != '\0' && i < 62; i++)
		r[i] = (char)toupper((unsigned char)s[i]);
	r[i++] = '!';
	r[i] = '\0';
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
		fprintf(stderr, "usage: echo-server ADDRESS\n");
		return 2;
	}
	err = idl_server_create(&srv);
	if (err == 0)
		err = idl_server_add_subsystem(srv, &echo_subsystem, echo_server);
	if (err == 0)
		err = idl_server_listen(srv, argv[1]);
	if (err != 0) {
		fprintf(stderr, "echo-server: %s: %s\n", argv[1], idl_strerror(err));
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
