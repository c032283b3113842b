/*
 * udp_hold.c - the replies to a run of datagrams read ahead (sock/sock_ra.h) go out together, with
 * one sendmmsg(), as the replies to a run of frames do on a connection: a server answering
 * a client with many calls in flight would otherwise make a sendto() per reply.
 *
 * While a run read ahead is answered (ep->hold_on: from the receive that read it ahead
 * until the next one that asks the kernel for more, which sends them), each reply is held:
 * copied here, its entry already in the duplicate-reply cache. A reply that finds no room
 * (one larger than UDP_HOLD_BYTES, or one past UDP_HOLD_MAX) goes at once, with those held.
 * A routine that blocks delays the replies held before it by as long; the datagrams after
 * it wait for it anyway.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sendmmsg, struct mmsghdr */
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "udp_impl.h"

struct udp_hold {
	/* One more than UDP_HOLD_MAX: the reply that ends the run goes with them. */
	struct mmsghdr mm[UDP_HOLD_MAX + 1];
	struct iovec iov[UDP_HOLD_MAX];
	unsigned char name[UDP_HOLD_MAX][sizeof((struct idl_peer *)0)->addr];
	unsigned char data[UDP_HOLD_MAX][UDP_HOLD_BYTES];
};

void
idl__udp_hold_make(struct udp_ep *ep)
{
	ep->hold = malloc(sizeof *ep->hold);
}

void
idl__udp_hold_free(struct udp_ep *ep)
{
	free(ep->hold);
	ep->hold = NULL;
	ep->hold_on = 0;
	ep->nheld = 0;
}

int
idl__udp_hold(struct udp_ep *ep, const struct idl_peer *to, const void *data, size_t len)
{
	unsigned i = ep->nheld;
	struct udp_hold *h = ep->hold;

	if (!ep->hold_on || len > UDP_HOLD_BYTES || i == UDP_HOLD_MAX ||
	    to->len > sizeof h->name[0])
		return 0;
	memcpy(h->data[i], data, len);
	memcpy(h->name[i], to->addr, to->len);
	h->iov[i] = (struct iovec){ h->data[i], len };
	h->mm[i].msg_hdr = (struct msghdr){ .msg_name = h->name[i],
					    .msg_namelen = to->len,
					    .msg_iov = &h->iov[i],
					    .msg_iovlen = 1 };
	ep->nheld = i + 1;
	return 1;
}

void
idl__udp_hold_flush(struct udp_ep *ep, const struct idl_peer *to, const void *data, size_t len)
{
	unsigned n = ep->nheld, sent = 0;
	struct udp_hold *h = ep->hold;
	struct iovec iov = { (void *)data, len };

	if (data != NULL) {
		/* The slot past those held points at the caller's bytes. */
		h->mm[n].msg_hdr = (struct msghdr){ .msg_name = (void *)to->addr,
						    .msg_namelen = to->len,
						    .msg_iov = &iov,
						    .msg_iovlen = 1 };
		n++;
	}
	while (sent < n) {
		int r = sendmmsg(ep->fd, h->mm + sent, n - sent, MSG_NOSIGNAL);

		if (r > 0)
			sent += (unsigned)r;
		else if (errno != EINTR)
			sent++; /* the first was refused (a lost reply): the rest still go */
	}
	ep->nheld = 0;
}
