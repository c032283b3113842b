/*
 * svc_listen.c - socket activation (service.h): the sockets a service manager passed, and
 * an endpoint made around one of them.
 *
 * The manager (systemd, systemd-socket-activate) holds the listening sockets, starts the
 * service when the first client comes, and passes them as descriptors 3, 4, ... with
 * LISTEN_FDS (how many), LISTEN_FDNAMES (their names, FileDescriptorName=, separated by
 * ':') and LISTEN_PID (the process they are for: a child that inherited the variables is
 * not it). The variables are read once, at the first "systemd:" address, and then removed
 * from the environment so that the service's own children do not take the sockets for
 * theirs; every passed descriptor is made close-on-exec for the same reason. unsetenv() is
 * not thread-safe: it runs once, under a pthread_once, and a program must not read or write
 * its environment from other threads while its first systemd: listen runs - the first
 * listen normally comes at start-up, before any thread (docs/deploy.md).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/service.h"

/* A decimal number in [0, max] making up all of s: 0, or -1. */
static int
svc_number(const char *s, long long max, long long *v)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0' && *v <= max ? 0 : -1;
}

static int
svc_refuse(struct idl__svc_fds *out, const char *why)
{
	out->err = IDL_EADDRINVAL;
	snprintf(out->why, sizeof out->why, "%s", why);
	return 0;
}

/* Splits the names (one per descriptor, ':' between): 0, 1 when they do not match the
 * count (the set is refused), or IDL_ENOMEM. */
static int
svc_names(const char *names, struct idl__svc_fds *out)
{
	const char *p = names;
	int i;

	for (i = 0; i < out->n; i++) {
		const char *end = strchr(p, ':');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if ((end == NULL) != (i == out->n - 1) || len > IDL__SVC_NAME_MAX)
			break;
		if ((out->names[i] = strndup(p, len)) == NULL)
			return IDL_ENOMEM;
		p = end != NULL ? end + 1 : p + len;
	}
	if (i == out->n)
		return 0;
	/* How many the variable names, for the detail. */
	i = 1;
	for (p = names; *p != '\0'; p++)
		i += *p == ':';
	snprintf(out->why, sizeof out->why,
		 "LISTEN_FDNAMES names %d socket%s (or one over %d bytes), LISTEN_FDS passes %d: "
		 "the passed sockets are refused",
		 i, i == 1 ? "" : "s", IDL__SVC_NAME_MAX, out->n);
	out->err = IDL_EADDRINVAL;
	return 1;
}

int
idl__svc_fds_parse(const char *pid, const char *fds, const char *names, pid_t self,
		   struct idl__svc_fds *out)
{
	long long p, n;
	int err;

	memset(out, 0, sizeof *out);
	if (fds == NULL)
		return svc_refuse(out, "no socket was passed (LISTEN_FDS is not set: the "
				       "process was not started by socket activation)");
	if (pid == NULL || svc_number(pid, INT_MAX, &p) != 0) {
		snprintf(out->why, sizeof out->why,
			 "LISTEN_PID is %s%s%s: the passed sockets are not taken", pid ? "\"" : "",
			 pid ? pid : "not set", pid ? "\"" : "");
		out->err = IDL_EADDRINVAL;
		return 0;
	}
	if ((pid_t)p != self) {
		/* An ancestor's sockets, which this process inherited with the variables. */
		snprintf(out->why, sizeof out->why,
			 "LISTEN_PID is %lld, this process is %ld: the sockets were passed to "
			 "another process",
			 p, (long)self);
		out->err = IDL_EADDRINVAL;
		return 0;
	}
	if (svc_number(fds, IDL__SVC_FDS_MAX, &n) != 0) {
		snprintf(out->why, sizeof out->why,
			 "LISTEN_FDS is \"%.32s\", not a count from 0 to %d: the passed sockets "
			 "are refused",
			 fds, IDL__SVC_FDS_MAX);
		out->err = IDL_EADDRINVAL;
		return 0;
	}
	out->n = (int)n;
	if (n == 0)
		return 0;
	if ((out->names = calloc((size_t)n, sizeof *out->names)) == NULL)
		return IDL_ENOMEM;
	if (names != NULL && (err = svc_names(names, out)) != 0)
		return err == 1 ? 0 : err;
	for (int i = 0; i < out->n; i++)
		if (out->names[i] == NULL && (out->names[i] = strdup("unknown")) == NULL)
			return IDL_ENOMEM;
	return 0;
}

void
idl__svc_fds_free(struct idl__svc_fds *f)
{
	if (f->names != NULL)
		for (int i = 0; i < f->n; i++)
			free(f->names[i]);
	free(f->names);
	f->names = NULL;
}

static struct idl__svc_fds svc_fds;
static pthread_once_t svc_fds_once = PTHREAD_ONCE_INIT;

static void
svc_fds_read(void)
{
	int err = idl__svc_fds_parse(getenv("LISTEN_PID"), getenv("LISTEN_FDS"),
				     getenv("LISTEN_FDNAMES"), getpid(), &svc_fds);

	if (err != 0) {
		idl__svc_fds_free(&svc_fds);
		svc_fds.n = 0;
		svc_refuse(&svc_fds, "out of memory reading LISTEN_FDNAMES");
	}
	/* The sockets are this process's alone: a child started later must neither see the
	 * variables (it would take the sockets for its own) nor inherit the descriptors. */
	for (int i = 0; i < svc_fds.n; i++) {
		int fl = fcntl(IDL__SVC_FD_START + i, F_GETFD);

		if (fl >= 0)
			(void)fcntl(IDL__SVC_FD_START + i, F_SETFD, fl | FD_CLOEXEC);
	}
	if (getenv("LISTEN_FDS") != NULL || getenv("LISTEN_PID") != NULL) {
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
	}
}

const struct idl__svc_fds *
idl__svc_fds(void)
{
	pthread_once(&svc_fds_once, svc_fds_read);
	return &svc_fds;
}

/* The names passed, for a detail: "api, admin". */
static void
svc_names_list(const struct idl__svc_fds *f, char *buf, size_t n)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < f->n && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s", i > 0 ? ", " : "", f->names[i]);
}

int
idl__svc_adopt(const struct idl_transport *tr, void *ep, const char *name,
	       const struct idl_listen_opts *opts, struct idl_config *cfg, const char *address)
{
	int (*adopt)(void *, int, const struct idl_listen_opts *) = IDL__TR_OP(tr, ep_adopt);
	const struct idl__svc_fds *f = idl__svc_fds();
	char first[256] = "", list[128];
	int err = 0, tried = 0;

	if (adopt == NULL)
		return idl__fail(IDL_ENOTSUP,
				 "%s: the %s: transport cannot adopt a socket the service manager "
				 "passed",
				 address, tr->scheme);
	if (f->err != 0)
		return idl__fail(f->err, "%s: %s", address, f->why);
	for (int i = 0; i < f->n; i++) {
		int fd;

		if (strcmp(f->names[i], name) != 0)
			continue;
		tried++;
		/* A duplicate, so that the passed descriptor stays for a server made later. */
		if ((fd = fcntl(IDL__SVC_FD_START + i, F_DUPFD_CLOEXEC, IDL__SVC_FD_START)) < 0)
			return idl__fail(IDL_ESYSERR(errno), "%s: descriptor %d: %s", address,
					 IDL__SVC_FD_START + i, strerror(errno));
		idl__clear_detail();
		if ((err = adopt(ep, fd, opts)) == 0)
			return 0;
		/* Several sockets may have one name (systemd names every socket of a unit
		 * after the unit): the next may be this transport's. The first refusal is
		 * the one told, unless a later one is about more than the socket's kind. */
		if (first[0] == '\0' || err != IDL_EADDRINVAL)
			snprintf(first, sizeof first, "descriptor %d: %s", IDL__SVC_FD_START + i,
				 idl_errdetail()[0] != '\0' ? idl_errdetail() : idl_strerror(err));
		tr->ep_fini(ep);
		memset(ep, 0, tr->ep_size);
		if (err != IDL_EADDRINVAL)
			break;
		/* The next try's state as fresh as the first's. */
		if (cfg != NULL && (err = IDL__TR_OP(tr, ep_config)(ep, cfg)) != 0)
			return err;
	}
	if (tried > 0)
		return idl__fail(err, "%s: %s", address, first);
	if (f->n == 0)
		return idl__fail(IDL_EADDRINVAL, "%s: %s", address,
				 f->why[0] != '\0' ? f->why : "LISTEN_FDS passes no socket");
	svc_names_list(f, list, sizeof list);
	return idl__fail(IDL_EADDRINVAL, "%s: no socket named \"%s\" was passed (passed: %s)",
			 address, name, list);
}
