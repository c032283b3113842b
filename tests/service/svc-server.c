/*
 * svc-server.c - the server of tests/service/service.sh: bench.defs with bench-server's
 * routines (examples/bench/bench_impl.c), on any number of addresses (a service manager's
 * "SCHEME:systemd:NAME" ones among them), each request held for -d microseconds so that
 * calls are still in flight when a drain begins.
 *
 *     svc-server [-d DELAY_US] [-t DRAIN_MS] [-e] ADDRESS...
 *
 * SIGTERM drains (idl_server_drain(), DRAIN_MS, default 10000); SIGINT stops. With -e the
 * server is embedded: this thread serves it from a poll() loop, so its watchdog and status
 * come from the timer in idl_server_fd()'s set. Prints "ready" once every address listens,
 * and exits 0 after a run that ended cleanly.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "benchServer.h"

static idl_server_t *svc_srv;
static int svc_drain_ms = 10000;

static void
svc_on_signal(int sig)
{
	if (sig == SIGTERM)
		idl_server_drain(svc_srv, svc_drain_ms);
	else
		idl_server_stop(svc_srv);
}

/* bench's demux, each request held first. */
static int
svc_demux(void *ctx, idl_msg_header_t *in, idl_msg_header_t *out)
{
	long delay_us = *(const long *)ctx;

	if (delay_us > 0)
		usleep((useconds_t)delay_us);
	return bench_server(in, out);
}

static int
svc_fail(const char *what, int err)
{
	fprintf(stderr, "svc-server: %s: %s (%s): %s\n", what, idl_strerror(err), idl_errname(err),
		idl_errdetail());
	return 1;
}

static int
svc_embedded(void)
{
	struct pollfd p = { .events = POLLIN };
	int r;

	if ((p.fd = idl_server_fd(svc_srv)) < 0)
		return svc_fail("idl_server_fd", p.fd);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return svc_fail("poll", IDL_ESYSERR(errno));
		if ((r = idl_server_dispatch(svc_srv, 64)) == IDL_ECLOSED)
			return 0;
		if (r < 0)
			return svc_fail("idl_server_dispatch", r);
	}
}

int
main(int argc, char **argv)
{
	static long delay_us;
	struct sigaction sa;
	int opt, err, rc, embedded = 0;

	while ((opt = getopt(argc, argv, "d:t:e")) != -1) {
		if (opt == 'd')
			delay_us = atol(optarg);
		else if (opt == 't')
			svc_drain_ms = atoi(optarg);
		else if (opt == 'e')
			embedded = 1;
		else
			return 2;
	}
	if (optind == argc) {
		fprintf(stderr, "usage: svc-server [-d DELAY_US] [-t DRAIN_MS] [-e] ADDRESS...\n");
		return 2;
	}
	if ((err = idl_server_create(&svc_srv)) != 0)
		return svc_fail("create", err);
	if ((err = idl_server_add_subsystem_ctx(svc_srv, &bench_subsystem, svc_demux, &delay_us)) !=
	    0)
		return svc_fail("add bench", err);
	for (int i = optind; i < argc; i++)
		if ((err = idl_server_listen(svc_srv, argv[i])) != 0) {
			svc_fail(argv[i], err);
			idl_server_destroy(svc_srv);
			return 1;
		}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = svc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (embedded) {
		rc = svc_embedded();
	} else {
		printf("ready\n");
		fflush(stdout);
		rc = (err = idl_server_run(svc_srv)) != 0 ? svc_fail("run", err) : 0;
	}
	idl_server_destroy(svc_srv);
	return rc;
}
