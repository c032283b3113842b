/*
 * mem_hide.h - telling AddressSanitizer and valgrind's memcheck that memory the runtime
 * keeps for reuse is not to be touched, and that it is handed out again. A block kept in a
 * cache (out-of-line data, a call's record) would otherwise hide a use after its owner gave
 * it back; with these, such a use is reported as if the block had been freed. Internal.
 */
#ifndef IDL_RUNTIME_MEM_HIDE_H
#define IDL_RUNTIME_MEM_HIDE_H

#include <config.h>

#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IDL__ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(IDL__ASAN)
#define IDL__ASAN 1
#endif
#ifdef IDL__ASAN
#include <sanitizer/asan_interface.h>
#endif
#if HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#endif

/* The bytes [p, p + n) may not be touched until idl__mem_show(). */
static inline void
idl__mem_hide(void *p, size_t n)
{
#ifdef IDL__ASAN
	__asan_poison_memory_region(p, n);
#endif
#if HAVE_VALGRIND_MEMCHECK_H
	(void)VALGRIND_MAKE_MEM_NOACCESS(p, n);
#endif
	(void)p;
	(void)n;
}

/* The bytes [p, p + n) are an owner's again, with contents yet to be written. */
static inline void
idl__mem_show(void *p, size_t n)
{
#ifdef IDL__ASAN
	__asan_unpoison_memory_region(p, n);
#endif
#if HAVE_VALGRIND_MEMCHECK_H
	(void)VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#endif
	(void)p;
	(void)n;
}

#endif /* IDL_RUNTIME_MEM_HIDE_H */
