/*
 * ool_cache.c - the process's cache of out-of-line blocks (docs/runtime.md, "Out-of-line
 * memory").
 *
 * A block of IDL_OOL_MAP_MIN bytes or more is a private anonymous mapping. Mapping one per
 * message costs a page fault for every page the data is written to and, when it is freed, a
 * munmap that in a threaded process shoots down the TLBs of the other CPUs: more than the
 * transfer itself on every transport that reads into the block. So a freed block is kept,
 * faulted in, and handed out again for the next block of its size class.
 *
 * Size classes: four per doubling from 16 KiB (16, 20, 24, 28, 32, 40, 48, 56, 64 KiB, ...),
 * a block's mapping being its class's size, so at most a quarter more than asked is mapped.
 *
 * The bound: the mappings of the cached blocks add up to at most one limit for the whole
 * process (IDL_OOL_CACHE bytes, IDL_OOL_CACHE_DEFAULT unless set, 0 for no cache), however
 * many connections and threads there are. A free that would pass it unmaps the blocks cached
 * longest ago first; a class larger than the limit is never cached, and such a block is
 * mapped to its size rounded to pages and unmapped when freed, as every block was before.
 *
 * Zeroing: idl_ool_alloc() promises zeroed memory, so a block handed out again is cleared
 * with memset - far cheaper than the kernel's fault and zero-fill of a fresh page. The cache
 * remembers how far a block's last owner was given it ("dirty"), and clears that much or the
 * new size, whichever is more; the rest of the block is zero already. A receive path that
 * overwrites every byte of its block (idl__ool_alloc_fill) skips the clearing of those bytes,
 * not of any beyond them.
 *
 * The registry: every block the cache may take back is in a hash table by address, from its
 * mmap to its munmap, so a free knows a block made here from any other memory of that size -
 * a unix: receiver's private mapping of a sealed memfd never enters the cache - without
 * trusting the size it is told or the memory around the block. The table and the lists are
 * the cache's own memory, never inside a block, so whoever writes to a block it freed cannot
 * corrupt them.
 *
 * Sanitizers: a cached block is poisoned for AddressSanitizer and made inaccessible for
 * valgrind's memcheck, and a block handed out is accessible up to its size only, so a use
 * after free (or past the end) of out-of-line memory is reported as it would be without the
 * cache.
 *
 * Locking: one mutex guards the table, the lists and the counters; what is done under it is a
 * few pointer updates (and the sanitizers' bookkeeping, in their builds). mmap, munmap and
 * the clearing happen outside it.
 *
 * The ool room: it knows core's utilities and nothing of messages, ports, the client or the
 * server.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ool/ool.h"
#include "core/list.h"
#include "core/mem_hide.h"
#include "ool/ool_cache.h"

#define OC_MIN_SHIFT 14 /* the smallest class: 16 KiB, IDL_OOL_MAP_MIN */
#define OC_MAX_SHIFT 32 /* the largest: 4 GiB; larger blocks are never cached */
#define OC_NCLASS ((OC_MAX_SHIFT - OC_MIN_SHIFT) * 4 + 1)
/* The largest IDL_OOL_CACHE taken: 1 TiB (a larger value is refused, as a malformed one). */
#define OC_LIMIT_MAX ((uint64_t)1 << 40)

_Static_assert(IDL_OOL_MAP_MIN == 1u << OC_MIN_SHIFT, "the smallest class is IDL_OOL_MAP_MIN");

struct oc_block {
	void *addr;
	size_t len; /* the mapping: the class's size, in whole pages */
	size_t dirty; /* bytes from addr that may be non-zero */
	unsigned cls;
	int cached;
	struct oc_block *hnext; /* the table's chain */
	struct idl__link age; /* cached: on oc_age, every cached block, oldest first */
	struct idl__link in_cls; /* cached: on its class's list, newest first */
};

static pthread_once_t oc_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t oc_lock = PTHREAD_MUTEX_INITIALIZER;
/* Everything below is guarded by oc_lock, but oc_page, set once by oc_init. */
static size_t oc_page;
static size_t oc_limit;
static size_t oc_bytes, oc_ncached, oc_live;
static uint64_t oc_hits, oc_misses, oc_evictions;
static struct idl__list oc_age;
static struct idl__list oc_by_class[OC_NCLASS];
static struct oc_block **oc_table;
static size_t oc_nbuckets, oc_count;

/* ---- Configuration ---- */

/* IDL_OOL_CACHE: the bound in bytes, decimal digits only; unset, empty, malformed or above
 * OC_LIMIT_MAX is the default. */
static size_t
oc_env_limit(void)
{
	return (size_t)idl__env_int("IDL_OOL_CACHE", IDL_OOL_CACHE_DEFAULT, 0,
				    OC_LIMIT_MAX < SIZE_MAX ? (int64_t)OC_LIMIT_MAX
							    : (int64_t)SIZE_MAX);
}

static void
oc_fork_prepare(void)
{
	pthread_mutex_lock(&oc_lock);
}

static void
oc_fork_after(void)
{
	pthread_mutex_unlock(&oc_lock);
}

static void
oc_init(void)
{
	long p = sysconf(_SC_PAGESIZE);

	oc_page = p > 0 ? (size_t)p : 4096;
	pthread_mutex_lock(&oc_lock);
	oc_limit = oc_env_limit();
	pthread_mutex_unlock(&oc_lock);
	/* A child forked while another thread held the lock would never get it. */
	pthread_atfork(oc_fork_prepare, oc_fork_after, oc_fork_after);
}

/* `size` rounded up to whole pages; 0 when that overflows. */
static size_t
oc_pages(size_t size)
{
	if (size > SIZE_MAX - oc_page)
		return 0;
	return (size + oc_page - 1) / oc_page * oc_page;
}

/* The class of a block of `size` bytes (IDL_OOL_MAP_MIN or more) and its mapping's length;
 * -1 beyond the largest class. */
static int
oc_class(size_t size, unsigned *cls, size_t *len)
{
	unsigned p, k;
	size_t base, step;

	if (size <= (size_t)1 << OC_MIN_SHIFT) {
		*cls = 0;
		*len = oc_pages((size_t)1 << OC_MIN_SHIFT);
		return 0;
	}
	/* 2^p < size <= 2^(p+1), then the quarter of that doubling it rounds up to. */
	p = 63u - (unsigned)__builtin_clzll((unsigned long long)(size - 1));
	if (p >= OC_MAX_SHIFT)
		return -1;
	base = (size_t)1 << p;
	step = base >> 2;
	k = (unsigned)((size - base + step - 1) / step);
	*cls = (p - OC_MIN_SHIFT) * 4 + k;
	*len = oc_pages(base + k * step);
	return 0;
}

/* ---- The table of blocks by address (lock held) ---- */

static size_t
oc_bucket(const void *addr, size_t nbuckets)
{
	/* Blocks are page aligned: the low bits say nothing. */
	uint64_t h = ((uint64_t)(uintptr_t)addr >> 12) * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t)(h >> 32) & (nbuckets - 1);
}

static struct oc_block **
oc_slot(const void *addr)
{
	struct oc_block **pp;

	if (oc_nbuckets == 0)
		return NULL;
	for (pp = &oc_table[oc_bucket(addr, oc_nbuckets)]; *pp != NULL; pp = &(*pp)->hnext)
		if ((*pp)->addr == addr)
			return pp;
	return NULL;
}

/* Doubles the table once it holds as many blocks as buckets; without memory for a larger
 * one the chains just grow longer. */
static void
oc_grow(void)
{
	size_t n = oc_nbuckets != 0 ? oc_nbuckets * 2 : 64;
	struct oc_block **t;

	if (oc_count < oc_nbuckets || n > SIZE_MAX / sizeof *t ||
	    (t = calloc(n, sizeof *t)) == NULL)
		return;
	for (size_t i = 0; i < oc_nbuckets; i++) {
		while (oc_table[i] != NULL) {
			struct oc_block *b = oc_table[i];

			oc_table[i] = b->hnext;
			b->hnext = t[oc_bucket(b->addr, n)];
			t[oc_bucket(b->addr, n)] = b;
		}
	}
	free(oc_table);
	oc_table = t;
	oc_nbuckets = n;
}

static int
oc_insert(struct oc_block *b)
{
	size_t i;

	oc_grow();
	if (oc_nbuckets == 0)
		return -1;
	i = oc_bucket(b->addr, oc_nbuckets);
	b->hnext = oc_table[i];
	oc_table[i] = b;
	oc_count++;
	return 0;
}

/* ---- The cached blocks (lock held) ---- */

static void
oc_push(struct oc_block *b)
{
	b->cached = 1;
	idl__list_push_back(&oc_age, &b->age);
	idl__list_push_front(&oc_by_class[b->cls], &b->in_cls);
	oc_bytes += b->len;
	oc_ncached++;
}

static void
oc_unlink(struct oc_block *b)
{
	idl__list_remove(&oc_age, &b->age);
	idl__list_remove(&oc_by_class[b->cls], &b->in_cls);
	b->cached = 0;
	oc_bytes -= b->len;
	oc_ncached--;
}

/* Takes a cached block out of the table onto `*gone`, for oc_release outside the lock. */
static void
oc_evict(struct oc_block *b, struct oc_block **gone)
{
	struct oc_block **pp = oc_slot(b->addr);

	oc_unlink(b);
	if (pp != NULL) {
		*pp = b->hnext;
		oc_count--;
	}
	b->hnext = *gone;
	*gone = b;
	oc_evictions++;
}

/* Unmaps the blocks on the list and frees their records. */
static void
oc_release(struct oc_block *gone)
{
	while (gone != NULL) {
		struct oc_block *next = gone->hnext;

		/* Whatever is mapped here next starts with no poison of ours. */
#ifdef IDL__ASAN
		__asan_unpoison_memory_region(gone->addr, gone->len);
#endif
		munmap(gone->addr, gone->len);
		free(gone);
		gone = next;
	}
}

/* ---- Blocks ---- */

/* A block of `size` bytes the cache does not keep: its size in pages, unmapped when freed. */
static void *
oc_map_plain(size_t size)
{
	size_t len = oc_pages(size);
	void *p;

	if (len == 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *
idl__ool_cache_get(size_t size, int zero)
{
	struct oc_block *b;
	unsigned cls;
	size_t len, dirty;
	void *p;

	pthread_once(&oc_once, oc_init);
	if (oc_class(size, &cls, &len) != 0 || len == 0)
		return oc_map_plain(size);
	pthread_mutex_lock(&oc_lock);
	if (len > oc_limit) {
		pthread_mutex_unlock(&oc_lock);
		return oc_map_plain(size);
	}
	if ((b = IDL__LIST_FIRST(&oc_by_class[cls], struct oc_block, in_cls)) != NULL) {
		oc_unlink(b);
		oc_hits++;
		oc_live++;
		dirty = b->dirty;
		b->dirty = size;
		pthread_mutex_unlock(&oc_lock);
		p = b->addr;
		idl__mem_show(p, dirty > size ? dirty : size);
		if (zero)
			memset(p, 0, dirty > size ? dirty : size);
		else if (dirty > size)
			memset((char *)p + size, 0, dirty - size);
		idl__mem_hide((char *)p + size, len - size);
		return p;
	}
	oc_misses++;
	pthread_mutex_unlock(&oc_lock);

	/* A new block: the kernel's pages are zero. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if ((b = calloc(1, sizeof *b)) == NULL) {
		munmap(p, len);
		return NULL;
	}
	b->addr = p;
	b->len = len;
	b->dirty = size;
	b->cls = cls;
	pthread_mutex_lock(&oc_lock);
	if (oc_insert(b) != 0) {
		pthread_mutex_unlock(&oc_lock);
		free(b);
		munmap(p, len);
		return NULL;
	}
	oc_live++;
	pthread_mutex_unlock(&oc_lock);
	idl__mem_hide((char *)p + size, len - size);
	return p;
}

int
idl__ool_cache_put(void *addr, size_t size)
{
	struct oc_block **pp, *b, *gone = NULL;

	pthread_once(&oc_once, oc_init);
	pthread_mutex_lock(&oc_lock);
	if ((pp = oc_slot(addr)) == NULL) {
		pthread_mutex_unlock(&oc_lock);
		return 0;
	}
	b = *pp;
	if (b->cached) {
		/* Freed twice with no get between: it is cached already. */
		pthread_mutex_unlock(&oc_lock);
		return 1;
	}
	oc_live--;
	/* The owner had the size it was given; a larger size freed means it may have
	 * written that far. */
	if (size > b->dirty)
		b->dirty = size < b->len ? size : b->len;
	if (b->len <= oc_limit) {
		while (oc_bytes + b->len > oc_limit && !idl__list_empty(&oc_age))
			oc_evict(IDL__LIST_FIRST(&oc_age, struct oc_block, age), &gone);
		idl__mem_hide(b->addr, b->len);
		oc_push(b);
	} else {
		*pp = b->hnext;
		oc_count--;
		b->hnext = gone;
		gone = b;
	}
	pthread_mutex_unlock(&oc_lock);
	oc_release(gone);
	return 1;
}

void
idl__ool_cache_stats(struct idl__ool_cache_stats *st)
{
	pthread_once(&oc_once, oc_init);
	pthread_mutex_lock(&oc_lock);
	st->limit = oc_limit;
	st->bytes = oc_bytes;
	st->blocks = oc_ncached;
	st->live = oc_live;
	st->hits = oc_hits;
	st->misses = oc_misses;
	st->evictions = oc_evictions;
	pthread_mutex_unlock(&oc_lock);
}

enum idl__ool_cache_state
idl__ool_cache_state(const void *addr)
{
	struct oc_block **pp;
	enum idl__ool_cache_state st = IDL__OOL_CACHE_UNKNOWN;

	pthread_once(&oc_once, oc_init);
	pthread_mutex_lock(&oc_lock);
	if ((pp = oc_slot(addr)) != NULL)
		st = (*pp)->cached ? IDL__OOL_CACHE_CACHED : IDL__OOL_CACHE_LIVE;
	pthread_mutex_unlock(&oc_lock);
	return st;
}

void
idl__ool_cache_reset(void)
{
	struct oc_block *gone = NULL;

	pthread_once(&oc_once, oc_init);
	pthread_mutex_lock(&oc_lock);
	while (!idl__list_empty(&oc_age))
		oc_evict(IDL__LIST_FIRST(&oc_age, struct oc_block, age), &gone);
	oc_limit = oc_env_limit();
	oc_hits = oc_misses = oc_evictions = 0;
	pthread_mutex_unlock(&oc_lock);
	oc_release(gone);
}
