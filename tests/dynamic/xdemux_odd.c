/*
 * xdemux_odd.c - the cases of xdemux that are not a compiled interface: hand-written
 * descriptors the interpreter must not take at face value (out-of-line data checked before it
 * is read, offsets outside the fixed part refused), how a message with such data is printed,
 * a trace line whose arguments are named as the header's fields, and many dynamic interfaces
 * served at once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>
#include <idl/idl_trace.h>

#include "benchServer.h"
#include "xdemux.h"

/* A request and a reply, aligned as the runtime's buffers are. */
static union {
	idl_msg_header_t head;
	uint64_t align;
	unsigned char b[256];
} xd_msg, xd_out2;

/* Descriptors the interpreter must not take at face value: a routine with out-of-line data
 * (served as IDL_ENOTSUP, the rest of the interface still served) and one whose offsets lie
 * outside its fixed part (refused). */
static const struct idl_arg_desc xd_port_only[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
};
static const struct idl_arg_desc xd_ool_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "data", "char", IDL_DIR_IN, IDL_ARG_OOL, IDL_WT_BYTE, 0, 0, 1, 0, 24, IDL_NO_OFFSET },
};
static const struct idl_arg_desc xd_offside_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "x", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 32,
	  IDL_NO_OFFSET },
};
static const struct idl_routine_desc xd_odd_routines[] = {
	{ "null", 0, IDL_RT_ROUTINE, 1, 0, 0, -1, 24, 24, 24, 24, xd_port_only },
	{ "ool", 1, IDL_RT_SIMPLEROUTINE, 2, 0, 0, -1, 40, 40, 0, 0, xd_ool_args },
};
/* Arguments named as the header's fields are: a trace line must keep them apart. */
static const struct idl_arg_desc xd_seq_args[] = {
	{ "server", "mach_port_t", IDL_DIR_REQUESTPORT, IDL_ARG_PORT, IDL_WT_PORT, 0, 0, 0, 1,
	  IDL_NO_OFFSET, IDL_NO_OFFSET },
	{ "seq", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 24,
	  IDL_NO_OFFSET },
	{ "size", "int", IDL_DIR_IN, IDL_ARG_SCALAR, IDL_WT_INT32, 0, IDL_ARGF_SIGNED, 4, 1, 28,
	  IDL_NO_OFFSET },
};
static const struct idl_routine_desc xd_seq_routines[] = {
	{ "put", 0, IDL_RT_SIMPLEROUTINE, 3, 0, 0, -1, 32, 32, 0, 0, xd_seq_args },
};
static const struct idl_subsystem xd_seq = {
	IDL_SUBSYSTEM_MAGIC, 1, "seqs", 9200, 32, 24, 0, xd_seq_routines,
};
static const struct idl_routine_desc xd_bad_routines[] = {
	{ "bad", 0, IDL_RT_ROUTINE, 2, 0, 0, -1, 32, 32, 24, 24, xd_offside_args },
};
static const struct idl_subsystem xd_odd = {
	IDL_SUBSYSTEM_MAGIC, 2, "odd", 9000, 40, 24, 0, xd_odd_routines,
};
static const struct idl_subsystem xd_bad = {
	IDL_SUBSYSTEM_MAGIC, 1, "bad", 9100, 32, 24, 0, xd_bad_routines,
};

/* A trace line of a message whose arguments are called seq and size: the header's fields
 * are #seq= and #size=, the arguments seq= and size=, never confused. */
static void
xd_trace_fields(void)
{
	struct {
		idl_msg_header_t head;
		int32_t seq, size;
	} m;
	struct idl_trace_event ev;
	char *line;

	memset(&m, 0, sizeof m);
	m.head.magic = IDL_MSG_MAGIC;
	m.head.order = IDL_ORDER_NATIVE;
	m.head.kind = IDL_KIND_ONEWAY;
	m.head.size = sizeof m;
	m.head.id = 9200;
	m.head.seqno = 7;
	m.seq = 5;
	m.size = 6;
	memset(&ev, 0, sizeof ev);
	ev.side = IDL_TRACE_SERVER;
	ev.dir = IDL_TRACE_RECV;
	ev.address = "unix:t.sock";
	ev.msg = &m.head;
	ev.len = sizeof m;
	ev.time_ns = 1;
	ev.elapsed_ns = -1;
	ev.ss = &xd_seq;
	ev.rt = &xd_seq_routines[0];
	line = idl_trace_format(&ev);
	XD_CHECK(line != NULL &&
			 strstr(line, " ONEWAY seqs.put #seq=7 #size=32 seq=5 size=6") != NULL,
		 "trace line: %s", line != NULL ? line : "(null)");
	free(line);
}

/* odd.null's and odd.ool's implementations, found by dlsym. */
kern_return_t odd_null(mach_port_t server);
kern_return_t odd_ool(mach_port_t server, char *data, mach_msg_type_number_t dataCnt);

static const char *xd_odd_data;
static uint32_t xd_odd_count;

kern_return_t
odd_null(mach_port_t server)
{
	return 4242;
}

kern_return_t
odd_ool(mach_port_t server, char *data, mach_msg_type_number_t dataCnt)
{
	xd_odd_data = data;
	xd_odd_count = dataCnt;
	return 4343;
}

void
xd_odd_descriptors(void)
{
	idl_dynamic_t *d = NULL;
	char *text;

	XD_CHECK(idl_dynamic_create(&xd_odd, "odd_", NULL, NULL, &d) == 0, "odd: %s",
		 idl_errdetail());
	if (d != NULL) {
		memset(&xd_msg, 0, 40);
		xd_msg.head.size = 24;
		xd_msg.head.id = 9000;
		idl_dynamic_demux(d, &xd_msg.head, &xd_out2.head);
		XD_CHECK(xd_out2.head.retcode == 4242, "odd.null: %d", xd_out2.head.retcode);
		/* Out-of-line data: without IDL_MSGF_DESC, with a wrong type, then right. */
		xd_msg.head.size = 40;
		xd_msg.head.id = 9001;
		idl_dynamic_demux(d, &xd_msg.head, &xd_out2.head);
		XD_CHECK(xd_out2.head.retcode == MIG_BAD_ARGUMENTS,
			 "odd.ool without descriptors: "
			 "%d",
			 xd_out2.head.retcode);
		xd_msg.head.flags = IDL_MSGF_DESC;
		xd_msg.head.ndesc = 1;
		xd_msg.b[40] = 1;
		xd_msg.b[41] = 0xab;
		memcpy(&xd_msg.b[24], &(uint64_t){ (uintptr_t)&xd_msg.b[40] }, 8);
		memcpy(&xd_msg.b[32], &(uint32_t){ 2 }, 4);
		xd_msg.b[36] = IDL_DESC_PORT;
		idl_dynamic_demux(d, &xd_msg.head, &xd_out2.head);
		XD_CHECK(xd_out2.head.retcode == MIG_BAD_ARGUMENTS, "odd.ool as a port: %d",
			 xd_out2.head.retcode);
		xd_msg.b[36] = IDL_DESC_OOL;
		idl_dynamic_demux(d, &xd_msg.head, &xd_out2.head);
		XD_CHECK(xd_out2.head.retcode == 4343 && xd_odd_data == (char *)&xd_msg.b[40] &&
				 xd_odd_count == 2,
			 "odd.ool: %d, %u bytes", xd_out2.head.retcode, xd_odd_count);
	}
	idl_dynamic_destroy(d);
	XD_CHECK(idl_msg_check(&xd_odd_routines[1], &xd_msg.head, 40, 0, NULL) == 0,
		 "check of an ool routine");
	text = idl_msg_describe(&xd_odd_routines[1], &xd_msg.head, 40, 0);
	XD_CHECK(text != NULL && strcmp(text, "data=0x01ab") == 0, "describe: %s", text);
	free(text);
	text = idl_msg_describe(&xd_odd_routines[1], &xd_msg.head, 40, IDL_DESCRIBE_BRIEF);
	XD_CHECK(text != NULL && strcmp(text, "data=<ool 2 bytes: 01ab>") == 0, "describe: %s",
		 text);
	free(text);
	xd_trace_fields();
	d = NULL;
	XD_CHECK(idl_dynamic_create(&xd_bad, "odd_", NULL, NULL, &d) == IDL_EINVAL && d == NULL,
		 "an offset outside the fixed part is refused");
}

/* Any number of dynamic interfaces are served at once: each is its server's demux
 * context (there used to be a fixed table of 64). */
void
xd_many_servers(void)
{
	enum {
		XD_MANY = 100
	};
	idl_dynamic_t *d[XD_MANY];
	idl_server_t *srv[XD_MANY];
	int added = 0;

	for (int i = 0; i < XD_MANY; i++) {
		d[i] = NULL;
		srv[i] = NULL;
		if (idl_dynamic_create(&bench_subsystem, "S_bench_", NULL, NULL, &d[i]) == 0 &&
		    idl_server_create(&srv[i]) == 0 && idl_server_add_dynamic(srv[i], d[i]) == 0)
			added++;
	}
	XD_CHECK(added == XD_MANY, "many servers: %d of %d dynamic interfaces served: %s", added,
		 XD_MANY, idl_errdetail());
	for (int i = 0; i < XD_MANY; i++) {
		idl_server_destroy(srv[i]);
		idl_dynamic_destroy(d[i]);
	}
}
