/*
 * idlbench_oncrpc.c - the peer: ONC RPC built by rpcgen (default style) from
 * tools/idlbench/oncrpc/bench.x and carried by libtirpc, over TCP, UDP and AF_UNIX (stream), with
 * the same routines as bench.defs' null, add and biginout. The server binds its own socket
 * and registers with protocol 0, and the client is given the server's address: rpcbind is
 * never asked, as perf-notes measured it. Also rpcgen's XDR of a whole biginout call for
 * --marshal.
 *
 * A side of a cell, layer 3: it knows the base and the cells; it must not know runs or
 * reports.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ib_cell.h"
#include "oncrpc/bench.h"

/* rpcgen -m writes the dispatcher without a prototype in the header. */
void benchprog_1(struct svc_req *rqstp, SVCXPRT *transp);

/* The server routines, as bench_impl.c's: nothing, a + b, and the bytes back. */
void *
bench_null_1_svc(void *arg, struct svc_req *rq)
{
	static char dummy;

	(void)arg;
	(void)rq;
	return &dummy;
}

int *
bench_add_1_svc(add_args *arg, struct svc_req *rq)
{
	static int sum;

	(void)rq;
	sum = (int)((unsigned)arg->a + (unsigned)arg->b);
	return &sum;
}

char *
bench_biginout_1_svc(char *arg, struct svc_req *rq)
{
	static big_t out;

	(void)rq;
	memcpy(out, arg, sizeof out);
	return out;
}

int
ib_peer_available(void)
{
	return 1;
}

static int
ib_peer_inet(const char *rest, struct sockaddr_in *sa)
{
	const char *colon = strrchr(rest, ':');
	char host[64];

	if (colon == NULL || (size_t)(colon - rest) >= sizeof host)
		return -1;
	memcpy(host, rest, (size_t)(colon - rest));
	host[colon - rest] = '\0';
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static int
ib_peer_unix(const char *rest, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(rest) >= sizeof sa->sun_path)
		return -1;
	memcpy(sa->sun_path, rest, strlen(rest) + 1);
	return 0;
}

/* A socket of the cell's kind, bound to its address (and listening, for streams). */
static int
ib_peer_socket(const char *addr)
{
	const char *rest = strchr(addr, ':') + 1;
	int stream = strncmp(addr, "udp:", 4) != 0, fd, one = 1;

	if (strncmp(addr, "unix:", 5) == 0) {
		struct sockaddr_un su;

		if (ib_peer_unix(rest, &su) != 0)
			return -1;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || fchmod(fd, 0600) != 0 ||
		    bind(fd, (struct sockaddr *)&su, sizeof su) != 0)
			return -1;
	} else {
		struct sockaddr_in si;

		if (ib_peer_inet(rest, &si) != 0)
			return -1;
		fd = socket(AF_INET, (stream ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, (struct sockaddr *)&si, sizeof si) != 0)
			return -1;
	}
	if (stream && listen(fd, 16) != 0)
		return -1;
	return fd;
}

static void
ib_peer_exit(int sig)
{
	(void)sig;
	_exit(0);
}

int
ib_peer_serve(const struct ib_cell *cell, int ready_fd)
{
	int fd = ib_peer_socket(cell->addr);
	SVCXPRT *x;
	char why[200];

	if (fd < 0) {
		snprintf(why, sizeof why, "oncrpc %s: %s", cell->addr, strerror(errno));
		ib_ready(ready_fd, why);
		return 1;
	}
	if (strncmp(cell->addr, "udp:", 4) == 0)
		x = svcudp_create(fd);
	else
		x = svc_vc_create(fd, 0, 0);
	/* Protocol 0: register the dispatcher without telling rpcbind. */
	if (x == NULL || !svc_register(x, BENCHPROG, BENCHVERS, benchprog_1, 0)) {
		ib_ready(ready_fd, "oncrpc: cannot create the service");
		return 1;
	}
	signal(SIGTERM, ib_peer_exit);
	ib_ready(ready_fd, NULL);
	svc_run();
	return 0;
}

static CLIENT *
ib_peer_connect(const char *addr)
{
	const char *rest = strchr(addr, ':') + 1;
	int sock = RPC_ANYSOCK;

	if (strncmp(addr, "unix:", 5) == 0) {
		struct sockaddr_un su;

		return ib_peer_unix(rest, &su) == 0
			       ? clntunix_create(&su, BENCHPROG, BENCHVERS, &sock, 0, 0)
			       : NULL;
	} else {
		struct sockaddr_in si;
		/* The retry interval of UDP calls: they are not lost on loopback. */
		struct timeval retry = { 1, 0 };

		if (ib_peer_inet(rest, &si) != 0)
			return NULL;
		if (strncmp(addr, "udp:", 4) == 0)
			return clntudp_create(&si, BENCHPROG, BENCHVERS, retry, &sock);
		return clnttcp_create(&si, BENCHPROG, BENCHVERS, &sock, 0, 0);
	}
}

/* One call of the row; 0 when it returned the right result. */
static int
ib_peer_call(const char *row, CLIENT *cl, unsigned i, char *data)
{
	if (strcmp(row, "null") == 0)
		return bench_null_1(NULL, cl) != NULL ? 0 : -1;
	if (strcmp(row, "add") == 0) {
		add_args a = { (int)i, 1 };
		int *sum = bench_add_1(&a, cl);

		return sum != NULL && *sum == (int)(i + 1u) ? 0 : -1;
	}
	if (strcmp(row, "biginout") == 0) {
		char *r = bench_biginout_1(data, cl);

		return r != NULL && r[0] == data[0] ? 0 : -1;
	}
	return -1;
}

int
ib_peer_client(const struct ib_cell *cell, struct ib_reps *out)
{
	const char *row = cell->row->name;
	CLIENT *cl = ib_peer_connect(cell->addr);
	big_t data;

	if (cl == NULL) {
		snprintf(out->why, sizeof out->why, "oncrpc: %.80s",
			 clnt_spcreateerror(cell->addr));
		return -1;
	}
	memset(data, 'x', sizeof data);
	ib_cpu_mark(out);
	for (unsigned i = 0; i < cell->warmup; i++)
		if (ib_peer_call(row, cl, i, data) != 0)
			goto fail;
	for (unsigned k = 0; k < cell->reps; k++) {
		double t0 = ib_now(), t1;

		for (unsigned i = 0; i < cell->iterations; i++)
			if (ib_peer_call(row, cl, i, data) != 0)
				goto fail;
		t1 = ib_now();
		out->v[out->n++] = (t1 - t0) * 1e6 / cell->iterations;
	}
	ib_cpu_mark(out);
	clnt_destroy(cl);
	return 0;
fail:
	snprintf(out->why, sizeof out->why, "oncrpc %s: %.70s", row, clnt_sperror(cl, ""));
	clnt_destroy(cl);
	return -1;
}

/*
 * rpcgen's XDR of a whole biginout call: the client encodes the argument, the server
 * decodes it and encodes its result (the argument itself: no copy, no routine), the client
 * decodes the result. The RPC call and reply headers are left out, which favours XDR: the
 * idlkit figure includes its header.
 */
double
ib_xdr_biginout_ns(unsigned iterations)
{
	static big_t cl_arg, sv_arg, cl_res;
	static char wire[512];
	double v[9];
	int ok = 1;

	memset(cl_arg, 'x', sizeof cl_arg);
	for (unsigned k = 0; k < 10; k++) {
		unsigned n = k == 0 ? iterations / 4 + 1 : iterations;
		double t0 = ib_now();

		for (unsigned i = 0; i < n; i++) {
			XDR x;
			unsigned len;

			xdrmem_create(&x, wire, sizeof wire, XDR_ENCODE);
			ok &= xdr_big_t(&x, cl_arg);
			len = xdr_getpos(&x);
			xdrmem_create(&x, wire, len, XDR_DECODE);
			ok &= xdr_big_t(&x, sv_arg);
			xdrmem_create(&x, wire, sizeof wire, XDR_ENCODE);
			ok &= xdr_big_t(&x, sv_arg);
			len = xdr_getpos(&x);
			xdrmem_create(&x, wire, len, XDR_DECODE);
			ok &= xdr_big_t(&x, cl_res);
		}
		if (k > 0)
			v[k - 1] = (ib_now() - t0) * 1e9 / n;
	}
	if (!ok || memcmp(cl_res, cl_arg, sizeof cl_res) != 0)
		return -1;
	return ib_median(v, 9);
}
