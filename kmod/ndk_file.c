// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the objects of one open /dev/ndk file.
 *
 * Every open of /dev/ndk gets a struct ndk_file: a table of the objects
 * created through it (an xarray; handles are allocated cyclically from 1,
 * so 0 is never valid and a closed handle is not soon reused; the table's
 * entries and their release order are ndk_uobj.c's), a queue of events
 * (ndk_uevent.c) and the mm of the process that opened it.  A handle means something only on its
 * own file: another file's handle is not in the table (-ENOENT), and a
 * process that shares the file without being its opener (fork, SCM_RIGHTS)
 * is refused every object command (-EPERM): registrations belong to the
 * registering process alone (WSPRegisterMemory).
 *
 * Each entry wraps an object of the kernel API (ndk_open_adapter_id(),
 * ndk_create_pd(), ndk_create_mr() + ndk_register_mr()) and is released
 * through the same API (ndk_deregister_mr(), ndk_close_*()), so this file
 * stays a translation layer.  HANDLE_CLOSE refuses an entry whose object
 * is busy (-EBUSY: a parent with children, ndk_uobj_busy()).  The last
 * close of the file releases what is left, children before parents.
 *
 * Registrations: ndk_umr.c.
 *
 * Locking: ndk_file.lock serialises every command on the file and the
 * release.  It nests outside every ndk lock (the kernel API is called with
 * it held).  It is never held across an access to user memory that may
 * fault (device removal takes it, and a fault may wait on user space for
 * ever: userfaultfd, FUSE): commands copy their input before taking it and
 * their output after dropping it, and registrations pin their pages
 * without it, then look their PD or MR up again (ndk_uv_mem_register()).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include <linux/poll.h>

#include "ndk_file.h"
#include "ndk_mr.h"

/**
 * ndk_errno_from_status() - the errno a command returns for an NTSTATUS
 * @status: what an NDK function returned inline
 *
 * One table, the inverse of libndk's: Documentation/uapi.md.
 *
 * Context: any.
 * Return: 0 for success and STATUS_PENDING, else a negative errno.
 */
int ndk_errno_from_status(s32 status)
{
	switch (status) {
	case STATUS_SUCCESS:
	case STATUS_PENDING:
		return 0;
	case STATUS_INSUFFICIENT_RESOURCES:
		return -ENOMEM;
	case STATUS_INVALID_PARAMETER:
	case STATUS_INVALID_PARAMETER_MIX:
		return -EINVAL;
	case STATUS_DEVICE_REMOVED:
		return -ENODEV;
	case STATUS_DEVICE_BUSY:
		return -EBUSY;
	case STATUS_ACCESS_VIOLATION:
		return -EACCES;
	case STATUS_INVALID_DEVICE_REQUEST:
		return -EBADRQC;
	case STATUS_INVALID_DEVICE_STATE:
		return -EISCONN;
	case STATUS_CONNECTION_INVALID:
		return -ENOTCONN;
	case STATUS_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	case STATUS_BUFFER_TOO_SMALL:
		return -EOVERFLOW;
	case STATUS_INVALID_ADDRESS:
		return -EADDRNOTAVAIL;
	case STATUS_SHARING_VIOLATION:
	case STATUS_ADDRESS_ALREADY_EXISTS:
		return -EADDRINUSE;
	case STATUS_CONNECTION_REFUSED:
		return -ECONNREFUSED;
	case STATUS_IO_TIMEOUT:
		return -ETIMEDOUT;
	case STATUS_NETWORK_UNREACHABLE:
		return -ENETUNREACH;
	case STATUS_HOST_UNREACHABLE:
		return -EHOSTUNREACH;
	case STATUS_CANCELLED:
		return -ECANCELED;
	case STATUS_IMPLEMENTATION_LIMIT:
		return -ERANGE;
	default:
		return -EIO;
	}
}

/**
 * ndk_file_open() - open of /dev/ndk: a new, empty handle table
 * @inode: the device inode
 * @file:  the new file
 *
 * Context: process context.
 * Return: 0, %-ENOMEM or %-EBUSY (no netlink id left).
 */
int ndk_file_open(struct inode *inode, struct file *file)
{
	struct ndk_file *nf;
	int ret;

	nf = kzalloc(sizeof(*nf), GFP_KERNEL_ACCOUNT);
	if (!nf)
		return -ENOMEM;
	mutex_init(&nf->lock);
	xa_init_flags(&nf->handles, XA_FLAGS_ALLOC1);
	spin_lock_init(&nf->ev_lock);
	INIT_LIST_HEAD(&nf->events);
	init_waitqueue_head(&nf->wait);
	ndk_ucache_init(&nf->ucache);
	refcount_set(&nf->ref, 1);
	nf->tgid = get_pid(task_tgid(current));
	nf->ucache.tgid = task_tgid_nr(current);
	get_task_comm(nf->comm, current);
	if (current->mm) {
		mmgrab(current->mm);
		nf->mm = current->mm;
	}
	/* Visible to registry readers from here on, owner fields set. */
	ret = ndk_files_add(nf);
	if (ret)
		goto err_free_nf;
	file->private_data = nf;
	pr_debug("ndk: file %u opened by pid %d (%s)\n", nf->id,
		 nf->ucache.tgid, nf->comm);
	return nonseekable_open(inode, file);

err_free_nf:
	if (nf->mm)
		mmdrop(nf->mm);
	put_pid(nf->tgid);
	kfree(nf);
	return ret;
}

/*
 * mmap at NDK_U_MMAP_CACHE_COUNTERS: one page of struct
 * ndk_u_cache_counters that user space writes (MAP_SHARED, read-write,
 * never executable) and the kernel only reads for netlink.
 */
static int ndk_file_counters_mmap(struct ndk_file *nf,
				  struct vm_area_struct *vma)
{
	struct ndk_upages *page, *old;

	if (vma->vm_end - vma->vm_start > PAGE_SIZE ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* Pairs with the cmpxchg() below: the page is zeroed before use. */
	page = smp_load_acquire(&nf->counters_page);
	if (!page) {
		page = ndk_upages_alloc(1);
		if (!page)
			return -ENOMEM;
		/* Two mappings may race: the first page stays. */
		old = cmpxchg(&nf->counters_page, NULL, page);
		if (old) {
			ndk_upages_free(page);
			page = old;
		} else {
			/* Published once, after the page: netlink reads it. */
			smp_store_release(&nf->counters, page->va);
		}
	}
	return ndk_upages_mmap(page, vma);
}

/**
 * ndk_file_mmap() - mmap of /dev/ndk
 * @file: the file
 * @vma:  the new mapping: the registration cache generations
 *        (ndk_ucache_mmap() checks it), the cache counters page or a
 *        CQ's or QP's ring (ndk_uring_mmap())
 *
 * Context: process context, mmap lock held for writing.
 * Return: 0; %-EPERM (not the opener, PROT_EXEC); %-EINVAL (a size or
 * offset of neither); see ndk_ucache_mmap().
 */
int ndk_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct ndk_file *nf = file->private_data;

	if (!nf->mm || current->mm != nf->mm)
		return -EPERM;
	if (vma->vm_pgoff == NDK_U_MMAP_CACHE_COUNTERS >> PAGE_SHIFT)
		return ndk_file_counters_mmap(nf, vma);
	if (vma->vm_pgoff >= 1UL << (NDK_U_MMAP_RING_SHIFT - PAGE_SHIFT))
		return ndk_uring_mmap(nf, vma);
	return ndk_ucache_mmap(&nf->ucache, vma);
}

/*
 * debugfs ndk/hold_file_lock_ms (root only), 0 for off: the next command
 * of any file holds the file's lock that long, once, as a command that
 * waits under it would (a notifier's removal), so tests reach a busy
 * file's lock from the registry's readers (netlink).
 */
static u32 ndk_hold_file_lock_ms;

/**
 * ndk_file_hold_once() - a debugfs hold: sleep its milliseconds, once
 * @ms: the hook's value, 0 for off; cleared by the caller that sleeps
 *
 * Context: process context, may sleep.
 */
void ndk_file_hold_once(u32 *ms)
{
	u32 hold = READ_ONCE(*ms);

	if (unlikely(hold) && cmpxchg(ms, hold, 0) == hold)
		msleep(hold);
}

/**
 * ndk_file_lock() - lock the file for an object command
 * @file: the file
 *
 * Context: process context, may sleep.
 * Return: the file's ndk_file, locked; ERR_PTR(-EPERM) when the calling
 * process is not the one that opened the file.
 */
struct ndk_file *ndk_file_lock(struct file *file)
{
	struct ndk_file *nf = file->private_data;

	if (!nf->mm || current->mm != nf->mm)
		return ERR_PTR(-EPERM);
	mutex_lock(&nf->lock);
	ndk_file_hold_once(&ndk_hold_file_lock_ms);
	return nf;
}

/**
 * ndk_file_lock_uobj_of() - lock the file and look a handle up
 * @file:   the file
 * @handle: the handle
 * @types:  the types it may have (ndk_uobj_find_of())
 * @nfp:    out: the file, locked, when an entry is returned
 *
 * The prologue of every command on a handle: on success the caller
 * unlocks (*@nfp)->lock when done; on an error nothing is held.
 *
 * Context: process context, may sleep.
 * Return: the entry, or an error of ndk_file_lock() or ndk_uobj_find_of().
 */
struct ndk_uobj *ndk_file_lock_uobj_of(struct file *file, u32 handle,
				       u32 types, struct ndk_file **nfp)
{
	struct ndk_file *nf = ndk_file_lock(file);
	struct ndk_uobj *u;

	if (IS_ERR(nf))
		return ERR_CAST(nf);
	u = ndk_uobj_find_of(nf, handle, types);
	if (IS_ERR(u))
		mutex_unlock(&nf->lock);
	else
		*nfp = nf;
	return u;
}

/*
 * The adapter's device is going away: release everything of the adapter
 * now (pinned pages come back), close it, and tell user space.  The
 * first of the file's adapters of the device with objects below it (its
 * adapter busy) releases what all of them hold, so the callbacks of the
 * others find their adapters idle and cost no sweep of the table.  The
 * handle stays, failing with -ENODEV, until
 * HANDLE_CLOSE.  ndk_close_adapter()
 * is never called with ndk_file.lock held elsewhere, so this may wait
 * for the lock.
 */
void ndk_file_adapter_removed(void *context)
{
	struct ndk_uobj *u = context;
	struct ndk_file *nf = u->nf;
	struct ndk_adapter *adapter;

	mutex_lock(&nf->lock);
	adapter = u->adapter;
	if (!adapter || xa_load(&nf->handles, u->handle) != u) {
		/*
		 * Being closed by another thread, which waits for us, or
		 * never published (ADAPTER_OPEN failing).
		 */
		mutex_unlock(&nf->lock);
		return;
	}
	if (ndk_uobj_busy(u))
		ndk_uobj_destroy_below(nf, adapter->dev);
	ndk_uobj_uncharge(u);
	u->adapter = NULL;
	ndk_uevent_queue(&u->removed, STATUS_DEVICE_REMOVED);
	mutex_unlock(&nf->lock);
	ndk_close_adapter(adapter);
}

/* The teardowns of files other processes closed last (ndk_file_release()). */
static struct workqueue_struct *ndk_release_wq;

/**
 * ndk_file_wq_init() - create the workqueue of deferred releases
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int ndk_file_wq_init(void)
{
	ndk_release_wq = alloc_workqueue("ndk_release", WQ_UNBOUND, 0);
	return ndk_release_wq ? 0 : -ENOMEM;
}

/**
 * ndk_file_wq_exit() - wait for the deferred releases, then destroy it
 *
 * Context: module exit, /dev/ndk deregistered, before anything the
 * releases use goes.
 */
void ndk_file_wq_exit(void)
{
	destroy_workqueue(ndk_release_wq);
}

/*
 * Release every object left: children before parents
 * (ndk_uobj_destroy_below()), each through the kernel API; pinned pages
 * come back to the opener's VmPin with their registrations (at once, or
 * when the teardown of a window still bound in one ends).  Adapters are
 * closed last, without the lock, since a removal callback may be waiting
 * for it.
 */
static void ndk_file_teardown(struct ndk_file *nf)
{
	struct ndk_uevent *e;
	struct ndk_uobj *u;
	unsigned long index;
	LIST_HEAD(adapters);

	mutex_lock(&nf->lock);
	ndk_uobj_destroy_below(nf, NULL);
	xa_for_each(&nf->handles, index, u) {
		ndk_uobj_adapter_detach(nf, u);
		list_add_tail(&u->removed.entry, &adapters);
	}
	mutex_unlock(&nf->lock);

	while (!list_empty(&adapters)) {
		u = list_first_entry(&adapters, struct ndk_uobj, removed.entry);
		list_del(&u->removed.entry);
		ndk_uobj_adapter_close(u);
	}
	/* What is left: owned events nobody took (request completions). */
	while ((e = ndk_uevent_take(nf))) {
		ndk_uevent_free(e);
		cond_resched();
	}
	ndk_ucache_release(&nf->ucache);
	ndk_file_put(nf);
}

static void ndk_file_release_work(struct work_struct *work)
{
	ndk_file_teardown(container_of(work, struct ndk_file, release_work));
}

/*
 * Whether the opener drops the file's last reference: by a close, or by its
 * exit, which in 6.1 puts its files after its mm is gone (do_exit() calls
 * exit_mm() before exit_files()).  Another process's exit, a kernel thread
 * (delayed fput, io_uring's exit work) and every other process are not.
 */
static bool ndk_file_opener_closes(const struct ndk_file *nf)
{
	if (current->mm)
		return current->mm == nf->mm;
	return !(current->flags & PF_KTHREAD) && task_tgid(current) == nf->tgid;
}

/**
 * ndk_file_release() - last close of /dev/ndk: release every object left
 * @inode: the device inode
 * @file:  the file
 *
 * The opener's own last close (or its exit) tears the file down before it
 * returns.  The last close in another process (a file inherited or passed
 * on with SCM_RIGHTS), even by that process's exit or from a kernel
 * thread, leaves the teardown to a worker and returns at once: the
 * teardown removes the registrations' MMU notifiers, and
 * mmu_interval_notifier_remove() waits, uninterruptibly, until no
 * invalidation of the opener's address space runs, which the opener
 * controls (security.md).  Until the worker has run, a device removal
 * releases the file's objects as it does an open file's; module unload
 * waits for the worker (ndk_file_wq_exit()).
 *
 * Context: process context (any process: the last holder of the file).
 * Return: 0.
 */
int ndk_file_release(struct inode *inode, struct file *file)
{
	struct ndk_file *nf = file->private_data;

	/* Not under nf->lock: the registry's lock comes before it. */
	ndk_files_del(nf);
	pr_debug("ndk: file %u released\n", nf->id);
	if (!ndk_file_opener_closes(nf)) {
		INIT_WORK(&nf->release_work, ndk_file_release_work);
		queue_work(ndk_release_wq, &nf->release_work);
		return 0;
	}
	ndk_file_teardown(nf);
	return 0;
}

/**
 * ndk_file_put() - drop a reference to a file's state
 * @nf: the file
 *
 * The release holds one reference; a registry reader looking into the
 * file holds another.  The last one frees what such a reader looks at:
 * the (empty) handle table, the owner's pid and address space, the cache
 * counters page, the lock; the file itself a grace period later, for
 * readers that passed it under RCU (ndk_file_registry.c).
 *
 * Context: process context.
 */
void ndk_file_put(struct ndk_file *nf)
{
	if (!refcount_dec_and_test(&nf->ref))
		return;
	xa_destroy(&nf->handles);
	ndk_upages_free(nf->counters_page);
	put_pid(nf->tgid);
	if (nf->mm)
		mmdrop(nf->mm);
	mutex_destroy(&nf->lock);
	kfree_rcu(nf, rcu);
}

/**
 * ndk_file_poll() - poll() of /dev/ndk: readable while an event is queued
 * @file: the file
 * @wait: poll table
 *
 * Context: process context.
 * Return: EPOLLIN | EPOLLRDNORM when NDK_IOCTL_EVENT_GET has something.
 */
__poll_t ndk_file_poll(struct file *file, struct poll_table_struct *wait)
{
	struct ndk_file *nf = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &nf->wait, wait);
	spin_lock_irq(&nf->ev_lock);
	if (!list_empty(&nf->events))
		mask = EPOLLIN | EPOLLRDNORM;
	spin_unlock_irq(&nf->ev_lock);
	return mask;
}

static int ndk_user_pinned_get(void *data, u64 *val)
{
	*val = ndk_umem_pinned_pages();
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(ndk_user_pinned_fops, ndk_user_pinned_get, NULL,
			 "%llu\n");

/**
 * ndk_file_debugfs_init() - debugfs counters of the user objects
 * @dir: ndk.ko's debugfs directory
 *
 * ndk/user_objects: handles open in every file; ndk/user_pinned_pages:
 * pages pinned by user registrations.  Both are 0 when no file holds an
 * object (tests check it after closing their files).  And the test hook
 * ndk/hold_file_lock_ms (ndk_file_lock()).
 *
 * Context: module init.
 */
void ndk_file_debugfs_init(struct dentry *dir)
{
	ndk_uobj_debugfs_init(dir);
	debugfs_create_file_unsafe("user_pinned_pages", 0444, dir, NULL,
				   &ndk_user_pinned_fops);
	debugfs_create_u32("hold_file_lock_ms", 0600, dir,
			   &ndk_hold_file_lock_ms);
}
