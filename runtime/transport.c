/*
 * transport.c - the registry of transports, looked up by the scheme of an address; what the
 * transport contract gives every transport (the release of a sent message's descriptors,
 * the clock every deadline is measured on, zeroed aligned memory, the small futex lock and
 * the environment knobs' parser).
 */
#include <config.h>

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

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

static void
tr_builtins(void)
{
#if HAVE_TRANSPORT_UNIX
	idl__unix_register();
#endif
#if HAVE_TRANSPORT_TCP
	idl__tcp_register();
#endif
#if HAVE_TRANSPORT_UDP
	idl__udp_register();
#endif
#if HAVE_TRANSPORT_SHM
	idl__shm_register();
#endif
#if HAVE_TRANSPORT_PORT
	idl__port_register();
#endif
#if HAVE_TRANSPORT_TLS
	idl__tls_register();
#endif
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

	pthread_once(&tr_once, tr_builtins);
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
	pthread_once(&tr_once, tr_builtins);
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

void
idl_msg_release_sent(const idl_msg_header_t *msg)
{
	idl__msg_release_sent(msg);
}

int64_t
idl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
idl_deadline_ms(int ms)
{
	int64_t now;

	if (ms < 0)
		return IDL_DEADLINE_NONE;
	now = idl_now_ns();
	/* An int of milliseconds is at most ~2.1e15 ns: only a clock near INT64_MAX could
	 * overflow, but saturate anyway rather than wrap. */
	if (now > IDL_DEADLINE_NONE - (int64_t)ms * 1000000)
		return IDL_DEADLINE_NONE;
	return now + (int64_t)ms * 1000000;
}

void
idl__lock_wait(struct idl__lock *l)
{
	/* Marked as slept on (2) before sleeping, so that the holder's release wakes us; the
	 * exchange that takes it leaves it marked, since others may sleep too. */
	while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
		(void)idl__sys_futex((uint32_t *)&l->word, FUTEX_WAIT_PRIVATE, 2, NULL);
}

void
idl__lock_wake(struct idl__lock *l)
{
	(void)idl__sys_futex((uint32_t *)&l->word, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void *
idl__zalloc(size_t size)
{
	void *p;

	if (size == 0)
		size = 16;
	if (posix_memalign(&p, 16, size) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

int64_t
idl__env_int(const char *name, int64_t dflt, int64_t min, int64_t max)
{
	const char *s = getenv(name);
	char *end;
	long long v;

	/* Digits, and a minus sign only where a negative value is allowed ("-0" is not 0). */
	if (s == NULL || (*s == '-' ? min >= 0 : (*s < '0' || *s > '9')))
		return dflt;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return dflt;
	return v;
}

const char *
idl_version(void)
{
	return PACKAGE_VERSION;
}
