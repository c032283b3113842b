/*
 * addr.c - how to make a test address for each transport scheme.
 *
 * Every registered transport is tested; a scheme without a row here fails its suite, so a
 * new transport cannot go untested by accident. A new transport adds one row to
 * tt_schemes[] below (and nothing else in this suite).
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "conformance.h"

/* unix: a socket in the suite's private directory. */
static int
tt_unix_address(const char *dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "unix:%s/bench.sock", dir);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A killed server cannot remove its socket file; a new server needs the name free. */
static void
tt_unix_reclaim(const char *address)
{
	unlink(address + strlen("unix:"));
}

static int
tt_unix_left_nothing(const char *address)
{
	struct stat st;

	if (lstat(address + strlen("unix:"), &st) == 0) {
		fprintf(stderr, "conformance: %s: the socket file is still there\n", address);
		return -1;
	}
	return errno == ENOENT ? 0 : -1;
}

/* Binds 127.0.0.1:port (0: any) with SO_REUSEADDR, so that only a listening socket, not a
 * connection in TIME_WAIT, makes it fail. Returns the port, or -1. */
int
tt_inet_bind(unsigned port)
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

int
tt_inet_left_nothing(const char *address)
{
	const char *colon = strrchr(address, ':');
	int port = colon != NULL ? atoi(colon + 1) : 0;

	if (port <= 0 || tt_inet_bind((unsigned)port) != port) {
		fprintf(stderr, "conformance: %s: the port is still taken\n", address);
		return -1;
	}
	return 0;
}

/*
 * ---- The table: one row per scheme. ----
 *
 * make_address gets a fresh 0700 directory for the suite; a network transport ignores it and
 * picks a free loopback port instead (bind port 0, read it back, close). Each other
 * transport keeps its row in its own file, tests/transport/addr_<scheme>.c, built when the
 * transport is (its folder's automake fragment, transports/<scheme>/local.mk, lists it).
 */
static const struct tt_scheme tt_unix = {
	"unix", tt_unix_address, tt_unix_reclaim, tt_unix_left_nothing, NULL,
};

static const struct tt_scheme *const tt_schemes[] = {
	&tt_unix,
#if HAVE_TRANSPORT_TCP
	&tt_scheme_tcp,
#endif
#if HAVE_TRANSPORT_UDP
	&tt_scheme_udp,
#endif
#if HAVE_TRANSPORT_SHM
	&tt_scheme_shm,
#endif
#if HAVE_TRANSPORT_PORT
	&tt_scheme_port,
#endif
#if HAVE_TRANSPORT_TLS
	&tt_scheme_tls,
#endif
};

const struct tt_scheme *
tt_scheme_find(const char *scheme)
{
	for (size_t i = 0; i < sizeof tt_schemes / sizeof tt_schemes[0]; i++)
		if (strcmp(tt_schemes[i]->scheme, scheme) == 0)
			return tt_schemes[i];
	return NULL;
}
