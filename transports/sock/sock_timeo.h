/*
 * sock_timeo.h - the socket deadline cache that unix:, tcp: and udp: all use: a blocking
 * socket call bounded by a deadline without a poll, and without a clock read when the
 * socket's timeout already is the call's.
 */
#ifndef IDL_TRANSPORTS_SOCK_TIMEO_H
#define IDL_TRANSPORTS_SOCK_TIMEO_H

#include <stdint.h>

#include "transport_kit.h"

/*
 * Makes the socket's timeout for `opt` (SO_RCVTIMEO, SO_SNDTIMEO) fit the deadline; *cached
 * is its value as last set, in microseconds (0: none, the call blocks).
 *
 * A deadline not anchored yet (idl_deadline_abs() never called) is its timeout `ms` from
 * now: the socket's timeout is set to exactly `ms` if it is not that already, and the
 * deadline stays unanchored. No clock is read: the kernel enforces the timeout, and a wait
 * that ends by it (EAGAIN) is the deadline passing (idl__sock_late()). A call whose timeout
 * is the previous call's therefore makes no setsockopt and reads no clock.
 *
 * An anchored deadline (an absolute one, or one a cut-short wait anchored) has `left` to
 * go: the cached value stays when it is no longer than that (the wait never overshoots) and
 * at least half of it (a long wait is not cut into many short ones); otherwise it is set to
 * 15/16 of what is left, so that the next waits with a similar deadline keep it. A wait cut
 * short by that timeout returns EAGAIN; idl__sock_late() reads the clock and the caller
 * waits again if time is left.
 *
 * Returns 0, 1 when the deadline has passed (try once without blocking), or an error.
 * The common case - an unanchored deadline whose timeout the socket already has - is the
 * inline test; the rest is idl__sock_timeo_set().
 */
int idl__sock_timeo_set(int fd, int opt, int64_t *cached, struct idl_deadline *dl);

/* The common case alone: whether the socket's timeout, `cached`, already is the unanchored
 * deadline's, so that a blocking call bounded by it needs nothing done first. A transport's
 * fast path tests it before anything else and leaves every other case to its general path. */
static inline int
idl__sock_timeo_kept(const struct idl_deadline *dl, int64_t cached)
{
	return dl->abs_ns == 0 && ((dl->ms > 0 && cached == (int64_t)dl->ms * 1000) ||
				   (dl->ms == IDL_DEADLINE_MS_NONE && cached == 0));
}

static inline int
idl__sock_timeo(int fd, int opt, int64_t *cached, struct idl_deadline *dl)
{
	if (idl__sock_timeo_kept(dl, *cached))
		return 0;
	return idl__sock_timeo_set(fd, opt, cached, dl);
}

/*
 * After a wait prepared by idl__sock_timeo() returned EAGAIN: whether the deadline has
 * passed. An unanchored one has (the wait was bounded by exactly its timeout); an anchored
 * one is compared with the clock.
 */
static inline int
idl__sock_late(struct idl_deadline *dl)
{
	if (dl->abs_ns == 0)
		return dl->ms != IDL_DEADLINE_MS_NONE;
	return idl_deadline_passed(dl);
}

/*
 * Before waiting again after a wait that ended early - cut short by a signal (EINTR), or
 * with part of a stream read or written: the time already waited is unknown, so the
 * deadline is anchored now, if it was not, and the next waits are bounded by what is left
 * of it. An early end can thus stretch a call's limit by at most what it had waited.
 */
static inline void
idl__sock_again(struct idl_deadline *dl)
{
	(void)idl_deadline_abs(dl);
}

#endif /* IDL_TRANSPORTS_SOCK_TIMEO_H */
