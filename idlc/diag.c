/*
 * diag.c - diagnostics: one line each, "file:line:col: error: message", through the sink.
 *
 * Errors past the cap are counted but not printed; the first one past it prints a single
 * "too many errors" line and marks the context stopped, so the stages give up early
 * instead of burying the first, real error under cascades.
 */
#include <config.h>

#include <stdio.h>

#include "front.h"

static void
diag_emit(struct idlc_ctx *ctx, struct idlc_loc loc, const char *level, const char *suffix,
	  const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	if (loc.file == NULL)
		strbuf_puts(&sb, "idlc");
	else if (loc.line <= 0)
		strbuf_puts(&sb, loc.file);
	else if (loc.col <= 0)
		strbuf_printf(&sb, "%s:%d", loc.file, loc.line);
	else
		strbuf_printf(&sb, "%s:%d:%d", loc.file, loc.line, loc.col);
	strbuf_printf(&sb, ": %s: ", level);
	strbuf_vprintf(&sb, fmt, ap);
	strbuf_puts(&sb, suffix);
	strbuf_putc(&sb, '\n');
	if (sb.failed) {
		/* Still say something: the fixed text needs no memory. */
		if (ctx->sink != NULL)
			ctx->sink(ctx->sink_data, "idlc: error: out of memory\n");
		else
			fputs("idlc: error: out of memory\n", stderr);
	} else if (ctx->sink != NULL) {
		ctx->sink(ctx->sink_data, sb.data);
	} else {
		fputs(sb.data, stderr);
	}
	strbuf_fini(&sb);
}

static void
diag_fixed(struct idlc_ctx *ctx, struct idlc_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_emit(ctx, loc, "error", "", fmt, ap);
	va_end(ap);
}

/* Counts an error and tells whether it may be printed. */
static bool
diag_count_error(struct idlc_ctx *ctx, struct idlc_loc loc)
{
	ctx->nerrors++;
	if (ctx->stopped) {
		ctx->last_shown = false;
		return false;
	}
	if (ctx->nerrors > ctx->opts.max_errors) {
		ctx->stopped = true;
		ctx->last_shown = false;
		diag_fixed(ctx, loc, "too many errors; stopping");
		return false;
	}
	ctx->last_shown = true;
	return true;
}

void
idlc_error(struct idlc_ctx *ctx, struct idlc_loc loc, const char *fmt, ...)
{
	va_list ap;

	if (!diag_count_error(ctx, loc))
		return;
	va_start(ap, fmt);
	diag_emit(ctx, loc, "error", "", fmt, ap);
	va_end(ap);
}

void
idlc_warning(struct idlc_ctx *ctx, struct idlc_loc loc, const char *fmt, ...)
{
	va_list ap;

	if (ctx->opts.quiet) {
		ctx->last_shown = false;
		return;
	}
	if (ctx->opts.werror) {
		if (!diag_count_error(ctx, loc))
			return;
		va_start(ap, fmt);
		diag_emit(ctx, loc, "error", " [-Werror]", fmt, ap);
		va_end(ap);
		return;
	}
	ctx->nwarnings++;
	if (ctx->stopped) {
		ctx->last_shown = false;
		return;
	}
	ctx->last_shown = true;
	va_start(ap, fmt);
	diag_emit(ctx, loc, "warning", "", fmt, ap);
	va_end(ap);
}

void
idlc_note(struct idlc_ctx *ctx, struct idlc_loc loc, const char *fmt, ...)
{
	va_list ap;

	if (!ctx->last_shown)
		return;
	va_start(ap, fmt);
	diag_emit(ctx, loc, "note", "", fmt, ap);
	va_end(ap);
}

bool
idlc_diag_stopped(const struct idlc_ctx *ctx)
{
	return ctx->stopped;
}
