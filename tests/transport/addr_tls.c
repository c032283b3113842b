/*
 * addr_tls.c - the conformance row of tls: a free loopback port as tcp:'s, and the
 * certificates the suite's processes use (tests/lib/tls_certs.c: tests/tls/certs.sh's, in the
 * suite's private directory, named by the IDL_TLS_* variables), which the bench-server and
 * oolt-server the suite starts inherit: every case runs with mutual authentication, one
 * certificate for either side ("peer", both uses) issued by the test CA. The frames the test
 * writes itself go inside TLS sessions of its own (wire_tls.c).
 */
#include <config.h>

#include <stdio.h>

#include "conformance.h"
#include "tls_certs.h"

static int
tt_tls_address(const char *dir, char *buf, size_t len)
{
	int port, n;

	if (test_tls_certs(dir) != 0 || (port = tt_inet_bind(0)) <= 0)
		return -1;
	n = snprintf(buf, len, "tls:127.0.0.1:%d", port);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* As tcp:'s: a killed server leaves nothing a new one cannot take over. */
const struct tt_scheme tt_scheme_tls = {
	"tls", tt_tls_address, NULL, tt_inet_left_nothing, &tt_tls_wire,
};
