/*
 * sema_names.c - the C names a routine's generated functions take, checked against the
 * C library's best-known functions.
 *
 * A client stub is called [-prefix][userprefix]routine and a server routine
 * [-prefix][serverprefix]routine: an interface without prefixes that names a routine `log`
 * declares a client stub `log`, which clashes with <math.h>'s log() (gcc warns at -Wall
 * about the built-in, and a program that includes <math.h> does not compile). idlc warns
 * where that would happen, naming the header; the list is the functions a routine is
 * likely to be called (C's and POSIX's common ones), not every name a C library has.
 *
 * The asynchronous stubs (emit_async.c, unless -noasync) add names of their own: for a
 * routine `r`, the client stub r_async, its static completion r_async_complete and the done
 * function's type r_done_t (each with the client stub's prefixes), beside r's client stub in
 * one file; and the stub's parameters idl_done, idl_ctx and idl_callp, beside r's arguments.
 * A routine whose client stub would take one of another routine's names, and an argument
 * with one of those parameter names, are errors: the generated code would not compile.
 */
#include <config.h>

#include <string.h>

#include "sema.h"

static const struct {
	const char *name;
	const char *header;
} sema_libc[] = {
	{ "abort", "stdlib.h" },      { "abs", "stdlib.h" },
	{ "accept", "sys/socket.h" }, { "access", "unistd.h" },
	{ "alarm", "unistd.h" },      { "bind", "sys/socket.h" },
	{ "calloc", "stdlib.h" },     { "ceil", "math.h" },
	{ "chdir", "unistd.h" },      { "clock", "time.h" },
	{ "close", "unistd.h" },      { "connect", "sys/socket.h" },
	{ "cos", "math.h" },	      { "div", "stdlib.h" },
	{ "dup", "unistd.h" },	      { "exit", "stdlib.h" },
	{ "exp", "math.h" },	      { "fabs", "math.h" },
	{ "floor", "math.h" },	      { "fork", "unistd.h" },
	{ "free", "stdlib.h" },	      { "getenv", "stdlib.h" },
	{ "index", "strings.h" },     { "kill", "signal.h" },
	{ "link", "unistd.h" },	      { "listen", "sys/socket.h" },
	{ "log", "math.h" },	      { "malloc", "stdlib.h" },
	{ "memcpy", "string.h" },     { "memset", "string.h" },
	{ "open", "fcntl.h" },	      { "pause", "unistd.h" },
	{ "pipe", "unistd.h" },	      { "poll", "poll.h" },
	{ "pow", "math.h" },	      { "printf", "stdio.h" },
	{ "putchar", "stdio.h" },     { "puts", "stdio.h" },
	{ "qsort", "stdlib.h" },      { "raise", "signal.h" },
	{ "rand", "stdlib.h" },	      { "read", "unistd.h" },
	{ "realloc", "stdlib.h" },    { "recv", "sys/socket.h" },
	{ "remove", "stdio.h" },      { "rename", "stdio.h" },
	{ "round", "math.h" },	      { "select", "sys/select.h" },
	{ "send", "sys/socket.h" },   { "shutdown", "sys/socket.h" },
	{ "signal", "signal.h" },     { "sin", "math.h" },
	{ "sleep", "unistd.h" },      { "socket", "sys/socket.h" },
	{ "sqrt", "math.h" },	      { "srand", "stdlib.h" },
	{ "stat", "sys/stat.h" },     { "strlen", "string.h" },
	{ "sync", "unistd.h" },	      { "system", "stdlib.h" },
	{ "tan", "math.h" },	      { "time", "time.h" },
	{ "truncate", "unistd.h" },   { "unlink", "unistd.h" },
	{ "wait", "sys/wait.h" },     { "write", "unistd.h" },
};

static const char *
sema_libc_header(const char *name)
{
	for (size_t i = 0; i < sizeof sema_libc / sizeof sema_libc[0]; i++)
		if (strcmp(sema_libc[i].name, name) == 0)
			return sema_libc[i].header;
	return NULL;
}

/* What the asynchronous stub of a routine adds beside its client stub, as suffixes of the
 * stub's name, and the parameters it adds beside the routine's arguments. */
static const struct {
	const char *suffix;
	const char *what;
} sema_async_names[] = {
	{ "_async", "asynchronous stub" },
	{ "_async_complete", "asynchronous stub's completion" },
	{ "_done_t", "done function's type" },
};
static const char *const sema_async_params[] = { "idl_done", "idl_ctx", "idl_callp" };

/* Whether `name` is `base` followed by `suffix`. */
static bool
sema_is_suffixed(const char *name, const char *base, const char *suffix)
{
	size_t n = strlen(base);

	return strncmp(name, base, n) == 0 && strcmp(name + n, suffix) == 0;
}

/* Routine `rt` against every routine declared before it, both ways: the one declared later
 * gets the error, the earlier one a note. */
static void
sema_check_async_clash(struct sema *s, const struct idlc_routine *rt, const char *prefix)
{
	for (const struct idlc_routine *o = s->m->routines; o != rt; o = o->next) {
		const struct idlc_routine *pair[2] = { rt, o };

		if (o->name == NULL)
			continue;
		for (int i = 0; i < 2; i++) {
			const struct idlc_routine *async = pair[i], *plain = pair[1 - i];

			if (async->kind != IDLC_RT_ROUTINE)
				continue;
			for (size_t k = 0; k < sizeof sema_async_names / sizeof sema_async_names[0];
			     k++) {
				const char *stub;

				if (!sema_is_suffixed(plain->name, async->name,
						      sema_async_names[k].suffix))
					continue;
				stub = idlc_printf(s->ctx, "%s%s%s", prefix, s->m->userprefix,
						   plain->name);
				if (async == rt)
					idlc_error(
						s->ctx, rt->loc,
						"routine '%s': its %s '%s' has the name of the "
						"client stub of routine '%s'; rename one, or leave "
						"the asynchronous stubs out with -noasync",
						rt->name, sema_async_names[k].what, stub,
						plain->name);
				else
					idlc_error(
						s->ctx, rt->loc,
						"routine '%s': its client stub '%s' has the name "
						"of "
						"the %s of routine '%s'; rename one, or leave the "
						"asynchronous stubs out with -noasync",
						rt->name, stub, sema_async_names[k].what,
						async->name);
				idlc_note(s->ctx, o->loc, "routine '%s' is declared here", o->name);
			}
		}
	}
}

/* The names the asynchronous stubs add, checked against the routines and their arguments. */
static void
sema_check_async_names(struct sema *s, const char *prefix)
{
	for (const struct idlc_routine *rt = s->m->routines; rt != NULL; rt = rt->next) {
		if (rt->name == NULL)
			continue;
		sema_check_async_clash(s, rt, prefix);
		if (rt->kind != IDLC_RT_ROUTINE)
			continue;
		for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
			for (size_t k = 0;
			     k < sizeof sema_async_params / sizeof sema_async_params[0]; k++)
				if (strcmp(a->name, sema_async_params[k]) == 0)
					idlc_error(s->ctx, a->loc,
						   "argument '%s' of routine '%s' has the name of "
						   "a parameter of its asynchronous stub "
						   "'%s%s%s_async'; "
						   "rename it, or leave the asynchronous stubs out "
						   "with -noasync",
						   a->name, rt->name, prefix, s->m->userprefix,
						   rt->name);
	}
}

void
idlc_sema_check_names(struct sema *s)
{
	const char *prefix = s->ctx->opts.prefix != NULL ? s->ctx->opts.prefix : "";

	for (const struct idlc_routine *rt = s->m->routines; rt != NULL; rt = rt->next) {
		const char *sides[2] = { s->m->userprefix, s->m->serverprefix };
		const char *what[2] = { "client stub", "server routine" };

		if (rt->name == NULL)
			continue;
		for (int i = 0; i < 2; i++) {
			const char *name = idlc_printf(s->ctx, "%s%s%s", prefix,
						       sides[i] != NULL ? sides[i] : "", rt->name);
			const char *header = name != NULL ? sema_libc_header(name) : NULL;

			if (header == NULL)
				continue;
			idlc_warning(s->ctx, rt->loc,
				     "routine '%s': its %s '%s' has the name of the C library's "
				     "%s() (<%s>); a %s (or another routine name) avoids the clash",
				     rt->name, what[i], name, name, header,
				     i == 0 ? "userprefix" : "serverprefix");
			break;
		}
	}
	if (!s->ctx->opts.no_async)
		sema_check_async_names(s, prefix);
}
