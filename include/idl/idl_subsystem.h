/*
 * idl_subsystem.h - the descriptor table idlc emits for each subsystem.
 *
 * One `const struct idl_subsystem <subsystem>_subsystem` per interface describes every
 * routine: name, number, kind, signature hash, message sizes and each argument's direction,
 * wire type, bounds and offsets. The hot path does not interpret it: compiled stubs carry
 * their own straight-line code. The runtime uses it for the hello (signature hashes), for
 * sizing receive buffers, for naming routines in errors and traces, and the tools (idlcall,
 * the dynamic server) marshal from it.
 *
 * idlc emits the descriptor into both <sub>User.c and <sub>Server.c as a weak definition, so
 * a program may link the client and the server stubs of one subsystem together.
 * Descriptors are immutable and may be shared by any number of threads.
 */
#ifndef IDL_SUBSYSTEM_H
#define IDL_SUBSYSTEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IDL_SUBSYSTEM_MAGIC 0x69646c32u /* "idl2": bumped when the layout below changes */

enum idl_arg_dir {
	IDL_DIR_REQUESTPORT = 1, /* the port the request is sent to; not in the message */
	IDL_DIR_IN = 2,
	IDL_DIR_OUT = 3,
	IDL_DIR_INOUT = 4,
	IDL_DIR_WAITTIME = 5, /* client-side only: per-call deadline in ms; not in the message */
	IDL_DIR_MSGOPTION = 6, /* client-side only; not in the message */
	IDL_DIR_OTHER = 7, /* other MIG directions that idlc maps (replyport, msgseqno...) */
};

/* How an argument travels. */
enum idl_arg_kind {
	IDL_ARG_SCALAR = 1, /* one element inline */
	IDL_ARG_FIXED_ARRAY = 2, /* array[N] of T, struct[N] of T: N elements inline */
	IDL_ARG_VAR_ARRAY = 3, /* array[*:N] of T: uint32 count in the fixed part, data after */
	IDL_ARG_CSTRING_FIXED = 4, /* c_string[N]: N bytes inline, NUL inside them */
	IDL_ARG_CSTRING_VAR = 5, /* c_string[*:N]: count (strlen + 1) then bytes, NUL last */
	IDL_ARG_PORT = 6, /* a port: the request port, or a port carried by descriptor */
	IDL_ARG_OOL = 7, /* out-of-line data */
	IDL_ARG_IMPLICIT = 8, /* not in the message (waittime, msgoption...) */
};

/* The wire type of one element. */
enum idl_wire_type {
	IDL_WT_NONE = 0,
	IDL_WT_INT8 = 1,
	IDL_WT_INT16 = 2,
	IDL_WT_INT32 = 3,
	IDL_WT_INT64 = 4,
	IDL_WT_BOOLEAN = 5, /* 32 bits, as MACH_MSG_TYPE_BOOLEAN */
	IDL_WT_CHAR = 6, /* 8 bits */
	IDL_WT_BYTE = 7, /* 8 bits, opaque */
	IDL_WT_REAL32 = 8,
	IDL_WT_REAL64 = 9,
	IDL_WT_PORT = 10,
	IDL_WT_STRUCT = 11, /* opaque bytes of elem_size (GNU struct {} and cpp-defined records) */
};

#define IDL_NO_OFFSET UINT32_MAX

/*
 * One argument. Beside how it travels, the table says what the generated stubs do with it
 * (flags and disposition), so that whoever marshals or serves from the table alone (the
 * dynamic server, idl_msg_pack(), idlcall) does exactly what the compiled stubs do.
 */
struct idl_arg_desc {
	const char *name; /* as written in the .defs file */
	const char *ctype; /* the C type the stubs use for one element, e.g. "int" */
	uint8_t dir; /* enum idl_arg_dir */
	uint8_t kind; /* enum idl_arg_kind */
	uint8_t wire_type; /* enum idl_wire_type */
	uint8_t disposition; /* a port or array of ports in a message: the MACH_MSG_TYPE_* a
			      * sender names when it names none (15 PORT_NAME, 16 MOVE_RECEIVE,
			      * 17 MOVE_SEND, 18 MOVE_SEND_ONCE, 19 COPY_SEND, 20 MAKE_SEND,
			      * 21 MAKE_SEND_ONCE); 0 for other arguments (read as COPY_SEND) */
	uint32_t flags; /* IDL_ARGF_* */
	uint32_t elem_size; /* bytes of one element on the wire */
	uint32_t count; /* fixed: element count; variable: the bound (0 = unbounded) */
	uint32_t req_offset; /* offset in the request of the value or count, or IDL_NO_OFFSET */
	uint32_t rep_offset; /* offset in the reply of the value or count, or IDL_NO_OFFSET */
};

/* What an element is. */
#define IDL_ARGF_SIGNED 0x0001u /* integer element is signed */
#define IDL_ARGF_RECORD                                                                            \
	0x0002u /* a C struct (struct[N] of T, GNU struct {}, a record of                          \
		 * opaque bytes): passed by value in, by pointer out */
/* Ports and arrays of ports (and reply ports: the server routine's Poly). */
#define IDL_ARGF_POLY_IN 0x0004u /* polymorphic: the sender names the disposition (<arg>Poly) */
#define IDL_ARGF_POLY_OUT 0x0008u /* the receiver is told it (<arg>Poly) and checks it */
/* Descriptors. */
#define IDL_ARGF_DEALLOC 0x0010u /* `dealloc`: sent with IDL_DESCF_DEALLOC */
#define IDL_ARGF_DEALLOC_PARAM 0x0020u /* `dealloc[]`: the sender's <arg>Dealloc decides */
#define IDL_ARGF_SERVERCOPY 0x0040u /* `servercopy`: the server routine gets <arg>SCopy */
#define IDL_ARGF_FIXED 0x0080u /* out-of-line: exactly `count` elements (^array[N]), no count */
#define IDL_ARGF_INLINE                                                                            \
	0x0100u /* array[N] or array[*:N] of a port: its memory is never the                       \
		 * routine's (in: freed after it; out: the routine fills the server's buffer) */
/* Arrays with a count. */
#define IDL_ARGF_SAMECOUNT                                                                         \
	0x0800u /* `samecount`: the count is that of the nearest argument before it without        \
		 * this flag (same direction); neither routine has an <arg>Cnt for it, and a       \
		 * message whose counts differ is refused */
/* Special arguments (IDL_DIR_OTHER): what the server routine takes for them. */
#define IDL_ARGF_SEQNO 0x0200u /* msgseqno: the request's seqno, a uint32_t */
#define IDL_ARGF_REPLY                                                                             \
	0x0400u /* sreplyport, replyport: an idl_reply_t (<idl/idl_ool.h>,                         \
		 * deferred replies) */
#define IDL_ARGF_OPAQUE                                                                            \
	0x8000u /* only compiled stubs can serve it: translated types (intran,                     \
		 * outtran, destructor) and tokens on the server's side */

enum idl_routine_kind {
	IDL_RT_ROUTINE = 1,
	IDL_RT_SIMPLEROUTINE = 2,
	IDL_RT_SKIP = 3, /* a `skip`: the number is used, nothing answers it */
};

struct idl_routine_desc {
	const char *name; /* NULL for a skip */
	uint32_t number; /* 0-based position; request id = base + number */
	uint8_t kind; /* enum idl_routine_kind */
	uint8_t nargs; /* entries in args, the request port included */
	uint16_t reserved;
	uint64_t sig_hash; /* canonical signature hash (docs/wire-format.md, "The hello") */
	int32_t waittime; /* ms, from `waittime`; -1: the port's default */
	uint32_t req_fixed; /* bytes of header + fixed part of the request */
	uint32_t req_max; /* largest valid request */
	uint32_t rep_fixed; /* bytes of header + fixed part of the reply (0 for simpleroutines) */
	uint32_t rep_max; /* largest valid reply */
	const struct idl_arg_desc *args;
};

struct idl_subsystem {
	uint32_t magic; /* IDL_SUBSYSTEM_MAGIC */
	uint32_t nroutines; /* entries in routines, skips included */
	const char *name; /* the subsystem's name */
	int32_t base; /* id of routine 0 */
	uint32_t max_request; /* largest valid request of any routine */
	uint32_t max_reply; /* largest valid reply of any routine */
	uint32_t reserved;
	const struct idl_routine_desc *routines;
};

/*
 * The signature hash of a routine: 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime
 * 0x100000001b3) over its canonical form, an ASCII string. Version 1, the hash in the table
 * (sig_hash), which a peer that speaks only hello version 1 compares:
 *
 *     NUMBER ' ' NAME ' ' KIND '(' { ARG ';' } ')'
 *     ARG = DIR ' ' ARGKIND ' ' WIRETYPE ' ' ELEM_SIZE ' ' COUNT
 *
 * with numbers in decimal and words from these lists (index = the enum value):
 *     KIND:     - routine simpleroutine skip
 *     DIR:      - requestport in out inout waittime msgoption other
 *     ARGKIND:  - scalar fixed var cstring cstringvar port ool implicit
 *     WIRETYPE: none int8 int16 int32 int64 boolean char byte real32 real64 port struct
 * Arguments of kind `implicit` are left out; argument names are not part of it, so renaming
 * an argument keeps compatibility. Example: "1 add routine(requestport port port 0 1;in
 * scalar int32 4 1;in scalar int32 4 1;out scalar int32 4 1;)". A skip's hash is 0.
 * idlc computes it at compile time; this function computes the same from a descriptor.
 */
uint64_t idl_routine_sig_hash(const struct idl_routine_desc *rt);

/*
 * Version 2, what two peers that both speak hello version 2 compare (docs/wire-format.md,
 * "Signature hashes"; docs/evolution.md says what it means for changing an interface). The
 * routine's number is left out (hashes are compared number by number), and each argument
 * also says how its ports move and what its flags are:
 *
 *     NAME ' ' KIND '(' { ARG ';' } ')'
 *     ARG = DIR ' ' ARGKIND ' ' WIRETYPE ' ' ELEM_SIZE ' ' COUNT ' ' DISPOSITION ' ' FLAGS
 *     DISPOSITION: '-' (0), or port_name move_receive move_send move_send_once copy_send
 *                  make_send make_send_once (15 to 21; another value in decimal)
 *     FLAGS: '-', or words joined by ',' in this order: signed poly_in poly_out dealloc
 *            dealloc_param servercopy fixed inline samecount countinout (IDL_ARGF_* but
 *            RECORD and OPAQUE, which do not change what either side sends or is given;
 *            countinout is an out argument with a request offset)
 *
 * Example: "add routine(requestport port port 0 1 - -;in scalar int32 4 1 - signed;in scalar
 * int32 4 1 - signed;out scalar int32 4 1 - signed;)". A skip's hash is 0. The runtime
 * computes it from the table when it says hello.
 */
uint64_t idl_routine_sig_hash_v2(const struct idl_routine_desc *rt);

/* The canonical form of `version` (1 or 2) that the hash is taken over, as text: writes at
 * most cap bytes with its NUL into buf (none when cap is 0) and returns the length of the
 * whole form, as snprintf() does; 0 for a skip or an unknown version. */
size_t idl_routine_sig_form(const struct idl_routine_desc *rt, unsigned version, char *buf,
			    size_t cap);

/* The routine with request id `id`, or NULL if the id is not the subsystem's or is a skip. */
const struct idl_routine_desc *idl_subsystem_routine(const struct idl_subsystem *ss, int32_t id);

#ifdef __cplusplus
}
#endif
#endif /* IDL_SUBSYSTEM_H */
