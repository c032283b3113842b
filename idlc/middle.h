/*
 * middle.h - the middle end: what the compiler knows of every argument and routine once sema
 * has checked the interface, computed once and read by everything after it.
 *
 * Three stages, run in this order by idlc_middle() (after sema, before the emitters):
 *
 *   facts.c   every argument's facts (the IDLC_AK_* bits below, the C types of its
 *             parameters, the argument whose count it shares), and the module's;
 *   layout.c  wire offsets and message sizes (docs/generated-code.md, "Wire layout");
 *   desc.c    the descriptor table (struct idl_subsystem, <idl/idl_subsystem.h>) in memory,
 *             each argument's row from its facts, and each routine's signature hash from its
 *             row (wire/sighash.c, the runtime's own function).
 *
 * The emitters, idlcall (through idlc_subsystem(), idlc.h) and the tests read what these
 * stages leave; none of them asks again what an argument is. A new kind of argument or a
 * new flag is a new fact here, set in facts.c, and the table's row follows from the facts in
 * desc.c: the stubs, the table, the hash and idlcall cannot disagree.
 *
 * Argument facts, as MIG's routine.h has its akb* bits. A fact holds for the argument as
 * declared in its routine (its direction included), never for the type alone:
 *
 *   IDLC_AK_TRAVELS      in, out or inout: carried in a message
 *   IDLC_AK_REQUEST      carried in the request (in, inout)
 *   IDLC_AK_REPLY        carried in the reply (out, inout)
 *   IDLC_AK_VAR          travels as a variable array or string: a uint32_t count in the
 *                        fixed part, the data in the variable part
 *   IDLC_AK_STRING       travels as c_string[N] or c_string[*:N]
 *   IDLC_AK_RECORD       travels as a C struct (struct[N] of T, GNU struct {}, a record of
 *                        opaque bytes): by value in, by pointer out, copied with memcpy
 *   IDLC_AK_DESC         travels as a descriptor: data out of line, a port, an array of ports
 *   IDLC_AK_PORTS        an array of ports (out of line, or inline: IDLC_AK_INLINE_PORTS)
 *   IDLC_AK_INLINE_PORTS an inline array of ports (array[N] or array[*:N] of a port): it
 *                        travels as an array of ports, but its memory is the stubs', never a
 *                        routine's: in ones are freed after the server routine, out ones are
 *                        filled by the routine into the server stub's buffer and copied into
 *                        the caller's
 *   IDLC_AK_OOL_DATA     data out of line (not ports): its byte size must fit 32 bits
 *   IDLC_AK_COUNTED      its element count travels with it (variable arrays, out-of-line
 *                        data and arrays of ports that are not of a fixed size): <arg>Cnt,
 *                        its own or its leader's
 *   IDLC_AK_SAMECOUNT    `samecount`: the count is its leader's (arg->leader), the argument
 *                        has no <arg>Cnt of its own; each side checks the counts received
 *                        agree
 *   IDLC_AK_LEADER       other arguments share its count (it is their arg->leader)
 *   IDLC_AK_COUNTINOUT   `countinout`: an out variable array whose caller's room
 *                        (*<arg>Cnt) travels in the request, as a count of its own there
 *   IDLC_AK_OVERWRITE    `overwrite`: out data out of line copied into the caller's buffer
 *   IDLC_AK_SERVERCOPY   `servercopy`: the server routine gets boolean_t <arg>SCopy
 *   IDLC_AK_GIVEN        `dealloc`: sent with IDL_DESCF_DEALLOC, the sender gives it away
 *   IDLC_AK_SEQNO        msgseqno: the server routine gets the request's sequence number
 *   IDLC_AK_CAPACITY     the client stub copies what arrives into the caller's buffer, whose
 *                        room is *<arg>Cnt (or its leader's) on entry: out variable arrays,
 *                        `overwrite` data, out inline arrays of ports of a variable size
 *   IDLC_AK_SERVER_LOCAL the server stub holds it in a local during the call: scalars and
 *                        records returned, records in, descriptors returned, values an intran
 *                        translates
 *   IDLC_AK_REPLY_HANDLE sreplyport or replyport: the server routine gets an idl_reply_t
 *   IDLC_AK_TOKEN        a security or audit token direction: a struct idl_cred
 *
 * and per side (IDLC_USER: the client stub, IDLC_SERVER: the server routine; the server bit
 * is the user bit shifted by one, so IDLC_AK_PARAM(side) and the like select one):
 *
 *   IDLC_AK_USER_PARAM / _SERVER_PARAM      a parameter of that side's function
 *   IDLC_AK_USER_POLY / _SERVER_POLY        that side names or is told the disposition:
 *                                           mach_msg_type_name_t <arg>Poly
 *   IDLC_AK_USER_DEALLOC / _SERVER_DEALLOC  `dealloc[]` and that side sends it:
 *                                           boolean_t <arg>Dealloc
 *   IDLC_AK_USER_ELEM / _SERVER_ELEM        that side's C type names one element (an
 *                                           anonymous inline array; or on the client's
 *                                           side an array or string the caller may pass
 *                                           less of than its bound - in variable arrays
 *                                           and strings, `const`, and out variable
 *                                           arrays): the parameter is a pointer to it
 *
 * Ownership: the facts live in the arguments and the module, the table in the context's
 * arena; all are freed with the context.
 */
#ifndef IDLC_MIDDLE_H
#define IDLC_MIDDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "idlc.h"

/* The two sides of a routine: its client stub and its server routine. */
enum idlc_side {
	IDLC_USER = 0,
	IDLC_SERVER = 1,
};

#define IDLC_AK_TRAVELS 0x00000001u
#define IDLC_AK_REQUEST 0x00000002u
#define IDLC_AK_REPLY 0x00000004u
#define IDLC_AK_VAR 0x00000008u
#define IDLC_AK_STRING 0x00000010u
#define IDLC_AK_RECORD 0x00000020u
#define IDLC_AK_DESC 0x00000040u
#define IDLC_AK_PORTS 0x00000080u
#define IDLC_AK_INLINE_PORTS 0x00000100u
#define IDLC_AK_OOL_DATA 0x00000200u
#define IDLC_AK_COUNTED 0x00000400u
#define IDLC_AK_SAMECOUNT 0x00000800u
#define IDLC_AK_LEADER 0x00001000u
#define IDLC_AK_COUNTINOUT 0x00002000u
#define IDLC_AK_OVERWRITE 0x00004000u
#define IDLC_AK_SERVERCOPY 0x00008000u
#define IDLC_AK_GIVEN 0x00010000u
#define IDLC_AK_SEQNO 0x00020000u
#define IDLC_AK_CAPACITY 0x00040000u
#define IDLC_AK_SERVER_LOCAL 0x00080000u
#define IDLC_AK_REPLY_HANDLE 0x00100000u
#define IDLC_AK_TOKEN 0x00200000u
#define IDLC_AK_USER_PARAM 0x00400000u
#define IDLC_AK_SERVER_PARAM 0x00800000u
#define IDLC_AK_USER_POLY 0x01000000u
#define IDLC_AK_SERVER_POLY 0x02000000u
#define IDLC_AK_USER_DEALLOC 0x04000000u
#define IDLC_AK_SERVER_DEALLOC 0x08000000u
#define IDLC_AK_USER_ELEM 0x10000000u
#define IDLC_AK_SERVER_ELEM 0x20000000u

/* One side's bit of a pair. */
#define IDLC_AK_PARAM(side) (IDLC_AK_USER_PARAM << (side))
#define IDLC_AK_POLY(side) (IDLC_AK_USER_POLY << (side))
#define IDLC_AK_DEALLOC(side) (IDLC_AK_USER_DEALLOC << (side))
#define IDLC_AK_ELEM(side) (IDLC_AK_USER_ELEM << (side))

/* Whether argument a has every fact of `facts`. */
static inline bool
idlc_is(const struct idlc_arg *a, unsigned facts)
{
	return (a->facts & facts) == facts;
}

/* Whether some argument of the routine has every fact of `facts`. */
bool idlc_any_arg(const struct idlc_routine *rt, unsigned facts);

/* The argument whose count a travels with: its samecount leader, or a itself. */
static inline const struct idlc_arg *
idlc_count_owner(const struct idlc_arg *a)
{
	return a->leader != NULL ? a->leader : a;
}

/* The stages (each returns the context's error count). */
int idlc_facts(struct idlc_ctx *ctx, struct idlc_module *m); /* facts.c */
int idlc_desc(struct idlc_ctx *ctx, struct idlc_module *m); /* desc.c */

#endif /* IDLC_MIDDLE_H */
