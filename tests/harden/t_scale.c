/*
 * t_scale.c - many clients on one server (docs/runtime.md, "The event core" and "Limits"):
 * idle clients cost no thread, slow and never-reading tcp: clients (of small replies and of
 * large out-of-line ones) starve nobody, the per-address limit and the idle timeout of tcp:
 * answer with goodbyes, and the embeddable server serves from the caller's thread alone.
 *
 * The counts are small for make check; make check-long sets HD_SCALE_UNIX and HD_SCALE_TCP
 * (10000 and 3000) and the tests raise their descriptor limit to fit.
 */
#include <config.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <idl/idl_server.h>

#include "everyServer.h"
#include "harden.h"

/* A count from the environment, or the default. */
static int
sc_count(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v != NULL && atoi(v) > 0 ? atoi(v) : dflt;
}

/* Raises the descriptor limit to fit n more descriptors; 0 or -1. */
static int
sc_nofile(int n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	if (rl.rlim_cur >= (rlim_t)n + 64)
		return 0;
	rl.rlim_cur = (rlim_t)n + 64 <= rl.rlim_max ? (rlim_t)n + 64 : rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= (rlim_t)n + 64 ? 0 : -1;
}

/* A field of /proc/PID/status ("Threads", "VmRSS" in kB); -1 if unknown. */
static long
sc_status(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t fl = strlen(field);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, field, fl) == 0 && line[fl] == ':')
			v = strtol(line + fl + 1, NULL, 10);
	fclose(f);
	return v;
}

/* A tcp socket from `from` (an IPv4 address of the loopback) to addr "tcp:HOST:PORT". */
static int
sc_tcp_from(const char *from, const char *addr)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, from, &src.sin_addr);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1));
	if (fd >= 0 && bind(fd, (struct sockaddr *)&src, sizeof src) == 0 &&
	    connect(fd, (struct sockaddr *)&dst, sizeof dst) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Reads a goodbye from a tcp socket within ms: its reason, 0 for none (closed without),
 * -1 for nothing at all in time. */
static int
sc_tcp_goodbye(int fd, int ms)
{
	unsigned char buf[256];
	size_t got = 0;
	int64_t t0 = hd_now_ms();

	while (hd_now_ms() - t0 < ms) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recv(fd, buf + got, sizeof buf - got, MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			break;
		if (got >= 4 + IDL_MSG_HEADER_SIZE + 8) {
			uint32_t reason;

			memcpy(&reason, buf + 4 + IDL_MSG_HEADER_SIZE, 4);
			return buf[4 + 2] == IDL_KIND_GOODBYE ? (int)reason : 0;
		}
	}
	return got == 0 && hd_now_ms() - t0 >= ms ? -1 : 0;
}

/* Microseconds per null call on p: the median of five runs of k calls. A measurement for
 * docs/benchmarks.md, printed, never asserted: the machine's load decides it. */
static double
sc_us_per_call(idl_port_t p, int k)
{
	double us[5], t;

	for (int r = 0; r < 5; r++) {
		int64_t t0 = idl_now_ns();

		for (int i = 0; i < k; i++)
			if (every_null(p) != 0)
				return -1;
		us[r] = (double)(idl_now_ns() - t0) / 1000.0 / k;
		for (int j = r; j > 0 && us[j] < us[j - 1]; j--) {
			t = us[j];
			us[j] = us[j - 1];
			us[j - 1] = t;
		}
	}
	return us[2];
}

/* Idle unix: clients past their hello hold no thread: the server's threads stay within
 * its pool, and a new client is answered at once. */
static void
test_idle_unix(void)
{
	int n = sc_count("HD_SCALE_UNIX", 300), opened = 0;
	idl_port_t *ps = calloc((size_t)n, sizeof *ps), p;
	struct hd_srv s;
	char addr[256];
	long threads, rss;
	double alone, loaded;
	int64_t t0, answered;

	CU_ASSERT_FATAL(ps != NULL);
	CU_ASSERT_FATAL(sc_nofile(n + 16) == 0);
	CU_ASSERT_FATAL(hd_address("unix", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, NULL, 0) == 0);
	p = hd_open(addr, 5000);
	CU_ASSERT_FATAL(p != NULL);
	alone = sc_us_per_call(p, 2000);
	idl_port_close(p);
	for (int i = 0; i < n; i++) {
		if ((ps[i] = hd_open(addr, 10000)) == NULL)
			break;
		if (every_null(ps[i]) != 0) {
			idl_port_close(ps[i]);
			break;
		}
		opened++;
	}
	CU_ASSERT_EQUAL(opened, n);
	hd_sleep_ms(200); /* busy sources give their threads back */
	threads = sc_status(s.pid, "Threads");
	rss = sc_status(s.pid, "VmRSS");
	t0 = hd_now_ms();
	p = hd_open(addr, 5000);
	CU_ASSERT_FATAL(p != NULL);
	HD_CHECK_KR(every_null(p), 0);
	answered = hd_now_ms() - t0;
	loaded = sc_us_per_call(p, 2000);
	fprintf(stderr,
		"harden: scale: %d idle unix: clients: server threads %ld, resident %ld kB; "
		"a new client answered in %lld ms; a null call %.1f us (%.1f us with no other "
		"client)\n",
		opened, threads, rss, (long long)answered, loaded, alone);
	CU_ASSERT(threads > 0 && threads <= 40);
	CU_ASSERT(answered < 2000);
	for (int i = 0; i < opened; i++)
		idl_port_close(ps[i]);
	hd_sleep_ms(200);
	fprintf(stderr, "harden: scale: a null call %.1f us once the idle clients left\n",
		sc_us_per_call(p, 2000));
	idl_port_close(p);
	free(ps);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

/* tcp: clients that send half a frame, and clients that send requests and never read the
 * replies, hold no thread and starve nobody: another client's calls go through. */
static void
test_slow_tcp(void)
{
	enum {
		NHALF = 40,
		NDEAF = 4
	};
	int half[NHALF], deaf[NDEAF];
	struct hd_srv s;
	char addr[256];
	idl_port_t p;
	int64_t t0;

	CU_ASSERT_FATAL(hd_address("tcp", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, NULL, 0) == 0);
	for (int i = 0; i < NHALF; i++) {
		unsigned char frame[4 + 12] = { 0, 0, 0x10, 0 }; /* 4096 bytes announced */

		memset(frame + 4, 0x49, 12);
		half[i] = sc_tcp_from("127.0.0.1", addr);
		CU_ASSERT(half[i] >= 0 && send(half[i], frame, sizeof frame, 0) == sizeof frame);
	}
	for (int i = 0; i < NDEAF; i++) {
		/* Well-framed requests before any hello: each earns an error reply, which this
		 * client never reads. */
		idl_msg_header_t h = { .magic = IDL_MSG_MAGIC,
				       .order = IDL_ORDER_NATIVE,
				       .kind = IDL_KIND_REQUEST,
				       .size = IDL_MSG_HEADER_SIZE,
				       .id = 4242 };
		unsigned char frame[4 + IDL_MSG_HEADER_SIZE];
		uint32_t len = htonl(IDL_MSG_HEADER_SIZE);

		memcpy(frame, &len, 4);
		memcpy(frame + 4, &h, sizeof h);
		deaf[i] = sc_tcp_from("127.0.0.1", addr);
		CU_ASSERT(deaf[i] >= 0);
		for (int k = 0; k < 20000; k++)
			if (send(deaf[i], frame, sizeof frame, MSG_DONTWAIT) != sizeof frame)
				break;
	}
	hd_sleep_ms(300);
	t0 = hd_now_ms();
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	for (int i = 0; i < 100; i++)
		HD_CHECK_KR(every_null(p), 0);
	fprintf(stderr,
		"harden: scale: %d half-frame and %d never-reading tcp: clients; 100 calls of "
		"another in %lld ms; server threads %ld\n",
		NHALF, NDEAF, (long long)(hd_now_ms() - t0), sc_status(s.pid, "Threads"));
	CU_ASSERT(hd_now_ms() - t0 < 3000);
	CU_ASSERT(sc_status(s.pid, "Threads") <= 40);
	idl_port_close(p);
	for (int i = 0; i < NHALF; i++)
		close(half[i]);
	for (int i = 0; i < NDEAF; i++)
		close(deaf[i]);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

/* Reads exactly n bytes of fd within 3 s: 0, or -1. */
static int
sc_read_all(int fd, void *buf, size_t n)
{
	struct timeval tv = { 3, 0 };
	size_t got = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	while (got < n) {
		ssize_t k = recv(fd, (char *)buf + got, n - got, 0);

		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

/* Sends one well-framed request (before any hello, so its answer is an error reply) with
 * sequence number seq, in two writes `pause_ms` apart, cut `cut` bytes in; then reads the
 * answer: its sequence number, or -1. */
static int64_t
sc_split_call(int fd, uint32_t seq, size_t cut, int pause_ms)
{
	idl_msg_header_t h = { .magic = IDL_MSG_MAGIC,
			       .order = IDL_ORDER_NATIVE,
			       .kind = IDL_KIND_REQUEST,
			       .size = IDL_MSG_HEADER_SIZE,
			       .id = 4242,
			       .seqno = seq };
	unsigned char frame[4 + IDL_MSG_HEADER_SIZE];
	uint32_t len = htonl(IDL_MSG_HEADER_SIZE);
	idl_msg_header_t r;

	memcpy(frame, &len, 4);
	memcpy(frame + 4, &h, sizeof h);
	if (send(fd, frame, cut, MSG_NOSIGNAL) != (ssize_t)cut)
		return -1;
	if (pause_ms > 0)
		hd_sleep_ms(pause_ms);
	if (send(fd, frame + cut, sizeof frame - cut, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof frame - cut))
		return -1;
	if (sc_read_all(fd, &len, 4) != 0 || ntohl(len) != IDL_MSG_HEADER_SIZE ||
	    sc_read_all(fd, &r, sizeof r) != 0)
		return -1;
	return r.seqno;
}

/* tcp: a busy connection, whose thread waits on it for the next frame, gets frames cut in
 * two with a pause longer than that wait between the halves (SRV_LINGER_MS): what came
 * before the pause is kept, and each frame is answered, in step. */
static void
test_split_tcp(void)
{
	struct hd_srv s;
	char addr[256];
	int fd, bad = 0;

	CU_ASSERT_FATAL(hd_address("tcp", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, NULL, 0) == 0);
	fd = sc_tcp_from("127.0.0.1", addr);
	CU_ASSERT_FATAL(fd >= 0);
	/* Quick calls first: the connection is busy, and keeps a thread. */
	for (uint32_t i = 1; i <= 50; i++)
		bad += sc_split_call(fd, i, 4 + IDL_MSG_HEADER_SIZE, 0) != i;
	/* Cut in the prefix, after it, and in the header. */
	for (uint32_t i = 51; i <= 56; i++)
		bad += sc_split_call(fd, i, (size_t)(i - 51) * 5 + 2, 60) != i;
	for (uint32_t i = 57; i <= 80; i++)
		bad += sc_split_call(fd, i, 4 + IDL_MSG_HEADER_SIZE, 0) != i;
	CU_ASSERT_EQUAL(bad, 0);
	close(fd);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

/* How many threads of process pid wait for room in a socket's send buffer (the kernel
 * names a blocking tcp send's wait wait_woken or sk_stream_wait_memory, a unix seqpacket
 * send's sock_alloc_send_pskb or unix_wait_for_peer); -1 when the kernel does not name the
 * waits (then nothing is checked). The server's pool waits in epoll_wait, and its dedicated
 * threads in poll (tcp:) or in a receive (unix:), never there. */
static int
sc_blocked_in_send(pid_t pid)
{
	char path[96], w[64];
	int n = 0, named = 0;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.16s/wchan", (int)pid, e->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		if (fgets(w, sizeof w, f) != NULL && strcmp(w, "0") != 0) {
			named = 1;
			n += strcmp(w, "wait_woken") == 0 ||
			     strcmp(w, "sk_stream_wait_memory") == 0 ||
			     strcmp(w, "sock_alloc_send_pskb") == 0 ||
			     strcmp(w, "unix_wait_for_peer") == 0;
		}
		fclose(f);
	}
	closedir(d);
	return named ? n : -1;
}

/* A deaf client's done function: every reply read asks for another, so that NCALLS stay
 * in flight until the client stops. */
struct sc_deaf {
	idl_port_t port;
	int size;
};

static void
sc_ool_done(void *ctx, kern_return_t kr, ev_ool_t data, mach_msg_type_number_t n)
{
	struct sc_deaf *d = ctx;

	if (data != NULL)
		idl_ool_free(data, n);
	if (kr == KERN_SUCCESS)
		(void)every_ool_out_async(d->port, d->size, sc_ool_done, d, NULL);
}

/* A child process that keeps `calls` out-of-line replies of `size` bytes in flight, until
 * it is stopped or killed. */
static pid_t
sc_deaf_start(const char *addr, int calls, int size)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct sc_deaf d = { NULL, size };

		if (idl_port_open(addr, &d.port) != 0)
			_exit(1);
		for (int k = 0; k < calls; k++)
			if (every_ool_out_async(d.port, size, sc_ool_done, &d, NULL) != 0)
				_exit(1);
		for (;;) {
			struct pollfd pf = { .fd = idl_port_fd(d.port), .events = POLLIN };

			(void)poll(&pf, 1, 100);
			if (idl_port_dispatch(d.port, 1024) < 0)
				_exit(1);
		}
	}
	return pid;
}

/*
 * Clients that stop reading while replies with out-of-line data are on their way hold no
 * server thread: what the kernel does not take of such a reply is kept (on tcp: the rest of
 * its frame, data included; on unix: its packet and the memfds of its data), nothing more
 * is read from the connection meanwhile, and it goes out when there is room. Such a reply
 * was once sent with a blocking send that held a pool thread up to 30 s. Another client's
 * calls go through, and the server keeps about one reply per stopped client.
 */
static void
sc_deaf(const char *scheme, int ndeaf, int calls, int size)
{
	pid_t deaf[16];
	struct hd_srv s;
	char addr[256];
	long rss0, rss;
	idl_port_t p;
	int64_t t0;
	int blocked;

	CU_ASSERT_FATAL(ndeaf <= 16);
	CU_ASSERT_FATAL(hd_address(scheme, addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, NULL, 0) == 0);
	rss0 = sc_status(s.pid, "VmRSS");
	for (int i = 0; i < ndeaf; i++)
		CU_ASSERT_FATAL((deaf[i] = sc_deaf_start(addr, calls, size)) > 0);
	hd_sleep_ms(500);
	for (int i = 0; i < ndeaf; i++)
		kill(deaf[i], SIGSTOP);
	hd_sleep_ms(500); /* the replies on their way fill the sockets */
	blocked = sc_blocked_in_send(s.pid);
	t0 = hd_now_ms();
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	for (int i = 0; i < 100; i++)
		HD_CHECK_KR(every_null(p), 0);
	rss = sc_status(s.pid, "VmRSS");
	fprintf(stderr,
		"harden: scale: %d stopped %s clients with %d replies of %d KiB in flight; "
		"server threads blocked sending %d; 100 calls of another in %lld ms; server "
		"threads %ld, resident %ld -> %ld kB\n",
		ndeaf, scheme, calls, size >> 10, blocked, (long long)(hd_now_ms() - t0),
		sc_status(s.pid, "Threads"), rss0, rss);
	CU_ASSERT(hd_now_ms() - t0 < 3000);
	CU_ASSERT(blocked <= 0);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	/* A sanitizer's shadow memory grows with all the server touches: not counted there. */
	CU_ASSERT(rss - rss0 < (long)ndeaf * 4 * (size >> 10) + 16384);
#endif
	idl_port_close(p);
	for (int i = 0; i < ndeaf; i++) {
		kill(deaf[i], SIGKILL);
		waitpid(deaf[i], NULL, 0);
	}
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

static void
test_deaf_ool(void)
{
	/* tcp: 16 replies of 1 MiB (the most every.defs's server gives) outgrow the socket
	 * buffers. unix: packets of 15 KiB (inline after the message) fill its buffer after a
	 * dozen; replies of 20 KiB go as memfds, whose packets are small, so it takes more. */
	sc_deaf("tcp", 8, 16, 1 << 20);
	sc_deaf("unix", 8, 64, 15 << 10);
	sc_deaf("unix", 4, 400, 20 << 10);
}

/* per_address: connections from 127.0.0.2 beyond the limit get a PER_ADDRESS goodbye; a
 * client from 127.0.0.1 is not affected; a library client beyond it sees IDL_ELIMIT
 * naming the limit. Every 127/8 address is the loopback's, so no namespace is needed. */
static void
test_per_address(void)
{
	int limit = sc_count("HD_SCALE_PER_ADDRESS", 5), n = sc_count("HD_SCALE_TCP", 20);
	const char *opts[] = { "-l", NULL, NULL };
	char lim[64], addr[256];
	int *fds = calloc((size_t)n, sizeof *fds), *mine = calloc((size_t)limit, sizeof *mine);
	int refused = 0, opened = 0;
	struct hd_srv s;
	idl_port_t p;

	CU_ASSERT_FATAL(fds != NULL && mine != NULL && n > limit);
	CU_ASSERT_FATAL(sc_nofile(n + limit + 16) == 0);
	snprintf(lim, sizeof lim, "per_address=%d", limit);
	opts[1] = lim;
	CU_ASSERT_FATAL(hd_address("tcp", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_start(&s, addr, opts, 0) == 0);
	for (int i = 0; i < n; i++) {
		if ((fds[i] = sc_tcp_from("127.0.0.2", addr)) < 0) {
			fprintf(stderr,
				"harden: scale: no source address 127.0.0.2 (%s): skipped\n",
				strerror(errno));
			break;
		}
		opened++;
	}
	/* The ones beyond the limit were told why. */
	for (int i = limit; i < opened; i++)
		if (sc_tcp_goodbye(fds[i], 2000) == IDL_GOODBYE_PER_ADDRESS)
			refused++;
	CU_ASSERT_EQUAL(refused, opened - limit);
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	HD_CHECK_KR(every_null(p), 0);
	idl_port_close(p);
	/* From 127.0.0.1 too, the limit holds, and the library names it. The server may not
	 * have seen the client above leave yet (a loaded machine): a connection it refused
	 * for that is made again, so that exactly `limit` of them are held. */
	for (int i = 0; i < limit; i++) {
		for (int t = 0; t < 40; t++) {
			mine[i] = sc_tcp_from("127.0.0.1", addr);
			if (mine[i] < 0 || sc_tcp_goodbye(mine[i], 100) != IDL_GOODBYE_PER_ADDRESS)
				break;
			close(mine[i]);
			mine[i] = -1;
			hd_sleep_ms(50);
		}
	}
	p = hd_open(addr, 3000);
	CU_ASSERT_FATAL(p != NULL);
	HD_CHECK_KR(every_null(p), IDL_ELIMIT);
	CU_ASSERT(strstr(idl_errdetail(), "per-address limit (per_address") != NULL);
	CU_ASSERT(hd_log_has(&s, "connection refused (per_address", 1000));
	fprintf(stderr,
		"harden: scale: %d tcp: connections from 127.0.0.2, %d refused (per_address %d); "
		"127.0.0.1 answered\n",
		opened, refused, limit);
	idl_port_close(p);
	for (int i = 0; i < opened; i++)
		close(fds[i]);
	for (int i = 0; i < limit; i++)
		if (mine[i] >= 0)
			close(mine[i]);
	free(fds);
	free(mine);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
}

/* net_idle_ms: a tcp: connection idle past it is closed with an IDLE goodbye, and its
 * client's next call reconnects and goes through. The log names the limit that applied and
 * its value: net_idle_ms when idle_ms is 0, idle_ms when it is set (it wins on tcp: too). */
static void
test_idle_tcp(void)
{
	static const struct {
		const char *opts[5];
		const char *log;
	} runs[] = {
		{ { "-l", "net_idle_ms=300", NULL }, "idle, connection closed (net_idle_ms 300)" },
		{ { "-l", "idle_ms=400", "-l", "net_idle_ms=60000", NULL },
		  "idle, connection closed (idle_ms 400)" },
	};

	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		struct hd_srv s;
		char addr[256];
		idl_port_t p;

		CU_ASSERT_FATAL(hd_address("tcp", addr, sizeof addr) == 0);
		CU_ASSERT_FATAL(hd_start(&s, addr, runs[i].opts, 0) == 0);
		p = hd_open(addr, 3000);
		CU_ASSERT_FATAL(p != NULL);
		HD_CHECK_KR(every_null(p), 0);
		hd_sleep_ms(900);
		HD_CHECK_KR(every_null(p), 0);
		CU_ASSERT(hd_log_has(&s, runs[i].log, 1000));
		idl_port_close(p);
		CU_ASSERT_EQUAL(hd_stop(&s), 0);
	}
}

/* A client process on addr: 200 checked null calls; NULL on failure to fork. */
static pid_t
sc_embedded_client(const char *addr)
{
	pid_t pid = fork();

	if (pid == 0) {
		idl_port_t p = NULL;
		int good = idl_port_open(addr, &p) == 0;

		for (int k = 0; good && k < 200; k++)
			good = every_null(p) == 0;
		idl_port_close(p);
		_exit(good ? 0 : 1);
	}
	return pid;
}

/* Serves srv from this thread (its descriptor fd) until the n clients have exited: 1 when
 * each succeeded. *during is the process's thread count once serving, *served the events. */
static int
sc_embedded_serve(idl_server_t *srv, int fd, pid_t *child, const char *const *names, int n,
		  long *during, int *served)
{
	int ok = 1, left = n, status;

	*during = -1;
	*served = 0;
	while (left > 0) {
		struct pollfd pf = { fd, POLLIN, 0 };
		int r;

		for (int i = 0; i < n; i++)
			if (child[i] > 0 && waitpid(child[i], &status, WNOHANG) == child[i]) {
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
					fprintf(stderr, "harden: embedded: the %s client failed\n",
						names[i]);
					ok = 0;
				}
				child[i] = 0;
				left--;
			}
		if (poll(&pf, 1, 100) <= 0)
			continue;
		r = idl_server_dispatch(srv, 16);
		CU_ASSERT(r >= 0);
		*served += r > 0 ? r : 0;
		if (*during < 0)
			*during = sc_status(getpid(), "Threads");
	}
	return ok;
}

/* The embeddable server: one server listening on unix:, tcp:, udp:, shm: and port: at once,
 * served from this thread alone, no thread created by the library (counted in
 * /proc/self/status), a client process on each address. */
static void
test_embedded(void)
{
	static const char *const schemes[] = { "unix", "tcp", "udp", "shm", "port" };
	enum {
		NS = sizeof schemes / sizeof schemes[0]
	};
	char addr[NS][256];
	idl_server_t *srv;
	long before, during;
	pid_t child[NS];
	int fd, ok, served;

	CU_ASSERT_FATAL(idl_server_create(&srv) == 0);
	CU_ASSERT_FATAL(idl_server_add_subsystem(srv, &every_subsystem, every_server) == 0);
	for (int i = 0; i < NS; i++) {
		CU_ASSERT_FATAL(hd_address(schemes[i], addr[i], sizeof addr[i]) == 0);
		CU_ASSERT_FATAL(idl_server_listen(srv, addr[i]) == 0);
	}
	before = sc_status(getpid(), "Threads");
	fd = idl_server_fd(srv);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(idl_server_fd(srv), fd);
	for (int i = 0; i < NS; i++)
		CU_ASSERT_FATAL((child[i] = sc_embedded_client(addr[i])) > 0);
	ok = sc_embedded_serve(srv, fd, child, schemes, NS, &during, &served);
	fprintf(stderr,
		"harden: scale: embedded: unix, tcp, udp, shm and port: threads %ld before, %ld "
		"while serving; %d events\n",
		before, during, served);
	CU_ASSERT(ok);
	CU_ASSERT_EQUAL(during, before);
	CU_ASSERT(served > 0);
	/* A stop ends the run at the next dispatch, which frees what serving made. */
	idl_server_stop(srv);
	CU_ASSERT_EQUAL(idl_server_dispatch(srv, 16), IDL_ECLOSED);
	idl_server_destroy(srv);
}

/* An endpoint added after idl_server_fd() is served by the same loop: shm: here, whose
 * connections the loop watches through an epoll set of their own. */
static void
test_embedded_late(void)
{
	static const char *const names[] = { "shm" };
	char addr[256], other[256];
	idl_server_t *srv;
	long during;
	pid_t child[1];
	int fd, served;

	CU_ASSERT_FATAL(hd_address("shm", addr, sizeof addr) == 0);
	CU_ASSERT_FATAL(hd_address("unix", other, sizeof other) == 0);
	CU_ASSERT_FATAL(idl_server_create(&srv) == 0);
	CU_ASSERT_FATAL(idl_server_add_subsystem(srv, &every_subsystem, every_server) == 0);
	CU_ASSERT_FATAL(idl_server_listen(srv, other) == 0);
	CU_ASSERT_FATAL((fd = idl_server_fd(srv)) >= 0);
	CU_ASSERT_FATAL(idl_server_listen(srv, addr) == 0);
	CU_ASSERT_FATAL((child[0] = sc_embedded_client(addr)) > 0);
	CU_ASSERT(sc_embedded_serve(srv, fd, child, names, 1, &during, &served));
	CU_ASSERT(served > 0);
	idl_server_stop(srv);
	CU_ASSERT_EQUAL(idl_server_dispatch(srv, 16), IDL_ECLOSED);
	idl_server_destroy(srv);
}

CU_TestInfo hd_scale_tests[] = {
	{ "idle_unix", test_idle_unix },
	{ "slow_tcp", test_slow_tcp },
	{ "split_tcp", test_split_tcp },
	{ "deaf_ool", test_deaf_ool },
	{ "per_address", test_per_address },
	{ "idle_tcp", test_idle_tcp },
	{ "embedded", test_embedded },
	{ "embedded_late", test_embedded_late },
	CU_TEST_INFO_NULL,
};
