/*
 * output.c - which files are written, and writing them so that a failure leaves nothing.
 *
 * Every selected output is generated into memory first. Only when all of them were
 * generated without error is each written to a temporary file in its own directory, and
 * only when all of those were written are they renamed over their targets. Any failure
 * removes the temporaries, so a run either updates every output or none (up to a rename
 * failing half-way, which is reported).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"

static const char *const out_suffix[IDLC_OUT_COUNT] = {
	[IDLC_OUT_HEADER] = ".h",
	[IDLC_OUT_USER] = "User.c",
	[IDLC_OUT_SERVER] = "Server.c",
};

static const char *const out_option[IDLC_OUT_COUNT] = {
	[IDLC_OUT_HEADER] = "-header",
	[IDLC_OUT_USER] = "-user",
	[IDLC_OUT_SERVER] = "-server",
	[IDLC_OUT_SHEADER] = "-sheader",
	[IDLC_OUT_IHEADER] = "-iheader",
	[IDLC_OUT_LIST] = "-list",
	[IDLC_OUT_TYPES] = "-types",
	[IDLC_OUT_FUZZ] = "-fuzz",
	[IDLC_OUT_FUZZ_CLIENT] = "-fuzz-client",
};

/* Errors about files have no place in the interface: they name the file instead. */
static struct idlc_loc
out_loc(void)
{
	struct idlc_loc loc = { NULL, 0, 0 };

	return loc;
}

const char *
idlc_output_path(struct idlc_ctx *ctx, enum idlc_output which)
{
	const struct idlc_options *opts = idlc_options(ctx);
	const struct idlc_module *m = idlc_module(ctx);
	const char *name = opts->out[which];

	if (name != NULL)
		return strcmp(name, "/dev/null") == 0 ? NULL : name;
	/* Without -n, MIG writes the three main outputs under the subsystem's name. */
	if (opts->no_defaults || out_suffix[which] == NULL || m->subsystem == NULL)
		return NULL;
	return idlc_printf(ctx, "%s%s", m->subsystem, out_suffix[which]);
}

int
idlc_emit(struct idlc_ctx *ctx, const struct idlc_module *m, enum idlc_output which,
	  struct strbuf *out)
{
	unsigned before = idlc_error_count(ctx);
	struct emit_out o;

	if (m->subsystem == NULL) {
		idlc_error(ctx, out_loc(), "no subsystem statement: nothing to generate");
		return (int)(idlc_error_count(ctx) - before);
	}
	emit_init(&o, ctx, m, which, out);
	switch (which) {
	case IDLC_OUT_HEADER:
		emit_header(&o);
		break;
	case IDLC_OUT_USER:
		emit_user(&o);
		break;
	case IDLC_OUT_SERVER:
		emit_server(&o);
		break;
	case IDLC_OUT_SHEADER:
	case IDLC_OUT_IHEADER:
		emit_sheader(&o);
		break;
	case IDLC_OUT_LIST:
		emit_msgids(&o);
		break;
	case IDLC_OUT_TYPES:
		emit_types(&o);
		break;
	case IDLC_OUT_FUZZ:
		emit_fuzz(&o);
		break;
	case IDLC_OUT_FUZZ_CLIENT:
		emit_fuzz_client(&o);
		break;
	default:
		idlc_error(ctx, out_loc(), "unknown output %d", (int)which);
		break;
	}
	if (out->failed)
		idlc_error(ctx, out_loc(), "out of memory while generating %s",
			   out_option[which] != NULL ? out_option[which] + 1 : "output");
	return (int)(idlc_error_count(ctx) - before);
}

int
idlc_generate_to(struct idlc_ctx *ctx, enum idlc_output which, struct strbuf *out)
{
	if (idlc_error_count(ctx) > 0)
		return (int)idlc_error_count(ctx);
	if ((unsigned)which >= IDLC_OUT_COUNT) {
		idlc_error(ctx, out_loc(), "unknown output %d", (int)which);
		return (int)idlc_error_count(ctx);
	}
	idlc_emit(ctx, idlc_module(ctx), which, out);
	return (int)idlc_error_count(ctx);
}

/* One output in flight. */
struct out_file {
	const char *path; /* NULL: not written */
	struct strbuf text;
	char *tmp; /* the temporary, until renamed; NULL when none was made */
};

static bool
out_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Writes one output to its temporary (or in place). Returns false after an error. */
static bool
out_write(struct idlc_ctx *ctx, struct out_file *f)
{
	struct stat st;
	int fd, saved;

	/* /dev/stdout and /dev/stderr are our own descriptors, whatever they are (a file,
	 * a pipe). An existing symbolic link, device or FIFO is written in place: a rename
	 * would replace the link itself (/dev/stdout is one) or cannot replace the device. */
	if (strcmp(f->path, "/dev/stdout") == 0 || strcmp(f->path, "/dev/stderr") == 0) {
		fd = fcntl(strcmp(f->path, "/dev/stdout") == 0 ? STDOUT_FILENO : STDERR_FILENO,
			   F_DUPFD_CLOEXEC, 3);
	} else if (lstat(f->path, &st) == 0 && S_ISLNK(st.st_mode)) {
		fd = open(f->path,
			  O_WRONLY | O_CLOEXEC |
				  (stat(f->path, &st) == 0 && S_ISREG(st.st_mode) ? O_TRUNC : 0));
	} else if (lstat(f->path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		fd = open(f->path, O_WRONLY | O_CLOEXEC);
	} else {
		f->tmp = idlc_printf(ctx, "%s.tmpXXXXXX", f->path);
		if (f->tmp == NULL)
			return false;
		fd = mkstemp(f->tmp);
		if (fd < 0)
			f->tmp = NULL; /* nothing was created */
		else
			(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		/* Sources are world-readable, as a compiler's outputs usually are (mkstemp
		 * makes them 0600). */
		if (fd >= 0 && fchmod(fd, 0644) != 0) {
			saved = errno;
			close(fd);
			errno = saved;
			fd = -1;
		}
	}
	if (fd < 0) {
		idlc_error(ctx, out_loc(), "cannot create '%s': %s", f->path, strerror(errno));
		return false;
	}
	if (!out_write_all(fd, strbuf_str(&f->text), f->text.len)) {
		saved = errno;
		close(fd);
		idlc_error(ctx, out_loc(), "cannot write '%s': %s", f->path, strerror(saved));
		return false;
	}
	if (close(fd) != 0) {
		idlc_error(ctx, out_loc(), "cannot write '%s': %s", f->path, strerror(errno));
		return false;
	}
	return true;
}

static void
out_discard(struct out_file *files)
{
	for (int i = 0; i < IDLC_OUT_COUNT; i++)
		if (files[i].tmp != NULL) {
			unlink(files[i].tmp);
			files[i].tmp = NULL;
		}
}

int
idlc_generate(struct idlc_ctx *ctx)
{
	const struct idlc_module *m = idlc_module(ctx);
	struct out_file files[IDLC_OUT_COUNT];
	bool ok = true;
	int i, j;

	if (idlc_error_count(ctx) > 0)
		return (int)idlc_error_count(ctx);
	for (i = 0; i < IDLC_OUT_COUNT; i++) {
		files[i].path = idlc_output_path(ctx, (enum idlc_output)i);
		strbuf_init(&files[i].text);
		files[i].tmp = NULL;
	}
	/* Two outputs into one file would silently lose one of them. */
	for (i = 0; i < IDLC_OUT_COUNT && ok; i++)
		for (j = i + 1; j < IDLC_OUT_COUNT && ok; j++)
			if (files[i].path != NULL && files[j].path != NULL &&
			    strcmp(files[i].path, files[j].path) == 0) {
				idlc_error(ctx, out_loc(), "%s and %s both name '%s'",
					   out_option[i], out_option[j], files[i].path);
				ok = false;
			}
	for (i = 0; i < IDLC_OUT_COUNT && ok; i++)
		if (files[i].path != NULL &&
		    idlc_emit(ctx, m, (enum idlc_output)i, &files[i].text) != 0)
			ok = false;
	for (i = 0; i < IDLC_OUT_COUNT && ok; i++)
		if (files[i].path != NULL && !out_write(ctx, &files[i]))
			ok = false;
	for (i = 0; i < IDLC_OUT_COUNT && ok; i++) {
		if (files[i].tmp == NULL)
			continue;
		if (rename(files[i].tmp, files[i].path) != 0) {
			idlc_error(ctx, out_loc(), "cannot rename '%s' to '%s': %s", files[i].tmp,
				   files[i].path, strerror(errno));
			ok = false;
			break;
		}
		files[i].tmp = NULL;
	}
	out_discard(files);
	for (i = 0; i < IDLC_OUT_COUNT; i++)
		strbuf_fini(&files[i].text);
	return (int)idlc_error_count(ctx);
}
