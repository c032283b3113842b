/*
 * peer.c - the command line, rows, payloads, checks and report that every peer program
 * shares (peer.h states the contract). The payloads and checks are bench_impl.h's, so that a
 * peer's server does per call what bench-server's routines do.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench_impl.h"
#include "peer.h"

const struct peer_row peer_rows[PEER_NROWS] = {
	[PEER_NULL] = { "null", "latency", 0, "-" },
	[PEER_ADD] = { "add", "latency", 0, "-" },
	[PEER_BIGIN] = { "bigin", "latency", PEER_BIG, "inline" },
	[PEER_BIGOUT] = { "bigout", "latency", PEER_BIG, "inline" },
	[PEER_BIGINOUT] = { "biginout", "latency", PEER_BIG, "inline" },
	[PEER_OOL64K] = { "ool64k", "bandwidth", BENCH_OOL64K_BYTES, "inline" },
	[PEER_OOL1M] = { "ool1m", "bandwidth", BENCH_OOL1M_BYTES, "inline" },
};

const unsigned peer_salt_in = BENCH_SALT_IN, peer_salt_out = BENCH_SALT_OUT,
	       peer_salt_inout_in = BENCH_SALT_INOUT_IN, peer_salt_inout_out = BENCH_SALT_INOUT_OUT;

#define PEER_DEFAULT_TIMEOUT_MS 10000u

static void
peer_usage(const struct peer_info *info)
{
	fprintf(stderr,
		"usage: %s-peer version | rows | transports\n"
		"       %s-peer serve ADDRESS [--wrong ROW]\n"
		"       %s-peer call ADDRESS ROW ITERATIONS REPS [--warmup N] [--inflight N]\n"
		"                 [--timeout-ms MS] [--corrupt]\n"
		"ADDRESS: unix:PATH%s%s; ROW: null add bigin bigout biginout ool64k ool1m\n",
		info->name, info->name, info->name,
		strstr(info->transports, "tcp") != NULL ? " or tcp:HOST:PORT" : "",
		strstr(info->transports, "tls") != NULL ? " or tls:HOST:PORT" : "");
}

/* An unsigned number within [min, max], the whole of s; -1 otherwise. */
static int
peer_number(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
peer_row_find(const char *name)
{
	for (int i = 0; i < PEER_NROWS; i++)
		if (strcmp(peer_rows[i].name, name) == 0)
			return i;
	return -1;
}

static int
peer_addr_parse(const struct peer_info *info, const char *s, struct peer_addr *a)
{
	memset(a, 0, sizeof *a);
	if (strncmp(s, "unix:", 5) == 0) {
		size_t n = strlen(s + 5);

		if (n == 0 || n >= sizeof a->path) {
			peer_err(info, "%s: the path must have 1 to %zu bytes", s,
				 sizeof a->path - 1);
			return -1;
		}
		memcpy(a->path, s + 5, n + 1);
		return 0;
	}
	if ((strncmp(s, "tcp:", 4) == 0 && strstr(info->transports, "tcp") != NULL) ||
	    (strncmp(s, "tls:", 4) == 0 && strstr(info->transports, "tls") != NULL)) {
		const char *host = s + 4, *colon = strrchr(host, ':');
		unsigned long port;

		if (colon == NULL || colon == host || (size_t)(colon - host) >= sizeof a->host ||
		    peer_number(colon + 1, 0, 65535, &port) != 0) {
			peer_err(info, "%s: expected %.3s:HOST:PORT (port 0 to 65535)", s, s);
			return -1;
		}
		a->tcp = 1;
		a->tls = s[1] == 'l';
		memcpy(a->host, host, (size_t)(colon - host));
		a->host[colon - host] = '\0';
		a->port = (unsigned)port;
		return 0;
	}
	peer_err(info, "%s: not an address this peer serves (%s)", s, info->transports);
	return -1;
}

int
peer_addr_format(const struct peer_addr *a, char *buf, size_t len)
{
	int n = a->tcp ? snprintf(buf, len, "%s:%s:%u", a->tls ? "tls" : "tcp", a->host, a->port)
		       : snprintf(buf, len, "unix:%s", a->path);

	return n > 0 && (size_t)n < len ? 0 : -1;
}

static int
peer_parse_serve(int argc, char **argv, const struct peer_info *info, struct peer_args *a)
{
	if (argc < 3 || peer_addr_parse(info, argv[2], &a->addr) != 0)
		return -1;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--wrong") == 0 && i + 1 < argc) {
			a->wrong = peer_row_find(argv[++i]);
			/* Only the rows with an answer can answer wrongly. */
			if (a->wrong < 0 || a->wrong == PEER_NULL || a->wrong == PEER_BIGIN) {
				peer_err(info,
					 "--wrong %s: not a row with an answer (add, bigout, "
					 "biginout, ool64k, ool1m)",
					 argv[i]);
				return -1;
			}
		} else {
			peer_err(info, "serve: unknown argument %s", argv[i]);
			return -1;
		}
	}
	a->cmd = PEER_CMD_SERVE;
	return 0;
}

static int
peer_parse_call(int argc, char **argv, const struct peer_info *info, struct peer_args *a)
{
	unsigned long v;
	int row, warmup_set = 0;

	if (argc < 6 || peer_addr_parse(info, argv[2], &a->addr) != 0)
		return -1;
	if ((row = peer_row_find(argv[3])) < 0) {
		peer_err(info, "%s: no such row", argv[3]);
		return -1;
	}
	a->row = (enum peer_row_id)row;
	if (peer_number(argv[4], 1, 1000000000ul, &a->iterations) != 0 ||
	    peer_number(argv[5], 1, 1000, &a->reps) != 0) {
		peer_err(info, "ITERATIONS must be 1 to 10^9 and REPS 1 to 1000");
		return -1;
	}
	for (int i = 6; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(opt, "--corrupt") == 0) {
			a->corrupt = 1;
			continue;
		}
		if (strcmp(opt, "--warmup") == 0 && peer_number(val, 0, 1000000000ul, &v) == 0) {
			a->warmup = v;
			warmup_set = 1;
		} else if (strcmp(opt, "--inflight") == 0 && peer_number(val, 1, 4096, &v) == 0)
			a->inflight = (unsigned)v;
		else if (strcmp(opt, "--timeout-ms") == 0 &&
			 peer_number(val, 1, 3600000ul, &v) == 0)
			a->timeout_ms = (unsigned)v;
		else {
			peer_err(info,
				 "call: bad option %s%s%s (--warmup 0..10^9, --inflight 1..4096, "
				 "--timeout-ms 1..3600000)",
				 opt, val != NULL ? " " : "", val != NULL ? val : "");
			return -1;
		}
		i++;
	}
	if (!warmup_set)
		a->warmup = a->iterations / 5 < 20 ? 20 : a->iterations / 5;
	a->cmd = PEER_CMD_CALL;
	return 0;
}

int
peer_parse(int argc, char **argv, const struct peer_info *info, struct peer_args *a)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	char line[256];
	int r = -1;

	memset(a, 0, sizeof *a);
	a->inflight = 1;
	a->timeout_ms = PEER_DEFAULT_TIMEOUT_MS;
	a->wrong = -1;
	if (strcmp(cmd, "version") == 0 && argc == 2) {
		info->version(line, sizeof line);
		printf("%s\n", line);
		a->cmd = PEER_CMD_DONE;
		return 0;
	}
	if (strcmp(cmd, "rows") == 0 && argc == 2) {
		for (int i = 0; i < PEER_NROWS; i++)
			printf("%s %s %zu %s\n", peer_rows[i].name, peer_rows[i].metric,
			       peer_rows[i].payload, peer_rows[i].carriage);
		a->cmd = PEER_CMD_DONE;
		return 0;
	}
	if (strcmp(cmd, "transports") == 0 && argc == 2) {
		snprintf(line, sizeof line, "%s", info->transports);
		for (char *w = strtok(line, " "); w != NULL; w = strtok(NULL, " "))
			printf("%s\n", w);
		a->cmd = PEER_CMD_DONE;
		return 0;
	}
	if (strcmp(cmd, "serve") == 0)
		r = peer_parse_serve(argc, argv, info, a);
	else if (strcmp(cmd, "call") == 0)
		r = peer_parse_call(argc, argv, info, a);
	if (r != 0)
		peer_usage(info);
	return r;
}

int
peer_data_init(struct peer_data *d, enum peer_row_id row, int corrupt)
{
	memset(d, 0, sizeof *d);
	bench_fill(d->in, sizeof d->in, BENCH_SALT_IN);
	bench_fill(d->inout, sizeof d->inout, BENCH_SALT_INOUT_IN);
	bench_fill(d->out, sizeof d->out, BENCH_SALT_OUT);
	bench_fill(d->inout_out, sizeof d->inout_out, BENCH_SALT_INOUT_OUT);
	if (corrupt) {
		/* The last byte: a server that checks only the first would miss it. */
		d->in[PEER_BIG - 1] ^= 0x20;
		d->inout[PEER_BIG - 1] ^= 0x20;
	}
	if (row == PEER_OOL64K || row == PEER_OOL1M) {
		d->ool_len = peer_rows[row].payload;
		if ((d->ool = malloc(d->ool_len)) == NULL)
			return -1;
		memset(d->ool, 'O', d->ool_len);
		d->ool_sum = bench_ool_sum(d->ool, d->ool_len);
	}
	return 0;
}

void
peer_data_fini(struct peer_data *d)
{
	free(d->ool);
	d->ool = NULL;
}

int
peer_srv_add(int wrong, int a, int b)
{
	/* Wrapping addition without signed overflow, as S_bench_add. */
	return (int)((unsigned)a + (unsigned)b + (wrong == PEER_ADD ? 1u : 0u));
}

int
peer_srv_check(const void *data, size_t len, unsigned salt)
{
	return len == PEER_BIG && bench_mismatch(data, len, salt) == len ? 0 : -1;
}

void
peer_srv_fill(int wrong, enum peer_row_id row, void *data, unsigned salt)
{
	bench_fill(data, PEER_BIG, salt);
	if (wrong == (int)row)
		((char *)data)[PEER_BIG - 1] ^= 0x20;
}

int
peer_srv_ool(int wrong, enum peer_row_id row, const void *data, size_t len, uint64_t *sum)
{
	if (len != peer_rows[row].payload)
		return -1;
	*sum = bench_ool_sum(data, len) + (wrong == (int)row ? 1u : 0u);
	return 0;
}

double
peer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void
peer_report(unsigned long rep, double ns_per_call)
{
	printf("rep %lu %.1f\n", rep, ns_per_call);
	fflush(stdout);
}

void
peer_ready(const struct peer_addr *a)
{
	char buf[200];

	if (peer_addr_format(a, buf, sizeof buf) == 0)
		printf("ready %s\n", buf);
	fflush(stdout);
}

void
peer_err(const struct peer_info *info, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s-peer: ", info->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
peer_setup_client(void)
{
	signal(SIGPIPE, SIG_IGN);
}

void
peer_setup_server(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	umask(0177);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
}
