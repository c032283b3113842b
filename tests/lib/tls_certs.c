/*
 * tls_certs.c - a test's tls: certificates (tls_certs.h). tests/tls/certs.sh is found by
 * $IDL_TOP_SRCDIR (make check), else by the source tree the test was built from.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tls_certs.h"

int
test_tls_certs(const char *dir)
{
	const char *src = getenv("IDL_TOP_SRCDIR");
	char cmd[1024], path[512];
	struct stat st;
	int rc;

	snprintf(path, sizeof path, "%s/peer.key", dir);
	if (stat(path, &st) != 0) {
		snprintf(cmd, sizeof cmd, "sh '%s/tests/tls/certs.sh' '%s' >/dev/null",
			 src != NULL ? src : IDL_TOP_SRCDIR_DEFAULT, dir);
		if ((rc = system(cmd)) != 0) {
			fprintf(stderr, "tls certificates: certs.sh failed (status %d)\n", rc);
			return -1;
		}
	}
	snprintf(path, sizeof path, "%s/peer.crt", dir);
	setenv("IDL_TLS_CERT", path, 1);
	snprintf(path, sizeof path, "%s/peer.key", dir);
	setenv("IDL_TLS_KEY", path, 1);
	snprintf(path, sizeof path, "%s/ca.crt", dir);
	setenv("IDL_TLS_CA", path, 1);
	return 0;
}
