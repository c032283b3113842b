/*
 * service.h - a process under a service manager (docs/deploy.md), in the manager's own
 * protocols, which libidlrt speaks itself rather than through libsystemd:
 *
 *   - socket activation (svc_listen.c): the sockets the manager passed, descriptors 3 on,
 *     named by LISTEN_FDNAMES, for this process if LISTEN_PID says so; an address
 *     "SCHEME:systemd:NAME" adopts the one of that name (the ep_adopt op);
 *   - the notify protocol (svc_notify.c): one datagram of "KEY=VALUE" lines to the socket
 *     NOTIFY_SOCKET names, saying READY=1, STOPPING=1, STATUS=... and, at half of
 *     WATCHDOG_USEC, WATCHDOG=1.
 *
 * Both read the environment once per process. Without the variables nothing of this runs:
 * no descriptor, no timer, no system call.
 */
#ifndef IDL_RUNTIME_SERVICE_H
#define IDL_RUNTIME_SERVICE_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "ool/ool.h"

/* What follows the scheme in the address of a passed socket: "unix:systemd:NAME". */
#define IDL__SVC_PREFIX "systemd:"
#define IDL__SVC_PREFIX_LEN 8
/* The first descriptor a manager passes (SD_LISTEN_FDS_START). */
#define IDL__SVC_FD_START 3
/* The most descriptors taken from LISTEN_FDS: a larger count is refused as malformed. */
#define IDL__SVC_FDS_MAX 4096
/* systemd's limit on a descriptor's name (FileDescriptorName=). */
#define IDL__SVC_NAME_MAX 255

/* The sockets passed to this process, as the environment says them. */
struct idl__svc_fds {
	int n; /* descriptors IDL__SVC_FD_START .. + n - 1 */
	char **names; /* n names: LISTEN_FDNAMES's, or "unknown" (systemd's) without it */
	int err; /* 0, or why every systemd: address is refused (IDL_EADDRINVAL) */
	char why[192]; /* with err: the detail; without: why n is 0, if it is */
};

/* Reads the three variables' values (each NULL when unset) for process `self`: the pid
 * must be self's, else nothing was passed to it (n 0, why says so); a malformed count, or
 * names that are not one per descriptor, refuse the whole set (err, why). Returns 0, or
 * IDL_ENOMEM. Free with idl__svc_fds_free(). */
int idl__svc_fds_parse(const char *pid, const char *fds, const char *names, pid_t self,
		       struct idl__svc_fds *out);
void idl__svc_fds_free(struct idl__svc_fds *f);

/* The process's passed sockets, read once (the first call; later ones get the same): the
 * variables are then removed from the environment, so that children do not inherit them,
 * and every passed descriptor is made close-on-exec. */
const struct idl__svc_fds *idl__svc_fds(void);

/* Makes the fresh endpoint state `ep` of transport tr (configured with cfg, when not NULL)
 * adopt the passed socket `name` (address: the whole address, for details): the first
 * descriptor of that name the transport's ep_adopt takes, as a close-on-exec duplicate.
 * Between two tries the state is finalised, zeroed and configured again. IDL_ENOTSUP for a
 * transport without ep_adopt, IDL_EADDRINVAL when no such socket was passed, or the
 * transport's refusal. */
int idl__svc_adopt(const struct idl_transport *tr, void *ep, const char *name,
		   const struct idl_listen_opts *opts, struct idl_config *cfg, const char *address);

/* The manager's notify socket and watchdog, as the environment says them. */
struct idl__svc_notify {
	int on; /* NOTIFY_SOCKET names a socket */
	struct sockaddr_un addr;
	socklen_t addrlen;
	int64_t watchdog_ns; /* WATCHDOG_USEC for this process, in ns; 0: no watchdog */
};

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID's values (NULL when unset) for
 * process `self`: a path or an abstract name ("@x"); the watchdog only when its pid is
 * self's or unset and its period is a positive number of microseconds. */
void idl__svc_notify_parse(const char *sock, const char *usec, const char *wpid, pid_t self,
			   struct idl__svc_notify *out);

/* The process's, read once. */
const struct idl__svc_notify *idl__svc_notify(void);

/* Sends `text` (KEY=VALUE lines) to the notify socket in one datagram, without waiting:
 * 0, or the error (a full socket drops it; the watchdog says it again next period). */
int idl__svc_send(const struct idl__svc_notify *n, const char *text);

#endif /* IDL_RUNTIME_SERVICE_H */
