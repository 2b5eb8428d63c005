/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: internal declarations shared by the files of ndk.ko.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_CORE_H
#define NDK_CORE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <ndk/ndk_ioctl.h>

/**
 * struct ndk_adapter - one NDK adapter per ib_device
 * @ibdev: the RDMA device; valid from the ib_client add() callback until
 *         remove() returns.  No reference to it is held beyond that.
 * @id:    adapter id visible to user space, never reused while loaded
 * @name:  copy of the ib_device name, kept current by rename()
 *
 * Adapters live in the ndk_adapters xarray; ndk_adapters_lock serialises
 * add, remove, rename and every reader that looks inside an adapter.
 */
struct ndk_adapter {
	struct ib_device *ibdev;
	u32 id;
	char name[IB_DEVICE_NAME_MAX];
};

int ndk_adapter_init(void);
void ndk_adapter_exit(void);
u32 ndk_adapter_count(void);
int ndk_adapter_query(struct ndk_u_adapter_query *q);

long ndk_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* NDK_CORE_H */
