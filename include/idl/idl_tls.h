/*
 * idl_tls.h - the tls: transport's configuration, and who the peer of a TLS connection is
 * (docs/transports/tls.md).
 *
 * An address "tls:HOST:PORT" carries tcp:'s frames inside TLS 1.3 with mutual
 * authentication. Without a configuration object it is configured by the environment
 * (IDL_TLS_CERT, IDL_TLS_KEY, IDL_TLS_CA, IDL_TLS_CRL, IDL_TLS_NAME, IDL_TLS_PIN,
 * IDL_TLS_MIN_VERSION, IDL_TLS_VERIFY), read each time a tls: address is opened or listened
 * on, so that a program speaks tls: by its address alone. A program with several identities
 * makes a configuration object for each and gives it to idl_port_open_config() or
 * idl_server_listen_config() (<idl/idl_port.h>, <idl/idl_server.h>).
 *
 * Secure by default: a client verifies the server's certificate chain (against IDL_TLS_CA,
 * else the system's trusted CAs) and its name (the address's host, or the name set); a
 * server with trusted CAs requires a client certificate and verifies its chain; only TLS
 * 1.3, and the ALPN protocol "idlkit/1" on both sides. Files are read when a port or an
 * endpoint first uses the configuration, and a key file that others than its owner (and its
 * group) may read is refused.
 */
#ifndef IDL_TLS_H
#define IDL_TLS_H

#include <idl/idl_port.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Configuration objects. Each setter checks its value's form and copies it (IDL_EINVAL with a
 * detail for a malformed one); the files are read when a port or an endpoint first uses the
 * object, and their errors are that open's or listen's. Once a port or an endpoint uses it, the
 * object does not change: a setter then returns IDL_EBUSY. Free with idl_config_free().
 */
/* An empty configuration: nothing set, nothing read from the environment. */
int idl_tls_config_create(idl_config_t **cfgp);
/* A configuration with what the IDL_TLS_* variables say now (docs/api.md, "Environment"):
 * what a tls: address opened without a configuration uses. */
int idl_tls_config_from_env(idl_config_t **cfgp);
/* This side's certificate chain (PEM, the leaf first) and its private key (PEM). A server
 * needs one; a client sends it when the server asks. */
int idl_tls_config_set_cert(idl_config_t *cfg, const char *chain_file, const char *key_file);
/* The trusted CAs: a PEM file, or a directory hashed as c_rehash makes it. On a server, it
 * also makes a client certificate required. */
int idl_tls_config_set_ca(idl_config_t *cfg, const char *file_or_dir);
/* Certificate revocation lists (PEM, one or more in the file), checked for the peer's
 * certificate. */
int idl_tls_config_set_crl(idl_config_t *cfg, const char *file);
/* The name a client requires of the server's certificate (a DNS name or an IP address),
 * instead of the address's host; also sent as SNI. */
int idl_tls_config_set_name(idl_config_t *cfg, const char *name);
/* The SHA-256 fingerprint the peer's certificate must have (64 hex digits, colons allowed),
 * in addition to what is verified. */
int idl_tls_config_set_pin(idl_config_t *cfg, const char *sha256);
/* The lowest TLS version accepted: "1.3" (the default) or "1.2". */
int idl_tls_config_set_min_version(idl_config_t *cfg, const char *version);
/* What a client verifies of the server: "name" (the default: the chain and the name),
 * "chain" (the chain, any name) or "none" (nothing: only a pin then authenticates). On a
 * server "none" asks no client certificate even with trusted CAs. */
int idl_tls_config_set_verify(idl_config_t *cfg, const char *mode);

/*
 * The peer of a TLS connection: what its handshake showed. One malloc()ed block (the struct
 * and every string it points to), the caller's: free it with idl_tls_peer_free().
 */
struct idl_tls_peer {
	/* 1 when the peer's certificate chain was verified against the trusted CAs (and the
	 * revocation lists and the pin, where set), and on a client the server's name too; 0
	 * when the peer sent no certificate or nothing was verified (IDL_TLS_VERIFY=none). */
	int verified;
	int has_cert; /* the peer presented a certificate: the fields below describe it */
	unsigned version; /* 0x0304: TLS 1.3; 0x0303: TLS 1.2 */
	const char *cipher; /* "TLS_AES_256_GCM_SHA384" ... */
	const char *alpn; /* the application protocol both agreed on: "idlkit/1" */
	const char *subject; /* the certificate's subject, one line (RFC 2253); "" without one */
	const char *cn; /* its common name; "" without one */
	const char *const *dns; /* its subject alternative DNS names */
	unsigned ndns;
	const char *const *uris; /* its subject alternative URIs */
	unsigned nuris;
	/* The SPIFFE ID: the URI when the certificate has exactly one URI name and it is a
	 * spiffe:// one; NULL otherwise. */
	const char *spiffe_id;
	unsigned char sha256[32]; /* the SHA-256 of the certificate (DER) */
	char sha256_hex[65]; /* the same in lower-case hex */
};

/* The peer of the request the calling thread serves (inside a routine, or inside the
 * authorisation hook, idl_server_set_auth()): 0 and *peerp, IDL_ENOTSUP when the request did
 * not come over TLS, IDL_EINVAL outside a request. */
int idl_request_peer_tls(struct idl_tls_peer **peerp);
/* The server of a client port (connecting it first if it has no connection): 0 and *peerp,
 * IDL_ENOTSUP when the port's transport is not TLS, or the connect's error. */
int idl_port_peer_tls(idl_port_t port, struct idl_tls_peer **peerp);
/* Frees what the two above returned; NULL is allowed. */
void idl_tls_peer_free(struct idl_tls_peer *peer);

#ifdef __cplusplus
}
#endif
#endif /* IDL_TLS_H */
