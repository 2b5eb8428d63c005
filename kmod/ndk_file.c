// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the objects of one open /dev/ndk file.
 *
 * Every open of /dev/ndk gets a struct ndk_file: a table of the objects
 * created through it (an xarray; handles are allocated cyclically from 1,
 * so 0 is never valid and a closed handle is not soon reused) and the mm
 * of the process that opened it.  A handle means something only on its
 * own file: another file's handle is not in the table (-ENOENT), and a
 * process that shares the file without being its opener (fork, SCM_RIGHTS)
 * is refused every object command (-EPERM): registrations belong to the
 * registering process alone (WSPRegisterMemory).
 *
 * Each entry wraps an object of the kernel API (ndk_open_adapter_id(),
 * ndk_create_pd(), ndk_create_mr() + ndk_register_mr()) and is released
 * through the same API (ndk_deregister_mr(), ndk_close_*()), so this file
 * stays a translation layer.  An entry counts the entries created from it;
 * HANDLE_CLOSE refuses a parent with children (-EBUSY).  The last close of
 * the file releases what is left, children before parents.
 *
 * Registrations (WSPRegisterMemory): the same (address, length, flags) on
 * the same PD gives the same handle and one more reference, as long as
 * the range still maps the registered pages (its cache generation has not
 * moved, ndk_ucache.c); each MEM_DEREGISTER drops one; at zero the region
 * is deregistered, then its pages are unpinned and uncharged (ndk_umem.c).
 *
 * Locking: ndk_file.lock serialises every command on the file and the
 * release.  It nests outside every ndk lock (the kernel API is called with
 * it held).  It is never held across an access to user memory that may
 * fault (device removal takes it, and a fault may wait on user space for
 * ever: userfaultfd, FUSE): commands copy their input before taking it and
 * their output after dropping it, and registrations pin their pages
 * without it, then look their PD or MR up again (ndk_file_mem_register()).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include <linux/poll.h>
#include <linux/vmalloc.h>

#include "ndk_file.h"
#include "ndk_mr.h"

/* Live entries of every file: debugfs ndk/user_objects. */
static atomic_t ndk_uobj_count = ATOMIC_INIT(0);

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
	nf->tgid = get_pid(task_tgid(current));
	nf->ucache.tgid = task_tgid_nr(current);
	get_task_comm(nf->comm, current);
	ret = ndk_files_add(nf);
	if (ret)
		goto err_free_nf;
	if (current->mm) {
		mmgrab(current->mm);
		nf->mm = current->mm;
	}
	file->private_data = nf;
	pr_debug("ndk: file %u opened by pid %d (%s)\n", nf->id,
		 nf->ucache.tgid, nf->comm);
	return nonseekable_open(inode, file);

err_free_nf:
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
	void *page, *old;

	if (vma->vm_end - vma->vm_start > PAGE_SIZE ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* Pairs with the cmpxchg() below: the page is zeroed before use. */
	page = smp_load_acquire(&nf->counters);
	if (!page) {
		page = vmalloc_user(PAGE_SIZE);
		if (!page)
			return -ENOMEM;
		/* Two mappings may race: the first page stays. */
		old = cmpxchg(&nf->counters, NULL, page);
		if (old) {
			vfree(page);
			page = old;
		}
	}
	vma->vm_flags &= ~VM_MAYEXEC;
	return remap_vmalloc_range(vma, page, 0);
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
	return nf;
}

/**
 * ndk_file_lock_uobj() - lock the file and look a handle up
 * @file:   the file
 * @handle: the handle
 * @type:   the type it must have
 * @nfp:    out: the file, locked, when an entry is returned
 *
 * The prologue of every command on a handle: on success the caller
 * unlocks (*@nfp)->lock when done; on an error nothing is held.
 *
 * Context: process context, may sleep.
 * Return: the entry, or an error of ndk_file_lock() or ndk_uobj_find().
 */
struct ndk_uobj *ndk_file_lock_uobj(struct file *file, u32 handle, u8 type,
				    struct ndk_file **nfp)
{
	struct ndk_file *nf = ndk_file_lock(file);
	struct ndk_uobj *u;

	if (IS_ERR(nf))
		return ERR_CAST(nf);
	u = ndk_uobj_find(nf, handle, type);
	if (IS_ERR(u))
		mutex_unlock(&nf->lock);
	else
		*nfp = nf;
	return u;
}

/**
 * ndk_uobj_find() - look a handle up
 * @nf:     the file, locked
 * @handle: the handle
 * @type:   the type it must have
 *
 * Context: process context, ndk_file.lock held.
 * Return: the entry; ERR_PTR(-ENOENT) if none, ERR_PTR(-EINVAL) if of
 * another type, ERR_PTR(-ENODEV) for an adapter whose device went away.
 */
struct ndk_uobj *ndk_uobj_find(struct ndk_file *nf, u32 handle, u8 type)
{
	struct ndk_uobj *u;

	lockdep_assert_held(&nf->lock);
	u = handle ? xa_load(&nf->handles, handle) : NULL;
	if (!u)
		return ERR_PTR(-ENOENT);
	if (u->type != type)
		return ERR_PTR(-EINVAL);
	if (type == NDK_UOBJ_ADAPTER && !u->adapter)
		return ERR_PTR(-ENODEV);
	return u;
}

/* Every handle table entry: exact-size objects, charged to the caller. */
static struct kmem_cache *ndk_uobj_cache;

/**
 * ndk_file_cache_init() - create the handle table entries' slab cache
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int ndk_file_cache_init(void)
{
	ndk_uobj_cache = KMEM_CACHE(ndk_uobj, SLAB_ACCOUNT);
	return ndk_uobj_cache ? 0 : -ENOMEM;
}

/**
 * ndk_file_cache_exit() - destroy it (every file closed)
 *
 * Context: module exit.
 */
void ndk_file_cache_exit(void)
{
	kmem_cache_destroy(ndk_uobj_cache);
}

/**
 * ndk_uobj_free() - free an entry of ndk_uobj_alloc()
 * @u: the entry, unpublished or removed from the table, or NULL
 *
 * Context: any.
 */
void ndk_uobj_free(struct ndk_uobj *u)
{
	if (u)
		kmem_cache_free(ndk_uobj_cache, u);
}

/**
 * ndk_uobj_alloc() - a new entry, not yet in the table
 * @nf:     the file
 * @type:   enum ndk_uobj_type
 * @parent: the entry it is created from, or NULL
 *
 * Context: process context, may sleep.
 * Return: the entry (ndk_uobj_free() it if it is never published) or
 * NULL.
 */
struct ndk_uobj *ndk_uobj_alloc(struct ndk_file *nf, u8 type,
				struct ndk_uobj *parent)
{
	struct ndk_uobj *u = kmem_cache_zalloc(ndk_uobj_cache,
					       GFP_KERNEL_ACCOUNT);

	if (!u)
		return NULL;
	u->type = type;
	u->parent = parent;
	u->nf = nf;
	return u;
}

/**
 * ndk_uobj_publish() - give an entry its handle
 * @nf: the file, locked
 * @u:  the entry, its object created
 *
 * Context: process context, ndk_file.lock held.
 * Return: 0; %-ENOMEM; %-ENOBUFS (no handle left).  On failure the caller
 * releases the object.
 */
int ndk_uobj_publish(struct ndk_file *nf, struct ndk_uobj *u)
{
	int ret;

	ret = xa_alloc_cyclic(&nf->handles, &u->handle, u, xa_limit_32b,
			      &nf->next, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		return ret == -EBUSY ? -ENOBUFS : ret;
	if (u->parent)
		u->parent->children++;
	atomic_inc(&ndk_uobj_count);
	return 0;
}

/**
 * ndk_uevent_init() - set up an event
 * @e:       the event, zeroed
 * @nf:      the file whose queue it goes to
 * @type:    NDK_U_EVENT_*
 * @handle:  the object it concerns
 * @context: the context user space gets
 *
 * Context: any.
 */
void ndk_uevent_init(struct ndk_uevent *e, struct ndk_file *nf, u32 type,
		     u32 handle, u64 context)
{
	INIT_LIST_HEAD(&e->entry);
	e->nf = nf;
	e->ev.type = type;
	e->ev.handle = handle;
	e->ev.context = context;
}

/**
 * ndk_uevent_queue() - queue an event and wake poll()
 * @e:      the event; queued once however often this runs before it is
 *          taken (a later error status replaces a success)
 * @status: its status
 *
 * Context: any.
 */
void ndk_uevent_queue(struct ndk_uevent *e, s32 status)
{
	struct ndk_file *nf = e->nf;
	unsigned long flags;

	spin_lock_irqsave(&nf->ev_lock, flags);
	if (!e->queued || NT_SUCCESS(e->ev.status))
		e->ev.status = status;
	if (!e->queued) {
		e->queued = true;
		list_add_tail(&e->entry, &nf->events);
	}
	spin_unlock_irqrestore(&nf->ev_lock, flags);
	wake_up_interruptible(&nf->wait);
}

/**
 * ndk_uevent_unqueue() - take an embedded event off the queue
 * @e: the event, whose source can no longer queue it
 *
 * Context: any.
 */
void ndk_uevent_unqueue(struct ndk_uevent *e)
{
	unsigned long flags;

	spin_lock_irqsave(&e->nf->ev_lock, flags);
	if (e->queued) {
		e->queued = false;
		list_del_init(&e->entry);
	}
	spin_unlock_irqrestore(&e->nf->ev_lock, flags);
}

/* Take the oldest event, or NULL. */
static struct ndk_uevent *ndk_uevent_take(struct ndk_file *nf)
{
	struct ndk_uevent *e;

	spin_lock_irq(&nf->ev_lock);
	e = list_first_entry_or_null(&nf->events, struct ndk_uevent, entry);
	if (e) {
		e->queued = false;
		list_del_init(&e->entry);
	}
	spin_unlock_irq(&nf->ev_lock);
	return e;
}

/**
 * ndk_uobj_root() - the adapter entry an entry descends from
 * @u: the entry
 *
 * Context: process context, ndk_file.lock held.
 * Return: the adapter's entry.
 */
struct ndk_uobj *ndk_uobj_root(struct ndk_uobj *u)
{
	while (u->parent)
		u = u->parent;
	return u;
}

/**
 * ndk_uevent_drop_requests() - drop connection requests not yet taken
 * @nf:    the file, locked
 * @scope: a listener: its requests; an adapter: those of its listeners;
 *         NULL: all
 *
 * Their connectors are closed: the peers see a reject.
 *
 * Context: process context, ndk_file.lock held.
 */
void ndk_uevent_drop_requests(struct ndk_file *nf, struct ndk_uobj *scope)
{
	struct ndk_uevent *e, *tmp;
	LIST_HEAD(drop);

	spin_lock_irq(&nf->ev_lock);
	list_for_each_entry_safe(e, tmp, &nf->events, entry) {
		if (e->conn && (!scope || e->listener == scope ||
				ndk_uobj_root(e->listener) == scope)) {
			e->queued = false;
			list_move_tail(&e->entry, &drop);
		}
	}
	spin_unlock_irq(&nf->ev_lock);
	list_for_each_entry_safe(e, tmp, &drop, entry) {
		ndk_close_connector(e->conn, NULL, NULL);
		kfree(e);
	}
}

/**
 * ndk_mem_key_add() - file a registration under its key index in its PD
 * @u: an MEM or MR entry whose MR has a local token
 *
 * Context: process context, ndk_file.lock held.
 * Return: 0 or %-ENOMEM.
 */
int ndk_mem_key_add(struct ndk_uobj *u)
{
	struct ndk_uobj *pd = u->parent;
	unsigned long key = ndk_get_local_token_from_mr(u->mem.mr) >> 8;
	int ret;

	ret = xa_insert(&pd->keys, key, u, GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret == -EBUSY ? -EIO : ret;
	u->mem.key = key;
	return 0;
}

/**
 * ndk_mem_key_del() - undo ndk_mem_key_add(), if it was done
 * @u: the entry
 *
 * Context: process context, ndk_file.lock held.
 */
void ndk_mem_key_del(struct ndk_uobj *u)
{
	if (u->mem.key >= 0)
		xa_erase(&u->parent->keys, u->mem.key);
	u->mem.key = -1;
}

/**
 * ndk_mem_release() - deregister an MEM or MR entry's memory, if any
 * @u: the entry
 *
 * The pages are unpinned only once the device can no longer reach them:
 * after the deregistration returned.
 *
 * Context: process context, ndk_file.lock held.
 * Return: STATUS_SUCCESS (nothing registered any more), or
 * STATUS_DEVICE_BUSY (windows or fast-registered MRs still use the
 * memory; nothing changed).
 */
s32 ndk_mem_release(struct ndk_uobj *u)
{
	s32 status = STATUS_SUCCESS;

	if (ndk_umem_held(&u->mem.umem)) {
		status = ndk_deregister_mr(u->mem.mr, NULL, NULL);
		if (status)
			return status;
		ndk_ucache_untrack(u->mem.cache);
		u->mem.cache = NULL;
		ndk_umem_unpin(&u->mem.umem);
	}
	ndk_mem_key_del(u);
	return status;
}

/* A QP's drain gives up after 10 s: its requests are resolved by then. */
#define NDK_MEM_WINDOWS_TIMEOUT	(60 * HZ)

/* MR and MEM entries: release the registration, then the MR. */
static void ndk_uobj_mr_destroy(struct ndk_uobj *u)
{
	/*
	 * Windows and fast-register MRs closed while a request on them was
	 * outstanding leave the memory from their teardown, once the QPs
	 * (released before: their rank) resolved it.
	 */
	if (ndk_mem_release(u) &&
	    ndk_mr_wait_windows(u->mem.mr, NDK_MEM_WINDOWS_TIMEOUT))
		ndk_mem_release(u);
	WARN_ON(ndk_umem_held(&u->mem.umem));
	/* The notifier goes with the entry, whatever happened above. */
	ndk_ucache_untrack(u->mem.cache);
	u->mem.cache = NULL;
	ndk_close_mr(u->mem.mr, NULL, NULL);
}

static void ndk_uobj_mem_destroy(struct ndk_uobj *u)
{
	rb_erase(&u->mem.node, &u->parent->mems);
	ndk_uobj_mr_destroy(u);
}

static void ndk_uobj_pd_destroy(struct ndk_uobj *u)
{
	WARN_ON(!xa_empty(&u->keys));
	xa_destroy(&u->keys);
	ndk_close_pd(u->pd, NULL, NULL);
}

/*
 * One descriptor per handle type.  Release order: connection requests not
 * taken (ndk_uevent_drop_requests()), then connectors (they reference QPs
 * and listeners), listeners, QPs, windows, fast-register MRs (they use
 * other registrations' pages), registrations, CQs, PDs.
 */
const struct ndk_uobj_desc ndk_uobj_descs[NDK_UOBJ_TYPES] = {
	[NDK_UOBJ_ADAPTER] = { .parent = NDK_UOBJ_ADAPTER,
			       .nl_type = NDK_NL_OBJ_ADAPTER,
			       .rank = 8, .rank_held = 8 },
	[NDK_UOBJ_CONNECTOR] = { .parent = NDK_UOBJ_ADAPTER,
				 .nl_type = NDK_NL_OBJ_CONNECTOR,
				 .rank = 0, .rank_held = 0,
				 .open = ndk_uv_connector_open,
				 .published = ndk_uv_connector_published,
				 .destroy = ndk_uv_connector_destroy },
	[NDK_UOBJ_LISTENER] = { .parent = NDK_UOBJ_ADAPTER,
				.nl_type = NDK_NL_OBJ_LISTENER,
				.rank = 1, .rank_held = 1,
				.open = ndk_uv_listener_open,
				.destroy = ndk_uv_listener_destroy },
	[NDK_UOBJ_QP] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_QP,
			  .rank = 2, .rank_held = 2,
			  .destroy = ndk_uv_qp_destroy },
	[NDK_UOBJ_MW] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_MW,
			  .rank = 3, .rank_held = 3, .open = ndk_uv_mw_open,
			  .destroy = ndk_uv_mw_destroy },
	[NDK_UOBJ_MR] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_MR,
			  .rank = 4, .rank_held = 5, .open = ndk_uv_mr_open,
			  .destroy = ndk_uobj_mr_destroy },
	[NDK_UOBJ_MEM] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_MEM,
			   .rank = 5, .rank_held = 5,
			   .destroy = ndk_uobj_mem_destroy },
	[NDK_UOBJ_CQ] = { .parent = NDK_UOBJ_ADAPTER, .nl_type = NDK_NL_OBJ_CQ,
			  .rank = 6, .rank_held = 6, .open = ndk_uv_cq_open,
			  .published = ndk_uv_cq_published,
			  .destroy = ndk_uv_cq_destroy },
	[NDK_UOBJ_PD] = { .parent = NDK_UOBJ_ADAPTER, .nl_type = NDK_NL_OBJ_PD,
			  .rank = 7, .rank_held = 7,
			  .destroy = ndk_uobj_pd_destroy },
};

#define NDK_UOBJ_RANKS 8

/*
 * Remove @u, not an adapter (ndk_uobj_adapter_detach()), from the table
 * and release its object.  It has no children; a registration has no
 * users left but the teardowns of closed windows (ndk_mem_release()
 * succeeded, or it waits for those at the file's release).
 */
static void ndk_uobj_destroy(struct ndk_file *nf, struct ndk_uobj *u)
{
	lockdep_assert_held(&nf->lock);
	WARN_ON(u->children);
	xa_erase(&nf->handles, u->handle);
	ndk_uobj_descs[u->type].destroy(u);
	if (u->parent)
		u->parent->children--;
	atomic_dec(&ndk_uobj_count);
	ndk_uobj_free(u);
}

/* @u's place in the release order (ndk_uobj_descs[]). */
static int ndk_uobj_rank(struct ndk_uobj *u)
{
	const struct ndk_uobj_desc *d = &ndk_uobj_descs[u->type];

	return ndk_uobj_holds_pages(u) ? d->rank_held : d->rank;
}

/* Release every object below @adapter (all adapters if NULL), ranked. */
static void ndk_uobj_destroy_below(struct ndk_file *nf,
				   struct ndk_uobj *adapter)
{
	struct ndk_uobj *u;
	unsigned long index;
	int rank;

	ndk_uevent_drop_requests(nf, adapter);
	for (rank = 0; rank < NDK_UOBJ_RANKS; rank++)
		xa_for_each(&nf->handles, index, u)
			if (ndk_uobj_rank(u) == rank &&
			    (!adapter || ndk_uobj_root(u) == adapter))
				ndk_uobj_destroy(nf, u);
}

/*
 * Take adapter entry @u out of the table; ndk_uobj_adapter_close() ends
 * it without ndk_file.lock, since a removal callback may wait for the lock.
 */
static void ndk_uobj_adapter_detach(struct ndk_file *nf, struct ndk_uobj *u)
{
	lockdep_assert_held(&nf->lock);
	xa_erase(&nf->handles, u->handle);
	ndk_uevent_unqueue(&u->removed);
}

/* Close a detached adapter entry's adapter, if its device left any. */
static void ndk_uobj_adapter_close(struct ndk_uobj *u)
{
	if (u->adapter)
		ndk_close_adapter(u->adapter);
	atomic_dec(&ndk_uobj_count);
	ndk_uobj_free(u);
}

/*
 * The adapter's device is going away: release everything of the adapter
 * now (pinned pages come back), close it, and tell user space.  The
 * handle stays, failing with -ENODEV, until HANDLE_CLOSE.  ndk_close_adapter()
 * is never called with ndk_file.lock held elsewhere, so this may wait
 * for the lock.
 */
static void ndk_file_adapter_removed(void *context)
{
	struct ndk_uobj *u = context;
	struct ndk_file *nf = u->nf;
	struct ndk_adapter *adapter;

	mutex_lock(&nf->lock);
	adapter = u->adapter;
	if (!adapter || !xa_load(&nf->handles, u->handle)) {
		/* Being closed by another thread, which waits for us. */
		mutex_unlock(&nf->lock);
		return;
	}
	ndk_uobj_destroy_below(nf, u);
	u->adapter = NULL;
	ndk_uevent_queue(&u->removed, STATUS_DEVICE_REMOVED);
	mutex_unlock(&nf->lock);
	ndk_close_adapter(adapter);
}

/**
 * ndk_file_release() - last close of /dev/ndk: release every object left
 * @inode: the device inode
 * @file:  the file
 *
 * Children before parents (ndk_uobj_rank()), each through the kernel API;
 * pinned pages come back to the opener's VmPin.  Adapters are closed
 * last, without the lock, since a removal callback may be waiting for it.
 *
 * Context: process context (any process: the last holder of the file).
 * Return: 0.
 */
int ndk_file_release(struct inode *inode, struct file *file)
{
	struct ndk_file *nf = file->private_data;
	struct ndk_uevent *e;
	struct ndk_uobj *u;
	unsigned long index;
	LIST_HEAD(adapters);

	/* Not under nf->lock: the registry's lock comes before it. */
	ndk_files_del(nf);
	pr_debug("ndk: file %u released\n", nf->id);
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
	while ((e = ndk_uevent_take(nf)))
		if (e->owned)
			kfree(e);
	xa_destroy(&nf->handles);
	ndk_ucache_release(&nf->ucache);
	vfree(nf->counters);
	put_pid(nf->tgid);
	if (nf->mm)
		mmdrop(nf->mm);
	mutex_destroy(&nf->lock);
	kfree(nf);
	return 0;
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

/**
 * ndk_file_event_get() - NDK_IOCTL_EVENT_GET
 * @file: the file
 * @arg:  struct ndk_u_event_get
 *
 * A connection request becomes a connector handle here; when that fails
 * the request is dropped (the peer sees a reject).
 *
 * Context: process context, may sleep.
 * Return: 0 (count set, possibly 0); %-EPERM; %-EINVAL; %-ENOMEM;
 * %-EFAULT (the events taken are lost).
 */
int ndk_file_event_get(struct file *file, void *arg)
{
	struct ndk_u_event_get *g = arg;
	struct ndk_u_event *out;
	struct ndk_uevent *e;
	struct ndk_file *nf;
	u32 n = 0;
	int ret = 0;

	if (g->flags || !g->count || g->count > NDK_U_EVENT_GET_MAX)
		return -EINVAL;
	out = kcalloc(g->count, sizeof(*out), GFP_KERNEL_ACCOUNT);
	if (!out)
		return -ENOMEM;
	nf = ndk_file_lock(file);
	if (IS_ERR(nf)) {
		kfree(out);
		return PTR_ERR(nf);
	}
	while (n < g->count && (e = ndk_uevent_take(nf))) {
		if (e->conn && !ndk_uverbs_accepted(nf, e)) {
			kfree(e);
			continue;
		}
		out[n++] = e->ev;
		if (e->owned)
			kfree(e);
	}
	mutex_unlock(&nf->lock);
	if (n && copy_to_user(u64_to_user_ptr(g->events), out,
			      n * sizeof(*out)))
		ret = -EFAULT;
	g->count = n;
	kfree(out);
	return ret;
}

/**
 * ndk_file_adapter_open() - NDK_IOCTL_ADAPTER_OPEN
 * @file: the file
 * @a:    in: adapter_id (flags checked by the caller); out: handle
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM (not the opener); %-ENOENT (no such adapter);
 * %-ENODEV (it is being removed); %-ENOMEM; %-ENOBUFS (no handle left).
 */
int ndk_file_adapter_open(struct file *file, struct ndk_u_adapter_open *a)
{
	struct ndk_adapter *adapter;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status;
	int ret;

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	u = ndk_uobj_alloc(nf, NDK_UOBJ_ADAPTER, NULL);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	status = ndk_open_adapter_id(a->adapter_id, ndk_file_adapter_removed,
				     u, &adapter);
	if (status) {
		ret = status == STATUS_INVALID_PARAMETER ? -ENOENT :
			ndk_errno_from_status(status);
		goto err_free_uobj;
	}
	u->adapter = adapter;
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_close_adapter;
	ndk_uevent_init(&u->removed, nf, NDK_U_EVENT_ADAPTER_REMOVED,
			u->handle, 0);
	a->handle = u->handle;
	mutex_unlock(&nf->lock);
	return 0;

err_close_adapter:
	mutex_unlock(&nf->lock);
	ndk_close_adapter(adapter);
	ndk_uobj_free(u);
	return ret;
err_free_uobj:
	ndk_uobj_free(u);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}

/*
 * The longest user registration: what the driver registers from user
 * memory (its max_mr_size) when it may (ndk_mr_user_capable()), else what
 * ndk.ko's own pin and ndk_register_mr() can (MaxRegistrationSize).
 */
static u64 ndk_umr_limit(struct ndk_adapter *adapter,
			 const struct ndk_adapter_info *info)
{
	struct ib_device *ibdev = adapter->dev->ibdev;

	if (!ndk_mr_user_capable(ibdev))
		return info->max_registration_size;
	return max_t(u64, ibdev->attrs.max_mr_size,
		     info->max_registration_size);
}

/**
 * ndk_file_adapter_info() - NDK_IOCTL_ADAPTER_INFO
 * @file: the file
 * @q:    in: handle; out: the NDK_ADAPTER_INFO fields
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT (no such handle); %-EINVAL (not an adapter).
 */
int ndk_file_adapter_info(struct file *file, struct ndk_u_adapter_info *q)
{
	struct ndk_adapter_info info;
	u32 size = sizeof(info);
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status;

	u = ndk_file_lock_uobj(file, q->handle, NDK_UOBJ_ADAPTER, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	status = ndk_query_adapter_info(u->adapter, &info, &size);
	if (!status)
		q->max_user_registration_size = ndk_umr_limit(u->adapter, &info);
	mutex_unlock(&nf->lock);
	if (status)
		return ndk_errno_from_status(status);

	q->info_version_major = info.version.major;
	q->info_version_minor = info.version.minor;
	q->vendor_id = info.vendor_id;
	q->device_id = info.device_id;
	q->reserved0 = 0;
	q->max_registration_size = info.max_registration_size;
	q->max_window_size = info.max_window_size;
	q->frmr_page_count = info.frmr_page_count;
	q->max_initiator_request_sge = info.max_initiator_request_sge;
	q->max_receive_request_sge = info.max_receive_request_sge;
	q->max_read_request_sge = info.max_read_request_sge;
	q->max_transfer_length = info.max_transfer_length;
	q->max_inline_data_size = info.max_inline_data_size;
	q->max_inbound_read_limit = info.max_inbound_read_limit;
	q->max_outbound_read_limit = info.max_outbound_read_limit;
	q->max_receive_queue_depth = info.max_receive_queue_depth;
	q->max_initiator_queue_depth = info.max_initiator_queue_depth;
	q->max_srq_depth = info.max_srq_depth;
	q->max_cq_depth = info.max_cq_depth;
	q->large_request_threshold = info.large_request_threshold;
	q->max_caller_data = info.max_caller_data;
	q->max_callee_data = info.max_callee_data;
	q->adapter_flags = info.adapter_flags;
	q->rdma_technology = info.rdma_technology;
	q->reserved1 = 0;
	return 0;
}

/**
 * ndk_file_pd_create() - NDK_IOCTL_PD_CREATE
 * @file: the file
 * @p:    in: adapter_handle; out: handle
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (not an adapter); %-ENODEV;
 * %-ENOMEM; %-ENOBUFS (no handle left).
 */
int ndk_file_pd_create(struct file *file, struct ndk_u_pd_create *p)
{
	struct ndk_uobj *parent, *u;
	struct ndk_file *nf;
	struct ndk_pd *pd;
	s32 status;
	int ret;

	parent = ndk_file_lock_uobj(file, p->adapter_handle, NDK_UOBJ_ADAPTER,
				    &nf);
	if (IS_ERR(parent))
		return PTR_ERR(parent);
	u = ndk_uobj_alloc(nf, NDK_UOBJ_PD, parent);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	u->mems = RB_ROOT;
	xa_init(&u->keys);
	status = ndk_create_pd(parent->adapter, NULL, NULL, &pd);
	if (status) {
		ret = ndk_errno_from_status(status);
		goto err_free_uobj;
	}
	u->pd = pd;
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_close_pd;
	p->handle = u->handle;
	mutex_unlock(&nf->lock);
	return 0;

err_close_pd:
	ndk_close_pd(pd, NULL, NULL);
err_free_uobj:
	ndk_uobj_free(u);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}

static void ndk_mem_result(struct ndk_uobj *u, struct ndk_u_mem_register *m)
{
	m->handle = u->handle;
	m->local_token = ndk_get_local_token_from_mr(u->mem.mr);
	m->remote_token = ndk_get_remote_token_from_mr(u->mem.mr);
	m->references = u->mem.refs;
	m->base_address = u->mem.umem.address;
	ndk_ucache_result(u->mem.cache, &m->cache_slot, &m->cache_generation);
	m->reserved = 0;
}

/**
 * ndk_umr_check() - may user memory be registered, and how?
 * @u:   the entry the registration is made through (a PD or an MR),
 *       whose adapter is present
 * @obj: that entry's kernel object (its PD or its MR)
 * @req: in: address, length, mr_flags; out: write, driver, own_limit
 *
 * The pin mode is the rights': the pages are pinned writable exactly when
 * the access they give has a write right (local write, read sink, remote
 * write: ndk_mr_flags_write()), and read-only otherwise, so no later
 * fast-register or bind can write them.  @req->driver says whether the
 * device's driver may register user memory itself; ndk_umr_plan() then
 * decides whether it does.
 *
 * Context: process context, ndk_file.lock held.
 * Return: 0; %-EFAULT (wrapping or kernel range); %-EMSGSIZE (longer than
 * the user limit: ndk_u_adapter_info.max_user_registration_size);
 * %-EOPNOTSUPP (the adapter cannot register user memory); %-EINVAL
 * (flags); %-ENODEV.
 */
int ndk_umr_check(struct ndk_uobj *u, struct ndk_obj *obj,
		  struct ndk_umr_req *req)
{
	struct ndk_adapter *adapter = ndk_uobj_root(u)->adapter;
	struct ndk_adapter_info info;
	u32 size = sizeof(info);
	s32 status;
	u64 last, limit;
	int write;

	lockdep_assert_held(&u->nf->lock);
	/* Wrapping or kernel ranges before the size rule (EFAULT first). */
	if (check_add_overflow(req->address, req->length, &last) ||
	    !access_ok(u64_to_user_ptr(req->address), req->length))
		return -EFAULT;
	status = ndk_query_adapter_info(adapter, &info, &size);
	if (status)
		return ndk_errno_from_status(status);
	limit = ndk_umr_limit(adapter, &info);
	if (!limit)
		return -EOPNOTSUPP;
	if (req->length > limit)
		return -EMSGSIZE;
	write = ndk_mr_flags_write(obj, req->mr_flags);
	if (write < 0)
		return write;
	req->write = write;
	req->driver = ndk_mr_user_capable(adapter->dev->ibdev);
	req->own_limit = info.max_registration_size;
	return 0;
}

/**
 * ndk_umr_plan() - who pins: the driver or ndk.ko?
 * @req: checked by ndk_umr_check(); @req->driver becomes the answer
 *
 * The driver registers the range when it may and when its pin mode is
 * the one the rights need (ndk_umem_mode()); ndk.ko pins it otherwise,
 * before any object is referenced, so that a fault waiting on user space
 * holds nothing device removal waits for.
 *
 * Context: process context of the opener, without the file's lock.
 * Return: 0; %-EMSGSIZE (ndk.ko pins, and the range is longer than
 * MaxRegistrationSize); what ndk_umem_mode() refuses the range with.
 */
int ndk_umr_plan(struct ndk_umr_req *req)
{
	int mode;

	mode = ndk_umem_mode(current->mm, req->address, req->length,
			     req->write);
	if (mode < 0)
		return mode;
	req->driver &= mode;
	if (!req->driver && req->length > req->own_limit)
		return -EMSGSIZE;
	return 0;
}

/* Registrations made again while invalidations keep colliding with them. */
#define NDK_UMR_TRIES	3

/* Pin (ndk.ko) or register (the driver) once; see ndk_umr_acquire(). */
static int ndk_umr_try(const struct ndk_umr_req *req, struct ndk_mr *mr,
		       struct ndk_umem *um)
{
	int ret;

	if (!req->driver)
		return ndk_umem_pin(um, current->mm, req->address, req->length,
				    req->write);
	ret = ndk_register_user_mr(mr, req->address, req->length,
				   req->mr_flags);
	if (ret)
		return ret == -EBUSY ? -EBADRQC : ret;
	ndk_umem_hold(um, req->address, req->length, req->write);
	return 0;
}

static void ndk_umr_untry(const struct ndk_umr_req *req, struct ndk_mr *mr,
			  struct ndk_umem *um)
{
	if (req->driver)
		ndk_deregister_mr(mr, NULL, NULL);
	ndk_umem_unpin(um);
}

/**
 * ndk_umr_acquire() - pin or register user memory of the caller, tracked
 * @nf:    the file
 * @req:   planned by ndk_umr_plan()
 * @mr:    @req->driver: the MR the driver registers in (created, idle,
 *         referenced by the caller for the call); else unused
 * @um:    zeroed; receives the range (ndk_umem_held())
 * @cache: receives the range's tracking (ndk_ucache_track())
 *
 * The range is tracked first (its MMU notifier), then registered by the
 * driver (ib_reg_user_mr(): it pins and charges) or pinned by ndk.ko, to
 * be registered by ndk_umr_finish() under the file's lock.  One that an
 * invalidation collided with is made again, a few times at most
 * (ndk_ucache.c).  Runs without the file's lock: a fault may wait on user
 * space, and device removal needs the lock.
 *
 * Context: process context of the file's opener, may sleep.
 * Return: 0; %-EBADRQC (the MR is registered or busy); %-EAGAIN (the
 * range was remapped, during the driver's registration, into memory the
 * driver may not pin: try again); what ndk_umem_pin() and
 * ib_reg_user_mr() return.
 */
int ndk_umr_acquire(struct ndk_file *nf, const struct ndk_umr_req *req,
		    struct ndk_mr *mr, struct ndk_umem *um,
		    struct ndk_ucache_reg **cache)
{
	struct ndk_ucache_reg *r;
	unsigned long seq;
	int tries, ret;
	u64 before;

	r = ndk_ucache_track(&nf->ucache, current->mm, req->address,
			     req->length, req->slot);
	if (IS_ERR(r))
		return PTR_ERR(r);
	for (tries = 1; ; tries++) {
		seq = ndk_ucache_begin(r, &before);
		ret = ndk_umr_try(req, mr, um);
		if (ret) {
			ndk_ucache_untrack(r);
			return ret;
		}
		if (!ndk_ucache_end(r, seq, before) || tries == NDK_UMR_TRIES)
			break;
		pr_debug("ndk: registration of 0x%llx+%llu raced an invalidation (try %d)\n",
			 req->address, req->length, tries);
		ndk_umr_untry(req, mr, um);
		/* Remapped meanwhile: the driver pins only what it may. */
		if (req->driver &&
		    ndk_umem_mode(current->mm, req->address, req->length,
				  req->write) != 1) {
			ndk_ucache_untrack(r);
			return -EAGAIN;
		}
	}
	*cache = r;
	return 0;
}

/**
 * ndk_umr_finish() - register what ndk_umr_acquire() pinned
 * @req: as given to ndk_umr_acquire()
 * @mr:  the entry's MR, idle unless the driver registered it
 * @um:  the range
 *
 * Context: process context of the opener, ndk_file.lock held.
 * Return: 0; what ndk_register_mr() fails with, as an errno.
 */
int ndk_umr_finish(const struct ndk_umr_req *req, struct ndk_mr *mr,
		   struct ndk_umem *um)
{
	s32 status;

	if (req->driver)
		return 0;
	status = ndk_register_mr(mr, um->mdl, um->length, req->mr_flags,
				 NULL, NULL);
	return ndk_errno_from_status(status);
}

/**
 * ndk_umr_release() - undo ndk_umr_acquire() (and ndk_umr_finish())
 * @mr:         the MR
 * @um:         the range
 * @cache:      its tracking; freed
 * @registered: @mr holds the registration (the driver's, or
 *              ndk_umr_finish() succeeded)
 *
 * Context: process context, may sleep.
 */
void ndk_umr_release(struct ndk_mr *mr, struct ndk_umem *um,
		     struct ndk_ucache_reg *cache, bool registered)
{
	if (registered)
		ndk_deregister_mr(mr, NULL, NULL);
	ndk_ucache_untrack(cache);
	ndk_umem_unpin(um);
}

/**
 * ndk_umr_pages() - make sure a registration's MR has a page list
 * @u: a registered MEM or MR entry
 *
 * Windows and fast-registers map pages of the MR they are bound in.  An
 * MR the driver registered (ndk_umem.driver) has none of its own: the
 * range is pinned again (it is resident: no fault, so the file's lock may
 * be held) and, if it still maps the pages registered (its tracking saw
 * no invalidation since), they are mapped for the device and kept until
 * the registration goes.
 *
 * Context: process context of the file's opener, ndk_file.lock held.
 * Return: 0; %-EFAULT (the range was unmapped or remapped since it was
 * registered: the MR's pages are no longer the process's); %-ENOMEM.
 */
int ndk_umr_pages(struct ndk_uobj *u)
{
	struct ndk_umem *um = &u->mem.umem;
	int ret;

	lockdep_assert_held(&u->nf->lock);
	if (!um->driver || um->pages)
		return 0;
	if (!ndk_ucache_current(u->mem.cache))
		return -EFAULT;
	ret = ndk_umem_pin_again(um);
	if (ret)
		return ret;
	/* After the pin: the pages it found are the registered ones. */
	if (!ndk_ucache_current(u->mem.cache)) {
		ret = -EFAULT;
		goto err_unpin;
	}
	ret = ndk_mr_attach_pages(u->mem.mr, um->pages, um->npages);
	if (ret)
		goto err_unpin;
	return 0;

err_unpin:
	unpin_user_pages(um->pages, um->npages);
	kvfree(um->pages);
	um->pages = NULL;
	return ret;
}

/**
 * ndk_uobj_gone() - the errno for an entry that went while unlocked
 * @nf:      the file, locked
 * @adapter: the handle of the adapter the entry descended from
 * @err:     what ndk_uobj_find() said of the entry
 *
 * A command that drops the lock (to pin user memory) looks its entry up
 * again; when the device was removed meanwhile the entry is gone but the
 * adapter's handle stays, failing with -ENODEV.
 *
 * Context: process context, ndk_file.lock held.
 * Return: %-ENODEV when the adapter's device went away, else @err.
 */
int ndk_uobj_gone(struct ndk_file *nf, u32 adapter, int err)
{
	if (err == -ENOENT &&
	    PTR_ERR(ndk_uobj_find(nf, adapter, NDK_UOBJ_ADAPTER)) == -ENODEV)
		return -ENODEV;
	return err;
}

/*
 * WSD registrations are local sources and targets of transfers; remote
 * access goes through windows and fast-registered MRs over them.  The
 * device writes only with MEM_WRITE.
 */
static u32 ndk_mem_mr_flags(u32 mem_flags)
{
	return mem_flags & NDK_U_MEM_WRITE ? NDK_MR_FLAG_ALLOW_LOCAL_WRITE : 0;
}

/* Order of WSP registrations in a PD's @mems: (address, length, flags). */
static int ndk_mem_cmp(u64 address, u64 length, u32 flags,
		       const struct ndk_uobj *u)
{
	if (address != u->mem.umem.address)
		return address < u->mem.umem.address ? -1 : 1;
	if (length != u->mem.umem.length)
		return length < u->mem.umem.length ? -1 : 1;
	if (flags != u->mem.flags)
		return flags < u->mem.flags ? -1 : 1;
	return 0;
}

/*
 * The oldest registration of @pd with @m's address, length and flags
 * whose pages the range still maps, or NULL: O(log n + registrations of
 * that range made before remaps).
 */
static struct ndk_uobj *ndk_mem_find(struct ndk_uobj *pd,
				     const struct ndk_u_mem_register *m)
{
	struct rb_node *n = pd->mems.rb_node, *first = NULL;
	struct ndk_uobj *u;
	int c;

	while (n) {
		u = rb_entry(n, struct ndk_uobj, mem.node);
		c = ndk_mem_cmp(m->address, m->length, m->flags, u);
		if (c <= 0) {
			if (!c)
				first = n;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	for (n = first; n; n = rb_next(n)) {
		u = rb_entry(n, struct ndk_uobj, mem.node);
		if (ndk_mem_cmp(m->address, m->length, m->flags, u))
			break;
		/* Never a registration of pages the range no longer maps. */
		if (ndk_ucache_current(u->mem.cache))
			return u;
	}
	return NULL;
}

/* File @u in @pd's @mems, after the registrations of the same key. */
static void ndk_mem_insert(struct ndk_uobj *pd, struct ndk_uobj *u)
{
	struct rb_node **link = &pd->mems.rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (ndk_mem_cmp(u->mem.umem.address, u->mem.umem.length,
				u->mem.flags,
				rb_entry(parent, struct ndk_uobj, mem.node)) < 0)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&u->mem.node, parent, link);
	rb_insert_color(&u->mem.node, &pd->mems);
}

/* One more reference on registration @u; its answer in @m. */
static int ndk_mem_ref(struct ndk_uobj *u, struct ndk_u_mem_register *m)
{
	if (u->mem.refs == U32_MAX)
		return -EOVERFLOW;
	u->mem.refs++;
	ndk_mem_result(u, m);
	return 0;
}

/**
 * ndk_file_mem_register() - NDK_IOCTL_MEM_REGISTER (WSPRegisterMemory)
 * @file: the file
 * @m:    in: pd_handle, flags, address, length (validated by the
 *        caller: flags one of NDK_U_MEM_*, length > 0); out: the rest
 *
 * A registration that exists already costs one lookup.  Otherwise the
 * pages are pinned (and charged) without the file's lock: a fault may
 * wait on user space (userfaultfd, FUSE) for as long as it likes, and
 * device removal needs the lock.  Then, locked again, the PD is looked up
 * again: gone (closed, or its device removed), the pin is undone; the same
 * registration made meanwhile by another thread gets one more reference
 * and this pin is undone, as if this call had come second.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM (not the opener, or RLIMIT_MEMLOCK 0); %-ENOENT (no
 * such PD, or it was closed while the pages were pinned); %-EINVAL (not a
 * PD); %-EFAULT (see ndk_umem_pin()); %-ENOMEM (memory or RLIMIT_MEMLOCK);
 * %-EMSGSIZE (longer than MaxRegistrationSize); %-EOPNOTSUPP (the adapter
 * cannot register, MaxRegistrationSize 0; or see ndk_umem_pin());
 * %-EOVERFLOW (reference count); %-ENODEV (also: the device was removed
 * while the pages were pinned); %-ENOBUFS (no handle left); %-EINTR.
 */
int ndk_file_mem_register(struct file *file, struct ndk_u_mem_register *m)
{
	struct ndk_umr_req req = {
		.address = m->address,
		.length = m->length,
		.mr_flags = ndk_mem_mr_flags(m->flags),
		.slot = true,
	};
	struct ndk_uobj *pd, *u, *fresh;
	struct ndk_mr *mr = NULL;
	struct ndk_pd *kpd;
	struct ndk_file *nf;
	u32 adapter;
	s32 status;
	int ret;

	pd = ndk_file_lock_uobj(file, m->pd_handle, NDK_UOBJ_PD, &nf);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	u = ndk_mem_find(pd, m);
	if (u) {
		ret = ndk_mem_ref(u, m);
		goto out_unlock;
	}
	ret = ndk_umr_check(pd, &pd->pd->obj, &req);
	if (ret)
		goto out_unlock;
	kpd = pd->pd;
	/* The driver registers in an MR of its own, private until published. */
	if (req.driver) {
		status = ndk_create_mr(kpd, false, NULL, NULL, &mr);
		if (status) {
			ret = ndk_errno_from_status(status);
			goto out_unlock;
		}
	}
	adapter = ndk_uobj_root(pd)->handle;
	mutex_unlock(&nf->lock);

	ret = ndk_umr_plan(&req);
	if (mr && (ret || !req.driver)) {
		/* ndk.ko pins: nothing referenced while it may fault. */
		ndk_close_mr(mr, NULL, NULL);
		mr = NULL;
	}
	if (ret)
		return ret;
	/* The parent is set once the PD is found again. */
	fresh = ndk_uobj_alloc(nf, NDK_UOBJ_MEM, NULL);
	if (!fresh) {
		ret = -ENOMEM;
		goto err_close_mr;
	}
	fresh->mem.flags = m->flags;
	fresh->mem.refs = 1;
	fresh->mem.key = -1;
	ret = ndk_umr_acquire(nf, &req, mr, &fresh->mem.umem, &fresh->mem.cache);
	if (ret)
		goto err_free_uobj;

	mutex_lock(&nf->lock);
	pd = ndk_uobj_find(nf, m->pd_handle, NDK_UOBJ_PD);
	if (IS_ERR(pd)) {
		ret = ndk_uobj_gone(nf, adapter, PTR_ERR(pd));
		goto err_release;
	}
	if (pd->pd != kpd) {
		/* The handle names another PD now. */
		ret = -ENOENT;
		goto err_release;
	}
	u = ndk_mem_find(pd, m);
	if (u) {
		/* Registered by another thread meanwhile: share it. */
		ret = ndk_mem_ref(u, m);
		goto err_release;
	}
	if (!mr) {
		status = ndk_create_mr(kpd, false, NULL, NULL, &mr);
		if (status) {
			ret = ndk_errno_from_status(status);
			goto err_release;
		}
		ret = ndk_umr_finish(&req, mr, &fresh->mem.umem);
		if (ret)
			goto err_release;
	}
	fresh->mem.mr = mr;
	fresh->parent = pd;
	ret = ndk_mem_key_add(fresh);
	if (ret)
		goto err_release;
	ret = ndk_uobj_publish(nf, fresh);
	if (ret)
		goto err_key_del;
	ndk_mem_insert(pd, fresh);
	WRITE_ONCE(fresh->mem.cache->handle, fresh->handle);
	ndk_mem_result(fresh, m);
	mutex_unlock(&nf->lock);
	return 0;

err_key_del:
	ndk_mem_key_del(fresh);
err_release:
	mutex_unlock(&nf->lock);
	ndk_umr_release(mr, &fresh->mem.umem, fresh->mem.cache,
			mr && ndk_mr_registered(mr));
err_free_uobj:
	ndk_uobj_free(fresh);
err_close_mr:
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
	return ret;
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}

/**
 * ndk_file_mem_deregister() - NDK_IOCTL_MEM_DEREGISTER (WSPDeregisterMemory)
 * @file: the file
 * @m:    in: handle; out: references left
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT (no such handle, or already gone);
 * %-EINVAL (not a registration); %-EBUSY (the last reference, while a
 * window is bound in the memory or an MR fast-registered over it).
 */
int ndk_file_mem_deregister(struct file *file, struct ndk_u_mem_deregister *m)
{
	struct ndk_file *nf;
	struct ndk_uobj *u;

	u = ndk_file_lock_uobj(file, m->handle, NDK_UOBJ_MEM, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	if (u->mem.refs == 1 && ndk_mem_release(u)) {
		/* Windows or fast-registered MRs still use the memory. */
		mutex_unlock(&nf->lock);
		return -EBUSY;
	}
	m->references = --u->mem.refs;
	if (!u->mem.refs)
		ndk_uobj_destroy(nf, u);
	mutex_unlock(&nf->lock);
	return 0;
}

/**
 * ndk_file_handle_close() - NDK_IOCTL_HANDLE_CLOSE
 * @file:   the file
 * @handle: any handle of the file
 *
 * A registration is released whatever its reference count.  An adapter
 * is closed without the lock: its removal callback may be waiting for it.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EBUSY (objects created from it are
 * open, or windows or fast-registered MRs use its memory).
 */
int ndk_file_handle_close(struct file *file, u32 handle)
{
	struct ndk_file *nf;
	struct ndk_uobj *u;

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	u = handle ? xa_load(&nf->handles, handle) : NULL;
	if (!u) {
		mutex_unlock(&nf->lock);
		return -ENOENT;
	}
	if (u->children || (ndk_uobj_is_mem(u) && ndk_mem_release(u))) {
		mutex_unlock(&nf->lock);
		return -EBUSY;
	}
	if (u->type != NDK_UOBJ_ADAPTER) {
		ndk_uobj_destroy(nf, u);
		mutex_unlock(&nf->lock);
		return 0;
	}
	ndk_uobj_adapter_detach(nf, u);
	mutex_unlock(&nf->lock);
	ndk_uobj_adapter_close(u);
	return 0;
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
 * object (tests check it after closing their files).
 *
 * Context: module init.
 */
void ndk_file_debugfs_init(struct dentry *dir)
{
	debugfs_create_atomic_t("user_objects", 0444, dir, &ndk_uobj_count);
	debugfs_create_file_unsafe("user_pinned_pages", 0444, dir, NULL,
				   &ndk_user_pinned_fops);
}
