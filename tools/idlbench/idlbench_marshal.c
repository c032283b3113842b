/*
 * idlbench_marshal.c - the in-process marshaling row (idlbench --marshal): what the
 * generated code costs to pack and unpack a whole biginout call, request and reply, with no
 * transport and no runtime in between, against rpcgen's XDR of the same call
 * (idlbench_oncrpc.c).
 *
 * idlbench links with -Wl,--wrap=idl_call and -Wl,--wrap=S_bench_biginout. While the row
 * runs, the client stub's idl_call() lands in ib_inproc_call(), which fills the request
 * header as the runtime does and hands the request straight to the generated demux
 * (bench_server), whose reply the stub then checks and unpacks; and the server routine does
 * nothing, as rpcgen's side calls no routine either. So the figure is exactly the stub's
 * packing, the demux's checks and unpacking, the demux's reply packing and the stub's reply
 * checks and unpacking. At all other times both wraps pass straight through (one predictable
 * branch per call).
 *
 * Layer 3, beside the cells: it knows the base and bench.defs's stubs; it must not know runs
 * or reports.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>

#include "bench_types.h"
#include "bench.h"
#include "benchServer.h"
#include "bench_impl.h"
#include "ib_cell.h"

static int ib_inproc;
static uint32_t ib_inproc_seqno;

int __real_idl_call(idl_port_t port, const struct idl_subsystem *ss, uint32_t number,
		    idl_msg_header_t *req, idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms);
int __wrap_idl_call(idl_port_t port, const struct idl_subsystem *ss, uint32_t number,
		    idl_msg_header_t *req, idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms);
kern_return_t __real_S_bench_biginout(mach_port_t server, big_t data);
kern_return_t __wrap_S_bench_biginout(mach_port_t server, big_t data);

/* What idl_call() writes into the request before it goes out, then the server's demux. */
static int
ib_inproc_call(const struct idl_subsystem *ss, uint32_t number, idl_msg_header_t *req,
	       idl_msg_header_t *rep)
{
	req->magic = IDL_MSG_MAGIC;
	req->order = IDL_ORDER_NATIVE;
	req->kind = IDL_KIND_REQUEST;
	req->id = (int32_t)((uint32_t)ss->base + number);
	req->seqno = ++ib_inproc_seqno;
	req->retcode = 0;
	bench_server(req, rep);
	return rep->retcode;
}

int
__wrap_idl_call(idl_port_t port, const struct idl_subsystem *ss, uint32_t number,
		idl_msg_header_t *req, idl_msg_header_t *rep, uint32_t rep_max, int timeout_ms)
{
	if (__builtin_expect(ib_inproc, 0))
		return ib_inproc_call(ss, number, req, rep);
	return __real_idl_call(port, ss, number, req, rep, rep_max, timeout_ms);
}

kern_return_t
__wrap_S_bench_biginout(mach_port_t server, big_t data)
{
	if (__builtin_expect(ib_inproc, 0))
		return KERN_SUCCESS;
	return __real_S_bench_biginout(server, data);
}

static int
ib_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nanoseconds per whole biginout call: the median of 9 repetitions. */
double
ib_idl_biginout_ns(unsigned iterations)
{
	static big_t data;
	double v[9];
	kern_return_t kr = 0;

	bench_fill(data, sizeof data, BENCH_SALT_INOUT_IN);
	ib_inproc = 1;
	for (unsigned i = 0; i < iterations / 4 + 1; i++)
		kr |= bench_biginout(IDL_PORT_NULL, data);
	for (unsigned k = 0; k < 9; k++) {
		double t0 = ib_now();

		for (unsigned i = 0; i < iterations; i++)
			kr |= bench_biginout(IDL_PORT_NULL, data);
		v[k] = (ib_now() - t0) * 1e9 / iterations;
	}
	ib_inproc = 0;
	if (kr != 0)
		return -1;
	qsort(v, 9, sizeof v[0], ib_cmp_double);
	return v[4];
}
