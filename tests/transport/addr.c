/*
 * addr.c - how to make a test address for each transport scheme.
 *
 * Every registered transport is tested; a scheme without a row here fails its suite, so a
 * new transport cannot go untested by accident. A new transport adds one row to
 * tt_schemes[] below (and nothing else in this suite).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * ---- The table: one row per scheme. ----
 *
 * make_address gets a fresh 0700 directory for the suite; a network transport ignores it and
 * picks a free loopback port instead (bind port 0, read it back, close). Each other
 * transport keeps its row in its own file, tests/transport/addr_<scheme>.c, built when the
 * transport is (its folder's automake fragment, transports/<scheme>/local.mk, lists it).
 */
static const struct tt_scheme tt_unix = {
	"unix",
	tt_unix_address,
	tt_unix_reclaim,
	tt_unix_left_nothing,
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
};

const struct tt_scheme *
tt_scheme_find(const char *scheme)
{
	for (size_t i = 0; i < sizeof tt_schemes / sizeof tt_schemes[0]; i++)
		if (strcmp(tt_schemes[i]->scheme, scheme) == 0)
			return tt_schemes[i];
	return NULL;
}
