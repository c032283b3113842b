/*
 * dyn_server.c - bench-server's twin that serves bench.defs through the dynamic server: no
 * generated server stub is called, the routines of examples/bench/bench_impl.c are found
 * with dlsym (the program is linked with -export-dynamic) and called through libffi.
 *
 *     dyn-server [-c CONCURRENCY] [-d FILE.defs [-I DIR]] ADDRESS
 *
 * Without -d (or $DYN_SERVER_DEFS) it serves the descriptor compiled into the bench stubs;
 * with it, the descriptor idlcall builds from the .defs file at run time. It behaves as
 * bench-server does (the same command line, "ready ADDRESS", SIGTERM and SIGINT stop it), so
 * the transport conformance suite runs against it through $IDL_BENCH_SERVER.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>

#include "bench_types.h"
#include "benchServer.h"
#include "idlcall.h"

static idl_server_t *dyn_srv;

static void
dyn_on_signal(int sig)
{
	idl_server_stop(dyn_srv);
}

static void
dyn_usage(void)
{
	fprintf(stderr, "usage: dyn-server [-c CONCURRENCY] [-d FILE.defs [-I DIR]] ADDRESS\n");
	exit(2);
}

static int
dyn_fail(const char *what, int err)
{
	const char *detail = idl_errdetail();

	fprintf(stderr, "dyn-server: %s: %s (%s)%s%s\n", what, idl_strerror(err), idl_errname(err),
		*detail ? ": " : "", detail);
	return 1;
}

int
main(int argc, char **argv)
{
	const char *defs = getenv("DYN_SERVER_DEFS");
	const char *cpp[2] = { "-I", "." };
	const struct idl_subsystem *ss = &bench_subsystem;
	const char *prefix = "S_bench_";
	struct idlcall_iface ifc;
	idl_dynamic_t *d = NULL;
	struct sigaction sa;
	unsigned long concurrency = 1;
	int opt, err, rc = 1;
	char *end;

	memset(&ifc, 0, sizeof ifc);
	while ((opt = getopt(argc, argv, "c:d:I:h")) != -1) {
		switch (opt) {
		case 'c':
			concurrency = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || concurrency > 1024)
				dyn_usage();
			break;
		case 'd':
			defs = optarg;
			break;
		case 'I':
			cpp[1] = optarg;
			break;
		default:
			dyn_usage();
		}
	}
	if (optind != argc - 1)
		dyn_usage();
	if (defs != NULL && *defs != '\0') {
		if (idlcall_load(defs, cpp, 2, &ifc) != 0)
			goto out;
		ss = &ifc.ss;
		prefix = ifc.serverprefix;
	}
	if ((err = idl_dynamic_create(ss, prefix, NULL, NULL, &d)) != 0) {
		rc = dyn_fail("dynamic interface", err);
		goto out;
	}
	if ((err = idl_server_create(&dyn_srv)) != 0) {
		rc = dyn_fail("create", err);
		goto out;
	}
	if ((err = idl_server_add_dynamic(dyn_srv, d)) != 0 ||
	    (err = idl_server_set_concurrency(dyn_srv, (unsigned)concurrency)) != 0 ||
	    (err = idl_server_listen(dyn_srv, argv[optind])) != 0) {
		rc = dyn_fail(argv[optind], err);
		goto out;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = dyn_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0) {
		perror("dyn-server: sigaction");
		goto out;
	}
	printf("ready %s\n", argv[optind]);
	if (fflush(stdout) != 0)
		goto out;
	if ((err = idl_server_run(dyn_srv)) != 0) {
		rc = dyn_fail("run", err);
		goto out;
	}
	rc = 0;
out:
	idl_server_destroy(dyn_srv);
	idl_dynamic_destroy(d);
	idlcall_unload(&ifc);
	return rc;
}
