/*
 * udp_cache.h - the udp: server's duplicate-reply cache (udp.c's header comment says what it
 * is for): entries keyed by the client's address and sequence number, with a fingerprint of
 * the request's bytes, bounded by count, bytes of replies and age, oldest dropped first.
 * Not thread-safe: the endpoint's lock guards it.
 */
#ifndef IDL_TRANSPORTS_UDP_CACHE_H
#define IDL_TRANSPORTS_UDP_CACHE_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "transport_kit.h"

#define UDP_CACHE_ENTRIES 65536u
#define UDP_CACHE_BYTES (32u << 20)
#define UDP_CACHE_AGE (60000 * 1000000ll) /* ns */

enum udp_state {
	UDP_PENDING = 0, /* delivered, no reply yet */
	UDP_DONE = 1, /* replied (reply != NULL), or a one-way message (reply == NULL) */
};

struct udp_entry {
	struct udp_entry *hnext; /* hash chain */
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
	unsigned char *reply;
};

struct udp_cache {
	struct udp_entry **buckets;
	size_t nbuckets; /* a power of two, grown with the count */
	struct idl__list age; /* struct udp_entry, the oldest first */
	size_t count;
	size_t bytes;
};

/* A fast 64-bit fingerprint, eight bytes at a time: retransmissions are byte-identical.
 * `n` bytes at p are hashed; `truelen` is the datagram's whole length. */
uint64_t idl__udp_fingerprint(const unsigned char *p, size_t n, size_t truelen);
/* The hash key of a client's address and a sequence number. */
uint64_t idl__udp_key(const unsigned char *addr, uint32_t alen, uint32_t seqno);
/* The entry of (addr, seqno), or NULL. */
struct udp_entry *idl__udp_cache_find(struct udp_cache *c, uint64_t key, const unsigned char *addr,
				      uint32_t alen, uint32_t seqno);
/* Unlinks and frees e and its reply. */
void idl__udp_cache_remove(struct udp_cache *c, struct udp_entry *e);
/* Drops the oldest entries beyond the bounds of count, bytes and age. */
void idl__udp_cache_expire(struct udp_cache *c, int64_t now);
/* A new pending entry for (addr, seqno), or NULL when out of memory. */
struct udp_entry *idl__udp_cache_add(struct udp_cache *c, uint64_t key, const unsigned char *addr,
				     uint32_t alen, uint32_t seqno, int64_t now);
/* Frees every entry and the table; the cache is empty and reusable afterwards. */
void idl__udp_cache_free(struct udp_cache *c);

#endif /* IDL_TRANSPORTS_UDP_CACHE_H */
