/*
 * server_peers.c - the peers of a message endpoint (udp:, port:): what hellos each one has
 * sent, found by its address in a hash table grown with the count, and a recency list, so
 * that past SRV_PEERS_MAX peers the one heard from least recently is forgotten.
 *
 * The server room: it knows nothing outside it but core.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "server/server.h"

/* The recency list, the peer heard from last first. */
#define PEER_NEWEST(ps) IDL__LIST_FIRST(&(ps)->recency, struct srv_peer, link)
#define PEER_OLDEST(ps) IDL__LIST_LAST(&(ps)->recency, struct srv_peer, link)
#define PEER_OLDER(p) IDL__LIST_NEXT(p, struct srv_peer, link)
#define PEER_NEWER(p) IDL__LIST_PREV(p, struct srv_peer, link)

static void
peer_unhash(struct srv_peers *ps, struct srv_peer *p)
{
	struct srv_peer **pp = &ps->buckets[p->hash & (ps->nbuckets - 1)];

	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
}

static void
peer_hash(struct srv_peers *ps, struct srv_peer *p)
{
	struct srv_peer **b = &ps->buckets[p->hash & (ps->nbuckets - 1)];

	p->hnext = *b;
	*b = p;
}

/* Doubles the hash table; on failure the old one stays (longer chains, still right). */
static int
peers_grow(struct srv_peers *ps)
{
	size_t n = ps->nbuckets ? 2 * ps->nbuckets : 16;
	struct srv_peer **nb = calloc(n, sizeof *nb), *p;

	if (nb == NULL)
		return ps->nbuckets != 0 ? 0 : IDL_ENOMEM;
	free(ps->buckets);
	ps->buckets = nb;
	ps->nbuckets = n;
	for (p = PEER_NEWEST(ps); p != NULL; p = PEER_OLDER(p))
		peer_hash(ps, p);
	return 0;
}

/*
 * The hello state of a message endpoint's peer, made when it first appears. Past
 * SRV_PEERS_MAX peers the least recently heard one is forgotten and its entry reused; that
 * peer's next request gets IDL_EPROTO (no hello), and its client says hello again.
 */
/* Whether a peer's address is these len bytes: eight at a time, inline (an address is 16
 * or 28 bytes, where memcmp() is a call). */
static int
peer_is(const struct srv_peer *p, const unsigned char *addr, uint32_t len)
{
	uint64_t x, y;
	uint32_t i = 0;

	if (p->addr.len != len)
		return 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&x, p->addr.addr + i, 8);
		memcpy(&y, addr + i, 8);
		if (x != y)
			return 0;
	}
	for (; i < len; i++)
		if (p->addr.addr[i] != addr[i])
			return 0;
	return 1;
}

/* The hash of an address, eight bytes at a time. */
static uint64_t
peer_hash_of(const unsigned char *addr, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len, w;
	uint32_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, addr + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < len; i++)
		h = (h ^ addr[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

struct srv_peer *
idl__srv_peer(struct srv_src *src, const struct idl_peer *from)
{
	struct srv_peers *ps = src->peers;
	uint32_t len = from->len < sizeof from->addr ? from->len : sizeof from->addr;
	struct srv_peer *p = PEER_NEWEST(ps);
	uint64_t h;

	/* The peer heard from last is the likeliest to be heard from next. */
	if (p != NULL && peer_is(p, from->addr, len))
		return p;
	h = peer_hash_of(from->addr, len);
	if (ps->nbuckets != 0) {
		for (p = ps->buckets[h & (ps->nbuckets - 1)]; p != NULL; p = p->hnext) {
			if (p->hash == h && peer_is(p, from->addr, len)) {
				if (PEER_NEWEST(ps) != p) {
					idl__list_remove(&ps->recency, &p->link);
					idl__list_push_front(&ps->recency, &p->link);
				}
				return p;
			}
		}
	}
	if (ps->count >= SRV_PEERS_MAX) {
		/* A peer with deferred replies out is not forgotten: their handles point at
		 * its entry. When every peer has some, the newcomer is refused. */
		size_t tries = 0;

		for (p = PEER_OLDEST(ps); p != NULL && atomic_load(&p->pending) != 0;
		     p = PEER_NEWER(p))
			if (++tries == ps->count)
				break;
		if (p == NULL || atomic_load(&p->pending) != 0)
			return NULL;
		idl__list_remove(&ps->recency, &p->link);
		peer_unhash(ps, p);
		memset(p->hello.said, 0, src->srv->nsubs);
		idl__srv_hello_unfast(&p->hello);
	} else {
		if (ps->count >= ps->nbuckets && peers_grow(ps) != 0)
			return NULL;
		if ((p = calloc(1, sizeof *p)) == NULL)
			return NULL;
		if (idl__srv_hello_alloc(src->srv, &p->hello) != 0) {
			free(p->hello.said);
			free(p->hello.verdicts);
			free(p);
			return NULL;
		}
		ps->count++;
	}
	p->hash = h;
	p->addr.len = len;
	memcpy(p->addr.addr, from->addr, len);
	peer_hash(ps, p);
	idl__list_push_front(&ps->recency, &p->link);
	return p;
}

void
idl__srv_peers_free(struct srv_peers *ps)
{
	struct srv_peer *p, *next;

	if (ps == NULL)
		return;
	for (p = PEER_NEWEST(ps); p != NULL; p = next) {
		next = PEER_OLDER(p);
		free(p->hello.said);
		free(p->hello.verdicts);
		free(p);
	}
	free(ps->buckets);
	free(ps);
}
