/*
 * fuzz_demux.c - libFuzzer target: raw request bytes through the server's checks and the
 * generated demux of tests/fuzz/every.defs, as a receiving thread serves them.
 *
 * Input: the bytes of one received message (header, arguments, descriptors), followed by
 * the data of its out-of-line descriptors as tcp: carries them. The message goes through
 * the descriptor conversion a transport makes (fuzz_demux_wire.c: refused messages stop
 * there, as a transport drops them), then idl__srv_serve_one() on a connection that has
 * said hello, then - when a routine deferred its reply - idl_reply_send().
 *
 * Oracles: the sanitizers (address, undefined, leaks: every out-of-line datum and port is
 * released once, by the routine or by the runtime); the implementation's bound checks
 * (tests/harden/every_impl.c aborts on a count or length beyond every.defs); and every
 * input yields no reply (one-way, deferred) or a well-formed one: a reply header echoing
 * the request, and either a body with KERN_SUCCESS or a bare header with a defined code.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#include "everyServer.h"
#include "every_impl.h"
#include "fuzz_demux_wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct idl_server *fd_srv;
static struct srv_src *fd_src;
static struct srv_ep fd_ep;
static union {
	idl_msg_header_t h;
	unsigned char b[1 << 16];
} fd_wire; /* the message as it came, before the transport hands it over */

#define FD_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_demux: %s\n", #cond);                                \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* A code a client may be told: a runtime or MIG code from the table, or a routine's own
 * (every_impl.c returns KERN_INVALID_ARGUMENT and KERN_FAILURE). */
static int
fd_defined(int32_t rc)
{
	return rc == 4 || rc == 5 || strcmp(idl_errname(rc), "UNKNOWN") != 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	union {
		idl_msg_header_t h;
		char b[IDL_HELLO_MAX];
	} hello, out;
	int n;

	(void)argc;
	(void)argv;
	ev_fuzzing = 1;
	FD_CHECK(idl_server_create(&fd_srv) == 0);
	FD_CHECK(idl_server_add_subsystem(fd_srv, &every_subsystem, every_server) == 0);
	FD_CHECK(idl_server_set_log(fd_srv, NULL, NULL) == 0);
	idl__srv_size_buffers(fd_srv);
	fd_ep.head.kind = IDL__HANDLE_ENDPOINT;
	fd_ep.head.ops = &idl__srv_endpoint_ops;
	fd_ep.head.address = (char *)"fuzz:demux";
	fd_ep.srv = fd_srv;
	fd_ep.tr = &fz_transport;
	FD_CHECK((fd_src = calloc(1, sizeof *fd_src)) != NULL);
	fd_src->ep = &fd_ep;
	FD_CHECK((fd_src->conn = idl__zalloc(fz_transport.conn_size)) != NULL);
	FD_CHECK(idl__srv_src_alloc(fd_srv, fd_src) == 0);
	fd_src->cred_err = IDL_ENOTSUP;
	/* The connection says hello first, as a client runtime does. */
	{
		uint64_t own[64];

		FD_CHECK(every_subsystem.nroutines <= 64);
		idl__hello_hashes(&every_subsystem, IDL_HELLO_VERSION, own);
		FD_CHECK((n = idl__hello_build(&every_subsystem, IDL_HELLO_VERSION, own,
					       &hello.h)) > 0);
	}
	hello.h.magic = IDL_MSG_MAGIC;
	hello.h.order = IDL_ORDER_NATIVE;
	hello.h.kind = IDL_KIND_HELLO;
	hello.h.size = (uint32_t)n;
	FD_CHECK(idl__srv_serve_one(fd_src, &fd_src->hello, &hello.h, (size_t)n, 0, &out.h, NULL,
				    NULL) > 0);
	FD_CHECK(out.h.retcode == 0 && fd_src->greeted);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	idl_msg_header_t *in = fd_src->rbuf, *out = fd_src->sbuf;
	idl_msg_header_t req;
	size_t len = size;
	int rcv_err = 0;
	uint32_t n;
	idl_reply_t r;

	/* What a transport does: descriptors converted where the message came (a malformed
	 * one is dropped), then the message handed over - what followed it on the wire was
	 * the transport's - at most the receive buffer: a larger one is cut, with its true
	 * length, what it carried released and its flag cleared (the receive-size rule). */
	if (len > sizeof fd_wire)
		len = sizeof fd_wire;
	memcpy(fd_wire.b, data, len);
	if (idl__msg_convert(fd_wire.b, len) != 0)
		return 0;
	if (idl__desc_msg(fd_wire.b, len))
		len = fd_wire.h.size;
	if (len > fd_srv->rcap) {
		idl_msg_destroy(&fd_wire.h);
		fd_wire.h.flags &= (uint8_t)~IDL_MSGF_DESC;
		memcpy(in, fd_wire.b, fd_srv->rcap);
		rcv_err = IDL_EMSGSIZE;
	} else {
		memcpy(in, fd_wire.b, len);
	}
	memset(&req, 0, sizeof req);
	memcpy(&req, data, size < sizeof req ? size : sizeof req);
	memset(out, 0xa5, fd_srv->scap); /* no byte of an earlier reply may pass for this one */

	n = idl__srv_serve_one(fd_src, &fd_src->hello, in, len, rcv_err, out, NULL, NULL);
	if (n != 0) {
		FD_CHECK(n >= IDL_MSG_HEADER_SIZE && n <= fd_srv->scap && n % 8 == 0);
		FD_CHECK(out->magic == IDL_MSG_MAGIC && out->seqno == req.seqno);
		FD_CHECK(out->kind == IDL_KIND_REPLY || out->kind == IDL_KIND_HELLO_REPLY);
		if (out->order == IDL_ORDER_NATIVE) {
			FD_CHECK(out->size == n);
			FD_CHECK((uint32_t)out->id == (uint32_t)req.id + IDL_REPLY_ID_OFFSET);
			FD_CHECK(out->retcode == 0 || n == IDL_MSG_HEADER_SIZE);
			FD_CHECK(fd_defined(out->retcode));
		} else {
			/* The other byte order is answered in it (docs/wire-format.md). */
			FD_CHECK(out->order == req.order && n == IDL_MSG_HEADER_SIZE);
			FD_CHECK(__builtin_bswap32(out->size) == n);
			FD_CHECK((int32_t)__builtin_bswap32((uint32_t)out->retcode) ==
				 IDL_EBYTEORDER);
		}
		/* Sending consumes what the reply gives away (ool_out's dealloc data). */
		if (idl__desc_msg(out, n))
			idl__msg_release_sent(out);
	}
	/* Deferred replies: sent, as a routine would later (and the transport consumes). */
	while ((r = ev_held_take()) != NULL)
		FD_CHECK(S_every_deferred_send_reply(r, KERN_SUCCESS, 1) == 0);
	return 0;
}
