/*
 * loopback_bench.c - bench.defs through the loopback transport of loopback.c: its server
 * routines and the checks of its client stubs, out-of-line data included.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_S.h"
#include "loopback.h"

static int lb_notified;

kern_return_t
S_bench_null(mach_port_t server)
{
	return KERN_SUCCESS;
}

kern_return_t
S_bench_add(mach_port_t server, int a, int b, int *sum)
{
	*sum = (int)((unsigned)a + (unsigned)b);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_intrpc(mach_port_t server, int x, int *y, int *err)
{
	*y = x * 2;
	*err = x < 0 ? -1 : 0;
	return KERN_SUCCESS;
}

kern_return_t
S_bench_bigin(mach_port_t server, big_t data)
{
	return data[0] == 'B' && data[199] == 'E' ? KERN_SUCCESS : 1;
}

kern_return_t
S_bench_bigout(mach_port_t server, big_t data)
{
	memset(data, 'o', 200);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_biginout(mach_port_t server, big_t data)
{
	data[100] = (char)(data[100] + 1);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_notify(mach_port_t server, int value)
{
	lb_notified = value;
	return KERN_SUCCESS;
}

kern_return_t
S_bench_echo(mach_port_t server, text_t s, text_t r)
{
	snprintf(r, 256, "%s", s);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_sum(mach_port_t server, ints_t data, mach_msg_type_number_t dataCnt, int64_t *total)
{
	*total = 0;
	for (mach_msg_type_number_t k = 0; k < dataCnt; k++)
		*total += data[k];
	return KERN_SUCCESS;
}

/* ool64k and ool1m: the routine owns what it received when it succeeds. */
kern_return_t
S_bench_ool64k(mach_port_t server, ool_t data, mach_msg_type_number_t dataCnt)
{
	if (dataCnt != 64u * 1024u)
		return 1;
	LB_CHECK(data[0] == 'O' && data[dataCnt - 1] == 'O');
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_bench_ool1m(mach_port_t server, ool_t data, mach_msg_type_number_t dataCnt)
{
	if (dataCnt != 1024u * 1024u)
		return 1;
	LB_CHECK(data[0] == 'O' && data[dataCnt - 1] == 'O');
	idl_ool_free(data, dataCnt);
	return KERN_SUCCESS;
}

void
lb_bench(void)
{
	big_t big;
	text_t s, r;
	ints_t data;
	int sum = 0, y = 0, err = 0;
	int64_t total = 0;

	LB_CHECK(bench_null(NULL) == 0);
	LB_CHECK(lb_last_timeout == IDL_TIMEOUT_DEFAULT);
	LB_CHECK(bench_add(NULL, 2, 40, &sum) == 0 && sum == 42);
	LB_CHECK(bench_add(NULL, INT32_MAX, 1, &sum) == 0 && sum == INT32_MIN);
	LB_CHECK(bench_intrpc(NULL, -4, &y, &err) == 0 && y == -8 && err == -1);
	memset(big, 'x', sizeof big);
	big[0] = 'B';
	big[199] = 'E';
	LB_CHECK(bench_bigin(NULL, big) == 0);
	big[199] = 'F';
	LB_CHECK(bench_bigin(NULL, big) == 1);
	LB_CHECK(bench_bigout(NULL, big) == 0 && big[0] == 'o' && big[199] == 'o');
	big[100] = 'a';
	LB_CHECK(bench_biginout(NULL, big) == 0 && big[100] == 'b' && big[99] == 'o');
	LB_CHECK(bench_notify(NULL, 7) == 0 && lb_notified == 7);
	for (int len = 0; len < 256; len += 51) {
		memset(s, 'e', (size_t)len);
		s[len] = '\0';
		memset(r, 0, sizeof r);
		LB_CHECK(bench_echo(NULL, s, r) == 0 && strcmp(r, s) == 0);
	}
	memset(s, 'e', sizeof s);
	LB_CHECK(bench_echo(NULL, s, r) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(lb_detail_is("bench.echo: s: longer than 255 characters"));
	for (int k = 0; k < 1024; k++)
		data[k] = k;
	LB_CHECK(bench_sum(NULL, data, 1024, &total) == 0 && total == 1023 * 1024 / 2);
	LB_CHECK(bench_sum(NULL, data, 0, &total) == 0 && total == 0);
	LB_CHECK(bench_sum(NULL, data, 1025, &total) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(lb_detail_is("bench.sum: data: 1025 elements, above its bound 1024"));
	{
		char *ool = idl_ool_alloc(1024u * 1024u);

		LB_CHECK(ool != NULL);
		memset(ool, 'O', 1024u * 1024u);
		LB_CHECK(bench_ool64k(NULL, ool, 64u * 1024u) == 0);
		LB_CHECK(bench_ool1m(NULL, ool, 1024u * 1024u) == 0);
		LB_CHECK(bench_ool64k(NULL, ool, 100) == 1);
		idl_ool_free(ool, 1024u * 1024u);
	}
}
