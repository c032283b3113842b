/*
 * t_hostile.c - peers that break the protocol on purpose by writing into the shared region
 * (records longer than the ring, indices out of range, bad out-of-line descriptors) or by
 * sending a region that is not safe to map. The victim must return an
 * error, never crash or hang, and a server must go on serving its other clients.
 */
#define _GNU_SOURCE 1 /* memfd_create */

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "bench.h"
#include "shm_test.h"

#define HS_BUF 16384

union hs_buf {
	idl_msg_header_t head;
	uint64_t align;
	unsigned char b[HS_BUF];
};

/* What a hostile side does to the region. */
enum hs_act {
	HS_REC_WHOLE = 1, /* a record as long as the whole ring */
	HS_LEN_BEYOND, /* a length past the ring's end */
	HS_LEN_HUGE, /* a length near 2^32 */
	HS_DESC_PAST_END, /* an out-of-line offset at the arena's end */
	HS_DESC_OVERFLOW, /* offset + size past the arena, wrapping 32 bits */
	HS_DESC_UNALIGNED, /* an offset that is not a block's start */
	HS_DESC_COUNT, /* more descriptors than the message holds */
	HS_DESC_PORT, /* a port descriptor: shm: carries none */
	HS_TAIL_FAR, /* the consumer's tail of the other ring past its head */
	HS_GONE, /* says it left, without closing */
	HS_BAD_SEQ, /* a record word whose position is wrong: not a record at all */
	HS_NACTS
};

static const char *const hs_names[] = {
	"",
	"record of the whole ring",
	"length beyond",
	"length huge",
	"descriptor past end",
	"descriptor overflow",
	"descriptor unaligned",
	"descriptor count",
	"descriptor port",
	"tail far",
	"gone",
	"bad position",
};

static void
hs_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Writes a record at our head, its word saying `len` (and a wrong position if `bad`),
 * without any check, and publishes it. */
static void
hs_record(struct shm_conn *c, uint32_t len, const void *body, size_t n, int bad)
{
	uint64_t mask = c->rbytes - 1, word = shm_rec_word(c->head, len) ^ (bad ? 1ull << 40 : 0);

	for (size_t i = 0; i < n; i++)
		c->ring_out[(c->head + 8 + i) & mask] = ((const unsigned char *)body)[i];
	__atomic_store_n((uint64_t *)(c->ring_out + (c->head & mask)), word, __ATOMIC_RELEASE);
	c->head += 8 + IDL_MSG_ROUND(n);
	hs_wake(&c->ctl->ring[c->me].cons_sleep);
}

/* A message with one descriptor, as it would lie in the ring. */
static void
hs_desc_msg(struct shm_conn *c, uint8_t kind, uint64_t addr, uint32_t size, uint8_t type,
	    uint32_t ndesc)
{
	unsigned char m[48];
	idl_desc_t d = { .addr = addr, .size = size, .type = type };

	memset(m, 0, sizeof m);
	st_head(m, kind, kind == IDL_KIND_REPLY ? 4300 : 4200, sizeof m, IDL_MSGF_DESC, ndesc);
	memcpy(m + IDL_MSG_HEADER_SIZE, &d, sizeof d);
	hs_record(c, sizeof m, m, sizeof m, 0);
}

/* Does `act` to the region as the side of c; kind is the kind of message c would send. */
static void
hs_act(struct shm_conn *c, int act, uint8_t kind)
{
	static const unsigned char zero[32];
	uint64_t ool = c->rg->lay.ool_bytes;

	switch (act) {
	case HS_REC_WHOLE:
		hs_record(c, c->rbytes - 8, zero, sizeof zero, 0);
		break;
	case HS_LEN_BEYOND:
		hs_record(c, c->rbytes, zero, sizeof zero, 0);
		break;
	case HS_LEN_HUGE:
		hs_record(c, 0xFFFFFFF8u, zero, sizeof zero, 0);
		break;
	case HS_DESC_PAST_END:
		hs_desc_msg(c, kind, ool, 8, IDL_DESC_OOL, 1);
		break;
	case HS_DESC_OVERFLOW:
		hs_desc_msg(c, kind, SHM_PAGE, 0xFFFFFFFFu, IDL_DESC_OOL, 1);
		break;
	case HS_DESC_UNALIGNED:
		hs_desc_msg(c, kind, 100, 8, IDL_DESC_OOL, 1);
		break;
	case HS_DESC_COUNT:
		hs_desc_msg(c, kind, 0, 0, IDL_DESC_OOL, 1000);
		break;
	case HS_DESC_PORT:
		hs_desc_msg(c, kind, 0, 0, IDL_DESC_PORT, 1);
		break;
	case HS_TAIL_FAR:
		__atomic_store_n(&c->ctl->ring[1 - c->me].tail, 12345, __ATOMIC_RELEASE);
		break;
	case HS_GONE:
		__atomic_store_n(&c->ctl->side[c->me].gone, 1, __ATOMIC_RELEASE);
		hs_wake(&c->ctl->ring[c->me].cons_sleep);
		break;
	case HS_BAD_SEQ:
		hs_record(c, 32, zero, sizeof zero, 1);
		break;
	}
}

/* Whether `act` writes a whole record whose descriptors are bad: the ring keeps its
 * framing, and the message alone is refused. */
static int
hs_desc_act(int act)
{
	return act >= HS_DESC_PAST_END && act <= HS_DESC_PORT;
}

/* A hostile client against a real bench-server: a record with bad descriptors gets an
 * IDL_EPROTO reply and the connection goes on (a request after it is answered); any other
 * corruption makes the server drop that client only. A well-behaved one is served before and
 * after. */
static void
hs_client_scribbles(void)
{
	char address[320];
	struct st_server srv = { 0, -1 };
	idl_port_t port = NULL;
	union hs_buf *m = malloc(sizeof *m);
	size_t len;
	int sum = 0;

	snprintf(address, sizeof address, "shm:%s/hostile-client.sock", st_dir);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_EQUAL_FATAL(st_server_start(&srv, address, -1), 0);
	ST_CHECK_KR(idl_port_open(address, &port), 0);
	for (int act = HS_REC_WHOLE; port != NULL && act < HS_NACTS; act++) {
		int err, kr, want;
		struct shm_conn *c = st_raw_connect(address, &err);
		int64_t t0;

		ST_CHECK_KR(err, 0);
		if (c == NULL)
			break;
		hs_act(c, act, IDL_KIND_REQUEST);
		t0 = idl_now_ns();
		if (act == HS_TAIL_FAR) {
			/* The server reads our tail when its last reading leaves too little room:
			 * requests it answers, with no reply read, fill the ring until it does.
			 * The sends then fail: the server dropped us. */
			st_head(m->b, IDL_KIND_REQUEST, 4201, 32, 0, 0);
			for (int i = 0; i < 100000 && (err = st_raw_send(c, m->b, 32, 1000)) == 0;
			     i++)
				continue;
		} else {
			err = st_raw_recv(c, m->b, sizeof m->b, &len,
					  act == HS_BAD_SEQ ? 300 : 5000);
		}
		if (hs_desc_act(act) && err == 0) {
			/* Refused with its id + 100, then the next request is answered (before
			 * any hello: IDL_EPROTO again, from the runtime's own check). */
			ST_CHECK_KR(m->head.retcode, IDL_EPROTO);
			CU_ASSERT_EQUAL(m->head.id, 4200 + 100);
			CU_ASSERT_EQUAL(len, IDL_MSG_HEADER_SIZE);
			st_head(m->b, IDL_KIND_REQUEST, 4201, 32, 0, 0);
			m->head.seqno = 77;
			ST_CHECK_KR(st_raw_send(c, m->b, 32, 1000), 0);
			err = st_raw_recv(c, m->b, sizeof m->b, &len, 5000);
			ST_CHECK_KR(m->head.retcode, IDL_EPROTO);
			CU_ASSERT_EQUAL(m->head.seqno, 77);
		}
		/* The server dropped the connection (its `gone` flag), well before 5 s; what
		 * is not a record is not read at all, and the wait for a reply times out. */
		want = act == HS_BAD_SEQ ? IDL_ETIMEDOUT : hs_desc_act(act) ? 0 : MIG_SERVER_DIED;
		if (err != want)
			fprintf(stderr, "shm-test: hostile client, %s: %s\n", hs_names[act],
				idl_errname(err));
		CU_ASSERT_EQUAL(err, want);
		CU_ASSERT(st_ms_since(t0) < 2000);
		st_raw_close(c);
		CU_ASSERT(st_server_alive(&srv));
		kr = bench_add(port, act, 1, &sum);
		ST_CHECK_KR(kr, 0);
		CU_ASSERT_EQUAL(sum, act + 1);
	}
	idl_port_close(port);
	st_server_kill(&srv);
	free(m);
}

/* The hostile server: for each connection, takes one request, does to the region what the
 * request's id says (a hello: HS_LEN_HUGE), and waits for the client to leave. */
static void
hs_server_child(const char *address, int ready)
{
	const struct idl_transport *tr = st_tr();
	void *ep = calloc(1, tr->ep_size);
	union hs_buf *m = malloc(sizeof *m);

	if (ep == NULL || m == NULL || tr->ep_listen(ep, address + 4, NULL) != 0)
		_exit(3);
	if (write(ready, "r", 1) != 1)
		_exit(3);
	for (;;) {
		struct pollfd pfd = { .fd = tr->ep_fd(ep), .events = POLLIN };
		struct shm_conn *c = calloc(1, sizeof *c);
		struct idl_xmsg x = { .data = m->b, .cap = sizeof m->b };
		int act;

		if (poll(&pfd, 1, 20000) <= 0 || c == NULL)
			_exit(0);
		if (tr->ep_accept(ep, c) != 0) {
			tr->conn_fini(c);
			free(c);
			continue;
		}
		if (tr->conn_recv(c, &x, &(struct idl_deadline){ 0, 5000 }) == 0) {
			act = m->head.kind == IDL_KIND_HELLO ? HS_LEN_HUGE : m->head.id;
			hs_act(c, act, IDL_KIND_REPLY);
			if (act == HS_TAIL_FAR) {
				/* A good reply; then read nothing more (a read would publish the
				 * true tail), so that the client fills its ring and must look. */
				st_head(m->b, IDL_KIND_REPLY, m->head.id + 100, 24, 0, 0);
				x.len = 24;
				tr->conn_send(c, &x, &(struct idl_deadline){ 0, 1000 });
				for (int i = 0; i < 500 && !c->ctl->side[SHM_CLIENT].gone; i++)
					usleep(10000);
			}
			x.cap = sizeof m->b;
			while (tr->conn_recv(c, &x, &(struct idl_deadline){ 0, 5000 }) == 0)
				x.cap = sizeof m->b;
		}
		tr->conn_close(c);
		tr->conn_fini(c);
		free(c);
	}
}

static pid_t
hs_fork_server(const char *address)
{
	int p[2];
	char b;
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		close(p[0]);
		hs_server_child(address, p[1]);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &b, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

static void
hs_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* A hostile server: each corruption of the reply ring is IDL_EPROTO (for `gone`,
 * MIG_SERVER_DIED; a word that is no record is waited past, IDL_ETIMEDOUT) for the client,
 * and a call through the runtime fails cleanly. The error is sticky, except for a whole
 * record with bad descriptors: that message alone is refused, and the ring goes on. */
static void
hs_server_scribbles(void)
{
	static const int acts[] = { HS_REC_WHOLE,     HS_LEN_BEYOND,	HS_LEN_HUGE,
				    HS_DESC_PAST_END, HS_DESC_OVERFLOW, HS_DESC_UNALIGNED,
				    HS_DESC_COUNT,    HS_DESC_PORT,	HS_TAIL_FAR,
				    HS_GONE,	      HS_BAD_SEQ };
	char address[320];
	union hs_buf *m = malloc(sizeof *m);
	idl_port_t port = NULL;
	int fds0 = st_count_fds(getpid());
	size_t len;
	pid_t pid;

	snprintf(address, sizeof address, "shm:%s/hostile-server.sock", st_dir);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL((pid = hs_fork_server(address)) > 0);
	for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
		int err, want = acts[i] == HS_GONE	? MIG_SERVER_DIED
				: acts[i] == HS_BAD_SEQ ? IDL_ETIMEDOUT
							: IDL_EPROTO;
		struct shm_conn *c = st_raw_connect(address, &err);

		ST_CHECK_KR(err, 0);
		if (c == NULL)
			break;
		st_head(m->b, IDL_KIND_REQUEST, acts[i], 32, 0, 0);
		ST_CHECK_KR(st_raw_send(c, m->b, 32, 1000), 0);
		err = st_raw_recv(c, m->b, sizeof m->b, &len, acts[i] == HS_BAD_SEQ ? 300 : 5000);
		if (acts[i] == HS_TAIL_FAR) {
			ST_CHECK_KR(err, 0);
			st_head(m->b, IDL_KIND_REQUEST, 1, 32, 0, 0);
			for (int k = 0; k < 100000 && (err = st_raw_send(c, m->b, 32, 1000)) == 0;
			     k++)
				continue;
		}
		if (err != want)
			fprintf(stderr, "shm-test: hostile server, %s:\n", hs_names[acts[i]]);
		ST_CHECK_KR(err, want);
		/* The error is sticky: the connection is not used again. A refused message
		 * leaves nothing behind it: the wait for another times out. */
		if (acts[i] != HS_BAD_SEQ)
			ST_CHECK_KR(st_raw_recv(c, m->b, sizeof m->b, &len, 100),
				    hs_desc_act(acts[i]) ? IDL_ETIMEDOUT : want);
		st_raw_close(c);
	}
	/* Through the runtime: the hello's reply ring is corrupted. */
	ST_CHECK_KR(idl_port_open(address, &port), 0);
	if (port != NULL) {
		idl_port_set_timeout(port, 5000);
		ST_CHECK_KR(bench_null(port), IDL_EPROTO);
		idl_port_close(port);
	}
	hs_reap(pid);
	CU_ASSERT_EQUAL(st_count_regions(getpid()), 0);
	CU_ASSERT_EQUAL(st_count_fds(getpid()), fds0);
	free(m);
}

/* A rendezvous server that sends a hello of its own making, with descriptor `fd`. */
static pid_t
hs_fake_rendezvous(const char *path, const struct shm_hello *h, int fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	pid_t pid;

	if (strlen(path) >= sizeof sa.sun_path)
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 4) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} cm;
		struct iovec iov = { .iov_base = (void *)h, .iov_len = sizeof *h };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		int cfd = accept(lfd, NULL, NULL);

		if (fd >= 0) {
			memset(&cm, 0, sizeof cm);
			cm.h.cmsg_level = SOL_SOCKET;
			cm.h.cmsg_type = SCM_RIGHTS;
			cm.h.cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(&cm.h), &fd, sizeof fd);
			mh.msg_control = cm.b;
			mh.msg_controllen = sizeof cm.b;
		}
		sendmsg(cfd, &mh, MSG_NOSIGNAL);
		sleep(5);
		_exit(0);
	}
	close(lfd);
	return pid;
}

/* A region that could be shrunk under us, one smaller than announced, a wrong hello, and
 * no descriptor at all: each refused with IDL_EPROTO, leaving no mapping or descriptor. */
static void
hs_bad_regions(void)
{
	struct shm_layout lay;
	char path[300], address[310];
	int fds0 = st_count_fds(getpid());

	snprintf(path, sizeof path, "%s/fake.sock", st_dir);
	snprintf(address, sizeof address, "shm:%s", path);
	CU_ASSERT_FATAL(idl__shm_layout(SHM_RING_MIN, 4 * SHM_PAGE, &lay) == 0);
	for (int k = 0; k < 4; k++) {
		struct shm_hello h = { SHM_MAGIC, SHM_VERSION, lay.ring_bytes, lay.ool_bytes,
				       lay.total };
		int fd = memfd_create("idlkit-fake", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		idl_port_t port = NULL;
		pid_t pid;

		CU_ASSERT_FATAL(fd >= 0);
		if (k == 0) { /* the right size, not sealed */
			CU_ASSERT(ftruncate(fd, (off_t)lay.total) == 0);
		} else if (k == 1) { /* sealed, smaller than announced */
			CU_ASSERT(ftruncate(fd, (off_t)lay.total / 2) == 0);
			fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
		} else if (k == 2) { /* a sealed region, but a hello with sizes out of bounds */
			CU_ASSERT(ftruncate(fd, (off_t)lay.total) == 0);
			fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
			h.ring_bytes = 12345;
		}
		pid = hs_fake_rendezvous(path, &h, k == 3 ? -1 : fd);
		close(fd);
		CU_ASSERT_FATAL(pid > 0);
		ST_CHECK_KR(idl_port_open(address, &port), IDL_EPROTO);
		if (port != NULL)
			idl_port_close(port);
		hs_reap(pid);
		CU_ASSERT_EQUAL(st_count_regions(getpid()), 0);
		CU_ASSERT_EQUAL(st_count_fds(getpid()), fds0);
	}
	unlink(path);
}

const struct st_case st_hostile_cases[] = {
	{ "client scribbles, server survives", hs_client_scribbles },
	{ "server scribbles, client errors", hs_server_scribbles },
	{ "unsafe regions refused", hs_bad_regions },
	{ NULL, NULL },
};
