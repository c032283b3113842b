/*
 * ast.h - the compiler's model of one interface: what the parser builds, sema checks and
 * completes, layout annotates with wire offsets, and the emitters read.
 *
 * Ownership: every node and every string here lives in the context's arena
 * (idlc_arena_*) and is freed with the context, all at once. Nothing is freed node by node,
 * so error recovery in the parser can drop partial nodes without leaking.
 *
 * Stages and what each fills:
 *   parser.y  - all syntax: names, locations, type expressions, argument directions and
 *               flags, statements in order;
 *   sema.c    - resolves named types (type->target), applies the MIG defaults (first
 *               argument is the request port; others default to `in`), numbers routines
 *               (skips consume numbers), computes each type's wire facts (wire_type,
 *               elem_size, count, kind) and C types, and reports every error it finds;
 *   the middle end (middle.h):
 *     facts.c - what each argument is in its routine (arg->facts, its parameters' C types,
 *               its samecount leader);
 *     layout.c - offsets and sizes of every message (arg->req_offset ..., rt->req_fixed ...);
 *     desc.c  - the descriptor table (m->desc, rt->row, arg->row) and the signature hashes;
 *   emit_*.c  - read only.
 */
#ifndef IDLC_AST_H
#define IDLC_AST_H

#include <stdbool.h>
#include <stdint.h>

#include <idl/idl_subsystem.h>

/* A source location after cpp line markers: the user's file, 1-based line and column. */
struct idlc_loc {
	const char *file; /* interned in the arena */
	int line;
	int col;
};

/* What a type expression is, before and after resolution. */
enum idlc_type_kind {
	IDLC_T_NAMED = 1, /* a reference to a named type; sema sets `target` */
	IDLC_T_IPC, /* MACH_MSG_TYPE_xxx, a number, or `polymorphic` (ipc_name) */
	IDLC_T_LONGFORM, /* (ipctype, size [, flags]) */
	IDLC_T_ARRAY_FIXED, /* array[N] of T */
	IDLC_T_ARRAY_VAR, /* array[*:N] of T */
	IDLC_T_ARRAY_UNBOUNDED, /* array[] of T, array[*] of T */
	IDLC_T_STRUCT_ARRAY, /* struct[N] of T */
	IDLC_T_STRUCT_FIELDS, /* GNU struct { T a; U b; } */
	IDLC_T_CSTRING_FIXED, /* c_string[N] */
	IDLC_T_CSTRING_VAR, /* c_string[*:N] */
	IDLC_T_POINTER, /* ^T: out-of-line */
	IDLC_T_NATIVE, /* Apple PointerTo(C), PointerToIfNot(C, D), ValueOf(C): `native` names the
			* form, `ref` holds C and `native_alt` D */
};

/* The IPC type names MIG knows (MACH_MSG_TYPE_*), by what they mean for us. */
enum idlc_ipc {
	IDLC_IPC_NONE = 0,
	IDLC_IPC_UNSTRUCTURED,
	IDLC_IPC_BIT,
	IDLC_IPC_BOOLEAN,
	IDLC_IPC_INTEGER_8,
	IDLC_IPC_INTEGER_16,
	IDLC_IPC_INTEGER_32,
	IDLC_IPC_INTEGER_64,
	IDLC_IPC_CHAR,
	IDLC_IPC_BYTE,
	IDLC_IPC_REAL, /* GNU: size from the long form */
	IDLC_IPC_REAL_32,
	IDLC_IPC_REAL_64,
	IDLC_IPC_STRING,
	IDLC_IPC_STRING_C,
	IDLC_IPC_MOVE_RECEIVE, /* port dispositions: all are ports for us */
	IDLC_IPC_COPY_SEND,
	IDLC_IPC_MAKE_SEND,
	IDLC_IPC_MOVE_SEND,
	IDLC_IPC_MAKE_SEND_ONCE,
	IDLC_IPC_MOVE_SEND_ONCE,
	IDLC_IPC_PORT_NAME,
	IDLC_IPC_PORT_RECEIVE,
	IDLC_IPC_PORT_SEND,
	IDLC_IPC_PORT_SEND_ONCE,
	IDLC_IPC_POLYMORPHIC,
	IDLC_IPC_NUMBER, /* a bare number as the IPC type */
};

struct idlc_field; /* GNU struct { } members */

struct idlc_type {
	enum idlc_type_kind kind;
	struct idlc_loc loc; /* where the type expression starts */
	const char *name; /* a declared type's name; NULL for an anonymous expression */
	struct idlc_loc name_loc; /* a declared type: where its name is */

	/* Syntax. */
	enum idlc_ipc ipc; /* IDLC_T_IPC, IDLC_T_LONGFORM */
	enum idlc_ipc ipc_out; /* `in|out` IPC pairs; IDLC_IPC_NONE otherwise */
	uint32_t ipc_number; /* IDLC_IPC_NUMBER */
	uint32_t size_bits; /* IDLC_T_LONGFORM: the size */
	uint32_t count; /* fixed count, or the bound of a variable array or string (0: none) */
	const char *ref; /* IDLC_T_NAMED: the name referred to */
	struct idlc_type *elem; /* arrays, struct[N], ^T: the element / pointed-to type */
	struct idlc_field *fields; /* IDLC_T_STRUCT_FIELDS */
	const char *ctype; /* ctype: */
	const char *cusertype; /* cusertype: */
	const char *cservertype; /* cservertype: */
	const char *intran, *intran_type; /* intran: TYPE FN(...) */
	const char *outtran, *outtran_type; /* outtran: TYPE FN(...) */
	const char *destructor; /* destructor: FN(...) */
	const char *intran_arg, *outtran_arg, *destructor_arg; /* the type in their (...) */
	const char *intranpayload, *intranpayload_type; /* GNU intranpayload: TYPE FN */
	unsigned flags; /* IDLC_T_LONGFORM: IPC flags after the size (IDLC_AF_*) */
	const char *native, *native_alt; /* IDLC_T_NATIVE */

	/* Resolution (sema). */
	struct idlc_type *target; /* IDLC_T_NAMED: the declared type */
	bool resolved; /* wire facts below are valid */
	bool resolving; /* cycle detection */
	enum idl_arg_kind arg_kind; /* how an argument of this type travels */
	enum idl_wire_type wire_type; /* wire type of one element */
	bool is_signed; /* integer elements are signed */
	uint32_t elem_size; /* bytes of one element on the wire */
	uint32_t wire_count; /* fixed: element count; variable: bound; scalar: 1 */
	uint32_t align; /* wire alignment of one element: 1, 2, 4 or 8 */
	const char *c_user; /* C type on the client side (of the whole value, or of an element
			     * of an inline-declared array) */
	const char *c_server; /* C type on the server side */
	const char *c_elem; /* C type of one element, for _Static_assert on sizes */
	enum idlc_ipc port_ipc; /* ports (and arrays of them): the disposition a sender names,
				 * written into a descriptor's aux */
	bool poly_in; /* ports: the sender names the disposition at run time (`polymorphic`,
		       * MACH_MSG_TYPE_PORT_SEND ... as the in-name): an <arg>Poly argument */
	bool poly_out; /* ports: the receiver is told the disposition (`polymorphic` as the
			* out-name of an `in|out` pair): an <arg>Poly argument */
	bool ool_fixed; /* IDL_ARG_OOL: the size is fixed (^array[N] of T, ^T): no count */
	bool ool_inline; /* IDL_ARG_OOL: an inline array of ports (array[N] or array[*:N] of
			  * a port), which travels as an array of ports, in or out */
	const char *unsupported; /* sema: why an argument of this type cannot travel ("an
				  * inline array of ports"), or NULL; using such a type in a
				  * routine is an error, declaring it is not */
	bool broken; /* an error was reported for this type; its uses stay quiet */

	struct idlc_type *next; /* the module's list of declared types */
};

struct idlc_field {
	const char *type_name;
	const char *name;
	struct idlc_loc loc;
	struct idlc_type *type; /* resolved by sema */
	struct idlc_field *next;
};

/* Argument directions as written (MIG's keywords). */
enum idlc_dir {
	IDLC_DIR_NONE = 0, /* not written: request port if first, else in */
	IDLC_DIR_IN,
	IDLC_DIR_OUT,
	IDLC_DIR_INOUT,
	IDLC_DIR_REQUESTPORT,
	IDLC_DIR_REPLYPORT,
	IDLC_DIR_SREPLYPORT,
	IDLC_DIR_UREPLYPORT,
	IDLC_DIR_WAITTIME,
	IDLC_DIR_MSGOPTION,
	IDLC_DIR_MSGSEQNO,
	IDLC_DIR_SENDTIME,
	IDLC_DIR_SECTOKEN,
	IDLC_DIR_SERVERSECTOKEN,
	IDLC_DIR_USERSECTOKEN,
	IDLC_DIR_AUDITTOKEN,
	IDLC_DIR_SERVERAUDITTOKEN,
	IDLC_DIR_USERAUDITTOKEN,
	IDLC_DIR_SERVERCONTEXTTOKEN,
	IDLC_DIR_SERVERIMPL,
	IDLC_DIR_USERIMPL,
};

/* Argument flags (MIG's, after the type). */
#define IDLC_AF_DEALLOC 0x0001
#define IDLC_AF_DEALLOC_RT 0x0002 /* dealloc[] */
#define IDLC_AF_NOTDEALLOC 0x0004
#define IDLC_AF_SERVERCOPY 0x0008
#define IDLC_AF_COUNTINOUT 0x0010
#define IDLC_AF_SAMECOUNT 0x0020
#define IDLC_AF_RETCODE 0x0040
#define IDLC_AF_PHYSICALCOPY 0x0080
#define IDLC_AF_OVERWRITE 0x0100
#define IDLC_AF_AUTO 0x0200
#define IDLC_AF_CONST 0x0400
#define IDLC_AF_ISLONG 0x0800
#define IDLC_AF_ISNOTLONG 0x1000

struct idlc_arg {
	const char *name;
	struct idlc_loc loc;
	enum idlc_dir dir_written; /* as in the source */
	struct idlc_type *type; /* the type expression (often IDLC_T_NAMED) */
	unsigned flags; /* IDLC_AF_* */

	/* Sema. */
	enum idl_arg_dir dir; /* the meaning: requestport, in, out, inout, ... */
	unsigned desc_flags; /* IDLC_AF_DEALLOC or IDLC_AF_DEALLOC_RT when it applies, after the
			      * type's long-form flags are merged in */
	struct idlc_type *rtype; /* the resolved type: `type` itself, or for an anonymous reference
				  * (`x : int`) the declared type it names; its wire facts and C
				  * types are complete (NULL after an error) */

	/* Facts (facts.c): what the argument is in its routine, IDLC_AK_* of middle.h. */
	unsigned facts;
	const struct idlc_arg *leader; /* samecount: the argument whose count this one shares */
	uint32_t shared_bound; /* a samecount leader: the smallest bound of the arrays sharing
				* its count (0: none is bounded) */
	const char *c_type[2]; /* the C type of its parameter, client [0] and server [1] */
	const char *c_elem; /* the C type of one element of an array, or NULL when unknown */
	const char *c_in; /* the client's C type of a request argument as an input alone (the
			   * asynchronous stub's parameter): c_type[0], but for an inout one
			   * the type an in argument of its type takes */

	/* Layout. For a variable array the offset is that of its uint32_t count; for out-of-line
	 * data and ports, that of its descriptor; for a `countinout` out array, the request
	 * offset is that of the caller's capacity. */
	uint32_t req_offset; /* IDL_NO_OFFSET when not in the request */
	uint32_t rep_offset; /* IDL_NO_OFFSET when not in the reply */

	/* Descriptor table (desc.c): its row. */
	const struct idl_arg_desc *row;

	struct idlc_arg *next;
};

enum idlc_routine_kind {
	IDLC_RT_ROUTINE = IDL_RT_ROUTINE,
	IDLC_RT_SIMPLEROUTINE = IDL_RT_SIMPLEROUTINE,
	IDLC_RT_SKIP = IDL_RT_SKIP,
};

struct idlc_routine {
	enum idlc_routine_kind kind;
	const char *name; /* NULL for a skip */
	struct idlc_loc loc;
	struct idlc_arg *args; /* in order */
	unsigned nargs;
	uint32_t number; /* sema: 0-based, skips included */
	int32_t waittime; /* sema: ms from a global `waittime N`, or -1 */
	const char *waittime_expr; /* sema: a global `waittime` that is not a number: the C
				    * expression (ms) the client stub passes; waittime is -1 */

	/* Layout. */
	uint32_t req_ndesc; /* descriptors in the request (out-of-line data and ports) */
	uint32_t rep_ndesc; /* descriptors in the reply */
	uint32_t req_fixed; /* header + fixed part, padded to 8 */
	uint32_t req_max; /* req_fixed + every variable array at its bound, padded */
	uint32_t rep_fixed;
	uint32_t rep_max;

	/* Descriptor table (desc.c): its row and its signature hash. */
	const struct idl_routine_desc *row;
	uint64_t sig_hash;

	struct idlc_routine *next;
};

enum idlc_import_kind {
	IDLC_IMPORT = 1, /* both sides */
	IDLC_UIMPORT, /* user side */
	IDLC_SIMPORT, /* server side */
	IDLC_DIMPORT, /* Apple: definitions header */
	IDLC_IIMPORT, /* Apple: internal header */
};

struct idlc_import {
	enum idlc_import_kind kind;
	const char *file; /* as written, with its quotes or angle brackets: "\"x.h\"", "<x.h>" */
	struct idlc_loc loc;
	struct idlc_import *next;
};

/* One interface: everything a .defs file declared, in source order within each list. */
struct idlc_module {
	const char *input_name; /* the file named on the command line, or "<stdin>" */

	const char *subsystem; /* NULL until a `subsystem` statement */
	struct idlc_loc subsystem_loc;
	int32_t base;
	bool kernel_user;
	bool kernel_server;

	const char *userprefix; /* "" when not given */
	const char *serverprefix; /* "" when not given */
	const char *serverdemux; /* NULL: <subsystem>_server */
	const char *waittime; /* global `waittime` text, or NULL */
	const char *msgoption; /* global `msgoption` text, or NULL */
	const char *rcsid;
	const char *sendtime; /* Apple's global `sendtime` text, or NULL (ignored) */

	struct idlc_import *imports;
	struct idlc_type *types; /* declared types, built-ins first */
	struct idlc_routine *routines;
	unsigned nroutines; /* skips included */

	/* Facts (facts.c): whether the stubs need <idl/idl_ool.h> (descriptors, reply handles,
	 * tokens). */
	bool needs_ool;

	/* Layout: the largest request and reply of any routine. */
	uint32_t max_request;
	uint32_t max_reply;

	/* Descriptor table (desc.c): what idlc prints into both .c files and idlcall serves
	 * with. NULL until the middle end ran without errors. */
	const struct idl_subsystem *desc;
};

#endif /* IDLC_AST_H */
