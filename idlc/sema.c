/*
 * sema.c - the meaning of a parsed interface: names resolved, MIG's defaults applied,
 * routines numbered, every type's wire facts and C types computed (in sema_type.c), and
 * every error found.
 *
 * Statements are walked in source order, as MIG's single pass did: a type is visible from
 * its declaration on, a redefinition (a warning, as in Apple MIG) replaces it for what
 * follows, and each routine or skip takes the next number.
 *
 * Arguments are sema_arg.c's. A construct with no meaning off Mach is a warning saying what
 * it maps to, or an error saying why it cannot be; a type that cannot travel is an error only
 * where a routine uses it: real files declare many types their routines never use.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "sema.h"

/* Message ids must leave room for reply ids (request id + 100) in an int32. */
#define SEMA_MAX_NUMBERS 65536u

static size_t
sema_hash(const char *s)
{
	size_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

void
idlc_sema_tab_fini(struct sema_tab *t)
{
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
}

struct sema_sym *
idlc_sema_tab_find(const struct sema_tab *t, const char *name)
{
	struct sema_sym *e;

	if (t->nb == 0)
		return NULL;
	for (e = t->b[sema_hash(name) & (t->nb - 1)]; e != NULL; e = e->next)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

void *
idlc_sema_lookup(const struct sema_tab *t, const char *name)
{
	struct sema_sym *e = idlc_sema_tab_find(t, name);

	return e != NULL ? e->node : NULL;
}

/* Binds name to node, replacing an earlier binding. */
void
idlc_sema_bind(struct sema *s, struct sema_tab *t, const char *name, void *node)
{
	struct sema_sym *e = idlc_sema_tab_find(t, name), *next;
	struct sema_sym **nb;
	size_t i, nnb;

	if (e != NULL) {
		e->node = node;
		return;
	}
	if (t->n >= t->nb) {
		nnb = t->nb != 0 ? t->nb * 2 : 256;
		nb = calloc(nnb, sizeof *nb);
		if (nb == NULL) {
			idlc_alloc(s->ctx, SIZE_MAX); /* reports and unwinds */
			return;
		}
		for (i = 0; i < t->nb; i++) {
			for (e = t->b[i]; e != NULL; e = next) {
				next = e->next;
				e->next = nb[sema_hash(e->name) & (nnb - 1)];
				nb[sema_hash(e->name) & (nnb - 1)] = e;
			}
		}
		free(t->b);
		t->b = nb;
		t->nb = nnb;
	}
	e = idlc_alloc(s->ctx, sizeof *e);
	e->name = name;
	e->node = node;
	i = sema_hash(name) & (t->nb - 1);
	e->next = t->b[i];
	t->b[i] = e;
	t->n++;
}

/* Makes a declared type visible from here on. */
static void
sema_declare(struct sema *s, struct idlc_type *t)
{
	struct idlc_type *prev = idlc_sema_lookup(&s->types, t->name);
	struct idlc_type **pp;

	if (prev != NULL) {
		if (prev->name_loc.file == s->ctx->builtin_file) {
			/* Including the real std_types.defs repeats the built-ins word for word. */
			if (!idlc_sema_same(prev, t))
				idlc_warning(s->ctx, t->name_loc,
					     "redefinition of built-in type '%s'", t->name);
		} else {
			idlc_warning(s->ctx, t->name_loc, "redefinition of type '%s'", t->name);
			idlc_note(s->ctx, prev->name_loc, "previous definition of '%s' is here",
				  prev->name);
		}
		for (pp = &s->m->types; *pp != NULL; pp = &(*pp)->next) {
			if (*pp == prev) {
				*pp = prev->next;
				if (s->types_tail == &prev->next)
					s->types_tail = pp;
				break;
			}
		}
	}
	idlc_sema_bind(s, &s->types, t->name, t);
	t->next = NULL;
	*s->types_tail = t;
	s->types_tail = &t->next;
}

void
idlc_sema_type_stmt(struct sema *s, struct idlc_type *t)
{
	idlc_sema_resolve(s, t);
	sema_declare(s, t);
}

/* What an implicit argument is, from its MIG suffix. */
static const char *
sema_implicit_what(const char *name)
{
	size_t n = strlen(name);

	if (n >= 3 && strcmp(name + n - 3, "Cnt") == 0)
		return "count";
	if (n >= 4 && strcmp(name + n - 4, "Poly") == 0)
		return "disposition";
	if (n >= 7 && strcmp(name + n - 7, "Dealloc") == 0)
		return "dealloc flag";
	return "servercopy flag";
}

static void
sema_routine(struct sema *s, const struct idlc_stmt *st)
{
	struct idlc_routine *rt = st->routine, *prev;
	struct idlc_arg *a, *b, *port = NULL;
	struct sema_tab names = { NULL, 0, 0 };
	struct sema_sym *dup;
	const char *implicit[4];
	unsigned n, i;
	bool first = true;

	/* The name is taken first, whatever else is wrong with the routine: a later routine of
	 * the same name is a duplicate all the same, reported in the same run. */
	prev = idlc_sema_lookup(&s->routines, rt->name);
	if (prev != NULL) {
		idlc_error(s->ctx, rt->loc, "duplicate routine '%s'", rt->name);
		idlc_note(s->ctx, prev->loc, "previous definition of '%s' is here", prev->name);
	} else {
		idlc_sema_bind(s, &s->routines, rt->name, rt);
	}
	if (st->broken) /* its syntax error was reported; its arguments are unknown */
		return;
	if (st->what != NULL) {
		idlc_error(s->ctx, st->loc, "%s is not supported", st->what);
		return;
	}

	for (a = rt->args; a != NULL && !s->ctx->stopped; a = a->next, first = false) {
		dup = idlc_sema_tab_find(&names, a->name);
		if (dup != NULL) {
			b = dup->node;
			idlc_error(s->ctx, a->loc, "duplicate argument '%s' in routine '%s'",
				   a->name, rt->name);
			idlc_note(s->ctx, b->loc, "previous declaration of '%s' is here", b->name);
			continue;
		}
		idlc_sema_bind(s, &names, a->name, a);
		if (!idlc_sema_arg(s, rt, a, first))
			continue;
		if (a->dir == IDL_DIR_REQUESTPORT) {
			if (port != NULL) {
				idlc_error(s->ctx, a->loc,
					   "routine '%s' has a second request port '%s'", rt->name,
					   a->name);
				idlc_note(s->ctx, port->loc, "the first one is '%s'", port->name);
			}
			port = a;
		}
		if (rt->kind == IDLC_RT_SIMPLEROUTINE &&
		    (a->dir == IDL_DIR_OUT || a->dir == IDL_DIR_INOUT))
			idlc_error(s->ctx, a->loc, "simpleroutine '%s' has %s argument '%s'",
				   rt->name, a->dir == IDL_DIR_OUT ? "out" : "inout", a->name);
	}
	/* Variable arrays, polymorphic ports, dealloc[] and servercopy bring implicit
	 * arguments, named as MIG names them (<arg>Cnt, <arg>Poly, <arg>Dealloc, <arg>SCopy). */
	for (a = rt->args; a != NULL && !s->ctx->stopped; a = a->next) {
		n = idlc_sema_implicit_names(s, a, implicit);
		for (i = 0; i < n; i++) {
			dup = idlc_sema_tab_find(&names, implicit[i]);
			if (dup == NULL)
				continue;
			b = dup->node;
			idlc_error(s->ctx, b->loc,
				   "argument '%s' of routine '%s' has the name of the implicit "
				   "%s of '%s'",
				   b->name, rt->name, sema_implicit_what(implicit[i]), a->name);
		}
	}
	idlc_sema_tab_fini(&names);
	if (port == NULL && !s->ctx->stopped &&
	    (rt->args == NULL || rt->args->rtype != NULL || rt->args->dir_written != IDLC_DIR_NONE))
		idlc_error(s->ctx, rt->loc,
			   "routine '%s' has no request port (a first argument with no direction "
			   "and a port type)",
			   rt->name);
}

/* Gives the next routine number to rt (a routine or a skip). */
static bool
sema_number(struct sema *s, struct idlc_routine *rt, struct idlc_loc loc)
{
	if (s->number >= SEMA_MAX_NUMBERS) {
		if (!s->too_many)
			idlc_error(s->ctx, loc, "too many routines (more than %u message ids)",
				   SEMA_MAX_NUMBERS);
		s->too_many = true;
		return false;
	}
	if (s->number == 100)
		idlc_warning(s->ctx, loc,
			     "more than 100 routines: reply ids (request id + 100) collide with "
			     "request ids of this subsystem");
	rt->number = s->number++;
	rt->waittime = s->waittime;
	rt->waittime_expr = s->waittime_expr;
	*s->rt_tail = rt;
	s->rt_tail = &rt->next;
	s->m->nroutines++;
	return true;
}

static void
sema_skip(struct sema *s, const struct idlc_stmt *st)
{
	struct idlc_routine *rt;
	uint32_t i, n = st->bad_number ? 1 : st->number;

	for (i = 0; i < n && !s->too_many; i++) {
		rt = idlc_alloc(s->ctx, sizeof *rt);
		rt->kind = IDLC_RT_SKIP;
		rt->loc = st->loc;
		sema_number(s, rt, st->loc);
	}
}

static void
sema_subsystem(struct sema *s, const struct idlc_stmt *st)
{
	struct idlc_module *m = s->m;

	if (s->subsystem != NULL) {
		idlc_warning(s->ctx, st->loc, "subsystem '%s' replaces subsystem '%s'", st->text,
			     s->subsystem->text);
		idlc_note(s->ctx, s->subsystem->loc, "previous subsystem statement is here");
	}
	s->subsystem = st;
	m->subsystem = st->text;
	m->subsystem_loc = st->loc;
	m->kernel_user = st->kernel_user;
	m->kernel_server = st->kernel_server;
	m->base = 0;
	if (st->kernel_user || st->kernel_server)
		idlc_warning(s->ctx, st->mod_loc, "%s changes nothing in idlkit; ignored",
			     st->kernel_server ? "KernelServer" : "KernelUser");
	if (!st->bad_number && st->number > INT32_MAX - 100)
		idlc_error(s->ctx, st->loc, "subsystem base %u is too large (at most %d)",
			   st->number, INT32_MAX - 100);
	else
		m->base = (int32_t)st->number;
}

static void
sema_waittime(struct sema *s, const struct idlc_stmt *st)
{
	const char *p = st->text;
	int64_t v = 0;

	s->m->waittime = st->text;
	s->waittime = -1;
	s->waittime_expr = NULL;
	if (p == NULL)
		return;
	for (; *p >= '0' && *p <= '9'; p++)
		if (v <= INT32_MAX)
			v = v * 10 + (*p - '0');
	if (*p != '\0' || p == st->text) {
		/* MIG takes any C expression (a macro, most often): the client stubs pass it,
		 * and the descriptor table says "the port's default" (-1). */
		s->waittime_expr = st->text;
		return;
	}
	if (v > INT32_MAX) {
		idlc_error(s->ctx, st->loc, "waittime %s is too large (at most %d ms)", st->text,
			   INT32_MAX);
		return;
	}
	s->waittime = (int32_t)v;
}

static void
sema_import(struct sema *s, const struct idlc_stmt *st)
{
	struct idlc_import *imp;
	enum idlc_import_kind kind = st->import_kind;

	/* Apple's definitions header and internal header are not idlc outputs: their imports
	 * go where their contents went. */
	if (kind == IDLC_DIMPORT) {
		idlc_sema_warn_once(s, SEMA_W_STATEMENT << 0, st->loc,
				    "dimport: idlc writes no definitions header; the file is "
				    "imported like 'import'");
		kind = IDLC_IMPORT;
	} else if (kind == IDLC_IIMPORT) {
		idlc_sema_warn_once(s, SEMA_W_STATEMENT << 1, st->loc,
				    "iimport: the file is imported like 'simport' (the server "
				    "side and the -sheader/-iheader)");
		kind = IDLC_SIMPORT;
	}
	imp = idlc_alloc(s->ctx, sizeof *imp);
	imp->kind = kind;
	imp->file = st->text;
	imp->loc = st->loc;
	*s->imp_tail = imp;
	s->imp_tail = &imp->next;
}

static void
sema_stmt(struct sema *s, const struct idlc_stmt *st)
{
	switch (st->kind) {
	case IDLC_ST_SUBSYSTEM:
		sema_subsystem(s, st);
		break;
	case IDLC_ST_WAITTIME:
		sema_waittime(s, st);
		break;
	case IDLC_ST_MSGOPTION:
		s->m->msgoption = st->text;
		if (strcmp(st->text, "MACH_MSG_OPTION_NONE") != 0)
			idlc_sema_warn_once(s, SEMA_W_MSGOPTION, st->loc,
					    "msgoption %s is ignored: POSIX transports have no "
					    "message options",
					    st->text);
		break;
	case IDLC_ST_SERVERPREFIX:
		s->m->serverprefix = st->text;
		break;
	case IDLC_ST_USERPREFIX:
		s->m->userprefix = st->text;
		break;
	case IDLC_ST_SERVERDEMUX:
		s->m->serverdemux = st->text;
		break;
	case IDLC_ST_IMPORT:
		sema_import(s, st);
		break;
	case IDLC_ST_RCSID:
		s->m->rcsid = st->text;
		break;
	case IDLC_ST_TYPE:
		idlc_sema_type_stmt(s, st->type);
		break;
	case IDLC_ST_ROUTINE:
		sema_routine(s, st);
		sema_number(s, st->routine, st->routine->loc);
		break;
	case IDLC_ST_SKIP:
		sema_skip(s, st);
		break;
	case IDLC_ST_IGNORED:
		idlc_warning(s->ctx, st->loc, "%s", st->what);
		break;
	}
}

int
idlc_sema(struct idlc_ctx *ctx, struct idlc_module *m)
{
	/* On the heap: after running out of memory we longjmp back here, and only objects
	 * not local to this frame keep their values for the cleanup. */
	struct sema *volatile s = calloc(1, sizeof *s);
	const struct idlc_stmt *st;
	jmp_buf escape;
	jmp_buf *volatile saved = ctx->escape;

	if (s == NULL) {
		idlc_error(ctx, (struct idlc_loc){ NULL, 0, 0 }, "out of memory");
		return (int)ctx->nerrors;
	}
	s->ctx = ctx;
	s->m = m;
	s->waittime = -1;
	m->types = NULL;
	m->routines = NULL;
	m->imports = NULL;
	m->nroutines = 0;
	s->types_tail = &m->types;
	s->rt_tail = &m->routines;
	s->imp_tail = &m->imports;

	if (setjmp(escape) == 0) {
		ctx->escape = &escape;
		for (st = ctx->stmts; st != NULL && !ctx->stopped; st = st->next)
			sema_stmt(s, st);
		if (m->subsystem == NULL && ctx->parsed_user && !ctx->saw_subsystem &&
		    !ctx->stopped)
			idlc_error(ctx, (struct idlc_loc){ m->input_name, 0, 0 },
				   "missing 'subsystem' statement");
		/* The prefixes are known only once every statement was seen. */
		if (!ctx->stopped)
			idlc_sema_check_names(s);
	}
	ctx->escape = saved;
	idlc_sema_tab_fini(&s->types);
	idlc_sema_tab_fini(&s->routines);
	free(s);
	return (int)ctx->nerrors;
}
