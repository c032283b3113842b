/*
 * fuzz_demux_seeds.c - writes the seed corpora of the two message fuzzers from the stubs
 * themselves (`make regen-fuzz-seeds`):
 *
 *     fuzz_demux_seeds DEMUX_DIR REPLY_DIR
 *
 * Every routine of every.defs is called once with valid arguments (fuzz_reply_calls.c)
 * through a stand-in transport whose send records the request, serves it with the real
 * demux and test implementation, records the reply and hands it back. A request seed is
 * what fuzz_demux reads (the message, then its out-of-line data as tcp: carries it); a
 * reply seed is what fuzz_reply reads (the routine's index, a flags byte of 0, the reply).
 * The hello and a one-way message are added to the demux corpus.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ool/ool.h"

#include "every.h"
#include "everyServer.h"
#include "every_impl.h"
#include "fuzz_demux_wire.h"

static const char *sd_demux, *sd_reply;
static unsigned sd_which;
static union {
	idl_msg_header_t h;
	unsigned char b[1 << 21];
} sd_rep;
static size_t sd_rep_len;
static int sd_hello;
static idl_msg_header_t sd_req;

/* The wire form of a message: its bytes, then each out-of-line datum padded to 8. */
static size_t
sd_wire(const idl_msg_header_t *m, unsigned char *out, size_t cap)
{
	const idl_desc_t *d = (const idl_desc_t *)(const void *)(m + 1);
	size_t n = m->size;

	memcpy(out, m, n);
	if (!idl__desc_msg(m, m->size))
		return n;
	for (uint32_t i = 0; i < m->ndesc; i++) {
		if (d[i].type != IDL_DESC_OOL)
			continue;
		if (n + IDL_MSG_ROUND(d[i].size) > cap)
			abort();
		memcpy(out + n, (const void *)(uintptr_t)d[i].addr, d[i].size);
		memset(out + n + d[i].size, 0, IDL_MSG_ROUND(d[i].size) - d[i].size);
		n += IDL_MSG_ROUND(d[i].size);
	}
	return n;
}

static void
sd_write(const char *dir, const char *name, const void *prefix, size_t np, const void *data,
	 size_t n)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL || fwrite(prefix, 1, np, f) != np ||
	    fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static int
sd_send(void *conn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	static union {
		idl_msg_header_t h;
		unsigned char b[1 << 21];
	} wire, in;
	const idl_msg_header_t *h = m->data;
	const struct idl_routine_desc *rt;
	unsigned char prefix[2] = { (unsigned char)sd_which, 0 };
	char name[64];
	size_t n;

	(void)conn;
	(void)dl;
	sd_req = *h;
	n = sd_wire(h, wire.b, sizeof wire.b);
	if (h->kind == IDL_KIND_HELLO) {
		sd_write(sd_demux, "hello", "", 0, wire.b, n);
		sd_hello = 1;
		return 0;
	}
	rt = idl_subsystem_routine(&every_subsystem, h->id);
	snprintf(name, sizeof name, "%s", rt != NULL ? rt->name : "unknown");
	sd_write(sd_demux, name, "", 0, wire.b, n);
	/* Served as a server would: converted, checked, dispatched. */
	memcpy(in.b, wire.b, n);
	if (idl__msg_convert(in.b, n) != 0)
		abort();
	idl__msg_release_sent(h);
	every_server(&in.h, &sd_rep.h);
	if (h->kind == IDL_KIND_ONEWAY) {
		if (sd_rep.h.retcode != 0)
			idl_msg_destroy(&in.h);
		return 0;
	}
	if (sd_rep.h.retcode != 0 && sd_rep.h.retcode != MIG_NO_REPLY)
		idl_msg_destroy(&in.h);
	if (sd_rep.h.retcode != 0)
		sd_rep.h.size = IDL_MSG_HEADER_SIZE;
	sd_rep_len = sd_wire(&sd_rep.h, wire.b, sizeof wire.b);
	idl__msg_release_sent(&sd_rep.h);
	sd_write(sd_reply, name, prefix, sizeof prefix, wire.b, sd_rep_len);
	memcpy(sd_rep.b, wire.b, sd_rep_len);
	return 0;
}

static int
sd_recv(void *conn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	(void)conn;
	(void)dl;
	if (sd_hello) {
		sd_hello = 0;
		{
			uint64_t own[64];

			idl__hello_hashes(&every_subsystem, IDL_HELLO_VERSION, own);
			m->len = idl__hello_reply(&every_subsystem, IDL_HELLO_VERSION, own, &sd_req,
						  m->data);
		}
		return 0;
	}
	if (sd_rep_len == 0)
		return IDL_ETIMEDOUT; /* one reply per request */
	/* Converted where it came, then the message (not its out-of-line data) handed
	 * over, as a transport does. */
	if (idl__msg_convert(sd_rep.b, sd_rep_len) != 0 || sd_rep.h.size > m->cap)
		abort();
	memcpy(m->data, sd_rep.b, sd_rep.h.size);
	m->len = sd_rep.h.size;
	sd_rep_len = 0;
	return 0;
}

int
main(int argc, char **argv)
{
	static struct idl_transport tr;
	idl_port_t port;

	if (argc != 3) {
		fprintf(stderr, "usage: fuzz_demux_seeds DEMUX_DIR REPLY_DIR\n");
		return 2;
	}
	sd_demux = argv[1];
	sd_reply = argv[2];
	ev_fuzzing = 1;
	tr = fz_transport;
	tr.scheme = "seed";
	tr.conn_send = sd_send;
	tr.conn_recv = sd_recv;
	if (idl_transport_register(&tr) != 0 || idl_port_open("seed:x", &port) != 0)
		return 1;
	idl_port_set_timeout(port, 1000);
	for (sd_which = 0; sd_which < FZ_NCALLS; sd_which++) {
		int kr = fz_call(port, sd_which);

		if (kr != 0)
			fprintf(stderr, "fuzz_demux_seeds: call %u: %s\n", sd_which,
				idl_errname(kr));
	}
	every_notify(port, 7);
	every_notify_ool(port, (char *)"one-way data", 12, IDL_PORT_NULL);
	for (idl_reply_t r; (r = ev_held_take()) != NULL;)
		idl_reply_discard(r);
	idl_port_close(port);
	return 0;
}
