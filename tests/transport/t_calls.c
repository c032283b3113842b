/*
 * t_calls.c - every routine of bench.defs gives the right result over the transport, alone
 * and with several client processes and threads at once.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <idl/idl_async.h>

#include "bench_types.h"
#include "bench.h"
#include "bench_impl.h"
#include "conformance.h"

#define TT_CONC_PROCS 4
#define TT_CONC_THREADS 2
#define TT_CONC_CALLS 500
#define TT_CONC_NOTIFIES 50
#define TT_CONC_MS 120000

idl_port_t
tt_open(void)
{
	idl_port_t port = NULL;

	TT_CHECK_KR(idl_port_open(tt.address, &port), 0);
	if (port != NULL)
		CU_ASSERT_EQUAL(idl_port_set_timeout(port, 10000), 0);
	return port;
}

int
tt_is_conn_error(int kr)
{
	return kr == MIG_SERVER_DIED || kr == IDL_ECONNREFUSED || kr == IDL_ECLOSED ||
	       IDL_IS_SYSERR(kr);
}

static void
tt_null(void)
{
	idl_port_t port = tt_open();

	if (port == NULL)
		return;
	for (int i = 0; i < 100; i++)
		TT_CHECK_KR(bench_null(port), 0);
	idl_port_close(port);
}

static void
tt_add(void)
{
	static const int a[] = { 0, 1, -1, 2, INT_MAX, INT_MIN, 123456, -7 };
	static const int b[] = { 0, 2, 1, -5, 1, -1, 654321, -7 };
	idl_port_t port = tt_open();
	int sum;

	if (port == NULL)
		return;
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
		sum = 0x5a5a5a5a;
		TT_CHECK_KR(bench_add(port, a[i], b[i], &sum), 0);
		CU_ASSERT_EQUAL(sum, (int)((unsigned)a[i] + (unsigned)b[i]));
	}
	idl_port_close(port);
}

static void
tt_intrpc(void)
{
	idl_port_t port = tt_open();
	int y, err;

	if (port == NULL)
		return;
	for (int x = -3; x < 1000; x += 97) {
		y = err = -1;
		TT_CHECK_KR(bench_intrpc(port, x, &y, &err), 0);
		CU_ASSERT_EQUAL(y, x + 1);
		CU_ASSERT_EQUAL(err, 0);
	}
	/* A server routine's own error code reaches the client unchanged, and the port
	 * keeps working after it. */
	TT_CHECK_KR(bench_intrpc(port, BENCH_X_FAIL, &y, &err), BENCH_KR_FAIL);
	y = err = -1;
	TT_CHECK_KR(bench_intrpc(port, BENCH_X_INBAND, &y, &err), 0);
	CU_ASSERT_EQUAL(y, BENCH_X_INBAND + 1);
	CU_ASSERT_EQUAL(err, BENCH_ERR_INBAND);
	idl_port_close(port);
}

static void
tt_big(void)
{
	idl_port_t port = tt_open();
	big_t data;

	if (port == NULL)
		return;
	bench_fill(data, sizeof data, BENCH_SALT_IN);
	TT_CHECK_KR(bench_bigin(port, data), 0);
	/* The server checks the bytes: a changed one must be seen there. */
	data[199] ^= 1;
	TT_CHECK_KR(bench_bigin(port, data), BENCH_KR_BADDATA);

	memset(data, 0, sizeof data);
	TT_CHECK_KR(bench_bigout(port, data), 0);
	CU_ASSERT_EQUAL(bench_mismatch(data, sizeof data, BENCH_SALT_OUT), sizeof data);

	bench_fill(data, sizeof data, BENCH_SALT_INOUT_IN);
	TT_CHECK_KR(bench_biginout(port, data), 0);
	CU_ASSERT_EQUAL(bench_mismatch(data, sizeof data, BENCH_SALT_INOUT_OUT), sizeof data);
	idl_port_close(port);
}

static void
tt_echo(void)
{
	static const size_t lens[] = { 0, 1, 7, 8, 9, 100, 254, 255 };
	idl_port_t port = tt_open();
	char s[300], r[256];

	if (port == NULL)
		return;
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		bench_fill(s, lens[i], (unsigned)i);
		s[lens[i]] = '\0';
		memset(r, 'x', sizeof r);
		TT_CHECK_KR(bench_echo(port, s, r), 0);
		CU_ASSERT_PTR_NOT_NULL(memchr(r, '\0', sizeof r));
		CU_ASSERT_STRING_EQUAL(r, s);
	}
	/* 256 characters leave no room for the NUL in c_string[*:256]: refused before
	 * sending, and the port still works. */
	bench_fill(s, 256, 0);
	s[256] = '\0';
	TT_CHECK_KR(bench_echo(port, s, r), MIG_ARRAY_TOO_LARGE);
	/* Buffers of the full text_t size: the prototypes declare the parameters so. */
	memset(s, 0, sizeof s);
	memcpy(s, "after", sizeof "after");
	TT_CHECK_KR(bench_echo(port, s, r), 0);
	CU_ASSERT_STRING_EQUAL(r, "after");
	idl_port_close(port);
}

static void
tt_sum(void)
{
	static const unsigned counts[] = { 0, 1, 2, 3, 511, 1023, 1024 };
	static int data[1025];
	idl_port_t port = tt_open();
	int64_t total, want;

	if (port == NULL)
		return;
	for (unsigned j = 0; j < 1025; j++)
		data[j] = (j % 2 ? -1 : 1) * (int)(j * 1000003u % 2000000000u);
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		want = 0;
		for (unsigned j = 0; j < counts[i]; j++)
			want += data[j];
		total = -1;
		TT_CHECK_KR(bench_sum(port, data, counts[i], &total), 0);
		CU_ASSERT_EQUAL(total, want);
	}
	TT_CHECK_KR(bench_sum(port, data, 1025, &total), MIG_ARRAY_TOO_LARGE);
	idl_port_close(port);
}

/* The done function of sum_async on an empty array: the total and the code it saw. */
struct tt_empty_sum {
	int ran;
	kern_return_t kr;
	int64_t total;
};

static void
tt_empty_sum_done(void *ctx, kern_return_t kr, int64_t total)
{
	struct tt_empty_sum *e = ctx;

	e->ran++;
	e->kr = kr;
	e->total = total;
}

/* An empty array passed as NULL, 0 is a valid argument: C lets a caller with nothing to
 * send pass no buffer, and the stubs must not hand that NULL to memcpy (undefined even for
 * zero bytes; UBSan stops the process in a sanitizer build). In line (sum, synchronous and
 * asynchronous) and out of line (ool64k, ool1m: the server refuses the size, not the call). */
static void
tt_empty(void)
{
	idl_port_t port = tt_open();
	struct tt_empty_sum e = { 0, -1, -1 };
	int64_t total = -1, t0;

	if (port == NULL)
		return;
	TT_CHECK_KR(bench_sum(port, NULL, 0, &total), 0);
	CU_ASSERT_EQUAL(total, 0);
	TT_CHECK_KR(bench_sum_async(port, NULL, 0, tt_empty_sum_done, &e, NULL), 0);
	t0 = idl_now_ns();
	while (e.ran == 0 && tt_ms_since(t0) < 10000) {
		int n = idl_port_wait(port, 100);

		if (n < 0 && n != IDL_ETIMEDOUT) {
			TT_CHECK_KR(n, 0);
			break;
		}
	}
	CU_ASSERT_EQUAL(e.ran, 1);
	TT_CHECK_KR(e.kr, 0);
	CU_ASSERT_EQUAL(e.total, 0);
	TT_CHECK_KR(bench_ool64k(port, NULL, 0), BENCH_KR_BADDATA);
	TT_CHECK_KR(bench_ool1m(port, NULL, 0), BENCH_KR_BADDATA);
	/* The port serves on. */
	TT_CHECK_KR(bench_null(port), 0);
	idl_port_close(port);
}

/* The notification count and value sum the server has seen. */
static int
tt_notified(idl_port_t port, uint32_t *count, uint32_t *sum)
{
	int y = 0, err = 0, kr = bench_intrpc(port, BENCH_X_NOTIFIED, &y, &err);

	*count = (uint32_t)y;
	*sum = (uint32_t)err;
	return kr;
}

static void
tt_notify(void)
{
	idl_port_t port = tt_open();
	uint32_t c0 = 0, s0 = 0, c1 = 0, s1 = 0, want = 0;

	if (port == NULL)
		return;
	TT_CHECK_KR(tt_notified(port, &c0, &s0), 0);
	for (int i = 0; i < 300; i++) {
		TT_CHECK_KR(bench_notify(port, i * 3), 0);
		want += (uint32_t)i * 3;
	}
	/* A call after the notifications on the same port is served after them. */
	TT_CHECK_KR(tt_notified(port, &c1, &s1), 0);
	CU_ASSERT_EQUAL(c1 - c0, 300);
	CU_ASSERT_EQUAL(s1 - s0, want);
	idl_port_close(port);
}

/* Call n of a client: one checked call of a mix of routines that the seed varies; 0 if
 * right, else -1 with a message. */
static int
tt_one_call(idl_port_t port, unsigned seed, unsigned n)
{
	unsigned i = seed * 1000003u + n;
	int a = (int)(i * 7919u), r1 = 0, r2 = 0, kr = 0;
	char s[256], r[256];
	int64_t total = 0;
	big_t big;
	ints_t data;

	switch (i % 6) {
	case 0:
		if ((kr = bench_add(port, a, 5, &r1)) == 0 && r1 != (int)((unsigned)a + 5u))
			goto wrong;
		break;
	case 1:
		if ((kr = bench_intrpc(port, a, &r1, &r2)) == 0 &&
		    (r1 != (int)((unsigned)a + 1u) || r2 != 0))
			goto wrong;
		break;
	case 2:
		if ((kr = bench_bigout(port, big)) == 0 &&
		    bench_mismatch(big, sizeof big, BENCH_SALT_OUT) != sizeof big)
			goto wrong;
		break;
	case 3:
		bench_fill(big, sizeof big, BENCH_SALT_INOUT_IN);
		if ((kr = bench_biginout(port, big)) == 0 &&
		    bench_mismatch(big, sizeof big, BENCH_SALT_INOUT_OUT) != sizeof big)
			goto wrong;
		break;
	case 4:
		snprintf(s, sizeof s, "call %u from %d", i, (int)getpid());
		if ((kr = bench_echo(port, s, r)) == 0 && strcmp(r, s) != 0)
			goto wrong;
		break;
	default:
		for (unsigned j = 0; j < 64; j++)
			data[j] = (int)(i + j);
		if ((kr = bench_sum(port, data, i % 65, &total)) == 0) {
			int64_t want = 0;

			for (unsigned j = 0; j < i % 65; j++)
				want += data[j];
			if (total != want)
				goto wrong;
		}
		break;
	}
	if (kr != 0) {
		fprintf(stderr, "conformance client %d: call %u: %s [%s]\n", (int)getpid(), n,
			idl_errname(kr), idl_errdetail());
		return -1;
	}
	return 0;
wrong:
	fprintf(stderr, "conformance client %d: call %u (kind %u): wrong result\n", (int)getpid(),
		n, i % 6);
	return -1;
}

int
tt_client_calls(idl_port_t port, unsigned seed, unsigned calls, int notifies)
{
	uint32_t c, s;
	int kr;

	for (unsigned i = 0; i < calls; i++)
		if (tt_one_call(port, seed, i) != 0)
			return -1;
	for (int i = 0; i < notifies; i++)
		if ((kr = bench_notify(port, 1)) != 0) {
			fprintf(stderr, "conformance client: notify: %s\n", idl_errname(kr));
			return -1;
		}
	/* The reply comes once this connection's notifications have been served. */
	if ((kr = tt_notified(port, &c, &s)) != 0) {
		fprintf(stderr, "conformance client: intrpc: %s\n", idl_errname(kr));
		return -1;
	}
	return 0;
}

/* Starts a client process: this program again, in its --client mode. */
static pid_t
tt_spawn_client(unsigned n)
{
	char seed[16], threads[16], calls[16], notifies[16];
	pid_t pid;

	snprintf(seed, sizeof seed, "%u", n);
	snprintf(threads, sizeof threads, "%d", TT_CONC_THREADS);
	snprintf(calls, sizeof calls, "%d", TT_CONC_CALLS);
	snprintf(notifies, sizeof notifies, "%d", TT_CONC_NOTIFIES);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "conformance", TT_CHILD_FLAG, tt.address, seed, threads,
		      calls, notifies, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void
tt_concurrent(void)
{
	idl_port_t port = tt_open();
	pid_t pids[TT_CONC_PROCS];
	uint32_t c0 = 0, s0 = 0, c1 = 0, s1 = 0, want;
	int64_t t0;
	int status, left = 0;

	if (port == NULL)
		return;
	TT_CHECK_KR(tt_notified(port, &c0, &s0), 0);
	for (unsigned i = 0; i < TT_CONC_PROCS; i++) {
		pids[i] = tt_spawn_client(i + 1);
		CU_ASSERT(pids[i] > 0);
		left += pids[i] > 0;
	}
	/* Every client must exit 0 (all its results right) within the deadline. */
	t0 = idl_now_ns();
	while (left > 0 && tt_ms_since(t0) < TT_CONC_MS) {
		pid_t r = waitpid(-1, &status, WNOHANG);

		for (unsigned i = 0; r > 0 && i < TT_CONC_PROCS; i++) {
			if (pids[i] != r)
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fprintf(stderr, "conformance: client %u failed (status 0x%x)\n", i,
					(unsigned)status);
			CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			pids[i] = 0;
			left--;
		}
		if (r <= 0)
			usleep(10000);
	}
	for (unsigned i = 0; i < TT_CONC_PROCS; i++) {
		if (pids[i] > 0) {
			fprintf(stderr, "conformance: client %u still running after %d ms\n", i,
				TT_CONC_MS);
			CU_FAIL("a client process did not finish in time");
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status, 0);
		}
	}
	want = TT_CONC_PROCS * TT_CONC_THREADS * TT_CONC_NOTIFIES;
	TT_CHECK_KR(tt_notified(port, &c1, &s1), 0);
	CU_ASSERT_EQUAL(c1 - c0, want);
	CU_ASSERT_EQUAL(s1 - s0, want);
	idl_port_close(port);
}

const struct tt_case tt_call_cases[] = {
	{ "null", tt_null },
	{ "add", tt_add },
	{ "intrpc and error codes", tt_intrpc },
	{ "bigin bigout biginout", tt_big },
	{ "echo", tt_echo },
	{ "sum", tt_sum },
	{ "empty arrays as NULL, 0", tt_empty },
	{ "notify", tt_notify },
	{ "concurrent clients", tt_concurrent },
	{ NULL, NULL },
};
