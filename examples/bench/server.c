/*
 * server.c - bench-server: serves bench.defs on one address.
 *
 *     bench-server [-c CONCURRENCY] [-e] ADDRESS
 *
 * Prints "ready ADDRESS" on stdout once clients may connect, serves until SIGTERM or SIGINT,
 * then removes what it created and exits 0. The routines are in bench_impl.c. With -e the
 * server is embedded: this one thread serves it from a poll() loop (idl_server_fd and
 * idl_server_dispatch), and libidlrt creates no thread.
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

/* The server the signal handler stops; set once before the handlers are installed. */
static idl_server_t *bench_srv;

static void
bench_on_signal(int sig)
{
	idl_server_stop(bench_srv);
}

static void
bench_usage(void)
{
	fprintf(stderr, "usage: bench-server [-c CONCURRENCY] [-e] ADDRESS\n");
	exit(2);
}

static void
bench_fail(const char *what, const char *address, int err)
{
	/* What failed first: the step, then the runtime's detail (which names the address). */
	fprintf(stderr, "bench-server: %s: %s\n", what, idl_errmsg(err, address));
}

static int
bench_install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = bench_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0) {
		perror("bench-server: sigaction");
		return -1;
	}
	return 0;
}

/* The embedded server's loop: a poll() on the server's descriptor, as any event loop would
 * watch it, until a stop makes idl_server_dispatch() return IDL_ECLOSED. */
static int
bench_serve_embedded(const char *address)
{
	struct pollfd pf;
	int r;

	if ((pf.fd = idl_server_fd(bench_srv)) < 0) {
		bench_fail("idl_server_fd", address, pf.fd);
		return -1;
	}
	pf.events = POLLIN;
	for (;;) {
		if (poll(&pf, 1, -1) < 0 && errno != EINTR) {
			perror("bench-server: poll");
			return -1;
		}
		if ((r = idl_server_dispatch(bench_srv, 64)) == IDL_ECLOSED)
			return 0;
		if (r < 0) {
			bench_fail("idl_server_dispatch", address, r);
			return -1;
		}
	}
}

int
main(int argc, char **argv)
{
	unsigned long concurrency = 1;
	const char *address;
	char *end;
	int opt, err, embedded = 0;

	while ((opt = getopt(argc, argv, "c:eh")) != -1) {
		switch (opt) {
		case 'c':
			concurrency = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || concurrency > 1024) {
				fprintf(stderr, "bench-server: -c wants a number from 0 to 1024\n");
				return 2;
			}
			break;
		case 'e':
			embedded = 1;
			break;
		default:
			bench_usage();
		}
	}
	if (optind != argc - 1)
		bench_usage();
	address = argv[optind];

	if ((err = idl_server_create(&bench_srv)) != 0) {
		bench_fail("create", NULL, err);
		return 1;
	}
	if ((err = idl_server_add_subsystem(bench_srv, &bench_subsystem, bench_server)) != 0) {
		bench_fail("add subsystem bench", NULL, err);
		goto fail;
	}
	if ((err = idl_server_set_concurrency(bench_srv, (unsigned)concurrency)) != 0) {
		bench_fail("set concurrency", NULL, err);
		goto fail;
	}
	if ((err = idl_server_listen(bench_srv, address)) != 0) {
		bench_fail("listen", address, err);
		goto fail;
	}
	if (bench_install_handlers() != 0)
		goto fail;

	/* An embedded server starts here, before it says it is ready. */
	if (embedded && (err = idl_server_fd(bench_srv)) < 0) {
		bench_fail("idl_server_fd", address, err);
		goto fail;
	}
	/* The address accepts connections from here on (idl_server_listen's promise). */
	printf("ready %s\n", address);
	if (fflush(stdout) != 0) {
		perror("bench-server: stdout");
		goto fail;
	}

	if (embedded) {
		if (bench_serve_embedded(address) != 0)
			goto fail;
	} else if ((err = idl_server_run(bench_srv)) != 0) {
		bench_fail("run", address, err);
		goto fail;
	}
	idl_server_destroy(bench_srv);
	return 0;

fail:
	idl_server_destroy(bench_srv);
	return 1;
}
