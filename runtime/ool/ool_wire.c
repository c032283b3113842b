/*
 * ool_wire.c - out-of-line data inline after the message: the wire form of descriptors on
 * tcp:, udp: and port:, and of small data on unix: (docs/wire-format.md, "Descriptors on
 * the wire").
 *
 * The sender lays the message out as pieces (the header and descriptors rewritten, the rest
 * of the message as it is, then each datum and its padding), so that a stream transport
 * writes them with one sendmsg and a datagram transport gathers them once. The receiver
 * checks every descriptor against one strict layout - data in descriptor order, each at the
 * next multiple of 8, nothing after the last - before it allocates anything, then reads each
 * datum straight into memory of the receiver's own.
 *
 * The ool room: what the transports that carry data inline share; it knows core and nothing
 * of the client, the server or any one transport.
 */
#include <config.h>

#include <string.h>

#include <idl/idl_ool.h>

#include "ool/ool.h"

/* The padding after a datum, sent from here: never written. */
static const unsigned char ool_zeros[IDL_MSG_ALIGN];

/*
 * The sender's side (transport_kit.h says what it gives). The header and descriptors are
 * copied into o->head and rewritten there - each descriptor's addr becomes the offset of its
 * datum on the wire - so that the caller's message is left as it is: it still names the
 * memory that a send releases afterwards. The rest of the message and each datum go as they
 * are, without a copy. An empty datum takes no bytes and says offset 0.
 */
int
idl__ool_inline_out(const struct idl_xmsg *m, const char *scheme, struct idl__ool_out *o)
{
	const unsigned char *msg = m->data;
	size_t hlen, off;
	uint32_t nd;
	int err;

	if ((err = idl__desc_out_check(msg, m->len, scheme, &nd)) != 0)
		return err;
	hlen = IDL_MSG_HEADER_SIZE + (size_t)nd * IDL_DESC_SIZE;
	memcpy(o->head, msg, hlen);
	o->niov = 0;
	o->iov[o->niov++] = (struct iovec){ o->head, hlen };
	if (m->len > hlen)
		o->iov[o->niov++] = (struct iovec){ (void *)(msg + hlen), m->len - hlen };
	/* The data start right after the message, which is a multiple of 8 long. */
	off = m->len;
	o->inline_bytes = 0;
	for (uint32_t i = 0; i < nd; i++) {
		unsigned char *w = o->head + IDL_MSG_HEADER_SIZE + (size_t)i * IDL_DESC_SIZE;
		const void *data;
		idl_desc_t d;
		size_t pad;

		memcpy(&d, w, sizeof d);
		data = (const void *)(uintptr_t)d.addr;
		if (d.type == IDL_DESC_PORT || d.type == IDL_DESC_PORT_ARRAY)
			return idl__fail(IDL_ENOTSUP,
					 "%s: cannot carry ports (only unix: passes "
					 "them, as file descriptors)",
					 scheme);
		if (d.type != IDL_DESC_OOL)
			return idl__fail(IDL_EINVAL, "%s: descriptor %u has unknown type %u",
					 scheme, i, d.type);
		if (d.size != 0 && d.addr == 0)
			return idl__fail(IDL_EINVAL, "%s: out-of-line data of %u bytes at NULL",
					 scheme, d.size);
		pad = IDL_MSG_ROUND((size_t)d.size) - d.size;
		d.addr = d.size != 0 ? off : 0;
		memcpy(w, &d, sizeof d);
		if (d.size == 0)
			continue;
		o->iov[o->niov++] = (struct iovec){ (void *)data, d.size };
		if (pad != 0)
			o->iov[o->niov++] = (struct iovec){ (void *)ool_zeros, pad };
		off += d.size + pad;
		o->inline_bytes += d.size + pad;
	}
	o->total = off;
	return 0;
}

/* A reader over bytes a transport already holds in two pieces (a datagram's first part in
 * the caller's buffer, the rest in a spill buffer): the range is checked against both
 * pieces' length before anything is copied, overflow-safe, and may straddle them. */
int
idl__ool_span_read(void *arg, size_t off, void *dst, size_t n)
{
	const struct idl__ool_span *s = arg;
	unsigned char *out = dst;
	size_t rel;

	if (off < s->base || n > s->n0 + s->n1 || off - s->base > s->n0 + s->n1 - n)
		return IDL_EPROTO;
	if (dst == NULL)
		return 0;
	rel = off - s->base;
	if (rel < s->n0) {
		size_t k = n < s->n0 - rel ? n : s->n0 - rel;

		memcpy(out, s->p0 + rel, k);
		out += k;
		n -= k;
		rel = s->n0;
	}
	if (n != 0)
		memcpy(out, s->p1 + (rel - s->n0), n);
	return 0;
}

/* The receiver's checks, before anything is allocated: every datum must sit exactly where
 * the sender's layout puts it (in descriptor order, each at the next multiple of 8), so that
 * a liar's offsets, overlaps or trailing bytes are refused rather than followed. */
int
idl__ool_inline_layout(const void *msg, size_t msize, size_t wire_len, const char *scheme,
		       uint32_t *ndp)
{
	const unsigned char *descs = (const unsigned char *)msg + IDL_MSG_HEADER_SIZE;
	const idl_msg_header_t *h = msg;
	size_t off = msize;
	uint32_t nd;
	idl_desc_t d;
	int err;

	if ((err = idl__desc_in_check(msg, msize, scheme, &nd)) != 0)
		return err;
	if (h->size != msize || msize > wire_len)
		return idl__fail(IDL_EPROTO, "%s: a %u-byte message in %zu bytes", scheme, h->size,
				 wire_len);
	for (uint32_t i = 0; i < nd; i++) {
		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.type != IDL_DESC_OOL)
			return idl__fail(IDL_EPROTO,
					 "%s: descriptor %u of type %u (this transport "
					 "carries out-of-line data only)",
					 scheme, i, d.type);
		if (d.size == 0) {
			if (d.addr != 0)
				return idl__fail(IDL_EPROTO, "%s: empty datum %u at %llu", scheme,
						 i, (unsigned long long)d.addr);
			continue;
		}
		/* Compared as "size > len - off", never "off + size > len", which a size
		 * near the type's limit would wrap. */
		if (d.addr != off || d.size > wire_len - off ||
		    IDL_MSG_ROUND((size_t)d.size) > wire_len - off)
			return idl__fail(IDL_EPROTO,
					 "%s: out-of-line datum %u (%u bytes at %llu) "
					 "outside the %zu-byte message",
					 scheme, i, d.size, (unsigned long long)d.addr, wire_len);
		off += IDL_MSG_ROUND((size_t)d.size);
	}
	if (off != wire_len)
		return idl__fail(IDL_EPROTO, "%s: %zu bytes after the out-of-line data", scheme,
				 wire_len - off);
	*ndp = nd;
	return 0;
}

/* Frees the blocks of the first n descriptors, which point at them. */
static void
ool_free_first(unsigned char *descs, uint32_t n)
{
	idl_desc_t d;

	while (n-- > 0) {
		memcpy(&d, descs + (size_t)n * IDL_DESC_SIZE, sizeof d);
		if (d.size != 0)
			idl__ool_free_plain((void *)(uintptr_t)d.addr, d.size);
	}
}

int
idl__ool_inline_in(void *msg, size_t msize, size_t wire_len, const char *scheme, idl__ool_reader rd,
		   void *arg)
{
	unsigned char *descs = (unsigned char *)msg + IDL_MSG_HEADER_SIZE;
	uint32_t nd, i;
	idl_desc_t d;
	int err;

	/* The layout first, whole: nothing is allocated for a message that lies. */
	if ((err = idl__ool_inline_layout(msg, msize, wire_len, scheme, &nd)) != 0)
		goto refused;
	for (i = 0; i < nd; i++) {
		void *p;

		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.size == 0)
			continue;
		/* Not cleared first: the data overwrites every byte, or the block goes back. */
		if ((p = idl__ool_alloc_fill(d.size)) == NULL) {
			err = idl__fail(IDL_ENOMEM, "%s: no memory for %u bytes out of line",
					scheme, d.size);
			break;
		}
		if ((err = rd(arg, (size_t)d.addr, p, d.size)) != 0 ||
		    (err = rd(arg, (size_t)d.addr + d.size, NULL,
			      IDL_MSG_ROUND((size_t)d.size) - d.size)) != 0) {
			idl__ool_free_plain(p, d.size);
			break;
		}
		d.addr = (uint64_t)(uintptr_t)p;
		memcpy(descs + (size_t)i * IDL_DESC_SIZE, &d, sizeof d);
	}
	if (err == 0)
		return 0;
	/* Undo the ones converted: their addr are ours now; the rest are still offsets. */
	ool_free_first(descs, i);
	if (err == IDL_EPROTO && idl_errdetail()[0] == '\0')
		idl__fail(err, "%s: out-of-line data cut short", scheme);
refused:
	/* What the descriptors name is nobody's now: no one may release it again. */
	((unsigned char *)msg)[3] &= (unsigned char)~IDL_MSGF_DESC;
	return err;
}

/* For a stream transport that reads the data itself, straight from the socket into the
 * blocks (tcp_rx.c): the blocks first, then the pieces they are read into
 * (idl__ool_inline_iov). */
int
idl__ool_inline_alloc(void *msg, uint32_t nd, const char *scheme)
{
	unsigned char *descs = (unsigned char *)msg + IDL_MSG_HEADER_SIZE;
	idl_desc_t d;

	for (uint32_t i = 0; i < nd; i++) {
		void *p;

		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.size == 0)
			continue;
		if ((p = idl__ool_alloc_fill(d.size)) == NULL) {
			ool_free_first(descs, i);
			return idl__fail(IDL_ENOMEM, "%s: no memory for %u bytes out of line",
					 scheme, d.size);
		}
		d.addr = (uint64_t)(uintptr_t)p;
		memcpy(descs + (size_t)i * IDL_DESC_SIZE, &d, sizeof d);
	}
	return 0;
}

void
idl__ool_inline_free(void *msg, uint32_t nd)
{
	ool_free_first((unsigned char *)msg + IDL_MSG_HEADER_SIZE, nd);
}

unsigned
idl__ool_inline_iov(const void *msg, size_t msize, uint32_t nd, size_t pos, struct iovec *iov,
		    void *pad)
{
	const unsigned char *descs = (const unsigned char *)msg + IDL_MSG_HEADER_SIZE;
	size_t off = msize;
	unsigned n = 0;
	idl_desc_t d;

	/* Each datum's bytes and its padding, from wire offset `pos` on: a read that stopped
	 * in the middle of a datum, or of its padding, resumes there. */
	for (uint32_t i = 0; i < nd; i++) {
		size_t end, rend;

		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.size == 0)
			continue;
		end = off + d.size;
		rend = off + IDL_MSG_ROUND((size_t)d.size);
		if (pos < end) {
			size_t from = pos > off ? pos - off : 0;

			iov[n++] = (struct iovec){ (unsigned char *)(uintptr_t)d.addr + from,
						   d.size - from };
		}
		if (pos < rend && rend > end)
			iov[n++] = (struct iovec){ pad, rend - (pos > end ? pos : end) };
		off = rend;
	}
	return n;
}

/* Only a reply is answered this way: a request's sender gets the send's error itself, and
 * a client waiting for a reply that cannot go would otherwise wait for its deadline. The
 * bare reply keeps the header's id and sequence number, so that it finds its call. */
int
idl__desc_bare_reply(const struct idl_xmsg *m, idl_msg_header_t *bare, int err,
		     struct idl_xmsg *out)
{
	const idl_msg_header_t *h = m->data;

	if (m->len < IDL_MSG_HEADER_SIZE || h->kind != IDL_KIND_REPLY)
		return 0;
	memcpy(bare, h, sizeof *bare);
	bare->size = IDL_MSG_HEADER_SIZE;
	bare->flags = 0;
	bare->ndesc = 0;
	bare->retcode = err;
	memset(out, 0, sizeof *out);
	out->data = bare;
	out->len = IDL_MSG_HEADER_SIZE;
	return 1;
}
