/*
 * udp_ep.c - the udp: transport's server side: the endpoint's socket, the receive that
 * answers a duplicate request from the duplicate-reply cache (udp_cache.c) and reads a run
 * of datagrams ahead, and the reply that stores what it sends in the cache and is held
 * while a run is answered (udp_hold.c). udp.c has the design and the client.
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

/* What a server's socket gets once it is the endpoint's, made or passed. */
static int
udp_ep_setup(struct udp_ep *ep, int fd)
{
	int big = UDP_SERVER_RCVBUF;

	ep->fd = fd;
	ep->open = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	if ((ep->spill = malloc(UDP_SPILL)) == NULL)
		return IDL_ENOMEM;
	idl__sock_ra_init(&ep->ra);
	idl__udp_hold_make(ep);
	return 0;
}

int
idl__udp_ep_listen(void *vep, const char *rest, const struct idl_listen_opts *opts)
{
	struct udp_ep *ep = vep;
	struct inet_addrs as;
	int err, fd = IDL_EADDRINVAL;

	(void)opts;
	if ((err = idl__inet_resolve("udp", rest, 1, &as)) != 0)
		return err;
	for (unsigned i = 0; i < as.n; i++) {
		idl__clear_detail();
		fd = idl__inet_socket("udp", &as.a[i], SOCK_DGRAM, 1, 0);
		if (fd >= 0 || fd != IDL_ESYSERR(EAFNOSUPPORT)) {
			if (fd >= 0)
				ep->limit = as.a[i].sa.ss_family == AF_INET6 ? UDP_LIMIT_V6
									     : UDP_LIMIT_V4;
			break;
		}
	}
	if (fd < 0)
		return idl_errdetail()[0] != '\0'
			       ? fd
			       : idl__inet_sysfail(IDL_SYSERR_ERRNO(fd), "udp", rest, "socket");
	snprintf(ep->name, sizeof ep->name, "%s", rest);
	return udp_ep_setup(ep, fd);
}

/* A bound socket the service manager passed (ListenDatagram=). Its receives block (ep_recv
 * waits in the kernel with SO_RCVTIMEO), as udp_ep_listen()'s do. */
int
idl__udp_ep_adopt(void *vep, int fd, const struct idl_listen_opts *opts)
{
	static const struct idl__sock_want want = {
		.family = AF_INET,
		.type = SOCK_DGRAM,
		.protocol = IPPROTO_UDP,
		.nonblock = 0,
		.needs = "a bound UDP socket (ListenDatagram=[HOST:]PORT)",
	};
	struct udp_ep *ep = vep;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int err;

	(void)opts;
	ep->fd = fd; /* the endpoint's from here: ep_fini closes it */
	ep->open = 1;
	ep->adopted = 1;
	if ((err = idl__sock_adopt("udp", fd, &want)) != 0)
		return err;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		idl__inet_format((struct sockaddr *)&ss, sl, ep->name, sizeof ep->name);
		ep->limit = ss.ss_family == AF_INET6 ? UDP_LIMIT_V6 : UDP_LIMIT_V4;
	}
	return udp_ep_setup(ep, fd);
}

int
idl__udp_ep_fd(void *vep)
{
	return ((struct udp_ep *)vep)->fd;
}

/* A run was read ahead: replies are held from now until the next receive that asks the
 * kernel for more (udp_hold.c). In the receiving thread, as the next. */
static void
udp_hold_begin(struct udp_ep *ep)
{
	idl__lock_take(&ep->lock);
	ep->hold_on = 1;
	idl__lock_give(&ep->lock);
}

/* The run has been answered: the replies held go. */
static void
udp_hold_end(struct udp_ep *ep)
{
	idl__lock_take(&ep->lock);
	ep->hold_on = 0;
	if (ep->nheld != 0)
		idl__udp_hold_flush(ep, NULL, NULL, 0);
	idl__lock_give(&ep->lock);
}

/*
 * Receives the next message that is new: a duplicate of a request the cache knows is
 * answered from the cache (or dropped while in progress) and the receive goes on.
 */
int
idl__udp_ep_recv(void *vep, struct idl_xmsg *m, struct idl_peer *from, struct idl_deadline *dl)
{
	struct udp_ep *ep = vep;

	m->nfds = 0;
	for (;;) {
		struct iovec iov[2] = { { m->data, m->cap }, { ep->spill, UDP_SPILL } };
		/* The sender's address straight into the peer the core keeps. */
		struct msghdr mh = { .msg_name = from->addr,
				     .msg_namelen = sizeof from->addr,
				     .msg_iov = iov,
				     .msg_iovlen = 2 };
		struct udp_entry *e;
		size_t got;
		uint64_t key, fp;
		uint32_t seqno, alen;
		ssize_t n;
		int t = 0, dup;

		if (ep->ra.left != 0) {
			n = idl__sock_ra_pop(&ep->ra, &mh);
		} else {
			/* The run read ahead has been answered: what is held goes now. */
			if (__builtin_expect(ep->hold_on, 0))
				udp_hold_end(ep);
			if ((t = idl__sock_timeo(ep->fd, SO_RCVTIMEO, &ep->rcvtimeo_us, dl)) < 0)
				return t;
			/* Only a receive that may wait reads ahead (the contract's ep_recv: a
			 * receive that must not waits for readiness, which nothing read ahead
			 * would report). */
			if (dl->ms != 0 && --ep->ra.wait == 0) {
				n = idl__sock_ra_recv(&ep->ra, ep->fd, &mh,
						      MSG_TRUNC | (t == 1 ? MSG_DONTWAIT : 0));
				if (ep->ra.left != 0 && ep->hold != NULL)
					udp_hold_begin(ep);
			} else
				n = idl__sys_recvmsg(ep->fd, &mh,
						     MSG_TRUNC | (t == 1 ? MSG_DONTWAIT : 0));
		}
		if (atomic_load_explicit(&ep->closed, memory_order_relaxed))
			return IDL_ECLOSED;
		if (n < 0) {
			if (errno == EINTR) {
				idl__sock_again(dl);
				continue;
			}
			if (errno == EAGAIN) {
				if (t == 1 || idl__sock_late(dl))
					return IDL_ETIMEDOUT;
				continue;
			}
			return IDL_ESYSERR(errno);
		}
		alen = mh.msg_namelen < sizeof e->addr ? mh.msg_namelen : sizeof e->addr;
		from->len = alen;
		m->len = (size_t)n;
		got = (size_t)n < m->cap ? (size_t)n : m->cap;
		/* Without a sequence number a message cannot be a retransmission. */
		if (got < UDP_KEYED_MIN)
			return idl__udp_received(ep->name, m, (size_t)n, ep->spill);
		seqno = udp_seqno(m->data);
		key = idl__udp_key(from->addr, alen, seqno);
		fp = idl__udp_fingerprint(m->data, got, (size_t)n);
		idl__lock_take(&ep->lock);
		e = idl__udp_cache_take(&ep->cache, key, from->addr, alen, seqno, fp, (uint32_t)n,
					idl__udp_cache_now(), &dup);
		if (dup) {
			/* A retransmission: answered again from the cache once replied, dropped
			 * while the request runs (or for a one-way message). */
			if (e->state == UDP_DONE && e->replen != 0)
				(void)sendto(ep->fd, e->reply, e->replen,
					     MSG_NOSIGNAL | MSG_DONTWAIT,
					     (const struct sockaddr *)from->addr, alen);
			idl__lock_give(&ep->lock);
			continue;
		}
		/* A one-way message gets no reply: its duplicates are only dropped. */
		if (e != NULL && ((const idl_msg_header_t *)m->data)->kind == IDL_KIND_ONEWAY) {
			e->state = UDP_DONE;
			ep->cache.last = NULL;
		}
		idl__lock_give(&ep->lock);
		return idl__udp_received(ep->name, m, (size_t)n, ep->spill);
	}
}

static int udp_ep_reply_bytes(struct udp_ep *ep, const struct idl_peer *to,
			      const struct idl_xmsg *m);

int
idl__udp_ep_reply(void *vep, const struct idl_peer *to, const struct idl_xmsg *m)
{
	struct udp_ep *ep = vep;
	struct idl_xmsg flat;
	int err;

	if (!idl__desc_msg(m->data, m->len))
		return udp_ep_reply_bytes(ep, to, m);
	err = idl__udp_flatten(ep->name, ep->limit, m, &flat);
	if (err == 0) {
		err = udp_ep_reply_bytes(ep, to, &flat);
		free(flat.data);
	} else {
		/* Too large for any datagram, or a port: the client is told so. */
		idl_msg_header_t bare;

		if (idl__desc_bare_reply(m, &bare, err, &flat))
			err = udp_ep_reply_bytes(ep, to, &flat);
	}
	idl__msg_release_sent(m->data);
	return err;
}

static int
udp_ep_reply_bytes(struct udp_ep *ep, const struct idl_peer *to, const struct idl_xmsg *m)
{
	const void *data = m->data;
	size_t len = m->len;
	idl_msg_header_t bare;
	struct udp_entry *e;
	ssize_t n;

	if (len > ep->limit) {
		/* A reply that no datagram can carry: the client gets why instead. */
		memcpy(&bare, m->data, sizeof bare);
		bare.size = IDL_MSG_HEADER_SIZE;
		bare.retcode = IDL_EMSGSIZE;
		bare.ndesc = 0;
		bare.flags = 0;
		data = &bare;
		len = sizeof bare;
	}
	idl__lock_take(&ep->lock);
	if (len >= UDP_KEYED_MIN) {
		e = idl__udp_cache_for_reply(&ep->cache, to->addr, to->len, udp_seqno(data));
		if (e != NULL)
			(void)idl__udp_cache_store(&ep->cache, e, data, len);
	}
	/* Replies to a run read ahead go out together (udp_hold.c): held, or with those held
	 * when there is no room for it. */
	if (__builtin_expect(ep->hold_on, 0)) {
		if (!idl__udp_hold(ep, to, data, len))
			idl__udp_hold_flush(ep, to, data, len);
		idl__lock_give(&ep->lock);
		return 0;
	}
	idl__lock_give(&ep->lock);
	do
		n = idl__sys_sendto(ep->fd, data, len, MSG_NOSIGNAL,
				    (const struct sockaddr *)to->addr, to->len);
	while (n < 0 && errno == EINTR);
	/* A lost reply is what the client's retransmission and the cache are for: one this
	 * host dropped on the way out (a full queue, a firewall) is lost, not failed. */
	return n >= 0 || udp_lost_on_the_way(errno) ? 0 : IDL_ESYSERR(errno);
}

void
idl__udp_ep_close(void *vep)
{
	struct udp_ep *ep = vep;

	/* Replies held for a run go before the socket shuts. */
	idl__lock_take(&ep->lock);
	if (ep->open && ep->nheld != 0)
		idl__udp_hold_flush(ep, NULL, NULL, 0);
	idl__lock_give(&ep->lock);
	/* shutdown on a datagram socket wakes a thread blocked in recvmsg (it returns 0). */
	atomic_store(&ep->closed, 1);
	/* A passed socket is the manager's and serves the next instance: shutdown would end
	 * it for good. Nothing waits in its receive (docs/deploy.md: the server serves it
	 * from its epoll set). */
	if (ep->open && !ep->adopted)
		shutdown(ep->fd, SHUT_RDWR);
}

void
idl__udp_ep_fini(void *vep)
{
	struct udp_ep *ep = vep;

	if (ep->open)
		close(ep->fd);
	ep->open = 0;
	idl__udp_cache_free(&ep->cache);
	idl__sock_ra_free(&ep->ra);
	idl__udp_hold_free(ep);
	free(ep->spill);
	ep->spill = NULL;
}
