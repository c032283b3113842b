/*
 * registry.c - the registry of transports, looked up by the scheme of an address, and the
 * transports' ool_free ops, which idl_ool_free() asks first.
 *
 * The built-in transports are registered by runtime/builtins.c (idl__builtins()), the one
 * file of the library that calls upward, once before the first lookup. The registry knows
 * nothing of the client, the server or any transport: it holds tables of
 * <idl/idl_transport.h> and reads each optional op through IDL__TR_OP.
 */
#include <config.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/core.h"

#define TR_MAX 16
/* The size of the first version of struct idl_transport: it ends with ool_free. A table may
 * be longer (compiled with a later header: the ops this runtime does not know are not
 * called), never shorter. */
#define TR_SIZE_V1 (offsetof(struct idl_transport, ool_free) + sizeof(int (*)(void *, size_t)))

static pthread_mutex_t tr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t tr_once = PTHREAD_ONCE_INIT;
static const struct idl_transport *tr_table[TR_MAX];
static unsigned tr_count;
/* The ool_free ops of the registered transports: read without the lock by idl_ool_free(),
 * so entries are published with release after they are written, and never change. */
static int (*tr_ool_free[TR_MAX])(void *addr, size_t size);
static atomic_uint tr_ool_count;

void
idl__registry_ready(void)
{
	pthread_once(&tr_once, idl__builtins);
}

/* A table is complete when it has every op the core calls unconditionally, and one of the
 * two ways for a server to receive. The required ops are all in the first version. */
static int
tr_complete(const struct idl_transport *t)
{
	if (t->scheme == NULL || t->scheme[0] == '\0' || strchr(t->scheme, ':') != NULL)
		return 0;
	if (t->ep_listen == NULL || t->ep_close == NULL || t->ep_fini == NULL)
		return 0;
	if (t->conn_connect == NULL || t->conn_send == NULL || t->conn_recv == NULL ||
	    t->conn_close == NULL || t->conn_fini == NULL)
		return 0;
	if (IDL__TR_OP(t, ep_accept) != NULL)
		return IDL__TR_OP(t, ep_fd) != NULL;
	return IDL__TR_OP(t, ep_recv) != NULL && IDL__TR_OP(t, ep_reply) != NULL;
}

int
idl_transport_register(const struct idl_transport *t)
{
	int (*init)(void);
	int err = 0;

	idl__clear_detail();
	if (t == NULL)
		return idl__fail(IDL_EINVAL, "transport (null): no table");
	/* The version first: nothing else of a table of another version can be trusted to be
	 * where this header says, the scheme included. */
	if (t->abi != IDL_TRANSPORT_ABI)
		return idl__fail(IDL_EINVAL,
				 "transport table of contract version %u: this libidlrt knows "
				 "version %u (IDL_TRANSPORT_ABI; write the table with "
				 "IDL_TRANSPORT_INIT)",
				 t->abi, IDL_TRANSPORT_ABI);
	if (t->size < TR_SIZE_V1)
		return idl__fail(IDL_EINVAL,
				 "transport table of %zu bytes: the first version's is %zu "
				 "(size must be sizeof(struct idl_transport); write it with "
				 "IDL_TRANSPORT_INIT)",
				 t->size, (size_t)TR_SIZE_V1);
	if (!tr_complete(t)) {
		return idl__fail(IDL_EINVAL, "transport %s: table lacks a required op",
				 t->scheme != NULL ? t->scheme : "(null)");
	}
	pthread_mutex_lock(&tr_lock);
	for (unsigned i = 0; i < tr_count; i++) {
		if (strcmp(tr_table[i]->scheme, t->scheme) == 0) {
			err = idl__fail(IDL_EBUSY, "transport %s: scheme already registered",
					t->scheme);
			goto out;
		}
	}
	if (tr_count == TR_MAX) {
		err = idl__fail(IDL_ELIMIT, "transport %s: registry full", t->scheme);
		goto out;
	}
	if ((init = IDL__TR_OP(t, tr_init)) != NULL && (err = init()) != 0)
		goto out;
	tr_table[tr_count++] = t;
	if (IDL__TR_OP(t, ool_free) != NULL) {
		unsigned n = atomic_load_explicit(&tr_ool_count, memory_order_relaxed);

		tr_ool_free[n] = IDL__TR_OP(t, ool_free);
		atomic_store_explicit(&tr_ool_count, n + 1, memory_order_release);
	}
out:
	pthread_mutex_unlock(&tr_lock);
	return err;
}

const struct idl_transport *
idl_transport_find(const char *address, const char **rest)
{
	const struct idl_transport *found = NULL;
	const char *colon;
	size_t n;

	idl__registry_ready();
	if (address == NULL || (colon = strchr(address, ':')) == NULL)
		return NULL;
	n = (size_t)(colon - address);
	pthread_mutex_lock(&tr_lock);
	for (unsigned i = 0; i < tr_count; i++) {
		if (strncmp(tr_table[i]->scheme, address, n) == 0 &&
		    tr_table[i]->scheme[n] == '\0') {
			found = tr_table[i];
			break;
		}
	}
	pthread_mutex_unlock(&tr_lock);
	if (found != NULL && rest != NULL)
		*rest = colon + 1;
	return found;
}

void
idl_transport_foreach(void (*fn)(const struct idl_transport *t, void *arg), void *arg)
{
	const struct idl_transport *copy[TR_MAX];
	unsigned n;

	/* Call outside the lock, so that fn may itself use the registry. */
	idl__registry_ready();
	pthread_mutex_lock(&tr_lock);
	n = tr_count;
	memcpy(copy, tr_table, n * sizeof copy[0]);
	pthread_mutex_unlock(&tr_lock);
	for (unsigned i = 0; i < n; i++)
		fn(copy[i], arg);
}

int
idl__transport_ool_free(void *addr, size_t size)
{
	unsigned n = atomic_load_explicit(&tr_ool_count, memory_order_acquire);

	for (unsigned i = 0; i < n; i++)
		if (tr_ool_free[i](addr, size))
			return 1;
	return 0;
}
