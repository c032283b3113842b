/*
 * idlc.h - the compiler as a library: one context, no globals.
 *
 *     ctx = idlc_create(&opts, sink, sink_data);
 *     idlc_parse_file(ctx, "foo.defs");    (runs cpp, then lexer and parser)
 *     idlc_check(ctx);                     (sema, then the middle end: facts, layout and
 *                                           the descriptor table, middle.h)
 *     idlc_subsystem(ctx);                 (the descriptor table, for tools such as idlcall)
 *     idlc_generate(ctx);                  (emitters into temporaries, renamed on success)
 *     idlc_destroy(ctx);
 *
 * Each step returns 0, or the count of errors so far (> 0); later steps do nothing once an
 * error was reported, so a caller may run them all and look at the result of the last. All
 * diagnostics go through the sink, one complete line each ("foo.defs:3:7: error: ...\n").
 * Nothing is written when there are errors, and a failed write leaves no partial file.
 *
 * A context is used by one thread at a time; separate contexts are independent.
 */
#ifndef IDLC_IDLC_H
#define IDLC_IDLC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ast.h"
#include "strbuf.h"

struct idlc_ctx;

/* Receives one diagnostic line, NUL-terminated, ending in '\n'. */
typedef void (*idlc_diag_fn)(void *data, const char *line);

/* The outputs, as MIG names them. */
enum idlc_output {
	IDLC_OUT_HEADER = 0, /* -header: <sub>.h */
	IDLC_OUT_USER, /* -user: <sub>User.c */
	IDLC_OUT_SERVER, /* -server: <sub>Server.c */
	IDLC_OUT_SHEADER, /* -sheader: only when asked */
	IDLC_OUT_IHEADER, /* -iheader: only when asked */
	IDLC_OUT_LIST, /* -list: only when asked */
	IDLC_OUT_TYPES, /* -types: only when asked (the C typedefs of the declared types) */
	IDLC_OUT_FUZZ, /* -fuzz: only when asked (a libFuzzer harness for the server) */
	IDLC_OUT_FUZZ_CLIENT, /* -fuzz-client: only when asked (one for the client stubs) */
	IDLC_OUT_COUNT
};

struct idlc_options {
	/* Output file names; NULL: the default (subsystem-derived, or none for the ones only
	 * written when asked); "/dev/null": do not write. */
	const char *out[IDLC_OUT_COUNT];
	bool no_defaults; /* -n: write only the outputs named */
	const char *prefix; /* -prefix: prepended to user and server function names */
	const char *subrprefix; /* -subrprefix */
	bool no_async; /* -noasync: no asynchronous stubs (<routine>_async) */

	/* The preprocessor: argv-style command (NULL: "cpp"), extra arguments (-I, -D, -U ...),
	 * and whether to run it at all (false for in-memory input in tests and fuzzing). */
	const char *cpp;
	const char *const *cpp_args;
	size_t ncpp_args;
	bool no_stdinc; /* -nostdinc: skip idlkit's own include directory */
	const char *include_dir; /* idlkit's installed .defs directory; NULL: none */

	bool quiet; /* -q: no warnings */
	bool werror; /* warnings count as errors */
	unsigned max_errors; /* stop after this many errors; 0: 20 */
	const char *version; /* for the banner; NULL: PACKAGE_VERSION */
};

struct idlc_ctx *idlc_create(const struct idlc_options *opts, idlc_diag_fn sink, void *sink_data);
void idlc_destroy(struct idlc_ctx *ctx);

/* Preprocesses and parses a file ("-" reads stdin). */
int idlc_parse_file(struct idlc_ctx *ctx, const char *path);
/* Parses text as if it were cpp's output for a file called `name` (no cpp is run). */
int idlc_parse_string(struct idlc_ctx *ctx, const char *name, const char *text, size_t len);
/* Semantic checks, then the middle end; returns the number of errors so far. The checks run
 * after syntax errors too, on the statements that parsed (not when nothing was parsed), so
 * that one run reports every independent error; the middle end only on an error-free input. */
int idlc_check(struct idlc_ctx *ctx);
/* The descriptor table of the checked interface: the one idlc prints into <sub>User.c and
 * <sub>Server.c, row for row, signature hashes included (<idl/idl_subsystem.h>). NULL before
 * a successful idlc_check(). Its strings and arrays live in the context's arena: valid until
 * idlc_destroy(). */
const struct idl_subsystem *idlc_subsystem(const struct idlc_ctx *ctx);
/* Writes every output the options select. */
int idlc_generate(struct idlc_ctx *ctx);
/* Emits one output into memory (tests, the fuzzer). Returns 0 or an error count. */
int idlc_generate_to(struct idlc_ctx *ctx, enum idlc_output which, struct strbuf *out);

/* The files the input was made of, as cpp's line markers named them: the input first,
 * then every file it included, once each, in the order they were entered (for dependency
 * files). Valid until idlc_destroy(). */
size_t idlc_input_files(const struct idlc_ctx *ctx, const char *const **files);
/* The file an output is written to, or NULL when it is not written (after idlc_check()). */
const char *idlc_output_path(struct idlc_ctx *ctx, enum idlc_output which);

/* A make dependency file (after idlc_generate()): `targets` (or, when there are none,
 * every output written) depend on the input and every file it included; `phony` adds an
 * empty rule for each included file (gcc's -MP). Written to `file`. */
struct idlc_deps {
	const char *file;
	const char *const *targets;
	size_t ntargets;
	bool phony;
};
int idlc_write_deps(struct idlc_ctx *ctx, const struct idlc_deps *d);

/*
 * Comparing two versions of one interface (compat.c, compat_out.c; docs/evolution.md):
 *
 *     old = idlc_create(...); idlc_parse_file(old, "v1.defs"); idlc_check(old);
 *     new = idlc_create(...); idlc_parse_file(new, "v2.defs"); idlc_check(new);
 *     idlc_compat(old, new, &c);          (both checked without errors)
 *     idlc_compat_text(&c, verbose, &sb); or idlc_compat_json(&c, &sb);
 *
 * The comparison goes routine by routine, by message id, in both directions: old clients
 * against a new server, and new clients against an old server. Each difference is a change
 * of one level - compatible (a note), a warning, or breaking (an error) - with a stable rule
 * name, and says what each side's calls of the routine get from the hello (version 2, both
 * sides current): the verdicts the runtime reaches from the same descriptor tables.
 */
enum idlc_compat_level {
	IDLC_COMPAT_NOTE = 0, /* compatible */
	IDLC_COMPAT_WARNING = 1, /* works as the hello says, but was most likely not meant */
	IDLC_COMPAT_ERROR = 2, /* breaking */
};

/* What a client's call of a routine gets from the other side, after the hello. */
enum idlc_compat_call {
	IDLC_CALL_NONE = 0, /* the client has no such routine to call */
	IDLC_CALL_OK, /* the hello agrees: the call goes through */
	IDLC_CALL_BAD_ID, /* refused with MIG_BAD_ID: the other side has no routine there */
	IDLC_CALL_SIGNATURE, /* refused with IDL_ESIGNATURE: the signatures differ */
};

struct idlc_change {
	enum idlc_compat_level level;
	const char *rule; /* a stable name, e.g. "routine-added", "arg-retyped" */
	struct idlc_loc loc; /* in the new file; in the old one for what the new one lacks */
	const char *message; /* one sentence, no trailing period */
	const char *routine; /* the routine's name (the old one's when it is gone); NULL for
			      * the subsystem as a whole */
	int64_t old_id, new_id; /* request ids of the routine on each side, or -1 */
	enum idlc_compat_call old_client; /* an old client calling it on a new server */
	enum idlc_compat_call new_client; /* a new client calling it on an old server */
};

struct idlc_compat {
	const char *old_file, *new_file; /* the inputs as named */
	const char *old_name, *new_name; /* the subsystems */
	int32_t old_base, new_base;
	const struct idlc_change *changes; /* in the order of message ids */
	size_t nchanges;
	unsigned errors, warnings, notes;
};

/* Compares two checked interfaces. Everything it returns lives in new's arena (valid until
 * idlc_destroy(new)). Returns 0, or -1 when either has no descriptor table (not checked, or
 * checked with errors) or memory ran out. */
int idlc_compat(struct idlc_ctx *old, struct idlc_ctx *new, struct idlc_compat *out);
/* The changes as gcc-style lines ("new.defs:7:10: error: ..."), notes only when `verbose`,
 * then a summary line ("1 breaking change, 2 warnings") when a line was written or when
 * verbose. */
void idlc_compat_text(const struct idlc_compat *c, bool verbose, struct strbuf *out);
/* The whole result as one JSON object (docs/evolution.md has the schema). */
void idlc_compat_json(const struct idlc_compat *c, struct strbuf *out);

/* The model built so far (read only); valid until idlc_destroy(). */
const struct idlc_module *idlc_module(const struct idlc_ctx *ctx);
unsigned idlc_error_count(const struct idlc_ctx *ctx);
const struct idlc_options *idlc_options(const struct idlc_ctx *ctx);

/*
 * For the stages inside the compiler.
 */

/* Diagnostics. The message is printf-style and says what is wrong in one sentence without a
 * trailing period. A note attaches to the diagnostic before it ("previous definition of
 * 'x' is here"). Errors past the cap are counted but not printed. */
void idlc_error(struct idlc_ctx *ctx, struct idlc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void idlc_warning(struct idlc_ctx *ctx, struct idlc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void idlc_note(struct idlc_ctx *ctx, struct idlc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Arena allocation: zeroed, aligned for any type, freed with the context. On exhaustion the
 * context reports one "out of memory" error and these return NULL. */
void *idlc_alloc(struct idlc_ctx *ctx, size_t size);
char *idlc_strdup(struct idlc_ctx *ctx, const char *s);
char *idlc_strndup(struct idlc_ctx *ctx, const char *s, size_t n);
char *idlc_printf(struct idlc_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether a location is in idlc's built-in declarations (its prelude of MIG's standard
 * types, idlc/types.c). */
bool idlc_is_builtin(const struct idlc_ctx *ctx, struct idlc_loc loc);

/* The module being built (writable by the stages). */
struct idlc_module *idlc_module_mut(struct idlc_ctx *ctx);

/* Stages, in order (each file's entry point; each returns the context's error count):
 *   sema.c (with sema_type.c, sema_arg.c)  names, types, directions, flags, numbering;
 *   the middle end (middle.h), idlc_middle() running facts.c, layout.c and desc.c in turn:
 *     the facts of every argument, the wire layout, the descriptor table and the hashes;
 *   the emitters (emit.h): one output each, reading what the middle end left. */
int idlc_sema(struct idlc_ctx *ctx, struct idlc_module *m); /* sema.c */
int idlc_middle(struct idlc_ctx *ctx, struct idlc_module *m); /* facts.c */
int idlc_layout(struct idlc_ctx *ctx, struct idlc_module *m); /* layout.c */
/* emit_header.c (the header and the server header), emit_user.c, emit_server.c,
 * emit_types.c: one output into `out`. */
int idlc_emit(struct idlc_ctx *ctx, const struct idlc_module *m, enum idlc_output which,
	      struct strbuf *out);

#endif /* IDLC_IDLC_H */
