/*
 * sock_timeo.c - the socket deadline cache (sock_timeo.h).
 */
#include <config.h>

#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "sock_timeo.h"

static int
sock_set(int fd, int opt, int64_t *cached, int64_t want)
{
	struct timeval tv;

	if (want == *cached)
		return 0;
	tv.tv_sec = (time_t)(want / 1000000);
	tv.tv_usec = (suseconds_t)(want % 1000000);
	if (setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) != 0)
		return IDL_ESYSERR(errno);
	*cached = want;
	return 0;
}

int
idl__sock_timeo_set(int fd, int opt, int64_t *cached, struct idl_deadline *dl)
{
	int64_t left, want;

	if (dl->abs_ns == 0) {
		/* Not anchored: the socket's timeout is the call's, and the kernel keeps it. */
		if (dl->ms == IDL_DEADLINE_MS_NONE)
			return sock_set(fd, opt, cached, 0);
		if (dl->ms == 0)
			return 1;
		return sock_set(fd, opt, cached, (int64_t)dl->ms * 1000);
	}
	if (dl->abs_ns == IDL_DEADLINE_NONE)
		return sock_set(fd, opt, cached, 0);
	left = (dl->abs_ns - idl_now_ns()) / 1000;
	if (left <= 0)
		return 1;
	if (*cached != 0 && *cached <= left && *cached >= left / 2)
		return 0;
	want = left - left / 16;
	return sock_set(fd, opt, cached, want > 0 ? want : 1);
}
