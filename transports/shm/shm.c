/*
 * shm.c - the shm: transport, "shm:/run/foo.sock": shared-memory rings between two processes.
 *
 * The address names a UNIX SOCK_SEQPACKET rendezvous socket. For each client the server
 * creates a memfd sealed against shrinking and growing, maps it, and passes it over the
 * accepted socket with SCM_RIGHTS; the socket then stays open for the peer's credentials
 * and as the liveness signal (its end of file). The region holds one single-producer /
 * single-consumer byte ring per direction, and an out-of-line arena per direction
 * (shm_ool.c). This file has the rings and the waiting; shm_rdv.c the rendezvous;
 * shm_impl.h the layout; docs/transports/shm.md the design and the limits.
 *
 * Waiting: spin for a bounded time (IDL_SHM_SPIN_NS), unless both sides last ran on the
 * same CPU or the machine has one, then sleep on a futex word in the region with a waiter
 * flag, so a publish makes a wake system call only when the peer sleeps. A sleep is cut
 * into slices; when a slice times out the socket is checked for end of file, so a dead
 * peer is noticed within one slice (at most IDL_SHM_LIVENESS_MS) without a system call per
 * spin. A peer that closes cleanly sets its `gone` flag and wakes us at once.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sched_getcpu */
#endif

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "shm_impl.h"

#define SHM_SPIN_DEFAULT_NS 20000
#define SHM_SLICE_FIRST_MS 2
#define SHM_SLICE_MAX_DEFAULT_MS 100

struct shm_cfg idl__shm_cfg;

static int
shm_init(void)
{
	uint64_t ring = (uint64_t)idl__env_int("IDL_SHM_RING_BYTES", SHM_RING_DEFAULT, SHM_RING_MIN,
					       SHM_RING_MAX);
	uint64_t ool = (uint64_t)idl__env_int("IDL_SHM_OOL_BYTES", SHM_OOL_DEFAULT, 0, SHM_OOL_MAX);
	uint32_t r = SHM_RING_MIN;

	while (r < ring)
		r <<= 1; /* rings are powers of two: positions are a mask away */
	idl__shm_cfg.ring_bytes = r;
	idl__shm_cfg.ool_bytes = (ool + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
	if (idl__shm_cfg.ool_bytes > SHM_OOL_MAX)
		idl__shm_cfg.ool_bytes = SHM_OOL_MAX;
	idl__shm_cfg.spin_ns = idl__env_int("IDL_SHM_SPIN_NS", SHM_SPIN_DEFAULT_NS, 0, 1000000000);
	idl__shm_cfg.slice_max_ms =
		idl__env_int("IDL_SHM_LIVENESS_MS", SHM_SLICE_MAX_DEFAULT_MS, 1, 60000);
	idl__shm_cfg.ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return 0;
}

/* ---- Futexes and the one-CPU check ---- */

static int
shm_futex_wait(uint32_t *word, uint32_t val, int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	/* Not FUTEX_PRIVATE: the word is in a mapping shared with another process. */
	return idl__sys_futex(word, FUTEX_WAIT, val, &ts) == 0 ? 0 : errno;
}

/* Wakes the waiter on `word` if its flag says it waits; the flag is cleared by whoever
 * wakes, so a run of messages makes one wake. A waiter on the futex is woken there; one
 * that waits for its rendezvous socket to be readable (an event loop's, shm_nb.c) gets a
 * byte on it. Call after a seq_cst fence that follows the publish, which pairs with the
 * waiter's fence between setting the flag and checking. */
static __attribute__((noinline)) void
shm_wake(struct shm_conn *c, uint32_t *word)
{
	uint32_t v = __atomic_exchange_n(word, 0, __ATOMIC_SEQ_CST);

	if (v == SHM_WAIT_FD)
		(void)idl__sys_send(c->fd, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	else if (v != 0)
		(void)idl__sys_futex(word, FUTEX_WAKE, 1, NULL);
}

static inline __attribute__((always_inline)) void
shm_kick(struct shm_conn *c, uint32_t *word)
{
	/* Nobody waits, most of the time: one load, no call. */
	if (__atomic_load_n(word, __ATOMIC_RELAXED) != 0)
		shm_wake(c, word);
}

static inline void
shm_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Publishes the CPU this thread runs on, for the peer's one-CPU check; written only when it
 * changed, so that the peer reads a line its cache still holds. */
static int
shm_note_cpu(struct shm_conn *c)
{
	int cpu = sched_getcpu();

	if (cpu != atomic_load_explicit(&c->cpu_said, memory_order_relaxed)) {
		__atomic_store_n(&c->ctl->side[c->me].cpu, cpu, __ATOMIC_RELAXED);
		atomic_store_explicit(&c->cpu_said, cpu, memory_order_relaxed);
	}
	return cpu;
}

/*
 * Whether spinning can pay: never on a one-CPU machine, nor when the peer last ran on the
 * CPU we run on (both pinned there: while we spin it cannot run, and spinning there is
 * several times slower than blocking). Each side notes its CPU when it waits and when it
 * publishes, so a peer that never has to wait is still seen.
 */
static int
shm_may_spin(struct shm_conn *c)
{
	int cpu;

	if (idl__shm_cfg.spin_ns == 0 || idl__shm_cfg.ncpu == 1)
		return 0;
	cpu = shm_note_cpu(c);
	return cpu < 0 || __atomic_load_n(&c->ctl->side[1 - c->me].cpu, __ATOMIC_RELAXED) != cpu;
}

/* ---- Connection state ---- */

/* Makes `err` the connection's sticky error (the first one stays). */
static int
shm_break(struct shm_conn *c, int err, const char *what)
{
	int zero = 0;

	atomic_compare_exchange_strong(&c->broken, &zero, err);
	return idl__fail(atomic_load(&c->broken), "shm: %s", what);
}

/* The error an op must return before waiting any longer, or 0. */
static inline __attribute__((always_inline)) int
shm_state(struct shm_conn *c)
{
	int b;

	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	if ((b = atomic_load_explicit(&c->broken, memory_order_relaxed)) != 0)
		return b;
	if (__atomic_load_n(&c->peer_ctl->gone, __ATOMIC_ACQUIRE) != 0)
		return shm_break(c, MIG_SERVER_DIED, "the peer closed the connection");
	return 0;
}

/* The liveness check after a sleep slice: end of file (or an error) on the rendezvous
 * socket means the peer process is gone. After the hello a peer writes there only to wake
 * a side driven by an event loop (shm_nb.c), so the bytes are read and ignored. */
static int
shm_alive(struct shm_conn *c)
{
	char b[64];

	for (;;) {
		ssize_t n = recv(c->fd, b, sizeof b, MSG_DONTWAIT);

		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return shm_break(c, MIG_SERVER_DIED, "the peer went away");
	}
}

/* Whether the record at our tail is published: 1 with its word, 0 if not yet. A length that
 * could not fit the ring is a broken (or hostile) producer. */
static inline __attribute__((always_inline)) int
shm_ready(struct shm_conn *c, uint64_t *wordp)
{
	uint64_t word = __atomic_load_n((uint64_t *)(c->ring_in + (c->tail & (c->rbytes - 1))),
					__ATOMIC_ACQUIRE);

	if (word >> 32 != shm_rec_word(c->tail, 0) >> 32)
		return 0;
	if ((uint32_t)word > c->rbytes - 2 * SHM_REC_HDR)
		return shm_break(c, IDL_EPROTO, "the peer published a record longer than its ring");
	*wordp = word;
	return 1;
}

/* Room left in our outbound ring, at least `need` if it can be had: the consumer's tail is
 * read (a cache line it writes) only when the tail seen last leaves too little room. */
static inline __attribute__((always_inline)) int
shm_room(struct shm_conn *c, uint64_t need, uint64_t *room)
{
	uint64_t tail, used;

	if (c->rbytes - (c->head - c->tail_seen) >= need) {
		*room = c->rbytes - (c->head - c->tail_seen);
		return 0;
	}
	tail = __atomic_load_n(&c->out_ctl->tail, __ATOMIC_ACQUIRE);
	used = c->head - tail;
	/* The tail only moves forward, up to our head. */
	if (used > c->rbytes || used % IDL_MSG_ALIGN != 0 || tail - c->tail_seen > c->rbytes)
		return shm_break(c, IDL_EPROTO, "the peer corrupted our ring's tail index");
	c->tail_seen = tail;
	*room = c->rbytes - used;
	return 0;
}

/* What a waiter waits for: `need` bytes of room (room == 1), or a record (*have 1). */
static int
shm_have(struct shm_conn *c, int room, uint64_t need, uint64_t *have)
{
	uint64_t word;
	int r;

	if (room)
		return shm_room(c, need, have);
	if ((r = shm_ready(c, &word)) < 0)
		return r;
	*have = (uint64_t)r;
	return 0;
}

/*
 * A wait that found the peer gone (its flag, or end of file on the rendezvous socket) looks
 * at the ring once more before it says so: a peer publishes its last record before it
 * marks itself gone or closes, so a record that arrived between the wait's look at the
 * ring and its look at the peer is read, not lost. A server that refuses or ends a
 * connection says why in that record.
 */
static int
shm_wait_gone(struct shm_conn *c, int room, int err)
{
	uint64_t word;

	if (!room && err != IDL_ECLOSED && shm_ready(c, &word) == 1)
		return 0;
	return err;
}

/*
 * Waits until a record is there to read (room == 0, need 1) or `need` bytes are free to
 * write (room == 1): spin, then sleep on the futex word in slices, checking liveness after
 * each slice that times out.
 */
static int
shm_wait(struct shm_conn *c, int room, uint64_t need, struct idl_deadline *dl)
{
	int64_t deadline = idl_deadline_abs(dl);
	uint32_t *word = room ? &c->out_ctl->prod_sleep : &c->in_ctl->cons_sleep;
	int64_t slice = SHM_SLICE_FIRST_MS * 1000000ll, now;
	uint64_t have;
	int err;

	if (shm_may_spin(c)) {
		int64_t end = idl_now_ns() + idl__shm_cfg.spin_ns;

		for (unsigned i = 1;; i++) {
			if ((err = shm_have(c, room, need, &have)) != 0)
				return err;
			if (have >= need)
				return 0;
			shm_pause();
			if (i % 64 == 0) {
				if ((err = shm_state(c)) != 0)
					return shm_wait_gone(c, room, err);
				if ((now = idl_now_ns()) >= end || now >= deadline)
					break;
			}
		}
	}
	for (;;) {
		__atomic_store_n(word, SHM_WAIT_FUTEX, __ATOMIC_SEQ_CST);
		err = shm_have(c, room, need, &have);
		if (err == 0 && have < need && (err = shm_state(c)) != 0 &&
		    (err = shm_wait_gone(c, room, err)) == 0)
			have = need;
		if (err == 0 && have < need && (now = idl_now_ns()) >= deadline)
			err = IDL_ETIMEDOUT;
		if (err != 0 || have >= need) {
			__atomic_store_n(word, 0, __ATOMIC_RELAXED);
			return err;
		}
		if (deadline - now < slice)
			slice = deadline - now;
		if (shm_futex_wait(word, SHM_WAIT_FUTEX, slice) == ETIMEDOUT) {
			__atomic_store_n(word, 0, __ATOMIC_RELAXED);
			if ((err = shm_alive(c)) != 0)
				return shm_wait_gone(c, room, err);
			slice = 2 * slice < idl__shm_cfg.slice_max_ms * 1000000ll
					? 2 * slice
					: idl__shm_cfg.slice_max_ms * 1000000ll;
		}
	}
}

/* ---- The rings ---- */

static inline __attribute__((always_inline)) void
shm_copy_in(struct shm_conn *c, uint64_t pos, const void *src, size_t n)
{
	size_t off = (size_t)(pos & (c->rbytes - 1)), first = c->rbytes - off;

	if (n <= first) {
		memcpy(c->ring_out + off, src, n);
	} else {
		memcpy(c->ring_out + off, src, first);
		memcpy(c->ring_out, (const unsigned char *)src + first, n - first);
	}
}

static inline __attribute__((always_inline)) void
shm_copy_out(struct shm_conn *c, uint64_t pos, void *dst, size_t n)
{
	size_t off = (size_t)(pos & (c->rbytes - 1)), first = c->rbytes - off;

	if (n <= first) {
		memcpy(dst, c->ring_in + off, n);
	} else {
		memcpy(dst, c->ring_in + off, first);
		memcpy((unsigned char *)dst + first, c->ring_in, n - first);
	}
}

/* Puts the out-of-line descriptors of the message being written at c->head into their
 * ring form; on failure undoes what was done. `wire` has room for nd descriptors. */
static int
shm_put_descs(struct shm_conn *c, const unsigned char *msg, uint32_t nd, idl_desc_t *wire,
	      struct idl_deadline *dl)
{
	uint64_t at = c->head + SHM_REC_HDR + IDL_MSG_HEADER_SIZE;
	idl_desc_t d;
	int err;

	for (uint32_t i = 0; i < nd; i++) {
		memcpy(&d, msg + IDL_MSG_HEADER_SIZE + (size_t)i * IDL_DESC_SIZE, sizeof d);
		if ((err = idl__shm_ool_put(c->rg, &d, &wire[i], idl_deadline_abs(dl))) != 0) {
			while (i-- > 0) {
				memcpy(&d, msg + IDL_MSG_HEADER_SIZE + (size_t)i * IDL_DESC_SIZE,
				       sizeof d);
				idl__shm_ool_unput(c->rg, &d, &wire[i]);
			}
			return err;
		}
		shm_copy_in(c, at + (uint64_t)i * IDL_DESC_SIZE, &wire[i], IDL_DESC_SIZE);
	}
	return 0;
}

/* Publishes the record of `len` bytes written at c->head, `rec` bytes in all: the stop word
 * after it first, then its own word, with release. */
static inline void
shm_commit(struct shm_conn *c, uint32_t len, uint64_t rec)
{
	uint64_t *at = (uint64_t *)(c->ring_out + (c->head & (c->rbytes - 1)));
	uint64_t *next = (uint64_t *)(c->ring_out + ((c->head + rec) & (c->rbytes - 1)));

	__atomic_store_n(next, shm_rec_word(c->head + rec, 0) ^ SHM_REC_STOP, __ATOMIC_RELAXED);
	__atomic_store_n(at, shm_rec_word(c->head, len), __ATOMIC_RELEASE);
	c->head += rec;
}

/* Publishes a message whose nd descriptors (nd may be 0) go on the wire as `wire`. On
 * failure nothing of the message is left in the region. */
static int
shm_publish(struct shm_conn *c, const struct idl_xmsg *m, uint32_t nd, idl_desc_t *wire,
	    struct idl_deadline *dl)
{
	const unsigned char *msg = m->data;
	uint64_t rec, room = 0;
	int err;

	if ((err = shm_state(c)) != 0)
		return err;
	if (m->len > c->rbytes - 2 * SHM_REC_HDR)
		return idl__fail(IDL_EMSGSIZE, "shm: a %zu-byte message exceeds the %u-byte ring",
				 m->len, c->rbytes);
	/* Room for the record and the stop word after it. */
	rec = SHM_REC_HDR + IDL_MSG_ROUND(m->len);
	err = shm_room(c, rec + SHM_REC_HDR, &room);
	if (err == 0 && room < rec + SHM_REC_HDR)
		err = shm_wait(c, 1, rec + SHM_REC_HDR, dl);
	if (err == 0) {
		/* Room cannot shrink now: we are the only producer. */
		shm_copy_in(c, c->head + SHM_REC_HDR, msg, m->len);
		if (nd != 0)
			err = shm_put_descs(c, msg, nd, wire, dl);
	}
	if (err == 0) {
		shm_commit(c, (uint32_t)m->len, rec);
		if (idl__shm_cfg.spin_ns != 0 && idl__shm_cfg.ncpu > 1)
			shm_note_cpu(c);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		shm_kick(c, &c->out_ctl->cons_sleep);
	}
	return err;
}

/*
 * A message with descriptors: each datum goes into our outbound arena (a block the caller
 * allocated there and gave away moves without a copy), the ring gets their offsets. Once
 * it is published, or has failed, what the message gave away is released: copied data
 * marked dealloc by idl__shm_ool_sent(); on failure every such datum, a moved block back
 * in the caller's hands included.
 */
static int
shm_send_desc(struct shm_conn *c, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	const unsigned char *msg = m->data;
	idl_desc_t stackw[8], *wire = stackw;
	uint32_t nd;
	int err, published;

	if ((err = idl__desc_out_check(msg, m->len, "shm", &nd)) == 0 &&
	    nd > sizeof stackw / sizeof stackw[0] && (wire = malloc(nd * sizeof *wire)) == NULL)
		err = idl__fail(IDL_ENOMEM, "shm: out of memory");
	if (err == 0)
		err = shm_publish(c, m, nd, wire, dl);
	published = err == 0;
	if (err != 0 && err != MIG_SERVER_DIED && err != IDL_ECLOSED) {
		idl_msg_header_t bare;
		struct idl_xmsg b;

		if (idl__desc_bare_reply(m, &bare, err, &b))
			err = shm_publish(c, &b, 0, NULL, dl);
	}
	if (published) {
		for (uint32_t i = 0; i < nd; i++) {
			idl_desc_t d;

			memcpy(&d, msg + IDL_MSG_HEADER_SIZE + (size_t)i * IDL_DESC_SIZE, sizeof d);
			idl__shm_ool_sent(c->rg, &d, &wire[i]);
		}
	} else {
		idl__msg_release_sent(m->data);
	}
	if (wire != stackw && wire != NULL)
		free(wire);
	return err;
}

static int
shm_conn_send(void *vconn, const struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct shm_conn *c = vconn;

	if (idl__desc_msg(m->data, m->len))
		return shm_send_desc(c, m, dl);
	return shm_publish(c, m, 0, NULL, dl);
}

/* Takes the record at our tail, whose word (loaded once, checked) is `word`: copies the
 * bytes out and releases the room. */
static inline __attribute__((always_inline)) int
shm_take(struct shm_conn *c, struct idl_xmsg *m, uint64_t word)
{
	uint32_t len = (uint32_t)word;
	size_t n = len < m->cap ? len : m->cap;

	shm_copy_out(c, c->tail + SHM_REC_HDR, m->data, n);
	c->tail += SHM_REC_HDR + IDL_MSG_ROUND((uint64_t)len);
	__atomic_store_n(&c->in_ctl->tail, c->tail, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	shm_kick(c, &c->in_ctl->prod_sleep);
	m->len = len;
	if (len > m->cap) {
		idl__shm_ool_drop(c->rg, m->data, n);
		if (n > 3)
			((unsigned char *)m->data)[3] &= (unsigned char)~IDL_MSGF_DESC;
		return IDL_EMSGSIZE;
	}
	/* The record was taken whole, so the ring keeps its framing: a bad descriptor refuses
	 * the message (what its good ones name goes back to the peer), not the connection. */
	if (len >= IDL_MSG_HEADER_SIZE && (((unsigned char *)m->data)[3] & IDL_MSGF_DESC) &&
	    idl__shm_ool_recv(c->rg, m->data, len) != 0) {
		idl__shm_ool_drop(c->rg, m->data, n);
		return idl__desc_refused(
			m, len,
			idl__fail(IDL_EPROTO, "shm: the peer sent a bad out-of-line descriptor"));
	}
	return 0;
}

static int
shm_conn_recv(void *vconn, struct idl_xmsg *m, struct idl_deadline *dl)
{
	struct shm_conn *c = vconn;
	uint64_t word = 0;
	int err;

	m->nfds = 0;
	if (atomic_load_explicit(&c->closed, memory_order_relaxed))
		return IDL_ECLOSED;
	/* A record the peer published before it closed is still read, even after a send
	 * found the peer gone: a server that refuses or ends a connection says why first. */
	if ((err = shm_ready(c, &word)) == 0 &&
	    (err = atomic_load_explicit(&c->broken, memory_order_relaxed)) != 0)
		return err;
	while (err == 0 && (err = shm_wait(c, 0, 1, dl)) == 0)
		err = shm_ready(c, &word);
	return err < 0 ? err : shm_take(c, m, word);
}

/* The combined call: publish the request, wake the server only if it sleeps, and wait for
 * the reply; when the server is running on another CPU no system call is made. */
static int
shm_conn_call(void *vconn, const struct idl_xmsg *req, struct idl_xmsg *rep,
	      struct idl_deadline *dl)
{
	int err = shm_conn_send(vconn, req, dl);

	return err != 0 ? err : shm_conn_recv(vconn, rep, dl);
}

static int
shm_conn_cred(void *vconn, struct idl_cred *cred)
{
	struct shm_conn *c = vconn;

	*cred = c->cred;
	return c->cred.valid ? 0 : IDL_ENOTSUP;
}

static void
shm_conn_close(void *vconn)
{
	struct shm_conn *c = vconn;

	atomic_store(&c->closed, 1);
	if (c->ctl != NULL) {
		/* Tell the peer, then wake every waiter of either side: ours see `closed`,
		 * the peer's see `gone`. */
		__atomic_store_n(&c->ctl->side[c->me].gone, 1, __ATOMIC_SEQ_CST);
		for (int d = 0; d < 2; d++) {
			shm_kick(c, &c->ctl->ring[d].cons_sleep);
			shm_kick(c, &c->ctl->ring[d].prod_sleep);
		}
	}
	if (c->open)
		shutdown(c->fd, SHUT_RDWR);
}

static void
shm_conn_fini(void *vconn)
{
	struct shm_conn *c = vconn;

	if (c->open)
		close(c->fd);
	c->open = 0;
	if (c->rg != NULL)
		idl__shm_region_unref(c->rg);
	c->rg = NULL;
	c->ctl = NULL;
	c->out_ctl = c->in_ctl = NULL;
	c->peer_ctl = NULL;
	idl__shm_nb_fini(c);
}

void
idl__shm_attach(struct shm_conn *c, struct shm_region *rg)
{
	c->rg = rg;
	c->ctl = rg->ctl;
	c->out_ctl = &rg->ctl->ring[c->me];
	c->in_ctl = &rg->ctl->ring[1 - c->me];
	c->peer_ctl = &rg->ctl->side[1 - c->me];
	c->rbytes = rg->lay.ring_bytes;
	c->ring_out = rg->base + rg->lay.ring_off[c->me];
	c->ring_in = rg->base + rg->lay.ring_off[1 - c->me];
	/* A region starts with every index at 0. */
	c->head = 0;
	c->tail = 0;
	c->tail_seen = 0;
	atomic_store_explicit(&c->cpu_said, -1, memory_order_relaxed);
}

/* A block of the connection's outbound arena; NULL (the runtime then allocates ordinary
 * memory) when there is no arena or no room. */
static void *
shm_conn_ool_alloc(void *vconn, size_t size)
{
	void *p = NULL;

	return idl__shm_ool_alloc(vconn, size, &p) == 0 ? p : NULL;
}

static const struct idl_transport shm_transport = {
	IDL_TRANSPORT_INIT,
	.scheme = "shm",
	.flags = IDL_TRF_ZEROCOPY | IDL_TRF_CRED | IDL_TRF_DESC | IDL_TRF_OWNSET,
	.ep_size = sizeof(struct shm_ep),
	.conn_size = sizeof(struct shm_conn),
	.tr_init = shm_init,
	.ep_listen = idl__shm_ep_listen,
	.ep_fd = idl__shm_ep_fd,
	.ep_accept = idl__shm_ep_accept,
	.ep_close = idl__shm_ep_close,
	.ep_fini = idl__shm_ep_fini,
	.conn_connect = idl__shm_conn_connect,
	.conn_send = shm_conn_send,
	.conn_recv = shm_conn_recv,
	.conn_call = shm_conn_call,
	.conn_cred = shm_conn_cred,
	.conn_close = shm_conn_close,
	.conn_fini = shm_conn_fini,
	.conn_ool_alloc = shm_conn_ool_alloc,
	.ool_free = idl__shm_ool_free,
	.conn_fd = idl__shm_conn_fd,
	.conn_sendv_nb = idl__shm_conn_sendv_nb,
	.conn_recv_nb = idl__shm_conn_recv_nb,
	.ep_adopt = idl__shm_ep_adopt,
};

/* The ring operations shm_nb.c drives without waiting (shm_impl.h); the paths here use
 * them in line. */
int
idl__shm_ready(struct shm_conn *c, uint64_t *wordp)
{
	return shm_ready(c, wordp);
}

int
idl__shm_take(struct shm_conn *c, struct idl_xmsg *m, uint64_t word)
{
	return shm_take(c, m, word);
}

int
idl__shm_state(struct shm_conn *c)
{
	return shm_state(c);
}

int
idl__shm_alive(struct shm_conn *c)
{
	return shm_alive(c);
}

int
idl__shm_room(struct shm_conn *c, uint64_t need, uint64_t *room)
{
	return shm_room(c, need, room);
}

void
idl__shm_write(struct shm_conn *c, const struct idl_xmsg *m, uint64_t rec)
{
	shm_copy_in(c, c->head + SHM_REC_HDR, m->data, m->len);
	shm_commit(c, (uint32_t)m->len, rec);
}

void
idl__shm_kick(struct shm_conn *c, uint32_t *word)
{
	shm_kick(c, word);
}

void
idl__shm_register(void)
{
	/* A failure (the scheme taken by a user's transport) leaves shm: to that one. */
	(void)idl_transport_register(&shm_transport);
}

/* For tests: the region of a connection. */
void
idl__shm_region_span(void *vconn, void **base, size_t *len)
{
	struct shm_conn *c = vconn;

	*base = c->rg != NULL ? c->rg->base : NULL;
	*len = c->rg != NULL ? (size_t)c->rg->lay.total : 0;
}
