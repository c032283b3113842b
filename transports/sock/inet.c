/*
 * inet.c - the address syntax, resolution, sockets and timeouts that tcp: and udp: share
 * (inet.h says what each function promises).
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "inet.h"

#define INET_HOST_MAX 256
#define INET_PORT_MAX 32

/* Splits HOST:PORT or [V6]:PORT into host and port. */
static int
inet_split(const char *scheme, const char *rest, char *host, char *port)
{
	const char *colon, *h = rest;
	size_t hl;

	if (rest[0] == '[') {
		const char *close = strchr(rest, ']');

		if (close == NULL || close[1] != ':')
			return idl__fail(IDL_EADDRINVAL, "%s:%s: expected [IPV6]:PORT", scheme,
					 rest);
		h = rest + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(rest, ':');
		if (colon == NULL)
			return idl__fail(IDL_EADDRINVAL, "%s:%s: expected HOST:PORT", scheme, rest);
		hl = (size_t)(colon - rest);
		if (memchr(rest, ':', hl) != NULL)
			return idl__fail(IDL_EADDRINVAL,
					 "%s:%s: an IPv6 address goes in "
					 "brackets: [ADDRESS]:PORT",
					 scheme, rest);
	}
	if (hl >= INET_HOST_MAX || strlen(colon + 1) >= INET_PORT_MAX)
		return idl__fail(IDL_EADDRINVAL, "%s:%s: host or port too long", scheme, rest);
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, colon + 1, strlen(colon + 1) + 1);
	if (port[0] == '\0')
		return idl__fail(IDL_EADDRINVAL, "%s:%s: no port", scheme, rest);
	if (strspn(port, "0123456789") == strlen(port)) {
		long v = strtol(port, NULL, 10);

		if (strlen(port) > 5 || v < 1 || v > 65535)
			return idl__fail(IDL_EADDRINVAL, "%s:%s: port must be 1 to 65535", scheme,
					 rest);
	}
	return 0;
}

int
idl__inet_resolve(const char *scheme, const char *rest, int passive, struct inet_addrs *out)
{
	char host[INET_HOST_MAX], port[INET_PORT_MAX];
	struct addrinfo hints, *res = NULL, *ai;
	const char *node;
	int err, r;

	memset(out, 0, sizeof *out);
	if ((err = inet_split(scheme, rest, host, port)) != 0)
		return err;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = strcmp(scheme, "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM;
	hints.ai_family = AF_UNSPEC;
	/* No AI_ADDRCONFIG: it hides loopback addresses on a host whose only interface is
	 * lo (a fresh network namespace), where they are exactly what is wanted. */
	if (strcmp(host, "*") == 0) {
		if (!passive)
			return idl__fail(IDL_EADDRINVAL,
					 "%s:%s: '*' (every address) is for "
					 "servers; a client names one host",
					 scheme, rest);
		/* One dual-stack IPv6 socket takes IPv4 too; IPv4 alone where IPv6 is off. */
		out->wildcard = 1;
		hints.ai_flags = AI_PASSIVE;
		node = NULL;
	} else if (host[0] == '\0') {
		node = "127.0.0.1";
		hints.ai_flags = AI_NUMERICHOST;
	} else {
		node = host;
	}
	r = getaddrinfo(node, port, &hints, &res);
	if (r != 0) {
		/* The detail says what failed, the lookup of which name, before the resolver's
		 * words for why (a name that does not exist, or no answer from DNS). A numeric
		 * port was checked above, so only a service name can fail beside the host. */
		const char *why = r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r);

		if (node == NULL)
			return idl__fail(IDL_EADDRINVAL, "%s:%s: cannot resolve service '%s': %s",
					 scheme, rest, port, why);
		if (strspn(port, "0123456789") == strlen(port))
			return idl__fail(IDL_EADDRINVAL, "%s:%s: cannot resolve host '%s': %s",
					 scheme, rest, node, why);
		return idl__fail(IDL_EADDRINVAL,
				 "%s:%s: cannot resolve host '%s' with service '%s': %s", scheme,
				 rest, node, port, why);
	}
	for (ai = res; ai != NULL && out->n < INET_MAX_ADDRS; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof out->a[0].sa)
			continue;
		memcpy(&out->a[out->n].sa, ai->ai_addr, ai->ai_addrlen);
		out->a[out->n].len = ai->ai_addrlen;
		out->n++;
	}
	freeaddrinfo(res);
	if (out->wildcard && out->n > 1 && out->a[0].sa.ss_family != AF_INET6) {
		/* Try the dual-stack IPv6 wildcard first. */
		for (unsigned i = 1; i < out->n; i++) {
			if (out->a[i].sa.ss_family == AF_INET6) {
				struct inet_addr t = out->a[0];

				out->a[0] = out->a[i];
				out->a[i] = t;
				break;
			}
		}
	}
	if (out->n == 0)
		return idl__fail(IDL_EADDRINVAL, "%s:%s: no IPv4 or IPv6 address", scheme, rest);
	return 0;
}

void
idl__inet_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t n)
{
	char h[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof h);
		snprintf(buf, n, "%s:%u", h, (unsigned)ntohs(s4->sin_port));
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof h);
		snprintf(buf, n, "[%s]:%u", h, (unsigned)ntohs(s6->sin6_port));
	} else {
		snprintf(buf, n, "(family %d)", (int)sa->sa_family);
	}
}

int
idl__inet_sysfail(int e, const char *scheme, const char *rest, const char *what)
{
	switch (e) {
	case ECONNREFUSED:
		return idl__fail(IDL_ECONNREFUSED, "%s:%s: %s: %s", scheme, rest, what,
				 strerror(e));
	case EADDRINUSE:
		return idl__fail(IDL_EADDRINUSE, "%s:%s: %s: %s", scheme, rest, what, strerror(e));
	case EACCES:
	case EPERM:
		return idl__fail(IDL_EACCES, "%s:%s: %s: %s", scheme, rest, what, strerror(e));
	case EADDRNOTAVAIL:
		return idl__fail(IDL_EADDRINVAL, "%s:%s: %s: %s", scheme, rest, what, strerror(e));
	case ETIMEDOUT:
		return idl__fail(IDL_ETIMEDOUT, "%s:%s: %s: %s", scheme, rest, what, strerror(e));
	default:
		return idl__fail(IDL_ESYSERR(e), "%s:%s: %s: %s", scheme, rest, what, strerror(e));
	}
}

int
idl__inet_socket(const char *scheme, const struct inet_addr *a, int type, int passive, int nonblock)
{
	char name[INET6_ADDRSTRLEN + 16];
	int fd, one = 1, zero = 0, e;

	fd = socket(a->sa.ss_family, type | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return IDL_ESYSERR(errno);
	if (!passive)
		return fd;
	idl__inet_format((const struct sockaddr *)&a->sa, a->len, name, sizeof name);
	/* A restarted server takes its port back at once, not after TIME_WAIT; two live
	 * servers still cannot share it (that needs SO_REUSEPORT, never set). */
	if (type == SOCK_STREAM && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
		goto fail;
	if (a->sa.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&a->sa;
		/* The wildcard takes both families; a specific IPv6 address only its own. */
		int v6only = IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ? zero : one;

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) != 0)
			goto fail;
	}
	if (bind(fd, (const struct sockaddr *)&a->sa, a->len) != 0)
		goto fail;
	return fd;
fail:
	e = errno;
	close(fd);
	return idl__inet_sysfail(e, scheme, name, "bind");
}

int
idl__inet_self(int fd)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof me, pl = sizeof peer;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) != 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 || ml != pl ||
	    me.ss_family != peer.ss_family)
		return 0;
	if (me.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&me;
		const struct sockaddr_in *b = (const struct sockaddr_in *)&peer;

		return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
	}
	if (me.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&me;
		const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)&peer;

		return a->sin6_port == b->sin6_port &&
		       memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
	}
	return 0;
}
