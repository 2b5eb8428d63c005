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
/*
 * NDK objects and data transfer: CQ, QP, MR, MW, connector and listener
 * commands (0x08-0x1E), the event queue read by EVENT_GET and poll().
 */
#define NDK_U_FEATURE_VERBS 0x4ULL
/*
 * Registration cache support: MEM_REGISTER reports a cache slot whose
 * generation, in the page mmap()ed from /dev/ndk, changes when the
 * registered range is unmapped or remapped (Documentation/uapi.md).
 */
#define NDK_U_FEATURE_CACHE 0x8ULL
/*
 * Observability: the generic netlink family "ndk" (<ndk/ndk_netlink.h>)
 * and the self-reported cache counters page mmap()ed at
 * NDK_U_MMAP_CACHE_COUNTERS (Documentation/netlink.md).
 */
#define NDK_U_FEATURE_NETLINK 0x10ULL
/*
 * Shared rings (Documentation/uapi.md, "Rings"): CQ_CREATE and QP_CREATE
 * take NDK_U_CQ_CREATE_F_RING / NDK_U_QP_CREATE_F_RING and return a ring
 * to mmap(); QP_DOORBELL posts the descriptors of a QP's ring.
 */
#define NDK_U_FEATURE_RINGS 0x20ULL

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
 * @max_user_registration_size: 0 in; out: the longest registration of user
 *            memory (MEM_REGISTER, MR_REGISTER) the adapter takes: its
 *            max_mr_size when its driver registers user memory itself,
 *            else @max_registration_size, which is what a kernel consumer
 *            can always register (Documentation/registration.md).  A
 *            read-only registration of a shared mapping is pinned by
 *            ndk.ko and limited to @max_registration_size.  Absent from
 *            callers built before it (the command takes the shorter size).
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
	__aligned_u64 max_user_registration_size;
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

/* ndk_u_mem_register.cache_slot when the registration has no slot. */
#define NDK_U_CACHE_SLOT_NONE 0xffffffffU
/*
 * The generation page(s): mmap(NULL, NDK_U_CACHE_SLOTS * 8, PROT_READ,
 * MAP_SHARED, fd, NDK_U_MMAP_CACHE) gives an array of NDK_U_CACHE_SLOTS
 * __u64 generations, one per slot, each written by the kernel only.
 * A slot's generation changes (it only grows) when its registration's
 * range is unmapped, remapped or freed back to the system (an MMU
 * notifier), and when the registration goes.  A cached registration is
 * valid while its slot still holds the generation MEM_REGISTER returned.
 */
#define NDK_U_CACHE_SLOTS 4096U
#define NDK_U_MMAP_CACHE 0ULL

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
 * @cache_slot:   out: the registration's slot in the generation page, or
 *                NDK_U_CACHE_SLOT_NONE (all slots in use)
 * @reserved:     must be 0 in, 0 out
 * @cache_generation: out: the slot's generation now; it differs as soon as
 *                the range is unmapped or remapped, or the handle goes
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
	__u32 cache_slot;
	__u32 reserved;
	__aligned_u64 cache_generation;
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

/* ---- NDK objects and data transfer (NDK_U_FEATURE_VERBS) --------------- */

/*
 * Every object takes a __u64 @context of the caller's choosing, returned
 * in the events the object raises.  Requests that complete later (connect,
 * accept, disconnect) take a @request_context returned in their event.
 * Values of NDK constants (NDK_MR_FLAG_*, NDK_OP_FLAG_*, NDK_CQ_NOTIFY_*,
 * NDK_OPERATION_TYPE_*, STATUS_*) are carried unchanged: see ndkpi.h.
 */

/*
 * The NDK values the commands carry, under ABI names: the one source of
 * their numbers (Windows' ndkpi.h / ndkinfo.h / ntstatus.h).  The kernel
 * header ndkpi.h defines NDK_MR_FLAG_*, NDK_OP_FLAG_*, NDK_CQ_NOTIFY_*,
 * NDK_OPERATION_TYPE_*, NDK_ADAPTER_FLAG_* and STATUS_* from these, and
 * libndk's ndk/constants.hpp and ndk/status.hpp likewise.
 */
/* ndk_u_mr_register.flags: NDK_MR_FLAG_* */
#define NDK_U_MR_FLAG_ALLOW_LOCAL_READ 0x0U
#define NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE 0x1U
#define NDK_U_MR_FLAG_ALLOW_REMOTE_READ 0x2U
#define NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE 0x5U	/* includes local write */
#define NDK_U_MR_FLAG_RDMA_READ_SINK 0x8U
/* ndk_u_qp_post.flags: NDK_OP_FLAG_* */
#define NDK_U_OP_FLAG_SILENT_SUCCESS 0x1U
#define NDK_U_OP_FLAG_READ_FENCE 0x2U
#define NDK_U_OP_FLAG_SEND_AND_SOLICIT_EVENT 0x4U
#define NDK_U_OP_FLAG_ALLOW_REMOTE_READ 0x8U
#define NDK_U_OP_FLAG_ALLOW_LOCAL_WRITE 0x10U
#define NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE 0x30U	/* includes local write */
#define NDK_U_OP_FLAG_INLINE 0x40U
#define NDK_U_OP_FLAG_RDMA_READ_SINK 0x80U
#define NDK_U_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE 0x100U
#define NDK_U_OP_FLAG_DEFER 0x200U
/* ndk_u_cq_arm.type: NDK_CQ_NOTIFY_* */
#define NDK_U_CQ_NOTIFY_ERRORS 0U
#define NDK_U_CQ_NOTIFY_ANY 1U
#define NDK_U_CQ_NOTIFY_SOLICITED 2U
/* ndk_u_result.type: NDK_OPERATION_TYPE_* */
#define NDK_U_OPERATION_RECEIVE 0x0001U
#define NDK_U_OPERATION_RECEIVE_AND_INVALIDATE 0x8001U
#define NDK_U_OPERATION_SEND 0x0002U
#define NDK_U_OPERATION_FAST_REGISTER 0x0004U
#define NDK_U_OPERATION_BIND 0x0008U
#define NDK_U_OPERATION_INVALIDATE 0x0010U
#define NDK_U_OPERATION_READ 0x0020U
#define NDK_U_OPERATION_WRITE 0x0040U
/* ndk_u_adapter_info.adapter_flags: NDK_ADAPTER_FLAG_* */
#define NDK_U_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED 0x00000001U
#define NDK_U_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED 0x00000002U
#define NDK_U_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED 0x00000004U
#define NDK_U_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED 0x00000008U
#define NDK_U_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED 0x00000010U
#define NDK_U_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED 0x00000100U
#define NDK_U_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED 0x00010000U
/* ndk_u_result.status and friends: NTSTATUS (as __u32; negative = error) */
#define NDK_U_STATUS_SUCCESS 0x00000000U
#define NDK_U_STATUS_PENDING 0x00000103U
#define NDK_U_STATUS_BUFFER_OVERFLOW 0x80000005U
#define NDK_U_STATUS_DEVICE_BUSY 0x80000011U
#define NDK_U_STATUS_UNSUCCESSFUL 0xC0000001U
#define NDK_U_STATUS_ACCESS_VIOLATION 0xC0000005U
#define NDK_U_STATUS_INVALID_HANDLE 0xC0000008U
#define NDK_U_STATUS_INVALID_PARAMETER 0xC000000DU
#define NDK_U_STATUS_INVALID_DEVICE_REQUEST 0xC0000010U
#define NDK_U_STATUS_ACCESS_DENIED 0xC0000022U
#define NDK_U_STATUS_BUFFER_TOO_SMALL 0xC0000023U
#define NDK_U_STATUS_INVALID_PARAMETER_MIX 0xC0000030U
#define NDK_U_STATUS_DATA_OVERRUN 0xC000003CU
#define NDK_U_STATUS_DATA_ERROR 0xC000003EU
#define NDK_U_STATUS_SHARING_VIOLATION 0xC0000043U
#define NDK_U_STATUS_INSUFFICIENT_RESOURCES 0xC000009AU
#define NDK_U_STATUS_IO_TIMEOUT 0xC00000B5U
#define NDK_U_STATUS_NOT_SUPPORTED 0xC00000BBU
#define NDK_U_STATUS_INTERNAL_ERROR 0xC00000E5U
#define NDK_U_STATUS_CANCELLED 0xC0000120U
#define NDK_U_STATUS_REMOTE_RESOURCES 0xC000013DU
#define NDK_U_STATUS_INVALID_CONNECTION 0xC0000140U
#define NDK_U_STATUS_INVALID_ADDRESS 0xC0000141U
#define NDK_U_STATUS_INVALID_DEVICE_STATE 0xC0000184U
#define NDK_U_STATUS_TOO_MANY_ADDRESSES 0xC0000209U
#define NDK_U_STATUS_ADDRESS_ALREADY_EXISTS 0xC000020AU
#define NDK_U_STATUS_CONNECTION_RESET 0xC000020DU
#define NDK_U_STATUS_CONNECTION_REFUSED 0xC0000236U
#define NDK_U_STATUS_CONNECTION_INVALID 0xC000023AU
#define NDK_U_STATUS_NETWORK_UNREACHABLE 0xC000023CU
#define NDK_U_STATUS_HOST_UNREACHABLE 0xC000023DU
#define NDK_U_STATUS_CONNECTION_ABORTED 0xC0000241U
#define NDK_U_STATUS_DEVICE_REMOVED 0xC00002B6U
#define NDK_U_STATUS_IMPLEMENTATION_LIMIT 0xC000042BU

/*
 * Rings.  A ring is mapped with mmap(NULL, ring_size, PROT_READ |
 * PROT_WRITE, MAP_SHARED, fd, ring_offset) by the process that opened the
 * file; ring_offset is (__u64)handle << NDK_U_MMAP_RING_SHIFT.  The
 * kernel trusts nothing it reads there: a ring written wrongly only loses
 * its own results or posts.
 */
#define NDK_U_MMAP_RING_SHIFT 32

/* ndk_u_cq_create.flags: results are written to a completion ring */
#define NDK_U_CQ_CREATE_F_RING 0x1U

/**
 * struct ndk_u_cq_ring - head of a CQ's completion ring
 * @head:      written by user space: the results taken so far (the index
 *             of the next one to read), modulo 2^32
 * @reserved0: zero
 * @tail:      written by the kernel: the results written so far
 * @reserved1: zero
 *
 * ring_entries (a power of two, at least the CQ's depth) struct
 * ndk_u_result follow at NDK_U_CQ_RING_RESULTS; result i is at index
 * i % ring_entries.  The kernel writes a result, then publishes @tail
 * (release); the reader loads @tail (acquire), reads the results before
 * it, then stores @head (release).  A @head that is not between the last
 * one the kernel took and @tail is ignored; results that find no room
 * wait in the kernel, and a CQ that cannot keep them fails with
 * STATUS_BUFFER_OVERFLOW (an NDK_U_EVENT_CQ event), as without a ring.
 */
struct ndk_u_cq_ring {
	__u32 head;
	__u32 reserved0[15];
	__u32 tail;
	__u32 reserved1[15];
};

#define NDK_U_CQ_RING_RESULTS 128U

/**
 * struct ndk_u_cq_create - NDK_IOCTL_CQ_CREATE: NdkCreateCq
 * @adapter_handle: in: an adapter handle
 * @depth:   in: completions the CQ holds, 1..MaxCqDepth
 * @flags:   in: 0 or NDK_U_CQ_CREATE_F_RING
 * @handle:  out: the CQ's handle
 * @context: in: returned in the CQ's NDK_U_EVENT_CQ events
 * @ring_offset: out: F_RING: the mmap() offset of the completion ring
 * @ring_size: out: F_RING: its bytes (a multiple of the page size)
 * @ring_entries: out: F_RING: results it holds (a power of two)
 */
struct ndk_u_cq_create {
	__u32 adapter_handle;
	__u32 depth;
	__u32 flags;
	__u32 handle;
	__aligned_u64 context;
	__aligned_u64 ring_offset;
	__u32 ring_size;
	__u32 ring_entries;
};

/**
 * struct ndk_u_cq_arm - NDK_IOCTL_CQ_ARM: NdkArmCq
 * @handle: in: a CQ handle
 * @type:   in: NDK_CQ_NOTIFY_ERRORS (0), _ANY (1) or _SOLICITED (2); the
 *          notification arrives once as an NDK_U_EVENT_CQ event
 */
struct ndk_u_cq_arm {
	__u32 handle;
	__u32 type;
};

/**
 * struct ndk_u_result - one completion: NDK_RESULT_EX
 * @request_context:  the posting request's @request_context
 * @qp_context:       the QP's @context
 * @status:           NTSTATUS of the request
 * @bytes_transferred: receives: bytes received; 0 for other requests (the
 *                    NDK_RESULT rule)
 * @type:             NDK_OPERATION_TYPE_*
 * @provider_error_code: the device's vendor error of a failed request
 *                    (ib_wc.vendor_err; 0 on rxe)
 * @type_specific:    NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE: the token
 *                    the peer invalidated; 0 otherwise
 */
struct ndk_u_result {
	__aligned_u64 request_context;
	__aligned_u64 qp_context;
	__s32 status;
	__u32 bytes_transferred;
	__u32 type;
	__u32 provider_error_code;
	__aligned_u64 type_specific;
};

/**
 * struct ndk_u_cq_poll - NDK_IOCTL_CQ_POLL: NdkGetCqResultsEx
 * @handle:  in: a CQ handle
 * @count:   in: room in @results (1..NDK_U_CQ_POLL_MAX); out: results
 *           written, 0 when the CQ is empty
 * @results: in: user address of @count struct ndk_u_result
 */
#define NDK_U_CQ_POLL_MAX 256U
struct ndk_u_cq_poll {
	__u32 handle;
	__u32 count;
	__aligned_u64 results;
};

/**
 * struct ndk_u_qp_create - NDK_IOCTL_QP_CREATE: NdkCreateQp
 * @pd_handle:        in: a PD handle
 * @receive_cq_handle: in: CQ of the receive queue
 * @initiator_cq_handle: in: CQ of the initiator queue (may be the same)
 * @flags:            in: 0 or NDK_U_QP_CREATE_F_RING
 * @receive_queue_depth: in: 0..MaxReceiveQueueDepth (0 holds one request)
 * @initiator_queue_depth: in: 0..MaxInitiatorQueueDepth (0 holds one)
 * @max_receive_request_sge: in: 0..MaxReceiveRequestSge (0: receives
 *                 without SGEs only)
 * @max_initiator_request_sge: in: 0..MaxInitiatorRequestSge (0: requests
 *                 without SGEs only)
 * @inline_data_size: in: at most MaxInlineDataSize
 * @handle:           out: the QP's handle
 * @context:          in: returned as @qp_context in its results
 * @ring_offset:      out: F_RING: the mmap() offset of the submission ring
 * @ring_size:        out: F_RING: its bytes (a multiple of the page size)
 * @ring_entries:     out: F_RING: descriptors it holds (a power of two, at
 *                    least the two queue depths together)
 */
/* ndk_u_qp_create.flags: posts may go through a submission ring */
#define NDK_U_QP_CREATE_F_RING 0x1U
struct ndk_u_qp_create {
	__u32 pd_handle;
	__u32 receive_cq_handle;
	__u32 initiator_cq_handle;
	__u32 flags;
	__u32 receive_queue_depth;
	__u32 initiator_queue_depth;
	__u32 max_receive_request_sge;
	__u32 max_initiator_request_sge;
	__u32 inline_data_size;
	__u32 handle;
	__aligned_u64 context;
	__aligned_u64 ring_offset;
	__u32 ring_size;
	__u32 ring_entries;
};

/**
 * struct ndk_u_sge - NDK_SGE of a user request
 * @address: user address of the first byte, inside a registration of the
 *           QP's PD on this file
 * @length:  bytes
 * @token:   that registration's local token (MEM_REGISTER, MR_REGISTER,
 *           or a fast-registered MR's)
 */
struct ndk_u_sge {
	__aligned_u64 address;
	__u32 length;
	__u32 token;
};

/* ndk_u_qp_post.op */
#define NDK_U_OP_SEND 1U		/* NdkSend */
#define NDK_U_OP_SEND_INVALIDATE 2U	/* NdkSendAndInvalidate */
#define NDK_U_OP_RECEIVE 3U		/* NdkReceive */
#define NDK_U_OP_READ 4U		/* NdkRead */
#define NDK_U_OP_WRITE 5U		/* NdkWrite */
#define NDK_U_OP_FAST_REGISTER 6U	/* NdkFastRegister */
#define NDK_U_OP_BIND 7U		/* NdkBind */
#define NDK_U_OP_INVALIDATE 8U		/* NdkInvalidate */

/* Most SGEs one request may carry. */
#define NDK_U_SGE_MAX 32U

/**
 * struct ndk_u_qp_post - NDK_IOCTL_QP_POST: one work request
 * @qp_handle:   in: a QP handle
 * @op:          in: NDK_U_OP_*
 * @flags:       in: NDK_OP_FLAG_* the NDK function takes for @op
 * @nsge:        in: SEND*, RECEIVE, READ, WRITE: entries at @sgl
 *               (0..NDK_U_SGE_MAX); else 0
 * @request_context: in: returned in the request's result
 * @sgl:         in: user address of @nsge struct ndk_u_sge
 * @remote_address: in: READ, WRITE: the peer's address; FAST_REGISTER:
 *               BaseVirtualAddress, the address the peer will use
 * @remote_token: in: READ, WRITE: the peer's token; SEND_INVALIDATE: the
 *               peer's token to invalidate
 * @object_handle: in: FAST_REGISTER: a fast-register MR; BIND: an MW;
 *               INVALIDATE: an MR or MW
 * @mr_handle:   in: FAST_REGISTER, BIND: the registration (MEM_REGISTER or
 *               MR_REGISTER) whose pages are mapped
 * @token:       out: FAST_REGISTER: the MR's new remote token (its local
 *               token is the same); BIND: the MW's new remote token
 * @address:     in: FAST_REGISTER, BIND: first byte, user address inside
 *               the @mr_handle registration
 * @length:      in: FAST_REGISTER, BIND: bytes, > 0, inside it
 */
struct ndk_u_qp_post {
	__u32 qp_handle;
	__u32 op;
	__u32 flags;
	__u32 nsge;
	__aligned_u64 request_context;
	__aligned_u64 sgl;
	__aligned_u64 remote_address;
	__u32 remote_token;
	__u32 object_handle;
	__u32 mr_handle;
	__u32 token;
	__aligned_u64 address;
	__aligned_u64 length;
};

/**
 * struct ndk_u_qp_doorbell - NDK_IOCTL_QP_DOORBELL: post from the ring
 * @handle:   in: a QP handle created with NDK_U_QP_CREATE_F_RING
 * @flags:    in: must be 0
 * @head:     in: index of the first descriptor (modulo ring_entries)
 * @count:    in: descriptors to post, 1..ring_entries; out: descriptors
 *            posted, in order, before the first that failed
 * @error:    in: 0; out: 0 when all were posted, else the positive errno
 *            QP_POST returns for descriptor @head + @count (the ones
 *            after it are not looked at)
 * @reserved: must be 0
 *
 * The submission ring holds struct ndk_u_qp_post descriptors.  Each is
 * copied once and then checked and posted exactly as QP_POST would (its
 * @qp_handle must be @handle, its @token 0); FAST_REGISTER and BIND write
 * the new token into the descriptor's @token in the ring.
 */
struct ndk_u_qp_doorbell {
	__u32 handle;
	__u32 flags;
	__u32 head;
	__u32 count;
	__u32 error;
	__u32 reserved;
};

/**
 * struct ndk_u_qp_flush - NDK_IOCTL_QP_FLUSH: NdkFlush
 * @handle: in: a QP handle
 * @flags:  in: must be 0
 */
struct ndk_u_qp_flush {
	__u32 handle;
	__u32 flags;
};

/* ndk_u_mr_create.flags */
#define NDK_U_MR_CREATE_F_FAST_REGISTER 0x1U

/**
 * struct ndk_u_mr_create - NDK_IOCTL_MR_CREATE: NdkCreateMr
 * @pd_handle: in: a PD handle
 * @flags:     in: NDK_U_MR_CREATE_F_FAST_REGISTER for a fast-register MR
 * @handle:    out: the MR's handle
 * @reserved:  must be 0 in, 0 out
 */
struct ndk_u_mr_create {
	__u32 pd_handle;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};

/**
 * struct ndk_u_mr_register - NDK_IOCTL_MR_REGISTER: NdkRegisterMr over
 * pinned user memory
 * @handle:       in: an MR handle (not fast-register, not registered)
 * @flags:        in: NDK_MR_FLAG_* (ALLOW_LOCAL_WRITE 0x1, ALLOW_REMOTE_READ
 *                0x2, ALLOW_REMOTE_WRITE 0x5, RDMA_READ_SINK 0x8)
 * @address:      in: user address of the first byte
 * @length:       in: bytes, 1..MaxRegistrationSize
 * @local_token:  out: NdkGetLocalTokenFromMr
 * @remote_token: out: NdkGetRemoteTokenFromMr
 */
struct ndk_u_mr_register {
	__u32 handle;
	__u32 flags;
	__aligned_u64 address;
	__aligned_u64 length;
	__u32 local_token;
	__u32 remote_token;
};

/**
 * struct ndk_u_mr_deregister - NDK_IOCTL_MR_DEREGISTER: NdkDeregisterMr
 * @handle: in: a registered MR handle
 * @flags:  in: must be 0
 */
struct ndk_u_mr_deregister {
	__u32 handle;
	__u32 flags;
};

/* ndk_u_mr_init_fr.flags */
#define NDK_U_MR_INIT_FR_F_REMOTE_ACCESS 0x1U

/**
 * struct ndk_u_mr_init_fr - NDK_IOCTL_MR_INIT_FR: NdkInitializeFastRegisterMr
 * @handle:             in: a fast-register MR handle
 * @adapter_page_count: in: 1..FRMRPageCount
 * @flags:              in: NDK_U_MR_INIT_FR_F_REMOTE_ACCESS
 * @reserved:           must be 0 in, 0 out
 */
struct ndk_u_mr_init_fr {
	__u32 handle;
	__u32 adapter_page_count;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct ndk_u_mw_create - NDK_IOCTL_MW_CREATE: NdkCreateMw
 * @pd_handle: in: a PD handle
 * @flags:     in: must be 0
 * @handle:    out: the MW's handle
 * @reserved:  must be 0 in, 0 out
 */
struct ndk_u_mw_create {
	__u32 pd_handle;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};

/**
 * struct ndk_u_token_query - NDK_IOCTL_TOKEN_QUERY: NdkGet*TokenFrom*
 * @handle:       in: an MR, MW or MEM_REGISTER handle
 * @flags:        in: must be 0
 * @local_token:  out: MR and registration: the local token; MW: 0
 * @remote_token: out: the remote token
 */
struct ndk_u_token_query {
	__u32 handle;
	__u32 flags;
	__u32 local_token;
	__u32 remote_token;
};

/*
 * A socket address: struct sockaddr_in or sockaddr_in6, zero-padded;
 * family AF_UNSPEC (all zero) where an address is optional.
 */
#define NDK_U_SOCKADDR_SIZE 32

/**
 * struct ndk_u_connector_create - NDK_IOCTL_CONNECTOR_CREATE
 * @adapter_handle: in: an adapter handle
 * @flags:          in: must be 0
 * @handle:         out: the connector's handle
 * @reserved:       must be 0 in, 0 out
 * @context:        in: returned in the connector's NDK_U_EVENT_DISCONNECTED
 */
struct ndk_u_connector_create {
	__u32 adapter_handle;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
	__aligned_u64 context;
};

/**
 * struct ndk_u_connect - NDK_IOCTL_CONNECT: NdkConnect; completes with an
 * NDK_U_EVENT_REQUEST event (@object NDK_U_REQ_CONNECT)
 * @connector_handle: in: a connector handle
 * @qp_handle:        in: the QP to connect
 * @flags:            in: must be 0
 * @private_data_length: in: bytes at @private_data, at most MaxCallerData
 * @inbound_read_limit: in: IRD
 * @outbound_read_limit: in: ORD
 * @request_context:  in: returned in the completion event
 * @private_data:     in: user address of the private data
 * @src_address:      in: local address, or AF_UNSPEC
 * @dest_address:     in: the listener's address
 */
struct ndk_u_connect {
	__u32 connector_handle;
	__u32 qp_handle;
	__u32 flags;
	__u32 private_data_length;
	__u32 inbound_read_limit;
	__u32 outbound_read_limit;
	__aligned_u64 request_context;
	__aligned_u64 private_data;
	__u8 src_address[NDK_U_SOCKADDR_SIZE];
	__u8 dest_address[NDK_U_SOCKADDR_SIZE];
};

/**
 * struct ndk_u_connector_request - COMPLETE_CONNECT (NdkCompleteConnect) and
 * DISCONNECT (NdkDisconnect); each completes with an NDK_U_EVENT_REQUEST
 * @connector_handle: in: a connector handle
 * @flags:            in: must be 0
 * @request_context:  in: returned in the completion event
 */
struct ndk_u_connector_request {
	__u32 connector_handle;
	__u32 flags;
	__aligned_u64 request_context;
};

/**
 * struct ndk_u_accept - NDK_IOCTL_ACCEPT: NdkAccept; completes with an
 * NDK_U_EVENT_REQUEST event (@object NDK_U_REQ_ACCEPT)
 * @connector_handle: in: a connector from NDK_U_EVENT_CONNECT_REQUEST
 * @qp_handle:        in: the QP to connect
 * @inbound_read_limit: in: IRD
 * @outbound_read_limit: in: ORD
 * @private_data_length: in: bytes at @private_data, at most MaxCalleeData
 * @flags:            in: must be 0
 * @request_context:  in: returned in the completion event
 * @private_data:     in: user address of the private data
 */
struct ndk_u_accept {
	__u32 connector_handle;
	__u32 qp_handle;
	__u32 inbound_read_limit;
	__u32 outbound_read_limit;
	__u32 private_data_length;
	__u32 flags;
	__aligned_u64 request_context;
	__aligned_u64 private_data;
};

/**
 * struct ndk_u_reject - NDK_IOCTL_REJECT: NdkReject
 * @connector_handle: in: a connector from NDK_U_EVENT_CONNECT_REQUEST, or
 *                    one whose NDK_U_REQ_CONNECT completed
 * @private_data_length: in: bytes at @private_data
 * @private_data:     in: user address of the private data
 */
struct ndk_u_reject {
	__u32 connector_handle;
	__u32 private_data_length;
	__aligned_u64 private_data;
};

/**
 * struct ndk_u_connector_query - NDK_IOCTL_CONNECTOR_QUERY:
 * NdkGetConnectionData, NdkGetLocalAddress, NdkGetPeerAddress
 * @connector_handle: in: a connector handle
 * @flags:            in: must be 0
 * @inbound_read_limit: out: the peer's IRD
 * @outbound_read_limit: out: the peer's ORD
 * @private_data_length: in: room at @private_data; out: bytes the peer
 *                    sent (-EOVERFLOW and nothing copied when larger)
 * @reserved:         must be 0 in, 0 out
 * @private_data:     in: user address for the peer's private data
 * @local_address:    out: the local address; zero (family 0) when the
 *                    connector has none, after a refused connect: the
 *                    reject's private data and nothing else
 * @peer_address:     out: the peer's address; zero likewise
 */
struct ndk_u_connector_query {
	__u32 connector_handle;
	__u32 flags;
	__u32 inbound_read_limit;
	__u32 outbound_read_limit;
	__u32 private_data_length;
	__u32 reserved;
	__aligned_u64 private_data;
	__u8 local_address[NDK_U_SOCKADDR_SIZE];
	__u8 peer_address[NDK_U_SOCKADDR_SIZE];
};

/**
 * struct ndk_u_listener_create - NDK_IOCTL_LISTENER_CREATE
 * @adapter_handle: in: an adapter handle
 * @flags:          in: must be 0
 * @handle:         out: the listener's handle
 * @reserved:       must be 0 in, 0 out
 * @context:        in: returned in its NDK_U_EVENT_CONNECT_REQUEST events
 */
struct ndk_u_listener_create {
	__u32 adapter_handle;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
	__aligned_u64 context;
};

/**
 * struct ndk_u_listen - NDK_IOCTL_LISTEN: NdkListen, then
 * NdkGetListenerLocalAddress
 * @listener_handle: in: a listener handle
 * @flags:           in: must be 0
 * @address:         in: the address to listen on (port 0: any port);
 *                   out: the address listened on
 */
struct ndk_u_listen {
	__u32 listener_handle;
	__u32 flags;
	__u8 address[NDK_U_SOCKADDR_SIZE];
};

/* ndk_u_event.type */
#define NDK_U_EVENT_CQ 1U		/* a CQ_ARM notification */
#define NDK_U_EVENT_REQUEST 2U		/* a connector request completed */
#define NDK_U_EVENT_DISCONNECTED 3U	/* the peer disconnected */
#define NDK_U_EVENT_CONNECT_REQUEST 4U	/* a listener got a connection */
#define NDK_U_EVENT_ADAPTER_REMOVED 5U	/* the adapter is going away */

/* ndk_u_event.object of NDK_U_EVENT_REQUEST: which request */
#define NDK_U_REQ_CONNECT 1U
#define NDK_U_REQ_COMPLETE_CONNECT 2U
#define NDK_U_REQ_ACCEPT 3U
#define NDK_U_REQ_DISCONNECT 4U

/**
 * struct ndk_u_event - one event of the file's event queue
 * @type:    NDK_U_EVENT_*
 * @handle:  the object it concerns (CQ, connector, listener, adapter)
 * @status:  CQ: STATUS_SUCCESS, _BUFFER_OVERFLOW or _INTERNAL_ERROR;
 *           REQUEST: the request's NTSTATUS; else STATUS_SUCCESS
 * @object:  REQUEST: NDK_U_REQ_*; CONNECT_REQUEST: the new connector's
 *           handle (accept or reject it, then close it); else 0
 * @context: REQUEST: the request's @request_context; else the @context
 *           the object was created with (adapter: 0)
 */
struct ndk_u_event {
	__u32 type;
	__u32 handle;
	__s32 status;
	__u32 object;
	__aligned_u64 context;
};

/**
 * struct ndk_u_event_get - NDK_IOCTL_EVENT_GET: take queued events
 * @flags:  in: must be 0
 * @count:  in: room at @events (1..NDK_U_EVENT_GET_MAX); out: events
 *          taken, 0 when none is queued (never blocks: poll() the file,
 *          POLLIN means an event is queued)
 * @events: in: user address of @count struct ndk_u_event
 */
#define NDK_U_EVENT_GET_MAX 64U
struct ndk_u_event_get {
	__u32 flags;
	__u32 count;
	__aligned_u64 events;
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
#define NDK_IOCTL_CQ_CREATE \
	_IOWR(NDK_IOCTL_MAGIC, 0x08, struct ndk_u_cq_create)
#define NDK_IOCTL_CQ_ARM \
	_IOWR(NDK_IOCTL_MAGIC, 0x09, struct ndk_u_cq_arm)
#define NDK_IOCTL_CQ_POLL \
	_IOWR(NDK_IOCTL_MAGIC, 0x0a, struct ndk_u_cq_poll)
#define NDK_IOCTL_QP_CREATE \
	_IOWR(NDK_IOCTL_MAGIC, 0x0b, struct ndk_u_qp_create)
#define NDK_IOCTL_QP_POST \
	_IOWR(NDK_IOCTL_MAGIC, 0x0c, struct ndk_u_qp_post)
#define NDK_IOCTL_QP_FLUSH \
	_IOWR(NDK_IOCTL_MAGIC, 0x0d, struct ndk_u_qp_flush)
#define NDK_IOCTL_MR_CREATE \
	_IOWR(NDK_IOCTL_MAGIC, 0x0e, struct ndk_u_mr_create)
#define NDK_IOCTL_MR_REGISTER \
	_IOWR(NDK_IOCTL_MAGIC, 0x0f, struct ndk_u_mr_register)
#define NDK_IOCTL_MR_DEREGISTER \
	_IOWR(NDK_IOCTL_MAGIC, 0x10, struct ndk_u_mr_deregister)
#define NDK_IOCTL_MR_INIT_FR \
	_IOWR(NDK_IOCTL_MAGIC, 0x11, struct ndk_u_mr_init_fr)
#define NDK_IOCTL_MW_CREATE \
	_IOWR(NDK_IOCTL_MAGIC, 0x12, struct ndk_u_mw_create)
#define NDK_IOCTL_TOKEN_QUERY \
	_IOWR(NDK_IOCTL_MAGIC, 0x13, struct ndk_u_token_query)
#define NDK_IOCTL_CONNECTOR_CREATE \
	_IOWR(NDK_IOCTL_MAGIC, 0x14, struct ndk_u_connector_create)
#define NDK_IOCTL_CONNECT \
	_IOWR(NDK_IOCTL_MAGIC, 0x15, struct ndk_u_connect)
#define NDK_IOCTL_COMPLETE_CONNECT \
	_IOWR(NDK_IOCTL_MAGIC, 0x16, struct ndk_u_connector_request)
#define NDK_IOCTL_ACCEPT \
	_IOWR(NDK_IOCTL_MAGIC, 0x17, struct ndk_u_accept)
#define NDK_IOCTL_REJECT \
	_IOWR(NDK_IOCTL_MAGIC, 0x18, struct ndk_u_reject)
#define NDK_IOCTL_DISCONNECT \
	_IOWR(NDK_IOCTL_MAGIC, 0x19, struct ndk_u_connector_request)
#define NDK_IOCTL_CONNECTOR_QUERY \
	_IOWR(NDK_IOCTL_MAGIC, 0x1a, struct ndk_u_connector_query)
#define NDK_IOCTL_LISTENER_CREATE \
	_IOWR(NDK_IOCTL_MAGIC, 0x1b, struct ndk_u_listener_create)
#define NDK_IOCTL_LISTEN \
	_IOWR(NDK_IOCTL_MAGIC, 0x1c, struct ndk_u_listen)
#define NDK_IOCTL_EVENT_GET \
	_IOWR(NDK_IOCTL_MAGIC, 0x1d, struct ndk_u_event_get)
#define NDK_IOCTL_QP_DOORBELL \
	_IOWR(NDK_IOCTL_MAGIC, 0x1e, struct ndk_u_qp_doorbell)

#endif /* _UAPI_NDK_NDK_IOCTL_H */
