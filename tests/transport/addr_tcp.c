/*
 * addr_tcp.c - the conformance row of tcp: a free loopback port, found by binding port 0.
 */
#include <config.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "conformance.h"

/* Binds 127.0.0.1:port (0: any) with SO_REUSEADDR, so that only a listening socket, not a
 * connection in TIME_WAIT, makes it fail. Returns the port, or -1. */
static int
tt_tcp_bind(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, got = -1;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		got = ntohs(sa.sin_port);
	close(fd);
	return got;
}

static int
tt_tcp_address(const char *dir, char *buf, size_t len)
{
	int port = tt_tcp_bind(0), n;

	(void)dir;
	if (port <= 0)
		return -1;
	n = snprintf(buf, len, "tcp:127.0.0.1:%d", port);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
tt_tcp_left_nothing(const char *address)
{
	const char *colon = strrchr(address, ':');
	int port = colon != NULL ? atoi(colon + 1) : 0;

	if (port <= 0 || tt_tcp_bind((unsigned)port) != port) {
		fprintf(stderr, "conformance: %s: the port is still taken\n", address);
		return -1;
	}
	return 0;
}

/* A killed server leaves nothing a new one cannot take over (SO_REUSEADDR). */
const struct tt_scheme tt_scheme_tcp = {
	"tcp",
	tt_tcp_address,
	NULL,
	tt_tcp_left_nothing,
};
