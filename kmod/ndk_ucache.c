// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the kernel half of the user-space registration cache.
 *
 * A registration cache keeps WSPRegisterMemory registrations alive after
 * their users are done, and hands them out again for the same buffer
 * without a system call.  It is only correct if it learns when the
 * buffer's virtual addresses stop meaning the pages the registration
 * pinned (munmap, mremap, madvise(MADV_DONTNEED), a new mmap(MAP_FIXED)
 * over it...).  User-space hooks on munmap() miss too much (direct system
 * calls, brk, other libraries); the kernel sees every such change through
 * an MMU notifier.
 *
 * Each open file has a generation array of NDK_U_CACHE_SLOTS u64s, in
 * pages charged to the opener (ndk_upages_alloc()) that it maps
 * read-only (mmap() at NDK_U_MMAP_CACHE).  Every registration gets a free
 * slot (or none, when all are in use) and an mmu_interval_notifier over
 * its page-aligned range.  The notifier bumps the slot's generation; so
 * does the registration's release.  MEM_REGISTER returns the slot and the
 * generation the registration was made under, so user space checks a
 * cached registration with one load: valid while the slot still holds
 * that generation.  Generations only grow and are never reset while the
 * file is open, so a reused slot cannot bring an old value back.
 *
 * Events that do not bump: MMU_NOTIFY_PROTECTION_PAGE (fork write-protects
 * the parent's copy-on-write PTEs; 6.1 copies pages that may be DMA-pinned
 * into the child at fork instead, page_needs_cow_for_dma(), so the
 * parent's PTEs keep mapping the pinned pages, writable),
 * MMU_NOTIFY_SOFT_DIRTY (clear_refs write-protects PTEs for soft-dirty
 * tracking; the next write fault reuses the same exclusive page) and
 * MMU_NOTIFY_PROTECTION_VMA (change_protection(): mprotect(), userfaultfd's
 * write protection, and automatic NUMA balancing, which sends it for every
 * populated range it scans, once per scan period).  In all three the
 * addresses keep mapping the pinned pages: a change of protection rewrites
 * PTEs, it does not replace their pages, and what replaces one later (a
 * copy-on-write fault, a NUMA migration's try_to_migrate()) sends CLEAR
 * of its own.  A registration keeps the rights it was given, as a verbs
 * MR does after mprotect(), and a repeat of it returns it (also under
 * userfaultfd's write protection, whose fault a new FOLL_WRITE pin would
 * raise: the device could write through the registration all along).
 * Everything else (UNMAP, CLEAR, RELEASE, MIGRATE, EXCLUSIVE) bumps.  A
 * spurious bump costs user space a new registration, and the first window
 * over an MR the driver registered its page list (EFAULT, below): bumping
 * for NUMA balancing's scans made both happen on NUMA hosts for no
 * change of pages.
 *
 * Registration against concurrent invalidation (the interval notifier's
 * collision-retry scheme, as ODP uses it): the notifier is inserted before
 * the pages are pinned; mmu_interval_read_begin() waits out an
 * invalidation in progress; after pinning, mmu_interval_read_retry() under
 * ndk_ucache.lock (the lock the callback holds around
 * mmu_interval_set_seq()) says whether an invalidation ran meanwhile.  If
 * none did, the pinned pages are the ones mapped now and the generation
 * read under the same lock is the one to return; if one did (often the
 * pin's own copy-on-write break of a page mapped read-only), the caller
 * (ndk_umr_acquire()) undoes the registration and makes it again, a few
 * times at most.  After the last try it fails (EAGAIN): a pin that
 * collided may hold another mapping's pages than the one whose pin mode
 * was checked (ndk_umem_mode()), so it is never kept.
 *
 * Every user registration is tracked, WSP registrations (MEM_REGISTER)
 * with a slot user space reads, MR_REGISTER's without one: the tracking
 * also tells whether the range still maps the registered pages when a
 * window first needs the page list of an MR the driver registered
 * (ndk_umr_pages()).
 *
 * Locking: ndk_ucache.lock, a spinlock, protects the slot bitmap, the
 * generations' writes and the notifiers' sequence numbers; the notifier
 * callback takes only that lock and never sleeps.  ndk_file.lock is not
 * needed: MEM_REGISTER pins (ndk_umr_acquire()) without it, since a fault
 * may take as long as user space wants (userfaultfd, FUSE) and device
 * removal needs the file's lock; a registration is only published, and
 * found by others, under ndk_file.lock afterwards.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/overflow.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include "ndk_file.h"
#include "ndk_netlink.h"

/* Bytes of the generation array, and of its mapping. */
#define NDK_UCACHE_BYTES	(NDK_U_CACHE_SLOTS * sizeof(u64))
#define NDK_UCACHE_MAP_BYTES	PAGE_ALIGN(NDK_UCACHE_BYTES)

static_assert(NDK_U_MMAP_CACHE % PAGE_SIZE == 0);

/* Generation bumps from MMU notifiers: debugfs ndk/ucache_invalidations. */
static atomic64_t ndk_ucache_invalidations = ATOMIC64_INIT(0);

/*
 * The tracking of MR_REGISTER's registrations: exact-size objects, charged
 * to the caller.  A MEM entry has its own (struct ndk_uobj_wsp).
 */
static struct kmem_cache *ndk_ucache_reg_cache;

/**
 * ndk_ucache_cache_init() - create the tracked registrations' slab cache
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int ndk_ucache_cache_init(void)
{
	ndk_ucache_reg_cache = KMEM_CACHE(ndk_ucache_reg, SLAB_ACCOUNT);
	return ndk_ucache_reg_cache ? 0 : -ENOMEM;
}

/**
 * ndk_ucache_cache_exit() - destroy it (every file closed)
 *
 * Context: module exit.
 */
void ndk_ucache_cache_exit(void)
{
	kmem_cache_destroy(ndk_ucache_reg_cache);
}

/**
 * ndk_ucache_init() - initialise the cache state of a new file
 * @uc: zeroed
 *
 * The generation array is allocated on first use.
 *
 * Context: any.
 */
void ndk_ucache_init(struct ndk_ucache *uc)
{
	spin_lock_init(&uc->lock);
}

/**
 * ndk_ucache_release() - free the generation array of a released file
 * @uc: no registration tracked any more, no mapping left (the mappings
 *      hold the file, so the release comes after the last munmap)
 *
 * Context: process context.
 */
void ndk_ucache_release(struct ndk_ucache *uc)
{
	WARN_ON(!bitmap_empty(uc->slots, NDK_U_CACHE_SLOTS));
	ndk_upages_free(uc->gens);
	uc->gens = NULL;
}

/* The generation array's pages, allocated on first use; NULL without memory. */
static struct ndk_upages *ndk_ucache_gens(struct ndk_ucache *uc)
{
	struct ndk_upages *old, *gens;

	/* Pairs with the cmpxchg() below: the array is zeroed before use. */
	gens = smp_load_acquire(&uc->gens);
	if (gens)
		return gens;
	gens = ndk_upages_alloc(NDK_UCACHE_MAP_BYTES >> PAGE_SHIFT);
	if (!gens)
		return NULL;
	/* The mmap handler may race with a registration: first one wins. */
	old = cmpxchg(&uc->gens, NULL, gens);
	if (old) {
		ndk_upages_free(gens);
		return old;
	}
	return gens;
}

/* Under ndk_ucache.lock: the registration's generation moves on. */
static void ndk_ucache_bump(struct ndk_ucache_reg *r)
{
	lockdep_assert_held(&r->uc->lock);
	WRITE_ONCE(*r->gen, *r->gen + 1);
}

/*
 * Test hook, debugfs ndk/invalidate_delay_ms (root only), 0 for off: each
 * invalidation that may sleep sleeps that long first (5 s at most), so
 * tests hold an invalidation of an address space open at will
 * (sec-foreign-release).
 */
static u32 ndk_ucache_delay_ms;

static bool ndk_ucache_invalidate(struct mmu_interval_notifier *mni,
				  const struct mmu_notifier_range *range,
				  unsigned long cur_seq)
{
	struct ndk_ucache_reg *r = container_of(mni, struct ndk_ucache_reg,
						notifier);
	u32 delay = READ_ONCE(ndk_ucache_delay_ms);
	bool bump;

	/* Capped: a value left set delays every user's invalidations. */
	if (delay && mmu_notifier_range_blockable(range))
		msleep(min(delay, 5000U));

	spin_lock(&r->uc->lock);
	mmu_interval_set_seq(mni, cur_seq);
	/* See the top of this file for why these three leave it valid. */
	bump = range->event != MMU_NOTIFY_PROTECTION_PAGE &&
	       range->event != MMU_NOTIFY_SOFT_DIRTY &&
	       range->event != MMU_NOTIFY_PROTECTION_VMA;
	if (bump) {
		ndk_ucache_bump(r);
		atomic64_inc(&ndk_ucache_invalidations);
		atomic64_inc(&r->uc->invalidations);
	}
	spin_unlock(&r->uc->lock);
	if (bump)
		ndk_nl_mem_invalidated(r->uc->file_id, r->uc->tgid,
				       READ_ONCE(r->handle), r->address,
				       r->length);
	return true;
}

static const struct mmu_interval_notifier_ops ndk_ucache_ops = {
	.invalidate = ndk_ucache_invalidate,
};

/**
 * ndk_ucache_reg_alloc() - storage for one tracking (MR_REGISTER)
 *
 * Context: process context, may sleep.
 * Return: zeroed storage, charged to the caller, or NULL.
 */
struct ndk_ucache_reg *ndk_ucache_reg_alloc(void)
{
	return kmem_cache_zalloc(ndk_ucache_reg_cache, GFP_KERNEL_ACCOUNT);
}

/**
 * ndk_ucache_reg_free() - free what ndk_ucache_reg_alloc() gave
 * @r: untracked (or never tracked), or NULL
 *
 * Context: any.
 */
void ndk_ucache_reg_free(struct ndk_ucache_reg *r)
{
	if (r)
		kmem_cache_free(ndk_ucache_reg_cache, r);
}

/**
 * ndk_ucache_track() - start tracking a range that is to be registered
 * @uc:      the file's cache state
 * @r:       the tracking's storage, not tracking anything
 * @mm:      the calling process's mm (current->mm), the file's opener
 * @address: user address of the first byte
 * @length:  bytes, > 0; @address + @length does not wrap
 * @slot:    take a free slot (WSP registrations, whose generation user
 *           space reads); without one, or when none is free, the
 *           registration has a private generation (NDK_U_CACHE_SLOT_NONE)
 *
 * Inserts an MMU notifier over the page-aligned range before anything is
 * pinned; ndk_ucache_begin() and ndk_ucache_end() then bracket the pin
 * (see the top of this file).  ndk_ucache_untrack() undoes it.
 *
 * Context: process context of the owner of @mm, may sleep; the file's
 * lock not needed.
 * Return: 0, %-ENOMEM; what mmu_interval_notifier_insert() returns.  On
 * failure @r tracks nothing.
 */
int ndk_ucache_track(struct ndk_ucache *uc, struct ndk_ucache_reg *r,
		     struct mm_struct *mm, u64 address, u64 length, bool slot)
{
	unsigned long start = address & PAGE_MASK;
	unsigned long end = PAGE_ALIGN(address + length);
	struct ndk_upages *pages;
	u64 *gens = NULL;
	u32 s = NDK_U_CACHE_SLOTS;
	int ret;

	if (slot) {
		pages = ndk_ucache_gens(uc);
		if (!pages)
			return -ENOMEM;
		gens = pages->va;
	}
	r->uc = uc;
	r->handle = 0;
	r->address = address;
	r->length = length;
	r->slot = NDK_U_CACHE_SLOT_NONE;
	r->own = 0;
	r->gen = &r->own;
	r->registered = 0;
	spin_lock(&uc->lock);
	if (slot)
		s = find_first_zero_bit(uc->slots, NDK_U_CACHE_SLOTS);
	if (s < NDK_U_CACHE_SLOTS) {
		__set_bit(s, uc->slots);
		r->slot = s;
		r->gen = &gens[s];
	}
	spin_unlock(&uc->lock);

	ret = mmu_interval_notifier_insert(&r->notifier, mm, start,
					   end - start, &ndk_ucache_ops);
	if (ret) {
		spin_lock(&uc->lock);
		if (r->slot != NDK_U_CACHE_SLOT_NONE)
			__clear_bit(r->slot, uc->slots);
		spin_unlock(&uc->lock);
	}
	return ret;
}

/**
 * ndk_ucache_begin() - a pin of the tracked range starts
 * @r: tracked by ndk_ucache_track()
 *
 * Waits out an invalidation in progress.
 *
 * Context: process context, may sleep.
 * Return: the notifier's sequence number, for ndk_ucache_end().
 */
unsigned long ndk_ucache_begin(struct ndk_ucache_reg *r)
{
	return mmu_interval_read_begin(&r->notifier);
}

/**
 * ndk_ucache_end() - the pin begun by ndk_ucache_begin() is done
 * @r:   tracked by ndk_ucache_track()
 * @seq: what ndk_ucache_begin() returned
 *
 * When no invalidation collided with the pin, records the generation the
 * registration was made under: the current one.  A pin that collided is
 * never kept (ndk_umr_acquire()), so it records nothing.
 *
 * Context: any.
 * Return: true when an invalidation collided with the pin: the pinned
 * pages may not be the ones mapped now.
 */
bool ndk_ucache_end(struct ndk_ucache_reg *r, unsigned long seq)
{
	bool retry;

	spin_lock(&r->uc->lock);
	retry = mmu_interval_read_retry(&r->notifier, seq);
	if (!retry)
		r->registered = *r->gen;
	spin_unlock(&r->uc->lock);
	return retry;
}

/**
 * ndk_ucache_untrack() - the registration goes: stop tracking its range
 * @r: tracking since ndk_ucache_track(), or NULL; its storage stays
 *
 * Removes the notifier (waiting for a callback in progress), then moves
 * the slot's generation on, so every cached copy of the registration is
 * stale, and frees the slot.  The pages stay pinned: the caller unpins
 * them once the device can no longer reach them.
 *
 * Context: process context, may sleep; the file's lock held once the
 * registration is published.
 */
void ndk_ucache_untrack(struct ndk_ucache_reg *r)
{
	if (!r)
		return;
	mmu_interval_notifier_remove(&r->notifier);
	spin_lock(&r->uc->lock);
	ndk_ucache_bump(r);
	if (r->slot != NDK_U_CACHE_SLOT_NONE)
		__clear_bit(r->slot, r->uc->slots);
	spin_unlock(&r->uc->lock);
}

/**
 * ndk_ucache_current() - does the registration still map its range?
 * @r: tracked by ndk_ucache_track()
 *
 * Context: any.
 * Return: false once the range was unmapped, remapped or otherwise
 * invalidated since the registration.
 */
bool ndk_ucache_current(const struct ndk_ucache_reg *r)
{
	return READ_ONCE(*r->gen) == r->registered;
}

/**
 * ndk_ucache_result() - the cache fields of MEM_REGISTER's answer
 * @r:          tracked by ndk_ucache_track()
 * @slot:       out: the slot, or NDK_U_CACHE_SLOT_NONE
 * @generation: out: the generation the registration was made under
 *              (0 without a slot)
 *
 * Context: any.
 */
void ndk_ucache_result(const struct ndk_ucache_reg *r, u32 *slot,
		       u64 *generation)
{
	*slot = r->slot;
	*generation = r->slot == NDK_U_CACHE_SLOT_NONE ? 0 : r->registered;
}

/**
 * ndk_ucache_mmap() - map the generation array read-only
 * @uc:  the file's cache state
 * @vma: the caller's new mapping: MAP_SHARED, PROT_READ, at offset
 *       NDK_U_MMAP_CACHE, at most the array's size (rounded to pages)
 *
 * The mapping can never become writable or executable (VM_MAYWRITE and
 * VM_MAYEXEC are cleared).  The caller checked that the calling process
 * opened the file.
 *
 * Context: process context, mmap lock held for writing.
 * Return: 0; %-EINVAL (another offset, larger than the array, not
 * MAP_SHARED); %-EPERM (PROT_WRITE or PROT_EXEC); %-ENOMEM.
 */
int ndk_ucache_mmap(struct ndk_ucache *uc, struct vm_area_struct *vma)
{
	unsigned long size = vma->vm_end - vma->vm_start;
	struct ndk_upages *gens;

	if (vma->vm_pgoff != NDK_U_MMAP_CACHE >> PAGE_SHIFT ||
	    size > NDK_UCACHE_MAP_BYTES || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	gens = ndk_ucache_gens(uc);
	if (!gens)
		return -ENOMEM;
	vma->vm_flags &= ~VM_MAYWRITE;
	return ndk_upages_mmap(gens, vma);
}

/**
 * ndk_ucache_invalidations_total() - generation bumps by MMU notifiers
 *
 * Context: any.
 * Return: the count since the module was loaded.
 */
u64 ndk_ucache_invalidations_total(void)
{
	return atomic64_read(&ndk_ucache_invalidations);
}

static int ndk_ucache_invalidations_get(void *data, u64 *val)
{
	*val = ndk_ucache_invalidations_total();
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(ndk_ucache_invalidations_fops,
			 ndk_ucache_invalidations_get, NULL, "%llu\n");

/**
 * ndk_ucache_debugfs_init() - debugfs counter of the registration cache
 * @dir: ndk.ko's debugfs directory
 *
 * ndk/ucache_invalidations: generation bumps made by MMU notifiers since
 * the module was loaded (releases of registrations are not counted).
 *
 * Context: module init.
 */
void ndk_ucache_debugfs_init(struct dentry *dir)
{
	debugfs_create_file_unsafe("ucache_invalidations", 0444, dir, NULL,
				   &ndk_ucache_invalidations_fops);
	debugfs_create_u32("invalidate_delay_ms", 0600, dir,
			   &ndk_ucache_delay_ms);
}
