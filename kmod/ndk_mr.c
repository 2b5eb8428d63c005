// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK memory regions (NDK_MR), windows (NDK_MW), the privileged
 * token and logical address mappings.
 *
 * An MR is created for NdkRegisterMr (FastRegister = FALSE) or for
 * NdkFastRegister (TRUE), never both.  NdkRegisterMr maps the MDL chain's
 * pages and registers them on the PD's internal registration path
 * (ndk_reg.c) with the chain's virtual address as the region's base: the
 * address is an index (the I/O virtual address of the MR), never
 * dereferenced.  Every registration rotates the key byte, so a token of an
 * earlier registration never works again.
 *
 * Requests validate everything before anything is posted: a failed local
 * operation would move the registration QP to the error state.
 *
 * Locking: ndk_mr.lock (spinlock) guards the state machine
 * IDLE -> BUSY -> REGISTERED -> BUSY -> IDLE; a request in BUSY owns
 * the registration fields.  ndk_mr.init_lock serialises fast-register
 * initialisations of one MR, which may run concurrently on ndk_wq; each
 * carries its call's order number, so the last call wins whatever order
 * they run in.  The token getters read copies of the keys published
 * under a lock (ndk_mr.tokens, ndk_fr.tokens: one word, read without the
 * lock), never the ib_mr, which a re-initialisation or a deregistration
 * frees or pools meanwhile.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/overflow.h>
#include <linux/slab.h>
#include <ndk/ndk_mdl.h>

#include "ndk_mr.h"
#include "ndk_stats.h"
#include "ndk_trace.h"

/**
 * struct ndk_mr_req - one register, deregister or initialise request
 * @work:       runs the request asynchronously
 * @mr:         the MR (a reference is held while asynchronous)
 * @fn:         the request's body; process context
 * @completion: consumer callback, NULL when blocking
 * @context:    its context
 * @mdl:        register: the chain
 * @length:     register: bytes
 * @pages:      initialise: page count
 * @segs:       register: physically contiguous runs of the pages
 *              (entries of the scatter table, ndk_mr_layout_run()), or
 *              an upper bound of them (the page count); not measured
 *              (a blocking call beyond the page list): the page list's
 *              length, and the fill stops there
 * @entries:    register: page-list entries at the best page size of the
 *              physical layout, or an upper bound (the page count); not
 *              measured: the page list's length
 * @access:     register: IB access flags
 * @flags:      register: NDK_MR_FLAG_*
 * @remote:     initialise: RemoteAccess
 * @seq:        initialise: the call's order number (ndk_mr.init_calls)
 */
struct ndk_mr_req {
	struct work_struct work;
	struct ndk_mr *mr;
	int (*fn)(struct ndk_mr_req *req);
	ndk_fn_request_completion completion;
	void *context;
	struct ndk_mdl *mdl;
	u64 length;
	u32 pages;
	u32 segs;
	u32 entries;
	int access;
	u32 flags;
	bool remote;
	u64 seq;
};

/* Exact-size caches of the objects of a registration. */
static struct kmem_cache *ndk_mr_cache;
static struct kmem_cache *ndk_mr_req_cache;
struct kmem_cache *ndk_reg_mr_cache;

/**
 * ndk_mr_cache_init() - create the slab caches of MRs and their requests
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int ndk_mr_cache_init(void)
{
	ndk_mr_cache = KMEM_CACHE(ndk_mr, 0);
	ndk_mr_req_cache = KMEM_CACHE(ndk_mr_req, 0);
	ndk_reg_mr_cache = KMEM_CACHE(ndk_reg_mr, 0);
	if (ndk_mr_cache && ndk_mr_req_cache && ndk_reg_mr_cache &&
	    !ndk_charge_cache_init())
		return 0;
	ndk_mr_cache_exit();
	return -ENOMEM;
}

/**
 * ndk_mr_cache_exit() - destroy the caches (every MR and PD is gone)
 *
 * Context: module init failure or exit.
 */
void ndk_mr_cache_exit(void)
{
	ndk_charge_cache_exit();
	kmem_cache_destroy(ndk_reg_mr_cache);
	kmem_cache_destroy(ndk_mr_req_cache);
	kmem_cache_destroy(ndk_mr_cache);
}

/* Blocking closes wait here for an MR's asynchronous requests. */
static DECLARE_WAIT_QUEUE_HEAD(ndk_mr_req_wait);

static void ndk_mr_req_work(struct work_struct *work)
{
	struct ndk_mr_req *req = container_of(work, struct ndk_mr_req, work);
	struct ndk_mr *mr = req->mr;
	s32 status = ndk_status_from_errno(req->fn(req));

	req->completion(req->context, status);
	kmem_cache_free(ndk_mr_req_cache, req);
	/*
	 * Our reference keeps @mr until the put, after the waiter's close.
	 * A close called from another request's completion waits for 1.
	 */
	if (atomic_dec_return(&mr->requests) <= 1)
		wake_up_all(&ndk_mr_req_wait);
	ndk_obj_put(&mr->obj);
}

/* The asynchronous requests of @mr a blocking close may not wait for. */
static int ndk_mr_own_requests(struct ndk_mr *mr)
{
	struct work_struct *w = current_work();

	/* Called from the completion of one of them: it is the caller. */
	return w && w->func == ndk_mr_req_work &&
	       container_of(w, struct ndk_mr_req, work)->mr == mr;
}

/*
 * Run @req inline (no completion: process context) or on ndk_wq.  @req is
 * on the caller's stack for an inline request and copied for an
 * asynchronous one.
 */
static s32 ndk_mr_request(struct ndk_mr_req *req)
{
	struct ndk_mr_req *async;

	if (!req->completion) {
		might_sleep();
		return ndk_status_from_errno(req->fn(req));
	}
	async = kmem_cache_alloc(ndk_mr_req_cache, GFP_ATOMIC | __GFP_ACCOUNT);
	if (!async)
		return STATUS_INSUFFICIENT_RESOURCES;
	*async = *req;
	ndk_obj_get(&async->mr->obj);
	atomic_inc(&async->mr->requests);
	INIT_WORK(&async->work, ndk_mr_req_work);
	queue_work(ndk_wq, &async->work);
	return STATUS_PENDING;
}

static void ndk_mr_set_state(struct ndk_mr *mr, enum ndk_mr_state state)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	mr->state = state;
	spin_unlock_irqrestore(&mr->lock, flags);
}

/* Completion of the MR's internal REG_MR or LOCAL_INV (softirq). */
static void ndk_mr_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ndk_mr *mr = container_of(wc->wr_cqe, struct ndk_mr, cqe);

	mr->wc_status = wc->status;
	if (wc->status != IB_WC_SUCCESS)
		trace_ndk_reg_wr_error(mr, wc->status, wc->vendor_err);
	ndk_reg_wr_done(mr->pd->reg, wc->status);
	complete(&mr->done);
}

/**
 * ndk_mr_flags_write() - may the device write pages registered with @flags?
 * @obj:   an object of the adapter the registration is for (its PD or its
 *         MR: the device decides what RDMA_READ_SINK needs)
 * @flags: NDK_MR_FLAG_* bits
 *
 * Whoever pins pages for a registration asks this first and pins them
 * writable exactly when it says so (ndk_umr_check()).
 *
 * Context: any.
 * Return: 1 when the access has a write right (local write, read sink,
 * remote write), 0 when not, -EINVAL for flags NDK does not have.
 */
int ndk_mr_flags_write(struct ndk_obj *obj, u32 flags)
{
	int access = ndk_mr_access(ndk_ibdev(obj), flags);

	if (access < 0)
		return access;
	return ndk_mr_access_writes(access);
}

/* Is an element of the first @length bytes of @chain read-only? */
static bool ndk_mdl_read_only(const struct ndk_mdl *chain, u64 length)
{
	const struct ndk_mdl *mdl;

	for (mdl = chain; mdl && length; mdl = mdl->next) {
		if (mdl->flags & NDK_MDL_READ_ONLY)
			return true;
		length -= min_t(u64, length, mdl->byte_count);
	}
	return false;
}

/**
 * struct ndk_mr_layout - a walk over a registration's pages
 * @va:      the registration's address of the next byte
 * @end:     physical address after the last byte of the current run
 * @mask:    bits in which a run's start differs from its address, or a
 *           run boundary's address is not aligned (ib_umem_find_best_pgsz())
 * @seg_len: bytes in the current run
 * @seg_max: longest run (the device's DMA segment limit, page aligned)
 * @segs:    runs so far
 * @fill:    the scatter table to fill, or NULL to only measure
 * @sg:      filling: the entry of the current run
 * @cap:     filling: entries of @fill; a run beyond them stops the walk
 *
 * One walk measures (ndk_mr_start_register(): page-list entries, table
 * size), the other fills the table; both cut the runs the same way.  A
 * blocking call beyond the page list does only the second
 * (ndk_mr_start_register()).
 */
struct ndk_mr_layout {
	u64 va;
	u64 end;
	u64 mask;
	u64 seg_len;
	u32 seg_max;
	u32 segs;
	struct scatterlist *fill;
	struct scatterlist *sg;
	u32 cap;
};

/*
 * A physically contiguous range of the registration (__ndk_mdl_walk_runs()):
 * continues the current run when it starts where that one ended, else
 * starts one; runs are cut at the DMA segment limit, on page boundaries.
 * -E2BIG when a run would not fit the table being filled.
 */
static int ndk_mr_layout_run(struct page *page, u32 offset, u32 len,
			     void *context)
{
	struct ndk_mr_layout *l = context;
	u64 base = page_to_phys(page), pa = base + offset, n;

	while (len) {
		n = 0;
		if (l->segs && pa == l->end) {
			n = min_t(u64, len, l->seg_max - l->seg_len);
			if (n < len)
				n = round_down(pa + n, PAGE_SIZE) - pa;
		}
		if (n) {
			l->seg_len += n;
			if (l->fill)
				l->sg->length += n;
		} else {
			if (l->fill && l->segs == l->cap)
				return -E2BIG;
			n = min_t(u64, len, l->seg_max);
			if (n < len)
				n = round_down(pa + n, PAGE_SIZE) - pa;
			/* A run boundary inside the region: its address. */
			if (l->segs)
				l->mask |= l->va;
			l->mask |= pa ^ l->va;
			l->segs++;
			l->seg_len = n;
			if (l->fill) {
				l->sg = l->sg ? sg_next(l->sg) : l->fill;
				sg_set_page(l->sg,
					    nth_page(page, (pa - base) >> PAGE_SHIFT),
					    n, offset_in_page(pa));
			}
		}
		l->end = pa + n;
		l->va += n;
		pa += n;
		len -= n;
	}
	return 0;
}

/*
 * The largest page size of @cap (and PAGE_SIZE) that maps [@va, +@length)
 * with @mask (struct ndk_mr_layout) and no larger than holding it whole
 * needs: ib_umem_find_best_pgsz()'s rule.  0 when none (never for a valid
 * chain: within a page the address and the page agree).
 */
static u64 ndk_mr_best_pgsz(u64 mask, u64 va, u64 length, u64 cap)
{
	u64 bitmap = (cap | PAGE_SIZE) & GENMASK_ULL(63, PAGE_SHIFT);
	int bits = fls64((va + length - 1) ^ va);

	if (bits < 64)
		mask |= bitmap & GENMASK_ULL(63, max(bits, 1));
	if (mask)
		bitmap &= GENMASK_ULL(__ffs64(mask), 0);
	return bitmap ? 1ULL << (fls64(bitmap) - 1) : 0;
}

/* Page-list entries of [@va, +@length) in pages of @pgsz. */
static u64 ndk_mr_entries(u64 va, u64 length, u64 pgsz)
{
	return (((va & (pgsz - 1)) + length - 1) >> ilog2(pgsz)) + 1;
}

static u32 ndk_mr_seg_max(struct ib_device *ibdev)
{
	return ALIGN_DOWN(ib_dma_max_seg_size(ibdev), PAGE_SIZE);
}

/**
 * ndk_mr_measure() - the page-list entries and table size of a registration
 * @ibdev: the device
 * @req:   the register request; fills @req->segs and @req->entries
 *
 * Walks the chain's pages once: physically contiguous runs, and the
 * largest page size their layout allows within the device's page_size_cap.
 *
 * Context: any.
 * Return: 0, or -EINVAL when no page size maps the layout.
 */
static int ndk_mr_measure(struct ib_device *ibdev, struct ndk_mr_req *req)
{
	struct ndk_mr_layout l = {
		.va = ndk_mdl_virtual_address(req->mdl),
		.seg_max = ndk_mr_seg_max(ibdev),
	};
	u64 pgsz, entries;

	__ndk_mdl_walk_runs(req->mdl, req->length, ndk_mr_layout_run, &l);
	pgsz = ndk_mr_best_pgsz(l.mask, ndk_mdl_virtual_address(req->mdl),
				req->length, ibdev->attrs.page_size_cap);
	if (!pgsz)
		return -EINVAL;
	entries = ndk_mr_entries(ndk_mdl_virtual_address(req->mdl),
				 req->length, pgsz);
	if (entries > U32_MAX)
		return -EINVAL;
	req->segs = l.segs;
	req->entries = entries;
	return 0;
}

/*
 * Fill @rmr's scatter table with the chain's runs (grown if too short);
 * -E2BIG when they are more than @req->segs (a chain not measured).
 */
static int ndk_mr_fill(struct ib_device *ibdev, struct ndk_reg *reg,
		       struct ndk_reg_mr *rmr, struct ndk_mr_req *req)
{
	struct ndk_mr_layout l = {
		.va = ndk_mdl_virtual_address(req->mdl),
		.seg_max = ndk_mr_seg_max(ibdev),
	};
	u32 cap;
	int ret;

	if (rmr->sg_cap < req->segs) {
		cap = min_t(u32, roundup_pow_of_two(req->segs),
			    ndk_reg_class_entries(rmr->class, reg->max_pages));
		cap = max(cap, req->segs);
		if (rmr->sg_cap)
			sg_free_table(&rmr->sgt);
		rmr->sg_cap = 0;
		rmr->last = NULL;
		ret = sg_alloc_table(&rmr->sgt, cap, GFP_KERNEL_ACCOUNT);
		if (ret)
			return ret;
		rmr->sg_cap = cap;
	}
	if (rmr->last)
		sg_unmark_end(rmr->last);
	l.fill = rmr->sgt.sgl;
	l.cap = rmr->sg_cap;
	ret = __ndk_mdl_walk_runs(req->mdl, req->length, ndk_mr_layout_run,
				  &l);
	sg_mark_end(l.sg);
	rmr->last = l.sg;
	rmr->used = l.segs;
	return ret;
}

static void ndk_mr_dma_unmap(struct ib_device *ibdev, struct ndk_reg_mr *rmr)
{
	ib_dma_unmap_sg(ibdev, rmr->sgt.sgl, rmr->used, DMA_BIDIRECTIONAL);
}

/* The bits of a DMA-mapped table that limit its page size. */
static u64 ndk_mr_dma_mask(struct sg_table *sgt, u64 va)
{
	struct scatterlist *sg;
	u64 mask = 0;
	int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		mask |= sg_dma_address(sg) ^ va;
		va += sg_dma_len(sg);
		if (i != sgt->nents - 1)
			mask |= va;
	}
	return mask;
}

/**
 * ndk_mr_map() - DMA-map a registration's pages into a pooled MR
 * @mr:  the MR
 * @reg: the PD's registration path
 * @req: the register request, measured (ndk_mr_measure())
 *
 * The pages go straight from the chain into the pooled MR's scatter
 * table, one entry per physically contiguous run, and are loaded into the
 * MR at the largest page size the DMA-mapped layout allows.  Should the
 * DMA layout be coarser than the physical one (an IOMMU), a longer MR is
 * taken once.
 *
 * Context: process context.
 * Return: the MR, its table DMA-mapped and loaded; an ERR_PTR: -EINVAL
 * when the DMA layout needs more entries than the device has, -E2BIG when
 * the physical one does (a chain not measured), -ENOMEM.
 */
static struct ndk_reg_mr *ndk_mr_map(struct ndk_mr *mr, struct ndk_reg *reg,
				     struct ndk_mr_req *req)
{
	struct ib_device *ibdev = ndk_ibdev(&mr->obj);
	u64 va = ndk_mdl_virtual_address(req->mdl);
	u64 entries = req->entries, pgsz;
	struct ndk_reg_mr *rmr;
	int nents, tries, ret;

	for (tries = 0; ; tries++) {
		rmr = ndk_reg_mr_get(mr->pd, reg, entries);
		if (IS_ERR(rmr))
			return rmr;
		ret = ndk_mr_fill(ibdev, reg, rmr, req);
		if (ret)
			goto err_put;
		nents = ib_dma_map_sg(ibdev, rmr->sgt.sgl, rmr->used,
				      DMA_BIDIRECTIONAL);
		if (!nents) {
			ret = -ENOMEM;
			goto err_put;
		}
		rmr->sgt.nents = nents;
		pgsz = ndk_mr_best_pgsz(ndk_mr_dma_mask(&rmr->sgt, va), va,
					req->length, ibdev->attrs.page_size_cap);
		entries = pgsz ? ndk_mr_entries(va, req->length, pgsz) : U64_MAX;
		if (entries <= ndk_reg_class_entries(rmr->class, reg->max_pages))
			break;
		ndk_mr_dma_unmap(ibdev, rmr);
		ndk_reg_mr_put(reg, rmr);
		if (tries || entries > reg->max_pages)
			return ERR_PTR(-EINVAL);
	}
	if (ib_map_mr_sg(rmr->ibmr, rmr->sgt.sgl, nents, NULL, pgsz) != nents) {
		ret = -EINVAL;
		goto err_unmap;
	}
	return rmr;

err_unmap:
	ndk_mr_dma_unmap(ibdev, rmr);
err_put:
	ndk_reg_mr_put(reg, rmr);
	return ERR_PTR(ret);
}

/* Free @rmr whose key may be alive: the key dies before the mapping. */
static void ndk_mr_discard(struct ib_device *ibdev, struct ndk_reg_mr *rmr)
{
	ib_dereg_mr(rmr->ibmr);
	rmr->ibmr = NULL;
	ndk_mr_dma_unmap(ibdev, rmr);
	ndk_reg_mr_free(rmr);
}

static int ndk_mr_do_register(struct ndk_mr_req *req)
{
	struct ib_device *ibdev = ndk_ibdev(&req->mr->obj);
	struct ndk_mr *mr = req->mr;
	struct ib_reg_wr wr = {};
	struct ndk_reg_mr *rmr;
	unsigned long irqflags;
	struct ndk_reg *reg;
	struct ib_mr *ibmr;
	int ret;

	reg = ndk_reg_get(mr->pd);
	if (IS_ERR(reg)) {
		ret = PTR_ERR(reg);
		goto err_idle;
	}
	rmr = ndk_mr_map(mr, reg, req);
	if (IS_ERR(rmr)) {
		ret = PTR_ERR(rmr);
		goto err_idle;
	}
	ibmr = rmr->ibmr;

	/* The region's address space is the chain's virtual address. */
	ibmr->iova = ndk_mdl_virtual_address(req->mdl);
	ibmr->length = req->length;
	ib_update_fast_reg_key(ibmr, ib_inc_rkey(ibmr->rkey));
	rmr->keys++;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_cqe = &mr->cqe;
	wr.mr = ibmr;
	wr.key = ibmr->rkey;
	wr.access = req->access;
	ret = ndk_reg_post(reg, &wr.wr, &mr->done);
	if (ret)
		goto err_unmap;
	if (mr->wc_status != IB_WC_SUCCESS) {
		/*
		 * The MR's state is unknown now: never pool it again, and
		 * let its key die before the pages' mapping goes.
		 */
		ndk_mr_discard(ibdev, rmr);
		ret = -EIO;
		goto err_idle;
	}

	mr->ibmr = ibmr;
	mr->rmr = rmr;
	mr->base_va = ibmr->iova;
	mr->length = req->length;
	mr->flags = req->flags;
	mr->writable = ndk_mr_access_writes(req->access);
	spin_lock_irqsave(&mr->lock, irqflags);
	ndk_tokens_publish(&mr->tokens, ibmr->lkey, ibmr->rkey);
	mr->sgt = &rmr->sgt;
	mr->state = NDK_MR_REGISTERED;
	spin_unlock_irqrestore(&mr->lock, irqflags);
	atomic64_inc(&ndk_stats.registrations);
	atomic64_add(mr->length, &ndk_stats.registered_bytes);
	trace_ndk_mr_register(mr, mr->base_va, mr->length, mr->flags,
			      ibmr->rkey, STATUS_SUCCESS);
	return 0;

err_unmap:
	ndk_mr_dma_unmap(ibdev, rmr);
	ndk_reg_mr_put(reg, rmr);
err_idle:
	ndk_mr_set_state(mr, NDK_MR_IDLE);
	/* An inline failure is counted by ndk_register_mr(). */
	if (req->completion) {
		ndk_stat_error(ndk_status_from_errno(ret));
		trace_ndk_mr_register(mr, ndk_mdl_virtual_address(req->mdl),
				      req->length, req->flags, 0,
				      ndk_status_from_errno(ret));
	}
	return ret;
}

/* Invalidate and give back the pooled registration of a registered MR. */
static void ndk_mr_release_pooled(struct ndk_mr *mr)
{
	struct ib_device *ibdev = ndk_ibdev(&mr->obj);
	struct ndk_reg_mr *rmr = mr->rmr;
	struct ib_send_wr wr = {};
	unsigned long flags;
	struct ndk_reg *reg;
	int ret = -ENODEV;

	/* The tokens go before the ib_mr is pooled or freed. */
	spin_lock_irqsave(&mr->lock, flags);
	ndk_tokens_publish(&mr->tokens, 0, 0);
	mr->sgt = NULL;
	spin_unlock_irqrestore(&mr->lock, flags);
	trace_ndk_mr_deregister(mr, mr->base_va, mr->length, STATUS_SUCCESS);
	atomic64_inc(&ndk_stats.deregistrations);
	atomic64_sub(mr->length, &ndk_stats.registered_bytes);
	reg = ndk_reg_get(mr->pd);
	if (!IS_ERR(reg)) {
		wr.opcode = IB_WR_LOCAL_INV;
		wr.wr_cqe = &mr->cqe;
		wr.ex.invalidate_rkey = rmr->ibmr->lkey;
		ret = ndk_reg_post(reg, &wr, &mr->done);
	}
	if (ret || mr->wc_status != IB_WC_SUCCESS ||
	    ndk_umem_held(&mr->umem)) {
		/*
		 * The key is alive: it dies with the MR, then the mapping.
		 * User memory is unpinned next, and rxe finishes a packet
		 * checked before the invalidation after it: only the
		 * deregistration waits for that packet (ndk_fr.c, "Fenced").
		 * siw 6.1's does not wait (security.md, siw section).
		 */
		ndk_mr_discard(ibdev, rmr);
	} else {
		ndk_mr_dma_unmap(ibdev, rmr);
		ndk_reg_mr_put(reg, rmr);
	}
	mr->ibmr = NULL;
	mr->rmr = NULL;
}

/*
 * Release the registration of a registered MR, then the user memory it
 * owns: the device can no longer reach the pages.
 */
static void ndk_mr_release_registration(struct ndk_mr *mr)
{
	if (mr->user)
		ndk_mr_user_release(mr);
	else
		ndk_mr_release_pooled(mr);
	ndk_umem_unpin(&mr->umem);
}

static int ndk_mr_do_deregister(struct ndk_mr_req *req)
{
	ndk_mr_release_registration(req->mr);
	ndk_mr_set_state(req->mr, NDK_MR_IDLE);
	return 0;
}

static int ndk_mr_do_initialize(struct ndk_mr_req *req)
{
	struct ndk_mr *mr = req->mr;
	struct ib_mr *ibmr;
	int ret = 0;

	mutex_lock(&mr->init_lock);
	/* A later call is in place already: this one has nothing to do. */
	if (req->seq < mr->init_done)
		goto out_unlock;
	if (ndk_fault_fail_mr_alloc()) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	ibmr = ndk_alloc_fr_mr(mr->pd, req->pages);
	if (IS_ERR(ibmr)) {
		ret = PTR_ERR(ibmr);
		goto out_unlock;
	}
	ret = ndk_fr_attach(&mr->fr, mr->pd, &mr->ibmr, ibmr, req->pages,
			    req->remote);
	if (ret)
		ib_dereg_mr(ibmr);
	else
		mr->init_done = req->seq;
out_unlock:
	mutex_unlock(&mr->init_lock);
	return ret;
}

static void ndk_mr_destroy(struct ndk_obj *obj)
{
	struct ndk_mr *mr = container_of(obj, struct ndk_mr, obj);

	if (mr->fast_register)
		ndk_fr_detach(&mr->fr, mr->pd, mr->ibmr);
	else if (mr->state == NDK_MR_REGISTERED)
		ndk_mr_release_registration(mr);
	kmem_cache_free(ndk_mr_cache, mr);
}

static int ndk_mr_init(struct ndk_obj *obj)
{
	return 0;	/* nothing in ib_core until it is registered */
}

/**
 * ndk_create_mr() - NdkCreateMr
 * @pd:                the PD
 * @fast_register:     true: for NdkInitializeFastRegisterMr/NdkFastRegister
 *                     only; false: for NdkRegisterMr/NdkDeregisterMr only
 * @create_completion: NULL for a blocking create
 * @request_context:   passed to @create_completion
 * @mr:                receives the MR on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INSUFFICIENT_RESOURCES,
 * STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_mr(struct ndk_pd *pd, bool fast_register,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_mr **mr)
{
	struct ndk_mr *m;

	m = kmem_cache_zalloc(ndk_mr_cache, ndk_gfp(create_completion));
	if (!m)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&m->obj, NDK_OBJECT_TYPE_MR, &pd->obj, ndk_mr_destroy);
	m->pd = pd;
	m->fast_register = fast_register;
	spin_lock_init(&m->lock);
	if (fast_register) {
		mutex_init(&m->init_lock);
		ndk_fr_init(&m->fr, &m->obj);
	} else {
		init_completion(&m->done);
		m->cqe.done = ndk_mr_wr_done;
	}
	return ndk_obj_create(&m->obj, ndk_mr_init, create_completion,
			      request_context, (void **)mr);
}
EXPORT_SYMBOL_GPL(ndk_create_mr);

/**
 * ndk_close_mr() - NdkCloseMr
 * @mr:               the MR; a registration still in place is released
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * No completion of the MR's requests runs after the close has completed:
 * a blocking close waits for the asynchronous requests still queued or
 * running (but the one whose completion it is called from), and the
 * @close_completion of an asynchronous close runs after theirs (each
 * holds a reference).
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_mr(struct ndk_mr *mr, ndk_fn_close_completion close_completion,
		 void *request_context)
{
	if (!close_completion)
		wait_event(ndk_mr_req_wait, atomic_read(&mr->requests) ==
			   ndk_mr_own_requests(mr));
	return ndk_obj_close(&mr->obj, close_completion, request_context);
}
EXPORT_SYMBOL_GPL(ndk_close_mr);

/* ndk_register_mr() without its error accounting. */
static s32 ndk_mr_start_register(struct ndk_mr *mr, struct ndk_mdl *mdl,
				 size_t length, u32 flags,
				 ndk_fn_request_completion request_completion,
				 void *request_context)
{
	struct ib_device *ibdev = ndk_ibdev(&mr->obj);
	struct ndk_mr_req req = {
		.mr = mr,
		.fn = ndk_mr_do_register,
		.completion = request_completion,
		.context = request_context,
		.mdl = mdl,
		.length = length,
		.flags = flags,
	};
	unsigned long irqflags;
	s32 status;
	u32 pages;
	u64 end;

	if (mr->fast_register)
		return STATUS_INVALID_PARAMETER;
	req.access = ndk_mr_access(ibdev, flags);
	if (req.access < 0)
		return STATUS_INVALID_PARAMETER;
	if (ndk_mdl_check_contiguous(mdl, length, &pages))
		return STATUS_INVALID_PARAMETER;
	/*
	 * The device never gets a write right over read-only pages; an
	 * RDMA_READ_SINK that needs none goes (ndk_mr_flags_read_only()).
	 */
	if (ndk_mr_access_writes(req.access) &&
	    ndk_mdl_read_only(mdl, length)) {
		req.flags = ndk_mr_flags_read_only(ibdev, flags);
		req.access = ndk_mr_access(ibdev, req.flags);
		if (ndk_mr_access_writes(req.access))
			return STATUS_ACCESS_VIOLATION;
	}
	if (!ndk_mdl_virtual_address(mdl) ||
	    check_add_overflow(ndk_mdl_virtual_address(mdl), (u64)length, &end))
		return STATUS_INVALID_PARAMETER;
	/*
	 * The size rule (Documentation/registration.md): up to
	 * MaxRegistrationSize bytes always fit (they span at most the page
	 * list's length in pages: no need to measure, the page count bounds
	 * both the entries and the runs); beyond, the layout must fit the
	 * page list at its best page size, within max_mr_size.
	 */
	if (length > ibdev->attrs.max_mr_size)
		return STATUS_INVALID_PARAMETER;
	if (pages <= ibdev->attrs.max_fast_reg_page_list_len) {
		req.segs = pages;
		req.entries = pages;
	} else if (!request_completion) {
		/*
		 * Blocking: the fill measures (ndk_mr_map()), one walk of
		 * the chain instead of two; the runs cannot be more than
		 * the entries, so a table of the page list's length holds
		 * every layout that fits, and one that does not fails
		 * there, inline.
		 */
		req.segs = ibdev->attrs.max_fast_reg_page_list_len;
		req.entries = req.segs;
	} else if (ndk_mr_measure(ibdev, &req) ||
		   req.entries > ibdev->attrs.max_fast_reg_page_list_len) {
		return STATUS_INVALID_PARAMETER;
	}
	if (ndk_adapter_removed(mr->obj.adapter))
		return STATUS_DEVICE_REMOVED;

	spin_lock_irqsave(&mr->lock, irqflags);
	if (mr->state != NDK_MR_IDLE) {
		spin_unlock_irqrestore(&mr->lock, irqflags);
		return STATUS_INVALID_DEVICE_REQUEST;
	}
	mr->state = NDK_MR_BUSY;
	spin_unlock_irqrestore(&mr->lock, irqflags);

	status = ndk_mr_request(&req);
	/* Not queued (only an asynchronous request fails before running). */
	if (request_completion && status == STATUS_INSUFFICIENT_RESOURCES)
		ndk_mr_set_state(mr, NDK_MR_IDLE);
	return status;
}

/**
 * ndk_register_mr() - NdkRegisterMr
 * @mr:                 an MR created with FastRegister = FALSE, idle
 * @mdl:                the MDL chain; its first @length bytes must be
 *                      virtually contiguous; untouched until completion
 * @length:             bytes to register from the chain's virtual address
 * @flags:              NDK_MR_FLAG_*; RDMA_READ_SINK is always accepted
 *                      (over read-only pages of an adapter that needs no
 *                      sink rights it is dropped: ndk_mr_flags_read_only())
 * @request_completion: NULL for a blocking call
 * @request_context:    passed to @request_completion
 *
 * The region's base address is ndk_mdl_virtual_address(@mdl): an index
 * for tokens and remote addresses, never dereferenced, never zero.
 *
 * Context: any with a completion; process context without.
 * Up to MaxRegistrationSize bytes always register; a longer registration
 * when it is at most max_mr_size bytes and its pages' layout fits the
 * device's page list at the largest page size it allows (2 MiB-aligned
 * 2 MiB chunks: 2 MiB pages).  Elements may join inside a page.
 *
 * Return: STATUS_SUCCESS; STATUS_PENDING; STATUS_INVALID_PARAMETER for a
 * non-contiguous chain, a length of 0 or beyond the chain, a length above
 * MaxRegistrationSize whose layout does not fit (above), an unknown flag,
 * a zero-based address or a fast-register MR; STATUS_ACCESS_VIOLATION when @flags grant a write
 * right (local write, read sink, remote write) over an MDL element marked
 * NDK_MDL_READ_ONLY; STATUS_INVALID_DEVICE_REQUEST when the MR is already
 * registered or busy; STATUS_INSUFFICIENT_RESOURCES (inline or through
 * the completion); STATUS_DEVICE_REMOVED.
 */
s32 ndk_register_mr(struct ndk_mr *mr, struct ndk_mdl *mdl, size_t length,
		    u32 flags, ndk_fn_request_completion request_completion,
		    void *request_context)
{
	s32 status;

	status = ndk_mr_start_register(mr, mdl, length, flags,
				       request_completion, request_context);
	if (status != STATUS_SUCCESS && status != STATUS_PENDING) {
		ndk_stat_error(status);
		trace_ndk_mr_register(mr, mdl ? ndk_mdl_virtual_address(mdl) : 0,
				      length, flags, 0, status);
	}
	return status;
}
EXPORT_SYMBOL_GPL(ndk_register_mr);

/**
 * ndk_deregister_mr() - NdkDeregisterMr
 * @mr:                 an MR registered by ndk_register_mr()
 * @request_completion: NULL for a blocking call
 * @request_context:    passed to @request_completion
 *
 * The region's tokens stop working before the request completes.  An MR
 * with windows bound inside it is refused: the windows must be
 * invalidated first (a window can never outlive its MR).
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS; STATUS_PENDING; STATUS_INVALID_PARAMETER for a
 * fast-register MR; STATUS_INVALID_DEVICE_REQUEST when not registered;
 * STATUS_DEVICE_BUSY with windows bound; STATUS_INSUFFICIENT_RESOURCES.
 */
s32 ndk_deregister_mr(struct ndk_mr *mr,
		      ndk_fn_request_completion request_completion,
		      void *request_context)
{
	struct ndk_mr_req req = {
		.mr = mr,
		.fn = ndk_mr_do_deregister,
		.completion = request_completion,
		.context = request_context,
	};
	s32 status = STATUS_SUCCESS;
	unsigned long irqflags;

	if (mr->fast_register)
		return STATUS_INVALID_PARAMETER;
	spin_lock_irqsave(&mr->lock, irqflags);
	if (mr->state != NDK_MR_REGISTERED)
		status = STATUS_INVALID_DEVICE_REQUEST;
	else if (mr->bound_windows)
		status = STATUS_DEVICE_BUSY;
	else
		mr->state = NDK_MR_BUSY;
	spin_unlock_irqrestore(&mr->lock, irqflags);
	if (status)
		return status;
	status = ndk_mr_request(&req);
	if (status == STATUS_INSUFFICIENT_RESOURCES)
		ndk_mr_set_state(mr, NDK_MR_REGISTERED);
	return status;
}
EXPORT_SYMBOL_GPL(ndk_deregister_mr);

/*
 * The most pages a fast-register MR may be initialised for: what the
 * device maps, and for a /dev/ndk adapter its FRMRPageCount (the driver's
 * page list of a larger MR is memory nobody charges, and uapi.md promises
 * that bound).
 */
static u32 ndk_fr_page_limit(const struct ndk_adapter *adapter)
{
	if (adapter->user)
		return adapter->info.frmr_page_count;
	return adapter->dev->ibdev->attrs.max_fast_reg_page_list_len;
}

/**
 * ndk_initialize_fast_register_mr() - NdkInitializeFastRegisterMr
 * @mr:                 an MR created with FastRegister = TRUE
 * @adapter_page_count: most pages a later NdkFastRegister may map
 * @remote_access:      whether later fast-registers may grant remote rights
 * @request_completion: NULL for a blocking call
 * @request_context:    passed to @request_completion
 *
 * May be called again, also while another call on the MR is pending: the
 * calls are serialised (ndk_mr.init_lock) and the last call wins, in
 * whatever order asynchronous ones run.  Tokens can be read once it has
 * completed; a token getter racing a re-initialisation reads the old or
 * the new tokens, never the ib_mr being replaced.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS; STATUS_PENDING; STATUS_INVALID_PARAMETER for a
 * non-fast-register MR or a count of 0; STATUS_IMPLEMENTATION_LIMIT above
 * the adapter's fast-register page list limit (FRMRPageCount for a
 * /dev/ndk adapter);
 * STATUS_INSUFFICIENT_RESOURCES (inline or through the completion).
 */
s32 ndk_initialize_fast_register_mr(struct ndk_mr *mr, u32 adapter_page_count,
				    bool remote_access,
				    ndk_fn_request_completion request_completion,
				    void *request_context)
{
	struct ndk_mr_req req = {
		.mr = mr,
		.fn = ndk_mr_do_initialize,
		.completion = request_completion,
		.context = request_context,
		.pages = adapter_page_count,
		.remote = remote_access,
	};

	if (!mr->fast_register || !adapter_page_count)
		return STATUS_INVALID_PARAMETER;
	if (adapter_page_count > ndk_fr_page_limit(mr->obj.adapter))
		return STATUS_IMPLEMENTATION_LIMIT;
	if (ndk_adapter_removed(mr->obj.adapter))
		return STATUS_DEVICE_REMOVED;
	req.seq = atomic64_inc_return(&mr->init_calls);
	return ndk_mr_request(&req);
}
EXPORT_SYMBOL_GPL(ndk_initialize_fast_register_mr);

/**
 * ndk_mr_window_bind() - count a window about to be bound in the MR
 * @mr:           the MR
 * @start:        the window's first address
 * @end:          its end (exclusive)
 * @access:       the IB access the window or fast-register gets
 *
 * On success the MR holds the window: it stays registered (deregister is
 * refused) and referenced until ndk_mr_window_gone().  This is where a
 * window's or fast-register's write right over an MR's pages is checked,
 * for kernel and user callers alike: remote write needs an MR registered
 * with local write (NdkBind's rule), and any write right needs an MR whose
 * pages are writable (&ndk_mr.writable).
 *
 * Context: any.
 * Return: STATUS_SUCCESS; STATUS_INVALID_DEVICE_REQUEST when the MR is
 * not registered; STATUS_INVALID_PARAMETER for a fast-register MR or a
 * range not inside it; STATUS_ACCESS_VIOLATION for a write right the MR
 * cannot give.
 */
s32 ndk_mr_window_bind(struct ndk_mr *mr, u64 start, u64 end, int access)
{
	s32 status = STATUS_SUCCESS;
	unsigned long flags;

	if (mr->fast_register)
		return STATUS_INVALID_PARAMETER;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->state != NDK_MR_REGISTERED)
		status = STATUS_INVALID_DEVICE_REQUEST;
	else if (start < mr->base_va || end > mr->base_va + mr->length)
		status = STATUS_INVALID_PARAMETER;
	else if ((access & IB_ACCESS_REMOTE_WRITE) &&
		 !(mr->flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		status = STATUS_ACCESS_VIOLATION;
	else if (ndk_mr_access_writes(access) && !mr->writable)
		status = STATUS_ACCESS_VIOLATION;
	else
		mr->bound_windows++;
	spin_unlock_irqrestore(&mr->lock, flags);
	if (!status)
		ndk_obj_get(&mr->obj);
	return status;
}

/**
 * ndk_mr_window_gone() - a window counted by ndk_mr_window_bind() is gone
 * @mr: the MR
 *
 * Context: any.
 */
void ndk_mr_window_gone(struct ndk_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	mr->bound_windows--;
	spin_unlock_irqrestore(&mr->lock, flags);
	ndk_obj_put(&mr->obj);
}

/**
 * ndk_mr_own_umem() - hand the user memory a registration maps to its MR
 * @mr: registered from @um (by ndk_register_mr() of @um's MDL, or by the
 *      driver: ndk_register_user_mr())
 * @um: held; emptied
 *
 * The pages go with the registration: a deregistration that succeeds, or
 * the MR's teardown, which waits for every window and fast-registered MR
 * counted in it (each holds a reference).  So the user path can close a
 * registration's handle in any order with the handles of what uses it.
 *
 * Context: any.
 */
void ndk_mr_own_umem(struct ndk_mr *mr, struct ndk_umem *um)
{
	WARN_ON(ndk_umem_held(&mr->umem));
	mr->umem = *um;
	memset(um, 0, sizeof(*um));
}

/*
 * The MR's tokens as last published: a fast-register MR's by ndk_fr.c
 * (initialisation, fast-register), another's by its registration.  Never
 * from the ib_mr, which a concurrent re-initialisation frees and a
 * deregistration pools or frees.
 */
static union ndk_tokens ndk_mr_tokens(const struct ndk_mr *mr)
{
	return ndk_tokens_read(mr->fast_register ? &mr->fr.tokens :
						   &mr->tokens);
}

/**
 * ndk_get_local_token_from_mr() - NdkGetLocalTokenFromMr
 * @mr: a registered or fast-register-initialised MR
 *
 * Safe against a concurrent re-initialisation or deregistration: it then
 * gives the old or the new token (or 0).
 *
 * Context: any.
 * Return: the local token (lkey), 0 before registration.
 */
u32 ndk_get_local_token_from_mr(struct ndk_mr *mr)
{
	return ndk_mr_tokens(mr).lkey;
}
EXPORT_SYMBOL_GPL(ndk_get_local_token_from_mr);

/**
 * ndk_get_remote_token_from_mr() - NdkGetRemoteTokenFromMr
 * @mr: a registered or fast-register-initialised MR
 *
 * Safe against a concurrent re-initialisation or deregistration, like
 * ndk_get_local_token_from_mr().
 *
 * Context: any.
 * Return: the remote token (rkey), 0 before registration.
 */
u32 ndk_get_remote_token_from_mr(struct ndk_mr *mr)
{
	return ndk_mr_tokens(mr).rkey;
}
EXPORT_SYMBOL_GPL(ndk_get_remote_token_from_mr);

/**
 * ndk_get_privileged_memory_region_token() - NdkGetPrivilegedMemoryRegionToken
 * @pd:    the PD
 * @token: receives the PD's local DMA key
 *
 * The token lets logical addresses from ndk_build_lam() be used in SGEs
 * of this PD's QPs.  It grants local read and write only and is never
 * usable remotely.
 *
 * Context: any.
 */
void ndk_get_privileged_memory_region_token(struct ndk_pd *pd, u32 *token)
{
	*token = pd->ibpd->local_dma_lkey;
}
EXPORT_SYMBOL_GPL(ndk_get_privileged_memory_region_token);

struct ndk_lam_walk {
	struct ib_device *ibdev;
	struct ndk_logical_address_mapping *lam;
};

static int ndk_lam_map_page(struct page *page, u32 offset, u32 len,
			    void *context)
{
	struct ndk_lam_walk *w = context;
	u64 addr;

	addr = ib_dma_map_page(w->ibdev, page, 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(w->ibdev, addr))
		return -ENOMEM;
	w->lam->adapter_page_array[w->lam->adapter_page_count++] = addr;
	return 0;
}

static void ndk_lam_unmap(struct ib_device *ibdev,
			  struct ndk_logical_address_mapping *lam)
{
	while (lam->adapter_page_count)
		ib_dma_unmap_page(ibdev,
				  lam->adapter_page_array[--lam->adapter_page_count],
				  PAGE_SIZE, DMA_BIDIRECTIONAL);
}

/**
 * ndk_build_lam() - NdkBuildLAM
 * @adapter:            the adapter
 * @mdl:                the MDL chain; its first @length bytes must be
 *                      virtually contiguous
 * @length:             bytes to map
 * @request_completion: unused: the mapping always completes inline
 * @request_context:    unused
 * @lam:                receives one adapter logical address per page
 * @lam_size:           in: bytes at @lam; out: bytes written or needed
 * @fbo:                receives the offset of the first byte in its page
 *
 * The addresses carry no rights: NdkFastRegister may grant any over
 * them, so pages the device must never write (an element marked
 * NDK_MDL_READ_ONLY) are refused; NdkRegisterMr without a write right
 * registers them.
 *
 * Context: any.
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER (not contiguous,
 * length 0 or beyond the chain); STATUS_ACCESS_VIOLATION (a read-only
 * element); STATUS_BUFFER_TOO_SMALL with the needed size in *@lam_size;
 * STATUS_INSUFFICIENT_RESOURCES (nothing stays mapped);
 * STATUS_DEVICE_REMOVED.
 */
s32 ndk_build_lam(struct ndk_adapter *adapter, struct ndk_mdl *mdl,
		  size_t length, ndk_fn_request_completion request_completion,
		  void *request_context, struct ndk_logical_address_mapping *lam,
		  u32 *lam_size, u32 *fbo)
{
	struct ndk_lam_walk w = { .ibdev = adapter->dev->ibdev, .lam = lam };
	size_t needed;
	u32 pages;

	if (ndk_mdl_check_contiguous(mdl, length, &pages))
		return STATUS_INVALID_PARAMETER;
	if (ndk_mdl_read_only(mdl, length))
		return STATUS_ACCESS_VIOLATION;
	needed = struct_size(lam, adapter_page_array, pages);
	if (needed > U32_MAX)
		return STATUS_INVALID_PARAMETER;
	if (*lam_size < needed) {
		*lam_size = needed;
		return STATUS_BUFFER_TOO_SMALL;
	}
	if (ndk_adapter_removed(adapter))
		return STATUS_DEVICE_REMOVED;

	lam->adapter_context = adapter;
	lam->adapter_page_count = 0;
	lam->reserved = 0;
	if (ndk_mdl_walk_pages(mdl, length, ndk_lam_map_page, &w)) {
		ndk_lam_unmap(w.ibdev, lam);
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	*lam_size = needed;
	*fbo = ndk_mdl_byte_offset(mdl);
	return STATUS_SUCCESS;
}
EXPORT_SYMBOL_GPL(ndk_build_lam);

/**
 * ndk_release_lam() - NdkReleaseLAM
 * @adapter: the adapter the mapping was built on
 * @lam:     a mapping from ndk_build_lam(); no request may still use it
 *
 * Context: any.
 */
void ndk_release_lam(struct ndk_adapter *adapter,
		     struct ndk_logical_address_mapping *lam)
{
	ndk_lam_unmap(adapter->dev->ibdev, lam);
}
EXPORT_SYMBOL_GPL(ndk_release_lam);
