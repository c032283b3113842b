/*
 * types.c - the IPC type names (MACH_MSG_TYPE_*) and the built-in types.
 *
 * The built-ins are declared in .defs text parsed before the user's file, as if a prelude
 * were included: GNU MIG's predefined char, short, int, int64, uintptr_t, intptr_t, and
 * every name GNU Mach's std_types.defs and machine_types.defs declare. They exist before the
 * first statement (Apple's rule), so files that declare types before their `subsystem`
 * work; a file that includes the real std_types.defs redefines them with identical text,
 * which sema accepts silently.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "front.h"

static const struct idlc_ipc_info ipc_table[] = {
	{ "MACH_MSG_TYPE_UNSTRUCTURED", IDLC_IPC_UNSTRUCTURED, 0, 0, IDL_WT_NONE, NULL },
	{ "MACH_MSG_TYPE_BIT", IDLC_IPC_BIT, 1, 0, IDL_WT_NONE, NULL },
	{ "MACH_MSG_TYPE_BOOLEAN", IDLC_IPC_BOOLEAN, 32, IDL_ARG_SCALAR, IDL_WT_BOOLEAN,
	  "boolean_t" },
	{ "MACH_MSG_TYPE_INTEGER_8", IDLC_IPC_INTEGER_8, 8, IDL_ARG_SCALAR, IDL_WT_INT8, "int8_t" },
	{ "MACH_MSG_TYPE_INTEGER_16", IDLC_IPC_INTEGER_16, 16, IDL_ARG_SCALAR, IDL_WT_INT16,
	  "int16_t" },
	{ "MACH_MSG_TYPE_INTEGER_32", IDLC_IPC_INTEGER_32, 32, IDL_ARG_SCALAR, IDL_WT_INT32,
	  "int32_t" },
	{ "MACH_MSG_TYPE_INTEGER_64", IDLC_IPC_INTEGER_64, 64, IDL_ARG_SCALAR, IDL_WT_INT64,
	  "int64_t" },
	{ "MACH_MSG_TYPE_CHAR", IDLC_IPC_CHAR, 8, IDL_ARG_SCALAR, IDL_WT_CHAR, "char" },
	{ "MACH_MSG_TYPE_BYTE", IDLC_IPC_BYTE, 8, IDL_ARG_SCALAR, IDL_WT_BYTE, "unsigned char" },
	{ "MACH_MSG_TYPE_REAL", IDLC_IPC_REAL, 0, IDL_ARG_SCALAR, IDL_WT_NONE, NULL },
	{ "MACH_MSG_TYPE_REAL_32", IDLC_IPC_REAL_32, 32, IDL_ARG_SCALAR, IDL_WT_REAL32, "float" },
	{ "MACH_MSG_TYPE_REAL_64", IDLC_IPC_REAL_64, 64, IDL_ARG_SCALAR, IDL_WT_REAL64, "double" },
	{ "MACH_MSG_TYPE_STRING", IDLC_IPC_STRING, 0, IDL_ARG_CSTRING_FIXED, IDL_WT_CHAR, "char" },
	{ "MACH_MSG_TYPE_STRING_C", IDLC_IPC_STRING_C, 0, IDL_ARG_CSTRING_FIXED, IDL_WT_CHAR,
	  "char" },
	{ "MACH_MSG_TYPE_MOVE_RECEIVE", IDLC_IPC_MOVE_RECEIVE, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_COPY_SEND", IDLC_IPC_COPY_SEND, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_MAKE_SEND", IDLC_IPC_MAKE_SEND, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_MOVE_SEND", IDLC_IPC_MOVE_SEND, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_MAKE_SEND_ONCE", IDLC_IPC_MAKE_SEND_ONCE, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_MOVE_SEND_ONCE", IDLC_IPC_MOVE_SEND_ONCE, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_PORT_NAME", IDLC_IPC_PORT_NAME, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_name_t" },
	{ "MACH_MSG_TYPE_PORT_RECEIVE", IDLC_IPC_PORT_RECEIVE, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_PORT_SEND", IDLC_IPC_PORT_SEND, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_PORT_SEND_ONCE", IDLC_IPC_PORT_SEND_ONCE, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
	{ "MACH_MSG_TYPE_POLYMORPHIC", IDLC_IPC_POLYMORPHIC, 0, IDL_ARG_PORT, IDL_WT_PORT,
	  "mach_port_t" },
};

static const struct idlc_ipc_info ipc_number = {
	"a numeric IPC type", IDLC_IPC_NUMBER, 0, 0, IDL_WT_NONE, NULL
};

const struct idlc_ipc_info *
idlc_ipc_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof ipc_table / sizeof ipc_table[0]; i++)
		if (strcmp(ipc_table[i].name, name) == 0)
			return &ipc_table[i];
	return NULL;
}

const struct idlc_ipc_info *
idlc_ipc_info(enum idlc_ipc ipc)
{
	size_t i;

	if (ipc == IDLC_IPC_NUMBER)
		return &ipc_number;
	for (i = 0; i < sizeof ipc_table / sizeof ipc_table[0]; i++)
		if (ipc_table[i].ipc == ipc)
			return &ipc_table[i];
	return NULL;
}

/*
 * The prelude. Pointer-sized integers follow the host: idlc runs where the stubs run.
 * data/include/mach/std_types.defs repeats these declarations word for word, so a file that
 * includes it redefines nothing.
 */
#if UINTPTR_MAX > 0xffffffffu
#define PRELUDE_WORD "MACH_MSG_TYPE_INTEGER_64"
#define PRELUDE_LONG "64"
#else
#define PRELUDE_WORD "MACH_MSG_TYPE_INTEGER_32"
#define PRELUDE_LONG "32"
#endif

static const char prelude[] =
	"type char = MACH_MSG_TYPE_CHAR;\n"
	"type short = MACH_MSG_TYPE_INTEGER_16;\n"
	"type int = MACH_MSG_TYPE_INTEGER_32;\n"
	"type int64 = MACH_MSG_TYPE_INTEGER_64 ctype: int64_t;\n"
	"type uintptr_t = " PRELUDE_WORD ";\n"
	"type intptr_t = " PRELUDE_WORD ";\n"
	/* std_types.defs */
	"type int32_t = MACH_MSG_TYPE_INTEGER_32;\n"
	"type int64_t = MACH_MSG_TYPE_INTEGER_64;\n"
	"type boolean_t = MACH_MSG_TYPE_BOOLEAN;\n"
	"type unsigned = MACH_MSG_TYPE_INTEGER_32;\n"
	"type uint32_t = MACH_MSG_TYPE_INTEGER_32;\n"
	"type uint64_t = MACH_MSG_TYPE_INTEGER_64;\n"
	/* machine_types.defs */
	"type natural_t = uint32_t;\n"
	"type integer_t = int32_t;\n"
	"type rpc_long_natural_t = uint" PRELUDE_LONG "_t;\n"
	"type rpc_long_integer_t = int" PRELUDE_LONG "_t;\n"
	"type long_natural_t = rpc_long_natural_t;\n"
	"type long_integer_t = rpc_long_integer_t;\n"
	"type rpc_phys_addr_t = uint64_t;\n"
	/* std_types.defs, continued */
	"type kern_return_t = int;\n"
	"type pointer_t = ^array[] of MACH_MSG_TYPE_BYTE ctype: vm_offset_t;\n"
	"type mach_port_t = MACH_MSG_TYPE_COPY_SEND;\n"
	"type mach_port_array_t = array[] of mach_port_t;\n"
	"type mach_port_name_t = MACH_MSG_TYPE_PORT_NAME;\n"
	"type mach_port_name_array_t = array[] of mach_port_name_t;\n"
	"type mach_port_right_t = natural_t;\n"
	"type mach_port_type_t = natural_t;\n"
	"type mach_port_type_array_t = array[] of mach_port_type_t;\n"
	"type mach_port_urefs_t = natural_t;\n"
	"type mach_port_delta_t = integer_t;\n"
	"type mach_port_seqno_t = natural_t;\n"
	"type mach_port_mscount_t = unsigned;\n"
	"type mach_port_msgcount_t = unsigned;\n"
	"type mach_port_rights_t = unsigned;\n"
	"type mach_msg_id_t = integer_t;\n"
	"type mach_msg_type_name_t = unsigned;\n"
	"type mach_msg_type_number_t = natural_t;\n"
	"type mach_port_move_receive_t = MACH_MSG_TYPE_MOVE_RECEIVE ctype: mach_port_t;\n"
	"type mach_port_copy_send_t = MACH_MSG_TYPE_COPY_SEND ctype: mach_port_t;\n"
	"type mach_port_make_send_t = MACH_MSG_TYPE_MAKE_SEND ctype: mach_port_t;\n"
	"type mach_port_move_send_t = MACH_MSG_TYPE_MOVE_SEND ctype: mach_port_t;\n"
	"type mach_port_make_send_once_t = MACH_MSG_TYPE_MAKE_SEND_ONCE ctype: mach_port_t;\n"
	"type mach_port_move_send_once_t = MACH_MSG_TYPE_MOVE_SEND_ONCE ctype: mach_port_t;\n"
	"type mach_port_receive_t = MACH_MSG_TYPE_PORT_RECEIVE ctype: mach_port_t;\n"
	"type mach_port_send_t = MACH_MSG_TYPE_PORT_SEND ctype: mach_port_t;\n"
	"type mach_port_send_once_t = MACH_MSG_TYPE_PORT_SEND_ONCE ctype: mach_port_t;\n"
	"type mach_port_poly_t = polymorphic ctype: mach_port_t;\n";

int
idlc_types_init(struct idlc_ctx *ctx)
{
	return idlc_parse_text(ctx, ctx->builtin_file, prelude, sizeof prelude - 1);
}
