/*
 * udp.c - the udp: transport, "udp:HOST:PORT" (inet.h has the syntax; docs/transports/udp.md
 * the semantics).
 *
 * One datagram per message. The client's socket is connected, so a send is a plain send()
 * (cheaper than sendto(), seed 003) and an ICMP port-unreachable comes back as
 * ECONNREFUSED on the next receive: a call to a dead server fails at once.
 *
 * Datagrams get lost and duplicated, so:
 *   - the client keeps a copy of every request awaiting its reply, and conn_recv (for a
 *     pollable port, conn_resend: udp_nb.c) resends it, with the same sequence number,
 *     each time its retransmission timeout passes: the
 *     timeout starts from the measured round trip (RFC 6298's estimator, between UDP_RTO_MIN
 *     and UDP_RTO_MAX; UDP_RTO_INIT before any sample), doubles at each resend up to
 *     UDP_RTO_MAX, and resending stops at the call's deadline (or UDP_RETRY_WINDOW);
 *   - the server keeps a duplicate-reply cache keyed by the client's address and sequence
 *     number (and a fingerprint of the request, so that a reused number with other bytes is
 *     a new request): ep_recv answers a duplicate of a completed request from the cache and
 *     drops a duplicate of a request still in progress (or of a one-way message) without
 *     delivering it, and ep_reply stores the reply. A routine therefore runs at most once
 *     per request while the cache holds its entry: up to UDP_CACHE_ENTRIES entries and
 *     UDP_CACHE_BYTES of replies, each for UDP_CACHE_AGE, oldest dropped first. The age is
 *     longer than the window in which a client resends.
 * The receive waits with a cached SO_RCVTIMEO set to the next resend (or the deadline), so
 * the fast path is still one send and one receive per call and no poll.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "sock/inet.h"
#include "sock/sock_adopt.h"
#include "sock/sock_timeo.h"
#include "udp_cache.h"
#include "udp_impl.h"

/* ---- What both sides share ---- */

int
idl__udp_received_desc(const char *name, struct idl_xmsg *m, size_t n, const unsigned char *spill)
{
	/* The part of idl__udp_received() (udp_impl.h) out of line: a message with descriptors. */
	size_t got = n < m->cap ? n : m->cap;
	const idl_msg_header_t *h = m->data;
	struct idl__ool_span sp;
	int err;

	/* A size field beyond the datagram is a lie, not a large message. */
	if (h->size > n)
		return idl__desc_refused(
			m, n,
			idl__fail(IDL_EPROTO, "udp:%s: a %u-byte message in a %zu-byte datagram",
				  name, h->size, n));
	if (h->size > got || n > (size_t)m->cap + UDP_SPILL)
		return idl__desc_refused(m, n, IDL_EMSGSIZE);
	sp = (struct idl__ool_span){ h->size, (const unsigned char *)m->data + h->size,
				     got - h->size, spill, n - got };
	if ((err = idl__ool_inline_in(m->data, h->size, n, "udp", idl__ool_span_read, &sp)) != 0)
		return err;
	m->len = h->size;
	return 0;
}

int
idl__udp_flatten(const char *name, size_t limit, const struct idl_xmsg *m, struct idl_xmsg *flat)
{
	struct iovec iov[IDL__OOL_IOV_MAX];
	struct idl__ool_out o;
	unsigned char *p;
	int err;

	o.iov = iov;
	if ((err = idl__ool_inline_out(m, "udp", &o)) != 0)
		return err;
	if (o.total > limit)
		return idl__fail(IDL_EMSGSIZE,
				 "udp:%s: message of %zu bytes (%zu of them out of "
				 "line) exceeds the datagram limit of %zu bytes",
				 name, o.total, o.inline_bytes, limit);
	if ((p = malloc(o.total)) == NULL)
		return idl__fail(IDL_ENOMEM, "udp:%s: out of memory", name);
	memset(flat, 0, sizeof *flat);
	flat->data = p;
	flat->len = o.total;
	for (unsigned i = 0; i < o.niov; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	return 0;
}

/* ---- The client ---- */

static int
udp_conn_connect(void *vconn, const char *rest, struct idl_deadline *dl)
{
	struct udp_conn *c = vconn;
	struct inet_addrs as;
	int err, fd;

	(void)dl; /* connecting a datagram socket sends nothing and does not wait */
	if ((err = idl__inet_resolve("udp", rest, 0, &as)) != 0)
		return err;
	snprintf(c->name, sizeof c->name, "%s", rest);
	c->outs_end = &c->outs;
	c->rto_ns = UDP_RTO_INIT;
	c->rto_us = udp_rto_us(c->rto_ns);
	if ((c->spill = malloc(UDP_SPILL)) == NULL)
		return IDL_ENOMEM;
	/* One socket, to the first address: a datagram cannot tell which of several would
	 * answer, so a name with many addresses uses the resolver's preferred one. */
	if ((fd = idl__inet_socket("udp", &as.a[0], SOCK_DGRAM, 0, 0)) < 0)
		return idl__inet_sysfail(IDL_SYSERR_ERRNO(fd), "udp", rest, "socket");
	c->fd = fd;
	c->open = 1;
	idl__sock_ra_init(&c->ra);
	c->limit = as.a[0].sa.ss_family == AF_INET6 ? UDP_LIMIT_V6 : UDP_LIMIT_V4;
	if (connect(fd, (struct sockaddr *)&as.a[0].sa, as.a[0].len) != 0)
		return idl__inet_sysfail(errno, "udp", rest, "connect");
	if (idl__inet_self(fd))
		return idl__inet_sysfail(ECONNREFUSED, "udp", rest, "connect");
	return 0;
}

/* The server's port answered with ICMP port-unreachable: nothing listens there. */
int
idl__udp_refused(struct udp_conn *c)
{
	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	if (c->answered)
		return idl__fail(MIG_SERVER_DIED,
				 "udp:%s: the server is gone (ICMP port "
				 "unreachable)",
				 c->name);
	return idl__fail(IDL_ECONNREFUSED,
			 "udp:%s: no server at the address (ICMP port "
			 "unreachable)",
			 c->name);
}

static inline __attribute__((always_inline)) void
udp_out_free(struct udp_conn *c, struct udp_out *o)
{
	/* The one spare first: a call alone uses no more. */
	if (c->spare == NULL) {
		c->spare = o;
		return;
	}
	if (c->nspares < UDP_SPARE_MAX && o->cap <= UDP_SPARE_BYTES) {
		o->next = c->spares;
		c->spares = o;
		c->nspares++;
		return;
	}
	free(o->data);
	free(o);
}

/* Keeps a copy of a request for resending. Lock held. */
static inline __attribute__((always_inline)) struct udp_out *
udp_out_add(struct udp_conn *c, const struct idl_xmsg *m, const struct idl_deadline *dl)
{
	struct udp_out *o = c->spare;

	if (o != NULL) {
		c->spare = NULL;
	} else if ((o = c->spares) != NULL) {
		c->spares = o->next;
		c->nspares--;
	} else if ((o = calloc(1, sizeof *o)) == NULL) {
		return NULL;
	}
	if (o->cap < m->len) {
		unsigned char *nd = malloc(m->len);

		if (nd == NULL) {
			udp_out_free(c, o);
			return NULL;
		}
		free(o->data);
		o->data = nd;
		o->cap = m->len;
	}
	memcpy(o->data, m->data, m->len);
	o->len = (uint32_t)m->len;
	o->seqno = udp_seqno(m->data);
	o->ms = dl->ms;
	o->deadline = dl->abs_ns != 0		       ? dl->abs_ns
		      : dl->ms == IDL_DEADLINE_MS_NONE ? IDL_DEADLINE_NONE
						       : 0;
	o->rto_ns = c->rto_ns;
	o->sends = 1;
	o->sampled = c->srtt_ns == 0 || ++c->nsent % UDP_SAMPLE_EVERY == 0;
	o->first_ns = o->sampled ? idl_now_ns() : 0;
	o->next_ns = o->sampled ? o->first_ns + o->rto_ns : 0;
	/* Kept in the order sent: replies mostly come in that order, so the one a reply
	 * answers is usually the first (udp_answered). */
	o->next = NULL;
	*c->outs_end = o;
	c->outs_end = &o->next;
	return o;
}

/* Takes o, which *pp points to, off the list. */
static void
udp_out_cut(struct udp_conn *c, struct udp_out **pp, struct udp_out *o)
{
	*pp = o->next;
	if (c->outs_end == &o->next)
		c->outs_end = pp;
}

static void
udp_out_unlink(struct udp_conn *c, struct udp_out *o)
{
	struct udp_out **pp = &c->outs;

	while (*pp != NULL && *pp != o)
		pp = &(*pp)->next;
	if (*pp == o)
		udp_out_cut(c, pp, o);
}

static int udp_conn_send_bytes(struct udp_conn *c, const struct idl_xmsg *m,
			       struct idl_deadline *dl);

static int
udp_conn_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct udp_conn *c = vconn;
	struct idl_xmsg flat;
	int err;

	if (!idl__desc_msg(m->data, m->len))
		return udp_conn_send_bytes(c, m, dl);
	if ((err = idl__udp_flatten(c->name, c->limit, m, &flat)) == 0) {
		err = udp_conn_send_bytes(c, &flat, dl);
		free(flat.data);
	}
	idl__msg_release_sent(m->data);
	return err;
}

static int
udp_conn_send_bytes(struct udp_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct udp_out *o = NULL;

	if (m->len > c->limit)
		return idl__fail(IDL_EMSGSIZE,
				 "udp:%s: message of %zu bytes exceeds the "
				 "datagram limit of %zu bytes",
				 c->name, m->len, c->limit);
	/* Everything that may get a reply is kept for resending: all but one-way messages
	 * (and runts, whose reply could not be matched). */
	if (m->len >= UDP_KEYED_MIN &&
	    ((const idl_msg_header_t *)m->data)->kind != IDL_KIND_ONEWAY) {
		idl__lock_take(&c->lock);
		o = udp_out_add(c, m, dl);
		idl__lock_give(&c->lock);
		if (o == NULL)
			return IDL_ENOMEM;
	}
	for (;;) {
		int t = idl__sock_timeo(c->fd, SO_SNDTIMEO, &c->sndtimeo_us, dl);
		ssize_t n;

		if (t < 0)
			return t;
		n = idl__sys_send(c->fd, m->data, m->len,
				  MSG_NOSIGNAL | (t == 1 ? MSG_DONTWAIT : 0));
		if (n >= 0)
			return 0;
		if (errno == EINTR) {
			idl__sock_again(dl);
			continue;
		}
		/* A request dropped on the way out (a full queue, a firewall) is resent like
		 * one lost on the wire, until its deadline. */
		if (o != NULL && udp_lost_on_the_way(errno))
			return 0;
		if (errno == EAGAIN) {
			if (t == 1 || idl__sock_late(dl))
				return IDL_ETIMEDOUT;
			continue;
		}
		if (o != NULL) {
			idl__lock_take(&c->lock);
			udp_out_unlink(c, o);
			udp_out_free(c, o);
			idl__lock_give(&c->lock);
		}
		if (errno == ECONNREFUSED)
			return idl__udp_refused(c);
		if (errno == EMSGSIZE)
			return idl__fail(IDL_EMSGSIZE, "udp:%s: message of %zu bytes: %s", c->name,
					 m->len, strerror(EMSGSIZE));
		if (atomic_load_explicit(&c->closed, memory_order_relaxed))
			return IDL_ECLOSED;
		return IDL_ESYSERR(errno);
	}
}

/* A reply to request o came after one transmission: a round-trip sample (Karn). */
static inline __attribute__((always_inline)) void
udp_rtt_sample(struct udp_conn *c, int64_t r)
{
	if (c->srtt_ns == 0) {
		c->srtt_ns = r;
		c->rttvar_ns = r / 2;
	} else {
		int64_t d = c->srtt_ns > r ? c->srtt_ns - r : r - c->srtt_ns;

		c->rttvar_ns += (d - c->rttvar_ns) / 4;
		c->srtt_ns += (r - c->srtt_ns) / 8;
	}
	c->rto_ns = c->srtt_ns + 4 * c->rttvar_ns;
	if (c->rto_ns < UDP_RTO_MIN)
		c->rto_ns = UDP_RTO_MIN;
	if (c->rto_ns > UDP_RTO_MAX)
		c->rto_ns = UDP_RTO_MAX;
	c->rto_us = udp_rto_us(c->rto_ns);
}

/* Resends what is due, forgets what is past its deadline, and says when the next resend
 * is due. A request whose times are not known yet was sent before the wait that just ran
 * out began, `waited` ns ago (or later: its resend then comes early, which the server's
 * cache makes harmless). Returns 0 or a refusal. Lock held. */
int
idl__udp_resend_due(struct udp_conn *c, int64_t now, int64_t waited, int64_t *wake)
{
	struct udp_out **pp = &c->outs;

	while (*pp != NULL) {
		struct udp_out *o = *pp;

		if (o->first_ns == 0) {
			o->first_ns = now - waited;
			o->next_ns = o->first_ns + o->rto_ns;
		}
		if (o->deadline == 0)
			o->deadline = o->first_ns + (int64_t)o->ms * MS;
		if (now >= o->deadline || now - o->first_ns >= UDP_RETRY_WINDOW) {
			udp_out_cut(c, pp, o);
			udp_out_free(c, o);
			continue;
		}
		if (o->next_ns <= now) {
			if (send(c->fd, o->data, o->len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
			    errno == ECONNREFUSED)
				return idl__udp_refused(c);
			o->sends++;
			o->rto_ns = 2 * o->rto_ns > UDP_RTO_MAX ? UDP_RTO_MAX : 2 * o->rto_ns;
			o->next_ns = now + o->rto_ns;
		}
		if (o->next_ns < *wake)
			*wake = o->next_ns;
		pp = &o->next;
	}
	return 0;
}

/* A reply came for the request of `seqno`: it is forgotten, and its round trip sampled if
 * it was timed and sent once (Karn). Lock held. */
static inline __attribute__((always_inline)) void
udp_answered(struct udp_conn *c, uint32_t seqno)
{
	c->answered = 1;
	for (struct udp_out **pp = &c->outs, *o; (o = *pp) != NULL; pp = &o->next) {
		if (o->seqno != seqno)
			continue;
		if (o->sampled && o->sends == 1)
			udp_rtt_sample(c, idl_now_ns() - o->first_ns);
		udp_out_cut(c, pp, o);
		udp_out_free(c, o);
		return;
	}
}

void
idl__udp_forget(struct udp_conn *c, uint32_t seqno)
{
	for (struct udp_out **pp = &c->outs, *o; (o = *pp) != NULL; pp = &o->next) {
		if (o->seqno == seqno) {
			udp_out_cut(c, pp, o);
			udp_out_free(c, o);
			return;
		}
	}
}

/* Sets the socket's receive timeout to exactly `us` microseconds, if it is not that. */
static int
udp_rcvtimeo(struct udp_conn *c, int64_t us)
{
	struct timeval tv;

	if (c->rcvtimeo_us == us)
		return 0;
	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
		return IDL_ESYSERR(errno);
	c->rcvtimeo_us = us;
	return 0;
}

/*
 * Receives the next reply. The first wait is bounded by the retransmission timeout, or by
 * the call's own timeout when that is shorter, both set exactly on the socket: a reply
 * within it costs no clock read. Once a wait ran out (or was cut short, or the deadline
 * came anchored), the times are read: what is due is resent, and each wait is bounded by
 * the next resend or the deadline, whichever is first.
 */
static int
udp_conn_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct udp_conn *c = vconn;
	int slow = dl->abs_ns != 0;
	int64_t waited = 0;

	m->nfds = 0;
	for (;;) {
		struct iovec iov[2] = { { m->data, m->cap }, { c->spill, UDP_SPILL } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		int64_t want = 0;
		int bound = 0; /* the wait is bounded by the call's timeout, not a resend */
		ssize_t n;
		int t = 0, err;

		if (!slow) {
			want = c->rto_us;
			if (dl->ms >= 0 && (int64_t)dl->ms * 1000 <= want) {
				want = (int64_t)dl->ms * 1000;
				bound = 1;
			}
			if (want == 0)
				t = 1;
			else if ((err = udp_rcvtimeo(c, want)) != 0)
				return err;
		} else {
			int64_t now = idl_now_ns(), wake = idl_deadline_abs(dl);
			struct idl_deadline w;

			idl__lock_take(&c->lock);
			err = idl__udp_resend_due(c, now, waited, &wake);
			idl__lock_give(&c->lock);
			if (err != 0)
				return err;
			waited = 0;
			w = idl_deadline_at(wake);
			if ((t = idl__sock_timeo(c->fd, SO_RCVTIMEO, &c->rcvtimeo_us, &w)) < 0)
				return t;
		}
		/* Replies a pollable port's receive read ahead are handed out first. */
		if (__builtin_expect(c->ra.left != 0, 0))
			n = idl__sock_ra_pop(&c->ra, &mh);
		else
			n = idl__sys_recvmsg(c->fd, &mh, MSG_TRUNC | (t == 1 ? MSG_DONTWAIT : 0));
		if (atomic_load_explicit(&c->closed, memory_order_relaxed))
			return IDL_ECLOSED;
		if (n >= 0) {
			size_t got = (size_t)n < m->cap ? (size_t)n : m->cap;

			idl__lock_take(&c->lock);
			if (got >= UDP_KEYED_MIN)
				udp_answered(c, udp_seqno(m->data));
			else
				c->answered = 1;
			/* Other requests wait too (other threads' calls, or calls that gave up
			 * before their reply came): keep their resends going, and forget those
			 * past their deadline. A call alone finds none here. */
			if (c->outs != NULL) {
				int64_t wake = IDL_DEADLINE_NONE;

				(void)idl__udp_resend_due(c, idl_now_ns(), 0, &wake);
			}
			idl__lock_give(&c->lock);
			return idl__udp_received(c->name, m, (size_t)n, c->spill);
		}
		if (errno == ECONNREFUSED)
			return idl__udp_refused(c);
		if (errno != EAGAIN && errno != EINTR)
			return IDL_ESYSERR(errno);
		if (!slow) {
			/* The whole timeout ran out in this one wait: the call is late. */
			if (errno == EAGAIN && (bound || t == 1))
				return IDL_ETIMEDOUT;
			/* The retransmission timeout ran out (or a signal cut the wait short):
			 * from here on the times are read. */
			if (errno == EAGAIN) {
				waited = want * 1000;
				idl_deadline_start(dl, idl_now_ns() - waited);
			} else {
				idl__sock_again(dl);
			}
			slow = 1;
			continue;
		}
		if (idl_deadline_passed(dl))
			return IDL_ETIMEDOUT;
	}
}

static void
udp_conn_close(void *vconn)
{
	struct udp_conn *c = vconn;

	atomic_store(&c->closed, 1);
	if (c->open)
		shutdown(c->fd, SHUT_RDWR);
}

static void
udp_conn_fini(void *vconn)
{
	struct udp_conn *c = vconn;

	if (c->open)
		close(c->fd);
	c->open = 0;
	idl__sock_ra_free(&c->ra);
	while (c->outs != NULL) {
		struct udp_out *o = c->outs;

		c->outs = o->next;
		free(o->data);
		free(o);
	}
	if (c->spare != NULL) {
		free(c->spare->data);
		free(c->spare);
		c->spare = NULL;
	}
	while (c->spares != NULL) {
		struct udp_out *o = c->spares;

		c->spares = o->next;
		free(o->data);
		free(o);
	}
	c->nspares = 0;
	free(c->spill);
	c->spill = NULL;
}

/* The operations udp_nb.c shares, as calls: here they stay in line where they are used. */
struct udp_out *
idl__udp_out_add(struct udp_conn *c, const struct idl_xmsg *m, const struct idl_deadline *dl)
{
	return udp_out_add(c, m, dl);
}

void
idl__udp_answered(struct udp_conn *c, uint32_t seqno)
{
	udp_answered(c, seqno);
}

static const struct idl_transport udp_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "udp",
	.flags = IDL_TRF_DGRAM | IDL_TRF_DESC,
	.ep_size = sizeof(struct udp_ep),
	.conn_size = sizeof(struct udp_conn),
	.ep_listen = idl__udp_ep_listen,
	.ep_fd = idl__udp_ep_fd,
	.ep_recv = idl__udp_ep_recv,
	.ep_reply = idl__udp_ep_reply,
	.ep_close = idl__udp_ep_close,
	.ep_fini = idl__udp_ep_fini,
	.conn_connect = udp_conn_connect,
	.conn_send = udp_conn_send,
	.conn_recv = udp_conn_recv,
	.conn_close = udp_conn_close,
	.conn_fini = udp_conn_fini,
	.conn_fd = idl__udp_conn_fd,
	.conn_sendv_nb = idl__udp_conn_sendv_nb,
	.conn_recv_nb = idl__udp_conn_recv_nb,
	.conn_resend = idl__udp_conn_resend,
	.conn_forget = idl__udp_conn_forget,
	.ep_adopt = idl__udp_ep_adopt,
};

void
idl__udp_register(void)
{
	int err = idl_transport_register(&udp_transport);

	assert(err == 0);
	(void)err;
}
