/*
 * mq.h - what the two files of the port: transport share: mq_conn.c sets connections up
 * (endpoints, the registration handshake, credentials, close); mq_io.c moves messages
 * (the data path, out-of-line messages, control messages, the clean-up at the end).
 * docs/transports/port.md describes the design.
 */
#ifndef IDL_TRANSPORT_MQ_H
#define IDL_TRANSPORT_MQ_H

#include <mqueue.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "transport_kit.h"

/* Room for the names we make: "/idlport.<pid>.<16 hex digits>.<kind>" and a NUL. */
#define MQ_NAME_MAX 40
/* Out-of-line names a sender remembers, to remove those a dead receiver never took. More
 * than a queue can hold (msg_max is at most 10 for a process without CAP_SYS_RESOURCE),
 * plus the one a receiver may be taking when it dies. */
#define MQ_RING 12
/* The largest message that may travel out of line. */
#define MQ_OOL_MAX (256u << 20)
/* How long the fast path blocks in one system call before it also watches the peer's pid
 * and the connection's close (docs/transports/port.md, "Waiting"). */
#define MQ_SLICE_NS (20 * 1000000ll)

/* Name kinds: the last letter of a name. */
#define MQ_KIND_REQ 'q' /* a client's request queue */
#define MQ_KIND_REP 'r' /* a client's reply queue */
#define MQ_KIND_OOL 'o' /* an out-of-line message */

/* One direction of a connection. */
struct mq_q {
	mqd_t mq;
	long msgsize; /* the queue's message size, from mq_getattr */
	int epfd; /* made on the first wait that outlives a slice; -1 until then */
};

struct mq_conn {
	int inited; /* the descriptors below hold values (-1 when absent) */
	struct mq_q rq; /* we receive here: O_RDWR, blocking, so that close can wake it */
	struct mq_q sq; /* we send here: O_WRONLY | O_NONBLOCK */
	int pidfd; /* the peer's process, or -1 (no pidfd_open: kill(pid, 0) instead) */
	pid_t pid; /* the peer's pid as it said; never identity */
	int evfd; /* written by close: wakes a sender waiting for room */
	int nb_full; /* rq.epfd, the event operations' set, watches the send queue's room */
	atomic_int closed;
	atomic_int bye; /* the peer said goodbye: nothing more will come */
	atomic_int dead; /* the peer's process has exited */
	struct idl_cred cred;
	void *rbuf; /* rq.msgsize bytes, for receives into smaller buffers */
	/* The end of a receive's first wait, a slice after it began, kept for the first waits
	 * of the receives after it until one of them times out (idl__mq_recv()); rq_end_kept
	 * says whether there is one. Used by the one receive at a time the core makes. */
	struct timespec rq_end;
	int rq_end_kept;
	char ring[MQ_RING][MQ_NAME_MAX]; /* out-of-line names sent (sender only) */
	unsigned ring_next;
	int names_live; /* client: our queue names still exist (handshake unfinished) */
	char rq_name[MQ_NAME_MAX];
	char sq_name[MQ_NAME_MAX];
};

/*
 * Control messages. A message of exactly the queue's message size that starts with
 * MQ_CTL_MAGIC is one of these; data messages are always shorter (a message of that size
 * or more travels out of line), so the two cannot be confused.
 */
#define MQ_CTL_MAGIC "IDLPORTC"
enum mq_ctl_type {
	MQ_CTL_OOL = 1, /* the message is in the shared-memory object `name`, `len` bytes */
	MQ_CTL_BYE = 2, /* the peer closed the connection: the hang-up a queue lacks */
	MQ_CTL_WAKE = 3, /* sent to ourselves by close, to wake a blocked receive */
};

struct mq_ctl {
	char magic[8];
	uint32_t type;
	uint32_t pad;
	uint64_t len;
	char name[MQ_NAME_MAX];
};

/* mq_ool.c */
/* Writes the message - the `total` bytes of the pieces in iov - into a new shared-memory
 * object and fills the control message k that names it. */
int idl__mq_ool_make(struct mq_conn *c, const struct iovec *iov, unsigned niov, size_t total,
		     struct mq_ctl *k);
/* Takes the out-of-line message k names into m (the object is removed). */
int idl__mq_ool_take(struct mq_conn *c, const struct mq_ctl *k, struct idl_xmsg *m);

/* mq_io.c */
int idl__mq_send(void *conn, const struct idl_xmsg *m, struct idl_deadline *dl);
int idl__mq_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *dl);
/* The event operations (struct idl_transport): the connection's epoll set, a send that
 * never waits, a receive that never waits. */
int idl__mq_conn_fd(void *conn, unsigned *events);
int idl__mq_sendv_nb(void *conn, const struct idl_xmsg *msgs, unsigned n);
int idl__mq_recv_nb(void *conn, struct idl_xmsg *m);
/* Measures the coarse clock the fast path's slice is timed with (tr_init). */
void idl__mq_slice_init(void);
/* Sends a control message of `msgsize` bytes on q without blocking. */
int idl__mq_ctl_put(mqd_t q, long msgsize, uint32_t type);
/* At the end of a connection: empties our receive queue, removes out-of-line objects that
 * will never be taken, and says goodbye unless the peer already left. */
void idl__mq_drain(struct mq_conn *c);
/* Writes a fresh random name of `kind` into buf (MQ_NAME_MAX bytes). */
void idl__mq_name(char *buf, char kind);
/* Whether s (within MQ_NAME_MAX bytes) is a name idl__mq_name could have made. */
int idl__mq_name_ok(const char *s, char kind);
/* An absolute CLOCK_REALTIME time for mq_timed*: now + wait_ns, but not after deadline. */
void idl__mq_abstime(int64_t deadline, int64_t wait_ns, struct timespec *ts);
/* Fills n random bytes. */
void idl__mq_random(void *buf, size_t n);

/* A queue's timed receive as a system call of its own, not a cancellation point
 * (transport_kit.h, idl__sys_send(), says why): on Linux a queue descriptor is a file
 * descriptor. The send, and the fast path's receive, are sock/sys_raw.h's. */
#ifdef IDL__SYS_LIBC
#define mq_recv_sys(q, buf, len, ts) mq_timedreceive(q, buf, len, NULL, ts)
#else
static inline ssize_t
mq_recv_sys(mqd_t q, char *buf, size_t len, const struct timespec *ts)
{
	return idl__syscall6(SYS_mq_timedreceive, q, (long)buf, (long)len, 0, (long)ts, 0);
}
#endif

#endif /* IDL_TRANSPORT_MQ_H */
