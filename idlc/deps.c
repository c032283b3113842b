/*
 * deps.c - make dependency files: the outputs (or the -MT targets) depend on the input and
 * on every file it included, as cpp's line markers named them.
 *
 *     fooUser.c foo.h fooServer.c: foo.defs /usr/share/idlkit/include/mach/std_types.defs
 *     /usr/share/idlkit/include/mach/std_types.defs:            (with -MP)
 *
 * GNU MIG's -MD writes the outputs as targets into <base>-mig.d; gcc's -MF names the file,
 * -MT the targets, -MP adds a phony target for every prerequisite but the input, so that a
 * removed header does not break the build. Written to a temporary file and renamed.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idlc.h"

/* A name as make reads it: blanks and '#' escaped with a backslash, '$' doubled. */
static void
deps_put_name(struct strbuf *sb, const char *name)
{
	for (const char *p = name; *p != '\0'; p++) {
		if (*p == ' ' || *p == '\t' || *p == '#')
			strbuf_putc(sb, '\\');
		else if (*p == '$')
			strbuf_putc(sb, '$');
		strbuf_putc(sb, *p);
	}
}

/* Appends a word to the rule, breaking lines before they grow long. */
static void
deps_put_word(struct strbuf *sb, size_t *col, const char *name)
{
	size_t len = strlen(name);

	if (*col + len + 1 > 78 && *col > 1) {
		strbuf_puts(sb, " \\\n ");
		*col = 1;
	}
	strbuf_putc(sb, ' ');
	deps_put_name(sb, name);
	*col += len + 1;
}

static int
deps_write_file(struct idlc_ctx *ctx, const char *path, const struct strbuf *text)
{
	struct idlc_loc loc = { NULL, 0, 0 };
	struct stat st;
	char *tmp = NULL;
	int fd, saved;
	size_t off = 0;

	/* As outputs are: standard output, links, devices and FIFOs in place (output.c). */
	if (strcmp(path, "/dev/stdout") == 0)
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	else if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		fd = open(path,
			  O_WRONLY | O_CLOEXEC |
				  (stat(path, &st) == 0 && S_ISREG(st.st_mode) ? O_TRUNC : 0));
	else if ((tmp = idlc_printf(ctx, "%s.tmpXXXXXX", path)) == NULL)
		return -1;
	else if ((fd = mkstemp(tmp)) >= 0)
		(void)fchmod(fd, 0644);
	if (fd < 0) {
		idlc_error(ctx, loc, "cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	while (off < text->len) {
		ssize_t w = write(fd, strbuf_str(text) + off, text->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			saved = errno;
			close(fd);
			if (tmp != NULL)
				unlink(tmp);
			idlc_error(ctx, loc, "cannot write '%s': %s", path, strerror(saved));
			return -1;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0 || (tmp != NULL && rename(tmp, path) != 0)) {
		saved = errno;
		if (tmp != NULL)
			unlink(tmp);
		idlc_error(ctx, loc, "cannot write '%s': %s", path, strerror(saved));
		return -1;
	}
	return 0;
}

int
idlc_write_deps(struct idlc_ctx *ctx, const struct idlc_deps *d)
{
	struct strbuf sb = STRBUF_INIT;
	const char *const *files;
	size_t nfiles = idlc_input_files(ctx, &files);
	size_t col = 0, ntargets = 0, i;
	const char *path;
	int rc;

	if (idlc_error_count(ctx) != 0)
		return (int)idlc_error_count(ctx);
	/* -MT targets go in as written, as gcc puts them. */
	for (i = 0; i < d->ntargets; i++, ntargets++) {
		if (ntargets != 0)
			strbuf_putc(&sb, ' ');
		strbuf_puts(&sb, d->targets[i]);
		col += strlen(d->targets[i]) + 1;
	}
	for (i = 0; d->ntargets == 0 && i < IDLC_OUT_COUNT; i++) {
		path = idlc_output_path(ctx, (enum idlc_output)i);
		if (path == NULL)
			continue;
		if (ntargets++ != 0)
			strbuf_putc(&sb, ' ');
		deps_put_name(&sb, path);
		col += strlen(path) + 1;
	}
	strbuf_putc(&sb, ':');
	col++;
	for (i = 0; i < nfiles; i++)
		deps_put_word(&sb, &col, files[i]);
	strbuf_putc(&sb, '\n');
	/* The input is the first file; the phony targets are for what it includes. */
	for (i = 1; d->phony && i < nfiles; i++) {
		strbuf_putc(&sb, '\n');
		deps_put_name(&sb, files[i]);
		strbuf_puts(&sb, ":\n");
	}
	if (sb.failed)
		idlc_error(ctx, (struct idlc_loc){ NULL, 0, 0 }, "out of memory");
	else if (ntargets == 0)
		idlc_error(ctx, (struct idlc_loc){ NULL, 0, 0 },
			   "no output is written, so the dependency file would have no target "
			   "(give one with -MT)");
	else
		deps_write_file(ctx, d->file, &sb);
	strbuf_fini(&sb);
	rc = (int)idlc_error_count(ctx);
	return rc;
}
