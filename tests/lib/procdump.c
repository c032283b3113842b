/*
 * procdump.c - a process's threads as /proc shows them (procdump.h).
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "procdump.h"

/* The first line of /proc/PID/task/TID/NAME into buf, without its newline; "?" if none. */
static void
procdump_read(pid_t pid, const char *tid, const char *name, char *buf, size_t size)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%.16s/%s", (int)pid, tid, name);
	snprintf(buf, size, "?");
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, (int)size, f) == NULL)
		snprintf(buf, size, "?");
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

void
procdump_threads(pid_t pid, FILE *out)
{
	char path[64], comm[64], wchan[128], sc[256];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		procdump_read(pid, e->d_name, "comm", comm, sizeof comm);
		procdump_read(pid, e->d_name, "wchan", wchan, sizeof wchan);
		procdump_read(pid, e->d_name, "syscall", sc, sizeof sc);
		fprintf(out, "  thread %s (%s): waits in %s; system call %s\n", e->d_name, comm,
			wchan, sc);
	}
	closedir(d);
}
