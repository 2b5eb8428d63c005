// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the internal registration path of a PD.
 *
 * NdkRegisterMr registers arbitrary kernel pages and is not posted on a
 * consumer QP, but ib_core 6.1 can only register arbitrary pages with a
 * fast-register work request (IB_WR_REG_MR), which needs a send queue.
 * Each PD therefore gets, on first use, an RC QP connected to itself that
 * carries nothing but local operations (REG_MR, LOCAL_INV): no packet
 * ever leaves it.  Its send queue is shared by every registration of the
 * PD (credits in a semaphore bound the work requests in flight), and the
 * fast-register MRs are pooled per size class (ndk_reg_class.h), each with
 * the scatter table its registrations are built in, so a registration
 * normally costs one REG_MR and a deregistration one LOCAL_INV, no
 * allocation.
 *
 * On iWARP the QP cannot be connected to itself by hand: it is one end of
 * a loopback connection through rdma_cm instead (ndk_reg_iw.c).
 *
 * A failed local operation moves an RC QP to the error state (rxe does);
 * every request is validated before it is posted, and if one fails
 * anyway the QP is reset and reconnected before its next use, every
 * credit held so that no request is posted between the two.
 *
 * Test hook: writing N to the root-only module parameter reg_refuse makes
 * the next N posts of registration QPs fail as a QP out of RTS refuses
 * them (-EIO), which marks the path broken; reading it gives the number
 * of rebuilds of self-connected paths so far (k-reg-qp-refuse).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "ndk_mr.h"
#include "ndk_trace.h"

static int ndk_reg_connect_self(struct ib_qp *qp)
{
	struct ib_device *ibdev = qp->device;
	u32 port = rdma_start_port(ibdev);
	struct ib_qp_attr attr = {};
	struct ib_port_attr pattr;
	union ib_gid gid;
	int ret;

	ret = ib_query_port(ibdev, port, &pattr);
	if (ret)
		return ret;

	attr.qp_state = IB_QPS_RESET;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = port;
	attr.qp_access_flags = 0;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = qp->qp_num;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(ibdev, port);
	rdma_ah_set_port_num(&attr.ah_attr, port);
	if (rdma_protocol_ib(ibdev, port))
		rdma_ah_set_dlid(&attr.ah_attr, pattr.lid);
	if (rdma_ib_or_roce(ibdev, port) && !rdma_protocol_ib(ibdev, port)) {
		ret = rdma_query_gid(ibdev, port, 0, &gid);
		if (ret)
			return ret;
		rdma_ah_set_grh(&attr.ah_attr, &gid, 0, 0, 1, 0);
	}
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static struct ndk_reg *ndk_reg_create(struct ndk_pd *pd)
{
	struct ib_device *ibdev = ndk_ibdev(&pd->obj);
	struct ib_qp_init_attr attr = {};
	struct ndk_reg *reg;
	int i, ret;

	reg = kzalloc(sizeof(*reg), GFP_KERNEL_ACCOUNT);
	if (!reg)
		return ERR_PTR(-ENOMEM);
	sema_init(&reg->credits, NDK_REG_SQ_DEPTH);
	mutex_init(&reg->lock);
	for (i = 0; i < NDK_REG_CLASSES; i++)
		INIT_LIST_HEAD(&reg->pool[i]);
	reg->max_pages = ibdev->attrs.max_fast_reg_page_list_len;

	reg->cq = ib_alloc_cq(ibdev, NULL, NDK_REG_SQ_DEPTH + 1, 0,
			      IB_POLL_SOFTIRQ);
	if (IS_ERR(reg->cq)) {
		ret = PTR_ERR(reg->cq);
		goto err_free_reg;
	}
	if (rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev))) {
		ret = ndk_reg_iw_connect(reg, pd);
		if (ret)
			goto err_free_cq;
		return reg;
	}
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = reg->cq;
	attr.recv_cq = reg->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = NDK_REG_SQ_DEPTH;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	reg->qp = ib_create_qp(pd->ibpd, &attr);
	if (IS_ERR(reg->qp)) {
		ret = PTR_ERR(reg->qp);
		goto err_free_cq;
	}
	ret = ndk_reg_connect_self(reg->qp);
	if (ret)
		goto err_destroy_qp;
	return reg;

err_destroy_qp:
	ib_destroy_qp(reg->qp);
err_free_cq:
	ib_free_cq(reg->cq);
err_free_reg:
	kfree(reg);
	return ERR_PTR(ret);
}

/**
 * ndk_reg_take_credits() - wait until no work request of @reg is in
 * flight, and let none be posted until ndk_reg_give_credits()
 * @reg: the registration path
 *
 * Context: process context, may sleep.
 */
void ndk_reg_take_credits(struct ndk_reg *reg)
{
	int i;

	for (i = 0; i < NDK_REG_SQ_DEPTH; i++)
		down(&reg->credits);
}

/**
 * ndk_reg_give_credits() - posting may go on
 * @reg: the registration path, its credits taken by ndk_reg_take_credits()
 *
 * Context: any.
 */
void ndk_reg_give_credits(struct ndk_reg *reg)
{
	int i;

	for (i = 0; i < NDK_REG_SQ_DEPTH; i++)
		up(&reg->credits);
}

/*
 * The fault-injection hook of the registration engine: debugfs
 * ndk/fail_mr_alloc (root only) makes the next N allocations of a
 * fast-register MR (the pool's here, a fast-register MR's in ndk_mr.c)
 * fail as if memory ran out, so tests can provoke
 * STATUS_INSUFFICIENT_RESOURCES on the stock kernel, which has no fault
 * injection.
 */
static atomic_t ndk_fail_mr_alloc = ATOMIC_INIT(0);

/**
 * ndk_fault_fail_mr_alloc() - should this MR allocation fail on purpose?
 *
 * Context: any.
 * Return: true while debugfs ndk/fail_mr_alloc counts down.
 */
bool ndk_fault_fail_mr_alloc(void)
{
	return atomic_add_unless(&ndk_fail_mr_alloc, -1, 0);
}

static int ndk_fail_mr_alloc_get(void *data, u64 *val)
{
	*val = atomic_read(&ndk_fail_mr_alloc);
	return 0;
}

static int ndk_fail_mr_alloc_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&ndk_fail_mr_alloc, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(ndk_fail_mr_alloc_fops, ndk_fail_mr_alloc_get,
			 ndk_fail_mr_alloc_set, "%llu\n");

/**
 * ndk_reg_debugfs_init() - the registration engine's debugfs files
 * @dir: ndk.ko's debugfs directory
 *
 * Context: module init.
 */
void ndk_reg_debugfs_init(struct dentry *dir)
{
	debugfs_create_file_unsafe("fail_mr_alloc", 0600, dir, NULL,
				   &ndk_fail_mr_alloc_fops);
}

/* The reg_refuse test hook: posts still to refuse, rebuilds so far. */
static atomic_t ndk_reg_refuse = ATOMIC_INIT(0);
static atomic_t ndk_reg_rebuilds = ATOMIC_INIT(0);

static int ndk_reg_refuse_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n > INT_MAX)
		return -EINVAL;
	atomic_set(&ndk_reg_refuse, n);
	return 0;
}

static int ndk_reg_refuse_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&ndk_reg_rebuilds));
}

static const struct kernel_param_ops ndk_reg_refuse_ops = {
	.set = ndk_reg_refuse_set,
	.get = ndk_reg_refuse_get,
};
module_param_cb(reg_refuse, &ndk_reg_refuse_ops, NULL, 0600);
MODULE_PARM_DESC(reg_refuse,
		 "test hook: write N: the next N registration QP posts are refused; read: rebuilds so far");

/**
 * ndk_reg_get() - the PD's registration path, created or repaired
 * @pd: the PD
 *
 * Context: process context, may sleep.
 * Return: the registration path, or an ERR_PTR.
 */
struct ndk_reg *ndk_reg_get(struct ndk_pd *pd)
{
	struct ndk_reg *reg;
	int ret;

	/* Built and healthy: no lock (set once, with release semantics). */
	reg = smp_load_acquire(&pd->reg);
	if (reg && !READ_ONCE(reg->broken))
		return reg;
	mutex_lock(&pd->reg_lock);
	reg = pd->reg;
	if (!reg) {
		reg = ndk_reg_create(pd);
		if (!IS_ERR(reg))
			/* Pairs with the lockless smp_load_acquire() above. */
			smp_store_release(&pd->reg, reg);
	} else if (READ_ONCE(reg->broken) && reg->iw) {
		ret = ndk_reg_iw_reconnect(reg, pd);
		if (ret)
			reg = ERR_PTR(ret);
	} else if (READ_ONCE(reg->broken)) {
		/*
		 * Every credit held across the reset: a poster that found
		 * the path healthy before it broke would otherwise post
		 * between the quiesce and the reset, which discards its
		 * request without a completion (rxe_qp_reset()).
		 */
		ndk_reg_take_credits(reg);
		ret = ndk_reg_connect_self(reg->qp);
		if (!ret) {
			WRITE_ONCE(reg->broken, false);
			atomic_inc(&ndk_reg_rebuilds);
		}
		ndk_reg_give_credits(reg);
		if (ret)
			reg = ERR_PTR(ret);
	}
	mutex_unlock(&pd->reg_lock);
	return reg;
}

/**
 * ndk_reg_post() - post one signalled local operation and wait for it
 * @reg: the registration path
 * @wr:  the work request; wr->wr_cqe->done must up() @reg->credits via
 *       ndk_reg_wr_done()
 * @done: completed by the work request's completion
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno of ib_post_send().
 */
int ndk_reg_post(struct ndk_reg *reg, struct ib_send_wr *wr,
		 struct completion *done)
{
	int ret;

	down(&reg->credits);
	reinit_completion(done);
	wr->send_flags |= IB_SEND_SIGNALED;
	/*
	 * With bottom halves off, a driver that finishes a kernel QP's
	 * request in a tasklet (rxe) runs it, and ib_core its completion,
	 * in local_bh_enable(), in this thread: the completion is usually
	 * in before the wait, where from process context the tasklet would
	 * wake ksoftirqd and this thread would sleep until it ran.
	 */
	if (unlikely(atomic_add_unless(&ndk_reg_refuse, -1, 0))) {
		ret = -EIO;
	} else {
		local_bh_disable();
		ret = ib_post_send(reg->qp, wr, NULL);
		local_bh_enable();
	}
	if (ret) {
		/* A QP out of RTS refuses posts (siw once disconnected). */
		ndk_reg_set_broken(reg, "post", ret);
		up(&reg->credits);
		return ret;
	}
	wait_for_completion(done);
	return 0;
}

/**
 * ndk_reg_set_broken() - the registration path failed: rebuild or refuse
 * @reg:   the registration path
 * @cause: "post", "completion" or "connection" (tracepoint ndk_reg_broken)
 * @code:  the errno, ib_wc_status or rdma_cm event that broke it
 *
 * The next registration rebuilds an iWARP path, or is refused.
 *
 * Context: any.
 */
void ndk_reg_set_broken(struct ndk_reg *reg, const char *cause, int code)
{
	WRITE_ONCE(reg->broken, true);
	trace_ndk_reg_broken(reg, cause, code);
}

/**
 * ndk_reg_wr_done() - account a finished local operation
 * @reg:    the registration path
 * @status: its completion status
 *
 * Context: softirq (the CQ's completion handler).
 */
void ndk_reg_wr_done(struct ndk_reg *reg, enum ib_wc_status status)
{
	if (status != IB_WC_SUCCESS)
		ndk_reg_set_broken(reg, "completion", status);
	up(&reg->credits);
}

/**
 * ndk_reg_mr_free() - free a pooled MR whose key is dead, and its table
 * @rmr: the MR, not DMA-mapped; @rmr->ibmr NULL when already deregistered
 *
 * Context: process context, may sleep.
 */
void ndk_reg_mr_free(struct ndk_reg_mr *rmr)
{
	if (rmr->ibmr)
		ib_dereg_mr(rmr->ibmr);
	if (rmr->sg_cap)
		sg_free_table(&rmr->sgt);
	kmem_cache_free(ndk_reg_mr_cache, rmr);
}

/**
 * ndk_alloc_fr_mr() - a fast-register ib_mr for up to @pages pages
 * @pd:    the PD
 * @pages: page-list entries the MR may map
 *
 * Every fast-register MR of ndk.ko comes from here: the pooled ones, the
 * consumers' (NdkInitializeFastRegisterMr) and the windows'.  6.1's rxe
 * keeps an MR's page list in maps of RXE_BUF_PER_MAP (PAGE_SIZE / 16)
 * entries, and rxe_mr_copy() loads the next map's pointer after every
 * access that ends in a map's last entry, past the array when that map is
 * the MR's last (a KASAN slab-out-of-bounds read): on rxe an MR of a
 * multiple of that many entries gets one spare entry, so a full last map
 * has a successor.  The spare entry is never mapped: callers keep their
 * own limit of @pages.
 *
 * Context: process context, may sleep.
 * Return: the MR, or an ERR_PTR.
 */
struct ib_mr *ndk_alloc_fr_mr(struct ndk_pd *pd, u32 pages)
{
	struct ib_device *ibdev = ndk_ibdev(&pd->obj);

	if (ibdev->ops.driver_id == RDMA_DRIVER_RXE &&
	    !(pages % (PAGE_SIZE / 16)))
		pages++;
	return ib_alloc_mr(pd->ibpd, IB_MR_TYPE_MEM_REG, pages);
}

/**
 * ndk_reg_mr_get() - a free fast-register MR for @entries page-list entries
 * @pd:      the PD
 * @reg:     its registration path
 * @entries: page-list entries to map, 1 ... @reg->max_pages
 *
 * The MR comes from the pool of the smallest class that holds @entries
 * (ndk_reg_class()), or is allocated for that class.
 *
 * Context: process context, may sleep.
 * Return: the MR (no valid key: ready for REG_MR), or an ERR_PTR.
 */
struct ndk_reg_mr *ndk_reg_mr_get(struct ndk_pd *pd, struct ndk_reg *reg,
				  u32 entries)
{
	int c = ndk_reg_class(entries, reg->max_pages);
	struct ndk_reg_mr *rmr = NULL;
	struct ib_mr *ibmr;

	if (c < 0)
		return ERR_PTR(-EINVAL);
	mutex_lock(&reg->lock);
	if (!list_empty(&reg->pool[c])) {
		rmr = list_first_entry(&reg->pool[c], struct ndk_reg_mr, entry);
		list_del(&rmr->entry);
		reg->pooled[c]--;
	}
	mutex_unlock(&reg->lock);
	if (rmr)
		return rmr;
	if (ndk_fault_fail_mr_alloc())
		return ERR_PTR(-ENOMEM);
	rmr = kmem_cache_zalloc(ndk_reg_mr_cache, GFP_KERNEL_ACCOUNT);
	if (!rmr)
		return ERR_PTR(-ENOMEM);
	ibmr = ndk_alloc_fr_mr(pd, ndk_reg_class_entries(c, reg->max_pages));
	if (IS_ERR(ibmr)) {
		kmem_cache_free(ndk_reg_mr_cache, rmr);
		return ERR_CAST(ibmr);
	}
	rmr->ibmr = ibmr;
	rmr->class = c;
	return rmr;
}

/**
 * ndk_reg_mr_put() - give back an MR whose key is no longer valid
 * @reg: the registration path
 * @rmr: the MR, invalidated, its table no longer DMA-mapped
 *
 * An MR that used every key byte is freed, not pooled: its next
 * registration would bring back the token of an earlier one, which a
 * peer may have kept.  The next allocation gets a new MR index.
 *
 * Context: process context, may sleep.
 */
void ndk_reg_mr_put(struct ndk_reg *reg, struct ndk_reg_mr *rmr)
{
	int c = rmr->class;

	mutex_lock(&reg->lock);
	if (rmr->keys < NDK_REG_MR_KEYS &&
	    reg->pooled[c] < ndk_reg_class_pool(c, reg->max_pages)) {
		list_add(&rmr->entry, &reg->pool[c]);
		reg->pooled[c]++;
		rmr = NULL;
	}
	mutex_unlock(&reg->lock);
	if (rmr)
		ndk_reg_mr_free(rmr);
}

/**
 * ndk_reg_destroy() - free a PD's registration path (PD teardown)
 * @pd: the PD; none of its MRs is left
 *
 * Context: process context, may sleep.
 */
void ndk_reg_destroy(struct ndk_pd *pd)
{
	struct ndk_reg *reg = pd->reg;
	struct ndk_reg_mr *rmr, *tmp;
	int i;

	if (!reg)
		return;
	/* Nothing in flight; the credits go with @reg. */
	ndk_reg_take_credits(reg);
	for (i = 0; i < NDK_REG_CLASSES; i++)
		list_for_each_entry_safe(rmr, tmp, &reg->pool[i], entry)
			ndk_reg_mr_free(rmr);
	if (reg->iw)
		ndk_reg_iw_destroy(reg);
	else
		ib_destroy_qp(reg->qp);
	ib_free_cq(reg->cq);
	kfree(reg);
	pd->reg = NULL;
}
