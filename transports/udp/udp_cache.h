/*
 * udp_cache.h - the udp: server's duplicate-reply cache (udp.c's header comment says what it
 * is for): entries keyed by the client's address and sequence number, with a fingerprint of
 * the request's bytes, bounded by count, bytes of replies and age, oldest dropped first.
 *
 * A request costs one probe of the table, which finds its entry or makes it (a retransmission
 * is answered or dropped there), and its reply none: the endpoint remembers the entry it
 * made last, and a reply to that request (the common case: the receiving thread answers the
 * request it just took) is stored without looking it up again. Entries come from slabs the
 * cache keeps and reuses, and a small reply is kept inside its entry, so a call allocates
 * nothing once the cache has grown to its working size.
 * Not thread-safe: the endpoint's lock guards it.
 */
#ifndef IDL_TRANSPORTS_UDP_CACHE_H
#define IDL_TRANSPORTS_UDP_CACHE_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "transport_kit.h"

#define UDP_CACHE_ENTRIES 65536u
#define UDP_CACHE_BYTES (32u << 20)
#define UDP_CACHE_AGE (60000 * 1000000ll) /* ns */
/* Replies up to this many bytes are kept inside their entry (a bare error reply is 24). */
#define UDP_CACHE_INLINE 64u
/* Entries are allocated this many at a time and never freed before the cache. */
#define UDP_CACHE_SLAB 64u

enum udp_state {
	UDP_PENDING = 0, /* delivered, no reply yet */
	UDP_DONE = 1, /* replied (replen != 0), or a one-way message (replen == 0) */
};

struct udp_entry {
	struct udp_entry *hnext; /* hash chain; the free list while unused */
	struct idl__link link; /* on the age list */
	uint64_t key;
	uint64_t fp; /* fingerprint of the request's bytes */
	uint32_t reqlen;
	uint32_t seqno; /* as the bytes came, whatever their order */
	uint32_t alen;
	uint32_t replen;
	int64_t t_ns; /* when the request first came */
	int state;
	unsigned char addr[sizeof(struct sockaddr_in6)];
	unsigned char *reply; /* rep_inline, or malloc'd for a larger reply */
	unsigned char rep_inline[UDP_CACHE_INLINE];
};

struct udp_slab;

struct udp_cache {
	struct udp_entry **buckets;
	size_t nbuckets; /* a power of two, grown with the count */
	struct idl__list age; /* struct udp_entry, the oldest first */
	size_t count;
	size_t bytes;
	struct udp_entry *free; /* entries to reuse, chained by hnext */
	struct udp_slab *slabs;
	struct udp_entry *last; /* the entry the last request made, or NULL */
};

_Static_assert(UDP_CACHE_INLINE <= IDL__COPY_SMALL, "a reply kept in line is a small copy");

/* A fast 64-bit fingerprint, eight bytes at a time: retransmissions are byte-identical.
 * `n` bytes at p are hashed; `truelen` is the datagram's whole length. In line: a request's
 * few words cost less than the call would. */
static inline uint64_t
idl__udp_fingerprint(const unsigned char *p, size_t n, size_t truelen)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ truelen, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}
/* The hash key of a client's address and a sequence number: an IPv4 address (a 16-byte
 * sockaddr_in) in line, mixed once, where a loop and a call would cost more than the rest of
 * the lookup; other addresses through the fingerprint. */
static inline uint64_t
idl__udp_key(const unsigned char *addr, uint32_t alen, uint32_t seqno)
{
	uint64_t a, b, h;

	if (alen != 16)
		return idl__udp_fingerprint(addr, alen, seqno) ^ ((uint64_t)seqno << 17);
	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	h = (a ^ b ^ ((uint64_t)seqno << 32 | seqno)) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}
/* Whether two addresses of alen bytes (at most a sockaddr_in6) are the same: eight bytes at
 * a time, inline, where memcmp() would be a call for 16 or 28 bytes. */
static inline int
idl__udp_addr_eq(const unsigned char *a, const unsigned char *b, uint32_t alen)
{
	uint64_t x, y, u, v;
	uint32_t i = 0;

	if (alen == 16) {
		/* IPv4: two words, no loop. */
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		memcpy(&u, a + 8, 8);
		memcpy(&v, b + 8, 8);
		return ((x ^ y) | (u ^ v)) == 0;
	}
	for (; i + 8 <= alen; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return 0;
	}
	for (; i < alen; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}
/* The entry of (addr, seqno), or NULL. */
struct udp_entry *idl__udp_cache_find(struct udp_cache *c, uint64_t key, const unsigned char *addr,
				      uint32_t alen, uint32_t seqno);
/*
 * One probe for a request that came: its entry, found or made. *dup is 1 when the entry
 * was there with the same fingerprint and length (a retransmission: the caller answers it
 * from the entry or drops it), 0 when the request is new (a fresh pending entry, or one
 * whose number came back with other bytes, reset). NULL when out of memory (the request is
 * then served without an entry, as when the cache forgot it). Expires entries beyond the
 * bounds, oldest first. `addr` has room for a sockaddr_in6 whatever alen is (a struct
 * idl_peer's): the entry copies that room whole.
 */
struct udp_entry *idl__udp_cache_take(struct udp_cache *c, uint64_t key, const unsigned char *addr,
				      uint32_t alen, uint32_t seqno, uint64_t fp, uint32_t reqlen,
				      int64_t now, int *dup);
/* The pending entry of (addr, seqno) found by a lookup, or NULL. */
struct udp_entry *idl__udp_cache_find_pending(struct udp_cache *c, const unsigned char *addr,
					      uint32_t alen, uint32_t seqno);
/* The pending entry a reply to (addr, seqno) belongs to, or NULL: the last one made when it
 * matches (in line, the common case), else a lookup. */
static inline struct udp_entry *
idl__udp_cache_for_reply(struct udp_cache *c, const unsigned char *addr, uint32_t alen,
			 uint32_t seqno)
{
	struct udp_entry *e = c->last;

	if (e != NULL && e->seqno == seqno && e->alen == alen &&
	    idl__udp_addr_eq(e->addr, addr, alen))
		return e->state == UDP_PENDING ? e : NULL;
	return idl__udp_cache_find_pending(c, addr, alen, seqno);
}
/* Stores a reply in a pending entry (it becomes done); 0, or -1 when out of memory (the
 * entry stays pending: a duplicate is then dropped, not answered). */
int idl__udp_cache_store(struct udp_cache *c, struct udp_entry *e, const void *reply, size_t len);
/* Removes e (its reply released, the entry kept for reuse). */
void idl__udp_cache_remove(struct udp_cache *c, struct udp_entry *e);
/* Drops the oldest entries beyond the bounds of count, bytes and age. */
void idl__udp_cache_expire(struct udp_cache *c, int64_t now);
/* Frees every entry, slab and the table; the cache is empty and reusable afterwards. */
void idl__udp_cache_free(struct udp_cache *c);
/* The cache's clock: CLOCK_MONOTONIC_COARSE in nanoseconds. Its ages are a minute long,
 * so a clock of a few milliseconds' resolution does, at a fraction of a precise read. */
int64_t idl__udp_cache_now(void);

#endif /* IDL_TRANSPORTS_UDP_CACHE_H */
