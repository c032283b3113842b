/*
 * parser_actions.c - what the grammar's actions (parser.y) call: node builders, constant
 * folding, and the text of a type for messages.
 *
 * Kept out of the grammar so that parser.y reads as the language it accepts. Everything
 * here allocates in the context's arena (freed with the context) and reports its own
 * errors through the context's diagnostics; the prototypes are in the parser's header,
 * beside the location type they take.
 */
#include <config.h>

#include <stdint.h>

#include "parser.h"

struct idlc_loc
idlc_ploc(const IDLC_YYLTYPE *l)
{
	struct idlc_loc loc = { l->file, l->first_line, l->first_column };

	return loc;
}

struct idlc_type *
idlc_ptype(struct idlc_ctx *ctx, enum idlc_type_kind kind, const IDLC_YYLTYPE *l)
{
	struct idlc_type *t = idlc_alloc(ctx, sizeof *t);

	t->kind = kind;
	t->loc = idlc_ploc(l);
	return t;
}

struct idlc_type *
idlc_parray(struct idlc_ctx *ctx, enum idlc_type_kind kind, const IDLC_YYLTYPE *l,
	    struct idlc_num n, struct idlc_type *elem)
{
	struct idlc_type *t = idlc_ptype(ctx, kind, l);

	t->count = n.v;
	t->broken = n.bad;
	t->elem = elem;
	return t;
}

/* Folds one operation of a constant expression; results stay within 0 .. UINT32_MAX. */
struct idlc_num
idlc_parith(struct idlc_ctx *ctx, const IDLC_YYLTYPE *l, struct idlc_num a, char op,
	    struct idlc_num b)
{
	struct idlc_num r = { 1, true };
	uint64_t v = 0;

	if (a.bad || b.bad)
		return r;
	switch (op) {
	case '+':
		v = (uint64_t)a.v + b.v;
		break;
	case '-':
		if (b.v > a.v) {
			idlc_error(ctx, idlc_ploc(l), "constant expression %u - %u is negative",
				   a.v, b.v);
			return r;
		}
		v = (uint64_t)a.v - b.v;
		break;
	case '*':
		v = (uint64_t)a.v * b.v;
		break;
	case '/':
		if (b.v == 0) {
			idlc_error(ctx, idlc_ploc(l), "division by zero in constant expression");
			return r;
		}
		v = a.v / b.v;
		break;
	}
	if (v > UINT32_MAX) {
		idlc_error(ctx, idlc_ploc(l), "constant expression %u %c %u overflows 32 bits", a.v,
			   op, b.v);
		return r;
	}
	r.v = (uint32_t)v;
	r.bad = false;
	return r;
}

const char *
idlc_pjoin(struct idlc_ctx *ctx, const char *a, const char *sep, const char *b)
{
	return idlc_printf(ctx, "%s%s%s", a, sep, b);
}

/* How a type written out reads in a message: "c_string[*:256]", "array[*:8] of int". */
const char *
idlc_ptype_text(struct idlc_ctx *ctx, const struct idlc_type *t)
{
	const char *elem = t->elem == NULL ? "..." : idlc_ptype_text(ctx, t->elem);
	const struct idlc_ipc_info *info;

	switch (t->kind) {
	case IDLC_T_NAMED:
		return t->ref;
	case IDLC_T_IPC:
		info = idlc_ipc_info(t->ipc);
		return info != NULL ? info->name : "an IPC type";
	case IDLC_T_LONGFORM:
		info = idlc_ipc_info(t->ipc);
		return idlc_printf(ctx, "(%s, %u)", info != NULL ? info->name : "...",
				   t->size_bits);
	case IDLC_T_ARRAY_FIXED:
		return idlc_printf(ctx, "array[%u] of %s", t->count, elem);
	case IDLC_T_ARRAY_VAR:
		return idlc_printf(ctx, "array[*:%u] of %s", t->count, elem);
	case IDLC_T_ARRAY_UNBOUNDED:
		return idlc_printf(ctx, "array[] of %s", elem);
	case IDLC_T_STRUCT_ARRAY:
		return idlc_printf(ctx, "struct[%u] of %s", t->count, elem);
	case IDLC_T_CSTRING_FIXED:
		return idlc_printf(ctx, "c_string[%u]", t->count);
	case IDLC_T_CSTRING_VAR:
		return idlc_printf(ctx, "c_string[*:%u]", t->count);
	case IDLC_T_POINTER:
		return idlc_printf(ctx, "^%s", elem);
	case IDLC_T_STRUCT_FIELDS:
		return "struct { ... }";
	default:
		return t->native != NULL ? t->native : "a type";
	}
}

/* The routine being parsed is done (or abandoned after an error); the types its arguments
 * declared (`name : t = type`) are in it, no longer open. */
void
idlc_proutine_done(struct idlc_ctx *ctx)
{
	ctx->open_routine = NULL;
	ctx->open_args = false;
	ctx->open_type = NULL;
}

/* A statement abandoned after a syntax error leaves what it named for sema: the type it was
 * declaring, broken (its uses stay quiet); the routine it was, with its name and kind but no
 * arguments (it takes its number, and a later routine of its name is a duplicate). */
void
idlc_pabandoned(struct idlc_ctx *ctx)
{
	if (ctx->open_type != NULL) {
		struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_TYPE, ctx->open_type_loc);
		struct idlc_type *t = idlc_alloc(ctx, sizeof *t);

		t->kind = IDLC_T_NAMED;
		t->name = ctx->open_type;
		t->name_loc = ctx->open_type_loc;
		t->loc = ctx->open_type_loc;
		t->broken = true;
		st->type = t;
		st->broken = true;
	}
	if (ctx->open_routine != NULL) {
		struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_ROUTINE, ctx->open_routine_loc);
		struct idlc_routine *rt = idlc_alloc(ctx, sizeof *rt);

		rt->kind = ctx->open_routine_kind == IDLC_RK_SIMPLEROUTINE ||
					   ctx->open_routine_kind == IDLC_RK_SIMPLEPROCEDURE
				   ? IDLC_RT_SIMPLEROUTINE
				   : IDLC_RT_ROUTINE;
		rt->name = ctx->open_routine;
		rt->loc = ctx->open_routine_name_loc;
		rt->waittime = -1;
		st->routine = rt;
		st->broken = true;
	}
	ctx->open_type = NULL;
	idlc_proutine_done(ctx);
}

/* An Apple statement that means nothing off Mach: sema warns, saying so. */
void
idlc_pignored(struct idlc_ctx *ctx, const IDLC_YYLTYPE *l, const char *what)
{
	struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_IGNORED, idlc_ploc(l));

	st->what = what;
}
