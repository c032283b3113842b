/*
 * spawn.c - the bench-server process the cases talk to: start it, stop it, freeze and kill
 * it, always with a deadline, so that a server that misbehaves fails the suite instead of
 * hanging it.
 */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"
#include "procdump.h"

#define TT_READY_MS 10000
#define TT_STOP_MS 10000

/* The server binary: $IDL_BENCH_SERVER, else the one this build made. */
static const char *
tt_server_path(void)
{
	const char *p = getenv("IDL_BENCH_SERVER");

	return p && *p ? p : IDL_BENCH_SERVER_DEFAULT;
}

static void
tt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int64_t
tt_ms_since(int64_t t0_ns)
{
	return (idl_now_ns() - t0_ns) / 1000000;
}

/* Reads the server's first line within the deadline; returns 0 if it is "ready ADDRESS". */
static int
tt_wait_ready(void)
{
	char line[600];
	size_t len = 0;
	int64_t t0 = idl_now_ns();
	struct pollfd pfd = { .fd = tt.server_out, .events = POLLIN };
	size_t alen;
	ssize_t n;
	int left;

	while (len < sizeof line - 1 && memchr(line, '\n', len) == NULL) {
		left = TT_READY_MS - (int)tt_ms_since(t0);
		if (left <= 0) {
			fprintf(stderr, "conformance: bench-server not ready within %d ms\n",
				TT_READY_MS);
			return -1;
		}
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -1;
		if (!(pfd.revents & (POLLIN | POLLHUP)))
			continue;
		n = read(tt.server_out, line + len, sizeof line - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "conformance: bench-server exited before it was ready\n");
			return -1;
		}
		len += (size_t)n;
	}
	line[len] = '\0';
	alen = strlen(tt.address);
	if (len < 7 + alen || strncmp(line, "ready ", 6) != 0 ||
	    strncmp(line + 6, tt.address, alen) != 0 || line[6 + alen] != '\n') {
		fprintf(stderr, "conformance: bench-server said '%s', not 'ready %s'\n", line,
			tt.address);
		return -1;
	}
	return 0;
}

int
tt_server_start(void)
{
	const char *path = tt_server_path();
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0) {
		perror("conformance: pipe2");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("conformance: fork");
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls here: the parent may have runtime threads. dup2
		 * clears close-on-exec on stdout; every other descriptor is close-on-exec. */
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(126);
		/* Several routines at once, so that the runtime's concurrent dispatch is tested
		 * too. */
		if (tt.embedded)
			execl(path, "bench-server", "-c", "4", "-e", tt.address, (char *)NULL);
		else
			execl(path, "bench-server", "-c", "4", tt.address, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	tt.server = pid;
	tt.server_out = fds[0];
	if (tt_wait_ready() != 0) {
		fprintf(stderr, "conformance: server: %s %s\n", path, tt.address);
		tt_server_reap();
		return -1;
	}
	return 0;
}

/* Sends sig and waits until the server is stopped, continued or dead accordingly. */
int
tt_server_signal_wait(int sig)
{
	int status, flags = sig == SIGSTOP ? WUNTRACED : sig == SIGCONT ? WCONTINUED : 0;
	pid_t r;

	if (tt.server <= 0 || kill(tt.server, sig) != 0)
		return -1;
	do
		r = waitpid(tt.server, &status, flags);
	while (r < 0 && errno == EINTR);
	if (r != tt.server)
		return -1;
	if (sig == SIGSTOP)
		return WIFSTOPPED(status) ? 0 : -1;
	if (sig == SIGCONT)
		return WIFCONTINUED(status) ? 0 : -1;
	tt.server = 0;
	close(tt.server_out);
	tt.server_out = -1;
	return WIFSIGNALED(status) && WTERMSIG(status) == sig ? 0 : -1;
}

/* Polls for the exit of the server for up to ms milliseconds; returns 1 once reaped. */
static int
tt_reap_within(int ms, int *status)
{
	int64_t t0 = idl_now_ns();
	pid_t r;

	for (;;) {
		r = waitpid(tt.server, status, WNOHANG);
		if (r == tt.server) {
			tt.server = 0;
			close(tt.server_out);
			tt.server_out = -1;
			return 1;
		}
		if (r < 0 && errno != EINTR)
			return -1;
		if (tt_ms_since(t0) >= ms)
			return 0;
		tt_sleep_ms(5);
	}
}

int
tt_server_stop(int *status)
{
	if (tt.server <= 0 || kill(tt.server, SIGTERM) != 0)
		return -1;
	if (tt_reap_within(TT_STOP_MS, status) != 1) {
		fprintf(stderr,
			"conformance: bench-server did not stop within %d ms of SIGTERM; its "
			"threads:\n",
			TT_STOP_MS);
		procdump_threads(tt.server, stderr);
		tt_server_reap();
		return -1;
	}
	return 0;
}

void
tt_server_reap(void)
{
	int status;

	if (tt.server > 0) {
		kill(tt.server, SIGKILL);
		kill(tt.server, SIGCONT);
		if (tt_reap_within(TT_STOP_MS, &status) != 1)
			fprintf(stderr, "conformance: cannot reap bench-server %d\n",
				(int)tt.server);
		tt.server = 0;
	}
	if (tt.server_out >= 0) {
		close(tt.server_out);
		tt.server_out = -1;
	}
}

/* Removes dir and what it holds (the suites make only files and sockets there). */
int
tt_rmtree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (d == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) != 0)
			rc = -1;
	}
	closedir(d);
	if (rmdir(dir) != 0)
		rc = -1;
	return rc;
}
