/*
 * emit_types.c - the -types output: the C typedefs of the types an interface declares, in the
 * shapes MIG users write by hand, so that an interface needs no hand-written header
 * (docs/generated-code.md, "The -types output").
 *
 * Every declared type gets one typedef, in declaration order (a type can only use types
 * declared before it, in MIG as in C), except
 *   - the types <idl/idl.h> already defines: idlc's built-ins, the types of idlkit's
 *     <mach/std_types.defs> and <mach/mach_types.defs> (their C types are <idl/mig.h>'s),
 *     and the C and <stdint.h> names (emit_types_c_defined());
 *   - types with a C type clause (ctype:, cusertype:, cservertype:): the clause says the C
 *     type is the user's, defined elsewhere;
 *   - types that cannot travel or were refused (Apple's native types, broken ones).
 * A scalar is a typedef of its C type; a fixed array `T name[N]`; a variable array, an
 * array of its bound (`typedef unsigned char memo_t[MEMO_T_MAX];`) after the bound's macro,
 * the type's name in upper case + `_MAX` (`#define MEMO_T_MAX 512`); c_string[N] and
 * c_string[*:N] `char name[N]` (N counts the NUL); struct[N] of T a struct of one array
 * member (records travel by value, which an array typedef cannot); a GNU struct {} the same
 * struct; out-of-line data a pointer to its element.
 *
 * A header the interface imports may define the same name: an identical typedef is valid C11
 * and C++, and a different one does not compile ("conflicting types"), so the two can never
 * disagree silently.
 */
#include <config.h>

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "emit.h"

/* The names that <idl/idl.h> makes C types: C's own words, <stdint.h>'s and <idl/mig.h>'s
 * (the C types of idlkit's std_types.defs and mach_types.defs). A declared type of one of
 * these names is never redefined. tests/unit checks that every typedef of <idl/mig.h> is
 * here. */
static const char *const types_c_names[] = {
	"char",
	"short",
	"int",
	"long",
	"unsigned",
	"signed",
	"float",
	"double",
	"int8_t",
	"int16_t",
	"int32_t",
	"int64_t",
	"uint8_t",
	"uint16_t",
	"uint32_t",
	"uint64_t",
	"intptr_t",
	"uintptr_t",
	"intmax_t",
	"uintmax_t",
	"size_t",
	/* <idl/mig.h> */
	"kern_return_t",
	"boolean_t",
	"natural_t",
	"integer_t",
	"mach_msg_type_number_t",
	"mach_msg_id_t",
	"mach_msg_timeout_t",
	"mach_msg_option_t",
	"mach_msg_type_name_t",
	"vm_offset_t",
	"vm_address_t",
	"vm_size_t",
	"rpc_vm_offset_t",
	"rpc_vm_size_t",
	"pointer_t",
	"mach_port_right_t",
	"mach_port_type_t",
	"mach_port_urefs_t",
	"mach_port_seqno_t",
	"mach_port_delta_t",
	"mach_port_mscount_t",
	"mach_port_msgcount_t",
	"mach_port_rights_t",
	"rpc_long_natural_t",
	"rpc_long_integer_t",
	"rpc_phys_addr_t",
	"long_natural_t",
	"long_integer_t",
	"mach_port_t",
	"mach_port_name_t",
	"mach_port_array_t",
	"mach_port_name_array_t",
	"mach_port_type_array_t",
	"task_t",
	"thread_t",
	"vm_task_t",
	"ipc_space_t",
	"host_t",
	"host_priv_t",
	"processor_t",
	"processor_set_t",
	"processor_set_name_t",
	"memory_object_t",
	"memory_object_control_t",
	"memory_object_name_t",
	"task_array_t",
	"thread_array_t",
	"processor_array_t",
	"processor_set_array_t",
	"processor_set_name_array_t",
	"memory_object_array_t",
	"vm_prot_t",
	"vm_inherit_t",
	"vm_machine_attribute_t",
	"vm_machine_attribute_val_t",
	"vm_sync_t",
	"memory_object_copy_strategy_t",
	"memory_object_return_t",
	"thread_state_t",
	"thread_info_t",
	"task_info_t",
	"host_info_t",
	"processor_info_t",
	"processor_set_info_t",
	"rpc_signature_info_t",
	"emulation_vector_t",
	"vm_offset_array_t",
	"vm_size_array_t",
	"kernel_version_t",
	"kernel_boot_info_t",
	"vm_statistics_data_t",
	"mach_port_status_t",
	"rpc_time_value_t",
	"time_value_t",
	"security_token_t",
	"audit_token_t",
};

bool
emit_types_c_defined(const char *name)
{
	for (size_t i = 0; i < sizeof types_c_names / sizeof types_c_names[0]; i++)
		if (strcmp(types_c_names[i], name) == 0)
			return true;
	return false;
}

/* The C type of a scalar by its wire facts, as an unnamed use of its IPC type has it. */
static const char *
types_scalar(const struct idlc_type *t)
{
	switch (t->wire_type) {
	case IDL_WT_INT8:
		return "int8_t";
	case IDL_WT_INT16:
		return "int16_t";
	case IDL_WT_INT32:
		return "int32_t";
	case IDL_WT_INT64:
		return "int64_t";
	case IDL_WT_BOOLEAN:
		return "boolean_t";
	case IDL_WT_CHAR:
		return "char";
	case IDL_WT_BYTE:
		return "unsigned char";
	case IDL_WT_REAL32:
		return "float";
	case IDL_WT_REAL64:
		return "double";
	case IDL_WT_PORT:
		return t->port_ipc == IDLC_IPC_PORT_NAME ? "mach_port_name_t" : "mach_port_t";
	default:
		return NULL;
	}
}

/* `d` with the array suffix [bound] or [n]. */
static const char *
types_array(struct emit_out *o, const char *d, uint32_t n, const char *bound)
{
	if (bound != NULL)
		return idlc_printf(o->ctx, "%s[%s]", d, bound);
	return idlc_printf(o->ctx, "%s[%" PRIu32 "]", d, n);
}

/*
 * The C declaration of `d` as the declared type t ("int x", "char x[64]"), or NULL when t
 * has no C form here. Arrays and out-of-line data are declared from their element's C type
 * as the stubs see it (t->c_elem): a fixed array of fixed arrays is one flat array of the
 * innermost element, as it travels, and a variable array of named arrays an array of that
 * name. `bound` is the macro that names a variable array's or string's bound.
 */
static const char *
types_decl(struct emit_out *o, const struct idlc_type *t, const char *d, const char *bound)
{
	const struct idlc_type *r = t->target;

	switch (t->kind) {
	case IDLC_T_NAMED:
		/* A type whose C type differs by side (cusertype:, cservertype:) has none to
		 * give a new name. */
		if (r == NULL || r->c_user == NULL ||
		    (r->c_server != NULL && strcmp(r->c_user, r->c_server) != 0))
			return NULL;
		return idlc_printf(o->ctx, "%s %s", r->c_user, d);
	case IDLC_T_IPC:
	case IDLC_T_LONGFORM:
		if (t->arg_kind == IDL_ARG_CSTRING_FIXED)
			return idlc_printf(o->ctx, "char %s",
					   types_array(o, d, t->wire_count, NULL));
		if (types_scalar(t) == NULL)
			return NULL;
		return idlc_printf(o->ctx, "%s %s", types_scalar(t), d);
	case IDLC_T_CSTRING_FIXED:
	case IDLC_T_CSTRING_VAR:
		return idlc_printf(o->ctx, "char %s", types_array(o, d, t->count, bound));
	case IDLC_T_ARRAY_FIXED:
	case IDLC_T_ARRAY_VAR:
		if (t->c_elem == NULL)
			return NULL;
		return idlc_printf(o->ctx, "%s %s", t->c_elem,
				   types_array(o, d, t->wire_count, bound));
	case IDLC_T_STRUCT_ARRAY:
		/* A record travels by value, which an array typedef cannot. */
		if (t->c_elem == NULL)
			return NULL;
		return idlc_printf(o->ctx, "struct {\n\t%s elem[%" PRIu32 "];\n} %s", t->c_elem,
				   t->wire_count, d);
	case IDLC_T_STRUCT_FIELDS: {
		struct strbuf sb = STRBUF_INIT;
		const char *decl = NULL;
		bool ok = true;

		strbuf_puts(&sb, "struct {\n");
		for (const struct idlc_field *f = t->fields; f != NULL; f = f->next) {
			ok = ok && f->type != NULL && f->type->c_user != NULL;
			if (ok)
				strbuf_printf(&sb, "\t%s %s;\n", f->type->c_user, f->name);
		}
		strbuf_printf(&sb, "} %s", d);
		if (ok && !sb.failed)
			decl = idlc_strdup(o->ctx, strbuf_str(&sb));
		strbuf_fini(&sb);
		return decl;
	}
	case IDLC_T_ARRAY_UNBOUNDED:
	case IDLC_T_POINTER:
		/* Out-of-line data is a pointer to its elements (or an integer C type given by
		 * a ctype clause, which is the user's). */
		if (t->c_elem == NULL)
			return NULL;
		return idlc_printf(o->ctx, "%s *%s", t->c_elem, d);
	default:
		return NULL;
	}
}

/* Whether -types writes a typedef for declared type t. */
static bool
types_wanted(struct emit_out *o, const struct idlc_type *t)
{
	return t->name != NULL && !idlc_is_builtin(o->ctx, t->name_loc) && t->resolved &&
	       !t->broken && t->unsupported == NULL && t->ctype == NULL && t->cusertype == NULL &&
	       t->cservertype == NULL && !emit_types_c_defined(t->name);
}

/* The macro of a variable array's or string's bound: MEMO_T_MAX for memo_t. */
static const char *
types_bound_macro(struct emit_out *o, const struct idlc_type *t)
{
	struct strbuf sb = STRBUF_INIT;
	const char *r;

	for (const char *p = t->name; *p != '\0'; p++)
		strbuf_putc(&sb, (char)toupper((unsigned char)*p));
	strbuf_puts(&sb, "_MAX");
	r = sb.failed ? NULL : idlc_strdup(o->ctx, strbuf_str(&sb));
	strbuf_fini(&sb);
	return r;
}

static bool
types_is_var(const struct idlc_type *t)
{
	return t->kind == IDLC_T_ARRAY_VAR || t->kind == IDLC_T_CSTRING_VAR;
}

void
emit_types(struct emit_out *o)
{
	const char *path = idlc_output_path(o->ctx, IDLC_OUT_TYPES);
	const char *guard = emit_guard(o, path != NULL ? path : "types.h");
	const char *lit = emit_input_literal(o);
	struct strbuf macros = STRBUF_INIT;

	emit_banner(o);
	emit(o, "#ifndef %s\n#define %s\n\n", guard, guard);
	emit(o,
	     "/*\n * The C types of the types %s declares, as MIG users write them. A "
	     "variable\n * array or string is an array of its bound: <NAME>_MAX elements (a "
	     "string's bound\n * counts its NUL).\n */\n\n",
	     lit);
	emit(o, "#include <idl/idl.h>\n");
	for (const struct idlc_type *t = o->m->types; t != NULL; t = t->next) {
		const char *macro = NULL, *decl, *key;

		if (!types_wanted(o, t))
			continue;
		if (types_is_var(t)) {
			macro = types_bound_macro(o, t);
			if (macro == NULL)
				continue;
			/* Two names that differ only in case would define one macro twice. */
			key = idlc_printf(o->ctx, "\n%s\n", macro);
			if (key != NULL && strstr(strbuf_str(&macros), key) != NULL) {
				idlc_error(o->ctx, t->name_loc,
					   "-types: the bound of type '%s' would be named %s, as "
					   "another type's is",
					   t->name, macro);
				continue;
			}
			if (key != NULL)
				strbuf_puts(&macros, key);
		}
		decl = types_decl(o, t, t->name, macro);
		emit(o, "\n");
		if (decl == NULL) {
			/* A reference to a type whose C type differs by side, or a construct with
			 * no C form here: the reader learns why it is missing. */
			emit(o,
			     "/* %s: no C type of its own here (define it in an imported "
			     "header) */\n",
			     t->name);
			continue;
		}
		if (macro != NULL)
			emit(o, "#define %s %" PRIu32 "\n", macro, t->count);
		emit(o, "typedef %s;\n", decl);
	}
	emit(o, "\n#endif /* %s */\n", guard);
	strbuf_fini(&macros);
}

void
emit_types_include(struct emit_out *o)
{
	const char *path = idlc_output_path(o->ctx, IDLC_OUT_TYPES);
	const char *base;

	if (path == NULL)
		return;
	base = strrchr(path, '/');
	emit(o, "#include \"%s\"\n", base != NULL ? base + 1 : path);
}
