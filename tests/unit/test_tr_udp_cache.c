/*
 * test_tr_udp_cache.c - the udp: server's duplicate-reply cache (transports/udp/udp_cache.h)
 * on its own: a retransmission found, a number reused with other bytes, replies kept in an
 * entry and outside it, the reply's lookup with and without the last entry, IPv4 and IPv6
 * addresses told apart, the bounds of count and age, and a cache freed and used again.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "udp/udp_cache.h"

/* A peer's address as the transport keeps it: the room of a struct idl_peer, of which
 * only the first alen bytes are the address (the rest is whatever was there). */
struct uc_addr {
	unsigned char b[124];
	uint32_t len;
};

static struct uc_addr
uc_v4(uint32_t ip, uint16_t port, unsigned char junk)
{
	struct uc_addr a;
	struct sockaddr_in sin;

	memset(&a, junk, sizeof a);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(ip);
	memcpy(a.b, &sin, sizeof sin);
	a.len = sizeof sin;
	return a;
}

static struct uc_addr
uc_v6(unsigned char last, uint16_t port)
{
	struct uc_addr a;
	struct sockaddr_in6 sin6;

	memset(&a, 0x5a, sizeof a);
	memset(&sin6, 0, sizeof sin6);
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	sin6.sin6_addr.s6_addr[15] = last;
	memcpy(a.b, &sin6, sizeof sin6);
	a.len = sizeof sin6;
	return a;
}

/* One request's probe: the request is `len` bytes whose fingerprint is fp. */
static struct udp_entry *
uc_take(struct udp_cache *c, const struct uc_addr *a, uint32_t seqno, uint64_t fp, uint32_t len,
	int64_t now, int *dup)
{
	return idl__udp_cache_take(c, idl__udp_key(a->b, a->len, seqno), a->b, a->len, seqno, fp,
				   len, now, dup);
}

static void
test_retransmission(void)
{
	struct udp_cache c = { 0 };
	struct uc_addr a = uc_v4(0x7f000001, 4000, 0x11), again = uc_v4(0x7f000001, 4000, 0xee);
	unsigned char reply[32];
	struct udp_entry *e, *d;
	int dup = -1;

	e = uc_take(&c, &a, 7, 0x1234, 32, 1, &dup);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(dup, 0);
	CU_ASSERT_EQUAL(e->state, UDP_PENDING);
	CU_ASSERT_EQUAL(c.count, 1);
	/* The reply to the request just taken: the last entry, no lookup. */
	for (size_t i = 0; i < sizeof reply; i++)
		reply[i] = (unsigned char)(i * 7 + 1);
	CU_ASSERT_PTR_EQUAL(idl__udp_cache_for_reply(&c, a.b, a.len, 7), e);
	CU_ASSERT_EQUAL(idl__udp_cache_store(&c, e, reply, sizeof reply), 0);
	CU_ASSERT_EQUAL(e->state, UDP_DONE);
	CU_ASSERT_PTR_EQUAL(e->reply, e->rep_inline);
	CU_ASSERT_EQUAL(c.bytes, sizeof reply);
	/* The same bytes again, from the same address whatever follows it in the room: a
	 * retransmission, answered from the entry. */
	d = uc_take(&c, &again, 7, 0x1234, 32, 2, &dup);
	CU_ASSERT_PTR_EQUAL(d, e);
	CU_ASSERT_EQUAL(dup, 1);
	CU_ASSERT_EQUAL(d->replen, sizeof reply);
	CU_ASSERT_EQUAL(memcmp(d->reply, reply, sizeof reply), 0);
	/* A reply to a request that is done already has no entry to go to. */
	CU_ASSERT_PTR_NULL(idl__udp_cache_for_reply(&c, a.b, a.len, 7));
	CU_ASSERT_EQUAL(c.count, 1);
	idl__udp_cache_free(&c);
}

static void
test_number_reused(void)
{
	struct udp_cache c = { 0 };
	struct uc_addr a = uc_v4(0x0a000002, 5000, 0);
	unsigned char reply[40] = { 1, 2, 3 };
	struct udp_entry *e, *d;
	int dup = -1;

	e = uc_take(&c, &a, 9, 0xaaaa, 48, 1, &dup);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(idl__udp_cache_store(&c, e, reply, sizeof reply), 0);
	/* The same number with other bytes (a client that started over): a new request in
	 * the same entry, its old reply forgotten. */
	d = uc_take(&c, &a, 9, 0xbbbb, 48, 2, &dup);
	CU_ASSERT_PTR_EQUAL(d, e);
	CU_ASSERT_EQUAL(dup, 0);
	CU_ASSERT_EQUAL(d->state, UDP_PENDING);
	CU_ASSERT_EQUAL(d->replen, 0);
	CU_ASSERT_EQUAL(c.bytes, 0);
	/* The same fingerprint but another length is another request too. */
	d = uc_take(&c, &a, 9, 0xbbbb, 56, 3, &dup);
	CU_ASSERT_EQUAL(dup, 0);
	CU_ASSERT_EQUAL(c.count, 1);
	idl__udp_cache_free(&c);
}

static void
test_reply_lookup(void)
{
	struct udp_cache c = { 0 };
	struct uc_addr a = uc_v4(0x7f000001, 4001, 0), b = uc_v4(0x7f000001, 4002, 0);
	unsigned char big[200];
	struct udp_entry *ea, *eb, *d;
	int dup;

	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(255 - i);
	ea = uc_take(&c, &a, 1, 1, 32, 1, &dup);
	eb = uc_take(&c, &b, 1, 1, 32, 1, &dup);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ea);
	CU_ASSERT_PTR_NOT_NULL_FATAL(eb);
	CU_ASSERT_PTR_NOT_EQUAL(ea, eb);
	/* A's reply after B's request: found by a lookup, not as the last entry. A reply
	 * larger than an entry's room is kept apart. */
	CU_ASSERT_PTR_EQUAL(idl__udp_cache_for_reply(&c, a.b, a.len, 1), ea);
	CU_ASSERT_EQUAL(idl__udp_cache_store(&c, ea, big, sizeof big), 0);
	CU_ASSERT_PTR_NOT_EQUAL(ea->reply, ea->rep_inline);
	CU_ASSERT_EQUAL(c.bytes, sizeof big);
	d = uc_take(&c, &a, 1, 1, 32, 2, &dup);
	CU_ASSERT_PTR_EQUAL(d, ea);
	CU_ASSERT_EQUAL(dup, 1);
	CU_ASSERT_EQUAL(memcmp(d->reply, big, sizeof big), 0);
	/* No entry for a number never seen. */
	CU_ASSERT_PTR_NULL(idl__udp_cache_for_reply(&c, a.b, a.len, 2));
	idl__udp_cache_free(&c);
}

static void
test_addresses(void)
{
	struct udp_cache c = { 0 };
	struct uc_addr v4 = uc_v4(0x7f000001, 4000, 0), v6 = uc_v6(1, 4000),
		       other_port = uc_v4(0x7f000001, 4001, 0),
		       other_ip = uc_v4(0x7f000002, 4000, 0);
	struct udp_entry *e[4];
	int dup;

	/* The key of an IPv4 address is the same for the same address and number. */
	CU_ASSERT_EQUAL(idl__udp_key(v4.b, v4.len, 3), idl__udp_key(v4.b, v4.len, 3));
	CU_ASSERT_NOT_EQUAL(idl__udp_key(v4.b, v4.len, 3), idl__udp_key(v4.b, v4.len, 4));
	e[0] = uc_take(&c, &v4, 3, 1, 32, 1, &dup);
	e[1] = uc_take(&c, &v6, 3, 1, 32, 1, &dup);
	CU_ASSERT_EQUAL(dup, 0);
	e[2] = uc_take(&c, &other_port, 3, 1, 32, 1, &dup);
	CU_ASSERT_EQUAL(dup, 0);
	e[3] = uc_take(&c, &other_ip, 3, 1, 32, 1, &dup);
	CU_ASSERT_EQUAL(dup, 0);
	CU_ASSERT_EQUAL(c.count, 4);
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			CU_ASSERT_PTR_NOT_EQUAL(e[i], e[j]);
	CU_ASSERT_PTR_EQUAL(uc_take(&c, &v6, 3, 1, 32, 2, &dup), e[1]);
	CU_ASSERT_EQUAL(dup, 1);
	idl__udp_cache_free(&c);
}

static void
test_bounds(void)
{
	struct udp_cache c = { 0 };
	struct uc_addr a = uc_v4(0x7f000001, 4000, 0);
	struct udp_entry *e;
	int dup;

	/* Past the count bound the oldest entries go, one for each new one. */
	for (uint32_t s = 0; s < UDP_CACHE_ENTRIES + 10; s++)
		CU_ASSERT_PTR_NOT_NULL_FATAL(uc_take(&c, &a, s, s, 32, 1, &dup));
	CU_ASSERT_EQUAL(c.count, UDP_CACHE_ENTRIES);
	CU_ASSERT_PTR_NULL(idl__udp_cache_find(&c, idl__udp_key(a.b, a.len, 9), a.b, a.len, 9));
	CU_ASSERT_PTR_NOT_NULL(
		idl__udp_cache_find(&c, idl__udp_key(a.b, a.len, 10), a.b, a.len, 10));
	idl__udp_cache_free(&c);
	CU_ASSERT_EQUAL(c.count, 0);
	CU_ASSERT_EQUAL(c.nbuckets, 0);

	/* Freed, the cache is used again; an entry older than the age bound goes at the next
	 * request. */
	e = uc_take(&c, &a, 1, 1, 32, 1000, &dup);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(dup, 0);
	CU_ASSERT_PTR_NOT_NULL(uc_take(&c, &a, 2, 2, 32, 1000 + UDP_CACHE_AGE / 2, &dup));
	CU_ASSERT_EQUAL(c.count, 2);
	CU_ASSERT_PTR_NOT_NULL(uc_take(&c, &a, 3, 3, 32, 1001 + UDP_CACHE_AGE, &dup));
	CU_ASSERT_EQUAL(c.count, 2);
	CU_ASSERT_PTR_NULL(idl__udp_cache_find(&c, idl__udp_key(a.b, a.len, 1), a.b, a.len, 1));
	idl__udp_cache_free(&c);
}

static CU_TestInfo tr_udp_cache_tests[] = {
	{ "retransmission", test_retransmission },
	{ "number reused", test_number_reused },
	{ "reply lookup", test_reply_lookup },
	{ "addresses", test_addresses },
	{ "bounds", test_bounds },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_tr_udp_cache = {
	"tr_udp_cache", NULL, NULL, NULL, NULL, tr_udp_cache_tests
};
