/*
 * idlbench_user.c - the idlkit side of a cell of the user's interface (--defs): the server,
 * the client's loops, the probe that calls each row once before the run, and
 * `idlbench serve --defs`.
 *
 * The server is the compiled demux of server.so (the user's routines from --impl, or the
 * null routines), or, interpreted, the dynamic server of <idl/idl_dynamic.h> calling the same
 * routines through libffi; with no C compiler and no --impl, a demux that checks each request
 * and answers it with zeroed out arguments from the descriptors alone.
 *
 * The client calls a row's routine through its generated call (ib_call_N in client.so: the
 * compiled stub) or, interpreted, packs the request from the descriptor table, calls with
 * idl_call() or idl_send() and checks the reply as a stub would (idl_msg_check()), as idlcall
 * does. Either way what the reply gives the caller is released after each call, and what a
 * request gives away (dealloc data, moved ports) is made anew before each.
 */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>
#include <idl/idl_ool.h>
#include <idl/idl_trace.h>

#include "idlc.h"
#include "idlbench.h"

struct ib_iface *ib_user;

/* ---- Values: what a call sends, made in the client process ---- */

struct ib_uvals {
	const struct ib_ucall *c;
	struct idl_arg_value *v; /* rt->nargs entries */
	idl_port_t *one; /* rt->nargs: the storage of single ports */
	int made; /* the first make happened */
	/* Interpreted: the request packed once into tmpl (when nothing is given away) and
	 * copied for each call, the reply room. */
	uint64_t *req, *rep, *tmpl;
	size_t req_cap, rep_cap;
	uint32_t req_len;
};

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

static int
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
static void
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

/* One call of a row, compiled or interpreted. */
static int
ib_once(struct ib_uvals *s, idl_port_t port)
{
	int err;

	if (s->c->consumes && (err = ib_make(s)) != 0)
		return err;
	if (!ib_user->interpreted)
		return s->c->thunk(port, s->v);
	return ib_interp_call(s, port);
}

/* A synchronising call's answer: any reply of the server's, even a refusal of zeroed
 * arguments, tells that what came before it on the connection was served. */
static int
ib_sync_ok(int kr)
{
	return kr >= 0 || kr == MIG_BAD_ARGUMENTS;
}

/* ---- The server ---- */

static idl_server_t *ib_usrv;

static void
ib_on_signal(int sig)
{
	(void)sig;
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
		snprintf(why, len, "%s: %s (%s) %s", address, idl_strerror(err), idl_errname(err),
			 idl_errdetail());
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
		fprintf(stderr, "idlbench: serve: %s\n", idl_strerror(err));
	return err == 0 ? 0 : 1;
}

/* ---- The client ---- */

static int
ib_ufail(struct ib_reps *out, const char *what, int kr)
{
	int ports = 0;

	for (unsigned i = 0; ib_user != NULL && kr == IDL_ENOTSUP && i < ib_user->ncalls; i++)
		if (strcmp(ib_user->calls[i].name, what) == 0)
			for (unsigned k = 0; k < ib_user->calls[i].rt->nargs; k++)
				ports |= ib_arg_ports(&ib_user->calls[i].rt->args[k]);
	if (kr == IDL_ENOTSUP)
		snprintf(out->why, sizeof out->why, "the transport carries no %s (%s)",
			 ports ? "ports" : "out-of-line data", idl_errname(kr));
	else if (kr > 0)
		snprintf(out->why, sizeof out->why, "%s: the server returned %d", what, kr);
	else
		snprintf(out->why, sizeof out->why, "%s: %s (%s)", what, idl_strerror(kr),
			 idl_errname(kr));
	return -1;
}

static int
ib_ucalls(const struct ib_cell *cell, struct ib_uvals *s, idl_port_t port, struct ib_reps *out)
{
	int kr = 0;

	for (unsigned i = 0; kr == 0 && i < cell->warmup; i++)
		kr = ib_once(s, port);
	for (unsigned k = 0; kr == 0 && k < cell->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; kr == 0 && i < cell->iterations; i++)
			kr = ib_once(s, port);
		t1 = ib_now();
		out->v[out->n++] = (t1 - t0) * 1e6 / cell->iterations;
	}
	return kr == 0 ? 0 : ib_ufail(out, cell->row->name, kr);
}

/* n one-way messages, then the synchronising round trip: what the time covers was served. */
static int
ib_burst(struct ib_uvals *s, struct ib_uvals *sync, idl_port_t port, unsigned n)
{
	int kr;

	for (unsigned i = 0; i < n; i++)
		if ((kr = ib_once(s, port)) != 0)
			return kr;
	if (sync != NULL && !ib_sync_ok(kr = ib_once(sync, port)))
		return kr;
	return 0;
}

static int
ib_uoneway(const struct ib_cell *cell, struct ib_uvals *s, idl_port_t port, struct ib_reps *out)
{
	struct ib_uvals sync;
	int kr;

	memset(&sync, 0, sizeof sync);
	if (ib_user->have_sync && (kr = ib_vals_init(&sync, &ib_user->sync)) != 0) {
		ib_vals_fini(&sync);
		return ib_ufail(out, ib_user->sync.name, kr);
	}
	kr = ib_burst(s, ib_user->have_sync ? &sync : NULL, port, cell->warmup);
	for (unsigned k = 0; kr == 0 && k < cell->reps; k++) {
		double t0 = ib_now();

		kr = ib_burst(s, ib_user->have_sync ? &sync : NULL, port, cell->iterations);
		out->v[out->n++] = cell->iterations / (ib_now() - t0);
	}
	ib_vals_fini(&sync);
	return kr == 0 ? 0 : ib_ufail(out, cell->row->name, kr);
}

int
ib_user_client(const struct ib_cell *cell, struct ib_reps *out)
{
	struct ib_uvals s;
	idl_port_t port;
	int kr;

	if ((kr = idl_port_open(cell->addr, &port)) != 0) {
		snprintf(out->why, sizeof out->why, "%.60s: %s", cell->addr, idl_errname(kr));
		return -1;
	}
	if ((kr = ib_vals_init(&s, cell->row->u)) != 0)
		kr = ib_ufail(out, cell->row->name, kr);
	else if (cell->row->mode == IB_MODE_ONEWAY)
		kr = ib_uoneway(cell, &s, port, out);
	else
		kr = ib_ucalls(cell, &s, port, out);
	ib_vals_fini(&s);
	idl_port_close(port);
	return kr;
}

/* ---- The probe ---- */

/* The bytes of the last request and reply the client traced: the message and the
 * out-of-line data beside it, which a floor moves inline. */
static uint64_t ib_sent, ib_received;

static uint64_t
ib_bytes(const idl_msg_header_t *m, size_t len)
{
	uint64_t n = len;

	if (len < IDL_MSG_HEADER_SIZE || !(m->flags & IDL_MSGF_DESC) ||
	    m->ndesc > (len - IDL_MSG_HEADER_SIZE) / IDL_DESC_SIZE)
		return n;
	for (uint32_t i = 0; i < m->ndesc; i++) {
		idl_desc_t d;

		memcpy(&d, (const char *)m + IDL_MSG_HEADER_SIZE + (size_t)i * IDL_DESC_SIZE,
		       sizeof d);
		if (d.type == IDL_DESC_OOL)
			n += IDL_MSG_ROUND((uint64_t)d.size);
	}
	return n;
}

static void
ib_probe_hook(void *arg, const struct idl_trace_event *ev)
{
	(void)arg;
	if (ev->side != IDL_TRACE_CLIENT || ev->len < IDL_MSG_HEADER_SIZE)
		return;
	if (ev->dir == IDL_TRACE_SEND &&
	    (ev->msg->kind == IDL_KIND_REQUEST || ev->msg->kind == IDL_KIND_ONEWAY))
		ib_sent = ib_bytes(ev->msg, ev->len);
	else if (ev->dir == IDL_TRACE_RECV && ev->msg->kind == IDL_KIND_REPLY)
		ib_received = ib_bytes(ev->msg, ev->len);
}

/* Each row called once, then the sync: out->v[3k] the request's bytes, [3k+1] the reply's,
 * [3k+2] the call's result. */
int
ib_user_probe(const struct ib_cell *cell, struct ib_reps *out)
{
	idl_port_t port;
	int kr;

	if ((kr = idl_port_open(cell->addr, &port)) != 0) {
		snprintf(out->why, sizeof out->why, "%s (%s) %.50s", idl_strerror(kr),
			 idl_errname(kr), idl_errdetail());
		return -1;
	}
	idl_trace_set_hook(ib_probe_hook, NULL);
	for (size_t k = 0; k <= ib_user->ncalls; k++) {
		const struct ib_ucall *c = k < ib_user->ncalls	? &ib_user->calls[k]
					   : ib_user->have_sync ? &ib_user->sync
								: NULL;
		struct ib_uvals s;

		if (c == NULL)
			break;
		ib_sent = ib_received = 0;
		if ((kr = ib_vals_init(&s, c)) == 0)
			kr = ib_once(&s, port);
		ib_vals_fini(&s);
		out->v[3 * k] = (double)ib_sent;
		out->v[3 * k + 1] = (double)ib_received;
		out->v[3 * k + 2] = kr;
		out->n = (unsigned)(3 * k + 3);
		if (kr != 0 && out->why[0] == '\0' && *idl_errdetail() != '\0')
			snprintf(out->why, sizeof out->why, "%.95s", idl_errdetail());
	}
	idl_trace_set_hook(NULL, NULL);
	idl_port_close(port);
	return 0;
}
