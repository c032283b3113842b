/*
 * uaf.c - ool-uaf: reads an out-of-line block after freeing it, so that tests/ool/uaf.sh can
 * show that AddressSanitizer (or valgrind's memcheck) reports it with the process's cache of
 * blocks on as well as off (runtime/ool/ool_cache.c, docs/runtime.md).
 *
 *     ool-uaf probe      prints what this build can catch: "asan", "memcheck" or "none"
 *     ool-uaf alloc      idl_ool_alloc(64 KiB), written, idl_ool_free()d, then read
 *     ool-uaf recv       64 KiB received out of line (the receive path of tcp:, udp: and
 *                        port:, from a message in memory), freed, then read
 *     ool-uaf past       idl_ool_alloc(40000) read at byte 40000, past its end, within
 *                        the block's mapping
 *
 * A case that is not caught prints "not caught" and exits 0: the script fails it then.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl_ool.h>

#include "ool/ool.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UAF_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(UAF_ASAN)
#define UAF_ASAN 1
#endif

#define UAF_SIZE (64u * 1024u)

/* Reads a byte the compiler cannot drop. */
static int
uaf_touch(const unsigned char *p)
{
	return *(const volatile unsigned char *)p;
}

/* 64 KiB received as tcp:, udp: and port: receive them: the message, then its data inline
 * after it, turned by the runtime into a block of the receiver's. */
static unsigned char *
uaf_received(void)
{
	size_t msize = IDL_MSG_HEADER_SIZE + IDL_DESC_SIZE, wire = msize + UAF_SIZE;
	unsigned char *msg = calloc(1, wire);
	idl_msg_header_t h = { .magic = IDL_MSG_MAGIC,
			       .order = IDL_ORDER_NATIVE,
			       .kind = IDL_KIND_REQUEST,
			       .flags = IDL_MSGF_DESC,
			       .size = (uint32_t)msize,
			       .ndesc = 1 };
	idl_desc_t d = { .addr = msize, .size = UAF_SIZE, .type = IDL_DESC_OOL };
	struct idl__ool_span span;
	int err;

	if (msg == NULL)
		return NULL;
	memcpy(msg, &h, sizeof h);
	memcpy(msg + IDL_MSG_HEADER_SIZE, &d, sizeof d);
	memset(msg + msize, 'R', UAF_SIZE);
	span = (struct idl__ool_span){ msize, msg + msize, UAF_SIZE, NULL, 0 };
	err = idl__ool_inline_in(msg, msize, wire, "uaf", idl__ool_span_read, &span);
	memcpy(&d, msg + IDL_MSG_HEADER_SIZE, sizeof d);
	free(msg);
	if (err != 0) {
		fprintf(stderr, "ool-uaf: receiving: %s\n", idl_errdetail());
		return NULL;
	}
	return (unsigned char *)(uintptr_t)d.addr;
}

int
main(int argc, char **argv)
{
	const char *what = argc == 2 ? argv[1] : "";
	unsigned char *p;
	int v;

	if (strcmp(what, "probe") == 0) {
#if defined(UAF_ASAN)
		puts("asan");
#elif HAVE_VALGRIND_MEMCHECK_H
		puts("memcheck");
#else
		puts("none");
#endif
		return 0;
	}
	if (strcmp(what, "alloc") == 0) {
		if ((p = idl_ool_alloc(UAF_SIZE)) == NULL)
			return 2;
		memset(p, 'A', UAF_SIZE);
	} else if (strcmp(what, "recv") == 0) {
		if ((p = uaf_received()) == NULL || p[UAF_SIZE - 1] != 'R')
			return 2;
	} else if (strcmp(what, "past") == 0) {
		if ((p = idl_ool_alloc(40000)) == NULL)
			return 2;
		v = uaf_touch(p + 40000);
		printf("not caught: read %d past the end\n", v);
		idl_ool_free(p, 40000);
		return 0;
	} else {
		fprintf(stderr, "usage: ool-uaf probe|alloc|recv|past\n");
		return 2;
	}
	idl_ool_free(p, UAF_SIZE);
	v = uaf_touch(p + 100);
	printf("not caught: read %d after the free\n", v);
	return 0;
}
