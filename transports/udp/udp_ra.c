/*
 * udp_ra.c - reading ahead on a udp: endpoint. A server whose clients keep many calls in
 * flight would otherwise cost a recvmsg() per datagram; one recvmmsg() takes the datagram
 * the receive waits for and, without waiting for them, every one already queued behind it,
 * which the next receives hand out without a system call - each still goes through the
 * duplicate-reply cache as one received then would.
 *
 * Only a receive that may wait reads ahead (the threaded server's): a caller that tries
 * without waiting (the embedded server) waits for the descriptor's readiness between its
 * receives, which no datagram held here would report. As on unix: (unix_ra.c), every slot
 * has the room the caller's own receive has (its buffer and the spill), since a datagram
 * larger than its buffer is cut; the slots are one private mapping, of which only the pages
 * a datagram touches become memory; every UDP_RA_PROBE-th receive asks for more than one,
 * and reading ahead stays on while receives find several and ends after UDP_RA_QUIET that
 * find one.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* recvmmsg, struct mmsghdr */
#endif

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udp_impl.h"

struct udp_ra {
	size_t map_len; /* the mapping: this header, then the slots */
	size_t slot_cap; /* each slot's room */
	unsigned next; /* the next slot to hand out (1-based: mm[0] is the caller's) */
	unsigned filled; /* slots the last run filled, whose name length the kernel wrote */
	struct mmsghdr mm[UDP_RA_SLOTS + 1];
	struct iovec iov[UDP_RA_SLOTS];
	unsigned char name[UDP_RA_SLOTS][sizeof((struct idl_peer *)0)->addr];
};

/* The mapping's header, rounded so that the slots start on a page. */
static size_t
ra_head_len(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (sizeof(struct udp_ra) + pg - 1) / pg * pg;
}

/* Makes ep->ra with slots of `room` bytes each (ep->ra is NULL or empty): 0 or -1. */
static int
ra_make(struct udp_ep *ep, size_t room)
{
	size_t head = ra_head_len(), len;
	struct udp_ra *ra;
	unsigned char *slots;

	if (room > (SIZE_MAX - head) / UDP_RA_SLOTS)
		return -1;
	len = head + room * UDP_RA_SLOTS;
	ra = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		  -1, 0);
	if (ra == MAP_FAILED)
		return -1;
	idl__udp_ra_free(ep);
	ra->map_len = len;
	ra->slot_cap = room;
	slots = (unsigned char *)ra + head;
	for (unsigned i = 0; i < UDP_RA_SLOTS; i++) {
		struct msghdr *h = &ra->mm[i + 1].msg_hdr;

		ra->iov[i] = (struct iovec){ slots + (size_t)i * room, room };
		h->msg_iov = &ra->iov[i];
		h->msg_iovlen = 1;
		h->msg_name = ra->name[i];
		h->msg_namelen = sizeof ra->name[0];
	}
	ep->ra = ra;
	return 0;
}

ssize_t
idl__udp_ra_recv(struct udp_ep *ep, struct msghdr *mh, int flags)
{
	size_t room = 0;
	int n;

	for (size_t i = 0; i < mh->msg_iovlen; i++)
		room += mh->msg_iov[i].iov_len;
	/* The next receive that reads ahead: the next one while clients send in runs. */
	ep->ra_wait = ep->ra_on ? 1 : UDP_RA_PROBE;
	if ((ep->ra == NULL || ep->ra->slot_cap < room) && ra_make(ep, room) != 0)
		return idl__sys_recvmsg(ep->fd, mh, flags);
	ep->ra->mm[0].msg_hdr = *mh;
	/* The kernel wrote the name length of each slot the last run filled. */
	for (unsigned i = 1; i <= ep->ra->filled; i++)
		ep->ra->mm[i].msg_hdr.msg_namelen = sizeof ep->ra->name[0];
	/* MSG_WAITFORONE: the first datagram is waited for as recvmsg() would (the socket's
	 * timeout bounds it), the rest are taken only if they are there. */
	n = recvmmsg(ep->fd, ep->ra->mm, UDP_RA_SLOTS + 1, flags | MSG_WAITFORONE, NULL);
	if (n <= 0)
		return n;
	*mh = ep->ra->mm[0].msg_hdr;
	ep->ra->filled = (unsigned)n - 1;
	ep->ra->next = 1;
	ep->ra_left = (unsigned)n - 1;
	if (n > 1) {
		ep->ra_on = 1;
		ep->ra_quiet = 0;
	} else if (ep->ra_on && ++ep->ra_quiet >= UDP_RA_QUIET) {
		ep->ra_on = 0;
	}
	ep->ra_wait = ep->ra_on ? 1 : UDP_RA_PROBE;
	return (ssize_t)ep->ra->mm[0].msg_len;
}

ssize_t
idl__udp_ra_pop(struct udp_ep *ep, struct msghdr *mh)
{
	struct udp_ra *ra = ep->ra;
	unsigned i = ra->next++;
	const struct msghdr *h = &ra->mm[i].msg_hdr;
	size_t n = ra->mm[i].msg_len;
	/* What the slot holds: all of the datagram unless the kernel cut it (MSG_TRUNC). */
	size_t left = n < ra->slot_cap ? n : ra->slot_cap;
	const unsigned char *p = h->msg_iov[0].iov_base;
	socklen_t nl = h->msg_namelen < mh->msg_namelen ? h->msg_namelen : mh->msg_namelen;

	ep->ra_left--;
	/* Spread over the caller's buffers as its own receive would have put it. */
	for (size_t k = 0; k < mh->msg_iovlen && left > 0; k++) {
		size_t c = left < mh->msg_iov[k].iov_len ? left : mh->msg_iov[k].iov_len;

		memcpy(mh->msg_iov[k].iov_base, p, c);
		p += c;
		left -= c;
	}
	memcpy(mh->msg_name, h->msg_name, nl);
	mh->msg_namelen = h->msg_namelen;
	return (ssize_t)n;
}

void
idl__udp_ra_free(struct udp_ep *ep)
{
	if (ep->ra == NULL)
		return;
	munmap(ep->ra, ep->ra->map_len);
	ep->ra = NULL;
	ep->ra_left = 0;
}
