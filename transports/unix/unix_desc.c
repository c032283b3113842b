/*
 * unix_desc.c - the descriptors of a unix: message (docs/wire-format.md,
 * "Descriptors on the wire").
 *
 * Out-of-line data of up to UNIX_INLINE_MAX bytes travels inline after the message, at most
 * UNIX_SPILL bytes of it in all: below that size one copy through the socket costs less than
 * a memfd (unix_impl.h), and the receiver reads it into a block of the out-of-line cache.
 * Larger data travels in a memfd sealed against shrinking, growing and writing, passed with
 * SCM_RIGHTS: the receiver checks the seals and the size and maps it privately, so the
 * sender can change nothing it sees and the data is copied once, into the memfd. A message
 * whose inline form would not fit the socket's send buffer (SO_SNDBUF, read once a
 * connection) keeps only data below IDL_OOL_MAP_MIN inline, as one that fits always did. A port
 * travels as a new connection to its address (the sender connects, passes the socket, and closes
 * its copy): the receiver gets a port of its own, whose calls and replies do not mix with the
 * sender's. An array of ports is the list of their file descriptor numbers, inline.
 *
 * Every file descriptor that arrives is either made into the receiver's memory or port or
 * closed, on every path; a message carries at most IDL_DESC_MAX of them.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create, F_ADD_SEALS */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <idl/idl_ool.h>

#include "unix_impl.h"

/* An out-of-line descriptor's aux on the wire: where its data is. */
#define UNIX_AUX_INLINE 0u /* after the message, at offset addr */
#define UNIX_AUX_MEMFD 1u /* in the memfd whose index among the message's fds is addr */
#define UNIX_NULL_PORT UINT64_MAX /* a port descriptor's addr: MACH_PORT_NULL */
#define UNIX_NULL_FD UINT32_MAX /* an entry of a list of ports: MACH_PORT_NULL */
#define UNIX_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
/* Entries of the lists of ports of one message, with one word of padding per list. */
#define UNIX_LIST_MAX (2u * IDL_DESC_MAX)

static const unsigned char unix_zeros[IDL_MSG_ALIGN];

/* A message's wire form as it is built. */
struct unix_out {
	unsigned char head[IDL_MSG_HEADER_SIZE + IDL_DESC_SIZE * IDL_DESC_MAX]
		__attribute__((aligned(8)));
	struct iovec iov[IDL__OOL_IOV_MAX];
	unsigned niov;
	int fds[IDL_DESC_MAX];
	unsigned nfds;
	uint32_t lists[UNIX_LIST_MAX];
	unsigned nlist;
	size_t off; /* wire offset of the next inline piece */
	size_t inl; /* inline bytes so far */
	size_t inline_max; /* the largest datum to put inline: UNIX_INLINE_MAX or less */
};

static int
unix_add_fd(struct unix_out *o, int fd, uint32_t *index)
{
	if (o->nfds == IDL_DESC_MAX) {
		close(fd);
		return idl__fail(IDL_ELIMIT, "unix: more than %u file descriptors in one message",
				 IDL_DESC_MAX);
	}
	*index = o->nfds;
	o->fds[o->nfds++] = fd;
	return 0;
}

/* A sealed memfd holding size bytes of data. */
static int
unix_memfd(const void *data, size_t size, int *fdp)
{
	const char *p = data;
	size_t off = 0;
	int fd, e;

	fd = memfd_create("idlkit-ool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return idl__fail(IDL_ESYSERR(errno), "unix: memfd_create: %s", strerror(errno));
	while (off < size) {
		ssize_t n = write(fd, p + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : ENOSPC;
			close(fd);
			return idl__fail(IDL_ESYSERR(e), "unix: writing %zu bytes out of line: %s",
					 size, strerror(e));
		}
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, UNIX_SEALS | F_SEAL_SEAL) != 0) {
		e = errno;
		close(fd);
		return idl__fail(IDL_ESYSERR(e), "unix: sealing out-of-line data: %s", strerror(e));
	}
	*fdp = fd;
	return 0;
}

/* A new connection to the address of a carried port, to pass on as its descriptor. */
static int
unix_carried_fd(idl_port_t port, struct idl_deadline *dl, int *fdp)
{
	const char *address = idl__port_address(port);
	struct timeval none = { 0, 0 };
	struct unix_conn tmp;
	int err;

	if (address == NULL)
		return idl__fail(IDL_EINVAL, "unix: a port argument that is not a port");
	if (strncmp(address, "unix:", 5) != 0)
		return idl__fail(IDL_ENOTSUP,
				 "unix: cannot pass the port %s (only unix: ports "
				 "travel, as file descriptors)",
				 address);
	memset(&tmp, 0, sizeof tmp);
	if ((err = idl__unix_connect(&tmp, address + 5, dl)) != 0) {
		if (tmp.open)
			close(tmp.fd);
		return err;
	}
	/* The receiver starts with no timeouts set, as a socket of its own would. */
	(void)setsockopt(tmp.fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
	*fdp = tmp.fd;
	return 0;
}

static void
unix_put_inline(struct unix_out *o, const void *p, size_t n, size_t padded)
{
	o->iov[o->niov++] = (struct iovec){ (void *)p, n };
	if (padded > n)
		o->iov[o->niov++] = (struct iovec){ (void *)unix_zeros, padded - n };
	o->off += padded;
	o->inl += padded;
}

/* Descriptor i of the message in o->head, into its wire form. */
static int
unix_desc_put(struct unix_out *o, uint32_t i, struct idl_deadline *dl)
{
	unsigned char *w = o->head + IDL_MSG_HEADER_SIZE + (size_t)i * IDL_DESC_SIZE;
	idl_desc_t d;
	uint32_t index = 0;
	size_t round;
	int fd = -1, err;

	memcpy(&d, w, sizeof d);
	switch (d.type) {
	case IDL_DESC_OOL:
		round = IDL_MSG_ROUND((size_t)d.size);
		if (d.size == 0) {
			d.addr = 0;
			d.aux = UNIX_AUX_INLINE;
		} else if (d.addr == 0) {
			return idl__fail(IDL_EINVAL, "unix: out-of-line data of %u bytes at NULL",
					 d.size);
		} else if (d.size <= o->inline_max && round <= UNIX_SPILL - o->inl) {
			unix_put_inline(o, (const void *)(uintptr_t)d.addr, d.size, round);
			d.addr = o->off - round;
			d.aux = UNIX_AUX_INLINE;
		} else {
			if ((err = unix_memfd((const void *)(uintptr_t)d.addr, d.size, &fd)) != 0 ||
			    (err = unix_add_fd(o, fd, &index)) != 0)
				return err;
			d.addr = index;
			d.aux = UNIX_AUX_MEMFD;
		}
		break;
	case IDL_DESC_PORT:
		if (d.addr == 0) {
			d.addr = UNIX_NULL_PORT;
			break;
		}
		if ((err = unix_carried_fd((idl_port_t)(uintptr_t)d.addr, dl, &fd)) != 0 ||
		    (err = unix_add_fd(o, fd, &index)) != 0)
			return err;
		d.addr = index;
		break;
	case IDL_DESC_PORT_ARRAY: {
		const idl_port_t *ports = (const idl_port_t *)(uintptr_t)d.addr;
		uint32_t words = d.size + (d.size & 1u), *list = o->lists + o->nlist;

		if (d.size == 0) {
			d.addr = 0;
			break;
		}
		if (ports == NULL)
			return idl__fail(IDL_EINVAL, "unix: an array of %u ports at NULL", d.size);
		if (d.size > IDL_DESC_MAX || words > UNIX_LIST_MAX - o->nlist ||
		    (size_t)words * 4 > UNIX_SPILL - o->inl)
			return idl__fail(IDL_ELIMIT, "unix: more than %u ports in one message",
					 IDL_DESC_MAX);
		for (uint32_t j = 0; j < d.size; j++) {
			list[j] = UNIX_NULL_FD;
			if (ports[j] == NULL)
				continue;
			if ((err = unix_carried_fd(ports[j], dl, &fd)) != 0 ||
			    (err = unix_add_fd(o, fd, &list[j])) != 0)
				return err;
		}
		if (d.size & 1u)
			list[d.size] = 0;
		o->nlist += words;
		unix_put_inline(o, list, (size_t)words * 4, (size_t)words * 4);
		d.addr = o->off - (size_t)words * 4;
		break;
	}
	default:
		return idl__fail(IDL_EINVAL, "unix: descriptor %u has unknown type %u", i, d.type);
	}
	memcpy(w, &d, sizeof d);
	return 0;
}

/* The largest packet the connection's send buffer takes (the kernel refuses one longer
 * than SO_SNDBUF less 32 bytes with EMSGSIZE), read once; 0 when it cannot be read. */
static size_t
unix_sndmax(struct unix_conn *c)
{
	int v = 0;
	socklen_t l = sizeof v;

	if (c->sndmax == 0) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &v, &l) != 0 || v <= 32)
			return 0;
		c->sndmax = (size_t)v - 32;
	}
	return c->sndmax;
}

/* The largest datum of the message msg (len bytes, nd descriptors, checked) to carry inline:
 * UNIX_INLINE_MAX when the packet that makes fits the send buffer, else only what always
 * went inline (below IDL_OOL_MAP_MIN), the larger data in memfds - never a send that cannot
 * go. The sum follows unix_desc_put's rules for data and lists of ports. */
static size_t
unix_inline_max(struct unix_conn *c, const unsigned char *msg, size_t len, uint32_t nd)
{
	size_t inl = 0, big = 0;
	idl_desc_t d;

	for (uint32_t i = 0; i < nd; i++) {
		size_t round;

		memcpy(&d, msg + IDL_MSG_HEADER_SIZE + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.type == IDL_DESC_PORT_ARRAY)
			round = ((size_t)d.size + (d.size & 1u)) * 4;
		else if (d.type == IDL_DESC_OOL && d.size <= UNIX_INLINE_MAX)
			round = IDL_MSG_ROUND((size_t)d.size);
		else
			continue;
		if (round <= UNIX_SPILL - inl) {
			inl += round;
			big |= d.type == IDL_DESC_OOL && d.size >= IDL_OOL_MAP_MIN;
		}
	}
	if (!big || len + inl <= unix_sndmax(c))
		return UNIX_INLINE_MAX;
	return IDL_OOL_MAP_MIN - 1;
}

/* Lays out m, a message with descriptors, in o: its pieces, and the file descriptors made
 * for its data and ports, which the caller closes (also on failure). */
static int
unix_desc_build(struct unix_conn *c, const struct idl_xmsg *m, struct unix_out *o,
		struct idl_deadline *dl)
{
	const unsigned char *msg = m->data;
	size_t hlen;
	uint32_t nd;
	int err;

	o->niov = o->nfds = o->nlist = 0;
	o->inl = o->off = 0;
	if ((err = idl__desc_out_check(msg, m->len, "unix", &nd)) != 0)
		return err;
	hlen = IDL_MSG_HEADER_SIZE + (size_t)nd * IDL_DESC_SIZE;
	o->inline_max = unix_inline_max(c, msg, m->len, nd);
	memcpy(o->head, msg, hlen);
	o->iov[o->niov++] = (struct iovec){ o->head, hlen };
	if (m->len > hlen)
		o->iov[o->niov++] = (struct iovec){ (void *)(msg + hlen), m->len - hlen };
	o->off = m->len;
	for (uint32_t i = 0; i < nd && err == 0; i++)
		err = unix_desc_put(o, i, dl);
	return err;
}

/* Control data passing nfds file descriptors. */
union unix_cm {
	struct cmsghdr h;
	char buf[CMSG_SPACE(sizeof(int) * IDL_DESC_MAX)];
};

static void
unix_put_fds(struct msghdr *mh, union unix_cm *cm, const int *fds, unsigned nfds)
{
	struct cmsghdr *ch;

	if (nfds == 0)
		return;
	memset(cm, 0, sizeof *cm);
	mh->msg_control = cm->buf;
	mh->msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
	ch = CMSG_FIRSTHDR(mh);
	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(ch), fds, sizeof(int) * nfds);
}

static void
unix_fds_close(const int *fds, unsigned nfds)
{
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
}

/* One sendmsg without waiting: 0, IDL_EAGAIN when the socket has no room, or an error. */
static int
unix_sendmsg_nb(struct unix_conn *c, const struct msghdr *mh)
{
	while (idl__sys_sendmsg(c->fd, mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return IDL_EAGAIN;
		return errno == EMSGSIZE ? IDL_EMSGSIZE : idl__unix_conn_err(c, errno);
	}
	return 0;
}

int
idl__unix_send_desc(struct unix_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct unix_out o;
	union unix_cm cm;
	struct msghdr mh;
	int err = 0, built = 0;

	/* A message kept by a non-blocking send goes first. */
	o.nfds = 0;
	if (c->pend != NULL)
		err = idl__unix_pend_flush(c, dl);
	if (err == 0) {
		built = 1;
		err = unix_desc_build(c, m, &o, dl);
	}
	memset(&mh, 0, sizeof mh);
	if (err == 0) {
		mh.msg_iov = o.iov;
		mh.msg_iovlen = o.niov;
		unix_put_fds(&mh, &cm, o.fds, o.nfds);
		err = idl__unix_sendmsg(c, &mh, dl);
		if (err == IDL_EMSGSIZE)
			idl__fail(err,
				  "unix: a %zu-byte message (%zu bytes of data inline after "
				  "it) is too large for one packet",
				  o.off, o.inl);
	} else if (built) {
		idl_msg_header_t bare;
		struct idl_xmsg b;
		struct iovec iov;

		if (idl__desc_bare_reply(m, &bare, err, &b)) {
			iov = (struct iovec){ b.data, b.len };
			mh.msg_iov = &iov;
			mh.msg_iovlen = 1;
			err = idl__unix_sendmsg(c, &mh, dl);
		}
	}
	/* The receiver has its own copies of the descriptors now (or nothing went). */
	unix_fds_close(o.fds, o.nfds);
	idl__msg_release_sent(m->data);
	return err;
}

/* Keeps o's wire form and descriptors as the connection's pending message. */
static int
unix_pend_keep(struct unix_conn *c, struct unix_out *o)
{
	struct unix_pend *p = malloc(sizeof *p + o->off);
	size_t at = 0;

	if (p == NULL)
		return idl__fail(IDL_ENOMEM, "unix: out of memory keeping a message to send");
	for (unsigned i = 0; i < o->niov; i++) {
		memcpy(p->data + at, o->iov[i].iov_base, o->iov[i].iov_len);
		at += o->iov[i].iov_len;
	}
	p->len = at;
	p->nfds = o->nfds;
	memcpy(p->fds, o->fds, sizeof(int) * o->nfds);
	o->nfds = 0;
	c->pend = p;
	return 0;
}

int
idl__unix_send_desc_nb(struct unix_conn *c, const struct idl_xmsg *m)
{
	struct unix_out o;
	union unix_cm cm;
	struct msghdr mh;
	int err;

	if (c->pend != NULL)
		return 0;
	/* A port passed on is a new connection, made here without waiting; what cannot be
	 * made so, or cannot go in one packet, is left to the blocking send, which says why. */
	if ((err = unix_desc_build(c, m, &o, &(struct idl_deadline){ 0, 0 })) != 0) {
		unix_fds_close(o.fds, o.nfds);
		return IDL_ENOTSUP;
	}
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = o.iov;
	mh.msg_iovlen = o.niov;
	unix_put_fds(&mh, &cm, o.fds, o.nfds);
	err = unix_sendmsg_nb(c, &mh);
	if (err == IDL_EMSGSIZE) {
		unix_fds_close(o.fds, o.nfds);
		return IDL_ENOTSUP;
	}
	/* The socket has no room: the wire form is copied (the message's memory is the
	 * sender's again once this returns) and the descriptors kept with it. */
	if (err == IDL_EAGAIN)
		err = unix_pend_keep(c, &o);
	unix_fds_close(o.fds, o.nfds);
	idl__msg_release_sent(m->data);
	return err != 0 ? err : 1;
}

int
idl__unix_pend_flush(struct unix_conn *c, struct idl_deadline *dl)
{
	struct unix_pend *p = c->pend;
	struct iovec iov = { p->data, p->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union unix_cm cm;
	int err;

	unix_put_fds(&mh, &cm, p->fds, p->nfds);
	err = dl != NULL ? idl__unix_sendmsg(c, &mh, dl) : unix_sendmsg_nb(c, &mh);
	if (err == IDL_EAGAIN || err == IDL_ETIMEDOUT)
		return err;
	/* Sent, or the connection failed: either way it is done with. */
	idl__unix_pend_free(c);
	return err;
}

void
idl__unix_pend_free(struct unix_conn *c)
{
	if (c->pend == NULL)
		return;
	unix_fds_close(c->pend->fds, c->pend->nfds);
	free(c->pend);
	c->pend = NULL;
}

/*
 * Receiving.
 */

struct unix_in {
	int fds[IDL_DESC_MAX];
	unsigned nfds;
	unsigned char used[IDL_DESC_MAX]; /* taken by a descriptor (and closed or kept) */
	struct idl__ool_span span; /* the inline bytes: after the message in m->data, spill */
	size_t off; /* the next inline piece's offset */
	size_t wire_len;
};

/* File descriptor `index` of the message, taken once. -1 for a bad or reused index. */
static int
unix_take_fd(struct unix_in *in, uint64_t index)
{
	if (index >= in->nfds || in->used[index])
		return -1;
	in->used[index] = 1;
	return in->fds[index];
}

/* Maps (or, small, copies) the sealed memfd fd of `size` bytes; closes fd. */
static int
unix_map(int fd, uint32_t size, void **pp)
{
	struct stat st;
	int seals, err = 0;
	void *p = NULL;

	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size ||
	    seals < 0 || (seals & UNIX_SEALS) != UNIX_SEALS) {
		close(fd);
		return idl__fail(IDL_EPROTO,
				 "unix: out-of-line data of %u bytes not in a sealed "
				 "memfd of that size",
				 size);
	}
	if (size >= IDL_OOL_MAP_MIN) {
		/* Private: the receiver may write its copy; the seal keeps the sender out. */
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			err = idl__fail(IDL_ESYSERR(errno),
					"unix: mapping %u bytes out of line: "
					"%s",
					size, strerror(errno));
	} else if ((p = idl__ool_alloc_fill(size)) == NULL) {
		err = idl__fail(IDL_ENOMEM, "unix: no memory for %u bytes out of line", size);
	} else {
		for (size_t off = 0; off < size && err == 0;) {
			ssize_t n = pread(fd, (char *)p + off, size - off, (off_t)off);

			if (n > 0)
				off += (size_t)n;
			else if (n == 0 || errno != EINTR)
				err = idl__fail(IDL_EPROTO, "unix: out-of-line data cut short");
		}
		if (err != 0)
			idl__ool_free_plain(p, size);
	}
	close(fd);
	if (err == 0)
		*pp = p;
	return err;
}

/* A received file descriptor as a carried port: a connected unix: SEQPACKET socket. Takes
 * fd. */
static int
unix_fd_carried(int fd, idl_port_t *portp)
{
	int type = 0, domain = 0;
	socklen_t l1 = sizeof type, l2 = sizeof domain;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l1) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l2) != 0 || type != SOCK_SEQPACKET ||
	    domain != AF_UNIX) {
		close(fd);
		return idl__fail(IDL_EPROTO, "unix: a port that is not a unix: connection");
	}
	return idl__unix_adopt(fd, portp);
}

static void
unix_carried_free(idl_port_t *ports, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		idl_port_close(ports[j]);
	idl_ool_free(ports, (size_t)n * sizeof(idl_port_t));
}

/* Skips padding and reads n inline bytes at the next offset, which must be `at`. */
static int
unix_inline(struct unix_in *in, uint64_t at, void *dst, size_t n)
{
	size_t round = IDL_MSG_ROUND(n);

	if (at != in->off || round > in->wire_len - in->off ||
	    idl__ool_span_read(&in->span, in->off, dst, n) != 0)
		return idl__fail(IDL_EPROTO, "unix: inline data at %llu, expected at %zu",
				 (unsigned long long)at, in->off);
	in->off += round;
	return 0;
}

/* One descriptor from its wire form into the receiver's memory and ports. */
static int
unix_desc_take(struct unix_in *in, idl_desc_t *d)
{
	void *p = NULL;
	int fd, err;

	switch (d->type) {
	case IDL_DESC_OOL:
		if (d->size == 0) {
			if (d->addr != 0 || d->aux != UNIX_AUX_INLINE)
				return idl__fail(IDL_EPROTO, "unix: empty datum with an address");
		} else if (d->aux == UNIX_AUX_INLINE) {
			/* The size is checked against the bytes that came before any memory is
			 * taken for it. */
			if (IDL_MSG_ROUND((size_t)d->size) > in->wire_len - in->off)
				return idl__fail(IDL_EPROTO,
						 "unix: %u bytes inline, %zu left in the packet",
						 d->size, in->wire_len - in->off);
			if ((p = idl__ool_alloc_fill(d->size)) == NULL)
				return idl__fail(IDL_ENOMEM,
						 "unix: no memory for %u bytes out of "
						 "line",
						 d->size);
			if ((err = unix_inline(in, d->addr, p, d->size)) != 0) {
				idl__ool_free_plain(p, d->size);
				return err;
			}
		} else if (d->aux == UNIX_AUX_MEMFD) {
			if ((fd = unix_take_fd(in, d->addr)) < 0)
				return idl__fail(IDL_EPROTO, "unix: bad file descriptor index");
			if ((err = unix_map(fd, d->size, &p)) != 0)
				return err;
		} else {
			return idl__fail(IDL_EPROTO, "unix: out-of-line data of unknown form %u",
					 d->aux);
		}
		d->addr = (uint64_t)(uintptr_t)p;
		d->aux = 0;
		return 0;
	case IDL_DESC_PORT: {
		idl_port_t port = NULL;

		if (d->addr != UNIX_NULL_PORT) {
			if ((fd = unix_take_fd(in, d->addr)) < 0)
				return idl__fail(IDL_EPROTO, "unix: bad file descriptor index");
			if ((err = unix_fd_carried(fd, &port)) != 0)
				return err;
		}
		d->addr = (uint64_t)(uintptr_t)port;
		return 0;
	}
	case IDL_DESC_PORT_ARRAY: {
		uint32_t list[UNIX_LIST_MAX], words = d->size + (d->size & 1u), j;
		idl_port_t *ports;

		if (d->size == 0) {
			if (d->addr != 0)
				return idl__fail(IDL_EPROTO, "unix: empty array with an address");
			return 0;
		}
		if (d->size > IDL_DESC_MAX)
			return idl__fail(IDL_EPROTO, "unix: an array of %u ports", d->size);
		if ((err = unix_inline(in, d->addr, list, (size_t)words * 4)) != 0)
			return err;
		if ((ports = idl_ool_alloc((size_t)d->size * sizeof *ports)) == NULL)
			return idl__fail(IDL_ENOMEM, "unix: no memory for %u ports", d->size);
		for (j = 0, err = 0; j < d->size && err == 0; j++) {
			if (list[j] == UNIX_NULL_FD)
				ports[j] = NULL;
			else if ((fd = unix_take_fd(in, list[j])) < 0)
				err = idl__fail(IDL_EPROTO, "unix: bad file descriptor index");
			else
				err = unix_fd_carried(fd, &ports[j]);
		}
		if (err != 0) {
			/* The ports made before the one that failed are closed. */
			for (uint32_t k = 0; k + 1 < j; k++)
				idl_port_close(ports[k]);
			idl_ool_free(ports, (size_t)d->size * sizeof *ports);
			return err;
		}
		d->addr = (uint64_t)(uintptr_t)ports;
		return 0;
	}
	default:
		return idl__fail(IDL_EPROTO, "unix: descriptor of unknown type %u", d->type);
	}
}

/* Releases a descriptor unix_desc_take converted. */
static void
unix_desc_undo(const idl_desc_t *d)
{
	if (d->type == IDL_DESC_OOL)
		idl_ool_free((void *)(uintptr_t)d->addr, d->size);
	else if (d->type == IDL_DESC_PORT)
		idl_port_close((idl_port_t)(uintptr_t)d->addr);
	else if (d->type == IDL_DESC_PORT_ARRAY && d->size != 0)
		unix_carried_free((idl_port_t *)(uintptr_t)d->addr, d->size);
}

static int
unix_desc_in(struct unix_in *in, unsigned char *msg, size_t msize)
{
	unsigned char *descs = msg + IDL_MSG_HEADER_SIZE;
	idl_desc_t d;
	uint32_t nd, i;
	int err;

	if ((err = idl__desc_in_check(msg, msize, "unix", &nd)) != 0)
		return err;
	for (i = 0; i < nd; i++) {
		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if ((err = unix_desc_take(in, &d)) != 0)
			break;
		memcpy(descs + (size_t)i * IDL_DESC_SIZE, &d, sizeof d);
	}
	if (err == 0 && in->off != in->wire_len)
		err = idl__fail(IDL_EPROTO, "unix: %zu bytes after the inline data",
				in->wire_len - in->off);
	for (unsigned k = 0; err == 0 && k < in->nfds; k++)
		if (!in->used[k])
			err = idl__fail(IDL_EPROTO, "unix: a file descriptor no descriptor names");
	if (err != 0) {
		while (i-- > 0) {
			memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
			unix_desc_undo(&d);
		}
	}
	return err;
}

unsigned
idl__unix_cmsg_fds(const struct msghdr *mh, int *fds, unsigned max)
{
	unsigned n = 0;

	for (struct cmsghdr *ch = CMSG_FIRSTHDR(mh); ch != NULL;
	     ch = CMSG_NXTHDR((struct msghdr *)mh, ch)) {
		size_t k;

		if (ch->cmsg_level != SOL_SOCKET || ch->cmsg_type != SCM_RIGHTS ||
		    ch->cmsg_len < CMSG_LEN(0))
			continue;
		k = (ch->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t j = 0; j < k; j++) {
			int fd;

			memcpy(&fd, CMSG_DATA(ch) + j * sizeof(int), sizeof fd);
			if (n < max)
				fds[n++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

int
idl__unix_recv_desc(struct unix_conn *c, struct idl_xmsg *m, const struct msghdr *mh, size_t n)
{
	size_t got = n < m->cap ? n : m->cap;
	unsigned char *msg = m->data;
	struct unix_in in;
	idl_msg_header_t h;
	int err = 0;

	memset(in.used, 0, sizeof in.used);
	in.nfds = idl__unix_cmsg_fds(mh, in.fds, IDL_DESC_MAX);

	if (!idl__desc_msg(msg, got)) {
		/* File descriptors with a message that has no descriptors: nobody's. */
		for (unsigned k = 0; k < in.nfds; k++)
			close(in.fds[k]);
		return n > m->cap ? IDL_EMSGSIZE : 0;
	}
	memcpy(&h, msg, sizeof h);
	/* A size field beyond the bytes that came is a lie, not a large message: n is the
	 * packet's true length even when it was cut (MSG_TRUNC). */
	if (mh->msg_flags & MSG_CTRUNC)
		err = idl__fail(IDL_EPROTO, "unix: more than %u file descriptors in one message",
				IDL_DESC_MAX);
	else if (h.size > n)
		err = idl__fail(IDL_EPROTO, "unix: a %u-byte message in %zu bytes", h.size, n);
	else if ((mh->msg_flags & MSG_TRUNC) || h.size > m->cap)
		err = IDL_EMSGSIZE;
	if (err == 0) {
		in.span = (struct idl__ool_span){ h.size, msg + h.size, got - h.size, c->spill,
						  n - got };
		in.off = h.size;
		in.wire_len = n;
		err = unix_desc_in(&in, msg, h.size);
	}
	/* Whatever no descriptor took is closed, on every path. */
	for (unsigned k = 0; k < in.nfds; k++)
		if (!in.used[k])
			close(in.fds[k]);
	/* A packet keeps its framing whatever it holds: a refused one is answered. */
	if (err != 0)
		return idl__desc_refused(m, n, err);
	m->len = h.size;
	return 0;
}
