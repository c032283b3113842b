/*
 * rt_fixture.c - the rtt interface of rt_fixture.h: descriptor, client stubs, server
 * unpackers and demux, written by hand in the shape of docs/generated-code.md.
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_fixture.h"

_Atomic int rtt_notified;
_Atomic int rtt_naps_done;

/* Descriptor. The hashes are FNV-1a 64 of the canonical forms, computed outside C. */
static const struct idl_arg_desc rtt_null_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
};
static const struct idl_arg_desc rtt_add_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "a", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 24,
	  IDL_NO_OFFSET },
	{ "b", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 28,
	  IDL_NO_OFFSET },
	{ "sum", "int", IDL_DIR_OUT, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1,
	  IDL_NO_OFFSET, 24 },
};
static const struct idl_arg_desc rtt_add_changed_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "a", "int64_t", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT64, 0, IDL_ARGF_SIGNED, 8, 1, 24,
	  IDL_NO_OFFSET },
	{ "b", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 32,
	  IDL_NO_OFFSET },
	{ "sum", "int", IDL_DIR_OUT, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1,
	  IDL_NO_OFFSET, 24 },
};
static const struct idl_arg_desc rtt_int_in_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "ms", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 24,
	  IDL_NO_OFFSET },
};
static const struct idl_arg_desc rtt_fill_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "seed", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 24,
	  IDL_NO_OFFSET },
	{ "data", "unsigned char", IDL_DIR_OUT, IDL_ARG_FIXED_ARRAY, IDL_WT_BYTE, 0, 0, 1, 1024,
	  IDL_NO_OFFSET, 24 },
};
static const struct idl_arg_desc rtt_whoami_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "uid", "int", IDL_DIR_OUT, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1,
	  IDL_NO_OFFSET, 24 },
	{ "pid", "int", IDL_DIR_OUT, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1,
	  IDL_NO_OFFSET, 28 },
	{ "ok", "int", IDL_DIR_OUT, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1,
	  IDL_NO_OFFSET, 32 },
};

#define RTT_ROUTINES(add_hash, add_args, add_req)                                                     \
	{                                                                                             \
		"null", 0,  IDL_RT_ROUTINE, 1, 0, 0x6a66c41efb44453bULL, -1, 24, 24,                  \
		24,	24, rtt_null_args                                                             \
	},                                                                                            \
		{ "add", 1, IDL_RT_ROUTINE, 4, 0, add_hash, -1, add_req, add_req, 32, 32, add_args }, \
		{ "nap", 2,  IDL_RT_ROUTINE, 2, 0, 0x60353451cd5c0934ULL, -1, 32, 32,                 \
		  24,	 24, rtt_int_in_args },                                                       \
		{ "notify", 3, IDL_RT_SIMPLEROUTINE, 2, 0, 0xf2696f47d862bee7ULL, -1, 32, 32,         \
		  0,	    0, rtt_int_in_args },                                                     \
		{ NULL, 4, IDL_RT_SKIP, 0, 0, 0, -1, 0, 0, 0, 0, NULL },                              \
		{ "fill", 5,	IDL_RT_ROUTINE, 3, 0, 0x068f86227a9fd296ULL, -1, 32, 32,              \
		  1048,	  1048, rtt_fill_args },                                                      \
		{ "whoami", 6,	IDL_RT_ROUTINE, 4, 0, 0x148f2d00a7afe445ULL, -1, 24, 24,              \
		  40,	    40, rtt_whoami_args },

static const struct idl_routine_desc rtt_routines[] = { RTT_ROUTINES(0x88664010dee7139aULL,
								     rtt_add_args, 32) };
static const struct idl_routine_desc rtt_changed_routines[] = { RTT_ROUTINES(
	0xbf3f5187dd8a60bfULL, rtt_add_changed_args, 40) };

const struct idl_subsystem rtt_subsystem = {
	IDL_SUBSYSTEM_MAGIC, 7, "rtt", RTT_BASE, 32, 1048, 0, rtt_routines,
};
const struct idl_subsystem rtt_changed_subsystem = {
	IDL_SUBSYSTEM_MAGIC, 7, "rtt", RTT_BASE, 40, 1048, 0, rtt_changed_routines,
};

/* Messages. */
struct rtt_bare {
	idl_msg_header_t head;
};
struct rtt_int_request {
	idl_msg_header_t head;
	int32_t v;
	int32_t pad;
};
struct rtt_add_request {
	idl_msg_header_t head;
	int32_t a;
	int32_t b;
};
struct rtt_add_changed_request {
	idl_msg_header_t head;
	int64_t a IDL_ALIGN8;
	int32_t b;
};
struct rtt_add_reply {
	idl_msg_header_t head;
	int32_t sum;
};
struct rtt_fill_reply {
	idl_msg_header_t head;
	unsigned char data[1024];
};
struct rtt_whoami_reply {
	idl_msg_header_t head;
	int32_t uid;
	int32_t pid;
	int32_t ok;
};
_Static_assert(sizeof(struct rtt_add_request) == 32, "add request");
_Static_assert(sizeof(struct rtt_add_changed_request) == 40, "changed add request");
_Static_assert(sizeof(struct rtt_add_reply) == 32, "add reply");
_Static_assert(sizeof(struct rtt_fill_reply) == 1048, "fill reply");
_Static_assert(sizeof(struct rtt_whoami_reply) == 40, "whoami reply");

/* Client stubs. */
kern_return_t
rtt_null(idl_port_t port)
{
	struct rtt_bare rq, rp;

	memset(&rq, 0, sizeof rq);
	rq.head.size = sizeof rq;
	return idl_call(port, &rtt_subsystem, RTT_NULL, &rq.head, &rp.head, sizeof rp,
			IDL_TIMEOUT_DEFAULT);
}

kern_return_t
rtt_add(idl_port_t port, int a, int b, int *sum)
{
	struct rtt_add_request rq;
	struct rtt_add_reply rp;
	kern_return_t kr;

	memset(&rq, 0, sizeof rq);
	rq.head.size = sizeof rq;
	rq.a = a;
	rq.b = b;
	kr = idl_call(port, &rtt_subsystem, RTT_ADD, &rq.head, &rp.head, sizeof rp,
		      IDL_TIMEOUT_DEFAULT);
	if (kr != KERN_SUCCESS)
		return kr;
	if (rp.head.size != sizeof rp)
		return MIG_TYPE_ERROR;
	*sum = rp.sum;
	return KERN_SUCCESS;
}

kern_return_t
rtt_add_changed(idl_port_t port, int a, int b, int *sum)
{
	struct rtt_add_changed_request rq;
	struct rtt_add_reply rp;
	kern_return_t kr;

	memset(&rq, 0, sizeof rq);
	rq.head.size = sizeof rq;
	rq.a = a;
	rq.b = b;
	kr = idl_call(port, &rtt_changed_subsystem, RTT_ADD, &rq.head, &rp.head, sizeof rp,
		      IDL_TIMEOUT_DEFAULT);
	if (kr != KERN_SUCCESS)
		return kr;
	*sum = rp.sum;
	return KERN_SUCCESS;
}

kern_return_t
rtt_nap(idl_port_t port, int ms, int timeout_ms)
{
	struct rtt_int_request rq;
	struct rtt_bare rp;

	memset(&rq, 0, sizeof rq);
	rq.head.size = sizeof rq;
	rq.v = ms;
	return idl_call(port, &rtt_subsystem, RTT_NAP, &rq.head, &rp.head, sizeof rp, timeout_ms);
}

kern_return_t
rtt_notify(idl_port_t port, int value)
{
	struct rtt_int_request rq;

	memset(&rq, 0, sizeof rq);
	rq.head.size = sizeof rq;
	rq.v = value;
	return idl_send(port, &rtt_subsystem, RTT_NOTIFY, &rq.head, IDL_TIMEOUT_DEFAULT);
}

kern_return_t
rtt_fill(idl_port_t port, int seed, unsigned char data[1024])
{
	struct rtt_int_request rq;
	struct rtt_fill_reply rp;
	kern_return_t kr;

	memset(&rq, 0, sizeof rq);
	rq.head.size = sizeof rq;
	rq.v = seed;
	kr = idl_call(port, &rtt_subsystem, RTT_FILL, &rq.head, &rp.head, sizeof rp,
		      IDL_TIMEOUT_DEFAULT);
	if (kr != KERN_SUCCESS)
		return kr;
	if (rp.head.size != sizeof rp)
		return MIG_TYPE_ERROR;
	memcpy(data, rp.data, sizeof rp.data);
	return KERN_SUCCESS;
}

kern_return_t
rtt_whoami(idl_port_t port, int *uid, int *pid, int *ok)
{
	struct rtt_bare rq;
	struct rtt_whoami_reply rp;
	kern_return_t kr;

	memset(&rq, 0, sizeof rq);
	rq.head.size = sizeof rq;
	kr = idl_call(port, &rtt_subsystem, RTT_WHOAMI, &rq.head, &rp.head, sizeof rp,
		      IDL_TIMEOUT_DEFAULT);
	if (kr != KERN_SUCCESS)
		return kr;
	if (rp.head.size != sizeof rp)
		return MIG_TYPE_ERROR;
	*uid = rp.uid;
	*pid = rp.pid;
	*ok = rp.ok;
	return KERN_SUCCESS;
}

/* Server side: unpackers, routine table, demux. */
static void
_Xnull(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)
{
	if (InHeadP->size != sizeof(struct rtt_bare))
		OutHeadP->retcode = MIG_BAD_ARGUMENTS;
}

static void
_Xadd(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)
{
	struct rtt_add_request *In0P = (struct rtt_add_request *)InHeadP;
	struct rtt_add_reply *OutP = (struct rtt_add_reply *)OutHeadP;

	if (InHeadP->size != sizeof *In0P) {
		OutHeadP->retcode = MIG_BAD_ARGUMENTS;
		return;
	}
	OutP->sum = In0P->a + In0P->b;
	OutHeadP->size = sizeof *OutP;
}

static void
_Xnap(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)
{
	struct rtt_int_request *In0P = (struct rtt_int_request *)InHeadP;
	struct timespec ts;

	if (InHeadP->size != sizeof *In0P) {
		OutHeadP->retcode = MIG_BAD_ARGUMENTS;
		return;
	}
	ts.tv_sec = In0P->v / 1000;
	ts.tv_nsec = (long)(In0P->v % 1000) * 1000000;
	nanosleep(&ts, NULL);
	rtt_naps_done++;
}

static void
_Xnotify(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)
{
	struct rtt_int_request *In0P = (struct rtt_int_request *)InHeadP;

	if (InHeadP->size != sizeof *In0P) {
		OutHeadP->retcode = MIG_BAD_ARGUMENTS;
		return;
	}
	rtt_notified += In0P->v;
}

static void
_Xfill(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)
{
	struct rtt_int_request *In0P = (struct rtt_int_request *)InHeadP;
	struct rtt_fill_reply *OutP = (struct rtt_fill_reply *)OutHeadP;

	if (InHeadP->size != sizeof *In0P) {
		OutHeadP->retcode = MIG_BAD_ARGUMENTS;
		return;
	}
	for (unsigned i = 0; i < sizeof OutP->data; i++)
		OutP->data[i] = (unsigned char)(In0P->v + (int)i);
	OutHeadP->size = sizeof *OutP;
}

static void
_Xwhoami(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)
{
	struct rtt_whoami_reply *OutP = (struct rtt_whoami_reply *)OutHeadP;
	struct idl_cred cred;
	idl_port_t self = idl_request_port();

	if (InHeadP->size != sizeof(struct rtt_bare)) {
		OutHeadP->retcode = MIG_BAD_ARGUMENTS;
		return;
	}
	if (idl_request_cred(&cred) != 0 || !cred.valid || self == IDL_PORT_NULL) {
		OutHeadP->retcode = KERN_FAILURE;
		return;
	}
	OutP->uid = (int32_t)cred.uid;
	OutP->pid = (int32_t)cred.pid;
	/* A request port identifies the endpoint but cannot be called through. */
	OutP->ok = idl_port_address(self) != NULL && rtt_null(self) == IDL_EINVAL;
	OutHeadP->size = sizeof *OutP;
}

static const idl_routine_t rtt_server_routines[] = {
	_Xnull, _Xadd, _Xnap, _Xnotify, NULL, _Xfill, _Xwhoami,
};

static idl_routine_t
rtt_server_routine(const idl_msg_header_t *InHeadP)
{
	uint32_t n = (uint32_t)InHeadP->id - 5000u;

	if (n >= 7)
		return NULL;
	return rtt_server_routines[n];
}

int
rtt_server(idl_msg_header_t *InHeadP, idl_msg_header_t *OutHeadP)
{
	idl_routine_t routine;

	idl_reply_init(InHeadP, OutHeadP);
	routine = rtt_server_routine(InHeadP);
	if (routine == NULL) {
		OutHeadP->retcode = MIG_BAD_ID;
		return 0;
	}
	routine(InHeadP, OutHeadP);
	return 1;
}

struct rtt_running {
	idl_server_t *srv;
	pthread_t thread;
};

static void *
rtt_run(void *arg)
{
	idl_server_run(arg);
	return NULL;
}

/* Threads by server, for rtt_stop; tests run one or two servers at a time. */
static struct rtt_running rtt_runs[4];

idl_server_t *
rtt_start(const char *address)
{
	idl_server_t *srv;

	if (idl_server_create(&srv) != 0)
		return NULL;
	if (idl_server_add_subsystem(srv, &rtt_subsystem, rtt_server) != 0 ||
	    idl_server_listen(srv, address) != 0) {
		idl_server_destroy(srv);
		return NULL;
	}
	for (unsigned i = 0; i < 4; i++) {
		if (rtt_runs[i].srv == NULL) {
			rtt_runs[i].srv = srv;
			if (pthread_create(&rtt_runs[i].thread, NULL, rtt_run, srv) != 0) {
				rtt_runs[i].srv = NULL;
				break;
			}
			return srv;
		}
	}
	idl_server_destroy(srv);
	return NULL;
}

void
rtt_stop(idl_server_t *srv)
{
	for (unsigned i = 0; i < 4; i++) {
		if (rtt_runs[i].srv == srv && srv != NULL) {
			idl_server_stop(srv);
			pthread_join(rtt_runs[i].thread, NULL);
			rtt_runs[i].srv = NULL;
		}
	}
	idl_server_destroy(srv);
}
