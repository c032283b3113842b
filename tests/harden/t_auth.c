/*
 * t_auth.c - access control: the authorisation hook (a denied call gets IDL_EACCES and
 * its routine never runs), what each transport tells the server of its caller, network
 * servers bound to loopback, abstract UNIX sockets refused.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harden.h"

/* Denying a routine by name: the routine never runs, others do, and one-way messages are
 * checked too (they get no reply, and do not run). */
static void
test_deny(void)
{
	const char *deny_count[] = { "-a", "deny=count", NULL };
	const char *deny_notify[] = { "-a", "deny=notify", NULL };
	int counted = -1, held, last, n = 0;
	struct hd_srv s;
	char addr[256];
	idl_port_t p;

	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, deny_count, 0) == 0);
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	for (int i = 0; i < 3; i++)
		HD_CHECK_KR(every_count(p, &n), IDL_EACCES);
	for (int i = 0; i < 5; i++)
		HD_CHECK_KR(every_notify(p, i), 0);
	HD_CHECK_KR(every_stats(p, &counted, &held, &last), 0);
	CU_ASSERT_EQUAL(counted, 5); /* the five notifications, no count */
	CU_ASSERT(hd_log_has(&s, "every.count denied by the authorisation hook", 2000));
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);

	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, deny_notify, 0) == 0);
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	for (int i = 0; i < 5; i++)
		HD_CHECK_KR(every_notify(p, i), 0);
	HD_CHECK_KR(every_count(p, &n), 0);
	CU_ASSERT_EQUAL(n, 1); /* no notification ran */
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

/* Allowing one uid: the hook sees the kernel's uid of the caller. */
static void
test_uid(void)
{
	char other[32], mine[32], addr[256];
	const char *deny[] = { "-a", other, NULL };
	const char *allow[] = { "-a", mine, NULL };
	struct hd_srv s;
	idl_port_t p;

	snprintf(other, sizeof other, "uid=%u", (unsigned)getuid() + 1);
	snprintf(mine, sizeof mine, "uid=%u", (unsigned)getuid());
	for (int k = 0; k < 2; k++) {
		const char *scheme = k == 0 ? "unix" : "shm";

		if (hd_transport(scheme) == NULL)
			continue;
		CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
		CU_ASSERT_FATAL(hd_start(&s, addr, deny, 0) == 0);
		p = hd_open(addr, 3000);
		CU_ASSERT_FATAL(p != NULL);
		HD_CHECK_KR(every_null(p), IDL_EACCES);
		idl_port_close(p);
		CU_ASSERT_EQUAL(hd_stop(&s), 0);
		CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
		CU_ASSERT_FATAL(hd_start(&s, addr, allow, 0) == 0);
		p = hd_open(addr, 3000);
		CU_ASSERT_FATAL(p != NULL);
		HD_CHECK_KR(every_null(p), 0);
		idl_port_close(p);
		CU_ASSERT_EQUAL(hd_stop(&s), 0);
	}
}

/* What idl_request_cred() tells a routine, on each transport. */
static void
test_creds(void)
{
	const char *schemes[8];
	size_t n = hd_schemes(schemes, 8);

	for (size_t i = 0; i < n; i++) {
		int valid = -1, uid = -1, pid = -1;
		char addr[256], peer[96];
		struct hd_srv s;
		idl_port_t p;

		CU_ASSERT_FATAL(hd_address(schemes[i], addr, sizeof addr) == 0);
		CU_ASSERT_FATAL(hd_start(&s, addr, NULL, 0) == 0);
		p = hd_open(addr, 3000);
		CU_ASSERT_FATAL(p != NULL);
		memset(peer, 0, sizeof peer);
		HD_CHECK_KR(every_whoami(p, &valid, &uid, &pid, peer), 0);
		fprintf(stderr, "harden: creds: %s: valid %d uid %d pid %d addr \"%s\"\n",
			schemes[i], valid, uid, pid, peer);
		if (strcmp(schemes[i], "unix") == 0 || strcmp(schemes[i], "shm") == 0) {
			CU_ASSERT_EQUAL(valid, 1);
			CU_ASSERT_EQUAL(uid, (int)getuid());
			CU_ASSERT_EQUAL(pid, (int)getpid());
			CU_ASSERT_STRING_EQUAL(peer, "");
		} else if (strcmp(schemes[i], "port") == 0) {
			/* The queues' owner; the pid only once verified (docs/transports/port.md).
			 */
			CU_ASSERT_EQUAL(valid, 1);
			CU_ASSERT_EQUAL(uid, (int)getuid());
			CU_ASSERT(pid == (int)getpid() || pid == 0);
		} else if (strcmp(schemes[i], "udp") == 0 || strcmp(schemes[i], "tcp") == 0 ||
			   strcmp(schemes[i], "tls") == 0) {
			/* The peer's address, nothing of its identity (tls:'s certificate is
			 * idl_request_peer_tls()'s, tests/tls/). */
			char want[32];

			snprintf(want, sizeof want, "%s:127.0.0.1:", schemes[i]);
			CU_ASSERT_EQUAL(valid, 0);
			CU_ASSERT(strncmp(peer, want, strlen(want)) == 0);
		} else {
			CU_FAIL("a transport this test does not know");
		}
		idl_port_close(p);
		CU_ASSERT_EQUAL(hd_stop(&s), 0);
	}
}

/* Whether /proc/net/<proto> lists a socket bound to 127.0.0.1:port (state: any). */
static int
hd_bound_loopback(const char *proto, int port)
{
	char path[64], line[512], want[32];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/net/%s", proto);
	snprintf(want, sizeof want, "0100007F:%04X", port);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		char local[64];

		if (sscanf(line, "%*d: %63s", local) == 1 && strcmp(local, want) == 0)
			found = 1;
	}
	fclose(f);
	return found;
}

/* "tcp::PORT" and "udp::PORT" bind loopback; abstract UNIX names are refused. */
static void
test_binding(void)
{
	idl_server_t *srv;
	idl_port_t p = NULL;
	char addr[256];

	CU_ASSERT_FATAL(idl_server_create(&srv) == 0);
	for (int k = 0; k < 2; k++) {
		const char *scheme = k == 0 ? "tcp" : "udp";
		int port;

		if (hd_transport(scheme) == NULL)
			continue;
		CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
		port = atoi(strrchr(addr, ':') + 1);
		snprintf(addr, sizeof addr, "%s::%d", scheme, port);
		HD_CHECK_KR(idl_server_listen(srv, addr), 0);
		CU_ASSERT(hd_bound_loopback(scheme, port));
	}
	HD_CHECK_KR(idl_server_listen(srv, "unix:@idlkit-harden"), IDL_EADDRINVAL);
	HD_CHECK_KR(idl_port_open("unix:@idlkit-harden", &p), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NULL(p);
	if (hd_transport("shm") != NULL)
		HD_CHECK_KR(idl_server_listen(srv, "shm:@idlkit-harden"), IDL_EADDRINVAL);
	idl_server_destroy(srv);
}

/* The hook's registration rules. */
static int
hd_allow_all(void *ctx, const struct idl_cred *cred, const struct idl_subsystem *ss,
	     const struct idl_routine_desc *rt)
{
	(void)ctx;
	(void)cred;
	(void)ss;
	(void)rt;
	return 0;
}

static void
test_auth_api(void)
{
	idl_server_t *srv;
	struct idl_cred c;

	CU_ASSERT_FATAL(idl_server_create(&srv) == 0);
	CU_ASSERT_EQUAL(idl_server_set_auth(NULL, hd_allow_all, NULL), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_server_set_auth(srv, hd_allow_all, NULL), 0);
	CU_ASSERT_EQUAL(idl_server_set_auth(srv, NULL, NULL), 0);
	CU_ASSERT_EQUAL(idl_server_set_log(srv, NULL, NULL), 0);
	/* Outside a request there is no caller. */
	CU_ASSERT_EQUAL(idl_request_cred(&c), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_request_cred(NULL), IDL_EINVAL);
	CU_ASSERT_PTR_NULL(idl_request_reply());
	idl_server_destroy(srv);
}

CU_TestInfo hd_auth_tests[] = {
	{ "api", test_auth_api }, { "deny", test_deny },       { "uid", test_uid },
	{ "creds", test_creds },  { "binding", test_binding }, CU_TEST_INFO_NULL,
};
