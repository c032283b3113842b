/*
 * t_limits.c - every limit of idl_server_set_limit(): the refusal, the client's error, and
 * the log line that names the limit and its value. Also the CVE-2021-46828 case: a server
 * out of descriptors with 200 idle clients neither spins nor stops serving.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harden.h"

/* A raw client socket connected to a unix: or tcp: address; -1 on failure. */
static int
hd_raw_connect(const char *addr)
{
	int fd;

	if (strncmp(addr, "unix:", 5) == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(sa.sun_path, sizeof sa.sun_path, "%s", addr + 5);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			return fd;
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1));
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			return fd;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Waits up to ms for the peer to close fd: the milliseconds it took, or -1. */
static long
hd_wait_eof(int fd, int ms)
{
	int64_t t0 = hd_now_ms();

	while (hd_now_ms() - t0 < ms) {
		struct pollfd p = { fd, POLLIN, 0 };
		char buf[256];

		if (poll(&p, 1, 50) <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return (long)(hd_now_ms() - t0);
	}
	return -1;
}

static void
hd_header(idl_msg_header_t *h, uint32_t size, int32_t id, uint32_t seqno)
{
	memset(h, 0, sizeof *h);
	h->magic = IDL_MSG_MAGIC;
	h->order = IDL_ORDER_NATIVE;
	h->kind = IDL_KIND_REQUEST;
	h->size = size;
	h->id = id;
	h->seqno = seqno;
}

/* msg_size: over the limit is refused from the header; the connection stays on a message
 * transport, closes on a stream. A size field that lies is no message over the limit. */
static void
test_msg_size(void)
{
	const char *opts[] = { "-l", "msg_size=1024", NULL };
	struct hd_srv s;
	char addr[256], big[2048];
	idl_msg_header_t rep;
	int fd;

	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	fd = hd_raw_connect(addr);
	CU_ASSERT_FATAL(fd >= 0);
	memset(big, 0, sizeof big);
	hd_header((idl_msg_header_t *)big, sizeof big, 7100, 77);
	CU_ASSERT(send(fd, big, sizeof big, MSG_NOSIGNAL) == (ssize_t)sizeof big);
	CU_ASSERT(recv(fd, &rep, sizeof rep, 0) == (ssize_t)sizeof rep);
	CU_ASSERT_EQUAL(rep.retcode, IDL_EMSGSIZE);
	CU_ASSERT_EQUAL(rep.seqno, 77u);
	/* Still served: a request before any hello gets its own error. */
	hd_header((idl_msg_header_t *)big, 24, 7100, 78);
	CU_ASSERT(send(fd, big, 24, MSG_NOSIGNAL) == 24);
	CU_ASSERT(recv(fd, &rep, sizeof rep, 0) == (ssize_t)sizeof rep);
	CU_ASSERT_EQUAL(rep.retcode, IDL_EPROTO);
	CU_ASSERT_EQUAL(rep.seqno, 78u);
	/* A size field of 0xFFFFFFFF in 32 bytes with the descriptor flag is a lie, not a
	 * message over msg_size: refused with IDL_EPROTO, logged with what was wrong. */
	hd_header((idl_msg_header_t *)big, 0xFFFFFFFFu, 7100, 80);
	((idl_msg_header_t *)big)->flags = IDL_MSGF_DESC;
	CU_ASSERT(send(fd, big, 32, MSG_NOSIGNAL) == 32);
	CU_ASSERT(recv(fd, &rep, sizeof rep, 0) == (ssize_t)sizeof rep);
	CU_ASSERT_EQUAL(rep.retcode, IDL_EPROTO);
	CU_ASSERT_EQUAL(rep.seqno, 80u);
	close(fd);
	CU_ASSERT(hd_log_has(&s, "message of 2048 bytes refused (msg_size 1024)", 2000));
	CU_ASSERT(hd_log_has(
		&s, "message of 32 bytes refused: unix: a 4294967295-byte message in 32 bytes",
		2000));
	CU_ASSERT(!hd_log_has(&s, "message of 32 bytes refused (msg_size", 0));
	CU_ASSERT_EQUAL(hd_stop(&s), 0);

	/* tcp: a transport that can skip the refused frame keeps the connection and answers;
	 * a stream transport that cannot (IDL_TRF_STREAM) closes it. */
	if (hd_transport("tcp") == NULL)
		return;
	CU_ASSERT_FATAL(hd_address("tcp", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	fd = hd_raw_connect(addr);
	CU_ASSERT_FATAL(fd >= 0);
	{
		uint32_t prefix = htonl(sizeof big);
		uint32_t rprefix = 0;

		hd_header((idl_msg_header_t *)big, sizeof big, 7100, 79);
		CU_ASSERT(send(fd, &prefix, 4, MSG_NOSIGNAL) == 4);
		CU_ASSERT(send(fd, big, sizeof big, MSG_NOSIGNAL) == (ssize_t)sizeof big);
		if (hd_transport("tcp")->flags & IDL_TRF_STREAM) {
			CU_ASSERT(hd_wait_eof(fd, 3000) >= 0);
			CU_ASSERT(hd_log_has(&s, "connection closed (msg_size 1024)", 2000));
		} else {
			CU_ASSERT(recv(fd, &rprefix, 4, MSG_WAITALL) == 4);
			CU_ASSERT_EQUAL(ntohl(rprefix), sizeof rep);
			CU_ASSERT(recv(fd, &rep, sizeof rep, MSG_WAITALL) == (ssize_t)sizeof rep);
			CU_ASSERT_EQUAL(rep.retcode, IDL_EMSGSIZE);
			CU_ASSERT_EQUAL(rep.seqno, 79u);
			CU_ASSERT(hd_log_has(&s, "message of 2048 bytes refused (msg_size 1024)",
					     2000));
		}
	}
	close(fd);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

struct hd_held {
	idl_port_t port;
	int kr;
};

static void *
hd_held_main(void *arg)
{
	struct hd_held *h = arg;
	int y = 0;

	h->kr = every_deferred(h->port, -1, &y);
	return NULL;
}

/* inflight: two replies held, the third request of that client refused before it runs;
 * another client is not affected. */
static void
test_inflight(void)
{
	const char *opts[] = { "-c", "4", "-l", "inflight=2", NULL };
	struct hd_held h[2];
	pthread_t t[2];
	struct hd_srv s;
	char addr[256];
	idl_port_t p, q;
	int counted = -1, held = -1, last = 0, n = 0;

	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	p = hd_open(addr, 1500);
	CU_ASSERT_FATAL(p != NULL);
	HD_CHECK_KR(every_null(p), 0);
	for (int i = 0; i < 2; i++) {
		h[i].port = p;
		pthread_create(&t[i], NULL, hd_held_main, &h[i]);
	}
	q = hd_open(addr, 5000);
	CU_ASSERT_FATAL(q != NULL);
	/* Wait until the server holds both. */
	for (int i = 0; i < 100 && held != 2; i++) {
		HD_CHECK_KR(every_stats(q, &counted, &held, &last), 0);
		if (held != 2)
			hd_sleep_ms(10);
	}
	CU_ASSERT_EQUAL(held, 2);
	HD_CHECK_KR(every_count(p, &n), IDL_ELIMIT);
	HD_CHECK_KR(every_count(q, &n), 0);
	CU_ASSERT_EQUAL(n, 1); /* the refused one never ran */
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		HD_CHECK_KR(h[i].kr, IDL_ETIMEDOUT);
	}
	CU_ASSERT(hd_log_has(&s, "request refused (inflight 2)", 2000));
	idl_port_close(p);
	idl_port_close(q);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

struct hd_hold {
	idl_port_t port;
	int kr;
};

static void *
hd_hold_main(void *arg)
{
	struct hd_hold *h = arg;
	int y = 0;

	h->kr = every_deferred(h->port, -1, &y);
	return NULL;
}

/* connections: at the limit the oldest idle connection makes room (its client's next call
 * reconnects and goes through); when every connection has a request unanswered, a new one
 * is refused with a goodbye and its call fails with IDL_ELIMIT naming the limit. */
static void
limits_connections(const char *scheme)
{
	const char *opts[] = { "-c", "4", "-l", "connections=2", NULL };
	struct hd_srv s;
	struct hd_hold h[2];
	pthread_t t[2];
	char addr[256];
	idl_port_t p[3], r;
	int kr;

	CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	for (int i = 0; i < 2; i++) {
		p[i] = hd_open(addr, 1500);
		CU_ASSERT_FATAL(p[i] != NULL);
		HD_CHECK_KR(every_null(p[i]), 0);
	}
	p[2] = hd_open(addr, 1500);
	CU_ASSERT_FATAL(p[2] != NULL);
	HD_CHECK_KR(every_null(p[2]), 0); /* p[0], the oldest idle, made room */
	CU_ASSERT(hd_log_has(&s, "closed to make room (connections 2)", 2000));
	HD_CHECK_KR(every_null(p[0]), 0); /* evicted: reconnects (and evicts p[1]) */
	/* Both places busy: a request of each client waits for its reply. */
	h[0].port = p[0];
	h[1].port = p[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, hd_hold_main, &h[i]);
	hd_sleep_ms(300);
	/* Opened without connecting: over tls: the refusal comes before the handshake, so it is
	 * the connect's error (the first call's), where tcp: connects and the call fails. */
	r = NULL;
	CU_ASSERT_FATAL(idl_port_open_deferred(addr, &r) == 0);
	idl_port_set_timeout(r, 1500);
	kr = every_null(r);
	HD_CHECK_KR(kr, IDL_ELIMIT);
	CU_ASSERT(strstr(idl_errdetail(), "connection limit (connections 2)") != NULL);
	CU_ASSERT(hd_log_has(&s, "connection refused (connections 2)", 2000));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	idl_port_close(r);
	for (int i = 0; i < 3; i++)
		idl_port_close(p[i]);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

static void
test_connections(void)
{
	limits_connections("unix");
	if (hd_transport("tls") != NULL)
		limits_connections("tls");
}

/* On a transport whose connections keep a thread each (port:, shm:), an idle one is not evicted:
 * at the limit a new connection is refused with a goodbye through the connection its
 * rendezvous made, and its call fails with IDL_ELIMIT naming the limit; once a place is
 * free, a new connection is served. */
static void
limits_refused(const char *scheme)
{
	const char *opts[] = { "-c", "4", "-l", "connections=2", NULL };
	struct hd_srv s;
	char addr[256];
	idl_port_t p[3];

	CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	for (int i = 0; i < 2; i++) {
		p[i] = hd_open(addr, 1500);
		CU_ASSERT_FATAL(p[i] != NULL);
		HD_CHECK_KR(every_null(p[i]), 0);
	}
	p[2] = hd_open(addr, 1500);
	if (p[2] != NULL) {
		HD_CHECK_KR(every_null(p[2]), IDL_ELIMIT);
		CU_ASSERT(strstr(idl_errdetail(), "connection limit (connections 2)") != NULL);
		idl_port_close(p[2]);
	}
	CU_ASSERT(hd_log_has(&s, "connection refused (connections 2)", 2000));
	idl_port_close(p[0]);
	hd_sleep_ms(200); /* the server sees the close and frees the place */
	p[2] = hd_open(addr, 1500);
	CU_ASSERT_FATAL(p[2] != NULL);
	HD_CHECK_KR(every_null(p[2]), 0);
	idl_port_close(p[2]);
	idl_port_close(p[1]);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

static void
test_connections_port(void)
{
	limits_refused("port");
}

static void
test_connections_shm(void)
{
	limits_refused("shm");
}

/* handshake_ms: a silent connection and a slow-loris one (a byte every 300 ms) are closed
 * when the handshake time is up, on unix:, tcp: and tls: (whose TLS handshake is bounded by
 * it too: its slow client trickles a ClientHello). */
static void
test_handshake(void)
{
	const char *opts[] = { "-l", "handshake_ms=1000", NULL };
	const char *schemes[] = { "unix", "tcp", "tls" };
	static const char hello[] = "\x16\x03\x01\x01\x00\x01\x00\x00\xfc\x03";

	for (int k = 0; k < 3; k++) {
		struct hd_srv s;
		char addr[256];
		int quiet, slow;
		int64_t t0;
		long quiet_ms = -1, slow_ms = -1;

		if (hd_transport(schemes[k]) == NULL)
			continue;
		CU_ASSERT_FATAL(hd_address(schemes[k], addr, sizeof addr) == 0);
		CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
		t0 = hd_now_ms();
		quiet = hd_raw_connect(addr);
		slow = hd_raw_connect(addr);
		CU_ASSERT_FATAL(quiet >= 0 && slow >= 0);
		/* A byte at a time of a hello-sized header, never complete in time. */
		for (int i = 0; i < 10 && (quiet_ms < 0 || slow_ms < 0); i++) {
			char b = k == 2 ? hello[i] : (char)IDL_MSG_MAGIC;

			if (slow_ms < 0 && send(slow, &b, 1, MSG_NOSIGNAL) != 1)
				slow_ms = (long)(hd_now_ms() - t0);
			if (slow_ms < 0 && hd_wait_eof(slow, 0) >= 0)
				slow_ms = (long)(hd_now_ms() - t0);
			if (quiet_ms < 0 && hd_wait_eof(quiet, 300) >= 0)
				quiet_ms = (long)(hd_now_ms() - t0);
			else if (quiet_ms >= 0)
				hd_sleep_ms(300);
		}
		if (slow_ms < 0 && hd_wait_eof(slow, 1000) >= 0)
			slow_ms = (long)(hd_now_ms() - t0);
		fprintf(stderr,
			"harden: %s: silent client dropped after %ld ms, slow one after "
			"%ld ms (handshake_ms 1000)\n",
			schemes[k], quiet_ms, slow_ms);
		CU_ASSERT(quiet_ms >= 900 && quiet_ms <= 2500);
		CU_ASSERT(slow_ms >= 900 && slow_ms <= 2500);
		close(quiet);
		close(slow);
		CU_ASSERT(hd_log_has(&s, "no hello in time, connection closed (handshake_ms 1000)",
				     1000));
		CU_ASSERT_EQUAL(hd_stop(&s), 0);
	}
}

/* idle_ms: a connection silent for longer is closed with a goodbye; the client's next call
 * reconnects and goes through (on tls:, the goodbye inside the session). */
static void
limits_idle(const char *scheme)
{
	const char *opts[] = { "-l", "idle_ms=500", NULL };
	struct hd_srv s;
	char addr[256];
	idl_port_t p;

	CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	HD_CHECK_KR(every_null(p), 0);
	hd_sleep_ms(300);
	HD_CHECK_KR(every_null(p), 0); /* within the idle time: kept */
	hd_sleep_ms(1000);
	HD_CHECK_KR(every_null(p), 0);
	HD_CHECK_KR(every_null(p), 0);
	CU_ASSERT(hd_log_has(&s, "idle, connection closed (idle_ms 500)", 1000));
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

static void
test_idle(void)
{
	limits_idle("unix");
	if (hd_transport("tls") != NULL)
		limits_idle("tls");
}

/* fds: ports are file descriptors on unix:; a message with more than the limit is
 * refused before the routine runs, and its ports closed. */
static void
test_fds(void)
{
	const char *opts[] = { "-l", "fds=2", NULL };
	const struct idl_transport *tr = hd_transport("unix");
	struct hd_srv s;
	char addr[256];
	idl_port_t p, ports[3];
	int n = -1, base;

	if (!(tr->flags & IDL_TRF_DESC) || !(tr->flags & IDL_TRF_FDPASS)) {
		fprintf(stderr, "harden: fds: unix: carries no ports yet: not run\n");
		return;
	}
	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	HD_CHECK_KR(every_null(p), 0);
	for (int i = 0; i < 3; i++)
		ports[i] = hd_open(addr, 3000);
	hd_sleep_ms(100);
	base = hd_fd_count(s.pid);
	HD_CHECK_KR(every_port_array(p, ports, 2, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	HD_CHECK_KR(every_port_array(p, ports, 3, &n), MIG_BAD_ARGUMENTS);
	CU_ASSERT(hd_log_has(&s, "message with 3 ports refused (fds 2)", 2000));
	/* The refused message's ports were closed: the server holds no more than before. */
	hd_sleep_ms(200);
	CU_ASSERT(hd_fd_count(s.pid) <= base);
	for (int i = 0; i < 3; i++)
		idl_port_close(ports[i]);
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

/*
 * libtirpc's CVE-2021-46828: under `ulimit -n 64`, 200 clients connect and stay silent.
 * The server's connection limit follows its descriptor limit, so the oldest silent ones
 * make room for the newest: it must not spin on the listening socket (its CPU time stays
 * small) and must serve a new client at once.
 */
static void
test_emfile(void)
{
	const char *opts[] = { "-l", "handshake_ms=1000", NULL };
	enum {
		NIDLE = 200
	};
	int idle[NIDLE], nidle = 0, y = 0;
	struct hd_srv s;
	char addr[256];
	long cpu0, cpu1;
	int64_t t0, elapsed;
	idl_port_t p;
	int kr;

	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 64) == 0);
	for (int i = 0; i < NIDLE; i++)
		if ((idle[nidle] = hd_raw_connect(addr)) >= 0)
			nidle++;
	CU_ASSERT_EQUAL(nidle, NIDLE);
	/* Not spinning while they wait: well under a quarter of one CPU over a second. */
	hd_sleep_ms(200);
	cpu0 = hd_cpu_ms(s.pid);
	hd_sleep_ms(1000);
	cpu1 = hd_cpu_ms(s.pid);
	CU_ASSERT(cpu0 >= 0 && (cpu1 - cpu0) * 4 < 1000);
	/* The new client evicts the oldest silent one. */
	cpu0 = hd_cpu_ms(s.pid);
	t0 = hd_now_ms();
	p = hd_open(addr, 30000);
	CU_ASSERT_FATAL(p != NULL);
	kr = every_deferred(p, 0, &y);
	HD_CHECK_KR(kr, 0);
	elapsed = hd_now_ms() - t0;
	cpu1 = hd_cpu_ms(s.pid);
	fprintf(stderr,
		"harden: emfile: %d idle clients under ulimit -n 64: a new client "
		"served after %lld ms; server CPU %ld ms meanwhile\n",
		nidle, (long long)elapsed, cpu1 - cpu0);
	CU_ASSERT(elapsed < 20000);
	CU_ASSERT(hd_log_has(&s, "closed to make room", 100));
	idl_port_close(p);
	for (int i = 0; i < nidle; i++)
		close(idle[i]);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

/* The API's own checks. */
static void
test_api(void)
{
	idl_server_t *srv;

	CU_ASSERT_FATAL(idl_server_create(&srv) == 0);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_INFLIGHT), 64u);
	CU_ASSERT(idl_server_limit(srv, IDL_LIMIT_CONNECTIONS) >= 16u);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_PER_ADDRESS), 256u);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_NET_IDLE_MS), 300000u);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_FDS), 16u);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_HANDSHAKE_MS), 30000u);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_IDLE_MS), 0u);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_MSG_SIZE), 8168u);
	CU_ASSERT_EQUAL(idl_server_add_subsystem(srv, &every_subsystem, NULL), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_server_set_limit(srv, IDL_LIMIT_MSG_SIZE, 8), IDL_EINVAL);
	CU_ASSERT(strstr(idl_errdetail(), "msg_size 8") != NULL);
	CU_ASSERT_EQUAL(idl_server_set_limit(srv, IDL_LIMIT_INFLIGHT, 0), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_server_set_limit(srv, (enum idl_limit)99, 1), IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_server_set_limit(srv, IDL_LIMIT_IDLE_MS, 250), 0);
	CU_ASSERT_EQUAL(idl_server_limit(srv, IDL_LIMIT_IDLE_MS), 250u);
	CU_ASSERT_EQUAL(idl_server_limit(srv, (enum idl_limit)99), UINT64_MAX);
	CU_ASSERT_STRING_EQUAL(idl_limit_name(IDL_LIMIT_HANDSHAKE_MS), "handshake_ms");
	CU_ASSERT_STRING_EQUAL(idl_limit_name((enum idl_limit) - 1), "?");
	idl_server_destroy(srv);
}

CU_TestInfo hd_limit_tests[] = {
	{ "api", test_api },
	{ "msg_size", test_msg_size },
	{ "inflight", test_inflight },
	{ "connections", test_connections },
	{ "connections on port", test_connections_port },
	{ "connections on shm", test_connections_shm },
	{ "handshake", test_handshake },
	{ "idle", test_idle },
	{ "fds", test_fds },
	{ "emfile", test_emfile },
	CU_TEST_INFO_NULL,
};
