/*
 * test_rt_subsystem.c - routine lookup by id, the signature hash's canonical form, and what
 * the descriptor interpreter makes of tables with samecount and inline arrays of ports.
 */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include <idl/idl_dynamic.h>

#include "ool/ool.h"
#include "rt_fixture.h"

/* FNV-1a 64 of a string, written out again here so the test does not trust the runtime's. */
static uint64_t
sub_fnv(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static const struct idl_arg_desc sub_add_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "a", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 24,
	  IDL_NO_OFFSET },
	{ "wait", "natural_t", IDL_DIR_WAITTIME, IDL_ARG_IMPLICIT, IDL_WT_INT32, 0, 0, 4, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "b", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 28,
	  IDL_NO_OFFSET },
	{ "sum", "int", IDL_DIR_OUT, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1,
	  IDL_NO_OFFSET, 24 },
};

static void
test_sig_hash(void)
{
	static const char canon[] = "1 add routine(requestport port port 0 1;in scalar int32 4 1;"
				    "in scalar int32 4 1;out scalar int32 4 1;)";
	struct idl_routine_desc rt = {
		"add", 1, IDL_RT_ROUTINE, 5, 0, 0, -1, 32, 32, 32, 32, sub_add_args,
	};
	struct idl_arg_desc renamed[5];
	uint64_t h;

	/* The example of idl_subsystem.h; the implicit waittime argument is left out. */
	h = idl_routine_sig_hash(&rt);
	CU_ASSERT_EQUAL(h, sub_fnv(canon));
	CU_ASSERT_EQUAL(h, 0x88664010dee7139aull);
	/* Argument names are not part of it; bounds, types and the routine name are. */
	memcpy(renamed, sub_add_args, sizeof renamed);
	renamed[1].name = "x";
	rt.args = renamed;
	CU_ASSERT_EQUAL(idl_routine_sig_hash(&rt), h);
	renamed[1].wire_type = IDL_WT_INT64;
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash(&rt), h);
	renamed[1] = sub_add_args[1];
	renamed[4].count = 2;
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash(&rt), h);
	rt.args = sub_add_args;
	rt.name = "plus";
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash(&rt), h);
	rt.name = "add";
	rt.kind = IDL_RT_SIMPLEROUTINE;
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash(&rt), h);
	/* A skip's hash is 0. */
	rt.kind = IDL_RT_SKIP;
	CU_ASSERT_EQUAL(idl_routine_sig_hash(&rt), 0);
	/* The fixture's constants (computed outside C) agree with the runtime. */
	for (uint32_t i = 0; i < rtt_subsystem.nroutines; i++)
		CU_ASSERT_EQUAL(idl_routine_sig_hash(&rtt_subsystem.routines[i]),
				rtt_subsystem.routines[i].sig_hash);
}

/* Version 2: no number, and each argument's disposition and flags. */
static void
test_sig_hash_v2(void)
{
	static const char canon[] = "add routine(requestport port port 0 1 - -;"
				    "in scalar int32 4 1 - signed;in scalar int32 4 1 - signed;"
				    "out scalar int32 4 1 - signed;)";
	static const struct idl_arg_desc port_args[] = {
		{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0,
		  1, IDL_NO_OFFSET, IDL_NO_OFFSET },
		{ "p", "mach_port_t", IDL_DIR_IN, IDL_ARG_PORT, IDL_WT_PORT, 17,
		  IDL_ARGF_POLY_IN | IDL_ARGF_DEALLOC, 8, 1, 24, IDL_NO_OFFSET },
		{ "d", "char", IDL_DIR_OUT, IDL_ARG_VAR_ARRAY, IDL_WT_CHAR, 0, IDL_ARGF_RECORD, 1,
		  64, 40, 24 },
	};
	struct idl_routine_desc rt = {
		"add", 1, IDL_RT_ROUTINE, 5, 0, 0, -1, 32, 32, 32, 32, sub_add_args,
	};
	struct idl_routine_desc pr = {
		"give", 9, IDL_RT_ROUTINE, 3, 0, 0, -1, 48, 48, 32, 96, port_args,
	};
	struct idl_arg_desc changed[5];
	char form[512];
	size_t full;
	uint64_t h = idl_routine_sig_hash_v2(&rt), h1;

	CU_ASSERT_EQUAL(idl_routine_sig_form(&rt, 2, form, sizeof form), strlen(canon));
	CU_ASSERT_STRING_EQUAL(form, canon);
	CU_ASSERT_EQUAL(h, sub_fnv(canon));
	CU_ASSERT_EQUAL(h, 0x62a248fa61c31394ull);
	/* The number is not part of it; the name still is. */
	rt.number = 7;
	CU_ASSERT_EQUAL(idl_routine_sig_hash_v2(&rt), h);
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash(&rt), 0x88664010dee7139aull);
	rt.name = "plus";
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash_v2(&rt), h);
	rt.name = "add";
	/* What version 1 cannot see: signedness, a disposition, a flag. */
	h1 = idl_routine_sig_hash(&rt);
	memcpy(changed, sub_add_args, sizeof changed);
	rt.args = changed;
	changed[1].flags = 0;
	CU_ASSERT_NOT_EQUAL(idl_routine_sig_hash_v2(&rt), h);
	CU_ASSERT_EQUAL(idl_routine_sig_hash(&rt), h1);
	changed[1] = sub_add_args[1];
	/* A server's own translation (OPAQUE) and how C passes bytes (RECORD) are not. */
	changed[1].flags |= IDL_ARGF_OPAQUE | IDL_ARGF_RECORD;
	CU_ASSERT_EQUAL(idl_routine_sig_hash_v2(&rt), h);
	/* Words for dispositions and flags, and countinout read from a request offset. */
	CU_ASSERT_EQUAL(idl_routine_sig_form(&pr, 2, form, sizeof form), strlen(form));
	CU_ASSERT_STRING_EQUAL(form, "give routine(requestport port port 0 1 - -;"
				     "in port port 8 1 move_send poly_in,dealloc;"
				     "out var char 1 64 - countinout;)");
	CU_ASSERT_EQUAL(idl_routine_sig_hash_v2(&pr), sub_fnv(form));
	/* A short buffer gets what fits, with its NUL; the length is the whole form's. */
	full = strlen(form);
	CU_ASSERT_EQUAL(idl_routine_sig_form(&pr, 2, form, 5), full);
	CU_ASSERT_STRING_EQUAL(form, "give");
	CU_ASSERT_EQUAL(idl_routine_sig_form(&pr, 3, form, sizeof form), 0);
	CU_ASSERT_STRING_EQUAL(form, "");
	/* Version 1's form, through the same function. */
	rt.args = sub_add_args;
	rt.number = 1;
	idl_routine_sig_form(&rt, 1, form, sizeof form);
	CU_ASSERT_EQUAL(sub_fnv(form), 0x88664010dee7139aull);
	rt.kind = IDL_RT_SKIP;
	CU_ASSERT_EQUAL(idl_routine_sig_hash_v2(&rt), 0);
}

static void
test_routine_lookup(void)
{
	const struct idl_subsystem *ss = &rtt_subsystem;

	CU_ASSERT_PTR_EQUAL(idl_subsystem_routine(ss, RTT_BASE), &ss->routines[0]);
	CU_ASSERT_PTR_EQUAL(idl_subsystem_routine(ss, RTT_BASE + 6), &ss->routines[6]);
	CU_ASSERT_PTR_NULL(idl_subsystem_routine(ss, RTT_BASE + RTT_SKIP));
	CU_ASSERT_PTR_NULL(idl_subsystem_routine(ss, RTT_BASE - 1));
	CU_ASSERT_PTR_NULL(idl_subsystem_routine(ss, RTT_BASE + 7));
	CU_ASSERT_PTR_NULL(idl_subsystem_routine(ss, INT32_MAX));
	CU_ASSERT_PTR_NULL(idl_subsystem_routine(ss, INT32_MIN));
	CU_ASSERT_PTR_NULL(idl_subsystem_routine(ss, RTT_BASE + 100));
}

static void
test_hello_layout(void)
{
	static union {
		idl_msg_header_t h;
		unsigned char b[IDL_HELLO_MAX];
	} u;
	const struct idl__hello_body *b;
	const char *name;
	uint64_t own[7];
	int n;

	idl__hello_hashes(&rtt_subsystem, 2, own);
	n = idl__hello_build(&rtt_subsystem, 2, own, &u.h);
	/* 40 bytes, 7 hashes, "rtt\0" padded to 8. */
	CU_ASSERT_EQUAL_FATAL(n, 40 + 7 * 8 + 8);
	CU_ASSERT_EQUAL(u.h.kind, IDL_KIND_HELLO);
	CU_ASSERT_EQUAL(u.h.size, (uint32_t)n);
	CU_ASSERT_EQUAL(u.h.id, RTT_BASE);
	CU_ASSERT_EQUAL(idl__hello_parse(&u.h, (size_t)n, &name, &b), 0);
	CU_ASSERT_STRING_EQUAL(name, "rtt");
	CU_ASSERT_EQUAL(b->base, RTT_BASE);
	CU_ASSERT_EQUAL(b->nroutines, 7);
	CU_ASSERT_EQUAL(b->namelen, 4);
	/* Version 2 with no feature set yet: the word is 2. */
	CU_ASSERT_EQUAL(b->version, 2);
	CU_ASSERT_EQUAL(b->hashes[1], idl_routine_sig_hash_v2(&rtt_subsystem.routines[1]));
	CU_ASSERT_NOT_EQUAL(b->hashes[1], rtt_subsystem.routines[1].sig_hash);
	CU_ASSERT_EQUAL(b->hashes[RTT_SKIP], 0);
	CU_ASSERT_EQUAL(memcmp(u.b + 40 + 56, "rtt\0\0\0\0\0", 8), 0);
	/* A name without its NUL, and a size that disagrees with the counts. */
	u.b[40 + 56 + 3] = 'x';
	CU_ASSERT_EQUAL(idl__hello_parse(&u.h, (size_t)n, &name, &b), IDL_EPROTO);
	u.b[40 + 56 + 3] = '\0';
	CU_ASSERT_EQUAL(idl__hello_parse(&u.h, (size_t)n - 8, &name, &b), IDL_EPROTO);
	CU_ASSERT_EQUAL(idl__hello_parse(&u.h, 32, &name, &b), IDL_EPROTO);
	/* Features in the upper half are a version 2 peer's own business; version 0 is no
	 * version at all. */
	((struct idl__hello_body *)(void *)(u.b + 24))->version =
		IDL_HELLO_WORD(2, IDL_HELLO_F_CANCEL | IDL_HELLO_F_GOODBYE | 0x8000u);
	CU_ASSERT_EQUAL(idl__hello_parse(&u.h, (size_t)n, &name, &b), 0);
	CU_ASSERT_EQUAL(IDL_HELLO_VERSION_OF(b->version), 2);
	CU_ASSERT_EQUAL(IDL_HELLO_FEATURES_OF(b->version), 0x8003u);
	((struct idl__hello_body *)(void *)(u.b + 24))->version = IDL_HELLO_WORD(0, 1);
	CU_ASSERT_EQUAL(idl__hello_parse(&u.h, (size_t)n, &name, &b), IDL_EPROTO);

	/* Version 1: the table's hashes, and the word exactly 1. */
	idl__hello_hashes(&rtt_subsystem, 1, own);
	n = idl__hello_build(&rtt_subsystem, 1, own, &u.h);
	CU_ASSERT_EQUAL_FATAL(idl__hello_parse(&u.h, (size_t)n, &name, &b), 0);
	CU_ASSERT_EQUAL(b->version, 1);
	for (unsigned i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(b->hashes[i], rtt_subsystem.routines[i].sig_hash);
}

static void
test_verdicts(void)
{
	uint64_t own[7], peer[7];
	uint8_t v[7];

	idl__hello_hashes(&rtt_subsystem, 2, own);
	memcpy(peer, own, sizeof peer);
	peer[1] ^= 1;
	/* The peer knows 6 routines: the 7th is absent on its side. */
	idl__hello_compare(&rtt_subsystem, own, peer, 6, v);
	CU_ASSERT_EQUAL(v[0], IDL__SIG_OK);
	CU_ASSERT_EQUAL(v[1], IDL__SIG_MISMATCH);
	CU_ASSERT_EQUAL(v[4], IDL__SIG_ABSENT); /* a skip: nothing answers it */
	CU_ASSERT_EQUAL(v[5], IDL__SIG_OK);
	CU_ASSERT_EQUAL(v[6], IDL__SIG_ABSENT);
	/* A routine the peer has as a skip is absent too (the caller is told MIG_BAD_ID). */
	peer[5] = 0;
	idl__hello_compare(&rtt_subsystem, own, peer, 7, v);
	CU_ASSERT_EQUAL(v[5], IDL__SIG_ABSENT);
	CU_ASSERT_EQUAL(v[6], IDL__SIG_OK);
}

/* tally(server; a : array[*:8] of int; b : array[*:4] of int, samecount), as idlc lays it
 * out: two counts, then the data. */
static struct idl_arg_desc sub_tally_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "a", "int", IDL_DIR_IN, IDL_ARG_VAR_ARRAY, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 8, 24,
	  IDL_NO_OFFSET },
	{ "b", "int", IDL_DIR_IN, IDL_ARG_VAR_ARRAY, IDL_WT_INT32, 0,
	  IDL_ARGF_SIGNED | IDL_ARGF_SAMECOUNT, 4, 4, 28, IDL_NO_OFFSET },
};

static void
test_samecount_table(void)
{
	struct idl_routine_desc rt = { "tally", 0, IDL_RT_SIMPLEROUTINE, 3, 0, 0, -1, 32, 80,
				       0,	0, sub_tally_args };
	union {
		idl_msg_header_t head;
		uint64_t align;
		unsigned char b[128];
	} m;
	int32_t a[8] = { 1, 2, 3 }, b[4] = { 4, 5, 6 };
	struct idl_arg_value vals[3] = { { NULL, 0 }, { a, 3 }, { b, 3 } };
	struct idl_arg_span sp[3];
	uint32_t cnt;
	int size;

	/* One count for both: sent, checked, the spans say it. */
	size = idl_msg_pack(&rt, 0, vals, &m.head, sizeof m);
	CU_ASSERT_EQUAL_FATAL(size, 32 + 16 + 16);
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, (size_t)size, 0, sp), 0);
	CU_ASSERT(sp[1].count == 3 && sp[2].count == 3);
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, (size_t)size, 0, NULL), 0);
	/* Counts that disagree, the message's length still right: refused. */
	cnt = 1;
	memcpy(m.b + 24, &cnt, sizeof cnt);
	cnt = 5;
	memcpy(m.b + 28, &cnt, sizeof cnt);
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, (size_t)size, 0, NULL), -1);
	/* ... and not sent: refused before anything is built. */
	vals[2].count = 2;
	CU_ASSERT_EQUAL(idl_msg_pack(&rt, 0, vals, &m.head, sizeof m), IDL_EINVAL);
	/* Over the smaller bound of the two. */
	vals[1].count = vals[2].count = 5;
	CU_ASSERT_EQUAL(idl_msg_pack(&rt, 0, vals, &m.head, sizeof m), MIG_ARRAY_TOO_LARGE);
	/* A table no stub could have: the flag with no counted argument before it, or an
	 * inline array of ports both ways. */
	sub_tally_args[1].flags |= IDL_ARGF_SAMECOUNT;
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, (size_t)size, 0, NULL), IDL_EINVAL);
	sub_tally_args[1].flags &= ~IDL_ARGF_SAMECOUNT;
	sub_tally_args[2].kind = IDL_ARG_SCALAR;
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, (size_t)size, 0, NULL), IDL_EINVAL);
	sub_tally_args[2].kind = IDL_ARG_VAR_ARRAY;
}

static void
test_inline_ports_table(void)
{
	struct idl_arg_desc args[2] = {
		{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0,
		  1, IDL_NO_OFFSET, IDL_NO_OFFSET },
		{ "p", "mach_port_t", IDL_DIR_OUT, IDL_ARG_OOL, IDL_WT_PORT, 19, IDL_ARGF_INLINE, 0,
		  4, IDL_NO_OFFSET, 24 },
	};
	struct idl_routine_desc rt = {
		"get", 0, IDL_RT_ROUTINE, 2, 0, 0, -1, 24, 24, 40, 40, args
	};
	union {
		idl_msg_header_t head;
		uint64_t align;
		unsigned char b[64];
	} m;
	idl_desc_t d = { 0, 3, IDL_DESC_PORT_ARRAY, IDL_DESCF_FREE_ARRAY, 19 };

	memset(&m, 0, sizeof m);
	m.head.size = 40;
	m.head.flags = IDL_MSGF_DESC;
	m.head.ndesc = 1;
	memcpy(m.b + 24, &d, sizeof d);
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, 40, 1, NULL), 0);
	d.size = 5; /* over the bound */
	memcpy(m.b + 24, &d, sizeof d);
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, 40, 1, NULL), -1);
	args[1].dir = IDL_DIR_INOUT;
	args[1].req_offset = 24;
	rt.req_fixed = rt.req_max = 40;
	CU_ASSERT_EQUAL(idl_msg_check(&rt, &m.head, 40, 1, NULL), IDL_EINVAL);
}

static CU_TestInfo sub_tests[] = {
	{ "sig_hash", test_sig_hash },
	{ "sig_hash version 2", test_sig_hash_v2 },
	{ "routine_lookup", test_routine_lookup },
	{ "hello_layout", test_hello_layout },
	{ "verdicts", test_verdicts },
	{ "samecount_table", test_samecount_table },
	{ "inline_ports_table", test_inline_ports_table },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_subsystem = { "rt_subsystem", NULL, NULL, NULL, NULL, sub_tests };
