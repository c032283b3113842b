/*
 * cpp.c - runs the C preprocessor over the input, as MIG does, and captures its output.
 *
 * The command is an argument vector, never a shell line: the preprocessor command's words
 * (split on blanks, like $CPP in make), the user's -I/-D/-U/... in order, and the input.
 * idlkit's own include directory reaches the preprocessor through CPATH, which gcc and clang
 * search after every -I and before the system's directories: an option would break MIG
 * command lines whose "preprocessor" is `cat` (GNU Mach's build runs `mig -cc cat - ...`).
 * Its standard error goes straight to ours, so its messages keep their own file:line. A
 * preprocessor that fails is an error: GNU MIG's pipeline lost cpp's status and produced
 * stubs from truncated input.
 */
#include <config.h>

/* pipe2() and O_CLOEXEC pipes are GNU/Linux (and BSD) interfaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "front.h"

extern char **environ;

#ifndef IDLC_DEFAULT_CPP
#define IDLC_DEFAULT_CPP "cpp"
#endif

/* Appends the blank-separated words of `cmd` to argv (arena strings). */
static size_t
cpp_split(struct idlc_ctx *ctx, const char *cmd, const char **argv, size_t n)
{
	const char *p = cmd, *start;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == '\0')
			return n;
		start = p;
		while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		if (argv != NULL)
			argv[n] = idlc_strndup(ctx, start, (size_t)(p - start));
		n++;
	}
}

/* Builds the argument vector; with argv NULL only counts it. */
static size_t
cpp_argv(struct idlc_ctx *ctx, const char *cmd, const char *path, const char **argv)
{
	const struct idlc_options *o = &ctx->opts;
	size_t n = cpp_split(ctx, cmd, argv, 0);
	size_t i;

	for (i = 0; i < o->ncpp_args; i++) {
		if (argv != NULL)
			argv[n] = o->cpp_args[i];
		n++;
	}
	if (argv != NULL) {
		argv[n] = path;
		argv[n + 1] = NULL;
	}
	return n + 2;
}

static int
cpp_read_all(int fd, struct strbuf *out)
{
	char buf[65536];
	ssize_t r;

	for (;;) {
		r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		/* On allocation failure keep reading, so the child is not left blocked. */
		strbuf_append(out, buf, (size_t)r);
	}
}

/* The environment for the preprocessor: ours, with idlkit's include directory appended to
 * CPATH unless -nostdinc. */
static char **
cpp_env(struct idlc_ctx *ctx)
{
	const struct idlc_options *o = &ctx->opts;
	const char *old = getenv("CPATH");
	size_t n = 0, k = 0;
	char **env;

	if (o->no_stdinc || o->include_dir == NULL || o->include_dir[0] == '\0')
		return environ;
	while (environ[n] != NULL)
		n++;
	env = idlc_alloc(ctx, (n + 2) * sizeof *env);
	if (env == NULL)
		return environ;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "CPATH=", 6) != 0)
			env[k++] = environ[i];
	if (old != NULL && old[0] != '\0')
		env[k++] = idlc_printf(ctx, "CPATH=%s:%s", old, o->include_dir);
	else
		env[k++] = idlc_printf(ctx, "CPATH=%s", o->include_dir);
	env[k] = NULL;
	return env;
}

int
idlc_cpp_run(struct idlc_ctx *ctx, const char *path, struct strbuf *out)
{
	const char *cmd = ctx->opts.cpp != NULL ? ctx->opts.cpp : IDLC_DEFAULT_CPP;
	struct idlc_loc where = { ctx->module.input_name, 0, 0 };
	posix_spawn_file_actions_t fa;
	const char **argv;
	size_t n;
	int fds[2], rc, status, read_rc, read_errno;
	pid_t pid;

	if (cpp_split(ctx, cmd, NULL, 0) == 0) {
		idlc_error(ctx, where, "the preprocessor command is empty");
		return -1;
	}
	n = cpp_argv(ctx, cmd, path, NULL);
	argv = idlc_alloc(ctx, n * sizeof *argv);
	if (argv == NULL)
		return -1;
	cpp_argv(ctx, cmd, path, argv);

	if (pipe2(fds, O_CLOEXEC) != 0) {
		idlc_error(ctx, where, "cannot create a pipe for the preprocessor: %s",
			   strerror(errno));
		return -1;
	}
	rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	if (rc == 0)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, cpp_env(ctx));
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		idlc_error(ctx, where, "cannot run the preprocessor '%s': %s", argv[0],
			   strerror(rc));
		return -1;
	}

	read_rc = cpp_read_all(fds[0], out);
	read_errno = errno;
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			idlc_error(ctx, where, "cannot wait for the preprocessor: %s",
				   strerror(errno));
			return -1;
		}
	}
	if (WIFSIGNALED(status)) {
		idlc_error(ctx, where, "the preprocessor '%s' was killed by signal %d (%s)",
			   argv[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* Where posix_spawn is fork and exec, a missing command shows up as 127. */
		idlc_error(ctx, where, "the preprocessor '%s' failed (exit status %d%s)", argv[0],
			   WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			   WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": command not found?"
									   : "");
		return -1;
	}
	if (read_rc != 0) {
		idlc_error(ctx, where, "cannot read the preprocessor's output: %s",
			   strerror(read_errno));
		return -1;
	}
	if (out->failed) {
		idlc_error(ctx, where, "out of memory reading the preprocessor's output");
		return -1;
	}
	return 0;
}
