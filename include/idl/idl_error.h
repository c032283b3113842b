/*
 * idl_error.h - the one table of idlkit error codes.
 *
 * Every fallible runtime function returns an int: 0 (KERN_SUCCESS) on success, or one of the
 * negative codes below. Positive values are never produced by the runtime; they belong to
 * server routines (KERN_* codes, errno values as the Hurd uses them, or the user's own), and
 * travel back to the client unchanged in the reply's return code.
 *
 * The numbers are stable: they are part of the wire format (a server may send any of them in
 * a reply) and of the ABI. MIG's codes keep MIG's values (-300 ... -309, GNU meanings);
 * idlkit's own codes live in -400 ... -499; a system error is wrapped as
 * IDL_ESYSERR_BASE - errno, so that idl_strerror() can still name it.
 */
#ifndef IDL_ERROR_H
#define IDL_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* XX(name, value, message). The table is the single source of truth for the enum,
 * idl_errname() and idl_strerror(). */
#define IDL_ERRNO_MAP(XX)                                                                          \
	XX(OK, 0, "success")                                                                       \
	XX(MIG_TYPE_ERROR, -300, "reply failed its type check")                                    \
	XX(MIG_REPLY_MISMATCH, -301, "reply does not match the request")                           \
	XX(MIG_REMOTE_ERROR, -302, "server detected an error")                                     \
	XX(MIG_BAD_ID, -303, "request id is not in the server's subsystems")                       \
	XX(MIG_BAD_ARGUMENTS, -304, "request failed the server's checks")                          \
	XX(MIG_NO_REPLY, -305, "server routine sends no reply")                                    \
	XX(MIG_EXCEPTION, -306, "server raised an exception")                                      \
	XX(MIG_ARRAY_TOO_LARGE, -307, "array larger than the caller's buffer or bound")            \
	XX(MIG_SERVER_DIED, -308, "server died before replying")                                   \
	XX(MIG_DESTROY_REQUEST, -309, "server destroyed the request without replying")             \
	XX(ETIMEDOUT, -400, "call deadline expired")                                               \
	XX(EADDRINVAL, -401, "invalid address")                                                    \
	XX(ENOTSUP, -402, "operation not supported by this transport")                             \
	XX(ENOSCHEME, -403, "no transport registered for the address scheme")                      \
	XX(ECONNREFUSED, -404, "connection refused: no server at the address")                     \
	XX(ECLOSED, -405, "port or server is closed")                                              \
	XX(EMSGSIZE, -406, "message larger than the limit")                                        \
	XX(EPROTO, -407, "protocol violation by the peer")                                         \
	XX(EBYTEORDER, -408, "peer uses the other byte order")                                     \
	XX(ESIGNATURE, -409, "routine signature differs between client and server")                \
	XX(ENOMEM, -410, "out of memory")                                                          \
	XX(EINVAL, -411, "invalid argument")                                                       \
	XX(EBUSY, -412, "resource busy")                                                           \
	XX(EADDRINUSE, -413, "address already in use")                                             \
	XX(EACCES, -414, "permission denied")                                                      \
	XX(ELIMIT, -415, "a configured limit was reached")                                         \
	XX(EAGAIN, -416, "no room now, try again later")                                           \
	XX(ECANCELED, -417, "call cancelled")                                                      \
	XX(ECERT, -418, "the peer's certificate was refused (or the peer refused ours)")           \
	XX(ETLS, -419, "TLS negotiation failed: version, protocol, or a peer not speaking TLS")    \
	XX(EINTEGRITY, -420, "a TLS record failed its integrity check: changed or cut on the way")

enum idl_err {
#define IDL__ERR_ENUM(name, value, msg) IDL_##name = (value),
	IDL_ERRNO_MAP(IDL__ERR_ENUM)
#undef IDL__ERR_ENUM
};

/* System errors: IDL_ESYSERR_BASE - errno. IDL_ESYSERR(EPIPE) is a valid return code. */
#define IDL_ESYSERR_BASE (-0x10000)
#define IDL_ESYSERR(e) (IDL_ESYSERR_BASE - (e))
#define IDL_IS_SYSERR(r) ((r) <= IDL_ESYSERR_BASE && (r) > IDL_ESYSERR_BASE - 0x10000)
#define IDL_SYSERR_ERRNO(r) (IDL_ESYSERR_BASE - (r))

/* A static English message for any code: table codes, wrapped errno values, and positive
 * (server-defined) codes alike (the message idl_error_register() gave, else "server-defined
 * code N"). Never NULL; thread-safe. */
const char *idl_strerror(int err);

/* The symbolic name, e.g. "MIG_BAD_ID", "ETIMEDOUT", "ESYSERR(EPIPE)"; 0 is MIG's
 * "KERN_SUCCESS", as traces print it (the enum's name for it stays IDL_OK). Never NULL.
 * Unknown codes give "UNKNOWN". A positive code is named by idl_error_register()'s tables,
 * else "server-defined code N". The returned string is static (or the registered table's),
 * except for formatted names (unregistered positive codes, unknown errno values), which live
 * in a per-thread buffer valid until the thread's next call. */
const char *idl_errname(int err);

/* A name and a message for one of a server's own return codes (positive: the runtime never
 * returns one), as MIG programs name theirs for mach_error_string(). */
struct idl_errdef {
	int code; /* > 0 */
	const char *name; /* e.g. "CALC_OVERFLOW" */
	const char *message; /* e.g. "sum does not fit an int"; NULL: the name */
};

/* Registers names for `n` positive codes, process-wide, so that idl_errname() and
 * idl_strerror() (and traces) name them instead of "server-defined code N". The table is
 * borrowed: it must stay valid and unchanged for the rest of the process (a static array).
 * Registering a code again under the same name is harmless. Returns 0; IDL_EINVAL (n is 0,
 * a code is not positive or a name is NULL), IDL_EBUSY (a code already has another name, or
 * appears twice in `defs` with two names: nothing of `defs` is registered; idl_errdetail()
 * names the code), IDL_ENOMEM. Any thread, also while others name codes. */
int idl_error_register(const struct idl_errdef *defs, unsigned n);

/* What a program prints for a failure `err` that a runtime call or stub of this thread just
 * returned: `what` (the caller's context, e.g. the address; NULL for none), then the thread's
 * detail, naming what failed, then the code's message and name, e.g. with `what`
 * "tcp:no-such-host.invalid:7000": "tcp:no-such-host.invalid:7000: cannot resolve host
 * 'no-such-host.invalid': Name or service not known (invalid address: EADDRINVAL)". `what`
 * is left out when the detail starts with it already; without a detail the line is `what`,
 * the message and the name: "bench.add: call deadline expired (ETIMEDOUT)". Never NULL; a
 * per-thread buffer valid until the thread's next call of it. */
const char *idl_errmsg(int err, const char *what);

/* The calling thread's detail for the last error the runtime returned to it, naming what
 * failed, e.g. "unix:/run/x.sock: connect: No such file or directory" or
 * "bench.add: signature differs from the server's". Empty string when none. The string is
 * owned by the thread and valid until its next runtime call. */
const char *idl_errdetail(void);

/* For generated stubs: records the calling thread's detail (printf-style: "SUBSYSTEM.ROUTINE:
 * ARGUMENT: what", e.g. "bench.sum: data: 2000 elements, above its bound 1024") and returns
 * `err`. A client stub calls it where it refuses an argument or a reply itself, so that
 * idl_errdetail() names this failure and not an earlier one. */
int idl_stub_fail(int err, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

#ifdef __cplusplus
}
#endif
#endif /* IDL_ERROR_H */
