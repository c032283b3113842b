/*
 * oolt_util.h - what the server of oolt.defs (tests/ool/server.c) and its callers in the
 * conformance suite (tests/transport/t_oolt.c) agree on beyond the interface.
 */
#ifndef OOLT_UTIL_H
#define OOLT_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Where memory lies, by the name of its mapping (what `where` answers). */
#define OOLT_IN_SHM 1 /* the shm: connection's region (memfd:idlkit-shm) */
#define OOLT_IN_MEMFD 2 /* a memfd the unix: transport passed (memfd:idlkit-ool) */
#define OOLT_IN_PRIVATE 3 /* the process's own memory */
#define OOLT_IN_NONE 0 /* not mapped at all */

/* The largest `source` serves. */
#define OOLT_SOURCE_MAX (16 << 20)

/* One range of `ranges` (oolt.defs: array[2] of uint64_t), and the array of them. */
typedef struct {
	uint64_t start;
	uint64_t end;
} oolt_range_t;
typedef oolt_range_t *oolt_ranges_t;

static inline char
oolt_pattern(size_t i, int salt)
{
	return (char)(i * 131u + (unsigned)salt * 7u + (i >> 12));
}

/* The sum of the 64-bit words of data (the last zero-padded) plus its length. */
static inline int64_t
oolt_sum(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t sum = n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		sum += w;
	}
	if (i < n) {
		w = 0;
		memcpy(&w, p + i, n - i);
		sum += w;
	}
	return (int64_t)sum;
}

/* Where addr lies in this process, from /proc/self/maps. */
static inline int
oolt_place(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	int place = OOLT_IN_NONE;
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || a < lo || a >= hi)
			continue;
		place = strstr(line, "memfd:idlkit-shm") != NULL   ? OOLT_IN_SHM
			: strstr(line, "memfd:idlkit-ool") != NULL ? OOLT_IN_MEMFD
								   : OOLT_IN_PRIVATE;
		break;
	}
	fclose(f);
	return place;
}

#endif /* OOLT_UTIL_H */
