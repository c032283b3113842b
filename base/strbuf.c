/* strbuf.c - the one string builder (see strbuf.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

void
strbuf_init(struct strbuf *sb)
{
	sb->data = NULL;
	sb->len = 0;
	sb->cap = 0;
	sb->failed = false;
}

void
strbuf_fini(struct strbuf *sb)
{
	free(sb->data);
	strbuf_init(sb);
}

void
strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->data != NULL)
		sb->data[0] = '\0';
}

/* Makes room for `more` bytes plus the NUL. Returns false (and marks the buffer failed) when
 * the size would overflow or memory runs out. */
static bool
strbuf_grow(struct strbuf *sb, size_t more)
{
	size_t need, cap;
	char *p;

	if (sb->failed)
		return false;
	if (more > (size_t)-1 - sb->len - 1) {
		sb->failed = true;
		return false;
	}
	need = sb->len + more + 1;
	if (need <= sb->cap)
		return true;
	cap = sb->cap != 0 ? sb->cap : 64;
	while (cap < need)
		cap = cap > (size_t)-1 / 2 ? need : cap * 2;
	p = realloc(sb->data, cap);
	if (p == NULL) {
		sb->failed = true;
		return false;
	}
	sb->data = p;
	sb->cap = cap;
	return true;
}

void
strbuf_append(struct strbuf *sb, const void *data, size_t len)
{
	if (!strbuf_grow(sb, len))
		return;
	if (len != 0)
		memcpy(sb->data + sb->len, data, len);
	sb->len += len;
	sb->data[sb->len] = '\0';
}

void
strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, s, strlen(s));
}

void
strbuf_putc(struct strbuf *sb, char c)
{
	strbuf_append(sb, &c, 1);
}

/* Formats into the room the buffer already has, and only when the text does not fit there
 * grows it and formats again: a number or a name, what the emitters and the message printer
 * append most, costs one vsnprintf. */
void
strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	size_t room = sb->data != NULL && !sb->failed ? sb->cap - sb->len : 0;
	va_list ap2;
	int n;

	if (sb->failed)
		return;
	va_copy(ap2, ap);
	n = vsnprintf(room != 0 ? sb->data + sb->len : NULL, room, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		sb->failed = true;
		return;
	}
	if ((size_t)n >= room) {
		if (!strbuf_grow(sb, (size_t)n)) {
			if (room != 0)
				sb->data[sb->len] = '\0'; /* what did not fit is not kept */
			return;
		}
		vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	}
	sb->len += (size_t)n;
}

void
strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

const char *
strbuf_str(const struct strbuf *sb)
{
	return sb->data != NULL ? sb->data : "";
}

char *
strbuf_detach(struct strbuf *sb)
{
	char *p = sb->data;

	if (sb->failed) {
		strbuf_fini(sb);
		return NULL;
	}
	if (p == NULL)
		p = calloc(1, 1);
	strbuf_init(sb);
	return p;
}
