/*
 * mountns.c - `mountns PROGRAM [ARG...]` runs PROGRAM in a mount namespace of its own in which
 * every mount is private: what PROGRAM mounts or unmounts there reaches no other namespace
 * (the machine's /dev/mqueue or /run stay as they are), and all of it goes when the
 * namespace's last process ends. The tests that mount or unmount (tests/port/listing.sh,
 * tests/net/cleanup.sh) run their work through it.
 *
 * It is `unshare -m --propagation private`, which fails in a chroot (CI's fresh root, a
 * build chroot): there the root directory is no mount's root, and mount(2) changes a
 * mount's propagation only at its root, so "/" cannot be made private by its name. A user
 * namespace, whose mounts would be slaves of the machine's, cannot be made in a chroot
 * either. So, in the new namespace only, the program climbs from the chroot to the
 * namespace's real root (a chroot into a directory below leaves the working directory
 * outside the root, from where ".." is not stopped), makes every mount there private, and
 * goes back to the chroot and the working directory it started in. The climb changes
 * nothing but this process's root and working directory; the propagation it changes is
 * that of the new namespace's copies of the mounts, never of the machine's.
 * Needs root (CAP_SYS_ADMIN, and CAP_SYS_CHROOT in a chroot). Exits 126 when the namespace
 * cannot be made, saying why, else as PROGRAM does (127 when it cannot be run).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOUNTNS_MAX_DEPTH 4096 /* ".." steps to the real root: more means a loop */

static int
mountns_fail(const char *what)
{
	fprintf(stderr, "mountns: %s: %s\n", what, strerror(errno));
	return -1;
}

/* Climbs from a chroot to the namespace's real root, makes every mount below it private
 * and returns to the chroot and the working directory (root and cwd, opened before). */
static int
mountns_private_from_chroot(int root, int cwd)
{
	char dir[] = "/tmp/idlkit-mountns.XXXXXX";
	struct stat here, up;
	int rc = 0;

	if (mkdtemp(dir) == NULL)
		return mountns_fail("mkdtemp /tmp/idlkit-mountns.XXXXXX");
	if (chdir("/") != 0 || chroot(dir) != 0) {
		rc = mountns_fail("chroot into a directory below the root");
		goto out;
	}
	for (int i = 0;; i++) {
		if (stat(".", &here) != 0 || stat("..", &up) != 0) {
			rc = mountns_fail("stat on the way to the real root");
			break;
		}
		if (here.st_dev == up.st_dev && here.st_ino == up.st_ino)
			break;
		if (i == MOUNTNS_MAX_DEPTH || chdir("..") != 0) {
			errno = i == MOUNTNS_MAX_DEPTH ? ELOOP : errno;
			rc = mountns_fail("the way to the real root");
			break;
		}
	}
	if (rc == 0 && (chroot(".") != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0))
		rc = mountns_fail("making the namespace's mounts private at its real root");
out:
	/* Back where it started: the chroot, then the working directory, then the scratch
	 * directory gone (it is below the chroot's root). */
	if (fchdir(root) != 0 || chroot(".") != 0) {
		mountns_fail("back to the chroot");
		exit(126);
	}
	rmdir(dir);
	if (fchdir(cwd) != 0) {
		mountns_fail("back to the working directory");
		exit(126);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	int root, cwd, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: mountns PROGRAM [ARG...]\n");
		return 2;
	}
	if (unshare(CLONE_NEWNS) != 0) {
		mountns_fail("unshare(CLONE_NEWNS)");
		return 126;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		if (errno != EINVAL) {
			mountns_fail("making the namespace's mounts private");
			return 126;
		}
		/* EINVAL: "/" is not a mount's root, a chroot. */
		root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0 || cwd < 0) {
			mountns_fail("open / and .");
			return 126;
		}
		rc = mountns_private_from_chroot(root, cwd);
		close(root);
		close(cwd);
		if (rc != 0)
			return 126;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "mountns: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
