/*
 * xdemux.h - what the parts of the xdemux test share: its failure count and check, and the
 * cases kept in xdemux_odd.c.
 */
#ifndef IDL_TESTS_XDEMUX_H
#define IDL_TESTS_XDEMUX_H

#include <stdio.h>

/* Failed checks so far; main() exits 1 when there is any. */
extern unsigned xd_failures;

/* Counts and reports a failed check, naming the file and line. */
#define XD_CHECK(cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                 \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			xd_failures++;                                                             \
		}                                                                                  \
	} while (0)

/* Hand-written descriptors the interpreter must refuse or serve with care, and trace lines
 * of arguments named as the header's fields. */
void xd_odd_descriptors(void);
/* A hundred dynamic interfaces served at once. */
void xd_many_servers(void);

#endif /* IDL_TESTS_XDEMUX_H */
