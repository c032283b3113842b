/*
 * t_ool.c - bench.defs's out-of-line routines over the transport: ool64k and ool1m arrive
 * whole (the server's checksum says so) from the runtime's memory and from a caller's own,
 * a wrong size is the server's error, udp: refuses what no datagram carries with an error
 * naming both sizes, and many calls leave no file descriptor or mapping behind.
 *
 * A server that does not carry out-of-line data at all (the dynamic server, which answers
 * IDL_ENOTSUP) is tested with IDL_CONF_NO_OOL=1 in the environment: these cases then say
 * that they are skipped, and why. Nothing else skips them.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <idl/idl_ool.h>

#include "bench_types.h"
#include "bench.h"
#include "bench_impl.h"
#include "conformance.h"

#define TT_OOL_CALLS 50
#define TT_OOL_LEAK_CALLS 300

/* Whether the run said the server carries no out-of-line data; says so when it did. */
static int
tt_ool_skipped(const char *what)
{
	const char *v = getenv("IDL_CONF_NO_OOL");

	if (v == NULL || strcmp(v, "1") != 0)
		return 0;
	fprintf(stderr,
		"conformance: %s: %s: skipped (IDL_CONF_NO_OOL=1: the server carries "
		"no out-of-line data)\n",
		tt.tr->scheme, what);
	return 1;
}

static int
tt_is_udp(void)
{
	return strcmp(tt.tr->scheme, "udp") == 0;
}

/* The server's checksum of the data the last ool64k or ool1m took. */
static uint64_t
tt_ool_server_sum(idl_port_t port)
{
	int y = 0, err = 0;

	TT_CHECK_KR(bench_intrpc(port, BENCH_X_OOLSUM, &y, &err), 0);
	return (uint64_t)(uint32_t)y | (uint64_t)(uint32_t)err << 32;
}

/* Open descriptors and mappings of this process. */
void
tt_ool_census(int *fds, int *maps)
{
	DIR *d = opendir("/proc/self/fd");
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	*fds = *maps = 0;
	if (d != NULL) {
		for (struct dirent *e; (e = readdir(d)) != NULL;)
			if (e->d_name[0] != '.')
				(*fds)++;
		closedir(d);
	}
	if (f != NULL) {
		while (fgets(line, sizeof line, f) != NULL)
			(*maps)++;
		fclose(f);
	}
}

static void
tt_ool_calls(void)
{
	idl_port_t port;
	char *mem, *heap;
	uint64_t sum64, sum1m;

	if (tt_ool_skipped("out-of-line calls") || (port = tt_open()) == NULL)
		return;
	mem = idl_ool_alloc_port(port, BENCH_OOL1M_BYTES);
	heap = malloc(BENCH_OOL1M_BYTES);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
	CU_ASSERT_PTR_NOT_NULL_FATAL(heap);
	bench_fill(mem, BENCH_OOL1M_BYTES, BENCH_SALT_OOL);
	bench_fill(heap, BENCH_OOL1M_BYTES, BENCH_SALT_IN);
	sum64 = bench_ool_sum(mem, BENCH_OOL64K_BYTES);
	sum1m = bench_ool_sum(mem, BENCH_OOL1M_BYTES);

	if (tt_is_udp()) {
		/* No datagram carries 64 KiB and its header: the error names both sizes. */
		char want[64];

		TT_CHECK_KR(bench_ool64k(port, mem, BENCH_OOL64K_BYTES), IDL_EMSGSIZE);
		snprintf(want, sizeof want, "%u bytes", BENCH_OOL64K_BYTES + 40);
		CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), want));
		CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "datagram limit of 65507 bytes"));
		TT_CHECK_KR(bench_ool1m(port, mem, BENCH_OOL1M_BYTES), IDL_EMSGSIZE);
		CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "datagram limit"));
		/* What fits a datagram goes: the server sees 100 bytes, not its 64 KiB. */
		TT_CHECK_KR(bench_ool64k(port, mem, 100), BENCH_KR_BADDATA);
		/* The port still works after each refusal. */
		TT_CHECK_KR(bench_null(port), 0);
		goto out;
	}
	for (int i = 0; i < TT_OOL_CALLS; i++) {
		TT_CHECK_KR(bench_ool64k(port, mem, BENCH_OOL64K_BYTES), 0);
		if (i % 10 == 0)
			CU_ASSERT_EQUAL(tt_ool_server_sum(port), sum64);
		TT_CHECK_KR(bench_ool1m(port, mem, BENCH_OOL1M_BYTES), 0);
		if (i % 10 == 0)
			CU_ASSERT_EQUAL(tt_ool_server_sum(port), sum1m);
	}
	/* A caller's own buffer (copied once where the transport shares memory). */
	TT_CHECK_KR(bench_ool1m(port, heap, BENCH_OOL1M_BYTES), 0);
	CU_ASSERT_EQUAL(tt_ool_server_sum(port), bench_ool_sum(heap, BENCH_OOL1M_BYTES));
	TT_CHECK_KR(bench_ool64k(port, heap + 1, BENCH_OOL64K_BYTES), 0);
	CU_ASSERT_EQUAL(tt_ool_server_sum(port), bench_ool_sum(heap + 1, BENCH_OOL64K_BYTES));
	/* The wrong size is the server's error; the runtime frees what the routine refused. */
	TT_CHECK_KR(bench_ool64k(port, mem, BENCH_OOL64K_BYTES - 8), BENCH_KR_BADDATA);
	TT_CHECK_KR(bench_ool1m(port, mem, 3), BENCH_KR_BADDATA);
	TT_CHECK_KR(bench_ool1m(port, mem, 0), BENCH_KR_BADDATA);
	/* The caller's data is still the caller's (no dealloc). */
	CU_ASSERT_EQUAL(bench_ool_sum(mem, BENCH_OOL1M_BYTES), sum1m);
out:
	idl_ool_free(mem, BENCH_OOL1M_BYTES);
	free(heap);
	idl_port_close(port);
}

/* Many calls, then the same descriptors and mappings as before them, here. (The server's
 * side is counted by t_oolt.c, whose server can say.) */
static void
tt_ool_leaks(void)
{
	int fds0, maps0, fds1, maps1;
	idl_port_t port;
	char *mem;

	if (tt_ool_skipped("out-of-line leaks") || tt_is_udp() || (port = tt_open()) == NULL)
		return;
	mem = idl_ool_alloc_port(port, BENCH_OOL1M_BYTES);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
	memset(mem, 'L', BENCH_OOL1M_BYTES);
	/* One of each first: whatever the runtime keeps for a connection is made now. */
	TT_CHECK_KR(bench_ool64k(port, mem, BENCH_OOL64K_BYTES), 0);
	TT_CHECK_KR(bench_ool1m(port, mem, BENCH_OOL1M_BYTES), 0);
	tt_ool_census(&fds0, &maps0);
	for (int i = 0; i < TT_OOL_LEAK_CALLS; i++) {
		TT_CHECK_KR(bench_ool64k(port, mem, BENCH_OOL64K_BYTES), 0);
		if (i % 10 == 0) {
			TT_CHECK_KR(bench_ool1m(port, mem, BENCH_OOL1M_BYTES), 0);
			TT_CHECK_KR(bench_ool64k(port, mem, 5), BENCH_KR_BADDATA);
		}
	}
	tt_ool_census(&fds1, &maps1);
	CU_ASSERT_EQUAL(fds1, fds0);
	CU_ASSERT_EQUAL(maps1, maps0);
	if (fds1 != fds0 || maps1 != maps0)
		fprintf(stderr,
			"conformance: %s: after %d calls: %d fds (%d before), %d "
			"mappings (%d before)\n",
			tt.tr->scheme, TT_OOL_LEAK_CALLS, fds1, fds0, maps1, maps0);
	idl_ool_free(mem, BENCH_OOL1M_BYTES);
	idl_port_close(port);
}

const struct tt_case tt_ool_cases[] = {
	{ "out-of-line calls", tt_ool_calls },
	{ "out-of-line leaks", tt_ool_leaks },
	{ NULL, NULL },
};
