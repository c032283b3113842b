/*
 * server.c - oolt-server: serves tests/ool/oolt.defs on one address, for the conformance
 * suite's cases of the dialect at run time (tests/transport/t_oolt.c).
 *
 *     oolt-server ADDRESS
 *
 * Prints "ready ADDRESS" once clients may connect and serves with four routine threads
 * (a routine calls back into this server through ports it was given) until SIGTERM.
 * Each routine follows MIG's ownership rule: what it received is its own when it returns
 * KERN_SUCCESS (it frees or closes it), the runtime's when it returns anything else.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>
#include <idl/idl_ool.h>

#include "oolt.h"
#include "ooltServer.h"
#include "oolt_util.h"

/* Out-of-range arguments: a server code (the positive range is the routines'). */
#define OOLT_KR_BAD 4301

static idl_server_t *oolt_srv;

static void
oolt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
}

kern_return_t
S_oolt_where(mach_port_t server, pointer_t data, mach_msg_type_number_t dataCnt, int *place,
	     int64_t *sum)
{
	(void)server;
	*place = dataCnt != 0 ? oolt_place((const void *)data) : OOLT_IN_NONE;
	*sum = oolt_sum((const void *)data, dataCnt);
	idl_ool_free((void *)data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_sink(mach_port_t server, pointer_t data, mach_msg_type_number_t dataCnt, int64_t *sum)
{
	(void)server;
	*sum = oolt_sum((const void *)data, dataCnt);
	idl_ool_free((void *)data, dataCnt);
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_source(mach_port_t server, int n, int salt, pointer_t *data, mach_msg_type_number_t *dataCnt)
{
	char *p;

	if (n < 0 || n > OOLT_SOURCE_MAX)
		return OOLT_KR_BAD;
	/* Memory of the request's connection: shm: sends it without a copy. */
	if ((p = idl_ool_alloc_port(server, (size_t)n)) == NULL)
		return OOLT_KR_BAD;
	for (int i = 0; i < n; i++)
		p[i] = oolt_pattern((size_t)i, salt);
	*data = (pointer_t)p;
	*dataCnt = (mach_msg_type_number_t)n;
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_ping(mach_port_t server, int *pid)
{
	(void)server;
	*pid = (int)getpid();
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_give(mach_port_t server, mach_port_t p, int *pid)
{
	kern_return_t kr;

	(void)server;
	*pid = 0;
	if (p == MACH_PORT_NULL)
		return KERN_SUCCESS;
	/* On failure the port is still the runtime's, which closes it. */
	if ((kr = oolt_ping(p, pid)) != KERN_SUCCESS)
		return kr;
	idl_port_close(p);
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_take(mach_port_t server, mach_port_t *p)
{
	/* A copy of the request port: the transport passes a new connection to it. */
	*p = server;
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_poly(mach_port_t server, mach_port_t p, mach_msg_type_name_t pPoly, int *got, mach_port_t *q,
	    mach_msg_type_name_t *qPoly)
{
	(void)server;
	*got = (int)pPoly;
	/* Moved back: the runtime closes it once the reply is sent. */
	*q = p;
	*qPoly = MACH_MSG_TYPE_MOVE_SEND;
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_ports(mach_port_t server, mach_port_array_t p, mach_msg_type_number_t pCnt, int *n)
{
	int ok = 0, nulls = 0, pid;

	(void)server;
	for (mach_msg_type_number_t i = 0; i < pCnt; i++) {
		if (p[i] == MACH_PORT_NULL)
			nulls++;
		else if (oolt_ping(p[i], &pid) == KERN_SUCCESS && pid == (int)getpid())
			ok++;
		idl_port_close(p[i]);
	}
	idl_ool_free(p, (size_t)pCnt * sizeof *p);
	*n = ok + 1000 * nulls;
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_counted(mach_port_t server, mach_port_type_array_t vals, mach_msg_type_number_t *valsCnt)
{
	(void)server;
	/* countinout: *valsCnt is the caller's room (the stub keeps it within the bound). */
	for (mach_msg_type_number_t i = 0; i < *valsCnt; i++)
		vals[i] = 3 * i;
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_seq(mach_port_t server, mach_port_seqno_t s, int *got)
{
	(void)server;
	*got = (int)s;
	return KERN_SUCCESS;
}

struct oolt_later {
	idl_reply_t reply;
	int x;
	int delay_ms;
};

static void *
oolt_later_main(void *arg)
{
	struct oolt_later *l = arg;

	oolt_sleep_ms(l->delay_ms);
	if (S_oolt_later_send_reply(l->reply, KERN_SUCCESS, 2 * l->x) != KERN_SUCCESS)
		fprintf(stderr, "oolt-server: deferred reply: %s\n", idl_errdetail());
	free(l);
	return NULL;
}

kern_return_t
S_oolt_later(mach_port_t server, idl_reply_t reply, int x, int delay_ms, int *y)
{
	struct oolt_later *l;
	pthread_attr_t attr;
	pthread_t t;

	(void)server;
	if (reply == NULL) {
		*y = -1; /* no memory for the handle: replied at once */
		return KERN_SUCCESS;
	}
	if ((l = malloc(sizeof *l)) == NULL)
		return OOLT_KR_BAD;
	*l = (struct oolt_later){ reply, x, delay_ms };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, oolt_later_main, l) != 0) {
		pthread_attr_destroy(&attr);
		free(l);
		return OOLT_KR_BAD; /* the stub discards the handle and replies with this */
	}
	pthread_attr_destroy(&attr);
	return MIG_NO_REPLY;
}

kern_return_t
S_oolt_slow(mach_port_t server, int delay_ms)
{
	(void)server;
	if (delay_ms < 0 || delay_ms > 60000)
		return OOLT_KR_BAD;
	oolt_sleep_ms(delay_ms);
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_stats(mach_port_t server, int *fds, int *maps)
{
	DIR *d = opendir("/proc/self/fd");
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	(void)server;
	*fds = 0;
	*maps = 0;
	if (d != NULL) {
		for (struct dirent *e; (e = readdir(d)) != NULL;)
			if (e->d_name[0] != '.')
				(*fds)++;
		closedir(d);
		(*fds)--; /* the directory's own */
	}
	if (f != NULL) {
		while (fgets(line, sizeof line, f) != NULL)
			(*maps)++;
		fclose(f);
	}
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_handlers(mach_port_t server, int n, mach_port_type_array_t tags,
		mach_msg_type_number_t *tagsCnt, mach_port_array_t ports)
{
	if (n < 0)
		return OOLT_KR_BAD;
	/* More than the 8 the arrays hold: the stub refuses to send it. */
	*tagsCnt = (mach_msg_type_number_t)n;
	for (int i = 0; i < n && i < 8; i++) {
		tags[i] = 100 + (natural_t)i;
		/* Copies of the request port, and a null port now and then. */
		ports[i] = i % 3 == 2 ? MACH_PORT_NULL : server;
	}
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_pair(mach_port_t server, mach_port_array_t ports)
{
	ports[0] = server;
	ports[1] = MACH_PORT_NULL;
	return KERN_SUCCESS;
}

kern_return_t
S_oolt_tally(mach_port_t server, mach_port_type_array_t a, mach_msg_type_number_t aCnt,
	     mach_port_type_array_t b, int *sum)
{
	(void)server;
	*sum = 0;
	for (mach_msg_type_number_t i = 0; i < aCnt; i++)
		*sum += (int)(a[i] + b[i]);
	return KERN_SUCCESS;
}

/* The routine called `name` in oolt's table, or NULL. */
static const struct idl_routine_desc *
oolt_routine(const char *name)
{
	for (uint32_t n = 0; n < oolt_subsystem.nroutines; n++)
		if (oolt_subsystem.routines[n].name != NULL &&
		    strcmp(oolt_subsystem.routines[n].name, name) == 0)
			return &oolt_subsystem.routines[n];
	return NULL;
}

/* The index of argument `name` of routine rt, or -1. */
static int
oolt_arg(const struct idl_routine_desc *rt, const char *name)
{
	for (unsigned i = 0; i < rt->nargs; i++)
		if (strcmp(rt->args[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The reply built by hand from the routine's descriptor (the routine defers it, so that
 * the stub does not build it), its counts made to disagree when asked: a server the
 * client must not believe. */
kern_return_t
S_oolt_counts(mach_port_t server, idl_reply_t reply, int n, int lie, mach_port_type_array_t a,
	      mach_msg_type_number_t *aCnt, mach_port_type_array_t b)
{
	const struct idl_routine_desc *rt = oolt_routine("counts");
	union {
		idl_msg_header_t head;
		uint64_t align;
		unsigned char b[256];
	} m;
	struct idl_arg_value vals[8];
	natural_t va[8], vb[8];
	int ia, ib, size;
	uint32_t cnt;

	(void)server;
	(void)a;
	(void)aCnt;
	(void)b;
	if (reply == NULL || rt == NULL || rt->nargs > 8 || n < 2 || n > 6 || n % 2 != 0)
		return OOLT_KR_BAD; /* the stub discards the handle and replies with this */
	ia = oolt_arg(rt, "a");
	ib = oolt_arg(rt, "b");
	if (ia < 0 || ib < 0)
		return OOLT_KR_BAD;
	memset(vals, 0, sizeof vals);
	for (int i = 0; i < n; i++) {
		va[i] = 10 + (natural_t)i;
		vb[i] = 20 + (natural_t)i;
	}
	vals[ia] = (struct idl_arg_value){ va, (uint32_t)n };
	vals[ib] = (struct idl_arg_value){ vb, (uint32_t)n };
	if ((size = idl_msg_pack(rt, 1, vals, &m.head, sizeof m)) < 0) {
		idl_reply_discard(reply);
		return OOLT_KR_BAD;
	}
	if (lie) {
		/* Two elements more for a, two fewer for b: the variable part's length holds. */
		cnt = (uint32_t)n + 2;
		memcpy(m.b + rt->args[ia].rep_offset, &cnt, sizeof cnt);
		cnt = (uint32_t)n - 2;
		memcpy(m.b + rt->args[ib].rep_offset, &cnt, sizeof cnt);
	}
	m.head.retcode = KERN_SUCCESS;
	idl_reply_send(reply, &m.head);
	return MIG_NO_REPLY;
}

kern_return_t
S_oolt_ranges(mach_port_t server, oolt_ranges_t in_ranges, mach_msg_type_number_t in_rangesCnt,
	      oolt_ranges_t back, mach_msg_type_number_t *backCnt)
{
	(void)server;
	for (mach_msg_type_number_t i = 0; i < in_rangesCnt; i++) {
		back[i].start = in_ranges[in_rangesCnt - 1 - i].end;
		back[i].end = in_ranges[in_rangesCnt - 1 - i].start;
	}
	*backCnt = in_rangesCnt;
	return KERN_SUCCESS;
}

static void
oolt_on_signal(int sig)
{
	(void)sig;
	idl_server_stop(oolt_srv);
}

/* Stops on SIGTERM and SIGINT, says "ready ADDRESS" and serves oolt_srv: 0 once stopped,
 * 1 when serving failed. dyn_oolt_server.c serves through it too. */
static int
oolt_run(const char *address)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = oolt_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready %s\n", address);
	fflush(stdout);
	return idl_server_run(oolt_srv) == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: oolt-server ADDRESS\n");
		return 2;
	}
	if ((err = idl_server_create(&oolt_srv)) != 0 ||
	    (err = idl_server_add_subsystem(oolt_srv, &oolt_subsystem, oolt_server)) != 0 ||
	    (err = idl_server_set_concurrency(oolt_srv, 4)) != 0 ||
	    (err = idl_server_listen(oolt_srv, argv[1])) != 0) {
		fprintf(stderr, "oolt-server: %s: %s: %s\n", argv[1], idl_errname(err),
			idl_errdetail());
		return 1;
	}
	err = oolt_run(argv[1]);
	idl_server_destroy(oolt_srv);
	return err;
}
