/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk_test.ko: in-kernel scenarios for ndk.ko, run in the test-bed guest.
 *
 * ndk_test.ko is an NDK consumer like any other: it includes only the
 * public <ndk/ndkpi.h> and links against ndk.ko's Module.symvers.  Each
 * scenario is one struct ndk_test; tests/kmod/run-ktest.sh runs one by
 * name (writing it to /sys/kernel/debug/ndk_test/run) and each is its own
 * CTest vm test (tests/vm/CMakeLists.txt).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_TEST_H
#define NDK_TEST_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kernel.h>
#include <linux/printk.h>
#include <ndk/ndkpi.h>

/* A scenario returns one of these. */
#define NDK_TEST_PASS	0
#define NDK_TEST_FAIL	1
#define NDK_TEST_SKIP	77

/**
 * struct ndk_test_env - what a scenario gets
 * @adapter_name: the ib_device under test (module parameter, "rxe0")
 * @peer_ip:      IPv4 address of that device's netdev (module parameter),
 *                for rdma_cm loopback connections
 * @silent_ip:    an IPv4 address on that netdev's subnet whose neighbour
 *                resolves but which answers nothing (module parameter),
 *                or ""
 * @pair_target:  "a.b.c.d:port" of ndk-target on another host (module
 *                parameter), for the pair-client scenario; may be empty
 * @failures:     checks failed so far (NDK_T_CHECK counts them)
 */
struct ndk_test_env {
	const char *adapter_name;
	const char *peer_ip;
	const char *silent_ip;
	const char *pair_target;
	int failures;
};

struct ndk_test {
	const char *name;
	int (*run)(struct ndk_test_env *env);
};

/* Log a line of the scenario's output (also goes to the kernel log). */
__printf(1, 2) void ndk_test_log(const char *fmt, ...);

/* Record a failed check with its location and go on. */
#define NDK_T_CHECK(env, cond)						\
	do {								\
		if (!(cond)) {						\
			ndk_test_log("%s:%d: check failed: %s",		\
				     __FILE__, __LINE__, #cond);	\
			(env)->failures++;				\
		}							\
	} while (0)

/* An NTSTATUS that must equal the expected one. */
#define NDK_T_STATUS(env, got, want)					\
	do {								\
		s32 __got = (got), __want = (want);			\
		if (__got != __want) {					\
			ndk_test_log("%s:%d: %s: status %#x, expected %#x", \
				     __FILE__, __LINE__, #got, __got, __want); \
			(env)->failures++;				\
		}							\
	} while (0)

/*
 * Factor of every time bound a scenario waits with (module parameter
 * time_scale, at least 1: run-ktest.sh passes NDK_VM_TIMEOUT_SCALE, 6 on
 * the debug kernel).  Bounds on how fast ndk.ko must be are not scaled.
 */
extern unsigned int ndk_t_time_scale;

/* How long a scenario waits for any callback before it fails. */
#define NDK_T_TIMEOUT	(10 * HZ * ndk_t_time_scale)

/**
 * struct ndk_t_wait - a create, request or close completion to wait for
 * @done:   completed by each call
 * @status: the status passed (STATUS_SUCCESS for a close)
 * @object: the object a create completion passed
 * @calls:  how many times the callback ran
 * @seq:    its place among every completion recorded this way, so a
 *          scenario can check the order of callbacks
 */
struct ndk_t_wait {
	struct completion done;
	s32 status;
	struct ndk_object_header *object;
	atomic_t calls;
	int seq;
};

void ndk_t_wait_init(struct ndk_t_wait *w);
void ndk_t_created(void *context, s32 status, struct ndk_object_header *object);
void ndk_t_requested(void *context, s32 status);
void ndk_t_closed(void *context);
bool ndk_t_wait(struct ndk_t_wait *w);
/* The next number of the sequence struct ndk_t_wait.seq comes from. */
int ndk_t_next_seq(void);

/* ndk_test_mr.c: an MDL chain of @n elements over @len bytes at @buf + @offset. */
struct ndk_mdl *ndk_t_chain(u8 *buf, u32 offset, u32 len, u32 n);

/* Scenario tables, each ended by an entry with a NULL name. */
extern const struct ndk_test ndk_tests_adapter[];
extern const struct ndk_test ndk_tests_qp[];
extern const struct ndk_test ndk_tests_mr[];
extern const struct ndk_test ndk_tests_removal[];

/* Closes what the removal scenarios left open; called at unload. */
void ndk_test_removal_exit(void);
extern const struct ndk_test ndk_tests_cm[];
extern const struct ndk_test ndk_tests_fr[];
extern const struct ndk_test ndk_tests_pair[];
extern const struct ndk_test ndk_tests_pdata[];
extern const struct ndk_test ndk_tests_iw[];
extern const struct ndk_test ndk_tests_direct[];

#endif /* NDK_TEST_H */
