/*
 * compat_out.c - the result of idlc -compat as text lines in gcc's format, or as one JSON
 * object for tools (the schema is in docs/evolution.md, "For tools: --json").
 */
#include <config.h>

#include <inttypes.h>

#include "idlc.h"

static const char *const out_levels[] = { "note", "warning", "error" };
static const char *const out_calls[] = { NULL, "ok", "MIG_BAD_ID", "IDL_ESIGNATURE" };

static void
out_loc(struct strbuf *sb, struct idlc_loc loc)
{
	if (loc.file == NULL)
		strbuf_puts(sb, "idlc");
	else if (loc.line <= 0)
		strbuf_puts(sb, loc.file);
	else if (loc.col <= 0)
		strbuf_printf(sb, "%s:%d", loc.file, loc.line);
	else
		strbuf_printf(sb, "%s:%d:%d", loc.file, loc.line, loc.col);
}

static const char *
out_plural(unsigned n)
{
	return n == 1 ? "" : "s";
}

void
idlc_compat_text(const struct idlc_compat *c, bool verbose, struct strbuf *out)
{
	unsigned lines = 0;

	for (size_t i = 0; i < c->nchanges; i++) {
		const struct idlc_change *ch = &c->changes[i];

		if (ch->level == IDLC_COMPAT_NOTE && !verbose)
			continue;
		out_loc(out, ch->loc);
		strbuf_printf(out, ": %s: %s\n", out_levels[ch->level], ch->message);
		lines++;
	}
	if (lines == 0 && !verbose)
		return;
	strbuf_printf(out, "%u breaking change%s, %u warning%s", c->errors, out_plural(c->errors),
		      c->warnings, out_plural(c->warnings));
	if (verbose)
		strbuf_printf(out, ", %u compatible change%s", c->notes, out_plural(c->notes));
	strbuf_putc(out, '\n');
}

/* A JSON string, or null. */
static void
out_json_str(struct strbuf *sb, const char *s)
{
	if (s == NULL) {
		strbuf_puts(sb, "null");
		return;
	}
	strbuf_putc(sb, '"');
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			strbuf_printf(sb, "\\%c", ch);
		else if (ch == '\n')
			strbuf_puts(sb, "\\n");
		else if (ch == '\t')
			strbuf_puts(sb, "\\t");
		else if (ch < 0x20)
			strbuf_printf(sb, "\\u%04x", ch);
		else
			strbuf_putc(sb, (char)ch);
	}
	strbuf_putc(sb, '"');
}

static void
out_json_id(struct strbuf *sb, int64_t id)
{
	if (id < 0)
		strbuf_puts(sb, "null");
	else
		strbuf_printf(sb, "%" PRId64, id);
}

void
idlc_compat_json(const struct idlc_compat *c, struct strbuf *out)
{
	strbuf_puts(out, "{\n  \"old\": { \"file\": ");
	out_json_str(out, c->old_file);
	strbuf_puts(out, ", \"subsystem\": ");
	out_json_str(out, c->old_name);
	strbuf_printf(out, ", \"base\": %" PRId32 " },\n  \"new\": { \"file\": ", c->old_base);
	out_json_str(out, c->new_file);
	strbuf_puts(out, ", \"subsystem\": ");
	out_json_str(out, c->new_name);
	strbuf_printf(out, ", \"base\": %" PRId32 " },\n", c->new_base);
	strbuf_printf(out, "  \"breaking\": %u,\n  \"warnings\": %u,\n  \"compatible\": %u,\n",
		      c->errors, c->warnings, c->notes);
	strbuf_puts(out, "  \"changes\": [");
	for (size_t i = 0; i < c->nchanges; i++) {
		const struct idlc_change *ch = &c->changes[i];

		strbuf_puts(out, i == 0 ? "\n    { \"level\": " : ",\n    { \"level\": ");
		out_json_str(out, out_levels[ch->level]);
		strbuf_puts(out, ", \"rule\": ");
		out_json_str(out, ch->rule);
		strbuf_puts(out, ", \"file\": ");
		out_json_str(out, ch->loc.file);
		strbuf_printf(out,
			      ", \"line\": %d, \"column\": %d,\n      \"routine\": ", ch->loc.line,
			      ch->loc.col);
		out_json_str(out, ch->routine);
		strbuf_puts(out, ", \"old_id\": ");
		out_json_id(out, ch->old_id);
		strbuf_puts(out, ", \"new_id\": ");
		out_json_id(out, ch->new_id);
		strbuf_puts(out, ",\n      \"old_client\": ");
		out_json_str(out, out_calls[ch->old_client]);
		strbuf_puts(out, ", \"new_client\": ");
		out_json_str(out, out_calls[ch->new_client]);
		strbuf_puts(out, ",\n      \"message\": ");
		out_json_str(out, ch->message);
		strbuf_puts(out, " }");
	}
	strbuf_puts(out, c->nchanges > 0 ? "\n  ]\n}\n" : "]\n}\n");
}
