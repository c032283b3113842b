/*
 * tls_server.c - tls-server: serves whoami.defs over tls: and authorises each routine by the
 * client's certificate.
 *
 *     tls-server [-c CERT -k KEY] [-a CA] [-s SAN] ADDRESS
 *
 * With -c and -k the server's identity is a configuration object made from those files
 * (idl_tls_config_*, idl_server_listen_config()); without them it is the IDL_TLS_*
 * variables', as every idlkit program's. whoami is for every client that passed the
 * handshake; secret only for a client whose certificate has SAN (a DNS name or a URI, the
 * SPIFFE ID spiffe://idlkit.test/client by default) and was verified: the authorisation hook
 * reads both with idl_request_peer_tls(). Prints "ready ADDRESS" once clients may connect,
 * serves until SIGTERM or SIGINT.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>

#include "whoami_types.h"
#include "tls_opts.h"
#include "whoamiServer.h"

static idl_server_t *tls_srv;

static void
tls_on_signal(int sig)
{
	(void)sig;
	idl_server_stop(tls_srv);
}

/* Whether the peer's certificate names `san` among its DNS names or URIs. */
static int
tls_has_san(const struct idl_tls_peer *p, const char *san)
{
	for (unsigned i = 0; i < p->ndns; i++)
		if (strcmp(p->dns[i], san) == 0)
			return 1;
	for (unsigned i = 0; i < p->nuris; i++)
		if (strcmp(p->uris[i], san) == 0)
			return 1;
	return 0;
}

/* The authorisation hook: secret needs a verified certificate with the SAN given. */
static int
tls_auth(void *ctx, const struct idl_cred *cred, const struct idl_subsystem *ss,
	 const struct idl_routine_desc *rt)
{
	struct idl_tls_peer *p;
	int deny;

	(void)cred;
	(void)ss;
	if (strcmp(rt->name, "secret") != 0)
		return 0;
	if (idl_request_peer_tls(&p) != 0)
		return 1;
	deny = !(p->verified && tls_has_san(p, ctx));
	idl_tls_peer_free(p);
	return deny;
}

kern_return_t
S_whoami_whoami(mach_port_t server, name_t name)
{
	struct idl_tls_peer *p;
	int n;

	(void)server;
	if (idl_request_peer_tls(&p) != 0)
		return KERN_FAILURE;
	n = snprintf(name, 512, "cn=%s verified=%d", p->has_cert ? p->cn : "-", p->verified);
	for (unsigned i = 0; i < p->ndns && n > 0 && n < 512; i++)
		n += snprintf(name + n, 512 - (size_t)n, " dns=%s", p->dns[i]);
	for (unsigned i = 0; i < p->nuris && n > 0 && n < 512; i++)
		n += snprintf(name + n, 512 - (size_t)n, " uri=%s", p->uris[i]);
	if (p->spiffe_id != NULL && n > 0 && n < 512)
		snprintf(name + n, 512 - (size_t)n, " spiffe=%s", p->spiffe_id);
	idl_tls_peer_free(p);
	return KERN_SUCCESS;
}

kern_return_t
S_whoami_secret(mach_port_t server, name_t word)
{
	(void)server;
	snprintf(word, 512, "swordfish");
	return KERN_SUCCESS;
}

int
main(int argc, char **argv)
{
	const char *san = "spiffe://idlkit.test/client", *address;
	idl_config_t *cfg;
	struct sigaction sa;
	int err;

	if ((err = tls_opts(argc, argv, "tls-server [-c CERT -k KEY] [-a CA] [-s SAN] ADDRESS", 's',
			    &san, &cfg, &address)) != 0)
		return err;
	if ((err = idl_server_create(&tls_srv)) != 0 ||
	    (err = idl_server_add_subsystem(tls_srv, &whoami_subsystem, whoami_server)) != 0 ||
	    (err = idl_server_set_auth(tls_srv, tls_auth, (void *)san)) != 0 ||
	    (err = idl_server_listen_config(tls_srv, address, cfg)) != 0)
		return tls_fail("tls-server", address, err);
	/* The endpoint holds what it needs of the configuration. */
	idl_config_free(cfg);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = tls_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready %s\n", address);
	fflush(stdout);
	if ((err = idl_server_run(tls_srv)) != 0)
		return tls_fail("tls-server", "run", err);
	idl_server_destroy(tls_srv);
	return 0;
}
