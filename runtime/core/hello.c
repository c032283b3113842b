/*
 * hello.c - building and reading the hello, the first exchange for a subsystem on a
 * connection (docs/wire-format.md, "The hello", has the byte layout).
 *
 * The client names the subsystem and sends one signature hash per routine; the server
 * answers with its own hashes. Each side then knows, routine by routine, whether the two
 * agree, and refuses a mismatching routine itself with IDL_ESIGNATURE.
 *
 * Two versions of the hashes exist (<idl/idl_subsystem.h>): version 1's, in the table, and
 * version 2's, which also cover port dispositions and argument flags and which the runtime
 * computes from the table. A hello carries the hashes of its version; the server answers
 * in the older of its version and the client's, so that a peer of either age is understood
 * (call.c and server_request.c hold the rest of the negotiation).
 *
 * Core: it builds, parses and compares the bytes, and knows nothing of the client or the
 * server that send them.
 */
#include <config.h>

#include <string.h>

#include "core/core.h"

_Static_assert(sizeof(struct idl__hello_body) == IDL_HELLO_FIXED - IDL_MSG_HEADER_SIZE,
	       "hello body layout");

void
idl__hello_hashes(const struct idl_subsystem *ss, unsigned version, uint64_t *hashes)
{
	for (uint32_t i = 0; i < ss->nroutines; i++)
		hashes[i] = version >= 2 ? idl_routine_sig_hash_v2(&ss->routines[i])
					 : ss->routines[i].sig_hash;
}

int
idl__hello_build(const struct idl_subsystem *ss, unsigned version, const uint64_t *own,
		 idl_msg_header_t *buf)
{
	struct idl__hello_body *b = (struct idl__hello_body *)(buf + 1);
	size_t namelen = strlen(ss->name) + 1;
	uint32_t size;
	char *name;

	if (namelen > IDL_HELLO_NAME_MAX)
		return idl__fail(IDL_ELIMIT, "%s: subsystem name longer than %u bytes", ss->name,
				 IDL_HELLO_NAME_MAX - 1);
	if (ss->nroutines > IDL_HELLO_MAX_ROUTINES)
		return idl__fail(IDL_ELIMIT, "%s: more than %u routines", ss->name,
				 IDL_HELLO_MAX_ROUTINES);
	size = IDL_HELLO_FIXED + 8u * ss->nroutines + (uint32_t)IDL_MSG_ROUND(namelen);
	memset(buf, 0, size);
	buf->magic = IDL_MSG_MAGIC;
	buf->order = IDL_ORDER_NATIVE;
	buf->kind = IDL_KIND_HELLO;
	buf->size = size;
	buf->id = ss->base;
	b->base = ss->base;
	b->nroutines = ss->nroutines;
	b->namelen = (uint32_t)namelen;
	/* Version 1 peers expect the word to be exactly 1: features start with version 2. */
	b->version = IDL_HELLO_WORD(version, version >= 2 ? IDL_HELLO_FEATURES : 0);
	memcpy(b->hashes, own, 8u * (size_t)ss->nroutines);
	name = (char *)&b->hashes[ss->nroutines];
	memcpy(name, ss->name, namelen);
	return (int)size;
}

int
idl__hello_parse(const idl_msg_header_t *in, size_t len, const char **name,
		 const struct idl__hello_body **body)
{
	const struct idl__hello_body *b = (const struct idl__hello_body *)(in + 1);
	const char *s;
	size_t off;

	if (len < IDL_HELLO_FIXED)
		return idl__fail(IDL_EPROTO, "hello shorter than %u bytes", IDL_HELLO_FIXED);
	if (IDL_HELLO_VERSION_OF(b->version) == 0)
		return idl__fail(IDL_EPROTO, "hello version 0");
	if (b->nroutines > IDL_HELLO_MAX_ROUTINES || b->namelen == 0 ||
	    b->namelen > IDL_HELLO_NAME_MAX)
		return idl__fail(IDL_EPROTO, "hello with %u routines and a %u-byte name",
				 b->nroutines, b->namelen);
	/* Both are bounded above, so the sum cannot overflow. */
	off = IDL_HELLO_FIXED + 8u * (size_t)b->nroutines;
	if (len != off + IDL_MSG_ROUND(b->namelen))
		return idl__fail(IDL_EPROTO, "hello size %zu does not match its counts", len);
	s = (const char *)in + off;
	if (memchr(s, '\0', b->namelen) != s + b->namelen - 1)
		return idl__fail(IDL_EPROTO, "hello name not NUL-terminated at its length");
	*name = s;
	*body = b;
	return 0;
}

void
idl__hello_compare(const struct idl_subsystem *ss, const uint64_t *own, const uint64_t *peer,
		   uint32_t npeer, uint8_t *verdicts)
{
	for (uint32_t i = 0; i < ss->nroutines; i++) {
		/* A skip on either side (hash 0) is a number nothing answers: absent, so that
		 * the caller is told MIG_BAD_ID, as the server would tell it. */
		if (i >= npeer || peer[i] == 0 || own[i] == 0)
			verdicts[i] = IDL__SIG_ABSENT;
		else if (peer[i] != own[i])
			verdicts[i] = IDL__SIG_MISMATCH;
		else
			verdicts[i] = IDL__SIG_OK;
	}
}

uint32_t
idl__hello_reply(const struct idl_subsystem *ss, unsigned version, const uint64_t *own,
		 const idl_msg_header_t *in, idl_msg_header_t *out)
{
	struct idl__hello_body *b = (struct idl__hello_body *)(out + 1);
	uint32_t n =
		ss->nroutines < IDL_HELLO_MAX_ROUTINES ? ss->nroutines : IDL_HELLO_MAX_ROUTINES;

	idl_reply_init(in, out);
	out->kind = IDL_KIND_HELLO_REPLY;
	out->size = IDL_HELLO_FIXED + 8u * n;
	b->base = ss->base;
	b->nroutines = n;
	b->namelen = 0;
	b->version = IDL_HELLO_WORD(version, version >= 2 ? IDL_HELLO_FEATURES : 0);
	memcpy(b->hashes, own, 8u * (size_t)n);
	return out->size;
}
