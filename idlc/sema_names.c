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
}
