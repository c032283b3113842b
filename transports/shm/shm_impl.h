/*
 * shm_impl.h - what the two files of the shm: transport share: the layout of the shared
 * region, the per-connection state, and the out-of-line (OOL) arena interface that shm.c
 * calls and the tests reach (docs/transports/shm.md has the design).
 *
 * One region per connection, a sealed memfd that the server creates and passes to the
 * client over the rendezvous socket:
 *
 *     control page | ring 0 | ring 1 | free queue 0 | free queue 1 | arena 0 | arena 1
 *
 * Direction 0 carries requests (client to server), direction 1 replies. Ring d and arena d
 * are written by the sender of direction d; free queue d by its receiver, which posts there
 * the arena-d blocks it is done with. A side's index is its outbound direction: the client
 * is 0, the server 1.
 *
 * Nothing read from the region is trusted: indices and lengths are loaded once into locals,
 * validated, and never read again; each side keeps its own indices privately and only
 * publishes them.
 */
#ifndef IDL_TRANSPORTS_SHM_IMPL_H
#define IDL_TRANSPORTS_SHM_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sock/sockfile.h"
#include "transport_kit.h"

#define SHM_MAGIC 0x31306d6873646c69ull /* "idlshm01" in memory order on little-endian */
#define SHM_VERSION 1u
#define SHM_PAGE 4096u
#define SHM_LINE 64
#define SHM_CLIENT 0
#define SHM_SERVER 1

/* Ring and arena bounds (the server's environment picks the sizes, the client checks). */
#define SHM_RING_MIN (16u * 1024u) /* a hello (8168 bytes) must fit */
#define SHM_RING_MAX (64u * 1024u * 1024u)
#define SHM_RING_DEFAULT (64u * 1024u)
#define SHM_OOL_MAX (1024u * 1024u * 1024u)
#define SHM_OOL_DEFAULT (4u * 1024u * 1024u)
/*
 * A ring record: an 8-byte word, then the message, padded to 8. The word holds the length
 * (low 32 bits) and the record's position / 8 (high 32 bits), and is stored last, with
 * release: the consumer polls the word at its tail, and a record is there when the position
 * in it is the tail's. Before publishing, the producer writes a stop word (a position that
 * cannot match) just after the record, so that what lies beyond is never taken for a
 * record. The consumer never reads a producer's index: one cache line per small message.
 */
#define SHM_REC_HDR 8u
#define SHM_REC_STOP (1ull << 63)

/* What a waiter's word says (struct shm_ringctl): 0, nobody waits; SHM_WAIT_FUTEX, wake it
 * with FUTEX_WAKE on the word; SHM_WAIT_FD, write a byte to its rendezvous socket (a side
 * driven by an event loop, shm_nb.c, whose descriptor that makes readable). */
#define SHM_WAIT_FUTEX 1u
#define SHM_WAIT_FD 2u

static inline uint64_t
shm_rec_word(uint64_t pos, uint32_t len)
{
	return (uint64_t)len | (uint64_t)(uint32_t)(pos >> 3) << 32;
}

/* One direction's shared words. cons_sleep is written by the consumer only when it goes to
 * sleep and read by the producer after each publish, so it lives alone; the consumer's tail
 * is read by the producer only when its last reading leaves too little room. */
struct shm_ringctl {
	_Alignas(SHM_LINE) uint32_t
		cons_sleep; /* SHM_WAIT_*: the consumer waits (or is about to) */
	_Alignas(SHM_LINE) uint64_t tail; /* bytes consumed, written by the consumer only */
	uint32_t prod_sleep; /* SHM_WAIT_*: the producer waits for room */
};

/* What a side says about itself. */
struct shm_sidectl {
	_Alignas(SHM_LINE) int32_t cpu; /* the CPU it last waited on, for the one-CPU check */
	uint32_t gone; /* it closed the connection */
};

/* A free queue's indices: entries are (first page << 32 | pages) of a block to free. */
struct shm_fqctl {
	_Alignas(SHM_LINE) uint64_t head; /* posted by the arena's receiver */
	_Alignas(SHM_LINE) uint64_t tail; /* drained by the arena's sender */
};

struct shm_ctl {
	uint64_t magic;
	uint32_t version;
	uint32_t ring_bytes;
	uint64_t ool_bytes;
	uint64_t total;
	struct shm_ringctl ring[2];
	struct shm_sidectl side[2];
	struct shm_fqctl fq[2];
};

/* What the server sends over the rendezvous socket with the memfd. */
struct shm_hello {
	uint64_t magic;
	uint32_t version;
	uint32_t ring_bytes;
	uint64_t ool_bytes;
	uint64_t total;
};

/* Where everything lies, computed from the two sizes by both sides (shm_layout()). */
struct shm_layout {
	uint32_t ring_bytes; /* a power of two */
	uint64_t ool_bytes; /* a multiple of SHM_PAGE, possibly 0 (no out-of-line data) */
	uint32_t npages; /* ool_bytes / SHM_PAGE */
	uint64_t ring_off[2];
	uint64_t fq_off[2];
	uint64_t arena_off[2];
	uint64_t total;
};

/*
 * A mapped region. It outlives its connection while the process holds blocks in it: data
 * received out of line, or allocated for sending and not yet sent, each holds a reference,
 * so that memory a user owns is never unmapped under it.
 */
struct shm_region {
	struct idl__link link; /* on the process's list of regions, for idl__shm_ool_free() */
	atomic_uint refs; /* the connection's, plus one per block held */
	unsigned char *base;
	struct shm_ctl *ctl;
	struct shm_layout lay;
	int me; /* SHM_CLIENT or SHM_SERVER */

	/* The out-of-line state, under lock: our outbound arena's page map, and our posts of
	 * frees into the inbound arena's queue. Private memory: the peer cannot touch it. */
	pthread_mutex_t lock;
	uint8_t *pstate; /* per page of the outbound arena: enum shm_page */
	uint32_t *prun; /* at a block's first page: its length in pages */
	uint32_t low; /* no free page lies below it: where a first fit starts */
	uint32_t used; /* pages not free */
	uint64_t fq_tail; /* how far we drained the outbound arena's free queue */
	uint64_t fq_head; /* how far we posted into the inbound arena's free queue */
};

enum shm_page {
	SHM_PG_FREE = 0,
	SHM_PG_OWNED = 1, /* allocated by this process, not sent */
	SHM_PG_SENT = 2, /* sent: the receiver owns it until it posts the free */
};

/* A connection, either side. */
struct shm_conn {
	int fd; /* the rendezvous socket: liveness and credentials */
	int open;
	int me;
	atomic_int closed; /* conn_close was called */
	atomic_int broken; /* a sticky error: the peer died or broke the protocol */
	struct shm_region *rg;
	struct shm_ctl *ctl;
	/* The control words of ctl that every message touches, found once when the region is
	 * attached rather than indexed by side each time: our outbound ring's (its tail, its
	 * consumer's sleep word), our inbound ring's, and the peer's side (gone). */
	struct shm_ringctl *out_ctl;
	struct shm_ringctl *in_ctl;
	struct shm_sidectl *peer_ctl;
	unsigned char *ring_out;
	unsigned char *ring_in;
	uint32_t rbytes;
	uint64_t head; /* bytes we published in our outbound ring, private */
	uint64_t tail; /* our inbound ring's tail, private */
	uint64_t tail_seen; /* our outbound ring's tail as last read (validated) */
	atomic_int cpu_said; /* the CPU we last published (noted by the sender and the receiver) */
	struct idl_cred cred;
	/* Driven by an event loop (shm_nb.c): an epoll set of the rendezvous socket and an
	 * eventfd that stays readable while records wait that no wake-up reports. */
	int nb_made;
	int nb_set;
	int nb_efd;
	int nb_efd_on; /* under nb_lock: a send and a receive may spend it at once */
	struct idl__lock nb_lock;
};

/* The tunables, read from the environment once, when the transport registers (shm.c). */
struct shm_cfg {
	int64_t spin_ns; /* IDL_SHM_SPIN_NS: how long a waiter spins; 0: never */
	int64_t slice_max_ms; /* IDL_SHM_LIVENESS_MS: the longest sleep between liveness checks */
	uint32_t ring_bytes; /* IDL_SHM_RING_BYTES: per direction, for connections we accept */
	uint64_t ool_bytes; /* IDL_SHM_OOL_BYTES: arena per direction */
	long ncpu;
};
extern struct shm_cfg idl__shm_cfg;

/* A listening endpoint: the rendezvous socket. */
struct shm_ep {
	struct idl__sockfile sf; /* the rendezvous socket file (sockfile.c) */
};

/* The rendezvous ops (shm_rdv.c) and the connection's hook-up to its region (shm.c). */
int idl__shm_ep_listen(void *ep, const char *rest, const struct idl_listen_opts *opts);
int idl__shm_ep_fd(void *ep);
/* A rendezvous socket file the service manager passed (ListenSequentialPacket=). */
int idl__shm_ep_adopt(void *ep, int fd, const struct idl_listen_opts *opts);
int idl__shm_ep_accept(void *ep, void *conn);
void idl__shm_ep_close(void *ep);
void idl__shm_ep_fini(void *ep);
int idl__shm_conn_connect(void *conn, const char *rest, struct idl_deadline *dl);
void idl__shm_attach(struct shm_conn *c, struct shm_region *rg);

/* The layout for these sizes, or -1 when they are out of bounds. */
int idl__shm_layout(uint32_t ring_bytes, uint64_t ool_bytes, struct shm_layout *lay);

/* Regions (shm_ool.c). */
int idl__shm_region_new(unsigned char *base, const struct shm_layout *lay, int me,
			struct shm_region **rgp);
void idl__shm_region_unref(struct shm_region *rg);

/*
 * The out-of-line path (shm_ool.c). On send, each descriptor of the caller's message `d`
 * gets its ring form `wire` (addr: an offset into our outbound arena): a block of that
 * arena sent with IDL_DESCF_DEALLOC moves without a copy; anything else is copied once into
 * a new block, waiting until the deadline for the receiver to free room. unput undoes a put
 * whose message was not published; sent, called once it was, frees what the caller asked
 * to deallocate and was copied. On receive, the descriptors of the private copy of a message
 * are validated and turned into pointers into the inbound arena.
 */
int idl__shm_ool_put(struct shm_region *rg, const idl_desc_t *d, idl_desc_t *wire,
		     int64_t deadline);
void idl__shm_ool_unput(struct shm_region *rg, const idl_desc_t *d, const idl_desc_t *wire);
void idl__shm_ool_sent(struct shm_region *rg, const idl_desc_t *d, const idl_desc_t *wire);
int idl__shm_ool_recv(struct shm_region *rg, void *msg, size_t len);
/* Gives back the blocks of a received message that is dropped (too large for the buffer);
 * `n` bytes of it were copied. */
void idl__shm_ool_drop(struct shm_region *rg, const void *msg, size_t n);

/*
 * The allocator for out-of-line data (the shape proposed for idl_ool_alloc/idl_ool_free):
 * a block of `size` bytes in the outbound arena of connection `conn`, to be sent with
 * IDL_DESCF_DEALLOC without a copy. idl__shm_ool_free() frees a block this process holds in
 * any region (allocated here, or received); it returns 1 when `data` lies in a region, 0
 * when it does not (the caller then frees it as ordinary memory).
 */
int idl__shm_ool_alloc(void *conn, size_t size, void **datap);
int idl__shm_ool_free(void *data, size_t size);

/* The rings without waiting, for shm_nb.c (shm.c): whether a record is at our tail (1 with
 * its word); take it; the error an op must return now, or 0; the rendezvous socket's
 * liveness (its bytes read and ignored); the room in our outbound ring; write and publish
 * message m as a record of `rec` bytes (room checked); wake a waiter (SHM_WAIT_*). */
int idl__shm_ready(struct shm_conn *c, uint64_t *wordp);
int idl__shm_take(struct shm_conn *c, struct idl_xmsg *m, uint64_t word);
int idl__shm_state(struct shm_conn *c);
int idl__shm_alive(struct shm_conn *c);
int idl__shm_room(struct shm_conn *c, uint64_t need, uint64_t *room);
void idl__shm_write(struct shm_conn *c, const struct idl_xmsg *m, uint64_t rec);
void idl__shm_kick(struct shm_conn *c, uint32_t *word);

/* shm_nb.c: the event operations (idl_transport.h), for the embedded server; the
 * connection's event state freed. */
int idl__shm_conn_fd(void *conn, unsigned *events);
int idl__shm_conn_sendv_nb(void *conn, const struct idl_xmsg *msgs, unsigned n);
int idl__shm_conn_recv_nb(void *conn, struct idl_xmsg *m);
void idl__shm_nb_fini(struct shm_conn *c);

/* For tests: the connection's region, and the pages of its outbound arena in use (after
 * taking in the frees the peer posted). */
void idl__shm_region_span(void *conn, void **base, size_t *len);
uint32_t idl__shm_ool_used(void *conn);

#endif /* IDL_TRANSPORTS_SHM_IMPL_H */
