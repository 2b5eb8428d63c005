/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: module-wide registration counters and failed requests by
 * status (ndk_stats.c), kept by the core; the netlink family reads them
 * (STAT_GET, Documentation/netlink.md), as ib_core's netlink reads the
 * counters a driver keeps.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_STATS_H
#define NDK_STATS_H

#include <linux/atomic.h>
#include <linux/percpu.h>
#include <linux/types.h>

/**
 * struct ndk_stats - module-wide registration counters
 * @registrations:    NdkRegisterMr that succeeded
 * @deregistrations:  registrations released
 * @registered_bytes: bytes of the registrations now
 * @events_dropped:   netlink "mem" events not sent (no memory, queue full)
 */
struct ndk_stats {
	atomic64_t registrations;
	atomic64_t deregistrations;
	atomic64_t registered_bytes;
	atomic64_t events_dropped;
};

extern struct ndk_stats ndk_stats;

/**
 * struct ndk_stats_requests - requests posted on consumer QPs
 * @fast_registers: NdkFastRegister requests posted
 * @binds:          NdkBind requests posted
 * @invalidates:    NdkInvalidate requests posted
 *
 * Counted per CPU: every such request counts, and a shared atomic would
 * bounce one cache line between every CPU that posts.
 */
struct ndk_stats_requests {
	u64 fast_registers;
	u64 binds;
	u64 invalidates;
};

DECLARE_PER_CPU(struct ndk_stats_requests, ndk_stats_requests);

/* Count a request; @field is a member of struct ndk_stats_requests. */
#define ndk_stat_request(field) this_cpu_inc(ndk_stats_requests.field)

void ndk_stat_requests(struct ndk_stats_requests *sum);

/* Distinct error statuses kept; more are counted under the last slot. */
#define NDK_STAT_ERROR_SLOTS	32

void ndk_stat_error(s32 status);
int ndk_stat_errors(s32 *status, u64 *count);

#endif /* NDK_STATS_H */
