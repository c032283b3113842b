/*
 * shm_nb.c - an shm: connection driven by an event loop (the embedded server's): sends and
 * receives that never wait, and a descriptor that is readable when there is work.
 *
 * A ring has no descriptor. A side that would wait sets its waiter word to SHM_WAIT_FD
 * instead of sleeping on the futex there, and the peer's next publish (or the room its next
 * take frees) writes a byte to the rendezvous socket, which the side watches: with the
 * peer's end of file there, that is what makes conn_fd's descriptor readable. The
 * descriptor is an epoll set (IDL_TRF_OWNSET) of that socket and an eventfd the connection
 * writes itself while records wait that no byte announces: those published before the word
 * was set, and those a loop leaves for its next turn. What made the set readable is spent
 * (the eventfd read, the socket's bytes read and ignored) only by a receive that finds the
 * ring empty, or a send that finds no room - nothing is read until that is out (the
 * contract of IDL_TRF_OWNSET) - just before it sets the word again and looks once more, so
 * no wake-up is lost.
 *
 * A message with descriptors is refused (IDL_ENOTSUP): the server sends it with the blocking
 * conn_send, which may wait for room in the ring or the arena. The peer must be of this
 * version or later: an older one only wakes the futex, so a loop waiting for its byte would
 * hear of its message only at a deadline.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "shm_impl.h"

/* Makes the set of the socket and the eventfd, which starts readable: the first wait finds
 * what the peer published before any byte was asked for. 0 or -1. */
static int
nb_make(struct shm_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int set = epoll_create1(EPOLL_CLOEXEC), efd = -1;

	if (set < 0 || (efd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		goto fail;
	ev.data.fd = c->fd;
	if (epoll_ctl(set, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		goto fail;
	ev.data.fd = efd;
	if (epoll_ctl(set, EPOLL_CTL_ADD, efd, &ev) != 0)
		goto fail;
	c->nb_set = set;
	c->nb_efd = efd;
	c->nb_efd_on = 1;
	c->nb_made = 1;
	return 0;
fail:
	if (efd >= 0)
		close(efd);
	if (set >= 0)
		close(set);
	return -1;
}

void
idl__shm_nb_fini(struct shm_conn *c)
{
	if (!c->nb_made)
		return;
	close(c->nb_set);
	close(c->nb_efd);
	c->nb_made = 0;
}

int
idl__shm_conn_fd(void *vconn, unsigned *events)
{
	struct shm_conn *c = vconn;
	uint64_t word;

	*events = IDL_TR_EV_IN;
	if (!c->nb_made && nb_make(c) != 0)
		return -1;
	if (c->ctl != NULL && idl__shm_ready(c, &word) == 1)
		*events |= IDL_TR_EV_MORE;
	return c->nb_set;
}

/* What made the set readable is spent: the eventfd emptied, the socket's bytes read. The
 * socket's end of file (the peer's exit) is the error returned. Under nb_lock: the thread
 * that serves the connection may receive while another sends a deferred reply. */
static int
nb_spend(struct shm_conn *c)
{
	uint64_t v;
	int err;

	idl__lock_take(&c->nb_lock);
	if (c->nb_efd_on && read(c->nb_efd, &v, sizeof v) == (ssize_t)sizeof v)
		c->nb_efd_on = 0;
	err = idl__shm_alive(c);
	idl__lock_give(&c->nb_lock);
	return err;
}

/* Records wait that no byte may announce: the eventfd keeps the set readable. */
static void
nb_more(struct shm_conn *c)
{
	uint64_t one = 1;

	idl__lock_take(&c->nb_lock);
	if (c->nb_made && !c->nb_efd_on &&
	    write(c->nb_efd, &one, sizeof one) == (ssize_t)sizeof one)
		c->nb_efd_on = 1;
	idl__lock_give(&c->nb_lock);
}

int
idl__shm_conn_recv_nb(void *vconn, struct idl_xmsg *m)
{
	struct shm_conn *c = vconn;
	uint64_t word = 0;
	int r, err;

	m->nfds = 0;
	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	if ((r = idl__shm_ready(c, &word)) == 0) {
		/* Empty: the producer is asked for a byte, then the ring is looked at again. */
		int dead = nb_spend(c);

		__atomic_store_n(&c->ctl->ring[1 - c->me].cons_sleep, SHM_WAIT_FD,
				 __ATOMIC_SEQ_CST);
		if ((r = idl__shm_ready(c, &word)) == 0) {
			/* A peer publishes its last record before it says it is gone. */
			if (dead == 0)
				dead = idl__shm_state(c);
			if (dead == 0)
				return IDL_EAGAIN;
			if ((r = idl__shm_ready(c, &word)) == 0)
				return dead;
		}
	}
	if (r < 0)
		return r;
	err = idl__shm_take(c, m, word);
	/* A record taken whole, refused or not: the next may be there. */
	if ((err == 0 || err == IDL_EMSGSIZE || (err == IDL_EPROTO && m->len != 0)) &&
	    idl__shm_ready(c, &word) == 1)
		nb_more(c);
	return err;
}

int
idl__shm_conn_sendv_nb(void *vconn, const struct idl_xmsg *msgs, unsigned n)
{
	struct shm_conn *c = vconn;
	unsigned done = 0;
	int asked = 0, err = 0;

	if ((err = idl__shm_state(c)) != 0)
		return err;
	while (done < n) {
		const struct idl_xmsg *m = &msgs[done];
		uint64_t rec, room;

		if (idl__desc_msg(m->data, m->len)) {
			err = IDL_ENOTSUP;
			break;
		}
		if (m->len > c->rbytes - 2 * SHM_REC_HDR) {
			err = idl__fail(IDL_EMSGSIZE,
					"shm: a %zu-byte message exceeds the %u-byte ring", m->len,
					c->rbytes);
			break;
		}
		/* Room for the record and the stop word after it. */
		rec = SHM_REC_HDR + IDL_MSG_ROUND(m->len);
		if ((err = idl__shm_room(c, rec + SHM_REC_HDR, &room)) != 0)
			break;
		if (room < rec + SHM_REC_HDR) {
			if (asked)
				break;
			/* Full: the consumer is asked for a byte once it frees room, and what made
			 * the set readable is spent (nothing is read until this is out); then the
			 * room is looked at again. */
			if ((err = nb_spend(c)) != 0)
				break;
			__atomic_store_n(&c->ctl->ring[c->me].prod_sleep, SHM_WAIT_FD,
					 __ATOMIC_SEQ_CST);
			asked = 1;
			continue;
		}
		idl__shm_write(c, m, rec);
		done++;
	}
	if (done > 0) {
		/* One wake-up for the batch, if the consumer waits. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		idl__shm_kick(c, &c->ctl->ring[c->me].cons_sleep);
		return (int)done;
	}
	return err;
}
