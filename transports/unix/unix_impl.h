/*
 * unix_impl.h - what the two files of the unix: transport share: unix.c has the socket and
 * the fast path, unix_desc.c the descriptors a message carries (out-of-line data
 * in sealed memfds, ports as connections, both passed with SCM_RIGHTS).
 */
#ifndef IDL_TRANSPORTS_UNIX_IMPL_H
#define IDL_TRANSPORTS_UNIX_IMPL_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sock/sock_ra.h"
#include "sock/sockfile.h"
#include "transport_kit.h"

/* The largest out-of-line datum that travels inline after its message rather than in a
 * memfd (docs/transports/unix.md): up to here, copying the bytes through the socket costs
 * less than making, filling, passing and mapping a memfd (measured at 16 KiB to 200 KiB on
 * one CPU and two: inline is 2.5x to 4x the rate). It is the transport's own, apart from
 * IDL_OOL_MAP_MIN (which splits the out-of-line cache's classes), and bounded by the
 * socket's send buffer, which the kernel's default of 208 KiB leaves room for; a message
 * that would not fit the connection's send buffer so carries its data of IDL_OOL_MAP_MIN
 * bytes or more in memfds instead (unix_desc.c). 64 KiB rather than more, though inline
 * still wins above it: a receiver of the earlier releases takes at most 64 KiB beyond its
 * buffer, and a peer across an upgrade must still get every message. */
#define UNIX_INLINE_MAX (64u * 1024u)
/* The most a message carries inline after itself (out-of-line data up to UNIX_INLINE_MAX,
 * the file descriptor numbers of arrays of ports): what a receive can take beyond the
 * caller's buffer. Data beyond it travels in a memfd. */
#define UNIX_SPILL UNIX_INLINE_MAX

struct unix_conn {
	int fd;
	int open;
	atomic_int closed; /* conn_close was called: errors after it are IDL_ECLOSED */
	int64_t rcvtimeo_us; /* the socket's SO_RCVTIMEO as last set; 0: none (blocks) */
	int64_t sndtimeo_us;
	struct idl_cred cred; /* the peer's, from SO_PEERCRED at connect or accept */
	unsigned char *spill; /* UNIX_SPILL bytes: what a receive brings beyond m->cap */
	struct unix_pend *pend; /* a message with descriptors the kernel did not take yet */
	size_t sndmax; /* the largest packet SO_SNDBUF lets a send take; 0: not read yet */
	struct idl__sock_ra ra; /* messages read ahead (sock/sock_ra.h) */
};

/* A message with descriptors that a non-blocking send could not hand over: its wire form
 * and the descriptors it owns, sent before anything else. */
struct unix_pend {
	unsigned nfds;
	int fds[IDL_DESC_MAX];
	size_t len;
	unsigned char data[]; /* len bytes: the message and its inline data */
};

/* unix.c */
/* Connects c (zeroed) to the socket file `rest`, waiting at most until the deadline. */
int idl__unix_connect(void *conn, const char *rest, struct idl_deadline *dl);
/* One sendmsg of mh, as the fast path sends, with its deadline and its errors. */
int idl__unix_sendmsg(struct unix_conn *c, const struct msghdr *mh, struct idl_deadline *dl);
/* conn_recv: one message, waiting at most until the deadline (none: a zero timeout); it
 * hands out what was read ahead but reads nothing ahead itself. */
int idl__unix_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *dl);
/* The same, reading ahead whenever the peer is found sending several at once. */
int idl__unix_recv_ra(void *conn, struct idl_xmsg *m, struct idl_deadline *dl);
/* Maps an errno from a send or receive on a connection to the transport's error. */
int idl__unix_conn_err(struct unix_conn *c, int e);
/* A client port around a connected socket that arrived in a message; takes fd always. */
int idl__unix_adopt(int fd, idl_port_t *portp);

/* unix_nb.c: the non-blocking operations of a pollable port. */
int idl__unix_fd(void *conn, unsigned *events);
int idl__unix_sendv_nb(void *conn, const struct idl_xmsg *msgs, unsigned n);
int idl__unix_recv_nb(void *conn, struct idl_xmsg *m);

/* unix_desc.c */
int idl__unix_send_desc(struct unix_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl);
/* Hands the message with descriptors m to the kernel without blocking: 1 when it went or
 * is kept as c->pend (m's data released either way), 0 when an earlier one is still kept,
 * IDL_ENOTSUP (nothing written or released) when it cannot go as it is, or an error. */
int idl__unix_send_desc_nb(struct unix_conn *c, const struct idl_xmsg *m);
/* Sends the kept message, waiting at most until the deadline (NULL: not at all): 0 once it
 * is out, IDL_EAGAIN while it waits for room, or an error. */
int idl__unix_pend_flush(struct unix_conn *c, struct idl_deadline *dl);
/* Drops the kept message and closes its descriptors. */
void idl__unix_pend_free(struct unix_conn *c);
/* The file descriptors mh's control data carries (SCM_RIGHTS), the first `max` of them in
 * fds (the count returned), any beyond closed. They are this process's once received. */
unsigned idl__unix_cmsg_fds(const struct msghdr *mh, int *fds, unsigned max);
/* A message of n bytes arrived with mh's control data: its descriptors are converted (or
 * stray file descriptors closed). */
int idl__unix_recv_desc(struct unix_conn *c, struct idl_xmsg *m, const struct msghdr *mh, size_t n);

/* A message received whole (n bytes, mh's control data): its descriptors converted, or
 * IDL_EMSGSIZE when it did not fit. */
static inline int
idl__unix_received(struct unix_conn *c, struct idl_xmsg *m, const struct msghdr *mh, size_t n)
{
	m->len = n;
	if (mh->msg_controllen != 0 || idl__desc_msg(m->data, n < m->cap ? n : m->cap))
		return idl__unix_recv_desc(c, m, mh, n);
	return n > m->cap ? IDL_EMSGSIZE : 0;
}

#endif /* IDL_TRANSPORTS_UNIX_IMPL_H */
