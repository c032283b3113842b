/*
 * fuzz_reply.c - libFuzzer target: a hostile server's replies through the client stubs of
 * tests/fuzz/every.defs (idl_call's checks, then the stub's).
 *
 * A port is opened on the stand-in transport "fuzz:" (fuzz_demux_wire.c), whose receive
 * answers the hello properly and then hands back the fuzz input as the reply. Input:
 *   byte 0      the routine to call (modulo the routines with a reply);
 *   byte 1      bit 0: keep the reply's header as given (else magic, order, kind, id and
 *               seqno are made to match the call, so that the stub's own checks are
 *               reached); bit 1: the reply's size field is taken as given;
 *   the rest    the reply: header, arguments, descriptors, then the data of its out-of-line
 *               descriptors as tcp: carries them.
 * Oracles: the sanitizers (what a refused reply carried is released by the stub, what an
 * accepted one carried is the caller's and freed here: a leak or double free is a
 * finding), and every call returns KERN_SUCCESS, a code of <idl/idl_error.h>, or the
 * code the server put in its reply.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ool/ool.h"

#include "every.h"
#include "fuzz_demux_wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FR_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_reply: %s\n", #cond);                                \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static struct idl_transport fr_tr;
static idl_port_t fr_port;
static const uint8_t *fr_data;
static size_t fr_size;
static idl_msg_header_t fr_req; /* the header of the request last sent */
static int fr_hello_pending;
static int32_t fr_sent_rc; /* the retcode of the reply handed over */
static union {
	idl_msg_header_t h;
	unsigned char b[1 << 16];
} fr_wire; /* the reply as it came, before the transport hands it over */

static int
fr_send(void *conn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	(void)conn;
	(void)dl;
	memcpy(&fr_req, m->data, sizeof fr_req);
	if (fr_req.kind == IDL_KIND_HELLO)
		fr_hello_pending = 1;
	if (idl__desc_msg(m->data, m->len))
		idl__msg_release_sent(m->data);
	return 0;
}

static int
fr_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	idl_msg_header_t *h = m->data;
	uint8_t flags;
	size_t n;

	(void)conn;
	(void)dl;
	if (fr_hello_pending) {
		fr_hello_pending = 0;
		FR_CHECK(m->cap >= IDL_HELLO_MAX);
		{
			uint64_t own[64];

			idl__hello_hashes(&every_subsystem, IDL_HELLO_VERSION, own);
			m->len = idl__hello_reply(&every_subsystem, IDL_HELLO_VERSION, own, &fr_req,
						  h);
		}
		return 0;
	}
	if (fr_data == NULL)
		return IDL_ETIMEDOUT; /* one reply per input: a second wait times out */
	flags = fr_size > 1 ? fr_data[1] : 0;
	n = fr_size > 2 ? fr_size - 2 : 0;
	if (n > sizeof fr_wire)
		n = sizeof fr_wire;
	memcpy(fr_wire.b, fr_data + 2, n);
	fr_data = NULL;
	if (n >= IDL_MSG_HEADER_SIZE && !(flags & 1)) {
		fr_wire.h.magic = IDL_MSG_MAGIC;
		fr_wire.h.order = IDL_ORDER_NATIVE;
		fr_wire.h.kind = IDL_KIND_REPLY;
		fr_wire.h.id = (int32_t)((uint32_t)fr_req.id + IDL_REPLY_ID_OFFSET);
		fr_wire.h.seqno = fr_req.seqno;
		if (!(flags & 2))
			fr_wire.h.size = (uint32_t)(n < fr_wire.h.size ? n : fr_wire.h.size) & ~7u;
	}
	/* What a transport does: descriptors converted where the message came (a malformed
	 * one refused), then the message handed over; what followed it on the wire was the
	 * transport's. */
	if (idl__msg_convert(fr_wire.b, n) != 0)
		return IDL_EPROTO;
	if (idl__desc_msg(fr_wire.b, n))
		n = fr_wire.h.size;
	if (n > m->cap) {
		/* Too large: what it carried is released, the flag cleared, the true size
		 * told (the receive-size rule). */
		idl_msg_destroy(&fr_wire.h);
		if (n >= IDL_MSG_HEADER_SIZE)
			fr_wire.h.flags &= (uint8_t)~IDL_MSGF_DESC;
		memcpy(m->data, fr_wire.b, m->cap);
		m->len = n;
		return IDL_EMSGSIZE;
	}
	memcpy(m->data, fr_wire.b, n);
	m->len = n;
	fr_sent_rc = n >= IDL_MSG_HEADER_SIZE ? fr_wire.h.retcode : 0;
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fr_tr = fz_transport;
	fr_tr.scheme = "fuzzreply";
	fr_tr.conn_send = fr_send;
	fr_tr.conn_recv = fr_recv;
	FR_CHECK(idl_transport_register(&fr_tr) == 0);
	FR_CHECK(idl_port_open("fuzzreply:x", &fr_port) == 0);
	return 0;
}

static int
fr_defined(int kr)
{
	return kr >= 0 || strcmp(idl_errname(kr), "UNKNOWN") != 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int kr;

	fr_data = data;
	fr_size = size;
	fr_sent_rc = 0;
	kr = fz_call(fr_port, size > 0 ? data[0] : 0);
	/* A server's own code travels unchanged, whatever it is; anything else the client
	 * says is a code of the table. */
	FR_CHECK(fr_defined(kr) || kr == fr_sent_rc);
	/* A connection the runtime gave up on is made again by the next call: the stand-in
	 * transport connects at once, and the hello is exchanged again. */
	fr_data = NULL;
	return 0;
}
