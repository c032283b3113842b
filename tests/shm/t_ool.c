/*
 * t_ool.c - out-of-line data over shm: with hand-built messages (the compiler does not emit
 * descriptors yet): a block from the out-of-line allocator sent with dealloc reaches the
 * server at the same offset of the same shared memory (no copy), and the server reads it
 * in place; other buffers are copied once; frees flow back to the sender, and the lowest
 * free pages are taken first; a received block outlives its connection until it is freed.
 */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "shm_test.h"

#define OT_BIG 100000u
#define OT_HEAP 5000u
#define OT_REPLY 3000u
#define OT_BUF 65536

enum {
	OT_CMD_PAIR = 1,
	OT_CMD_USED = 2,
	OT_CMD_ONE = 3
};

static unsigned char
ot_pattern(size_t i, unsigned salt)
{
	return (unsigned char)(i * 13u + salt * 101u + 7u);
}

static void
ot_fill(void *p, size_t n, unsigned salt)
{
	for (size_t i = 0; i < n; i++)
		((unsigned char *)p)[i] = ot_pattern(i, salt);
}

static int
ot_check(const void *p, size_t n, unsigned salt)
{
	for (size_t i = 0; i < n; i++)
		if (((const unsigned char *)p)[i] != ot_pattern(i, salt))
			return -1;
	return 0;
}

static idl_desc_t
ot_desc(const unsigned char *msg, unsigned i)
{
	idl_desc_t d;

	memcpy(&d, msg + IDL_MSG_HEADER_SIZE + i * IDL_DESC_SIZE, sizeof d);
	return d;
}

/* Whether [p, p + n) lies in the given arena of c's region. */
static int
ot_in_arena(struct shm_conn *c, uint64_t p, size_t n, int dir)
{
	uint64_t a = (uint64_t)(uintptr_t)c->rg->base + c->rg->lay.arena_off[dir];

	return p >= a && n <= c->rg->lay.ool_bytes && p - a <= c->rg->lay.ool_bytes - n;
}

/* The server side of the cases, by hand: answers each command on one connection. */
static int
ot_serve(struct shm_conn *c, unsigned char *m)
{
	const struct idl_transport *tr = st_tr();
	struct idl_xmsg x = { .data = m, .cap = OT_BUF };
	uint64_t base = (uint64_t)(uintptr_t)c->rg->base, off[2] = { 0, 0 };
	idl_desc_t d0, d1, rd;
	int32_t id, ok = 0;
	unsigned char *heap;

	if (tr->conn_recv(c, &x, &(struct idl_deadline){ 0, 10000 }) != 0)
		return -1;
	id = ((idl_msg_header_t *)m)->id;
	if (id == OT_CMD_USED) {
		st_head(m, IDL_KIND_REPLY, id + 100, 24, 0, 0);
		((idl_msg_header_t *)m)->retcode = (int32_t)idl__shm_ool_used(c);
		x.len = 24;
		return tr->conn_send(c, &x, &(struct idl_deadline){ 0, 5000 });
	}
	d0 = ot_desc(m, 0);
	/* The bytes are read where they lie: in the client's arena of the shared region. */
	ok |= !ot_in_arena(c, d0.addr, d0.size, SHM_CLIENT);
	ok |= ot_check((const void *)(uintptr_t)d0.addr, d0.size, 1) << 1;
	off[0] = d0.addr - base;
	ok |= (idl__shm_ool_free((void *)(uintptr_t)d0.addr, d0.size) != 1) << 2;
	if (id == OT_CMD_PAIR) {
		d1 = ot_desc(m, 1);
		ok |= !ot_in_arena(c, d1.addr, d1.size, SHM_CLIENT) << 3;
		ok |= ot_check((const void *)(uintptr_t)d1.addr, d1.size, 2) << 4;
		off[1] = d1.addr - base;
		ok |= (idl__shm_ool_free((void *)(uintptr_t)d1.addr, d1.size) != 1) << 5;
	}
	/* The reply carries a malloc'd buffer with dealloc: copied once, then freed. */
	if ((heap = malloc(OT_REPLY)) == NULL)
		return -1;
	ot_fill(heap, OT_REPLY, 3);
	rd = (idl_desc_t){ .addr = (uint64_t)(uintptr_t)heap,
			   .size = OT_REPLY,
			   .type = IDL_DESC_OOL,
			   .flags = IDL_DESCF_DEALLOC };
	st_head(m, IDL_KIND_REPLY, id + 100, 56, IDL_MSGF_DESC, 1);
	((idl_msg_header_t *)m)->retcode = ok;
	memcpy(m + 24, &rd, sizeof rd);
	memcpy(m + 40, off, sizeof off);
	x.len = 56;
	return tr->conn_send(c, &x, &(struct idl_deadline){ 0, 5000 });
}

static void
ot_server_child(const char *address, int ready)
{
	const struct idl_transport *tr = st_tr();
	void *ep = calloc(1, tr->ep_size);
	unsigned char *m = aligned_alloc(16, OT_BUF);

	if (ep == NULL || m == NULL || tr->ep_listen(ep, address + 4, NULL) != 0 ||
	    write(ready, "r", 1) != 1)
		_exit(3);
	for (;;) {
		struct pollfd pfd = { .fd = tr->ep_fd(ep), .events = POLLIN };
		struct shm_conn *c = calloc(1, sizeof *c);

		if (poll(&pfd, 1, 20000) <= 0 || c == NULL)
			_exit(0);
		if (tr->ep_accept(ep, c) == 0)
			while (ot_serve(c, m) == 0)
				continue;
		tr->conn_close(c);
		tr->conn_fini(c);
		free(c);
	}
}

static pid_t
ot_start(const char *address)
{
	int p[2];
	char b;
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		close(p[0]);
		ot_server_child(address, p[1]);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &b, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

/* Sends command `cmd` with the given descriptors and receives the reply into m. */
static int
ot_call(struct shm_conn *c, unsigned char *m, int32_t cmd, const idl_desc_t *d, unsigned nd)
{
	uint32_t size = 24 + 16 * nd;
	size_t len;
	int err;

	st_head(m, IDL_KIND_REQUEST, cmd, size, nd ? IDL_MSGF_DESC : 0, nd);
	if (nd > 0)
		memcpy(m + 24, d, 16 * (size_t)nd);
	if ((err = st_raw_send(c, m, size, 5000)) != 0)
		return err;
	return st_raw_recv(c, m, OT_BUF, &len, 5000);
}

static void
ot_zero_copy(void)
{
	char address[320];
	unsigned char *m = aligned_alloc(16, OT_BUF);
	struct shm_conn *c;
	uint64_t off[2];
	idl_desc_t d[2], rd;
	void *blk = NULL, *heap = malloc(OT_HEAP), *reply;
	int err, local = 0;
	pid_t pid;

	snprintf(address, sizeof address, "shm:%s/ool.sock", st_dir);
	CU_ASSERT_FATAL(m != NULL && heap != NULL);
	CU_ASSERT_FATAL((pid = ot_start(address)) > 0);
	c = st_raw_connect(address, &err);
	ST_CHECK_KR(err, 0);
	CU_ASSERT_FATAL(c != NULL);

	/* An allocator block, given away with dealloc, and a heap buffer the caller keeps. */
	ST_CHECK_KR(idl__shm_ool_alloc(c, OT_BIG, &blk), 0);
	CU_ASSERT_FATAL(blk != NULL);
	CU_ASSERT(ot_in_arena(c, (uintptr_t)blk, OT_BIG, SHM_CLIENT));
	CU_ASSERT_EQUAL(idl__shm_ool_used(c), (OT_BIG + SHM_PAGE - 1) / SHM_PAGE);
	ot_fill(blk, OT_BIG, 1);
	ot_fill(heap, OT_HEAP, 2);
	d[0] = (idl_desc_t){ .addr = (uintptr_t)blk,
			     .size = OT_BIG,
			     .type = IDL_DESC_OOL,
			     .flags = IDL_DESCF_DEALLOC };
	d[1] = (idl_desc_t){ .addr = (uintptr_t)heap, .size = OT_HEAP, .type = IDL_DESC_OOL };
	ST_CHECK_KR(ot_call(c, m, OT_CMD_PAIR, d, 2), 0);
	/* The server checked where the bytes were and what they were (its bits), ... */
	ST_CHECK_KR(((idl_msg_header_t *)m)->retcode, 0);
	memcpy(off, m + 40, sizeof off);
	/* ... and saw the block at the very offset we wrote it at: it was not copied. The
	 * heap buffer was copied once into the arena, and is still ours (no dealloc). */
	CU_ASSERT_EQUAL(off[0], (uint64_t)((unsigned char *)blk - c->rg->base));
	CU_ASSERT(off[1] != off[0] && off[1] >= c->rg->lay.arena_off[SHM_CLIENT]);
	CU_ASSERT_EQUAL(ot_check(heap, OT_HEAP, 2), 0);
	/* The server freed both: our arena is empty again. */
	CU_ASSERT_EQUAL(idl__shm_ool_used(c), 0);

	/* The reply's data is in the server's arena of the region, in place. */
	rd = ot_desc(m, 0);
	reply = (void *)(uintptr_t)rd.addr;
	CU_ASSERT_EQUAL(rd.size, OT_REPLY);
	CU_ASSERT(ot_in_arena(c, rd.addr, rd.size, SHM_SERVER));
	CU_ASSERT_EQUAL(ot_check(reply, OT_REPLY, 3), 0);
	CU_ASSERT_EQUAL(idl__shm_ool_free(reply, OT_REPLY), 1);
	ST_CHECK_KR(ot_call(c, m, OT_CMD_USED, NULL, 0), 0);
	CU_ASSERT_EQUAL(((idl_msg_header_t *)m)->retcode, 0);

	/* An allocator block sent without dealloc stays ours: the server gets a copy. */
	ST_CHECK_KR(idl__shm_ool_alloc(c, 2 * SHM_PAGE, &blk), 0);
	ot_fill(blk, 2 * SHM_PAGE, 1);
	d[0] = (idl_desc_t){ .addr = (uintptr_t)blk, .size = 2 * SHM_PAGE, .type = IDL_DESC_OOL };
	ST_CHECK_KR(ot_call(c, m, OT_CMD_ONE, d, 1), 0);
	ST_CHECK_KR(((idl_msg_header_t *)m)->retcode, 0);
	memcpy(off, m + 40, sizeof off);
	CU_ASSERT(off[0] != (uint64_t)((unsigned char *)blk - c->rg->base));
	CU_ASSERT_EQUAL(idl__shm_ool_used(c), 2);
	CU_ASSERT_EQUAL(idl__shm_ool_free(blk, 2 * SHM_PAGE), 1);
	CU_ASSERT_EQUAL(idl__shm_ool_used(c), 0);
	rd = ot_desc(m, 0);
	CU_ASSERT_EQUAL(idl__shm_ool_free((void *)(uintptr_t)rd.addr, rd.size), 1);

	/* First fit: with the arena empty again, each copy lands at its very start - the block
	 * the one before freed, still in the caches - not further on at every call. */
	ot_fill(heap, OT_HEAP, 1);
	for (int i = 0; i < 3; i++) {
		d[0] = (idl_desc_t){ .addr = (uintptr_t)heap,
				     .size = OT_HEAP,
				     .type = IDL_DESC_OOL };
		ST_CHECK_KR(ot_call(c, m, OT_CMD_ONE, d, 1), 0);
		ST_CHECK_KR(((idl_msg_header_t *)m)->retcode, 0);
		memcpy(off, m + 40, sizeof off);
		CU_ASSERT_EQUAL(off[0], c->rg->lay.arena_off[SHM_CLIENT]);
		rd = ot_desc(m, 0);
		CU_ASSERT_EQUAL(idl__shm_ool_free((void *)(uintptr_t)rd.addr, rd.size), 1);
	}

	/* Memory outside every region is not the transport's. */
	CU_ASSERT_EQUAL(idl__shm_ool_free(&local, sizeof local), 0);
	CU_ASSERT_EQUAL(idl__shm_ool_free(heap, OT_HEAP), 0);
	free(heap);

	/* Limits: more than the arena, and a full arena. */
	CU_ASSERT_EQUAL(idl__shm_ool_alloc(c, c->rg->lay.ool_bytes + 1, &blk), IDL_EINVAL);
	ST_CHECK_KR(idl__shm_ool_alloc(c, c->rg->lay.ool_bytes, &blk), 0);
	CU_ASSERT_EQUAL(idl__shm_ool_alloc(c, 1, &reply), IDL_ELIMIT);
	CU_ASSERT_EQUAL(idl__shm_ool_free(blk, c->rg->lay.ool_bytes), 1);

	/* A received block outlives its connection until it is freed. */
	d[0] = (idl_desc_t){ .addr = (uintptr_t)m + 1000, .size = 8, .type = IDL_DESC_OOL };
	ot_fill(m + 1000, 8, 1);
	ST_CHECK_KR(ot_call(c, m, OT_CMD_ONE, d, 1), 0);
	rd = ot_desc(m, 0);
	st_raw_close(c);
	CU_ASSERT_EQUAL(st_count_regions(getpid()), 1);
	CU_ASSERT_EQUAL(ot_check((void *)(uintptr_t)rd.addr, OT_REPLY, 3), 0);
	CU_ASSERT_EQUAL(idl__shm_ool_free((void *)(uintptr_t)rd.addr, rd.size), 1);
	CU_ASSERT_EQUAL(st_count_regions(getpid()), 0);

	kill(pid, SIGKILL);
	waitpid(pid, &err, 0);
	free(m);
}

const struct st_case st_ool_cases[] = {
	{ "zero copy and ownership", ot_zero_copy },
	{ NULL, NULL },
};
