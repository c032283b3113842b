/*
 * idlbench_user.c - the idlkit side of a cell of the user's interface (--defs), layer 3: the
 * values a call sends, one call of a row, the server, and `idlbench serve --defs`. The
 * client's loops, the probe and the setup calls are idlbench_uclient.c's.
 *
 * The server is the compiled demux of server.so (the user's routines from --impl, or the
 * null routines), or, interpreted, the dynamic server of <idl/idl_dynamic.h> calling the same
 * routines through libffi; with no C compiler and no --impl, a demux that checks each request
 * and answers it with zeroed out arguments from the descriptors alone.
 *
 * A call goes through the row's generated call (ib_call_N in client.so: the compiled stub)
 * or, interpreted, packs the request from the descriptor table, calls with idl_call() or
 * idl_send() and checks the reply as a stub would (idl_msg_check()), as idlcall does. Either
 * way what the reply gives the caller is released after each call, and what a request gives
 * away (dealloc data, moved ports) is made anew before each.
 *
 * It knows the base, the interface and the cells; it must not know runs or reports.
 */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>
#include <idl/idl_ool.h>

#include "idlc.h"
#include "ib_user.h"

/* ---- Values: what a call sends, made in the client process ---- */

static int
ib_open(const char *text, idl_port_t *p)
{
	*p = IDL_PORT_NULL;
	return strcmp(text, "null") == 0 ? 0 : idl_port_open(text, p);
}

/* An array of ports from "[ADDRESS,null,...]". */
static int
ib_open_array(const char *text, struct idl_arg_value *v)
{
	char *copy = strdup(text), *p, *tok, *save = NULL;
	size_t cap = 1, n = 0, len;
	idl_port_t *ports;
	int err = 0;

	for (const char *c = text; *c != '\0'; c++)
		cap += *c == ',';
	if (copy == NULL || (ports = idl_ool_alloc(cap * sizeof *ports)) == NULL) {
		free(copy);
		return IDL_ENOMEM;
	}
	p = copy;
	len = strlen(p);
	if (len >= 2 && p[0] == '[' && p[len - 1] == ']') {
		p[len - 1] = '\0';
		p++;
	}
	for (tok = strtok_r(p, ", ", &save); tok != NULL && err == 0;
	     tok = strtok_r(NULL, ", ", &save))
		if ((err = ib_open(tok, &ports[n])) == 0)
			n++;
	free(copy);
	if (err != 0) {
		while (n > 0)
			idl_port_close(ports[--n]);
		idl_ool_free(ports, cap * sizeof *ports);
		return err;
	}
	v->data = ports;
	v->count = (uint32_t)n;
	return 0;
}

/* Makes the values of a call: once, and again before each call for what the previous one
 * gave away. */
static int
ib_make(struct ib_uvals *s)
{
	const struct idl_routine_desc *rt = s->c->rt;
	int err;

	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];
		const struct idl_arg_value *given = &s->c->vals[i];

		if (a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT)
			continue;
		if (s->made && !ib_arg_consumed(a))
			continue;
		if (a->kind == IDL_ARG_PORT) {
			if ((err = ib_open(s->c->ports[i], &s->one[i])) != 0)
				return err;
			s->v[i].data = &s->one[i];
			s->v[i].count = 1;
		} else if (ib_arg_ports(a)) {
			if ((err = ib_open_array(s->c->ports[i], &s->v[i])) != 0)
				return err;
		} else if (a->kind == IDL_ARG_OOL && (a->flags & IDL_ARGF_DEALLOC)) {
			size_t n = (size_t)given->count * a->elem_size;
			void *mem = idl_ool_alloc(n > 0 ? n : 1);

			if (mem == NULL)
				return IDL_ENOMEM;
			if (n > 0)
				memcpy(mem, given->data, n);
			s->v[i].data = mem;
			s->v[i].count = given->count;
		} else {
			s->v[i] = *given;
		}
	}
	s->made = 1;
	return 0;
}

int
ib_vals_init(struct ib_uvals *s, const struct ib_ucall *c)
{
	const struct idl_routine_desc *rt = c->rt;
	int err;

	memset(s, 0, sizeof *s);
	s->c = c;
	s->v = calloc(rt->nargs + 1u, sizeof *s->v);
	s->one = calloc(rt->nargs + 1u, sizeof *s->one);
	s->req_cap = rt->req_max;
	s->rep_cap = rt->rep_max < IDL_MSG_HEADER_SIZE ? IDL_MSG_HEADER_SIZE : rt->rep_max;
	s->req = calloc(s->req_cap / 8 + 1, 8);
	s->rep = calloc(s->rep_cap / 8 + 1, 8);
	s->tmpl = calloc(s->req_cap / 8 + 1, 8);
	if (s->v == NULL || s->one == NULL || s->req == NULL || s->rep == NULL || s->tmpl == NULL)
		return IDL_ENOMEM;
	if ((err = ib_make(s)) != 0)
		return err;
	if (ib_user->interpreted && !c->consumes) {
		int n = idl_msg_pack(rt, 0, s->v, (idl_msg_header_t *)s->tmpl, s->req_cap);

		if (n < 0)
			return n;
		s->req_len = (uint32_t)n;
	}
	return 0;
}

/* What the last call did not give away: ports opened once, arrays of them. */
void
ib_vals_fini(struct ib_uvals *s)
{
	const struct idl_routine_desc *rt = s->c != NULL ? s->c->rt : NULL;

	for (unsigned i = 0; rt != NULL && s->v != NULL && i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		if ((a->dir != IDL_DIR_IN && a->dir != IDL_DIR_INOUT) || !ib_arg_ports(a) ||
		    ib_arg_consumed(a) || s->v[i].data == NULL)
			continue;
		if (a->kind == IDL_ARG_PORT) {
			idl_port_close(s->one[i]);
			continue;
		}
		for (uint32_t k = 0; k < s->v[i].count; k++)
			idl_port_close(((idl_port_t *)(void *)s->v[i].data)[k]);
		idl_ool_free((void *)s->v[i].data, (size_t)s->v[i].count * sizeof(idl_port_t));
	}
	free(s->v);
	free(s->one);
	free(s->req);
	free(s->rep);
	free(s->tmpl);
	memset(s, 0, sizeof *s);
}

/* The interpreted call: the request from the descriptors, the reply checked and released. */
static int
ib_interp_call(struct ib_uvals *s, idl_port_t port)
{
	const struct idl_routine_desc *rt = s->c->rt;
	const struct idl_subsystem *ss = ib_user->ss;
	idl_msg_header_t *req = (idl_msg_header_t *)s->req, *rep = (idl_msg_header_t *)s->rep;
	int kr;

	if (s->c->consumes) {
		int n = idl_msg_pack(rt, 0, s->v, req, s->req_cap);

		if (n < 0)
			return n;
	} else {
		/* What a stub does each call, packing, is a copy of the packed request here. */
		memcpy(req, s->tmpl, s->req_len);
	}
	if (rt->kind == IDL_RT_SIMPLEROUTINE)
		return idl_send(port, ss, rt->number, req, IDL_TIMEOUT_DEFAULT);
	kr = idl_call(port, ss, rt->number, req, rep, (uint32_t)s->rep_cap, IDL_TIMEOUT_DEFAULT);
	if (kr != 0)
		return kr;
	if (idl_msg_check(rt, rep, rep->size, 1, NULL) != 0)
		kr = MIG_TYPE_ERROR;
	idl_msg_destroy(rep);
	return kr;
}

int
ib_vals_remake(struct ib_uvals *s)
{
	return s->c->consumes ? ib_make(s) : 0;
}

/* One call of a row, compiled or interpreted. */
int
ib_once(struct ib_uvals *s, idl_port_t port)
{
	int err;

	if (s->c->consumes && (err = ib_make(s)) != 0)
		return err;
	if (!ib_user->interpreted)
		return s->c->thunk(port, s->v);
	return ib_interp_call(s, port);
}

/* ---- The server ---- */

static idl_server_t *ib_usrv;

/* SIGTERM (a service manager's stop) lets the calls in flight finish, for at most 10 s;
 * SIGINT stops at once. */
static void
ib_on_signal(int sig)
{
	if (sig == SIGTERM)
		idl_server_drain(ib_usrv, 10000);
	else
		idl_server_stop(ib_usrv);
}

/* With no routines to call: every request checked and answered with zeroed and empty out
 * arguments from the descriptors alone. */
static int
ib_null_demux(void *ctx, idl_msg_header_t *in, idl_msg_header_t *out)
{
	const struct idl_subsystem *ss = ctx;
	uint32_t n = (uint32_t)in->id - (uint32_t)ss->base;
	const struct idl_routine_desc *rt;
	struct idl_arg_value *zero;
	int size;

	idl_reply_init(in, out);
	if (n >= ss->nroutines || ss->routines[n].kind == IDL_RT_SKIP) {
		out->retcode = MIG_BAD_ID;
		return 0;
	}
	rt = &ss->routines[n];
	if (idl_msg_check(rt, in, in->size, 0, NULL) != 0) {
		out->retcode = MIG_BAD_ARGUMENTS;
		return 1;
	}
	idl_msg_destroy(in); /* what the request carried is the routine's: released */
	if (rt->kind != IDL_RT_ROUTINE)
		return 1;
	if ((zero = ib_zero_values(rt, 1)) == NULL) {
		out->retcode = KERN_FAILURE;
		return 1;
	}
	size = idl_msg_pack(rt, 1, zero, out, rt->rep_max);
	free(zero);
	if (size < 0) {
		idl_reply_init(in, out);
		out->retcode = size;
		return 1;
	}
	out->magic = IDL_MSG_MAGIC;
	out->order = IDL_ORDER_NATIVE;
	out->kind = IDL_KIND_REPLY;
	out->id = (int32_t)((uint32_t)in->id + IDL_REPLY_ID_OFFSET);
	out->seqno = in->seqno;
	out->retcode = 0;
	return 1;
}

static idl_dynamic_t *ib_udyn;

static int
ib_user_start(struct ib_iface *u, const char *address, char *why, size_t len)
{
	const char *prefix = idlc_module(ib_defs_ctx(u))->serverprefix;
	struct sigaction sa;
	int err;

	if ((err = idl_server_create(&ib_usrv)) == 0) {
		if (!u->interpreted)
			err = idl_server_add_subsystem(ib_usrv, u->server_ss, u->demux);
		else if (u->resolve == NULL)
			err = idl_server_add_subsystem_ctx(ib_usrv, u->ss, ib_null_demux,
							   (void *)u->ss);
		else if ((err = idl_dynamic_create(u->ss, prefix != NULL ? prefix : "", u->resolve,
						   u->resolve_arg, &ib_udyn)) == 0)
			err = idl_server_add_dynamic(ib_usrv, ib_udyn);
	}
	if (err != 0 || (err = idl_server_listen(ib_usrv, address)) != 0) {
		snprintf(why, len, "%s", idl_errmsg(err, address));
		return -1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = ib_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return 0;
}

static int
ib_user_run(void)
{
	int err = idl_server_run(ib_usrv);

	idl_server_destroy(ib_usrv);
	idl_dynamic_destroy(ib_udyn);
	ib_usrv = NULL;
	ib_udyn = NULL;
	return err;
}

int
ib_user_serve(const struct ib_cell *cell, int ready_fd)
{
	char why[256];

	if (ib_user_start(ib_user, cell->addr, why, sizeof why) != 0) {
		ib_ready(ready_fd, why);
		return 1;
	}
	ib_ready(ready_fd, NULL);
	return ib_user_run() == 0 ? 0 : 1;
}

int
ib_user_serve_forever(struct ib_iface *u, const char *address)
{
	char why[256];
	int err;

	if (ib_user_start(u, address, why, sizeof why) != 0) {
		fprintf(stderr, "idlbench: serve: %s\n", why);
		return 1;
	}
	printf("ready %s\n", address);
	fflush(stdout);
	if ((err = ib_user_run()) != 0)
		fprintf(stderr, "idlbench: serve: %s\n", idl_errmsg(err, address));
	return err == 0 ? 0 : 1;
}
