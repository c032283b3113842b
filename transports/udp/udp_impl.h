/*
 * udp_impl.h - the udp: transport's limits and its endpoint, request and connection state,
 * private to udp.c (which says how they are used).
 */
#ifndef IDL_TRANSPORT_UDP_IMPL_H
#define IDL_TRANSPORT_UDP_IMPL_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "sock/sock_ra.h"
#include "transport_kit.h"
#include "udp_cache.h"

#define MS 1000000ll
#define UDP_RTO_INIT (20 * MS)
#define UDP_RTO_MIN (10 * MS)
#define UDP_RTO_MAX (1000 * MS)
#define UDP_RETRY_WINDOW (45000 * MS)
/* The largest UDP payload: 65535 less the IPv4 (20) or only the UDP (8) header. */
#define UDP_LIMIT_V4 65507u
#define UDP_LIMIT_V6 65527u
/* The server's receive buffer, so that a burst of one-way messages is not dropped by the
 * kernel while a routine runs (SO_RCVBUFFORCE where permitted, else up to rmem_max). */
#define UDP_SERVER_RCVBUF (4 << 20)
/* The sequence number sits at this offset of the header (docs/wire-format.md). */
#define UDP_SEQNO_OFF 12u
#define UDP_KEYED_MIN 16u
/* Room beyond the caller's buffer that a receive scatters into: a message with its
 * out-of-line data after it is larger than the buffer sized for the message alone, and a
 * datagram cannot be read twice. Any datagram fits the two together. */
#define UDP_SPILL 65536u

struct udp_ep {
	int fd;
	int open;
	int adopted; /* passed by the service manager: never shut down */
	atomic_int closed;
	int64_t rcvtimeo_us;
	size_t limit;
	struct idl__lock lock; /* the cache: ep_recv and ep_reply may be in two threads */
	struct udp_cache cache;
	unsigned char *spill; /* UDP_SPILL bytes: a datagram's part beyond the caller's buffer */
	struct idl__sock_ra ra; /* reading ahead (sock/sock_ra.h), in the thread that receives */
	/* Replies held until the run read ahead is answered (udp_hold.c; NULL: never held).
	 * Under the lock, but hold_on is written by the receiving thread alone, which reads
	 * it without; nothing is held while it is 0. */
	struct udp_hold *hold;
	int hold_on;
	unsigned nheld;
	char name[80];
};

/* The replies to a run go out together: at most one per datagram of the run, each of at
 * most UDP_HOLD_BYTES (a larger one is sent at once, after those held). */
#define UDP_HOLD_MAX (IDL_SOCK_RA_SLOTS + 1u)
#define UDP_HOLD_BYTES 1024u

/* One request of the client awaiting its reply. Its times are 0 until they are needed: a
 * request is timed when it is sent only when its round trip is to be sampled, and the
 * others get theirs once a wait for replies ran out (udp_resend_due()), so that a call
 * answered within its retransmission timeout reads no clock. */
struct udp_out {
	struct udp_out *next;
	uint32_t seqno;
	uint32_t len;
	size_t cap;
	int64_t deadline; /* absolute; 0: `ms` after first_ns, once that is known */
	int32_t ms;
	int sampled; /* first_ns was read at the send: its reply gives a round-trip sample */
	int64_t first_ns; /* 0: not known yet */
	int64_t next_ns;
	int64_t rto_ns;
	unsigned sends;
	unsigned char *data;
};

/* One request in this many has its round trip measured (and the first one of all): the
 * estimator needs a sample per round trip or so, not one per call, and each costs two
 * clock reads. */
#define UDP_SAMPLE_EVERY 8u

/* The most freed request copies a connection keeps for reuse (a pollable port's calls in
 * flight: 64 in flight reuse 64), and the largest kept: at most 512 KiB a connection. */
#define UDP_SPARE_MAX 64u
#define UDP_SPARE_BYTES 8192u

struct udp_conn {
	int fd;
	int open;
	atomic_int closed;
	int64_t rcvtimeo_us;
	int64_t sndtimeo_us;
	size_t limit;
	struct idl__lock lock; /* outs and the estimator: conn_send and conn_recv overlap */
	struct udp_out *outs; /* in the order sent */
	struct udp_out **outs_end; /* where the next one goes: the last one's next, or &outs */
	/* Freed entries kept for the next requests, so that calls malloc nothing: one, which
	 * is all a call alone needs, then up to UDP_SPARE_MAX more for calls in flight. */
	struct udp_out *spare;
	struct udp_out *spares;
	unsigned nspares;
	int64_t srtt_ns; /* 0: no sample yet */
	int64_t rttvar_ns;
	int64_t rto_ns;
	int64_t rto_us; /* rto_ns as the socket's receive timeout (udp_rto_us), kept with it */
	unsigned nsent; /* requests kept, for UDP_SAMPLE_EVERY */
	int answered; /* something came from the server on this socket */
	unsigned char *spill; /* UDP_SPILL bytes, as the endpoint's */
	/* Replies read ahead by a pollable port's receive (udp_nb.c), handed out by either. */
	struct idl__sock_ra ra;
	char name[80];
};

/* A retransmission timeout as the socket's receive timeout: whole milliseconds, so that a
 * timeout that moves by microseconds from sample to sample leaves the socket alone. */
static inline int64_t
udp_rto_us(int64_t rto_ns)
{
	return (rto_ns + MS - 1) / MS * 1000;
}

/* The request's sequence number, read from its header's bytes. */
static inline uint32_t
udp_seqno(const void *p)
{
	uint32_t s;

	memcpy(&s, (const unsigned char *)p + UDP_SEQNO_OFF, sizeof s);
	return s;
}

/* Whether a send's errno says this host dropped the datagram on its way out: a full queue
 * (EAGAIN, ENOBUFS) or a firewall rule (EPERM: netfilter's drop on output, a cgroup's
 * egress filter). Nothing reached the peer, so nothing ran there: such a datagram is as lost
 * as one dropped on the wire, and a copy kept for retransmission (a request) or in the
 * duplicate-reply cache (a reply) goes again in its time. */
static inline int
udp_lost_on_the_way(int e)
{
	return e == EAGAIN || e == ENOBUFS || e == EPERM;
}

/* udp.c */
int idl__udp_received_desc(const char *name, struct idl_xmsg *m, size_t n,
			   const unsigned char *spill);
/* A datagram of n bytes arrived, its first m->cap bytes in m->data and the rest in spill:
 * 0, IDL_EMSGSIZE, or the error of a malformed message with descriptors. A message with
 * descriptors gets its data read out into memory of its own (idl__udp_received_desc) and
 * m->len is the message's size; anything else that does not fit is IDL_EMSGSIZE. */
static inline int
idl__udp_received(const char *name, struct idl_xmsg *m, size_t n, const unsigned char *spill)
{
	m->len = n;
	if (!idl__desc_msg(m->data, n < m->cap ? n : m->cap))
		return n > m->cap ? IDL_EMSGSIZE : 0;
	return idl__udp_received_desc(name, m, n, spill);
}
/* A message with descriptors as one datagram: the message, then its data (runtime/ool/ool_wire.c),
 * gathered into *flat (malloc'd). A message that no datagram can carry is IDL_EMSGSIZE,
 * naming both sizes. */
int idl__udp_flatten(const char *name, size_t limit, const struct idl_xmsg *m,
		     struct idl_xmsg *flat);
/* The error for an ICMP port-unreachable on c: the server is gone, or was never there. */
int idl__udp_refused(struct udp_conn *c);
/* Keeps a copy of request m for resending until dl (none: UDP_RETRY_WINDOW); NULL when
 * out of memory. Lock held. */
struct udp_out *idl__udp_out_add(struct udp_conn *c, const struct idl_xmsg *m,
				 const struct idl_deadline *dl);
/* Resends what is due at `now`, forgets what is past its deadline or window, and lowers
 * *wake to the next resend: 0, or the refusal. Lock held. */
int idl__udp_resend_due(struct udp_conn *c, int64_t now, int64_t waited, int64_t *wake);
/* A reply to seqno came: its request is forgotten (and timed, if it was sent once). Lock
 * held. */
void idl__udp_answered(struct udp_conn *c, uint32_t seqno);
/* The request of seqno is not resent any more: its call ended without the reply. Lock
 * held. */
void idl__udp_forget(struct udp_conn *c, uint32_t seqno);

/* udp_ep.c: the server's operations (idl_transport.h has their contract). */
int idl__udp_ep_listen(void *ep, const char *rest, const struct idl_listen_opts *opts);
int idl__udp_ep_fd(void *ep);
int idl__udp_ep_recv(void *ep, struct idl_xmsg *m, struct idl_peer *from, struct idl_deadline *dl);
int idl__udp_ep_reply(void *ep, const struct idl_peer *to, const struct idl_xmsg *m);
void idl__udp_ep_close(void *ep);
void idl__udp_ep_fini(void *ep);
int idl__udp_ep_adopt(void *ep, int fd, const struct idl_listen_opts *opts);

/* udp_hold.c. Makes ep->hold (left NULL when out of memory: replies are then never held)
 * and frees it. */
void idl__udp_hold_make(struct udp_ep *ep);
void idl__udp_hold_free(struct udp_ep *ep);
/* Holds a copy of reply `data` to `to` while ep->hold_on: 1, or 0 when it is not held (no
 * run is being answered, the reply is too large, or the room is full). Lock held. */
int idl__udp_hold(struct udp_ep *ep, const struct idl_peer *to, const void *data, size_t len);
/* Sends the replies held, then reply `data` to `to` unless data is NULL, with one
 * sendmmsg(); a datagram the kernel refuses is lost, as any reply may be. Lock held. */
void idl__udp_hold_flush(struct udp_ep *ep, const struct idl_peer *to, const void *data,
			 size_t len);

/* udp_nb.c: the pollable port's operations (idl_transport.h has their contract). */
int idl__udp_conn_fd(void *conn, unsigned *events);
int idl__udp_conn_sendv_nb(void *conn, const struct idl_xmsg *msgs, unsigned n);
int idl__udp_conn_recv_nb(void *conn, struct idl_xmsg *m);
int idl__udp_conn_resend(void *conn, int64_t now, int64_t *next);
void idl__udp_conn_forget(void *conn, uint32_t seqno);

#endif /* IDL_TRANSPORT_UDP_IMPL_H */
