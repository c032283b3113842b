/*
 * sighash.c - a routine's signature hash: FNV-1a 64 over its canonical form, as
 * <idl/idl_subsystem.h> defines it above idl_routine_sig_hash().
 *
 * The hash is part of the wire contract, so it lives in neither the compiler nor the runtime
 * but beside both: this one file is compiled into libidlc (which hashes the descriptor table
 * it builds, idlc/desc.c) and into libidlrt (which hashes a peer's table in the hello, and
 * exports the function). One canonical form, one implementation: the two cannot drift. It
 * depends on nothing but the public header.
 */
#include <config.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include <idl/idl_subsystem.h>

#define SIG_FNV_BASIS 0xcbf29ce484222325ull
#define SIG_FNV_PRIME 0x100000001b3ull

static const char *const sig_kinds[] = { "-", "routine", "simpleroutine", "skip" };
static const char *const sig_dirs[] = {
	"-", "requestport", "in", "out", "inout", "waittime", "msgoption", "other",
};
static const char *const sig_argkinds[] = {
	"-", "scalar", "fixed", "var", "cstring", "cstringvar", "port", "ool", "implicit",
};
static const char *const sig_wiretypes[] = {
	"none", "int8", "int16",  "int32",  "int64", "boolean",
	"char", "byte", "real32", "real64", "port",  "struct",
};

#define SIG_NELEM(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t
sig_fnv(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= SIG_FNV_PRIME;
	}
	return h;
}

static uint64_t
sig_fnv_u32(uint64_t h, uint32_t v)
{
	char buf[16];

	snprintf(buf, sizeof buf, "%" PRIu32, v);
	return sig_fnv(h, buf);
}

/* A word from a list, or the decimal value when a table holds a value newer than this code
 * knows (both sides then still agree if both are equally new). */
static uint64_t
sig_fnv_word(uint64_t h, const char *const *words, size_t n, uint32_t v)
{
	return v < n ? sig_fnv(h, words[v]) : sig_fnv_u32(h, v);
}

uint64_t
idl_routine_sig_hash(const struct idl_routine_desc *rt)
{
	uint64_t h = SIG_FNV_BASIS;

	if (rt == NULL || rt->kind == IDL_RT_SKIP)
		return 0;
	h = sig_fnv_u32(h, rt->number);
	h = sig_fnv(h, " ");
	h = sig_fnv(h, rt->name != NULL ? rt->name : "");
	h = sig_fnv(h, " ");
	h = sig_fnv_word(h, sig_kinds, SIG_NELEM(sig_kinds), rt->kind);
	h = sig_fnv(h, "(");
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (a->kind == IDL_ARG_IMPLICIT)
			continue;
		h = sig_fnv_word(h, sig_dirs, SIG_NELEM(sig_dirs), a->dir);
		h = sig_fnv(h, " ");
		h = sig_fnv_word(h, sig_argkinds, SIG_NELEM(sig_argkinds), a->kind);
		h = sig_fnv(h, " ");
		h = sig_fnv_word(h, sig_wiretypes, SIG_NELEM(sig_wiretypes), a->wire_type);
		h = sig_fnv(h, " ");
		h = sig_fnv_u32(h, a->elem_size);
		h = sig_fnv(h, " ");
		h = sig_fnv_u32(h, a->count);
		h = sig_fnv(h, ";");
	}
	return sig_fnv(h, ")");
}
