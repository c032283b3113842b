/*
 * hello.c - building and reading the hello, the first exchange for a subsystem on a
 * connection (docs/wire-format.md, "The hello", has the byte layout).
 *
 * The client names the subsystem and sends one signature hash per routine; the server
 * answers with its own hashes. Each side then knows, routine by routine, whether the two
 * agree, and refuses a mismatching routine itself with IDL_ESIGNATURE.
 */
#include <config.h>

#include <string.h>

#include "internal.h"

_Static_assert(sizeof(struct idl__hello_body) == IDL_HELLO_FIXED - IDL_MSG_HEADER_SIZE,
	       "hello body layout");

int
idl__hello_build(const struct idl_subsystem *ss, idl_msg_header_t *buf)
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
	b->version = IDL_HELLO_VERSION;
	for (uint32_t i = 0; i < ss->nroutines; i++)
		b->hashes[i] = ss->routines[i].sig_hash;
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
	if (b->version != IDL_HELLO_VERSION)
		return idl__fail(IDL_EPROTO, "hello version %u", b->version);
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
idl__hello_compare(const struct idl_subsystem *ss, const uint64_t *peer, uint32_t npeer,
		   uint8_t *verdicts)
{
	for (uint32_t i = 0; i < ss->nroutines; i++) {
		if (i >= npeer)
			verdicts[i] = IDL__SIG_ABSENT;
		else if (peer[i] != ss->routines[i].sig_hash)
			verdicts[i] = IDL__SIG_MISMATCH;
		else
			verdicts[i] = IDL__SIG_OK;
	}
}

uint32_t
idl__hello_reply(const struct idl_subsystem *ss, const idl_msg_header_t *in, idl_msg_header_t *out)
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
	b->version = IDL_HELLO_VERSION;
	for (uint32_t i = 0; i < n; i++)
		b->hashes[i] = ss->routines[i].sig_hash;
	return out->size;
}
