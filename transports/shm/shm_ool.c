/*
 * shm_ool.c - the shm: transport's regions and out-of-line (OOL) data.
 *
 * Each direction of a connection has an arena in the shared region, cut into pages. Its
 * sender alone allocates there, with a page map kept in its private memory, so a peer
 * cannot corrupt the allocator; its receiver reads the data in place and, when done,
 * posts the block on the direction's free queue, which the sender drains when it next
 * allocates. A posted free is honoured only for a block the sender really sent and whose
 * length matches, so a hostile receiver can waste nothing but its own peer's arena.
 *
 * The process keeps a list of its regions, so that idl__shm_ool_free() can tell, from a
 * pointer alone, which region and which arena a block lies in. A region stays mapped while
 * the process holds blocks in it, even after its connection ended.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* MADV_DONTFORK */
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <idl/idl_ool.h>

#include "shm_impl.h"

static pthread_mutex_t ool_regions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct idl__list ool_regions; /* struct shm_region, the newest first */

int
idl__shm_layout(uint32_t ring_bytes, uint64_t ool_bytes, struct shm_layout *lay)
{
	uint64_t off = SHM_PAGE, fq;

	if (ring_bytes < SHM_RING_MIN || ring_bytes > SHM_RING_MAX ||
	    (ring_bytes & (ring_bytes - 1)) != 0 || ool_bytes > SHM_OOL_MAX ||
	    ool_bytes % SHM_PAGE != 0)
		return -1;
	memset(lay, 0, sizeof *lay);
	lay->ring_bytes = ring_bytes;
	lay->ool_bytes = ool_bytes;
	lay->npages = (uint32_t)(ool_bytes / SHM_PAGE);
	/* A free queue has an entry per page: a block is at least a page, so a receiver that
	 * frees each block once can never find its queue full. */
	fq = ((uint64_t)lay->npages * 8 + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
	for (int d = 0; d < 2; d++) {
		lay->ring_off[d] = off;
		off += ring_bytes;
	}
	for (int d = 0; d < 2; d++) {
		lay->fq_off[d] = off;
		off += fq;
	}
	for (int d = 0; d < 2; d++) {
		lay->arena_off[d] = off;
		off += ool_bytes;
	}
	lay->total = off;
	return 0;
}

int
idl__shm_region_new(unsigned char *base, const struct shm_layout *lay, int me,
		    struct shm_region **rgp)
{
	struct shm_region *rg = calloc(1, sizeof *rg);

	if (rg == NULL ||
	    (lay->npages != 0 && ((rg->pstate = calloc(lay->npages, 1)) == NULL ||
				  (rg->prun = calloc(lay->npages, sizeof *rg->prun)) == NULL))) {
		if (rg != NULL) {
			free(rg->pstate);
			free(rg);
		}
		return idl__fail(IDL_ENOMEM, "shm: out of memory");
	}
	/* A child forked without exec must not share (or keep alive) the connection. */
	madvise(base, lay->total, MADV_DONTFORK);
	rg->base = base;
	rg->ctl = (struct shm_ctl *)base;
	rg->lay = *lay;
	rg->me = me;
	atomic_init(&rg->refs, 1);
	pthread_mutex_init(&rg->lock, NULL);
	pthread_mutex_lock(&ool_regions_lock);
	idl__list_push_front(&ool_regions, &rg->link);
	pthread_mutex_unlock(&ool_regions_lock);
	*rgp = rg;
	return 0;
}

/* Every decrement takes the list's lock, so a region found on the list under that lock
 * still has a reference and can be given one more. */
void
idl__shm_region_unref(struct shm_region *rg)
{
	unsigned left;

	pthread_mutex_lock(&ool_regions_lock);
	left = atomic_fetch_sub(&rg->refs, 1) - 1;
	if (left == 0)
		idl__list_remove(&ool_regions, &rg->link);
	pthread_mutex_unlock(&ool_regions_lock);
	if (left != 0)
		return;
	munmap(rg->base, rg->lay.total);
	pthread_mutex_destroy(&rg->lock);
	free(rg->pstate);
	free(rg->prun);
	free(rg);
}

static unsigned char *
ool_arena(struct shm_region *rg, int dir)
{
	return rg->base + rg->lay.arena_off[dir];
}

static uint32_t
ool_pages(uint64_t size)
{
	return (uint32_t)((size + SHM_PAGE - 1) / SHM_PAGE);
}

static void
ool_mark(struct shm_region *rg, uint32_t first, uint32_t n, uint8_t state)
{
	memset(rg->pstate + first, state, n);
	if (state == SHM_PG_FREE && first < rg->low)
		rg->low = first;
}

/* Takes in the frees the receiver posted for our outbound arena. Lock held. */
static void
ool_drain(struct shm_region *rg)
{
	struct shm_fqctl *q = &rg->ctl->fq[rg->me];
	const uint64_t *ent = (const uint64_t *)(rg->base + rg->lay.fq_off[rg->me]);
	uint64_t head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
	uint32_t np = rg->lay.npages;

	if (np == 0 || head == rg->fq_tail)
		return;
	/* A head out of range is a broken receiver: skip whatever it claims. */
	if (head - rg->fq_tail <= np) {
		for (uint64_t t = rg->fq_tail; t != head; t++) {
			uint64_t e = __atomic_load_n(&ent[t % np], __ATOMIC_RELAXED);
			uint32_t first = (uint32_t)(e >> 32), n = (uint32_t)e;

			if (first < np && rg->pstate[first] == SHM_PG_SENT &&
			    rg->prun[first] == n) {
				ool_mark(rg, first, n, SHM_PG_FREE);
				rg->prun[first] = 0;
				rg->used -= n;
			}
		}
	}
	rg->fq_tail = head;
	__atomic_store_n(&q->tail, head, __ATOMIC_RELEASE);
}

/* First fit: the lowest n contiguous free pages. A block that is freed and taken again
 * between two calls is then the same memory, still in the caches; a next fit would walk
 * every call's data through the whole arena (4 MiB by default), through memory rather than
 * cache. Lock held. */
static int
ool_take(struct shm_region *rg, uint32_t n, uint8_t state, uint32_t *firstp)
{
	uint32_t np = rg->lay.npages, run = 0, first = 0, seen = np;

	if (n == 0 || n > np - rg->used)
		return -1;
	for (uint32_t i = rg->low; i < np; i++) {
		if (rg->pstate[i] != SHM_PG_FREE) {
			run = 0;
			continue;
		}
		if (seen == np)
			seen = i;
		if (run++ == 0)
			first = i;
		if (run == n) {
			ool_mark(rg, first, n, state);
			rg->prun[first] = n;
			rg->used += n;
			rg->low = seen == first ? first + n : seen;
			*firstp = first;
			return 0;
		}
	}
	rg->low = seen;
	return -1;
}

/* Posts the free of a received block of the inbound arena. Lock held. A full or broken
 * queue drops the free: only the peer's own arena is the poorer for it. */
static void
ool_post(struct shm_region *rg, uint32_t first, uint32_t n)
{
	int in = 1 - rg->me;
	struct shm_fqctl *q = &rg->ctl->fq[in];
	uint64_t *ent = (uint64_t *)(rg->base + rg->lay.fq_off[in]);
	uint64_t tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
	uint32_t np = rg->lay.npages;

	if (np == 0 || rg->fq_head - tail >= np)
		return;
	__atomic_store_n(&ent[rg->fq_head % np], (uint64_t)first << 32 | n, __ATOMIC_RELAXED);
	rg->fq_head++;
	__atomic_store_n(&q->head, rg->fq_head, __ATOMIC_RELEASE);
}

static void
ool_nap(int64_t ns)
{
	struct timespec ts = { 0, (long)ns };

	nanosleep(&ts, NULL);
}

int
idl__shm_ool_put(struct shm_region *rg, const idl_desc_t *d, idl_desc_t *wire, int64_t deadline)
{
	unsigned char *out = ool_arena(rg, rg->me);
	uintptr_t p = (uintptr_t)d->addr, o = (uintptr_t)out;
	uint32_t n = ool_pages(d->size), first;
	int64_t nap = 20000;

	*wire = *d;
	if (d->type != IDL_DESC_OOL)
		return idl__fail(IDL_ENOTSUP, "shm: ports cannot be passed over shared memory");
	if (d->size == 0) {
		wire->addr = 0;
		return 0;
	}
	if (d->addr == 0)
		return idl__fail(IDL_EINVAL, "shm: out-of-line data of %u bytes at NULL", d->size);
	if (rg->lay.npages == 0)
		return idl__fail(IDL_ENOTSUP, "shm: out-of-line data is disabled "
					      "(IDL_SHM_OOL_BYTES=0)");
	if (n > rg->lay.npages)
		return idl__fail(IDL_EMSGSIZE,
				 "shm: %u bytes out of line exceed the %llu-byte "
				 "arena (IDL_SHM_OOL_BYTES)",
				 d->size, (unsigned long long)rg->lay.ool_bytes);
	if (p >= o && p - o < rg->lay.ool_bytes && (d->flags & IDL_DESCF_DEALLOC)) {
		/* Our own block, given away: it moves, no byte is copied. */
		uint32_t pg = (uint32_t)((p - o) / SHM_PAGE);
		int ok;

		pthread_mutex_lock(&rg->lock);
		ok = (p - o) % SHM_PAGE == 0 && rg->pstate[pg] == SHM_PG_OWNED && rg->prun[pg] >= n;
		if (ok) {
			/* What the block has beyond the data is freed now: the receiver gives
			 * back exactly the pages that hold the data. */
			ool_mark(rg, pg + n, rg->prun[pg] - n, SHM_PG_FREE);
			rg->used -= rg->prun[pg] - n;
			rg->prun[pg] = n;
			ool_mark(rg, pg, n, SHM_PG_SENT);
		}
		pthread_mutex_unlock(&rg->lock);
		if (!ok)
			return idl__fail(IDL_EINVAL,
					 "shm: out-of-line data to deallocate lies in "
					 "the arena but is not a block this process holds");
		idl__shm_region_unref(rg); /* the block's reference: it is the peer's now */
		wire->addr = pg * (uint64_t)SHM_PAGE;
		return 0;
	}
	/* Anything else is copied once into a new block, waiting for the receiver to free
	 * room if the arena is full. */
	for (;;) {
		int got;

		pthread_mutex_lock(&rg->lock);
		ool_drain(rg);
		got = ool_take(rg, n, SHM_PG_SENT, &first) == 0;
		pthread_mutex_unlock(&rg->lock);
		if (got)
			break;
		if (__atomic_load_n(&rg->ctl->side[1 - rg->me].gone, __ATOMIC_ACQUIRE))
			return idl__fail(MIG_SERVER_DIED, "shm: the peer closed the connection");
		if (idl_now_ns() >= deadline)
			return idl__fail(IDL_ETIMEDOUT, "shm: the out-of-line arena stayed full "
							"until the deadline");
		ool_nap(nap);
		nap = nap < 2000000 ? 2 * nap : nap;
	}
	memcpy(out + (size_t)first * SHM_PAGE, (const void *)p, d->size);
	wire->addr = first * (uint64_t)SHM_PAGE;
	return 0;
}

/* Whether the put of `d` moved the caller's own block (rather than copying it). */
static int
ool_moved(struct shm_region *rg, const idl_desc_t *d, const idl_desc_t *wire)
{
	return d->size != 0 && (uintptr_t)d->addr == (uintptr_t)ool_arena(rg, rg->me) + wire->addr;
}

void
idl__shm_ool_unput(struct shm_region *rg, const idl_desc_t *d, const idl_desc_t *wire)
{
	uint32_t first = (uint32_t)(wire->addr / SHM_PAGE), n = ool_pages(d->size);
	int moved = ool_moved(rg, d, wire);

	if (d->size == 0 || d->type != IDL_DESC_OOL)
		return;
	pthread_mutex_lock(&rg->lock);
	if (moved) {
		ool_mark(rg, first, n, SHM_PG_OWNED);
	} else {
		ool_mark(rg, first, n, SHM_PG_FREE);
		rg->prun[first] = 0;
		rg->used -= n;
	}
	pthread_mutex_unlock(&rg->lock);
	if (moved)
		atomic_fetch_add(&rg->refs, 1); /* the caller holds the block again */
}

void
idl__shm_ool_sent(struct shm_region *rg, const idl_desc_t *d, const idl_desc_t *wire)
{
	void *p = (void *)(uintptr_t)d->addr;

	/* MIG's rule: data sent with dealloc is the runtime's to free once it is sent. */
	if (!(d->flags & IDL_DESCF_DEALLOC) || ool_moved(rg, d, wire))
		return;
	idl_ool_free(p, d->size);
}

int
idl__shm_ool_recv(struct shm_region *rg, void *msg, size_t len)
{
	const idl_msg_header_t *h = msg;
	unsigned char *descs = (unsigned char *)msg + IDL_MSG_HEADER_SIZE;
	unsigned char *in = ool_arena(rg, 1 - rg->me);
	unsigned held = 0;
	idl_desc_t d;

	/* Another order or a bad magic: the runtime refuses the message without reading
	 * its descriptors, which are not ours to convert. */
	if (h->magic != IDL_MSG_MAGIC || h->order != IDL_ORDER_NATIVE)
		return 0;
	if ((h->kind != IDL_KIND_REQUEST && h->kind != IDL_KIND_REPLY &&
	     h->kind != IDL_KIND_ONEWAY) ||
	    h->ndesc > (len - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE)
		return -1;
	/* All of them are checked before any is converted, so a bad one leaves no reference
	 * taken. Offsets are page-aligned: blocks start on pages. */
	for (uint32_t i = 0; i < h->ndesc; i++) {
		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.type != IDL_DESC_OOL)
			return -1;
		if (d.size == 0 ? d.addr != 0
				: d.addr >= rg->lay.ool_bytes || d.addr % SHM_PAGE != 0 ||
					  d.size > rg->lay.ool_bytes - d.addr)
			return -1;
	}
	for (uint32_t i = 0; i < h->ndesc; i++) {
		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.size != 0) {
			d.addr = (uint64_t)(uintptr_t)(in + d.addr);
			held++;
		}
		memcpy(descs + (size_t)i * IDL_DESC_SIZE, &d, sizeof d);
	}
	atomic_fetch_add(&rg->refs, held);
	return 0;
}

void
idl__shm_ool_drop(struct shm_region *rg, const void *msg, size_t n)
{
	const idl_msg_header_t *h = msg;
	const unsigned char *descs = (const unsigned char *)msg + IDL_MSG_HEADER_SIZE;
	idl_desc_t d;

	if (n < IDL_MSG_HEADER_SIZE || !(h->flags & IDL_MSGF_DESC) || h->magic != IDL_MSG_MAGIC ||
	    h->order != IDL_ORDER_NATIVE)
		return;
	pthread_mutex_lock(&rg->lock);
	for (uint32_t i = 0; i < h->ndesc && i < (n - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE; i++) {
		memcpy(&d, descs + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if (d.type == IDL_DESC_OOL && d.size != 0 && d.addr < rg->lay.ool_bytes &&
		    d.addr % SHM_PAGE == 0 && d.size <= rg->lay.ool_bytes - d.addr)
			ool_post(rg, (uint32_t)(d.addr / SHM_PAGE), ool_pages(d.size));
	}
	pthread_mutex_unlock(&rg->lock);
}

int
idl__shm_ool_alloc(void *vconn, size_t size, void **datap)
{
	struct shm_conn *c = vconn;
	struct shm_region *rg = c->rg;
	uint32_t first;
	int got;

	*datap = NULL;
	if (rg == NULL || rg->lay.npages == 0)
		return idl__fail(IDL_ENOTSUP, "shm: no out-of-line arena on this connection");
	if (size == 0 || size > UINT32_MAX || ool_pages(size) > rg->lay.npages)
		return idl__fail(IDL_EINVAL, "shm: cannot allocate %zu bytes out of line", size);
	pthread_mutex_lock(&rg->lock);
	ool_drain(rg);
	got = ool_take(rg, ool_pages(size), SHM_PG_OWNED, &first) == 0;
	pthread_mutex_unlock(&rg->lock);
	if (!got)
		return idl__fail(IDL_ELIMIT, "shm: the out-of-line arena is full "
					     "(IDL_SHM_OOL_BYTES)");
	atomic_fetch_add(&rg->refs, 1);
	*datap = ool_arena(rg, rg->me) + (size_t)first * SHM_PAGE;
	/* Zeroed, as idl_ool_alloc() promises: a reused block holds an earlier message. */
	memset(*datap, 0, size);
	return 0;
}

int
idl__shm_ool_free(void *data, size_t size)
{
	uintptr_t p = (uintptr_t)data;
	struct shm_region *rg;
	int held = 0;

	if (data == NULL)
		return 0;
	pthread_mutex_lock(&ool_regions_lock);
	for (rg = IDL__LIST_FIRST(&ool_regions, struct shm_region, link); rg != NULL;
	     rg = IDL__LIST_NEXT(rg, struct shm_region, link))
		if (p >= (uintptr_t)rg->base && p - (uintptr_t)rg->base < rg->lay.total)
			break;
	if (rg != NULL)
		atomic_fetch_add(&rg->refs, 1);
	pthread_mutex_unlock(&ool_regions_lock);
	if (rg == NULL)
		return 0;

	for (int dir = 0; dir < 2; dir++) {
		uintptr_t a = (uintptr_t)ool_arena(rg, dir);
		uint32_t pg;

		if (p < a || p - a >= rg->lay.ool_bytes || (p - a) % SHM_PAGE != 0)
			continue;
		pg = (uint32_t)((p - a) / SHM_PAGE);
		pthread_mutex_lock(&rg->lock);
		if (dir == rg->me && rg->pstate[pg] == SHM_PG_OWNED && rg->prun[pg] != 0) {
			/* Allocated here and never sent. */
			ool_mark(rg, pg, rg->prun[pg], SHM_PG_FREE);
			rg->used -= rg->prun[pg];
			rg->prun[pg] = 0;
			held = 1;
		} else if (dir != rg->me && size != 0 && size <= rg->lay.ool_bytes - (p - a)) {
			/* Received: the sender takes it back. */
			ool_post(rg, pg, ool_pages(size));
			held = 1;
		}
		pthread_mutex_unlock(&rg->lock);
	}
	if (held)
		idl__shm_region_unref(rg); /* the block's reference */
	idl__shm_region_unref(rg);
	return 1;
}

uint32_t
idl__shm_ool_used(void *vconn)
{
	struct shm_conn *c = vconn;
	uint32_t used;

	pthread_mutex_lock(&c->rg->lock);
	ool_drain(c->rg);
	used = c->rg->used;
	pthread_mutex_unlock(&c->rg->lock);
	return used;
}
