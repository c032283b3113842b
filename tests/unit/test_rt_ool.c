/*
 * test_rt_ool.c - out-of-line memory and the process's cache of blocks (runtime/ool/ool.c,
 * runtime/ool/ool_cache.c): recycled blocks are zero, the byte bound holds with the oldest
 * blocks evicted first, IDL_OOL_CACHE sets the bound and 0 turns the cache off, a mapping
 * the cache did not make (a sealed memfd's, as unix: receives) is unmapped and never kept,
 * and threads sharing the cache see only zeroed blocks of their own.
 *
 * Each test sets IDL_OOL_CACHE and resets the cache (idl__ool_cache_reset reads it again);
 * the suite's cleanup leaves the default for the suites after it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create, F_ADD_SEALS */
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <idl/idl_ool.h>

#include "ool/ool.h"
#include "ool/ool_cache.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(OT_ASAN)
#define OT_ASAN 1
#endif
#ifdef OT_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define OT_KIB 1024u
#define OT_MIB (1024u * 1024u)

/* Sets IDL_OOL_CACHE (NULL: unset) and makes the cache read it, empty. */
static void
ot_cache(const char *value)
{
	if (value != NULL)
		setenv("IDL_OOL_CACHE", value, 1);
	else
		unsetenv("IDL_OOL_CACHE");
	idl__ool_cache_reset();
}

static struct idl__ool_cache_stats
ot_stats(void)
{
	struct idl__ool_cache_stats st;

	idl__ool_cache_stats(&st);
	return st;
}

/* Whether the page at p is mapped in this process. */
static int
ot_mapped(void *p)
{
	unsigned char v;

	return mincore(p, 1, &v) == 0 || errno != ENOMEM;
}

/* Whether n bytes at p are all zero. */
static int
ot_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

static int
ot_clean(void)
{
	ot_cache(NULL);
	return 0;
}

/* A block written and freed comes back, to the next allocation of its class, all zero; the
 * receive paths' blocks (overwritten whole) are not cleared, but what lies past their size
 * is. */
static void
test_zeroed(void)
{
	unsigned char *a, *b;
	struct idl__ool_cache_stats st;

	ot_cache(NULL);
	CU_ASSERT_EQUAL(ot_stats().limit, IDL_OOL_CACHE_DEFAULT);
	a = idl_ool_alloc(64 * OT_KIB);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL((uintptr_t)a % 4096, 0);
	CU_ASSERT(ot_zero(a, 64 * OT_KIB));
	CU_ASSERT_EQUAL(idl__ool_cache_state(a), IDL__OOL_CACHE_LIVE);
	memset(a, 0xa5, 64 * OT_KIB);
	idl_ool_free(a, 64 * OT_KIB);
	CU_ASSERT_EQUAL(idl__ool_cache_state(a), IDL__OOL_CACHE_CACHED);
	CU_ASSERT(ot_mapped(a));
	st = ot_stats();
	CU_ASSERT_EQUAL(st.blocks, 1);
	CU_ASSERT_EQUAL(st.bytes, 64 * OT_KIB);

	/* 60 KiB is of the 64 KiB class (56 to 64): the same block, zero again. */
	b = idl_ool_alloc(60 * OT_KIB);
	CU_ASSERT_PTR_EQUAL(b, a);
	CU_ASSERT(ot_zero(b, 60 * OT_KIB));
	st = ot_stats();
	CU_ASSERT_EQUAL(st.hits, 1);
	CU_ASSERT_EQUAL(st.misses, 1);
	CU_ASSERT_EQUAL(st.blocks, 0);
	memset(b, 0x5a, 60 * OT_KIB);
	idl_ool_free(b, 60 * OT_KIB);

	/* For a receiver: its 57 KiB are left as they were (it overwrites them), the rest of
	 * what the last owner had is cleared. */
	b = idl__ool_alloc_fill(57 * OT_KIB);
	CU_ASSERT_PTR_EQUAL(b, a);
	CU_ASSERT_EQUAL(b[0], 0x5a);
#ifdef OT_ASAN
	/* Past its size the block is poisoned; the test looks anyway. */
	__asan_unpoison_memory_region(b + 57 * OT_KIB, 7 * OT_KIB);
#endif
	CU_ASSERT(ot_zero(b + 57 * OT_KIB, 7 * OT_KIB));
	memset(b, 0x77, 57 * OT_KIB);
	idl__ool_free_plain(b, 57 * OT_KIB);

	/* 16 KiB and just above it are classes of their own: no sharing across them. */
	a = idl_ool_alloc(16 * OT_KIB);
	b = idl_ool_alloc(16 * OT_KIB + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	memset(a, 1, 16 * OT_KIB);
	memset(b, 2, 16 * OT_KIB + 1);
	idl_ool_free(a, 16 * OT_KIB);
	idl_ool_free(b, 16 * OT_KIB + 1);
	CU_ASSERT_PTR_EQUAL(idl_ool_alloc(20 * OT_KIB), b);
	CU_ASSERT(ot_zero(b, 20 * OT_KIB));
	CU_ASSERT_PTR_EQUAL(idl_ool_alloc(16 * OT_KIB), a);
	CU_ASSERT(ot_zero(a, 16 * OT_KIB));
	idl_ool_free(a, 16 * OT_KIB);
	idl_ool_free(b, 20 * OT_KIB);

	/* Small blocks come from malloc, zeroed too, and never enter the cache. */
	st = ot_stats();
	a = idl_ool_alloc(100);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT(ot_zero(a, 100));
	CU_ASSERT_EQUAL(idl__ool_cache_state(a), IDL__OOL_CACHE_UNKNOWN);
	idl_ool_free(a, 100);
	CU_ASSERT_EQUAL(ot_stats().blocks, st.blocks);
}

/* The bytes cached never pass the bound: the blocks cached longest ago are unmapped first,
 * a block larger than the bound is never kept, and the counters say so. */
static void
test_bound(void)
{
	enum {
		N = 40
	};
	unsigned char *blk[N], *big, *mib;
	struct idl__ool_cache_stats st;
	int ok = 1, unmapped = 1;

	ot_cache("1048576");
	CU_ASSERT_EQUAL(ot_stats().limit, OT_MIB);
	for (int i = 0; i < N; i++) {
		blk[i] = idl_ool_alloc(64 * OT_KIB);
		CU_ASSERT_PTR_NOT_NULL_FATAL(blk[i]);
		memset(blk[i], i + 1, 64 * OT_KIB);
	}
	/* Each block evicted is unmapped when it goes: checked at once, since a mapping made
	 * later anywhere in the process (a thread's stack, a sanitizer's region) may take its
	 * address. */
	for (int i = 0; i < N; i++) {
		idl_ool_free(blk[i], 64 * OT_KIB);
		if (i >= 16)
			unmapped &= !ot_mapped(blk[i - 16]);
		st = ot_stats();
		ok &= st.bytes <= st.limit;
	}
	CU_ASSERT(ok);
	CU_ASSERT(unmapped);
	st = ot_stats();
	CU_ASSERT_EQUAL(st.blocks, 16);
	CU_ASSERT_EQUAL(st.bytes, OT_MIB);
	CU_ASSERT_EQUAL(st.evictions, N - 16);
	CU_ASSERT_EQUAL(st.live, 0);
	/* The first 24 freed went; the last 16 wait. */
	for (int i = 0; i < N; i++) {
		int want = i < N - 16 ? IDL__OOL_CACHE_UNKNOWN : IDL__OOL_CACHE_CACHED;

		CU_ASSERT_EQUAL(idl__ool_cache_state(blk[i]), want);
	}

	/* A block of another class pushes out as many as it needs. */
	mib = idl_ool_alloc(OT_MIB);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mib);
	memset(mib, 0xee, OT_MIB);
	idl_ool_free(mib, OT_MIB);
	st = ot_stats();
	CU_ASSERT_EQUAL(st.blocks, 1);
	CU_ASSERT_EQUAL(st.bytes, OT_MIB);
	CU_ASSERT_EQUAL(idl__ool_cache_state(mib), IDL__OOL_CACHE_CACHED);

	/* Larger than the bound: mapped to its size, unmapped when freed, never cached. */
	big = idl_ool_alloc(OT_MIB + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	CU_ASSERT(ot_zero(big, OT_MIB + 1));
	CU_ASSERT_EQUAL(idl__ool_cache_state(big), IDL__OOL_CACHE_UNKNOWN);
	idl_ool_free(big, OT_MIB + 1);
	CU_ASSERT(!ot_mapped(big));
	CU_ASSERT_EQUAL(ot_stats().bytes, OT_MIB);

	/* A block freed twice with no allocation between is cached once. */
	mib = idl_ool_alloc(OT_MIB);
	CU_ASSERT_EQUAL(ot_stats().hits, 1);
	idl_ool_free(mib, OT_MIB);
	idl_ool_free(mib, OT_MIB);
	st = ot_stats();
	CU_ASSERT_EQUAL(st.blocks, 1);
	CU_ASSERT_EQUAL(st.bytes, OT_MIB);

	/* Freed with a wrong size, a block of the cache still goes back to its own class. */
	mib = idl_ool_alloc(OT_MIB);
	idl_ool_free(mib, 20000);
	CU_ASSERT_EQUAL(idl__ool_cache_state(mib), IDL__OOL_CACHE_CACHED);
	CU_ASSERT_PTR_EQUAL(idl_ool_alloc(OT_MIB), mib);
	CU_ASSERT(ot_zero(mib, OT_MIB));
	idl_ool_free(mib, OT_MIB);
}

/* IDL_OOL_CACHE=0: every block is mapped when allocated and unmapped when freed. A value
 * that is not a number of bytes is the default. */
static void
test_off(void)
{
	unsigned char *a;
	struct idl__ool_cache_stats st;

	ot_cache("0");
	st = ot_stats();
	CU_ASSERT_EQUAL(st.limit, 0);
	a = idl_ool_alloc(64 * OT_KIB);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(idl__ool_cache_state(a), IDL__OOL_CACHE_UNKNOWN);
	memset(a, 3, 64 * OT_KIB);
	idl_ool_free(a, 64 * OT_KIB);
	CU_ASSERT(!ot_mapped(a));
	st = ot_stats();
	CU_ASSERT_EQUAL(st.blocks, 0);
	CU_ASSERT_EQUAL(st.bytes, 0);
	CU_ASSERT_EQUAL(st.hits + st.misses, 0);

	/* Made while the cache was on, freed once it is off: unmapped whole. */
	ot_cache(NULL);
	a = idl_ool_alloc(40 * OT_KIB);
	CU_ASSERT_EQUAL(idl__ool_cache_state(a), IDL__OOL_CACHE_LIVE);
	ot_cache("0");
	idl_ool_free(a, 40 * OT_KIB);
	CU_ASSERT_EQUAL(idl__ool_cache_state(a), IDL__OOL_CACHE_UNKNOWN);
	CU_ASSERT(!ot_mapped(a));
	CU_ASSERT_EQUAL(ot_stats().live, 0);

	static const char *const bad[] = { "12abc", "-5", "+7", "99999999999999999999", " 1" };

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ot_cache(bad[i]);
		CU_ASSERT_EQUAL(ot_stats().limit, IDL_OOL_CACHE_DEFAULT);
	}
	ot_cache("65536");
	CU_ASSERT_EQUAL(ot_stats().limit, 65536);
}

/* A private mapping of a sealed memfd (what unix: hands a receiver of 16 KiB or more) is
 * unmapped by idl_ool_free and never enters the cache. */
static void
test_memfd(void)
{
	size_t n = 64 * OT_KIB;
	struct idl__ool_cache_stats st;
	char *buf = malloc(n);
	int fd = memfd_create("idlkit-ool-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;

	ot_cache(NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_FATAL(fd >= 0);
	memset(buf, 'M', n);
	CU_ASSERT_EQUAL(write(fd, buf, n), (ssize_t)n);
	CU_ASSERT_EQUAL(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE), 0);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	CU_ASSERT_FATAL(p != MAP_FAILED);
	CU_ASSERT_EQUAL(memcmp(p, buf, n), 0);
	CU_ASSERT_EQUAL(idl__ool_cache_state(p), IDL__OOL_CACHE_UNKNOWN);
	idl_ool_free(p, n);
	CU_ASSERT(!ot_mapped(p));
	st = ot_stats();
	CU_ASSERT_EQUAL(st.blocks, 0);
	CU_ASSERT_EQUAL(st.bytes, 0);
	free(buf);
}

/* Threads allocating and freeing blocks of several classes at once: each gets a zeroed
 * block no other thread holds, and the bound holds throughout. */
#define OT_THREADS 4
#define OT_ROUNDS 400

static void *
ot_worker(void *arg)
{
	static const size_t sizes[] = { 16 * OT_KIB, 20 * OT_KIB, 64 * OT_KIB, 100 * OT_KIB,
					OT_MIB };
	unsigned seed = (unsigned)(uintptr_t)arg;
	uintptr_t bad = 0;

	for (int i = 0; i < OT_ROUNDS; i++) {
		size_t n = sizes[rand_r(&seed) % (sizeof sizes / sizeof sizes[0])];
		unsigned char *p = idl_ool_alloc(n);
		struct idl__ool_cache_stats st;

		if (p == NULL) {
			bad++;
			break;
		}
		/* Spot checks over the whole block, and its two ends. */
		for (size_t k = 0; k < n; k += 509)
			bad += p[k] != 0;
		bad += p[n - 1] != 0;
		memset(p, (int)(uintptr_t)arg + 1, n);
		sched_yield();
		for (size_t k = 0; k < n; k += 4093)
			bad += p[k] != (unsigned char)((uintptr_t)arg + 1);
		idl_ool_free(p, n);
		idl__ool_cache_stats(&st);
		bad += st.bytes > st.limit;
	}
	return (void *)bad;
}

static void
test_threads(void)
{
	pthread_t t[OT_THREADS];
	struct idl__ool_cache_stats st;

	ot_cache("3000000");
	for (uintptr_t i = 0; i < OT_THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, ot_worker, (void *)i), 0);
	for (int i = 0; i < OT_THREADS; i++) {
		void *bad = NULL;

		pthread_join(t[i], &bad);
		CU_ASSERT_PTR_NULL(bad);
	}
	st = ot_stats();
	CU_ASSERT(st.bytes <= st.limit);
	CU_ASSERT_EQUAL(st.live, 0);
	CU_ASSERT(st.hits > 0);
	CU_ASSERT_EQUAL(st.hits + st.misses, (uint64_t)OT_THREADS * OT_ROUNDS);
}

static CU_TestInfo ool_tests[] = {
	{ "recycled blocks are zero", test_zeroed },
	{ "the byte bound", test_bound },
	{ "IDL_OOL_CACHE=0 and bad values", test_off },
	{ "memfd mappings are not cached", test_memfd },
	{ "threads", test_threads },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_ool = { "rt_ool", NULL, ot_clean, NULL, NULL, ool_tests };
