/*
 * shm_test.h - the shm: transport's own tests (tests/shm/): hostile peers that scribble on
 * the shared region, out-of-line data passed without a copy, and loops that kill either
 * side mid-call. They use real processes: bench-server, or a forked child driving the
 * transport's ops by hand.
 */
#ifndef IDL_TESTS_SHM_TEST_H
#define IDL_TESTS_SHM_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <idl/idl.h>
#include <idl/idl_transport.h>

#include "shm_impl.h"

/* A private 0700 directory for the suite's sockets (made by main), and its removal. */
extern char st_dir[256];
int st_rmtree(const char *dir);

/* bench-server on one address, optionally pinned to a CPU (-1: free). */
struct st_server {
	pid_t pid;
	int out; /* the read end of its stdout */
};
int st_server_start(struct st_server *s, const char *address, int cpu);
void st_server_kill(struct st_server *s); /* SIGKILL, and reap */
int st_server_alive(const struct st_server *s);

/* Lines of /proc/PID/maps that map an shm: region, and open descriptors of PID. */
int st_count_regions(pid_t pid);
int st_count_fds(pid_t pid);
int64_t st_ms_since(int64_t t0_ns);

/* Raw connections through the transport's ops (transport state only, no runtime). */
const struct idl_transport *st_tr(void);
struct shm_conn *st_raw_connect(const char *address, int *err);
void st_raw_close(struct shm_conn *c);
int st_raw_send(struct shm_conn *c, const void *msg, size_t len, int ms);
int st_raw_recv(struct shm_conn *c, void *buf, size_t cap, size_t *len, int ms);

/* A request header in buf. */
void st_head(void *buf, uint8_t kind, int32_t id, uint32_t size, uint8_t flags, uint32_t ndesc);

/* The suites. */
extern const struct st_case {
	const char *name;
	void (*fn)(void);
} st_hostile_cases[], st_ool_cases[], st_kill_cases[];

#define ST_CHECK_KR(kr, want)                                                                      \
	do {                                                                                       \
		int st_k_ = (kr), st_w_ = (want);                                                  \
		if (st_k_ != st_w_)                                                                \
			fprintf(stderr, "shm-test: %s:%d: got %s (%d) [%s], want %s\n", __FILE__,  \
				__LINE__, idl_errname(st_k_), st_k_, idl_errdetail(),              \
				idl_errname(st_w_));                                               \
		CU_ASSERT_EQUAL(st_k_, st_w_);                                                     \
	} while (0)

#endif /* IDL_TESTS_SHM_TEST_H */
