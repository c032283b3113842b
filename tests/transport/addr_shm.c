/*
 * addr_shm.c - the conformance suite's row for shm: the rendezvous socket in the suite's
 * private directory. A killed server leaves its socket file; a clean stop removes it.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conformance.h"

static int
tt_shm_address(const char *dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "shm:%s/bench.sock", dir);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void
tt_shm_reclaim(const char *address)
{
	unlink(address + strlen("shm:"));
}

static int
tt_shm_left_nothing(const char *address)
{
	struct stat st;

	if (lstat(address + strlen("shm:"), &st) == 0) {
		fprintf(stderr, "conformance: %s: the socket file is still there\n", address);
		return -1;
	}
	return errno == ENOENT ? 0 : -1;
}

const struct tt_scheme tt_scheme_shm = {
	"shm", tt_shm_address, tt_shm_reclaim, tt_shm_left_nothing, NULL,
};
