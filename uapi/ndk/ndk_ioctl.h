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
/*
 * Per-file object handles: ADAPTER_OPEN, ADAPTER_INFO, PD_CREATE,
 * MEM_REGISTER, MEM_DEREGISTER, HANDLE_CLOSE.
 */
#define NDK_U_FEATURE_OBJECTS 0x2ULL

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

/*
 * Object handles.  Every object created through /dev/ndk gets a __u32
 * handle that is valid only on the open file that created it (another
 * file: -ENOENT), only in the process that opened the file (another
 * process sharing the file: -EPERM), and never 0.  Closing the file
 * releases every object it still holds.
 */

/**
 * struct ndk_u_adapter_open - NDK_IOCTL_ADAPTER_OPEN
 * @adapter_id: in: an adapter id from NDK_IOCTL_ADAPTER_QUERY
 * @flags:      in: must be 0
 * @handle:     out: the adapter's handle on this file
 * @reserved:   must be 0 in, 0 out
 */
struct ndk_u_adapter_open {
	__u32 adapter_id;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};

/**
 * struct ndk_u_adapter_info - NDK_IOCTL_ADAPTER_INFO: NdkQueryAdapterInfo
 * @handle:   in: an adapter handle
 * @flags:    in: must be 0
 * @info_version_major: out: NDK_ADAPTER_INFO.Version.Major
 * @info_version_minor: out: NDK_ADAPTER_INFO.Version.Minor
 * @vendor_id: out: and every following field up to @rdma_technology:
 *            the NDK_ADAPTER_INFO field of the same name
 * @device_id: out
 * @reserved0: must be 0 in, 0 out
 * @max_registration_size: out
 * @max_window_size: out
 * @frmr_page_count: out
 * @max_initiator_request_sge: out
 * @max_receive_request_sge: out
 * @max_read_request_sge: out
 * @max_transfer_length: out
 * @max_inline_data_size: out
 * @max_inbound_read_limit: out
 * @max_outbound_read_limit: out
 * @max_receive_queue_depth: out
 * @max_initiator_queue_depth: out
 * @max_srq_depth: out
 * @max_cq_depth: out
 * @large_request_threshold: out
 * @max_caller_data: out
 * @max_callee_data: out
 * @adapter_flags: out: NDK_ADAPTER_FLAG_*
 * @rdma_technology: out: NDK_RDMA_TECHNOLOGY value
 * @reserved1: must be 0 in, 0 out
 *
 * Bytes 8 to 0x70 have the x64 layout of NDK_ADAPTER_INFO (0x68 bytes).
 */
struct ndk_u_adapter_info {
	__u32 handle;
	__u32 flags;
	__u16 info_version_major;
	__u16 info_version_minor;
	__u32 vendor_id;
	__u32 device_id;
	__u32 reserved0;
	__aligned_u64 max_registration_size;
	__aligned_u64 max_window_size;
	__u32 frmr_page_count;
	__u32 max_initiator_request_sge;
	__u32 max_receive_request_sge;
	__u32 max_read_request_sge;
	__u32 max_transfer_length;
	__u32 max_inline_data_size;
	__u32 max_inbound_read_limit;
	__u32 max_outbound_read_limit;
	__u32 max_receive_queue_depth;
	__u32 max_initiator_queue_depth;
	__u32 max_srq_depth;
	__u32 max_cq_depth;
	__u32 large_request_threshold;
	__u32 max_caller_data;
	__u32 max_callee_data;
	__u32 adapter_flags;
	__u32 rdma_technology;
	__u32 reserved1;
};

/**
 * struct ndk_u_pd_create - NDK_IOCTL_PD_CREATE: NdkCreatePd
 * @adapter_handle: in: an adapter handle
 * @flags:          in: must be 0
 * @handle:         out: the PD's handle
 * @reserved:       must be 0 in, 0 out
 */
struct ndk_u_pd_create {
	__u32 adapter_handle;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};

/* ndk_u_mem_register.flags: WSPRegisterMemory's dwFlags (ws2san.h). */
#define NDK_U_MEM_READ 0x1U
#define NDK_U_MEM_WRITE 0x2U
#define NDK_U_MEM_READWRITE (NDK_U_MEM_READ | NDK_U_MEM_WRITE)

/**
 * struct ndk_u_mem_register - NDK_IOCTL_MEM_REGISTER: WSPRegisterMemory
 * @pd_handle:    in: a PD handle
 * @flags:        in: NDK_U_MEM_READ, NDK_U_MEM_WRITE or NDK_U_MEM_READWRITE
 * @address:      in: user address of the buffer
 * @length:       in: bytes, > 0, at most the adapter's MaxRegistrationSize
 * @handle:       out: the registration's handle; the same handle for the
 *                same (@address, @length, @flags) on the same PD
 * @local_token:  out: NdkGetLocalTokenFromMr
 * @remote_token: out: NdkGetRemoteTokenFromMr (no remote rights granted)
 * @references:   out: registrations this handle now counts
 * @base_address: out: the region's base address (== @address)
 */
struct ndk_u_mem_register {
	__u32 pd_handle;
	__u32 flags;
	__aligned_u64 address;
	__aligned_u64 length;
	__u32 handle;
	__u32 local_token;
	__u32 remote_token;
	__u32 references;
	__aligned_u64 base_address;
};

/**
 * struct ndk_u_mem_deregister - NDK_IOCTL_MEM_DEREGISTER: WSPDeregisterMemory
 * @handle:     in: a registration handle
 * @flags:      in: must be 0
 * @references: out: registrations left; 0: the handle is gone, its pages
 *              unpinned and uncharged
 * @reserved:   must be 0 in, 0 out
 */
struct ndk_u_mem_deregister {
	__u32 handle;
	__u32 flags;
	__u32 references;
	__u32 reserved;
};

/**
 * struct ndk_u_handle_close - NDK_IOCTL_HANDLE_CLOSE
 * @handle: in: any handle of this file; refused (-EBUSY) while objects
 *          created from it are open; a registration goes whatever its
 *          reference count
 * @flags:  in: must be 0
 */
struct ndk_u_handle_close {
	__u32 handle;
	__u32 flags;
};

#define NDK_IOCTL_QUERY_INFO \
	_IOWR(NDK_IOCTL_MAGIC, 0x00, struct ndk_u_query_info)
#define NDK_IOCTL_ADAPTER_QUERY \
	_IOWR(NDK_IOCTL_MAGIC, 0x01, struct ndk_u_adapter_query)
#define NDK_IOCTL_ADAPTER_OPEN \
	_IOWR(NDK_IOCTL_MAGIC, 0x02, struct ndk_u_adapter_open)
#define NDK_IOCTL_ADAPTER_INFO \
	_IOWR(NDK_IOCTL_MAGIC, 0x03, struct ndk_u_adapter_info)
#define NDK_IOCTL_PD_CREATE \
	_IOWR(NDK_IOCTL_MAGIC, 0x04, struct ndk_u_pd_create)
#define NDK_IOCTL_MEM_REGISTER \
	_IOWR(NDK_IOCTL_MAGIC, 0x05, struct ndk_u_mem_register)
#define NDK_IOCTL_MEM_DEREGISTER \
	_IOWR(NDK_IOCTL_MAGIC, 0x06, struct ndk_u_mem_deregister)
#define NDK_IOCTL_HANDLE_CLOSE \
	_IOWR(NDK_IOCTL_MAGIC, 0x07, struct ndk_u_handle_close)

#endif /* _UAPI_NDK_NDK_IOCTL_H */
