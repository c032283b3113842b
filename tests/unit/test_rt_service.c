/*
 * test_rt_service.c - a server under a service manager (runtime/server/service.h): the environment
 * of socket activation and of the notify protocol read as the manager means it, a notify
 * message on a real datagram socket, the checks a transport makes of a passed socket (real
 * sockets and a real queue of each wrong kind), adoption through idl_server_listen() in a
 * child process whose environment is consumed, and drains that end idle connections at
 * once and busy ones at the deadline. tests/service/service.sh runs the same under
 * systemd-socket-activate.
 */
#include <config.h>

#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>
#include <idl/idl_transport.h>

#include "rt_fixture.h"
#include "server/service.h"

static void
test_fds_parse(void)
{
	struct idl__svc_fds f;
	char name[300];

	/* Not started by socket activation: nothing, and a detail that says so. */
	CU_ASSERT_EQUAL(idl__svc_fds_parse(NULL, NULL, NULL, 42, &f), 0);
	CU_ASSERT_EQUAL(f.n, 0);
	CU_ASSERT_EQUAL(f.err, IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.why, "LISTEN_FDS is not set"));
	idl__svc_fds_free(&f);
	/* Another process's sockets (a child that inherited the variables): ignored. */
	CU_ASSERT_EQUAL(idl__svc_fds_parse("41", "2", "a:b", 42, &f), 0);
	CU_ASSERT_EQUAL(f.n, 0);
	CU_ASSERT_EQUAL(f.err, IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.why, "LISTEN_PID is 41, this process is 42"));
	idl__svc_fds_free(&f);
	CU_ASSERT_EQUAL(idl__svc_fds_parse(NULL, "2", "a:b", 42, &f), 0);
	CU_ASSERT_EQUAL(f.n, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.why, "LISTEN_PID is not set"));
	idl__svc_fds_free(&f);
	CU_ASSERT_EQUAL(idl__svc_fds_parse("42x", "2", "a:b", 42, &f), 0);
	CU_ASSERT_EQUAL(f.n, 0);
	idl__svc_fds_free(&f);
	/* Ours, named. */
	CU_ASSERT_EQUAL(idl__svc_fds_parse("42", "3", "api:admin:api", 42, &f), 0);
	CU_ASSERT_EQUAL(f.err, 0);
	CU_ASSERT_EQUAL_FATAL(f.n, 3);
	CU_ASSERT_STRING_EQUAL(f.names[0], "api");
	CU_ASSERT_STRING_EQUAL(f.names[1], "admin");
	CU_ASSERT_STRING_EQUAL(f.names[2], "api");
	idl__svc_fds_free(&f);
	/* Unnamed: systemd's "unknown". */
	CU_ASSERT_EQUAL(idl__svc_fds_parse("42", "2", NULL, 42, &f), 0);
	CU_ASSERT_EQUAL_FATAL(f.n, 2);
	CU_ASSERT_STRING_EQUAL(f.names[1], "unknown");
	idl__svc_fds_free(&f);
	/* Names that are not one per descriptor refuse the whole set. */
	CU_ASSERT_EQUAL(idl__svc_fds_parse("42", "2", "api", 42, &f), 0);
	CU_ASSERT_EQUAL(f.err, IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.why, "LISTEN_FDNAMES names 1 socket"));
	CU_ASSERT_PTR_NOT_NULL(strstr(f.why, "LISTEN_FDS passes 2"));
	idl__svc_fds_free(&f);
	CU_ASSERT_EQUAL(idl__svc_fds_parse("42", "2", "a:b:c", 42, &f), 0);
	CU_ASSERT_EQUAL(f.err, IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.why, "names 3 sockets"));
	idl__svc_fds_free(&f);
	memset(name, 'x', 256);
	name[256] = '\0';
	CU_ASSERT_EQUAL(idl__svc_fds_parse("42", "1", name, 42, &f), 0);
	CU_ASSERT_EQUAL(f.err, IDL_EADDRINVAL);
	idl__svc_fds_free(&f);
	/* A count that is not one. */
	for (const char *bad[] = { "x", "-1", "", "99999", "2 ", NULL }, **b = bad; *b; b++) {
		CU_ASSERT_EQUAL(idl__svc_fds_parse("42", *b, NULL, 42, &f), 0);
		CU_ASSERT_EQUAL(f.n, 0);
		CU_ASSERT_EQUAL(f.err, IDL_EADDRINVAL);
		idl__svc_fds_free(&f);
	}
	CU_ASSERT_EQUAL(idl__svc_fds_parse("42", "0", NULL, 42, &f), 0);
	CU_ASSERT_EQUAL(f.n, 0);
	CU_ASSERT_EQUAL(f.err, 0);
	idl__svc_fds_free(&f);
}

static void
test_notify_parse(void)
{
	struct idl__svc_notify n;

	idl__svc_notify_parse(NULL, "1000", NULL, 42, &n);
	CU_ASSERT_FALSE(n.on);
	idl__svc_notify_parse("", NULL, NULL, 42, &n);
	CU_ASSERT_FALSE(n.on);
	idl__svc_notify_parse("run/notify", NULL, NULL, 42, &n);
	CU_ASSERT_FALSE(n.on);
	idl__svc_notify_parse("vsock:2:1234", NULL, NULL, 42, &n);
	CU_ASSERT_FALSE(n.on);
	idl__svc_notify_parse("/run/systemd/notify", NULL, NULL, 42, &n);
	CU_ASSERT_TRUE(n.on);
	CU_ASSERT_STRING_EQUAL(n.addr.sun_path, "/run/systemd/notify");
	CU_ASSERT_EQUAL(n.addrlen, offsetof(struct sockaddr_un, sun_path) + 20);
	CU_ASSERT_EQUAL(n.watchdog_ns, 0);
	/* Abstract: a leading NUL, the length without a terminator. */
	idl__svc_notify_parse("@idl/notify", NULL, NULL, 42, &n);
	CU_ASSERT_TRUE(n.on);
	CU_ASSERT_EQUAL(n.addr.sun_path[0], '\0');
	CU_ASSERT_EQUAL(memcmp(n.addr.sun_path + 1, "idl/notify", 10), 0);
	CU_ASSERT_EQUAL(n.addrlen, offsetof(struct sockaddr_un, sun_path) + 11);
	{
		char lng[200];

		memset(lng, 'a', sizeof lng - 1);
		lng[0] = '/';
		lng[sizeof lng - 1] = '\0';
		idl__svc_notify_parse(lng, NULL, NULL, 42, &n);
		CU_ASSERT_FALSE(n.on);
	}
	/* The watchdog: ours unless WATCHDOG_PID names another process. */
	idl__svc_notify_parse("/n", "400000", NULL, 42, &n);
	CU_ASSERT_EQUAL(n.watchdog_ns, 400000000ll);
	idl__svc_notify_parse("/n", "400000", "42", 42, &n);
	CU_ASSERT_EQUAL(n.watchdog_ns, 400000000ll);
	idl__svc_notify_parse("/n", "400000", "1", 42, &n);
	CU_ASSERT_TRUE(n.on);
	CU_ASSERT_EQUAL(n.watchdog_ns, 0);
	for (const char *bad[] = { "0", "-5", "abc", "12x", "", NULL }, **b = bad; *b; b++) {
		idl__svc_notify_parse("/n", *b, NULL, 42, &n);
		CU_ASSERT_EQUAL(n.watchdog_ns, 0);
	}
}

/* A private directory for socket files, removed by the caller. */
static char svc_dir[64];

static int
svc_dir_make(void)
{
	snprintf(svc_dir, sizeof svc_dir, "/tmp/idlkit-svc.XXXXXX");
	return mkdtemp(svc_dir) != NULL ? 0 : -1;
}

static void
svc_dir_remove(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf %s", svc_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", svc_dir);
}

static void
test_notify_send(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct idl__svc_notify n;
	char buf[64] = "";
	int fd;

	CU_ASSERT_EQUAL_FATAL(svc_dir_make(), 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/notify", svc_dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	idl__svc_notify_parse(sa.sun_path, NULL, NULL, getpid(), &n);
	CU_ASSERT_EQUAL(idl__svc_send(&n, "READY=1\nSTATUS=up"), 0);
	CU_ASSERT_EQUAL(recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT), 17);
	CU_ASSERT_STRING_EQUAL(buf, "READY=1\nSTATUS=up");
	close(fd);
	/* An abstract socket. */
	snprintf(sa.sun_path, sizeof sa.sun_path, "@idlkit-notify-%ld", (long)getpid());
	idl__svc_notify_parse(sa.sun_path, NULL, NULL, getpid(), &n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&n.addr, n.addrlen), 0);
	CU_ASSERT_EQUAL(idl__svc_send(&n, "WATCHDOG=1"), 0);
	memset(buf, 0, sizeof buf);
	CU_ASSERT_EQUAL(recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT), 10);
	CU_ASSERT_STRING_EQUAL(buf, "WATCHDOG=1");
	close(fd);
	/* Nobody there: an error, nothing waits. */
	CU_ASSERT_NOT_EQUAL(idl__svc_send(&n, "WATCHDOG=1"), 0);
	svc_dir_remove();
}

/* The descriptor flags (F_GETFL) of the last socket an endpoint took. */
static int svc_flags;

/* Offers fd to scheme's ep_adopt on a fresh endpoint: its result; *detail the error's. */
static int
svc_offer(const char *scheme, int fd, char *detail, size_t n)
{
	struct idl_listen_opts opts = { .mode = 0600 };
	const struct idl_transport *tr;
	const char *rest;
	char address[32];
	void *ep;
	int err;

	snprintf(address, sizeof address, "%s:x", scheme);
	if ((tr = idl_transport_find(address, &rest)) == NULL)
		return IDL_ENOSCHEME;
	ep = calloc(1, tr->ep_size);
	err = tr->ep_adopt(ep, fd, &opts);
	snprintf(detail, n, "%s", idl_errdetail());
	svc_flags = fcntl(fd, F_GETFL);
	tr->ep_fini(ep);
	free(ep);
	return err;
}

static int
svc_socket(int family, int type, const char *path, int listening)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	if (family == AF_UNIX) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", svc_dir, path);
		fchmod(fd, 0600);
		if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
			return -1;
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
			return -1;
	}
	if (listening && listen(fd, 4) != 0)
		return -1;
	return fd;
}

static void
test_adopt_checks(void)
{
	char d[512], path[128];
	int fd;

	CU_ASSERT_EQUAL_FATAL(svc_dir_make(), 0);
#ifdef HAVE_TRANSPORT_UNIX
	/* unix: what it needs, and each thing it refuses, saying what it was given. */
	fd = svc_socket(AF_UNIX, SOCK_SEQPACKET, "good.sock", 1);
	CU_ASSERT_EQUAL(svc_offer("unix", fd, d, sizeof d), 0);
	fd = svc_socket(AF_UNIX, SOCK_STREAM, "stream.sock", 1);
	CU_ASSERT_EQUAL(svc_offer("unix", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "is a listening AF_UNIX SOCK_STREAM socket"));
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "unix: needs a listening AF_UNIX SOCK_SEQPACKET"));
	fd = svc_socket(AF_UNIX, SOCK_SEQPACKET, "bound.sock", 0);
	CU_ASSERT_EQUAL(svc_offer("unix", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "is a bound AF_UNIX SOCK_SEQPACKET socket"));
	/* Others may connect: refused, naming the mode. */
	fd = svc_socket(AF_UNIX, SOCK_SEQPACKET, "open.sock", 1);
	snprintf(path, sizeof path, "%s/open.sock", svc_dir);
	chmod(path, 0666);
	CU_ASSERT_EQUAL(svc_offer("unix", fd, d, sizeof d), IDL_EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "has mode 0666"));
#endif
#ifdef HAVE_TRANSPORT_SHM
	/* Group write is connect permission too; read bits are not. */
	fd = svc_socket(AF_UNIX, SOCK_SEQPACKET, "group.sock", 1);
	snprintf(path, sizeof path, "%s/group.sock", svc_dir);
	chmod(path, 0620);
	CU_ASSERT_EQUAL(svc_offer("shm", fd, d, sizeof d), IDL_EACCES);
	fd = svc_socket(AF_UNIX, SOCK_SEQPACKET, "read.sock", 1);
	snprintf(path, sizeof path, "%s/read.sock", svc_dir);
	chmod(path, 0644);
	CU_ASSERT_EQUAL(svc_offer("shm", fd, d, sizeof d), 0);
#endif
#ifdef HAVE_TRANSPORT_UNIX
	/* An abstract socket has no permission to check. */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		socklen_t len = offsetof(struct sockaddr_un, sun_path) + 12;

		memcpy(sa.sun_path, "\0idlkit-abs", 12);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		CU_ASSERT_EQUAL(bind(fd, (struct sockaddr *)&sa, len), 0);
		CU_ASSERT_EQUAL(listen(fd, 1), 0);
		CU_ASSERT_EQUAL(svc_offer("unix", fd, d, sizeof d), IDL_EADDRINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(d, "abstract or unnamed"));
	}
#endif
	/* tcp: and udp:, each offered the other's socket. */
#if defined HAVE_TRANSPORT_TCP && defined HAVE_TRANSPORT_UDP
	fd = svc_socket(AF_INET, SOCK_STREAM, NULL, 1);
	CU_ASSERT_EQUAL(svc_offer("tcp", fd, d, sizeof d), 0);
	CU_ASSERT(svc_flags >= 0 && (svc_flags & O_NONBLOCK));
	fd = svc_socket(AF_INET, SOCK_STREAM, NULL, 1);
	CU_ASSERT_EQUAL(svc_offer("udp", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "is a listening AF_INET SOCK_STREAM socket; udp: needs"));
	fd = svc_socket(AF_INET, SOCK_STREAM, NULL, 0);
	CU_ASSERT_EQUAL(svc_offer("tcp", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "is a bound AF_INET SOCK_STREAM socket; tcp: needs"));
	fd = svc_socket(AF_INET, SOCK_DGRAM, NULL, 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	CU_ASSERT_EQUAL(svc_offer("udp", fd, d, sizeof d), 0);
	/* udp:'s receive waits in the kernel: the flag the manager left is cleared. */
	CU_ASSERT(svc_flags >= 0 && !(svc_flags & O_NONBLOCK));
	fd = svc_socket(AF_INET, SOCK_DGRAM, NULL, 0);
	CU_ASSERT_EQUAL(svc_offer("tcp", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "is a bound AF_INET SOCK_DGRAM socket; tcp: needs"));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_EQUAL(svc_offer("udp", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "is an unbound AF_INET SOCK_DGRAM socket"));
#endif
#ifdef HAVE_TRANSPORT_TLS
	/* tls: shares tcp:'s checks (its context comes after them). */
	fd = svc_socket(AF_INET, SOCK_DGRAM, NULL, 0);
	CU_ASSERT_EQUAL(svc_offer("tls", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "is a bound AF_INET SOCK_DGRAM socket; tls: needs a "
					 "listening TCP socket"));
#endif
#ifdef HAVE_TRANSPORT_PORT
	/* port: a queue, of the right size and mode; anything else refused. */
	fd = svc_socket(AF_UNIX, SOCK_SEQPACKET, "q.sock", 1);
	CU_ASSERT_EQUAL(svc_offer("port", fd, d, sizeof d), IDL_EADDRINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "port: needs a POSIX message queue"));
	{
		struct mq_attr a = { .mq_maxmsg = 4, .mq_msgsize = 256 };
		char q[64];
		mqd_t mq;

		snprintf(q, sizeof q, "/idlkit-svc-unit.%ld", (long)getpid());
		mq = mq_open(q, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
		CU_ASSERT_FATAL(mq != (mqd_t)-1);
		CU_ASSERT_EQUAL(svc_offer("port", (int)mq, d, sizeof d), 0);
		mq_unlink(q);
		a.mq_msgsize = 64; /* no room for a registration */
		mq = mq_open(q, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
		CU_ASSERT_EQUAL(svc_offer("port", (int)mq, d, sizeof d), IDL_EADDRINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(d, "messages are of 64 bytes"));
		mq_unlink(q);
		a.mq_msgsize = 256;
		mq = mq_open(q, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
		fchmod((int)mq, 0622);
		CU_ASSERT_EQUAL(svc_offer("port", (int)mq, d, sizeof d), IDL_EACCES);
		CU_ASSERT_PTR_NOT_NULL(strstr(d, "has mode 0622: others may send to it"));
		mq_unlink(q);
	}
#endif
	svc_dir_remove();
}

static void *
svc_run(void *srv)
{
	return (void *)(intptr_t)idl_server_run(srv);
}

/*
 * A process started by socket activation, as the manager starts it: the passed socket at
 * descriptor 3, the variables for its pid. Returns the child's verdict: 0 when the
 * socket was adopted and served a call, the variables were consumed and the descriptor
 * made close-on-exec; else the number of the check that failed.
 */
static int
svc_child(const char *listen_pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char pid[24], address[128];
	idl_server_t *srv;
	idl_port_t port;
	pthread_t run;
	int fd, sum = 0;

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/act%s.sock", svc_dir,
		 listen_pid != NULL ? listen_pid : "");
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	fchmod(fd, 0600);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4) != 0)
		return 1;
	if (fd != 3 && (dup2(fd, 3) != 3 || close(fd) != 0))
		return 1;
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	setenv("LISTEN_PID", listen_pid != NULL ? listen_pid : pid, 1);
	setenv("LISTEN_FDS", "1", 1);
	setenv("LISTEN_FDNAMES", "api", 1);
	if (idl_server_create(&srv) != 0 ||
	    idl_server_add_subsystem(srv, &rtt_subsystem, rtt_server) != 0)
		return 2;
	if (listen_pid != NULL) {
		/* Another process's sockets: refused, and still consumed. */
		if (idl_server_listen(srv, "unix:systemd:api") != IDL_EADDRINVAL ||
		    strstr(idl_errdetail(), "passed to another process") == NULL)
			return 3;
		return getenv("LISTEN_FDS") != NULL || getenv("LISTEN_PID") != NULL ? 4 : 0;
	}
	if (idl_server_listen(srv, "unix:systemd:nope") != IDL_EADDRINVAL ||
	    strstr(idl_errdetail(), "(passed: api)") == NULL)
		return 5;
	if (idl_server_listen(srv, "tcp:systemd:api") != IDL_EADDRINVAL)
		return 6;
	if (idl_server_listen(srv, "unix:systemd:api") != 0) {
		fprintf(stderr, "activation: %s\n", idl_errdetail());
		return 7;
	}
	if (getenv("LISTEN_FDS") != NULL || getenv("LISTEN_PID") != NULL ||
	    getenv("LISTEN_FDNAMES") != NULL)
		return 8;
	if (!(fcntl(3, F_GETFD) & FD_CLOEXEC))
		return 9;
	pthread_create(&run, NULL, svc_run, srv);
	snprintf(address, sizeof address, "unix:%s", sa.sun_path);
	if (idl_port_open(address, &port) != 0 || rtt_add(port, 2, 3, &sum) != 0 || sum != 5)
		return 10;
	idl_port_close(port);
	idl_server_stop(srv);
	pthread_join(run, NULL);
	idl_server_destroy(srv);
	/* The socket is the manager's: still there, still listening. */
	return access(sa.sun_path, F_OK) == 0 ? 0 : 11;
}

static int
svc_fork(const char *listen_pid)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(svc_child(listen_pid));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void
test_activation(void)
{
	int r;

	CU_ASSERT_EQUAL_FATAL(svc_dir_make(), 0);
	/* The child's number is the check that failed (svc_child()). */
	CU_ASSERT_EQUAL(r = svc_fork(NULL), 0);
	if (r != 0)
		fprintf(stderr, "activation: check %d failed\n", r);
	CU_ASSERT_EQUAL(r = svc_fork("1"), 0);
	if (r != 0)
		fprintf(stderr, "activation, another process's: check %d failed\n", r);
	svc_dir_remove();
}

/* rtt with `null` deferred and never answered: its client has a call in flight for as long
 * as the handle is held. */
static idl_reply_t svc_held;
static atomic_int svc_holding;

static int
svc_defer_demux(void *ctx, idl_msg_header_t *in, idl_msg_header_t *out)
{
	(void)ctx;
	if (in->id != RTT_BASE + RTT_NULL)
		return rtt_server(in, out);
	svc_held = idl_request_reply();
	atomic_store(&svc_holding, 1);
	idl_reply_init(in, out);
	out->retcode = MIG_NO_REPLY;
	return 1;
}

struct svc_waiter {
	char address[128];
	int kr;
	char detail[256];
};

static void *
svc_wait_null(void *arg)
{
	struct svc_waiter *w = arg;
	idl_port_t port;

	w->kr = idl_port_open(w->address, &port);
	if (w->kr != 0)
		return NULL;
	idl_port_set_timeout(port, 5000);
	w->kr = rtt_null(port);
	snprintf(w->detail, sizeof w->detail, "%s", idl_errdetail());
	idl_port_close(port);
	return NULL;
}

/* An idle connection ends at the drain's first step, not at its deadline; a call in flight
 * (a reply deferred) holds the drain until its deadline, and then gets the goodbye. */
static void
test_drain(void)
{
	struct svc_waiter w = { .kr = -1 };
	char address[128];
	idl_server_t *srv;
	idl_port_t idle;
	pthread_t run, waiter;
	void *rv;
	int64_t t0;
	int sum;

	CU_ASSERT_EQUAL_FATAL(svc_dir_make(), 0);
	snprintf(address, sizeof address, "unix:%s/idle.sock", svc_dir);
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_EQUAL(idl_server_add_subsystem(srv, &rtt_subsystem, rtt_server), 0);
	CU_ASSERT_EQUAL_FATAL(idl_server_listen(srv, address), 0);
	pthread_create(&run, NULL, svc_run, srv);
	CU_ASSERT_EQUAL_FATAL(idl_port_open(address, &idle), 0);
	CU_ASSERT_EQUAL(rtt_add(idle, 1, 1, &sum), 0);
	t0 = idl_now_ns();
	idl_server_drain(srv, 10000);
	pthread_join(run, &rv);
	CU_ASSERT_EQUAL((intptr_t)rv, 0);
	CU_ASSERT((idl_now_ns() - t0) / 1000000 < 2000);
	idl_port_close(idle);
	idl_server_destroy(srv);

	snprintf(w.address, sizeof w.address, "unix:%s/busy.sock", svc_dir);
	CU_ASSERT_EQUAL_FATAL(idl_server_create(&srv), 0);
	CU_ASSERT_EQUAL(idl_server_add_subsystem_ctx(srv, &rtt_subsystem, svc_defer_demux, NULL),
			0);
	CU_ASSERT_EQUAL_FATAL(idl_server_listen(srv, w.address), 0);
	pthread_create(&run, NULL, svc_run, srv);
	pthread_create(&waiter, NULL, svc_wait_null, &w);
	for (int i = 0; i < 5000 && !atomic_load(&svc_holding); i++)
		usleep(1000);
	CU_ASSERT_FATAL(atomic_load(&svc_holding));
	t0 = idl_now_ns();
	idl_server_drain(srv, 300);
	pthread_join(run, &rv);
	t0 = (idl_now_ns() - t0) / 1000000;
	CU_ASSERT_EQUAL((intptr_t)rv, 0);
	CU_ASSERT(t0 >= 280 && t0 < 2000);
	pthread_join(waiter, NULL);
	CU_ASSERT_EQUAL(w.kr, MIG_SERVER_DIED);
	/* The goodbye's reason; its text only when the call's reply buffer holds it. */
	CU_ASSERT(strstr(w.detail, "the server stops") != NULL ||
		  strstr(w.detail, "goodbye reason 5") != NULL);
	idl_reply_discard(svc_held);
	idl_server_destroy(srv);
	svc_dir_remove();
}

static CU_TestInfo svc_tests[] = {
	{ "fds_parse", test_fds_parse },
	{ "notify_parse", test_notify_parse },
	{ "notify_send", test_notify_send },
	{ "adopt_checks", test_adopt_checks },
#ifdef HAVE_TRANSPORT_UNIX
	{ "activation", test_activation },
	{ "drain", test_drain },
#endif
	CU_TEST_INFO_NULL,
};
CU_SuiteInfo idl_suite_rt_service = { "rt_service", NULL, NULL, NULL, NULL, svc_tests };
