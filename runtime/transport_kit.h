/*
 * transport_kit.h - what a transport built into libidlrt may use of the runtime, and nothing
 * more: the part of the two rooms below the transports, core (runtime/core/: error detail,
 * the clock, zeroed memory, the small lock, the environment knobs, the registry's
 * registration, the port head's carried ports) and out-of-line memory (runtime/ool/: the
 * descriptor checks, the release of a sent message, the inline layout of out-of-line
 * data). Nothing of interp, trace, the client, the server or dynamic is here.
 *
 * A transport under transports/ includes this header (beside its own folder's headers and
 * the shared socket helpers of transports/sock/), never a room's header: the rooms above it
 * may change without a transport noticing, and what a transport depends on is read here in
 * one place. core/core.h includes it for the runtime's own files. It is not installed: a
 * transport outside the library has <idl/idl_transport.h> alone (docs/transports.md,
 * "Writing a transport").
 *
 * Names here are idl__ (internal, non-static); the linker's export list (runtime/local.mk)
 * keeps them out of the library's interface.
 */
#ifndef IDL_RUNTIME_TRANSPORT_KIT_H
#define IDL_RUNTIME_TRANSPORT_KIT_H

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "core/list.h" /* the intrusive list, for a transport's own lists too */

/*
 * Error detail (error.c). idl__fail() records a printf-style detail for the calling thread
 * and returns `err`, so that a failing path reads `return idl__fail(IDL_EPROTO, "...")`.
 * idl__clear_detail() starts a public entry point with an empty detail.
 */
int idl__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether the calling thread's detail may be non-empty: set by every function that writes
 * one, so that clearing it - which every call does first - is a test of one thread-local
 * byte when there is nothing to clear. The initial-exec model makes that byte one load at a
 * fixed offset from the thread pointer, with no call into the dynamic linker's TLS lookup;
 * it costs one byte of the static TLS block, which a library loaded with dlopen() may use. */
extern _Thread_local unsigned char idl__detail_set __attribute__((tls_model("initial-exec")));
void idl__clear_detail_now(void);

static inline void
idl__clear_detail(void)
{
	if (__builtin_expect(idl__detail_set, 0))
		idl__clear_detail_now();
}

/* Zeroed memory aligned to 16 for transport state and message buffers; free() releases it
 * (core/util.c). */
void *idl__zalloc(size_t size);

/* The environment variable `name` as a decimal integer in [min, max]; `dflt` when it is
 * unset, empty, malformed or out of range, so that a mistyped knob leaves the documented
 * default rather than an arbitrary value (core/util.c). */
int64_t idl__env_int(const char *name, int64_t dflt, int64_t min, int64_t max);

/* Copies n bytes, at most IDL__COPY_SMALL, with a few moves in line where memcpy would be a
 * call of a variable length (a small message through a transport's own buffer, a small reply
 * into a cache): the first and the last bytes of the size class, which may overlap. */
#define IDL__COPY_SMALL 64
static inline __attribute__((always_inline)) void
idl__copy_small(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n >= 16) {
		if (n >= 32) {
			memcpy(d, s, 32);
			memcpy(d + n - 32, s + n - 32, 32);
		} else {
			memcpy(d, s, 16);
			memcpy(d + n - 16, s + n - 16, 16);
		}
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n > 0) {
		d[0] = s[0];
		d[n - 1] = s[n - 1];
		d[n / 2] = s[n / 2];
	}
}

/*
 * A small lock for state that a per-message path takes and that is rarely contended (a
 * datagram endpoint's duplicate-reply cache, a connection's list of requests awaiting a
 * reply): a word that is 0 (free), 1 (held) or 2 (held, and someone sleeps on it), as
 * Drepper's "Futexes Are Tricky" describes. Taking and releasing a free one is one atomic
 * instruction each and no call; a waiter sleeps on a private futex (core/util.c). Zeroed
 * memory is a free lock; there is nothing to destroy. Not for use with condition variables.
 */
struct idl__lock {
	atomic_uint word;
};

void idl__lock_wait(struct idl__lock *l);
void idl__lock_wake(struct idl__lock *l);

static inline void
idl__lock_take(struct idl__lock *l)
{
	unsigned zero = 0;

	if (!atomic_compare_exchange_strong_explicit(&l->word, &zero, 1, memory_order_acquire,
						     memory_order_relaxed))
		idl__lock_wait(l);
}

static inline void
idl__lock_give(struct idl__lock *l)
{
	if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
		idl__lock_wake(l);
}

/*
 * The per-message system calls of the transports, made directly rather than through libc's
 * wrappers. In a process with more than one thread, each libc wrapper of a call that is a
 * cancellation point (send, recvmsg, mq_timedreceive ...) switches asynchronous cancellation
 * on and off around the system call: about 60 instructions per call and reply, a third of a
 * null call's budget on a server. The runtime cancels none of its threads, and a caller's
 * thread cancelled inside a call would leave its port held (the lean path's role, a
 * connection's lock), so these calls are not cancellation points on purpose. On x86-64 the
 * system call is made in line (libc's syscall() moves seven arguments once more); elsewhere
 * through syscall(). The sanitizers' builds keep libc's functions, which they intercept to
 * check the buffers and, for ThreadSanitizer, to see the ordering a message makes between
 * threads. Each returns what the libc function returns: the count, or -1 with errno set.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IDL__SYS_LIBC 1
#elif defined(__x86_64__)
static inline long
idl__syscall6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
#else
#define idl__syscall6(n, a1, a2, a3, a4, a5, a6) syscall(n, a1, a2, a3, a4, a5, a6)
#endif

#ifdef IDL__SYS_LIBC
#define idl__sys_send send
#define idl__sys_sendto sendto
#define idl__sys_recv recv
#define idl__sys_sendmsg sendmsg
#define idl__sys_recvmsg recvmsg
#else
static inline ssize_t
idl__sys_send(int fd, const void *buf, size_t len, int flags)
{
	return idl__syscall6(SYS_sendto, fd, (long)buf, (long)len, flags, 0, 0);
}

static inline ssize_t
idl__sys_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
		socklen_t tolen)
{
	return idl__syscall6(SYS_sendto, fd, (long)buf, (long)len, flags, (long)to, (long)tolen);
}

static inline ssize_t
idl__sys_recv(int fd, void *buf, size_t len, int flags)
{
	return idl__syscall6(SYS_recvfrom, fd, (long)buf, (long)len, flags, 0, 0);
}

static inline ssize_t
idl__sys_sendmsg(int fd, const struct msghdr *mh, int flags)
{
	return idl__syscall6(SYS_sendmsg, fd, (long)mh, flags, 0, 0, 0);
}

static inline ssize_t
idl__sys_recvmsg(int fd, struct msghdr *mh, int flags)
{
	return idl__syscall6(SYS_recvmsg, fd, (long)mh, flags, 0, 0, 0);
}
#endif

/* futex(2) for a word, an operation, a value and a relative timeout (or NULL): 0 or the
 * count woken, or -1 with errno set. */
#ifdef IDL__SYS_LIBC
#define idl__sys_futex(word, op, val, ts) syscall(SYS_futex, word, op, val, ts, NULL, 0)
#else
static inline long
idl__sys_futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return idl__syscall6(SYS_futex, (long)word, op, (long)val, (long)ts, 0, 0);
}
#endif

/* poll(2), which newer architectures have only as ppoll. */
#if defined(IDL__SYS_LIBC) || !defined(SYS_poll)
#define idl__sys_poll poll
#else
static inline int
idl__sys_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return (int)idl__syscall6(SYS_poll, (long)fds, (long)n, timeout_ms, 0, 0, 0);
}
#endif

/* The transports built into the library: one registration function per transport, defined
 * by the transport and called once, through the registry, by runtime/builtins.c. */
#if HAVE_TRANSPORT_UNIX
void idl__unix_register(void);
#endif
#if HAVE_TRANSPORT_TCP
void idl__tcp_register(void);
#endif
#if HAVE_TRANSPORT_UDP
void idl__udp_register(void);
#endif
#if HAVE_TRANSPORT_SHM
void idl__shm_register(void);
#endif
#if HAVE_TRANSPORT_PORT
void idl__mq_register(void);
#endif
#if HAVE_TRANSPORT_TLS
void idl__tls_register(void);
#endif

/*
 * Out-of-line data and descriptors (ool/ool.c, ool/ool_msg.c; docs/wire-format.md).
 */
/* Descriptors in one message, and file descriptors a unix: message carries: at most this
 * many (a sender is refused with IDL_ELIMIT, a receiver refuses with IDL_EPROTO). */
#define IDL_DESC_MAX 64u
/* idl_ool_alloc() takes blocks of at least this many bytes from the cache of mapped blocks
 * (ool/ool_cache.c) and smaller ones from malloc; whatever hands out out-of-line memory follows
 * the same split, so that idl_ool_free() knows malloc memory from the size, and a block of
 * the cache from any other mapping (a received memfd's) by the cache's table. */
#define IDL_OOL_MAP_MIN (16u * 1024u)

/* Whether a message's header (`len` bytes of it here) says it carries descriptors in the
 * in-memory form a transport converts: native order, the magic, IDL_MSGF_DESC. */
static inline int
idl__desc_msg(const void *data, size_t len)
{
	const unsigned char *b = data;

	return len >= IDL_MSG_HEADER_SIZE && (b[3] & IDL_MSGF_DESC) && b[0] == IDL_MSG_MAGIC &&
	       b[1] == IDL_ORDER_NATIVE;
}

/* A received message refused whole, its framing kept: `len` bytes of it came (its frame,
 * datagram, packet, record or queue message), and the next receive starts at the next
 * message. IDL_MSGF_DESC is cleared in the bytes handed back, so that nobody releases what
 * its descriptors name, and m->len says how many came, so that the receiver can answer it
 * from its header (<idl/idl_transport.h>, "Descriptors"). Returns err: IDL_EPROTO for
 * malformed descriptors (the detail says what was wrong), IDL_EMSGSIZE for a message larger
 * than the caller's buffer. A receive that lost the framing instead ends the connection and
 * returns its error with m->len 0. */
static inline int
idl__desc_refused(struct idl_xmsg *m, size_t len, int err)
{
	if (m->cap > 3)
		((unsigned char *)m->data)[3] &= (unsigned char)~IDL_MSGF_DESC;
	m->len = len;
	return err;
}

/* The descriptors of a message to send, checked: ndesc within IDL_DESC_MAX and within the
 * `len` bytes, a request, reply or one-way kind. 0 or an error with the detail naming
 * `scheme`. *nd gets the count. */
int idl__desc_out_check(const void *msg, size_t len, const char *scheme, uint32_t *nd);
/* The same for a received message of msize bytes (its header's size): IDL_EPROTO. */
int idl__desc_in_check(const void *msg, size_t msize, const char *scheme, uint32_t *nd);
/* Releases what a sent message gave away: IDL_DESCF_DEALLOC data, ports and arrays, ports
 * moved with a MOVE disposition, and the memory of IDL_DESCF_FREE_ARRAY arrays of ports.
 * Bounded by size and ndesc; nothing for a message without IDL_MSGF_DESC. The library
 * exports it as idl_msg_release_sent(). */
void idl__msg_release_sent(const idl_msg_header_t *msg);
/* Memory for a receiver that writes all `size` bytes before anyone reads them (the data of a
 * message read straight into it): as idl_ool_alloc(), but a recycled block's bytes are not
 * cleared first (what lies past `size` is). Released as idl_ool_alloc()'s, also unread. */
void *idl__ool_alloc_fill(size_t size);
/* Releases memory that is not a transport's own (shm:'s arenas) by the rule above: frees,
 * caches or unmaps it. */
void idl__ool_free_plain(void *addr, size_t size);

/*
 * Descriptors inline after the message (ool/ool_wire.c): tcp:, udp:, port: and the small data of
 * unix:. On the wire the message is followed by the data of each out-of-line descriptor in
 * descriptor order, each padded to 8; a descriptor's addr is the offset of its data from
 * the start of the message, and a receiver takes no other layout.
 */
struct idl__ool_out {
	/* The header and descriptors as they go on the wire. */
	unsigned char head[IDL_MSG_HEADER_SIZE + IDL_DESC_SIZE * IDL_DESC_MAX]
		__attribute__((aligned(8)));
	struct iovec *iov; /* the pieces, in order: caller's array of 2 + 2 * IDL_DESC_MAX */
	unsigned niov;
	size_t total; /* bytes on the wire: the message and its data */
	size_t inline_bytes; /* of them, the out-of-line data with its padding */
};
#define IDL__OOL_IOV_MAX (2u + 2u * IDL_DESC_MAX)
/* Lays out m (a message with IDL_MSGF_DESC) for a transport that carries data inline and no
 * ports: IDL_ENOTSUP naming `scheme` for a port. The pieces point into m and o->head. */
int idl__ool_inline_out(const struct idl_xmsg *m, const char *scheme, struct idl__ool_out *o);
/* Reads n bytes at offset `off` of the wire message into dst (NULL: skips them); offsets
 * only grow from call to call. Returns 0 or an error. */
typedef int (*idl__ool_reader)(void *arg, size_t off, void *dst, size_t n);
/* Converts the descriptors of a received message whose first msize bytes (its header's
 * size, already checked with idl__desc_in_check) are in msg and whose wire form is
 * wire_len bytes: each out-of-line datum is read into memory of its own with `rd`, up to
 * the end of the wire message. On failure nothing stays allocated and IDL_MSGF_DESC is
 * cleared in msg (idl__desc_refused()). */
int idl__ool_inline_in(void *msg, size_t msize, size_t wire_len, const char *scheme,
		       idl__ool_reader rd, void *arg);
/* The checks idl__ool_inline_in() makes before it allocates anything: the descriptors
 * (idl__desc_in_check), then the data in descriptor order, each at the next multiple of 8,
 * ending exactly at wire_len. 0 and *nd the count, or IDL_EPROTO naming `scheme`. */
int idl__ool_inline_layout(const void *msg, size_t msize, size_t wire_len, const char *scheme,
			   uint32_t *nd);
/* For a receiver that fills the data itself, after idl__ool_inline_layout(): each of the nd
 * descriptors gets a block of its size (idl__ool_alloc_fill, not cleared) and its addr
 * becomes the block's. 0, or IDL_ENOMEM with nothing left allocated. */
int idl__ool_inline_alloc(void *msg, uint32_t nd, const char *scheme);
/* Frees the blocks idl__ool_inline_alloc() gave msg's nd descriptors. */
void idl__ool_inline_free(void *msg, uint32_t nd);
/* The pieces that the wire bytes from offset `pos` to the end go into, once the blocks are
 * allocated: the rest of each datum, and its padding into the IDL_MSG_ALIGN bytes at `pad`
 * (read and thrown away). Fills iov (room for 2 * IDL_DESC_MAX) and returns the count. */
unsigned idl__ool_inline_iov(const void *msg, size_t msize, uint32_t nd, size_t pos,
			     struct iovec *iov, void *pad);
/* A reply whose descriptors cannot go (IDL_ENOTSUP for a port, a size over a limit...):
 * the client is told `err` by a bare reply instead, so that it does not wait for nothing
 * and the connection stays. Returns 1 and fills *bare and *out for a reply, 0 (the sender
 * returns err) for anything else. */
int idl__desc_bare_reply(const struct idl_xmsg *m, idl_msg_header_t *bare, int err,
			 struct idl_xmsg *out);
/* A reader over two pieces of memory: the bytes from offset `base` of the message. */
struct idl__ool_span {
	size_t base;
	const unsigned char *p0;
	size_t n0;
	const unsigned char *p1;
	size_t n1;
};
int idl__ool_span_read(void *arg, size_t off, void *dst, size_t n);

/*
 * Carried ports: ports in messages (core/port_head.c), for a transport that carries them
 * (unix:, as file descriptors). idl_port_close() (<idl/idl_port.h>) closes one.
 */
/* The address of a port a message names: a client port, or the handle of the endpoint a
 * request came in on (idl_request_port()); NULL when `port` is neither. */
const char *idl__port_address(idl_port_t port);
/* A client port made around a connection a transport already has: a port that arrived in
 * a message, made by the client's port class (runtime/builtins.c installs it). Takes tr_state
 * (idl__zalloc(tr->conn_size), connected) in every case. */
int idl__port_adopt(const struct idl_transport *tr, const char *address, void *tr_state,
		    idl_port_t *portp);

#endif /* IDL_RUNTIME_TRANSPORT_KIT_H */
