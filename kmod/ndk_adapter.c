// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK adapters, one per ib_device.
 *
 * An ib_client is registered at module load.  ib_core calls ndk_ib_add()
 * for every RDMA device present or added later, and ndk_ib_remove() before
 * a device goes away (rdma link delete, driver unload) or when the client
 * is unregistered at module unload.  An adapter never holds a reference on
 * its ib_device: remove() unpublishes the adapter and frees it before it
 * returns, so `rdma link delete` can never wait on us.
 *
 * Locking: ndk_adapters_lock (a mutex; every path here may sleep) protects
 * membership of the ndk_adapters xarray and the contents of each adapter.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "ndk_core.h"

static DEFINE_MUTEX(ndk_adapters_lock);
static DEFINE_XARRAY_ALLOC(ndk_adapters);
static u32 ndk_adapter_next_id;
static struct ib_client ndk_ib_client;

static int ndk_ib_add(struct ib_device *ibdev)
{
	struct ndk_adapter *adapter;
	int ret;

	adapter = kzalloc(sizeof(*adapter), GFP_KERNEL);
	if (!adapter)
		return -ENOMEM;
	adapter->ibdev = ibdev;
	strscpy(adapter->name, dev_name(&ibdev->dev), sizeof(adapter->name));

	mutex_lock(&ndk_adapters_lock);
	ret = xa_alloc_cyclic(&ndk_adapters, &adapter->id, adapter,
			      xa_limit_32b, &ndk_adapter_next_id, GFP_KERNEL);
	mutex_unlock(&ndk_adapters_lock);
	if (ret < 0)
		goto err_free_adapter;

	ib_set_client_data(ibdev, &ndk_ib_client, adapter);
	dev_info(&ibdev->dev, "ndk: adapter %u added\n", adapter->id);
	return 0;

err_free_adapter:
	kfree(adapter);
	return ret;
}

static void ndk_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct ndk_adapter *adapter = client_data;

	mutex_lock(&ndk_adapters_lock);
	xa_erase(&ndk_adapters, adapter->id);
	mutex_unlock(&ndk_adapters_lock);

	dev_info(&ibdev->dev, "ndk: adapter %u removed\n", adapter->id);
	kfree(adapter);
}

static void ndk_ib_rename(struct ib_device *ibdev, void *client_data)
{
	struct ndk_adapter *adapter = client_data;

	mutex_lock(&ndk_adapters_lock);
	strscpy(adapter->name, dev_name(&ibdev->dev), sizeof(adapter->name));
	mutex_unlock(&ndk_adapters_lock);
}

static struct ib_client ndk_ib_client = {
	.name = "ndk",
	.add = ndk_ib_add,
	.remove = ndk_ib_remove,
	.rename = ndk_ib_rename,
};

/**
 * ndk_adapter_count() - number of adapters present right now
 *
 * Context: may sleep.
 * Return: the count; it may change as soon as the call returns.
 */
u32 ndk_adapter_count(void)
{
	struct ndk_adapter *adapter;
	unsigned long index;
	u32 count = 0;

	mutex_lock(&ndk_adapters_lock);
	xa_for_each(&ndk_adapters, index, adapter)
		count++;
	mutex_unlock(&ndk_adapters_lock);
	return count;
}

/**
 * ndk_adapter_query() - describe one adapter for NDK_IOCTL_ADAPTER_QUERY
 * @q: in: @q->adapter_id and @q->flags (validated by the caller);
 *     out: every other field, fully written
 *
 * Context: may sleep.
 * Return: 0, or %-ENOENT when no such adapter exists (with
 * %NDK_U_ADAPTER_QUERY_F_NEXT: no adapter with an id >= @q->adapter_id).
 */
int ndk_adapter_query(struct ndk_u_adapter_query *q)
{
	unsigned long index = q->adapter_id;
	struct ndk_adapter *adapter;
	int ret = 0;

	mutex_lock(&ndk_adapters_lock);
	if (q->flags & NDK_U_ADAPTER_QUERY_F_NEXT)
		adapter = xa_find(&ndk_adapters, &index, U32_MAX, XA_PRESENT);
	else
		adapter = xa_load(&ndk_adapters, index);
	if (!adapter) {
		ret = -ENOENT;
		goto out_unlock;
	}
	q->adapter_id = adapter->id;
	q->node_guid = be64_to_cpu(adapter->ibdev->node_guid);
	q->ib_index = adapter->ibdev->index;
	q->port_count = rdma_end_port(adapter->ibdev) -
			rdma_start_port(adapter->ibdev) + 1;
	memset(q->name, 0, sizeof(q->name));
	strscpy(q->name, adapter->name, sizeof(q->name));
out_unlock:
	mutex_unlock(&ndk_adapters_lock);
	return ret;
}

/**
 * ndk_adapter_init() - register the ib_client
 *
 * ib_register_client() calls ndk_ib_add() for every device already present.
 *
 * Context: process context, module init.
 * Return: 0 or a negative errno from ib_register_client().
 */
int ndk_adapter_init(void)
{
	return ib_register_client(&ndk_ib_client);
}

/**
 * ndk_adapter_exit() - unregister the ib_client
 *
 * ib_unregister_client() calls ndk_ib_remove() for every device, so every
 * adapter is freed when this returns.
 *
 * Context: process context, module exit.
 */
void ndk_adapter_exit(void)
{
	ib_unregister_client(&ndk_ib_client);
	WARN_ON(!xa_empty(&ndk_adapters));
}
