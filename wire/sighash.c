/*
 * sighash.c - a routine's signature hash: FNV-1a 64 over its canonical form, in the two
 * versions <idl/idl_subsystem.h> defines above idl_routine_sig_hash() and
 * idl_routine_sig_form().
 *
 * The hash is part of the wire contract, so it lives in neither the compiler nor the runtime
 * but beside both: this one file is compiled into libidlc (which hashes the descriptor table
 * it builds, idlc/desc.c, and compares two interfaces, idlc/compat.c) and into libidlrt
 * (which hashes its tables for the hello, and exports the functions). One canonical form per
 * version, one implementation: the two cannot drift. It depends on nothing but the public
 * header.
 *
 * The form is produced once, by sig_form(), into a sink that hashes what it is given and,
 * when asked, also keeps the text: the hash and the text a person reads are the same bytes.
 */
#include <config.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
/* MIG's dispositions (MACH_MSG_TYPE_*) from 15 on, as a sender names them. */
#define SIG_DISP_FIRST 15u
static const char *const sig_dispositions[] = {
	"port_name", "move_receive", "move_send",      "move_send_once",
	"copy_send", "make_send",    "make_send_once",
};

/*
 * The flags version 2 covers, in this order: what the receiver or the other side's C
 * interface depends on. IDL_ARGF_RECORD (how C passes the same bytes), IDL_ARGF_OPAQUE (a
 * server's own translation) and the flags of arguments that do not travel are left out.
 * The list is fixed: a flag added to the table later joins the form only with a new version.
 */
static const struct {
	uint32_t bit;
	const char *word;
} sig_flags[] = {
	{ IDL_ARGF_SIGNED, "signed" },
	{ IDL_ARGF_POLY_IN, "poly_in" },
	{ IDL_ARGF_POLY_OUT, "poly_out" },
	{ IDL_ARGF_DEALLOC, "dealloc" },
	{ IDL_ARGF_DEALLOC_PARAM, "dealloc_param" },
	{ IDL_ARGF_SERVERCOPY, "servercopy" },
	{ IDL_ARGF_FIXED, "fixed" },
	{ IDL_ARGF_INLINE, "inline" },
	{ IDL_ARGF_SAMECOUNT, "samecount" },
};

#define SIG_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Where the form goes: always into the hash, and into buf while there is room. */
struct sig_sink {
	uint64_t h;
	char *buf;
	size_t cap;
	size_t len; /* bytes of the whole form so far, written or not */
};

static void
sig_put(struct sig_sink *s, const char *str)
{
	for (; *str != '\0'; str++) {
		s->h ^= (unsigned char)*str;
		s->h *= SIG_FNV_PRIME;
		if (s->len + 1 < s->cap)
			s->buf[s->len] = *str;
		s->len++;
	}
}

static void
sig_put_u32(struct sig_sink *s, uint32_t v)
{
	char num[16];

	snprintf(num, sizeof num, "%" PRIu32, v);
	sig_put(s, num);
}

/* A word from a list, or the decimal value when a table holds a value newer than this code
 * knows (both sides then still agree if both are equally new). */
static void
sig_put_word(struct sig_sink *s, const char *const *words, size_t n, uint32_t v)
{
	if (v < n)
		sig_put(s, words[v]);
	else
		sig_put_u32(s, v);
}

/* Version 2's words after COUNT: the disposition, then the flags. */
static void
sig_put_v2(struct sig_sink *s, const struct idl_routine_desc *rt, const struct idl_arg_desc *a)
{
	uint32_t flags = a->flags;
	int any = 0;

	sig_put(s, " ");
	if (a->disposition == 0)
		sig_put(s, "-");
	else if (a->disposition >= SIG_DISP_FIRST &&
		 a->disposition - SIG_DISP_FIRST < SIG_NELEM(sig_dispositions))
		sig_put(s, sig_dispositions[a->disposition - SIG_DISP_FIRST]);
	else
		sig_put_u32(s, a->disposition);
	sig_put(s, " ");
	for (size_t i = 0; i < SIG_NELEM(sig_flags); i++) {
		if (!(flags & sig_flags[i].bit))
			continue;
		sig_put(s, any ? "," : "");
		sig_put(s, sig_flags[i].word);
		any = 1;
	}
	/* `countinout`: an out array whose caller's room travels in the request. The table
	 * has no flag for it but an offset in a message the argument is not otherwise in. */
	if (a->dir == IDL_DIR_OUT && a->req_offset != IDL_NO_OFFSET && rt->kind == IDL_RT_ROUTINE) {
		sig_put(s, any ? "," : "");
		sig_put(s, "countinout");
		any = 1;
	}
	if (!any)
		sig_put(s, "-");
}

static void
sig_form(struct sig_sink *s, const struct idl_routine_desc *rt, unsigned version)
{
	if (version == 1) {
		sig_put_u32(s, rt->number);
		sig_put(s, " ");
	}
	sig_put(s, rt->name != NULL ? rt->name : "");
	sig_put(s, " ");
	sig_put_word(s, sig_kinds, SIG_NELEM(sig_kinds), rt->kind);
	sig_put(s, "(");
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (a->kind == IDL_ARG_IMPLICIT)
			continue;
		sig_put_word(s, sig_dirs, SIG_NELEM(sig_dirs), a->dir);
		sig_put(s, " ");
		sig_put_word(s, sig_argkinds, SIG_NELEM(sig_argkinds), a->kind);
		sig_put(s, " ");
		sig_put_word(s, sig_wiretypes, SIG_NELEM(sig_wiretypes), a->wire_type);
		sig_put(s, " ");
		sig_put_u32(s, a->elem_size);
		sig_put(s, " ");
		sig_put_u32(s, a->count);
		if (version >= 2)
			sig_put_v2(s, rt, a);
		sig_put(s, ";");
	}
	sig_put(s, ")");
}

size_t
idl_routine_sig_form(const struct idl_routine_desc *rt, unsigned version, char *buf, size_t cap)
{
	struct sig_sink s = { SIG_FNV_BASIS, buf, buf != NULL ? cap : 0, 0 };

	if (s.cap > 0)
		buf[0] = '\0';
	if (rt == NULL || rt->kind == IDL_RT_SKIP || version < 1 || version > 2)
		return 0;
	sig_form(&s, rt, version);
	if (s.cap > 0)
		buf[s.len < s.cap ? s.len : s.cap - 1] = '\0';
	return s.len;
}

static uint64_t
sig_hash(const struct idl_routine_desc *rt, unsigned version)
{
	struct sig_sink s = { SIG_FNV_BASIS, NULL, 0, 0 };

	if (rt == NULL || rt->kind == IDL_RT_SKIP)
		return 0;
	sig_form(&s, rt, version);
	return s.h;
}

uint64_t
idl_routine_sig_hash(const struct idl_routine_desc *rt)
{
	return sig_hash(rt, 1);
}

uint64_t
idl_routine_sig_hash_v2(const struct idl_routine_desc *rt)
{
	return sig_hash(rt, 2);
}
