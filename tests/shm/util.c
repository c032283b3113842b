/*
 * util.c - what the shm: test programs share: bench-server processes, counting a process's
 * regions and descriptors, and raw connections through the transport's ops.
 */
#define _GNU_SOURCE 1 /* pipe2, sched_setaffinity */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm_test.h"

char st_dir[256];

int64_t
st_ms_since(int64_t t0_ns)
{
	return (idl_now_ns() - t0_ns) / 1000000;
}

static const char *
st_server_path(void)
{
	const char *p = getenv("IDL_BENCH_SERVER");

	return p != NULL && *p != '\0' ? p : IDL_BENCH_SERVER_DEFAULT;
}

/* Starts bench-server and waits (10 s at most) for its "ready" line. */
int
st_server_start(struct st_server *s, const char *address, int cpu)
{
	char line[600];
	size_t len = 0;
	int64_t t0 = idl_now_ns();
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	s->pid = fork();
	if (s->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (s->pid == 0) {
		if (cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(0, sizeof set, &set);
		}
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(126);
		execl(st_server_path(), "bench-server", "-c", "4", address, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	s->out = fds[0];
	while (len < sizeof line - 1 && memchr(line, '\n', len) == NULL) {
		struct pollfd pfd = { .fd = s->out, .events = POLLIN };
		ssize_t n;

		if (st_ms_since(t0) > 10000 || poll(&pfd, 1, 100) < 0)
			break;
		if (!(pfd.revents & (POLLIN | POLLHUP)))
			continue;
		if ((n = read(s->out, line + len, sizeof line - 1 - len)) <= 0)
			break;
		len += (size_t)n;
	}
	line[len] = '\0';
	if (strncmp(line, "ready ", 6) != 0) {
		fprintf(stderr, "shm-test: bench-server on %s did not start: '%s'\n", address,
			line);
		st_server_kill(s);
		return -1;
	}
	return 0;
}

void
st_server_kill(struct st_server *s)
{
	int status;

	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (s->out >= 0)
		close(s->out);
	s->pid = 0;
	s->out = -1;
}

int
st_server_alive(const struct st_server *s)
{
	int status;

	return s->pid > 0 && waitpid(s->pid, &status, WNOHANG) == 0;
}

int
st_count_regions(pid_t pid)
{
	char path[64], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, "memfd:idlkit-shm") != NULL)
			n++;
	fclose(f);
	return n;
}

int
st_count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

const struct idl_transport *
st_tr(void)
{
	const char *rest;

	return idl_transport_find("shm:/", &rest);
}

struct shm_conn *
st_raw_connect(const char *address, int *err)
{
	struct shm_conn *c = calloc(1, sizeof *c);

	if (c == NULL) {
		*err = IDL_ENOMEM;
		return NULL;
	}
	*err = st_tr()->conn_connect(c, address + strlen("shm:"),
				     &(struct idl_deadline){ 0, 5000 });
	if (*err != 0) {
		st_tr()->conn_fini(c);
		free(c);
		return NULL;
	}
	return c;
}

void
st_raw_close(struct shm_conn *c)
{
	if (c != NULL) {
		st_tr()->conn_close(c);
		st_tr()->conn_fini(c);
		free(c);
	}
}

int
st_raw_send(struct shm_conn *c, const void *msg, size_t len, int ms)
{
	struct idl_xmsg m = { .data = (void *)msg, .len = len };

	return st_tr()->conn_send(c, &m, &(struct idl_deadline){ 0, ms });
}

int
st_raw_recv(struct shm_conn *c, void *buf, size_t cap, size_t *len, int ms)
{
	struct idl_xmsg m = { .data = buf, .cap = cap };
	int err = st_tr()->conn_recv(c, &m, &(struct idl_deadline){ 0, ms });

	*len = m.len;
	return err;
}

void
st_head(void *buf, uint8_t kind, int32_t id, uint32_t size, uint8_t flags, uint32_t ndesc)
{
	idl_msg_header_t h;

	memset(&h, 0, sizeof h);
	h.magic = IDL_MSG_MAGIC;
	h.order = IDL_ORDER_NATIVE;
	h.kind = kind;
	h.flags = flags;
	h.size = size;
	h.id = id;
	h.seqno = 1;
	h.ndesc = ndesc;
	memcpy(buf, &h, sizeof h);
}

/* Removes dir and the sockets left in it (a killed server cannot remove its own). */
int
st_rmtree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d != NULL) {
		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	return rmdir(dir) == 0 ? 0 : -1;
}
