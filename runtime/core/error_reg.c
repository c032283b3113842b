/*
 * error_reg.c - the names programs register for their servers' own (positive) return codes
 * (idl_error_register(), <idl/idl_error.h>), and their lookup for idl_errname() and
 * idl_strerror().
 *
 * Registered tables form a list that only grows: a registration links a new node at the head
 * with a release store, under a lock that orders registrations; a lookup walks from an
 * acquire load of the head without a lock, so naming a code never waits for a registration.
 * Nodes are never freed (the tables they point at are the program's, for its whole life).
 *
 * Core: it knows nothing of any other room.
 */
#include <config.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

struct reg_table {
	const struct idl_errdef *defs;
	unsigned n;
	struct reg_table *next;
};

static _Atomic(struct reg_table *) reg_head;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

const struct idl_errdef *
idl__error_lookup(int code)
{
	for (struct reg_table *t = atomic_load_explicit(&reg_head, memory_order_acquire); t != NULL;
	     t = t->next)
		for (unsigned i = 0; i < t->n; i++)
			if (t->defs[i].code == code)
				return &t->defs[i];
	return NULL;
}

/* The name `code` has in defs[0..n), or NULL. */
static const char *
reg_name_in(const struct idl_errdef *defs, unsigned n, int code)
{
	for (unsigned i = 0; i < n; i++)
		if (defs[i].code == code)
			return defs[i].name;
	return NULL;
}

int
idl_error_register(const struct idl_errdef *defs, unsigned n)
{
	struct reg_table *t;
	unsigned fresh = 0;

	idl__clear_detail();
	if (defs == NULL || n == 0)
		return idl__fail(IDL_EINVAL, "idl_error_register: no codes");
	for (unsigned i = 0; i < n; i++) {
		const char *twin;

		if (defs[i].code <= 0 || defs[i].name == NULL)
			return idl__fail(IDL_EINVAL,
					 "idl_error_register: entry %u: a code must be positive "
					 "and have a name",
					 i);
		twin = reg_name_in(defs, i, defs[i].code);
		if (twin != NULL && strcmp(twin, defs[i].name) != 0)
			return idl__fail(IDL_EBUSY, "idl_error_register: code %d named %s and %s",
					 defs[i].code, twin, defs[i].name);
	}
	pthread_mutex_lock(&reg_lock);
	for (unsigned i = 0; i < n; i++) {
		const struct idl_errdef *old = idl__error_lookup(defs[i].code);

		if (old == NULL) {
			fresh++;
		} else if (strcmp(old->name, defs[i].name) != 0) {
			pthread_mutex_unlock(&reg_lock);
			return idl__fail(IDL_EBUSY,
					 "idl_error_register: code %d is %s already, not %s",
					 defs[i].code, old->name, defs[i].name);
		}
	}
	if (fresh == 0) {
		/* Every code is known by these names already (the same table again). */
		pthread_mutex_unlock(&reg_lock);
		return 0;
	}
	if ((t = malloc(sizeof *t)) == NULL) {
		pthread_mutex_unlock(&reg_lock);
		return idl__fail(IDL_ENOMEM, "idl_error_register: out of memory");
	}
	t->defs = defs;
	t->n = n;
	t->next = atomic_load_explicit(&reg_head, memory_order_relaxed);
	atomic_store_explicit(&reg_head, t, memory_order_release);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}
