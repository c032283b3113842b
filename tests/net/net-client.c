/*
 * net-client.c - the client of the network tests (counter.defs, served by net-server).
 *
 *     net-client [-t MS] [-j THREADS | -a INFLIGHT] [-S] count ADDRESS CALLS
 *         CALLS calls of count from THREADS threads sharing one port, or from one thread
 *         with INFLIGHT of them in flight through the asynchronous stub (the port's loop:
 *         on udp: the resends of requests lost on the way); checks that every call
 *         succeeded, that the values returned are CALLS distinct numbers, and that the
 *         server's count grew by exactly CALLS: every call ran, and ran once.
 *     net-client [-t MS] call ADDRESS ROUTINE [ARG]
 *         one call (count, total, null, bumped, nap MS, bump); prints "ok VALUE MS" or
 *         "ERRNAME MS DETAIL"; exits 0 on success, 1 on an error.
 *     net-client [-t MS] lat ADDRESS CALLS
 *         the median over 5 rounds of the mean time of CALLS null calls, and the smallest
 *         of the rounds, in microseconds.
 *     net-client [-t MS] portset FILE ADDRESS CALLS
 *         opens a port to every address of FILE and makes one call on each (so that the
 *         server has a receiving thread per connection), then measures as lat does on
 *         ADDRESS with all of them open; prints the count of ports, then as lat.
 *     net-client [-t MS] [-a INFLIGHT] pause ADDRESS [defer MS]
 *         a count call, then, on the same port, another after a line is read from stdin
 *         (the test kills the server, or puts up a firewall, in between); prints each
 *         result as call does. With -a the second step is INFLIGHT count calls at once
 *         through the asynchronous stub (the pollable port's sends and resends), printed
 *         as one result: "ok" and the count after them only if each succeeded and they
 *         ran once each, else the first error. With "defer MS" it is one call of defer,
 *         whose reply the server sends MS ms later from another thread.
 *     net-client [-t MS] bigsend ADDRESS BYTES
 *         sends a message of BYTES bytes straight through the transport's conn_send and
 *         prints the error (the datagram limit check).
 *     net-client [-t MS] connect ADDRESS
 *         the transport's conn_connect alone, bounded by the deadline; prints the result
 *         as call does (the connect timeout of tcp:).
 *     net-client [-t MS] peers ADDRESS N
 *         ten ports make a count call each; then N more ports, all kept open (each a new
 *         source address to a datagram server), do the same; then the first
 *         ten call again, after the server may have forgotten their hello. Every call must
 *         succeed, and the count must grow by exactly 20 + N.
 *     net-client freeport tcp|udp COUNT
 *         prints COUNT distinct free loopback ports (each bound to port 0 at once).
 * -t sets the deadline of each call (default 10000 ms); -S says that other clients count
 * on the same server at the same time, so count checks only that every call succeeded
 * (the script checks the total).
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <idl/idl.h>
#include <idl/idl_async.h>
#include <idl/idl_transport.h>

#include "counter.h"

#define NET_MAX_THREADS 16
#define NET_ROUNDS 5

static int net_timeout_ms = 10000;
static int net_shared;

static idl_port_t
net_open(const char *address)
{
	idl_port_t port = NULL;
	int err = idl_port_open(address, &port);

	if (err != 0) {
		fprintf(stderr, "net-client: %s: %s: %s\n", address, idl_errname(err),
			idl_errdetail());
		return NULL;
	}
	idl_port_set_timeout(port, net_timeout_ms);
	return port;
}

struct net_counter {
	idl_port_t port;
	pthread_t tid;
	unsigned calls;
	int base;
	unsigned char *seen; /* shared: how many calls got each value */
	unsigned span;
	unsigned failed;
	unsigned out_of_range;
	int64_t worst_ns;
	int first_err; /* the first call's error, or 0 */
};

static void *
net_count_thread(void *arg)
{
	struct net_counter *t = arg;

	for (unsigned i = 0; i < t->calls; i++) {
		int64_t t0 = idl_now_ns(), dt;
		int n = 0, err = counter_count(t->port, &n);

		dt = idl_now_ns() - t0;
		if (dt > t->worst_ns)
			t->worst_ns = dt;
		if (err != 0) {
			if (t->failed++ < 5)
				fprintf(stderr, "net-client: count: %s after %lld ms: %s\n",
					idl_errname(err), (long long)(dt / 1000000),
					idl_errdetail());
			continue;
		}
		if (n <= t->base || (unsigned)(n - t->base) > t->span) {
			t->out_of_range++;
			continue;
		}
		/* Each execution returns a new value; a value seen twice means that two calls
		 * got the reply of one execution, a value never seen that an execution's
		 * reply reached no call (it ran twice for one call). */
		__atomic_fetch_add(&t->seen[n - t->base - 1], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* The calls in flight of an asynchronous count: each slot's done function checks its value
 * as a thread of net_count_thread() does, then starts the slot's next call. */
struct net_aslot {
	struct net_counter *t;
	unsigned *started;
	int64_t t0;
};

static void net_acount_done(void *ctx, kern_return_t kr, int n);

static int
net_acount_start(struct net_aslot *s)
{
	int err;

	if (*s->started >= s->t->calls)
		return 0;
	s->t0 = idl_now_ns();
	if ((err = counter_count_async(s->t->port, net_acount_done, s, NULL)) == 0)
		(*s->started)++;
	else if (s->t->failed++ < 5)
		fprintf(stderr, "net-client: count_async: %s: %s\n", idl_errname(err),
			idl_errdetail());
	return err;
}

static void
net_acount_done(void *ctx, kern_return_t kr, int n)
{
	struct net_aslot *s = ctx;
	struct net_counter *t = s->t;
	int64_t dt = idl_now_ns() - s->t0;

	if (dt > t->worst_ns)
		t->worst_ns = dt;
	t->span--; /* here: the calls not completed yet */
	if (kr != 0 && t->first_err == 0)
		t->first_err = kr;
	if (kr != 0) {
		if (t->failed++ < 5)
			fprintf(stderr, "net-client: count: %s after %lld ms: %s\n",
				idl_errname(kr), (long long)(dt / 1000000), idl_errdetail());
	} else if (n <= t->base || (unsigned)(n - t->base) > t->calls) {
		t->out_of_range++;
	} else {
		t->seen[n - t->base - 1]++;
	}
	(void)net_acount_start(s);
}

/* t->calls calls with `inflight` of them in flight from this thread. */
static void
net_acount(struct net_counter *t, unsigned inflight)
{
	struct net_aslot *slots = calloc(inflight, sizeof *slots);
	unsigned started = 0;

	if (slots == NULL) {
		t->failed = t->calls;
		return;
	}
	t->span = t->calls;
	for (unsigned i = 0; i < inflight; i++) {
		slots[i] = (struct net_aslot){ t, &started, 0 };
		if (net_acount_start(&slots[i]) != 0)
			break;
	}
	while (t->span > t->calls - started) {
		int err = idl_port_wait(t->port, net_timeout_ms + 5000);

		if (err < 0) {
			fprintf(stderr, "net-client: idl_port_wait: %s: %s\n", idl_errname(err),
				idl_errdetail());
			break;
		}
	}
	t->failed += t->calls - started;
	free(slots);
}

static int
net_count(const char *address, unsigned calls, unsigned nthreads, unsigned inflight)
{
	struct net_counter th[NET_MAX_THREADS];
	idl_port_t port = net_open(address);
	unsigned failed = 0, bad = 0, dups = 0, missing = 0;
	int base = 0, after = 0, err;
	int64_t worst = 0, t0;
	unsigned char *seen;

	if (port == NULL)
		return 1;
	if ((err = counter_total(port, &base)) != 0) {
		fprintf(stderr, "net-client: total: %s: %s\n", idl_errname(err), idl_errdetail());
		idl_port_close(port);
		return 1;
	}
	if ((seen = calloc(calls + 1, 1)) == NULL) {
		idl_port_close(port);
		return 1;
	}
	t0 = idl_now_ns();
	if (inflight > 0) {
		memset(&th[0], 0, sizeof th[0]);
		th[0].port = port;
		th[0].calls = calls;
		th[0].base = base;
		th[0].seen = seen;
		net_acount(&th[0], inflight);
		failed = th[0].failed;
		bad = th[0].out_of_range;
		worst = th[0].worst_ns;
		nthreads = 0;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		memset(&th[i], 0, sizeof th[i]);
		th[i].port = port;
		th[i].calls = calls / nthreads + (i < calls % nthreads);
		th[i].base = base;
		th[i].seen = seen;
		th[i].span = calls;
		if (pthread_create(&th[i].tid, NULL, net_count_thread, &th[i]) != 0)
			return 1;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(th[i].tid, NULL);
		failed += th[i].failed;
		bad += th[i].out_of_range;
		if (th[i].worst_ns > worst)
			worst = th[i].worst_ns;
	}
	for (unsigned i = 0; i < calls; i++) {
		dups += seen[i] > 1;
		missing += seen[i] == 0;
	}
	free(seen);
	if ((err = counter_total(port, &after)) != 0) {
		fprintf(stderr, "net-client: total: %s: %s\n", idl_errname(err), idl_errdetail());
		idl_port_close(port);
		return 1;
	}
	if (net_shared) {
		printf("calls %u completed %u failed %u worst %lld ms\n", calls, calls - failed,
		       failed, (long long)(worst / 1000000));
		idl_port_close(port);
		return failed == 0 ? 0 : 1;
	}
	printf("calls %u completed %u failed %u executions %d duplicates %u out-of-range %u "
	       "missing %u worst %lld ms elapsed %lld ms\n",
	       calls, calls - failed, failed, after - base, dups, bad, missing,
	       (long long)(worst / 1000000), (long long)((idl_now_ns() - t0) / 1000000));
	idl_port_close(port);
	return failed == 0 && bad == 0 && dups == 0 && missing == 0 && after - base == (int)calls
		       ? 0
		       : 1;
}

static void
net_report(int err, int v, int64_t t0)
{
	if (err == 0)
		printf("ok %d %lld\n", v, (long long)((idl_now_ns() - t0) / 1000000));
	else
		printf("%s %lld %s\n", idl_errname(err), (long long)((idl_now_ns() - t0) / 1000000),
		       idl_errdetail());
	fflush(stdout);
}

/* `inflight` count calls at once on port, after the count was `base`: 0 and *v the count
 * after them when each succeeded and ran once, else the first error (or MIG_TYPE_ERROR for
 * values that say a call ran twice or not at all). */
static int
net_pause_async(idl_port_t port, unsigned inflight, int base, int *v)
{
	struct net_counter t;
	unsigned char *seen = calloc(inflight + 1, 1);
	int err = 0;

	if (seen == NULL)
		return IDL_ENOMEM;
	memset(&t, 0, sizeof t);
	t.port = port;
	t.calls = inflight;
	t.base = base;
	t.seen = seen;
	net_acount(&t, inflight);
	if (t.first_err != 0)
		err = t.first_err;
	else if (t.failed != 0)
		err = IDL_ETIMEDOUT; /* calls never started or never completed */
	for (unsigned i = 0; err == 0 && i < inflight; i++)
		if (t.out_of_range != 0 || seen[i] != 1)
			err = MIG_TYPE_ERROR;
	free(seen);
	*v = base + (int)inflight;
	return err;
}

static int
net_pause(const char *address, unsigned inflight, int defer_ms)
{
	idl_port_t port = net_open(address);
	char line[64];
	int64_t t0 = idl_now_ns();
	int v = 0, err;

	if (port == NULL)
		return 1;
	err = counter_count(port, &v);
	net_report(err, v, t0);
	if (err != 0 || fgets(line, sizeof line, stdin) == NULL)
		return 1;
	t0 = idl_now_ns();
	if (defer_ms >= 0)
		err = counter_defer(port, defer_ms, &v);
	else if (inflight > 0)
		err = net_pause_async(port, inflight, v, &v);
	else
		err = counter_count(port, &v);
	net_report(err, v, t0);
	idl_port_close(port);
	return err == 0 ? 0 : 1;
}

static int
net_bigsend(const char *address, size_t bytes)
{
	const struct idl_transport *tr;
	struct idl_xmsg m;
	const char *rest;
	void *conn, *data;
	int err;

	if ((tr = idl_transport_find(address, &rest)) == NULL ||
	    (conn = aligned_alloc(16, (tr->conn_size + 15) & ~(size_t)15)) == NULL ||
	    (data = calloc(1, bytes)) == NULL)
		return 1;
	memset(conn, 0, (tr->conn_size + 15) & ~(size_t)15);
	memset(&m, 0, sizeof m);
	m.data = data;
	m.len = bytes;
	err = tr->conn_connect(conn, rest, &(struct idl_deadline){ 0, net_timeout_ms });
	if (err == 0)
		err = tr->conn_send(conn, &m, &(struct idl_deadline){ 0, net_timeout_ms });
	printf("%s %s\n", idl_errname(err), idl_errdetail());
	tr->conn_close(conn);
	tr->conn_fini(conn);
	free(conn);
	free(data);
	return 0;
}

static int
net_connect(const char *address)
{
	const struct idl_transport *tr;
	const char *rest;
	int64_t t0 = idl_now_ns();
	size_t size;
	void *conn;
	int err;

	if ((tr = idl_transport_find(address, &rest)) == NULL)
		return 1;
	size = (tr->conn_size + 15) & ~(size_t)15;
	if ((conn = aligned_alloc(16, size)) == NULL)
		return 1;
	memset(conn, 0, size);
	err = tr->conn_connect(conn, rest, &(struct idl_deadline){ 0, net_timeout_ms });
	net_report(err, 0, t0);
	tr->conn_close(conn);
	tr->conn_fini(conn);
	free(conn);
	return err == 0 ? 0 : 1;
}

static int
net_peers(const char *address, unsigned n)
{
	idl_port_t first[10], *many = NULL, port;
	int before = 0, after = 0, v, err = 0;

	if ((port = net_open(address)) == NULL || (err = counter_total(port, &before)) != 0)
		goto fail;
	idl_port_close(port);
	for (unsigned i = 0; i < 10; i++)
		if ((first[i] = net_open(address)) == NULL || (err = counter_count(first[i], &v)))
			goto fail;
	/* All kept open, so that every one has its own source port. */
	if ((many = calloc(n ? n : 1, sizeof *many)) == NULL)
		goto fail;
	for (unsigned i = 0; i < n; i++)
		if ((many[i] = net_open(address)) == NULL || (err = counter_count(many[i], &v)))
			goto fail;
	for (unsigned i = 0; i < 10; i++) {
		if ((err = counter_count(first[i], &v)) != 0)
			goto fail;
		idl_port_close(first[i]);
	}
	for (unsigned i = 0; i < n; i++)
		idl_port_close(many[i]);
	free(many);
	if ((port = net_open(address)) == NULL || (err = counter_total(port, &after)) != 0)
		goto fail;
	idl_port_close(port);
	printf("peers %u calls %u executions %d\n", n + 10, n + 20, after - before);
	return after - before == (int)n + 20 ? 0 : 1;
fail:
	fprintf(stderr, "net-client: peers: %s: %s\n", idl_errname(err), idl_errdetail());
	return 1;
}

/* The lowest port the kernel picks for a socket bound to port 0 (ip_local_port_range). */
static unsigned
net_ephemeral_low(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	unsigned low = 32768, high;

	if (f != NULL) {
		if (fscanf(f, "%u %u", &low, &high) != 2)
			low = 32768;
		fclose(f);
	}
	return low;
}

/*
 * Prints `count` free ports of proto, below the kernel's ephemeral range: a test that kills
 * a server and starts it again on the same port must not find it taken meanwhile by a
 * client socket of a test running beside it, which the kernel would give a port of that
 * range. Each is tried by binding it, so one in use is skipped.
 */
static int
net_freeport(const char *proto, unsigned count)
{
	unsigned low = net_ephemeral_low(), base = 10000, found = 0;
	unsigned seed = (unsigned)getpid() ^ (unsigned)idl_now_ns();
	int *held = calloc(count ? count : 1, sizeof *held); /* bound till the end: no repeat */

	if (held == NULL)
		return 1;

	if (low <= base + 1000)
		base = 1024;
	for (unsigned tries = 0; found < count && tries < 10000; tries++) {
		struct sockaddr_in sa = { .sin_family = AF_INET };
		unsigned port;
		int fd;

		seed = seed * 1103515245u + 12345u;
		port = base + (seed >> 8) % (low - base);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_port = htons((uint16_t)port);
		fd = socket(AF_INET, strcmp(proto, "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM, 0);
		if (fd < 0) {
			perror("net-client: freeport");
			break;
		}
		if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
			printf("%u\n", port);
			held[found++] = fd;
		} else {
			close(fd);
		}
	}
	for (unsigned i = 0; i < found; i++)
		close(held[i]);
	free(held);
	return found == count ? 0 : 1;
}

static int
net_call(const char *address, const char *routine, const char *arg)
{
	idl_port_t port;
	int64_t t0 = idl_now_ns();
	int v = 0, err;

	/* Opening may fail already (tcp: connects); that is the call's error too. */
	if ((err = idl_port_open(address, &port)) == 0) {
		idl_port_set_timeout(port, net_timeout_ms);
		if (strcmp(routine, "count") == 0)
			err = counter_count(port, &v);
		else if (strcmp(routine, "total") == 0)
			err = counter_total(port, &v);
		else if (strcmp(routine, "bumped") == 0)
			err = counter_bumped(port, &v);
		else if (strcmp(routine, "null") == 0)
			err = counter_null(port);
		else if (strcmp(routine, "bump") == 0)
			err = counter_bump(port);
		else if (strcmp(routine, "nap") == 0)
			err = counter_nap(port, arg != NULL ? atoi(arg) : 0);
		else
			err = IDL_EINVAL;
		idl_port_close(port);
	}
	net_report(err, v, t0);
	return err == 0 ? 0 : 1;
}

static int
net_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median over NET_ROUNDS of the mean null-call time, in microseconds, and in *best the
 * smallest (the least disturbed by other work on the machine); < 0 on error. */
static double
net_latency(idl_port_t port, unsigned calls, double *best)
{
	double r[NET_ROUNDS];
	int err;

	for (unsigned i = 0; i < 200; i++)
		if ((err = counter_null(port)) != 0)
			goto fail;
	for (int k = 0; k < NET_ROUNDS; k++) {
		int64_t t0 = idl_now_ns();

		for (unsigned i = 0; i < calls; i++)
			if ((err = counter_null(port)) != 0)
				goto fail;
		r[k] = (double)(idl_now_ns() - t0) / 1000.0 / calls;
	}
	qsort(r, NET_ROUNDS, sizeof r[0], net_cmp);
	*best = r[0];
	return r[NET_ROUNDS / 2];
fail:
	fprintf(stderr, "net-client: null: %s: %s\n", idl_errname(err), idl_errdetail());
	return -1;
}

static int
net_lat(const char *address, unsigned calls)
{
	idl_port_t port = net_open(address);
	double us, best;

	if (port == NULL)
		return 1;
	us = net_latency(port, calls, &best);
	idl_port_close(port);
	if (us < 0)
		return 1;
	printf("%.2f %.2f\n", us, best);
	return 0;
}

static int
net_portset(const char *file, const char *address, unsigned calls)
{
	char line[512];
	idl_port_t *ports = NULL, port;
	size_t n = 0, cap = 0;
	FILE *f = fopen(file, "r");
	int rc = 1, err;
	double us, best;

	if (f == NULL) {
		perror(file);
		return 1;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0')
			continue;
		if (n == cap) {
			idl_port_t *np = realloc(ports, (cap = cap ? 2 * cap : 256) * sizeof *np);

			if (np == NULL)
				goto out;
			ports = np;
		}
		if ((ports[n] = net_open(line)) == NULL)
			goto out;
		n++;
		if ((err = counter_null(ports[n - 1])) != 0) {
			fprintf(stderr, "net-client: %s: null: %s: %s\n", line, idl_errname(err),
				idl_errdetail());
			goto out;
		}
	}
	if ((port = net_open(address)) == NULL)
		goto out;
	us = net_latency(port, calls, &best);
	idl_port_close(port);
	if (us >= 0) {
		printf("%zu %.2f %.2f\n", n, us, best);
		rc = 0;
	}
out:
	fclose(f);
	for (size_t i = 0; i < n; i++)
		idl_port_close(ports[i]);
	free(ports);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned threads = 1, inflight = 0;
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-S") == 0) {
			net_shared = 1;
			i++;
			continue;
		}
		if (i + 1 >= argc)
			goto usage;
		if (strcmp(argv[i], "-t") == 0)
			net_timeout_ms = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-j") == 0)
			threads = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-a") == 0)
			inflight = (unsigned)atoi(argv[i + 1]);
		else
			goto usage;
		i += 2;
	}
	if (net_timeout_ms <= 0 || threads < 1 || threads > NET_MAX_THREADS || inflight > 1024 ||
	    i >= argc)
		goto usage;
	if (strcmp(argv[i], "count") == 0 && argc - i == 3)
		return net_count(argv[i + 1], (unsigned)strtoul(argv[i + 2], NULL, 10), threads,
				 inflight);
	if (strcmp(argv[i], "call") == 0 && (argc - i == 3 || argc - i == 4))
		return net_call(argv[i + 1], argv[i + 2], argc - i == 4 ? argv[i + 3] : NULL);
	if (strcmp(argv[i], "lat") == 0 && argc - i == 3)
		return net_lat(argv[i + 1], (unsigned)strtoul(argv[i + 2], NULL, 10));
	if (strcmp(argv[i], "portset") == 0 && argc - i == 4)
		return net_portset(argv[i + 1], argv[i + 2],
				   (unsigned)strtoul(argv[i + 3], NULL, 10));
	if (strcmp(argv[i], "pause") == 0 && argc - i == 2)
		return net_pause(argv[i + 1], inflight, -1);
	if (strcmp(argv[i], "pause") == 0 && argc - i == 4 && strcmp(argv[i + 2], "defer") == 0)
		return net_pause(argv[i + 1], 0, atoi(argv[i + 3]));
	if (strcmp(argv[i], "bigsend") == 0 && argc - i == 3)
		return net_bigsend(argv[i + 1], strtoul(argv[i + 2], NULL, 10));
	if (strcmp(argv[i], "peers") == 0 && argc - i == 3)
		return net_peers(argv[i + 1], (unsigned)strtoul(argv[i + 2], NULL, 10));
	if (strcmp(argv[i], "connect") == 0 && argc - i == 2)
		return net_connect(argv[i + 1]);
	if (strcmp(argv[i], "freeport") == 0 && argc - i == 3)
		return net_freeport(argv[i + 1], (unsigned)strtoul(argv[i + 2], NULL, 10));
usage:
	fprintf(stderr, "usage: net-client [-t MS] [-j THREADS | -a INFLIGHT] [-S] count ADDRESS "
			"CALLS\n"
			"       net-client [-t MS] call ADDRESS ROUTINE [ARG]\n"
			"       net-client [-t MS] lat ADDRESS CALLS\n"
			"       net-client [-t MS] portset FILE ADDRESS CALLS\n"
			"       net-client [-t MS] [-a INFLIGHT] pause ADDRESS [defer MS]\n"
			"       net-client [-t MS] bigsend ADDRESS BYTES\n"
			"       net-client [-t MS] connect ADDRESS\n"
			"       net-client [-t MS] peers ADDRESS N\n"
			"       net-client freeport tcp|udp COUNT\n");
	return 2;
}
