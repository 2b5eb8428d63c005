// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK adapters.
 *
 * An ib_client registered at module load gives one struct ndk_device per
 * ib_device: ndk_ib_add() runs for every RDMA device present or added
 * later, ndk_ib_remove() before a device goes away (rdma link delete,
 * driver unload) or when the client is unregistered at module unload.
 *
 * Consumers open NDK adapters on a device by name.  On removal, every
 * open adapter is marked removed (new objects and posts then fail with
 * STATUS_DEVICE_REMOVED) and its consumer's removal callback runs; remove()
 * then waits until the consumers have closed their adapters, which they
 * can only do after closing every object of the adapter.  ndk.ko's own
 * objects never hold the device: the inline-size probe at add() frees
 * everything it creates before returning.
 *
 * Locking: ndk_devices_lock (mutex) protects the ndk_devices xarray and
 * the name of each device; ndk_device.lock protects its adapter list.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

/* The adapter events' command numbers (the hook that may call up). */
#include <ndk/ndk_netlink.h>

#include "ndk_core.h"
#include "ndk_netlink.h"
#include "ndk_qp.h"
#include "ndk_trace.h"

static DEFINE_MUTEX(ndk_devices_lock);
static DEFINE_XARRAY_ALLOC(ndk_devices);
static u32 ndk_device_next_id;
static struct ib_client ndk_ib_client;

/*
 * Private data limits of rdma_cm connections (REQ minus the rdma_cm IP
 * header; REP and REJ carry none).  iWARP: NDK_IWARP_PRIVATE_DATA
 * (ndk_core.h), the same for all three.
 */
#define NDK_IB_CALLER_DATA	(IB_CM_REQ_PRIVATE_DATA_SIZE - 36)
#define NDK_IB_CALLEE_DATA	min(IB_CM_REP_PRIVATE_DATA_SIZE, \
				    IB_CM_REJ_PRIVATE_DATA_SIZE)
/* FRMRPageCount: NDK wants >= 16; more only while MR counts stay high. */
#define NDK_FRMR_PAGE_COUNT_MIN	16
#define NDK_FRMR_PAGE_COUNT_MAX	512
/*
 * frmr_pages: FRMRPageCount at most this many pages, read at load.
 * Windows and fast-register MRs are that size, so a smaller value buys
 * more of them on a device with few MR entries; below
 * NDK_FRMR_PAGE_COUNT_MIN no device is an adapter (ndk_ib_add()).
 */
static unsigned int ndk_frmr_pages = NDK_FRMR_PAGE_COUNT_MAX;
module_param_named(frmr_pages, ndk_frmr_pages, uint, 0444);
MODULE_PARM_DESC(frmr_pages,
		 "FRMRPageCount at most (default and ceiling 512; below 16 no device is an adapter)");
/* LargeRequestThreshold hint: above it, read/write beats send/receive. */
#define NDK_LARGE_REQUEST_THRESHOLD	(64 * 1024)
/*
 * What one object of a /dev/ndk file may get at most (ndk_user_limits(),
 * Documentation/uapi.md "Resource limits"): at these a QP costs ndk.ko
 * about 2.5 MB and rxe about 5 MB, a CQ about 1 MB each, instead of the
 * gigabytes of rxe's advertised maxima.
 */
#define NDK_USER_QUEUE_DEPTH_MAX	4096
#define NDK_USER_CQ_DEPTH_MAX		16384

/*
 * The device's largest inline data size is not an attribute in ib_core:
 * create a throw-away RC QP asking for decreasing sizes and keep what the
 * driver grants.  Everything is freed before returning.
 */
static u32 ndk_probe_max_inline(struct ib_device *ibdev)
{
	static const u32 sizes[] = { 1024, 512, 256, 128, 64, 32, 0 };
	struct ib_qp_init_attr attr = {};
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 granted = 0;
	int i;

	pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd))
		return 0;
	cq = ib_alloc_cq(ibdev, NULL, 2, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		goto out_dealloc_pd;

	attr.qp_type = IB_QPT_RC;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		attr.cap.max_inline_data = sizes[i];
		qp = ib_create_qp(pd, &attr);
		if (IS_ERR(qp))
			continue;
		granted = max(attr.cap.max_inline_data, sizes[i]);
		ib_destroy_qp(qp);
		break;
	}
	ib_free_cq(cq);
out_dealloc_pd:
	ib_dealloc_pd(pd);
	return granted;
}

static u32 ndk_technology(struct ib_device *ibdev, u32 port)
{
	if (rdma_protocol_iwarp(ibdev, port))
		return NDK_IWARP;
	if (rdma_protocol_roce_udp_encap(ibdev, port))
		return NDK_ROCE_V2;
	if (rdma_protocol_roce(ibdev, port))
		return NDK_ROCE;
	if (rdma_protocol_ib(ibdev, port))
		return NDK_INFINIBAND;
	return NDK_UNDEFINED;
}

/* NDK_ADAPTER_INFO from the device and its first port (ndk-mapping.md). */
static void ndk_fill_info(struct ib_device *ibdev, struct ndk_adapter_info *info)
{
	const struct ib_device_attr *a = &ibdev->attrs;
	u32 port = rdma_start_port(ibdev);
	struct ib_port_attr pattr = {};
	bool iwarp = rdma_protocol_iwarp(ibdev, port);

	memset(info, 0, sizeof(*info));
	info->version.major = NDK_VERSION_MAJOR;
	info->version.minor = NDK_VERSION_MINOR;
	info->vendor_id = a->vendor_id;
	info->device_id = a->vendor_part_id;
	/*
	 * NdkRegisterMr registers with one fast-register MR: any buffer of
	 * (limit - 1) pages fits it whatever its offset in the first page.
	 * On iWARP the registration QP is a loopback connection
	 * (ndk_reg_iw.c); the limit is the same.
	 */
	if (a->max_fast_reg_page_list_len > 1)
		info->max_registration_size =
			min_t(u64, a->max_mr_size,
			      (u64)(a->max_fast_reg_page_list_len - 1) << PAGE_SHIFT);
	info->frmr_page_count = min_t(u32, a->max_fast_reg_page_list_len,
				      min_t(u32, ndk_frmr_pages,
					    NDK_FRMR_PAGE_COUNT_MAX));
	/*
	 * Windows are emulated with one fast-register MR of frmr_page_count
	 * pages each: any window of one page less fits, whatever its offset.
	 * A device below NDK_FRMR_PAGE_COUNT_MIN is no adapter (ndk_ib_add()).
	 */
	if (info->frmr_page_count)
		info->max_window_size =
			(u64)(info->frmr_page_count - 1) << PAGE_SHIFT;
	info->max_initiator_request_sge = a->max_send_sge;
	info->max_receive_request_sge = a->max_recv_sge;
	info->max_read_request_sge = a->max_sge_rd;
	if (!ib_query_port(ibdev, port, &pattr))
		info->max_transfer_length = pattr.max_msg_sz;
	info->max_inline_data_size = ndk_probe_max_inline(ibdev);
	info->max_inbound_read_limit = a->max_qp_rd_atom;
	info->max_outbound_read_limit = a->max_qp_init_rd_atom;
	/* A slot number must fit the wr_id (ndk_qp.h, NDK_QP_DEPTH_MAX). */
	info->max_receive_queue_depth = clamp_t(int, a->max_qp_wr, 0,
						NDK_QP_DEPTH_MAX);
	info->max_initiator_queue_depth = info->max_receive_queue_depth;
	info->max_srq_depth = 0;	/* no SRQ object yet */
	/* A device with no CQ entry beyond the spare one has no CQ depth. */
	if (a->max_cqe > NDK_CQ_SPARE)
		info->max_cq_depth = (a->max_cqe - NDK_CQ_SPARE) /
				     ndk_cq_entries_per_result(ibdev);
	info->large_request_threshold = NDK_LARGE_REQUEST_THRESHOLD;
	info->max_caller_data = iwarp ? NDK_IWARP_PRIVATE_DATA : NDK_IB_CALLER_DATA;
	info->max_callee_data = iwarp ? NDK_IWARP_PRIVATE_DATA : NDK_IB_CALLEE_DATA;
	/*
	 * iWARP read responses are tagged writes into the sink: its buffer
	 * needs NDK_MR_FLAG_RDMA_READ_SINK (ndk_mr_access() adds remote
	 * write), so the flag stays clear there.
	 */
	if (!iwarp)
		info->adapter_flags |= NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
	/*
	 * rdma_cm connects IB/RoCE ports and iWARP devices (TCP over the
	 * host's own address: siw) to their own addresses; the iWARP
	 * registration QP depends on it.
	 */
	info->adapter_flags |= NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
	if (ibdev->ops.modify_cq)
		info->adapter_flags |= NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED;
	if (ibdev->ops.resize_cq)
		info->adapter_flags |= NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED;
	info->rdma_technology = ndk_technology(ibdev, port);
}

/**
 * ndk_user_limits() - clamp adapter limits to what a /dev/ndk file may get
 * @info: the device's limits; clamped in place
 *
 * Queue depths, CQ depth and SGE counts are bounded so that no single
 * create of an unprivileged caller can make ndk.ko or the driver allocate
 * more than a few megabytes (Documentation/uapi.md, "Resource limits").
 * The adapters of /dev/ndk files report and enforce these; netlink
 * reports them too.
 *
 * Context: any.
 */
void ndk_user_limits(struct ndk_adapter_info *info)
{
	info->max_receive_queue_depth = min_t(u32, info->max_receive_queue_depth,
					      NDK_USER_QUEUE_DEPTH_MAX);
	info->max_initiator_queue_depth =
		min_t(u32, info->max_initiator_queue_depth,
		      NDK_USER_QUEUE_DEPTH_MAX);
	info->max_cq_depth = min_t(u32, info->max_cq_depth,
				   NDK_USER_CQ_DEPTH_MAX);
	info->max_initiator_request_sge =
		min_t(u32, info->max_initiator_request_sge, NDK_U_SGE_MAX);
	info->max_receive_request_sge =
		min_t(u32, info->max_receive_request_sge, NDK_U_SGE_MAX);
	info->max_read_request_sge = min_t(u32, info->max_read_request_sge,
					   NDK_U_SGE_MAX);
}

static int ndk_ib_add(struct ib_device *ibdev)
{
	struct ndk_device *dev;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ibdev = ibdev;
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	mutex_init(&dev->lock);
	INIT_LIST_HEAD(&dev->adapters);
	refcount_set(&dev->users, 1);
	init_completion(&dev->idle);
	ndk_fill_info(ibdev, &dev->info);
	/*
	 * NDK_ADAPTER_INFO: a provider supports at least 16 FRMR pages.
	 * Windows and NdkRegisterMr need fast-register MRs, so a device with
	 * fewer (or none) would be an adapter that breaks the contract.
	 */
	if (dev->info.frmr_page_count < NDK_FRMR_PAGE_COUNT_MIN) {
		dev_info(&ibdev->dev,
			 "ndk: not an adapter: %u fast-register pages, NDK needs %u\n",
			 dev->info.frmr_page_count, NDK_FRMR_PAGE_COUNT_MIN);
		ret = -EOPNOTSUPP;
		goto err_free_dev;
	}

	mutex_lock(&ndk_devices_lock);
	ret = xa_alloc_cyclic(&ndk_devices, &dev->id, dev, xa_limit_32b,
			      &ndk_device_next_id, GFP_KERNEL);
	mutex_unlock(&ndk_devices_lock);
	if (ret < 0)
		goto err_free_dev;

	ib_set_client_data(ibdev, &ndk_ib_client, dev);
	dev_info(&ibdev->dev, "ndk: adapter %u added\n", dev->id);
	ndk_nl_adapter_event(dev, NDK_NL_CMD_ADAPTER_ADDED);
	return 0;

err_free_dev:
	kfree(dev);
	return ret;
}

static void ndk_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct ndk_device *dev = client_data;
	struct ndk_adapter *adapter;

	mutex_lock(&ndk_devices_lock);
	xa_erase(&ndk_devices, dev->id);
	mutex_unlock(&ndk_devices_lock);
	trace_ndk_device_remove(dev->id, dev->name, ndk_device_adapters(dev));
	ndk_nl_adapter_event(dev, NDK_NL_CMD_ADAPTER_REMOVED);

	/*
	 * No adapter can open from here on.  Tell every consumer; their
	 * callbacks may close objects (and adapters) right away, so they run
	 * without dev->lock, each adapter pinned by a reference meanwhile.
	 */
	mutex_lock(&dev->lock);
	dev->removed = true;
	list_for_each_entry(adapter, &dev->adapters, dev_entry)
		WRITE_ONCE(adapter->removed, true);
	mutex_unlock(&dev->lock);

	for (;;) {
		struct ndk_adapter *next = NULL;

		mutex_lock(&dev->lock);
		list_for_each_entry(adapter, &dev->adapters, dev_entry) {
			if (adapter->removal) {
				next = adapter;
				ndk_obj_get(&next->obj);
				break;
			}
		}
		if (next) {
			ndk_fn_adapter_removal_callback cb = next->removal;
			bool put;

			next->removal = NULL;	/* exactly once */
			dev->removal_adapter = next;
			dev->removal_task = current;
			mutex_unlock(&dev->lock);
			cb(next->removal_context);
			/*
			 * If the callback closed the adapter, the close took
			 * over our reference and the adapter may be gone.
			 */
			mutex_lock(&dev->lock);
			put = dev->removal_adapter == next;
			dev->removal_adapter = NULL;
			dev->removal_task = NULL;
			mutex_unlock(&dev->lock);
			if (put)
				ndk_obj_put(&next->obj);
			continue;
		}
		mutex_unlock(&dev->lock);
		break;
	}

	/*
	 * The last adapter's destroy completes @idle after its last access
	 * to @dev (a completion may be freed as soon as its waiter wakes).
	 */
	if (!refcount_dec_and_test(&dev->users)) {
		dev_info(&ibdev->dev,
			 "ndk: adapter %u removal waits for its consumers\n",
			 dev->id);
		wait_for_completion(&dev->idle);
	}
	flush_workqueue(ndk_wq);
	dev_info(&ibdev->dev, "ndk: adapter %u removed\n", dev->id);
	kfree(dev);
}

static void ndk_ib_rename(struct ib_device *ibdev, void *client_data)
{
	struct ndk_device *dev = client_data;

	mutex_lock(&ndk_devices_lock);
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	mutex_unlock(&ndk_devices_lock);
}

static struct ib_client ndk_ib_client = {
	.name = "ndk",
	.add = ndk_ib_add,
	.remove = ndk_ib_remove,
	.rename = ndk_ib_rename,
};

/**
 * ndk_enum_adapters() - enumerate the NDK adapters present now
 * @fn:      called with each adapter's name, in id order; a non-zero
 *           return stops the walk and is returned
 * @context: passed to @fn
 *
 * @fn runs under the device table lock: it must not open adapters.
 *
 * Context: process context, may sleep.
 * Return: 0, or the first non-zero return of @fn.
 */
int ndk_enum_adapters(ndk_fn_adapter_enum fn, void *context)
{
	struct ndk_device *dev;
	unsigned long index;
	int ret = 0;

	mutex_lock(&ndk_devices_lock);
	xa_for_each(&ndk_devices, index, dev) {
		ret = fn(dev->name, context);
		if (ret)
			break;
	}
	mutex_unlock(&ndk_devices_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(ndk_enum_adapters);

static void ndk_adapter_destroy(struct ndk_obj *obj)
{
	struct ndk_adapter *adapter = container_of(obj, struct ndk_adapter, obj);
	struct ndk_device *dev = adapter->dev;

	mutex_lock(&dev->lock);
	list_del(&adapter->dev_entry);
	mutex_unlock(&dev->lock);
	/* Past this, @dev may be freed by ndk_ib_remove(). */
	if (refcount_dec_and_test(&dev->users))
		complete(&dev->idle);
	/* ndk_close_adapter() frees the adapter after this. */
	complete(&adapter->closed);
}

/*
 * Open an adapter on the device named @name, or with id @id when @name is
 * NULL; @user: for a /dev/ndk file, in its opener's context.
 */
static s32 ndk_adapter_open(const char *name, u32 id, bool user,
			    ndk_fn_adapter_removal_callback removal,
			    void *removal_context, struct ndk_adapter **adapter)
{
	struct ndk_device *dev, *found = NULL;
	struct ndk_adapter *a;
	unsigned long index;
	s32 status = STATUS_SUCCESS;

	might_sleep();
	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&a->obj, NDK_OBJECT_TYPE_ADAPTER, NULL, ndk_adapter_destroy);
	a->obj.adapter = a;
	a->removal = removal;
	a->removal_context = removal_context;
	a->user = user;
	a->net = user ? get_net(current->nsproxy->net_ns) : &init_net;
	init_completion(&a->closed);

	mutex_lock(&ndk_devices_lock);
	if (name) {
		xa_for_each(&ndk_devices, index, dev) {
			if (strcmp(dev->name, name) == 0) {
				found = dev;
				break;
			}
		}
	} else {
		found = xa_load(&ndk_devices, id);
	}
	/* As ib_uverbs and ucma: a device of another namespace is unknown. */
	if (found && user && !rdma_dev_access_netns(found->ibdev, a->net))
		found = NULL;
	if (!found) {
		status = STATUS_INVALID_PARAMETER;
	} else {
		mutex_lock(&found->lock);
		if (found->removed) {
			status = STATUS_DEVICE_REMOVED;
		} else {
			list_add_tail(&a->dev_entry, &found->adapters);
			refcount_inc(&found->users);
			a->info = found->info;
		}
		mutex_unlock(&found->lock);
	}
	mutex_unlock(&ndk_devices_lock);

	if (status) {
		if (user)
			put_net(a->net);
		kfree(a);
		return status;
	}
	if (user)
		ndk_user_limits(&a->info);
	a->dev = found;
	*adapter = a;
	pr_debug("ndk: adapter %p opened on %s (adapter %u)\n", a, found->name,
		 found->id);
	return STATUS_SUCCESS;
}

/**
 * ndk_open_adapter() - open an NDK adapter on an RDMA device
 * @name:            the ib_device name (e.g. "rxe0")
 * @removal:         called once if the device goes away while open; may
 *                   be NULL
 * @removal_context: passed to @removal
 * @adapter:         receives the adapter
 *
 * Replaces NDIS's OPEN_NDK_ADAPTER_HANDLER.  @removal runs in process
 * context and may close objects and the adapter itself.
 *
 * Context: process context, may sleep.
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER for an unknown device;
 * STATUS_DEVICE_REMOVED when it is going away; STATUS_INSUFFICIENT_RESOURCES.
 */
s32 ndk_open_adapter(const char *name,
		     ndk_fn_adapter_removal_callback removal,
		     void *removal_context, struct ndk_adapter **adapter)
{
	return ndk_adapter_open(name, 0, false, removal, removal_context,
				adapter);
}
EXPORT_SYMBOL_GPL(ndk_open_adapter);

/**
 * ndk_open_adapter_id() - open an NDK adapter for a /dev/ndk file
 * @id:              the id NDK_IOCTL_ADAPTER_QUERY reports
 * @removal:         as for ndk_open_adapter()
 * @removal_context: passed to @removal
 * @adapter:         receives the adapter
 *
 * The adapter belongs to the calling process: its limits are clamped
 * (ndk_user_limits()), its connectors and listeners live in the caller's
 * network namespace, and a device that namespace may not use
 * (rdma_dev_access_netns()) is unknown to it.
 *
 * Context: process context of the opener, may sleep.
 * Return: as ndk_open_adapter(); STATUS_INVALID_PARAMETER for an unknown id
 * or a device of another network namespace.
 */
s32 ndk_open_adapter_id(u32 id, ndk_fn_adapter_removal_callback removal,
			void *removal_context, struct ndk_adapter **adapter)
{
	return ndk_adapter_open(NULL, id, true, removal, removal_context,
				adapter);
}

/**
 * ndk_close_adapter() - close an adapter (blocking, like NDIS's)
 * @adapter: the adapter; the consumer closes its objects first
 *
 * Returns once every object of the adapter is closed and every callback
 * on any of them has returned: the safe point to unload a consumer.
 * Must not be called from an NDK callback other than the removal one;
 * called from the adapter's removal callback, it returns once everything
 * else is closed (the callback itself is still running then).
 *
 * Context: process context, may sleep.
 */
void ndk_close_adapter(struct ndk_adapter *adapter)
{
	struct ndk_device *dev = adapter->dev;
	bool in_removal;

	might_sleep();
	pr_debug("ndk: adapter %p closing (adapter %u)\n", adapter, dev->id);
	/*
	 * From inside its own removal callback: ndk_ib_remove() holds a
	 * reference for the call, which would keep the close below from
	 * ever completing.  Take that reference over and drop it here.  A
	 * close from any other thread waits until the callback returned.
	 */
	mutex_lock(&dev->lock);
	in_removal = dev->removal_adapter == adapter &&
		     dev->removal_task == current;
	if (in_removal)
		dev->removal_adapter = NULL;
	/*
	 * A closing adapter gets no removal callback: ndk_ib_remove() only
	 * picks adapters with one set, and must never take a reference on
	 * one whose last reference may be going (below).  One it picked
	 * already holds its own reference, which the wait below outlasts.
	 */
	adapter->removal = NULL;
	mutex_unlock(&dev->lock);
	if (in_removal)
		ndk_obj_put(&adapter->obj);	/* never the last: ours is held */

	ndk_obj_close(&adapter->obj, NULL, NULL);
	wait_for_completion(&adapter->closed);
	if (adapter->user)
		put_net(adapter->net);
	kfree(adapter);
}
EXPORT_SYMBOL_GPL(ndk_close_adapter);

/**
 * ndk_query_adapter_info() - NdkQueryAdapterInfo
 * @adapter:     the adapter
 * @info:        receives NDK_ADAPTER_INFO
 * @buffer_size: in: bytes at @info; out: bytes written, or needed
 *
 * Context: process context.
 * Return: STATUS_SUCCESS, or STATUS_BUFFER_TOO_SMALL with the needed size
 * in *@buffer_size (nothing written to @info).
 */
s32 ndk_query_adapter_info(struct ndk_adapter *adapter,
			   struct ndk_adapter_info *info, u32 *buffer_size)
{
	if (*buffer_size < sizeof(*info)) {
		*buffer_size = sizeof(*info);
		return STATUS_BUFFER_TOO_SMALL;
	}
	*info = adapter->info;
	*buffer_size = sizeof(*info);
	return STATUS_SUCCESS;
}
EXPORT_SYMBOL_GPL(ndk_query_adapter_info);

/* May @net see @dev?  NULL: a kernel consumer, which sees every device. */
static bool ndk_device_visible(struct ndk_device *dev, struct net *net)
{
	return !net || rdma_dev_access_netns(dev->ibdev, net);
}

/**
 * ndk_adapter_count() - number of adapters present right now
 * @net: count only the devices this network namespace may use
 *       (rdma_dev_access_netns()), or NULL for every device
 *
 * Context: may sleep.
 * Return: the count; it may change as soon as the call returns.
 */
u32 ndk_adapter_count(struct net *net)
{
	struct ndk_device *dev;
	unsigned long index;
	u32 count = 0;

	mutex_lock(&ndk_devices_lock);
	xa_for_each(&ndk_devices, index, dev)
		count += ndk_device_visible(dev, net);
	mutex_unlock(&ndk_devices_lock);
	return count;
}

/**
 * ndk_device_get() - call a function on one device, under the table lock
 * @id:   in: the id to look up (with @next: the lowest id >= it); out: the
 *        id of the device found
 * @name: look the device up by this name instead of @id, or NULL
 * @next: find the first device at or after @id (for dumps)
 * @net:  find only devices this network namespace may use
 *        (rdma_dev_access_netns(): as ib_uverbs, ucma and ib_core's
 *        netlink, a device of another namespace is unknown), or NULL
 * @fn:   called with the device; must not open adapters or sleep long
 * @arg:  passed to @fn
 *
 * Context: process context, may sleep.
 * Return: what @fn returned, or %-ENODEV when there is no such device.
 */
int ndk_device_get(u32 *id, const char *name, bool next, struct net *net,
		   int (*fn)(struct ndk_device *dev, void *arg), void *arg)
{
	struct ndk_device *dev = NULL, *d;
	unsigned long index = *id;
	int ret = -ENODEV;

	mutex_lock(&ndk_devices_lock);
	if (name) {
		xa_for_each(&ndk_devices, index, d) {
			if (strcmp(d->name, name) == 0) {
				dev = d;
				break;
			}
		}
	} else if (next) {
		xa_for_each_start(&ndk_devices, index, d, index) {
			if (ndk_device_visible(d, net)) {
				dev = d;
				break;
			}
		}
	} else {
		dev = xa_load(&ndk_devices, index);
	}
	if (dev && ndk_device_visible(dev, net)) {
		*id = dev->id;
		ret = fn(dev, arg);
	}
	mutex_unlock(&ndk_devices_lock);
	return ret;
}

/**
 * ndk_device_adapters() - adapters open on a device now
 * @dev: the device
 *
 * Read without the device's lock (netlink's ADAPTER_GET asks for every
 * device, and a user may hold any number of adapters): each adapter on
 * the device's list holds one of its users besides the device's own.
 *
 * Context: any.
 * Return: the count, momentarily one more while an adapter goes.
 */
u32 ndk_device_adapters(struct ndk_device *dev)
{
	return refcount_read(&dev->users) - 1;
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
 * device is gone when this returns.  Module references of consumers keep
 * this from running while any adapter is open.
 *
 * Context: process context, module exit.
 */
void ndk_adapter_exit(void)
{
	ib_unregister_client(&ndk_ib_client);
	WARN_ON(!xa_empty(&ndk_devices));
}
