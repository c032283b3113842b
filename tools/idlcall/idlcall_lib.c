/*
 * idlcall_lib.c - a shared library of implementation functions, loaded and searched the way
 * `idlcall --serve` and `idlbench --impl` both need it: each routine's function must be
 * defined by the library itself.
 */
#include <config.h>

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "idlcall.h"

int
idlcall_lib_open(const char *path, int global, struct idlcall_lib *l, char *err, size_t errlen)
{
	struct link_map *lm = NULL;

	memset(l, 0, sizeof *l);
	/* RTLD_NOW: a library with an unresolved symbol fails here, not at the first call. */
	if ((l->handle = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL))) == NULL) {
		snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
		return -1;
	}
	if (dlinfo(l->handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_name == NULL) {
		snprintf(err, errlen, "%s: %s", path, dlerror());
		dlclose(l->handle);
		l->handle = NULL;
		return -1;
	}
	l->name = lm->l_name;
	return 0;
}

/*
 * dlsym() on a handle also searches the libraries it depends on, so a routine called `write`
 * in an interface without a server prefix would become libc's write(): a function found
 * elsewhere counts as missing, as a missing definition in the library is what the user needs
 * to hear about.
 */
void *
idlcall_lib_resolve(void *arg, const char *symbol)
{
	const struct idlcall_lib *l = arg;
	void *fn = dlsym(l->handle, symbol);
	Dl_info info;

	if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fname == NULL ||
	    strcmp(info.dli_fname, l->name) != 0)
		return NULL;
	return fn;
}

void
idlcall_lib_close(struct idlcall_lib *l)
{
	if (l->handle != NULL)
		dlclose(l->handle);
	memset(l, 0, sizeof *l);
}
