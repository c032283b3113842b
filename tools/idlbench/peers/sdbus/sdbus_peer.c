/*
 * sdbus_peer.c - idlbench's D-Bus peer: bench.xml's methods served and called with
 * libsystemd's sd-bus on a peer-to-peer connection, the column sdbus-unix. peer.h states the
 * command line.
 *
 * No bus daemon: the server accepts on its own AF_UNIX stream socket and hands each connection
 * to an sd_bus set up as a server (sd_bus_set_fd, sd_bus_set_server, sd_bus_set_anonymous);
 * the client connects its own socket and gives it to sd_bus_set_fd. Both sides then speak the
 * D-Bus wire protocol: the SASL handshake once, and per call a method-call message with its
 * header fields (path, interface, member, signature) and a method-return or error message,
 * marshaled by sd-bus. The server serves one connection at a time, to its end; sd-bus starts
 * no thread.
 *
 * Beside the contract, `sdbus-peer introspect unix:PATH` prints the server's introspection
 * data, so that the test can hold the vtable below to bench.xml.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "peer.h"

#define BENCH_PATH "/org/idlkit/bench"
#define BENCH_IFACE "org.idlkit.Bench"
#define BENCH_BADDATA "org.idlkit.Bench.Error.BadData"

static void
sdbus_version(char *buf, size_t len)
{
	snprintf(buf, len, "sd-bus %s", PEER_SDBUS_VERSION);
}

static const struct peer_info sdbus_info = { "sdbus", "unix", sdbus_version };

/* ---- The server ---- */

struct srv {
	int wrong; /* serve --wrong ROW, or -1 */
};

static int
m_null(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	(void)ud;
	(void)e;
	return sd_bus_reply_method_return(m, NULL);
}

static int
m_add(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	const struct srv *s = ud;
	int32_t a, b;
	int r = sd_bus_message_read(m, "ii", &a, &b);

	(void)e;
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, "i", (int32_t)peer_srv_add(s->wrong, a, b));
}

/* Reads the "ay" argument and checks it against bench_pattern(salt). */
static int
srv_read_big(sd_bus_message *m, unsigned salt, const char *row, sd_bus_error *e)
{
	const void *p;
	size_t n;
	int r = sd_bus_message_read_array(m, 'y', &p, &n);

	if (r < 0)
		return r;
	if (peer_srv_check(p, n, salt) != 0)
		return sd_bus_error_setf(e, BENCH_BADDATA, "%s: not the 200 bytes of the pattern",
					 row);
	return 0;
}

/* Answers with 200 bytes of bench_pattern(salt). */
static int
srv_reply_big(sd_bus_message *m, const struct srv *s, enum peer_row_id row, unsigned salt)
{
	sd_bus_message *reply = NULL;
	char out[PEER_BIG];
	int r;

	peer_srv_fill(s->wrong, row, out, salt);
	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_append_array(reply, 'y', out, sizeof out);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static int
m_bigin(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	int r = srv_read_big(m, peer_salt_in, "bigin", e);

	(void)ud;
	return r < 0 ? r : sd_bus_reply_method_return(m, NULL);
}

static int
m_bigout(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	(void)e;
	return srv_reply_big(m, ud, PEER_BIGOUT, peer_salt_out);
}

static int
m_biginout(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	int r = srv_read_big(m, peer_salt_inout_in, "biginout", e);

	return r < 0 ? r : srv_reply_big(m, ud, PEER_BIGINOUT, peer_salt_inout_out);
}

static int
srv_ool(sd_bus_message *m, const struct srv *s, enum peer_row_id row, sd_bus_error *e)
{
	const void *p;
	size_t n;
	uint64_t sum;
	int r = sd_bus_message_read_array(m, 'y', &p, &n);

	if (r < 0)
		return r;
	if (peer_srv_ool(s->wrong, row, p, n, &sum) != 0)
		return sd_bus_error_setf(e, BENCH_BADDATA, "%s: %zu bytes, expected %zu",
					 peer_rows[row].name, n, peer_rows[row].payload);
	return sd_bus_reply_method_return(m, "t", sum);
}

static int
m_ool64k(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	return srv_ool(m, ud, PEER_OOL64K, e);
}

static int
m_ool1m(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	return srv_ool(m, ud, PEER_OOL1M, e);
}

/* bench.xml, as sd-bus declares it. */
static const sd_bus_vtable bench_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD_WITH_ARGS("Null", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, m_null, 0),
	SD_BUS_METHOD_WITH_ARGS("Add", SD_BUS_ARGS("i", a, "i", b), SD_BUS_RESULT("i", sum), m_add,
				0),
	SD_BUS_METHOD_WITH_ARGS("BigIn", SD_BUS_ARGS("ay", data), SD_BUS_NO_RESULT, m_bigin, 0),
	SD_BUS_METHOD_WITH_ARGS("BigOut", SD_BUS_NO_ARGS, SD_BUS_RESULT("ay", data), m_bigout, 0),
	SD_BUS_METHOD_WITH_ARGS("BigInOut", SD_BUS_ARGS("ay", data), SD_BUS_RESULT("ay", data),
				m_biginout, 0),
	SD_BUS_METHOD_WITH_ARGS("Ool64k", SD_BUS_ARGS("ay", data), SD_BUS_RESULT("t", sum),
				m_ool64k, 0),
	SD_BUS_METHOD_WITH_ARGS("Ool1m", SD_BUS_ARGS("ay", data), SD_BUS_RESULT("t", sum), m_ool1m,
				0),
	SD_BUS_VTABLE_END
};

static volatile sig_atomic_t srv_stop;

static void
srv_on_signal(int sig)
{
	(void)sig;
	srv_stop = 1;
}

/*
 * Waits until fd is ready for events or until the absolute CLOCK_MONOTONIC time `until` (µs,
 * UINT64_MAX: none). SIGTERM and SIGINT are blocked but while waiting here, so a signal ends a
 * wait and never interrupts sd-bus. Returns -1 when a signal asked the server to stop.
 */
static int
srv_wait(int fd, short events, uint64_t until, const sigset_t *waitmask)
{
	struct pollfd p = { fd, events, 0 };
	struct timespec ts, *tsp = NULL;

	if (until != UINT64_MAX) {
		double left = until / 1e3 - peer_now_ns() / 1e3;

		if (left < 0)
			left = 0;
		ts.tv_sec = (time_t)(left / 1e6);
		ts.tv_nsec = (long)((left - (double)ts.tv_sec * 1e6) * 1e3);
		tsp = &ts;
	}
	if (ppoll(&p, 1, tsp, waitmask) < 0 && errno != EINTR)
		return -1;
	return srv_stop ? -1 : 0;
}

/* Serves one connection until it ends (0) or a signal stops the server (-1). Takes fd. */
static int
srv_connection(int fd, struct srv *s, const sigset_t *waitmask)
{
	sd_bus *bus = NULL;
	sd_id128_t id;
	int r, stop = 0;

	if ((r = sd_bus_new(&bus)) < 0 || (r = sd_bus_set_fd(bus, fd, fd)) < 0) {
		close(fd);
		sd_bus_unref(bus);
		peer_err(&sdbus_info, "sd_bus_new: %s", strerror(-r));
		return 0;
	}
	if ((r = sd_id128_randomize(&id)) < 0 || (r = sd_bus_set_server(bus, 1, id)) < 0 ||
	    (r = sd_bus_set_anonymous(bus, 1)) < 0 ||
	    (r = sd_bus_add_object_vtable(bus, NULL, BENCH_PATH, BENCH_IFACE, bench_vtable, s)) <
		    0 ||
	    (r = sd_bus_start(bus)) < 0) {
		peer_err(&sdbus_info, "cannot start the connection: %s", strerror(-r));
		sd_bus_close_unref(bus);
		return 0;
	}
	for (;;) {
		uint64_t until;

		r = sd_bus_process(bus, NULL);
		if (r < 0 || sd_bus_is_open(bus) <= 0)
			break;
		if (r > 0)
			continue;
		if (sd_bus_get_timeout(bus, &until) < 0)
			until = UINT64_MAX;
		if (srv_wait(sd_bus_get_fd(bus), (short)sd_bus_get_events(bus), until, waitmask) !=
		    0) {
			stop = 1;
			break;
		}
	}
	/* No flush: the client is gone, or the server is stopping. */
	sd_bus_close_unref(bus);
	return stop ? -1 : 0;
}

static int
sdbus_serve(const struct peer_args *a)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	struct sigaction sa = { .sa_handler = srv_on_signal };
	struct srv s = { a->wrong };
	sigset_t waitmask;
	int lfd, status = 0;

	/* The handlers run only inside ppoll, where the mask lets the signals in. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigprocmask(SIG_SETMASK, NULL, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	memcpy(su.sun_path, a->addr.path, strlen(a->addr.path) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&su, sizeof su) != 0 || listen(lfd, 16) != 0) {
		peer_err(&sdbus_info, "%s: %s", a->addr.path, strerror(errno));
		return PEER_EXIT_FAILED;
	}
	peer_ready(&a->addr);
	while (!srv_stop) {
		int cfd;

		if (srv_wait(lfd, POLLIN, UINT64_MAX, &waitmask) != 0)
			break;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
				continue;
			peer_err(&sdbus_info, "accept: %s", strerror(errno));
			status = PEER_EXIT_FAILED;
			break;
		}
		if (srv_connection(cfd, &s, &waitmask) != 0)
			break;
	}
	close(lfd);
	unlink(a->addr.path);
	return status;
}

/* ---- The client ---- */

struct cli {
	sd_bus *bus;
	const struct peer_args *a;
	struct peer_data d;
	uint64_t timeout_us;
	/* --inflight: calls sent and answered, and the first failure's exit status */
	unsigned long sent, done, total;
	int status;
};

static const char *const cli_member[PEER_NROWS] = {
	[PEER_NULL] = "Null",	  [PEER_ADD] = "Add",		[PEER_BIGIN] = "BigIn",
	[PEER_BIGOUT] = "BigOut", [PEER_BIGINOUT] = "BigInOut", [PEER_OOL64K] = "Ool64k",
	[PEER_OOL1M] = "Ool1m",
};

/* The request of call i. */
static int
cli_request(struct cli *c, unsigned long i, sd_bus_message **out)
{
	sd_bus_message *m = NULL;
	int r = sd_bus_message_new_method_call(c->bus, &m, NULL, BENCH_PATH, BENCH_IFACE,
					       cli_member[c->a->row]);

	if (r < 0)
		return r;
	switch (c->a->row) {
	case PEER_ADD:
		r = sd_bus_message_append(m, "ii", (int32_t)i, (int32_t)1);
		break;
	case PEER_BIGIN:
		r = sd_bus_message_append_array(m, 'y', c->d.in, PEER_BIG);
		break;
	case PEER_BIGINOUT:
		r = sd_bus_message_append_array(m, 'y', c->d.inout, PEER_BIG);
		break;
	case PEER_OOL64K:
	case PEER_OOL1M:
		r = sd_bus_message_append_array(m, 'y', c->d.ool, c->d.ool_len);
		break;
	default:
		break;
	}
	if (r < 0) {
		sd_bus_message_unref(m);
		return r;
	}
	*out = m;
	return 0;
}

/* The exit status for a failed call: its error, or r. */
static int
cli_failed(struct cli *c, unsigned long i, const sd_bus_error *e, int r)
{
	const char *row = peer_rows[c->a->row].name;
	int err = e != NULL && sd_bus_error_is_set(e) ? sd_bus_error_get_errno(e) : -r;

	if (e != NULL && sd_bus_error_has_name(e, BENCH_BADDATA)) {
		peer_err(&sdbus_info, "%s call %lu: the server refused the data: %s", row, i,
			 e->message);
		return PEER_EXIT_WRONG;
	}
	if (err == ETIMEDOUT) {
		peer_err(&sdbus_info, "%s call %lu: timed out after %u ms", row, i,
			 c->a->timeout_ms);
		return PEER_EXIT_TIMEOUT;
	}
	peer_err(&sdbus_info, "%s call %lu: %s", row, i,
		 e != NULL && sd_bus_error_is_set(e) && e->message != NULL ? e->message
									   : strerror(err));
	return PEER_EXIT_FAILED;
}

/* Checks the answer of call i. */
static int
cli_check(struct cli *c, unsigned long i, sd_bus_message *reply)
{
	const char *row = peer_rows[c->a->row].name;
	const void *p;
	size_t n;
	int32_t sum;
	uint64_t osum;
	int r = 0;

	switch (c->a->row) {
	case PEER_ADD:
		r = sd_bus_message_read(reply, "i", &sum);
		if (r >= 0 && sum != (int32_t)(uint32_t)(i + 1u)) {
			peer_err(&sdbus_info, "add call %lu: wrong answer %d, expected %d", i, sum,
				 (int32_t)(uint32_t)(i + 1u));
			return PEER_EXIT_WRONG;
		}
		break;
	case PEER_BIGOUT:
	case PEER_BIGINOUT:
		r = sd_bus_message_read_array(reply, 'y', &p, &n);
		if (r >= 0 &&
		    (n != PEER_BIG ||
		     memcmp(p, c->a->row == PEER_BIGOUT ? c->d.out : c->d.inout_out, n) != 0)) {
			peer_err(&sdbus_info,
				 "%s call %lu: wrong answer (%zu bytes, not the pattern)", row, i,
				 n);
			return PEER_EXIT_WRONG;
		}
		break;
	case PEER_OOL64K:
	case PEER_OOL1M:
		r = sd_bus_message_read(reply, "t", &osum);
		if (r >= 0 && osum != c->d.ool_sum) {
			peer_err(&sdbus_info, "%s call %lu: wrong checksum %llu, expected %llu",
				 row, i, (unsigned long long)osum,
				 (unsigned long long)c->d.ool_sum);
			return PEER_EXIT_WRONG;
		}
		break;
	default:
		break;
	}
	if (r < 0) {
		peer_err(&sdbus_info, "%s call %lu: a malformed answer: %s", row, i, strerror(-r));
		return PEER_EXIT_WRONG;
	}
	return PEER_EXIT_OK;
}

/* One call at a time: sd_bus_call with the call's timeout. */
static int
cli_call(struct cli *c, unsigned long i)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	int r = cli_request(c, i, &m), status;

	if (r >= 0)
		r = sd_bus_call(c->bus, m, c->timeout_us, &e, &reply);
	status = r < 0 ? cli_failed(c, i, &e, r) : cli_check(c, i, reply);
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	return status;
}

static int cli_on_reply(sd_bus_message *reply, void *ud, sd_bus_error *ret);

static int
cli_send_async(struct cli *c)
{
	sd_bus_message *m = NULL;
	unsigned long i = c->sent;
	int r = cli_request(c, i, &m);

	/* The userdata is the call's number: the answer is checked against it. */
	if (r >= 0)
		r = sd_bus_call_async(c->bus, NULL, m, cli_on_reply, c, c->timeout_us);
	sd_bus_message_unref(m);
	if (r < 0)
		return cli_failed(c, i, NULL, r);
	c->sent++;
	return PEER_EXIT_OK;
}

static int
cli_on_reply(sd_bus_message *reply, void *ud, sd_bus_error *ret)
{
	struct cli *c = ud;
	/* Replies come in the order of the calls on one connection: the n-th answers call n. */
	unsigned long i = c->done++;
	int status;

	(void)ret;
	if (sd_bus_message_is_method_error(reply, NULL))
		status = cli_failed(c, i, sd_bus_message_get_error(reply), -EIO);
	else
		status = cli_check(c, i, reply);
	if (status == PEER_EXIT_OK && c->sent < c->total)
		status = cli_send_async(c);
	if (status != PEER_EXIT_OK && c->status == PEER_EXIT_OK)
		c->status = status;
	return 0;
}

/* n calls numbered from first, --inflight of them at a time. */
static int
cli_pipeline(struct cli *c, unsigned long first, unsigned long n)
{
	c->sent = c->done = first;
	c->total = first + n;
	c->status = PEER_EXIT_OK;
	while (c->sent < c->total && c->sent - first < c->a->inflight)
		if ((c->status = cli_send_async(c)) != PEER_EXIT_OK)
			return c->status;
	while (c->done < c->total && c->status == PEER_EXIT_OK) {
		int r = sd_bus_process(c->bus, NULL);

		if (r == 0)
			r = sd_bus_wait(c->bus, UINT64_MAX);
		if (r < 0 && r != -EINTR)
			return cli_failed(c, c->done, NULL, r);
	}
	return c->status;
}

static int
cli_connect(struct cli *c)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	double deadline = peer_now_ns() + c->a->timeout_ms * 1e6;
	int fd, r;

	memcpy(su.sun_path, c->a->addr.path, strlen(c->a->addr.path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&su, sizeof su) != 0) {
		peer_err(&sdbus_info, "connect %s: %s", c->a->addr.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return PEER_EXIT_FAILED;
	}
	/* Once sd_bus_set_fd has succeeded, the bus owns fd and closes it. */
	if ((r = sd_bus_new(&c->bus)) < 0 || (r = sd_bus_set_fd(c->bus, fd, fd)) < 0) {
		peer_err(&sdbus_info, "cannot create the connection: %s", strerror(-r));
		close(fd);
		return PEER_EXIT_FAILED;
	}
	if ((r = sd_bus_start(c->bus)) < 0) {
		peer_err(&sdbus_info, "cannot start the connection: %s", strerror(-r));
		return PEER_EXIT_FAILED;
	}
	/* The handshake, within the call timeout: sd_bus_call alone would wait for it as long
	 * as sd-bus's own authentication timeout. */
	while ((r = sd_bus_is_ready(c->bus)) == 0) {
		double left = deadline - peer_now_ns();

		if (left <= 0) {
			peer_err(&sdbus_info, "connect %s: no handshake within %u ms",
				 c->a->addr.path, c->a->timeout_ms);
			return PEER_EXIT_TIMEOUT;
		}
		if ((r = sd_bus_process(c->bus, NULL)) == 0)
			r = sd_bus_wait(c->bus, (uint64_t)(left / 1e3) + 1);
		if (r < 0 && r != -EINTR)
			break;
	}
	if (r < 0) {
		peer_err(&sdbus_info, "connect %s: %s", c->a->addr.path, strerror(-r));
		return PEER_EXIT_FAILED;
	}
	return PEER_EXIT_OK;
}

/* n calls numbered from first, one at a time or pipelined. */
static int
cli_calls(struct cli *c, unsigned long first, unsigned long n)
{
	int status = PEER_EXIT_OK;

	if (c->a->inflight > 1)
		return n == 0 ? PEER_EXIT_OK : cli_pipeline(c, first, n);
	for (unsigned long i = first; i < first + n && status == PEER_EXIT_OK; i++)
		status = cli_call(c, i);
	return status;
}

static int
sdbus_call(const struct peer_args *a)
{
	struct cli c = { .a = a, .timeout_us = (uint64_t)a->timeout_ms * 1000u };
	unsigned long next;
	int status;

	if (peer_data_init(&c.d, a->row, a->corrupt) != 0) {
		peer_err(&sdbus_info, "out of memory");
		return PEER_EXIT_FAILED;
	}
	status = cli_connect(&c);
	if (status == PEER_EXIT_OK)
		status = cli_calls(&c, 0, a->warmup);
	next = a->warmup;
	for (unsigned long k = 0; status == PEER_EXIT_OK && k < a->reps; k++) {
		double t0 = peer_now_ns();

		status = cli_calls(&c, next, a->iterations);
		if (status == PEER_EXIT_OK)
			peer_report(k, (peer_now_ns() - t0) / (double)a->iterations);
		next += a->iterations;
	}
	/* No flush: every call has its answer, and a flush would wait for a hung server. */
	sd_bus_close_unref(c.bus);
	peer_data_fini(&c.d);
	return status;
}

/* Prints the server's introspection data of BENCH_PATH. */
static int
sdbus_introspect(const char *address)
{
	struct peer_args a;
	struct cli c = { .a = &a };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *xml;
	int status;

	memset(&a, 0, sizeof a);
	a.timeout_ms = 10000;
	if (strncmp(address, "unix:", 5) != 0 || strlen(address + 5) >= sizeof a.addr.path) {
		peer_err(&sdbus_info, "introspect: expected unix:PATH");
		return PEER_EXIT_USAGE;
	}
	memcpy(a.addr.path, address + 5, strlen(address + 5) + 1);
	status = cli_connect(&c);
	if (status == PEER_EXIT_OK) {
		int r = sd_bus_call_method(c.bus, NULL, BENCH_PATH,
					   "org.freedesktop.DBus.Introspectable", "Introspect", &e,
					   &reply, NULL);

		if (r < 0 || sd_bus_message_read(reply, "s", &xml) < 0)
			status = cli_failed(&c, 0, &e, r < 0 ? r : -EBADMSG);
		else
			printf("%s", xml);
	}
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	sd_bus_close_unref(c.bus);
	return status;
}

int
main(int argc, char **argv)
{
	struct peer_args a;

	if (argc == 3 && strcmp(argv[1], "introspect") == 0) {
		peer_setup_client();
		return sdbus_introspect(argv[2]);
	}
	if (peer_parse(argc, argv, &sdbus_info, &a) != 0)
		return PEER_EXIT_USAGE;
	if (a.cmd == PEER_CMD_SERVE) {
		peer_setup_server();
		return sdbus_serve(&a);
	}
	if (a.cmd == PEER_CMD_CALL) {
		peer_setup_client();
		return sdbus_call(&a);
	}
	return PEER_EXIT_OK;
}
