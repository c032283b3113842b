/*
 * strbuf.h - the one string builder of the compiler, the runtime and the tools.
 *
 * A strbuf owns a heap buffer that is always NUL-terminated. Appending never fails for the
 * caller: on allocation failure the buffer enters a sticky failed state (sb->failed), further
 * appends are ignored, and the owner checks it once at the end. This keeps the emitters and
 * the message printer free of error plumbing on every line while still never writing a
 * truncated file, or returning a truncated description, silently.
 *
 * It lives in base/, which belongs to no part: libidlc and libidlrt each compile it into
 * themselves (libidlrt exports only idl_ names, so its copy stays inside the library).
 */
#ifndef IDL_BASE_STRBUF_H
#define IDL_BASE_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *data; /* NUL-terminated; NULL until the first append */
	size_t len; /* bytes before the NUL */
	size_t cap;
	bool failed; /* an allocation failed; contents are incomplete */
};

#define STRBUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0, false                                                                  \
	}

void strbuf_init(struct strbuf *sb);
/* Frees the buffer and returns sb to the initial state. */
void strbuf_fini(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb); /* len = 0, keeps the allocation */
void strbuf_append(struct strbuf *sb, const void *data, size_t len);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putc(struct strbuf *sb, char c);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
/* The contents ("" when empty); owned by sb. */
const char *strbuf_str(const struct strbuf *sb);
/* Hands the buffer to the caller (free() it) and resets sb; NULL if the buffer failed. */
char *strbuf_detach(struct strbuf *sb);

#endif /* IDL_BASE_STRBUF_H */
