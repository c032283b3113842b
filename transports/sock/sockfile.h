/*
 * sockfile.h - UNIX socket files, as unix: and shm:'s rendezvous both use them: the address
 * checks, a listener that is created owner-only and replaces only a dead server's file, the
 * connect loop with its errors, and the peer's credentials. One copy, because these rules
 * (no abstract names, no window with a wider mode, never unlink another's file) are the
 * security of both transports.
 */
#ifndef IDL_TRANSPORTS_SOCKFILE_H
#define IDL_TRANSPORTS_SOCKFILE_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "transport_kit.h"

/* A listening socket file. The state starts zeroed; the owner embeds it in its endpoint. */
struct idl__sockfile {
	int fd;
	int open; /* fd is ours to close (0 is a valid descriptor) */
	int created; /* we bound the file at path and may unlink it */
	int adopted; /* passed to the process (sock_adopt.h): never shut down, never unlinked */
	dev_t dev; /* the file we created, so that we never remove another's */
	ino_t ino;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* Fills *sa from `rest` ("scheme:REST" without its scheme). Refuses abstract names ("@x":
 * they have no permission checks) and paths too long, with IDL_EADDRINVAL. */
int idl__sockfile_addr(const char *scheme, const char *rest, struct sockaddr_un *sa);

/* Creates, binds and listens: SOCK_SEQPACKET, non-blocking, close-on-exec, the file mode
 * opts->mode or 0600 from its creation. A socket file left by a dead server is replaced;
 * a live one, or anything that is not a socket, is IDL_EADDRINUSE. On failure the caller
 * still calls idl__sockfile_fini(). */
int idl__sockfile_listen(struct idl__sockfile *l, const char *scheme, const char *rest,
			 const struct idl_listen_opts *opts);

/* Wakes a thread blocked in accept; the descriptor stays until idl__sockfile_fini(). An
 * adopted socket is left as it is: it is the manager's, and nothing blocks in its accept. */
void idl__sockfile_close(struct idl__sockfile *l);

/* Removes the file if it is still the one we created, and closes the descriptor. */
void idl__sockfile_fini(struct idl__sockfile *l);

/* Connects fd (a SOCK_SEQPACKET socket whose SO_SNDTIMEO bounds the wait for room in the
 * server's backlog) to sa, mapping errno to the runtime's errors with a detail. */
int idl__sockfile_connect(int fd, const char *scheme, const char *rest,
			  const struct sockaddr_un *sa);

/* The peer's uid, gid and pid from SO_PEERCRED; cred->valid 0 when the kernel says none. */
void idl__sockfile_peercred(int fd, struct idl_cred *cred);

#endif /* IDL_TRANSPORTS_SOCKFILE_H */
