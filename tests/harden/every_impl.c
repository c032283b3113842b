/*
 * every_impl.c - the server routines of tests/fuzz/every.defs, for the hardening tests'
 * server (every_server.c) and the demux fuzzer (tests/fuzz/fuzz_demux.c).
 *
 * Oracles: every count and length a routine receives is checked against its bound in
 * every.defs (EV_CHECK aborts, so the fuzzer reports it as a crash and a test server dies);
 * what a routine receives out of line it frees, as MIG's ownership rule makes it its own
 * when it returns KERN_SUCCESS. With ev_inject set, every routine that receives
 * out-of-line data or ports returns KERN_FAILURE after receiving them (once per routine,
 * or always), and frees nothing: the runtime must release them, once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "everyServer.h"
#include "every_impl.h"

#define EV_KERN_FAILURE 5
#define EV_KERN_INVALID_ARGUMENT 4
#define EV_HELD_MAX 64

#define EV_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "every_impl.c:%d: bound violated: %s\n", __LINE__, #cond); \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int ev_inject;
int ev_fuzzing;
static atomic_int ev_counted;
static atomic_int ev_last_send;
static atomic_uint ev_injected; /* a bit per routine number: injected once already */
static pthread_mutex_t ev_held_lock = PTHREAD_MUTEX_INITIALIZER;
static idl_reply_t ev_held[EV_HELD_MAX];
static int ev_nheld;

/* Whether routine `bit` fails this time (ev_inject 1: its first call; 2: every call). */
static int
ev_fail(unsigned bit)
{
	if (ev_inject == 2)
		return 1;
	if (ev_inject == 1)
		return !(atomic_fetch_or(&ev_injected, 1u << bit) & (1u << bit));
	return 0;
}

static void
ev_close_ports(mach_port_t *p, mach_msg_type_number_t n)
{
	for (mach_msg_type_number_t i = 0; i < n; i++)
		idl_port_close(p[i]);
}

kern_return_t
S_every_null(mach_port_t server)
{
	(void)server;
	return KERN_SUCCESS;
}

kern_return_t
S_every_scalars(mach_port_t server, int8_t a, short b, int c, int64_t d, boolean_t e, double f,
		int64_t *sum, double *g)
{
	(void)server;
	/* Unsigned: a hostile sum wraps instead of being undefined. */
	*sum = (int64_t)((uint64_t)a + (uint64_t)b + (uint64_t)c + (uint64_t)d + (uint64_t)e);
	*g = f;
	return KERN_SUCCESS;
}

kern_return_t
S_every_fixed(mach_port_t server, ev_vec_t v, ev_vec_t w, ev_vec_t io, ev_pair_t p, ev_pair_t *q)
{
	(void)server;
	for (int i = 0; i < 4; i++) {
		w[i] = v[3 - i];
		io[i] = (int)((unsigned)io[i] + 1u);
	}
	(*q)[0] = p[1];
	(*q)[1] = p[0];
	return KERN_SUCCESS;
}

kern_return_t
S_every_arrays(mach_port_t server, ev_shorts_t s, mach_msg_type_number_t sCnt, ev_shorts_t t,
	       mach_msg_type_number_t *tCnt, ev_bytes_t b, mach_msg_type_number_t *bCnt, int *n)
{
	(void)server;
	EV_CHECK(sCnt <= 16);
	EV_CHECK(*tCnt <= 16);
	EV_CHECK(*bCnt <= 512);
	memcpy(t, s, sCnt * sizeof *s);
	*tCnt = sCnt;
	for (mach_msg_type_number_t i = 0; i < *bCnt / 2; i++) {
		unsigned char x = b[i];

		b[i] = b[*bCnt - 1 - i];
		b[*bCnt - 1 - i] = x;
	}
	*n = (int)(sCnt + *bCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_every_strings(mach_port_t server, ev_name_t name, ev_text_t text, ev_text_t back, ev_name_t io)
{
	(void)server;
	EV_CHECK(memchr(name, '\0', sizeof(ev_name_t)) != NULL);
	EV_CHECK(memchr(io, '\0', sizeof(ev_name_t)) != NULL);
	EV_CHECK(strlen(text) < 128);
	snprintf(back, 128, "%s", text);
	for (char *c = io; *c != '\0'; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	return KERN_SUCCESS;
}

kern_return_t
S_every_records(mach_port_t server, ev_rec_t r, ev_recs_t rs, mach_msg_type_number_t rsCnt,
		ev_rec_t *first, ev_recs_t all, mach_msg_type_number_t *allCnt)
{
	(void)server;
	EV_CHECK(rsCnt <= 8);
	EV_CHECK(*allCnt <= 8);
	*first = r;
	memcpy(all, rs, rsCnt * sizeof *rs);
	*allCnt = rsCnt;
	return KERN_SUCCESS;
}

kern_return_t
S_every_ool_in(mach_port_t server, ev_ool_t data, mach_msg_type_number_t dataCnt, ev_ints_t ints,
	       mach_msg_type_number_t intsCnt, int *sum)
{
	unsigned s = 0;

	(void)server;
	EV_CHECK(dataCnt == 0 || data != NULL);
	EV_CHECK(intsCnt == 0 || ints != NULL);
	if (ev_fail(0))
		return EV_KERN_FAILURE;
	for (mach_msg_type_number_t i = 0; i < dataCnt; i++)
		s += (unsigned char)data[i];
	for (mach_msg_type_number_t i = 0; i < intsCnt; i++)
		s += (unsigned)ints[i];
	*sum = (int)s;
	idl_ool_free(data, dataCnt);
	idl_ool_free(ints, (size_t)intsCnt * sizeof *ints);
	return KERN_SUCCESS;
}

kern_return_t
S_every_ool_out(mach_port_t server, int n, ev_ool_t *data, mach_msg_type_number_t *dataCnt)
{
	if (n < 0 || n > (1 << 20))
		return EV_KERN_INVALID_ARGUMENT;
	/* Sent dealloc: the runtime frees it once sent, whatever the send does. */
	if ((*data = idl_ool_alloc_port(server, (size_t)n)) == NULL && n != 0)
		return EV_KERN_FAILURE;
	for (int i = 0; i < n; i++)
		(*data)[i] = (char)(i & 0x7f);
	*dataCnt = (mach_msg_type_number_t)n;
	return KERN_SUCCESS;
}

kern_return_t
S_every_ool_page(mach_port_t server, ev_page_ptr_t page, ev_page_ptr_t *back)
{
	(void)server;
	EV_CHECK(page != NULL);
	if (ev_fail(1))
		return EV_KERN_FAILURE;
	if ((*back = idl_ool_alloc(64)) == NULL) {
		idl_ool_free(page, 64);
		return EV_KERN_FAILURE;
	}
	for (int i = 0; i < 64; i++)
		(*back)[i] = (unsigned char)~page[i];
	idl_ool_free(page, 64);
	return KERN_SUCCESS;
}

kern_return_t
S_every_ool_inout(mach_port_t server, ev_ints_t *data, mach_msg_type_number_t *dataCnt)
{
	(void)server;
	EV_CHECK(*dataCnt == 0 || *data != NULL);
	if (ev_fail(2))
		return EV_KERN_FAILURE;
	/* What came is the routine's; it goes back doubled, in place, and the reply releases
	 * it once sent (dealloc). */
	for (mach_msg_type_number_t i = 0; i < *dataCnt; i++)
		(*data)[i] = (int)((unsigned)(*data)[i] * 2u);
	return KERN_SUCCESS;
}

kern_return_t
S_every_port_in(mach_port_t server, mach_port_t p, int *ok)
{
	(void)server;
	if (ev_fail(3))
		return EV_KERN_FAILURE;
	*ok = p != IDL_PORT_NULL;
	idl_port_close(p);
	return KERN_SUCCESS;
}

kern_return_t
S_every_port_out(mach_port_t server, mach_port_t *p)
{
	(void)server;
	/* MAKE_SEND of a null port: the runtime carries it as none. */
	*p = IDL_PORT_NULL;
	return KERN_SUCCESS;
}

kern_return_t
S_every_port_array(mach_port_t server, ev_ports_t ports, mach_msg_type_number_t portsCnt, int *n)
{
	(void)server;
	EV_CHECK(portsCnt == 0 || ports != NULL);
	if (ev_fail(4))
		return EV_KERN_FAILURE;
	*n = (int)portsCnt;
	ev_close_ports(ports, portsCnt);
	idl_ool_free(ports, (size_t)portsCnt * sizeof *ports);
	return KERN_SUCCESS;
}

kern_return_t
S_every_inline_ports(mach_port_t server, ev_few_ports_t ports, mach_msg_type_number_t portsCnt,
		     int *n)
{
	(void)server;
	EV_CHECK(portsCnt <= 4);
	EV_CHECK(portsCnt == 0 || ports != NULL);
	if (ev_fail(5))
		return EV_KERN_FAILURE;
	/* The ports are the routine's; the array's memory the stub frees. */
	*n = (int)portsCnt;
	ev_close_ports(ports, portsCnt);
	return KERN_SUCCESS;
}

struct ev_later {
	idl_reply_t reply;
	int ms;
	int y;
};

static void *
ev_later_main(void *arg)
{
	struct ev_later *l = arg;
	struct timespec ts = { l->ms / 1000, (long)(l->ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
	atomic_store(&ev_last_send, S_every_deferred_send_reply(l->reply, KERN_SUCCESS, l->y));
	free(l);
	return NULL;
}

kern_return_t
S_every_deferred(mach_port_t server, idl_reply_t reply, int x, int *y)
{
	pthread_attr_t attr;
	pthread_t t;
	struct ev_later *l;

	(void)server;
	if (reply == NULL)
		return EV_KERN_FAILURE; /* called outside a server: nothing to defer */
	if (x < 0 || (x > 0 && ev_fuzzing)) {
		/* Held until ev_held_take(): a reply that outlives its client or server. */
		pthread_mutex_lock(&ev_held_lock);
		if (ev_nheld == EV_HELD_MAX) {
			pthread_mutex_unlock(&ev_held_lock);
			return EV_KERN_FAILURE;
		}
		ev_held[ev_nheld++] = reply;
		pthread_mutex_unlock(&ev_held_lock);
		return MIG_NO_REPLY;
	}
	if (x == 0) {
		*y = 1;
		return KERN_SUCCESS; /* answered at once: the stub discards the handle */
	}
	if ((l = malloc(sizeof *l)) == NULL)
		return EV_KERN_FAILURE;
	l->reply = reply;
	l->ms = x > 10000 ? 10000 : x;
	l->y = (int)((unsigned)x + 1u);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, ev_later_main, l) != 0) {
		pthread_attr_destroy(&attr);
		free(l);
		return EV_KERN_FAILURE;
	}
	pthread_attr_destroy(&attr);
	return MIG_NO_REPLY;
}

idl_reply_t
ev_held_take(void)
{
	idl_reply_t r = NULL;

	pthread_mutex_lock(&ev_held_lock);
	if (ev_nheld > 0)
		r = ev_held[--ev_nheld];
	pthread_mutex_unlock(&ev_held_lock);
	return r;
}

int
ev_send_held(int y)
{
	idl_reply_t r = ev_held_take();
	int err;

	if (r == NULL)
		return -1;
	err = S_every_deferred_send_reply(r, KERN_SUCCESS, y);
	atomic_store(&ev_last_send, err);
	return err;
}

kern_return_t
S_every_sleep_ms(mach_port_t server, int ms, int *slept)
{
	struct timespec ts;

	(void)server;
	if (ms < 0 || ms > 60000)
		return EV_KERN_INVALID_ARGUMENT;
	if (ev_fuzzing)
		ms = 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
	*slept = ms;
	return KERN_SUCCESS;
}

kern_return_t
S_every_count(mach_port_t server, int *n)
{
	(void)server;
	*n = atomic_fetch_add(&ev_counted, 1) + 1;
	return KERN_SUCCESS;
}

kern_return_t
S_every_stats(mach_port_t server, int *counted, int *held, int *last_send)
{
	(void)server;
	*counted = atomic_load(&ev_counted);
	pthread_mutex_lock(&ev_held_lock);
	*held = ev_nheld;
	pthread_mutex_unlock(&ev_held_lock);
	*last_send = atomic_load(&ev_last_send);
	return KERN_SUCCESS;
}

kern_return_t
S_every_whoami(mach_port_t server, int *valid, int *uid, int *pid, ev_addr_t addr)
{
	struct idl_cred c;
	int err = idl_request_cred(&c);

	(void)server;
	*valid = err == 0 ? c.valid : err;
	*uid = (int)c.uid;
	*pid = (int)c.pid;
	snprintf(addr, sizeof(ev_addr_t), "%s", c.addr);
	return KERN_SUCCESS;
}

kern_return_t
S_every_notify(mach_port_t server, int v)
{
	(void)server;
	(void)v;
	atomic_fetch_add(&ev_counted, 1);
	return KERN_SUCCESS;
}

kern_return_t
S_every_notify_ool(mach_port_t server, ev_ool_t data, mach_msg_type_number_t dataCnt, mach_port_t p)
{
	(void)server;
	EV_CHECK(dataCnt == 0 || data != NULL);
	if (ev_fail(6))
		return EV_KERN_FAILURE;
	idl_ool_free(data, dataCnt);
	idl_port_close(p);
	return KERN_SUCCESS;
}
