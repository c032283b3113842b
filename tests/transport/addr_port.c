/*
 * addr_port.c - the conformance suite's row for port: a rendezvous queue name unique to the
 * run. A killed server leaves its queue's name (nothing can remove it for a dead process);
 * a clean stop removes it.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"

static int
tt_port_address(const char *dir, char *buf, size_t len)
{
	static unsigned n;
	int r = snprintf(buf, len, "port:/idlconf-%ld-%u", (long)getpid(), n++);

	(void)dir;
	return r < 0 || (size_t)r >= len ? -1 : 0;
}

static void
tt_port_reclaim(const char *address)
{
	mq_unlink(address + strlen("port:"));
}

static int
tt_port_left_nothing(const char *address)
{
	mqd_t q = mq_open(address + strlen("port:"), O_RDONLY | O_NONBLOCK);

	if (q != (mqd_t)-1) {
		fprintf(stderr, "conformance: %s: the queue is still there\n", address);
		mq_close(q);
		return -1;
	}
	return errno == ENOENT ? 0 : -1;
}

const struct tt_scheme tt_scheme_port = {
	"port", tt_port_address, tt_port_reclaim, tt_port_left_nothing, NULL,
};
