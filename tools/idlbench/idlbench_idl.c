/*
 * idlbench_idl.c - the idlkit side of a bench.defs cell, layer 3 (ib_cell.h): the server
 * (bench_impl.c's routines, as bench-server serves them) and the client loops that call a
 * row's stub (idlbench_rows.c) and time it.
 *
 * Notification ping-pong needs a notify that answers: idlbench links with
 * -Wl,--wrap=S_bench_notify, so the generated demux calls __wrap_S_bench_notify below,
 * which in a ping-pong process sends the counter on to the other process and otherwise is
 * bench_impl.c's routine (__real_S_bench_notify).
 *
 * The server is either the generated demux (bench_server) or, on a dynamic column and with
 * `idlbench serve --dynamic`, the interpreted server of <idl/idl_dynamic.h>, which checks and
 * answers requests from bench_subsystem's descriptors and calls the routines through libffi:
 * Flick's comparison of compiled against interpretive stubs, over the same client and
 * transport, so that the difference is what the dynamic path costs.
 *
 * It knows the base and the interface's rows; it must not know the user's interface (the
 * cells pick its sides, idlbench_cell.c), runs or reports.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>

#include "bench_types.h"
#include "bench.h"
#include "benchServer.h"
#include "bench_impl.h"
#include "ib_cell.h"

/* ---- Ping-pong: set in a ping-pong process before its server runs. ---- */

static struct {
	int active;
	int driver; /* the measuring side: stops when the counter comes back as 1 */
	const char *peer; /* the other process's address */
	idl_port_t port; /* to the peer; opened on first use in the answering side */
	sem_t done;
} ib_pp;

kern_return_t __real_S_bench_notify(mach_port_t server, int value);
kern_return_t __wrap_S_bench_notify(mach_port_t server, int value);

kern_return_t
__wrap_S_bench_notify(mach_port_t server, int value)
{
	if (!ib_pp.active)
		return __real_S_bench_notify(server, value);
	if (ib_pp.driver && value <= 1) {
		sem_post(&ib_pp.done);
		return KERN_SUCCESS;
	}
	if (ib_pp.port == NULL && idl_port_open(ib_pp.peer, &ib_pp.port) != 0)
		return KERN_FAILURE;
	return bench_notify(ib_pp.port, value - 1);
}

/* ---- The server ---- */

static idl_server_t *ib_srv;
static idl_dynamic_t *ib_dyn; /* the interpreted server's interface, when it serves */

/*
 * The interpreted server finds each routine here rather than with dlsym (which would need
 * -rdynamic): these are the functions the generated demux calls, the --wrap'ed ones
 * included (S_bench_notify here is __wrap_S_bench_notify, as in benchServer.c, and so is
 * S_bench_biginout), so that both servers run the same routines. idlbench_fns.h names every
 * S_bench_ function of benchServer.h, as IB_FN(name) lines generated at build time
 * (tools/idlbench/local.mk), so that a routine added to bench.defs is found without an edit
 * here.
 */
#define IB_FN(f) { #f, (void *)f },
static void *
ib_resolve(void *arg, const char *sym)
{
	static const struct {
		const char *name;
		void *fn;
	} fns[] = {
#include "idlbench_fns.h"
	};

	(void)arg;
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (strcmp(fns[i].name, sym) == 0)
			return fns[i].fn;
	return NULL;
}

/* SIGTERM (a service manager's stop) lets the calls in flight finish, for at most 10 s;
 * SIGINT stops at once; SIGHUP has the server read its certificates again. */
static void
ib_on_signal(int sig)
{
	if (sig == SIGHUP)
		idl_server_reload_async(ib_srv);
	else if (sig == SIGTERM)
		idl_server_drain(ib_srv, 10000);
	else
		idl_server_stop(ib_srv);
}

/* Serves bench.defs on address: through the generated demux, or the interpreter. */
static int
ib_bench_start(const char *address, int dynamic, char *why, size_t len)
{
	struct sigaction sa;
	int err;

	if ((err = idl_server_create(&ib_srv)) == 0) {
		if (!dynamic)
			err = idl_server_add_subsystem(ib_srv, &bench_subsystem, bench_server);
		else if ((err = idl_dynamic_create(&bench_subsystem, "S_bench_", ib_resolve, NULL,
						   &ib_dyn)) == 0)
			err = idl_server_add_dynamic(ib_srv, ib_dyn);
	}
	if (err != 0 || (err = idl_server_listen(ib_srv, address)) != 0) {
		snprintf(why, len, "%s", idl_errmsg(err, address));
		return -1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = ib_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return 0;
}

int
ib_idl_serve(const struct ib_cell *cell, int ready_fd)
{
	char why[256];
	int err;

	if (cell->row->mode == IB_MODE_PINGPONG) {
		ib_pp.active = 1;
		ib_pp.peer = cell->addr2;
	}
	if (ib_bench_start(cell->addr, cell->col->dynamic, why, sizeof why) != 0) {
		ib_ready(ready_fd, why);
		return 1;
	}
	ib_ready(ready_fd, NULL);
	err = idl_server_run(ib_srv);
	idl_server_destroy(ib_srv);
	idl_dynamic_destroy(ib_dyn);
	if (ib_pp.port != NULL)
		idl_port_close(ib_pp.port);
	return err == 0 ? 0 : 1;
}

/* idlbench serve [--dynamic] ADDRESS: bench-server's job, with idlbench's routines. */
int
ib_serve_forever(const char *address, int print_ready, int dynamic)
{
	char why[256];
	int err;

	if (ib_bench_start(address, dynamic, why, sizeof why) != 0) {
		fprintf(stderr, "idlbench: serve: %s\n", why);
		return 1;
	}
	if (print_ready) {
		printf("ready %s\n", address);
		fflush(stdout);
	}
	err = idl_server_run(ib_srv);
	idl_server_destroy(ib_srv);
	idl_dynamic_destroy(ib_dyn);
	if (err != 0)
		fprintf(stderr, "idlbench: serve: %s\n", idl_errmsg(err, address));
	return err == 0 ? 0 : 1;
}

/* ---- The client ---- */

static int
ib_fail(struct ib_reps *out, const char *what, int kr)
{
	snprintf(out->why, sizeof out->why, "%s: %s (%s)", what,
		 kr == -1 ? "wrong result" : idl_strerror(kr), kr == -1 ? "-" : idl_errname(kr));
	return -1;
}

static int
ib_calls(const struct ib_cell *cell, idl_port_t port, struct ib_reps *out)
{
	const struct ib_row *row = cell->row;
	void *s = ib_scratch_new(row);
	int kr = 0;

	if (s == NULL)
		return ib_fail(out, "out of memory", IDL_ENOMEM);
	ib_cpu_mark(out);
	for (unsigned i = 0; kr == 0 && i < cell->warmup; i++)
		kr = row->call(port, i, s);
	for (unsigned k = 0; kr == 0 && k < cell->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; kr == 0 && i < cell->iterations; i++)
			kr = row->call(port, i, s);
		t1 = ib_now();
		if (row->metric == IB_BANDWIDTH)
			out->v[out->n++] =
				(double)row->payload * cell->iterations / (t1 - t0) / 1e6;
		else
			out->v[out->n++] = (t1 - t0) * 1e6 / cell->iterations;
	}
	ib_cpu_mark(out);
	ib_scratch_free(s);
	return kr == 0 ? 0 : ib_fail(out, row->name, kr);
}

/* How many notifications the server has counted so far. */
static int
ib_notified(idl_port_t port, uint32_t *count)
{
	int y = 0, err = 0;
	kern_return_t kr = bench_intrpc(port, BENCH_X_NOTIFIED, &y, &err);

	*count = (uint32_t)y;
	return kr;
}

static int
ib_oneway(const struct ib_cell *cell, idl_port_t port, struct ib_reps *out)
{
	uint32_t before, after;
	int kr;

	ib_cpu_mark(out);
	for (unsigned i = 0; i < cell->warmup; i++)
		if ((kr = bench_notify(port, 1)) != 0)
			return ib_fail(out, "notify", kr);
	if ((kr = ib_notified(port, &before)) != 0)
		return ib_fail(out, "intrpc", kr);
	for (unsigned k = 0; k < cell->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; i < cell->iterations; i++)
			if ((kr = bench_notify(port, 1)) != 0)
				return ib_fail(out, "notify", kr);
		if ((kr = ib_notified(port, &after)) != 0)
			return ib_fail(out, "intrpc", kr);
		t1 = ib_now();
		out->v[out->n++] = (double)(after - before) / (t1 - t0);
		before = after;
	}
	ib_cpu_mark(out);
	return 0;
}

static void *
ib_run_thread(void *arg)
{
	idl_server_run(arg);
	return NULL;
}

/* The driving side of the ping-pong: serves its own endpoint (addr2) in a thread, sends
 * the first notification, and waits until the counter has gone round. */
static int
ib_pingpong(const struct ib_cell *cell, struct ib_reps *out)
{
	pthread_t th;
	char why[256];
	int kr = 0, started = 0;

	ib_pp.active = 1;
	ib_pp.driver = 1;
	ib_pp.peer = cell->addr;
	sem_init(&ib_pp.done, 0, 0);
	/* The driver's own endpoint is compiled on every column: the server under test is the
	 * other process's. */
	if (ib_bench_start(cell->addr2, 0, why, sizeof why) != 0) {
		snprintf(out->why, sizeof out->why, "%.90s", why);
		return -1;
	}
	if (pthread_create(&th, NULL, ib_run_thread, ib_srv) != 0) {
		kr = IDL_ENOMEM;
		goto out;
	}
	started = 1;
	if ((kr = idl_port_open(cell->addr, &ib_pp.port)) != 0)
		goto out;
	ib_cpu_mark(out);
	for (unsigned k = 0; k <= cell->reps; k++) {
		unsigned n = k == 0 ? cell->warmup : cell->iterations;
		struct timespec ts;
		double t0 = ib_now(), t1;

		if ((kr = bench_notify(ib_pp.port, (int)(2 * n))) != 0)
			goto out;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 60;
		while (sem_timedwait(&ib_pp.done, &ts) != 0)
			if (errno != EINTR) {
				kr = IDL_ETIMEDOUT;
				goto out;
			}
		t1 = ib_now();
		if (k > 0)
			out->v[out->n++] = 2.0 * n / (t1 - t0);
	}
	ib_cpu_mark(out);
out:
	if (started) {
		idl_server_stop(ib_srv);
		pthread_join(th, NULL);
	}
	idl_server_destroy(ib_srv);
	idl_port_close(ib_pp.port);
	return kr == 0 ? 0 : ib_fail(out, "notify ping-pong", kr);
}

/* One connection of the connection rows: a port opened (connect, TLS handshake), its hello
 * and a null call, the port closed. */
static int
ib_connect_once(const char *address, idl_config_t *cfg)
{
	idl_port_t port;
	int kr = idl_port_open_config(address, cfg, &port);

	if (kr == 0) {
		kr = bench_null(port);
		idl_port_close(port);
	}
	return kr;
}

/* The connection rows (tls:): connections per second, each a full handshake or one that
 * resumes the last connection's session, as the row says. One configuration, the IDL_TLS_*
 * variables', for the whole cell: its files are read once, and its cache keeps the tickets. */
static int
ib_connects(const struct ib_cell *cell, struct ib_reps *out)
{
	idl_config_t *cfg = NULL;
	int kr = idl_tls_config_from_env(&cfg);

	if (kr == 0)
		kr = idl_tls_config_set_resume(cfg, cell->row->resume);
	ib_cpu_mark(out);
	for (unsigned i = 0; kr == 0 && i < cell->warmup; i++)
		kr = ib_connect_once(cell->addr, cfg);
	for (unsigned k = 0; kr == 0 && k < cell->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; kr == 0 && i < cell->iterations; i++)
			kr = ib_connect_once(cell->addr, cfg);
		t1 = ib_now();
		out->v[out->n++] = cell->iterations / (t1 - t0);
	}
	ib_cpu_mark(out);
	idl_config_free(cfg);
	return kr == 0 ? 0 : ib_fail(out, cell->row->name, kr);
}

int
ib_idl_client(const struct ib_cell *cell, struct ib_reps *out)
{
	idl_port_t port;
	int kr;

	if (cell->row->mode == IB_MODE_PINGPONG)
		return ib_pingpong(cell, out);
	if (cell->row->mode == IB_MODE_CONNECT)
		return ib_connects(cell, out);
	if (cell->inflight > 1)
		return ib_inflight_client(cell, out);
	if ((kr = idl_port_open(cell->addr, &port)) != 0) {
		snprintf(out->why, sizeof out->why, "%.60s: %s", cell->addr, idl_errname(kr));
		return -1;
	}
	if (cell->row->mode == IB_MODE_ONEWAY)
		kr = ib_oneway(cell, port, out);
	else
		kr = ib_calls(cell, port, out);
	idl_port_close(port);
	return kr;
}

int
ib_bench_probe(const struct ib_cell *cell, struct ib_reps *out)
{
	idl_port_t port;
	int kr;

	if ((kr = idl_port_open(cell->addr, &port)) != 0) {
		snprintf(out->why, sizeof out->why, "%s", idl_errmsg(kr, cell->addr));
		return -1;
	}
	kr = bench_null(port);
	out->v[0] = out->v[1] = 0;
	out->v[2] = kr;
	out->n = 3;
	if (kr != 0)
		snprintf(out->why, sizeof out->why, "%.95s", idl_errdetail());
	idl_port_close(port);
	return 0;
}
