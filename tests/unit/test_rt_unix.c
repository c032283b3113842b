/*
 * test_rt_unix.c - the runtime end to end over real unix: sockets: calls, the hello and
 * signatures, many threads on one port, deadlines, a server killed mid-call, malformed
 * requests, and the socket file's life. The interface is the hand-written rt_fixture.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ool/ool.h"
#include "rt_fixture.h"

static char ux_dir[64];
static char ux_addr[128];

static int
ux_init(void)
{
	snprintf(ux_dir, sizeof ux_dir, "/tmp/idlrt-unix-XXXXXX");
	if (mkdtemp(ux_dir) == NULL)
		return -1;
	snprintf(ux_addr, sizeof ux_addr, "unix:%s/rtt.sock", ux_dir);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int
ux_clean(void)
{
	char path[160];

	snprintf(path, sizeof path, "%s/rtt.sock", ux_dir);
	unlink(path);
	return rmdir(ux_dir) == 0 ? 0 : -1;
}

static int64_t
ux_ms_since(int64_t t0)
{
	return (idl_now_ns() - t0) / 1000000;
}

static void
test_calls(void)
{
	idl_server_t *srv = rtt_start(ux_addr);
	idl_port_t p;
	unsigned char data[1024];
	int sum = 0, uid = -1, pid = -1, ok = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(ux_addr, &p), 0);
	CU_ASSERT_STRING_EQUAL(idl_port_address(p), ux_addr);
	CU_ASSERT_EQUAL(idl_port_timeout(p), IDL_PORT_DEFAULT_TIMEOUT_MS);
	CU_ASSERT_EQUAL(rtt_null(p), KERN_SUCCESS);
	CU_ASSERT_EQUAL(rtt_add(p, 40, 2, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 42);
	CU_ASSERT_EQUAL(rtt_fill(p, 7, data), KERN_SUCCESS);
	CU_ASSERT_EQUAL(data[0], 7);
	CU_ASSERT_EQUAL(data[1023], (unsigned char)(7 + 1023));
	/* One-way messages and calls on one connection are served in order. */
	rtt_notified = 0;
	CU_ASSERT_EQUAL(rtt_notify(p, 5), KERN_SUCCESS);
	CU_ASSERT_EQUAL(rtt_notify(p, 6), KERN_SUCCESS);
	CU_ASSERT_EQUAL(rtt_null(p), KERN_SUCCESS);
	CU_ASSERT_EQUAL(rtt_notified, 11);
	/* The server sees who called, and the endpoint the request came in on. */
	CU_ASSERT_EQUAL(rtt_whoami(p, &uid, &pid, &ok), KERN_SUCCESS);
	CU_ASSERT_EQUAL(uid, (int)getuid());
	CU_ASSERT_EQUAL(pid, (int)getpid());
	CU_ASSERT_EQUAL(ok, 1);
	/* Outside a request there is no current request. */
	CU_ASSERT_PTR_NULL(idl_request_port());
	idl_port_close(p);
	rtt_stop(srv);
}

static void
test_socket_file(void)
{
	char path[160], rel[160], cwd[512];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	idl_server_t *srv, *other;
	struct stat st;
	idl_port_t p;
	char longaddr[200];
	int fd;

	snprintf(path, sizeof path, "%s/rtt.sock", ux_dir);
	srv = rtt_start(ux_addr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT(S_ISSOCK(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	/* A live server's address is refused, and its file left alone. */
	CU_ASSERT_EQUAL(idl_server_create(&other), 0);
	CU_ASSERT_EQUAL(idl_server_add_subsystem(other, &rtt_subsystem, rtt_server), 0);
	CU_ASSERT_EQUAL(idl_server_listen(other, ux_addr), IDL_EADDRINUSE);
	CU_ASSERT_EQUAL(idl_server_add_subsystem(other, &rtt_subsystem, rtt_server), IDL_EINVAL);
	idl_server_destroy(other);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	rtt_stop(srv);
	/* The server removes its file. */
	CU_ASSERT_NOT_EQUAL(stat(path, &st), 0);

	/* A stale socket file (nobody listening) is replaced. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/rtt.sock", ux_dir);
	CU_ASSERT_EQUAL(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	srv = rtt_start(ux_addr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL(idl_port_open(ux_addr, &p), 0);
	CU_ASSERT_EQUAL(rtt_null(p), KERN_SUCCESS);
	idl_port_close(p);
	rtt_stop(srv);

	/* Something that is not a socket is never removed. */
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	close(fd);
	CU_ASSERT_EQUAL(idl_server_create(&other), 0);
	CU_ASSERT_EQUAL(idl_server_listen(other, ux_addr), IDL_EADDRINUSE);
	idl_server_destroy(other);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT(S_ISREG(st.st_mode));
	unlink(path);

	/* Bad addresses. */
	memset(longaddr, 'x', sizeof longaddr - 1);
	longaddr[sizeof longaddr - 1] = '\0';
	memcpy(longaddr, "unix:/", 6);
	CU_ASSERT_EQUAL(idl_server_create(&other), 0);
	CU_ASSERT_EQUAL(idl_server_listen(other, longaddr), IDL_EADDRINVAL);
	CU_ASSERT_EQUAL(idl_server_listen(other, "unix:"), IDL_EADDRINVAL);
	CU_ASSERT_EQUAL(idl_server_listen(other, "unix:@abstract"), IDL_EADDRINVAL);
	CU_ASSERT_EQUAL(idl_server_listen(other, "nosuch:/x"), IDL_ENOSCHEME);
	CU_ASSERT_EQUAL(idl_server_listen(other, "noscheme"), IDL_EADDRINVAL);
	idl_server_destroy(other);
	CU_ASSERT_EQUAL(idl_port_open(longaddr, &p), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_EQUAL(idl_port_open("nosuch:/x", &p), IDL_ENOSCHEME);
	CU_ASSERT_EQUAL(idl_port_open(ux_addr, &p), IDL_ECONNREFUSED);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), path));

	/* Relative paths are relative to the working directory. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	CU_ASSERT_EQUAL_FATAL(chdir(ux_dir), 0);
	snprintf(rel, sizeof rel, "unix:rel.sock");
	srv = rtt_start(rel);
	CU_ASSERT_PTR_NOT_NULL(srv);
	CU_ASSERT_EQUAL(idl_port_open(rel, &p), 0);
	CU_ASSERT_EQUAL(rtt_null(p), KERN_SUCCESS);
	idl_port_close(p);
	rtt_stop(srv);
	CU_ASSERT_NOT_EQUAL(access("rel.sock", F_OK), 0);
	CU_ASSERT_EQUAL(chdir(cwd), 0);
}

struct ux_worker {
	idl_port_t port;
	int id;
	int bad;
};

static void *
ux_hammer(void *arg)
{
	struct ux_worker *w = arg;
	unsigned char data[1024];

	for (int i = 0; i < 1000; i++) {
		int sum = -1;

		if (rtt_add(w->port, i, w->id * 100000, &sum) != 0 || sum != i + w->id * 100000)
			w->bad++;
		/* Replies of another size than the add's: the receiving thread must not cut
		 * them to its own buffer. */
		if (i % 10 == w->id &&
		    (rtt_fill(w->port, i, data) != 0 || data[5] != (unsigned char)(i + 5)))
			w->bad++;
	}
	return NULL;
}

static void
test_threads(void)
{
	idl_server_t *srv = rtt_start(ux_addr);
	struct ux_worker w[4];
	pthread_t t[4];
	idl_port_t p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(ux_addr, &p), 0);
	for (int i = 0; i < 4; i++) {
		w[i].port = p;
		w[i].id = i;
		w[i].bad = 0;
		pthread_create(&t[i], NULL, ux_hammer, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(w[i].bad, 0);
	}
	idl_port_close(p);
	rtt_stop(srv);
}

static void
test_deadline(void)
{
	idl_server_t *srv = rtt_start(ux_addr);
	idl_port_t p;
	int64_t t0, ms;
	int sum = 0, naps;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(ux_addr, &p), 0);
	naps = rtt_naps_done;
	t0 = idl_now_ns();
	CU_ASSERT_EQUAL(rtt_nap(p, 400, 100), IDL_ETIMEDOUT);
	ms = ux_ms_since(t0);
	CU_ASSERT(ms >= 100 && ms < 100 + 150);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "rtt.nap"));
	/* The next call works; the late reply to the nap is dropped, not taken for it. */
	CU_ASSERT_EQUAL(rtt_add(p, 1, 2, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 3);
	CU_ASSERT_EQUAL(rtt_naps_done, naps + 1);
	CU_ASSERT_EQUAL(rtt_add(p, 3, 4, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 7);
	/* The port's default deadline applies when the call gives none. */
	CU_ASSERT_EQUAL(idl_port_set_timeout(p, 80), 0);
	CU_ASSERT_EQUAL(idl_port_set_timeout(p, 0), IDL_EINVAL);
	t0 = idl_now_ns();
	CU_ASSERT_EQUAL(rtt_nap(p, 300, IDL_TIMEOUT_DEFAULT), IDL_ETIMEDOUT);
	ms = ux_ms_since(t0);
	CU_ASSERT(ms >= 80 && ms < 80 + 150);
	CU_ASSERT_EQUAL(idl_port_set_timeout(p, 5000), 0);
	CU_ASSERT_EQUAL(rtt_null(p), KERN_SUCCESS);
	idl_port_close(p);
	rtt_stop(srv);
}

struct ux_napper {
	const char *addr;
	int rc;
};

static void *
ux_nap_thread(void *arg)
{
	struct ux_napper *n = arg;
	idl_port_t p;

	n->rc = idl_port_open(n->addr, &p);
	if (n->rc == 0) {
		n->rc = rtt_nap(p, 150, 5000);
		idl_port_close(p);
	}
	return NULL;
}

static void *
ux_run(void *srv)
{
	idl_server_run(srv);
	return NULL;
}

/* Two clients each nap 150 ms: serialised dispatch takes 300 ms, no limit ~150 ms. */
static int64_t
ux_two_naps(unsigned concurrency)
{
	struct ux_napper n[2] = { { ux_addr, -1 }, { ux_addr, -1 } };
	idl_server_t *srv;
	pthread_t t[2], run;
	int64_t t0;

	CU_ASSERT_EQUAL(idl_server_create(&srv), 0);
	CU_ASSERT_EQUAL(idl_server_add_subsystem(srv, &rtt_subsystem, rtt_server), 0);
	CU_ASSERT_EQUAL(idl_server_set_concurrency(srv, concurrency), 0);
	CU_ASSERT_EQUAL(idl_server_listen(srv, ux_addr), 0);
	pthread_create(&run, NULL, ux_run, srv);
	t0 = idl_now_ns();
	pthread_create(&t[0], NULL, ux_nap_thread, &n[0]);
	pthread_create(&t[1], NULL, ux_nap_thread, &n[1]);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	t0 = ux_ms_since(t0);
	idl_server_stop(srv);
	pthread_join(run, NULL);
	idl_server_destroy(srv);
	CU_ASSERT_EQUAL(n[0].rc, 0);
	CU_ASSERT_EQUAL(n[1].rc, 0);
	return t0;
}

static void
test_concurrency(void)
{
	CU_ASSERT(ux_two_naps(1) >= 300);
	CU_ASSERT(ux_two_naps(0) < 280);
	CU_ASSERT(ux_two_naps(2) < 280);
}

/* A demux with a context: the server hands every request to it with the context given. */
struct ux_ctx {
	int magic;
	_Atomic int calls;
};

static int
ux_demux_ctx(void *vctx, idl_msg_header_t *in, idl_msg_header_t *out)
{
	struct ux_ctx *ctx = vctx;

	if (ctx->magic != 0x5eed) {
		idl_reply_init(in, out);
		out->retcode = MIG_BAD_ID;
		return 0;
	}
	atomic_fetch_add(&ctx->calls, 1);
	return rtt_server(in, out);
}

static void
test_demux_ctx(void)
{
	struct ux_ctx ctx = { 0x5eed, 0 };
	idl_server_t *srv;
	pthread_t run;
	idl_port_t p;
	int sum = 0;

	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_EQUAL(idl_server_add_subsystem_ctx(srv, &rtt_subsystem, NULL, &ctx), IDL_EINVAL);
	CU_ASSERT_EQUAL_FATAL(idl_server_add_subsystem_ctx(srv, &rtt_subsystem, ux_demux_ctx, &ctx),
			      0);
	CU_ASSERT_EQUAL_FATAL(idl_server_listen(srv, ux_addr), 0);
	pthread_create(&run, NULL, ux_run, srv);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(ux_addr, &p), 0);
	CU_ASSERT_EQUAL(rtt_add(p, 2, 3, &sum), 0);
	CU_ASSERT_EQUAL(sum, 5);
	CU_ASSERT_EQUAL(rtt_null(p), 0);
	/* Two routines reached the demux; the hello is the runtime's and does not. */
	CU_ASSERT_EQUAL(atomic_load(&ctx.calls), 2);
	idl_port_close(p);
	idl_server_stop(srv);
	pthread_join(run, NULL);
	idl_server_destroy(srv);
}

static void
test_signature(void)
{
	idl_server_t *srv = rtt_start(ux_addr);
	idl_port_t p;
	int sum = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(ux_addr, &p), 0);
	/* The client refuses the changed routine itself, naming it ... */
	CU_ASSERT_EQUAL(rtt_add_changed(p, 1, 2, &sum), IDL_ESIGNATURE);
	CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "rtt.add"));
	/* ... and the routines that agree still work on the same connection. */
	CU_ASSERT_EQUAL(rtt_add(p, 1, 2, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 3);
	idl_port_close(p);
	rtt_stop(srv);
}

/* Forks a process serving rtt at ux_addr; returns its pid once it accepts calls. */
static pid_t
ux_fork_server(void)
{
	pid_t pid = fork();
	idl_port_t p;

	if (pid == 0) {
		idl_server_t *srv;

		if (idl_server_create(&srv) != 0 ||
		    idl_server_add_subsystem(srv, &rtt_subsystem, rtt_server) != 0 ||
		    idl_server_listen(srv, ux_addr) != 0)
			_exit(1);
		idl_server_run(srv);
		_exit(0);
	}
	for (int i = 0; i < 500; i++) {
		if (idl_port_open(ux_addr, &p) == 0) {
			idl_port_close(p);
			return pid;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static void *
ux_killer(void *arg)
{
	usleep(200000);
	kill(*(pid_t *)arg, SIGKILL);
	return NULL;
}

static void
test_server_death(void)
{
	pid_t pid = ux_fork_server();
	pthread_t killer;
	idl_port_t p;
	int64_t t0, ms;
	int sum = 0;

	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(ux_addr, &p), 0);
	CU_ASSERT_EQUAL(rtt_add(p, 2, 2, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 4);
	/* Killed inside the routine: the call in flight fails at once, not at its deadline. */
	pthread_create(&killer, NULL, ux_killer, &pid);
	t0 = idl_now_ns();
	CU_ASSERT_EQUAL(rtt_nap(p, 5000, 10000), MIG_SERVER_DIED);
	ms = ux_ms_since(t0);
	CU_ASSERT(ms < 1500);
	pthread_join(killer, NULL);
	waitpid(pid, NULL, 0);
	/* With no server the next call cannot reconnect ... */
	CU_ASSERT_EQUAL(rtt_null(p), IDL_ECONNREFUSED);
	/* ... and once a new one is up (over the stale socket file) it does. */
	pid = ux_fork_server();
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL(rtt_add(p, 5, 5, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 10);
	/* Killed between calls: the next call learns it from the dead connection. */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CU_ASSERT_EQUAL(rtt_null(p), MIG_SERVER_DIED);
	idl_port_close(p);
}

/* The unix transport again under another scheme, with a combined send-and-receive: the
 * call path a shared-memory transport takes. */
static struct idl_transport ux_combined;
static const struct idl_transport *ux_plain;
static _Atomic int ux_combined_calls;

static int
ux_conn_call(void *conn, const struct idl_xmsg *req, struct idl_xmsg *rep, struct idl_deadline *dl)
{
	int err = ux_plain->conn_send(conn, req, dl);

	ux_combined_calls++;
	return err != 0 ? err : ux_plain->conn_recv(conn, rep, dl);
}

static void
test_combined(void)
{
	char addr[160];
	idl_server_t *srv;
	struct ux_worker w[3];
	pthread_t t[3];
	idl_port_t p;
	int sum = 0;

	ux_plain = idl_transport_find("unix:", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ux_plain);
	ux_combined = *ux_plain;
	ux_combined.scheme = "rt-test-combined";
	ux_combined.conn_call = ux_conn_call;
	CU_ASSERT_EQUAL(idl_transport_register(&ux_combined), 0);
	snprintf(addr, sizeof addr, "rt-test-combined:%s/rtt.sock", ux_dir);
	srv = rtt_start(ux_addr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(addr, &p), 0);
	CU_ASSERT_EQUAL(rtt_add(p, 20, 22, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 42);
	CU_ASSERT_EQUAL(ux_combined_calls, 2); /* the hello, then the add */
	/* A timed-out call leaves a late reply, which the next combined call must skip. */
	CU_ASSERT_EQUAL(rtt_nap(p, 200, 50), IDL_ETIMEDOUT);
	CU_ASSERT_EQUAL(rtt_add(p, 1, 1, &sum), KERN_SUCCESS);
	CU_ASSERT_EQUAL(sum, 2);
	for (int i = 0; i < 3; i++) {
		w[i].port = p;
		w[i].id = i;
		w[i].bad = 0;
		pthread_create(&t[i], NULL, ux_hammer, &w[i]);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(w[i].bad, 0);
	}
	idl_port_close(p);
	rtt_stop(srv);
}

static CU_TestInfo ux_tests[] = {
	{ "calls", test_calls },
	{ "socket_file", test_socket_file },
	{ "threads", test_threads },
	{ "deadline", test_deadline },
	{ "concurrency", test_concurrency },
	{ "signature", test_signature },
	{ "demux_ctx", test_demux_ctx },
	{ "combined", test_combined },
	{ "server_death", test_server_death },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_unix = { "rt_unix", ux_init, ux_clean, NULL, NULL, ux_tests };
