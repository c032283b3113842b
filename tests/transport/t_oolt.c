/*
 * t_oolt.c - the dialect at run time over the transport, through tests/ool/oolt.defs and its
 * server (oolt-server, started on a second address of the suite's scheme): out-of-line data
 * each way with `dealloc`, where the server finds it (shm: in the shared region, unix: in a
 * passed memfd), ports in, out, polymorphic and in arrays (unix:) or the clear IDL_ENOTSUP
 * (the others), countinout, msgseqno, a deferred reply, waittime, out inline arrays of ports,
 * samecount refused by either side when the counts disagree, arrays of arrays, and no
 * descriptor or mapping left behind on either side after many calls, nor after refused
 * messages.
 */
#define _GNU_SOURCE /* pipe2, memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <idl/idl_dynamic.h>
#include <idl/idl_ool.h>

#include "tests/ool/oolt.h"
#include "../ool/oolt_util.h"
#include "conformance.h"

/* The largest datum the unix: transport carries inline, no descriptor passed: its
 * UNIX_INLINE_MAX (transports/unix/unix_impl.h). Larger data comes in a memfd. */
#define TT_UNIX_INLINE_MAX (64u * 1024u)

/* The mappings a server may gain over the leak case without leaking (tt_oolt_leaks). */
#ifdef __SANITIZE_THREAD__
#define TT_MAP_SLACK 48
#else
#define TT_MAP_SLACK 16
#endif
/* The mappings the client may gain: its allocator's, never the calls' (see tt_oolt_leaks). */
#define TT_CLIENT_MAP_SLACK 4
#include "ool/ool_cache.h"

#define TT_OOLT_READY_MS 10000

/* The oolt-server of the current suite. */
static struct {
	pid_t pid;
	int out;
	char address[600];
	int server_pid; /* as ping says */
} oo = { 0, -1, "", 0 };

static const char *
tt_oolt_path(void)
{
	const char *p = getenv("IDL_OOLT_SERVER");

	return p != NULL && *p != '\0' ? p : IDL_TOP_BUILDDIR "/tests/ool/oolt-server";
}

static int
tt_is(const char *scheme)
{
	return strcmp(tt.tr->scheme, scheme) == 0;
}

static void
tt_oolt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
}

/* A second address of the scheme, beside the suite's. */
static int
tt_oolt_address(void)
{
	int n;

	if (tt_is("unix") || tt_is("shm"))
		n = snprintf(oo.address, sizeof oo.address, "%s:%s/oolt.sock", tt.tr->scheme,
			     tt.dir);
	else if (tt.scheme->make_address(tt.dir, oo.address, sizeof oo.address) != 0)
		return -1;
	else
		n = 0;
	return n < 0 || (size_t)n >= sizeof oo.address ? -1 : 0;
}

void
tt_oolt_stop(void)
{
	int status;

	if (oo.pid > 0) {
		kill(oo.pid, SIGTERM);
		for (int i = 0; i < 1000 && waitpid(oo.pid, &status, WNOHANG) == 0; i++)
			tt_oolt_sleep_ms(10);
		if (kill(oo.pid, SIGKILL) == 0)
			waitpid(oo.pid, &status, 0);
		oo.pid = 0;
	}
	if (oo.out >= 0)
		close(oo.out);
	oo.out = -1;
	if (tt.scheme != NULL && tt.scheme->reclaim != NULL && oo.address[0] != '\0')
		tt.scheme->reclaim(oo.address);
	oo.address[0] = '\0';
}

/* Starts oolt-server for the suite if it is not running; returns a port to it. */
static idl_port_t
tt_oolt_open(void)
{
	char line[700];
	size_t len = 0;
	idl_port_t port = NULL;
	int fds[2], pid = 0;
	int64_t t0;

	if (oo.pid <= 0) {
		if (tt_oolt_address() != 0 || pipe2(fds, O_CLOEXEC) != 0) {
			CU_FAIL("cannot make an address for oolt-server");
			return NULL;
		}
		if ((oo.pid = fork()) == 0) {
			if (dup2(fds[1], STDOUT_FILENO) < 0)
				_exit(126);
			execl(tt_oolt_path(), "oolt-server", oo.address, (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		oo.out = fds[0];
		t0 = idl_now_ns();
		while (oo.pid > 0 && memchr(line, '\n', len) == NULL && len < sizeof line - 1) {
			struct pollfd p = { .fd = oo.out, .events = POLLIN };
			ssize_t n;

			if (tt_ms_since(t0) > TT_OOLT_READY_MS || poll(&p, 1, 100) < 0)
				break;
			if (!(p.revents & (POLLIN | POLLHUP)))
				continue;
			if ((n = read(oo.out, line + len, sizeof line - 1 - len)) <= 0)
				break;
			len += (size_t)n;
		}
		if (oo.pid < 0 || len < 6 || strncmp(line, "ready ", 6) != 0) {
			fprintf(stderr, "conformance: %s %s did not start\n", tt_oolt_path(),
				oo.address);
			CU_FAIL("oolt-server did not start");
			tt_oolt_stop();
			return NULL;
		}
	}
	TT_CHECK_KR(idl_port_open(oo.address, &port), 0);
	if (port == NULL)
		return NULL;
	idl_port_set_timeout(port, 10000);
	TT_CHECK_KR(oolt_ping(port, &pid), 0);
	oo.server_pid = pid;
	return port;
}

/* What each transport must say to a port: unix: carries it, the others refuse. */
static int
tt_port_kr(void)
{
	return tt_is("unix") ? 0 : IDL_ENOTSUP;
}

/* Data in (where: the server says where it found it), in with dealloc (sink), out with
 * dealloc (source), from the runtime's memory and from a caller's. */
static void
tt_oolt_data(void)
{
	static const size_t sizes[] = { 0,
					1,
					100,
					4095,
					16 * 1024 - 1,
					16 * 1024,
					40000,
					65536,
					100000,
					TT_UNIX_INLINE_MAX,
					TT_UNIX_INLINE_MAX + 1,
					1 << 20 };
	idl_port_t port = tt_oolt_open();

	if (port == NULL)
		return;
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t n = sizes[k];
		char *mem, *heap;
		int place = -1;
		int64_t sum = 0;
		pointer_t back = 0;
		mach_msg_type_number_t backCnt = 0;
		int want;

		if (tt_is("udp") && n > 40000)
			break; /* the datagram limit: t_ool.c has that error */
		heap = malloc(n + 1);
		mem = idl_ool_alloc_port(port, n);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
		CU_ASSERT_PTR_NOT_NULL_FATAL(heap);
		for (size_t i = 0; i < n; i++)
			mem[i] = heap[i] = oolt_pattern(i, (int)k);
		heap[n] = 'x';

		/* Where the server reads it: in place in the shared region over shm:, in the
		 * memfd the unix: transport passed for data above its inline limit (64 KiB
		 * comes inline, no descriptor passed), in its own memory else. */
		TT_CHECK_KR(
			oolt_where(port, (pointer_t)mem, (mach_msg_type_number_t)n, &place, &sum),
			0);
		CU_ASSERT_EQUAL(sum, oolt_sum(mem, n));
		want = n == 0					 ? OOLT_IN_NONE
		       : tt_is("shm")				 ? OOLT_IN_SHM
		       : tt_is("unix") && n > TT_UNIX_INLINE_MAX ? OOLT_IN_MEMFD
								 : OOLT_IN_PRIVATE;
		CU_ASSERT_EQUAL(place, want);
		if (place != want)
			fprintf(stderr,
				"conformance: %s: %zu bytes: the server found them in %d, "
				"not %d\n",
				tt.tr->scheme, n, place, want);
		/* A caller's buffer, not the runtime's: over shm: copied once into the region,
		 * still read in place there. */
		TT_CHECK_KR(oolt_where(port, (pointer_t)(heap + 1), (mach_msg_type_number_t)n,
				       &place, &sum),
			    0);
		CU_ASSERT_EQUAL(sum, oolt_sum(heap + 1, n));
		CU_ASSERT_EQUAL(place, want);
		/* shm: the runtime's memory for this port lies in the connection's region. */
		if (tt_is("shm") && n != 0)
			CU_ASSERT_EQUAL(oolt_place(mem), OOLT_IN_SHM);

		/* Given away: the runtime releases it once sent (a mapping of its own goes, or
		 * waits in the process's cache of out-of-line blocks for the next one). */
		TT_CHECK_KR(oolt_sink(port, (pointer_t)mem, (mach_msg_type_number_t)n, &sum), 0);
		CU_ASSERT_EQUAL(sum, oolt_sum(heap, n));
		if (n >= 16384 && !tt_is("shm"))
			CU_ASSERT(oolt_place(mem) == OOLT_IN_NONE ||
				  idl__ool_cache_state(mem) == IDL__OOL_CACHE_CACHED);

		/* Out, given away by the server: the caller owns what came. */
		TT_CHECK_KR(oolt_source(port, (int)n, (int)k, &back, &backCnt), 0);
		CU_ASSERT_EQUAL(backCnt, n);
		if (backCnt == n) {
			CU_ASSERT(n == 0 || memcmp((void *)back, heap, n) == 0);
			if (tt_is("unix") && n != 0)
				CU_ASSERT_EQUAL(oolt_place((void *)back),
						n > TT_UNIX_INLINE_MAX ? OOLT_IN_MEMFD
								       : OOLT_IN_PRIVATE);
			if (n != 0 && tt_is("shm"))
				CU_ASSERT_EQUAL(oolt_place((void *)back), OOLT_IN_SHM);
		}
		idl_ool_free((void *)back, backCnt);
		free(heap);
	}
	if (tt_is("udp")) {
		pointer_t back = 0;
		mach_msg_type_number_t backCnt = 0;

		/* A reply too large for a datagram: the server's transport says so instead. */
		TT_CHECK_KR(oolt_source(port, 70000, 1, &back, &backCnt), IDL_EMSGSIZE);
		CU_ASSERT_EQUAL(back, 0);
	}
	idl_port_close(port);
}

/* Ports in, out, polymorphic, in arrays: unix: carries them; the others say they cannot. */
static void
tt_oolt_ports(void)
{
	idl_port_t port = tt_oolt_open(), q = NULL, got_port = NULL;
	mach_port_t arr[3];
	mach_msg_type_name_t qPoly = 0;
	int pid = -1, got = -1, n = -1;

	if (port == NULL)
		return;
	/* In: the server calls back through the port it was given. */
	TT_CHECK_KR(oolt_give(port, port, &pid), tt_port_kr());
	if (tt_port_kr() == 0) {
		CU_ASSERT_EQUAL(pid, oo.server_pid);
	} else {
		CU_ASSERT_PTR_NOT_NULL(strstr(idl_errdetail(), "port"));
	}
	TT_CHECK_KR(oolt_give(port, MACH_PORT_NULL, &pid), tt_port_kr());
	if (tt_port_kr() == 0)
		CU_ASSERT_EQUAL(pid, 0);

	/* Out: a port to the server itself. */
	TT_CHECK_KR(oolt_take(port, &got_port), tt_port_kr());
	if (tt_port_kr() == 0 && got_port != NULL) {
		TT_CHECK_KR(oolt_ping(got_port, &pid), 0);
		CU_ASSERT_EQUAL(pid, oo.server_pid);
		CU_ASSERT_PTR_NOT_NULL(strstr(idl_port_address(got_port), "oolt.sock"));
		idl_port_close(got_port);
	}

	/* Polymorphic: sent as a copied send right, told as a moved one (MIG's received
	 * name), and back moved. */
	TT_CHECK_KR(oolt_poly(port, port, MACH_MSG_TYPE_COPY_SEND, &got, &q, &qPoly), tt_port_kr());
	if (tt_port_kr() == 0) {
		CU_ASSERT_EQUAL(got, MACH_MSG_TYPE_MOVE_SEND);
		CU_ASSERT_EQUAL(qPoly, MACH_MSG_TYPE_MOVE_SEND);
		CU_ASSERT_PTR_NOT_NULL_FATAL(q);
		TT_CHECK_KR(oolt_ping(q, &pid), 0);
		CU_ASSERT_EQUAL(pid, oo.server_pid);
		idl_port_close(q);
	}

	/* An array with a null port in it. */
	arr[0] = port;
	arr[1] = MACH_PORT_NULL;
	arr[2] = port;
	TT_CHECK_KR(oolt_ports(port, arr, 3, &n), tt_port_kr());
	if (tt_port_kr() == 0)
		CU_ASSERT_EQUAL(n, 2 + 1000);
	/* The caller's ports are its own still (copied, not moved). */
	TT_CHECK_KR(oolt_ping(port, &pid), 0);
	idl_port_close(port);
}

/* The routine called `name` in oolt's table. */
static const struct idl_routine_desc *
tt_oolt_routine(const char *name)
{
	for (uint32_t n = 0; n < oolt_subsystem.nroutines; n++)
		if (oolt_subsystem.routines[n].name != NULL &&
		    strcmp(oolt_subsystem.routines[n].name, name) == 0)
			return &oolt_subsystem.routines[n];
	CU_FAIL("no such routine in oolt.defs");
	return NULL;
}

/* Out inline arrays of ports (unix:, the others refuse), one count for two arrays
 * (samecount), counts that disagree refused by the server and by the client, and a variable
 * array of fixed arrays there and back. */
static void
tt_oolt_mig(void)
{
	idl_port_t port = tt_oolt_open();
	const struct idl_routine_desc *tally = tt_oolt_routine("tally");
	mach_port_t ports[8], pair[2] = { NULL, NULL };
	natural_t tags[8], a[4] = { 1, 2, 3, 4 }, b[4] = { 10, 20, 30, 40 };
	mach_msg_type_number_t n = 8;
	oolt_range_t in[3] = { { 1, 2 }, { 3, 4 }, { 5, 6 } }, back[16];
	int pid = -1, sum = -1;

	if (port == NULL || tally == NULL) {
		idl_port_close(port);
		return;
	}
	/* Five copies of the server's port (the third a null port) and their tags: each copy
	 * reaches the server. */
	memset(ports, 0, sizeof ports);
	TT_CHECK_KR(oolt_handlers(port, 5, tags, &n, ports), tt_port_kr());
	if (tt_port_kr() == 0) {
		CU_ASSERT_EQUAL(n, 5);
		for (unsigned i = 0; i < 5 && i < n; i++) {
			CU_ASSERT_EQUAL(tags[i], 100 + i);
			if (i % 3 == 2) {
				CU_ASSERT_PTR_NULL(ports[i]);
				continue;
			}
			CU_ASSERT_PTR_NOT_NULL_FATAL(ports[i]);
			TT_CHECK_KR(oolt_ping(ports[i], &pid), 0);
			CU_ASSERT_EQUAL(pid, oo.server_pid);
			idl_port_close(ports[i]);
		}
		/* Room for two of five: two copied, the rest released, the true count. */
		n = 2;
		memset(ports, 0, sizeof ports);
		TT_CHECK_KR(oolt_handlers(port, 5, tags, &n, ports), MIG_ARRAY_TOO_LARGE);
		CU_ASSERT_EQUAL(n, 5);
		CU_ASSERT_PTR_NULL(ports[2]);
		for (unsigned i = 0; i < 2; i++) {
			CU_ASSERT_PTR_NOT_NULL_FATAL(ports[i]);
			TT_CHECK_KR(oolt_ping(ports[i], &pid), 0);
			idl_port_close(ports[i]);
		}
	}
	/* More than the arrays hold: the server stub refuses to send it. */
	n = 8;
	TT_CHECK_KR(oolt_handlers(port, 9, tags, &n, ports), MIG_ARRAY_TOO_LARGE);
	TT_CHECK_KR(oolt_pair(port, pair), tt_port_kr());
	if (tt_port_kr() == 0) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(pair[0]);
		CU_ASSERT_PTR_NULL(pair[1]);
		TT_CHECK_KR(oolt_ping(pair[0], &pid), 0);
		CU_ASSERT_EQUAL(pid, oo.server_pid);
		idl_port_close(pair[0]);
	}

	/* samecount in: one count for both; counts that disagree are refused by the server
	 * (a request built by hand, its lengths still adding up) and by idl_msg_pack. */
	TT_CHECK_KR(oolt_tally(port, a, 4, b, &sum), 0);
	CU_ASSERT_EQUAL(sum, 110);
	TT_CHECK_KR(oolt_tally(port, a, 9, b, &sum), MIG_ARRAY_TOO_LARGE);
	{
		union {
			idl_msg_header_t head;
			uint64_t align;
			unsigned char b[256];
		} rq, rp;
		struct idl_arg_value vals[4] = { { NULL, 0 }, { a, 4 }, { b, 4 }, { NULL, 0 } };
		uint32_t cnt;

		CU_ASSERT_EQUAL_FATAL(tally->nargs, 4);
		CU_ASSERT(idl_msg_pack(tally, 0, vals, &rq.head, sizeof rq) > 0);
		TT_CHECK_KR(idl_call(port, &oolt_subsystem, tally->number, &rq.head, &rp.head,
				     sizeof rp, 5000),
			    0);
		CU_ASSERT(rp.head.size == tally->rep_fixed);
		cnt = 6;
		memcpy(rq.b + tally->args[1].req_offset, &cnt, sizeof cnt);
		cnt = 2;
		memcpy(rq.b + tally->args[2].req_offset, &cnt, sizeof cnt);
		TT_CHECK_KR(idl_call(port, &oolt_subsystem, tally->number, &rq.head, &rp.head,
				     sizeof rp, 5000),
			    MIG_BAD_ARGUMENTS);
		vals[2].count = 3;
		TT_CHECK_KR(idl_msg_pack(tally, 0, vals, &rq.head, sizeof rq), IDL_EINVAL);
	}
	/* samecount out: a reply whose counts agree is taken, one whose counts disagree is
	 * refused by the client stub. */
	n = 8;
	memset(tags, 0, sizeof tags);
	memset(a, 0, sizeof a);
	TT_CHECK_KR(oolt_counts(port, 4, 0, tags, &n, a), 0);
	CU_ASSERT(n == 4 && tags[3] == 13 && a[3] == 23);
	n = 8;
	TT_CHECK_KR(oolt_counts(port, 4, 1, tags, &n, a), MIG_TYPE_ERROR);

	/* Ranges there and back: reversed, each start and end swapped. */
	n = 16;
	memset(back, 0, sizeof back);
	TT_CHECK_KR(oolt_ranges(port, in, 3, back, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT(back[0].start == 6 && back[0].end == 5 && back[2].start == 2 && back[2].end == 1);
	TT_CHECK_KR(oolt_ranges(port, in, 17, back, &n), MIG_ARRAY_TOO_LARGE);
	/* The connection serves on after all this. */
	TT_CHECK_KR(oolt_ping(port, &pid), 0);
	CU_ASSERT_EQUAL(pid, oo.server_pid);
	idl_port_close(port);
}

/* Empty arrays passed as NULL, 0 (no buffer: nothing to send, no room for anything back)
 * in every shape the dialect has: out of line in, with and without dealloc; a samecount
 * pair in; a variable array in and its reply copied into no buffer; countinout with no room.
 * The stubs must not give memcpy that NULL, not even for zero bytes. */
static void
tt_oolt_empty(void)
{
	idl_port_t port = tt_oolt_open();
	mach_msg_type_number_t n = 0;
	int place = -1, sum = -1;
	int64_t sum64 = -1;

	if (port == NULL)
		return;
	TT_CHECK_KR(oolt_where(port, 0, 0, &place, &sum64), 0);
	CU_ASSERT_EQUAL(place, OOLT_IN_NONE);
	CU_ASSERT_EQUAL(sum64, 0);
	sum64 = -1;
	TT_CHECK_KR(oolt_sink(port, 0, 0, &sum64), 0);
	CU_ASSERT_EQUAL(sum64, 0);
	TT_CHECK_KR(oolt_tally(port, NULL, 0, NULL, &sum), 0);
	CU_ASSERT_EQUAL(sum, 0);
	TT_CHECK_KR(oolt_ranges(port, NULL, 0, NULL, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	n = 0;
	TT_CHECK_KR(oolt_counted(port, NULL, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	TT_CHECK_KR(oolt_ping(port, &place), 0);
	CU_ASSERT_EQUAL(place, oo.server_pid);
	idl_port_close(port);
}

/* countinout, msgseqno, a deferred reply, waittime. */
static void
tt_oolt_special(void)
{
	idl_port_t port = tt_oolt_open();
	natural_t vals[64];
	mach_msg_type_number_t cnt;
	int s1 = 0, s2 = 0, y = 0;
	int64_t t0;

	if (port == NULL)
		return;
	for (unsigned room = 0; room <= 64; room += 16) {
		memset(vals, 0xff, sizeof vals);
		cnt = room;
		TT_CHECK_KR(oolt_counted(port, vals, &cnt), 0);
		CU_ASSERT_EQUAL(cnt, room);
		for (unsigned i = 0; i < cnt && i < 64; i++)
			CU_ASSERT_EQUAL(vals[i], 3 * i);
		if (room < 64)
			CU_ASSERT_EQUAL(vals[room], 0xffffffffu);
	}

	/* Two calls in a row on one port: consecutive sequence numbers. */
	TT_CHECK_KR(oolt_seq(port, &s1), 0);
	TT_CHECK_KR(oolt_seq(port, &s2), 0);
	CU_ASSERT_EQUAL((uint32_t)s2, (uint32_t)s1 + 1);

	/* Deferred: the reply comes from another thread of the server, later. */
	t0 = idl_now_ns();
	TT_CHECK_KR(oolt_later(port, 21, 50, &y), 0);
	CU_ASSERT_EQUAL(y, 42);
	CU_ASSERT(tt_ms_since(t0) >= 45);
	TT_CHECK_KR(oolt_later(port, 5, 1, &y), 0);
	CU_ASSERT_EQUAL(y, 10);

	/* waittime: this call's own deadline, whatever the port's. */
	t0 = idl_now_ns();
	TT_CHECK_KR(oolt_slow(port, 150, 1500), IDL_ETIMEDOUT);
	CU_ASSERT(tt_ms_since(t0) >= 140 && tt_ms_since(t0) < 1400);
	TT_CHECK_KR(oolt_slow(port, 5000, 10), 0);
	/* The late reply of the call that timed out is dropped, not taken for this one. */
	tt_oolt_sleep_ms(1500);
	TT_CHECK_KR(oolt_seq(port, &s1), 0);
	idl_port_close(port);
}

/* The server's descriptors and mappings, once they settle (connections that ended are
 * cleaned up by its accept loop a moment later). */
static void
tt_oolt_server_census(idl_port_t port, int want_fds, int want_maps, int *fds, int *maps)
{
	for (int i = 0; i < 100; i++) {
		TT_CHECK_KR(oolt_stats(port, fds, maps), 0);
		if (*fds == want_fds && *maps == want_maps)
			return;
		tt_oolt_sleep_ms(20);
	}
}

/* The server's descriptors and mappings once they stop changing (connections of earlier
 * cases may still be ending). */
static void
tt_oolt_settled(idl_port_t port, int *fds, int *maps)
{
	int f2 = -1, m2 = -1;

	TT_CHECK_KR(oolt_stats(port, fds, maps), 0);
	for (int i = 0; i < 40 && (f2 != *fds || m2 != *maps); i++) {
		if (i != 0) {
			*fds = f2;
			*maps = m2;
		}
		tt_oolt_sleep_ms(50);
		TT_CHECK_KR(oolt_stats(port, &f2, &m2), 0);
	}
}

/* Many calls of each kind: neither side keeps a descriptor or a mapping. */
static void
tt_oolt_leaks(void)
{
	idl_port_t port = tt_oolt_open();
	size_t big = tt_is("udp") ? 30000 : 300000;
	int sfd0, smap0, sfd1, smap1, cfd0, cmap0, cfd1, cmap1, pid;
	char *heap = malloc(big);

	if (port == NULL || heap == NULL) {
		free(heap);
		idl_port_close(port);
		return;
	}
	memset(heap, 'h', big);
	/* A warm-up round (the server's allocator makes its arenas as its threads first
	 * need them), then the counts, then a round twice as long: a leak grows with it. */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < (round == 0 ? 3 : round == 1 ? 50 : 100); i++) {
			char *mem = idl_ool_alloc_port(port, big);
			pointer_t back = 0;
			mach_msg_type_number_t backCnt = 0;
			idl_port_t p = NULL;
			mach_port_t ports[8];
			natural_t tags[8];
			mach_msg_type_number_t tagsCnt = 2;
			int place;
			int64_t sum;

			CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
			TT_CHECK_KR(oolt_where(port, (pointer_t)heap, (mach_msg_type_number_t)big,
					       &place, &sum),
				    0);
			TT_CHECK_KR(
				oolt_sink(port, (pointer_t)mem, (mach_msg_type_number_t)big, &sum),
				0);
			TT_CHECK_KR(oolt_source(port, (int)big, i, &back, &backCnt), 0);
			idl_ool_free((void *)back, backCnt);
			TT_CHECK_KR(oolt_give(port, port, &pid), tt_port_kr());
			TT_CHECK_KR(oolt_take(port, &p), tt_port_kr());
			idl_port_close(p);
			/* The server stub's buffer of ports goes once sent, the client's copy
			 * once copied; the ports that do not fit are closed. */
			TT_CHECK_KR(oolt_handlers(port, 4, tags, &tagsCnt, ports),
				    tt_port_kr() == 0 ? MIG_ARRAY_TOO_LARGE : IDL_ENOTSUP);
			for (unsigned k = 0; tt_port_kr() == 0 && k < 2; k++)
				idl_port_close(ports[k]);
		}
		if (round == 1) {
			tt_ool_census(&cfd0, &cmap0);
			tt_oolt_settled(port, &sfd0, &smap0);
		}
	}
	tt_ool_census(&cfd1, &cmap1);
	tt_oolt_server_census(port, sfd0, smap0, &sfd1, &smap1);
	/* A leak grows with the calls; the server may have finished ending a connection of
	 * an earlier case meanwhile, so fewer is no leak. On the client, a library's own
	 * allocator may give back a mapping it held (OpenSSL's record buffers, the sanitizers'
	 * quarantine): fewer mappings are no leak either. AddressSanitizer's allocator maps a
	 * region when a size class first fills, which measured one more mapping after the
	 * longer round in one run of four: four of slack, where a leak over a hundred calls
	 * would be tens. */
	CU_ASSERT_EQUAL(cfd1, cfd0);
	CU_ASSERT(cmap1 <= cmap0 + TT_CLIENT_MAP_SLACK);
	CU_ASSERT(sfd1 <= sfd0);
	/* glibc gives a thread its own malloc arena (a heap mapping and its guard) the first
	 * time it allocates, and the server's receiving threads come and go with connections
	 * (each port passed is one): sixteen mappings of slack, still far less than a leak
	 * over a hundred calls. ThreadSanitizer maps its own per-thread state for them too:
	 * there the growth measured 0 to 17 from run to run of the same tree, so it gets
	 * forty-eight. */
	CU_ASSERT(smap1 <= smap0 + TT_MAP_SLACK);
	if (cfd1 != cfd0 || cmap1 > cmap0 + TT_CLIENT_MAP_SLACK || sfd1 > sfd0 ||
	    smap1 > smap0 + TT_MAP_SLACK)
		fprintf(stderr,
			"conformance: %s: client %d/%d fds %d/%d maps, server %d/%d fds "
			"%d/%d maps (before/after)\n",
			tt.tr->scheme, cfd0, cfd1, cmap0, cmap1, sfd0, sfd1, smap0, smap1);
	free(heap);
	idl_port_close(port);
}

/* A raw unix: packet with file descriptors and what its header says. */
static int
tt_oolt_raw_send(int s, const void *msg, size_t len, const int *fds, unsigned nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} cm;
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds != 0) {
		struct cmsghdr *ch;

		memset(&cm, 0, sizeof cm);
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		ch = CMSG_FIRSTHDR(&mh);
		ch->cmsg_level = SOL_SOCKET;
		ch->cmsg_type = SCM_RIGHTS;
		ch->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(ch), fds, sizeof(int) * nfds);
	}
	return sendmsg(s, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* unix: messages that carry file descriptors and are refused - a bad index, a memfd that
 * is not sealed, descriptors no descriptor names, descriptors on a message without any -
 * leave none of them open in the server. */
static void
tt_oolt_refused_fds(void)
{
	struct {
		idl_msg_header_t h;
		idl_desc_t d;
	} m;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	idl_port_t port;
	int fds0, maps0, fds1, maps1, fds[3];

	if (!tt_is("unix") || (port = tt_oolt_open()) == NULL)
		return;
	tt_oolt_settled(port, &fds0, &maps0);
	if (strlen(oo.address) - strlen("unix:") >= sizeof sa.sun_path) {
		CU_FAIL("socket path too long");
		idl_port_close(port);
		return;
	}
	memcpy(sa.sun_path, oo.address + strlen("unix:"), strlen(oo.address) - strlen("unix:"));
	for (int kind = 0; kind < 4; kind++) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		char b;

		CU_ASSERT_FATAL(s >= 0);
		CU_ASSERT_FATAL(connect(s, (struct sockaddr *)&sa, sizeof sa) == 0);
		memset(&m, 0, sizeof m);
		m.h.magic = IDL_MSG_MAGIC;
		m.h.order = IDL_ORDER_NATIVE;
		m.h.kind = IDL_KIND_REQUEST;
		m.h.flags = IDL_MSGF_DESC;
		m.h.size = sizeof m;
		m.h.id = 7300;
		m.h.ndesc = 1;
		m.d.type = IDL_DESC_OOL;
		m.d.size = 20000;
		m.d.aux = 1; /* in a memfd */
		m.d.addr = kind == 0 ? 7 : 0; /* kind 0: an index past the three passed */
		fds[0] = memfd_create("tt-unsealed", MFD_CLOEXEC);
		fds[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		fds[2] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		CU_ASSERT_FATAL(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0);
		CU_ASSERT(ftruncate(fds[0], 20000) == 0);
		if (kind == 3) /* no descriptors at all, just file descriptors */
			m.h.flags = 0;
		CU_ASSERT(tt_oolt_raw_send(s, &m, sizeof m, fds, kind == 2 ? 1 : 3) == 0);
		for (int i = 0; i < 3; i++)
			close(fds[i]);
		/* A refused message ends the connection; a message without descriptors is
		 * answered (refused for want of a hello). Either way the server is done. */
		(void)!recv(s, &b, 1, 0);
		close(s);
	}
	/* Descriptors only: each refused connection had a thread, and the C library keeps the
	 * stacks of ended threads mapped for the next ones. */
	tt_oolt_server_census(port, fds0, maps0, &fds1, &maps1);
	CU_ASSERT(fds1 <= fds0);
	if (fds1 > fds0)
		fprintf(stderr, "conformance: unix: refused messages left %d descriptors open\n",
			fds1 - fds0);
	idl_port_close(port);
}

const struct tt_case tt_oolt_cases[] = {
	{ "dialect: out-of-line data", tt_oolt_data },
	{ "dialect: ports", tt_oolt_ports },
	{ "dialect: countinout, msgseqno, deferred, waittime", tt_oolt_special },
	{ "MIG: out inline ports, samecount, arrays of arrays", tt_oolt_mig },
	{ "dialect: empty arrays as NULL, 0", tt_oolt_empty },
	{ "dialect: no leaks", tt_oolt_leaks },
	{ "dialect: refused descriptors", tt_oolt_refused_fds },
	{ NULL, NULL },
};
