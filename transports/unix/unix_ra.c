/*
 * unix_ra.c - reading ahead on a unix: connection. A peer with many messages in flight (a
 * pipelining client, a server answering a batch) would otherwise cost one recvmsg() per
 * message; one recvmmsg() takes the message the caller waits for and, without waiting for
 * them, every one already queued behind it, which later receives hand out without a
 * system call.
 *
 * A seqpacket message larger than the buffer it is received into is cut and its rest is
 * lost, so every slot has the room the caller's own receive has: its buffer and the spill.
 * The slots are one private mapping, of which only the pages a message touches become
 * memory. A connection starts without it: every UNIX_RA_PROBE-th receive asks for more than
 * one message, and reading ahead stays on while receives find several and ends after
 * UNIX_RA_QUIET that find one, so that a caller making one call at a time pays a
 * recvmmsg() in sixteen receives and nothing else.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* recvmmsg, struct mmsghdr */
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unix_impl.h"

union unix_ra_cm {
	struct cmsghdr h;
	char buf[CMSG_SPACE(sizeof(int) * IDL_DESC_MAX)];
};

struct unix_ra {
	size_t map_len; /* the mapping: this header, then the slots */
	size_t slot_cap; /* each slot's room */
	unsigned next; /* the next slot to hand out (1-based: mm[0] is the caller's) */
	struct mmsghdr mm[UNIX_RA_SLOTS + 1];
	struct iovec iov[UNIX_RA_SLOTS];
	union unix_ra_cm cm[UNIX_RA_SLOTS];
};

/* The mapping's header, rounded so that the slots start on a page. */
static size_t
ra_head_len(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (sizeof(struct unix_ra) + pg - 1) / pg * pg;
}

/* Makes c->ra with slots of `room` bytes each (c->ra is NULL or empty): 0 or -1. */
static int
ra_make(struct unix_conn *c, size_t room)
{
	size_t head = ra_head_len(), len;
	struct unix_ra *ra;
	unsigned char *slots;

	if (room > (SIZE_MAX - head) / UNIX_RA_SLOTS)
		return -1;
	len = head + room * UNIX_RA_SLOTS;
	ra = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		  -1, 0);
	if (ra == MAP_FAILED)
		return -1;
	idl__unix_ra_free(c);
	ra->map_len = len;
	ra->slot_cap = room;
	slots = (unsigned char *)ra + head;
	for (unsigned i = 0; i < UNIX_RA_SLOTS; i++) {
		struct msghdr *h = &ra->mm[i + 1].msg_hdr;

		ra->iov[i] = (struct iovec){ slots + (size_t)i * room, room };
		h->msg_iov = &ra->iov[i];
		h->msg_iovlen = 1;
		h->msg_control = ra->cm[i].buf;
		h->msg_controllen = sizeof ra->cm[i].buf;
	}
	c->ra = ra;
	return 0;
}

ssize_t
idl__unix_ra_recv(struct unix_conn *c, struct msghdr *mh, int flags)
{
	size_t room = 0;
	int n;

	for (size_t i = 0; i < mh->msg_iovlen; i++)
		room += mh->msg_iov[i].iov_len;
	/* The next receive that reads ahead: the next one while the peer sends in runs. */
	c->ra_wait = c->ra_on ? 1 : UNIX_RA_PROBE;
	if ((c->ra == NULL || c->ra->slot_cap < room) && ra_make(c, room) != 0)
		return idl__sys_recvmsg(c->fd, mh, flags);
	c->ra->mm[0].msg_hdr = *mh;
	/* MSG_WAITFORONE: the first message is waited for as recvmsg() would (the socket's
	 * timeout bounds it), the rest are taken only if they are there. */
	n = recvmmsg(c->fd, c->ra->mm, UNIX_RA_SLOTS + 1, flags | MSG_WAITFORONE, NULL);
	if (n <= 0)
		return n;
	*mh = c->ra->mm[0].msg_hdr;
	c->ra->next = 1;
	c->ra_left = (unsigned)n - 1;
	if (n > 1) {
		c->ra_on = 1;
		c->ra_quiet = 0;
	} else if (c->ra_on && ++c->ra_quiet >= UNIX_RA_QUIET) {
		c->ra_on = 0;
	}
	c->ra_wait = c->ra_on ? 1 : UNIX_RA_PROBE;
	return (ssize_t)c->ra->mm[0].msg_len;
}

int
idl__unix_ra_pop(struct unix_conn *c, struct idl_xmsg *m)
{
	struct unix_ra *ra = c->ra;
	unsigned i = ra->next++;
	struct msghdr *h = &ra->mm[i].msg_hdr;
	size_t n = ra->mm[i].msg_len;
	/* What the slot holds: all of the message unless the kernel cut it (MSG_TRUNC). */
	size_t got = n < ra->slot_cap ? n : ra->slot_cap;
	size_t first = got < m->cap ? got : m->cap;
	struct msghdr mh = { .msg_control = h->msg_control,
			     .msg_controllen = h->msg_controllen,
			     .msg_flags = h->msg_flags };

	c->ra_left--;
	m->nfds = 0;
	memcpy(m->data, h->msg_iov[0].iov_base, first);
	if (got > first) {
		/* The rest goes where the receive puts it: the spill, or nowhere. */
		size_t rest = got - first;

		if (c->spill != NULL)
			memcpy(c->spill, (unsigned char *)h->msg_iov[0].iov_base + first,
			       rest < UNIX_SPILL ? rest : UNIX_SPILL);
		if (c->spill == NULL || rest > UNIX_SPILL)
			mh.msg_flags |= MSG_TRUNC;
	}
	/* The slot is ready for the next receive. */
	h->msg_controllen = sizeof ra->cm[0].buf;
	return idl__unix_received(c, m, &mh, n);
}

void
idl__unix_ra_free(struct unix_conn *c)
{
	struct unix_ra *ra = c->ra;

	if (ra == NULL)
		return;
	/* Descriptors that came with messages nobody took were installed in this process. */
	while (c->ra_left != 0) {
		struct msghdr *h = &ra->mm[ra->next++].msg_hdr;
		int fds[IDL_DESC_MAX];
		unsigned n = idl__unix_cmsg_fds(h, fds, IDL_DESC_MAX);

		c->ra_left--;
		while (n != 0)
			close(fds[--n]);
		h->msg_controllen = sizeof ra->cm[0].buf;
	}
	munmap(ra, ra->map_len);
	c->ra = NULL;
}
