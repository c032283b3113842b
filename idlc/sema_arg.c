/*
 * sema_arg.c - the meaning of one routine argument: its direction (MIG's defaults and every
 * special direction of GNU and Apple MIG), its flags, and whether its type can travel.
 *
 * What each special direction becomes off Mach (docs/defs-language.md has the table):
 *   waittime      the client's per-call deadline (ms)        msgoption  ignored (warning)
 *   sendtime      ignored: the deadline bounds the send too  msgseqno   the request's seqno
 *   sreplyport    the server routine gets an idl_reply_t handle for a deferred reply
 *   replyport     the same on the server; ignored on the client (warning)
 *   ureplyport    ignored on the client (warning): the reply comes back on the connection
 *   *sectoken, *audittoken  the peer's credentials (struct idl_cred)
 *   servercontexttoken, serverimpl, userimpl  rejected: nothing on POSIX carries them
 * Flags that change nothing here (islong, physicalcopy, auto, const, ...) are accepted with
 * one warning per interface; flags on arguments they cannot apply to are warnings too, as
 * real files carry such leftovers. Errors are kept for what would generate wrong code.
 */
#include <config.h>

#include <stdarg.h>
#include <string.h>

#include "sema.h"

void
idlc_sema_warn_once(struct sema *s, unsigned key, struct idlc_loc loc, const char *fmt, ...)
{
	va_list ap;
	struct strbuf sb = STRBUF_INIT;

	if ((s->warned & key) == key)
		return;
	s->warned |= key;
	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	idlc_warning(s->ctx, loc, "%s", sb.failed ? "(out of memory)" : strbuf_str(&sb));
	strbuf_fini(&sb);
}

static const char *
arg_dir_word(enum idlc_dir d)
{
	static const char *const words[] = {
		"",
		"in",
		"out",
		"inout",
		"requestport",
		"replyport",
		"sreplyport",
		"ureplyport",
		"waittime",
		"msgoption",
		"msgseqno",
		"sendtime",
		"sectoken",
		"serversectoken",
		"usersectoken",
		"audittoken",
		"serveraudittoken",
		"useraudittoken",
		"servercontexttoken",
		"serverimpl",
		"userimpl",
	};

	return (size_t)d < sizeof words / sizeof words[0] ? words[d] : "?";
}

static const struct {
	unsigned bit;
	const char *word;
} arg_flags[] = {
	{ IDLC_AF_DEALLOC, "dealloc" },	      { IDLC_AF_DEALLOC_RT, "dealloc[]" },
	{ IDLC_AF_NOTDEALLOC, "notdealloc" }, { IDLC_AF_SERVERCOPY, "servercopy" },
	{ IDLC_AF_COUNTINOUT, "countinout" }, { IDLC_AF_SAMECOUNT, "samecount" },
	{ IDLC_AF_RETCODE, "retcode" },	      { IDLC_AF_PHYSICALCOPY, "physicalcopy" },
	{ IDLC_AF_OVERWRITE, "overwrite" },   { IDLC_AF_AUTO, "auto" },
	{ IDLC_AF_CONST, "const" },	      { IDLC_AF_ISLONG, "islong" },
	{ IDLC_AF_ISNOTLONG, "isnotlong" },
};

/* One warning key per flag, so each is said once. */
static unsigned
arg_flag_key(unsigned bit)
{
	unsigned k = 0;

	while (bit > 1) {
		bit >>= 1;
		k++;
	}
	return SEMA_W_NOEFFECT_FLAG << k;
}

/* Whether the argument is a client or server parameter of port type that is not the
 * request port: the reply-port directions. */
static bool
arg_is_reply_port(enum idlc_dir d)
{
	return d == IDLC_DIR_REPLYPORT || d == IDLC_DIR_SREPLYPORT || d == IDLC_DIR_UREPLYPORT;
}

static bool
arg_travels(const struct idlc_arg *a)
{
	return a->dir == IDL_DIR_IN || a->dir == IDL_DIR_OUT || a->dir == IDL_DIR_INOUT;
}

/* The direction as a meaning; false after an error. */
static bool
arg_direction(struct sema *s, struct idlc_routine *rt, struct idlc_arg *a, bool first)
{
	switch (a->dir_written) {
	case IDLC_DIR_NONE:
		a->dir = first ? IDL_DIR_REQUESTPORT : IDL_DIR_IN;
		return true;
	case IDLC_DIR_IN:
		a->dir = IDL_DIR_IN;
		return true;
	case IDLC_DIR_OUT:
		a->dir = IDL_DIR_OUT;
		return true;
	case IDLC_DIR_INOUT:
		a->dir = IDL_DIR_INOUT;
		return true;
	case IDLC_DIR_REQUESTPORT:
		a->dir = IDL_DIR_REQUESTPORT;
		return true;
	case IDLC_DIR_WAITTIME:
		a->dir = IDL_DIR_WAITTIME;
		return true;
	case IDLC_DIR_MSGOPTION:
		a->dir = IDL_DIR_MSGOPTION;
		idlc_sema_warn_once(s, SEMA_W_MSGOPTION, a->loc,
				    "msgoption '%s' of routine '%s' is ignored: POSIX transports "
				    "have no message options",
				    a->name, rt->name);
		return true;
	case IDLC_DIR_SENDTIME:
		a->dir = IDL_DIR_OTHER;
		idlc_sema_warn_once(s, SEMA_W_SENDTIME, a->loc,
				    "sendtime '%s' of routine '%s' is ignored: the call's deadline "
				    "(waittime) bounds the send too",
				    a->name, rt->name);
		return true;
	case IDLC_DIR_UREPLYPORT:
		a->dir = IDL_DIR_OTHER;
		idlc_sema_warn_once(s, SEMA_W_UREPLYPORT, a->loc,
				    "ureplyport '%s' of routine '%s' is ignored: the reply comes "
				    "back on the request's connection",
				    a->name, rt->name);
		return true;
	case IDLC_DIR_REPLYPORT:
		a->dir = IDL_DIR_OTHER;
		idlc_sema_warn_once(s, SEMA_W_REPLYPORT, a->loc,
				    "replyport '%s' of routine '%s': the client's argument is "
				    "ignored, the server routine gets a reply handle (idl_reply_t)",
				    a->name, rt->name);
		return true;
	case IDLC_DIR_SREPLYPORT:
	case IDLC_DIR_MSGSEQNO:
	case IDLC_DIR_SECTOKEN:
	case IDLC_DIR_SERVERSECTOKEN:
	case IDLC_DIR_USERSECTOKEN:
	case IDLC_DIR_AUDITTOKEN:
	case IDLC_DIR_SERVERAUDITTOKEN:
	case IDLC_DIR_USERAUDITTOKEN:
		a->dir = IDL_DIR_OTHER;
		return true;
	case IDLC_DIR_SERVERCONTEXTTOKEN:
	case IDLC_DIR_SERVERIMPL:
	case IDLC_DIR_USERIMPL:
	default:
		a->dir = IDL_DIR_OTHER;
		idlc_error(s->ctx, a->loc,
			   "'%s' arguments have no meaning off Mach: no POSIX transport carries a "
			   "message trailer (argument '%s' of routine '%s')",
			   arg_dir_word(a->dir_written), a->name, rt->name);
		return false;
	}
}

/* The flags, merged with the type's long-form ones; false after an error. */
static bool
arg_flags_check(struct sema *s, struct idlc_routine *rt, struct idlc_arg *a)
{
	const struct idlc_type *t = a->rtype;
	unsigned flags = a->flags | t->flags;
	bool travels = arg_travels(a);
	bool ool = t->arg_kind == IDL_ARG_OOL, port = t->arg_kind == IDL_ARG_PORT;
	unsigned dealloc = flags & (IDLC_AF_DEALLOC | IDLC_AF_DEALLOC_RT | IDLC_AF_NOTDEALLOC);
	size_t i;

	if ((flags & IDLC_AF_DEALLOC) && (flags & (IDLC_AF_NOTDEALLOC | IDLC_AF_DEALLOC_RT))) {
		idlc_error(s->ctx, a->loc, "argument '%s' of routine '%s' is both dealloc and %s",
			   a->name, rt->name,
			   (flags & IDLC_AF_NOTDEALLOC) ? "notdealloc" : "dealloc[]");
		return false;
	}
	if (dealloc != 0 && !(travels && (ool || port)))
		idlc_warning(s->ctx, a->loc,
			     "'%s' on argument '%s' of routine '%s' is ignored: it applies to "
			     "out-of-line data and ports only",
			     (flags & IDLC_AF_DEALLOC_RT) ? "dealloc[]"
			     : (flags & IDLC_AF_DEALLOC)  ? "dealloc"
							  : "notdealloc",
			     a->name, rt->name);
	else
		a->desc_flags = flags & (IDLC_AF_DEALLOC | IDLC_AF_DEALLOC_RT);
	if ((flags & IDLC_AF_SERVERCOPY) &&
	    !(ool && !t->ool_fixed && a->dir == IDL_DIR_IN && t->wire_type != IDL_WT_PORT)) {
		idlc_warning(s->ctx, a->loc,
			     "'servercopy' on argument '%s' of routine '%s' is ignored: it applies "
			     "to in arrays of data out of line",
			     a->name, rt->name);
		flags &= ~(unsigned)IDLC_AF_SERVERCOPY;
	}
	if ((flags & IDLC_AF_COUNTINOUT) && ool && !t->ool_fixed && a->dir == IDL_DIR_OUT) {
		idlc_sema_warn_once(s, arg_flag_key(IDLC_AF_COUNTINOUT), a->loc,
				    "'countinout' on out-of-line argument '%s' of routine '%s' is "
				    "ignored: the client gets a new buffer of the size sent",
				    a->name, rt->name);
		flags &= ~(unsigned)IDLC_AF_COUNTINOUT;
	} else if ((flags & IDLC_AF_COUNTINOUT) &&
		   !(t->arg_kind == IDL_ARG_VAR_ARRAY && a->dir == IDL_DIR_OUT)) {
		idlc_warning(s->ctx, a->loc,
			     "'countinout' on argument '%s' of routine '%s' is ignored: it applies "
			     "to out variable-size arrays",
			     a->name, rt->name);
		flags &= ~(unsigned)IDLC_AF_COUNTINOUT;
	}
	if ((flags & IDLC_AF_OVERWRITE) &&
	    !(ool && !t->ool_fixed && a->dir == IDL_DIR_OUT && t->wire_type != IDL_WT_PORT)) {
		idlc_warning(s->ctx, a->loc,
			     "'overwrite' on argument '%s' of routine '%s' is ignored: it applies "
			     "to out arrays of data out of line",
			     a->name, rt->name);
		flags &= ~(unsigned)IDLC_AF_OVERWRITE;
	}
	for (i = 0; i < sizeof arg_flags / sizeof arg_flags[0]; i++) {
		unsigned bit = arg_flags[i].bit;

		/* samecount is a fact about two arguments: the middle end checks it
		 * (facts.c). */
		if (!(flags & bit) ||
		    (bit & (IDLC_AF_DEALLOC | IDLC_AF_DEALLOC_RT | IDLC_AF_NOTDEALLOC |
			    IDLC_AF_SERVERCOPY | IDLC_AF_COUNTINOUT | IDLC_AF_OVERWRITE |
			    IDLC_AF_SAMECOUNT)))
			continue;
		idlc_sema_warn_once(s, arg_flag_key(bit), a->loc,
				    "'%s' (argument '%s' of routine '%s') has no effect in idlkit",
				    arg_flags[i].word, a->name, rt->name);
	}
	a->flags = flags;
	return true;
}

/* Translation functions work on one value: a scalar, a record or a port. */
static bool
arg_translation_check(struct sema *s, struct idlc_routine *rt, struct idlc_arg *a)
{
	const struct idlc_type *t = a->rtype;

	if (t->intranpayload != NULL)
		idlc_sema_warn_once(s, SEMA_W_INTRANPAYLOAD, a->loc,
				    "intranpayload '%s' is ignored: no protected payloads off GNU "
				    "Mach (argument '%s' of routine '%s')",
				    t->intranpayload, a->name, rt->name);
	if (t->intran == NULL && t->outtran == NULL && t->destructor == NULL)
		return true;
	if (t->arg_kind == IDL_ARG_SCALAR || t->arg_kind == IDL_ARG_PORT)
		return true;
	idlc_error(s->ctx, a->loc,
		   "translation functions (intran:, outtran:, destructor:) apply to scalars, "
		   "records and ports only (argument '%s' of routine '%s' has type '%s')",
		   a->name, rt->name, idlc_sema_type_name(s, t));
	return false;
}

/* What each special direction needs of its type. */
static bool
arg_type_check(struct sema *s, struct idlc_routine *rt, struct idlc_arg *a,
	       const struct idlc_type *written)
{
	const struct idlc_type *t = a->rtype;

	if (arg_is_reply_port(a->dir_written) || a->dir == IDL_DIR_REQUESTPORT) {
		if (t->arg_kind != IDL_ARG_PORT) {
			idlc_error(s->ctx, a->loc,
				   "%s '%s' of routine '%s' has type '%s', which is not a port "
				   "type",
				   a->dir == IDL_DIR_REQUESTPORT ? "request port"
								 : arg_dir_word(a->dir_written),
				   a->name, rt->name, idlc_sema_type_name(s, written));
			return false;
		}
		return true;
	}
	if (a->dir == IDL_DIR_WAITTIME || a->dir == IDL_DIR_MSGOPTION ||
	    a->dir_written == IDLC_DIR_MSGSEQNO || a->dir_written == IDLC_DIR_SENDTIME) {
		if (t->arg_kind != IDL_ARG_SCALAR || t->wire_type == IDL_WT_STRUCT) {
			idlc_error(s->ctx, a->loc,
				   "%s '%s' of routine '%s' must have an integer type, not '%s'",
				   arg_dir_word(a->dir_written), a->name, rt->name,
				   idlc_sema_type_name(s, written));
			return false;
		}
	}
	return true;
}

bool
idlc_sema_arg(struct sema *s, struct idlc_routine *rt, struct idlc_arg *a, bool first)
{
	struct idlc_type *t = a->type;
	struct idlc_type *rtype;

	if (t->name != NULL) {
		/* An inline declaration (x : t2 = ...) declares t2 for what follows, as MIG. */
		idlc_sema_type_stmt(s, t);
		if (t->broken)
			return false;
		rtype = t;
	} else {
		if (!idlc_sema_resolve(s, t))
			return false;
		rtype = t->kind == IDLC_T_NAMED ? t->target : t;
	}
	if (!arg_direction(s, rt, a, first))
		return false;
	if (rtype->unsupported != NULL && (arg_travels(a) || a->dir == IDL_DIR_REQUESTPORT)) {
		idlc_error(s->ctx, a->loc,
			   "%s is not supported (argument '%s' of routine '%s' has type '%s')",
			   rtype->unsupported, a->name, rt->name, idlc_sema_type_name(s, t));
		return false;
	}
	/* An inline array of ports goes in (the server gets the client's ports) or out (the
	 * server routine fills the stub's buffer, the client gets the ports in its own): both
	 * at once would have the server routine overwrite ports it was given. */
	if (rtype->ool_inline && a->dir == IDL_DIR_INOUT) {
		idlc_error(s->ctx, a->loc,
			   "an inout inline array of ports is not supported: pass the ports in "
			   "and get them back as two arguments (argument '%s' of routine '%s')",
			   a->name, rt->name);
		return false;
	}
	a->rtype = rtype;
	if (!arg_type_check(s, rt, a, t) || !arg_flags_check(s, rt, a) ||
	    !arg_translation_check(s, rt, a)) {
		a->rtype = NULL;
		return false;
	}
	return true;
}

unsigned
idlc_sema_implicit_names(struct sema *s, const struct idlc_arg *a, const char **names)
{
	const struct idlc_type *t = a->rtype;
	unsigned n = 0;

	if (t == NULL)
		return 0;
	if (arg_travels(a) &&
	    (t->arg_kind == IDL_ARG_VAR_ARRAY || (t->arg_kind == IDL_ARG_OOL && !t->ool_fixed)))
		names[n++] = idlc_printf(s->ctx, "%sCnt", a->name);
	if ((t->arg_kind == IDL_ARG_PORT || t->wire_type == IDL_WT_PORT) &&
	    (t->poly_in || t->poly_out))
		names[n++] = idlc_printf(s->ctx, "%sPoly", a->name);
	if (a->flags & IDLC_AF_DEALLOC_RT)
		names[n++] = idlc_printf(s->ctx, "%sDealloc", a->name);
	if (a->flags & IDLC_AF_SERVERCOPY)
		names[n++] = idlc_printf(s->ctx, "%sSCopy", a->name);
	return n;
}
