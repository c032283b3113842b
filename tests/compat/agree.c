/*
 * agree.c - the hello agrees with idlc -compat, on real sockets:
 *
 *     agree PAIRDIR...
 *
 * For each pair (PAIRDIR/old.defs, PAIRDIR/new.defs), both versions are compiled in memory
 * (the compiler's library, the tables the stubs carry) and compared with idlc_compat().
 * Then a server process of the new version listens on unix:, a client of the old version (this
 * process) calls every one of its routines, and the same the other way round (a new client, an old
 * server). The server's routines all answer with a code of their own (1000 + the routine's number),
 * so a call that reached the server tells which routine ran; a refused one returns what the hello
 * decided.
 *
 * What must hold, routine by routine: the result is what -compat says its call gets
 * (old_client or new_client of the changes naming it; a routine without changes must go
 * through); a routine with a breaking change is refused (IDL_ESIGNATURE or MIG_BAD_ID);
 * an old client's routine with only compatible changes goes through. Exit 0 when all holds.
 */
#include <config.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <idl/idl.h>
#include <idl/idl_dynamic.h>
#include <idl/idl_ool.h>

#include "idlc.h"

#define AG_REACHED 1000 /* + the routine's number: the code every routine answers with */
#define AG_MAX_ROUTINES 64

static int ag_failures;

struct ag_server {
	pid_t pid; /* the server process */
	const struct idl_subsystem *ss;
	const char *path; /* its socket, removed once it is gone */
	/* One-way messages that arrived, in memory the server process shares with the
	 * client: a simpleroutine gets no answer that could tell. */
	atomic_int *reached;
};

static void
ag_diag(void *data, const char *line)
{
	(void)data;
	fputs(line, stderr);
}

/* Every routine of either version: the request checked by the runtime reaches here, and
 * the answer names the routine. */
static int
ag_demux(void *ctx, idl_msg_header_t *in, idl_msg_header_t *out)
{
	struct ag_server *s = ctx;
	uint32_t number = (uint32_t)in->id - (uint32_t)s->ss->base;

	idl_reply_init(in, out);
	if (number >= s->ss->nroutines || number >= AG_MAX_ROUTINES) {
		out->retcode = MIG_BAD_ID;
		return 0;
	}
	atomic_store(&s->reached[number], 1);
	out->retcode = AG_REACHED + (int32_t)number;
	return 1;
}

/* The server process: listens, says so on `ready`, serves until it is killed. */
static void
ag_child(struct ag_server *s, const char *address, int ready)
{
	idl_server_t *srv = NULL;

	if (idl_server_create(&srv) != 0 ||
	    idl_server_add_subsystem_ctx(srv, s->ss, ag_demux, s) != 0 ||
	    idl_server_set_log(srv, NULL, NULL) != 0 || idl_server_listen(srv, address) != 0) {
		fprintf(stderr, "agree: cannot serve %s at %s: %s\n", s->ss->name, address,
			idl_errdetail());
		_exit(1);
	}
	/* A failed check of the client's kills it: the server must not outlive it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	close(ready);
	idl_server_run(srv);
	_exit(0);
}

static int
ag_serve(struct ag_server *s, const struct idl_subsystem *ss, const char *path, const char *address)
{
	int fds[2];
	char byte;

	memset(s, 0, sizeof *s);
	s->ss = ss;
	s->path = path;
	s->reached = mmap(NULL, AG_MAX_ROUTINES * sizeof *s->reached, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->reached == MAP_FAILED || pipe(fds) != 0) {
		perror("agree");
		return -1;
	}
	fflush(stdout);
	s->pid = fork();
	if (s->pid == 0) {
		close(fds[0]);
		ag_child(s, address, fds[1]);
	}
	close(fds[1]);
	if (s->pid < 0 || read(fds[0], &byte, 1) != 1) {
		fprintf(stderr, "agree: the server of %s did not start\n", ss->name);
		close(fds[0]);
		if (s->pid > 0)
			waitpid(s->pid, NULL, 0);
		munmap(s->reached, AG_MAX_ROUTINES * sizeof *s->reached);
		return -1;
	}
	close(fds[0]);
	return 0;
}

static void
ag_unserve(struct ag_server *s)
{
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	unlink(s->path);
	munmap(s->reached, AG_MAX_ROUTINES * sizeof *s->reached);
}

/* A checked interface, or NULL after its diagnostics. */
static struct idlc_ctx *
ag_compile(const char *path)
{
	struct idlc_options opts;
	struct idlc_ctx *ctx;

	memset(&opts, 0, sizeof opts);
	opts.quiet = true;
	if ((ctx = idlc_create(&opts, ag_diag, NULL)) == NULL)
		return NULL;
	if (idlc_parse_file(ctx, path) == 0 && idlc_check(ctx) == 0)
		return ctx;
	idlc_destroy(ctx);
	return NULL;
}

static const char *
ag_call_name(enum idlc_compat_call c)
{
	switch (c) {
	case IDLC_CALL_OK:
		return "ok";
	case IDLC_CALL_BAD_ID:
		return "MIG_BAD_ID";
	case IDLC_CALL_SIGNATURE:
		return "IDL_ESIGNATURE";
	default:
		return "no call";
	}
}

/*
 * The request of routine rt with every argument at its simplest valid value: zeros,
 * empty strings and arrays, null ports, no out-of-line data but for a fixed size.
 */
static int
ag_request(const struct idl_routine_desc *rt, idl_msg_header_t *buf, size_t cap)
{
	static const char zeros[8192];
	static const idl_port_t nulls[64];
	struct idl_arg_value vals[256];

	memset(vals, 0, sizeof vals);
	for (unsigned i = 0; i < rt->nargs; i++) {
		const struct idl_arg_desc *a = &rt->args[i];

		vals[i].data = zeros;
		switch (a->kind) {
		case IDL_ARG_SCALAR:
		case IDL_ARG_FIXED_ARRAY:
			vals[i].count = a->kind == IDL_ARG_SCALAR ? 1 : a->count;
			break;
		case IDL_ARG_CSTRING_FIXED:
		case IDL_ARG_CSTRING_VAR:
			vals[i].count = 1; /* the NUL */
			break;
		case IDL_ARG_PORT:
			vals[i].data = nulls;
			vals[i].count = 1;
			break;
		case IDL_ARG_OOL:
			if (a->wire_type == IDL_WT_PORT)
				vals[i].data = nulls;
			vals[i].count = (a->flags & IDL_ARGF_FIXED) ? a->count : 0;
			/* dealloc: the runtime frees what it sends (even empty), so it must be
			 * its own memory. */
			if (a->flags & IDL_ARGF_DEALLOC)
				vals[i].data =
					idl_ool_alloc((size_t)vals[i].count *
						      (a->elem_size != 0 ? a->elem_size : 1));
			break;
		default:
			vals[i].count = 0;
			break;
		}
	}
	return idl_msg_pack(rt, 0, vals, buf, cap);
}

/* What calling rt (routine `number` of ss) on port gets. */
static enum idlc_compat_call
ag_call(idl_port_t port, const struct idl_subsystem *ss, uint32_t number, struct ag_server *peer,
	int *kr)
{
	static union {
		idl_msg_header_t h;
		unsigned char b[1 << 17];
	} req, rep;
	const struct idl_routine_desc *rt = &ss->routines[number];
	int n = ag_request(rt, &req.h, sizeof req);

	if (n < 0) {
		*kr = n;
		return IDLC_CALL_NONE;
	}
	if (rt->kind == IDL_RT_ROUTINE) {
		*kr = idl_call(port, ss, number, &req.h, &rep.h, sizeof rep, 5000);
	} else {
		/* A one-way message gets no answer: it went through when the server's routine
		 * saw it. */
		*kr = idl_send(port, ss, number, &req.h, 5000);
		for (int ms = 0; *kr == 0 && ms < 3000; ms += 10) {
			if (number < AG_MAX_ROUTINES && atomic_load(&peer->reached[number])) {
				*kr = AG_REACHED + (int)number;
				break;
			}
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
		}
	}
	if (*kr == AG_REACHED + (int)number)
		return IDLC_CALL_OK;
	if (*kr == MIG_BAD_ID)
		return IDLC_CALL_BAD_ID;
	if (*kr == IDL_ESIGNATURE)
		return IDLC_CALL_SIGNATURE;
	return IDLC_CALL_NONE;
}

/* What -compat says a client's call of its routine `number` gets, and checks its levels. */
static enum idlc_compat_call
ag_expect(const char *pair, const struct idlc_compat *r, int old_side, int64_t id, const char *name)
{
	enum idlc_compat_call want = IDLC_CALL_OK;
	enum idlc_compat_level worst = IDLC_COMPAT_NOTE;
	int named = 0;

	for (size_t i = 0; i < r->nchanges; i++) {
		const struct idlc_change *ch = &r->changes[i];
		enum idlc_compat_call says = old_side ? ch->old_client : ch->new_client;

		if (ch->routine == NULL) {
			/* The subsystem as a whole: only a breaking change refuses every call. */
			if (ch->level == IDLC_COMPAT_ERROR && says != IDLC_CALL_BAD_ID) {
				printf("FAIL %s: %s breaks every call but says %s\n", pair,
				       ch->rule, ag_call_name(says));
				ag_failures++;
			}
			if (ch->level == IDLC_COMPAT_ERROR) {
				want = IDLC_CALL_BAD_ID;
				worst = IDLC_COMPAT_ERROR;
				named = 1;
			}
			continue;
		}
		if ((old_side ? ch->old_id : ch->new_id) != id)
			continue;
		if (named && says != want) {
			printf("FAIL %s: %s: changes disagree on the call (%s, %s)\n", pair, name,
			       ag_call_name(want), ag_call_name(says));
			ag_failures++;
		}
		want = says;
		named = 1;
		if (ch->level > worst)
			worst = ch->level;
	}
	/* The classification and the hello: breaking is refused; compatible (for an old
	 * client) goes through. */
	if (worst == IDLC_COMPAT_ERROR && want == IDLC_CALL_OK) {
		printf("FAIL %s: %s: breaking, yet the call goes through\n", pair, name);
		ag_failures++;
	}
	if (worst == IDLC_COMPAT_NOTE && old_side && want != IDLC_CALL_OK) {
		printf("FAIL %s: %s: compatible, yet an old client's call is refused\n", pair,
		       name);
		ag_failures++;
	}
	return want;
}

/* A client of `cli` against a server of `srv`; old_side: the client is the old version. */
static void
ag_direction(const char *pair, const char *dir, const struct idlc_compat *r,
	     const struct idl_subsystem *cli, const struct idl_subsystem *srv, int old_side)
{
	struct ag_server s;
	char path[256], address[300];
	idl_port_t port = NULL;

	snprintf(path, sizeof path, "%s/agree.sock", dir);
	snprintf(address, sizeof address, "unix:%s", path);
	if (ag_serve(&s, srv, path, address) != 0) {
		ag_failures++;
		return;
	}
	if (idl_port_open(address, &port) != 0) {
		printf("FAIL %s: cannot connect: %s\n", pair, idl_errdetail());
		ag_failures++;
	}
	for (uint32_t i = 0; port != NULL && i < cli->nroutines; i++) {
		const struct idl_routine_desc *rt = &cli->routines[i];
		enum idlc_compat_call want, got;
		int kr;

		if (rt->kind == IDL_RT_SKIP)
			continue;
		want = ag_expect(pair, r, old_side, (int64_t)cli->base + i, rt->name);
		got = ag_call(port, cli, i, &s, &kr);
		printf("%s %s: %s client %s -> %s (-compat: %s)\n", got == want ? "ok  " : "FAIL",
		       pair, old_side ? "old" : "new", rt->name, kr < 0 ? idl_errname(kr) : "ran",
		       ag_call_name(want));
		if (got != want)
			ag_failures++;
	}
	idl_port_close(port);
	ag_unserve(&s);
}

static void
ag_pair(const char *dir)
{
	char oldp[512], newp[512], tmp[] = "/tmp/idl-agree-XXXXXX";
	const char *pair;
	struct idlc_ctx *old, *new = NULL;
	struct idlc_compat r;
	char name[128];

	/* The directory's own name, without a trailing slash. */
	snprintf(name, sizeof name, "%s", dir);
	while (strlen(name) > 1 && name[strlen(name) - 1] == '/')
		name[strlen(name) - 1] = '\0';
	pair = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;
	snprintf(oldp, sizeof oldp, "%s/old.defs", dir);
	snprintf(newp, sizeof newp, "%s/new.defs", dir);
	if ((old = ag_compile(oldp)) == NULL || (new = ag_compile(newp)) == NULL ||
	    idlc_compat(old, new, &r) != 0 || mkdtemp(tmp) == NULL) {
		printf("FAIL %s: cannot compile or compare\n", pair);
		ag_failures++;
	} else {
		ag_direction(pair, tmp, &r, idlc_subsystem(old), idlc_subsystem(new), 1);
		ag_direction(pair, tmp, &r, idlc_subsystem(new), idlc_subsystem(old), 0);
		rmdir(tmp);
	}
	idlc_destroy(new);
	idlc_destroy(old);
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: agree PAIRDIR...\n", stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		ag_pair(argv[i]);
	if (ag_failures != 0) {
		printf("agree: %d failures\n", ag_failures);
		return 1;
	}
	printf("agree: the hello did what -compat said on %d pairs\n", argc - 1);
	return 0;
}
