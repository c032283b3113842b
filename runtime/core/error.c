/*
 * error.c - names and messages for every idlkit error code, and the per-thread detail.
 *
 * The codes come from IDL_ERRNO_MAP in <idl/idl_error.h>; wrapped system errors are named
 * after their errno ("ESYSERR(EPIPE)"); positive codes belong to server routines and are
 * named by the tables programs register (error_reg.c), else only numbered.
 *
 * Core: it knows nothing of any other room.
 */
#include <config.h>

/* strerrorname_np, accept4, struct ucred: GNU and Linux interfaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

/* Highest errno we name statically; Linux stops at 133 (EHWPOISON). */
#define ERR_SYS_MAX 160
#define ERR_DETAIL_MAX 256
#define ERR_MSG_MAX (ERR_DETAIL_MAX + 160)

static _Thread_local char err_detail[ERR_DETAIL_MAX];
_Thread_local unsigned char idl__detail_set __attribute__((tls_model("initial-exec")));
/* Formatted names and messages for codes outside the table (positive codes, unknown
 * errno values) live in a per-thread buffer: valid until the thread's next such call. */
static _Thread_local char err_scratch[64];
/* idl_errmsg()'s line: the detail, then the code's message and name. */
static _Thread_local char err_msg[ERR_MSG_MAX];

static pthread_once_t err_once = PTHREAD_ONCE_INIT;
static char err_sysnames[ERR_SYS_MAX][32];

/* A small fallback for C libraries without strerrorname_np (glibc < 2.32, musl). */
static const char *
err_errno_name(int e)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	return strerrorname_np(e);
#else
	switch (e) {
	case EPIPE:
		return "EPIPE";
	case ECONNRESET:
		return "ECONNRESET";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	case EAGAIN:
		return "EAGAIN";
	case EINTR:
		return "EINTR";
	case EMFILE:
		return "EMFILE";
	case ENFILE:
		return "ENFILE";
	case ENOMEM:
		return "ENOMEM";
	case EINVAL:
		return "EINVAL";
	case EBADF:
		return "EBADF";
	case EMSGSIZE:
		return "EMSGSIZE";
	case ENOTCONN:
		return "ENOTCONN";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	default:
		return NULL;
	}
#endif
}

static void
err_init_sysnames(void)
{
	for (int e = 1; e < ERR_SYS_MAX; e++) {
		const char *n = err_errno_name(e);

		if (n != NULL)
			snprintf(err_sysnames[e], sizeof err_sysnames[e], "ESYSERR(%s)", n);
	}
}

/* A server routine's own code, which the table does not name. */
static const char *
err_server_code(int err)
{
	snprintf(err_scratch, sizeof err_scratch, "server-defined code %d", err);
	return err_scratch;
}

const char *
idl_errname(int err)
{
	/* Success by MIG's name, as the stubs return it and traces print it (the enum keeps
	 * IDL_OK). */
	if (err == 0)
		return "KERN_SUCCESS";
	switch (err) {
#define ERR_NAME_CASE(name, value, msg)                                                            \
	case (value):                                                                              \
		return #name;
		IDL_ERRNO_MAP(ERR_NAME_CASE)
#undef ERR_NAME_CASE
	default:
		break;
	}
	if (err > 0) {
		const struct idl_errdef *d = idl__error_lookup(err);

		return d != NULL ? d->name : err_server_code(err);
	}
	if (IDL_IS_SYSERR(err)) {
		int e = IDL_SYSERR_ERRNO(err);

		pthread_once(&err_once, err_init_sysnames);
		if (e > 0 && e < ERR_SYS_MAX && err_sysnames[e][0] != '\0')
			return err_sysnames[e];
		snprintf(err_scratch, sizeof err_scratch, "ESYSERR(%d)", e);
		return err_scratch;
	}
	return "UNKNOWN";
}

const char *
idl_strerror(int err)
{
	switch (err) {
#define ERR_MSG_CASE(name, value, msg)                                                             \
	case (value):                                                                              \
		return msg;
		IDL_ERRNO_MAP(ERR_MSG_CASE)
#undef ERR_MSG_CASE
	default:
		break;
	}
	if (err > 0) {
		const struct idl_errdef *d = idl__error_lookup(err);

		if (d != NULL)
			return d->message != NULL ? d->message : d->name;
		return err_server_code(err);
	}
	if (IDL_IS_SYSERR(err)) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
		/* strerrordesc_np gives the untranslated, static text: thread-safe. */
		const char *d = strerrordesc_np(IDL_SYSERR_ERRNO(err));

		if (d != NULL)
			return d;
#endif
		snprintf(err_scratch, sizeof err_scratch, "system error %d", IDL_SYSERR_ERRNO(err));
		return err_scratch;
	}
	return "unknown error";
}

const char *
idl_errdetail(void)
{
	return err_detail;
}

const char *
idl_errmsg(int err, const char *what)
{
	char msg[96], pre[128] = "";
	const char *name;

	/* The message is copied first: for codes outside the table, both it and the name may be
	 * formatted in the thread's one scratch buffer. */
	snprintf(msg, sizeof msg, "%s", idl_strerror(err));
	name = idl_errname(err);
	if (what != NULL && *what != '\0' && strncmp(err_detail, what, strlen(what)) != 0)
		snprintf(pre, sizeof pre, "%s: ", what);
	/* What failed leads, when the failure recorded it: a user reads the first words. A
	 * registered code without a message of its own is named once. */
	if (err_detail[0] != '\0' && strcmp(msg, name) != 0)
		snprintf(err_msg, sizeof err_msg, "%s%s (%s: %s)", pre, err_detail, msg, name);
	else if (err_detail[0] != '\0')
		snprintf(err_msg, sizeof err_msg, "%s%s (%s)", pre, err_detail, name);
	else if (strcmp(msg, name) != 0)
		snprintf(err_msg, sizeof err_msg, "%s%s (%s)", pre, msg, name);
	else
		snprintf(err_msg, sizeof err_msg, "%s%s", pre, name);
	return err_msg;
}

int
idl__fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_detail, sizeof err_detail, fmt, ap);
	va_end(ap);
	idl__detail_set = 1;
	return err;
}

/* The stubs' way to the same detail (<idl/idl_error.h>): the exported name of idl__fail. */
int idl_stub_fail(int err, const char *fmt, ...) __attribute__((alias("idl__fail")));

void
idl__clear_detail_now(void)
{
	err_detail[0] = '\0';
	idl__detail_set = 0;
}
