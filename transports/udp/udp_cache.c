/*
 * udp_cache.c - the udp: server's duplicate-reply cache (udp_cache.h).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "udp_cache.h"

uint64_t
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

uint64_t
idl__udp_key(const unsigned char *addr, uint32_t alen, uint32_t seqno)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seqno;

	for (uint32_t i = 0; i < alen; i++)
		h = (h ^ addr[i]) * 0x100000001b3ull;
	return h ^ ((uint64_t)seqno << 17);
}

struct udp_entry *
idl__udp_cache_find(struct udp_cache *c, uint64_t key, const unsigned char *addr, uint32_t alen,
		    uint32_t seqno)
{
	if (c->nbuckets == 0)
		return NULL;
	for (struct udp_entry *e = c->buckets[key & (c->nbuckets - 1)]; e; e = e->hnext)
		if (e->key == key && e->seqno == seqno && e->alen == alen &&
		    memcmp(e->addr, addr, alen) == 0)
			return e;
	return NULL;
}

void
idl__udp_cache_remove(struct udp_cache *c, struct udp_entry *e)
{
	struct udp_entry **pp = &c->buckets[e->key & (c->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	idl__list_remove(&c->age, &e->link);
	c->count--;
	c->bytes -= e->replen;
	free(e->reply);
	free(e);
}

/* The entry in the cache longest, or NULL. */
static struct udp_entry *
udp_cache_oldest(struct udp_cache *c)
{
	return IDL__LIST_FIRST(&c->age, struct udp_entry, link);
}

void
idl__udp_cache_expire(struct udp_cache *c, int64_t now)
{
	struct udp_entry *e;

	while ((e = udp_cache_oldest(c)) != NULL &&
	       (c->count > UDP_CACHE_ENTRIES || c->bytes > UDP_CACHE_BYTES ||
		now - e->t_ns > UDP_CACHE_AGE))
		idl__udp_cache_remove(c, e);
}

static int
udp_cache_grow(struct udp_cache *c)
{
	size_t n = c->nbuckets ? 2 * c->nbuckets : 64;
	struct udp_entry **nb = calloc(n, sizeof *nb);

	if (nb == NULL)
		return -1;
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct udp_entry *e = c->buckets[i], *next;

		for (; e != NULL; e = next) {
			next = e->hnext;
			e->hnext = nb[e->key & (n - 1)];
			nb[e->key & (n - 1)] = e;
		}
	}
	free(c->buckets);
	c->buckets = nb;
	c->nbuckets = n;
	return 0;
}

struct udp_entry *
idl__udp_cache_add(struct udp_cache *c, uint64_t key, const unsigned char *addr, uint32_t alen,
		   uint32_t seqno, int64_t now)
{
	struct udp_entry *e;

	if (c->count + 1 > c->nbuckets && c->nbuckets < 2 * UDP_CACHE_ENTRIES &&
	    udp_cache_grow(c) != 0 && c->nbuckets == 0)
		return NULL;
	if ((e = calloc(1, sizeof *e)) == NULL)
		return NULL;
	e->key = key;
	e->seqno = seqno;
	e->alen = alen;
	memcpy(e->addr, addr, alen);
	e->t_ns = now;
	e->hnext = c->buckets[key & (c->nbuckets - 1)];
	c->buckets[key & (c->nbuckets - 1)] = e;
	idl__list_push_back(&c->age, &e->link);
	c->count++;
	idl__udp_cache_expire(c, now);
	return e;
}

void
idl__udp_cache_free(struct udp_cache *c)
{
	struct udp_entry *e;

	while ((e = udp_cache_oldest(c)) != NULL)
		idl__udp_cache_remove(c, e);
	free(c->buckets);
	c->buckets = NULL;
	c->nbuckets = 0;
}
