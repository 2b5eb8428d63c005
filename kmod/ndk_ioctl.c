// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the /dev/ndk ioctl dispatcher.
 *
 * All user copying happens here, once: the command's number selects a
 * table entry, the caller's struct size comes from _IOC_SIZE(cmd), the
 * input is copied into a zeroed kernel buffer with copy_struct_from_user()
 * (shorter input is zero-extended, longer input must have a zero tail),
 * the handler works on that kernel buffer only, and the result goes back
 * as min(user size, kernel size) bytes with any extra user bytes zeroed.
 * Handlers therefore never see a user pointer for their own struct, and a
 * newer or older library with a different struct size keeps working.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/nsproxy.h>
#include <linux/stddef.h>
#include <linux/uaccess.h>

#include "ndk_file.h"

/* Largest argument struct of any command; handlers get a buffer this big. */
#define NDK_IOCTL_MAX_SIZE 128

struct ndk_ioctl_desc {
	int (*handler)(struct file *file, void *arg);
	/* Kernel size of the argument, and the oldest size still accepted. */
	u16 size;
	u16 min_size;
};

static int ndk_ioctl_query_info(struct file *file, void *arg)
{
	struct ndk_u_query_info *info = arg;

	if (info->flags || info->reserved)
		return -EINVAL;
	info->abi_version = NDK_U_ABI_VERSION;
	info->features = NDK_U_FEATURE_ADAPTER_QUERY | NDK_U_FEATURE_OBJECTS |
			 NDK_U_FEATURE_VERBS | NDK_U_FEATURE_CACHE |
			 NDK_U_FEATURE_NETLINK | NDK_U_FEATURE_RINGS;
	info->adapter_count = ndk_adapter_count(current->nsproxy->net_ns);
	return 0;
}

/* Describe @dev in @arg (struct ndk_u_adapter_query), every field. */
static int ndk_ioctl_adapter_fill(struct ndk_device *dev, void *arg)
{
	struct ndk_u_adapter_query *q = arg;

	q->adapter_id = dev->id;
	q->node_guid = be64_to_cpu(dev->ibdev->node_guid);
	q->ib_index = dev->ibdev->index;
	q->port_count = rdma_end_port(dev->ibdev) -
			rdma_start_port(dev->ibdev) + 1;
	memset(q->name, 0, sizeof(q->name));
	strscpy(q->name, dev->name, sizeof(q->name));
	return 0;
}

/*
 * NDK_IOCTL_ADAPTER_QUERY: the adapter @adapter_id, or with
 * NDK_U_ADAPTER_QUERY_F_NEXT the first at or after it; %-ENOENT when
 * there is none.
 */
static int ndk_ioctl_adapter_query(struct file *file, void *arg)
{
	struct ndk_u_adapter_query *q = arg;
	u32 id = q->adapter_id;
	int ret;

	if (q->flags & ~NDK_U_ADAPTER_QUERY_FLAGS)
		return -EINVAL;
	ret = ndk_device_get(&id, NULL, q->flags & NDK_U_ADAPTER_QUERY_F_NEXT,
			     current->nsproxy->net_ns, ndk_ioctl_adapter_fill, q);
	return ret == -ENODEV ? -ENOENT : ret;
}

#define NDK_IOCTL_DESC(_cmd, _handler, _type, _min_size)          \
	[_IOC_NR(_cmd)] = { .handler = _handler,                   \
			    .size = sizeof(_type),                  \
			    .min_size = _min_size }

/*
 * The uapi layout, asserted here and on the host by tests/abi, so the
 * kernel and the library can never disagree silently.
 */
static_assert(sizeof(struct ndk_u_query_info) == 24);
static_assert(offsetof(struct ndk_u_query_info, features) == 8);
static_assert(offsetof(struct ndk_u_query_info, adapter_count) == 16);
static_assert(sizeof(struct ndk_u_adapter_query) == 88);
static_assert(offsetof(struct ndk_u_adapter_query, node_guid) == 8);
static_assert(offsetof(struct ndk_u_adapter_query, name) == 24);
static_assert(sizeof(struct ndk_u_adapter_query) <= NDK_IOCTL_MAX_SIZE);
static_assert(sizeof(struct ndk_u_adapter_open) == 16);
static_assert(offsetofend(struct ndk_u_adapter_info, reserved1) == 8 + 0x68);
static_assert(offsetofend(struct ndk_u_adapter_info, reserved1) ==
	      8 + sizeof(struct ndk_adapter_info));
static_assert(sizeof(struct ndk_u_adapter_info) == 8 + 0x68 + 8);
static_assert(offsetof(struct ndk_u_adapter_info, max_registration_size) ==
	      8 + offsetof(struct ndk_adapter_info, max_registration_size));
static_assert(offsetof(struct ndk_u_adapter_info, frmr_page_count) ==
	      8 + offsetof(struct ndk_adapter_info, frmr_page_count));
static_assert(offsetof(struct ndk_u_adapter_info, rdma_technology) ==
	      8 + offsetof(struct ndk_adapter_info, rdma_technology));
static_assert(sizeof(struct ndk_u_adapter_info) <= NDK_IOCTL_MAX_SIZE);
static_assert(sizeof(struct ndk_u_pd_create) == 16);
static_assert(sizeof(struct ndk_u_mem_register) == 64);
static_assert(offsetof(struct ndk_u_mem_register, handle) == 24);
static_assert(offsetof(struct ndk_u_mem_register, base_address) == 40);
static_assert(offsetof(struct ndk_u_mem_register, cache_slot) == 48);
static_assert(offsetof(struct ndk_u_mem_register, cache_generation) == 56);
static_assert(sizeof(struct ndk_u_mem_deregister) == 16);
static_assert(sizeof(struct ndk_u_handle_close) == 8);
static_assert(sizeof(struct ndk_u_cq_create) == 40);
static_assert(sizeof(struct ndk_u_cq_arm) == 8);
static_assert(sizeof(struct ndk_u_result) == 40);
static_assert(sizeof(struct ndk_u_cq_poll) == 16);
static_assert(sizeof(struct ndk_u_qp_create) == 64);
static_assert(sizeof(struct ndk_u_sge) == 16);
static_assert(sizeof(struct ndk_u_qp_post) == 72);
static_assert(sizeof(struct ndk_u_qp_flush) == 8);
static_assert(sizeof(struct ndk_u_mr_create) == 16);
static_assert(sizeof(struct ndk_u_mr_register) == 32);
static_assert(sizeof(struct ndk_u_mr_deregister) == 8);
static_assert(sizeof(struct ndk_u_mr_init_fr) == 16);
static_assert(sizeof(struct ndk_u_mw_create) == 16);
static_assert(sizeof(struct ndk_u_token_query) == 16);
static_assert(sizeof(struct ndk_u_connector_create) == 24);
static_assert(sizeof(struct ndk_u_connect) == 104);
static_assert(sizeof(struct ndk_u_connector_request) == 16);
static_assert(sizeof(struct ndk_u_accept) == 40);
static_assert(sizeof(struct ndk_u_reject) == 16);
static_assert(sizeof(struct ndk_u_connector_query) == 96);
static_assert(sizeof(struct ndk_u_listener_create) == 24);
static_assert(sizeof(struct ndk_u_listen) == 40);
static_assert(sizeof(struct ndk_u_event) == 24);
static_assert(sizeof(struct ndk_u_event_get) == 16);
static_assert(sizeof(struct ndk_u_qp_doorbell) == 24);
static_assert(sizeof(struct ndk_u_cq_ring) == NDK_U_CQ_RING_RESULTS);
static_assert(offsetof(struct ndk_u_qp_post, address) == 56);
static_assert(sizeof(struct ndk_u_connect) <= NDK_IOCTL_MAX_SIZE);

static const struct ndk_ioctl_desc ndk_ioctls[] = {
	NDK_IOCTL_DESC(NDK_IOCTL_QUERY_INFO, ndk_ioctl_query_info,
		       struct ndk_u_query_info,
		       sizeof(struct ndk_u_query_info)),
	NDK_IOCTL_DESC(NDK_IOCTL_ADAPTER_QUERY, ndk_ioctl_adapter_query,
		       struct ndk_u_adapter_query,
		       sizeof(struct ndk_u_adapter_query)),
	NDK_IOCTL_DESC(NDK_IOCTL_ADAPTER_OPEN, ndk_uv_adapter_open,
		       struct ndk_u_adapter_open,
		       sizeof(struct ndk_u_adapter_open)),
	NDK_IOCTL_DESC(NDK_IOCTL_ADAPTER_INFO, ndk_uv_adapter_info,
		       struct ndk_u_adapter_info,
		       offsetofend(struct ndk_u_adapter_info, reserved1)),
	NDK_IOCTL_DESC(NDK_IOCTL_PD_CREATE, ndk_uv_pd_create,
		       struct ndk_u_pd_create,
		       sizeof(struct ndk_u_pd_create)),
	NDK_IOCTL_DESC(NDK_IOCTL_MEM_REGISTER, ndk_uv_mem_register,
		       struct ndk_u_mem_register,
		       offsetofend(struct ndk_u_mem_register, base_address)),
	NDK_IOCTL_DESC(NDK_IOCTL_MEM_DEREGISTER, ndk_uv_mem_deregister,
		       struct ndk_u_mem_deregister,
		       sizeof(struct ndk_u_mem_deregister)),
	NDK_IOCTL_DESC(NDK_IOCTL_HANDLE_CLOSE, ndk_uv_handle_close,
		       struct ndk_u_handle_close,
		       sizeof(struct ndk_u_handle_close)),
	NDK_IOCTL_DESC(NDK_IOCTL_CQ_CREATE, ndk_uv_cq_create,
		       struct ndk_u_cq_create,
		       offsetofend(struct ndk_u_cq_create, context)),
	NDK_IOCTL_DESC(NDK_IOCTL_CQ_ARM, ndk_uv_cq_arm,
		       struct ndk_u_cq_arm,
		       sizeof(struct ndk_u_cq_arm)),
	NDK_IOCTL_DESC(NDK_IOCTL_CQ_POLL, ndk_uv_cq_poll,
		       struct ndk_u_cq_poll,
		       sizeof(struct ndk_u_cq_poll)),
	NDK_IOCTL_DESC(NDK_IOCTL_QP_CREATE, ndk_uv_qp_create,
		       struct ndk_u_qp_create,
		       offsetofend(struct ndk_u_qp_create, context)),
	NDK_IOCTL_DESC(NDK_IOCTL_QP_POST, ndk_uv_qp_post,
		       struct ndk_u_qp_post,
		       sizeof(struct ndk_u_qp_post)),
	NDK_IOCTL_DESC(NDK_IOCTL_QP_FLUSH, ndk_uv_qp_flush,
		       struct ndk_u_qp_flush,
		       sizeof(struct ndk_u_qp_flush)),
	NDK_IOCTL_DESC(NDK_IOCTL_MR_CREATE, ndk_uv_mr_create,
		       struct ndk_u_mr_create,
		       sizeof(struct ndk_u_mr_create)),
	NDK_IOCTL_DESC(NDK_IOCTL_MR_REGISTER, ndk_uv_mr_register,
		       struct ndk_u_mr_register,
		       sizeof(struct ndk_u_mr_register)),
	NDK_IOCTL_DESC(NDK_IOCTL_MR_DEREGISTER, ndk_uv_mr_deregister,
		       struct ndk_u_mr_deregister,
		       sizeof(struct ndk_u_mr_deregister)),
	NDK_IOCTL_DESC(NDK_IOCTL_MR_INIT_FR, ndk_uv_mr_init_fr,
		       struct ndk_u_mr_init_fr,
		       sizeof(struct ndk_u_mr_init_fr)),
	NDK_IOCTL_DESC(NDK_IOCTL_MW_CREATE, ndk_uv_mw_create,
		       struct ndk_u_mw_create,
		       sizeof(struct ndk_u_mw_create)),
	NDK_IOCTL_DESC(NDK_IOCTL_TOKEN_QUERY, ndk_uv_token_query,
		       struct ndk_u_token_query,
		       sizeof(struct ndk_u_token_query)),
	NDK_IOCTL_DESC(NDK_IOCTL_CONNECTOR_CREATE, ndk_uv_connector_create,
		       struct ndk_u_connector_create,
		       sizeof(struct ndk_u_connector_create)),
	NDK_IOCTL_DESC(NDK_IOCTL_CONNECT, ndk_uv_connect,
		       struct ndk_u_connect,
		       sizeof(struct ndk_u_connect)),
	NDK_IOCTL_DESC(NDK_IOCTL_COMPLETE_CONNECT, ndk_uv_complete_connect,
		       struct ndk_u_connector_request,
		       sizeof(struct ndk_u_connector_request)),
	NDK_IOCTL_DESC(NDK_IOCTL_ACCEPT, ndk_uv_accept,
		       struct ndk_u_accept,
		       sizeof(struct ndk_u_accept)),
	NDK_IOCTL_DESC(NDK_IOCTL_REJECT, ndk_uv_reject,
		       struct ndk_u_reject,
		       sizeof(struct ndk_u_reject)),
	NDK_IOCTL_DESC(NDK_IOCTL_DISCONNECT, ndk_uv_disconnect,
		       struct ndk_u_connector_request,
		       sizeof(struct ndk_u_connector_request)),
	NDK_IOCTL_DESC(NDK_IOCTL_CONNECTOR_QUERY, ndk_uv_connector_query,
		       struct ndk_u_connector_query,
		       sizeof(struct ndk_u_connector_query)),
	NDK_IOCTL_DESC(NDK_IOCTL_LISTENER_CREATE, ndk_uv_listener_create,
		       struct ndk_u_listener_create,
		       sizeof(struct ndk_u_listener_create)),
	NDK_IOCTL_DESC(NDK_IOCTL_LISTEN, ndk_uv_listen,
		       struct ndk_u_listen,
		       sizeof(struct ndk_u_listen)),
	NDK_IOCTL_DESC(NDK_IOCTL_EVENT_GET, ndk_uv_event_get,
		       struct ndk_u_event_get,
		       sizeof(struct ndk_u_event_get)),
	NDK_IOCTL_DESC(NDK_IOCTL_QP_DOORBELL, ndk_uv_qp_doorbell,
		       struct ndk_u_qp_doorbell,
		       sizeof(struct ndk_u_qp_doorbell)),
};

/* Write @kbuf back to the caller's struct of @usize, zeros past @size. */
static int ndk_ioctl_put(void __user *uarg, size_t usize, const void *kbuf,
			 size_t size)
{
	if (copy_to_user(uarg, kbuf, min(usize, size)))
		return -EFAULT;
	if (usize > size && clear_user(uarg + size, usize - size))
		return -EFAULT;
	return 0;
}

/**
 * ndk_ioctl() - unlocked_ioctl entry point of /dev/ndk
 * @file: the open /dev/ndk file
 * @cmd:  NDK_IOCTL_* command; only type, number and size are looked at,
 *        the direction must be _IOC_READ | _IOC_WRITE
 * @arg:  user pointer to the command's argument struct
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno: %-ENOTTY for a foreign type byte, an
 * unknown number or a wrong direction; %-EINVAL for a struct smaller than
 * the command's first version or bad contents; %-E2BIG for a larger
 * struct with a non-zero tail; %-EFAULT for an unreadable or unwritable
 * argument (an unwritable one before the command does anything);
 * otherwise what the handler returns.
 */
long ndk_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct ndk_ioctl_desc *desc;
	u8 kbuf[NDK_IOCTL_MAX_SIZE] __aligned(8);
	unsigned int nr = _IOC_NR(cmd);
	size_t usize = _IOC_SIZE(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != NDK_IOCTL_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    nr >= ARRAY_SIZE(ndk_ioctls))
		return -ENOTTY;
	desc = &ndk_ioctls[array_index_nospec(nr, ARRAY_SIZE(ndk_ioctls))];
	if (!desc->handler)
		return -ENOTTY;
	if (usize < desc->min_size)
		return -EINVAL;

	memset(kbuf, 0, desc->size);
	ret = copy_struct_from_user(kbuf, desc->size, uarg, usize);
	if (ret)
		return ret;
	/*
	 * The answer must reach the caller: a command that did its work
	 * and then failed to write its outputs back would lose what it did
	 * (a handle, pinned pages, a posted request) behind -EFAULT.  So
	 * an argument that cannot be written fails before the command (the
	 * tail is zero already: copy_struct_from_user()).  One its caller
	 * unmaps during the command still does: its own race.
	 */
	if (ndk_ioctl_put(uarg, usize, kbuf, desc->size))
		return -EFAULT;

	ret = desc->handler(file, kbuf);
	if (ret)
		return ret;
	return ndk_ioctl_put(uarg, usize, kbuf, desc->size) ? -EFAULT : 0;
}
