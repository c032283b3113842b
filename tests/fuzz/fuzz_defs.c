/*
 * fuzz_defs.c - libFuzzer target for idlc's front end and back end: the input is taken as
 * cpp's output (line markers and all), then lexed, parsed, checked, laid out, and every
 * output generated into memory. Anything but a clean return - a crash, a sanitizer report,
 * a leak - is a finding.
 *
 *     tests/fuzz/fuzz_defs -dict=tests/fuzz/defs.dict NEW_DIR tests/fuzz/corpus
 *
 * make check runs a short smoke run (tests/fuzz/smoke.sh); `make check-long-fuzz` a long
 * one.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "idlc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Diagnostics are formatted (that code is under test too) and dropped. */
static void
fuzz_sink(void *arg, const char *line)
{
	size_t *n = arg;

	*n += strlen(line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct idlc_options opts;
	struct idlc_ctx *ctx;
	struct strbuf out;
	size_t diag = 0;

	memset(&opts, 0, sizeof opts);
	opts.version = "fuzz";
	ctx = idlc_create(&opts, fuzz_sink, &diag);
	if (ctx == NULL)
		return 0;
	/* As idlc runs them: the checks after syntax errors too, on what parsed. */
	idlc_parse_string(ctx, "fuzz.defs", (const char *)data, size);
	if (idlc_check(ctx) == 0) {
		for (int i = 0; i < IDLC_OUT_COUNT; i++) {
			strbuf_init(&out);
			idlc_generate_to(ctx, (enum idlc_output)i, &out);
			strbuf_fini(&out);
		}
	}
	idlc_destroy(ctx);
	return 0;
}
