/*
 * idlbench_json.c - the JSON of --json: the machine, the run's configuration and one object
 * per result, in the shape docs/benchmarks.md documents and tests/bench/idlbench_jsoncheck
 * checks.
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

#include "idlbench.h"

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
js_cpu(char *buf, size_t len)
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

static const char *const js_metric[] = { "latency", "oneway", "bandwidth", "throughput" };
static const char *const js_unit[] = { "us", "msgs/s", "MB/s", "calls/s" };

/* What one JSON result says beyond its figures: which stubs ran, and the bytes of the
 * request and reply that the floor moved too (0 for none). */
struct js_extra {
	const char *stubs; /* NULL: a peer's row */
	uint32_t req, rep;
	const char *version; /* a peer's row: its library and version */
	double speedup; /* a peer's row: how many times faster idlkit is */
};

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
	fputc('}', f);
}

int
ib_report_json(const char *path, const struct ib_run *run)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	const char *names[IB_MAX_COLS + 32];
	struct utsname u;
	char cpu[128], kernel[160];
	size_t n;
	int first = 1;

	if (f == NULL) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uname(&u);
	snprintf(kernel, sizeof kernel, "%s %s", u.sysname, u.release);
	js_cpu(cpu, sizeof cpu);
	fputs("{\"idlbench\": ", f);
	js_str(f, idl_version());
	fputs(",\n \"machine\": {\"kernel\": ", f);
	js_str(f, kernel);
	fputs(", \"cpu\": ", f);
	js_str(f, cpu);
	fprintf(f, ", \"cores\": %ld, \"date\": ", sysconf(_SC_NPROCESSORS_ONLN));
	js_str(f, run->date);
	fputs("},\n \"config\": {", f);
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
		"\"inflight\": %u, \"cpus\": [%d, %d], \"connect\": ",
		run->rounds, run->iterations, run->reps, run->quick ? "true" : "false",
		run->inflight, run->cpu0, run->cpu1);
	if (run->connect != NULL)
		js_str(f, run->connect);
	else
		fputs("null", f);
	fputs(", \"defs\": ", f);
	if (ib_user != NULL)
		js_str(f, ib_user->path);
	else
		fputs("null", f);
	fputs(", \"impl\": ", f);
	if (ib_user != NULL && ib_user->impl != NULL)
		js_str(f, ib_user->impl);
	else
		fputs("null", f);
	fprintf(f, ", \"interpreted\": %s",
		ib_user != NULL && ib_user->interpreted ? "true" : "false");
	fputs("},\n \"results\": [", f);
	for (size_t i = 0; i < run->nresults; i++) {
		const struct ib_result *r = &run->results[i];
		struct ib_stat s = ib_stat_of(r, 0), fl = ib_stat_of(r, 1);
		unsigned iters = run->iterations / r->row->iter_div;
		int sendto = r->row->mode == IB_MODE_SENDTO;

		struct js_extra x = { "compiled", r->row->req, r->row->rep, NULL, NAN };

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
	fputs("\n ]}\n", f);
	if (f != stdout && fclose(f) != 0) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
