/*
 * unix_nb.c - the non-blocking operations of the unix: transport, for a pollable port
 * (docs/call-core.md, "The transport contract, version 2").
 *
 * A SOCK_SEQPACKET send is all or nothing and a receive takes one whole message, so there
 * is no partial frame to keep: one message goes out with one send(), a run of them in one
 * sendmmsg(); a message with descriptors goes alone, and when the socket has no room its
 * wire form and descriptors are kept (unix_desc.c) and sent before anything else, so that
 * a peer that reads nothing holds no thread of ours; and a receive is the blocking one with
 * a zero timeout (MSG_DONTWAIT, no clock read), reading ahead whatever the peer sent in a
 * run (sock/sock_ra.h).
 */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "unix_impl.h"

#define UNIX_NB_BATCH 64

int
idl__unix_fd(void *vconn, unsigned *events)
{
	struct unix_conn *c = vconn;

	/* A seqpacket send is all or nothing: the only output of our own to flush is a
	 * message with descriptors kept for want of room. */
	*events = IDL_TR_EV_IN | (c->pend != NULL ? IDL_TR_EV_OUT : 0) |
		  (c->ra.left != 0 ? IDL_TR_EV_MORE : 0);
	return c->open ? c->fd : -1;
}

int
idl__unix_sendv_nb(void *vconn, const struct idl_xmsg *msgs, unsigned n)
{
	struct unix_conn *c = vconn;
	struct mmsghdr mm[UNIX_NB_BATCH];
	struct iovec iov[UNIX_NB_BATCH];
	unsigned done = 0;

	/* One message, the server's reply: a plain send, made in line as the blocking send is
	 * (transport_kit.h says why), costs less than a sendmmsg of one. */
	if (n == 1 && c->pend == NULL && !idl__desc_msg(msgs[0].data, msgs[0].len)) {
		while (idl__sys_send(c->fd, msgs[0].data, msgs[0].len,
				     MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return errno == EMSGSIZE ? IDL_EMSGSIZE : idl__unix_conn_err(c, errno);
		}
		return 1;
	}
	if (c->pend != NULL) {
		int err = idl__unix_pend_flush(c, NULL);

		if (err == IDL_EAGAIN)
			return n == 0 ? err : 0;
		if (err != 0)
			return err;
	}
	while (done < n) {
		unsigned k = 0;
		int r;

		if (idl__desc_msg(msgs[done].data, msgs[done].len))
			return done > 0 ? (int)done : idl__unix_send_desc_nb(c, &msgs[done]);
		memset(mm, 0, sizeof mm);
		while (done + k < n && k < UNIX_NB_BATCH &&
		       !idl__desc_msg(msgs[done + k].data, msgs[done + k].len)) {
			iov[k].iov_base = msgs[done + k].data;
			iov[k].iov_len = msgs[done + k].len;
			mm[k].msg_hdr.msg_iov = &iov[k];
			mm[k].msg_hdr.msg_iovlen = 1;
			k++;
		}
		r = sendmmsg(c->fd, mm, k, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return (int)done;
			if (done > 0)
				return (int)done;
			return errno == EMSGSIZE ? IDL_EMSGSIZE : idl__unix_conn_err(c, errno);
		}
		done += (unsigned)r;
		if ((unsigned)r < k)
			return (int)done;
	}
	return (int)done;
}

int
idl__unix_recv_nb(void *vconn, struct idl_xmsg *m)
{
	struct idl_deadline now = idl_deadline_in(0);
	int err = idl__unix_recv_ra(vconn, m, &now);

	return err == IDL_ETIMEDOUT ? IDL_EAGAIN : err;
}
