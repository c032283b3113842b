/*
 * idlbench_uclient.c - the client side of a cell of the user's interface (--defs), layer 3:
 * the timed loops (calls, one-way bursts with their synchronising round trip, calls in flight
 * through the generated asynchronous calls), the probe that calls each row once before the
 * run, and the setup calls (--setup) made once on each server before its rows are timed.
 *
 * It knows the base, the interface and the cells (a call is idlbench_user.c's); it must not
 * know runs or reports.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_trace.h>

#include "ib_flight.h"
#include "ib_user.h"

/* A synchronising call's answer: any reply of the server's, even a refusal of zeroed
 * arguments, tells that what came before it on the connection was served. */
static int
ib_sync_ok(int kr)
{
	return kr >= 0 || kr == MIG_BAD_ARGUMENTS;
}

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

	ib_cpu_mark(out);
	for (unsigned i = 0; kr == 0 && i < cell->warmup; i++)
		kr = ib_once(s, port);
	for (unsigned k = 0; kr == 0 && k < cell->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; kr == 0 && i < cell->iterations; i++)
			kr = ib_once(s, port);
		t1 = ib_now();
		out->v[out->n++] = (t1 - t0) * 1e6 / cell->iterations;
	}
	ib_cpu_mark(out);
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
	ib_cpu_mark(out);
	kr = ib_burst(s, ib_user->have_sync ? &sync : NULL, port, cell->warmup);
	for (unsigned k = 0; kr == 0 && k < cell->reps; k++) {
		double t0 = ib_now();

		kr = ib_burst(s, ib_user->have_sync ? &sync : NULL, port, cell->iterations);
		out->v[out->n++] = cell->iterations / (ib_now() - t0);
	}
	ib_cpu_mark(out);
	ib_vals_fini(&sync);
	return kr == 0 ? 0 : ib_ufail(out, cell->row->name, kr);
}

/* ---- Calls in flight: the asynchronous stubs (ib_acall_N in client.so) ---- */

/* Where each generated done function ends (client.so's ib_async_done). */
static void
ib_udone(void *ctx, int kr)
{
	ib_flight_finish(ctx, kr);
}

static int
ib_ustart(struct ib_flight *f, struct ib_slot *slot)
{
	struct ib_uvals *s = f->arg;
	int err = ib_vals_remake(s);

	return err != 0 ? err : s->c->athunk(f->port, s->v, slot);
}

int
ib_user_inflight_row(const struct ib_row *row)
{
	return row->u != NULL && row->u->athunk != NULL && row->mode == IB_MODE_CALL;
}

static int
ib_uflight(const struct ib_cell *cell, struct ib_uvals *s, struct ib_reps *out)
{
	if (!ib_user_inflight_row(cell->row) || ib_user->async_done == NULL) {
		snprintf(out->why, sizeof out->why, "no asynchronous call for this row");
		return -1;
	}
	*ib_user->async_done = ib_udone;
	return ib_flight_cell(cell, ib_ustart, s, out);
}

int
ib_user_client(const struct ib_cell *cell, struct ib_reps *out)
{
	struct ib_uvals s;
	idl_port_t port;
	int kr;

	if (cell->inflight > 1) {
		if ((kr = ib_vals_init(&s, cell->row->u)) != 0)
			kr = ib_ufail(out, cell->row->name, kr);
		else
			kr = ib_uflight(cell, &s, out);
		ib_vals_fini(&s);
		return kr;
	}
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

/* ---- The setup calls (--setup) ---- */

/* Each setup call once, in order; the first that fails says why. */
static int
ib_setup_calls(idl_port_t port, struct ib_reps *out)
{
	for (size_t k = 0; k < ib_user->nsetup; k++) {
		const struct ib_ucall *c = &ib_user->setup[k];
		struct ib_uvals s;
		int kr;

		if ((kr = ib_vals_init(&s, c)) == 0)
			kr = ib_once(&s, port);
		ib_vals_fini(&s);
		if (kr != 0) {
			if (kr > 0)
				snprintf(out->why, sizeof out->why,
					 "--setup '%.40s': the server returned %d", c->spec, kr);
			else
				snprintf(out->why, sizeof out->why, "--setup '%.40s': %s (%s)",
					 c->spec, idl_strerror(kr), idl_errname(kr));
			return -1;
		}
	}
	return 0;
}

int
ib_user_setup(const struct ib_cell *cell, struct ib_reps *out)
{
	idl_port_t port;
	int kr;

	if ((kr = idl_port_open(cell->addr, &port)) != 0) {
		snprintf(out->why, sizeof out->why, "%.60s: %s", cell->addr, idl_errname(kr));
		return -1;
	}
	kr = ib_setup_calls(port, out);
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
		snprintf(out->why, sizeof out->why, "%s", idl_errmsg(kr, cell->addr));
		return -1;
	}
	/* The state the rows need comes first, as on every server of the run. */
	if (ib_setup_calls(port, out) != 0) {
		idl_port_close(port);
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
