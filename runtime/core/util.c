/*
 * util.c - what every part of the runtime and every transport measures and allocates with:
 * the clock every deadline is measured on, zeroed aligned memory, the small futex lock
 * (struct idl__lock, transport_kit.h), the environment knobs' parser and the library's
 * version. It knows nothing of ports, messages or transports.
 */
#include <config.h>

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "core/core.h"

int64_t
idl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
idl_deadline_ms(int ms)
{
	int64_t now;

	if (ms < 0)
		return IDL_DEADLINE_NONE;
	now = idl_now_ns();
	/* An int of milliseconds is at most ~2.1e15 ns: only a clock near INT64_MAX could
	 * overflow, but saturate anyway rather than wrap. */
	if (now > IDL_DEADLINE_NONE - (int64_t)ms * 1000000)
		return IDL_DEADLINE_NONE;
	return now + (int64_t)ms * 1000000;
}

void
idl__lock_wait(struct idl__lock *l)
{
	/* Marked as slept on (2) before sleeping, so that the holder's release wakes us; the
	 * exchange that takes it leaves it marked, since others may sleep too. */
	while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
		(void)idl__sys_futex((uint32_t *)&l->word, FUTEX_WAIT_PRIVATE, 2, NULL);
}

void
idl__lock_wake(struct idl__lock *l)
{
	(void)idl__sys_futex((uint32_t *)&l->word, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void *
idl__zalloc(size_t size)
{
	void *p;

	if (size == 0)
		size = 16;
	if (posix_memalign(&p, 16, size) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

int64_t
idl__env_int(const char *name, int64_t dflt, int64_t min, int64_t max)
{
	const char *s = getenv(name);
	char *end;
	long long v;

	/* Digits, and a minus sign only where a negative value is allowed ("-0" is not 0). */
	if (s == NULL || (*s == '-' ? min >= 0 : (*s < '0' || *s > '9')))
		return dflt;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return dflt;
	return v;
}

const char *
idl_version(void)
{
	return PACKAGE_VERSION;
}
