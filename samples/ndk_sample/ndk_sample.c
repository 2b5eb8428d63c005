// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_sample: a minimal kernel consumer of ndk.ko.
 *
 * On load it opens the NDK adapter named by the "adapter" parameter,
 * queries and prints its NDK_ADAPTER_INFO, creates a protection domain
 * through the asynchronous (completion) path, closes it, and closes the
 * adapter.  Loading fails with -ENODEV when any step fails, so
 * `insmod ndk_sample.ko adapter=rxe0` is a quick check that ndk.ko works
 * on a device.  It uses only the public <ndk/ndkpi.h>.
 *
 * The Windows original of each call is named in a comment
 * (Documentation/ndk-mapping.md gives the whole mapping).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/completion.h>
#include <linux/module.h>
#include <ndk/ndkpi.h>

static char *adapter = "rxe0";
module_param(adapter, charp, 0444);
MODULE_PARM_DESC(adapter, "RDMA device to open (default rxe0)");

/*
 * struct ndk_sample_req - one outstanding asynchronous NDK request
 * @done:   completed by the NDK callback
 * @status: the request's NTSTATUS
 * @object: the object of a create completion
 */
struct ndk_sample_req {
	struct completion done;
	s32 status;
	struct ndk_object_header *object;
};

/* NDK_FN_CREATE_COMPLETION; may run in any context: no sleeping. */
static void ndk_sample_created(void *context, s32 status,
			       struct ndk_object_header *object)
{
	struct ndk_sample_req *req = context;

	req->status = status;
	req->object = object;
	complete(&req->done);
}

/* NDK_FN_CLOSE_COMPLETION */
static void ndk_sample_closed(void *context)
{
	struct ndk_sample_req *req = context;

	req->status = STATUS_SUCCESS;
	complete(&req->done);
}

/*
 * NDK_FN_ADAPTER_REMOVAL_CALLBACK (Linux): the device went away while
 * open.  This sample holds the adapter only inside its init function, so
 * it just reports it.
 */
static void ndk_sample_removal(void *context)
{
	pr_info("ndk_sample: %s is being removed\n", (const char *)context);
}

static void ndk_sample_print(const struct ndk_adapter_info *info)
{
	pr_info("ndk_sample: %s: NDK %u.%u vendor %#x device %#x technology %u\n",
		adapter, info->version.major, info->version.minor,
		info->vendor_id, info->device_id, info->rdma_technology);
	pr_info("ndk_sample: %s: max registration %llu, FRMR pages %u, window %llu\n",
		adapter, info->max_registration_size, info->frmr_page_count,
		info->max_window_size);
	pr_info("ndk_sample: %s: SGEs initiator %u receive %u read %u, transfer %u, inline %u\n",
		adapter, info->max_initiator_request_sge,
		info->max_receive_request_sge, info->max_read_request_sge,
		info->max_transfer_length, info->max_inline_data_size);
	pr_info("ndk_sample: %s: queues receive %u initiator %u srq %u cq %u, reads in %u out %u\n",
		adapter, info->max_receive_queue_depth,
		info->max_initiator_queue_depth, info->max_srq_depth,
		info->max_cq_depth, info->max_inbound_read_limit,
		info->max_outbound_read_limit);
	pr_info("ndk_sample: %s: caller data %u, callee data %u, large request %u, flags %#x\n",
		adapter, info->max_caller_data, info->max_callee_data,
		info->large_request_threshold, info->adapter_flags);
}

/* Create a PD with a completion (NDK's way), then close it likewise. */
static s32 ndk_sample_pd(struct ndk_adapter *a)
{
	struct ndk_sample_req req;
	struct ndk_pd *pd;
	s32 status;

	init_completion(&req.done);
	/* pNdkAdapter->Dispatch->NdkCreatePd(pNdkAdapter, cb, ctx, &pPd) */
	status = ndk_create_pd(a, ndk_sample_created, &req, &pd);
	if (status == STATUS_PENDING) {
		/*
		 * PENDING: the completion runs exactly once, later.  @req is
		 * on this stack, so wait for it without a timeout.
		 */
		wait_for_completion(&req.done);
		status = req.status;
		if (NT_SUCCESS(status))
			pd = ndk_to_pd(req.object);
	}
	if (!NT_SUCCESS(status))
		return status;
	pr_info("ndk_sample: %s: PD created\n", adapter);

	init_completion(&req.done);
	/* pPd->Dispatch->NdkClosePd(pPd, cb, ctx) */
	if (ndk_close_pd(pd, ndk_sample_closed, &req) == STATUS_PENDING)
		wait_for_completion(&req.done);
	pr_info("ndk_sample: %s: PD closed\n", adapter);
	return STATUS_SUCCESS;
}

static int __init ndk_sample_init(void)
{
	struct ndk_adapter_info info;
	u32 size = sizeof(info);
	struct ndk_adapter *a;
	s32 status;

	/* NDIS OPEN_NDK_ADAPTER_HANDLER */
	status = ndk_open_adapter(adapter, ndk_sample_removal, adapter, &a);
	if (status != STATUS_SUCCESS) {
		pr_err("ndk_sample: cannot open adapter %s: status %#x\n",
		       adapter, status);
		return -ENODEV;
	}

	/* pNdkAdapter->Dispatch->NdkQueryAdapterInfo(pNdkAdapter, &info, &size) */
	status = ndk_query_adapter_info(a, &info, &size);
	if (status != STATUS_SUCCESS) {
		pr_err("ndk_sample: %s: query adapter info: status %#x\n",
		       adapter, status);
		goto err_close_adapter;
	}
	ndk_sample_print(&info);

	status = ndk_sample_pd(a);
	if (status != STATUS_SUCCESS) {
		pr_err("ndk_sample: %s: PD: status %#x\n", adapter, status);
		goto err_close_adapter;
	}

	/* NDIS CLOSE_NDK_ADAPTER_HANDLER: blocking, every callback returned */
	ndk_close_adapter(a);
	pr_info("ndk_sample: %s: adapter closed, all done\n", adapter);
	return 0;

err_close_adapter:
	ndk_close_adapter(a);
	return -ENODEV;
}

static void __exit ndk_sample_exit(void)
{
	pr_info("ndk_sample: unloaded\n");
}

module_init(ndk_sample_init);
module_exit(ndk_sample_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The ndk-linux authors");
MODULE_DESCRIPTION("Sample NDK consumer: adapter info and a PD");
