/*
 * inet.h - what the tcp: and udp: transports share: the HOST:PORT address syntax, name
 * resolution and socket set-up (their deadlines are sock_timeo.h's).
 *
 * Address syntax (the part after "tcp:" or "udp:"), docs/transports/tcp.md:
 *     HOST:PORT      a name or an IPv4 literal ("localhost", "10.0.0.1")
 *     [V6]:PORT      an IPv6 literal ("[::1]:7000", "[fe80::1%veth0]:7000")
 *     :PORT          loopback (127.0.0.1)
 *     *:PORT         every local address, IPv6 and IPv4 (servers only)
 * PORT is a number from 1 to 65535 or a service name.
 */
#ifndef IDL_TRANSPORTS_INET_H
#define IDL_TRANSPORTS_INET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "transport_kit.h"

/* The addresses a name resolves to that are tried in turn. */
#define INET_MAX_ADDRS 8

struct inet_addr {
	struct sockaddr_storage sa;
	socklen_t len;
};

struct inet_addrs {
	struct inet_addr a[INET_MAX_ADDRS];
	unsigned n;
	int wildcard; /* "*": bind every address */
};

/*
 * Resolves `rest` for `scheme` ("tcp" or "udp"). passive: for a server's bind ("*" allowed).
 * Returns 0, IDL_EADDRINVAL (syntax, port, a name that does not resolve) with a detail
 * naming the address, or IDL_ENOMEM.
 */
int idl__inet_resolve(const char *scheme, const char *rest, int passive, struct inet_addrs *out);

/* Writes "HOST:PORT" ("[V6]:PORT" for IPv6) of a socket address to buf. */
void idl__inet_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t n);

/* A socket of the address's family, close-on-exec; bound to it when passive, with
 * SO_REUSEADDR (TCP) and dual-stack for the IPv6 wildcard. Returns the descriptor, or a
 * negative error with a detail. */
int idl__inet_socket(const char *scheme, const struct inet_addr *a, int type, int passive,
		     int nonblock);

/* Whether a connected socket is connected to itself: on loopback, a connect to a port
 * nobody listens on may be given that very port as its own (a TCP simultaneous open, a
 * datagram socket that sends to itself). Such a socket would never reach a server and would
 * hold the server's port, so the transports refuse it as a connect nothing answered. */
int idl__inet_self(int fd);

/* Maps a system error of a connect or a listen to an idlkit error with a detail. */
int idl__inet_sysfail(int e, const char *scheme, const char *rest, const char *what);

#endif /* IDL_TRANSPORTS_INET_H */
