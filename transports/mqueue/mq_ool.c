/*
 * mq_ool.c - the port: transport's messages out of line: a message too large for the
 * queue travels in a shared-memory object of its own, named by a control message in the
 * queue (docs/transports/port.md, "Design"). The sender writes the object whole;
 * the receiver checks it is the peer's, removes its name at once and reads it with pread,
 * so that a peer that truncates the object later cannot make the receiver fault.
 */
#include <config.h>

/* pread, strerror: POSIX and GNU interfaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mq.h"

/* The first read of an out-of-line message: its header and, for a message with descriptors,
 * its descriptors and arguments, usually whole. */
#define MQ_OOL_HEAD 4096u

/* Writes the pieces in iov (at most IDL__OOL_IOV_MAX) to fd, all of them: one writev when
 * the object takes them at once. 0 or an errno value. */
static int
mq_writev_all(int fd, const struct iovec *iov, unsigned niov)
{
	struct iovec left[IDL__OOL_IOV_MAX];
	unsigned first = 0;

	if (niov > IDL__OOL_IOV_MAX)
		return EINVAL;
	memcpy(left, iov, niov * sizeof *iov);
	while (first < niov) {
		ssize_t n = writev(fd, left + first, (int)(niov - first));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		/* Past what went: whole pieces, then part of one. */
		while (first < niov && (size_t)n >= left[first].iov_len) {
			n -= (ssize_t)left[first].iov_len;
			first++;
		}
		if (first < niov) {
			left[first].iov_base = (char *)left[first].iov_base + n;
			left[first].iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Writes the message - the `total` bytes of the pieces in iov - into a new shared-memory
 * object and fills the control message that names it. The object is the receiver's to
 * remove; the sender remembers its name in case the receiver dies first. */
int
idl__mq_ool_make(struct mq_conn *c, const struct iovec *iov, unsigned niov, size_t total,
		 struct mq_ctl *k)
{
	int fd, err;

	if (total > MQ_OOL_MAX)
		return idl__fail(IDL_EMSGSIZE,
				 "port: a %zu-byte message exceeds the %u-byte "
				 "limit of messages out of line",
				 total, MQ_OOL_MAX);
	memset(k, 0, sizeof *k);
	memcpy(k->magic, MQ_CTL_MAGIC, sizeof k->magic);
	k->type = MQ_CTL_OOL;
	k->len = total;
	idl__mq_name(k->name, MQ_KIND_OOL);
	fd = shm_open(k->name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return idl__fail(IDL_ESYSERR(errno), "port: shm_open %s: %s", k->name,
				 strerror(errno));
	/* A root server answering another user's client gives the object to that user, who
	 * could not open a 0600 object of root's otherwise. */
	if (c->cred.valid && c->cred.uid != geteuid() && fchown(fd, c->cred.uid, (gid_t)-1) != 0) {
		close(fd);
		shm_unlink(k->name);
		return idl__fail(IDL_EACCES, "port: the peer (uid %u) could not read %s",
				 (unsigned)c->cred.uid, k->name);
	}
	if ((err = mq_writev_all(fd, iov, niov)) != 0) {
		close(fd);
		shm_unlink(k->name);
		return idl__fail(IDL_ESYSERR(err), "port: writing %s: %s", k->name, strerror(err));
	}
	close(fd);
	memcpy(c->ring[c->ring_next], k->name, MQ_NAME_MAX);
	c->ring_next = (c->ring_next + 1) % MQ_RING;
	return 0;
}

/* Reads `n` bytes of the object at `off` into dst, all of them or an error. */
static int
mq_pread_all(int fd, size_t off, void *dst, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)dst + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? IDL_ESYSERR(errno) : IDL_EPROTO;
		done += (size_t)r;
	}
	return 0;
}

/* The data of an out-of-line message with descriptors: the bytes of it the first read left
 * in the receive buffer, then the object. */
struct mq_ool_rd {
	int fd;
	const unsigned char *buf;
	size_t have; /* bytes of the object in buf, from its start */
};

static int
mq_ool_read(void *arg, size_t off, void *dst, size_t n)
{
	const struct mq_ool_rd *r = arg;
	size_t k = 0;

	if (dst == NULL)
		return 0;
	if (off < r->have) {
		k = n < r->have - off ? n : r->have - off;
		memcpy(dst, r->buf + off, k);
	}
	if (k < n && mq_pread_all(r->fd, off + k, (char *)dst + k, n - k) != 0)
		return idl__fail(IDL_EPROTO, "port: out-of-line data cut short");
	return 0;
}

/* Takes an out-of-line message: opens the object, removes its name at once, checks it and
 * copies it into m. Reading with pread rather than mapping it means a peer that truncates
 * the object cannot make us fault, and what we checked is what we keep. A message with
 * descriptors is read in two parts, each byte once: the message (a first read of at most
 * MQ_OOL_HEAD bytes tells its size), then its data straight into the receiver's blocks. */
int
idl__mq_ool_take(struct mq_conn *c, const struct mq_ctl *k, struct idl_xmsg *m)
{
	struct mq_ool_rd rd;
	struct stat st;
	size_t want, first;
	int fd, err = 0;

	if (!idl__mq_name_ok(k->name, MQ_KIND_OOL) || k->len > MQ_OOL_MAX)
		return idl__fail(IDL_EPROTO, "port: malformed out-of-line message");
	fd = shm_open(k->name, O_RDONLY, 0);
	if (fd < 0)
		return idl__fail(errno == ENOENT ? IDL_EPROTO : IDL_ESYSERR(errno),
				 "port: out-of-line message %s: %s", k->name, strerror(errno));
	/* Only the peer's objects (or ours, given to us by a root peer) are ours to remove. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && (!c->cred.valid || st.st_uid != c->cred.uid))) {
		close(fd);
		return idl__fail(IDL_EPROTO, "port: %s is not the peer's object", k->name);
	}
	shm_unlink(k->name);
	if ((uint64_t)st.st_size != k->len) {
		close(fd);
		return idl__fail(IDL_EPROTO, "port: %s holds %lld bytes, not %llu", k->name,
				 (long long)st.st_size, (unsigned long long)k->len);
	}
	/* Too large: like a datagram cut to the buffer, what fits is read (the header, for
	 * the error reply) and m->len says the true size. */
	m->len = (size_t)k->len;
	want = m->len < m->cap ? m->len : m->cap;
	first = want < MQ_OOL_HEAD ? want : MQ_OOL_HEAD;
	if ((err = mq_pread_all(fd, 0, m->data, first)) != 0) {
		close(fd);
		return idl__fail(err, "port: reading %s: short", k->name);
	}
	if (!idl__desc_msg(m->data, first)) {
		if ((err = mq_pread_all(fd, first, (char *)m->data + first, want - first)) != 0)
			err = idl__fail(err, "port: reading %s: short", k->name);
	} else {
		/* The message in m->data, its data after it in the object. */
		uint32_t msize = ((const idl_msg_header_t *)m->data)->size;

		if (msize > m->len || msize > want) {
			((unsigned char *)m->data)[3] &= (unsigned char)~IDL_MSGF_DESC;
			err = msize > m->len ? idl__fail(IDL_EPROTO,
							 "port: a %u-byte message in "
							 "%zu bytes",
							 msize, m->len)
					     : IDL_EMSGSIZE;
		} else if (msize > first && (err = mq_pread_all(fd, first, (char *)m->data + first,
								msize - first)) != 0) {
			err = idl__fail(err, "port: reading %s: short", k->name);
		} else {
			rd = (struct mq_ool_rd){ fd, m->data, first };
			if ((err = idl__ool_inline_in(m->data, msize, m->len, "port", mq_ool_read,
						      &rd)) == 0) {
				m->len = msize;
				want = msize;
			}
		}
	}
	close(fd);
	return err != 0 ? err : want < m->len ? IDL_EMSGSIZE : 0;
}
