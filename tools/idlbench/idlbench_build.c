/*
 * idlbench_build.c - the user's interface made into code as the user's build would make it:
 * the compiler's outputs (the client header and stubs, the server stubs and header) and
 * idlbench's own (idlbench_gen.c) written into a private directory (mkdtemp, 0700), compiled
 * with the C compiler ($CC, else cc) into two shared objects, and loaded:
 *
 *   client.so   the client stubs and the row calls;
 *   server.so   the server stubs (the demux) and the null routines, or, with --impl, the
 *               server stubs alone, calling the routines of the user's library.
 *
 * Two objects, because a client stub and a server routine may have the same name (an
 * interface without prefixes): in a program they never meet, and here each object keeps its
 * own names (RTLD_LOCAL, -Bsymbolic). Once loaded the directory is removed: nothing of the
 * run is left behind, whatever happens later.
 *
 * Interpreted (--interpreted, or when no C compiler is found) nothing of the client is
 * built: the descriptor table built from the .defs file is the client and the server; the
 * routines are the user's library or the null routines compiled alone, or, with no compiler
 * at all, answered from the descriptors (idlbench_user.c).
 *
 * Layer 2 (ib_iface.h): it knows the base and the interface; it must not know columns,
 * cells, floors, runs or reports.
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "idlc.h"
#include "idlcall.h"
#include "ib_iface.h"

/* Where the runtime's headers are: installed, or this build's source tree for a binary run
 * from its build tree (make bench, make check), which must not use another version's. */
#ifndef IB_INCLUDEDIR
#define IB_INCLUDEDIR "/usr/local/include"
#endif
#ifndef IB_SRC_INCLUDEDIR
#define IB_SRC_INCLUDEDIR IB_INCLUDEDIR
#endif
#ifndef IB_BUILDDIR
#define IB_BUILDDIR ""
#endif

extern char **environ;

static struct idlcall_lib ib_impl_lib, ib_null_lib;

int
ib_from_build_tree(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	size_t b = strlen(IB_BUILDDIR);

	if (n > 0 && b > 0) {
		exe[n] = '\0';
		return strncmp(exe, IB_BUILDDIR, b) == 0 && exe[b] == '/';
	}
	return 0;
}

static const char *
ib_includedir(void)
{
	return ib_from_build_tree() ? IB_SRC_INCLUDEDIR : IB_INCLUDEDIR;
}

static int
ib_write(const char *dir, const char *name, const struct strbuf *sb)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "wxe")) == NULL) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fputs(strbuf_str(sb), f);
	if (fclose(f) != 0) {
		fprintf(stderr, "idlbench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The C types of the interface, which the generated headers include (IB_TYPES_H). An
 * interface that imports no header of its own is a standalone one: its types come from idlc's
 * -types output, as `idlc -types` would write them for the user's build. One that imports
 * headers has its types there, as MIG has it (a typedef of both could conflict: two
 * anonymous structs are two types), so the file is left empty. */
static int
ib_write_types(struct ib_iface *u)
{
	struct idlc_ctx *ctx = ib_defs_ctx(u);
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (idlc_module(ctx)->imports != NULL) {
		strbuf_puts(&sb, "/* The interface's C types are its imported headers'. */\n");
		u->own_types = 0;
	} else {
		u->own_types = 1;
	}
	rc = (u->own_types && idlc_generate_to(ctx, IDLC_OUT_TYPES, &sb) != 0) || sb.failed
		     ? -1
		     : ib_write(u->dir, IB_TYPES_H, &sb);
	strbuf_fini(&sb);
	return rc;
}

/* The compiler's four outputs, named as idlc names them by default. */
static int
ib_write_stubs(struct ib_iface *u, const char *sub)
{
	static const struct {
		enum idlc_output which;
		const char *suffix;
	} outs[] = { { IDLC_OUT_HEADER, ".h" },
		     { IDLC_OUT_USER, "User.c" },
		     { IDLC_OUT_SERVER, "Server.c" },
		     { IDLC_OUT_SHEADER, "Server.h" } };
	struct idlc_ctx *ctx = ib_defs_ctx(u);

	for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
		struct strbuf sb = STRBUF_INIT;
		char name[160];
		int rc;

		snprintf(name, sizeof name, "%s%s", sub, outs[i].suffix);
		rc = idlc_generate_to(ctx, outs[i].which, &sb) != 0 || sb.failed
			     ? -1
			     : ib_write(u->dir, name, &sb);
		strbuf_fini(&sb);
		if (rc != 0)
			return -1;
	}
	return ib_write_types(u);
}

/* Runs argv, its output into dir/cc.log. Returns its status, or -1 when it could not run
 * (no such program: errno ENOENT). */
static int
ib_spawn(char *const *argv, const char *log)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, err;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0) {
		errno = err;
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* cc ... -shared -o dir/OUT SOURCES: $CC split at blanks, the user's -I and -D, the
 * interface's own directory (its imported headers), idlkit's headers. */
static int
ib_cc(struct ib_iface *u, const char *const *cc_args, size_t ncc, const char *out,
      const char *const *srcs, size_t nsrcs, int *no_compiler)
{
	const char *cc = getenv("CC");
	char *ccw = strdup(cc != NULL && *cc != '\0' ? cc : "cc"), *save = NULL, *w;
	char *argv[96], obj[512], log[512], defsdir[512], *slash;
	char incs[3][520];
	size_t n = 0;
	int rc;

	if (ccw == NULL)
		return -1;
	for (w = strtok_r(ccw, " \t", &save); w != NULL && n < 16; w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	snprintf(defsdir, sizeof defsdir, "%s", u->path);
	slash = strrchr(defsdir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		snprintf(defsdir, sizeof defsdir, ".");
	snprintf(incs[0], sizeof incs[0], "-I%s", u->dir);
	snprintf(incs[1], sizeof incs[1], "-I%s", defsdir);
	snprintf(incs[2], sizeof incs[2], "-I%s", ib_includedir());
	argv[n++] = (char *)"-O2";
	argv[n++] = (char *)"-fPIC";
	argv[n++] = (char *)"-shared";
	argv[n++] = (char *)"-Wl,-Bsymbolic";
	argv[n++] = incs[0];
	argv[n++] = incs[1];
	for (size_t i = 0; i < ncc && n < 80; i++)
		argv[n++] = (char *)cc_args[i];
	argv[n++] = incs[2];
	snprintf(obj, sizeof obj, "%s/%s", u->dir, out);
	argv[n++] = (char *)"-o";
	argv[n++] = obj;
	for (size_t i = 0; i < nsrcs && n < 94; i++)
		argv[n++] = (char *)srcs[i];
	argv[n] = NULL;
	snprintf(log, sizeof log, "%s/cc.log", u->dir);
	rc = ib_spawn(argv, log);
	if (rc < 0 && errno == ENOENT) {
		*no_compiler = 1;
		snprintf(u->why, sizeof u->why, "no C compiler found (%s)", argv[0]);
	} else if (rc != 0) {
		FILE *f = fopen(log, "re");
		char line[512];

		fprintf(stderr, "idlbench: compiling %s's stubs failed (%s, status %d):\n", u->path,
			argv[0], rc);
		while (f != NULL && fgets(line, sizeof line, f) != NULL)
			fputs(line, stderr);
		if (f != NULL)
			fclose(f);
	}
	free(ccw);
	return rc == 0 ? 0 : -1;
}

static void *
ib_load(const struct ib_iface *u, const char *name)
{
	char path[512];
	void *h;

	snprintf(path, sizeof path, "%s/%s", u->dir, name);
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		fprintf(stderr, "idlbench: cannot load %s: %s\n", path, dlerror());
	return h;
}

/* Every routine's function must be the library's own, as `idlcall --serve` requires: one
 * that only libc defines would otherwise be called. */
static int
ib_check_impl(const struct ib_iface *u, struct idlcall_lib *lib, const char *prefix)
{
	for (uint32_t n = 0; n < u->ss->nroutines; n++) {
		const struct idl_routine_desc *rt = &u->ss->routines[n];
		char sym[256];

		if (rt->kind == IDL_RT_SKIP || rt->name == NULL)
			continue;
		snprintf(sym, sizeof sym, "%s%s", prefix, rt->name);
		if (idlcall_lib_resolve(lib, sym) == NULL) {
			fprintf(stderr, "idlbench: %s: %s.%s: no function %s\n", u->impl,
				u->ss->name, rt->name, sym);
			return -1;
		}
	}
	return 0;
}

/* Each call's generated functions in client.so: the call, and a routine's asynchronous
 * call when idlbench could write one. */
struct ib_syms {
	void *so;
	int failed;
};

static void
ib_find_thunks(struct ib_ucall *c, void *arg)
{
	struct ib_syms *s = arg;
	char sym[64];

	snprintf(sym, sizeof sym, "ib_call_%u", (unsigned)c->rt->number);
	if ((*(void **)&c->thunk = dlsym(s->so, sym)) == NULL && !s->failed) {
		fprintf(stderr, "idlbench: client.so has no %s\n", sym);
		s->failed = 1;
	}
	snprintf(sym, sizeof sym, "ib_acall_%u", (unsigned)c->rt->number);
	*(void **)&c->athunk = dlsym(s->so, sym);
}

/* The compiled client and server, loaded. */
static int
ib_load_compiled(struct ib_iface *u, const char *sub)
{
	const struct idlc_module *m = idlc_module(ib_defs_ctx(u));
	struct ib_syms syms = { NULL, 0 };
	char sym[256];

	if ((u->client_so = ib_load(u, "client.so")) == NULL ||
	    (u->server_so = ib_load(u, "server.so")) == NULL)
		return -1;
	syms.so = u->client_so;
	ib_ucalls_each(u, ib_find_thunks, &syms);
	if (syms.failed)
		return -1;
	*(void **)&u->async_done = dlsym(u->client_so, "ib_async_done");
	snprintf(sym, sizeof sym, "%s_subsystem", sub);
	u->server_ss = dlsym(u->server_so, sym);
	if (m->serverdemux != NULL)
		snprintf(sym, sizeof sym, "%s", m->serverdemux);
	else
		snprintf(sym, sizeof sym, "%s_server", sub);
	*(void **)&u->demux = dlsym(u->server_so, sym);
	if (u->server_ss == NULL || u->demux == NULL) {
		fprintf(stderr, "idlbench: server.so has no %s or %s_subsystem\n", sym, sub);
		return -1;
	}
	return 0;
}

static int
ib_build_in(struct ib_iface *u, const char *const *cc_args, size_t ncc)
{
	const char *sub = u->ss->name, *prefix = idlc_module(ib_defs_ctx(u))->serverprefix;
	char path[4][512], hdr[160], shdr[160], why[512];
	struct strbuf calls = STRBUF_INIT, null = STRBUF_INIT;
	int no_cc = 0, rc = -1;

	snprintf(hdr, sizeof hdr, "%s.h", sub);
	snprintf(shdr, sizeof shdr, "%sServer.h", sub);
	snprintf(path[0], sizeof path[0], "%s/%sUser.c", u->dir, sub);
	snprintf(path[1], sizeof path[1], "%s/calls.c", u->dir);
	snprintf(path[2], sizeof path[2], "%s/%sServer.c", u->dir, sub);
	snprintf(path[3], sizeof path[3], "%s/null.c", u->dir);
	if (prefix == NULL)
		prefix = "";
	if (ib_write_stubs(u, sub) != 0 || (!u->interpreted && ib_gen_calls(u, hdr, &calls) != 0) ||
	    (u->impl == NULL && ib_gen_null(u, shdr, &null) != 0)) {
		fprintf(stderr, "idlbench: %s: cannot generate its code\n", u->path);
		goto out;
	}
	if ((!u->interpreted && ib_write(u->dir, "calls.c", &calls) != 0) ||
	    (u->impl == NULL && ib_write(u->dir, "null.c", &null) != 0))
		goto out;
	if (u->impl != NULL) {
		/* The user's routines: global, so that the compiled server stubs reach them. */
		if (idlcall_lib_open(u->impl, !u->interpreted, &ib_impl_lib, why, sizeof why) !=
		    0) {
			fprintf(stderr, "idlbench: %s\n", why);
			goto out;
		}
		if (ib_check_impl(u, &ib_impl_lib, prefix) != 0)
			goto out;
		u->resolve = idlcall_lib_resolve;
		u->resolve_arg = &ib_impl_lib;
	}
	if (!u->interpreted) {
		const char *cs[] = { path[0], path[1] }, *ss[] = { path[2], path[3] };

		if (ib_cc(u, cc_args, ncc, "client.so", cs, 2, &no_cc) == 0 &&
		    ib_cc(u, cc_args, ncc, "server.so", ss, u->impl == NULL ? 2 : 1, &no_cc) == 0) {
			rc = ib_load_compiled(u, sub);
			goto out;
		}
		if (!no_cc)
			goto out;
		u->interpreted = 1; /* u->why says why */
	}
	if (u->impl == NULL) {
		const char *ns[] = { path[3] };
		char so[512];

		/* The null routines called through libffi, as a library's would be; with no
		 * compiler, the descriptors answer (idlbench_user.c). */
		if (ib_cc(u, cc_args, ncc, "null.so", ns, 1, &no_cc) == 0) {
			snprintf(so, sizeof so, "%s/null.so", u->dir);
			if (idlcall_lib_open(so, 0, &ib_null_lib, why, sizeof why) != 0) {
				fprintf(stderr, "idlbench: %s\n", why);
				goto out;
			}
			u->resolve = idlcall_lib_resolve;
			u->resolve_arg = &ib_null_lib;
		} else if (!no_cc) {
			goto out;
		}
	}
	rc = 0;
out:
	strbuf_fini(&calls);
	strbuf_fini(&null);
	return rc;
}

int
ib_build(struct ib_iface *u, const char *const *cc_args, size_t ncc)
{
	const char *tmp = getenv("TMPDIR");
	int rc;

	snprintf(u->dir, sizeof u->dir, "%s/idlbench-build.XXXXXX",
		 tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(u->dir) == NULL) {
		fprintf(stderr, "idlbench: mkdtemp %s: %s\n", u->dir, strerror(errno));
		u->dir[0] = '\0';
		return -1;
	}
	rc = ib_build_in(u, cc_args, ncc);
	/* Loaded objects stay mapped: the directory can go at once. */
	ib_rmdir(u->dir);
	u->dir[0] = '\0';
	return rc;
}

void
ib_build_cleanup(struct ib_iface *u)
{
	if (u->client_so != NULL)
		dlclose(u->client_so);
	if (u->server_so != NULL)
		dlclose(u->server_so);
	u->client_so = u->server_so = NULL;
	idlcall_lib_close(&ib_impl_lib);
	idlcall_lib_close(&ib_null_lib);
	if (u->dir[0] != '\0')
		ib_rmdir(u->dir);
}
