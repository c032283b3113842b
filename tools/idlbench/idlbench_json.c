/*
 * idlbench_json.c - the JSON of --json, layer 5 (ib_report.h): the machine, the run's
 * configuration, the verdict (idlbench_judge.c's judgements) and one object per result with
 * its CPU per call, in the shape docs/benchmarks.md documents and
 * tests/bench/idlbench_jsoncheck checks.
 *
 * It reads the run and measures nothing; it must not be used by the layers below it.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <idl/idl.h>

#include "ib_report.h"

static void
js_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static void
js_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
js_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
			colon += 1 + strspn(colon + 1, " \t");
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static void
js_list(FILE *f, const char *key, const char *const *v, size_t n)
{
	fprintf(f, "\"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		js_str(f, v[i]);
	}
	fputc(']', f);
}

static const char *const js_metric[] = { "latency", "oneway", "bandwidth", "throughput",
					 "connect" };
static const char *const js_unit[] = { "us", "msgs/s", "MB/s", "calls/s", "connections/s" };

/* What one JSON result says beyond its figures: which stubs ran, and the bytes of the
 * request and reply that the floor moved too (0 for none); a peer's library and speedup; the
 * CPU per call of both sides. */
struct js_extra {
	const char *stubs; /* NULL: a peer's row */
	uint32_t req, rep;
	const char *version; /* a peer's row: its library and version */
	double speedup; /* a peer's row: how many times faster idlkit is */
	const struct ib_result *r; /* its CPU, NULL: none (the marshaling rows) */
};

static void
js_side(FILE *f, double total, const struct ib_cpu *split)
{
	if (isnan(total)) {
		fputs("null", f);
		return;
	}
	fputs("{\"user\": ", f);
	js_num(f, split->user);
	fputs(", \"sys\": ", f);
	js_num(f, split->sys);
	fputs(", \"total\": ", f);
	js_num(f, total);
	fputc('}', f);
}

/* A side's CPU per call: {"per", "client", "server"}, or null when it has no figure. */
static void
js_cpu(FILE *f, const struct ib_result *r, int side)
{
	struct ib_use u;

	if (r == NULL || r->n[side] == 0 || isnan((u = ib_use_of(r, side)).client)) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"per\": \"%s\", \"unit\": \"us\", \"client\": ", ib_cpu_per(r->row));
	js_side(f, u.client, &u.csplit);
	fputs(", \"server\": ", f);
	js_side(f, u.server, &u.ssplit);
	fputc('}', f);
}

static void
js_result(FILE *f, int *first, const char *transport, const char *routine, const char *place,
	  enum ib_metric m, const struct ib_stat *s, double floor, double ratio, unsigned rounds,
	  unsigned iterations, const struct js_extra *x)
{
	fprintf(f, "%s\n    {\"transport\": ", *first ? "" : ",");
	*first = 0;
	js_str(f, transport);
	fputs(", \"routine\": ", f);
	js_str(f, routine);
	fprintf(f, ", \"placement\": \"%s\", \"metric\": \"%s\", \"unit\": \"%s\", \"median\": ",
		place, js_metric[m], js_unit[m]);
	js_num(f, s->median);
	fputs(", \"min\": ", f);
	js_num(f, s->min);
	fputs(", \"max\": ", f);
	js_num(f, s->max);
	fputs(", \"floor\": ", f);
	js_num(f, floor);
	fputs(", \"ratio\": ", f);
	js_num(f, ratio);
	fprintf(f, ", \"rounds\": %u, \"iterations\": %u", rounds, iterations);
	if (x != NULL && x->stubs != NULL)
		fprintf(f, ", \"stubs\": \"%s\", \"request_bytes\": %u, \"reply_bytes\": %u",
			x->stubs, x->req, x->rep);
	if (x != NULL && x->version != NULL) {
		fputs(", \"peer\": ", f);
		js_str(f, x->version);
		fputs(", \"speedup\": ", f);
		js_num(f, x->speedup);
	}
	if (x != NULL && x->r != NULL) {
		fputs(", \"cpu\": ", f);
		js_cpu(f, x->r, 0);
		fputs(", \"floor_cpu\": ", f);
		js_cpu(f, x->r, 1);
	}
	fputc('}', f);
}

static void
js_opt(FILE *f, const char *key, const char *v)
{
	fprintf(f, ", \"%s\": ", key);
	if (v != NULL)
		js_str(f, v);
	else
		fputs("null", f);
}

static void
js_config(FILE *f, const struct ib_run *run)
{
	const char *names[IB_MAX_COLS + IB_MAX_CALLS + 32];
	size_t n;

	fputs("{", f);
	for (n = 0; n < run->nplacements; n++)
		names[n] = ib_placement_name(run->placements[n]);
	js_list(f, "placements", names, n);
	for (n = 0; n < run->ncols; n++)
		names[n] = run->cols[n].name;
	fputs(", ", f);
	js_list(f, "transports", names, n);
	n = 0;
	for (size_t i = 0; i < ib_nrows; i++)
		if (ib_rows[i].present >= 0 && ib_rows[i].mode != IB_MODE_SENDTO)
			names[n++] = ib_rows[i].name;
	fputs(", ", f);
	js_list(f, "routines", names, n);
	fprintf(f,
		", \"rounds\": %u, \"iterations\": %u, \"reps\": %u, \"quick\": %s, "
		"\"inflight\": %u, \"cpus\": [%d, %d]",
		run->rounds, run->iterations, run->reps, run->quick ? "true" : "false",
		run->inflight, run->cpu0, run->cpu1);
	js_opt(f, "connect", run->connect);
	js_opt(f, "defs", ib_user != NULL ? ib_user->path : NULL);
	js_opt(f, "impl", ib_user != NULL ? ib_user->impl : NULL);
	fprintf(f, ", \"interpreted\": %s",
		ib_user != NULL && ib_user->interpreted ? "true" : "false");
	n = 0;
	for (size_t i = 0; ib_user != NULL && i < ib_user->nsetup; i++)
		names[n++] = ib_user->setup[i].spec;
	fputs(", ", f);
	js_list(f, "setup", names, n);
	/* Where the idlkit cells' servers come from: one per cell (no state carries), one per
	 * transport and round kept across its rows (the user's routines keep state), or
	 * someone else's (--connect). */
	fprintf(f, ", \"servers\": \"%s\"}",
		run->connect != NULL ? "connect"
		: run->keep	     ? "per transport and round"
				     : "per cell");
}

/* One column of a verdict's order. */
static void
js_rank(FILE *f, const struct ib_judgement *j, unsigned i)
{
	const struct vd_rank *r = &j->res.rank[i];

	fprintf(f, "%s{\"transport\": ", i > 0 ? ", " : "");
	js_str(f, j->cols[r->col]->name);
	fprintf(f, ", \"rows\": %u, \"x\": ", r->rows);
	js_num(f, r->x);
	fputs(", \"lowest\": ", f);
	js_num(f, r->lo);
	fputs(", \"highest\": ", f);
	js_num(f, r->hi);
	fputs(", \"cpu\": ", f);
	js_num(f, r->cpu);
	fprintf(f, ", \"spins\": %s, \"after\": ", r->spin > VD_SPIN ? "true" : "false");
	if (i == 0) {
		fputs("null}", f);
		return;
	}
	fputs("{\"transport\": ", f);
	js_str(f, j->cols[j->res.rank[i - 1].col]->name);
	fprintf(f, ", \"faster_rounds\": %u, \"rounds\": %u, \"ratio\": ", r->lost, r->rounds);
	js_num(f, r->ratio);
	fprintf(f, ", \"holds\": %s}}", r->holds ? "true" : "false");
}

static void
js_flag(FILE *f, const struct ib_judgement *j, const struct vd_flag *fl, int first)
{
	static const char *const names[] = { "spread", "below_noise", "below", "far", "spins" };

	fprintf(f, "%s{\"flag\": \"%s\", \"transport\": ", first ? "" : ", ", names[fl->kind]);
	js_str(f, j->cols[fl->col]->name);
	fputs(", \"routine\": ", f);
	if (fl->kind == VD_FLAG_SPIN)
		fputs("null", f);
	else
		js_str(f, j->rows[fl->row]->name);
	fprintf(f, ", \"side\": \"%s\", \"value\": ", fl->floor ? "floor" : "idlkit");
	js_num(f, fl->value);
	fputs(", \"lowest\": ", f);
	js_num(f, fl->lo);
	fputs(", \"highest\": ", f);
	js_num(f, fl->hi);
	fputs(", \"cause\": ", f);
	js_str(f, ib_flag_cause(fl->kind, j->placement));
	fputc('}', f);
}

static void
js_verdict(FILE *f, const struct ib_judgement *j, size_t n)
{
	fputs("[", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n    {\"placement\": \"%s\", \"kind\": ", i > 0 ? "," : "",
			ib_placement_name(j[i].placement));
		js_str(f, ib_vkind_name(j[i].kind));
		fprintf(f, ", \"group\": \"%s\", \"unit\": \"%s\", \"order\": [",
			j[i].network ? "network" : "local", js_unit[ib_vkind_metric(j[i].kind)]);
		for (unsigned k = 0; k < j[i].res.n; k++)
			js_rank(f, &j[i], k);
		fputs("], \"flags\": [", f);
		for (unsigned k = 0; k < j[i].res.nflags; k++)
			js_flag(f, &j[i], &j[i].res.flags[k], k == 0);
		fputs("]}", f);
	}
	fputs(n > 0 ? "\n ]" : "]", f);
}

static void
js_results(FILE *f, const struct ib_run *run)
{
	int first = 1;

	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];
		struct ib_stat s = ib_stat_of(r, 0), fl = ib_stat_of(r, 1);
		unsigned iters = run->iterations / r->row->iter_div;
		int sendto = r->row->mode == IB_MODE_SENDTO;
		struct js_extra x = { "compiled", r->row->req, r->row->rep, NULL, NAN, r };

		if (s.n == 0)
			continue;
		if (r->col->peer) {
			x.stubs = NULL;
			x.version = ib_peer_version(r->col);
			x.speedup = ib_speedup_of(run, r);
		} else if (ib_user != NULL && ib_user->interpreted)
			x.stubs = "interpreted";
		else if (r->col->dynamic)
			x.stubs = "interpreted server";
		js_result(f, &first, sendto ? "udp-sendto" : r->col->name,
			  sendto ? "notify" : r->row->name, ib_placement_name(r->placement),
			  r->row->metric, &s, r->col->peer ? NAN : fl.median,
			  r->col->peer ? NAN : ib_ratio_of(r), s.n, iters < 5 ? 5 : iters, &x);
	}
	if (run->marshal_idl_ns >= 0) {
		struct ib_stat s = { run->marshal_idl_ns / 1000, run->marshal_idl_ns / 1000,
				     run->marshal_idl_ns / 1000, 1 };
		struct ib_stat x = { run->marshal_xdr_ns / 1000, run->marshal_xdr_ns / 1000,
				     run->marshal_xdr_ns / 1000, 1 };
		unsigned iters = run->quick ? 20000 : 200000;

		js_result(f, &first, "marshal", "biginout", "inproc", IB_LATENCY, &s, NAN,
			  run->marshal_xdr_ns > 0 ? run->marshal_idl_ns / run->marshal_xdr_ns : NAN,
			  9, iters, NULL);
		if (run->marshal_xdr_ns > 0)
			js_result(f, &first, "marshal-xdr", "biginout", "inproc", IB_LATENCY, &x,
				  NAN, NAN, 9, iters, NULL);
	}
}

int
ib_report_json(const char *path, const struct ib_run *run)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	struct ib_judgement *j;
	struct utsname u;
	char cpu[128], kernel[160];
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uname(&u);
	snprintf(kernel, sizeof kernel, "%s %s", u.sysname, u.release);
	js_cpu_model(cpu, sizeof cpu);
	fputs("{\"idlbench\": ", f);
	js_str(f, idl_version());
	fputs(",\n \"machine\": {\"kernel\": ", f);
	js_str(f, kernel);
	fputs(", \"cpu\": ", f);
	js_str(f, cpu);
	fprintf(f, ", \"cores\": %ld, \"date\": ", sysconf(_SC_NPROCESSORS_ONLN));
	js_str(f, run->date);
	fputs("},\n \"config\": ", f);
	js_config(f, run);
	fputs(",\n \"verdict\": ", f);
	j = ib_judge(run, &n);
	js_verdict(f, j, n);
	free(j);
	fputs(",\n \"results\": [", f);
	js_results(f, run);
	fputs("\n ]}\n", f);
	if (f != stdout && fclose(f) != 0) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
