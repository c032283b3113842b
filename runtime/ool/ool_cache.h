/*
 * ool_cache.h - the process's cache of out-of-line blocks (ool_cache.c; docs/runtime.md,
 * "Out-of-line memory"). Internal to libidlrt: ool.c is its only caller but for the tests,
 * which read its counters.
 */
#ifndef IDL_RUNTIME_OOL_CACHE_H
#define IDL_RUNTIME_OOL_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The bound of the cache when IDL_OOL_CACHE does not set one, in bytes. */
#define IDL_OOL_CACHE_DEFAULT (8u * 1024u * 1024u)

/*
 * A block of `size` bytes (IDL_OOL_MAP_MIN or more), mapped, page aligned, the caller's until
 * idl__ool_cache_put(). With `zero` its `size` bytes are zero. Without, they are whatever the
 * block last held, and the caller must overwrite all of them before anyone else reads the
 * block, or put it back unread (the receive paths, which read the data straight into it);
 * in both cases what lies beyond `size` in the block is zero. NULL when out of memory.
 */
void *idl__ool_cache_get(size_t size, int zero);

/*
 * Takes back a block that idl__ool_cache_get() made: keeps it for the next get of its size
 * class while the bound allows, else unmaps it. Returns 1 for such a block (whatever `size`
 * says), 0 for memory the cache did not make, which the caller releases by its own rule.
 */
int idl__ool_cache_put(void *addr, size_t size);

/* What the cache holds and has done, read at one instant. */
struct idl__ool_cache_stats {
	size_t limit; /* the bound in bytes; 0 when the cache is off */
	size_t bytes; /* the mappings of the cached blocks, in bytes: at most limit */
	size_t blocks; /* blocks cached */
	size_t live; /* blocks handed out that the cache will take back */
	uint64_t hits; /* gets served from the cache */
	uint64_t misses; /* gets that mapped a new block (cacheable sizes only) */
	uint64_t evictions; /* cached blocks unmapped to keep the bound */
};
void idl__ool_cache_stats(struct idl__ool_cache_stats *st);

/* For tests: what the cache knows of addr. */
enum idl__ool_cache_state {
	IDL__OOL_CACHE_UNKNOWN = 0, /* not a block of the cache's */
	IDL__OOL_CACHE_LIVE = 1, /* handed out, not freed yet */
	IDL__OOL_CACHE_CACHED = 2, /* freed, kept for the next get */
};
enum idl__ool_cache_state idl__ool_cache_state(const void *addr);

/* For tests: unmaps every cached block, zeroes the counters and reads IDL_OOL_CACHE again.
 * Blocks handed out before stay the cache's to take back. */
void idl__ool_cache_reset(void);

#endif /* IDL_RUNTIME_OOL_CACHE_H */
