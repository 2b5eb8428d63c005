/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: the generic netlink family "ndk" (ndk_netlink.c,
 * Documentation/netlink.md).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_NETLINK_H
#define NDK_NETLINK_H

#include <linux/types.h>

struct ndk_device;
struct ndk_file;

int ndk_netlink_init(void);
void ndk_netlink_exit(void);
void ndk_nl_adapter_event(struct ndk_device *dev, u8 cmd);
void ndk_nl_mem_invalidated(u32 file_id, pid_t tgid, u32 handle, u64 address,
			    u64 length);
int ndk_nl_file_add(struct ndk_file *nf);
void ndk_nl_file_del(struct ndk_file *nf);

#endif /* NDK_NETLINK_H */
