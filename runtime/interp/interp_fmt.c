/*
 * interp_fmt.c - the arguments of a message as text, for idlcall's output and trace lines
 * (idl_msg_describe()).
 *
 * Only a message that idl_msg_check() accepts is decoded, so every offset and count used
 * here has been checked against the message's length; anything else is "<malformed>".
 * Descriptors point at memory and ports the runtime made when the message arrived (or that
 * the sender still holds), so their data is read, and a port asked its address, only while
 * the message is whole: trace lines (IDL_DESCRIBE_BRIEF) show a port as "<port>" without
 * touching it, and no bytes of data marked dealloc, which a send may already have freed.
 *
 * The interp room: it knows core and ool (a port only through the head's address), and
 * nothing of the client, the server or tracing.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ool/ool.h"
#include "interp/interp_desc.h"

/* IDL_DESCRIBE_BRIEF: elements of an array and characters of a string shown. */
#define FMT_BRIEF_ELEMS 16u
#define FMT_BRIEF_CHARS 64u
#define FMT_BRIEF_BYTES 32u

/* One character inside a quoted string, escaped for C or for JSON. */
static void
fmt_char(struct strbuf *sb, unsigned char c, bool json)
{
	switch (c) {
	case '"':
		strbuf_puts(sb, "\\\"");
		return;
	case '\\':
		strbuf_puts(sb, "\\\\");
		return;
	case '\n':
		strbuf_puts(sb, "\\n");
		return;
	case '\t':
		strbuf_puts(sb, "\\t");
		return;
	case '\r':
		strbuf_puts(sb, "\\r");
		return;
	default:
		break;
	}
	if (c >= 0x20 && c < 0x7f)
		strbuf_append(sb, (const char *)&c, 1);
	else if (json)
		strbuf_printf(sb, "\\u%04x", c); /* bytes above 0x7f read as Latin-1 */
	else
		strbuf_printf(sb, "\\%03o", c);
}

static void
fmt_string(struct strbuf *sb, const unsigned char *s, size_t n, unsigned flags)
{
	bool json = flags & IDL_DESCRIBE_JSON;
	bool cut = (flags & IDL_DESCRIBE_BRIEF) && n > FMT_BRIEF_CHARS;

	strbuf_puts(sb, "\"");
	for (size_t i = 0; i < (cut ? FMT_BRIEF_CHARS : n); i++)
		fmt_char(sb, s[i], json);
	strbuf_puts(sb, "\"");
	if (cut && !json)
		strbuf_puts(sb, "..."); /* JSON stays valid: a cut string just ends */
}

/* Bytes in hex: "0x0a0b" as text (empty: "0x"), which idlcall reads back as it is; a JSON
 * string of the digits; inside "<ool N bytes: ...>" the digits alone, the label saying what
 * they are. */
static void
fmt_hex(struct strbuf *sb, const unsigned char *p, size_t n, unsigned flags, bool bare)
{
	bool cut = (flags & IDL_DESCRIBE_BRIEF) && n > FMT_BRIEF_BYTES;

	if (flags & IDL_DESCRIBE_JSON)
		strbuf_puts(sb, "\"");
	else if (!bare)
		strbuf_puts(sb, "0x");
	for (size_t i = 0; i < (cut ? FMT_BRIEF_BYTES : n); i++)
		strbuf_printf(sb, "%02x", p[i]);
	if (cut && !(flags & IDL_DESCRIBE_JSON))
		strbuf_puts(sb, "...");
	if (flags & IDL_DESCRIBE_JSON)
		strbuf_puts(sb, "\"");
}

/* A real in the shortest form that reads back as the same value. */
static void
fmt_real(struct strbuf *sb, double d, bool single, bool json)
{
	char buf[48];

	if (!isfinite(d)) {
		const char *w = isnan(d) ? "nan" : d > 0 ? "inf" : "-inf";

		strbuf_printf(sb, json ? "\"%s\"" : "%s", w);
		return;
	}
	for (int prec = single ? 6 : 15; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, d);
		if (single ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d)
			break;
	}
	/* JSON and readers alike see a real: 2 prints as 2.0. */
	if (strpbrk(buf, ".eE") == NULL)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ".0");
	strbuf_puts(sb, buf);
}

/* One element that is a number, a boolean or a character. */
static void
fmt_elem(struct strbuf *sb, const struct idl_arg_desc *a, const unsigned char *p, unsigned flags)
{
	bool sgn = a->flags & IDL_ARGF_SIGNED;
	bool json = flags & IDL_DESCRIBE_JSON;
	union {
		int8_t i8;
		uint8_t u8;
		int16_t i16;
		uint16_t u16;
		int32_t i32;
		uint32_t u32;
		int64_t i64;
		uint64_t u64;
		float f;
		double d;
	} v;

	memcpy(&v, p, a->elem_size < sizeof v ? a->elem_size : sizeof v);
	switch (a->wire_type) {
	case IDL_WT_INT8:
		if (sgn)
			strbuf_printf(sb, "%d", v.i8);
		else
			strbuf_printf(sb, "%u", v.u8);
		return;
	case IDL_WT_INT16:
		if (sgn)
			strbuf_printf(sb, "%d", v.i16);
		else
			strbuf_printf(sb, "%u", v.u16);
		return;
	case IDL_WT_INT32:
		if (sgn)
			strbuf_printf(sb, "%" PRId32, v.i32);
		else
			strbuf_printf(sb, "%" PRIu32, v.u32);
		return;
	case IDL_WT_INT64:
		if (sgn)
			strbuf_printf(sb, "%" PRId64, v.i64);
		else
			strbuf_printf(sb, "%" PRIu64, v.u64);
		return;
	case IDL_WT_BOOLEAN:
		if (v.i32 == 0 || v.i32 == 1)
			strbuf_puts(sb, v.i32 ? "true" : "false");
		else
			strbuf_printf(sb, "%" PRId32, v.i32);
		return;
	case IDL_WT_CHAR:
		fmt_string(sb, p, 1, flags);
		return;
	case IDL_WT_BYTE:
		strbuf_printf(sb, "%u", v.u8);
		return;
	case IDL_WT_REAL32:
		fmt_real(sb, v.f, true, json);
		return;
	case IDL_WT_REAL64:
		fmt_real(sb, v.d, false, json);
		return;
	default:
		fmt_hex(sb, p, a->elem_size, flags, false);
		return;
	}
}

/* One argument's value, `count` elements at p (checked by idl_msg_check()). */
static void
fmt_value(struct strbuf *sb, const struct idl_arg_desc *a, const unsigned char *p, uint32_t count,
	  unsigned flags)
{
	size_t n;

	if (idl__dyn_is_string(a)) {
		/* Checked: a NUL lies within the count. */
		fmt_string(sb, p, strnlen((const char *)p, count), flags);
		return;
	}
	if (a->kind == IDL_ARG_SCALAR) {
		fmt_elem(sb, a, p, flags);
		return;
	}
	if (a->wire_type == IDL_WT_CHAR) {
		/* A fixed char array is padded with NULs; a variable one is exactly its count. */
		n = count;
		if (a->kind == IDL_ARG_FIXED_ARRAY)
			while (n > 0 && p[n - 1] == '\0')
				n--;
		fmt_string(sb, p, n, flags);
		return;
	}
	if (a->wire_type == IDL_WT_BYTE || a->wire_type == IDL_WT_STRUCT) {
		fmt_hex(sb, p, (size_t)count * a->elem_size, flags, false);
		return;
	}
	strbuf_puts(sb, "[");
	for (uint32_t i = 0; i < count; i++) {
		if ((flags & IDL_DESCRIBE_BRIEF) && i == FMT_BRIEF_ELEMS) {
			strbuf_puts(sb, (flags & IDL_DESCRIBE_JSON) ? "" : ",...");
			break;
		}
		if (i > 0)
			strbuf_puts(sb, (flags & IDL_DESCRIBE_JSON) ? ", " : ",");
		fmt_elem(sb, a, p + (size_t)i * a->elem_size, flags);
	}
	strbuf_puts(sb, "]");
}

/* One port: its address, or only that it is one (brief: it may be closed by now). */
static void
fmt_port(struct strbuf *sb, uint64_t addr, unsigned flags)
{
	idl_port_t port = (idl_port_t)(uintptr_t)addr;
	const char *where;
	bool json = flags & IDL_DESCRIBE_JSON;

	if (json)
		strbuf_puts(sb, "\"");
	if (port == IDL_PORT_NULL)
		strbuf_puts(sb, "<port null>");
	else if (flags & IDL_DESCRIBE_BRIEF)
		strbuf_puts(sb, "<port>");
	else if ((where = idl_port_address(port)) != NULL) {
		strbuf_puts(sb, "<port ");
		for (const char *c = where; *c != '\0'; c++)
			fmt_char(sb, (unsigned char)*c, json);
		strbuf_puts(sb, ">");
	} else
		strbuf_puts(sb, "<port>");
	if (json)
		strbuf_puts(sb, "\"");
}

/* A descriptor argument: data as its elements would be shown inline (bytes, chars and
 * records as hex), a port, or a list of ports. */
static void
fmt_desc(struct strbuf *sb, const struct idl_arg_desc *a, const unsigned char *p, uint32_t count,
	 unsigned flags)
{
	bool brief = flags & IDL_DESCRIBE_BRIEF, json = flags & IDL_DESCRIBE_JSON;
	const unsigned char *data;
	idl_desc_t d;

	memcpy(&d, p, sizeof d);
	data = (const unsigned char *)(uintptr_t)d.addr;
	if (a->kind == IDL_ARG_PORT) {
		fmt_port(sb, d.addr, flags);
		return;
	}
	if (brief && ((d.flags & IDL_DESCF_DEALLOC) || (data == NULL && count > 0))) {
		strbuf_printf(sb, json ? "\"<%s %" PRIu32 " %s>\"" : "<%s %" PRIu32 " %s>",
			      idl__dyn_is_ports(a) ? "ports" : "ool", d.size,
			      idl__dyn_is_ports(a) ? "ports" : "bytes");
		return;
	}
	if (idl__dyn_is_ports(a)) {
		strbuf_puts(sb, "[");
		for (uint32_t i = 0; i < count; i++) {
			idl_port_t port;

			if (brief && i == FMT_BRIEF_ELEMS) {
				strbuf_puts(sb, json ? "" : ",...");
				break;
			}
			memcpy(&port, data + (size_t)i * sizeof port, sizeof port);
			if (i > 0)
				strbuf_puts(sb, json ? ", " : ",");
			fmt_port(sb, (uint64_t)(uintptr_t)port, flags);
		}
		strbuf_puts(sb, "]");
		return;
	}
	if (brief && !json)
		strbuf_printf(sb, "<ool %" PRIu32 " bytes: ", d.size);
	if (a->wire_type == IDL_WT_CHAR || a->wire_type == IDL_WT_BYTE ||
	    a->wire_type == IDL_WT_STRUCT || a->elem_size == 0)
		fmt_hex(sb, data, d.size, flags, brief);
	else
		fmt_value(sb, a, data, count, flags);
	if (brief && !json)
		strbuf_puts(sb, ">");
}

void
idl__dyn_describe(struct strbuf *sb, const struct idl_routine_desc *rt, const idl_msg_header_t *msg,
		  size_t len, unsigned flags)
{
	struct idl_arg_span spans[UINT8_MAX + 1]; /* nargs is a uint8_t */
	int reply = (flags & IDL_DESCRIBE_REPLY) ? 1 : 0;
	bool first = true;
	int err = 0;

	if (rt == NULL || msg == NULL || (err = idl_msg_check(rt, msg, len, reply, spans)) != 0) {
		bool nd = rt != NULL && msg != NULL && err == IDL_ENOTSUP;

		if (flags & IDL_DESCRIBE_JSON)
			strbuf_puts(sb, nd ? "\"<not decoded>\": true" : "\"<malformed>\": true");
		else
			strbuf_puts(sb, nd ? "<not decoded>" : "<malformed>");
		return;
	}
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (!idl__dyn_travels(a, reply))
			continue;
		if (flags & IDL_DESCRIBE_JSON)
			strbuf_printf(sb, "%s\"%s\": ", first ? "" : ", ", a->name);
		else if (flags & IDL_DESCRIBE_LINES)
			strbuf_printf(sb, "%s = ", a->name);
		else
			strbuf_printf(sb, "%s%s=", first ? "" : " ", a->name);
		if (idl__dyn_is_desc(a))
			fmt_desc(sb, a, (const unsigned char *)msg + spans[i].off, spans[i].count,
				 flags);
		else
			fmt_value(sb, a, (const unsigned char *)msg + spans[i].off, spans[i].count,
				  flags);
		if ((flags & IDL_DESCRIBE_LINES) && !(flags & IDL_DESCRIBE_JSON))
			strbuf_puts(sb, "\n");
		first = false;
	}
}

char *
idl_msg_describe(const struct idl_routine_desc *rt, const idl_msg_header_t *msg, size_t len,
		 unsigned flags)
{
	struct strbuf sb = STRBUF_INIT;

	idl__dyn_describe(&sb, rt, msg, len, flags);
	return strbuf_detach(&sb);
}
