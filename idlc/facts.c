/*
 * facts.c - the middle end's first stage: what every argument is in its routine, computed
 * once (the IDLC_AK_* facts, the C types of its parameters, its samecount leader), and the
 * middle end's entry point, idlc_middle(). middle.h says what each fact means.
 *
 * Facts are computed from what sema left: the direction, the resolved type's wire facts and
 * C types, the flags. `samecount` is resolved here too, because it is a fact about two
 * arguments of a routine: an argument that shares the count of the one before it (Apple
 * MIG's rule) has no <arg>Cnt of its own, and where that cannot hold the flag is ignored
 * with a warning, as Apple MIG ignores it.
 */
#include <config.h>

#include "middle.h"

bool
idlc_any_arg(const struct idlc_routine *rt, unsigned facts)
{
	for (const struct idlc_arg *a = rt->args; a != NULL; a = a->next)
		if (idlc_is(a, facts))
			return true;
	return false;
}

/* The direction's facts. */
static unsigned
facts_dir(const struct idlc_arg *a)
{
	switch (a->dir) {
	case IDL_DIR_IN:
		return IDLC_AK_TRAVELS | IDLC_AK_REQUEST;
	case IDL_DIR_OUT:
		return IDLC_AK_TRAVELS | IDLC_AK_REPLY;
	case IDL_DIR_INOUT:
		return IDLC_AK_TRAVELS | IDLC_AK_REQUEST | IDLC_AK_REPLY;
	default:
		return 0;
	}
}

/* Which side's function has the argument as a parameter. */
static unsigned
facts_params(const struct idlc_arg *a)
{
	const unsigned both = IDLC_AK_USER_PARAM | IDLC_AK_SERVER_PARAM;

	switch (a->dir) {
	case IDL_DIR_REQUESTPORT:
	case IDL_DIR_IN:
	case IDL_DIR_OUT:
	case IDL_DIR_INOUT:
		return both;
	case IDL_DIR_WAITTIME:
	case IDL_DIR_MSGOPTION:
		/* Client-side only, as in MIG: they steer the call, they do not travel. */
		return IDLC_AK_USER_PARAM;
	default:
		break;
	}
	switch (a->dir_written) {
	case IDLC_DIR_REPLYPORT:
	case IDLC_DIR_SECTOKEN:
	case IDLC_DIR_AUDITTOKEN:
		return both;
	case IDLC_DIR_SREPLYPORT:
	case IDLC_DIR_MSGSEQNO:
	case IDLC_DIR_SERVERSECTOKEN:
	case IDLC_DIR_SERVERAUDITTOKEN:
		return IDLC_AK_SERVER_PARAM;
	case IDLC_DIR_UREPLYPORT:
	case IDLC_DIR_SENDTIME:
	case IDLC_DIR_USERSECTOKEN:
	case IDLC_DIR_USERAUDITTOKEN:
		return IDLC_AK_USER_PARAM;
	default:
		return 0;
	}
}

/* How the argument travels: the facts that follow from its direction and type. */
static unsigned
facts_travel(const struct idlc_arg *a, unsigned f)
{
	const struct idlc_type *t = a->rtype;
	enum idl_arg_kind k = t->arg_kind;
	bool ports = k == IDL_ARG_OOL && t->wire_type == IDL_WT_PORT;

	if (!(f & IDLC_AK_TRAVELS))
		return 0;
	f = 0;
	if (k == IDL_ARG_VAR_ARRAY || k == IDL_ARG_CSTRING_VAR)
		f |= IDLC_AK_VAR;
	if (k == IDL_ARG_CSTRING_FIXED || k == IDL_ARG_CSTRING_VAR)
		f |= IDLC_AK_STRING;
	if (t->kind == IDLC_T_STRUCT_ARRAY || t->kind == IDLC_T_STRUCT_FIELDS ||
	    (k == IDL_ARG_SCALAR && t->wire_type == IDL_WT_STRUCT))
		f |= IDLC_AK_RECORD;
	if (k == IDL_ARG_OOL || k == IDL_ARG_PORT)
		f |= IDLC_AK_DESC;
	if (ports)
		f |= IDLC_AK_PORTS;
	if (ports && t->ool_inline)
		f |= IDLC_AK_INLINE_PORTS;
	if (k == IDL_ARG_OOL && !ports)
		f |= IDLC_AK_OOL_DATA;
	if (k == IDL_ARG_VAR_ARRAY || (k == IDL_ARG_OOL && !t->ool_fixed))
		f |= IDLC_AK_COUNTED;
	return f;
}

/* <arg>Poly: the side that names the disposition at run time, or is told it. */
static bool
facts_poly(const struct idlc_arg *a, unsigned f, enum idlc_side side)
{
	const struct idlc_type *t = a->rtype;

	if ((t->arg_kind != IDL_ARG_PORT && t->wire_type != IDL_WT_PORT) ||
	    !(f & IDLC_AK_PARAM(side)))
		return false;
	switch (a->dir) {
	case IDL_DIR_IN:
		return side == IDLC_USER ? t->poly_in : t->poly_out;
	case IDL_DIR_OUT:
		return side == IDLC_USER ? t->poly_out : t->poly_in;
	case IDL_DIR_INOUT:
		return t->poly_in || t->poly_out;
	case IDL_DIR_REQUESTPORT:
		return side == IDLC_USER && t->poly_in;
	default:
		/* Reply ports: the client names what it sends, the server is told. */
		return side == IDLC_USER ? t->poly_in : t->poly_out;
	}
}

/* What the stubs do with the argument beyond how it travels. */
static unsigned
facts_stubs(const struct idlc_arg *a, unsigned f)
{
	const struct idlc_type *t = a->rtype;

	if (facts_poly(a, f, IDLC_USER))
		f |= IDLC_AK_USER_POLY;
	if (facts_poly(a, f, IDLC_SERVER))
		f |= IDLC_AK_SERVER_POLY;
	/* dealloc[]: the sender decides, the client for what it sends, the server for its
	 * reply. */
	if ((a->desc_flags & IDLC_AF_DEALLOC_RT) && (f & IDLC_AK_REQUEST))
		f |= IDLC_AK_USER_DEALLOC;
	if ((a->desc_flags & IDLC_AF_DEALLOC_RT) && (f & IDLC_AK_REPLY))
		f |= IDLC_AK_SERVER_DEALLOC;
	/* The flags sema kept: each applies where it stands. */
	if (a->flags & IDLC_AF_COUNTINOUT)
		f |= IDLC_AK_COUNTINOUT;
	if (a->flags & IDLC_AF_OVERWRITE)
		f |= IDLC_AK_OVERWRITE;
	if (a->flags & IDLC_AF_SERVERCOPY)
		f |= IDLC_AK_SERVERCOPY;
	if (a->desc_flags & IDLC_AF_DEALLOC)
		f |= IDLC_AK_GIVEN;
	if ((a->dir == IDL_DIR_OUT && t->arg_kind == IDL_ARG_VAR_ARRAY) ||
	    (a->flags & IDLC_AF_OVERWRITE) ||
	    (a->dir == IDL_DIR_OUT && (f & IDLC_AK_INLINE_PORTS) && (f & IDLC_AK_COUNTED)))
		f |= IDLC_AK_CAPACITY;
	if ((f & IDLC_AK_RECORD) || ((f & IDLC_AK_DESC) && (f & IDLC_AK_REPLY)) ||
	    (t->intran != NULL && ((f & IDLC_AK_REQUEST) || a->dir == IDL_DIR_REQUESTPORT)) ||
	    ((f & IDLC_AK_REPLY) && t->arg_kind == IDL_ARG_SCALAR))
		f |= IDLC_AK_SERVER_LOCAL;
	return f;
}

/* Whether an array's elements are arrays themselves (a variable array of a named fixed
 * array): a pointer to them cannot gain a `const` without a cast in ISO C. */
static bool
facts_elem_is_array(const struct idlc_type *t)
{
	const struct idlc_type *e = t->elem;

	if (e != NULL && e->kind == IDLC_T_NAMED)
		e = e->target;
	return e != NULL && e->arg_kind == IDL_ARG_FIXED_ARRAY;
}

/*
 * The client's parameter for an array or string its caller may pass less of than the bound:
 * a pointer to one element, not the array type. gcc reads a parameter declared as an array
 * of N (`memo_t memo`, memo_t an unsigned char[512]) as a promise of N elements and warns
 * (-Wstringop-overflow) at every call that passes a shorter buffer, which MIG's contract
 * allows for in variable arrays and strings (they carry their own length) and for out
 * variable arrays (*<arg>Cnt is the room). In ones are const. An array decays to the element
 * pointer, so callers that pass arrays compile as before. Types with a C type clause keep
 * what the clause says; inout ones, fixed arrays and out strings need their whole bound.
 * Returns the element type to use, or NULL to keep the type's own.
 */
static const char *
facts_user_elem(struct idlc_ctx *ctx, const struct idlc_arg *a)
{
	const struct idlc_type *t = a->rtype;
	enum idl_arg_kind k = t->arg_kind;
	bool shorter;

	if (!(a->facts & IDLC_AK_TRAVELS) || (a->facts & IDLC_AK_RECORD) || a->c_elem == NULL ||
	    t->name == NULL || t->ctype != NULL || t->cusertype != NULL)
		return NULL;
	if (a->dir == IDL_DIR_IN)
		shorter = k == IDL_ARG_VAR_ARRAY || k == IDL_ARG_CSTRING_VAR ||
			  k == IDL_ARG_CSTRING_FIXED;
	else
		shorter = a->dir == IDL_DIR_OUT && k == IDL_ARG_VAR_ARRAY;
	if (!shorter)
		return NULL;
	if (a->dir == IDL_DIR_IN && !facts_elem_is_array(t))
		return idlc_printf(ctx, "const %s", a->c_elem);
	return a->c_elem;
}

/* The C types of the argument's parameters and of one element. Sema resolves `x : foo` to
 * the declared type foo, whose C type is its name unless a ctype clause says otherwise; an
 * anonymous inline type has its element's C type. */
static void
facts_ctypes(struct idlc_ctx *ctx, struct idlc_arg *a)
{
	const struct idlc_type *t = a->rtype;
	enum idl_arg_kind k = t->arg_kind;
	bool array = k == IDL_ARG_FIXED_ARRAY || k == IDL_ARG_VAR_ARRAY ||
		     k == IDL_ARG_CSTRING_FIXED || k == IDL_ARG_CSTRING_VAR || k == IDL_ARG_OOL;
	const char *elem;

	for (int side = IDLC_USER; side <= IDLC_SERVER; side++) {
		const char *c = side == IDLC_USER ? t->c_user : t->c_server;

		if (c == NULL)
			c = side == IDLC_USER ? t->c_server : t->c_user;
		if (c == NULL)
			c = t->name != NULL ? t->name : "int";
		if (array && !(a->facts & IDLC_AK_RECORD) && t->name == NULL && t->ctype == NULL &&
		    (side == IDLC_USER ? t->cusertype : t->cservertype) == NULL)
			a->facts |= IDLC_AK_ELEM(side);
		/* The server routine sees the translated type: intran's for what it receives,
		 * outtran's argument for what it returns. */
		if (side == IDLC_SERVER) {
			if (a->dir == IDL_DIR_OUT && t->outtran != NULL)
				c = t->outtran_arg;
			else if (t->intran != NULL)
				c = t->intran_type;
			else if ((a->facts & IDLC_AK_REPLY) && t->outtran != NULL)
				c = t->outtran_arg;
		}
		a->c_type[side] = c;
	}
	if (t->c_elem != NULL)
		a->c_elem = t->c_elem;
	else if (t->elem != NULL && t->elem->c_user != NULL)
		a->c_elem = t->elem->c_user;
	else
		a->c_elem = NULL;
	elem = facts_user_elem(ctx, a);
	if (elem != NULL) {
		a->c_type[IDLC_USER] = elem;
		a->facts |= IDLC_AK_USER_ELEM;
	}
}

/* One argument's facts. */
static void
facts_arg(struct idlc_ctx *ctx, struct idlc_arg *a)
{
	unsigned f = facts_dir(a) | facts_params(a);

	if (a->dir_written == IDLC_DIR_REPLYPORT || a->dir_written == IDLC_DIR_SREPLYPORT)
		f |= IDLC_AK_REPLY_HANDLE;
	if (a->dir_written == IDLC_DIR_MSGSEQNO)
		f |= IDLC_AK_SEQNO;
	if (a->dir_written >= IDLC_DIR_SECTOKEN && a->dir_written <= IDLC_DIR_USERAUDITTOKEN)
		f |= IDLC_AK_TOKEN;
	a->leader = NULL;
	a->shared_bound = 0;
	if (a->rtype == NULL) {
		a->facts = f;
		return;
	}
	f |= facts_travel(a, f);
	a->facts = facts_stubs(a, f);
	/* A counted array's bound (0: none); a samecount leader's becomes its group's. */
	if (a->facts & IDLC_AK_COUNTED)
		a->shared_bound = a->rtype->wire_count;
	facts_ctypes(ctx, a);
}

static const char *
facts_dir_word(enum idl_arg_dir d)
{
	return d == IDL_DIR_IN ? "in" : d == IDL_DIR_OUT ? "out" : "inout";
}

/*
 * samecount, as Apple MIG has it: the argument shares the count of the argument before it
 * (or of that one's leader, when it shares a count itself), which must be counted and travel
 * the same way. Where it cannot, the flag is ignored with a warning and the argument keeps
 * a count of its own. `countinout` sends a capacity per array, so the two do not mix.
 */
static void
facts_samecount(struct idlc_ctx *ctx, struct idlc_routine *rt)
{
	/* The argument whose count the one before the current one travels with. */
	struct idlc_arg *owner = NULL;

	for (struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
		struct idlc_arg *leader = owner;
		const char *why = NULL;

		owner = a;
		if (!(a->flags & IDLC_AF_SAMECOUNT) || a->rtype == NULL)
			continue;
		if (!(a->facts & IDLC_AK_COUNTED))
			why = "it applies to arrays that travel with a count";
		else if (leader == NULL || !(leader->facts & IDLC_AK_COUNTED))
			why = "the argument before it has no count to share";
		else if (leader->dir != a->dir)
			why = idlc_printf(
				ctx, "it is %s and '%s', whose count it would share, is %s",
				facts_dir_word(a->dir), leader->name, facts_dir_word(leader->dir));
		else if ((a->facts | leader->facts) & IDLC_AK_COUNTINOUT)
			why = "it does not combine with countinout";
		if (why != NULL) {
			idlc_warning(ctx, a->loc,
				     "'samecount' on argument '%s' of routine '%s' is ignored: %s",
				     a->name, rt->name, why);
			a->flags &= ~(unsigned)IDLC_AF_SAMECOUNT;
			continue;
		}
		owner = leader;
		a->leader = leader;
		a->facts |= IDLC_AK_SAMECOUNT;
		leader->facts |= IDLC_AK_LEADER;
		if (a->shared_bound != 0 &&
		    (leader->shared_bound == 0 || a->shared_bound < leader->shared_bound))
			leader->shared_bound = a->shared_bound;
	}
}

int
idlc_facts(struct idlc_ctx *ctx, struct idlc_module *m)
{
	m->needs_ool = false;
	for (struct idlc_routine *rt = m->routines; rt != NULL; rt = rt->next) {
		for (struct idlc_arg *a = rt->args; a != NULL; a = a->next) {
			facts_arg(ctx, a);
			if (a->facts & (IDLC_AK_DESC | IDLC_AK_REPLY_HANDLE | IDLC_AK_TOKEN))
				m->needs_ool = true;
		}
		facts_samecount(ctx, rt);
	}
	return (int)idlc_error_count(ctx);
}

int
idlc_middle(struct idlc_ctx *ctx, struct idlc_module *m)
{
	if (idlc_facts(ctx, m) != 0 || idlc_layout(ctx, m) != 0)
		return (int)idlc_error_count(ctx);
	return idlc_desc(ctx, m);
}
