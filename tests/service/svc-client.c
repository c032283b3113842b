/*
 * svc-client.c - the client side of tests/service/service.sh: calls bench.add on a server
 * that a service manager starts, or drains.
 *
 *     svc-client call ADDRESS [N]       N synchronous calls (default 1), each sum checked;
 *                                       the first one may start the server (socket
 *                                       activation), so every call may take up to 20 s
 *     svc-client inflight ADDRESS N     N calls through the asynchronous stub, 64 in flight;
 *                                       prints "started" on stdout once the last one is sent,
 *                                       then waits for every one to end
 *     svc-client port tcp|udp           prints a loopback port that was free a moment ago
 *     svc-client poke PATH              connects a SOCK_STREAM socket to PATH, which a
 *                                       manager holds, and waits for the end of it (10 s)
 *
 * Both print "ok=O goodbye=G other=X wrong=W" and exit 0 only when every call succeeded
 * with the right sum. A call that failed because the server said goodbye (STOPPING, whose
 * text is "the server stops") counts as a goodbye, any other failure as other; a call that never
 * ended would hold the client until the test's timeout.
 */
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_async.h>

#include "bench_types.h"
#include "bench.h"

#define SVC_TIMEOUT_MS 20000
#define SVC_INFLIGHT 64

struct tally {
	long ok, goodbye, other, wrong;
};

/* Counts one call's end; a failure's detail goes to stderr once per kind. */
static void
tally_end(struct tally *t, int kr, int sum, int want)
{
	if (kr == KERN_SUCCESS) {
		t->ok += sum == want;
		t->wrong += sum != want;
	} else if (strstr(idl_errdetail(), "the server stops") != NULL ||
		   strstr(idl_errdetail(), "goodbye reason 5") != NULL) {
		if (t->goodbye++ == 0)
			fprintf(stderr, "svc-client: goodbye: %s\n", idl_errdetail());
	} else if (t->other++ == 0) {
		fprintf(stderr, "svc-client: %s: %s\n", idl_errname(kr), idl_errdetail());
	}
}

static int
tally_print(const struct tally *t, long n)
{
	printf("ok=%ld goodbye=%ld other=%ld wrong=%ld\n", t->ok, t->goodbye, t->other, t->wrong);
	return t->ok == n ? 0 : 1;
}

static int
svc_call(idl_port_t port, long n)
{
	struct tally t = { 0 };

	for (long i = 0; i < n; i++) {
		int sum = 0, kr = bench_add(port, (int)i, 1000, &sum);

		tally_end(&t, kr, sum, (int)i + 1000);
	}
	return tally_print(&t, n);
}

struct flight {
	idl_port_t port;
	struct tally t;
	long n, started, ended;
};

struct slot {
	struct flight *f;
	int a;
};

static void add_done(void *ctx, kern_return_t kr, int sum);

static void
slot_start(struct slot *s)
{
	struct flight *f = s->f;
	int err;

	if (f->started == f->n)
		return;
	s->a = (int)f->started;
	if ((err = bench_add_async(f->port, s->a, 7, add_done, s, NULL)) != 0) {
		fprintf(stderr, "svc-client: bench_add_async: %s\n", idl_errdetail());
		exit(1);
	}
	if (++f->started == f->n) {
		printf("started\n");
		fflush(stdout);
	}
}

static void
add_done(void *ctx, kern_return_t kr, int sum)
{
	struct slot *s = ctx;

	tally_end(&s->f->t, kr, sum, s->a + 7);
	s->f->ended++;
	/* Once the server said goodbye no call is started: it would go to a new connection. */
	if (kr == KERN_SUCCESS)
		slot_start(s);
}

static int
svc_inflight(idl_port_t port, long n)
{
	struct flight f = { .port = port, .n = n };
	struct slot slots[SVC_INFLIGHT];
	struct pollfd p = { .fd = idl_port_fd(port), .events = POLLIN };

	for (int i = 0; i < SVC_INFLIGHT; i++) {
		slots[i].f = &f;
		slot_start(&slots[i]);
	}
	while (f.ended < f.started)
		if (poll(&p, 1, SVC_TIMEOUT_MS) < 0 || idl_port_dispatch(port, 0) < 0)
			break;
	return tally_print(&f.t, n);
}

/* A port bound and let go, as the conformance suite finds one. */
static int
svc_free_port(const char *kind)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, strcmp(kind, "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		perror("svc-client: port");
		return 1;
	}
	printf("%u\n", ntohs(sa.sin_port));
	close(fd);
	return 0;
}

/* What starts a server on a stream socket no idlkit client can connect to. */
static int
svc_poke(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 10, 0 };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	char c;

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		perror("svc-client: poke");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	(void)read(fd, &c, 1);
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	long n = argc > 3 ? atol(argv[3]) : 1;
	idl_port_t port;
	int err, rc;

	if (argc == 3 && strcmp(argv[1], "port") == 0)
		return svc_free_port(argv[2]);
	if (argc == 3 && strcmp(argv[1], "poke") == 0)
		return svc_poke(argv[2]);
	if (argc < 3 || n <= 0 ||
	    (strcmp(argv[1], "call") != 0 && strcmp(argv[1], "inflight") != 0)) {
		fprintf(stderr, "usage: svc-client call|inflight ADDRESS [N]\n");
		return 2;
	}
	if ((err = idl_port_open_deferred(argv[2], &port)) != 0 ||
	    (err = idl_port_set_timeout(port, SVC_TIMEOUT_MS)) != 0) {
		fprintf(stderr, "svc-client: %s: %s\n", argv[2], idl_errdetail());
		return 1;
	}
	rc = strcmp(argv[1], "call") == 0 ? svc_call(port, n) : svc_inflight(port, n);
	idl_port_close(port);
	return rc;
}
