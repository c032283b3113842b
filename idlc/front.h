/*
 * front.h - what the front end's files share and nobody else needs: the context's layout,
 * the statement list the parser builds, the lexer's state, the built-in tables.
 *
 * The parser does not fill the module directly. It records statements in source order, and
 * sema walks them in that order: a type is visible from its declaration on, a redefinition
 * replaces it for later statements only, and routines are numbered as they come. Keeping
 * the order explicit is what makes MIG's single-pass scoping exact without a second parse.
 */
#ifndef IDLC_FRONT_H
#define IDLC_FRONT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "idlc.h"

/* Statements as written, in order. */
enum idlc_stmt_kind {
	IDLC_ST_SUBSYSTEM = 1,
	IDLC_ST_WAITTIME, /* text: the String; NULL for nowaittime */
	IDLC_ST_MSGOPTION,
	IDLC_ST_SERVERPREFIX,
	IDLC_ST_USERPREFIX,
	IDLC_ST_SERVERDEMUX,
	IDLC_ST_IMPORT,
	IDLC_ST_RCSID,
	IDLC_ST_TYPE,
	IDLC_ST_ROUTINE,
	IDLC_ST_SKIP,
	IDLC_ST_IGNORED, /* an Apple statement with no meaning off Mach: `what` says so */
};

struct idlc_stmt {
	enum idlc_stmt_kind kind;
	struct idlc_loc loc;
	const char *text; /* names, file names, strings: what the statement carries */
	uint32_t number; /* subsystem base, skip count */
	bool bad_number; /* the number was reported as an error already */
	bool kernel_user, kernel_server; /* subsystem modifiers */
	struct idlc_loc mod_loc; /* the first modifier */
	enum idlc_import_kind import_kind;
	struct idlc_type *type; /* IDLC_ST_TYPE */
	struct idlc_routine *routine; /* IDLC_ST_ROUTINE */
	const char *what; /* IDLC_ST_IGNORED: the warning; legacy routine kinds: the keyword */
	/* A type or routine statement abandoned after a syntax error: only its name counts (a
	 * broken type, whose uses stay quiet; a routine that takes its number and its name) */
	bool broken;
	struct idlc_stmt *next;
};

/* A checked constant: parser arithmetic reports its own errors and marks the result. */
struct idlc_num {
	uint32_t v;
	bool bad;
};

/* Lexer start states the parser asks for after certain keywords (as MIG's LookString). */
enum idlc_lex_want {
	IDLC_LEX_NORMAL = 0,
	IDLC_LEX_STRING, /* after waittime, msgoption, sendtime: [-/._$A-Za-z0-9]+ */
	IDLC_LEX_FILENAME, /* after import and friends: "..." or <...> */
	IDLC_LEX_QSTRING, /* after rcsid: "..." */
};

/* The scanner's extra data (flex yyextra): where we are in the user's files. */
struct idlc_lexer {
	struct idlc_ctx *ctx;
	const char *file; /* interned */
	int line, col; /* of the next character */
	enum idlc_lex_want want;
	int comment_return; /* start state to resume after a comment */
	struct idlc_loc comment_loc;
	char last_text[64]; /* the last token as written (cut short), for syntax errors */
};

struct idlc_chunk;

struct idlc_ctx {
	struct idlc_options opts; /* a deep copy: the caller's strings may go away */
	idlc_diag_fn sink;
	void *sink_data;

	struct idlc_chunk *chunks; /* the arena */
	jmp_buf *escape; /* set while the front end runs: where running out of memory goes */

	unsigned nerrors;
	unsigned nwarnings;
	bool stopped; /* the error cap was reached: stages stop early */
	bool last_shown; /* the last error or warning was printed: its notes follow it */
	bool oom_reported;

	struct idlc_module module;
	struct idlc_stmt *stmts;
	struct idlc_stmt **stmts_tail;
	struct idlc_fname *fnames; /* interned file names */
	const char **files; /* the files line markers named, in order, once each: the input and
			     * what it included (for dependency files) */
	size_t nfiles, files_cap;
	const char *builtin_file; /* "<built-in>", interned: marks built-in declarations */
	bool parsed_user; /* an input was parsed (the prelude does not count) */
	/* The parser: the routine being parsed and whether its argument list is open, so that
	 * a syntax error where only a ')' could help says which routine lacks it. */
	const char *open_routine;
	struct idlc_loc open_routine_loc;
	bool open_args;
	/* What a statement that a syntax error abandons leaves for sema, so that the checks of
	 * the rest of the file report no error that follows from it: the routine's name (above)
	 * and kind, the name a type statement declares, whether a subsystem statement began. */
	struct idlc_loc open_routine_name_loc;
	int open_routine_kind;
	const char *open_type;
	struct idlc_loc open_type_loc;
	bool saw_subsystem;
	/* The lexer and parser ran over the whole input (syntax errors or not): sema checks
	 * what parsed, so that one run reports every independent error. */
	bool input_parsed;
	bool checked;
};

/* context.c */
struct idlc_stmt *idlc_stmt_new(struct idlc_ctx *ctx, enum idlc_stmt_kind kind,
				struct idlc_loc loc);
const char *idlc_intern_file(struct idlc_ctx *ctx, const char *name, size_t len);
/* Records a file a line marker named (an interned name), once. */
void idlc_note_file(struct idlc_ctx *ctx, const char *name);
/* Runs the lexer and parser over text that cpp already processed. */
int idlc_parse_text(struct idlc_ctx *ctx, const char *name, const char *text, size_t len);

/* cpp.c: runs the preprocessor on `path` and returns its standard output in `out`. */
int idlc_cpp_run(struct idlc_ctx *ctx, const char *path, struct strbuf *out);

/* lexer.l: scans and parses one buffer (the parser calls back into the lexer). */
int idlc_lex_parse(struct idlc_ctx *ctx, const char *name, const char *text, size_t len);
void idlc_lex_expect(void *scanner, enum idlc_lex_want want);
const char *idlc_lex_last_text(void *scanner);
/* The IDLC_AF_* flag an Apple flag word (token SOFTFLAG) names, or 0. */
unsigned idlc_lex_flag(const char *word);
const char *idlc_lex_file(void *scanner);

/* types.c: the IPC type names and the built-in declarations. */
struct idlc_ipc_info {
	const char *name; /* MACH_MSG_TYPE_xxx */
	enum idlc_ipc ipc;
	uint32_t bits; /* natural size; 0 when the long form must give it */
	enum idl_arg_kind arg_kind; /* 0: not a type the foundation can carry */
	enum idl_wire_type wire_type;
	const char *c_type; /* C type of an unnamed use */
};
const struct idlc_ipc_info *idlc_ipc_lookup(const char *name);
const struct idlc_ipc_info *idlc_ipc_info(enum idlc_ipc ipc);
int idlc_types_init(struct idlc_ctx *ctx);

/* diag.c: whether an error or warning now would still be printed (the cap not reached). */
bool idlc_diag_stopped(const struct idlc_ctx *ctx);

#endif /* IDLC_FRONT_H */
