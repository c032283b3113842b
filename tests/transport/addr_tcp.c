/*
 * addr_tcp.c - the conformance row of tcp: a free loopback port, found by binding port 0
 * (tt_inet_bind()).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

static int
tt_tcp_address(const char *dir, char *buf, size_t len)
{
	int port = tt_inet_bind(0), n;

	(void)dir;
	if (port <= 0)
		return -1;
	n = snprintf(buf, len, "tcp:127.0.0.1:%d", port);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A killed server leaves nothing a new one cannot take over (SO_REUSEADDR). */
const struct tt_scheme tt_scheme_tcp = {
	"tcp", tt_tcp_address, NULL, tt_inet_left_nothing, NULL,
};
