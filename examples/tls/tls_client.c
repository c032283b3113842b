/*
 * tls_client.c - tls-client: calls whoami.defs over tls: and says who each side is.
 *
 *     tls-client [-c CERT -k KEY] [-a CA] [-n NAME] ADDRESS
 *
 * With options the client's identity and trust are a configuration object
 * (idl_port_open_config()); without them the IDL_TLS_* variables'. Prints the server's
 * identity as the handshake verified it (idl_port_peer_tls()), then "whoami: ..." (the
 * client as the server sees it) and "secret: ..." (the word, or the error when the server's
 * authorisation hook refuses this client). Exits 0 when whoami succeeded.
 */
#include <stdio.h>

#include <idl/idl.h>

#include "whoami_types.h"
#include "tls_opts.h"
#include "whoami.h"

int
main(int argc, char **argv)
{
	const char *name = NULL, *address;
	idl_config_t *cfg;
	struct idl_tls_peer *p;
	char out[512];
	idl_port_t port;
	int err;

	if ((err = tls_opts(argc, argv, "tls-client [-c CERT -k KEY] [-a CA] [-n NAME] ADDRESS",
			    'n', &name, &cfg, &address)) != 0)
		return err;
	/* The name the server's certificate must have, when it is not the address's host. */
	if (name != NULL && ((cfg == NULL && (err = idl_tls_config_create(&cfg)) != 0) ||
			     (err = idl_tls_config_set_name(cfg, name)) != 0))
		return tls_fail("tls-client", "configuration", err);
	err = idl_port_open_config(address, cfg, &port);
	idl_config_free(cfg);
	if (err != 0)
		return tls_fail("tls-client", address, err);
	if ((err = idl_port_peer_tls(port, &p)) != 0)
		return tls_fail("tls-client", "the server's identity", err);
	printf("server: cn=%s verified=%d sha256=%s", p->cn, p->verified, p->sha256_hex);
	for (unsigned i = 0; i < p->ndns; i++)
		printf(" dns=%s", p->dns[i]);
	printf(" %s %s\n", p->version == 0x0304 ? "TLSv1.3" : "TLSv1.2", p->alpn);
	idl_tls_peer_free(p);
	if ((err = whoami_whoami(port, out)) != 0)
		return tls_fail("tls-client", "whoami", err);
	printf("whoami: %s\n", out);
	if ((err = whoami_secret(port, out)) != 0)
		printf("secret: %s (%s)\n", idl_errname(err), idl_strerror(err));
	else
		printf("secret: %s\n", out);
	idl_port_close(port);
	return 0;
}
