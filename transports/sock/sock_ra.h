/*
 * sock_ra.h - reading ahead on a socket whose messages come whole (unix:'s seqpacket, udp:'s
 * datagrams). A peer with many messages in flight - a pipelining client, a server answering
 * a batch - would otherwise cost one receive system call per message; one recvmmsg() takes
 * the message the caller waits for and, without waiting for them, every one already queued
 * behind it, up to IDL_SOCK_RA_SLOTS, which later receives hand out without a system call.
 *
 * A message larger than the buffer it is received into is cut and its rest is lost, so
 * every slot has the room the caller's own receive has (its buffers in all), a name and
 * room for control data (descriptors). The slots are one private mapping, of which only the
 * pages a message touches become memory.
 *
 * When to read ahead is the kit's too: a socket starts without the slots; every
 * IDL_SOCK_RA_PROBE-th receive asks for more than one message, reading ahead stays on while
 * receives find several and ends after IDL_SOCK_RA_QUIET in a row that find one, so that a
 * caller receiving one message at a time pays a recvmmsg() in 32 receives and nothing else.
 * The caller counts: `if (--ra.wait == 0)` the receive is idl__sock_ra_recv(), else its own.
 *
 * The state belongs to the one thread that receives on the socket at a time.
 */
#ifndef IDL_TRANSPORTS_SOCK_RA_H
#define IDL_TRANSPORTS_SOCK_RA_H

#ifndef _GNU_SOURCE

#define _GNU_SOURCE 1 /* struct mmsghdr */
#endif

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "transport_kit.h" /* IDL_DESC_MAX */

#define IDL_SOCK_RA_SLOTS 15u
#define IDL_SOCK_RA_PROBE 32u
#define IDL_SOCK_RA_QUIET 8u

/* The slots: the head of one private mapping, their bytes after it (sock_ra.c). */
struct idl__sock_ra_slots {
	size_t map_len; /* the mapping: this header, then the slots' bytes */
	size_t cap; /* each slot's room */
	unsigned next; /* the next slot to hand out (1-based: mm[0] is the caller's) */
	unsigned filled; /* slots the last receive filled, whose lengths the kernel wrote */
	struct mmsghdr mm[IDL_SOCK_RA_SLOTS + 1];
	struct iovec iov[IDL_SOCK_RA_SLOTS];
	struct sockaddr_storage name[IDL_SOCK_RA_SLOTS];
	/* Control data: room for the descriptors a message may carry. */
	char cm[IDL_SOCK_RA_SLOTS][CMSG_SPACE(sizeof(int) * IDL_DESC_MAX)]
		__attribute__((aligned(__alignof__(struct cmsghdr))));
};

struct idl__sock_ra {
	struct idl__sock_ra_slots *slots; /* made by the first receive that reads ahead */
	unsigned left; /* messages waiting in the slots */
	unsigned wait; /* receives until the next that reads ahead (idl__sock_ra_init) */
	unsigned quiet; /* receives in a row that found one message, while on */
	int on; /* the peer was seen sending several at once lately */
};

/* A socket's state before its first receive (or a zeroed one, with this called). */
void idl__sock_ra_init(struct idl__sock_ra *ra);

/*
 * A receive that reads ahead, with recvmsg(fd, mh, flags)'s result and effect on mh; the
 * messages that came behind the first wait in the slots (ra->left of them). Called only
 * when none wait. When the slots cannot be made it is a plain recvmsg().
 */
ssize_t idl__sock_ra_recv(struct idl__sock_ra *ra, int fd, struct msghdr *mh, int flags);

/*
 * The next message read ahead (ra->left > 0), where the kernel put it: the slot's header
 * (its bytes at msg_iov[0], its name, control data and flags), which stays the caller's
 * until the next receive; *len is the message's true length and *got the bytes the slot
 * holds of it (fewer when the kernel cut it).
 */
static inline const struct msghdr *
idl__sock_ra_next(struct idl__sock_ra *ra, size_t *len, size_t *got)
{
	struct idl__sock_ra_slots *s = ra->slots;
	unsigned i = s->next++;

	ra->left--;
	*len = s->mm[i].msg_len;
	*got = *len < s->cap ? *len : s->cap;
	return &s->mm[i].msg_hdr;
}

/*
 * The same, into mh as recvmsg() would have put it: its
 * bytes spread over mh's buffers (MSG_TRUNC in msg_flags when they did not fit), its name
 * into mh's (when mh has one), and msg_control pointing at its control data in the slot,
 * valid until the next receive. Returns its true length.
 */
ssize_t idl__sock_ra_pop(struct idl__sock_ra *ra, struct msghdr *mh);

/* Frees the slots, closing the file descriptors (SCM_RIGHTS) that came with the messages
 * still waiting in them. */
void idl__sock_ra_free(struct idl__sock_ra *ra);

#endif /* IDL_TRANSPORTS_SOCK_RA_H */
