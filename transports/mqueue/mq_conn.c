/*
 * mq_conn.c - the port: transport, "port:/name": Mach-style ports on POSIX message queues.
 *
 * The server owns a receive queue, /name, that is a rendezvous: a client creates two
 * private queues (O_EXCL, 0600) - its request queue and its reply queue, a send right and a
 * reply port - and names them in a registration message sent there, with its pid and a
 * nonce. The server opens both, removes both names, and answers on the reply queue with its
 * own pid. From then on a call is one mq_send and one mq_timedreceive on each side, and the
 * runtime's server gives the connection its own receiving thread as for any connection
 * transport. A queue carries no hang-up and no sender identity: liveness comes from the
 * peer's pid (pidfd_open), the end of a connection from a goodbye message, identity from
 * the owner of the queues. docs/transports/port.md explains the design and its limits.
 */
#include <config.h>

/* syscall and other GNU interfaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mq.h"
#include "sock/sock_adopt.h"

/* Queue sizes (docs/transports/port.md, "Limits"): small, so that a user's 800 KiB
 * RLIMIT_MSGQUEUE holds about a hundred clients. */
#define MQ_RDV_DEPTH 8
#define MQ_RDV_MSGSIZE 256
#define MQ_REQ_DEPTH 4 /* IDL_PORT_QUEUE_DEPTH, read at each connect, within [1, 64] */
#define MQ_REQ_DEPTH_MAX 64
#define MQ_REP_DEPTH 2
#define MQ_MSGSIZE 1024
#define MQ_MIN_MSGSIZE 128 /* the kernel's smallest msgsize_max; a control message fits */
#define MQ_MAX_MSGSIZE 8192 /* what we accept from a client's queues */
/* Waiting for the server's answer at connect: how often to ask whether a server holds the
 * rendezvous queue, and for how long nobody may hold it before the address counts as
 * dead. */
#define MQ_PROBE_NS (50 * 1000000ll)
#define MQ_STALE_PROBES 20

#define MQ_REG_MAGIC "IDLPORTR"
#define MQ_ACK_MAGIC "IDLPORTA"
#define MQ_VERSION 1u

/* The registration, client -> rendezvous queue. */
struct mq_reg {
	char magic[8];
	uint32_t version;
	int32_t pid; /* the client's, as it says */
	uint8_t nonce[16];
	char rq[MQ_NAME_MAX]; /* the client's request queue: the server receives there */
	char sq[MQ_NAME_MAX]; /* the client's reply queue */
};

/* The answer, server -> the client's reply queue. */
struct mq_ack {
	char magic[8];
	int32_t status; /* 0, or the idlkit error that refused the client */
	int32_t pid; /* the server's */
	uint8_t nonce[16];
};

_Static_assert(sizeof(struct mq_reg) <= MQ_RDV_MSGSIZE, "registration fits");
_Static_assert(sizeof(struct mq_ack) <= MQ_MIN_MSGSIZE, "answer fits");

struct mq_ep {
	mqd_t mq; /* the rendezvous queue, O_RDONLY | O_NONBLOCK */
	int open;
	int created; /* we made the name, and remove it if it is still ours */
	dev_t dev;
	ino_t ino;
	char name[NAME_MAX + 2];
};

/* The system's limits, read once (tr_init). */
static long mq_depth_max = 10;
static long mq_msgsize_max = 8192;

static long
mq_read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	long v = dflt;

	if (f != NULL) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

static int
mq_init(void)
{
	mq_depth_max = mq_read_long("/proc/sys/fs/mqueue/msg_max", 10);
	mq_msgsize_max = mq_read_long("/proc/sys/fs/mqueue/msgsize_max", 8192);
	idl__mq_slice_init();
	return 0;
}

static long
mq_min(long a, long b)
{
	return a < b ? a : b;
}

/* "/name": one leading slash, no other, a few bytes to NAME_MAX. */
static int
mq_addr(const char *rest, char *name)
{
	size_t n = strlen(rest);

	if (n < 2 || n > NAME_MAX || rest[0] != '/' || strchr(rest + 1, '/') != NULL)
		return idl__fail(IDL_EADDRINVAL,
				 "port:%s: expected /name (one slash, at most %d "
				 "bytes)",
				 rest, NAME_MAX);
	memcpy(name, rest, n + 1);
	return 0;
}

/* An error of mq_open, with what the limits mean. */
static int
mq_open_fail(int e, const char *what, const char *name)
{
	struct rlimit rl;

	if (e == EMFILE && getrlimit(RLIMIT_MSGQUEUE, &rl) == 0)
		return idl__fail(IDL_ELIMIT,
				 "port:%s: %s: the user's RLIMIT_MSGQUEUE (%llu bytes) "
				 "or the process's descriptors are used up",
				 name, what, (unsigned long long)rl.rlim_cur);
	if (e == ENOSPC)
		return idl__fail(IDL_ELIMIT, "port:%s: %s: the system's queues_max is reached",
				 name, what);
	if (e == EACCES || e == EPERM)
		return idl__fail(IDL_EACCES, "port:%s: %s: %s", name, what, strerror(e));
	return idl__fail(IDL_ESYSERR(e), "port:%s: %s: %s", name, what, strerror(e));
}

static int
mq_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Whether a server holds the rendezvous queue q. A listening server registers for
 * notification on it (SIGEV_NONE: nothing is ever delivered), and a process's registration
 * ends with the process, so a queue nobody is registered on was left by a dead server. The
 * kernel also ends a registration when a message arrives on the empty queue, until the
 * server's next accept registers again: one "nobody" is not proof, a long run of them is.
 */
static int
mq_held(mqd_t q)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_NONE;
	if (mq_notify(q, &sev) != 0)
		return errno == EBUSY;
	mq_notify(q, NULL);
	return 0;
}

static void
mq_arm(mqd_t q)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_NONE;
	mq_notify(q, &sev); /* EBUSY: still registered */
}

/* The rendezvous queue at name, if it was left by a dead server: a new one may replace it. */
static int
mq_stale(const char *name)
{
	mqd_t q = mq_open(name, O_RDONLY | O_NONBLOCK);
	int held;

	if (q == (mqd_t)-1)
		return errno == ENOENT;
	held = mq_held(q);
	mq_close(q);
	return !held;
}

static int
mq_ep_listen(void *vep, const char *rest, const struct idl_listen_opts *opts)
{
	struct mq_ep *ep = vep;
	struct mq_attr attr = { .mq_maxmsg = mq_min(MQ_RDV_DEPTH, mq_depth_max),
				.mq_msgsize = mq_min(MQ_RDV_MSGSIZE, mq_msgsize_max) };
	mode_t mode = opts != NULL && opts->mode != 0 ? (mode_t)opts->mode : 0600;
	struct stat st;
	int err;

	if ((err = mq_addr(rest, ep->name)) != 0)
		return err;
	if (attr.mq_msgsize < (long)sizeof(struct mq_reg))
		return idl__fail(IDL_ELIMIT, "port:%s: msgsize_max %ld is below %zu bytes", rest,
				 mq_msgsize_max, sizeof(struct mq_reg));
	for (int tries = 0;; tries++) {
		ep->mq = mq_open(ep->name, O_RDONLY | O_NONBLOCK | O_CREAT | O_EXCL, mode, &attr);
		if (ep->mq != (mqd_t)-1)
			break;
		if (errno != EEXIST)
			return mq_open_fail(errno, "mq_open", rest);
		/* A queue left by a killed server is replaced; one a server holds is not. */
		if (tries > 0 || !mq_stale(ep->name))
			return idl__fail(IDL_EADDRINUSE, "port:%s: address in use", rest);
		if (mq_unlink(ep->name) != 0 && errno != ENOENT)
			return mq_open_fail(errno, "mq_unlink of a stale queue", rest);
	}
	ep->open = 1;
	ep->created = 1;
	/* The umask may have narrowed a mode the caller asked for. */
	if (fchmod(ep->mq, mode) != 0 || fstat(ep->mq, &st) != 0)
		return mq_open_fail(errno, "fchmod", rest);
	ep->dev = st.st_dev;
	ep->ino = st.st_ino;
	mq_arm(ep->mq);
	return 0;
}

/*
 * A rendezvous queue the service manager passed (ListenMessageQueue=): checked to be the
 * queue mq_ep_listen() would make - a queue this process may receive from, whose messages
 * hold a registration and fit an accept's buffer, that others may not write to beyond
 * opts->mode - and made non-blocking as that one is. Its name is the manager's, never
 * removed here (ep->created stays 0).
 */
static int
mq_ep_adopt(void *vep, int fd, const struct idl_listen_opts *opts)
{
	struct mq_ep *ep = vep;
	struct mq_attr a, nb;
	char path[32], what[96];
	struct stat st;
	ssize_t n;
	int fl;

	ep->mq = (mqd_t)fd; /* the endpoint's from here: ep_fini closes it */
	ep->open = 1;
	if (mq_getattr(ep->mq, &a) != 0) {
		idl__sock_describe(fd, what, sizeof what);
		return idl__fail(IDL_EADDRINVAL,
				 "the passed descriptor is %s; port: needs a POSIX message queue "
				 "(ListenMessageQueue=/NAME)",
				 what);
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	n = readlink(path, ep->name, sizeof ep->name - 1);
	ep->name[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(ep->name, sizeof ep->name, "/(passed queue)");
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_WRONLY)
		return idl__fail(IDL_EADDRINVAL,
				 "port:%s: the passed queue is not open for reading", ep->name);
	if (a.mq_msgsize < (long)sizeof(struct mq_reg) || a.mq_msgsize > MQ_MAX_MSGSIZE)
		return idl__fail(IDL_EADDRINVAL,
				 "port:%s: the passed queue's messages are of %ld bytes; port: "
				 "needs %zu to %d (MessageQueueMessageSize=%d)",
				 ep->name, a.mq_msgsize, sizeof(struct mq_reg), MQ_MAX_MSGSIZE,
				 MQ_RDV_MSGSIZE);
	if (fstat(fd, &st) != 0)
		return mq_open_fail(errno, "fstat of the passed queue", ep->name);
	if (idl__sock_mode_wider(st.st_mode, opts != NULL ? opts->mode : 0600))
		return idl__fail(IDL_EACCES,
				 "port:%s: the passed queue has mode %04o: others may send to it "
				 "(idlkit serves owner-only queues: SocketMode=0600)",
				 ep->name, (unsigned)(st.st_mode & 07777));
	nb = a;
	nb.mq_flags = O_NONBLOCK;
	if (mq_setattr(ep->mq, &nb, NULL) != 0)
		return mq_open_fail(errno, "mq_setattr of the passed queue", ep->name);
	ep->dev = st.st_dev;
	ep->ino = st.st_ino;
	mq_arm(ep->mq);
	return 0;
}

static int
mq_ep_fd(void *vep)
{
	return ((struct mq_ep *)vep)->mq;
}

static void
mq_conn_init(struct mq_conn *c)
{
	c->inited = 1;
	c->rq.mq = c->sq.mq = (mqd_t)-1;
	c->rq.epfd = c->sq.epfd = -1;
	c->pidfd = -1;
	c->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/* The queue's message size, within what we accept. */
static int
mq_msgsize(struct mq_q *q)
{
	struct mq_attr a;

	if (mq_getattr(q->mq, &a) != 0)
		return IDL_ESYSERR(errno);
	if (a.mq_msgsize < MQ_MIN_MSGSIZE || a.mq_msgsize > MQ_MAX_MSGSIZE || a.mq_maxmsg < 1)
		return idl__fail(IDL_EPROTO, "port: a queue of %ld x %ld bytes", a.mq_maxmsg,
				 a.mq_msgsize);
	q->msgsize = a.mq_msgsize;
	return 0;
}

/*
 * Whether process `pid` (held by pidfd) has our queue q open: then the pid it claimed is
 * its own, or that of a process it shares the queue with. Read from /proc/PID/fd, which
 * needs the right to inspect that process (same user, or root); the pidfd, still alive
 * after the scan, proves that the pid was not recycled meanwhile.
 */
static int
mq_pid_holds(pid_t pid, int pidfd, mqd_t q)
{
	char path[64];
	struct stat want, st;
	struct dirent *e;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int found = 0, fd;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
	if (pidfd < 0 || fstat(q, &want) != 0)
		return 0;
	/* open() then fdopendir(), not opendir(): ThreadSanitizer learns of a descriptor made by
	 * open(), so that one a connection's thread closed before and this scan gets again is
	 * not taken for a race between the two. */
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while (!found && (e = readdir(d)) != NULL)
		found = e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 &&
			st.st_dev == want.st_dev && st.st_ino == want.st_ino;
	closedir(d);
	return found && poll(&p, 1, 0) == 0;
}

static int
mq_ep_accept(void *vep, void *vconn)
{
	struct mq_ep *ep = vep;
	struct mq_conn *c = vconn;
	char buf[MQ_MAX_MSGSIZE] __attribute__((aligned(8)));
	struct mq_ack ack;
	struct mq_reg reg;
	struct stat rst, sst;
	ssize_t n;
	int err;

	n = mq_receive(ep->mq, buf, sizeof buf, NULL);
	if (n < 0)
		return IDL_ESYSERR(errno);
	/* The queue may be empty now: stay registered, as a sign of life (mq_held). */
	mq_arm(ep->mq);
	memcpy(&reg, buf, sizeof reg);
	if ((size_t)n != sizeof reg || memcmp(reg.magic, MQ_REG_MAGIC, 8) != 0 ||
	    reg.version != MQ_VERSION || reg.pid <= 0 || !idl__mq_name_ok(reg.rq, MQ_KIND_REQ) ||
	    !idl__mq_name_ok(reg.sq, MQ_KIND_REP))
		return idl__fail(IDL_EPROTO, "port:%s: malformed registration", ep->name);
	mq_conn_init(c);
	c->rq.mq = mq_open(reg.rq, O_RDWR);
	c->sq.mq = c->rq.mq == (mqd_t)-1 ? (mqd_t)-1 : mq_open(reg.sq, O_WRONLY | O_NONBLOCK);
	err = errno;
	/* Both sides hold both queues (or the client gave up): the names can go. */
	mq_unlink(reg.rq);
	mq_unlink(reg.sq);
	if (c->sq.mq == (mqd_t)-1)
		return idl__fail(IDL_ESYSERR(err), "port:%s: a client's queue: %s", ep->name,
				 strerror(err));
	memset(&ack, 0, sizeof ack);
	memcpy(ack.magic, MQ_ACK_MAGIC, sizeof ack.magic);
	memcpy(ack.nonce, reg.nonce, sizeof ack.nonce);
	ack.pid = (int32_t)getpid();
	/* Both queues are the client's: its uid owns them, whatever pid it claims. */
	if (fstat(c->rq.mq, &rst) != 0 || fstat(c->sq.mq, &sst) != 0 || rst.st_uid != sst.st_uid ||
	    (err = mq_msgsize(&c->rq)) != 0 || (err = mq_msgsize(&c->sq)) != 0)
		ack.status = IDL_EPROTO;
	else if (c->evfd < 0 || (c->rbuf = idl__zalloc((size_t)c->rq.msgsize)) == NULL)
		ack.status = IDL_ENOMEM;
	else if ((c->pidfd = mq_pidfd(reg.pid)) < 0 && errno == ESRCH)
		ack.status = MIG_SERVER_DIED; /* the client is gone already */
	c->pid = reg.pid;
	c->cred.valid = 1;
	c->cred.uid = rst.st_uid;
	c->cred.gid = rst.st_gid;
	c->cred.pid = mq_pid_holds(reg.pid, c->pidfd, c->rq.mq) ? reg.pid : 0;
	if (mq_send(c->sq.mq, (const char *)&ack, sizeof ack, 0) != 0 && ack.status == 0)
		ack.status = IDL_ESYSERR(errno);
	return ack.status;
}

static void
mq_ep_close(void *vep)
{
	/* Nothing blocks on the endpoint: accept never waits. */
	(void)vep;
}

static void
mq_ep_fini(void *vep)
{
	struct mq_ep *ep = vep;
	struct stat st;
	mqd_t q;

	/* Remove the name only while it is still our queue: a server that replaced ours
	 * after a stale-queue check owns the name now. */
	if (ep->created && (q = mq_open(ep->name, O_RDONLY | O_NONBLOCK)) != (mqd_t)-1) {
		if (fstat(q, &st) == 0 && st.st_dev == ep->dev && st.st_ino == ep->ino)
			mq_unlink(ep->name);
		mq_close(q);
	}
	ep->created = 0;
	if (ep->open)
		mq_close(ep->mq);
	ep->open = 0;
}

/* Creates one of the client's queues. */
static int
mq_make_queue(struct mq_q *q, char *name, char kind, long depth, int flags, const char *addr)
{
	struct mq_attr attr = { .mq_maxmsg = mq_min(depth, mq_depth_max),
				.mq_msgsize = mq_min(MQ_MSGSIZE, mq_msgsize_max) };

	for (int tries = 0; tries < 3; tries++) {
		idl__mq_name(name, kind);
		q->mq = mq_open(name, flags | O_CREAT | O_EXCL, 0600, &attr);
		if (q->mq != (mqd_t)-1)
			return mq_msgsize(q);
		if (errno != EEXIST)
			break;
	}
	return mq_open_fail(errno,
			    kind == MQ_KIND_REQ ? "creating the request queue"
						: "creating the reply queue",
			    addr);
}

/* Waits for the server's answer on the reply queue; srv is the rendezvous queue, watched
 * for a server that holds it. */
static int
mq_await_ack(struct mq_conn *c, mqd_t srv, const struct mq_reg *reg, const char *addr,
	     int64_t deadline, struct mq_ack *ack)
{
	int unheld = 0;

	for (;;) {
		struct timespec ts;
		ssize_t n;

		idl__mq_abstime(deadline, MQ_PROBE_NS, &ts);
		n = mq_timedreceive(c->rq.mq, c->rbuf, (size_t)c->rq.msgsize, NULL, &ts);
		if (n == (ssize_t)sizeof *ack) {
			memcpy(ack, c->rbuf, sizeof *ack);
			if (memcmp(ack->magic, MQ_ACK_MAGIC, 8) == 0 &&
			    memcmp(ack->nonce, reg->nonce, sizeof reg->nonce) == 0)
				return 0;
		}
		if (n >= 0)
			continue; /* not our answer: nobody else may write here, but be safe */
		if (errno == EINTR)
			continue;
		if (errno != ETIMEDOUT)
			return mq_open_fail(errno, "waiting for the server", addr);
		if (deadline != IDL_DEADLINE_NONE && idl_now_ns() >= deadline)
			return idl__fail(IDL_ETIMEDOUT, "port:%s: no answer in time", addr);
		unheld = mq_held(srv) ? 0 : unheld + 1;
		if (unheld >= MQ_STALE_PROBES)
			return idl__fail(IDL_ECONNREFUSED,
					 "port:%s: no server holds the queue "
					 "(left by a dead server?)",
					 addr);
	}
}

static int
mq_conn_connect(void *vconn, const char *rest, struct idl_deadline *dl)
{
	int64_t deadline = idl_deadline_abs(dl); /* connecting is not the fast path */
	struct mq_conn *c = vconn;
	char name[NAME_MAX + 2];
	struct mq_reg reg;
	struct mq_ack ack;
	struct stat st;
	mqd_t srv;
	int err;

	if ((err = mq_addr(rest, name)) != 0)
		return err;
	mq_conn_init(c);
	if (c->evfd < 0)
		return idl__fail(IDL_ESYSERR(errno), "port:%s: eventfd: %s", rest, strerror(errno));
	srv = mq_open(name, O_WRONLY | O_NONBLOCK);
	if (srv == (mqd_t)-1)
		return errno == ENOENT ? idl__fail(IDL_ECONNREFUSED, "port:%s: no such queue", rest)
				       : mq_open_fail(errno, "mq_open", rest);
	/* The server's identity: the owner of its queue. */
	if (fstat(srv, &st) == 0) {
		c->cred.valid = 1;
		c->cred.uid = st.st_uid;
		c->cred.gid = st.st_gid;
	}
	c->names_live = 1;
	if ((err = mq_make_queue(&c->rq, c->rq_name, MQ_KIND_REP, MQ_REP_DEPTH, O_RDWR, rest)) !=
		    0 ||
	    (err = mq_make_queue(
		     &c->sq, c->sq_name, MQ_KIND_REQ,
		     (long)idl__env_int("IDL_PORT_QUEUE_DEPTH", MQ_REQ_DEPTH, 1, MQ_REQ_DEPTH_MAX),
		     O_WRONLY | O_NONBLOCK, rest)) != 0)
		goto out;
	if ((c->rbuf = idl__zalloc((size_t)c->rq.msgsize)) == NULL) {
		err = IDL_ENOMEM;
		goto out;
	}
	memset(&reg, 0, sizeof reg);
	memcpy(reg.magic, MQ_REG_MAGIC, sizeof reg.magic);
	reg.version = MQ_VERSION;
	reg.pid = (int32_t)getpid();
	idl__mq_random(reg.nonce, sizeof reg.nonce);
	memcpy(reg.rq, c->sq_name, MQ_NAME_MAX); /* the server receives on our send queue */
	memcpy(reg.sq, c->rq_name, MQ_NAME_MAX);
	for (int unheld = 0; mq_send(srv, (const char *)&reg, sizeof reg, 0) != 0;) {
		struct pollfd p = { .fd = srv, .events = POLLOUT };
		int64_t left =
			deadline == IDL_DEADLINE_NONE ? MQ_PROBE_NS : deadline - idl_now_ns();

		if (errno != EAGAIN && errno != EINTR) {
			err = mq_open_fail(errno, "mq_send", rest);
			goto out;
		}
		if (left <= 0) {
			err = idl__fail(IDL_ETIMEDOUT, "port:%s: the server's queue stayed full",
					rest);
			goto out;
		}
		/* A full queue nobody holds is a dead server's. */
		unheld = mq_held(srv) ? 0 : unheld + 1;
		if (unheld >= MQ_STALE_PROBES) {
			err = idl__fail(IDL_ECONNREFUSED, "port:%s: no server holds the queue",
					rest);
			goto out;
		}
		poll(&p, 1, (int)(mq_min(left, MQ_PROBE_NS) / 1000000) + 1);
	}
	if ((err = mq_await_ack(c, srv, &reg, rest, deadline, &ack)) != 0)
		goto out;
	if (ack.status != 0) {
		err = idl__fail(ack.status, "port:%s: the server refused: %s", rest,
				idl_errname(ack.status));
		goto out;
	}
	c->pid = ack.pid;
	c->cred.pid = ack.pid;
	c->pidfd = mq_pidfd(ack.pid);
	if (c->pidfd < 0 && errno == ESRCH)
		err = idl__fail(IDL_ECONNREFUSED, "port:%s: the server exited", rest);
out:
	/* The server removed the names once it held the queues; on failure nobody will. */
	mq_unlink(c->rq_name);
	mq_unlink(c->sq_name);
	c->names_live = 0;
	mq_close(srv);
	return err;
}

static int
mq_conn_cred(void *vconn, struct idl_cred *cred)
{
	struct mq_conn *c = vconn;

	*cred = c->cred;
	return c->cred.valid ? 0 : IDL_ENOTSUP;
}

static void
mq_conn_close(void *vconn)
{
	struct mq_conn *c = vconn;
	uint64_t one = 1;
	ssize_t r;

	if (atomic_exchange(&c->closed, 1) || !c->inited)
		return;
	/* The eventfd wakes a wait; the message wakes a receive blocked in its first slice
	 * (a full queue needs none: its receiver is not blocked). A write to the eventfd
	 * cannot fail but at a counter's maximum, which wakes waiters as well. */
	r = c->evfd >= 0 ? write(c->evfd, &one, sizeof one) : 0;
	(void)r;
	if (c->rq.mq != (mqd_t)-1 && c->rq.msgsize != 0)
		idl__mq_ctl_put(c->rq.mq, c->rq.msgsize, MQ_CTL_WAKE);
}

static void
mq_conn_fini(void *vconn)
{
	struct mq_conn *c = vconn;

	if (!c->inited)
		return;
	if (c->names_live) {
		mq_unlink(c->rq_name);
		mq_unlink(c->sq_name);
	}
	idl__mq_drain(c);
	if (c->rq.mq != (mqd_t)-1)
		mq_close(c->rq.mq);
	if (c->sq.mq != (mqd_t)-1)
		mq_close(c->sq.mq);
	if (c->rq.epfd >= 0)
		close(c->rq.epfd);
	if (c->sq.epfd >= 0)
		close(c->sq.epfd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->evfd >= 0)
		close(c->evfd);
	free(c->rbuf);
	c->rbuf = NULL;
	c->inited = 0;
}

static const struct idl_transport mq_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "port",
	.flags = IDL_TRF_CRED | IDL_TRF_DESC | IDL_TRF_OWNSET,
	.ep_size = sizeof(struct mq_ep),
	.conn_size = sizeof(struct mq_conn),
	.tr_init = mq_init,
	.ep_listen = mq_ep_listen,
	.ep_fd = mq_ep_fd,
	.ep_accept = mq_ep_accept,
	.ep_close = mq_ep_close,
	.ep_fini = mq_ep_fini,
	.conn_connect = mq_conn_connect,
	.conn_send = idl__mq_send,
	.conn_recv = idl__mq_recv,
	.conn_cred = mq_conn_cred,
	.conn_close = mq_conn_close,
	.conn_fini = mq_conn_fini,
	.conn_fd = idl__mq_conn_fd,
	.conn_sendv_nb = idl__mq_sendv_nb,
	.conn_recv_nb = idl__mq_recv_nb,
	.ep_adopt = mq_ep_adopt,
};

void
idl__mq_register(void)
{
	int err = idl_transport_register(&mq_transport);

	assert(err == 0);
	(void)err;
}
