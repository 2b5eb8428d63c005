// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the generic netlink family "ndk" (uapi/ndk/ndk_netlink.h,
 * Documentation/netlink.md) and the registration statistics it reports.
 *
 * Commands: ADAPTER_GET (doit, dumpit), STAT_GET (doit), PROC_GET (doit,
 * dumpit), RES_GET (dumpit).  Events: ADAPTER_ADDED/REMOVED on group
 * "adapter" (anyone may listen), MEM_INVALIDATED on group "mem"
 * (CAP_NET_ADMIN: the event names another process's addresses).
 *
 * Privilege: anyone sees adapters and the module-wide statistics (sums
 * over every process, like /proc/meminfo).  The open files of another
 * process, and the objects in them, need CAP_NET_ADMIN (netlink_capable():
 * the socket's opener and the caller both): without it PROC_GET and
 * RES_GET show only files the calling process opened.  The caller is
 * current: a doit runs in the requester's sendmsg(), a dump in its
 * recvmsg().
 *
 * Open files and their objects are read through the user path's registry
 * (ndk_file_registry.c) as summaries: netlink holds no file and takes no
 * file's lock.
 *
 * MEM_INVALIDATED is raised from the MMU notifier, which may not sleep:
 * the event is queued (GFP_NOWAIT, at most NDK_NL_EVENTS_MAX pending) and
 * sent from a work item.  Events that cannot be queued are counted
 * (EVENTS_DROPPED, and NDK_NL_ATTR_DROPPED in the next event sent).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/capability.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "ndk_file.h"
#include "ndk_netlink.h"
#include "ndk_stats.h"
#include "ndk_trace.h"

/* "mem" events waiting for the work item at most. */
#define NDK_NL_EVENTS_MAX	1024

enum { NDK_NL_GRP_ADAPTER, NDK_NL_GRP_MEM };

/*
 * "mem" needs a kernel that checks a group's capability at bind time
 * (GENL_MCAST_CAP_NET_ADMIN: upstream 6.7, Debian's 6.1 has it).  Where it
 * is missing the group is not offered: anyone could join it, and its
 * events name other processes' addresses.  The tracepoint stays.
 */
#ifdef GENL_MCAST_CAP_NET_ADMIN
#define NDK_NL_MCGRPS		2
#define NDK_NL_MEM_EVENTS	true
#else
#define NDK_NL_MCGRPS		1
#define NDK_NL_MEM_EVENTS	false
#endif

static const struct genl_multicast_group ndk_nl_mcgrps[] = {
	[NDK_NL_GRP_ADAPTER] = { .name = NDK_GENL_MCGRP_ADAPTER },
#ifdef GENL_MCAST_CAP_NET_ADMIN
	[NDK_NL_GRP_MEM] = { .name = NDK_GENL_MCGRP_MEM,
			     .flags = GENL_MCAST_CAP_NET_ADMIN },
#endif
};

static const struct nla_policy ndk_nl_policy[NDK_NL_ATTR_MAX + 1] = {
	[NDK_NL_ATTR_ADAPTER_ID] = { .type = NLA_U32 },
	[NDK_NL_ATTR_ADAPTER_NAME] = { .type = NLA_NUL_STRING,
				       .len = IB_DEVICE_NAME_MAX - 1 },
	[NDK_NL_ATTR_PID] = { .type = NLA_U32 },
	[NDK_NL_ATTR_RES_TYPE] = NLA_POLICY_RANGE(NLA_U32, NDK_NL_OBJ_ADAPTER,
						  NDK_NL_OBJ_MAX),
};

static struct genl_family ndk_nl_family;
/* The family is registered: events may be sent (under ndk_nl_lock). */
static bool ndk_nl_ready;
static DEFINE_MUTEX(ndk_nl_lock);	/* protects ndk_nl_ready while sending */

struct ndk_nl_event {
	struct llist_node node;
	u32 file_id;
	pid_t tgid;
	u32 handle;
	u64 address;
	u64 length;
};

static LLIST_HEAD(ndk_nl_events);
static atomic_t ndk_nl_events_pending = ATOMIC_INIT(0);

/* --- attributes ---------------------------------------------------------- */

static int ndk_nl_put_u64(struct sk_buff *skb, int attr, u64 value)
{
	return nla_put_u64_64bit(skb, attr, value, NDK_NL_ATTR_PAD);
}

static int ndk_nl_put_stat(struct sk_buff *skb, int attr, u64 value)
{
	return nla_put_u64_64bit(skb, attr, value, NDK_NL_STAT_PAD);
}

static int ndk_nl_put_info(struct sk_buff *skb,
			   const struct ndk_adapter_info *i)
{
	static const struct {
		u8 attr;
		u8 offset;
	} u32s[] = {
#define NDK_NL_INFO(a, f) { NDK_NL_INFO_##a, offsetof(struct ndk_adapter_info, f) }
		NDK_NL_INFO(VENDOR_ID, vendor_id),
		NDK_NL_INFO(DEVICE_ID, device_id),
		NDK_NL_INFO(FRMR_PAGE_COUNT, frmr_page_count),
		NDK_NL_INFO(MAX_INITIATOR_REQUEST_SGE, max_initiator_request_sge),
		NDK_NL_INFO(MAX_RECEIVE_REQUEST_SGE, max_receive_request_sge),
		NDK_NL_INFO(MAX_READ_REQUEST_SGE, max_read_request_sge),
		NDK_NL_INFO(MAX_TRANSFER_LENGTH, max_transfer_length),
		NDK_NL_INFO(MAX_INLINE_DATA_SIZE, max_inline_data_size),
		NDK_NL_INFO(MAX_INBOUND_READ_LIMIT, max_inbound_read_limit),
		NDK_NL_INFO(MAX_OUTBOUND_READ_LIMIT, max_outbound_read_limit),
		NDK_NL_INFO(MAX_RECEIVE_QUEUE_DEPTH, max_receive_queue_depth),
		NDK_NL_INFO(MAX_INITIATOR_QUEUE_DEPTH, max_initiator_queue_depth),
		NDK_NL_INFO(MAX_SRQ_DEPTH, max_srq_depth),
		NDK_NL_INFO(MAX_CQ_DEPTH, max_cq_depth),
		NDK_NL_INFO(LARGE_REQUEST_THRESHOLD, large_request_threshold),
		NDK_NL_INFO(MAX_CALLER_DATA, max_caller_data),
		NDK_NL_INFO(MAX_CALLEE_DATA, max_callee_data),
		NDK_NL_INFO(ADAPTER_FLAGS, adapter_flags),
		NDK_NL_INFO(RDMA_TECHNOLOGY, rdma_technology),
#undef NDK_NL_INFO
	};
	struct nlattr *nest;
	int k;

	nest = nla_nest_start(skb, NDK_NL_ATTR_ADAPTER_INFO);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NDK_NL_INFO_VERSION,
			(u32)i->version.major << 16 | i->version.minor) ||
	    nla_put_u64_64bit(skb, NDK_NL_INFO_MAX_REGISTRATION_SIZE,
			      i->max_registration_size, NDK_NL_INFO_PAD) ||
	    nla_put_u64_64bit(skb, NDK_NL_INFO_MAX_WINDOW_SIZE,
			      i->max_window_size, NDK_NL_INFO_PAD))
		goto err_cancel;
	for (k = 0; k < ARRAY_SIZE(u32s); k++)
		if (nla_put_u32(skb, u32s[k].attr,
				*(const u32 *)((const u8 *)i + u32s[k].offset)))
			goto err_cancel;
	nla_nest_end(skb, nest);
	return 0;

err_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int ndk_nl_put_objects(struct sk_buff *skb, const u32 *counts)
{
	struct nlattr *nest;
	int t;

	nest = nla_nest_start(skb, NDK_NL_ATTR_OBJECTS);
	if (!nest)
		return -EMSGSIZE;
	for (t = NDK_NL_OBJ_ADAPTER; t <= NDK_NL_OBJ_MAX; t++) {
		if (nla_put_u32(skb, t, counts[t])) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* --- ADAPTER_GET --------------------------------------------------------- */

struct ndk_nl_fill {
	struct sk_buff *skb;
	u32 portid;
	u32 seq;
	int flags;
	u8 cmd;
};

/*
 * The core object type each netlink object type counts (the core counts
 * its objects by NDK_OBJECT_TYPE_*); 0: not a core object (registrations
 * of files, adapters counted apart).
 */
static const u32 ndk_nl_obj_core[__NDK_NL_OBJ_MAX] = {
	[NDK_NL_OBJ_PD] = NDK_OBJECT_TYPE_PD,
	[NDK_NL_OBJ_CQ] = NDK_OBJECT_TYPE_CQ,
	[NDK_NL_OBJ_QP] = NDK_OBJECT_TYPE_QP,
	[NDK_NL_OBJ_MR] = NDK_OBJECT_TYPE_MR,
	[NDK_NL_OBJ_MW] = NDK_OBJECT_TYPE_MW,
	[NDK_NL_OBJ_CONNECTOR] = NDK_OBJECT_TYPE_CONNECTOR,
	[NDK_NL_OBJ_LISTENER] = NDK_OBJECT_TYPE_LISTENER,
};

/* Under ndk_devices_lock: one adapter's message. */
static int ndk_nl_fill_adapter(struct ndk_device *dev, void *arg)
{
	struct ndk_nl_fill *f = arg;
	u32 counts[__NDK_NL_OBJ_MAX] = {};
	struct ib_device *ibdev = dev->ibdev;
	struct ndk_adapter_info info = dev->info;
	void *hdr;
	int t;

	/* The limits a /dev/ndk file gets (ADAPTER_INFO reports the same). */
	ndk_user_limits(&info);

	hdr = genlmsg_put(f->skb, f->portid, f->seq, &ndk_nl_family, f->flags,
			  f->cmd);
	if (!hdr)
		return -EMSGSIZE;
	for (t = NDK_NL_OBJ_PD; t <= NDK_NL_OBJ_MAX; t++)
		if (ndk_nl_obj_core[t])
			counts[t] = atomic_read(&dev->objects[ndk_nl_obj_core[t]]);
	counts[NDK_NL_OBJ_ADAPTER] = ndk_device_adapters(dev);
	if (nla_put_u32(f->skb, NDK_NL_ATTR_ADAPTER_ID, dev->id) ||
	    nla_put_string(f->skb, NDK_NL_ATTR_ADAPTER_NAME, dev->name) ||
	    ndk_nl_put_u64(f->skb, NDK_NL_ATTR_NODE_GUID,
			   be64_to_cpu(ibdev->node_guid)) ||
	    nla_put_u32(f->skb, NDK_NL_ATTR_IB_INDEX, ibdev->index) ||
	    nla_put_u32(f->skb, NDK_NL_ATTR_PORT_COUNT,
			rdma_end_port(ibdev) - rdma_start_port(ibdev) + 1) ||
	    ndk_nl_put_info(f->skb, &info) ||
	    ndk_nl_put_objects(f->skb, counts)) {
		genlmsg_cancel(f->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(f->skb, hdr);
	return 0;
}

static int ndk_nl_adapter_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ndk_nl_fill f = {
		.portid = info->snd_portid,
		.seq = info->snd_seq,
		.cmd = NDK_NL_CMD_ADAPTER_GET,
	};
	const char *name = NULL;
	u32 id = 0;
	int ret;

	if (info->attrs[NDK_NL_ATTR_ADAPTER_NAME])
		name = nla_data(info->attrs[NDK_NL_ATTR_ADAPTER_NAME]);
	else if (info->attrs[NDK_NL_ATTR_ADAPTER_ID])
		id = nla_get_u32(info->attrs[NDK_NL_ATTR_ADAPTER_ID]);
	else
		return -EINVAL;
	f.skb = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!f.skb)
		return -ENOMEM;
	ret = ndk_device_get(&id, name, false, genl_info_net(info),
			     ndk_nl_fill_adapter, &f);
	if (ret) {
		nlmsg_free(f.skb);
		return ret;
	}
	return genlmsg_reply(f.skb, info);
}

static int ndk_nl_adapter_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct ndk_nl_fill f = {
		.skb = skb,
		.portid = NETLINK_CB(cb->skb).portid,
		.seq = cb->nlh->nlmsg_seq,
		.flags = NLM_F_MULTI,
		.cmd = NDK_NL_CMD_ADAPTER_GET,
	};
	u32 id = cb->args[0];
	int ret;

	/* Ids are below U32_MAX (xa_limit_32b): id + 1 cannot wrap. */
	while (!(ret = ndk_device_get(&id, NULL, true, sock_net(skb->sk),
				      ndk_nl_fill_adapter, &f)))
		cb->args[0] = ++id;
	if (ret == -ENODEV || (ret == -EMSGSIZE && skb->len))
		return skb->len;
	return ret;
}

/* --- STAT_GET ------------------------------------------------------------ */

static int ndk_nl_put_errors(struct sk_buff *skb, u64 *total)
{
	struct nlattr *nest, *err;
	s32 status[NDK_STAT_ERROR_SLOTS];
	u64 count[NDK_STAT_ERROR_SLOTS];
	int i, n;

	n = ndk_stat_errors(status, count);

	*total = 0;
	nest = nla_nest_start(skb, NDK_NL_ATTR_ERRORS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		*total += count[i];
		err = nla_nest_start(skb, NDK_NL_ATTR_ERROR);
		if (!err ||
		    nla_put_u32(skb, NDK_NL_ATTR_ERROR_STATUS, status[i]) ||
		    ndk_nl_put_u64(skb, NDK_NL_ATTR_ERROR_COUNT, count[i])) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, err);
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int ndk_nl_stat_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ndk_stats_requests requests;
	u64 hits, misses, errors;
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;

	ndk_files_cache_totals(&hits, &misses);
	ndk_stat_requests(&requests);

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ndk_nl_family, 0,
				NDK_NL_CMD_STAT_GET);
	if (!hdr)
		goto err_free_msg;
	if (nla_put_u32(msg, NDK_NL_ATTR_VERSION, NDK_GENL_VERSION) ||
	    ndk_nl_put_errors(msg, &errors))
		goto err_free_msg;
	nest = nla_nest_start(msg, NDK_NL_ATTR_STATS);
	if (!nest)
		goto err_free_msg;
#define NDK_NL_STAT(a, v) ndk_nl_put_stat(msg, NDK_NL_STAT_##a, v)
	if (NDK_NL_STAT(REGISTRATIONS, atomic64_read(&ndk_stats.registrations)) ||
	    NDK_NL_STAT(DEREGISTRATIONS,
			atomic64_read(&ndk_stats.deregistrations)) ||
	    NDK_NL_STAT(REGISTERED_BYTES,
			atomic64_read(&ndk_stats.registered_bytes)) ||
	    NDK_NL_STAT(PINNED_PAGES, ndk_umem_pinned_pages()) ||
	    NDK_NL_STAT(FAST_REGISTERS, requests.fast_registers) ||
	    NDK_NL_STAT(BINDS, requests.binds) ||
	    NDK_NL_STAT(INVALIDATES, requests.invalidates) ||
	    NDK_NL_STAT(CACHE_HITS, hits) ||
	    NDK_NL_STAT(CACHE_MISSES, misses) ||
	    NDK_NL_STAT(CACHE_INVALIDATIONS, ndk_ucache_invalidations_total()) ||
	    NDK_NL_STAT(ERRORS, errors) ||
	    NDK_NL_STAT(EVENTS_DROPPED, atomic64_read(&ndk_stats.events_dropped)))
		goto err_free_msg;
#undef NDK_NL_STAT
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free_msg:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* --- PROC_GET and RES_GET ------------------------------------------------ */

/* The owner attributes every per-file message starts with. */
static int ndk_nl_put_owner(struct sk_buff *skb, const struct ndk_file_owner *o)
{
	if (nla_put_u32(skb, NDK_NL_ATTR_FILE_ID, o->id) ||
	    nla_put_u32(skb, NDK_NL_ATTR_PID, o->pid) ||
	    nla_put_string(skb, NDK_NL_ATTR_COMM, o->comm))
		return -EMSGSIZE;
	return 0;
}

/* One file's PROC_GET message. */
static int ndk_nl_fill_proc(struct sk_buff *skb, u32 portid, u32 seq,
			    int flags, const struct ndk_file_summary *f)
{
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &ndk_nl_family, flags,
			  NDK_NL_CMD_PROC_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (ndk_nl_put_owner(skb, &f->owner) ||
	    ndk_nl_put_objects(skb, f->counts))
		goto err_cancel;
	nest = nla_nest_start(skb, NDK_NL_ATTR_STATS);
	if (!nest ||
	    ndk_nl_put_stat(skb, NDK_NL_STAT_REGISTERED_BYTES, f->bytes) ||
	    ndk_nl_put_stat(skb, NDK_NL_STAT_PINNED_PAGES, f->pages) ||
	    ndk_nl_put_stat(skb, NDK_NL_STAT_CACHE_HITS, f->hits) ||
	    ndk_nl_put_stat(skb, NDK_NL_STAT_CACHE_MISSES, f->misses) ||
	    ndk_nl_put_stat(skb, NDK_NL_STAT_CACHE_INVALIDATIONS,
			    f->invalidations))
		goto err_cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int ndk_nl_proc_doit(struct sk_buff *skb, struct genl_info *info)
{
	bool admin = netlink_capable(skb, CAP_NET_ADMIN);
	struct ndk_file_summary *f;
	unsigned long pos = 0;
	struct sk_buff *msg;
	struct pid *pid;
	int ret = 0;
	u32 nr;

	if (!info->attrs[NDK_NL_ATTR_PID])
		return -EINVAL;
	nr = nla_get_u32(info->attrs[NDK_NL_ATTR_PID]);
	pid = find_get_pid(nr);
	if (!pid)
		return -ESRCH;
	if (!admin && pid != task_tgid(current)) {
		put_pid(pid);
		return -EPERM;
	}
	f = kmalloc(sizeof(*f), GFP_KERNEL);
	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!f || !msg) {
		ret = -ENOMEM;
		goto out_free;
	}
	/*
	 * One message per file of the process, in a single reply; a user's
	 * own files of its address space only, as the dumps (an exec keeps
	 * the pid).
	 */
	while ((ret = ndk_files_next(&pos, pid, admin ? NULL : current->mm,
				     f)) > 0) {
		ret = ndk_nl_fill_proc(msg, info->snd_portid, info->snd_seq, 0,
				       f);
		if (ret)
			break;
		pos++;
	}
	if (!ret && !msg->len)
		ret = -ENOENT;
	if (!ret) {
		ret = genlmsg_unicast(genl_info_net(info), msg,
				      info->snd_portid);
		msg = NULL;
	}
out_free:
	nlmsg_free(msg);
	kfree(f);
	put_pid(pid);
	return ret;
}

/*
 * The PID filter of a dump, or NULL; ERR_PTR(-ESRCH) when the pid is
 * unknown, ERR_PTR(-EPERM) for another process without @admin.
 */
static struct pid *ndk_nl_dump_pid(struct netlink_callback *cb, bool admin)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct pid *pid;

	if (!info->attrs[NDK_NL_ATTR_PID])
		return NULL;
	pid = find_get_pid(nla_get_u32(info->attrs[NDK_NL_ATTR_PID]));
	if (!pid)
		return ERR_PTR(-ESRCH);
	if (!admin && pid != task_tgid(current)) {
		put_pid(pid);
		return ERR_PTR(-EPERM);
	}
	return pid;
}

/*
 * cb->args of the PROC_GET and RES_GET dumps that their start fixes, in
 * the requester's context: the PID filter and the address space whose
 * files the requester may see (an mmgrab() reference; 0: every one).
 * Later rounds of a dump run in whoever reads the socket, which may be
 * another process, or the requester after an execve() of a setuid
 * program: its new address space sees nothing of this dump.
 */
#define NDK_NL_ARG_PID		4
#define NDK_NL_ARG_VIEWER	5

static int ndk_nl_files_dump_start(struct netlink_callback *cb)
{
	bool admin = netlink_capable(cb->skb, CAP_NET_ADMIN);
	struct pid *pid = ndk_nl_dump_pid(cb, admin);

	if (IS_ERR(pid))
		return PTR_ERR(pid);
	cb->args[NDK_NL_ARG_PID] = (long)pid;
	if (!admin) {
		if (!current->mm) {
			put_pid(pid);
			return -EPERM;
		}
		mmgrab(current->mm);
		cb->args[NDK_NL_ARG_VIEWER] = (long)current->mm;
	}
	return 0;
}

static int ndk_nl_files_dump_done(struct netlink_callback *cb)
{
	struct mm_struct *viewer = (struct mm_struct *)cb->args[NDK_NL_ARG_VIEWER];

	put_pid((struct pid *)cb->args[NDK_NL_ARG_PID]);
	if (viewer)
		mmdrop(viewer);
	return 0;
}

/* cb->args: [0] the next file id. */
static int ndk_nl_proc_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mm_struct *viewer = (struct mm_struct *)cb->args[NDK_NL_ARG_VIEWER];
	struct pid *pid = (struct pid *)cb->args[NDK_NL_ARG_PID];
	struct ndk_file_summary *f;
	unsigned long pos = cb->args[0];
	int ret = 0;

	f = kmalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	while ((ret = ndk_files_next(&pos, pid, viewer, f)) > 0) {
		ret = ndk_nl_fill_proc(skb, NETLINK_CB(cb->skb).portid,
				       cb->nlh->nlmsg_seq, NLM_F_MULTI, f);
		if (ret)
			break;
		cb->args[0] = ++pos;
	}
	kfree(f);
	return ret && !skb->len ? ret : skb->len;
}

/* One object's RES_GET message. */
static int ndk_nl_fill_res(struct sk_buff *skb, u32 portid, u32 seq,
			   const struct ndk_file_owner *owner,
			   const struct ndk_uobj_summary *o)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &ndk_nl_family, NLM_F_MULTI,
			  NDK_NL_CMD_RES_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (ndk_nl_put_owner(skb, owner) ||
	    nla_put_u32(skb, NDK_NL_ATTR_RES_TYPE, o->type) ||
	    nla_put_u32(skb, NDK_NL_ATTR_HANDLE, o->handle) ||
	    (o->parent &&
	     nla_put_u32(skb, NDK_NL_ATTR_PARENT_HANDLE, o->parent)) ||
	    (o->adapter &&
	     (nla_put_u32(skb, NDK_NL_ATTR_ADAPTER_ID, o->adapter_id) ||
	      nla_put_string(skb, NDK_NL_ATTR_ADAPTER_NAME, o->adapter_name))))
		goto err_cancel;
	if (o->mem &&
	    (ndk_nl_put_u64(skb, NDK_NL_ATTR_ADDRESS, o->address) ||
	     ndk_nl_put_u64(skb, NDK_NL_ATTR_LENGTH, o->length) ||
	     ndk_nl_put_u64(skb, NDK_NL_ATTR_PAGES, o->pages) ||
	     nla_put_u32(skb, NDK_NL_ATTR_FLAGS, o->flags)))
		goto err_cancel;
	if (o->has_refs && nla_put_u32(skb, NDK_NL_ATTR_REFS, o->refs))
		goto err_cancel;
	genlmsg_end(skb, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* cb->args: [0] the next file id, [1] the next handle in it. */
static int ndk_nl_res_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct mm_struct *viewer = (struct mm_struct *)cb->args[NDK_NL_ARG_VIEWER];
	struct pid *pid = (struct pid *)cb->args[NDK_NL_ARG_PID];
	unsigned long file = cb->args[0], handle = cb->args[1];
	struct ndk_file_owner owner;
	struct ndk_uobj_summary *o;
	int ret = 0;
	u32 type;

	if (!info->attrs[NDK_NL_ATTR_RES_TYPE])
		return -EINVAL;
	type = nla_get_u32(info->attrs[NDK_NL_ATTR_RES_TYPE]);
	o = kmalloc(sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	while ((ret = ndk_file_next_uobj(&file, &handle, pid, viewer, type,
					 &owner, o)) > 0) {
		ret = ndk_nl_fill_res(skb, NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, &owner, o);
		if (ret)
			break;
		cb->args[0] = file;
		cb->args[1] = ++handle;
	}
	kfree(o);
	return ret && !skb->len ? ret : skb->len;
}

/* --- family and events --------------------------------------------------- */

static const struct genl_ops ndk_nl_ops[] = {
	{
		.cmd = NDK_NL_CMD_ADAPTER_GET,
		.doit = ndk_nl_adapter_doit,
		.dumpit = ndk_nl_adapter_dumpit,
	},
	{
		.cmd = NDK_NL_CMD_STAT_GET,
		.doit = ndk_nl_stat_doit,
	},
	{
		.cmd = NDK_NL_CMD_PROC_GET,
		.doit = ndk_nl_proc_doit,
		.start = ndk_nl_files_dump_start,
		.dumpit = ndk_nl_proc_dumpit,
		.done = ndk_nl_files_dump_done,
	},
	{
		.cmd = NDK_NL_CMD_RES_GET,
		.start = ndk_nl_files_dump_start,
		.dumpit = ndk_nl_res_dumpit,
		.done = ndk_nl_files_dump_done,
	},
};

static struct genl_family ndk_nl_family __ro_after_init = {
	.name = NDK_GENL_NAME,
	.version = NDK_GENL_VERSION,
	.maxattr = NDK_NL_ATTR_MAX,
	.policy = ndk_nl_policy,
	.module = THIS_MODULE,
	.ops = ndk_nl_ops,
	.n_ops = ARRAY_SIZE(ndk_nl_ops),
	.resv_start_op = NDK_NL_CMD_MAX + 1,
	.mcgrps = ndk_nl_mcgrps,
	.n_mcgrps = NDK_NL_MCGRPS,
	/*
	 * The handlers take their own locks (the device table, the file
	 * registry, each file's lock): without this genetlink would run them
	 * under its host-wide mutex, and a dump waiting for a file's lock
	 * would hold every other family's commands.
	 */
	.parallel_ops = true,
};

/**
 * ndk_nl_adapter_event() - multicast ADAPTER_ADDED or ADAPTER_REMOVED
 * @dev: the device
 * @cmd: NDK_NL_CMD_ADAPTER_ADDED or NDK_NL_CMD_ADAPTER_REMOVED
 *
 * Context: process context (the ib_client callbacks).
 */
void ndk_nl_adapter_event(struct ndk_device *dev, u8 cmd)
{
	struct sk_buff *msg;
	void *hdr;

	mutex_lock(&ndk_nl_lock);
	/* The family is init_net's: a device of another namespace is unknown. */
	if (!ndk_nl_ready || !rdma_dev_access_netns(dev->ibdev, &init_net) ||
	    !genl_has_listeners(&ndk_nl_family, &init_net, NDK_NL_GRP_ADAPTER))
		goto out_unlock;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		goto out_unlock;
	hdr = genlmsg_put(msg, 0, 0, &ndk_nl_family, 0, cmd);
	if (!hdr ||
	    nla_put_u32(msg, NDK_NL_ATTR_ADAPTER_ID, dev->id) ||
	    nla_put_string(msg, NDK_NL_ATTR_ADAPTER_NAME, dev->name) ||
	    ndk_nl_put_u64(msg, NDK_NL_ATTR_NODE_GUID,
			   be64_to_cpu(dev->ibdev->node_guid))) {
		nlmsg_free(msg);
		goto out_unlock;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&ndk_nl_family, msg, 0, NDK_NL_GRP_ADAPTER,
			  GFP_KERNEL);
out_unlock:
	mutex_unlock(&ndk_nl_lock);
}

static void ndk_nl_events_work(struct work_struct *work)
{
	struct llist_node *list = llist_reverse_order(llist_del_all(&ndk_nl_events));
	struct ndk_nl_event *e, *tmp;
	struct sk_buff *msg;
	void *hdr;

	mutex_lock(&ndk_nl_lock);
	llist_for_each_entry_safe(e, tmp, list, node) {
		atomic_dec(&ndk_nl_events_pending);
		msg = ndk_nl_ready ? nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL) :
				     NULL;
		hdr = msg ? genlmsg_put(msg, 0, 0, &ndk_nl_family, 0,
					NDK_NL_CMD_MEM_INVALIDATED) : NULL;
		if (!hdr ||
		    nla_put_u32(msg, NDK_NL_ATTR_FILE_ID, e->file_id) ||
		    nla_put_u32(msg, NDK_NL_ATTR_PID, e->tgid) ||
		    nla_put_u32(msg, NDK_NL_ATTR_HANDLE, e->handle) ||
		    ndk_nl_put_u64(msg, NDK_NL_ATTR_ADDRESS, e->address) ||
		    ndk_nl_put_u64(msg, NDK_NL_ATTR_LENGTH, e->length) ||
		    ndk_nl_put_u64(msg, NDK_NL_ATTR_DROPPED,
				   atomic64_read(&ndk_stats.events_dropped))) {
			nlmsg_free(msg);
			atomic64_inc(&ndk_stats.events_dropped);
		} else {
			genlmsg_end(msg, hdr);
			genlmsg_multicast(&ndk_nl_family, msg, 0,
					  NDK_NL_GRP_MEM, GFP_KERNEL);
		}
		kfree(e);
	}
	mutex_unlock(&ndk_nl_lock);
}

static DECLARE_WORK(ndk_nl_work, ndk_nl_events_work);

/**
 * ndk_nl_mem_invalidated() - a registration's range was unmapped or remapped
 * @file_id: its file's netlink id
 * @tgid:    the file's opener
 * @handle:  the registration's handle (0 while it is being created)
 * @address: its first byte
 * @length:  its bytes
 *
 * Traces the invalidation and, when somebody listens on group "mem",
 * queues a MEM_INVALIDATED event.
 *
 * Context: any (the MMU notifier: must not sleep).
 */
void ndk_nl_mem_invalidated(u32 file_id, pid_t tgid, u32 handle, u64 address,
			    u64 length)
{
	struct ndk_nl_event *e;

	trace_ndk_mem_invalidated(file_id, tgid, handle, address, length);
	if (!NDK_NL_MEM_EVENTS || !READ_ONCE(ndk_nl_ready) ||
	    !genl_has_listeners(&ndk_nl_family, &init_net, NDK_NL_GRP_MEM))
		return;
	if (atomic_inc_return(&ndk_nl_events_pending) > NDK_NL_EVENTS_MAX)
		goto err_dropped;
	e = kmalloc(sizeof(*e), GFP_NOWAIT | __GFP_NOWARN);
	if (!e)
		goto err_dropped;
	e->file_id = file_id;
	e->tgid = tgid;
	e->handle = handle;
	e->address = address;
	e->length = length;
	llist_add(&e->node, &ndk_nl_events);
	schedule_work(&ndk_nl_work);
	return;

err_dropped:
	atomic_dec(&ndk_nl_events_pending);
	atomic64_inc(&ndk_stats.events_dropped);
	pr_debug("ndk: MEM_INVALIDATED of pid %d handle %u dropped\n", tgid,
		 handle);
}

/**
 * ndk_netlink_init() - register the generic netlink family
 *
 * Context: module init.
 * Return: 0 or what genl_register_family() returned.
 */
int ndk_netlink_init(void)
{
	int ret;

	ret = genl_register_family(&ndk_nl_family);
	if (ret)
		return ret;
	mutex_lock(&ndk_nl_lock);
	WRITE_ONCE(ndk_nl_ready, true);
	mutex_unlock(&ndk_nl_lock);
	return 0;
}

/**
 * ndk_netlink_exit() - unregister the family; no event is sent after it
 *
 * Called after every file is closed and every device removed, so no new
 * event can be queued.
 *
 * Context: module exit.
 */
void ndk_netlink_exit(void)
{
	mutex_lock(&ndk_nl_lock);
	WRITE_ONCE(ndk_nl_ready, false);
	mutex_unlock(&ndk_nl_lock);
	/* Frees what is queued without sending it. */
	flush_work(&ndk_nl_work);
	ndk_nl_events_work(&ndk_nl_work);
	genl_unregister_family(&ndk_nl_family);
	WARN_ON(!ndk_files_empty());
}
