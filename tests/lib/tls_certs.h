/*
 * tls_certs.h - the tls: certificates of a test that runs servers over tls: (the conformance
 * suite's row, the harden suite), made by tests/tls/certs.sh.
 */
#ifndef IDL_TESTS_TLS_CERTS_H
#define IDL_TESTS_TLS_CERTS_H

/* Makes the certificates in dir (once: the files of an earlier call stay) and names one
 * for either side ("peer", both uses) and the test CA in IDL_TLS_CERT, IDL_TLS_KEY and
 * IDL_TLS_CA, which the servers the test starts inherit: every connection is mutually
 * authenticated. 0, or -1 (said on standard error) when they cannot be made. */
int test_tls_certs(const char *dir);

#endif
