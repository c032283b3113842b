/*
 * sock_timeo.c - the socket deadline cache (sock_timeo.h).
 */
#include <config.h>

#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "sock_timeo.h"

int
idl__sock_timeo(int fd, int opt, int64_t *cached, int64_t deadline)
{
	int64_t left, want;
	struct timeval tv;

	if (deadline == IDL_DEADLINE_NONE) {
		want = 0;
	} else {
		left = (deadline - idl_now_ns()) / 1000;
		if (left <= 0)
			return 1;
		if (*cached != 0 && *cached <= left && *cached >= left / 2)
			return 0;
		want = left - left / 16;
		if (want <= 0)
			want = 1;
	}
	if (want == *cached)
		return 0;
	tv.tv_sec = (time_t)(want / 1000000);
	tv.tv_usec = (suseconds_t)(want % 1000000);
	if (setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) != 0)
		return IDL_ESYSERR(errno);
	*cached = want;
	return 0;
}
