// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: MRs over user memory registered by the device driver.
 *
 * ib_reg_user_mr() registers a user range the way ibv_reg_mr() does:
 * the driver pins it with ib_umem_get() on current->mm (RLIMIT_MEMLOCK
 * charged to pinned_vm, CAP_IPC_LOCK exempt), builds its own coalesced
 * page table and returns an MR with its keys; no work request, no
 * registration QP, no page array in ndk.ko.  It passes a NULL udata,
 * which only some drivers accept (ndk_mr_user_capable()).
 *
 * The driver keeps the page list to itself, so windows and
 * fast-registers over such an MR need one of their own: the file layer
 * pins the range again when the first of them needs it (the pages are
 * resident and pinned already) and hands the pages to
 * ndk_mr_attach_pages(), which maps them for the device.  That page list
 * lives until the registration goes.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "ndk_mr.h"
#include "ndk_stats.h"
#include "ndk_trace.h"

/**
 * ndk_mr_user_capable() - may user memory be registered by the driver?
 * @ibdev: the device
 *
 * ib_reg_user_mr() calls the driver's reg_user_mr with a NULL udata.
 * rxe, siw, mlx5, mlx4, cxgb4, erdma and efa never dereference it there
 * (Documentation/registration.md); irdma and mthca do, and hns then
 * allocates a kernel buffer instead of pinning the range.  So: a known
 * driver that has the op.
 *
 * Context: any.
 * Return: true when ndk_register_user_mr() may be used on @ibdev.
 */
bool ndk_mr_user_capable(struct ib_device *ibdev)
{
	if (!ibdev->ops.reg_user_mr || !ibdev->ops.dereg_mr)
		return false;
	switch (ibdev->ops.driver_id) {
	case RDMA_DRIVER_RXE:
	case RDMA_DRIVER_SIW:
	case RDMA_DRIVER_MLX5:
	case RDMA_DRIVER_MLX4:
	case RDMA_DRIVER_CXGB4:
	case RDMA_DRIVER_ERDMA:
	case RDMA_DRIVER_EFA:
		return true;
	default:
		return false;
	}
}

/*
 * What ib_reg_user_mr() allocates with plain GFP_KERNEL, so charged to no
 * memory cgroup: the ib_umem and its scatter table (up to 32 bytes a page
 * when no two pages are contiguous) and the driver's own page table (rxe:
 * 16 bytes a page, in 4 KiB maps).  6.1 exports no call that charges a
 * cgroup without allocating (mem_cgroup_charge_skmem() and
 * obj_cgroup_charge() are not exported), and no scope that makes another
 * module's allocations accounted (set_active_memcg() only redirects
 * accounted ones).  So ndk.ko allocates a stand-in, charged to the
 * caller, and holds it for the registration's life: memory.max then
 * bounds the driver's share too (Documentation/security.md, invariant 5).
 *
 * The stand-in is page-sized objects of a slab cache of its own, linked
 * through their first bytes and otherwise never read or written.  The
 * cache has a constructor, so init_on_alloc (Debian's default) does not
 * zero an object the cache hands out again, only a new slab: a
 * kvmalloc() or pages of 48 bytes for every page registered, zeroed each
 * time, made a registration cost a third more than ibv_reg_mr's in the
 * test guest (Documentation/performance.md, "M1 and the charge of the
 * driver's memory").
 */
#define NDK_DRIVER_PAGE_BYTES	16	/* rxe's struct rxe_phys_buf */

static struct kmem_cache *ndk_charge_cache;

/**
 * struct ndk_charge - an object of the stand-in, at its own first bytes
 * @next: the next object, or NULL
 */
struct ndk_charge {
	struct ndk_charge *next;
};

/* Present so that init_on_alloc leaves reused objects alone (above). */
static void ndk_charge_ctor(void *object)
{
}

/**
 * ndk_charge_cache_init() - create the stand-in's slab cache
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int ndk_charge_cache_init(void)
{
	ndk_charge_cache = kmem_cache_create("ndk_charge", PAGE_SIZE, 0,
					     SLAB_ACCOUNT, ndk_charge_ctor);
	return ndk_charge_cache ? 0 : -ENOMEM;
}

/**
 * ndk_charge_cache_exit() - destroy it (every user MR is gone)
 *
 * Context: module init failure or exit.
 */
void ndk_charge_cache_exit(void)
{
	kmem_cache_destroy(ndk_charge_cache);
}

static void ndk_charge_free(struct ndk_charge *c)
{
	struct ndk_charge *next;

	for (; c; c = next) {
		next = c->next;
		kmem_cache_free(ndk_charge_cache, c);
	}
}

/* @pages objects charged to the caller's memory cgroup, or NULL. */
static struct ndk_charge *ndk_charge_alloc(unsigned long pages)
{
	struct ndk_charge *head = NULL, *c;

	for (; pages; pages--) {
		c = kmem_cache_alloc(ndk_charge_cache, NDK_GFP_ARRAY);
		if (!c) {
			ndk_charge_free(head);
			return NULL;
		}
		c->next = head;
		head = c;
	}
	return head;
}

/*
 * The stand-in's size in pages: rxe's page table, 16 bytes a page in
 * 4 KiB maps (one at least, which also stands for the ib_umem).  The
 * scatter table, up to 32 bytes a page but one entry per physically
 * contiguous run (ib_umem_get() coalesces them), is left out: at most
 * twice what is charged, so memory.max still bounds it, while charging
 * it too made the registrations' per-page cost 1.17 times ibv_reg_mr's
 * instead of 1.04 in the test guest.
 */
static unsigned long ndk_mr_user_charge(u64 address, u64 length)
{
	u64 pages = (PAGE_ALIGN(address + length) - (address & PAGE_MASK)) >>
		    PAGE_SHIFT;

	return max_t(u64, 1, DIV_ROUND_UP(pages * NDK_DRIVER_PAGE_BYTES,
					  PAGE_SIZE));
}

/**
 * ndk_register_user_mr() - register user memory of the calling process
 * @mr:      an MR created with FastRegister = FALSE, idle, of an adapter
 *           for which ndk_mr_user_capable() holds
 * @address: user address of the first byte; also the region's base
 * @length:  bytes, > 0, at most the device's max_mr_size
 * @flags:   NDK_MR_FLAG_*
 *
 * The caller decided that the driver's pin mode is the one the rights
 * need (ndk_umem_mode()): ib_umem_get() pins writable always, adding
 * FOLL_FORCE without a write right, which only private mappings allow.
 *
 * An internal call of the user path: it returns the driver's errno as
 * it is (RLIMIT_MEMLOCK's -ENOMEM and -EPERM, -EFAULT), which an NTSTATUS
 * would blur.
 *
 * Context: process context of the memory's owner (current->mm), may sleep.
 * Return: 0; %-EINVAL (flags, length, a fast-register MR); %-EBUSY
 * (registered or busy); %-ENODEV (removed); %-ENOMEM (memory,
 * RLIMIT_MEMLOCK); %-EPERM (RLIMIT_MEMLOCK 0); %-EFAULT (not mapped as
 * the rights need); another errno of the driver.
 */
int ndk_register_user_mr(struct ndk_mr *mr, u64 address, u64 length,
			 u32 flags)
{
	struct ib_device *ibdev = ndk_ibdev(&mr->obj);
	unsigned long irqflags;
	struct ndk_charge *charge;
	struct ib_mr *ibmr;
	int access;
	s32 status;

	access = ndk_mr_access(ibdev, flags);
	if (mr->fast_register || access < 0 || !length || !address ||
	    length > ibdev->attrs.max_mr_size)
		return -EINVAL;
	if (ndk_adapter_removed(mr->obj.adapter))
		return -ENODEV;
	spin_lock_irqsave(&mr->lock, irqflags);
	if (mr->state != NDK_MR_IDLE) {
		spin_unlock_irqrestore(&mr->lock, irqflags);
		return -EBUSY;
	}
	mr->state = NDK_MR_BUSY;
	spin_unlock_irqrestore(&mr->lock, irqflags);

	ibmr = ib_reg_user_mr(mr->pd->ibpd, address, length, address, access);
	if (IS_ERR(ibmr))
		goto err_idle;
	/*
	 * After the driver's pin, which RLIMIT_MEMLOCK bounds: before it, a
	 * length the caller could never pin would size the stand-in.
	 */
	charge = ndk_charge_alloc(ndk_mr_user_charge(address, length));
	if (!charge)
		goto err_dereg;
	mr->ibmr = ibmr;
	mr->driver_charge = charge;
	mr->user = true;
	mr->base_va = address;
	mr->length = length;
	mr->flags = flags;
	mr->writable = ndk_mr_access_writes(access);
	spin_lock_irqsave(&mr->lock, irqflags);
	ndk_tokens_publish(&mr->tokens, ibmr->lkey, ibmr->rkey);
	mr->state = NDK_MR_REGISTERED;
	spin_unlock_irqrestore(&mr->lock, irqflags);
	atomic64_inc(&ndk_stats.registrations);
	atomic64_add(length, &ndk_stats.registered_bytes);
	trace_ndk_mr_register(mr, address, length, flags, ibmr->rkey,
			      STATUS_SUCCESS);
	return 0;

err_dereg:
	ib_dereg_mr_user(ibmr, NULL);
	ibmr = ERR_PTR(-ENOMEM);
err_idle:
	status = ndk_status_from_errno(PTR_ERR(ibmr));
	spin_lock_irqsave(&mr->lock, irqflags);
	mr->state = NDK_MR_IDLE;
	spin_unlock_irqrestore(&mr->lock, irqflags);
	ndk_stat_error(status);
	trace_ndk_mr_register(mr, address, length, flags, 0, status);
	return PTR_ERR(ibmr);
}

/* Unmap and free a page list of ndk_mr_attach_pages(). */
static void ndk_mr_user_unmap(struct ib_device *ibdev, struct sg_table *sgt)
{
	ib_dma_unmap_sgtable_attrs(ibdev, sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

/**
 * ndk_mr_attach_pages() - give a user MR the page list windows need
 * @mr:     registered by ndk_register_user_mr(), without a page list
 * @pages:  the registration's pages, from the page holding its first
 *          byte to the page holding its last, pinned by the caller until
 *          the registration is gone
 * @npages: entries in @pages
 *
 * The pages become &ndk_mr.sgt, whole pages coalesced into runs and
 * mapped for the device, which binds and fast-registers over the MR read
 * (ndk_fr_src_pages()).  The caller checked that the range still maps the
 * pages the driver pinned (the registration's MMU notifier).
 *
 * Context: process context, may sleep; the caller serialises calls on @mr.
 * Return: 0; %-EBUSY (a page list is attached already); %-EINVAL (not a
 * registered user MR, or @npages does not match); %-ENOMEM.
 */
int ndk_mr_attach_pages(struct ndk_mr *mr, struct page **pages,
			unsigned long npages)
{
	struct ib_device *ibdev = ndk_ibdev(&mr->obj);
	u64 first = mr->base_va & PAGE_MASK;
	unsigned long flags;
	struct sg_table *sgt;
	int ret;

	if (!mr->user || mr->state != NDK_MR_REGISTERED ||
	    npages != (PAGE_ALIGN(mr->base_va + mr->length) - first) >>
		      PAGE_SHIFT)
		return -EINVAL;
	if (mr->sgt)
		return -EBUSY;
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL_ACCOUNT);
	if (!sgt)
		return -ENOMEM;
	/* Whole pages: every DMA page of the table starts page aligned. */
	ret = sg_alloc_table_from_pages_segment(sgt, pages, npages, 0,
						npages << PAGE_SHIFT,
						ib_dma_max_seg_size(ibdev),
						GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_free_sgt;
	ret = ib_dma_map_sgtable_attrs(ibdev, sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto err_free_table;
	spin_lock_irqsave(&mr->lock, flags);
	WRITE_ONCE(mr->sgt, sgt);
	spin_unlock_irqrestore(&mr->lock, flags);
	return 0;

err_free_table:
	sg_free_table(sgt);
err_free_sgt:
	kfree(sgt);
	return ret;
}

/**
 * ndk_mr_user_release() - release a registration of ndk_register_user_mr()
 * @mr: registered, busy (being deregistered or destroyed), no window in it
 *
 * The tokens go first, then the driver's MR (its keys die and it unpins
 * the pages), then the page list windows used.
 *
 * Context: process context, may sleep; any process.
 */
void ndk_mr_user_release(struct ndk_mr *mr)
{
	struct sg_table *sgt;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&mr->lock, flags);
	ndk_tokens_publish(&mr->tokens, 0, 0);
	sgt = mr->sgt;
	mr->sgt = NULL;
	spin_unlock_irqrestore(&mr->lock, flags);
	trace_ndk_mr_deregister(mr, mr->base_va, mr->length, STATUS_SUCCESS);
	atomic64_inc(&ndk_stats.deregistrations);
	atomic64_sub(mr->length, &ndk_stats.registered_bytes);
	ret = ib_dereg_mr_user(mr->ibmr, NULL);
	WARN_ONCE(ret, "ndk: ib_dereg_mr_user: %d\n", ret);
	if (sgt)
		ndk_mr_user_unmap(ndk_ibdev(&mr->obj), sgt);
	ndk_charge_free(mr->driver_charge);
	mr->driver_charge = NULL;
	mr->ibmr = NULL;
	mr->user = false;
}
