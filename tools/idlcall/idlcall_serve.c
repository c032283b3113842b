/*
 * idlcall_serve.c - idlcall --serve: an interface served from its .defs file and a shared
 * library of implementation functions, with no generated code.
 *
 *     idlcall [-I DIR] [-D NAME[=VALUE]] [--trace] --serve FILE.defs ADDRESS LIB.so
 *             [--prefix P]
 *
 * The library holds what a program linked with idlc's server stubs would provide: one
 * function per routine, named with the server prefix, with the signature <sub>Server.h
 * declares. The descriptor built from the .defs file and the dynamic server
 * (<idl/idl_dynamic.h>) check and answer requests byte for byte as the stubs would, and call
 * the functions through libffi.
 */
#include <config.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>

#include "idlcall.h"

/* The server that SIGINT and SIGTERM stop, and SIGHUP has read its certificates again: a
 * signal handler reaches it only through a variable of the file's own. */
static idl_server_t *serve_srv;

/* SIGTERM (a service manager's stop) lets the calls in flight finish, for at most 10 s;
 * SIGINT stops at once; SIGHUP has the server read its certificates again. */
static void
serve_on_signal(int sig)
{
	if (sig == SIGHUP)
		idl_server_reload_async(serve_srv);
	else if (sig == SIGTERM)
		idl_server_drain(serve_srv, 10000);
	else
		idl_server_stop(serve_srv);
}

/* The line that says what is served, written at once so that it is one line even when
 * other output interleaves: "idlcall: serving bench on unix:b.sock (11 routines)". */
static int
serve_announce(const idl_dynamic_t *d, const char *address)
{
	const struct idl_subsystem *ss = idl_dynamic_subsystem(d);
	unsigned total = 0, unserved = 0;
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	if (f == NULL)
		return -1;
	for (uint32_t n = 0; n < ss->nroutines; n++) {
		const struct idl_routine_desc *rt = &ss->routines[n];

		if (rt->kind == IDL_RT_SKIP || rt->name == NULL)
			continue;
		total++;
		if (!idl_dynamic_served(d, n))
			fprintf(f, "%s%s", unserved++ > 0 ? ", " : "", rt->name);
	}
	if (fclose(f) != 0) {
		free(line);
		return -1;
	}
	if (unserved > 0)
		fprintf(stderr, "idlcall: serving %s on %s (%u routine%s, %u not served: %s)\n",
			ss->name, address, total, total == 1 ? "" : "s", unserved, line);
	else
		fprintf(stderr, "idlcall: serving %s on %s (%u routine%s)\n", ss->name, address,
			total, total == 1 ? "" : "s");
	free(line);
	return 0;
}

/* Prints a runtime error after what failed: its detail first, then the code by name. */
static int
serve_failed(const char *what, int err)
{
	fprintf(stderr, "idlcall: %s\n", idl_errmsg(err, what));
	return 1;
}

/* Serves until a signal stops the server; the handlers are installed once the server
 * exists, and restored before it is destroyed. */
static int
serve_run(idl_dynamic_t *d, const char *address)
{
	struct sigaction sa, old_int, old_term, old_hup;
	int err, rc = 1;

	if ((err = idl_server_create(&serve_srv)) != 0)
		return serve_failed("--serve", err);
	if ((err = idl_server_add_dynamic(serve_srv, d)) != 0 ||
	    (err = idl_server_listen(serve_srv, address)) != 0) {
		rc = serve_failed(address, err);
		goto out;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = serve_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, &old_int) != 0 || sigaction(SIGTERM, &sa, &old_term) != 0 ||
	    sigaction(SIGHUP, &sa, &old_hup) != 0) {
		perror("idlcall: sigaction");
		goto out;
	}
	if (serve_announce(d, address) != 0)
		fputs("idlcall: out of memory\n", stderr);
	else if ((err = idl_server_run(serve_srv)) != 0)
		rc = serve_failed(address, err);
	else
		rc = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
out:
	/* Closes the endpoints and removes the socket file the server created. */
	idl_server_destroy(serve_srv);
	serve_srv = NULL;
	return rc;
}

int
idlcall_serve(const struct idlcall_iface *ifc, const char *address, const char *lib,
	      const char *prefix)
{
	struct idlcall_lib l;
	idl_dynamic_t *d = NULL;
	char why[512];
	int err, rc;

	if (idlcall_lib_open(lib, 0, &l, why, sizeof why) != 0) {
		fprintf(stderr, "idlcall: %s\n", why);
		return 1;
	}
	if (prefix == NULL)
		prefix = ifc->serverprefix;
	if ((err = idl_dynamic_create(&ifc->ss, prefix, idlcall_lib_resolve, &l, &d)) != 0) {
		/* Most often a function the library lacks, which the detail names ("calc.add: no
		 * function calc_add"): what a link with the generated stubs would have refused as
		 * an undefined reference. */
		if (*idl_errdetail() != '\0')
			fprintf(stderr, "idlcall: %s: %s\n", lib, idl_errdetail());
		else
			serve_failed(lib, err);
		rc = 1;
	} else {
		rc = serve_run(d, address);
	}
	idl_dynamic_destroy(d);
	idlcall_lib_close(&l);
	return rc;
}
