/*
 * sys_raw.h - the per-message system calls of the transports' fast paths (tcp:, port:) with
 * the kernel's own result: the count, or the error as minus its errno, which a fast path
 * hands on to its general path instead of storing it in errno.
 *
 * errno is a thread's own, and storing it is a call into libc (__errno_location); a
 * function that may make a call keeps its arguments in registers it must save on entry and
 * restore on return, taken or not: about ten instructions a message on each side that a
 * fast path without any call does not spend. So a fast path makes its system call with one
 * of these, returns at once when it did what it should, and otherwise passes the result to
 * its general path, which gives errno its value (idl__raw_errno()) before it looks at it.
 *
 * As transport_kit.h's idl__sys_*(): made in line on x86-64 (with only the registers the
 * call takes set), through those functions elsewhere and in the sanitizers' builds, which
 * must see libc's calls.
 */
#ifndef IDL_TRANSPORTS_SYS_RAW_H
#define IDL_TRANSPORTS_SYS_RAW_H

#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>

#include "transport_kit.h"

/* Below any result a system call can have (errors are -1 to -4095): a fast path's "no
 * system call made". */
#define IDL_RAW_NONE (-4096l - 1)

/* A raw result as libc's functions return it: the count, or -1 with errno set. */
static inline ssize_t
idl__raw_errno(long r)
{
	if (r < 0 && r > IDL_RAW_NONE) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#if !defined(IDL__SYS_LIBC) && defined(__x86_64__)
static inline long
idl__raw_syscall3(long n, long a1, long a2, long a3)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3)
			 : "rcx", "r11", "memory");
	return r;
}

static inline long
idl__raw_syscall5(long n, long a1, long a2, long a3, long a4, long a5)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return r;
}

static inline long
idl__raw_recvmsg(int fd, struct msghdr *mh, int flags)
{
	return idl__raw_syscall3(SYS_recvmsg, fd, (long)mh, flags);
}

static inline long
idl__raw_sendmsg(int fd, const struct msghdr *mh, int flags)
{
	return idl__raw_syscall3(SYS_sendmsg, fd, (long)mh, flags);
}

/* A message queue's send without a time (its descriptor O_NONBLOCK or not) and its timed
 * receive; on Linux a queue descriptor is a file descriptor. */
static inline long
idl__raw_mq_send(int q, const char *buf, size_t len)
{
	return idl__raw_syscall5(SYS_mq_timedsend, q, (long)buf, (long)len, 0, 0);
}

static inline long
idl__raw_mq_timedreceive(int q, char *buf, size_t len, const struct timespec *ts)
{
	return idl__raw_syscall5(SYS_mq_timedreceive, q, (long)buf, (long)len, 0, (long)ts);
}
#else
/* libc's result as a raw one. */
static inline long
idl__raw_of(long r)
{
	return r < 0 ? -(long)errno : r;
}

static inline long
idl__raw_recvmsg(int fd, struct msghdr *mh, int flags)
{
	return idl__raw_of(idl__sys_recvmsg(fd, mh, flags));
}

static inline long
idl__raw_sendmsg(int fd, const struct msghdr *mh, int flags)
{
	return idl__raw_of(idl__sys_sendmsg(fd, mh, flags));
}

#ifdef IDL__SYS_LIBC
#include <mqueue.h>

static inline long
idl__raw_mq_send(int q, const char *buf, size_t len)
{
	return idl__raw_of(mq_send(q, buf, len, 0));
}

static inline long
idl__raw_mq_timedreceive(int q, char *buf, size_t len, const struct timespec *ts)
{
	return idl__raw_of(mq_timedreceive(q, buf, len, NULL, ts));
}
#else
static inline long
idl__raw_mq_send(int q, const char *buf, size_t len)
{
	return idl__raw_of(idl__syscall6(SYS_mq_timedsend, q, (long)buf, (long)len, 0, 0, 0));
}

static inline long
idl__raw_mq_timedreceive(int q, char *buf, size_t len, const struct timespec *ts)
{
	return idl__raw_of(
		idl__syscall6(SYS_mq_timedreceive, q, (long)buf, (long)len, 0, (long)ts, 0));
}
#endif
#endif

#endif /* IDL_TRANSPORTS_SYS_RAW_H */
