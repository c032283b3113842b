/*
 * dyn_oolt_server.c - oolt-server's twin that serves tests/ool/oolt.defs through the dynamic
 * server: the routines of tests/ool/server.c, found with dlsym (the program is linked with
 * -export-dynamic) and called through libffi. Out-of-line data each way with dealloc, ports
 * in and out (polymorphic, arrays), countinout, msgseqno and a deferred reply all go through
 * the interpreter; only S_oolt_later_send_reply(), which the routine itself calls later, is
 * the generated one.
 *
 *     dyn-oolt-server ADDRESS
 *
 * By default it serves the descriptor idlc compiled into ooltServer.c (oolt_subsystem), which
 * alone must say what the stubs do with every argument; with $DYN_OOLT_DEFS set to oolt.defs,
 * the descriptor idlcall builds from it at run time.
 *
 * It behaves as oolt-server does, so the conformance suite's oolt cases run against it
 * through $IDL_OOLT_SERVER (tests/dynamic/conformance.sh).
 */
#include <idl/idl_dynamic.h>

#include "idlcall.h"

/* The routines and helpers of oolt-server, without its main(). */
int oolt_compiled_main(int argc, char **argv);
#define main oolt_compiled_main
#include "../ool/server.c"
#undef main

int
main(int argc, char **argv)
{
	const char *cpp[2] = { "-I", IDL_TOP_SRCDIR "/data/include" };
	const char *defs = getenv("DYN_OOLT_DEFS");
	const struct idl_subsystem *ss = &oolt_subsystem;
	const char *prefix = "S_oolt_";
	struct idlcall_iface ifc;
	idl_dynamic_t *d = NULL;
	int err, rc = 1;

	memset(&ifc, 0, sizeof ifc);
	if (argc != 2) {
		fprintf(stderr, "usage: dyn-oolt-server ADDRESS\n");
		return 2;
	}
	if (defs != NULL && defs[0] != '\0') {
		if (idlcall_load(defs, cpp, 2, &ifc) != 0)
			goto out;
		ss = &ifc.ss;
		prefix = ifc.serverprefix;
	}
	if ((err = idl_dynamic_create(ss, prefix, NULL, NULL, &d)) != 0 ||
	    (err = idl_server_create(&oolt_srv)) != 0 ||
	    (err = idl_server_add_dynamic(oolt_srv, d)) != 0 ||
	    (err = idl_server_set_concurrency(oolt_srv, 4)) != 0 ||
	    (err = idl_server_listen(oolt_srv, argv[1])) != 0) {
		fprintf(stderr, "dyn-oolt-server: %s: %s: %s\n", argv[1], idl_errname(err),
			idl_errdetail());
		goto out;
	}
	rc = oolt_run(argv[1]);
out:
	idl_server_destroy(oolt_srv);
	idl_dynamic_destroy(d);
	idlcall_unload(&ifc);
	return rc;
}
