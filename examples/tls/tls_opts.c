/*
 * tls_opts.c - the tls: example's command line (tls_opts.h): files become a configuration
 * object with the idl_tls_config_* setters, as a program with several identities makes one.
 */
#include <stdio.h>
#include <unistd.h>

#include "tls_opts.h"

int
tls_fail(const char *prog, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s (%s): %s\n", prog, what, idl_strerror(err), idl_errname(err),
		idl_errdetail());
	return 1;
}

int
tls_opts(int argc, char **argv, const char *usage, int extra, const char **extra_val,
	 idl_config_t **cfgp, const char **address)
{
	const char *cert = NULL, *key = NULL, *ca = NULL;
	char letters[] = "c:k:a:X:";
	int opt, err = 0;

	letters[6] = (char)extra;
	*cfgp = NULL;
	while ((opt = getopt(argc, argv, letters)) != -1) {
		if (opt == 'c')
			cert = optarg;
		else if (opt == 'k')
			key = optarg;
		else if (opt == 'a')
			ca = optarg;
		else if (opt == extra)
			*extra_val = optarg;
		else
			break;
	}
	if (opt != -1 || optind != argc - 1 || (cert == NULL) != (key == NULL)) {
		fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	*address = argv[optind];
	if (cert == NULL && ca == NULL)
		return 0;
	if ((err = idl_tls_config_create(cfgp)) == 0 && cert != NULL)
		err = idl_tls_config_set_cert(*cfgp, cert, key);
	if (err == 0 && ca != NULL)
		err = idl_tls_config_set_ca(*cfgp, ca);
	if (err != 0) {
		idl_config_free(*cfgp);
		*cfgp = NULL;
		return tls_fail(argv[0], "configuration", err);
	}
	return 0;
}
