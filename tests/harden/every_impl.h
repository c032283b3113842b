/* every_impl.h - what every_impl.c shares with the programs that serve every.defs. */
#ifndef EVERY_IMPL_H
#define EVERY_IMPL_H

#include <idl/idl_ool.h>

/* Error injection: 0 off; 1 each routine that receives out-of-line data or ports fails
 * once, after receiving them; 2 every time. */
extern int ev_inject;

/* Set by the fuzzer: no routine sleeps or starts a thread; `deferred` holds every reply it
 * defers (ev_held_take()). */
extern int ev_fuzzing;

/* A reply that `deferred` (x < 0) holds, or NULL; the caller sends or discards it. */
idl_reply_t ev_held_take(void);
/* Sends a held reply with y; returns the send's result (-1 when none is held). */
int ev_send_held(int y);

#endif
