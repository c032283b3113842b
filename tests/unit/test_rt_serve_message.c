/*
 * test_rt_serve_message.c - idl_server_serve_message(): one message given as bytes reaches
 * the demux only through the checks a receiving thread makes, and its reply comes back.
 * The server is the fixture's (rt_fixture.h); requests are packed from its table. Its
 * replies then reach idl_call() through idl_port_open_memory(), and calls in flight too.
 */
#include <dirent.h>
#include <poll.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include <idl/idl_async.h>
#include <idl/idl_dynamic.h>

#include "rt_fixture.h"

static idl_server_t *sm_srv;

union sm_buf {
	idl_msg_header_t h;
	unsigned char b[4096];
};

static int
sm_init(void)
{
	if (idl_server_create(&sm_srv) != 0 ||
	    idl_server_add_subsystem(sm_srv, &rtt_subsystem, rtt_server) != 0 ||
	    idl_server_set_log(sm_srv, NULL, NULL) != 0)
		return -1;
	return 0;
}

static int
sm_clean(void)
{
	idl_server_destroy(sm_srv);
	return 0;
}

/* The request of routine `number` of ss with the given int arguments after the port. */
static size_t
sm_request(const struct idl_subsystem *ss, uint32_t number, const int *ints, union sm_buf *buf)
{
	const struct idl_routine_desc *rt = &ss->routines[number];
	static const idl_port_t null_port;
	struct idl_arg_value vals[8];
	unsigned k = 0;
	int n;

	memset(vals, 0, sizeof vals);
	for (unsigned i = 0; i < rt->nargs && i < 8; i++) {
		if (rt->args[i].kind == IDL_ARG_PORT) {
			vals[i].data = &null_port;
			vals[i].count = 1;
		} else if (rt->args[i].dir == IDL_DIR_IN) {
			vals[i].data = &ints[k++];
			vals[i].count = 1;
		}
	}
	n = idl_msg_pack(rt, 0, vals, &buf->h, sizeof *buf);
	CU_ASSERT_FATAL(n > 0);
	buf->h.magic = IDL_MSG_MAGIC;
	buf->h.order = IDL_ORDER_NATIVE;
	buf->h.kind = rt->kind == IDL_RT_ROUTINE ? IDL_KIND_REQUEST : IDL_KIND_ONEWAY;
	buf->h.id = (int32_t)(ss->base + (int32_t)number);
	buf->h.seqno = 77;
	return (size_t)n;
}

/* A valid request runs the routine, and the reply carries its result. */
static void
test_sm_add(void)
{
	const struct idl_routine_desc *rt = &rtt_subsystem.routines[RTT_ADD];
	union sm_buf req, rep;
	struct idl_arg_span spans[8];
	int ab[2] = { 20, 22 }, sum = 0;
	size_t n = 1, len = sm_request(&rtt_subsystem, RTT_ADD, ab, &req);

	CU_ASSERT_EQUAL_FATAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL_FATAL(rep.h.retcode, 0);
	CU_ASSERT_EQUAL(n, rep.h.size);
	CU_ASSERT_EQUAL(rep.h.seqno, 77);
	CU_ASSERT_EQUAL(rep.h.id, RTT_BASE + RTT_ADD + IDL_REPLY_ID_OFFSET);
	CU_ASSERT_EQUAL_FATAL(idl_msg_check(rt, &rep.h, n, 1, spans), 0);
	memcpy(&sum, rep.b + spans[3].off, sizeof sum);
	CU_ASSERT_EQUAL(sum, 42);
	/* The caller's bytes are left as they were. */
	CU_ASSERT_EQUAL(req.h.seqno, 77);
}

/* What a server refuses before the demux is refused here too, with its reply. */
static void
test_sm_refused(void)
{
	union sm_buf req, rep;
	int ab[2] = { 1, 2 };
	size_t n = 0, len = sm_request(&rtt_subsystem, RTT_ADD, ab, &req);

	req.h.id = RTT_BASE + 900; /* no such routine */
	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL(n, IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(rep.h.retcode, MIG_BAD_ID);

	req.h.id = RTT_BASE + RTT_SKIP;
	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL(rep.h.retcode, MIG_BAD_ID);

	len = sm_request(&rtt_subsystem, RTT_ADD, ab, &req);
	req.h.size += 8; /* disagrees with the bytes given */
	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL(rep.h.retcode, IDL_EPROTO);

	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, &req, 10, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL(n, IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(rep.h.retcode, IDL_EPROTO);
}

/* Descriptors a transport would not accept: refused as a transport refuses them, with an
 * IDL_EPROTO reply to the request's id and sequence number. */
static void
test_sm_bad_desc(void)
{
	union sm_buf req, rep;
	int ab[2] = { 1, 2 };
	size_t n = 1, len = sm_request(&rtt_subsystem, RTT_ADD, ab, &req);

	req.h.flags |= IDL_MSGF_DESC;
	req.h.ndesc = 1000;
	req.h.seqno = 77;
	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL(n, IDL_MSG_HEADER_SIZE);
	CU_ASSERT_EQUAL(rep.h.retcode, IDL_EPROTO);
	CU_ASSERT_EQUAL(rep.h.seqno, 77);
	CU_ASSERT_EQUAL(rep.h.id, req.h.id + (int32_t)IDL_REPLY_ID_OFFSET);
	CU_ASSERT_EQUAL(rep.h.flags, 0);
}

/* A one-way message runs its routine and gets no reply. */
static void
test_sm_oneway(void)
{
	union sm_buf req, rep;
	int v[1] = { 5 };
	int before = rtt_notified;
	size_t n = 1, len = sm_request(&rtt_subsystem, RTT_NOTIFY, v, &req);

	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(rtt_notified, before + 5);
}

/* The caller's mistakes. */
static void
test_sm_args(void)
{
	union sm_buf req, rep;
	int ab[2] = { 1, 2 };
	size_t n = 1, len = sm_request(&rtt_subsystem, RTT_ADD, ab, &req);

	CU_ASSERT_EQUAL(idl_server_serve_message(NULL, &req, len, &rep, sizeof rep, &n),
			IDL_EINVAL);
	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, NULL, len, &rep, sizeof rep, &n),
			IDL_EINVAL);
	/* A reply that does not fit is not copied. */
	CU_ASSERT_EQUAL(idl_server_serve_message(sm_srv, &req, len, &rep, 8, &n), IDL_EMSGSIZE);
	CU_ASSERT_EQUAL(n, 0);
}

/* A port of idl_port_open_memory() takes a server's reply from memory as the reply to its
 * call, whatever sequence number it carried; a second wait times out; bytes that are no
 * reply are refused by the client's checks; the caller's mistakes. */
static void
test_sm_memory_port(void)
{
	const struct idl_routine_desc *rt = &rtt_subsystem.routines[RTT_ADD];
	struct idl_reply_source src = { &rtt_subsystem, NULL, 0 };
	struct idl_arg_span spans[8];
	union sm_buf req, rep, got;
	int ab[2] = { 20, 22 }, sum = 0;
	idl_port_t port = NULL;
	size_t n = 0, len = sm_request(&rtt_subsystem, RTT_ADD, ab, &req);

	CU_ASSERT_EQUAL_FATAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL(idl_port_open_memory(NULL, &port), IDL_EINVAL);
	CU_ASSERT_EQUAL_FATAL(idl_port_open_memory(&src, &port), 0);
	CU_ASSERT_EQUAL(strncmp(idl_port_address(port), "memory:", 7), 0);

	src.data = &rep;
	src.len = n;
	sm_request(&rtt_subsystem, RTT_ADD, ab, &req);
	memset(&got, 0, sizeof got);
	CU_ASSERT_EQUAL_FATAL(
		idl_call(port, &rtt_subsystem, RTT_ADD, &req.h, &got.h, sizeof got, 1000), 0);
	CU_ASSERT_PTR_NULL(src.data);
	CU_ASSERT_EQUAL_FATAL(idl_msg_check(rt, &got.h, got.h.size, 1, spans), 0);
	memcpy(&sum, got.b + spans[3].off, sizeof sum);
	CU_ASSERT_EQUAL(sum, 42);

	/* No reply given: the call times out. */
	sm_request(&rtt_subsystem, RTT_ADD, ab, &req);
	CU_ASSERT_EQUAL(idl_call(port, &rtt_subsystem, RTT_ADD, &req.h, &got.h, sizeof got, 1000),
			IDL_ETIMEDOUT);

	/* A reply with a wrong magic is no reply: the call fails and says why. */
	rep.h.magic ^= 0xffu;
	src.data = &rep;
	src.len = n;
	sm_request(&rtt_subsystem, RTT_ADD, ab, &req);
	CU_ASSERT_NOT_EQUAL(
		idl_call(port, &rtt_subsystem, RTT_ADD, &req.h, &got.h, sizeof got, 1000), 0);
	idl_port_close(port);
}

/* What the completion of a call in flight on a memory port saw. */
static struct {
	int runs, kr, sum;
} sm_done;

static void
sm_complete(void *done, void *ctx, int kr, idl_msg_header_t *rep)
{
	struct idl_arg_span spans[8];

	(void)done;
	(void)ctx;
	sm_done.runs++;
	sm_done.kr = kr;
	if (kr == 0 &&
	    idl_msg_check(&rtt_subsystem.routines[RTT_ADD], rep, rep->size, 1, spans) == 0)
		memcpy(&sm_done.sum, (unsigned char *)rep + spans[3].off, sizeof sm_done.sum);
}

/* The threads of this process, from /proc. */
static int
sm_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d != NULL && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d != NULL)
		closedir(d);
	return n;
}

static int
sm_readable(idl_port_t port)
{
	struct pollfd pf = { idl_port_fd(port), POLLIN, 0 };

	return poll(&pf, 1, 0) == 1;
}

/* Calls in flight on a memory port are driven by its dispatch on the calling thread (the
 * transport has the event operations): the hello, then the request, then the source's reply
 * completes the call once; without a reply the descriptor stays quiet and a cancel ends it. */
static void
test_sm_memory_async(void)
{
	struct idl_reply_source src = { &rtt_subsystem, NULL, 0 };
	union sm_buf req, rep;
	int ab[2] = { 20, 22 }, threads = sm_threads();
	idl_port_t port = NULL;
	idl_async_t *call = NULL;
	size_t n = 0, len = sm_request(&rtt_subsystem, RTT_ADD, ab, &req);

	CU_ASSERT_EQUAL_FATAL(idl_server_serve_message(sm_srv, &req, len, &rep, sizeof rep, &n), 0);
	CU_ASSERT_EQUAL_FATAL(idl_port_open_memory(&src, &port), 0);
	memset(&sm_done, 0, sizeof sm_done);
	src.data = &rep;
	src.len = n;
	sm_request(&rtt_subsystem, RTT_ADD, ab, &req);
	CU_ASSERT_EQUAL_FATAL(idl_call_async(port, &rtt_subsystem, RTT_ADD, &req.h, sizeof rep,
					     1000, sm_complete, NULL, NULL, &call),
			      0);
	for (int i = 0; i < 8 && sm_done.runs == 0; i++)
		CU_ASSERT(idl_port_dispatch(port, 0) >= 0);
	CU_ASSERT_EQUAL(sm_done.runs, 1);
	CU_ASSERT_EQUAL(sm_done.kr, 0);
	CU_ASSERT_EQUAL(sm_done.sum, 42);
	CU_ASSERT_PTR_NULL(src.data);
	CU_ASSERT_EQUAL(sm_threads(), threads);
	CU_ASSERT_FALSE(sm_readable(port));
	idl_async_release(call);

	/* No reply: nothing to dispatch, until a cancel completes the call. */
	sm_request(&rtt_subsystem, RTT_ADD, ab, &req);
	CU_ASSERT_EQUAL_FATAL(idl_call_async(port, &rtt_subsystem, RTT_ADD, &req.h, sizeof rep,
					     5000, sm_complete, NULL, NULL, &call),
			      0);
	CU_ASSERT_EQUAL(idl_port_dispatch(port, 0), 0);
	CU_ASSERT_FALSE(sm_readable(port));
	CU_ASSERT_EQUAL(idl_async_cancel(call), 0);
	CU_ASSERT_EQUAL(idl_port_wait(port, 1000), 1);
	CU_ASSERT_EQUAL(sm_done.runs, 2);
	CU_ASSERT_EQUAL(sm_done.kr, IDL_ECANCELED);
	idl_async_release(call);
	CU_ASSERT_EQUAL(sm_threads(), threads);
	idl_port_close(port);
}

static CU_TestInfo sm_tests[] = {
	{ "a request runs and its reply comes back", test_sm_add },
	{ "refused before the demux, with a reply", test_sm_refused },
	{ "malformed descriptors: refused, with a reply", test_sm_bad_desc },
	{ "a one-way message", test_sm_oneway },
	{ "the caller's mistakes", test_sm_args },
	{ "a port whose replies come from memory", test_sm_memory_port },
	{ "calls in flight on a memory port", test_sm_memory_async },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_serve_message = {
	"rt_serve_message", sm_init, sm_clean, NULL, NULL, sm_tests
};
