/*
 * client.c - bench-client: calls every routine of bench.defs, checks every result, and
 * prints a latency table.
 *
 *     bench-client [-n CALLS] [-r ROUNDS] ADDRESS
 *
 * Each round calls each routine CALLS times and takes the mean time per call; the table
 * shows, per routine, the median of those means over the rounds, and the smallest and
 * largest. The one-way row is the rate of notify messages the server took in: CALLS
 * notifications, then one intrpc that returns once the server has counted them. The
 * out-of-line rows (ool64k, ool1m) send a buffer of the runtime's out-of-line memory; the
 * first call of each round checks the server's checksum of what it received. A transport
 * that cannot carry them (udp: above the datagram limit) or a server that does not serve
 * them (the dynamic server) makes the row print as skipped, with the reason, and no more.
 *
 * Any wrong result or error stops the client with a message and exit status 1.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>

#include "bench_types.h"
#include "bench.h"
#include "bench_impl.h"

struct bench_ctx {
	mach_port_t port;
	int64_t sum_prefix[1025]; /* sum_prefix[n]: the sum of the first n ints of sum_data */
	ints_t sum_data;
	char text[256]; /* 255 pattern letters: call i echoes the first i % 256 */
	char *ool; /* BENCH_OOL1M_BYTES of pattern, out-of-line memory */
	uint64_t ool_sum[2]; /* the checksums of its first 64 KiB and of all of it */
	char skip_why[2][200]; /* why ool64k, ool1m cannot run, when BENCH_SKIP */
};

typedef int (*bench_fn)(struct bench_ctx *ctx, unsigned i);

/* What a row's function returns when the row cannot run here at all (not an error). */
#define BENCH_SKIP (-2)

static int
bench_fail(const char *routine, unsigned i, int kr)
{
	const char *detail = idl_errdetail();

	fprintf(stderr, "bench-client: %s: call %u: %s (%s)%s%s\n", routine, i, idl_strerror(kr),
		idl_errname(kr), *detail ? ": " : "", detail);
	return -1;
}

static int bench_wrong(const char *routine, unsigned i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
bench_wrong(const char *routine, unsigned i, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench-client: %s: call %u: wrong result: ", routine, i);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int
bench_null_1(struct bench_ctx *ctx, unsigned i)
{
	kern_return_t kr = bench_null(ctx->port);

	return kr ? bench_fail("null", i, kr) : 0;
}

static int
bench_add_1(struct bench_ctx *ctx, unsigned i)
{
	int a = (int)(i * 2654435761u), b = (int)i - 5000, sum = 0;
	int want = (int)((uint32_t)a + (uint32_t)b);
	kern_return_t kr = bench_add(ctx->port, a, b, &sum);

	if (kr)
		return bench_fail("add", i, kr);
	if (sum != want)
		return bench_wrong("add", i, "%d + %d gave %d, not %d", a, b, sum, want);
	return 0;
}

static int
bench_intrpc_1(struct bench_ctx *ctx, unsigned i)
{
	int y = 0, err = -1;
	kern_return_t kr = bench_intrpc(ctx->port, (int)i, &y, &err);

	if (kr)
		return bench_fail("intrpc", i, kr);
	if (y != (int)i + 1 || err != 0)
		return bench_wrong("intrpc", i, "x = %u gave y = %d, err = %d", i, y, err);
	return 0;
}

static int
bench_bigin_1(struct bench_ctx *ctx, unsigned i)
{
	big_t data;
	kern_return_t kr;

	bench_fill(data, sizeof data, BENCH_SALT_IN);
	kr = bench_bigin(ctx->port, data);
	if (kr == BENCH_KR_BADDATA)
		return bench_wrong("bigin", i, "the server saw other bytes than those sent");
	return kr ? bench_fail("bigin", i, kr) : 0;
}

static int
bench_bigout_1(struct bench_ctx *ctx, unsigned i)
{
	big_t data;
	size_t bad;
	kern_return_t kr;

	memset(data, 0, sizeof data);
	if ((kr = bench_bigout(ctx->port, data)) != 0)
		return bench_fail("bigout", i, kr);
	if ((bad = bench_mismatch(data, sizeof data, BENCH_SALT_OUT)) != sizeof data)
		return bench_wrong("bigout", i, "byte %zu is 0x%02x", bad,
				   (unsigned char)data[bad]);
	return 0;
}

static int
bench_biginout_1(struct bench_ctx *ctx, unsigned i)
{
	big_t data;
	size_t bad;
	kern_return_t kr;

	bench_fill(data, sizeof data, BENCH_SALT_INOUT_IN);
	kr = bench_biginout(ctx->port, data);
	if (kr == BENCH_KR_BADDATA)
		return bench_wrong("biginout", i, "the server saw other bytes than those sent");
	if (kr)
		return bench_fail("biginout", i, kr);
	if ((bad = bench_mismatch(data, sizeof data, BENCH_SALT_INOUT_OUT)) != sizeof data)
		return bench_wrong("biginout", i, "byte %zu is 0x%02x", bad,
				   (unsigned char)data[bad]);
	return 0;
}

static int
bench_echo_1(struct bench_ctx *ctx, unsigned i)
{
	text_t s, r;
	size_t len = i % sizeof(text_t);
	kern_return_t kr;

	memcpy(s, ctx->text, len);
	s[len] = '\0';
	memset(r, 'x', sizeof r);
	if ((kr = bench_echo(ctx->port, s, r)) != 0)
		return bench_fail("echo", i, kr);
	if (memchr(r, '\0', sizeof r) == NULL || strcmp(r, s) != 0)
		return bench_wrong("echo", i, "sent %zu characters, got back %zu", len,
				   strnlen(r, sizeof r));
	return 0;
}

static int
bench_sum_1(struct bench_ctx *ctx, unsigned i)
{
	mach_msg_type_number_t n = i % 1025;
	int64_t total = 0;
	kern_return_t kr = bench_sum(ctx->port, ctx->sum_data, n, &total);

	if (kr)
		return bench_fail("sum", i, kr);
	if (total != ctx->sum_prefix[n])
		return bench_wrong("sum", i, "%u ints gave %lld, not %lld", n, (long long)total,
				   (long long)ctx->sum_prefix[n]);
	return 0;
}

/* Calls ool64k or ool1m; the first call of a round asks the server for its checksum. */
static int
bench_ool_1(struct bench_ctx *ctx, unsigned i, int big)
{
	const char *name = big ? "ool1m" : "ool64k";
	uint32_t n = big ? BENCH_OOL1M_BYTES : BENCH_OOL64K_BYTES;
	uint64_t got;
	int y = 0, err = 0;
	kern_return_t kr;

	kr = big ? bench_ool1m(ctx->port, ctx->ool, n) : bench_ool64k(ctx->port, ctx->ool, n);
	if (i == 0 && (kr == IDL_EMSGSIZE || kr == IDL_ENOTSUP)) {
		snprintf(ctx->skip_why[big], sizeof ctx->skip_why[big], "%s: %s", idl_errname(kr),
			 idl_errdetail());
		return BENCH_SKIP;
	}
	if (kr == BENCH_KR_BADDATA)
		return bench_wrong(name, i, "the server got other than %u bytes", n);
	if (kr)
		return bench_fail(name, i, kr);
	if (i != 0)
		return 0;
	if ((kr = bench_intrpc(ctx->port, BENCH_X_OOLSUM, &y, &err)) != 0)
		return bench_fail("intrpc(oolsum)", i, kr);
	got = (uint64_t)(uint32_t)y | (uint64_t)(uint32_t)err << 32;
	if (got != ctx->ool_sum[big])
		return bench_wrong(name, i, "the server's checksum is %016llx, not %016llx",
				   (unsigned long long)got, (unsigned long long)ctx->ool_sum[big]);
	return 0;
}

static int
bench_ool64k_1(struct bench_ctx *ctx, unsigned i)
{
	return bench_ool_1(ctx, i, 0);
}

static int
bench_ool1m_1(struct bench_ctx *ctx, unsigned i)
{
	return bench_ool_1(ctx, i, 1);
}

static const struct {
	const char *name;
	bench_fn fn;
} bench_rows[] = {
	{ "null", bench_null_1 },   { "add", bench_add_1 },	  { "intrpc", bench_intrpc_1 },
	{ "bigin", bench_bigin_1 }, { "bigout", bench_bigout_1 }, { "biginout", bench_biginout_1 },
	{ "echo", bench_echo_1 },   { "sum", bench_sum_1 },	  { "ool64k", bench_ool64k_1 },
	{ "ool1m", bench_ool1m_1 },
};
#define BENCH_NROWS (sizeof bench_rows / sizeof bench_rows[0])

static double
bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The notification count and value sum the server reports. */
static int
bench_notified(struct bench_ctx *ctx, uint32_t *count, uint32_t *sum)
{
	int y = 0, err = 0;
	kern_return_t kr = bench_intrpc(ctx->port, BENCH_X_NOTIFIED, &y, &err);

	if (kr)
		return bench_fail("intrpc(notified)", 0, kr);
	*count = (uint32_t)y;
	*sum = (uint32_t)err;
	return 0;
}

/* Sends n notifications; returns the rate in messages per second, or -1. */
static double
bench_notify_round(struct bench_ctx *ctx, unsigned n)
{
	uint32_t c0 = 0, s0 = 0, c1 = 0, s1 = 0, want_sum = 0;
	double t0, t1;
	kern_return_t kr;

	if (bench_notified(ctx, &c0, &s0) != 0)
		return -1;
	t0 = bench_now_us();
	for (unsigned i = 0; i < n; i++) {
		if ((kr = bench_notify(ctx->port, (int)i)) != 0)
			return bench_fail("notify", i, kr);
		want_sum += i;
	}
	/* The reply to this call comes after the server has taken every notification. */
	if (bench_notified(ctx, &c1, &s1) != 0)
		return -1;
	t1 = bench_now_us();
	/* Another client may notify too, so more is allowed; fewer means messages were lost. */
	if (c1 - c0 < n)
		return bench_wrong("notify", n, "the server counted %u of %u notifications",
				   c1 - c0, n);
	if (c1 - c0 == n && s1 - s0 != want_sum)
		return bench_wrong("notify", n, "the values add up to %u, not %u", s1 - s0,
				   want_sum);
	return t1 > t0 ? n / ((t1 - t0) / 1e6) : 0;
}

/* Checks that a server's own error codes and in-band errors reach the client intact. */
static int
bench_check_errors(struct bench_ctx *ctx)
{
	int y = 0, err = 0;
	kern_return_t kr;

	kr = bench_intrpc(ctx->port, BENCH_X_FAIL, &y, &err);
	if (kr != BENCH_KR_FAIL)
		return bench_wrong("intrpc", 0, "the server's code %d arrived as %d (%s)",
				   BENCH_KR_FAIL, kr, idl_errname(kr));
	kr = bench_intrpc(ctx->port, BENCH_X_INBAND, &y, &err);
	if (kr)
		return bench_fail("intrpc", 0, kr);
	if (y != BENCH_X_INBAND + 1 || err != BENCH_ERR_INBAND)
		return bench_wrong("intrpc", 0, "in-band error: y = %d, err = %d", y, err);
	return 0;
}

static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v and returns its median. */
static double
bench_median(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, bench_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
bench_init(struct bench_ctx *ctx)
{
	ctx->sum_prefix[0] = 0;
	for (unsigned j = 0; j < 1024; j++) {
		ctx->sum_data[j] = (int)(j * 2654435761u) / 4;
		ctx->sum_prefix[j + 1] = ctx->sum_prefix[j] + ctx->sum_data[j];
	}
	bench_fill(ctx->text, sizeof ctx->text - 1, BENCH_SALT_IN);
	ctx->text[sizeof ctx->text - 1] = '\0';
}

static unsigned
bench_arg(const char *s, const char *what, unsigned max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "bench-client: %s wants a number from 1 to %u\n", what, max);
		exit(2);
	}
	return (unsigned)v;
}

static int
bench_run(struct bench_ctx *ctx, unsigned n, unsigned rounds)
{
	double *us = calloc((size_t)(BENCH_NROWS + 1) * rounds, sizeof *us);
	double *rate = us + (size_t)BENCH_NROWS * rounds;
	double t0;

	if (us == NULL) {
		fprintf(stderr, "bench-client: out of memory\n");
		return -1;
	}
	int skipped[BENCH_NROWS] = { 0 };

	for (unsigned r = 0; r < rounds; r++) {
		for (size_t row = 0; row < BENCH_NROWS; row++) {
			int rc = 0;

			if (skipped[row])
				continue;
			t0 = bench_now_us();
			for (unsigned i = 0; i < n && rc == 0; i++)
				rc = bench_rows[row].fn(ctx, i);
			if (rc == BENCH_SKIP)
				skipped[row] = 1;
			else if (rc != 0)
				goto fail;
			us[row * rounds + r] = (bench_now_us() - t0) / n;
		}
		if ((rate[r] = bench_notify_round(ctx, n)) < 0)
			goto fail;
	}

	printf("%-18s %12s %12s %12s\n", "routine", "median us", "min us", "max us");
	printf("%-18s %12s %12s %12s\n", "------------------", "------------", "------------",
	       "------------");
	for (size_t row = 0; row < BENCH_NROWS; row++) {
		double *v = us + row * rounds;
		double med;

		if (skipped[row]) {
			printf("%-18s skipped: %s\n", bench_rows[row].name,
			       ctx->skip_why[bench_rows[row].fn == bench_ool1m_1]);
			continue;
		}
		med = bench_median(v, rounds);
		printf("%-18s %12.3f %12.3f %12.3f\n", bench_rows[row].name, med, v[0],
		       v[rounds - 1]);
	}
	{
		double med = bench_median(rate, rounds);

		printf("\n%-18s %12s %12s %12s\n", "one-way", "median msg/s", "min msg/s",
		       "max msg/s");
		printf("%-18s %12.0f %12.0f %12.0f\n", "notify", med, rate[0], rate[rounds - 1]);
	}
	free(us);
	return 0;

fail:
	free(us);
	return -1;
}

int
main(int argc, char **argv)
{
	static struct bench_ctx ctx;
	unsigned n = 1000, rounds = 5;
	int opt, err, rc;

	while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
		switch (opt) {
		case 'n':
			n = bench_arg(optarg, "-n", 10000000);
			break;
		case 'r':
			rounds = bench_arg(optarg, "-r", 1000);
			break;
		default:
			fprintf(stderr, "usage: bench-client [-n CALLS] [-r ROUNDS] ADDRESS\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: bench-client [-n CALLS] [-r ROUNDS] ADDRESS\n");
		return 2;
	}

	bench_init(&ctx);
	if ((err = idl_port_open(argv[optind], &ctx.port)) != 0) {
		fprintf(stderr, "bench-client: %s\n", idl_errmsg(err, argv[optind]));
		return 1;
	}
	/* Memory the transport can send without a copy where it allows (shm:). */
	if ((ctx.ool = idl_ool_alloc_port(ctx.port, BENCH_OOL1M_BYTES)) == NULL) {
		fprintf(stderr, "bench-client: out of memory\n");
		idl_port_close(ctx.port);
		return 1;
	}
	bench_fill(ctx.ool, BENCH_OOL1M_BYTES, BENCH_SALT_OOL);
	ctx.ool_sum[0] = bench_ool_sum(ctx.ool, BENCH_OOL64K_BYTES);
	ctx.ool_sum[1] = bench_ool_sum(ctx.ool, BENCH_OOL1M_BYTES);
	printf("bench-client: %s, %u calls per routine, %u rounds, idlkit %s\n\n", argv[optind], n,
	       rounds, idl_version());
	rc = bench_check_errors(&ctx) == 0 && bench_run(&ctx, n, rounds) == 0 ? 0 : 1;
	idl_ool_free(ctx.ool, BENCH_OOL1M_BYTES);
	idl_port_close(ctx.port);
	return rc;
}
