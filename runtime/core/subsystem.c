/*
 * subsystem.c - lookups in a subsystem's descriptor table. The signature hash is the wire
 * contract's (wire/sighash.c, compiled into this library and into the compiler's).
 *
 * Core: it knows nothing of any other room.
 */
#include <config.h>

#include "core/core.h"

const struct idl_routine_desc *
idl_subsystem_routine(const struct idl_subsystem *ss, int32_t id)
{
	/* Unsigned, so that ids below the base wrap to large numbers and fail the check. */
	uint32_t n = (uint32_t)id - (uint32_t)ss->base;
	const struct idl_routine_desc *rt;

	if (n >= ss->nroutines)
		return NULL;
	rt = &ss->routines[n];
	if (rt->kind == IDL_RT_SKIP || rt->name == NULL)
		return NULL;
	return rt;
}
