/*
 * procdump.h - what a test prints about a process that did not end when it was told to:
 * where each of its threads waits, as the kernel says (no debugger needed), so that a
 * failure in CI says why.
 */
#ifndef IDL_TESTS_PROCDUMP_H
#define IDL_TESTS_PROCDUMP_H

#include <stdio.h>
#include <sys/types.h>

/* Writes one line per thread of pid to out: its id, name, kernel wait channel and the
 * system call it is in (number and arguments, from /proc). Nothing when pid is gone. */
void procdump_threads(pid_t pid, FILE *out);

#endif /* IDL_TESTS_PROCDUMP_H */
