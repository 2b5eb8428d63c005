/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * ndk-linux user/kernel ABI for /dev/ndk.
 *
 * This header is the single source of truth shared by ndk.ko and libndk.
 * Rules (Documentation/uapi.md is normative):
 *  - only fixed-width types, members naturally aligned, every hole a named
 *    reserved field, every struct a multiple of 8 bytes;
 *  - reserved fields and unknown flag bits must be zero (else -EINVAL);
 *  - structures only grow at the end: the kernel takes the caller's size
 *    from _IOC_SIZE(cmd), zero-extends shorter input, rejects a longer one
 *    with a non-zero tail (-E2BIG) and zero-fills output it does not know;
 *  - the ABI's own names use the NDK_U_ prefix (NDK_IOCTL_ for commands) so
 *    they never collide with the NDK constants (NDK_MR_FLAG_*, ...) they
 *    carry as values.
 * Only <linux/types.h> and <linux/ioctl.h>; C90 and C++ clean.
 */
#ifndef _UAPI_NDK_NDK_IOCTL_H
#define _UAPI_NDK_NDK_IOCTL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped only for incompatible changes; additions use feature bits. */
#define NDK_U_ABI_VERSION 1

/* Unused in Documentation/userspace-api/ioctl/ioctl-number.rst (6.1). */
#define NDK_IOCTL_MAGIC 0xDE

/* Feature bits reported by NDK_IOCTL_QUERY_INFO. */
#define NDK_U_FEATURE_ADAPTER_QUERY 0x1ULL

#define NDK_U_NAME_MAX 64

/**
 * struct ndk_u_query_info - NDK_IOCTL_QUERY_INFO
 * @flags:        in: must be 0
 * @abi_version:  out: NDK_U_ABI_VERSION of the running module
 * @features:     out: NDK_U_FEATURE_* bits the module supports
 * @adapter_count: out: number of adapters (RDMA devices) right now
 * @reserved:     must be 0 in, 0 out
 */
struct ndk_u_query_info {
	__u32 flags;
	__u32 abi_version;
	__aligned_u64 features;
	__u32 adapter_count;
	__u32 reserved;
};

/* ndk_u_adapter_query.flags */
#define NDK_U_ADAPTER_QUERY_F_NEXT 0x1U
#define NDK_U_ADAPTER_QUERY_FLAGS (NDK_U_ADAPTER_QUERY_F_NEXT)

/**
 * struct ndk_u_adapter_query - NDK_IOCTL_ADAPTER_QUERY
 * @adapter_id: in: adapter to describe; with NDK_U_ADAPTER_QUERY_F_NEXT the
 *              first adapter whose id is >= @adapter_id.  out: its id.
 *              Ids are never reused while the module is loaded, so
 *              enumeration is "start at 0, then last id + 1" until -ENOENT.
 * @flags:      in: NDK_U_ADAPTER_QUERY_F_*
 * @node_guid:  out: the device's node GUID, host byte order
 * @ib_index:   out: the ib_device index (as in `rdma dev`)
 * @port_count: out: number of physical ports
 * @name:       out: NUL-terminated ib_device name (e.g. "rxe0")
 */
struct ndk_u_adapter_query {
	__u32 adapter_id;
	__u32 flags;
	__aligned_u64 node_guid;
	__u32 ib_index;
	__u32 port_count;
	__u8 name[NDK_U_NAME_MAX];
};

#define NDK_IOCTL_QUERY_INFO \
	_IOWR(NDK_IOCTL_MAGIC, 0x00, struct ndk_u_query_info)
#define NDK_IOCTL_ADAPTER_QUERY \
	_IOWR(NDK_IOCTL_MAGIC, 0x01, struct ndk_u_adapter_query)

#endif /* _UAPI_NDK_NDK_IOCTL_H */
