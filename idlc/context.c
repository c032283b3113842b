/*
 * context.c - the compiler's one context: options, the arena every node lives in, and the
 * entry points that run the front end (cpp, lexer and parser, sema).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front.h"

/*
 * The arena: a list of chunks, each a header followed by its bytes. Allocations are rounded
 * up to the strictest alignment, so any node type can live anywhere in a chunk. Nodes are
 * never freed one by one, which is what lets the parser drop partial nodes on errors.
 */
#define ARENA_ALIGN alignof(max_align_t)
#define ARENA_CHUNK 65536

struct idlc_chunk {
	struct idlc_chunk *next;
	size_t size; /* usable bytes after the header */
	size_t used;
	alignas(max_align_t) unsigned char data[];
};

/* A file name seen in a line marker, kept once so locations can share it. */
struct idlc_fname {
	struct idlc_fname *next;
	const char *name;
	size_t len;
};

static void
ctx_out_of_memory(struct idlc_ctx *ctx)
{
	if (!ctx->oom_reported) {
		ctx->oom_reported = true;
		idlc_error(ctx, (struct idlc_loc){ NULL, 0, 0 }, "out of memory");
	}
	/* Inside the front end nothing checks for NULL: unwind to the stage's entry point. */
	if (ctx->escape != NULL)
		longjmp(*ctx->escape, 1);
}

void *
idlc_alloc(struct idlc_ctx *ctx, size_t size)
{
	struct idlc_chunk *c = ctx->chunks;
	size_t need, csize;
	void *p;

	if (size > SIZE_MAX - ARENA_ALIGN) {
		ctx_out_of_memory(ctx);
		return NULL;
	}
	need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (need == 0)
		need = ARENA_ALIGN;
	if (c == NULL || need > c->size - c->used) {
		csize = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		if (csize > SIZE_MAX - sizeof *c)
			c = NULL;
		else
			c = malloc(sizeof *c + csize);
		if (c == NULL) {
			ctx_out_of_memory(ctx);
			return NULL;
		}
		c->size = csize;
		c->used = 0;
		/* A big one-off allocation goes behind the current chunk, so the free space
		 * left in the current one is still used. */
		if (ctx->chunks != NULL && csize > ARENA_CHUNK) {
			c->next = ctx->chunks->next;
			ctx->chunks->next = c;
		} else {
			c->next = ctx->chunks;
			ctx->chunks = c;
		}
	}
	p = c->data + c->used;
	c->used += need;
	memset(p, 0, need);
	return p;
}

char *
idlc_strndup(struct idlc_ctx *ctx, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX) {
		ctx_out_of_memory(ctx);
		return NULL;
	}
	p = idlc_alloc(ctx, n + 1);
	if (p != NULL) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *
idlc_strdup(struct idlc_ctx *ctx, const char *s)
{
	return idlc_strndup(ctx, s, strlen(s));
}

char *
idlc_printf(struct idlc_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		ctx_out_of_memory(ctx);
		return NULL;
	}
	p = idlc_alloc(ctx, (size_t)n + 1);
	if (p == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

const char *
idlc_intern_file(struct idlc_ctx *ctx, const char *name, size_t len)
{
	struct idlc_fname *f;

	for (f = ctx->fnames; f != NULL; f = f->next)
		if (f->len == len && memcmp(f->name, name, len) == 0)
			return f->name;
	f = idlc_alloc(ctx, sizeof *f);
	if (f == NULL)
		return "?";
	f->name = idlc_strndup(ctx, name, len);
	if (f->name == NULL)
		return "?";
	f->len = len;
	f->next = ctx->fnames;
	ctx->fnames = f;
	return f->name;
}

void
idlc_note_file(struct idlc_ctx *ctx, const char *name)
{
	const char **grown;
	size_t i;

	/* cpp's own pseudo-files are not files. */
	if (name[0] == '<' || name[0] == '\0')
		return;
	for (i = 0; i < ctx->nfiles; i++)
		if (ctx->files[i] == name)
			return;
	if (ctx->nfiles == ctx->files_cap) {
		ctx->files_cap = ctx->files_cap != 0 ? ctx->files_cap * 2 : 16;
		grown = idlc_alloc(ctx, ctx->files_cap * sizeof *grown);
		if (grown == NULL)
			return;
		if (ctx->nfiles != 0)
			memcpy(grown, ctx->files, ctx->nfiles * sizeof *grown);
		ctx->files = grown;
	}
	ctx->files[ctx->nfiles++] = name;
}

size_t
idlc_input_files(const struct idlc_ctx *ctx, const char *const **files)
{
	*files = ctx->files;
	return ctx->nfiles;
}

struct idlc_stmt *
idlc_stmt_new(struct idlc_ctx *ctx, enum idlc_stmt_kind kind, struct idlc_loc loc)
{
	struct idlc_stmt *st = idlc_alloc(ctx, sizeof *st);

	if (st == NULL)
		return NULL;
	st->kind = kind;
	st->loc = loc;
	*ctx->stmts_tail = st;
	ctx->stmts_tail = &st->next;
	return st;
}

/* Copies a string the caller owns into the arena (NULL stays NULL). */
static const char *
ctx_keep(struct idlc_ctx *ctx, const char *s)
{
	return s != NULL ? idlc_strdup(ctx, s) : NULL;
}

/* Copies the options and reads the built-ins; false when memory ran out. */
static bool
ctx_setup(struct idlc_ctx *ctx, const struct idlc_options *opts)
{
	jmp_buf escape;
	const char **args;
	size_t i;

	if (setjmp(escape) != 0) {
		ctx->escape = NULL;
		return false;
	}
	ctx->escape = &escape;
	for (i = 0; i < IDLC_OUT_COUNT; i++)
		ctx->opts.out[i] = ctx_keep(ctx, ctx->opts.out[i]);
	ctx->opts.prefix = ctx_keep(ctx, ctx->opts.prefix);
	ctx->opts.subrprefix = ctx_keep(ctx, ctx->opts.subrprefix);
	ctx->opts.cpp = ctx_keep(ctx, ctx->opts.cpp);
	ctx->opts.include_dir = ctx_keep(ctx, ctx->opts.include_dir);
	ctx->opts.version =
		ctx_keep(ctx, ctx->opts.version != NULL ? ctx->opts.version : PACKAGE_VERSION);
	if (ctx->opts.ncpp_args > SIZE_MAX / sizeof *args - 1)
		ctx_out_of_memory(ctx);
	args = idlc_alloc(ctx, (ctx->opts.ncpp_args + 1) * sizeof *args);
	for (i = 0; i < ctx->opts.ncpp_args; i++)
		args[i] = ctx_keep(ctx, opts->cpp_args[i]);
	ctx->opts.cpp_args = args;

	ctx->module.userprefix = "";
	ctx->module.serverprefix = "";
	ctx->module.input_name = "<none>";
	ctx->builtin_file = idlc_intern_file(ctx, "<built-in>", strlen("<built-in>"));
	ctx->escape = NULL;
	idlc_types_init(ctx);
	ctx->input_parsed = false; /* the prelude is not the input */
	return true;
}

struct idlc_ctx *
idlc_create(const struct idlc_options *opts, idlc_diag_fn sink, void *sink_data)
{
	struct idlc_ctx *ctx = calloc(1, sizeof *ctx);

	if (ctx == NULL)
		return NULL;
	ctx->sink = sink;
	ctx->sink_data = sink_data;
	ctx->stmts_tail = &ctx->stmts;
	if (opts != NULL)
		ctx->opts = *opts;
	if (ctx->opts.max_errors == 0)
		ctx->opts.max_errors = 20;
	if (!ctx_setup(ctx, opts)) {
		idlc_destroy(ctx);
		return NULL;
	}
	return ctx;
}

void
idlc_destroy(struct idlc_ctx *ctx)
{
	struct idlc_chunk *c, *next;

	if (ctx == NULL)
		return;
	for (c = ctx->chunks; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(ctx);
}

int
idlc_parse_text(struct idlc_ctx *ctx, const char *name, const char *text, size_t len)
{
	jmp_buf escape;
	jmp_buf *volatile saved = ctx->escape;

	if (setjmp(escape) != 0) {
		ctx->escape = saved;
		return (int)(ctx->nerrors != 0 ? ctx->nerrors : 1);
	}
	ctx->escape = &escape;
	if (len > INT_MAX - 2) {
		idlc_error(ctx, (struct idlc_loc){ name, 0, 0 }, "input too large");
	} else {
		idlc_lex_parse(ctx, name, text, len);
		ctx->input_parsed = true;
	}
	ctx->escape = saved;
	return (int)ctx->nerrors;
}

int
idlc_parse_string(struct idlc_ctx *ctx, const char *name, const char *text, size_t len)
{
	if (ctx->nerrors != 0 || ctx->stopped)
		return (int)ctx->nerrors;
	ctx->module.input_name = idlc_intern_file(ctx, name, strlen(name));
	ctx->parsed_user = true;
	return idlc_parse_text(ctx, ctx->module.input_name, text, len);
}

int
idlc_parse_file(struct idlc_ctx *ctx, const char *path)
{
	struct strbuf out = STRBUF_INIT;
	const char *name;
	int rc;

	if (ctx->nerrors != 0 || ctx->stopped)
		return (int)ctx->nerrors;
	name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	ctx->module.input_name = idlc_intern_file(ctx, name, strlen(name));
	ctx->parsed_user = true;
	/* Say plainly that the input is missing, rather than through cpp's fatal error. */
	if (strcmp(path, "-") != 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			idlc_error(ctx, (struct idlc_loc){ name, 0, 0 },
				   "cannot read the input: %s", strerror(errno));
			return (int)ctx->nerrors;
		}
		close(fd);
	}
	if (idlc_cpp_run(ctx, path, &out) != 0) {
		strbuf_fini(&out);
		return (int)ctx->nerrors;
	}
	rc = idlc_parse_text(ctx, ctx->module.input_name, strbuf_str(&out), out.len);
	strbuf_fini(&out);
	return rc;
}

int
idlc_check(struct idlc_ctx *ctx)
{
	/* After syntax errors sema still checks the statements that parsed (the parser left
	 * placeholders for those it abandoned), so that one run reports every independent
	 * error; not when nothing was parsed (cpp failed, the input was unreadable) or the
	 * parse was cut short (out of memory). The middle end runs on an error-free module only. */
	if ((ctx->nerrors != 0 && !ctx->input_parsed) || ctx->stopped || ctx->checked)
		return (int)ctx->nerrors;
	ctx->checked = true;
	if (idlc_sema(ctx, &ctx->module) != 0 || ctx->nerrors != 0)
		return (int)ctx->nerrors;
	idlc_middle(ctx, &ctx->module);
	return (int)ctx->nerrors;
}

const struct idlc_module *
idlc_module(const struct idlc_ctx *ctx)
{
	return &ctx->module;
}

struct idlc_module *
idlc_module_mut(struct idlc_ctx *ctx)
{
	return &ctx->module;
}

unsigned
idlc_error_count(const struct idlc_ctx *ctx)
{
	return ctx->nerrors;
}

const struct idlc_options *
idlc_options(const struct idlc_ctx *ctx)
{
	return &ctx->opts;
}

bool
idlc_is_builtin(const struct idlc_ctx *ctx, struct idlc_loc loc)
{
	return loc.file != NULL && loc.file == ctx->builtin_file;
}
