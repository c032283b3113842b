/*
 * sighash.c - a routine's signature hash: FNV-1a 64 over its canonical form, as
 * include/idl/idl_subsystem.h defines it above idl_routine_sig_hash(). The runtime computes
 * the same from the descriptor table that emit_desc.c writes; both read an argument's
 * facts through idlc_arg_desc_facts(), so the table and the hash cannot disagree.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>

#include "emit.h"

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

void
idlc_arg_desc_facts(const struct idlc_arg *a, uint32_t *kind, uint32_t *wire_type,
		    uint32_t *elem_size, uint32_t *count)
{
	const struct idlc_type *t = a->rtype;

	switch (a->dir) {
	case IDL_DIR_REQUESTPORT:
		/* The request port is the connection itself: nothing of it travels. */
		*kind = IDL_ARG_PORT;
		*wire_type = IDL_WT_PORT;
		*elem_size = 0;
		*count = 1;
		return;
	case IDL_DIR_IN:
	case IDL_DIR_OUT:
	case IDL_DIR_INOUT:
		*kind = t->arg_kind;
		*wire_type = t->wire_type;
		*elem_size = t->elem_size;
		*count = t->arg_kind == IDL_ARG_SCALAR ? 1 : t->wire_count;
		return;
	default:
		*kind = IDL_ARG_IMPLICIT;
		*wire_type = IDL_WT_NONE;
		*elem_size = 0;
		*count = 0;
		return;
	}
}

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

/* A word from a list; a value past its end hashes as its decimal form, as the runtime's
 * idl_routine_sig_hash() does. */
static uint64_t
sig_fnv_word(uint64_t h, const char *const *words, size_t n, uint32_t v)
{
	return v < n ? sig_fnv(h, words[v]) : sig_fnv_u32(h, v);
}

uint64_t
idlc_sig_hash(const struct idlc_routine *rt)
{
	uint64_t h = SIG_FNV_BASIS;

	if (rt->kind == IDLC_RT_SKIP)
		return 0;
	h = sig_fnv_u32(h, rt->number);
	h = sig_fnv(h, " ");
	h = sig_fnv(h, rt->name != NULL ? rt->name : "");
	h = sig_fnv(h, " ");
	h = sig_fnv_word(h, sig_kinds, SIG_NELEM(sig_kinds), (uint32_t)rt->kind);
	h = sig_fnv(h, "(");
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		uint32_t kind, wire_type, elem_size, count;

		idlc_arg_desc_facts(a, &kind, &wire_type, &elem_size, &count);
		if (kind == IDL_ARG_IMPLICIT)
			continue;
		h = sig_fnv_word(h, sig_dirs, SIG_NELEM(sig_dirs), (uint32_t)a->dir);
		h = sig_fnv(h, " ");
		h = sig_fnv_word(h, sig_argkinds, SIG_NELEM(sig_argkinds), kind);
		h = sig_fnv(h, " ");
		h = sig_fnv_word(h, sig_wiretypes, SIG_NELEM(sig_wiretypes), wire_type);
		h = sig_fnv(h, " ");
		h = sig_fnv_u32(h, elem_size);
		h = sig_fnv(h, " ");
		h = sig_fnv_u32(h, count);
		h = sig_fnv(h, ";");
	}
	return sig_fnv(h, ")");
}
