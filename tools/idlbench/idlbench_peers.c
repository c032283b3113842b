/*
 * idlbench_peers.c - the peer programs as columns: sd-bus (peer to peer), gRPC and Cap'n
 * Proto, each a program of its own in tools/idlbench/peers/ that takes the command line
 * peer.h states. idlbench asks each one built for its version, rows and transports, and runs
 * its cells as it runs its own: a forked server and client, pinned as the placement says,
 * interleaved in the same rounds. The forked children exec the program, so that its library
 * (and every thread the library starts) inherits the pinning; the client's repetitions come
 * back as the program's "rep I NS" lines.
 *
 * A program runs from the build tree when idlbench does (make bench, make check), else from
 * where `make install` put it; IDLBENCH_PEERDIR in the environment overrides both.
 *
 * The client program runs one repetition more than the cell's, the first its warm-up: the
 * client's CPU is the program's CPU clock over the others (its start-up and warm-up left
 * out), read as each "rep" line arrives, and the server's over the same span.
 *
 * A side of a cell, layer 3: it knows the base, the interface (whether it runs from its
 * build tree) and the cells; it must not know runs or reports.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ib_cell.h"

#ifndef IDLBENCH_PEERS
#define IDLBENCH_PEERS ""
#endif
#ifndef IDLBENCH_PEERS_WHY
#define IDLBENCH_PEERS_WHY ""
#endif
#ifndef IDLBENCH_PEERDIR
#define IDLBENCH_PEERDIR "/usr/local/libexec/idlkit/peers"
#endif
#ifndef IB_BUILDDIR
#define IB_BUILDDIR ""
#endif

/* A call's deadline, the program's own (peer.h's --timeout-ms): a server that stops
 * answering ends the cell with its reason instead of holding the run. */
#define IB_PEER_CALL_MS 10000
/* How long `PEER version` and the like may take. */
#define IB_PEER_INFO_MS 5000

/* Adds "a: b" to a "; "-separated list. */
static void
ib_append(char *buf, size_t len, const char *a, const char *b)
{
	size_t n = strlen(buf);

	if (n + 2 < len && n > 0) {
		buf[n++] = ';';
		buf[n++] = ' ';
		buf[n] = '\0';
	}
	if (n < len)
		snprintf(buf + n, len - n, "%s: %s", a, b);
}

/* Runs `path arg` and keeps what it prints on stdout (up to len - 1 bytes). Returns 0 when
 * it exited 0 within IB_PEER_INFO_MS. */
static int
ib_capture(const char *path, const char *arg, char *buf, size_t len)
{
	int p[2], status = -1;
	size_t got = 0;
	pid_t pid;

	buf[0] = '\0';
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char *argv[] = { (char *)path, (char *)arg, NULL };

		dup2(p[1], 1);
		execv(path, argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = { p[0], POLLIN, 0 };
		ssize_t n;
		int r = poll(&pf, 1, IB_PEER_INFO_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = read(p[0], buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (got += (size_t)n) == len - 1)
			break;
	}
	buf[got] = '\0';
	close(p[0]);
	kill(pid, SIGKILL); /* gone already, unless it hangs */
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The first word of each line, as " w1 w2 ... ". */
static void
ib_first_words(const char *text, char *out, size_t len)
{
	size_t n = 0;

	out[n++] = ' ';
	while (*text != '\0' && n + 2 < len) {
		size_t w = strcspn(text, " \n");

		if (w > 0 && n + w + 2 < len) {
			memcpy(out + n, text, w);
			n += w;
			out[n++] = ' ';
		}
		text += strcspn(text, "\n");
		if (*text == '\n')
			text++;
	}
	out[n] = '\0';
}

int
ib_prog_serves(const struct ib_prog *p, const char *word, const char *list)
{
	char key[40];

	(void)p;
	snprintf(key, sizeof key, " %s ", word);
	return strstr(list, key) != NULL;
}

size_t
ib_progs_find(struct ib_prog *progs, size_t max, char *why, size_t whylen)
{
	const char *env = getenv("IDLBENCH_PEERDIR");
	char dir[400], built[128];
	size_t n = 0;

	why[0] = '\0';
	if (env != NULL && env[0] != '\0')
		snprintf(dir, sizeof dir, "%s", env);
	else if (ib_from_build_tree())
		snprintf(dir, sizeof dir, "%s/tools/idlbench/peers", IB_BUILDDIR);
	else
		snprintf(dir, sizeof dir, "%s", IDLBENCH_PEERDIR);
	if (IDLBENCH_PEERS_WHY[0] != '\0')
		ib_append(why, whylen, "not built", IDLBENCH_PEERS_WHY);
	snprintf(built, sizeof built, "%s", IDLBENCH_PEERS);
	for (char *save = NULL, *w = strtok_r(built, " ", &save); w != NULL && n < max;
	     w = strtok_r(NULL, " ", &save)) {
		struct ib_prog *p = &progs[n];
		char out[512];
		size_t l = strcspn(w, "-");

		memset(p, 0, sizeof *p);
		snprintf(p->name, sizeof p->name, "%.*s", (int)(l < 15 ? l : 15), w);
		snprintf(p->path, sizeof p->path, "%s/%s", dir, w);
		if (access(p->path, X_OK) != 0) {
			ib_append(why, whylen, p->path, strerror(errno));
			continue;
		}
		if (ib_capture(p->path, "version", out, sizeof out) != 0 || out[0] == '\0') {
			ib_append(why, whylen, p->path, "`version` failed");
			continue;
		}
		out[strcspn(out, "\n")] = '\0';
		snprintf(p->version, sizeof p->version, "%.*s", (int)sizeof p->version - 1, out);
		if (ib_capture(p->path, "rows", out, sizeof out) != 0) {
			ib_append(why, whylen, p->path, "`rows` failed");
			continue;
		}
		ib_first_words(out, p->rows, sizeof p->rows);
		if (ib_capture(p->path, "transports", out, sizeof out) != 0) {
			ib_append(why, whylen, p->path, "`transports` failed");
			continue;
		}
		ib_first_words(out, p->transports, sizeof p->transports);
		n++;
	}
	return n;
}

const char *
ib_peer_version(const struct ib_col *col)
{
	if (col->prog != NULL)
		return col->prog->version;
#ifdef TIRPC_VERSION
	return "libtirpc " TIRPC_VERSION;
#else
	return "libtirpc";
#endif
}

/* The server's side: the program itself, its "ready ADDRESS" line going to the cell's
 * ready pipe (ib_cell_run() takes a line that starts with "ready"). It serves until the
 * cell's SIGTERM, which reaches it directly. */
int
ib_prog_serve(const struct ib_cell *cell, int ready_fd)
{
	char *argv[] = { (char *)cell->col->prog->path, (char *)"serve", (char *)cell->addr, NULL };
	char msg[160];

	if (dup2(ready_fd, 1) < 0) {
		ib_ready(ready_fd, "cannot hand the peer its ready pipe");
		return 1;
	}
	execv(argv[0], argv);
	snprintf(msg, sizeof msg, "cannot run %s: %s", argv[0], strerror(errno));
	ib_ready(ready_fd, msg);
	return 1;
}

/* One line of the client program's: a repetition's "rep I NS", or anything else, kept as the
 * reason a failed cell will give. Repetition 0 is the end of the warm-up, where the CPU of
 * the timed ones starts (the program's CPU clock, and the server's); each later one is a
 * figure and where that CPU ends so far. */
static void
ib_prog_line(const struct ib_cell *cell, pid_t pid, char *line, char *last, size_t lastlen,
	     struct ib_reps *out)
{
	unsigned long i;
	double ns, clk;

	if (sscanf(line, "rep %lu %lf", &i, &ns) != 2 || ns <= 0) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] != '\0')
			snprintf(last, lastlen, "%.*s", (int)lastlen - 1, line);
		return;
	}
	if (out->marks == 2)
		out->marks = 1; /* the last repetition so far is the end */
	if ((clk = ib_cpu_clock(pid)) >= 0 && (i == 0 || out->marks == 1))
		ib_cpu_mark_clock(out, clk);
	if (i == 0 || out->n >= sizeof out->v / sizeof out->v[0])
		return;
	/* A bandwidth row's figure is its payload over the time of a call. */
	out->v[out->n++] = cell->row->metric == IB_BANDWIDTH ? (double)cell->row->payload * 1e3 / ns
							     : ns / 1000.0;
	out->ops = (double)out->n * cell->iterations;
	if (cell->row->metric == IB_BANDWIDTH)
		out->ops *= cell->row->payload / 1e6;
}

/* Why a client program's exit status ended its cell (peer.h's statuses). */
static const char *
ib_exit_why(int status)
{
	if (WIFSIGNALED(status))
		return "the peer's client was killed by a signal";
	switch (WEXITSTATUS(status)) {
	case 1:
		return "a wrong answer";
	case 2:
		return "the peer refused its command line";
	case 3:
		return "a call failed";
	case 4:
		return "a call timed out";
	case 127:
		return "the peer's client could not run";
	}
	return "the peer's client failed";
}

/* The client's side: the program's repetitions, each "rep I NS", as the row's figures: one
 * more than the cell's, the first of them the warm-up (with what is left of the cell's
 * warm-up before it), so that the CPU of the timed ones can be read between two reports. Any
 * other line it prints (its errors, on stderr) is kept for the cell's reason. */
int
ib_prog_client(const struct ib_cell *cell, struct ib_reps *out)
{
	char it[16], reps[16], warm[16], tmo[16], line[256], last[160] = "";
	char *argv[] = { (char *)cell->col->prog->path,
			 (char *)"call",
			 (char *)cell->addr,
			 (char *)cell->row->name,
			 it,
			 reps,
			 (char *)"--warmup",
			 warm,
			 (char *)"--timeout-ms",
			 tmo,
			 NULL };
	pid_t parent = getpid(), pid;
	int p[2], status;
	FILE *f;

	snprintf(it, sizeof it, "%u", cell->iterations);
	snprintf(reps, sizeof reps, "%u", cell->reps + 1);
	snprintf(warm, sizeof warm, "%u",
		 cell->warmup > cell->iterations ? cell->warmup - cell->iterations : 0);
	snprintf(tmo, sizeof tmo, "%u", IB_PEER_CALL_MS);
	if (pipe2(p, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
		snprintf(out->why, sizeof out->why, "cannot start the peer: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* Dies with this process: idlbench kills a client that outlives the cell. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	if ((f = fdopen(p[0], "r")) == NULL) {
		close(p[0]);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		snprintf(out->why, sizeof out->why, "out of memory");
		return -1;
	}
	while (fgets(line, sizeof line, f) != NULL)
		ib_prog_line(cell, pid, line, last, sizeof last, out);
	fclose(f);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && out->n > 0)
		return 0;
	out->n = 0;
	snprintf(line, sizeof line, "%s%s%s", ib_exit_why(status), last[0] != '\0' ? ": " : "",
		 last);
	snprintf(out->why, sizeof out->why, "%.*s", (int)sizeof out->why - 1, line);
	return -1;
}
