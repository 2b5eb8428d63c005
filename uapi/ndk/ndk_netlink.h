/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * ndk-linux generic netlink family "ndk": adapters, object counts,
 * registration statistics and events (Documentation/netlink.md).
 *
 * Rules: attributes and commands are only ever added at the end of their
 * enums; a reader ignores attributes it does not know.  Every integer
 * attribute has one fixed width (NLA_U32 or NLA_U64, noted below).
 * Only <linux/types.h>; C90 and C++ clean.
 */
#ifndef _UAPI_NDK_NDK_NETLINK_H
#define _UAPI_NDK_NDK_NETLINK_H

#include <linux/types.h>

#define NDK_GENL_NAME "ndk"
#define NDK_GENL_VERSION 1

/* Multicast groups: adapters come and go (anyone may listen). */
#define NDK_GENL_MCGRP_ADAPTER "adapter"
/* Registrations invalidated by memory unmapping (CAP_NET_ADMIN only). */
#define NDK_GENL_MCGRP_MEM "mem"

/*
 * The /dev/ndk page of self-reported registration cache counters:
 * mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
 * NDK_U_MMAP_CACHE_COUNTERS).  libndk's registration cache adds its hits
 * and misses there (they never reach the kernel otherwise: a hit makes
 * no system call); the kernel only reads them, for NDK_NL_CMD_PROC_GET
 * and NDK_NL_CMD_STAT_GET.  Advisory: the process may write anything.
 */
#define NDK_U_MMAP_CACHE_COUNTERS 0x100000 /* bytes; C90: no ULL */

struct ndk_u_cache_counters {
	__u64 hits;
	__u64 misses;
};

enum ndk_nl_cmd {
	NDK_NL_CMD_UNSPEC,
	/* doit with NDK_NL_ATTR_ADAPTER_ID or _NAME; dumpit: every adapter */
	NDK_NL_CMD_ADAPTER_GET,
	/* doit: module-wide NDK_NL_ATTR_STATS and NDK_NL_ATTR_ERRORS */
	NDK_NL_CMD_STAT_GET,
	/*
	 * One message per open /dev/ndk file: owner, object counts and
	 * statistics.  doit with NDK_NL_ATTR_PID; dumpit, optionally
	 * filtered by NDK_NL_ATTR_PID.  Files of other processes need
	 * CAP_NET_ADMIN: without it a dump shows only the caller's own and
	 * a doit for another pid fails with -EPERM.  A doit answers in one
	 * message buffer (NLMSG_GOODSIZE): a process with more files than
	 * fit in it (about 40) gets -EMSGSIZE; the dump has no such limit.
	 */
	NDK_NL_CMD_PROC_GET,
	/*
	 * dumpit: one message per object of type NDK_NL_ATTR_RES_TYPE
	 * (required), optionally of one NDK_NL_ATTR_PID; the same rule
	 * for other processes as NDK_NL_CMD_PROC_GET.
	 */
	NDK_NL_CMD_RES_GET,
	/* Events (multicast only). */
	NDK_NL_CMD_ADAPTER_ADDED,	/* group "adapter" */
	NDK_NL_CMD_ADAPTER_REMOVED,	/* group "adapter" */
	NDK_NL_CMD_MEM_INVALIDATED,	/* group "mem" */

	__NDK_NL_CMD_MAX,
	NDK_NL_CMD_MAX = __NDK_NL_CMD_MAX - 1
};

enum ndk_nl_attr {
	NDK_NL_ATTR_UNSPEC,
	NDK_NL_ATTR_PAD,
	NDK_NL_ATTR_VERSION,		/* u32: NDK_GENL_VERSION */
	NDK_NL_ATTR_ADAPTER_ID,		/* u32 */
	NDK_NL_ATTR_ADAPTER_NAME,	/* string */
	NDK_NL_ATTR_NODE_GUID,		/* u64, host byte order */
	NDK_NL_ATTR_IB_INDEX,		/* u32: as `rdma dev` shows it */
	NDK_NL_ATTR_PORT_COUNT,		/* u32 */
	NDK_NL_ATTR_ADAPTER_INFO,	/* nest: enum ndk_nl_info */
	NDK_NL_ATTR_OBJECTS,		/* nest: enum ndk_nl_obj, u32 counts */
	NDK_NL_ATTR_STATS,		/* nest: enum ndk_nl_stat, u64 each */
	NDK_NL_ATTR_ERRORS,		/* nest of NDK_NL_ATTR_ERROR */
	NDK_NL_ATTR_ERROR,		/* nest: _ERROR_STATUS, _ERROR_COUNT */
	NDK_NL_ATTR_ERROR_STATUS,	/* u32: an NTSTATUS */
	NDK_NL_ATTR_ERROR_COUNT,	/* u64 */
	NDK_NL_ATTR_PID,		/* u32: a thread group id */
	NDK_NL_ATTR_COMM,		/* string: the opener's comm */
	NDK_NL_ATTR_FILE_ID,		/* u32: an open /dev/ndk file */
	NDK_NL_ATTR_RES_TYPE,		/* u32: enum ndk_nl_obj */
	NDK_NL_ATTR_HANDLE,		/* u32: the object's handle */
	NDK_NL_ATTR_PARENT_HANDLE,	/* u32 */
	NDK_NL_ATTR_ADDRESS,		/* u64: user address */
	NDK_NL_ATTR_LENGTH,		/* u64: bytes */
	NDK_NL_ATTR_PAGES,		/* u64: pages pinned */
	NDK_NL_ATTR_FLAGS,		/* u32: NDK_U_MEM_* or NDK_U_MR_FLAG_* */
	NDK_NL_ATTR_REFS,		/* u32: MEM_REGISTER references */
	NDK_NL_ATTR_DROPPED,		/* u64: events of this group lost */

	__NDK_NL_ATTR_MAX,
	NDK_NL_ATTR_MAX = __NDK_NL_ATTR_MAX - 1
};

/* NDK_NL_ATTR_ADAPTER_INFO: the NDK_ADAPTER_INFO fields, u32 unless noted. */
enum ndk_nl_info {
	NDK_NL_INFO_UNSPEC,
	NDK_NL_INFO_PAD,
	NDK_NL_INFO_VERSION,			/* major << 16 | minor */
	NDK_NL_INFO_VENDOR_ID,
	NDK_NL_INFO_DEVICE_ID,
	NDK_NL_INFO_MAX_REGISTRATION_SIZE,	/* u64 */
	NDK_NL_INFO_MAX_WINDOW_SIZE,		/* u64 */
	NDK_NL_INFO_FRMR_PAGE_COUNT,
	NDK_NL_INFO_MAX_INITIATOR_REQUEST_SGE,
	NDK_NL_INFO_MAX_RECEIVE_REQUEST_SGE,
	NDK_NL_INFO_MAX_READ_REQUEST_SGE,
	NDK_NL_INFO_MAX_TRANSFER_LENGTH,
	NDK_NL_INFO_MAX_INLINE_DATA_SIZE,
	NDK_NL_INFO_MAX_INBOUND_READ_LIMIT,
	NDK_NL_INFO_MAX_OUTBOUND_READ_LIMIT,
	NDK_NL_INFO_MAX_RECEIVE_QUEUE_DEPTH,
	NDK_NL_INFO_MAX_INITIATOR_QUEUE_DEPTH,
	NDK_NL_INFO_MAX_SRQ_DEPTH,
	NDK_NL_INFO_MAX_CQ_DEPTH,
	NDK_NL_INFO_LARGE_REQUEST_THRESHOLD,
	NDK_NL_INFO_MAX_CALLER_DATA,
	NDK_NL_INFO_MAX_CALLEE_DATA,
	NDK_NL_INFO_ADAPTER_FLAGS,
	NDK_NL_INFO_RDMA_TECHNOLOGY,

	__NDK_NL_INFO_MAX,
	NDK_NL_INFO_MAX = __NDK_NL_INFO_MAX - 1
};

/*
 * Object types: NDK_NL_ATTR_OBJECTS counts and NDK_NL_ATTR_RES_TYPE.  An
 * adapter's counts include kernel consumers' objects (an NDK_NL_OBJ_MEM
 * is counted there as the MR it uses); a file's count its handles.
 */
enum ndk_nl_obj {
	NDK_NL_OBJ_UNSPEC,
	NDK_NL_OBJ_ADAPTER,
	NDK_NL_OBJ_PD,
	NDK_NL_OBJ_CQ,
	NDK_NL_OBJ_QP,
	NDK_NL_OBJ_MR,
	NDK_NL_OBJ_MW,
	NDK_NL_OBJ_CONNECTOR,
	NDK_NL_OBJ_LISTENER,
	NDK_NL_OBJ_MEM,		/* WSPRegisterMemory registrations (files) */

	__NDK_NL_OBJ_MAX,
	NDK_NL_OBJ_MAX = __NDK_NL_OBJ_MAX - 1
};

/* NDK_NL_ATTR_STATS: u64 each.  Module-wide unless said per file. */
enum ndk_nl_stat {
	NDK_NL_STAT_UNSPEC,
	NDK_NL_STAT_PAD,
	NDK_NL_STAT_REGISTRATIONS,	/* NdkRegisterMr that succeeded */
	NDK_NL_STAT_DEREGISTRATIONS,	/* registrations released */
	NDK_NL_STAT_REGISTERED_BYTES,	/* now; per file: its MEM and MR */
	NDK_NL_STAT_PINNED_PAGES,	/* now, user memory; per file too */
	NDK_NL_STAT_FAST_REGISTERS,	/* NdkFastRegister posted */
	NDK_NL_STAT_BINDS,		/* NdkBind posted */
	NDK_NL_STAT_INVALIDATES,	/* NdkInvalidate posted */
	NDK_NL_STAT_CACHE_HITS,		/* self-reported by libndk */
	NDK_NL_STAT_CACHE_MISSES,	/* self-reported by libndk */
	NDK_NL_STAT_CACHE_INVALIDATIONS, /* MMU notifier bumps; per file */
	NDK_NL_STAT_ERRORS,		/* sum of NDK_NL_ATTR_ERRORS */
	NDK_NL_STAT_EVENTS_DROPPED,	/* "mem" events not sent */

	__NDK_NL_STAT_MAX,
	NDK_NL_STAT_MAX = __NDK_NL_STAT_MAX - 1
};

#endif /* _UAPI_NDK_NDK_NETLINK_H */
