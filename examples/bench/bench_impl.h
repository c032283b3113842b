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
 *                           BENCH_X_OOLSUM    y, err = the low and high 32 bits of the
 *                                             checksum (bench_ool_sum) of the data the last
 *                                             ool64k or ool1m took
 *   bigin(data)           checks data against bench_pattern(i, BENCH_SALT_IN), else fails with
 *                         BENCH_KR_BADDATA
 *   bigout -> data        data = bench_pattern(i, BENCH_SALT_OUT)
 *   biginout(data)        checks data against BENCH_SALT_INOUT_IN as bigin does, then returns
 *                         the pattern for BENCH_SALT_INOUT_OUT
 *   notify(value)         counts the notification and adds value to the sum
 *   echo(s) -> r          r = s
 *   sum(data) -> total    total = the sum of the ints, as int64_t
 *   ool64k(data), ool1m(data)
 *                         read the whole of data (exactly BENCH_OOL64K_BYTES, BENCH_OOL1M_BYTES,
 *                         else BENCH_KR_BADDATA) into a checksum that intrpc(BENCH_X_OOLSUM)
 *                         tells, and free it: a routine that succeeds owns what it received
 */
#ifndef BENCH_IMPL_H
#define BENCH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_X_FAIL (-1000)
#define BENCH_X_INBAND (-1001)
#define BENCH_X_NOTIFIED (-1002)
#define BENCH_X_OOLSUM (-1003)

#define BENCH_OOL64K_BYTES (64u * 1024u)
#define BENCH_OOL1M_BYTES (1024u * 1024u)
#define BENCH_SALT_OOL 4u

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

/* The checksum of out-of-line data: the sum of its 64-bit words (the last one zero-padded)
 * plus its length, so that reading every byte costs little next to moving them. */
static inline uint64_t
bench_ool_sum(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t sum = n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		__builtin_memcpy(&w, p + i, 8);
		sum += w;
	}
	if (i < n) {
		w = 0;
		__builtin_memcpy(&w, p + i, n - i);
		sum += w;
	}
	return sum;
}

#endif /* BENCH_IMPL_H */
