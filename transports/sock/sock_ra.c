/*
 * sock_ra.c - reading ahead on a socket of whole messages (sock_ra.h says when and why).
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* recvmmsg, struct mmsghdr */
#endif

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock_ra.h"
#include "transport_kit.h"

void
idl__sock_ra_init(struct idl__sock_ra *ra)
{
	*ra = (struct idl__sock_ra){ .wait = IDL_SOCK_RA_PROBE };
}

/* A slot's header, ready for the kernel to fill. */
static void
ra_slot_reset(struct idl__sock_ra_slots *s, unsigned i)
{
	struct msghdr *h = &s->mm[i + 1].msg_hdr;

	*h = (struct msghdr){ .msg_name = &s->name[i],
			      .msg_namelen = sizeof s->name[i],
			      .msg_iov = &s->iov[i],
			      .msg_iovlen = 1,
			      .msg_control = s->cm[i],
			      .msg_controllen = sizeof s->cm[i] };
}

/* Makes slots of `room` bytes each (none wait in the old ones): 0 or -1. */
static int
ra_make(struct idl__sock_ra *ra, size_t room)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	/* The header rounded to a page, so that the slots' bytes start on one. */
	size_t head = (sizeof(struct idl__sock_ra_slots) + pg - 1) / pg * pg, len;
	struct idl__sock_ra_slots *s;
	unsigned char *bytes;

	if (room > (SIZE_MAX - head) / IDL_SOCK_RA_SLOTS)
		return -1;
	len = head + room * IDL_SOCK_RA_SLOTS;
	s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		 0);
	if (s == MAP_FAILED)
		return -1;
	idl__sock_ra_free(ra);
	s->map_len = len;
	s->cap = room;
	bytes = (unsigned char *)s + head;
	for (unsigned i = 0; i < IDL_SOCK_RA_SLOTS; i++) {
		s->iov[i] = (struct iovec){ bytes + (size_t)i * room, room };
		ra_slot_reset(s, i);
	}
	ra->slots = s;
	return 0;
}

ssize_t
idl__sock_ra_recv(struct idl__sock_ra *ra, int fd, struct msghdr *mh, int flags)
{
	struct idl__sock_ra_slots *s;
	size_t room = 0;
	int n;

	for (size_t i = 0; i < mh->msg_iovlen; i++)
		room += mh->msg_iov[i].iov_len;
	/* The next receive that reads ahead: the next one while the peer sends in runs. */
	ra->wait = ra->on ? 1 : IDL_SOCK_RA_PROBE;
	if ((ra->slots == NULL || ra->slots->cap < room) && ra_make(ra, room) != 0)
		return idl__sys_recvmsg(fd, mh, flags);
	s = ra->slots;
	/* The kernel wrote the name and control lengths of the slots the last run filled. */
	for (unsigned i = 1; i <= s->filled; i++) {
		s->mm[i].msg_hdr.msg_namelen = sizeof s->name[0];
		s->mm[i].msg_hdr.msg_controllen = sizeof s->cm[0];
	}
	s->mm[0].msg_hdr = *mh;
	/* MSG_WAITFORONE: the first message is waited for as recvmsg() would (the socket's
	 * timeout bounds it), the rest are taken only if they are there. */
	n = recvmmsg(fd, s->mm, IDL_SOCK_RA_SLOTS + 1, flags | MSG_WAITFORONE, NULL);
	if (n <= 0)
		return n;
	*mh = s->mm[0].msg_hdr;
	s->filled = (unsigned)n - 1;
	s->next = 1;
	ra->left = (unsigned)n - 1;
	if (n > 1) {
		ra->on = 1;
		ra->quiet = 0;
	} else if (ra->on && ++ra->quiet >= IDL_SOCK_RA_QUIET) {
		ra->on = 0;
	}
	ra->wait = ra->on ? 1 : IDL_SOCK_RA_PROBE;
	return (ssize_t)s->mm[0].msg_len;
}

ssize_t
idl__sock_ra_pop(struct idl__sock_ra *ra, struct msghdr *mh)
{
	size_t n, left;
	const struct msghdr *h = idl__sock_ra_next(ra, &n, &left);
	const unsigned char *p = h->msg_iov[0].iov_base;

	for (size_t k = 0; k < mh->msg_iovlen && left > 0; k++) {
		size_t c = left < mh->msg_iov[k].iov_len ? left : mh->msg_iov[k].iov_len;

		memcpy(mh->msg_iov[k].iov_base, p, c);
		p += c;
		left -= c;
	}
	mh->msg_flags = h->msg_flags | (left > 0 ? MSG_TRUNC : 0);
	if (mh->msg_name != NULL) {
		socklen_t nl = h->msg_namelen < mh->msg_namelen ? h->msg_namelen : mh->msg_namelen;

		memcpy(mh->msg_name, h->msg_name, nl);
		mh->msg_namelen = h->msg_namelen;
	}
	mh->msg_control = h->msg_control;
	mh->msg_controllen = h->msg_controllen;
	return (ssize_t)n;
}

/* Closes the file descriptors that came with a message nobody will take: the kernel
 * installed them in this process as it received it. */
static void
ra_drop(struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		const unsigned char *p = CMSG_DATA(cm);
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, p + i * sizeof fd, sizeof fd);
			close(fd);
		}
	}
}

void
idl__sock_ra_free(struct idl__sock_ra *ra)
{
	struct idl__sock_ra_slots *s = ra->slots;

	if (s == NULL)
		return;
	while (ra->left != 0) {
		ra->left--;
		ra_drop(&s->mm[s->next++].msg_hdr);
	}
	munmap(s, s->map_len);
	ra->slots = NULL;
}
