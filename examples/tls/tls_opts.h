/*
 * tls_opts.h - what both programs of the tls: example do with their command line (tls_opts.c).
 */
#ifndef TLS_OPTS_H
#define TLS_OPTS_H

#include <idl/idl.h>

/*
 * Reads "[-c CERT -k KEY] [-a CA] [-X VALUE] ADDRESS", X being the program's own option
 * letter `extra` (its value in *extra_val, left alone when not given): the certificate, key
 * and CA make a configuration (*cfgp, NULL when none was given). 0, or the exit status after
 * saying what was wrong (usage: 2).
 */
int tls_opts(int argc, char **argv, const char *usage, int extra, const char **extra_val,
	     idl_config_t **cfgp, const char **address);
/* Says what failed on standard error; returns 1, the exit status. */
int tls_fail(const char *prog, const char *what, int err);

#endif
