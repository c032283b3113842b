/*
 * parser.y - the .defs grammar: the union of GNU MIG's and Apple MIG's (see
 * docs of the language in mig-language.md, section 3).
 *
 * The actions only build nodes in the context's arena and append statements in order; every
 * meaning is sema's. Constant arithmetic (IntExp) is folded as it is parsed, with overflow and
 * division by zero reported where they happen. After a syntax error the parser skips to the
 * next ';' and goes on, so one run reports several errors.
 *
 * The functions the actions call are in parser_actions.c, so that this file holds the
 * grammar and its error messages.
 */
%code top {
#include <config.h>
}

%code requires {
#include "front.h"

/* A location carries its file, so diagnostics name the file cpp's line markers gave. Not
 * "trivial" for bison: %initial-action sets every field. */
typedef struct IDLC_YYLTYPE {
	int first_line;
	int first_column;
	int last_line;
	int last_column;
	const char *file;
} IDLC_YYLTYPE;
#define IDLC_YYLTYPE_IS_DECLARED 1

#define YYLLOC_DEFAULT(Cur, Rhs, N)						\
	do {									\
		if (N) {							\
			(Cur).file = YYRHSLOC(Rhs, 1).file;			\
			(Cur).first_line = YYRHSLOC(Rhs, 1).first_line;		\
			(Cur).first_column = YYRHSLOC(Rhs, 1).first_column;	\
			(Cur).last_line = YYRHSLOC(Rhs, N).last_line;		\
			(Cur).last_column = YYRHSLOC(Rhs, N).last_column;	\
		} else {							\
			(Cur).file = YYRHSLOC(Rhs, 0).file;			\
			(Cur).first_line = (Cur).last_line =			\
				YYRHSLOC(Rhs, 0).last_line;			\
			(Cur).first_column = (Cur).last_column =		\
				YYRHSLOC(Rhs, 0).last_column;			\
		}								\
	} while (0)

/* An argument list under construction. */
struct idlc_arglist {
	struct idlc_arg *head, *tail;
	unsigned n;
};

/* Routine keywords: the two MIG still has and the CMU ones GNU's lexer kept. */
enum idlc_rtkw {
	IDLC_RK_ROUTINE = 1,
	IDLC_RK_SIMPLEROUTINE,
	IDLC_RK_PROCEDURE,
	IDLC_RK_SIMPLEPROCEDURE,
};
}

%code provides {
int idlc_yylex(IDLC_YYSTYPE *lval, IDLC_YYLTYPE *lloc, void *scanner);

/* What the grammar's actions call (parser_actions.c). Nodes and strings are allocated in
 * the context's arena and live as long as it does. */

/* The diagnostics' location of a parser location. */
struct idlc_loc idlc_ploc(const IDLC_YYLTYPE *l);
/* A new type node of kind `kind` written at l. */
struct idlc_type *idlc_ptype(struct idlc_ctx *ctx, enum idlc_type_kind kind,
			     const IDLC_YYLTYPE *l);
/* A new array type node of n elements of elem (broken when n was). */
struct idlc_type *idlc_parray(struct idlc_ctx *ctx, enum idlc_type_kind kind,
			      const IDLC_YYLTYPE *l, struct idlc_num n, struct idlc_type *elem);
/* a op b for op one of + - * /, reported at l when it leaves 0 .. UINT32_MAX. */
struct idlc_num idlc_parith(struct idlc_ctx *ctx, const IDLC_YYLTYPE *l, struct idlc_num a,
			    char op, struct idlc_num b);
/* a, sep and b as one string. */
const char *idlc_pjoin(struct idlc_ctx *ctx, const char *a, const char *sep, const char *b);
/* How a type written out reads in a message. */
const char *idlc_ptype_text(struct idlc_ctx *ctx, const struct idlc_type *t);
/* The routine being parsed is done (or abandoned after an error), and its arguments' types. */
void idlc_proutine_done(struct idlc_ctx *ctx);
/* A statement abandoned after a syntax error: what it named is kept for sema (see there). */
void idlc_pabandoned(struct idlc_ctx *ctx);
/* Records an Apple statement that means nothing off Mach; sema warns with `what`. */
void idlc_pignored(struct idlc_ctx *ctx, const IDLC_YYLTYPE *l, const char *what);
}

%code {
#include <stdlib.h>
#include <string.h>

static void idlc_yyerror(IDLC_YYLTYPE *loc, struct idlc_ctx *ctx, void *scanner,
			 const char *msg);

/* The parser's stack is bounded: deep nesting is an error, not a crash. */
#define YYMAXDEPTH 5000
}

%define api.pure full
%define api.prefix {idlc_yy}
%define parse.error custom
%locations
%parse-param {struct idlc_ctx *ctx} {void *scanner}
%lex-param {void *scanner}
%initial-action {
	@$.file = idlc_lex_file(scanner);
	@$.first_line = @$.last_line = 1;
	@$.first_column = @$.last_column = 1;
}

%union {
	const char *str;
	struct idlc_num num;
	int ival;
	unsigned flags;
	struct idlc_type *type;
	struct idlc_arg *arg;
	struct idlc_arglist args;
	struct idlc_routine *rt;
	struct {
		int in, out;
		uint32_t number;
	} ipc;
	struct {
		bool user, server;
		IDLC_YYLTYPE loc;
		bool any;
	} mods;
}

%token <str> IDENT "identifier"
%token <num> NUMBER "number"
%token <str> STRING "waittime or msgoption value"
%token <str> FILENAME "file name"
%token <str> QSTRING "quoted string"
%token <ival> IPCNAME "IPC type name"
%token <ival> DIRECTION "argument direction"
%token <flags> IPCFLAG "argument flag"
%token <str> SOFTFLAG "Apple argument flag"
%token <ival> KW_IMPORT "import"
%token <ival> KW_ROUTINE "routine"
%token KW_FUNCTION "function"
%token KW_SUBSYSTEM "subsystem"
%token KW_KERNELUSER "KernelUser"
%token KW_KERNELSERVER "KernelServer"
%token KW_WAITTIME "waittime"
%token KW_NOWAITTIME "nowaittime"
%token KW_MSGOPTION "msgoption"
%token KW_SENDTIME "sendtime"
%token KW_NOSENDTIME "nosendtime"
%token <str> KW_ERROR "error"
%token KW_SERVERPREFIX "serverprefix"
%token KW_USERPREFIX "userprefix"
%token KW_SERVERDEMUX "serverdemux"
%token KW_RCSID "rcsid"
%token KW_TYPE "type"
%token KW_ARRAY "array"
%token KW_OF "of"
%token KW_STRUCT "struct"
%token KW_CSTRING "c_string"
%token KW_INTRAN "intran"
%token KW_INTRANPAYLOAD "intranpayload"
%token KW_OUTTRAN "outtran"
%token KW_DESTRUCTOR "destructor"
%token KW_CTYPE "ctype"
%token KW_CUSERTYPE "cusertype"
%token KW_CSERVERTYPE "cservertype"
%token KW_SKIP "skip"
%token KW_USESPECIALREPLYPORT "UseSpecialReplyPort"
%token KW_CONSUMEONSENDERROR "ConsumeOnSendError"
%token KW_USERTYPELIMIT "UserTypeLimit"
%token KW_ONSTACKLIMIT "OnStackLimit"
%token KW_POINTERTO "PointerTo"
%token KW_POINTERTOIFNOT "PointerToIfNot"
%token KW_VALUEOF "ValueOf"

%left '+' '-'
%left '*' '/'

%type <num> int_exp
%type <type> named_type trans_type type_spec anon_type basic_type native_type arg_type
%type <ipc> ipc_type prim_ipc
%type <flags> ipc_flags
%type <str> type_phrase
%type <args> arguments arg_list
%type <arg> argument
%type <ival> direction
%type <mods> sub_mods
%type <type> struct_fields struct_field
%type <str> name type_decl_name

%%

file:
	  /* empty */
	| file statement
	;

statement:
	  subsystem ';'
	| KW_WAITTIME look_string STRING ';'
		{ idlc_stmt_new(ctx, IDLC_ST_WAITTIME, idlc_ploc(&@1))->text = $3; }
	| KW_NOWAITTIME ';'
		{ idlc_stmt_new(ctx, IDLC_ST_WAITTIME, idlc_ploc(&@1)); }
	| KW_MSGOPTION look_string STRING ';'
		{ idlc_stmt_new(ctx, IDLC_ST_MSGOPTION, idlc_ploc(&@1))->text = $3; }
	| KW_SENDTIME look_string STRING ';'
		{ idlc_pignored(ctx, &@1, "sendtime is ignored: the call's deadline (waittime) bounds "
				     "the send too"); }
	| KW_NOSENDTIME ';'
		{ idlc_pignored(ctx, &@1, "nosendtime is ignored: calls always have a deadline"); }
	| KW_ERROR name ';'
		{ idlc_pignored(ctx, &@1, "the 'error' statement is ignored: idlc's stubs return "
				     "their errors"); }
	| KW_SERVERPREFIX IDENT ';'
		{ idlc_stmt_new(ctx, IDLC_ST_SERVERPREFIX, idlc_ploc(&@1))->text = $2; }
	| KW_USERPREFIX IDENT ';'
		{ idlc_stmt_new(ctx, IDLC_ST_USERPREFIX, idlc_ploc(&@1))->text = $2; }
	| KW_SERVERDEMUX IDENT ';'
		{ idlc_stmt_new(ctx, IDLC_ST_SERVERDEMUX, idlc_ploc(&@1))->text = $2; }
	| KW_TYPE named_type ';'
		{
			ctx->open_type = NULL;
			idlc_stmt_new(ctx, IDLC_ST_TYPE, idlc_ploc(&@1))->type = $2;
		}
	| routine_decl ';'
	| KW_SKIP ';'
		{ idlc_stmt_new(ctx, IDLC_ST_SKIP, idlc_ploc(&@1))->number = 1; }
	| KW_SKIP NUMBER ';'
		{
			struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_SKIP, idlc_ploc(&@1));

			st->number = $2.v;
			st->bad_number = $2.bad;
		}
	| KW_IMPORT look_filename FILENAME ';'
		{
			struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_IMPORT, idlc_ploc(&@1));

			st->import_kind = (enum idlc_import_kind)$1;
			st->text = $3;
		}
	| KW_RCSID look_qstring QSTRING ';'
		{ idlc_stmt_new(ctx, IDLC_ST_RCSID, idlc_ploc(&@1))->text = $3; }
	| KW_USESPECIALREPLYPORT NUMBER ';'
		{ idlc_pignored(ctx, &@1, "UseSpecialReplyPort is ignored: replies come back on the "
				     "request's connection"); }
	| KW_CONSUMEONSENDERROR look_string STRING ';'
		{ idlc_pignored(ctx, &@1, "ConsumeOnSendError is ignored: a failed send leaves what "
				     "it carried to its sender"); }
	| KW_USERTYPELIMIT NUMBER ';'
		{ idlc_pignored(ctx, &@1, "UserTypeLimit is ignored: idlc's client stubs put "
				     "messages above 64 KiB on the heap"); }
	| KW_ONSTACKLIMIT NUMBER ';'
		{ idlc_pignored(ctx, &@1, "OnStackLimit is ignored: idlc's stubs put messages above "
				     "64 KiB on the heap"); }
	| ';'
	/* After an error, skip to the next ';'. Without yyerrok bison stays quiet until
	 * three tokens have been shifted, which hides the cascade when that ';' was inside
	 * an argument list. */
	| error ';'
		{ idlc_pabandoned(ctx); }
	;

/* The name a type declares (a type statement, an argument's `name : t = type`), noted at once:
 * a syntax error before its statement ends leaves a broken type of that name, used quietly. */
type_decl_name:
	  name
		{
			ctx->open_type = $1;
			ctx->open_type_loc = idlc_ploc(&@1);
		}
	;

/* The lexer reads the next token in a special start state (MIG's LookString and friends).
 * Each of these follows a keyword in a state with no other choice, so bison reduces it
 * without reading a lookahead first. */
look_string:
	  /* empty */ { idlc_lex_expect(scanner, IDLC_LEX_STRING); }
	;
look_filename:
	  /* empty */ { idlc_lex_expect(scanner, IDLC_LEX_FILENAME); }
	;
look_qstring:
	  /* empty */ { idlc_lex_expect(scanner, IDLC_LEX_QSTRING); }
	;

subsystem:
	  subsystem_kw sub_mods IDENT NUMBER
		{
			struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_SUBSYSTEM, idlc_ploc(&@1));

			st->text = $3;
			st->number = $4.v;
			st->bad_number = $4.bad;
			st->kernel_user = $2.user;
			st->kernel_server = $2.server;
			if ($2.any)
				st->mod_loc = idlc_ploc(&$2.loc);
		}
	;

/* A subsystem statement began: sema does not call one missing when it did not parse. */
subsystem_kw:
	  KW_SUBSYSTEM
		{ ctx->saw_subsystem = true; }
	;

sub_mods:
	  /* empty */
		{ $$.user = $$.server = $$.any = false; }
	| sub_mods KW_KERNELUSER
		{
			$$ = $1;
			$$.user = true;
			if (!$$.any)
				$$.loc = @2;
			$$.any = true;
		}
	| sub_mods KW_KERNELSERVER
		{
			$$ = $1;
			$$.server = true;
			if (!$$.any)
				$$.loc = @2;
			$$.any = true;
		}
	;

/* A name: an identifier, or a word only Apple MIG reserves (GNU files use them as names). */
name:
	  IDENT
	| SOFTFLAG
	| KW_ERROR
	;

named_type:
	  type_decl_name '=' trans_type
		{
			$$ = $3;
			$$->name = $1;
			$$->name_loc = idlc_ploc(&@1);
		}
	;

trans_type:
	  type_spec
	| trans_type KW_INTRAN ':' IDENT IDENT '(' IDENT ')'
		{ $$ = $1; $$->intran_type = $4; $$->intran = $5; $$->intran_arg = $7; }
	| trans_type KW_INTRANPAYLOAD ':' IDENT IDENT
		{ $$ = $1; $$->intranpayload_type = $4; $$->intranpayload = $5; }
	| trans_type KW_OUTTRAN ':' IDENT IDENT '(' IDENT ')'
		{ $$ = $1; $$->outtran_type = $4; $$->outtran = $5; $$->outtran_arg = $7; }
	| trans_type KW_DESTRUCTOR ':' IDENT '(' IDENT ')'
		{ $$ = $1; $$->destructor = $4; $$->destructor_arg = $6; }
	| trans_type KW_CTYPE ':' IDENT
		{ $$ = $1; $$->ctype = $4; }
	| trans_type KW_CUSERTYPE ':' IDENT
		{ $$ = $1; $$->cusertype = $4; }
	| trans_type KW_CSERVERTYPE ':' IDENT
		{ $$ = $1; $$->cservertype = $4; }
	;

type_spec:
	  name
		{ $$ = idlc_ptype(ctx, IDLC_T_NAMED, &@1); $$->ref = $1; }
	| anon_type
	;

/* A type written out rather than named. */
anon_type:
	  basic_type
	| KW_ARRAY '[' ']' KW_OF type_spec
		{ $$ = idlc_ptype(ctx, IDLC_T_ARRAY_UNBOUNDED, &@1); $$->elem = $5; }
	| KW_ARRAY '[' '*' ']' KW_OF type_spec
		{ $$ = idlc_ptype(ctx, IDLC_T_ARRAY_UNBOUNDED, &@1); $$->elem = $6; }
	| KW_ARRAY '[' '*' ':' int_exp ']' KW_OF type_spec
		{ $$ = idlc_parray(ctx, IDLC_T_ARRAY_VAR, &@1, $5, $8); }
	| KW_ARRAY '[' int_exp ']' KW_OF type_spec
		{ $$ = idlc_parray(ctx, IDLC_T_ARRAY_FIXED, &@1, $3, $6); }
	| '^' type_spec
		{ $$ = idlc_ptype(ctx, IDLC_T_POINTER, &@1); $$->elem = $2; }
	| KW_STRUCT '[' int_exp ']' KW_OF type_spec
		{ $$ = idlc_parray(ctx, IDLC_T_STRUCT_ARRAY, &@1, $3, $6); }
	| KW_STRUCT '{' struct_fields '}'
		{ $$ = idlc_ptype(ctx, IDLC_T_STRUCT_FIELDS, &@1); $$->fields = $3->fields; }
	| KW_CSTRING '[' int_exp ']'
		{ $$ = idlc_parray(ctx, IDLC_T_CSTRING_FIXED, &@1, $3, NULL); }
	| KW_CSTRING '[' '*' ':' int_exp ']'
		{ $$ = idlc_parray(ctx, IDLC_T_CSTRING_VAR, &@1, $5, NULL); }
	| native_type
	;

/* GNU struct { T a; U b; }: a carrier type whose `fields` list grows at the tail. */
struct_fields:
	  struct_field
	| struct_fields struct_field
		{
			struct idlc_field *f = $1->fields;

			while (f->next != NULL)
				f = f->next;
			f->next = $2->fields;
			$$ = $1;
		}
	;

struct_field:
	  name name ';'
		{
			struct idlc_field *f = idlc_alloc(ctx, sizeof *f);

			f->type_name = $1;
			f->name = $2;
			f->loc = idlc_ploc(&@1);
			$$ = idlc_ptype(ctx, IDLC_T_STRUCT_FIELDS, &@1);
			$$->fields = f;
		}
	;

basic_type:
	  ipc_type
		{
			$$ = idlc_ptype(ctx, IDLC_T_IPC, &@1);
			$$->ipc = (enum idlc_ipc)$1.in;
			$$->ipc_out = (enum idlc_ipc)$1.out;
			$$->ipc_number = $1.number;
		}
	| '(' ipc_type ',' int_exp ipc_flags ')'
		{
			$$ = idlc_ptype(ctx, IDLC_T_LONGFORM, &@1);
			$$->ipc = (enum idlc_ipc)$2.in;
			$$->ipc_out = (enum idlc_ipc)$2.out;
			$$->ipc_number = $2.number;
			$$->size_bits = $4.v;
			$$->broken = $4.bad;
			$$->flags = $5;
		}
	;

ipc_flags:
	  /* empty */
		{ $$ = 0; }
	| ipc_flags ',' IPCFLAG
		{ $$ = $1 | $3; }
	| ipc_flags ',' IPCFLAG '[' ']'
		{ $$ = $1 | ($3 == IDLC_AF_DEALLOC ? IDLC_AF_DEALLOC_RT : $3); }
	| ipc_flags ',' SOFTFLAG
		{ $$ = $1 | idlc_lex_flag($3); }
	;

ipc_type:
	  prim_ipc
		{ $$ = $1; $$.out = IDLC_IPC_NONE; }
	| prim_ipc '|' prim_ipc
		{ $$ = $1; $$.out = $3.in; }
	;

prim_ipc:
	  NUMBER
		{ $$.in = IDLC_IPC_NUMBER; $$.out = IDLC_IPC_NONE; $$.number = $1.v; }
	| IPCNAME
		{ $$.in = $1; $$.out = IDLC_IPC_NONE; $$.number = 0; }
	;

native_type:
	  KW_POINTERTO '(' type_phrase ')'
		{ $$ = idlc_ptype(ctx, IDLC_T_NATIVE, &@1); $$->native = "PointerTo"; $$->ref = $3; }
	| KW_POINTERTOIFNOT '(' type_phrase ',' type_phrase ')'
		{
			$$ = idlc_ptype(ctx, IDLC_T_NATIVE, &@1);
			$$->native = "PointerToIfNot";
			$$->ref = $3;
			$$->native_alt = $5;
		}
	| KW_VALUEOF '(' type_phrase ')'
		{ $$ = idlc_ptype(ctx, IDLC_T_NATIVE, &@1); $$->native = "ValueOf"; $$->ref = $3; }
	;

type_phrase:
	  IDENT
	| type_phrase IDENT
		{ $$ = idlc_pjoin(ctx, $1, " ", $2); }
	| type_phrase '*'
		{ $$ = idlc_pjoin(ctx, $1, " ", "*"); }
	;

int_exp:
	  int_exp '+' int_exp
		{ $$ = idlc_parith(ctx, &@2, $1, '+', $3); }
	| int_exp '-' int_exp
		{ $$ = idlc_parith(ctx, &@2, $1, '-', $3); }
	| int_exp '*' int_exp
		{ $$ = idlc_parith(ctx, &@2, $1, '*', $3); }
	| int_exp '/' int_exp
		{ $$ = idlc_parith(ctx, &@2, $1, '/', $3); }
	| NUMBER
	| '(' int_exp ')'
		{ $$ = $2; }
	;

routine_decl:
	  KW_ROUTINE name
		{
			ctx->open_routine = $2;
			ctx->open_routine_loc = idlc_ploc(&@1);
			ctx->open_routine_name_loc = idlc_ploc(&@2);
			ctx->open_routine_kind = $1;
		}
	  arguments
		{
			struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_ROUTINE, idlc_ploc(&@1));
			struct idlc_routine *rt = idlc_alloc(ctx, sizeof *rt);

			idlc_proutine_done(ctx);
			rt->name = $2;
			rt->loc = idlc_ploc(&@2);
			rt->args = $4.head;
			rt->nargs = $4.n;
			rt->waittime = -1;
			switch ($1) {
			case IDLC_RK_SIMPLEROUTINE:
				rt->kind = IDLC_RT_SIMPLEROUTINE;
				break;
			case IDLC_RK_PROCEDURE:
				rt->kind = IDLC_RT_ROUTINE;
				st->what = "'procedure' (an obsolete CMU MIG routine kind)";
				break;
			case IDLC_RK_SIMPLEPROCEDURE:
				rt->kind = IDLC_RT_SIMPLEROUTINE;
				st->what = "'simpleprocedure' (an obsolete CMU MIG routine kind)";
				break;
			default:
				rt->kind = IDLC_RT_ROUTINE;
				break;
			}
			st->routine = rt;
		}
	| KW_FUNCTION IDENT arguments arg_type
		{
			struct idlc_stmt *st = idlc_stmt_new(ctx, IDLC_ST_ROUTINE, idlc_ploc(&@1));
			struct idlc_routine *rt = idlc_alloc(ctx, sizeof *rt);

			idlc_proutine_done(ctx);
			rt->kind = IDLC_RT_ROUTINE;
			rt->name = $2;
			rt->loc = idlc_ploc(&@2);
			rt->args = $3.head;
			rt->nargs = $3.n;
			rt->waittime = -1;
			st->routine = rt;
			st->what = "'function' (an obsolete CMU MIG routine kind)";
		}
	;

arguments:
	  args_open ')'
		{ $$.head = $$.tail = NULL; $$.n = 0; ctx->open_args = false; }
	| args_open arg_list ')'
		{ $$ = $2; ctx->open_args = false; }
	;

args_open:
	  '('
		{ ctx->open_args = true; }
	;

arg_list:
	  argument
		{ $$.head = $$.tail = $1; $$.n = 1; }
	| arg_list ';' argument
		{
			$$ = $1;
			$$.tail->next = $3;
			$$.tail = $3;
			$$.n++;
		}
	;

argument:
	  direction name arg_type ipc_flags
		{
			$$ = idlc_alloc(ctx, sizeof *$$);
			$$->name = $2;
			$$->loc = idlc_ploc(&@2);
			$$->dir_written = (enum idlc_dir)$1;
			$$->type = $3;
			$$->flags = $4;
		}
	/* MIG's grammar has a type name after the ':', or `name = type`: a type written out
	 * there is an error that says what to write instead. */
	| direction name ':' anon_type ipc_flags
		{
			const char *text = idlc_ptype_text(ctx, $4);

			idlc_error(ctx, idlc_ploc(&@4),
				   "argument '%s': MIG takes a type name here, not '%s': declare "
				   "'type %s_t = %s;' and write '%s : %s_t', or name it in place: "
				   "'%s : %s_t = %s'",
				   $2, text, $2, text, $2, $2, $2, $2, text);
			$$ = idlc_alloc(ctx, sizeof *$$);
			$$->name = $2;
			$$->loc = idlc_ploc(&@2);
			$$->dir_written = (enum idlc_dir)$1;
			$$->type = $4;
			$$->type->broken = true;
			$$->flags = $5;
		}
	;

direction:
	  /* empty */
		{ $$ = IDLC_DIR_NONE; }
	| DIRECTION
	| KW_WAITTIME
		{ $$ = IDLC_DIR_WAITTIME; }
	| KW_MSGOPTION
		{ $$ = IDLC_DIR_MSGOPTION; }
	| KW_SENDTIME
		{ $$ = IDLC_DIR_SENDTIME; }
	;

arg_type:
	  ':' name
		{ $$ = idlc_ptype(ctx, IDLC_T_NAMED, &@2); $$->ref = $2; }
	| ':' named_type
		{ $$ = $2; }
	;

%%

static const char *
psym_name(yysymbol_kind_t sym)
{
	switch (sym) {
	case YYSYMBOL_YYEOF:
		return "end of file";
	case YYSYMBOL_IDENT:
		return "identifier";
	case YYSYMBOL_NUMBER:
		return "number";
	case YYSYMBOL_STRING:
		return "waittime or msgoption value";
	case YYSYMBOL_FILENAME:
		return "file name";
	case YYSYMBOL_QSTRING:
		return "quoted string";
	case YYSYMBOL_IPCNAME:
		return "IPC type name";
	case YYSYMBOL_DIRECTION:
		return "argument direction";
	case YYSYMBOL_IPCFLAG:
	case YYSYMBOL_SOFTFLAG:
		return "argument flag";
	default:
		return NULL;
	}
}

/* Appends a token's name for a message: keywords and punctuation in quotes, classes of
 * tokens by what they are. */
static void
psym_put(struct strbuf *sb, yysymbol_kind_t sym)
{
	const char *name = psym_name(sym);
	size_t len;

	if (name != NULL) {
		strbuf_puts(sb, name);
		return;
	}
	name = yysymbol_name(sym);
	len = strlen(name);
	if (len >= 2 && (name[0] == '"' || name[0] == '\'') && name[len - 1] == name[0]) {
		name++;
		len -= 2;
	}
	strbuf_putc(sb, '\'');
	strbuf_append(sb, name, len);
	strbuf_putc(sb, '\'');
}

/* The tokens the parser expected, where a name is expected saying only "identifier": the
 * words Apple reserves that may stand for names are not news to the reader. */
static int
pexpected(const yypcontext_t *pctx, yysymbol_kind_t *expected, int room)
{
	int n = yypcontext_expected_tokens(pctx, expected, room), i, k;
	bool ident = false;

	for (i = 0; i < n; i++)
		ident = ident || expected[i] == YYSYMBOL_IDENT;
	if (!ident || n <= 0)
		return n;
	for (i = k = 0; i < n; i++)
		if (expected[i] != YYSYMBOL_SOFTFLAG && expected[i] != YYSYMBOL_KW_ERROR)
			expected[k++] = expected[i];
	return k;
}

/* Whether a token starts a statement and so cannot be part of an argument list: inside one,
 * it (or the end of the file) means the list was never closed. waittime, msgoption and
 * sendtime are argument directions too, and do not count. */
static bool
pstatement_start(yysymbol_kind_t tok)
{
	switch (tok) {
	case YYSYMBOL_YYEOF:
	case YYSYMBOL_KW_ROUTINE:
	case YYSYMBOL_KW_FUNCTION:
	case YYSYMBOL_KW_SUBSYSTEM:
	case YYSYMBOL_KW_TYPE:
	case YYSYMBOL_KW_IMPORT:
	case YYSYMBOL_KW_SKIP:
	case YYSYMBOL_KW_SERVERPREFIX:
	case YYSYMBOL_KW_USERPREFIX:
	case YYSYMBOL_KW_SERVERDEMUX:
	case YYSYMBOL_KW_RCSID:
		return true;
	default:
		return false;
	}
}

/* A routine's argument list that a statement (or the end of the file) interrupts lacks its
 * ')': said where the parser stopped, with a note where the routine starts, since the
 * place of the error alone may be a line or a file away from the routine. */
static bool
preport_unclosed(const yypcontext_t *pctx, struct idlc_ctx *ctx, void *scanner)
{
	yysymbol_kind_t tok = yypcontext_token(pctx);

	if (!ctx->open_args || ctx->open_routine == NULL || !pstatement_start(tok))
		return false;
	if (tok == YYSYMBOL_YYEOF)
		idlc_error(ctx, idlc_ploc(yypcontext_location(pctx)),
			   "syntax error: expected ')' to end the arguments of routine '%s' before "
			   "the end of the file",
			   ctx->open_routine);
	else
		idlc_error(ctx, idlc_ploc(yypcontext_location(pctx)),
			   "syntax error: expected ')' to end the arguments of routine '%s' before "
			   "'%s'",
			   ctx->open_routine, idlc_lex_last_text(scanner));
	idlc_note(ctx, ctx->open_routine_loc, "routine '%s' starts here", ctx->open_routine);
	return true;
}

/* "syntax error: unexpected identifier 'x', expecting ';' or ','": the expected list only
 * when it is short enough to help. */
static int
yyreport_syntax_error(const yypcontext_t *pctx, struct idlc_ctx *ctx, void *scanner)
{
	enum { MAX_EXPECTED = 4, ROOM = 16 };
	yysymbol_kind_t expected[ROOM];
	yysymbol_kind_t tok = yypcontext_token(pctx);
	struct strbuf sb = STRBUF_INIT;
	int n, i;

	if (preport_unclosed(pctx, ctx, scanner))
		return 0;
	strbuf_puts(&sb, "syntax error");
	if (tok != YYSYMBOL_YYEMPTY) {
		strbuf_puts(&sb, ": unexpected ");
		if (tok == YYSYMBOL_YYEOF || tok == YYSYMBOL_YYerror || tok == YYSYMBOL_YYUNDEF)
			psym_put(&sb, tok);
		else if (psym_name(tok) != NULL)
			strbuf_printf(&sb, "%s '%s'", psym_name(tok), idlc_lex_last_text(scanner));
		else
			strbuf_printf(&sb, "'%s'", idlc_lex_last_text(scanner));
		n = pexpected(pctx, expected, ROOM);
		if (n > 0 && n <= MAX_EXPECTED) {
			strbuf_puts(&sb, ", expecting ");
			for (i = 0; i < n; i++) {
				if (i > 0)
					strbuf_puts(&sb, i == n - 1 ? " or " : ", ");
				psym_put(&sb, expected[i]);
			}
		}
	}
	idlc_error(ctx, idlc_ploc(yypcontext_location(pctx)), "%s",
		   sb.failed ? "syntax error" : strbuf_str(&sb));
	strbuf_fini(&sb);
	return 0;
}

static void
idlc_yyerror(IDLC_YYLTYPE *loc, struct idlc_ctx *ctx, void *scanner, const char *msg)
{
	(void)scanner;
	if (strcmp(msg, "memory exhausted") == 0)
		idlc_error(ctx, idlc_ploc(loc), "input nested too deeply (the parser's stack is full)");
	else
		idlc_error(ctx, idlc_ploc(loc), "%s", msg);
}
