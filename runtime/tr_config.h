/*
 * tr_config.h - configuration objects as the runtime's core uses them (tr_config.c): a port holds
 * its configuration and hands it to its transport before each connect; an endpoint hands it
 * over before it listens (<idl/idl_transport.h>, ep_config and conn_config).
 */
#ifndef IDL_RUNTIME_TR_CONFIG_H
#define IDL_RUNTIME_TR_CONFIG_H

#include <idl/idl_transport.h>

/* Whether cfg may configure an address of transport tr (its scheme, and the op `ep` says:
 * ep_config or conn_config): 0, or IDL_EINVAL / IDL_ENOTSUP with a detail naming address. */
int idl__config_check(const struct idl_transport *tr, const struct idl_config *cfg,
		      const char *address, int ep);
/* Takes a hold on cfg (NULL allowed) for a port, which frees it with idl_config_free(). */
struct idl_config *idl__config_hold(struct idl_config *cfg);
/* Before a port's connect: conn_config with the port's configuration; 0 when it has none. */
int idl__config_conn(const struct idl_transport *tr, struct idl_config *cfg, void *conn);

/* client_port.c and server.c: idl_port_open() and idl_server_listen() with a configuration
 * already checked (idl__config_check()), or NULL. */
int idl__port_open_cfg(const char *address, struct idl_config *cfg, idl_port_t *portp);
int idl__srv_listen(idl_server_t *srv, const char *address, struct idl_config *cfg);

/* The server's log line for a connection its secure channel refused with err (IDL_ECERT,
 * IDL_ETLS, IDL_EINTEGRITY), the calling thread's detail saying why (server_request.c). */
struct srv_src;
void idl__srv_tls_log(struct srv_src *src, int err);

#endif /* IDL_RUNTIME_TR_CONFIG_H */
