/*
 * shm_rdv.c - the shm: transport's rendezvous: the UNIX socket a server listens on, the
 * region it creates for each client it accepts (a memfd, sealed, passed with SCM_RIGHTS),
 * and the client's checks before it maps what it was given. After the hello the socket
 * carries nothing: it stays open for the peer's credentials and as the liveness signal.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create, F_ADD_SEALS, accept4, struct ucred */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "shm_impl.h"
#include "sock/sock_adopt.h"
#include "sock/sockfile.h"

static int
shm_sysfail(int e, const char *what, const char *path)
{
	return idl__fail(IDL_ESYSERR(e), "shm:%s: %s: %s", path, what, strerror(e));
}

int
idl__shm_ep_listen(void *vep, const char *rest, const struct idl_listen_opts *opts)
{
	return idl__sockfile_listen(&((struct shm_ep *)vep)->sf, "shm", rest, opts);
}

int
idl__shm_ep_adopt(void *vep, int fd, const struct idl_listen_opts *opts)
{
	return idl__sockfile_adopt(&((struct shm_ep *)vep)->sf, "shm", fd, opts);
}

int
idl__shm_ep_fd(void *vep)
{
	return ((struct shm_ep *)vep)->sf.fd;
}

/* Creates, seals and maps a connection's region; returns the memfd or an error. */
static int
shm_region_create(struct shm_conn *c, struct shm_layout *lay)
{
	const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	unsigned char *base;
	int mfd, err;

	if (idl__shm_layout(idl__shm_cfg.ring_bytes, idl__shm_cfg.ool_bytes, lay) != 0)
		return idl__fail(IDL_EINVAL, "shm: bad ring or arena size");
	mfd = memfd_create("idlkit-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return idl__fail(IDL_ESYSERR(errno), "shm: memfd_create: %s", strerror(errno));
	if (fchmod(mfd, 0600) != 0 || ftruncate(mfd, (off_t)lay->total) != 0 ||
	    fcntl(mfd, F_ADD_SEALS, seals) != 0) {
		err = errno;
		close(mfd);
		return idl__fail(IDL_ESYSERR(err), "shm: memfd set-up: %s", strerror(err));
	}
	base = mmap(NULL, lay->total, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (base == MAP_FAILED) {
		err = errno;
		close(mfd);
		return idl__fail(IDL_ESYSERR(err), "shm: mmap: %s", strerror(err));
	}
	c->ctl = (struct shm_ctl *)base;
	c->ctl->magic = SHM_MAGIC;
	c->ctl->version = SHM_VERSION;
	c->ctl->ring_bytes = lay->ring_bytes;
	c->ctl->ool_bytes = lay->ool_bytes;
	c->ctl->total = lay->total;
	c->ctl->side[0].cpu = -1;
	c->ctl->side[1].cpu = -1;
	/* Each ring starts with a stop word: the zeroes there are no record. */
	for (int d = 0; d < 2; d++)
		*(uint64_t *)(base + lay->ring_off[d]) = shm_rec_word(0, 0) ^ SHM_REC_STOP;
	if ((err = idl__shm_region_new(base, lay, c->me, &c->rg)) != 0) {
		munmap(base, lay->total);
		c->ctl = NULL;
		close(mfd);
		return err;
	}
	idl__shm_attach(c, c->rg);
	return mfd;
}

int
idl__shm_ep_accept(void *vep, void *vconn)
{
	struct shm_ep *ep = vep;
	struct shm_conn *c = vconn;
	struct shm_layout lay;
	struct shm_hello h;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof h };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof cm.b
	};
	int mfd, err = 0;

	c->me = SHM_SERVER;
	c->fd = accept4(ep->sf.fd, NULL, NULL, SOCK_CLOEXEC);
	if (c->fd < 0)
		return IDL_ESYSERR(errno);
	c->open = 1;
	idl__sockfile_peercred(c->fd, &c->cred);
	if ((mfd = shm_region_create(c, &lay)) < 0)
		return mfd;
	memset(&h, 0, sizeof h);
	h.magic = SHM_MAGIC;
	h.version = SHM_VERSION;
	h.ring_bytes = lay.ring_bytes;
	h.ool_bytes = lay.ool_bytes;
	h.total = lay.total;
	memset(&cm, 0, sizeof cm);
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &mfd, sizeof mfd);
	/* A fresh socket's buffer takes one small message: this never blocks. */
	if (sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof h)
		err = IDL_ESYSERR(errno);
	close(mfd);
	return err;
}

void
idl__shm_ep_close(void *vep)
{
	idl__sockfile_close(&((struct shm_ep *)vep)->sf);
}

void
idl__shm_ep_fini(void *vep)
{
	idl__sockfile_fini(&((struct shm_ep *)vep)->sf);
}

/* Sets the socket's timeout `opt` to what is left of the deadline; 1 if it passed. */
static int
shm_timeo(int fd, int opt, int64_t deadline)
{
	struct timeval tv = { 0, 0 };
	int64_t left;

	if (deadline != IDL_DEADLINE_NONE) {
		left = (deadline - idl_now_ns()) / 1000;
		if (left <= 0)
			return 1;
		tv.tv_sec = (time_t)(left / 1000000);
		tv.tv_usec = (suseconds_t)(left % 1000000);
	}
	return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) == 0 ? 0 : IDL_ESYSERR(errno);
}

/* Receives the server's hello and the memfd; returns the descriptor or an error. */
static int
shm_recv_hello(struct shm_conn *c, const char *rest, struct shm_hello *h, int64_t deadline)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = h, .iov_len = sizeof *h };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof cm.b
	};
	struct cmsghdr *ch;
	int mfd = -1, t;
	ssize_t n;

	if ((t = shm_timeo(c->fd, SO_RCVTIMEO, deadline)) != 0)
		return t == 1 ? idl__fail(IDL_ETIMEDOUT, "shm:%s: deadline passed", rest) : t;
	do
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	/* Take every descriptor that came, so that none leaks, and keep the first. */
	for (ch = CMSG_FIRSTHDR(&mh); n >= 0 && ch != NULL; ch = CMSG_NXTHDR(&mh, ch)) {
		if (ch->cmsg_level != SOL_SOCKET || ch->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (ch->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(ch) + i * sizeof(int), sizeof fd);
			if (mfd < 0)
				mfd = fd;
			else
				close(fd);
		}
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return idl__fail(IDL_ETIMEDOUT, "shm:%s: no hello from the server in time", rest);
	if (n < 0)
		return shm_sysfail(errno, "receive the hello", rest);
	if (n == 0 || (size_t)n != sizeof *h || mfd < 0 || (mh.msg_flags & MSG_CTRUNC)) {
		if (mfd >= 0)
			close(mfd);
		return idl__fail(n == 0 ? MIG_SERVER_DIED : IDL_EPROTO, "shm:%s: %s", rest,
				 n == 0 ? "the server closed the connection"
					: "malformed hello from the server");
	}
	return mfd;
}

/* Checks the memfd against the hello (sizes, seals) and maps it. */
static int
shm_map_region(struct shm_conn *c, const char *rest, const struct shm_hello *h, int mfd)
{
	struct shm_layout lay;
	struct stat st;
	unsigned char *base;
	int seals, err;

	if (h->magic != SHM_MAGIC || h->version != SHM_VERSION ||
	    idl__shm_layout(h->ring_bytes, h->ool_bytes, &lay) != 0 || lay.total != h->total)
		return idl__fail(IDL_EPROTO,
				 "shm:%s: the server's hello does not describe a "
				 "region this client can use",
				 rest);
	/* A region the server could shrink would let it kill us with SIGBUS. */
	seals = fcntl(mfd, F_GET_SEALS);
	if (fstat(mfd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != lay.total ||
	    seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) != (F_SEAL_SHRINK | F_SEAL_SEAL))
		return idl__fail(IDL_EPROTO,
				 "shm:%s: the server's region is not a sealed memfd of "
				 "the announced size",
				 rest);
	base = mmap(NULL, lay.total, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (base == MAP_FAILED)
		return shm_sysfail(errno, "mmap", rest);
	if ((err = idl__shm_region_new(base, &lay, SHM_CLIENT, &c->rg)) != 0) {
		munmap(base, lay.total);
		return err;
	}
	idl__shm_attach(c, c->rg);
	return 0;
}

int
idl__shm_conn_connect(void *vconn, const char *rest, struct idl_deadline *dl)
{
	int64_t deadline = idl_deadline_abs(dl); /* connecting is not the fast path */
	struct shm_conn *c = vconn;
	struct sockaddr_un sa;
	struct shm_hello h;
	int err, mfd, t;

	c->me = SHM_CLIENT;
	if ((err = idl__sockfile_addr("shm", rest, &sa)) != 0)
		return err;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return shm_sysfail(errno, "socket", rest);
	c->open = 1;
	if ((t = shm_timeo(c->fd, SO_SNDTIMEO, deadline)) != 0)
		return t == 1 ? idl__fail(IDL_ETIMEDOUT, "shm:%s: connect: deadline passed", rest)
			      : t;
	if ((err = idl__sockfile_connect(c->fd, "shm", rest, &sa)) != 0)
		return err;
	idl__sockfile_peercred(c->fd, &c->cred);
	if ((mfd = shm_recv_hello(c, rest, &h, deadline)) < 0)
		return mfd;
	err = shm_map_region(c, rest, &h, mfd);
	close(mfd);
	return err;
}
