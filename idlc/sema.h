/*
 * sema.h - what the two halves of sema share: sema.c walks the statements (routines,
 * arguments, numbering), sema_type.c resolves type expressions and computes wire facts.
 */
#ifndef IDLC_SEMA_H
#define IDLC_SEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "front.h"

/* A chained hash table from names to nodes, growing as it fills. */
struct sema_sym {
	const char *name;
	void *node;
	struct sema_sym *next;
};

struct sema_tab {
	struct sema_sym **b;
	size_t nb;
	size_t n;
};

struct sema {
	struct idlc_ctx *ctx;
	struct idlc_module *m;
	struct sema_tab types; /* name -> struct idlc_type *: the visible declaration */
	struct sema_tab routines; /* name -> struct idlc_routine * */
	struct idlc_type **types_tail;
	struct idlc_routine **rt_tail;
	struct idlc_import **imp_tail;
	const struct idlc_stmt *subsystem; /* the statement in force */
	uint32_t number; /* the next routine number */
	bool too_many;
	int32_t waittime;
	const char *waittime_expr;
	unsigned warned; /* SEMA_W_* already said once */
};

/* Warnings about constructs that have no meaning off Mach are said once per interface: a
 * Hurd file uses ureplyport sixty times, and one line tells the user all there is. */
enum sema_warn_key {
	SEMA_W_UREPLYPORT = 1u << 0,
	SEMA_W_REPLYPORT = 1u << 1,
	SEMA_W_MSGOPTION = 1u << 2,
	SEMA_W_SENDTIME = 1u << 3,
	SEMA_W_INTRANPAYLOAD = 1u << 4,
	SEMA_W_NOEFFECT_FLAG = 1u << 5, /* + one bit per flag, see sema_arg.c */
	SEMA_W_STATEMENT = 1u << 20, /* Apple's statements, dimport, iimport ... */
};
void idlc_sema_warn_once(struct sema *s, unsigned key, struct idlc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* sema_arg.c: checks one argument and gives it its meaning; false after an error. */
bool idlc_sema_arg(struct sema *s, struct idlc_routine *rt, struct idlc_arg *a, bool first);
/* sema_arg.c: the names of an argument's implicit companions (<arg>Cnt, <arg>Poly ...). */
unsigned idlc_sema_implicit_names(struct sema *s, const struct idlc_arg *a, const char **names);

struct sema_sym *idlc_sema_tab_find(const struct sema_tab *t, const char *name);
void idlc_sema_tab_fini(struct sema_tab *t);
void *idlc_sema_lookup(const struct sema_tab *t, const char *name);
/* Binds name to node, replacing an earlier binding. */
void idlc_sema_bind(struct sema *s, struct sema_tab *t, const char *name, void *node);

void idlc_sema_type_stmt(struct sema *s, struct idlc_type *t);

/* sema_type.c */
/* Resolves a type expression once; false when it is broken (the error was reported). */
bool idlc_sema_resolve(struct sema *s, struct idlc_type *t);
/* sema_names.c: warns where a routine's client stub or server routine would have the name of
 * a well-known C library function. */
void idlc_sema_check_names(struct sema *s);
/* Whether two type expressions are written the same (for redefinitions of built-ins). */
bool idlc_sema_same(const struct idlc_type *a, const struct idlc_type *b);
/* How a message names a type expression: its name, or what it is. */
const char *idlc_sema_type_name(struct sema *s, const struct idlc_type *t);

#endif /* IDLC_SEMA_H */
