// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_bench.ko: registration measures.
 *
 * F1  NdkFastRegister + NdkInvalidate pairs per second on a connected NDK
 *     QP vs raw ib_map_mr_sg + IB_WR_REG_MR + IB_WR_LOCAL_INV on a raw RC
 *     QP of the same depth; both keep depth/4 pairs in flight, the
 *     registration unsignalled (silent), the invalidation signalled, one
 *     post call per work request, completions polled by the measure.
 *     raw-sig signals the raw registration too: ndk.ko posts every work
 *     request signalled (and hides a silent one's completion), so this
 *     is the raw cost of what ndk.ko asks of the device.  floor is
 *     raw-sig plus the least any implementation of the two NDK calls
 *     must add (nb_fl_post()), written inline: the floor of the layer.
 *     floor-locked adds what ndk.ko's design takes per request to let
 *     flushes, closes and other CPUs' completions run beside the data
 *     path (struct nb_set): how far that design can come.  floor-lf is
 *     floor behind the three calls NDK has (register, invalidate, poll,
 *     each out of line and __noipa, so that the compiler does not
 *     specialize them on the loop's constant arguments either, as it
 *     cannot a consumer's) with the least exclusion a design without locks
 *     needs: each post in an RCU read section that a flush would wait
 *     for, after reading its flushed flag, and each poll claiming the CQ
 *     with one atomic operation against ndk.ko's own drains: how far
 *     any design can come.
 * R1  NdkRegisterMr / NdkDeregisterMr of an MDL (blocking) vs the raw
 *     kernel equivalent: build and DMA-map a scatter table, map it into
 *     a fast-register MR, post REG_MR and wait; LOCAL_INV, wait, unmap.
 *     "raw" keeps one MR per size (as ndk.ko pools them), "raw-alloc"
 *     allocates and frees the MR with each registration.  Sizes of 512
 *     pages and more are huge-page MDLs (2 MiB-contiguous chunks) that
 *     the raw side maps with 2 MiB pages; "raw" is handed the chunks,
 *     "raw-mdl" (MR kept) the same MDL as NdkRegisterMr, and finds the
 *     chunks in it itself, reading every page pointer once.  "raw-bh"
 *     (MR kept) posts with bottom halves off, as ndk.ko's registration
 *     QP does: rxe then runs the request and its completion in
 *     local_bh_enable(), in the posting thread, instead of waking
 *     ksoftirqd, so the wait usually finds the completion in.
 * W1  NdkBind + NdkInvalidate of a window over a sub-range of a
 *     registered MR vs NdkFastRegister + NdkInvalidate of the same
 *     sub-range (same loop as F1), vs NdkRegisterMr + NdkDeregisterMr of
 *     the sub-range (a full re-registration).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/bottom_half.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "ndk_bench.h"

/* Samples per variant and round of the throughput measures. */
#define NB_BATCHES	8

#define NB_FR_FLAGS	(NDK_OP_FLAG_ALLOW_REMOTE_READ | \
			 NDK_OP_FLAG_ALLOW_REMOTE_WRITE)
#define NB_IB_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

enum nb_kind { NB_FR, NB_BIND };

/**
 * struct nb_slot - one registration object kept in flight
 * @cqe:   raw: the completion entry of its invalidation (and of an
 *         unsignalled registration that fails)
 * @reg_cqe: raw-sig: the completion entry of its signalled registration
 * @set:   raw: the set it belongs to
 * @ibmr:  raw: the fast-register MR
 * @mr:    NDK: the fast-register MR (NB_FR)
 * @mw:    NDK: the window (NB_BIND)
 * @fstate: floor: the registration's state (NB_FL_*)
 * @busy:  registered, its invalidation not yet completed
 */
struct nb_slot {
	struct ib_cqe cqe;
	struct ib_cqe reg_cqe;
	struct nb_set *set;
	struct ib_mr *ibmr;
	struct ndk_mr *mr;
	struct ndk_mw *mw;
	int fstate;
	bool busy;
};

/*
 * The floors of F1: inline, with ndk.ko's locks and counts (floor-locked),
 * out of line with the least exclusion (floor-lf).
 */
enum nb_fl_mode { NB_FL_INLINE, NB_FL_LOCKED, NB_FL_LF };

/* floor: the states of a registration (ndk.ko's NDK_FR_*). */
enum { NB_FL_FREE, NB_FL_VALID, NB_FL_INVALIDATING };

/* floor: entries of its request ring (above F1's 2 × depth/4 in flight). */
#define NB_FL_RING	128

/**
 * struct nb_fl_req - floor: one claimed request, found by its wr_id
 * @ctx:    the request context its result reports
 * @slot:   the registration it registers or invalidates
 * @type:   NDK_OPERATION_TYPE_FAST_REGISTER or _INVALIDATE
 * @silent: no result when it succeeds
 * @busy:   claimed, not completed
 */
struct nb_fl_req {
	void *ctx;
	u32 slot;
	u16 type;
	bool silent;
	bool busy;
};

/**
 * struct nb_set - what one throughput loop registers, NDK and raw
 * @f:      the fixture
 * @kind:   fast-register or bind (NDK only)
 * @pages:  pages of the registration
 * @len:    its bytes
 * @nslots: registrations in flight
 * @slot:   the NDK slots
 * @rslot:  the raw slots
 * @mem:    vmalloc'ed pages
 * @mdl:    NDK: one MDL over @mem
 * @lam:    NDK: its logical address mapping
 * @parent: NDK bind: the MR registered over @mem the windows bind into
 * @sgt:    raw: a scatter table over @mem, DMA-mapped
 * @nents:  raw: its mapped entries
 * @done:   raw: completions seen
 * @status: raw: the first failed completion's status
 * @sig_reg: raw: signal the registration too (variant raw-sig: a
 *          completion per work request, as NDK's QPs post them)
 * @fsg:    floor: the scatter list loaded from the LAM's page array
 * @fring:  floor: its request ring
 * @fprod:  floor: requests claimed
 * @fmode:  which floor (NB_FL_*); NB_FL_LOCKED takes per request a CQ
 *          reservation (@freserved), a reference (@fref) and an
 *          outstanding count (@foutstanding), the claim and the post in
 *          a send-queue lock section (@fsq_lock), each poll and its
 *          translation in a CQ lock section (@fcq_lock), both with
 *          interrupts off: ndk.ko's sq_lock and CQ lock, its reference
 *          on the registration's owner, ndk_cq_reserve() and
 *          sq_outstanding
 * @fsq_lock: floor-locked: the send queue's lock
 * @fcq_lock: floor-locked: the CQ's lock
 * @freserved: floor-locked: results reserved in the CQ
 * @fref:   floor-locked: references the requests hold
 * @foutstanding: floor-locked: requests posted, not completed
 * @fpolling: floor-lf: the CQ claimed by a poll
 * @fflushed: floor-lf: the QP flushed (never set: the read is the cost)
 */
struct nb_set {
	struct nb_fix *f;
	enum nb_kind kind;
	u32 pages;
	u32 len;
	u32 nslots;
	struct nb_slot *slot;
	struct nb_slot *rslot;
	void *mem;
	struct ndk_mdl *mdl;
	struct ndk_logical_address_mapping *lam;
	struct ndk_mr *parent;
	struct sg_table *sgt;
	int nents;
	u32 done;
	enum ib_wc_status status;
	bool sig_reg;
	struct scatterlist *fsg;
	struct nb_fl_req *fring;
	u32 fprod;
	enum nb_fl_mode fmode;
	spinlock_t fsq_lock; /* floor-locked: the send queue's */
	spinlock_t fcq_lock; /* floor-locked: the CQ's */
	atomic_t freserved;
	atomic_t fref;
	atomic_t foutstanding;
	atomic_t fpolling;
	bool fflushed;
};

/* Let the softirq work rxe queued on this CPU (its tasklets) run now. */
static void nb_run_softirqs(void)
{
	local_bh_disable();
	local_bh_enable();
}

static void nb_set_free(struct nb_set *s)
{
	u32 i;

	if (!s->f)
		return;

	for (i = 0; s->slot && i < s->nslots; i++) {
		if (s->slot[i].mr)
			ndk_close_mr(s->slot[i].mr, NULL, NULL);
		if (s->slot[i].mw)
			ndk_close_mw(s->slot[i].mw, NULL, NULL);
	}
	for (i = 0; s->rslot && i < s->nslots; i++)
		if (s->rslot[i].ibmr)
			ib_dereg_mr(s->rslot[i].ibmr);
	if (s->parent)
		ndk_close_mr(s->parent, NULL, NULL);
	if (s->lam && s->lam->adapter_page_count)
		ndk_release_lam(s->f->adapter, s->lam);
	kfree(s->lam);
	ndk_mdl_free_chain(s->mdl);
	if (s->nents)
		ib_dma_unmap_sg(s->f->ibdev, s->sgt->sgl, s->sgt->orig_nents,
				DMA_BIDIRECTIONAL);
	nb_sgt_free(s->sgt);
	vfree(s->mem);
	kfree(s->slot);
	kfree(s->rslot);
	kfree(s->fsg);
	kfree(s->fring);
	memset(s, 0, sizeof(*s));
}

/*
 * @pages pages registered @nslots times at once: NDK fast-register MRs
 * (or windows over a registered parent MR of @parent_pages pages) and raw
 * fast-register MRs over the same pages.
 */
static int nb_set_init(struct nb_set *s, struct nb_fix *f, enum nb_kind kind,
		       u32 pages, u32 nslots, u32 parent_pages)
{
	u32 i, size, fbo, mem_pages = max(pages, parent_pages);

	memset(s, 0, sizeof(*s));
	s->f = f;
	s->kind = kind;
	s->pages = pages;
	s->len = pages * PAGE_SIZE;
	s->nslots = nslots;
	s->slot = kcalloc(nslots, sizeof(*s->slot), GFP_KERNEL);
	s->rslot = kcalloc(nslots, sizeof(*s->rslot), GFP_KERNEL);
	s->mem = vzalloc((size_t)mem_pages * PAGE_SIZE);
	s->fsg = kcalloc(pages, sizeof(*s->fsg), GFP_KERNEL);
	s->fring = kcalloc(NB_FL_RING, sizeof(*s->fring), GFP_KERNEL);
	if (!s->slot || !s->rslot || !s->mem || !s->fsg || !s->fring)
		return -ENOMEM;
	sg_init_table(s->fsg, pages);
	spin_lock_init(&s->fsq_lock);
	spin_lock_init(&s->fcq_lock);

	/* NDK: the MDL and LAM of the registered range. */
	s->mdl = ndk_mdl_from_buffer(s->mem, s->len, GFP_KERNEL);
	size = struct_size(s->lam, adapter_page_array, pages);
	s->lam = kzalloc(size, GFP_KERNEL);
	if (!s->mdl || !s->lam)
		return -ENOMEM;
	if (ndk_build_lam(f->adapter, s->mdl, s->len, NULL, NULL, s->lam,
			  &size, &fbo))
		return -EIO;
	if (kind == NB_BIND) {
		struct ndk_mdl *pmdl;
		s32 st;

		pmdl = ndk_mdl_from_buffer(s->mem,
					   parent_pages * PAGE_SIZE,
					   GFP_KERNEL);
		if (!pmdl)
			return -ENOMEM;
		st = ndk_create_mr(f->pd, false, NULL, NULL, &s->parent);
		if (!st)
			st = ndk_register_mr(s->parent, pmdl,
					     parent_pages * PAGE_SIZE,
					     NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
					     NDK_MR_FLAG_ALLOW_REMOTE_READ,
					     NULL, NULL);
		ndk_mdl_free_chain(pmdl);
		if (st) {
			nb_out("E parent MR: status %#x", st);
			return -EIO;
		}
	}
	for (i = 0; i < nslots; i++) {
		s32 st;

		if (kind == NB_BIND) {
			st = ndk_create_mw(f->pd, NULL, NULL, &s->slot[i].mw);
		} else {
			st = ndk_create_mr(f->pd, true, NULL, NULL,
					   &s->slot[i].mr);
			if (!st)
				st = ndk_initialize_fast_register_mr(s->slot[i].mr,
								     pages, true,
								     NULL, NULL);
		}
		if (st) {
			nb_out("E NDK MR/MW %u: status %#x", i, st);
			return -EIO;
		}
	}

	/* Raw: the same pages, DMA-mapped once, and one MR per slot. */
	s->sgt = nb_sgt_from_vmalloc(s->mem, pages);
	if (!s->sgt)
		return -ENOMEM;
	s->nents = ib_dma_map_sg(f->ibdev, s->sgt->sgl, s->sgt->orig_nents,
				 DMA_BIDIRECTIONAL);
	if (!s->nents)
		return -ENOMEM;
	for (i = 0; i < nslots; i++) {
		struct ib_mr *mr = ib_alloc_mr(f->ibpd, IB_MR_TYPE_MEM_REG,
					       pages);

		if (IS_ERR(mr))
			return PTR_ERR(mr);
		s->rslot[i].ibmr = mr;
		s->rslot[i].set = s;
	}
	return 0;
}

/* NDK: post the registration (silent) and its invalidation of slot @i. */
static s32 nb_ndk_post(struct nb_set *s, u32 i)
{
	struct ndk_qp *qp = s->f->qp[0];
	struct nb_slot *sl = &s->slot[i];
	void *ctx = (void *)(uintptr_t)(i + 1);
	s32 st;

	if (s->kind == NB_BIND) {
		st = ndk_bind(qp, NULL, s->parent, sl->mw, s->mem, s->len,
			      NB_FR_FLAGS | NDK_OP_FLAG_SILENT_SUCCESS);
		if (!st)
			st = ndk_invalidate(qp, ctx,
					    (struct ndk_object_header *)sl->mw,
					    0);
		return st;
	}
	st = ndk_fast_register(qp, NULL, sl->mr, s->lam->adapter_page_count,
			       s->lam->adapter_page_array, 0, s->len,
			       (void *)(uintptr_t)NB_BASE,
			       NB_FR_FLAGS | NDK_OP_FLAG_SILENT_SUCCESS);
	if (!st)
		st = ndk_invalidate(qp, ctx, (struct ndk_object_header *)sl->mr,
				    0);
	return st;
}

static void nb_raw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nb_slot *sl = container_of(wc->wr_cqe, struct nb_slot, cqe);
	struct nb_set *s = sl->set;

	if (wc->status != IB_WC_SUCCESS) {
		if (s->status == IB_WC_SUCCESS)
			s->status = wc->status;
		return;
	}
	sl->busy = false;
	s->done++;
}

static void nb_raw_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nb_slot *sl = container_of(wc->wr_cqe, struct nb_slot, reg_cqe);

	if (wc->status != IB_WC_SUCCESS && sl->set->status == IB_WC_SUCCESS)
		sl->set->status = wc->status;
}

/* Raw and floor: @reg, its completion and signalling set, for @mr. */
static __always_inline void nb_fill_reg(struct ib_mr *mr,
					struct ib_reg_wr *reg)
{
	reg->wr.opcode = IB_WR_REG_MR;
	reg->mr = mr;
	reg->key = mr->rkey;
	reg->access = NB_IB_ACCESS;
}

/* Raw: map, post REG_MR (unsignalled) and LOCAL_INV of slot @i. */
static int nb_raw_post(struct nb_set *s, u32 i)
{
	struct nb_slot *sl = &s->rslot[i];
	struct ib_mr *mr = sl->ibmr;
	struct ib_reg_wr reg = {};
	struct ib_send_wr inv = {};
	int n, ret;

	n = ib_map_mr_sg(mr, s->sgt->sgl, s->nents, NULL, PAGE_SIZE);
	if (n != s->nents)
		return n < 0 ? n : -EINVAL;
	mr->iova = NB_BASE;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	sl->cqe.done = nb_raw_done;
	sl->reg_cqe.done = nb_raw_reg_done;
	reg.wr.wr_cqe = s->sig_reg ? &sl->reg_cqe : &sl->cqe;
	reg.wr.send_flags = s->sig_reg ? IB_SEND_SIGNALED : 0;
	nb_fill_reg(mr, &reg);
	ret = ib_post_send(s->f->dqp, &reg.wr, NULL);
	if (ret)
		return ret;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.wr_cqe = &sl->cqe;
	inv.ex.invalidate_rkey = mr->rkey;
	return ib_post_send(s->f->dqp, &inv, NULL);
}

/* Raw: @ops register + invalidate pairs, nslots in flight. */
static int nb_raw_pairs(struct nb_set *s, u32 ops)
{
	unsigned long end = jiffies + NB_TIMEOUT;
	u32 posted = 0, i;
	int ret;

	s->done = 0;
	while (s->done < ops) {
		for (i = 0; i < s->nslots && posted < ops; i++) {
			if (s->rslot[i].busy)
				continue;
			ret = nb_raw_post(s, i);
			if (ret) {
				nb_out("E raw post: %d", ret);
				return ret;
			}
			s->rslot[i].busy = true;
			posted++;
		}
		if (!ib_process_cq_direct(s->f->dcq, 16)) {
			if (time_after(jiffies, end)) {
				nb_out("E raw pairs: timeout");
				return -ETIMEDOUT;
			}
			nb_run_softirqs();
		}
		if (s->status != IB_WC_SUCCESS) {
			nb_out("E raw completion: %s",
			       ib_wc_status_msg(s->status));
			return -EIO;
		}
	}
	return 0;
}

/*
 * floor: claim the next entry of the request ring for @type on slot @i;
 * its index is the work request's wr_id.  -ENOSPC when it is still busy.
 */
static int nb_fl_claim(struct nb_set *s, u32 i, void *ctx, u16 type,
		       bool silent, u64 *wr_id)
{
	u32 idx = s->fprod % NB_FL_RING;
	struct nb_fl_req *e = &s->fring[idx];

	if (e->busy)
		return -ENOSPC;
	e->ctx = ctx;
	e->slot = i;
	e->type = type;
	e->silent = silent;
	e->busy = true;
	s->fprod++;
	*wr_id = idx;
	return 0;
}

/* floor-locked: a request's CQ reservation and its reference. */
static __always_inline int nb_fl_take(struct nb_set *s)
{
	int cur = atomic_read(&s->freserved);

	do {
		if (cur >= NB_FL_RING)
			return -ENOSPC;
	} while (!atomic_try_cmpxchg(&s->freserved, &cur, cur + 1));
	atomic_inc(&s->fref);
	return 0;
}

/*
 * floor: claim a ring entry for @wr and post it; floor-locked takes what
 * ndk.ko's design takes per request too (struct nb_set).
 */
static __always_inline int nb_fl_submit(struct nb_set *s, u32 i, void *ctx,
					u16 type, bool silent,
					struct ib_send_wr *wr)
{
	unsigned long flags = 0;
	int ret;

	if (s->fmode == NB_FL_LOCKED) {
		ret = nb_fl_take(s);
		if (ret)
			return ret;
		spin_lock_irqsave(&s->fsq_lock, flags);
		atomic_inc(&s->foutstanding);
	}
	ret = nb_fl_claim(s, i, ctx, type, silent, &wr->wr_id);
	if (!ret)
		ret = ib_post_send(s->f->dqp, wr, NULL);
	if (s->fmode == NB_FL_LOCKED)
		spin_unlock_irqrestore(&s->fsq_lock, flags);
	return ret;
}

/*
 * floor: what NdkFastRegister (silent) of slot @i must do at the least on
 * top of raw-sig's work request: its argument checks, the registration's
 * state moved with one cmpxchg, its page list loaded from the consumer's
 * page array, a ring entry claimed.  No lock, no reference, no CQ
 * reservation, no counter and no tracepoint: one thread, one QP.
 */
static __always_inline int nb_fl_register(struct nb_set *s, u32 i)
{
	const u64 *pa = s->lam->adapter_page_array;
	u32 n = s->lam->adapter_page_count, k;
	struct ib_mr *mr = s->rslot[i].ibmr;
	struct ib_reg_wr reg = {};
	u64 bits = 0;

	if (!n || !pa || !s->len || s->len > (u64)n << PAGE_SHIFT)
		return -EINVAL;
	for (k = 0; k < n; k++)
		bits |= pa[k];
	if (bits & ~PAGE_MASK)
		return -EINVAL;
	if (cmpxchg(&s->rslot[i].fstate, NB_FL_FREE, NB_FL_VALID) !=
	    NB_FL_FREE)
		return -EBUSY;
	for (k = 0; k < n; k++) {
		sg_dma_address(&s->fsg[k]) = pa[k];
		sg_dma_len(&s->fsg[k]) = PAGE_SIZE;
	}
	if (ib_map_mr_sg(mr, s->fsg, n, NULL, PAGE_SIZE) != n)
		return -EINVAL;
	mr->iova = NB_BASE;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg.wr.send_flags = IB_SEND_SIGNALED;
	nb_fill_reg(mr, &reg);
	return nb_fl_submit(s, i, NULL, NDK_OPERATION_TYPE_FAST_REGISTER, true,
			    &reg.wr);
}

/* floor: the same for NdkInvalidate of slot @i, reported by its result. */
static __always_inline int nb_fl_invalidate(struct nb_set *s, u32 i)
{
	struct ib_send_wr inv = {};

	if (cmpxchg(&s->rslot[i].fstate, NB_FL_VALID, NB_FL_INVALIDATING) !=
	    NB_FL_VALID)
		return -EINVAL;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.ex.invalidate_rkey = s->rslot[i].ibmr->rkey;
	return nb_fl_submit(s, i, (void *)(uintptr_t)(i + 1),
			    NDK_OPERATION_TYPE_INVALIDATE, false, &inv);
}

/* floor, floor-locked: both requests of slot @i, inline. */
static __always_inline int nb_fl_post(struct nb_set *s, u32 i)
{
	int ret = nb_fl_register(s, i);

	return ret ? ret : nb_fl_invalidate(s, i);
}

/*
 * floor-lf: NdkFastRegister (@reg) or NdkInvalidate as a call, the post
 * in an RCU read section a flush would wait for (synchronize_rcu()) after
 * it marked the QP flushed: then no post it missed is still running.
 */
static __noipa int nb_lf_call(struct nb_set *s, u32 i, bool reg)
{
	int ret = -ECANCELED;

	rcu_read_lock();
	if (!READ_ONCE(s->fflushed))
		ret = reg ? nb_fl_register(s, i) : nb_fl_invalidate(s, i);
	rcu_read_unlock();
	return ret;
}

static __always_inline int nb_lf_post(struct nb_set *s, u32 i)
{
	int ret = nb_lf_call(s, i, true);

	return ret ? ret : nb_lf_call(s, i, false);
}

/*
 * floor: poll up to ARRAY_SIZE(wc) completions, retire their ring
 * entries, move their registrations' state on and translate the ones
 * that report into @res; how many it wrote.  Out of line, as NDK's
 * poll is; floor-lf claims the CQ first, as a drain would.
 */
static __noipa u32 nb_fl_poll(struct nb_set *s, struct ndk_result *res)
{
	unsigned long flags = 0;
	struct ib_wc wc[16];
	struct nb_fl_req *e;
	u32 m = 0;
	int n, k;

	if (s->fmode == NB_FL_LOCKED)
		spin_lock_irqsave(&s->fcq_lock, flags);
	else if (s->fmode == NB_FL_LF &&
		 atomic_cmpxchg_acquire(&s->fpolling, 0, 1))
		return 0;
	n = ib_poll_cq(s->f->dcq, ARRAY_SIZE(wc), wc);
	for (k = 0; k < n; k++) {
		e = &s->fring[wc[k].wr_id % NB_FL_RING];
		if (e->type == NDK_OPERATION_TYPE_INVALIDATE &&
		    wc[k].status == IB_WC_SUCCESS)
			WRITE_ONCE(s->rslot[e->slot].fstate, NB_FL_FREE);
		if (!e->silent || wc[k].status != IB_WC_SUCCESS) {
			res[m].status = wc[k].status == IB_WC_SUCCESS ?
					STATUS_SUCCESS : STATUS_UNSUCCESSFUL;
			res[m].bytes_transferred = wc[k].byte_len;
			res[m].qp_context = NULL;
			res[m].request_context = e->ctx;
			m++;
		}
		e->busy = false;
		if (s->fmode == NB_FL_LOCKED) {
			atomic_dec(&s->foutstanding);
			atomic_dec(&s->fref);
		}
	}
	if (s->fmode == NB_FL_LOCKED) {
		if (n > 0)
			atomic_sub(n, &s->freserved);
		spin_unlock_irqrestore(&s->fcq_lock, flags);
	} else if (s->fmode == NB_FL_LF) {
		atomic_set_release(&s->fpolling, 0);
	}
	return m;
}

/*
 * NDK (or @floor, nb_fl_post()): @ops register + invalidate pairs, nslots
 * in flight, each slot reported by its invalidation's result.
 */
static int nb_result_pairs(struct nb_set *s, u32 ops, bool floor)
{
	const char *name = floor ? "floor" : "NDK";
	unsigned long end = jiffies + NB_TIMEOUT;
	u32 posted = 0, done = 0, i, k, n;
	struct ndk_result res[16];
	s32 st;

	while (done < ops) {
		for (i = 0; i < s->nslots && posted < ops; i++) {
			if (s->slot[i].busy)
				continue;
			if (!floor)
				st = nb_ndk_post(s, i);
			else if (s->fmode != NB_FL_LF)
				st = nb_fl_post(s, i);
			else
				st = nb_lf_post(s, i);
			if (st) {
				nb_out("E %s post: %#x", name, st);
				return -EIO;
			}
			s->slot[i].busy = true;
			posted++;
		}
		n = floor ? nb_fl_poll(s, res) :
			    ndk_get_cq_results(s->f->cq[0], res,
					       ARRAY_SIZE(res));
		for (k = 0; k < n; k++) {
			i = (uintptr_t)res[k].request_context - 1;
			if (res[k].status || i >= s->nslots) {
				nb_out("E %s result: status %#x", name,
				       res[k].status);
				return -EIO;
			}
			s->slot[i].busy = false;
			done++;
		}
		if (!n) {
			if (time_after(jiffies, end)) {
				nb_out("E %s pairs: timeout", name);
				return -ETIMEDOUT;
			}
			nb_run_softirqs();
		}
	}
	return 0;
}

static int nb_ndk_pairs(struct nb_set *s, u32 ops)
{
	return nb_result_pairs(s, ops, false);
}

/* Calibration: a call the compiler cannot inline. */
static noinline void nb_cal_call(int *x)
{
	WRITE_ONCE(*x, *x + 1);
}

/*
 * Calibration samples (measure F1-cal): what one function call, one
 * atomic operation, one interrupt-disabled section, one spinlock section
 * and one spinlock section with interrupts off cost in this boot, each
 * a loop of @n with the empty loop's cost left in.  They price the
 * steps an F1 pair takes beyond the floor (performance.md, "F1").
 */
static void nb_cal(u32 round)
{
	static const char * const name[] = {
		"call", "atomic", "irqsave", "spin", "spin-irqsave"
	};
	static DEFINE_SPINLOCK(lock);
	atomic_t a = ATOMIC_INIT(0);
	const u32 n = 100000;
	unsigned long flags;
	u32 i, v;
	int x = 0;
	u64 t0;

	for (v = 0; v < ARRAY_SIZE(name); v++) {
		t0 = ktime_get_ns();
		for (i = 0; i < n; i++) {
			switch (v) {
			case 0:
				nb_cal_call(&x);
				break;
			case 1:
				atomic_inc(&a);
				break;
			case 2:
				local_irq_save(flags);
				local_irq_restore(flags);
				break;
			case 3:
				spin_lock(&lock);
				spin_unlock(&lock);
				break;
			default:
				spin_lock_irqsave(&lock, flags);
				spin_unlock_irqrestore(&lock, flags);
				break;
			}
		}
		nb_sample("F1-cal", name[v], 0, round, ktime_get_ns() - t0, n);
	}
}

/*
 * One round of F1: NB_BATCHES samples of each variant, the order rotating:
 * ndk, raw (registration unsignalled), raw-sig (both signalled), floor
 * (raw-sig plus the least bookkeeping NDK's contract needs), floor-locked
 * (floor plus ndk.ko's locks, reference and counts) and floor-lf (floor
 * out of line with the least exclusion a design without locks needs).
 */
static int nb_pairs_round(struct nb_env *env, struct nb_set *s, u32 round)
{
	static const char * const name[] = {
		"ndk", "raw", "raw-sig", "floor", "floor-locked", "floor-lf"
	};
	u32 ops = max(1U, env->iters / NB_BATCHES);
	int b, k, v, ret;
	u64 t0;

	for (b = 0; b < NB_BATCHES; b++) {
		for (k = 0; k < ARRAY_SIZE(name); k++) {
			v = (k + round + b) % ARRAY_SIZE(name);
			s->sig_reg = v == 2;
			s->fmode = v == 4 ? NB_FL_LOCKED :
				   v == 5 ? NB_FL_LF : NB_FL_INLINE;
			t0 = ktime_get_ns();
			if (v == 1 || v == 2)
				ret = nb_raw_pairs(s, ops);
			else
				ret = nb_result_pairs(s, ops, v >= 3);
			if (ret)
				return ret;
			nb_sample("F1", name[v], s->pages, round,
				  ktime_get_ns() - t0, ops);
		}
	}
	return 0;
}

/**
 * nb_f1() - F1: fast-register + invalidate pairs, NDK vs raw ib_core
 * @env: the run; sizes= in pages
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int nb_f1(struct nb_env *env)
{
	struct nb_fix f;
	struct nb_set s;
	u32 p, r;
	int ret;

	ret = nb_fix_open(env, &f, true);
	nb_out("I inflight %u", env->depth / 4);
	for (r = 0; !ret && r < env->rounds; r++)
		nb_cal(r);
	for (p = 0; !ret && p < env->nparams; p++) {
		if (env->params[p] > f.info.frmr_page_count) {
			nb_out("E F1 %u pages: above FRMRPageCount %u",
			       env->params[p], f.info.frmr_page_count);
			ret = -EINVAL;
			break;
		}
		ret = nb_set_init(&s, &f, NB_FR, env->params[p],
				  env->depth / 4, 0);
		/* Warm-up: one untimed batch of each. */
		if (!ret)
			ret = nb_ndk_pairs(&s, s.nslots * 2);
		if (!ret)
			ret = nb_raw_pairs(&s, s.nslots * 2);
		if (!ret)
			ret = nb_result_pairs(&s, s.nslots * 2, true);
		for (r = 0; !ret && r < env->rounds; r++)
			ret = nb_pairs_round(env, &s, r);
		nb_set_free(&s);
	}
	nb_fix_close(&f);
	return ret;
}

/* --- R1: NdkRegisterMr / NdkDeregisterMr vs raw ib_core ------------------- */

/**
 * struct nb_rawreg - the raw kernel registration of R1
 * @cqe:    completion entry of its work requests
 * @done:   completed by each
 * @status: the last completion's status
 * @mr:     the fast-register MR (kept for "raw", per call for "raw-alloc")
 * @sgt:    the scatter table built per registration
 * @bh:     post with bottom halves off ("raw-bh")
 */
struct nb_rawreg {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
	struct ib_mr *mr;
	struct sg_table sgt;
	bool bh;
};

static void nb_rawreg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nb_rawreg *rr = container_of(wc->wr_cqe, struct nb_rawreg, cqe);

	rr->status = wc->status;
	complete(&rr->done);
}

static int nb_rawreg_post(struct nb_fix *f, struct nb_rawreg *rr,
			  struct ib_send_wr *wr)
{
	int ret;

	reinit_completion(&rr->done);
	wr->wr_cqe = &rr->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	if (rr->bh)
		local_bh_disable();
	ret = ib_post_send(f->iqp, wr, NULL);
	if (rr->bh)
		local_bh_enable();
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&rr->done, NB_TIMEOUT))
		return -ETIMEDOUT;
	return rr->status == IB_WC_SUCCESS ? 0 : -EIO;
}

/*
 * Raw registration of @nent entries of @ent_size bytes each (@ent[i] the
 * first page of each, physically contiguous) at the iova @va, mapped
 * with @ent_size pages: 4 KiB pages, or 2 MiB chunks for the huge-page
 * sizes.
 */
static int nb_rawreg_register(struct nb_fix *f, struct nb_rawreg *rr,
			      struct page **ent, u32 nent, u32 ent_size,
			      u64 va, bool alloc)
{
	struct ib_reg_wr wr = {};
	struct scatterlist *sg;
	int nents, ret;
	u32 i;

	if (alloc) {
		rr->mr = ib_alloc_mr(f->ibpd, IB_MR_TYPE_MEM_REG, nent);
		if (IS_ERR(rr->mr))
			return PTR_ERR(rr->mr);
	}
	ret = sg_alloc_table(&rr->sgt, nent, GFP_KERNEL);
	if (ret)
		goto err_mr;
	for_each_sg(rr->sgt.sgl, sg, nent, i)
		sg_set_page(sg, ent[i], ent_size, 0);
	nents = ib_dma_map_sg(f->ibdev, rr->sgt.sgl, nent, DMA_BIDIRECTIONAL);
	if (!nents) {
		ret = -ENOMEM;
		goto err_table;
	}
	if (ib_map_mr_sg(rr->mr, rr->sgt.sgl, nents, NULL, ent_size) !=
	    nents) {
		ret = -EINVAL;
		goto err_unmap;
	}
	rr->mr->iova = va;
	ib_update_fast_reg_key(rr->mr, ib_inc_rkey(rr->mr->rkey));
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = rr->mr;
	wr.key = rr->mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE;
	ret = nb_rawreg_post(f, rr, &wr.wr);
	if (ret)
		goto err_unmap;
	return 0;

err_unmap:
	ib_dma_unmap_sg(f->ibdev, rr->sgt.sgl, nent, DMA_BIDIRECTIONAL);
err_table:
	sg_free_table(&rr->sgt);
err_mr:
	if (alloc) {
		if (!IS_ERR(rr->mr))
			ib_dereg_mr(rr->mr);
		rr->mr = NULL;
	}
	return ret;
}

static int nb_rawreg_deregister(struct nb_fix *f, struct nb_rawreg *rr,
				u32 nent, bool alloc)
{
	struct ib_send_wr wr = {};
	int ret;

	wr.opcode = IB_WR_LOCAL_INV;
	wr.ex.invalidate_rkey = rr->mr->lkey;
	ret = nb_rawreg_post(f, rr, &wr);
	ib_dma_unmap_sg(f->ibdev, rr->sgt.sgl, nent, DMA_BIDIRECTIONAL);
	sg_free_table(&rr->sgt);
	if (alloc) {
		ib_dereg_mr(rr->mr);
		rr->mr = NULL;
	}
	return ret;
}

/* R1's huge-page MDLs: 2 MiB chunks (order 9 on 4 KiB pages). */
#define NB_HUGE_SIZE	SZ_2M
#define NB_HUGE_ORDER	get_order(NB_HUGE_SIZE)
#define NB_HUGE_PAGES	(NB_HUGE_SIZE >> PAGE_SHIFT)
/* Their MDL's virtual address (an index), 2 MiB-aligned. */
#define NB_HUGE_VA	(64ULL << 30)

/**
 * struct nb_r1_buf - what R1 registers at one size
 * @pages:    4 KiB pages
 * @mem:      up to 511 pages: vmalloc'ed
 * @chunk:    huge sizes: the 2 MiB chunks (alloc_pages() of order 9)
 * @nchunks:  entries of @chunk
 * @mdl:      the MDL chain: one element over @mem, or one per chunk
 * @ent:      the raw registration's entries: @mdl's pages, or @chunk
 * @nent:     entries of @ent
 * @ent_size: bytes per entry (PAGE_SIZE or NB_HUGE_SIZE)
 * @found:    huge sizes: the chunks "raw-mdl" finds in @mdl (@nent)
 */
struct nb_r1_buf {
	u32 pages;
	void *mem;
	struct page **chunk;
	u32 nchunks;
	struct ndk_mdl *mdl;
	struct page **ent;
	u32 nent;
	u32 ent_size;
	struct page **found;
};

static void nb_r1_buf_free(struct nb_r1_buf *b)
{
	u32 i;

	ndk_mdl_free_chain(b->mdl);
	for (i = 0; b->chunk && i < b->nchunks; i++)
		if (b->chunk[i])
			__free_pages(b->chunk[i], NB_HUGE_ORDER);
	kvfree(b->chunk);
	kvfree(b->found);
	vfree(b->mem);
	memset(b, 0, sizeof(*b));
}

/*
 * The buffer of @pages pages: vmalloc'ed below 512 pages, else (a
 * multiple of 512) an MDL chain of 2 MiB-contiguous chunks at consecutive
 * 2 MiB-aligned virtual addresses, one element per chunk, which an engine
 * mapping with the largest page size the layout allows registers as
 * @pages / 512 huge pages.  -ENOSPC: the chunks could not be allocated.
 */
static int nb_r1_buf_init(struct nb_r1_buf *b, u32 pages)
{
	struct ndk_mdl **tail;
	u32 i;

	memset(b, 0, sizeof(*b));
	b->pages = pages;
	if (pages < NB_HUGE_PAGES) {
		b->mem = vzalloc((size_t)pages * PAGE_SIZE);
		b->mdl = b->mem ? ndk_mdl_from_buffer(b->mem,
						      pages * PAGE_SIZE,
						      GFP_KERNEL) : NULL;
		if (!b->mdl)
			return -ENOMEM;
		b->ent = b->mdl->pages;
		b->nent = pages;
		b->ent_size = PAGE_SIZE;
		return 0;
	}
	if (pages % NB_HUGE_PAGES)
		return -EINVAL;
	b->nchunks = pages / NB_HUGE_PAGES;
	b->chunk = kvcalloc(b->nchunks, sizeof(*b->chunk), GFP_KERNEL);
	b->found = kvcalloc(b->nchunks, sizeof(*b->found), GFP_KERNEL);
	if (!b->chunk || !b->found)
		return -ENOMEM;
	tail = &b->mdl;
	for (i = 0; i < b->nchunks; i++) {
		u32 k;

		b->chunk[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN |
					  __GFP_NORETRY, NB_HUGE_ORDER);
		if (!b->chunk[i])
			return -ENOSPC;
		*tail = ndk_mdl_alloc(NB_HUGE_VA + (u64)i * NB_HUGE_SIZE,
				      NB_HUGE_SIZE, GFP_KERNEL);
		if (!*tail)
			return -ENOMEM;
		for (k = 0; k < NB_HUGE_PAGES; k++)
			(*tail)->pages[k] = b->chunk[i] + k;
		tail = &(*tail)->next;
	}
	b->ent = b->chunk;
	b->nent = b->nchunks;
	b->ent_size = NB_HUGE_SIZE;
	return 0;
}

/*
 * raw-mdl: what a raw consumer handed @b's MDL does to map it with 2 MiB
 * pages: check that each element is one 2 MiB-aligned, physically
 * contiguous chunk (every page pointer read once) and collect the chunks.
 */
static int nb_r1_find_chunks(struct nb_r1_buf *b)
{
	const struct ndk_mdl *m;
	u32 n = 0, k;

	for (m = b->mdl; m; m = m->next) {
		if (n == b->nent || m->page_count != NB_HUGE_PAGES ||
		    page_to_pfn(m->pages[0]) % NB_HUGE_PAGES)
			return -EINVAL;
		for (k = 1; k < NB_HUGE_PAGES; k++)
			if (m->pages[k] != nth_page(m->pages[0], k))
				return -EINVAL;
		b->found[n++] = m->pages[0];
	}
	return n == b->nent ? 0 : -EINVAL;
}

/* Variants of R1: huge sizes also raw-mdl. */
static int nb_r1_variants(const struct nb_r1_buf *b)
{
	return b->ent_size == PAGE_SIZE ? 4 : 5;
}

/* One R1 sample pair (register, deregister) of variant @v. */
static int nb_r1_once(struct nb_fix *f, struct ndk_mr *mr,
		      struct nb_r1_buf *b, struct nb_rawreg *rr, int v,
		      u32 round)
{
	struct nb_rawreg *r = &rr[v == 2];
	static const char * const name[] = {
		"ndk", "raw", "raw-alloc", "raw-bh", "raw-mdl"
	};
	struct page **ent = b->ent;
	u64 t0, t1, t2;
	s32 st;
	int ret;

	t0 = ktime_get_ns();
	if (v == 0) {
		st = ndk_register_mr(mr, b->mdl, (size_t)b->pages * PAGE_SIZE,
				     NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
		t1 = ktime_get_ns();
		if (!st)
			st = ndk_deregister_mr(mr, NULL, NULL);
		ret = st ? -EIO : 0;
		if (st)
			nb_out("E R1 NDK: status %#x", st);
	} else {
		ret = 0;
		r->bh = v == 3;
		if (v == 4) {
			ent = b->found;
			ret = nb_r1_find_chunks(b);
		}
		if (!ret)
			ret = nb_rawreg_register(f, r, ent, b->nent,
						 b->ent_size,
						 ndk_mdl_virtual_address(b->mdl),
						 v == 2);
		t1 = ktime_get_ns();
		if (!ret)
			ret = nb_rawreg_deregister(f, r, b->nent, v == 2);
		if (ret)
			nb_out("E R1 raw: %d", ret);
	}
	t2 = ktime_get_ns();
	if (ret || round == U32_MAX)	/* U32_MAX: warm-up, not recorded */
		return ret;
	nb_sample("R1-reg", name[v], b->pages, round, t1 - t0, 1);
	nb_sample("R1-dereg", name[v], b->pages, round, t2 - t1, 1);
	return 0;
}

/*
 * Whether NdkRegisterMr takes a huge-page MDL of @b at all: a build whose
 * engine maps 4 KiB pages only refuses it (STATUS_INVALID_PARAMETER,
 * more pages than one MR maps).  That is reported as a line
 * "U R1 <pages> ..." (not supported by this build), not as an error.
 */
static bool nb_r1_supported(struct ndk_mr *mr, struct nb_r1_buf *b)
{
	s32 st;

	if (b->ent_size == PAGE_SIZE)
		return true;
	st = ndk_register_mr(mr, b->mdl, (size_t)b->pages * PAGE_SIZE,
			     NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
	if (st == STATUS_INVALID_PARAMETER) {
		nb_out("U R1 %u %u x 2 MiB chunks: STATUS_INVALID_PARAMETER",
		       b->pages, b->nchunks);
		return false;
	}
	if (!st)
		st = ndk_deregister_mr(mr, NULL, NULL);
	if (st)
		nb_out("E R1 NDK %u pages (%u x 2 MiB): status %#x", b->pages,
		       b->nchunks, st);
	return !st;
}

/**
 * nb_r1() - R1: NdkRegisterMr / NdkDeregisterMr vs raw ib_core
 * @env: the run; sizes= in pages: below 512 a vmalloc'ed buffer of 4 KiB
 *       pages; a multiple of 512 above that an MDL chain of 2 MiB chunks
 *       (huge-page MDLs, up to 512 x 2 MiB)
 *
 * A huge size NdkRegisterMr refuses with STATUS_INVALID_PARAMETER is
 * reported as not supported by this build and skipped; one whose 2 MiB
 * chunks cannot be allocated likewise ("U" lines).
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int nb_r1(struct nb_env *env)
{
	struct nb_rawreg rr[2] = {};	/* [0] raw (MR kept), [1] raw-alloc */
	struct ndk_mr *mr = NULL;
	struct nb_r1_buf b = {};
	struct nb_fix f;
	u32 p, r, i, pages;
	int v, n, ret;

	for (i = 0; i < 2; i++) {
		init_completion(&rr[i].done);
		rr[i].cqe.done = nb_rawreg_done;
	}
	ret = nb_fix_open(env, &f, false);
	if (!ret && ndk_create_mr(f.pd, false, NULL, NULL, &mr))
		ret = -EIO;
	for (p = 0; !ret && p < env->nparams; p++) {
		pages = env->params[p];
		if (pages < NB_HUGE_PAGES &&
		    (u64)pages * PAGE_SIZE > f.info.max_registration_size) {
			nb_out("E R1 %u pages: above MaxRegistrationSize %llu",
			       pages, f.info.max_registration_size);
			ret = -EINVAL;
			break;
		}
		ret = nb_r1_buf_init(&b, pages);
		if (ret == -ENOSPC) {
			nb_out("U R1 %u cannot allocate %u x 2 MiB chunks",
			       pages, b.nchunks);
			nb_r1_buf_free(&b);
			ret = 0;
			continue;
		}
		if (ret == -EINVAL)
			nb_out("E R1 %u pages: not a multiple of 512", pages);
		if (!ret && !nb_r1_supported(mr, &b)) {
			nb_r1_buf_free(&b);
			continue;
		}
		if (!ret) {
			rr[0].mr = ib_alloc_mr(f.ibpd, IB_MR_TYPE_MEM_REG,
					       b.nent);
			if (IS_ERR(rr[0].mr)) {
				nb_out("E R1 raw: ib_alloc_mr(%u): %ld", b.nent,
				       PTR_ERR(rr[0].mr));
				rr[0].mr = NULL;
				ret = -ENOMEM;
			}
		}
		/* Warm-up of each variant, then A-B-C rounds, order rotating. */
		n = nb_r1_variants(&b);
		for (v = 0; !ret && v < n; v++)
			ret = nb_r1_once(&f, mr, &b, rr, v, U32_MAX);
		for (r = 0; !ret && r < env->rounds; r++)
			for (i = 0; !ret && i < env->iters; i++)
				for (v = 0; !ret && v < n; v++)
					ret = nb_r1_once(&f, mr, &b, rr,
							 (v + r + i) % n, r);
		if (rr[0].mr)
			ib_dereg_mr(rr[0].mr);
		rr[0].mr = NULL;
		nb_r1_buf_free(&b);
	}
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
	nb_fix_close(&f);
	return ret;
}

/* --- W1: window bind vs fast-register vs re-registration ------------------ */

/* W1's re-registration of @pages pages: NdkRegisterMr + NdkDeregisterMr. */
static int nb_w1_rereg(struct nb_set *s, struct ndk_mr *mr, u32 round,
		       u32 ops)
{
	u64 t0 = ktime_get_ns();
	u32 i;
	s32 st;

	for (i = 0; i < ops; i++) {
		st = ndk_register_mr(mr, s->mdl, s->len,
				     NDK_MR_FLAG_ALLOW_REMOTE_WRITE, NULL, NULL);
		if (!st)
			st = ndk_deregister_mr(mr, NULL, NULL);
		if (st) {
			nb_out("E W1 re-registration: status %#x", st);
			return -EIO;
		}
	}
	nb_sample("W1", "rereg", s->pages, round, ktime_get_ns() - t0, ops);
	return 0;
}

/**
 * nb_w1() - W1: window bind + invalidate vs fast-register vs re-registration
 * @env: the run; sizes= the sub-range in pages, bound at the start of a
 *       registered MR twice as long
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int nb_w1(struct nb_env *env)
{
	struct ndk_mr *mr = NULL;
	struct nb_set bind, fr;
	struct nb_fix f;
	u32 p, r, pages, n = env->depth / 4;
	int ret;

	ret = nb_fix_open(env, &f, true);
	if (!ret && ndk_create_mr(f.pd, false, NULL, NULL, &mr))
		ret = -EIO;
	for (p = 0; !ret && p < env->nparams; p++) {
		memset(&bind, 0, sizeof(bind));
		memset(&fr, 0, sizeof(fr));
		pages = env->params[p];
		if (pages >= f.info.frmr_page_count) {
			nb_out("E W1 %u pages: above MaxWindowSize", pages);
			ret = -EINVAL;
			break;
		}
		ret = nb_set_init(&bind, &f, NB_BIND, pages, n, 2 * pages);
		if (!ret)
			ret = nb_set_init(&fr, &f, NB_FR, pages, n, 0);
		if (!ret)
			ret = nb_ndk_pairs(&bind, 2 * n);
		if (!ret)
			ret = nb_ndk_pairs(&fr, 2 * n);
		for (r = 0; !ret && r < env->rounds; r++) {
			u32 ops = max(1U, env->iters / NB_BATCHES), b;
			u64 t0;

			for (b = 0; !ret && b < NB_BATCHES; b++) {
				bool bind_first = (r + b) & 1;

				t0 = ktime_get_ns();
				ret = nb_ndk_pairs(bind_first ? &bind : &fr,
						   ops);
				if (ret)
					break;
				nb_sample("W1", bind_first ? "bind" : "fr",
					  pages, r, ktime_get_ns() - t0, ops);
				t0 = ktime_get_ns();
				ret = nb_ndk_pairs(bind_first ? &fr : &bind,
						   ops);
				if (ret)
					break;
				nb_sample("W1", bind_first ? "fr" : "bind",
					  pages, r, ktime_get_ns() - t0, ops);
			}
			/* Re-registration is slow: fewer, serial. */
			if (!ret)
				ret = nb_w1_rereg(&fr, mr, r,
						  max(1U, ops / 4));
		}
		nb_set_free(&bind);
		nb_set_free(&fr);
	}
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
	nb_fix_close(&f);
	return ret;
}

/* --- the pin-only floor ----------------------------------------------------- */

/**
 * nb_pin() - pin and unpin a user range of the writing process, timed
 * @env: addr= and len= of the range; iters= times
 *
 * What any registration of user memory must do at least: the pages
 * pinned long-term for writing (pin_user_pages_fast(), FOLL_LONGTERM as
 * ib_umem_get() and ndk.ko do), then unpinned; no device object, no
 * scatter table.  The page array is allocated outside the timing.
 *
 * Context: process context (the writer's), may sleep.
 * Return: 0 or a negative errno.
 */
int nb_pin(struct nb_env *env)
{
	u64 first = env->addr & PAGE_MASK;
	u64 npages = (PAGE_ALIGN(env->addr + env->len) - first) >> PAGE_SHIFT;
	struct page **pages;
	u64 t0, t1, done;
	u32 i;
	int n, ret = 0;

	if (env->addr + env->len < env->addr || npages > (1ULL << 26))
		return -EINVAL;
	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (i = 0; !ret && i < env->iters; i++) {
		t0 = ktime_get_ns();
		for (done = 0; done < npages; done += n) {
			n = pin_user_pages_fast(first + (done << PAGE_SHIFT),
						min_t(u64, npages - done, INT_MAX),
						FOLL_WRITE | FOLL_LONGTERM,
						pages + done);
			if (n <= 0) {
				ret = n ? n : -EFAULT;
				break;
			}
		}
		t1 = ktime_get_ns();
		unpin_user_pages(pages, done);
		if (!ret) {
			nb_sample("P1-pin", "kpin", env->len, i, t1 - t0, 1);
			nb_sample("P1-unpin", "kpin", env->len, i,
				  ktime_get_ns() - t1, 1);
		}
	}
	kvfree(pages);
	return ret;
}
