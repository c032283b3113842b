/*
 * t_death.c - peer death on every registered transport: the server killed (SIGKILL) before
 * a call, during one (inside the routine) and after one; a client killed in the middle of
 * its call while another client is served. No case hangs (every call has a deadline and
 * the program runs under a timeout); each error comes well within the deadline; a new
 * server at the same address is used by the same port; on port: no queue of a dead client
 * stays behind. The shm: transport's thousand kill loops are tests/shm/shm-test kill
 * (make check-long).
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harden.h"

/* The port's deadline: errors must come long before it. */
#define HD_DEADLINE_MS 6000
#define HD_ERROR_WITHIN_MS 3000

/* Where the mqueue filesystem is mounted for this program, or "". */
static char hd_mqdir[256];

static void
hd_mount_mqueue(void)
{
	char dir[256];

	snprintf(dir, sizeof dir, "%s/mqueue", hd_dir);
	if (mkdir(dir, 0700) != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("none", dir, "mqueue", 0, NULL) != 0) {
		fprintf(stderr,
			"harden: cannot mount the mqueue filesystem (%s): the port: "
			"leftover check is not run\n",
			strerror(errno));
		return;
	}
	snprintf(hd_mqdir, sizeof hd_mqdir, "%s", dir);
}

/* Names of `pid` left in dir (queue names and shared objects carry the creator's pid). */
static int
hd_names_of(const char *dir, pid_t pid)
{
	char needle[32];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(needle, sizeof needle, ".%ld.", (long)pid);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, needle) != NULL) {
			fprintf(stderr, "harden: left behind: %s/%s\n", dir, e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static int
hd_is_error(int kr)
{
	return kr != 0 && kr != IDL_ETIMEDOUT;
}

struct hd_sleeper {
	idl_port_t port;
	int ms;
	int kr;
	int64_t done;
};

static void *
hd_sleeper_main(void *arg)
{
	struct hd_sleeper *c = arg;
	int slept;

	c->kr = every_sleep_ms(c->port, c->ms, &slept);
	c->done = hd_now_ms();
	return NULL;
}

static void
hd_restart(struct hd_srv *s)
{
	const char *opts[] = { "-c", "4", NULL };
	char addr[256];

	snprintf(addr, sizeof addr, "%s", s->addr);
	hd_reclaim(addr);
	CU_ASSERT_FATAL(hd_start(s, addr, opts, 0) == 0);
}

/* A call fails because the server died: the time it took, checked against the bound. */
static void
hd_expect_death(const char *scheme, const char *when, int kr, int64_t t0)
{
	long ms = (long)(hd_now_ms() - t0);

	fprintf(stderr, "harden: death: %s: server killed %s: %s after %ld ms\n", scheme, when,
		idl_errname(kr), ms);
	CU_ASSERT(hd_is_error(kr));
	CU_ASSERT(ms < HD_ERROR_WITHIN_MS);
}

static void
hd_matrix(const char *scheme)
{
	struct hd_sleeper c;
	struct hd_srv s;
	pthread_t t;
	idl_port_t p, q;
	int64_t t0;
	int kr, slept;
	pid_t child;

	CU_ASSERT_FATAL(hd_address(scheme, s.addr, sizeof s.addr) == 0);
	hd_restart(&s);
	p = hd_open(s.addr, HD_DEADLINE_MS);
	CU_ASSERT_FATAL(p != NULL);

	/* Before: connected and greeted, then the server dies; the next call fails. */
	HD_CHECK_KR(every_null(p), 0);
	hd_kill(&s);
	t0 = hd_now_ms();
	hd_expect_death(scheme, "before a call", every_null(p), t0);

	/* During: inside a routine that sleeps; the waiting call fails. */
	hd_restart(&s);
	c.port = p;
	c.ms = 4000;
	c.kr = 0;
	pthread_create(&t, NULL, hd_sleeper_main, &c);
	hd_sleep_ms(300);
	hd_kill(&s);
	t0 = hd_now_ms();
	pthread_join(t, NULL);
	hd_expect_death(scheme, "during a call", c.kr, t0);

	/* After: a call completed, then the server dies; the next call fails, and once a
	 * new server is up the same port works again. */
	hd_restart(&s);
	for (int i = 0; i < 3 && (kr = every_null(p)) != 0; i++)
		hd_sleep_ms(100); /* the first may still see the dead connection */
	HD_CHECK_KR(kr, 0);
	hd_kill(&s);
	t0 = hd_now_ms();
	hd_expect_death(scheme, "after a call", every_null(p), t0);
	hd_restart(&s);
	for (int i = 0; i < 3 && (kr = every_null(p)) != 0; i++)
		hd_sleep_ms(100);
	HD_CHECK_KR(kr, 0);

	/* A client killed in its call: the server goes on serving another one. */
	if ((child = fork()) == 0) {
		idl_port_t cp = NULL;

		if (idl_port_open(s.addr, &cp) == 0)
			every_sleep_ms(cp, 3000, &slept);
		_exit(0);
	}
	q = hd_open(s.addr, HD_DEADLINE_MS);
	CU_ASSERT_FATAL(q != NULL);
	hd_sleep_ms(300);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	t0 = hd_now_ms();
	for (int i = 0; i < 50; i++)
		HD_CHECK_KR(every_null(q), 0);
	HD_CHECK_KR(every_sleep_ms(q, 10, &slept), 0);
	CU_ASSERT(hd_now_ms() - t0 < HD_ERROR_WITHIN_MS);
	idl_port_close(q);
	/* The dead client's call ends with its routine; the server is still well. */
	hd_sleep_ms(3000);
	HD_CHECK_KR(every_null(p), 0);
	idl_port_close(p);
	CU_ASSERT_EQUAL(hd_stop(&s), 0);
	if (strcmp(scheme, "port") == 0 && hd_mqdir[0] != '\0')
		CU_ASSERT_EQUAL(hd_names_of(hd_mqdir, child), 0);
	if (strcmp(scheme, "port") == 0 || strcmp(scheme, "shm") == 0)
		CU_ASSERT_EQUAL(hd_names_of("/dev/shm", child), 0);
}

static void
test_matrix(void)
{
	const char *schemes[8];
	size_t n = hd_schemes(schemes, 8);
	char buf[256];

	hd_mount_mqueue();
	for (size_t i = 0; i < n; i++) {
		if (hd_address(schemes[i], buf, sizeof buf) != 0) {
			fprintf(stderr, "harden: death: %s: no address maker in util.c\n",
				schemes[i]);
			CU_FAIL("a transport without an address in tests/harden/util.c");
			continue;
		}
		hd_matrix(schemes[i]);
	}
	if (hd_mqdir[0] != '\0')
		umount2(hd_mqdir, MNT_DETACH);
	hd_mqdir[0] = '\0';
}

CU_TestInfo hd_death_tests[] = {
	{ "matrix", test_matrix },
	CU_TEST_INFO_NULL,
};
