/*
 * sock_timeo.h - the socket deadline cache that unix:, tcp: and udp: all use: a blocking
 * socket call bounded by a deadline without a poll on the fast path.
 */
#ifndef IDL_TRANSPORTS_SOCK_TIMEO_H
#define IDL_TRANSPORTS_SOCK_TIMEO_H

#include <stdint.h>

#include "transport_kit.h"

/*
 * Makes the socket's timeout for `opt` (SO_RCVTIMEO, SO_SNDTIMEO) fit the deadline. The
 * cached value (*cached, in microseconds, 0 for none) may stay when it is no longer than
 * what is left (the wait never overshoots the deadline) and at least half of it (a long
 * wait is not cut into many short ones); otherwise it is set to 15/16 of what is left, so
 * that the next calls with a similar deadline keep it. A wait cut short by the timeout
 * returns EAGAIN, and the caller checks the deadline and waits again. Returns 0, 1 when the
 * deadline has passed (try once without blocking), or an error.
 */
int idl__sock_timeo(int fd, int opt, int64_t *cached, int64_t deadline);

#endif /* IDL_TRANSPORTS_SOCK_TIMEO_H */
