/*
 * sockfile.c - UNIX socket files for unix: and shm: (sockfile.h has the rules).
 */
#include <config.h>

/* accept4, struct ucred: GNU and Linux interfaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sockfile.h"

static int
sockfile_sysfail(int e, const char *scheme, const char *what, const char *rest)
{
	return idl__fail(IDL_ESYSERR(e), "%s:%s: %s: %s", scheme, rest, what, strerror(e));
}

int
idl__sockfile_addr(const char *scheme, const char *rest, struct sockaddr_un *sa)
{
	size_t n = strlen(rest);

	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (n == 0 || rest[0] == '@')
		return idl__fail(IDL_EADDRINVAL, "%s:%s: expected a socket file path", scheme,
				 rest);
	if (n >= sizeof sa->sun_path)
		return idl__fail(IDL_EADDRINVAL, "%s:%s: path longer than %zu bytes", scheme, rest,
				 sizeof sa->sun_path - 1);
	memcpy(sa->sun_path, rest, n + 1);
	return 0;
}

/* Whether a live server answers at the path (a stale file refuses connections). */
static int
sockfile_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int live;

	if (fd < 0)
		return 1; /* cannot tell: assume live, never remove what may be in use */
	live = connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0 ||
	       (errno != ECONNREFUSED && errno != ENOENT);
	close(fd);
	return live;
}

static int
sockfile_bind_error(int e, const char *scheme, const char *rest)
{
	if (e == EADDRINUSE)
		return idl__fail(IDL_EADDRINUSE, "%s:%s: address in use", scheme, rest);
	if (e == EACCES)
		return idl__fail(IDL_EACCES, "%s:%s: bind: %s", scheme, rest, strerror(e));
	return sockfile_sysfail(e, scheme, "bind", rest);
}

int
idl__sockfile_listen(struct idl__sockfile *l, const char *scheme, const char *rest,
		     const struct idl_listen_opts *opts)
{
	struct sockaddr_un sa;
	struct stat st;
	int err;

	if ((err = idl__sockfile_addr(scheme, rest, &sa)) != 0)
		return err;
	l->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0)
		return sockfile_sysfail(errno, scheme, "socket", rest);
	l->open = 1;
	/* Linux gives the socket file the mode of the socket's inode (less the umask), so
	 * setting it before bind creates the file with it: no window with a wider mode. */
	if (fchmod(l->fd, opts != NULL && opts->mode != 0 ? opts->mode : 0600) != 0)
		return sockfile_sysfail(errno, scheme, "fchmod", rest);
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		if (errno != EADDRINUSE)
			return sockfile_bind_error(errno, scheme, rest);
		/* A socket file left by a dead server is replaced; a live one, or anything
		 * that is not a socket, is not ours to remove. */
		if (lstat(sa.sun_path, &st) != 0 || !S_ISSOCK(st.st_mode) || sockfile_live(&sa))
			return sockfile_bind_error(EADDRINUSE, scheme, rest);
		if (unlink(sa.sun_path) != 0 && errno != ENOENT)
			return sockfile_sysfail(errno, scheme, "unlink stale socket", rest);
		if (bind(l->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
			return sockfile_bind_error(errno, scheme, rest);
	}
	l->created = 1;
	memcpy(l->path, sa.sun_path, sizeof l->path);
	if (stat(l->path, &st) == 0) {
		l->dev = st.st_dev;
		l->ino = st.st_ino;
	}
	if (listen(l->fd, SOMAXCONN) != 0)
		return sockfile_sysfail(errno, scheme, "listen", rest);
	return 0;
}

void
idl__sockfile_close(struct idl__sockfile *l)
{
	if (l->open && !l->adopted)
		shutdown(l->fd, SHUT_RDWR);
}

void
idl__sockfile_fini(struct idl__sockfile *l)
{
	struct stat st;

	if (l->created && stat(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino)
		unlink(l->path);
	l->created = 0;
	if (l->open)
		close(l->fd);
	l->open = 0;
}

int
idl__sockfile_connect(int fd, const char *scheme, const char *rest, const struct sockaddr_un *sa)
{
	while (connect(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
		int e = errno;

		if (e == EINTR)
			continue;
		if (e == ECONNREFUSED || e == ENOENT)
			return idl__fail(IDL_ECONNREFUSED, "%s:%s: connect: %s", scheme, rest,
					 strerror(e));
		if (e == EACCES || e == EPERM)
			return idl__fail(IDL_EACCES, "%s:%s: connect: %s", scheme, rest,
					 strerror(e));
		if (e == EAGAIN || e == EINPROGRESS)
			return idl__fail(IDL_ETIMEDOUT,
					 "%s:%s: connect: the server's backlog "
					 "stayed full",
					 scheme, rest);
		return sockfile_sysfail(e, scheme, "connect", rest);
	}
	return 0;
}

void
idl__sockfile_peercred(int fd, struct idl_cred *cred)
{
	struct ucred uc;
	socklen_t len = sizeof uc;

	memset(cred, 0, sizeof *cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0 && len == sizeof uc) {
		cred->valid = 1;
		cred->pid = uc.pid;
		cred->uid = uc.uid;
		cred->gid = uc.gid;
	}
}
