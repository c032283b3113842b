/*
 * addr_udp.c - the conformance row of udp: a free loopback port, found by binding port 0.
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

/* Binds 127.0.0.1:port (0: any); fails while a socket is bound there. Returns the port,
 * or -1. */
static int
tt_udp_bind(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), got = -1;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		got = ntohs(sa.sin_port);
	close(fd);
	return got;
}

static int
tt_udp_address(const char *dir, char *buf, size_t len)
{
	int port = tt_udp_bind(0), n;

	(void)dir;
	if (port <= 0)
		return -1;
	n = snprintf(buf, len, "udp:127.0.0.1:%d", port);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
tt_udp_left_nothing(const char *address)
{
	const char *colon = strrchr(address, ':');
	int port = colon != NULL ? atoi(colon + 1) : 0;

	if (port <= 0 || tt_udp_bind((unsigned)port) != port) {
		fprintf(stderr, "conformance: %s: the port is still taken\n", address);
		return -1;
	}
	return 0;
}

/* A killed server leaves nothing behind: its socket dies with it. */
const struct tt_scheme tt_scheme_udp = {
	"udp", tt_udp_address, NULL, tt_udp_left_nothing, NULL,
};
