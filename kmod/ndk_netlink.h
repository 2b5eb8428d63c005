/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: registration statistics and the generic netlink family "ndk"
 * (ndk_netlink.c, Documentation/netlink.md).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_NETLINK_H
#define NDK_NETLINK_H

#include <linux/atomic.h>
#include <linux/types.h>

struct ndk_device;
struct ndk_file;

/**
 * struct ndk_stats - module-wide registration counters
 * @registrations:    NdkRegisterMr that succeeded
 * @deregistrations:  registrations released
 * @registered_bytes: bytes of the registrations now
 * @fast_registers:   NdkFastRegister requests posted
 * @binds:            NdkBind requests posted
 * @invalidates:      NdkInvalidate requests posted
 * @events_dropped:   "mem" events not sent (no memory, queue full)
 */
struct ndk_stats {
	atomic64_t registrations;
	atomic64_t deregistrations;
	atomic64_t registered_bytes;
	atomic64_t fast_registers;
	atomic64_t binds;
	atomic64_t invalidates;
	atomic64_t events_dropped;
};

extern struct ndk_stats ndk_stats;

void ndk_stat_error(s32 status);
int ndk_netlink_init(void);
void ndk_netlink_exit(void);
void ndk_nl_adapter_event(struct ndk_device *dev, u8 cmd);
void ndk_nl_mem_invalidated(u32 file_id, pid_t tgid, u32 handle, u64 address,
			    u64 length);
int ndk_nl_file_add(struct ndk_file *nf);
void ndk_nl_file_del(struct ndk_file *nf);

#endif /* NDK_NETLINK_H */
