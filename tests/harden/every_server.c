/*
 * every_server.c - serves tests/fuzz/every.defs for the hardening tests.
 *
 *     every-server [-c N] [-i once|all] [-l LIMIT=VALUE]... [-a deny=ROUTINE | -a uid=UID]
 *                  ADDRESS...
 *
 *   -c N       routines that may run at once (idl_server_set_concurrency)
 *   -i MODE    error injection (every_impl.h): each routine that receives out-of-line data
 *              or ports fails once, or always, after receiving them
 *   -l L=V     a limit by its name (idl_limit_name(): msg_size, inflight, connections, fds,
 *              handshake_ms, idle_ms)
 *   -a RULE    the authorisation hook: deny one routine by name, or allow one uid only
 *
 * Prints "ready" once every address listens, serves until SIGTERM or SIGINT, and exits 0
 * after a clean stop. The server's log lines go to stderr.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "everyServer.h"
#include "every_impl.h"

static idl_server_t *es_srv;
static const char *es_deny;
static long es_uid = -1;

static void
es_stop(int sig)
{
	(void)sig;
	idl_server_stop(es_srv);
}

static int
es_auth(void *ctx, const struct idl_cred *cred, const struct idl_subsystem *ss,
	const struct idl_routine_desc *rt)
{
	(void)ctx;
	(void)ss;
	if (es_deny != NULL && strcmp(rt->name, es_deny) == 0)
		return 1;
	if (es_uid >= 0 && (!cred->valid || (long)cred->uid != es_uid))
		return 1;
	return 0;
}

static int
es_limit(const char *arg)
{
	const char *eq = strchr(arg, '=');

	for (int i = 0; eq != NULL && i < IDL_LIMIT_COUNT; i++) {
		const char *name = idl_limit_name((enum idl_limit)i);

		if (strlen(name) == (size_t)(eq - arg) && strncmp(arg, name, strlen(name)) == 0)
			return idl_server_set_limit(es_srv, (enum idl_limit)i,
						    strtoull(eq + 1, NULL, 10));
	}
	fprintf(stderr, "every-server: unknown limit %s\n", arg);
	return 1;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	int opt, err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (idl_server_create(&es_srv) != 0 ||
	    idl_server_add_subsystem(es_srv, &every_subsystem, every_server) != 0)
		return 1;
	while ((opt = getopt(argc, argv, "c:i:l:a:")) != -1) {
		switch (opt) {
		case 'c':
			if (idl_server_set_concurrency(es_srv, (unsigned)atoi(optarg)) != 0)
				return 1;
			break;
		case 'i':
			ev_inject = strcmp(optarg, "all") == 0 ? 2 : 1;
			break;
		case 'l':
			if (es_limit(optarg) != 0)
				return 1;
			break;
		case 'a':
			if (strncmp(optarg, "deny=", 5) == 0)
				es_deny = optarg + 5;
			else if (strncmp(optarg, "uid=", 4) == 0)
				es_uid = atol(optarg + 4);
			else
				return 1;
			if (idl_server_set_auth(es_srv, es_auth, NULL) != 0)
				return 1;
			break;
		default:
			fprintf(stderr, "usage: every-server [-c N] [-i once|all] [-l L=V] "
					"[-a deny=R|uid=U] ADDRESS...\n");
			return 2;
		}
	}
	if (optind == argc)
		return 2;
	for (int i = optind; i < argc; i++) {
		if ((err = idl_server_listen(es_srv, argv[i])) != 0) {
			fprintf(stderr, "every-server: %s: %s\n", argv[i], idl_errdetail());
			return 1;
		}
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = es_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("ready\n");
	err = idl_server_run(es_srv);
	/* Replies still held are given up: a clean stop leaves nothing behind. */
	for (idl_reply_t r; (r = ev_held_take()) != NULL;)
		idl_reply_discard(r);
	idl_server_destroy(es_srv);
	return err == 0 ? 0 : 1;
}
