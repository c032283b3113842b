/*
 * floor_tlscert.c - throwaway certificates, so that `idlbench --quick` times tls: with no
 * set-up: when the IDL_TLS_* variables name none, idlbench makes a CA and one certificate
 * it issues (both uses, for 127.0.0.1, ::1 and localhost), ECDSA P-256 as the tests' are,
 * with OpenSSL's API in this process, writes them into the run's private directory (0700; the
 * key 0600 from its creation) and names them in IDL_TLS_CERT, IDL_TLS_KEY and IDL_TLS_CA,
 * which every cell's processes inherit: idlkit's servers and clients, and the floor's. The
 * directory goes when the run ends. The CA's key is never written: nothing else can be
 * issued with it.
 *
 * Layer 1, the floors (ib_floor.h): it knows the base; it must not know rows, columns, cells,
 * runs or reports.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "ib_floor.h"

/* Adds extension nid with value v, as the openssl command's configuration would say it. */
static int
fc_ext(X509 *x, X509 *issuer, int nid, const char *v)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if ((e = X509V3_EXT_conf_nid(NULL, &ctx, nid, v)) == NULL)
		return -1;
	ok = X509_add_ext(x, e, -1) == 1;
	X509_EXTENSION_free(e);
	return ok ? 0 : -1;
}

/* A certificate for key, named cn, valid from an hour ago for a week, signed by ca_key (its
 * own key when issuer is NULL: self-signed). */
static X509 *
fc_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *ca_key, long serial)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	int ok;

	ok = x != NULL && name != NULL && X509_set_version(x, 2) == 1 &&
	     ASN1_INTEGER_set(X509_get_serialNumber(x), serial) == 1 &&
	     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
					0) == 1 &&
	     X509_set_subject_name(x, name) == 1 &&
	     X509_set_issuer_name(x, issuer != NULL ? X509_get_subject_name(issuer) : name) == 1 &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) != NULL &&
	     X509_gmtime_adj(X509_getm_notAfter(x), 7 * 86400) != NULL &&
	     X509_set_pubkey(x, key) == 1;
	if (ok && issuer == NULL)
		ok = fc_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") == 0 &&
		     fc_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") == 0 &&
		     fc_ext(x, x, NID_subject_key_identifier, "hash") == 0;
	else if (ok)
		ok = fc_ext(x, issuer, NID_basic_constraints, "CA:FALSE") == 0 &&
		     fc_ext(x, issuer, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1") ==
			     0 &&
		     fc_ext(x, issuer, NID_ext_key_usage, "serverAuth,clientAuth") == 0 &&
		     fc_ext(x, issuer, NID_authority_key_identifier, "keyid") == 0;
	ok = ok && X509_sign(x, ca_key, EVP_sha256()) > 0;
	X509_NAME_free(name);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Writes a certificate (mode 0644) or a key (0600, from its creation) to dir/name. */
static int
fc_write(const char *dir, const char *name, X509 *x, EVP_PKEY *key)
{
	char path[512];
	FILE *f;
	int fd, ok;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, key != NULL ? 0600 : 0644);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ok = key != NULL ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1
			 : PEM_write_X509(f, x) == 1;
	ok = fclose(f) == 0 && ok;
	return ok ? 0 : -1;
}

int
fl_tls_certs(const char *dir, char *why, size_t len)
{
	EVP_PKEY *ca_key = EVP_EC_gen("P-256"), *key = EVP_EC_gen("P-256");
	X509 *ca = NULL, *leaf = NULL;
	char path[512];
	int r = -1;

	if (ca_key != NULL && key != NULL &&
	    (ca = fc_cert(ca_key, "idlbench throwaway CA", NULL, ca_key, 1)) != NULL &&
	    (leaf = fc_cert(key, "localhost", ca, ca_key, 2)) != NULL &&
	    fc_write(dir, "tls-ca.crt", ca, NULL) == 0 &&
	    fc_write(dir, "tls.crt", leaf, NULL) == 0 && fc_write(dir, "tls.key", NULL, key) == 0)
		r = 0;
	if (r == 0) {
		snprintf(path, sizeof path, "%s/tls.crt", dir);
		setenv("IDL_TLS_CERT", path, 1);
		snprintf(path, sizeof path, "%s/tls.key", dir);
		setenv("IDL_TLS_KEY", path, 1);
		snprintf(path, sizeof path, "%s/tls-ca.crt", dir);
		setenv("IDL_TLS_CA", path, 1);
	} else {
		unsigned long e = ERR_peek_last_error();

		const char *what = e != 0 ? ERR_reason_error_string(e) : NULL;

		snprintf(why, len, "throwaway certificates in %s: %s", dir,
			 what != NULL ? what : strerror(errno));
	}
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(key);
	return r;
}
