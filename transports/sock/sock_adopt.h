/*
 * sock_adopt.h - a socket the process was given rather than one it made (socket activation:
 * the ep_adopt op of <idl/idl_transport.h>, docs/deploy.md), checked against what the
 * transport's own listener would be. One copy for every transport that adopts one, because
 * the checks are the promise that an adopted endpoint is the endpoint the transport would
 * have made: unix: and shm:'s rendezvous (a listening AF_UNIX SOCK_SEQPACKET socket file,
 * owner-only), tcp: (a listening TCP socket), udp: (a bound UDP socket).
 */
#ifndef IDL_TRANSPORTS_SOCK_ADOPT_H
#define IDL_TRANSPORTS_SOCK_ADOPT_H

#include <stddef.h>

#include "sockfile.h"
#include "transport_kit.h"

/* What a transport needs of a passed socket. */
struct idl__sock_want {
	int family; /* AF_UNIX, or AF_INET for "AF_INET or AF_INET6" */
	int type; /* SOCK_SEQPACKET, SOCK_STREAM, SOCK_DGRAM */
	int protocol; /* IPPROTO_TCP, IPPROTO_UDP; 0 for AF_UNIX */
	int listening; /* 1: listen() was called on it (SO_ACCEPTCONN); 0: bound to a port */
	int nonblock; /* whether the transport's own descriptor is non-blocking */
	const char *needs; /* what it needs, in the words of a socket unit, for the detail */
};

/* Writes what descriptor fd is, for a detail: "a listening AF_UNIX SOCK_STREAM socket", "a
 * bound AF_INET SOCK_DGRAM socket", "a POSIX message queue", "a regular file" ... */
void idl__sock_describe(int fd, char *buf, size_t n);

/* Checks fd against w and gives it w's blocking mode: 0, IDL_EADDRINVAL naming what fd is
 * and what `scheme` needs, or a system error. */
int idl__sock_adopt(const char *scheme, int fd, const struct idl__sock_want *w);

/* A listening SOCK_SEQPACKET socket file (unix:, shm:'s rendezvous) around a passed fd:
 * checked as above, then by its name: an abstract or unnamed socket (no permission
 * protects it) is IDL_EADDRINVAL, a socket file whose mode lets group or others write
 * (connect) beyond opts->mode is IDL_EACCES. The file is never removed and the socket never
 * shut down (l->adopted); idl__sockfile_fini() closes fd. */
int idl__sockfile_adopt(struct idl__sockfile *l, const char *scheme, int fd,
			const struct idl_listen_opts *opts);

/* Whether a file of mode `mode` lets group or others write beyond `allowed` (0: 0600). */
int idl__sock_mode_wider(unsigned mode, unsigned allowed);

#endif /* IDL_TRANSPORTS_SOCK_ADOPT_H */
