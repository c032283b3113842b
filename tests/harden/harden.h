/*
 * harden.h - the hardening tests (docs/security.md): limits, the authorisation
 * hook, credentials, deferred replies, the ownership rule under injected errors, and peer
 * death on every transport. Each suite starts real every-server processes (every_server.c)
 * and calls them through the generated stubs of tests/fuzz/every.defs.
 */
#ifndef IDL_TESTS_HARDEN_H
#define IDL_TESTS_HARDEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <CUnit/CUnit.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "every.h"

/* A server process. */
struct hd_srv {
	pid_t pid;
	char addr[256];
	char log[300]; /* its stderr: the server's log lines */
};

/* The test's private directory (0700), made by main. */
extern char hd_dir[200];

/* Starts every-server with opts (NULL-terminated, may be NULL) on addr; nofile, when not 0,
 * is its RLIMIT_NOFILE. Waits for "ready" (10 s). 0 or -1. */
int hd_start(struct hd_srv *s, const char *addr, const char *const *opts, rlim_t nofile);
/* SIGTERM and wait (10 s at most): the exit status as waitpid gives it, or -1. */
int hd_stop(struct hd_srv *s);
/* SIGKILL and reap. */
void hd_kill(struct hd_srv *s);
/* Removes what a killed server leaves at its address (a socket file, a queue name). */
void hd_reclaim(const char *addr);
/* A fresh address of the scheme (unix, tcp, udp, shm, port): 0 or -1. */
int hd_address(const char *scheme, char *buf, size_t n);
/* Whether the server's log has a line containing needle, waiting up to wait_ms for it. */
int hd_log_has(const struct hd_srv *s, const char *needle, int wait_ms);
/* CPU time (user + system) the process has used, in milliseconds; -1 if unknown. */
long hd_cpu_ms(pid_t pid);
/* Open descriptors of a process; -1 if unknown. */
int hd_fd_count(pid_t pid);
int64_t hd_now_ms(void);
void hd_sleep_ms(int ms);
/* A port to addr with the given default timeout, or NULL (a CUnit failure is recorded). */
idl_port_t hd_open(const char *addr, int timeout_ms);
/* The transport of a scheme; NULL if it is not registered. */
const struct idl_transport *hd_transport(const char *scheme);
/* The registered schemes, in registration order (each must have an address above). */
size_t hd_schemes(const char **out, size_t max);

#define HD_CHECK_KR(kr, want)                                                                      \
	do {                                                                                       \
		int hd_k_ = (kr), hd_w_ = (want);                                                  \
		if (hd_k_ != hd_w_)                                                                \
			fprintf(stderr, "harden: %s:%d: got %s (%d) [%s], want %s\n", __FILE__,    \
				__LINE__, idl_errname(hd_k_), hd_k_, idl_errdetail(),              \
				idl_errname(hd_w_));                                               \
		CU_ASSERT_EQUAL(hd_k_, hd_w_);                                                     \
	} while (0)

extern CU_TestInfo hd_limit_tests[];
extern CU_TestInfo hd_auth_tests[];
extern CU_TestInfo hd_reply_tests[];
extern CU_TestInfo hd_death_tests[];
extern CU_TestInfo hd_scale_tests[];
extern CU_TestInfo hd_reconnect_tests[];

#endif /* IDL_TESTS_HARDEN_H */
