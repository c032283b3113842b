/*
 * udp_nb.c - the udp: client's operations for a pollable port (calls in flight): sends and
 * receives that never block, and resends asked for by the port's loop, which has no thread
 * waiting in conn_recv to make them.
 *
 * A request taken by conn_sendv_nb is kept for resending as the blocking send keeps it
 * (udp.c), with no deadline of its own: it is resent until its reply comes, the port says
 * its call ended (conn_forget) or UDP_RETRY_WINDOW passes. A datagram this host dropped on
 * its way out (a full socket buffer, a firewall rule refusing it) counts as sent: it is lost
 * as one lost on the wire, and resent like one. The estimator of the round trip is the blocking
 * path's: replies sampled here set the timeout of both.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sendmmsg, struct mmsghdr */
#endif

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>

#include "udp_impl.h"

/* The most datagrams one sendmmsg() takes. */
#define UDP_NB_BATCH 64

int
idl__udp_conn_fd(void *vconn, unsigned *events)
{
	struct udp_conn *c = vconn;

	/* Nothing is ever held for writing: a datagram goes whole or counts as lost. */
	*events = IDL_TR_EV_IN | (c->ra.left != 0 ? IDL_TR_EV_MORE : 0);
	return c->open ? c->fd : -1;
}

/* Keeps copies of msgs[0..n) for resending: how many were kept (all but when out of
 * memory). One-way messages and runts get no reply, and are not kept. Lock held. */
static unsigned
udp_nb_keep(struct udp_conn *c, const struct idl_xmsg *msgs, unsigned n)
{
	struct idl_deadline none = { 0, IDL_DEADLINE_MS_NONE };

	for (unsigned i = 0; i < n; i++) {
		if (msgs[i].len < UDP_KEYED_MIN ||
		    ((const idl_msg_header_t *)msgs[i].data)->kind == IDL_KIND_ONEWAY)
			continue;
		if (idl__udp_out_add(c, &msgs[i], &none) == NULL)
			return i;
	}
	return n;
}

int
idl__udp_conn_sendv_nb(void *vconn, const struct idl_xmsg *msgs, unsigned n)
{
	struct udp_conn *c = vconn;
	struct mmsghdr mm[UDP_NB_BATCH];
	struct iovec iov[UDP_NB_BATCH];
	unsigned done = 0;

	while (done < n) {
		unsigned k = 0, kept;
		int r;

		/* A message with descriptors is flattened into one datagram by the blocking
		 * send, which the port uses for what this refuses. */
		if (idl__desc_msg(msgs[done].data, msgs[done].len))
			return done > 0 ? (int)done : IDL_ENOTSUP;
		if (msgs[done].len > c->limit)
			return done > 0 ? (int)done
					: idl__fail(IDL_EMSGSIZE,
						    "udp:%s: message of %zu bytes exceeds the "
						    "datagram limit of %zu bytes",
						    c->name, msgs[done].len, c->limit);
		while (done + k < n && k < UDP_NB_BATCH &&
		       !idl__desc_msg(msgs[done + k].data, msgs[done + k].len) &&
		       msgs[done + k].len <= c->limit)
			k++;
		idl__lock_take(&c->lock);
		kept = udp_nb_keep(c, &msgs[done], k);
		idl__lock_give(&c->lock);
		if (kept == 0)
			return done > 0 ? (int)done : IDL_ENOMEM;
		k = kept;
		memset(mm, 0, k * sizeof mm[0]);
		for (unsigned i = 0; i < k; i++) {
			iov[i] = (struct iovec){ msgs[done + i].data, msgs[done + i].len };
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		do
			r = sendmmsg(c->fd, mm, k, MSG_DONTWAIT | MSG_NOSIGNAL);
		while (r < 0 && errno == EINTR);
		if (r < 0 && errno == ECONNREFUSED)
			return idl__udp_refused(c);
		if (r < 0 && !udp_lost_on_the_way(errno)) {
			if (atomic_load_explicit(&c->closed, memory_order_relaxed))
				return IDL_ECLOSED;
			return IDL_ESYSERR(errno);
		}
		/* What the kernel did not take now is kept: its resend sends it. */
		done += k;
	}
	return (int)done;
}

int
idl__udp_conn_recv_nb(void *vconn, struct idl_xmsg *m)
{
	struct udp_conn *c = vconn;
	struct iovec iov[2] = { { m->data, m->cap }, { c->spill, UDP_SPILL } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;
	size_t got;

	m->nfds = 0;
	/* With many calls in flight the replies come in runs: one recvmmsg() takes a run
	 * (sock/sock_ra.h), and the receives after it hand it out. */
	if (c->ra.left != 0)
		n = idl__sock_ra_pop(&c->ra, &mh);
	else if (--c->ra.wait == 0)
		do
			n = idl__sock_ra_recv(&c->ra, c->fd, &mh, MSG_TRUNC | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
	else
		do
			n = idl__sys_recvmsg(c->fd, &mh, MSG_TRUNC | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	if (n < 0) {
		if (errno == EAGAIN)
			return IDL_EAGAIN;
		if (errno == ECONNREFUSED)
			return idl__udp_refused(c);
		return IDL_ESYSERR(errno);
	}
	got = (size_t)n < m->cap ? (size_t)n : m->cap;
	idl__lock_take(&c->lock);
	if (got >= UDP_KEYED_MIN)
		idl__udp_answered(c, udp_seqno(m->data));
	else
		c->answered = 1;
	idl__lock_give(&c->lock);
	return idl__udp_received(c->name, m, (size_t)n, c->spill);
}

int
idl__udp_conn_resend(void *vconn, int64_t now, int64_t *next)
{
	struct udp_conn *c = vconn;
	int err;

	*next = IDL_DEADLINE_NONE;
	idl__lock_take(&c->lock);
	err = c->outs != NULL ? idl__udp_resend_due(c, now, 0, next) : 0;
	idl__lock_give(&c->lock);
	return err;
}

void
idl__udp_conn_forget(void *vconn, uint32_t seqno)
{
	struct udp_conn *c = vconn;

	idl__lock_take(&c->lock);
	idl__udp_forget(c, seqno);
	idl__lock_give(&c->lock);
}
