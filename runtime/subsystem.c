/*
 * subsystem.c - lookups in a subsystem's descriptor table and the signature hash.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static const char *const sub_kinds[] = { "-", "routine", "simpleroutine", "skip" };
static const char *const sub_dirs[] = {
	"-", "requestport", "in", "out", "inout", "waittime", "msgoption", "other",
};
static const char *const sub_argkinds[] = {
	"-", "scalar", "fixed", "var", "cstring", "cstringvar", "port", "ool", "implicit",
};
static const char *const sub_wiretypes[] = {
	"none", "int8", "int16",  "int32",  "int64", "boolean",
	"char", "byte", "real32", "real64", "port",  "struct",
};

#define SUB_NELEM(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t
sub_fnv(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= FNV_PRIME;
	}
	return h;
}

static uint64_t
sub_fnv_u32(uint64_t h, uint32_t v)
{
	char buf[16];

	snprintf(buf, sizeof buf, "%" PRIu32, v);
	return sub_fnv(h, buf);
}

/* A word from a list, or the decimal value when a descriptor holds a value newer than this
 * library knows (both sides then still agree if both are equally new). */
static uint64_t
sub_fnv_word(uint64_t h, const char *const *words, size_t n, unsigned v)
{
	if (v < n)
		return sub_fnv(h, words[v]);
	return sub_fnv_u32(h, v);
}

uint64_t
idl_routine_sig_hash(const struct idl_routine_desc *rt)
{
	uint64_t h = FNV_BASIS;

	if (rt == NULL || rt->kind == IDL_RT_SKIP)
		return 0;
	h = sub_fnv_u32(h, rt->number);
	h = sub_fnv(h, " ");
	h = sub_fnv(h, rt->name != NULL ? rt->name : "");
	h = sub_fnv(h, " ");
	h = sub_fnv_word(h, sub_kinds, SUB_NELEM(sub_kinds), rt->kind);
	h = sub_fnv(h, "(");
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (a->kind == IDL_ARG_IMPLICIT)
			continue;
		h = sub_fnv_word(h, sub_dirs, SUB_NELEM(sub_dirs), a->dir);
		h = sub_fnv(h, " ");
		h = sub_fnv_word(h, sub_argkinds, SUB_NELEM(sub_argkinds), a->kind);
		h = sub_fnv(h, " ");
		h = sub_fnv_word(h, sub_wiretypes, SUB_NELEM(sub_wiretypes), a->wire_type);
		h = sub_fnv(h, " ");
		h = sub_fnv_u32(h, a->elem_size);
		h = sub_fnv(h, " ");
		h = sub_fnv_u32(h, a->count);
		h = sub_fnv(h, ";");
	}
	return sub_fnv(h, ")");
}

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
