/*
 * uv_server.c - uv-server: bench.defs served from a libuv loop on one thread.
 *
 *     uv-server ADDRESS...
 *
 * The server is libidlrt's embeddable one: idl_server_fd() starts it without any thread of
 * the library's and gives one descriptor, readable whenever the server has work (a new
 * connection, a request, a reply to flush, a handshake or idle deadline). One uv_poll_t
 * watches it and calls idl_server_dispatch(), which does that work on the loop's thread and
 * never blocks, so the whole process keeps one thread while it serves. Every built-in
 * transport can be served so (unix:, tcp:, udp:, shm:, port:); an endpoint of a transport
 * without the event operations is refused with IDL_ENOTSUP before "ready" is printed.
 *
 * Prints "ready ADDRESS..." on stdout once clients may connect, serves until SIGTERM or
 * SIGINT (a uv_signal_t each: the handler runs in the loop, not in signal context), then
 * stops the server, lets the loop end, removes what it created, prints what it served and
 * exits 0. The routines are examples/bench/bench_impl.c's.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "benchServer.h"

/* Everything the loop's callbacks share; one per process, on main's stack. */
struct uv_server {
	uv_loop_t loop;
	uv_poll_t poll; /* on idl_server_fd() */
	uv_signal_t sigterm, sigint;
	idl_server_t *srv;
	long events; /* what idl_server_dispatch() handled, summed */
	int failed; /* a dispatch or poll error ended the loop */
};

/* How many events one dispatch handles before the loop's other handles get their turn: the
 * descriptor is level-triggered, so what is left wakes the next iteration. */
#define UV_SERVER_BATCH 64

static void
uv_server_fail(const char *what, const char *address, int err)
{
	const char *detail = idl_errdetail();

	fprintf(stderr, "uv-server: %s%s%s: %s (%s)%s%s\n", address ? address : "",
		address ? ": " : "", what, idl_strerror(err), idl_errname(err), *detail ? ": " : "",
		detail);
}

/* Closes a handle that was initialised (a zeroed one has no type) and is not closing yet. */
static void
uv_server_close(void *handle)
{
	uv_handle_t *h = handle;

	if (uv_handle_get_type(h) != UV_UNKNOWN_HANDLE && !uv_is_closing(h))
		uv_close(h, NULL);
}

/*
 * Ends the loop: stops watching the server's descriptor before the server closes it (libuv
 * must not poll a closed descriptor), asks the server to stop, and closes every handle so
 * that uv_run() returns. idl_server_destroy() after the loop ends the server's run. Safe to
 * call twice, and after a start that failed half way.
 */
static void
uv_server_shutdown(struct uv_server *us)
{
	if (uv_handle_get_type((uv_handle_t *)&us->poll) == UV_POLL &&
	    !uv_is_closing((uv_handle_t *)&us->poll))
		uv_poll_stop(&us->poll);
	if (us->srv != NULL)
		idl_server_stop(us->srv);
	uv_server_close(&us->poll);
	uv_server_close(&us->sigterm);
	uv_server_close(&us->sigint);
}

/* The server's descriptor is readable: its work is done here, on the loop's thread. */
static void
uv_server_on_ready(uv_poll_t *poll, int status, int events)
{
	struct uv_server *us = poll->data;
	int n;

	if (status < 0) {
		fprintf(stderr, "uv-server: poll: %s\n", uv_strerror(status));
		us->failed = 1;
		uv_server_shutdown(us);
		return;
	}
	n = idl_server_dispatch(us->srv, UV_SERVER_BATCH);
	if (n < 0) {
		uv_server_fail("dispatch", NULL, n);
		us->failed = 1;
		uv_server_shutdown(us);
		return;
	}
	us->events += n;
}

static void
uv_server_on_signal(uv_signal_t *sig, int signum)
{
	struct uv_server *us = sig->data;

	fprintf(stderr, "uv-server: %s: stopping\n", signum == SIGTERM ? "SIGTERM" : "SIGINT");
	uv_server_shutdown(us);
}

/* Creates the server, listens on every address and starts it without a thread. Returns
 * the server's descriptor, or -1 with the failure reported. */
static int
uv_server_start(struct uv_server *us, int naddr, char **addr)
{
	int err, fd;

	if ((err = idl_server_create(&us->srv)) != 0) {
		uv_server_fail("create", NULL, err);
		return -1;
	}
	if ((err = idl_server_add_subsystem(us->srv, &bench_subsystem, bench_server)) != 0) {
		uv_server_fail("add subsystem bench", NULL, err);
		return -1;
	}
	for (int i = 0; i < naddr; i++) {
		if ((err = idl_server_listen(us->srv, addr[i])) != 0) {
			uv_server_fail("listen", addr[i], err);
			return -1;
		}
	}
	/* IDL_ENOTSUP here names the endpoint whose transport cannot be embedded. */
	if ((fd = idl_server_fd(us->srv)) < 0) {
		uv_server_fail("idl_server_fd", NULL, fd);
		return -1;
	}
	return fd;
}

/* The handles of the loop: the server's descriptor and the two stopping signals. */
static int
uv_server_watch(struct uv_server *us, int fd)
{
	int err;

	if ((err = uv_poll_init(&us->loop, &us->poll, fd)) != 0 ||
	    (err = uv_signal_init(&us->loop, &us->sigterm)) != 0 ||
	    (err = uv_signal_init(&us->loop, &us->sigint)) != 0) {
		fprintf(stderr, "uv-server: libuv: %s\n", uv_strerror(err));
		return -1;
	}
	us->poll.data = us;
	us->sigterm.data = us;
	us->sigint.data = us;
	if ((err = uv_poll_start(&us->poll, UV_READABLE, uv_server_on_ready)) != 0 ||
	    (err = uv_signal_start(&us->sigterm, uv_server_on_signal, SIGTERM)) != 0 ||
	    (err = uv_signal_start(&us->sigint, uv_server_on_signal, SIGINT)) != 0) {
		fprintf(stderr, "uv-server: libuv: %s\n", uv_strerror(err));
		return -1;
	}
	return 0;
}

static void
uv_server_report(struct uv_server *us)
{
	struct idl_server_stats st;

	if (idl_server_stats(us->srv, &st) != 0)
		return;
	printf("served %ld events; %llu connections accepted; %u threads of the server's own\n",
	       us->events, (unsigned long long)st.accepted, st.threads);
}

int
main(int argc, char **argv)
{
	struct uv_server us = { 0 };
	int fd, err, status = 1;

	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: uv-server ADDRESS...   (unix:, tcp:, udp:, shm: and port: "
				"addresses)\n");
		return 2;
	}
	if ((err = uv_loop_init(&us.loop)) != 0) {
		fprintf(stderr, "uv-server: uv_loop_init: %s\n", uv_strerror(err));
		return 1;
	}
	if ((fd = uv_server_start(&us, argc - 1, argv + 1)) < 0 || uv_server_watch(&us, fd) != 0)
		goto out;

	/* Every address accepts connections from here on. */
	printf("ready");
	for (int i = 1; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	if (fflush(stdout) != 0) {
		perror("uv-server: stdout");
		goto out;
	}

	/* Runs until uv_server_shutdown() closed every handle. */
	uv_run(&us.loop, UV_RUN_DEFAULT);
	if (!us.failed) {
		uv_server_report(&us);
		status = 0;
	}

out:
	/* A handle still open (a failed start) is closed, and the loop run to free it. */
	uv_server_shutdown(&us);
	uv_run(&us.loop, UV_RUN_DEFAULT);
	uv_loop_close(&us.loop);
	/* Ends the embedded server's run (it was stopped above), closes its endpoints and
	 * removes the socket files it made. */
	idl_server_destroy(us.srv);
	return status;
}
