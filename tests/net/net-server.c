/*
 * net-server.c - the server of the network tests: serves counter.defs on any number of
 * endpoints of any transports in one port set.
 *
 *     net-server [-c CONCURRENCY] [-f FILE] [ADDRESS...]
 *
 * FILE lists more addresses, one per line. Prints "ready N pid PID" (N endpoints) once
 * every address listens, serves until SIGTERM or SIGINT, then exits 0. A deferred reply
 * (defer) that idl_reply_send() reports as not sent is said on stderr ("net-server:
 * deferred reply: ...").
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl.h>

#include "counterServer.h"

static idl_server_t *net_srv;
static atomic_int net_count;
static atomic_int net_bumped;

kern_return_t
S_counter_count(mach_port_t server, int *n)
{
	(void)server;
	*n = atomic_fetch_add(&net_count, 1) + 1;
	return KERN_SUCCESS;
}

/* defer: the count is taken and the reply sent by a thread of its own, ms later. */
struct net_defer {
	idl_reply_t reply;
	int ms;
};

static void *
net_defer_main(void *arg)
{
	struct net_defer *d = arg;
	struct timespec ts = { d->ms / 1000, (long)(d->ms % 1000) * 1000000L };
	int err;

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
	err = S_counter_defer_send_reply(d->reply, KERN_SUCCESS,
					 atomic_fetch_add(&net_count, 1) + 1);
	if (err != KERN_SUCCESS)
		fprintf(stderr, "net-server: deferred reply: %s: %s\n", idl_errname(err),
			idl_errdetail());
	free(d);
	return NULL;
}

kern_return_t
S_counter_defer(mach_port_t server, idl_reply_t reply, int ms, int *n)
{
	struct net_defer *d;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	(void)server;
	if (ms < 0 || ms > 60000)
		return MIG_BAD_ARGUMENTS;
	if (reply == NULL) {
		/* No memory for the handle: answered at once. */
		*n = atomic_fetch_add(&net_count, 1) + 1;
		return KERN_SUCCESS;
	}
	if ((d = malloc(sizeof *d)) == NULL)
		return KERN_FAILURE;
	*d = (struct net_defer){ reply, ms };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, net_defer_main, d);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		free(d);
		return KERN_FAILURE; /* the stub discards the handle and replies so */
	}
	return MIG_NO_REPLY;
}

kern_return_t
S_counter_total(mach_port_t server, int *n)
{
	(void)server;
	*n = atomic_load(&net_count);
	return KERN_SUCCESS;
}

kern_return_t
S_counter_nap(mach_port_t server, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	(void)server;
	if (ms < 0 || ms > 60000)
		return MIG_BAD_ARGUMENTS;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
	return KERN_SUCCESS;
}

kern_return_t
S_counter_bump(mach_port_t server)
{
	(void)server;
	atomic_fetch_add(&net_bumped, 1);
	return KERN_SUCCESS;
}

kern_return_t
S_counter_bumped(mach_port_t server, int *n)
{
	(void)server;
	*n = atomic_load(&net_bumped);
	return KERN_SUCCESS;
}

kern_return_t
S_counter_null(mach_port_t server)
{
	(void)server;
	return KERN_SUCCESS;
}

static void
net_on_signal(int sig)
{
	(void)sig;
	idl_server_stop(net_srv);
}

static int
net_listen(const char *address)
{
	int err = idl_server_listen(net_srv, address);

	if (err != 0)
		fprintf(stderr, "net-server: %s: %s: %s\n", address, idl_errname(err),
			idl_errdetail());
	return err;
}

/* Listens on every address of the file, one per line; returns how many, or -1. */
static int
net_listen_file(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (f == NULL) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0')
			continue;
		if (net_listen(line) != 0) {
			fclose(f);
			return -1;
		}
		n++;
	}
	fclose(f);
	return n;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	const char *file = NULL;
	int opt, concurrency = 1, n = 0, err;

	while ((opt = getopt(argc, argv, "c:f:")) != -1) {
		if (opt == 'c')
			concurrency = atoi(optarg);
		else if (opt == 'f')
			file = optarg;
		else
			goto usage;
	}
	if (optind == argc && file == NULL)
		goto usage;
	if ((err = idl_server_create(&net_srv)) != 0 ||
	    (err = idl_server_add_subsystem(net_srv, &counter_subsystem, counter_server)) != 0 ||
	    (err = idl_server_set_concurrency(net_srv, (unsigned)concurrency)) != 0) {
		fprintf(stderr, "net-server: %s: %s\n", idl_errname(err), idl_errdetail());
		return 1;
	}
	for (int i = optind; i < argc; i++, n++)
		if (net_listen(argv[i]) != 0)
			goto fail;
	if (file != NULL) {
		int k = net_listen_file(file);

		if (k < 0)
			goto fail;
		n += k;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = net_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		goto fail;
	printf("ready %d pid %d\n", n, (int)getpid());
	fflush(stdout);
	if ((err = idl_server_run(net_srv)) != 0) {
		fprintf(stderr, "net-server: run: %s: %s\n", idl_errname(err), idl_errdetail());
		goto fail;
	}
	idl_server_destroy(net_srv);
	return 0;
fail:
	idl_server_destroy(net_srv);
	return 1;
usage:
	fprintf(stderr, "usage: net-server [-c CONCURRENCY] [-f FILE] [ADDRESS...]\n");
	return 2;
}
