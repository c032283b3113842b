/*
 * udp_cache.c - the udp: server's duplicate-reply cache (udp_cache.h).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "udp_cache.h"

struct udp_slab {
	struct udp_slab *next;
	struct udp_entry e[UDP_CACHE_SLAB];
};

int64_t
idl__udp_cache_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
udp_entry_is(const struct udp_entry *e, uint64_t key, const unsigned char *addr, uint32_t alen,
	     uint32_t seqno)
{
	return e->key == key && e->seqno == seqno && e->alen == alen &&
	       idl__udp_addr_eq(e->addr, addr, alen);
}

struct udp_entry *
idl__udp_cache_find(struct udp_cache *c, uint64_t key, const unsigned char *addr, uint32_t alen,
		    uint32_t seqno)
{
	if (c->nbuckets == 0)
		return NULL;
	for (struct udp_entry *e = c->buckets[key & (c->nbuckets - 1)]; e; e = e->hnext)
		if (udp_entry_is(e, key, addr, alen, seqno))
			return e;
	return NULL;
}

/* Forgets e's reply. */
static void
udp_entry_clear(struct udp_cache *c, struct udp_entry *e)
{
	c->bytes -= e->replen;
	if (e->reply != e->rep_inline)
		free(e->reply);
	e->reply = NULL;
	e->replen = 0;
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
	udp_entry_clear(c, e);
	if (c->last == e)
		c->last = NULL;
	e->hnext = c->free;
	c->free = e;
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

/* An unused entry: from the free list, or a new slab's. */
static struct udp_entry *
udp_entry_get(struct udp_cache *c)
{
	struct udp_entry *e = c->free;

	if (e == NULL) {
		/* Not cleared: a request fills every field of the entry it takes but its
		 * reply, which is none yet. */
		struct udp_slab *s = malloc(sizeof *s);

		if (s == NULL)
			return NULL;
		s->next = c->slabs;
		c->slabs = s;
		for (unsigned i = 0; i < UDP_CACHE_SLAB; i++) {
			s->e[i].reply = NULL;
			s->e[i].replen = 0;
			s->e[i].hnext = c->free;
			c->free = &s->e[i];
		}
		e = c->free;
	}
	c->free = e->hnext;
	return e;
}

struct udp_entry *
idl__udp_cache_take(struct udp_cache *c, uint64_t key, const unsigned char *addr, uint32_t alen,
		    uint32_t seqno, uint64_t fp, uint32_t reqlen, int64_t now, int *dup)
{
	struct udp_entry *e = NULL, **head;

	*dup = 0;
	if (c->count + 1 > c->nbuckets && c->nbuckets < 2 * UDP_CACHE_ENTRIES &&
	    udp_cache_grow(c) != 0 && c->nbuckets == 0)
		return NULL;
	head = &c->buckets[key & (c->nbuckets - 1)];
	for (e = *head; e != NULL; e = e->hnext)
		if (udp_entry_is(e, key, addr, alen, seqno))
			break;
	if (e != NULL && e->fp == fp && e->reqlen == reqlen) {
		*dup = 1;
		return e;
	}
	if (e != NULL) {
		/* The same number with other bytes: the client started over; a new request,
		 * in the same entry, now the youngest. */
		udp_entry_clear(c, e);
		idl__list_remove(&c->age, &e->link);
	} else {
		if ((e = udp_entry_get(c)) == NULL)
			return NULL;
		e->key = key;
		e->seqno = seqno;
		e->alen = alen;
		/* The whole room, a constant size copied in line; only alen bytes are
		 * ever compared. The caller's buffer is a struct idl_peer's, larger. */
		memcpy(e->addr, addr, sizeof e->addr);
		e->hnext = *head;
		*head = e;
		c->count++;
	}
	e->fp = fp;
	e->reqlen = reqlen;
	e->t_ns = now;
	e->state = UDP_PENDING;
	idl__list_push_back(&c->age, &e->link);
	c->last = e;
	/* The oldest entry is the one to look at; the loop is called only when it goes. */
	e = udp_cache_oldest(c);
	if (c->count > UDP_CACHE_ENTRIES || c->bytes > UDP_CACHE_BYTES ||
	    now - e->t_ns > UDP_CACHE_AGE)
		idl__udp_cache_expire(c, now);
	return c->last; /* NULL when the bounds expired it at once */
}

struct udp_entry *
idl__udp_cache_find_pending(struct udp_cache *c, const unsigned char *addr, uint32_t alen,
			    uint32_t seqno)
{
	struct udp_entry *e =
		idl__udp_cache_find(c, idl__udp_key(addr, alen, seqno), addr, alen, seqno);

	return e != NULL && e->state == UDP_PENDING ? e : NULL;
}

int
idl__udp_cache_store(struct udp_cache *c, struct udp_entry *e, const void *reply, size_t len)
{
	unsigned char *p = e->rep_inline;

	if (len > UDP_CACHE_INLINE) {
		if ((p = malloc(len)) == NULL)
			return -1;
		memcpy(p, reply, len);
	} else {
		/* A few words, in line: a call would cost more than the copy. */
		idl__copy_small(p, reply, len);
	}
	e->reply = p;
	e->replen = (uint32_t)len;
	e->state = UDP_DONE;
	c->bytes += len;
	if (c->last == e)
		c->last = NULL;
	/* The bytes bound may have been passed: the oldest entries go, by their age alone
	 * otherwise at the next request. */
	if (c->bytes > UDP_CACHE_BYTES)
		idl__udp_cache_expire(c, e->t_ns);
	return 0;
}

void
idl__udp_cache_free(struct udp_cache *c)
{
	/* The entries go with their slabs: only replies of their own are freed one by one. */
	for (struct udp_entry *e = udp_cache_oldest(c); e != NULL;
	     e = IDL__LIST_NEXT(e, struct udp_entry, link))
		if (e->reply != e->rep_inline)
			free(e->reply);
	c->age = (struct idl__list){ 0 };
	c->count = 0;
	c->bytes = 0;
	while (c->slabs != NULL) {
		struct udp_slab *s = c->slabs;

		c->slabs = s->next;
		free(s);
	}
	c->free = NULL;
	c->last = NULL;
	free(c->buckets);
	c->buckets = NULL;
	c->nbuckets = 0;
}
