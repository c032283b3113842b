/*
 * stream.h - a stream of length-framed messages over a connected socket, the tcp: transport's
 * (docs/transports/tcp.md): the frame's constants, an endpoint's and a connection's state,
 * and the operations that make a transport of them. tcp/tcp.c registers them as they are.
 */
#ifndef IDL_TRANSPORTS_SOCK_STREAM_H
#define IDL_TRANSPORTS_SOCK_STREAM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <arpa/inet.h>

#include "transport_kit.h"

/* The largest frame either side accepts: a length beyond it is not this protocol. */
#define STREAM_FRAME_MAX (64u << 20)
#define STREAM_PREFIX 4u
/* Room the carry buffer starts with; it grows to the largest receive buffer seen. */
#define STREAM_CARRY_MIN 4096u
/* The largest carry buffer a busy connection keeps between runs of frames (stream_nb.c). */
#define STREAM_CARRY_KEEP (64u << 10)

struct inet_addrs;
struct stream_rx;
struct stream_conn;

/*
 * The bytes under the frames. A tcp: connection has none (io NULL): the frames go straight
 * to and from its socket with the system calls, and its fast paths make them in line. A layer
 * over the socket (tls:) has its own, which behave as those system calls do on the socket, so
 * that every frame's code is the same for both: the general paths (the idl__stream_*_gen
 * entry points) call them; the fast paths never run on such a connection.
 */
struct stream_io {
	const char *scheme; /* "tls": for details */
	/* As recvmsg(2) on c->fd with `flags`: bytes received, 0 at the end of the stream, or
	 * -1 with errno. With MSG_DONTWAIT it never waits; without, it waits as the socket
	 * would, bounded by its receive timeout (c->rcvtimeo_us, as idl__sock_timeo() set it),
	 * and a wait that ends by it is -1 with EAGAIN. Bytes it holds read ahead come first. */
	ssize_t (*recvmsg)(struct stream_conn *c, struct msghdr *mh, int flags);
	/* As sendmsg(2) on c->fd with `flags` (MSG_DONTWAIT, or a wait bounded by the socket's
	 * send timeout c->sndtimeo_us): the bytes taken, which are then the layer's to deliver,
	 * or -1 with errno. */
	ssize_t (*sendmsg)(struct stream_conn *c, const struct msghdr *mh, int flags);
	/* After one of the two failed with errno e: the layer's own error for it, its detail
	 * set; or 0, and e is taken as a socket's error (idl__stream_conn_err()). */
	int (*err)(struct stream_conn *c, int e);
};

/* A listening endpoint. */
struct stream_ep {
	int fd;
	int open;
	int adopted; /* passed by a service manager: never shut down (it serves the next) */
	const char *scheme; /* for details: NULL is "tcp" (a layer sets its own before listening) */
	char name[80]; /* the bound address, for details */
};

struct stream_conn {
	int fd;
	int open;
	atomic_int closed;
	const struct stream_io *io; /* NULL: the socket's own system calls (tcp:) */
	int64_t rcvtimeo_us;
	int64_t sndtimeo_us;
	unsigned char *carry; /* bytes received beyond the last frame returned */
	size_t carry_off;
	size_t carry_len;
	size_t carry_cap;
	/* A frame with out-of-line data being received into its blocks (stream_rx.c), or NULL;
	 * while there is one, the carry buffer is empty. */
	struct stream_rx *rx;
	/* Output a non-blocking send could not write: the rest of one frame, written before
	 * anything else goes (conn_sendv_nb). */
	unsigned char *out;
	size_t out_off;
	size_t out_len;
	/* While a connect started without blocking is in progress: the addresses the name
	 * has and the next one to try (stream_connect.c). NULL otherwise. */
	struct inet_addrs *pend;
	unsigned pend_next;
	/* The fast paths' system call arguments (idl__stream_conn_recv(), stream_conn_send() and
	 * their non-blocking forms), kept here so that a call stores only the message's place
	 * and size and its function needs no stack frame of its own. The receive's are used by
	 * one receive at a time and the send's by one send at a time, as the core makes them;
	 * each general path sets its direction's up the first time (stream_conn_rargs(),
	 * stream_conn_sargs()), and a fast path is taken once they are. */
	uint32_t rprefix;
	uint32_t sprefix;
	struct iovec riov[2];
	struct iovec siov[2];
	struct msghdr rmh;
	struct msghdr smh;
	char name[80];
};

/* Sets up the fast paths' arguments of each direction; the rest of each msghdr is zero, as
 * the connection's memory is when the core hands it over. */
static inline void
stream_conn_rargs(struct stream_conn *c)
{
	c->riov[0] = (struct iovec){ &c->rprefix, sizeof c->rprefix };
	c->rmh.msg_iovlen = 2;
	c->rmh.msg_iov = c->riov;
}

static inline void
stream_conn_sargs(struct stream_conn *c)
{
	c->siov[0] = (struct iovec){ &c->sprefix, sizeof c->sprefix };
	c->smh.msg_iovlen = 2;
	c->smh.msg_iov = c->siov;
}

/* Whether the fast path's recvmsg (its result n, the prefix it read into c->rprefix)
 * brought exactly one whole plain frame - so no more than m->cap - which is then the message
 * in m. An error is negative, which no frame's length matches. In line in both fast paths. */
static inline __attribute__((always_inline)) int
stream_one_frame(struct stream_conn *c, struct idl_xmsg *m, long n)
{
	uint32_t len = ntohl(c->rprefix);

	if ((unsigned long)n == STREAM_PREFIX + (unsigned long)len && len <= STREAM_FRAME_MAX &&
	    !idl__desc_msg(m->data, len)) {
		m->len = len;
		m->nfds = 0;
		return 1;
	}
	return 0;
}

/* The scheme details name: the layer's, else "tcp". */
static inline const char *
stream_scheme(const struct stream_conn *c)
{
	return c->io != NULL ? c->io->scheme : "tcp";
}

/* The system calls of the frames' general paths, through the layer where there is one. */
static inline ssize_t
stream_recvmsg(struct stream_conn *c, struct msghdr *mh, int flags)
{
	if (c->io == NULL)
		return idl__sys_recvmsg(c->fd, mh, flags);
	return c->io->recvmsg(c, mh, flags);
}

static inline ssize_t
stream_sendmsg(struct stream_conn *c, const struct msghdr *mh, int flags)
{
	if (c->io == NULL)
		return idl__sys_sendmsg(c->fd, mh, flags);
	return c->io->sendmsg(c, mh, flags);
}

static inline ssize_t
stream_recv(struct stream_conn *c, void *buf, size_t n, int flags)
{
	struct iovec iov = { buf, n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (c->io == NULL)
		return idl__sys_recv(c->fd, buf, n, flags);
	return c->io->recvmsg(c, &mh, flags);
}

static inline ssize_t
stream_send(struct stream_conn *c, const void *buf, size_t n, int flags)
{
	struct iovec iov = { (void *)buf, n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (c->io == NULL)
		return idl__sys_send(c->fd, buf, n, flags);
	return c->io->sendmsg(c, &mh, flags);
}

/* stream_ep.c: endpoints, accepting, the ends of a connection (idl_transport.h). */
/* TCP_NODELAY on fd: 0 or -1 with errno. */
int idl__stream_nodelay(int fd);
int idl__stream_ep_listen(void *ep, const char *rest, const struct idl_listen_opts *opts);
/* ep_adopt: a listening TCP socket a service manager passed (ListenStream=). */
int idl__stream_ep_adopt(void *ep, int fd, const struct idl_listen_opts *opts);
int idl__stream_ep_fd(void *ep);
int idl__stream_ep_accept(void *ep, void *conn);
void idl__stream_ep_close(void *ep);
void idl__stream_ep_fini(void *ep);
void idl__stream_conn_close(void *conn);
void idl__stream_conn_fini(void *conn);
int idl__stream_conn_cred(void *conn, struct idl_cred *cred);

/* stream.c: the blocking send and receive. */
/* conn_send: one frame, after the rest of an earlier one a non-blocking send left. */
int idl__stream_conn_send(void *conn, const struct idl_xmsg *m, struct idl_deadline *dl);
/* Its general path, the only one of a connection with a layer (io). */
int idl__stream_send_gen(struct stream_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl);
/* The error for errno e on c: a close (IDL_ECLOSED), the layer's own, the peer's death
 * (MIG_SERVER_DIED) or a system error. */
int idl__stream_conn_err(struct stream_conn *c, int e);
/* A buffer that bytes are appended to and taken from the front of: *p (malloc()ed), the
 * bytes at off..off+len of cap. */
struct stream_buf {
	unsigned char **p;
	size_t off, len, cap;
};
/* Appends n bytes, moving what the buffer holds to the front of a larger one when they do not
 * fit (its first size `min`, doubled as needed): 0, or -1 when out of memory. */
int idl__stream_buf_put(struct stream_buf *b, const void *p, size_t n, size_t min);
/* Appends n bytes to c's carry buffer (grown as needed): 0 or IDL_ENOMEM. */
int idl__stream_carry_put(struct stream_conn *c, const void *p, size_t n);
/* The blocking receive: one whole frame, from the carry buffer first. */
int idl__stream_conn_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *dl);
/* Its general path, going on from what the fast path's recvmsg returned (`raw`, sys_raw.h,
 * and the prefix it read), or from nothing (IDL_RAW_NONE, 0): a layer's connection's. */
int idl__stream_recv_gen(struct stream_conn *c, struct idl_xmsg *m, struct idl_deadline *dl,
			 long raw, uint32_t prefix);
/* The rest of a frame with descriptors (out-of-line data after the arguments), of which
 * body bytes are in m already. */
int idl__stream_recv_desc(struct stream_conn *c, struct idl_xmsg *m, uint32_t len, size_t body,
			  struct idl_deadline *dl);

/* stream_connect.c: conn_connect, and its non-blocking form (idl_transport.h). */
int idl__stream_conn_connect(void *conn, const char *rest, struct idl_deadline *dl);
int idl__stream_connect_nb(void *conn, const char *rest);
int idl__stream_connect_step(void *conn);

/* stream_nb.c: the non-blocking operations (idl_transport.h has their contract). */
int idl__stream_conn_fd(void *conn, unsigned *events);
int idl__stream_conn_sendv_nb(void *conn, const struct idl_xmsg *msgs, unsigned n);
int idl__stream_conn_recv_nb(void *conn, struct idl_xmsg *m);
int idl__stream_conn_recv_wait(void *conn, struct idl_xmsg *m, int timeout_ms);
/* Their general paths, `raw` as above: a layer's connection sends and receives with these
 * (wait_ms: conn_recv_wait's timeout, 0 for conn_recv_nb). */
int idl__stream_sendv_nb_gen(struct stream_conn *c, const struct idl_xmsg *msgs, unsigned n,
			     long raw);
int idl__stream_recv_nb_gen(struct stream_conn *c, struct idl_xmsg *m, int wait_ms, long raw);

/* stream_rx.c: a frame with out-of-line data received into its blocks across receives. */
/* Takes a frame into c->rx when it is a message with out-of-line data, not whole yet (`have`
 * of its `len` bytes, prefix not counted, are at `body`), whose message is all there, fits
 * `cap` and has a layout that checks out: 1, the bytes at `body` copied (the caller drops
 * them); 0 leaves the frame to the caller. */
int idl__stream_rx_start(struct stream_conn *c, const unsigned char *body, size_t have,
			 uint32_t len, size_t cap);
/* Goes on receiving c->rx's frame: 0 and the message in m once it is whole (IDL_EMSGSIZE,
 * the frame dropped, if it no longer fits m); otherwise the receive's error, c->rx kept
 * when it is the deadline's. Each wait is bounded by dl as the blocking receive's are;
 * `linger`: a wait that ends without bytes is IDL_EAGAIN, and each wait after bytes came
 * is dl's whole timeout again (the non-blocking and lingering receives). */
int idl__stream_rx_recv(struct stream_conn *c, struct idl_xmsg *m, struct idl_deadline *dl,
			int linger);
/* Frees c->rx and its blocks (a connection's end). */
void idl__stream_rx_drop(struct stream_conn *c);

#endif /* IDL_TRANSPORTS_SOCK_STREAM_H */
