/*
 * port_test.c - the port: transport's own tests, beyond the conformance suite: credentials,
 * many clients within the per-user queue budget, either side killed in the middle of a
 * call, a dead server's queue, and that nothing is left behind: no queue and no
 * shared-memory object named by a process that is gone.
 *
 * Leftovers are found by listing the queues, in the mqueue filesystem: the one mounted
 * already (systemd's and containers' /dev/mqueue), when a queue made to probe it shows
 * there; else one of its own that is mounted nowhere (root, or CAP_SYS_ADMIN: see
 * pt_mount_mqueue). When neither works the listing checks are skipped, saying so, the rest
 * still runs, and the program exits 77 (automake's SKIP) rather than 0, so that a run that
 * skipped them never counts as a pass. Every name the transport
 * makes carries the creating process's pid, so "what a process left" is a prefix.
 * bench-server ($IDL_BENCH_SERVER) is the server, a real process.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "bench.h"

#define PT_CLIENTS 40
#define PT_DEATH_MS 3000 /* a call's deadline when a peer dies: the error must come sooner */

static char pt_mqdir[256]; /* the mqueue filesystem, or "" when none could be listed */
static int pt_mq_fd = -1; /* the mount pt_mqdir names when it is this program's own */
static char pt_address[128];
static pid_t pt_server;
static int pt_server_out = -1;
static int pt_server_stopped; /* pt_server was sent SIGSTOP and not continued since */
static unsigned pt_seq;

/* ---- helpers ---- */

static int64_t
pt_ms_since(int64_t t0)
{
	return (idl_now_ns() - t0) / 1000000;
}

static void
pt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Whether the mqueue filesystem at dir lists this process's queues (a mount of another IPC
 * namespace would not): a probe queue made here must show there. */
static int
pt_mq_lists(const char *dir)
{
	char name[64], path[512];
	struct stat st;
	mqd_t q;
	int ok;

	snprintf(name, sizeof name, "/idlport-probe.%ld", (long)getpid());
	q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
	if (q == (mqd_t)-1)
		return 0;
	snprintf(path, sizeof path, "%s%s", dir, name);
	ok = stat(path, &st) == 0;
	mq_close(q);
	mq_unlink(name);
	return ok;
}

/* An mqueue filesystem mounted already that lists our queues, from /proc/self/mounts. */
static int
pt_find_mqueue(void)
{
	char dir[256], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");
	int found = 0;

	while (f != NULL && !found && fscanf(f, "%*s %255s %63s %*[^\n]", dir, type) == 2)
		found = strcmp(type, "mqueue") == 0 && pt_mq_lists(dir);
	if (f != NULL)
		fclose(f);
	if (found)
		snprintf(pt_mqdir, sizeof pt_mqdir, "%s", dir);
	return found;
}

/* Drops this program's own mqueue mount, if it made one. */
static void
pt_unmount_mqueue(void)
{
	if (pt_mq_fd >= 0) {
		close(pt_mq_fd);
		pt_mq_fd = -1;
	}
}

/* The new mount API's constants (linux/mount.h), named here: glibc's <sys/mount.h> has them
 * only from 2.36 on. */
#define PT_FSOPEN_CLOEXEC 0x1
#define PT_FSCONFIG_CMD_CREATE 6
#define PT_FSMOUNT_CLOEXEC 0x1

/*
 * The mqueue filesystem, to list the queues: one mounted already, else one of this process's
 * own made by fsopen() and fsmount(), which is attached to no directory. Such a mount is in
 * no mount namespace, so nothing propagates to another (the machine's, a chroot's parent's)
 * and nothing needs a namespace whose root is a mount point, which a chroot's is not; the
 * kernel drops it with its last descriptor, so a killed run leaves nothing mounted. Its
 * directory is reached through /proc/self/fd. It needs CAP_SYS_ADMIN, as mount(2) does.
 */
static void
pt_mount_mqueue(void)
{
	int fs = -1, mnt = -1, err = ENOSYS;

	if (pt_find_mqueue())
		return;
#ifdef SYS_fsopen
	fs = (int)syscall(SYS_fsopen, "mqueue", PT_FSOPEN_CLOEXEC);
	if (fs >= 0 && syscall(SYS_fsconfig, fs, PT_FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = (int)syscall(SYS_fsmount, fs, PT_FSMOUNT_CLOEXEC, 0);
	err = errno;
	if (fs >= 0)
		close(fs);
#endif
	if (mnt < 0) {
		fprintf(stderr,
			"port_test: SKIP: no mqueue filesystem is mounted and none can be made "
			"(fsopen, fsmount: %s): the checks that list queues are skipped\n",
			strerror(err));
		return;
	}
	snprintf(pt_mqdir, sizeof pt_mqdir, "/proc/self/fd/%d", mnt);
	pt_mq_fd = mnt;
	if (!pt_mq_lists(pt_mqdir)) {
		fprintf(stderr,
			"port_test: SKIP: the mqueue filesystem made at %s does not list this "
			"process's queues: the checks that list queues are skipped\n",
			pt_mqdir);
		pt_unmount_mqueue();
		pt_mqdir[0] = '\0';
	}
}

/* How many entries of dir start with "idlport.<pid>.": what process pid left there. */
static int
pt_count(const char *dir, pid_t pid)
{
	char prefix[32];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(prefix, sizeof prefix, "idlport.%ld.", (long)pid);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			fprintf(stderr, "port_test: left behind: %s/%s\n", dir, e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* Waits up to ms for pid's queues and shared-memory objects to be gone; 0 when they are. */
static int
pt_left_by(pid_t pid, int ms)
{
	int64_t t0 = idl_now_ns();
	int q, o;

	for (;;) {
		q = pt_mqdir[0] != '\0' ? pt_count(pt_mqdir, pid) : 0;
		o = pt_count("/dev/shm", pid);
		if ((q == 0 && o <= 0) || pt_ms_since(t0) >= ms)
			return q + (o > 0 ? o : 0);
		pt_sleep_ms(20);
	}
}

/* Whether the rendezvous queue of the current address exists. */
static int
pt_queue_exists(void)
{
	mqd_t q = mq_open(pt_address + strlen("port:"), O_RDONLY | O_NONBLOCK);

	if (q == (mqd_t)-1)
		return 0;
	mq_close(q);
	return 1;
}

/* The number of descriptors pid has open. */
static int
pt_nfds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The server's descriptors once a client came and went: idl_server_run makes its own after
 * "ready", and a closed connection is freed a moment after the close. */
static int
pt_server_baseline(void)
{
	idl_port_t port = NULL;
	int n = -1, same = 0;

	if (idl_port_open(pt_address, &port) == 0) {
		bench_null(port);
		idl_port_close(port);
	}
	for (int i = 0; i < 200 && same < 10; i++) {
		int m = pt_nfds(pt_server);

		same = m == n ? same + 1 : 0;
		n = m;
		pt_sleep_ms(10);
	}
	return n;
}

static void
pt_new_address(void)
{
	snprintf(pt_address, sizeof pt_address, "port:/idlporttest-%ld-%u", (long)getpid(),
		 pt_seq++);
}

/* Starts bench-server on pt_address and waits for its "ready" line. */
static int
pt_server_start(void)
{
	const char *path = getenv("IDL_BENCH_SERVER");
	char line[256];
	size_t len = 0;
	int fds[2];
	int64_t t0;

	if (path == NULL || pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	if ((pt_server = fork()) == 0) {
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(126);
		execl(path, "bench-server", "-c", "4", pt_address, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	pt_server_out = fds[0];
	t0 = idl_now_ns();
	while (len < sizeof line - 1 && memchr(line, '\n', len) == NULL) {
		struct pollfd p = { .fd = pt_server_out, .events = POLLIN };
		ssize_t n;

		if (pt_ms_since(t0) > 10000 || poll(&p, 1, 100) < 0)
			return -1;
		if (!(p.revents & (POLLIN | POLLHUP)))
			continue;
		if ((n = read(pt_server_out, line + len, sizeof line - 1 - len)) <= 0)
			return -1;
		len += (size_t)n;
	}
	return strncmp(line, "ready ", 6) == 0 ? 0 : -1;
}

static void
pt_server_kill(int sig)
{
	int status;

	if (pt_server <= 0)
		return;
	/*
	 * A stopped server is continued before the signal, never after: a SIGCONT discards
	 * any pending stop, and LeakSanitizer stops the exiting server's threads with
	 * ptrace, so a late SIGCONT could leave its tracer waiting for a stop that never
	 * comes.
	 */
	if (sig != SIGSTOP && pt_server_stopped) {
		kill(pt_server, SIGCONT);
		pt_server_stopped = 0;
	}
	if (sig == SIGCONT)
		return;
	kill(pt_server, sig);
	if (sig == SIGSTOP) {
		waitpid(pt_server, &status, WUNTRACED);
		pt_server_stopped = 1;
		return;
	}
	waitpid(pt_server, &status, 0);
	pt_server = 0;
	close(pt_server_out);
	pt_server_out = -1;
}

static idl_port_t
pt_open(int timeout_ms)
{
	idl_port_t port = NULL;
	int kr = idl_port_open(pt_address, &port);

	if (kr != 0)
		fprintf(stderr, "port_test: open %s: %s [%s]\n", pt_address, idl_errname(kr),
			idl_errdetail());
	CU_ASSERT_EQUAL(kr, 0);
	if (port != NULL)
		idl_port_set_timeout(port, timeout_ms);
	return port;
}

static int
pt_works(idl_port_t port, int a)
{
	int sum = 0, kr = bench_add(port, a, 1, &sum);

	if (kr != 0)
		fprintf(stderr, "port_test: add: %s [%s]\n", idl_errname(kr), idl_errdetail());
	return kr == 0 && sum == a + 1;
}

static int
pt_is_conn_error(int kr)
{
	return kr == MIG_SERVER_DIED || kr == IDL_ECONNREFUSED || kr == IDL_ECLOSED;
}

/* ---- cases ---- */

/* The transport's own ops, in process: what each side knows of the other. */
struct pt_accept {
	const struct idl_transport *tr;
	void *ep, *conn;
	int err;
};

static void *
pt_accept_main(void *arg)
{
	struct pt_accept *a = arg;
	struct pollfd p = { .fd = a->tr->ep_fd(a->ep), .events = POLLIN };

	a->err = poll(&p, 1, 5000) == 1 ? a->tr->ep_accept(a->ep, a->conn) : -1;
	return NULL;
}

static void
pt_cred(void)
{
	struct idl_listen_opts opts = { .mode = 0600 };
	struct pt_accept a = { 0 };
	struct idl_cred sc, cc;
	const char *rest;
	void *client;
	pthread_t tid;

	pt_new_address();
	a.tr = idl_transport_find(pt_address, &rest);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a.tr);
	a.ep = calloc(1, a.tr->ep_size);
	a.conn = calloc(1, a.tr->conn_size);
	client = calloc(1, a.tr->conn_size);
	CU_ASSERT_FATAL(a.ep != NULL && a.conn != NULL && client != NULL);
	CU_ASSERT_EQUAL_FATAL(a.tr->ep_listen(a.ep, rest, &opts), 0);
	/* A second server at a held address is refused. */
	{
		void *ep2 = calloc(1, a.tr->ep_size);

		CU_ASSERT_EQUAL(a.tr->ep_listen(ep2, rest, &opts), IDL_EADDRINUSE);
		a.tr->ep_fini(ep2);
		free(ep2);
	}
	CU_ASSERT_EQUAL_FATAL(pthread_create(&tid, NULL, pt_accept_main, &a), 0);
	CU_ASSERT_EQUAL(a.tr->conn_connect(client, rest, &(struct idl_deadline){ 0, 5000 }), 0);
	pthread_join(tid, NULL);
	CU_ASSERT_EQUAL(a.err, 0);
	if (a.err == 0) {
		/* The server knows the uid that owns the client's queues, and the pid,
		 * verified: this process holds the queue. */
		CU_ASSERT_EQUAL(a.tr->conn_cred(a.conn, &sc), 0);
		CU_ASSERT_EQUAL(sc.valid, 1);
		CU_ASSERT_EQUAL(sc.uid, geteuid());
		CU_ASSERT_EQUAL(sc.gid, getegid());
		CU_ASSERT_EQUAL(sc.pid, getpid());
		CU_ASSERT_EQUAL(a.tr->conn_cred(client, &cc), 0);
		CU_ASSERT_EQUAL(cc.uid, geteuid());
		CU_ASSERT_EQUAL(cc.pid, getpid());
	}
	/* The client's queue names are gone once both sides hold them. */
	CU_ASSERT_EQUAL(pt_left_by(getpid(), 0), 0);
	/* Closing the client is a hang-up the server sees. */
	a.tr->conn_close(client);
	a.tr->conn_fini(client);
	if (a.err == 0) {
		char buf[64];
		struct idl_xmsg m = { .data = buf, .cap = sizeof buf };

		CU_ASSERT_EQUAL(a.tr->conn_recv(a.conn, &m, &(struct idl_deadline){ 0, 2000 }),
				MIG_SERVER_DIED);
	}
	a.tr->conn_close(a.conn);
	a.tr->conn_fini(a.conn);
	a.tr->ep_close(a.ep);
	a.tr->ep_fini(a.ep);
	CU_ASSERT_FALSE(pt_queue_exists());
	free(a.ep);
	free(a.conn);
	free(client);
}

/* Dozens of clients at once fit a user's RLIMIT_MSGQUEUE, and all of them work. */
static void
pt_many_clients(void)
{
	idl_port_t ports[PT_CLIENTS];
	int nfds;

	pt_new_address();
	CU_ASSERT_EQUAL_FATAL(pt_server_start(), 0);
	nfds = pt_server_baseline();
	for (int i = 0; i < PT_CLIENTS; i++)
		ports[i] = pt_open(10000);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < PT_CLIENTS; i++)
			if (ports[i] != NULL)
				CU_ASSERT(pt_works(ports[i], i * 10 + round));
	for (int i = 0; i < PT_CLIENTS; i++)
		if (ports[i] != NULL)
			idl_port_close(ports[i]);
	/* Closed clients said goodbye: the server frees their queues, not at its exit. */
	for (int64_t t0 = idl_now_ns(); pt_nfds(pt_server) > nfds && pt_ms_since(t0) < 3000;)
		pt_sleep_ms(20);
	CU_ASSERT_EQUAL(pt_nfds(pt_server), nfds);
	pt_server_kill(SIGTERM);
	CU_ASSERT_FALSE(pt_queue_exists());
	CU_ASSERT_EQUAL(pt_left_by(getpid(), 1000), 0);
}

/* Sends one-way messages to a stopped server until one is not taken within the port's
 * timeout; returns how many were. */
static int
pt_fill(idl_port_t port)
{
	int n = 0, kr;

	while (n < 100 && (kr = bench_notify(port, n)) == 0)
		n++;
	if (n < 100)
		CU_ASSERT_EQUAL(kr, IDL_ETIMEDOUT);
	return n;
}

/* IDL_PORT_QUEUE_DEPTH is how many requests a client's queue holds: with the server stopped,
 * that many one-way messages are taken at once, and one more if the server's thread was
 * already waiting in its receive (the kernel hands that one straight to it); the next waits,
 * here until the port's timeout. The default is 4. */
static void
pt_queue_depth(void)
{
	idl_port_t port;
	int n;

	pt_new_address();
	CU_ASSERT_EQUAL_FATAL(pt_server_start(), 0);
	for (int depth = 4; depth <= 9; depth += 5) {
		if (depth == 4)
			unsetenv("IDL_PORT_QUEUE_DEPTH");
		else
			setenv("IDL_PORT_QUEUE_DEPTH", "9", 1);
		if ((port = pt_open(300)) == NULL)
			break;
		CU_ASSERT(pt_works(port, depth));
		pt_server_kill(SIGSTOP);
		n = pt_fill(port);
		CU_ASSERT(n >= depth && n <= depth + 1);
		if (n < depth || n > depth + 1)
			fprintf(stderr, "port_test: a queue of %d took %d messages\n", depth, n);
		pt_server_kill(SIGCONT);
		CU_ASSERT(pt_works(port, depth + 1));
		idl_port_close(port);
	}
	unsetenv("IDL_PORT_QUEUE_DEPTH");
	pt_server_kill(SIGTERM);
}

/* A client process killed while its call is in the server: the server frees what it held
 * and serves others; nothing of the client is left. */
static void
pt_kill_client(void)
{
	int ready[2], status, nfds;
	idl_port_t port;
	pid_t child;
	char c;

	pt_new_address();
	CU_ASSERT_EQUAL_FATAL(pt_server_start(), 0);
	nfds = pt_server_baseline();
	CU_ASSERT_EQUAL_FATAL(pipe(ready), 0);
	if ((child = fork()) == 0) {
		int64_t total = 0;
		static int data[1024];

		close(ready[0]);
		port = pt_open(60000);
		if (port == NULL || !pt_works(port, 1))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		/* Out of line, so that an object is in flight too. */
		bench_sum(port, data, 1024, &total);
		_exit(0);
	}
	close(ready[1]);
	CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
	close(ready[0]);
	pt_server_kill(SIGSTOP);
	pt_sleep_ms(100); /* the child's request is queued by now */
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	pt_server_kill(SIGCONT);
	/* The server's receive sees the pid gone and ends the connection. */
	for (int64_t t0 = idl_now_ns(); pt_nfds(pt_server) > nfds && pt_ms_since(t0) < 3000;)
		pt_sleep_ms(20);
	CU_ASSERT_EQUAL(pt_nfds(pt_server), nfds);
	CU_ASSERT_EQUAL(pt_left_by(child, 2000), 0);
	port = pt_open(5000);
	if (port != NULL) {
		CU_ASSERT(pt_works(port, 2));
		idl_port_close(port);
	}
	pt_server_kill(SIGTERM);
	CU_ASSERT_FALSE(pt_queue_exists());
}

/* The server killed while a call waits on it: the call fails within a fraction of its
 * deadline, nothing of the client or server is left but the server's queue name, and a
 * new server takes that name over. */
static void
pt_kill_server(void)
{
	static int data[1024];
	int64_t total = 0, t0, ms;
	pid_t dead;
	idl_port_t port;
	int kr;

	pt_new_address();
	CU_ASSERT_EQUAL_FATAL(pt_server_start(), 0);
	port = pt_open(PT_DEATH_MS);
	if (port == NULL)
		return;
	CU_ASSERT(pt_works(port, 1));
	pt_server_kill(SIGSTOP);
	dead = pt_server;
	/* The server dies 200 ms into an out-of-line call. */
	if (fork() == 0) {
		pt_sleep_ms(200);
		kill(dead, SIGKILL);
		_exit(0);
	}
	t0 = idl_now_ns();
	kr = bench_sum(port, data, 1024, &total);
	ms = pt_ms_since(t0);
	wait(NULL);
	if (!pt_is_conn_error(kr))
		fprintf(stderr, "port_test: call to a killed server: %s [%s]\n", idl_errname(kr),
			idl_errdetail());
	CU_ASSERT(pt_is_conn_error(kr));
	CU_ASSERT(ms < PT_DEATH_MS / 2);
	pt_server_kill(SIGKILL); /* reaps it */
	idl_port_close(port);
	CU_ASSERT_EQUAL(pt_left_by(dead, 1000), 0);
	CU_ASSERT_EQUAL(pt_left_by(getpid(), 1000), 0);
	/* A dead server's name stays: nothing can remove it for a process that is gone. */
	CU_ASSERT_TRUE(pt_queue_exists());

	/* A client to it is refused soon, not at its 30 s connect deadline. */
	port = NULL;
	t0 = idl_now_ns();
	kr = idl_port_open(pt_address, &port);
	ms = pt_ms_since(t0);
	CU_ASSERT_EQUAL(kr, IDL_ECONNREFUSED);
	CU_ASSERT(ms < 5000);
	if (port != NULL)
		idl_port_close(port);
	CU_ASSERT_EQUAL(pt_left_by(getpid(), 1000), 0);

	/* A new server replaces the dead one's queue, and serves. */
	CU_ASSERT_EQUAL_FATAL(pt_server_start(), 0);
	port = pt_open(5000);
	if (port != NULL) {
		CU_ASSERT(pt_works(port, 3));
		idl_port_close(port);
	}
	pt_server_kill(SIGTERM);
	CU_ASSERT_FALSE(pt_queue_exists());
}

static const struct {
	const char *name;
	void (*fn)(void);
} pt_cases[] = {
	{ "credentials and hang-up", pt_cred },	      { "many clients", pt_many_clients },
	{ "request queue depth", pt_queue_depth },    { "client killed mid-call", pt_kill_client },
	{ "server killed mid-call", pt_kill_server },
};

int
main(void)
{
	CU_pSuite suite;
	unsigned failed;
	int own;

	pt_mount_mqueue();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("port", NULL, NULL);
	for (size_t i = 0; i < sizeof pt_cases / sizeof pt_cases[0]; i++)
		CU_add_test(suite, pt_cases[i].name, pt_cases[i].fn);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failure_records();
	CU_cleanup_registry();
	if (pt_server > 0)
		pt_server_kill(SIGKILL);
	own = pt_mq_fd >= 0;
	pt_unmount_mqueue();
	if (failed != 0)
		return 1;
	if (pt_mqdir[0] == '\0') {
		printf("SKIP: the cases passed, but without their checks that list queues (no "
		       "mqueue filesystem: see above)\n");
		return 77;
	}
	if (own)
		printf("queues listed in %s, an mqueue filesystem of this program's own, mounted "
		       "nowhere\n",
		       pt_mqdir);
	else
		printf("queues listed in %s\n", pt_mqdir);
	return 0;
}
