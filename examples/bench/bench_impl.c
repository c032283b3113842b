/*
 * bench_impl.c - bench-server's routines: the behaviour bench_impl.h describes.
 *
 * They may run on several threads at once (bench-server -c N), so the notification counters
 * are atomics and nothing else is shared.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>

#include "bench_types.h"
#include "benchServer.h"
#include "bench_impl.h"

static atomic_uint_fast32_t bench_notified;
static atomic_uint_fast32_t bench_notified_sum;
static _Atomic uint64_t bench_ool_last;

kern_return_t
S_bench_null(mach_port_t server)
{
	return KERN_SUCCESS;
}

kern_return_t
S_bench_add(mach_port_t server, int a, int b, int *sum)
{
	/* Wrapping addition without signed overflow. */
	*sum = (int)((uint32_t)a + (uint32_t)b);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_intrpc(mach_port_t server, int x, int *y, int *err)
{
	switch (x) {
	case BENCH_X_FAIL:
		return BENCH_KR_FAIL;
	case BENCH_X_INBAND:
		*y = x + 1;
		*err = BENCH_ERR_INBAND;
		return KERN_SUCCESS;
	case BENCH_X_NOTIFIED:
		*y = (int)atomic_load(&bench_notified);
		*err = (int)(uint32_t)atomic_load(&bench_notified_sum);
		return KERN_SUCCESS;
	case BENCH_X_OOLSUM: {
		uint64_t sum = atomic_load(&bench_ool_last);

		*y = (int)(uint32_t)sum;
		*err = (int)(uint32_t)(sum >> 32);
		return KERN_SUCCESS;
	}
	default:
		*y = (int)((uint32_t)x + 1u);
		*err = 0;
		return KERN_SUCCESS;
	}
}

kern_return_t
S_bench_bigin(mach_port_t server, big_t data)
{
	if (bench_mismatch(data, sizeof(big_t), BENCH_SALT_IN) != sizeof(big_t))
		return BENCH_KR_BADDATA;
	return KERN_SUCCESS;
}

kern_return_t
S_bench_bigout(mach_port_t server, big_t data)
{
	bench_fill(data, sizeof(big_t), BENCH_SALT_OUT);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_biginout(mach_port_t server, big_t data)
{
	if (bench_mismatch(data, sizeof(big_t), BENCH_SALT_INOUT_IN) != sizeof(big_t))
		return BENCH_KR_BADDATA;
	bench_fill(data, sizeof(big_t), BENCH_SALT_INOUT_OUT);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_notify(mach_port_t server, int value)
{
	/* The sum first, so that a reader that sees the new count also sees its value. */
	atomic_fetch_add(&bench_notified_sum, (uint32_t)value);
	atomic_fetch_add(&bench_notified, 1);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_echo(mach_port_t server, text_t s, text_t r)
{
	/* The stub guarantees a NUL inside the bound; copy it with the string. */
	size_t len = strnlen(s, sizeof(text_t) - 1);

	memcpy(r, s, len);
	r[len] = '\0';
	return KERN_SUCCESS;
}

kern_return_t
S_bench_sum(mach_port_t server, ints_t data, mach_msg_type_number_t dataCnt, int64_t *total)
{
	int64_t t = 0;

	for (mach_msg_type_number_t i = 0; i < dataCnt; i++)
		t += data[i];
	*total = t;
	return KERN_SUCCESS;
}

/* ool64k and ool1m: the data is the routine's once it returns KERN_SUCCESS (MIG's rule), so
 * it frees it; on an error return the runtime does. */
static kern_return_t
bench_ool_take(ool_t data, mach_msg_type_number_t dataCnt, uint32_t want)
{
	if (dataCnt != want)
		return BENCH_KR_BADDATA;
	atomic_store(&bench_ool_last, bench_ool_sum(data, dataCnt));
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_ool64k(mach_port_t server, ool_t data, mach_msg_type_number_t dataCnt)
{
	return bench_ool_take(data, dataCnt, BENCH_OOL64K_BYTES);
}

kern_return_t
S_bench_ool1m(mach_port_t server, ool_t data, mach_msg_type_number_t dataCnt)
{
	return bench_ool_take(data, dataCnt, BENCH_OOL1M_BYTES);
}
