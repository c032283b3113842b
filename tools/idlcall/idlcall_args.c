/*
 * idlcall_args.c - arguments from the command line into wire form, and routine signatures
 * as text.
 *
 * Bounds are not checked here: idl_msg_pack() refuses a count above its bound with
 * MIG_ARRAY_TOO_LARGE, as a compiled client stub does, and idlcall reports that by name.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "idlcall.h"

/* The largest @FILE idlcall reads: no message may be larger (docs/generated-code.md). */
#define ARGS_FILE_MAX (64u * 1024u * 1024u)

static int args_fail(char *err, size_t errlen, const struct idl_arg_desc *a, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
args_fail(char *err, size_t errlen, const struct idl_arg_desc *a, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "argument %s: ", a->name);

	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *
args_wire_name(const struct idl_arg_desc *a)
{
	bool s = a->flags & IDL_ARGF_SIGNED;

	switch (a->wire_type) {
	case IDL_WT_INT8:
		return s ? "int8" : "uint8";
	case IDL_WT_INT16:
		return s ? "int16" : "uint16";
	case IDL_WT_INT32:
		return s ? "int32" : "uint32";
	case IDL_WT_INT64:
		return s ? "int64" : "uint64";
	case IDL_WT_BOOLEAN:
		return "boolean";
	case IDL_WT_CHAR:
		return "char";
	case IDL_WT_BYTE:
		return "byte";
	case IDL_WT_REAL32:
		return "real32";
	case IDL_WT_REAL64:
		return "real64";
	case IDL_WT_PORT:
		return "port";
	default:
		return "struct";
	}
}

char *
idlcall_signature(const struct idl_routine_desc *rt)
{
	static const char *const dirs[] = { "?",     "",	 "in",	      "out",
					    "inout", "waittime", "msgoption", "other" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool first = true;

	if (f == NULL)
		return NULL;
	fprintf(f, "%s %s(", rt->kind == IDL_RT_SIMPLEROUTINE ? "simpleroutine" : "routine",
		rt->name);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if (a->dir == IDL_DIR_REQUESTPORT || a->kind == IDL_ARG_IMPLICIT)
			continue;
		fprintf(f, "%s%s %s: ", first ? "" : ", ",
			a->dir < sizeof dirs / sizeof dirs[0] ? dirs[a->dir] : "?", a->name);
		first = false;
		switch (a->kind) {
		case IDL_ARG_CSTRING_FIXED:
			fprintf(f, "c_string[%" PRIu32 "]", a->count);
			break;
		case IDL_ARG_CSTRING_VAR:
			fprintf(f, "c_string[*:%" PRIu32 "]", a->count);
			break;
		case IDL_ARG_FIXED_ARRAY:
			fprintf(f, "%s[%" PRIu32 "]", args_wire_name(a), a->count);
			break;
		case IDL_ARG_VAR_ARRAY:
			fprintf(f, "%s[*:%" PRIu32 "]", args_wire_name(a), a->count);
			break;
		case IDL_ARG_OOL:
			/* Out of line: a fixed size, a bound of ports, or any size. */
			if (a->count != 0)
				fprintf(f, "^%s[%" PRIu32 "]", args_wire_name(a), a->count);
			else
				fprintf(f, "^%s[]", args_wire_name(a));
			break;
		default:
			fputs(args_wire_name(a), f);
			break;
		}
		if (a->wire_type == IDL_WT_STRUCT)
			fprintf(f, "(%" PRIu32 " bytes)", a->elem_size);
	}
	fputc(')', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Reads a whole file for @FILE. */
static int
args_file(const struct idl_arg_desc *a, const char *path, unsigned char **data, size_t *len,
	  char *err, size_t errlen)
{
	FILE *f = fopen(path, "rbe");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;

	if (f == NULL)
		return args_fail(err, errlen, a, "%s: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (n == cap) {
			unsigned char *nb;

			if (cap >= ARGS_FILE_MAX) {
				fclose(f);
				free(buf);
				return args_fail(err, errlen, a, "%s: larger than %u bytes", path,
						 ARGS_FILE_MAX);
			}
			cap = cap ? cap * 2 : 4096;
			if ((nb = realloc(buf, cap)) == NULL) {
				fclose(f);
				free(buf);
				return args_fail(err, errlen, a, "out of memory");
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return args_fail(err, errlen, a, "%s: read error", path);
	}
	fclose(f);
	*data = buf;
	*len = n;
	return 0;
}

static int
args_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Bytes from hex digits or @FILE. */
static int
args_bytes(const struct idl_arg_desc *a, const char *text, unsigned char **data, size_t *len,
	   char *err, size_t errlen)
{
	size_t n;
	unsigned char *buf;

	if (text[0] == '@')
		return args_file(a, text + 1, data, len, err, errlen);
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		text += 2;
	n = strlen(text);
	if (n % 2 != 0)
		return args_fail(err, errlen, a, "'%s': an odd number of hex digits", text);
	if ((buf = malloc(n / 2 + 1)) == NULL)
		return args_fail(err, errlen, a, "out of memory");
	for (size_t i = 0; i < n / 2; i++) {
		int hi = args_hexval(text[2 * i]), lo = args_hexval(text[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(buf);
			return args_fail(err, errlen, a, "'%s' is not hex digits or @FILE", text);
		}
		buf[i] = (unsigned char)(hi << 4 | lo);
	}
	*data = buf;
	*len = n / 2;
	return 0;
}

/* One element (a scalar, or an element of a list) into `out` (elem_size bytes). */
static int
args_elem(const struct idl_arg_desc *a, const char *text, unsigned char *out, char *err,
	  size_t errlen)
{
	bool sgn = a->flags & IDL_ARGF_SIGNED;
	char *end = NULL;

	errno = 0;
	switch (a->wire_type) {
	case IDL_WT_INT8:
	case IDL_WT_INT16:
	case IDL_WT_INT32:
	case IDL_WT_INT64: {
		unsigned bits = a->elem_size * 8;

		if (sgn) {
			long long v = strtoll(text, &end, 0);
			long long lim = bits >= 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;

			if (end == text || *end != '\0' || errno == ERANGE || v > lim ||
			    v < -lim - 1)
				break;
			if (a->elem_size == 1) {
				int8_t x = (int8_t)v;

				memcpy(out, &x, 1);
			} else if (a->elem_size == 2) {
				int16_t x = (int16_t)v;

				memcpy(out, &x, 2);
			} else if (a->elem_size == 4) {
				int32_t x = (int32_t)v;

				memcpy(out, &x, 4);
			} else {
				int64_t x = v;

				memcpy(out, &x, 8);
			}
			return 0;
		} else {
			unsigned long long v = strtoull(text, &end, 0);
			unsigned long long lim = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;

			if (end == text || *end != '\0' || errno == ERANGE || v > lim ||
			    strchr(text, '-') != NULL)
				break;
			if (a->elem_size == 1) {
				uint8_t x = (uint8_t)v;

				memcpy(out, &x, 1);
			} else if (a->elem_size == 2) {
				uint16_t x = (uint16_t)v;

				memcpy(out, &x, 2);
			} else if (a->elem_size == 4) {
				uint32_t x = (uint32_t)v;

				memcpy(out, &x, 4);
			} else {
				uint64_t x = v;

				memcpy(out, &x, 8);
			}
			return 0;
		}
	}
	case IDL_WT_BOOLEAN: {
		int32_t v;

		if (strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0)
			v = 1;
		else if (strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0)
			v = 0;
		else
			break;
		memcpy(out, &v, 4);
		return 0;
	}
	case IDL_WT_CHAR:
		if (strlen(text) != 1)
			return args_fail(err, errlen, a, "'%s' is not one character", text);
		out[0] = (unsigned char)text[0];
		return 0;
	case IDL_WT_BYTE: {
		unsigned long v = strtoul(text, &end, 0);

		if (end == text || *end != '\0' || v > 255 || strchr(text, '-') != NULL)
			break;
		out[0] = (unsigned char)v;
		return 0;
	}
	case IDL_WT_REAL32: {
		float v = strtof(text, &end);

		if (end == text || *end != '\0')
			break;
		memcpy(out, &v, 4);
		return 0;
	}
	case IDL_WT_REAL64: {
		double v = strtod(text, &end);

		if (end == text || *end != '\0')
			break;
		memcpy(out, &v, 8);
		return 0;
	}
	default: {
		unsigned char *b;
		size_t n;

		if (args_bytes(a, text, &b, &n, err, errlen) != 0)
			return -1;
		if (n != a->elem_size) {
			free(b);
			return args_fail(err, errlen, a, "a record of %" PRIu32 " bytes, not %zu",
					 a->elem_size, n);
		}
		memcpy(out, b, n);
		free(b);
		return 0;
	}
	}
	return args_fail(err, errlen, a, "'%s' is not a valid %s", text, args_wire_name(a));
}

/* A list "[1, 2, 3]" (the brackets may be left out) into elements. */
static int
args_list(const struct idl_arg_desc *a, const char *text, void **data, uint32_t *count, char *err,
	  size_t errlen)
{
	size_t len = strlen(text), n = 0, cap = 0;
	char *copy, *p, *tok, *save = NULL;
	unsigned char *buf = NULL;

	if ((copy = strdup(text)) == NULL)
		return args_fail(err, errlen, a, "out of memory");
	p = copy;
	if (len >= 1 && p[0] == '[') {
		if (p[len - 1] != ']') {
			free(copy);
			return args_fail(err, errlen, a, "'%s': a list ends with ']'", text);
		}
		p[len - 1] = '\0';
		p++;
	}
	for (tok = strtok_r(p, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *e;

		while (*tok == ' ' || *tok == '\t')
			tok++;
		for (e = tok + strlen(tok); e > tok && (e[-1] == ' ' || e[-1] == '\t'); e--)
			e[-1] = '\0';
		if (n == cap) {
			unsigned char *nb;

			cap = cap ? cap * 2 : 16;
			if (cap > ARGS_FILE_MAX / a->elem_size ||
			    (nb = realloc(buf, cap * a->elem_size)) == NULL) {
				free(buf);
				free(copy);
				return args_fail(err, errlen, a, "too many elements");
			}
			buf = nb;
		}
		if (args_elem(a, tok, buf + n * a->elem_size, err, errlen) != 0) {
			free(buf);
			free(copy);
			return -1;
		}
		n++;
	}
	free(copy);
	*data = buf;
	*count = (uint32_t)n;
	return 0;
}

/* Elements given as bytes (hex or @FILE): as many whole elements as the bytes make. */
static int
args_elements(const struct idl_arg_desc *a, const char *text, void **data, uint32_t *count,
	      char *err, size_t errlen)
{
	unsigned char *b;
	size_t n;

	if (args_bytes(a, text, &b, &n, err, errlen) != 0)
		return -1;
	if (n % a->elem_size != 0) {
		free(b);
		return args_fail(err, errlen, a, "%zu bytes are not whole elements of %" PRIu32, n,
				 a->elem_size);
	}
	*data = b;
	*count = (uint32_t)(n / a->elem_size);
	return 0;
}

/* Text for chars and strings: the text itself, or @FILE for a file's text; a string gets
 * its NUL, and so may contain none. */
static int
args_text(const struct idl_arg_desc *a, const char *text, bool nul, void **data, uint32_t *count,
	  char *err, size_t errlen)
{
	unsigned char *b;
	size_t n;

	if (text[0] != '@') {
		if ((*data = strdup(text)) == NULL)
			return args_fail(err, errlen, a, "out of memory");
		*count = (uint32_t)strlen(text) + (nul ? 1 : 0);
		return 0;
	}
	if (args_file(a, text + 1, &b, &n, err, errlen) != 0)
		return -1;
	if (nul && memchr(b, '\0', n) != NULL) {
		free(b);
		return args_fail(err, errlen, a, "%s: a string cannot hold a NUL byte", text + 1);
	}
	if (nul) {
		unsigned char *nb = realloc(b, n + 1);

		if (nb == NULL) {
			free(b);
			return args_fail(err, errlen, a, "out of memory");
		}
		b = nb;
		b[n++] = '\0';
	}
	*data = b;
	*count = (uint32_t)n;
	return 0;
}

int
idlcall_parse_arg(const struct idl_arg_desc *a, const char *text, void **data, uint32_t *count,
		  char *err, size_t errlen)
{
	bool bytes = a->wire_type == IDL_WT_BYTE || a->wire_type == IDL_WT_STRUCT;
	unsigned char *b;

	*data = NULL;
	*count = 0;
	switch (a->kind) {
	case IDL_ARG_SCALAR:
		if ((b = calloc(1, a->elem_size)) == NULL)
			return args_fail(err, errlen, a, "out of memory");
		if (args_elem(a, text, b, err, errlen) != 0) {
			free(b);
			return -1;
		}
		*data = b;
		*count = 1;
		return 0;
	case IDL_ARG_CSTRING_FIXED:
	case IDL_ARG_CSTRING_VAR:
		/* The string travels with its NUL. */
		return args_text(a, text, true, data, count, err, errlen);
	case IDL_ARG_FIXED_ARRAY:
	case IDL_ARG_VAR_ARRAY:
		if (a->wire_type == IDL_WT_CHAR && a->elem_size == 1)
			return args_text(a, text, false, data, count, err, errlen);
		if (bytes)
			return args_elements(a, text, data, count, err, errlen);
		if (args_list(a, text, data, count, err, errlen) != 0)
			return -1;
		if (a->kind == IDL_ARG_FIXED_ARRAY && *count != a->count && *count <= a->count) {
			free(*data);
			*data = NULL;
			return args_fail(err, errlen, a, "%" PRIu32 " elements, not %" PRIu32,
					 a->count, *count);
		}
		return 0;
	case IDL_ARG_OOL:
		if (a->wire_type == IDL_WT_PORT)
			break; /* ports are opened by the caller (idlcall.c) */
		/* Out-of-line data: bytes (chars too) as hex or @FILE, other elements as a
		 * list; a fixed size is filled up with zeroes. */
		if (bytes || a->wire_type == IDL_WT_CHAR) {
			if (args_elements(a, text, data, count, err, errlen) != 0)
				return -1;
		} else if (args_list(a, text, data, count, err, errlen) != 0) {
			return -1;
		}
		if (a->count != 0 && *count > a->count) {
			free(*data);
			*data = NULL;
			return args_fail(err, errlen, a, "%" PRIu32 " elements, more than %" PRIu32,
					 *count, a->count);
		}
		return 0;
	default:
		break;
	}
	return args_fail(err, errlen, a, "idlcall cannot read a %s argument from text",
			 a->kind == IDL_ARG_PORT ? "port" : "special");
}
