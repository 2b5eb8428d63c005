// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: pinning user memory for WSPRegisterMemory-style registration.
 *
 * ndk_umem_pin() checks that [address, address + length) lies wholly in
 * readable (and, for MEM_WRITE, writable) mappings of the calling
 * process, charges the pages to RLIMIT_MEMLOCK the way ib_umem_get()
 * does (mm->pinned_vm, shown as VmPin in /proc/<pid>/status; CAP_IPC_LOCK
 * exempt), pins them long-term (file pages that may wait on a server:
 * ndk_umem_pin_file()) and describes them as an MDL chain, the
 * input of ndk_register_mr().  ndk_umem_unpin() undoes all of it and may
 * run in any process (the last close of a file a child inherited): it
 * only needs the mm recorded at pin time, held by mmgrab().
 *
 * How pages are pinned, per mapping (Documentation/uapi.md):
 *  - MEM_WRITE: FOLL_LONGTERM | FOLL_WRITE.  Copy-on-write is broken now,
 *    so the device and the process share each page for good.
 *  - MEM_READ in a private (copy-on-write) mapping: FOLL_LONGTERM |
 *    FOLL_WRITE | FOLL_FORCE, as 6.1's ib_umem_get().  6.1 has no
 *    reliable read-only long-term pin in such mappings: a read-only pin
 *    of memory never written pins the shared zero page, and the process's
 *    first write then maps another page, which the device never sees.
 *    FOLL_FORCE also breaks copy-on-write in a read-only private mapping
 *    (the process keeps seeing the same, still read-only, page).
 *  - MEM_READ in a shared mapping: FOLL_LONGTERM only; a shared page is
 *    never replaced by copy-on-write.
 * FOLL_FORCE would also pin PROT_NONE memory, so the mappings are checked
 * first, under the mmap lock, segment by segment.  An mprotect() of memory
 * never touched between the check and the pin fires no MMU notifier and
 * goes unseen: the pin is then of the process's own private pages, read
 * only, which crosses no boundary.
 *
 * The pin mode is the rights': the caller asks for @write exactly when the
 * registration's IB access has a write right (ndk_mr_access_writes()), and
 * a read-only pin is described by MDL elements marked NDK_MDL_READ_ONLY,
 * so that no later registration can grant a write right over it.  A
 * writable long-term pin of a shared mapping of a regular file (ext4, xfs,
 * 9p...) is refused with -EOPNOTSUPP, as Linux 6.5 and later refuse it in
 * GUP: the file system's writeback does not expect a device to write its
 * page cache behind it.  Anonymous, shmem (tmpfs, memfd) and hugetlbfs
 * memory stays allowed.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <ndk/ndk_mdl.h>

#include "ndk_core.h"

/* Largest MDL element: ndk_mdl.byte_count is a u32. */
#define NDK_UMEM_MDL_MAX	SZ_1G

static atomic_long_t ndk_umem_pinned = ATOMIC_LONG_INIT(0);

/**
 * ndk_umem_pinned_pages() - pages pinned by every user registration now
 *
 * Context: any.
 * Return: the count (debugfs ndk/user_pinned_pages).
 */
long ndk_umem_pinned_pages(void)
{
	return atomic_long_read(&ndk_umem_pinned);
}

/*
 * The FOLL_* flags for the mapping at @addr, and the end of the segment
 * they apply to; -EFAULT when @addr is not mapped, or mapped without the
 * rights the registration asks for, or not by ordinary pages;
 * -EOPNOTSUPP for a writable pin of a shared mapping of a regular file,
 * or any pin of a DAX file (FOLL_LONGTERM refuses those).
 * *@driver says whether ib_umem_get() would pin this segment as the
 * rights need (see ndk_umem_mode()); *@file_io whether its faults may
 * wait on a file's server or on user space (FUSE, NFS: any file but
 * shmem and hugetlbfs).
 */
static int ndk_umem_segment(struct mm_struct *mm, unsigned long addr,
			    unsigned long end, bool write,
			    unsigned long *seg_end, unsigned int *gup,
			    bool *driver, bool *file_io)
{
	struct vm_area_struct *vma;
	int ret = 0;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (!vma || (vma->vm_flags & (VM_IO | VM_PFNMAP)) ||
	    !(vma->vm_flags & VM_READ) ||
	    (write && !(vma->vm_flags & VM_WRITE))) {
		ret = -EFAULT;
		goto out_unlock;
	}
	*file_io = vma->vm_file && !shmem_file(vma->vm_file) &&
		   !is_vm_hugetlb_page(vma);
	if ((write && *file_io && (vma->vm_flags & VM_SHARED)) ||
	    vma_is_fsdax(vma)) {
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	*seg_end = min(end, vma->vm_end);
	*gup = FOLL_LONGTERM;
	if (write)
		*gup |= FOLL_WRITE;
	else if (is_cow_mapping(vma->vm_flags))
		*gup |= FOLL_WRITE | FOLL_FORCE;
	/*
	 * The driver pins FOLL_WRITE (| FOLL_FORCE without a write right):
	 * the rights' mode only where that is ours too.  And no file pages
	 * but shmem and hugetlbfs: a fault on any other file (FUSE, NFS)
	 * may wait on a server for ever, and the driver pins holding the PD.
	 */
	*driver = (*gup & FOLL_WRITE) && !*file_io;
out_unlock:
	mmap_read_unlock(mm);
	return ret;
}

/*
 * Pin @n pages at @addr of a file whose faults may wait on its server or
 * on user space (FUSE): a long-term pin faults them in without
 * FAULT_FLAG_KILLABLE and holding the mmap lock (6.1's
 * __gup_longterm_locked() has no "locked"), so its thread could neither
 * be killed nor let the process's mmap lock go while the server keeps it
 * waiting.  So these are pinned with the lock droppable and the wait
 * killable where the file system's is (FUSE waits uninterruptibly for a
 * request its server has taken, for any reader), FOLL_LONGTERM left
 * out; what FOLL_LONGTERM adds is moving
 * pages out of CMA and ZONE_MOVABLE first, so pages that are there are
 * unpinned and pinned again the long-term way: they are resident then,
 * unless evicted in between, and that re-pin faults holding the lock
 * (Documentation/security.md, section 9).
 */
static long ndk_umem_pin_file(struct mm_struct *mm, unsigned long addr,
			      unsigned long n, unsigned int gup,
			      struct page **pages)
{
	int locked = 1;
	long got, i;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	got = pin_user_pages_remote(mm, addr, n, gup & ~FOLL_LONGTERM, pages,
				    NULL, &locked);
	if (locked)
		mmap_read_unlock(mm);
	for (i = 0; i < got; i++) {
		if (!is_longterm_pinnable_page(pages[i])) {
			unpin_user_pages(pages, got);
			return pin_user_pages_fast(addr, n, gup, pages);
		}
	}
	return got;
}

/* Pin [@addr, @end) (page aligned) into @pages. */
static int ndk_umem_pin_range(struct mm_struct *mm, unsigned long addr,
			      unsigned long end, bool write, struct page **pages,
			      unsigned long *pinned)
{
	unsigned long seg_end, chunk;
	unsigned int gup;
	bool driver, file_io;
	long n;
	int ret;

	while (addr < end) {
		ret = ndk_umem_segment(mm, addr, end, write, &seg_end, &gup,
				       &driver, &file_io);
		if (ret)
			return ret;
		while (addr < seg_end) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
			chunk = min_t(unsigned long,
				      (seg_end - addr) >> PAGE_SHIFT, SZ_64K);
			if (file_io)
				n = ndk_umem_pin_file(mm, addr, chunk, gup,
						      pages + *pinned);
			else
				n = pin_user_pages_fast(addr, chunk, gup,
							pages + *pinned);
			if (n < 0)
				return n;
			if (!n)
				return -EFAULT;
			*pinned += n;
			addr += (unsigned long)n << PAGE_SHIFT;
		}
	}
	return 0;
}

/* An MDL chain over the pinned pages, elements of at most 1 GiB. */
static int ndk_umem_build_mdl(struct ndk_umem *um)
{
	struct ndk_mdl **link = &um->mdl;
	u64 va = um->address, left = um->length;
	unsigned long page = 0;

	while (left) {
		u32 count = min_t(u64, left,
				  NDK_UMEM_MDL_MAX - offset_in_page(va));
		struct ndk_mdl *mdl;

		mdl = ndk_mdl_from_pages(um->pages + page, va, count,
					 NDK_GFP_ARRAY);
		if (!mdl) {
			ndk_mdl_free_chain(um->mdl);
			um->mdl = NULL;
			return -ENOMEM;
		}
		if (!um->writable)
			mdl->flags |= NDK_MDL_READ_ONLY;
		*link = mdl;
		link = &mdl->next;
		page += mdl->page_count;
		va += count;
		left -= count;
	}
	return 0;
}

/**
 * ndk_umem_pin() - check, charge and pin user memory; describe it as MDLs
 * @um:      zeroed; receives the pinned range
 * @mm:      the calling process's mm (current->mm); grabbed on success
 * @address: user address of the first byte
 * @length:  bytes, > 0
 * @write:   the device may write the memory: the registration's access
 *           has a write right (ndk_mr_access_writes())
 *
 * Context: process context of the owner of @mm, may sleep.
 * Return: 0; %-EFAULT when the range wraps, reaches the kernel half, or
 * is not wholly mapped readable (and writable for @write) by ordinary
 * pages; %-EPERM when RLIMIT_MEMLOCK is 0 (without CAP_IPC_LOCK), as
 * ib_umem_get(); %-ENOMEM when the pages would exceed RLIMIT_MEMLOCK
 * (without CAP_IPC_LOCK) or memory runs out; %-EOPNOTSUPP when @write and
 * the range is a shared mapping of a regular file (not shmem or hugetlbfs);
 * %-EINTR on a fatal signal; another
 * negative errno from pin_user_pages_fast().
 */
int ndk_umem_pin(struct ndk_umem *um, struct mm_struct *mm, u64 address,
		 u64 length, bool write)
{
	unsigned long start, end, npages, lock_limit;
	unsigned long pinned = 0;
	u64 last;
	int ret;

	if (check_add_overflow(address, length, &last) ||
	    !access_ok(u64_to_user_ptr(address), length))
		return -EFAULT;
	start = address & PAGE_MASK;
	end = PAGE_ALIGN(last);
	npages = (end - start) >> PAGE_SHIFT;

	/* No memlock allowance at all: ib_umem_get() refuses with -EPERM. */
	if (!can_do_mlock())
		return -EPERM;
	lock_limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	if (atomic64_add_return(npages, &mm->pinned_vm) > lock_limit &&
	    !capable(CAP_IPC_LOCK)) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	um->pages = kvmalloc_array(npages, sizeof(*um->pages),
				   NDK_GFP_ARRAY);
	if (!um->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = ndk_umem_pin_range(mm, start, end, write, um->pages, &pinned);
	if (ret)
		goto err_unpin;

	um->address = address;
	um->length = length;
	um->npages = npages;
	um->writable = write;
	ret = ndk_umem_build_mdl(um);
	if (ret)
		goto err_unpin;
	mmgrab(mm);
	um->mm = mm;
	atomic_long_add(npages, &ndk_umem_pinned);
	return 0;

err_unpin:
	unpin_user_pages(um->pages, pinned);
	kvfree(um->pages);
	um->pages = NULL;
	um->length = 0;		/* not held (ndk_umem_held()) */
err_uncharge:
	atomic64_sub(npages, &mm->pinned_vm);
	return ret;
}

/**
 * ndk_umem_mode() - who pins a user range for a registration?
 * @mm:      the calling process's mm (current->mm)
 * @address: user address of the first byte
 * @length:  bytes, > 0; the range does not wrap
 * @write:   the registration's access has a write right
 *
 * ib_umem_get() pins every page FOLL_WRITE, adding FOLL_FORCE without a
 * write right: the pin mode the rights need (ndk_umem_pin()) only for
 * writable pins and for read-only pins of private mappings.  A read-only
 * registration of a shared mapping needs ndk.ko's own pin (FOLL_LONGTERM
 * alone).  So do mappings of files other than shmem and hugetlbfs: the
 * driver pins with the device's PD held, and a fault on such a file may
 * wait on user space for ever (FUSE), which would hold device removal.
 * The answer holds when it is given; the caller tracks the range (MMU
 * notifier) to learn of changes made before the pin.
 *
 * Context: process context of the owner of @mm, may sleep.
 * Return: 1 (the driver may pin it), 0 (ndk.ko pins it); what
 * ndk_umem_pin() would refuse the range with (%-EFAULT, %-EOPNOTSUPP).
 */
int ndk_umem_mode(struct mm_struct *mm, u64 address, u64 length, bool write)
{
	unsigned long addr = address & PAGE_MASK;
	unsigned long end = PAGE_ALIGN(address + length);
	unsigned long seg_end;
	unsigned int gup;
	bool driver, file_io, all = true;
	int ret;

	while (addr < end) {
		ret = ndk_umem_segment(mm, addr, end, write, &seg_end, &gup,
				       &driver, &file_io);
		if (ret)
			return ret;
		all &= driver;
		addr = seg_end;
	}
	return all;
}

/**
 * ndk_umem_hold() - describe a range the device driver pinned
 * @um:      zeroed; receives the range
 * @address: user address of the first byte
 * @length:  bytes, > 0
 * @write:   the registration has a write right
 *
 * The driver charged the pages (ib_umem_get()); ndk.ko holds none until
 * ndk_umem_pin_again() pins them for a page list.
 *
 * Context: any.
 */
void ndk_umem_hold(struct ndk_umem *um, u64 address, u64 length, bool write)
{
	um->address = address;
	um->length = length;
	um->npages = (PAGE_ALIGN(address + length) - (address & PAGE_MASK)) >>
		     PAGE_SHIFT;
	um->writable = write;
	um->driver = true;
	atomic_long_add(um->npages, &ndk_umem_pinned);
}

/**
 * ndk_umem_pin_again() - pin a range the driver pinned, for a page list
 * @um: described by ndk_umem_hold(), no pages of its own yet
 *
 * The pages are resident and pinned already, so this never faults:
 * pin_user_pages_fast_only() either finds every page in the page tables
 * or fails.  They are not charged again.  Whether they are still the
 * pages the driver pinned is the caller's to check afterwards (the
 * registration's MMU notifier).
 *
 * Context: process context of the owner of the memory (current->mm).
 * Return: 0; %-ENOMEM; %-EFAULT (a page is not mapped as it was).
 */
int ndk_umem_pin_again(struct ndk_umem *um)
{
	unsigned int gup = FOLL_LONGTERM | (um->writable ? FOLL_WRITE : 0);
	unsigned long addr = um->address & PAGE_MASK, done = 0;
	struct page **pages;
	int n;

	pages = kvmalloc_array(um->npages, sizeof(*pages), NDK_GFP_ARRAY);
	if (!pages)
		return -ENOMEM;
	while (done < um->npages) {
		n = pin_user_pages_fast_only(addr + (done << PAGE_SHIFT),
					     min_t(unsigned long,
						   um->npages - done, SZ_64K),
					     gup, pages + done);
		if (n <= 0) {
			unpin_user_pages(pages, done);
			kvfree(pages);
			return -EFAULT;
		}
		done += n;
	}
	um->pages = pages;
	return 0;
}

/**
 * ndk_umem_unpin_untouched() - ndk_umem_unpin() of pages no device wrote
 * @um: pinned by ndk_umem_pin() (or held) and never registered by ndk.ko:
 *      a pin an invalidation collided with, or one whose registration
 *      failed
 *
 * The pages are not dirtied.  A pin that collided may hold pages of a
 * mapping the walk never checked (a file's page cache mapped over the
 * range while a fault dropped the mmap lock), which only a writer may
 * dirty; nothing wrote them.
 *
 * Context: process context, may sleep; any process.
 */
void ndk_umem_unpin_untouched(struct ndk_umem *um)
{
	um->writable = false;
	ndk_umem_unpin(um);
}

/**
 * ndk_umem_unpin() - release what ndk_umem_pin() or ndk_umem_hold() took
 * @um: no registration may use its pages any more; nothing happens
 *      when it holds no range (ndk_umem_held())
 *
 * Pages the device may have written are marked dirty.
 *
 * Context: process context, may sleep; any process.
 */
void ndk_umem_unpin(struct ndk_umem *um)
{
	if (!ndk_umem_held(um))
		return;
	if (um->driver) {
		/* The driver's pin goes with its MR; only ours is left. */
		if (um->pages)
			unpin_user_pages(um->pages, um->npages);
		kvfree(um->pages);
		atomic_long_sub(um->npages, &ndk_umem_pinned);
		memset(um, 0, sizeof(*um));
		return;
	}
	ndk_mdl_free_chain(um->mdl);
	unpin_user_pages_dirty_lock(um->pages, um->npages, um->writable);
	kvfree(um->pages);
	atomic64_sub(um->npages, &um->mm->pinned_vm);
	atomic_long_sub(um->npages, &ndk_umem_pinned);
	mmdrop(um->mm);
	memset(um, 0, sizeof(*um));
}
