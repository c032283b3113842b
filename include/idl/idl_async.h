/*
 * idl_async.h - calls in flight: the runtime entry of the asynchronous stubs, and the
 * pollable port whose event loop completes them (docs/call-core.md, "The runtime entry of
 * the asynchronous stubs", "The pollable port").
 *
 * For every routine idlc writes, beside the synchronous stub, <routine>_async() (unless
 * -noasync): it packs the request exactly as the synchronous stub does and hands it to
 * idl_call_async(), which copies it before returning. When the reply comes (or the call
 * fails: its deadline passed, the server died, it was cancelled, the port was closed), the
 * runtime queues the call's completion; idl_port_dispatch(), idl_port_wait() or
 * idl_port_close() runs it later on the caller's thread: the generated completion function
 * checks and unpacks the reply exactly as the synchronous stub does and calls the user's
 * done function with the out arguments (docs/generated-code.md, "Asynchronous stubs").
 *
 * The rules both sides keep:
 *   - a call idl_call_async() accepts (it returns 0) completes exactly once: its complete
 *     function runs once, with KERN_SUCCESS and the reply, or with the error and no reply -
 *     never inside idl_call_async() or idl_async_cancel(), always in idl_port_dispatch(),
 *     idl_port_wait() or idl_port_close() of its port;
 *   - a call it refuses (an error) never completes: neither complete nor done runs, and
 *     *callp is NULL;
 *   - either way the request's `dealloc` data and moved ports are consumed by the call, as
 *     idl_call() consumes them; other out-of-line data and ports the request names are read
 *     when the request is sent, so they must stay valid until the call completes;
 *   - complete functions of one port never run concurrently.
 *
 * Thread safety: idl_call_async(), idl_async_cancel() and idl_async_release() may be called
 * from any thread, idl_port_dispatch() and idl_port_wait() too (they serialise).
 */
#ifndef IDL_ASYNC_H
#define IDL_ASYNC_H

#include <stdint.h>

#include <idl/idl_msg.h>
#include <idl/idl_port.h>
#include <idl/idl_subsystem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most requests one connection's send queue holds: beyond it idl_call_async() returns
 * IDL_EAGAIN until the transport took some (idl_port_dispatch()). */
#define IDL_ASYNC_QUEUE_MAX 1024u

/* A call in flight, named for idl_async_cancel(); the runtime owns it until
 * idl_async_release(). */
typedef struct idl_async idl_async_t;

/*
 * A routine's completion, generated beside its asynchronous stub: `done` and `ctx` are what
 * the stub passed to idl_call_async(), `kr` the call's outcome (kern_return_t: int), and
 * `rep` the reply, NULL unless kr is KERN_SUCCESS. It checks and unpacks `rep` exactly as the
 * synchronous stub checks its reply, and calls done(ctx, kr, out arguments...); on a reply
 * that fails the checks it calls done with the MIG error (idl_errdetail() names the failure)
 * and every out argument 0 or NULL, having released what the reply carried. `rep` is the
 * call's own buffer of rep_max bytes: what the done function borrows points into it, valid
 * until the complete function returns.
 */
typedef void idl_async_complete_fn(void *done, void *ctx, int kr, idl_msg_header_t *rep);

/*
 * Starts routine `number` of subsystem `ss` on `port` with the request `req` (req->size
 * bytes; the runtime fills its header's magic, order, kind, id and seqno), copying it before
 * it returns. `rep_max` bounds the reply and `timeout_ms` is the call's deadline, as in
 * idl_call(). On completion, `complete(done, ctx, kr, rep)` runs (above).
 *
 * Returns 0 when the call is accepted; then *callp (when callp is not NULL) names it until
 * idl_async_release(). Otherwise an error (IDL_EAGAIN when the connection's send queue is
 * full, IDL_EINVAL, ...): *callp is NULL and neither complete nor done ever runs. Either way the
 * request's `dealloc` and moved arguments are consumed.
 */
int idl_call_async(idl_port_t port, const struct idl_subsystem *ss, uint32_t number,
		   const idl_msg_header_t *req, uint32_t rep_max, int timeout_ms,
		   idl_async_complete_fn *complete, void *done, void *ctx, idl_async_t **callp);

/*
 * Cancels a call in flight: the server is told (a request not yet dispatched is dropped), a
 * reply that still comes is dropped, and the call completes with IDL_ECANCELED - its done
 * function runs once, later, in the port's dispatch. Returns 0, also when the call had
 * completed already (its done function ran, or runs, with the outcome it had).
 */
int idl_async_cancel(idl_async_t *call);

/* Ends the handle *callp gave, before or after completion: the call itself goes on (cancel
 * it first to stop it) and completes as it would. NULL is allowed. */
void idl_async_release(idl_async_t *call);

/*
 * The pollable port. idl_port_fd() is a descriptor the port owns (stable across reconnects,
 * close-on-exec), readable while the port has work for idl_port_dispatch(): a completion
 * queued, a reply waiting, a timer due. Returns the descriptor, or an error.
 */
int idl_port_fd(idl_port_t port);

/* Does what is ready without blocking - receives, completes calls, fires due timers, flushes
 * queued sends - then runs up to `max` done functions. Returns how many ran, or an error. */
int idl_port_dispatch(idl_port_t port, int max);

/* Blocks until at least one done function ran, or timeout_ms passed (IDL_ETIMEDOUT).
 * Returns how many ran, or an error. */
int idl_port_wait(idl_port_t port, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* IDL_ASYNC_H */
