/*
 * bench_impl.h - what bench-server does beyond what bench.defs says, so that bench-client and
 * the transport conformance suite (tests/transport/) can check every result.
 *
 *   null                  does nothing
 *   add(a, b)             sum = a + b (wrapping, as unsigned arithmetic)
 *   intrpc(x)             y = x + 1, err = 0; and three magic inputs:
 *                           BENCH_X_FAIL      the routine returns BENCH_KR_FAIL, so a test can
 *                                             see a server's error code reach the client
 *                           BENCH_X_INBAND    succeeds with y = x + 1 and err = BENCH_ERR_INBAND
 *                           BENCH_X_NOTIFIED  y = notifications received so far, err = the low
 *                                             32 bits of the sum of their values
 *   bigin(data)           checks data against bench_pattern(i, BENCH_SALT_IN), else fails with
 *                         BENCH_KR_BADDATA
 *   bigout -> data        data = bench_pattern(i, BENCH_SALT_OUT)
 *   biginout(data)        checks data against BENCH_SALT_INOUT_IN as bigin does, then returns
 *                         the pattern for BENCH_SALT_INOUT_OUT
 *   notify(value)         counts the notification and adds value to the sum
 *   echo(s) -> r          r = s
 *   sum(data) -> total    total = the sum of the ints, as int64_t
 */
#ifndef BENCH_IMPL_H
#define BENCH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_X_FAIL (-1000)
#define BENCH_X_INBAND (-1001)
#define BENCH_X_NOTIFIED (-1002)

/* Positive codes: the range that belongs to server routines (see <idl/idl_error.h>). */
#define BENCH_KR_FAIL 4242
#define BENCH_KR_BADDATA 4243
#define BENCH_ERR_INBAND 77

#define BENCH_SALT_IN 0u
#define BENCH_SALT_OUT 1u
#define BENCH_SALT_INOUT_IN 2u
#define BENCH_SALT_INOUT_OUT 3u

/* Byte i of a big_t for a given salt: letters, so a wrong byte is easy to spot in a dump. */
static inline char
bench_pattern(size_t i, unsigned salt)
{
	return (char)('A' + (i * 7u + salt * 11u) % 26u);
}

static inline void
bench_fill(char *data, size_t n, unsigned salt)
{
	for (size_t i = 0; i < n; i++)
		data[i] = bench_pattern(i, salt);
}

/* The index of the first byte that differs from the pattern, or n if none does. */
static inline size_t
bench_mismatch(const char *data, size_t n, unsigned salt)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (data[i] != bench_pattern(i, salt))
			break;
	return i;
}

#endif /* BENCH_IMPL_H */
