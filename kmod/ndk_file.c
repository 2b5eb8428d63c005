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
 * the same PD gives the same handle and one more reference; each
 * MEM_DEREGISTER drops one; at zero the region is deregistered, then its
 * pages are unpinned and uncharged (ndk_umem.c).
 *
 * Locking: ndk_file.lock serialises every command on the file, including
 * the blocking registration, and the release.  It nests outside every ndk
 * lock (the kernel API is called with it held).
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

#include "ndk_core.h"

enum ndk_uobj_type {
	NDK_UOBJ_ADAPTER,
	NDK_UOBJ_PD,
	NDK_UOBJ_MEM,
};

/**
 * struct ndk_file - private data of an open /dev/ndk
 * @lock:    serialises commands and the release
 * @handles: struct ndk_uobj by handle
 * @next:    cursor of the cyclic handle allocation
 * @mm:      the opener's mm (mmgrab()): the only one allowed objects
 */
struct ndk_file {
	struct mutex lock; /* serialises commands on this file */
	struct xarray handles;
	u32 next;
	struct mm_struct *mm;
};

/**
 * struct ndk_uobj - one entry of a file's handle table
 * @handle:   its handle
 * @type:     enum ndk_uobj_type
 * @parent:   the entry it was created from, or NULL (adapter)
 * @children: entries created from this one and still open
 * @adapter:  NDK_UOBJ_ADAPTER: the adapter
 * @pd:       NDK_UOBJ_PD: the PD
 * @mems:     NDK_UOBJ_PD: its registrations (struct ndk_uobj.mem.entry)
 * @mem:      NDK_UOBJ_MEM: the registration
 * @mem.mr:   its MR, registered
 * @mem.umem: its pinned pages
 * @mem.flags: NDK_U_MEM_* it was registered with
 * @mem.refs: MEM_REGISTER calls not yet matched by MEM_DEREGISTER
 * @mem.entry: in the PD's @mems
 */
struct ndk_uobj {
	u32 handle;
	u8 type;
	struct ndk_uobj *parent;
	u32 children;
	union {
		struct ndk_adapter *adapter;
		struct {
			struct ndk_pd *pd;
			struct list_head mems;
		};
		struct {
			struct ndk_mr *mr;
			struct ndk_umem umem;
			u32 flags;
			u32 refs;
			struct list_head entry;
		} mem;
	};
};

/* Live entries of every file: debugfs ndk/user_objects. */
static atomic_t ndk_uobj_count = ATOMIC_INIT(0);

static int ndk_errno_from_status(s32 status)
{
	switch (status) {
	case STATUS_SUCCESS:
		return 0;
	case STATUS_INSUFFICIENT_RESOURCES:
		return -ENOMEM;
	case STATUS_INVALID_PARAMETER:
		return -EINVAL;
	case STATUS_DEVICE_REMOVED:
		return -ENODEV;
	case STATUS_DEVICE_BUSY:
		return -EBUSY;
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
 * Return: 0 or %-ENOMEM.
 */
int ndk_file_open(struct inode *inode, struct file *file)
{
	struct ndk_file *nf;

	nf = kzalloc(sizeof(*nf), GFP_KERNEL);
	if (!nf)
		return -ENOMEM;
	mutex_init(&nf->lock);
	xa_init_flags(&nf->handles, XA_FLAGS_ALLOC1);
	if (current->mm) {
		mmgrab(current->mm);
		nf->mm = current->mm;
	}
	file->private_data = nf;
	return nonseekable_open(inode, file);
}

/* Lock the file for an object command of the calling process. */
static struct ndk_file *ndk_file_lock(struct file *file)
{
	struct ndk_file *nf = file->private_data;

	if (!nf->mm || current->mm != nf->mm)
		return ERR_PTR(-EPERM);
	mutex_lock(&nf->lock);
	return nf;
}

/* The entry @handle of type @type: -ENOENT if none, -EINVAL if another type. */
static struct ndk_uobj *ndk_uobj_find(struct ndk_file *nf, u32 handle, u8 type)
{
	struct ndk_uobj *u;

	lockdep_assert_held(&nf->lock);
	u = handle ? xa_load(&nf->handles, handle) : NULL;
	if (!u)
		return ERR_PTR(-ENOENT);
	if (u->type != type)
		return ERR_PTR(-EINVAL);
	return u;
}

static struct ndk_uobj *ndk_uobj_alloc(u8 type, struct ndk_uobj *parent)
{
	struct ndk_uobj *u = kzalloc(sizeof(*u), GFP_KERNEL);

	if (!u)
		return NULL;
	u->type = type;
	u->parent = parent;
	return u;
}

/* Give @u a handle; on failure the caller undoes the object. */
static int ndk_uobj_publish(struct ndk_file *nf, struct ndk_uobj *u)
{
	int ret;

	ret = xa_alloc_cyclic(&nf->handles, &u->handle, u, xa_limit_32b,
			      &nf->next, GFP_KERNEL);
	if (ret < 0)
		return ret == -EBUSY ? -ENOBUFS : ret;
	if (u->parent)
		u->parent->children++;
	atomic_inc(&ndk_uobj_count);
	return 0;
}

/* Remove @u from the table and release its object; it has no children. */
static void ndk_uobj_destroy(struct ndk_file *nf, struct ndk_uobj *u)
{
	s32 status;

	lockdep_assert_held(&nf->lock);
	WARN_ON(u->children);
	xa_erase(&nf->handles, u->handle);
	switch (u->type) {
	case NDK_UOBJ_MEM:
		list_del(&u->mem.entry);
		/*
		 * The pages may only be unpinned once the device can no
		 * longer reach them: after the deregistration returned.
		 */
		status = ndk_deregister_mr(u->mem.mr, NULL, NULL);
		ndk_close_mr(u->mem.mr, NULL, NULL);
		if (!WARN_ON(status))
			ndk_umem_unpin(&u->mem.umem);
		break;
	case NDK_UOBJ_PD:
		ndk_close_pd(u->pd, NULL, NULL);
		break;
	case NDK_UOBJ_ADAPTER:
		ndk_close_adapter(u->adapter);
		break;
	}
	if (u->parent)
		u->parent->children--;
	atomic_dec(&ndk_uobj_count);
	kfree(u);
}

/**
 * ndk_file_release() - last close of /dev/ndk: release every object left
 * @inode: the device inode
 * @file:  the file
 *
 * Registrations first, then PDs, then adapters, each through the kernel
 * API; pinned pages come back to the opener's VmPin.
 *
 * Context: process context (any process: the last holder of the file).
 * Return: 0.
 */
int ndk_file_release(struct inode *inode, struct file *file)
{
	static const u8 order[] = { NDK_UOBJ_MEM, NDK_UOBJ_PD, NDK_UOBJ_ADAPTER };
	struct ndk_file *nf = file->private_data;
	struct ndk_uobj *u;
	unsigned long index;
	int i;

	mutex_lock(&nf->lock);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		xa_for_each(&nf->handles, index, u)
			if (u->type == order[i])
				ndk_uobj_destroy(nf, u);
	mutex_unlock(&nf->lock);
	WARN_ON(!xa_empty(&nf->handles));
	xa_destroy(&nf->handles);
	if (nf->mm)
		mmdrop(nf->mm);
	mutex_destroy(&nf->lock);
	kfree(nf);
	return 0;
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
	u = ndk_uobj_alloc(NDK_UOBJ_ADAPTER, NULL);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	status = ndk_open_adapter_id(a->adapter_id, NULL, NULL, &adapter);
	if (status) {
		ret = status == STATUS_INVALID_PARAMETER ? -ENOENT :
			ndk_errno_from_status(status);
		goto err_free_uobj;
	}
	u->adapter = adapter;
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_close_adapter;
	a->handle = u->handle;
	mutex_unlock(&nf->lock);
	return 0;

err_close_adapter:
	ndk_close_adapter(adapter);
err_free_uobj:
	kfree(u);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
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

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	u = ndk_uobj_find(nf, q->handle, NDK_UOBJ_ADAPTER);
	if (IS_ERR(u)) {
		mutex_unlock(&nf->lock);
		return PTR_ERR(u);
	}
	status = ndk_query_adapter_info(u->adapter, &info, &size);
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

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	parent = ndk_uobj_find(nf, p->adapter_handle, NDK_UOBJ_ADAPTER);
	if (IS_ERR(parent)) {
		ret = PTR_ERR(parent);
		goto out_unlock;
	}
	u = ndk_uobj_alloc(NDK_UOBJ_PD, parent);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	INIT_LIST_HEAD(&u->mems);
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
	kfree(u);
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
}

/* Pin, create and register a new registration of @pd (->mem.flags set). */
static int ndk_mem_create(struct ndk_uobj *pd, struct ndk_uobj *u,
			  struct ndk_u_mem_register *m)
{
	struct ndk_adapter_info info;
	u32 size = sizeof(info);
	bool write = m->flags & NDK_U_MEM_WRITE;
	s32 status;
	int ret;
	u64 last;

	/* Wrapping or kernel ranges before the size rule (EFAULT first). */
	if (check_add_overflow(m->address, m->length, &last) ||
	    !access_ok(u64_to_user_ptr(m->address), m->length))
		return -EFAULT;
	status = ndk_query_adapter_info(pd->parent->adapter, &info, &size);
	if (status)
		return ndk_errno_from_status(status);
	if (!info.max_registration_size)
		return -EOPNOTSUPP;
	if (m->length > info.max_registration_size)
		return -EMSGSIZE;

	ret = ndk_umem_pin(&u->mem.umem, current->mm, m->address, m->length,
			   write);
	if (ret)
		return ret;
	status = ndk_create_mr(pd->pd, false, NULL, NULL, &u->mem.mr);
	if (status) {
		ret = ndk_errno_from_status(status);
		goto err_unpin;
	}
	/*
	 * WSD registrations are local sources and targets of transfers:
	 * no remote rights.  The device writes only with MEM_WRITE.
	 */
	status = ndk_register_mr(u->mem.mr, u->mem.umem.mdl, m->length,
				 write ? NDK_MR_FLAG_ALLOW_LOCAL_WRITE : 0,
				 NULL, NULL);
	if (status) {
		ret = ndk_errno_from_status(status);
		goto err_close_mr;
	}
	return 0;

err_close_mr:
	ndk_close_mr(u->mem.mr, NULL, NULL);
err_unpin:
	ndk_umem_unpin(&u->mem.umem);
	return ret;
}

/**
 * ndk_file_mem_register() - NDK_IOCTL_MEM_REGISTER (WSPRegisterMemory)
 * @file: the file
 * @m:    in: pd_handle, flags, address, length (validated by the
 *        caller: flags one of NDK_U_MEM_*, length > 0); out: the rest
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (not a PD); %-EFAULT (see
 * ndk_umem_pin()); %-ENOMEM (memory or RLIMIT_MEMLOCK); %-EMSGSIZE
 * (longer than MaxRegistrationSize); %-EOPNOTSUPP (the adapter cannot
 * register, MaxRegistrationSize 0); %-EOVERFLOW (reference count);
 * %-ENODEV; %-ENOBUFS (no handle left); %-EINTR.
 */
int ndk_file_mem_register(struct file *file, struct ndk_u_mem_register *m)
{
	struct ndk_uobj *pd, *u;
	struct ndk_file *nf;
	int ret;

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	pd = ndk_uobj_find(nf, m->pd_handle, NDK_UOBJ_PD);
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto out_unlock;
	}
	list_for_each_entry(u, &pd->mems, mem.entry) {
		if (u->mem.umem.address == m->address &&
		    u->mem.umem.length == m->length && u->mem.flags == m->flags) {
			if (u->mem.refs == U32_MAX) {
				ret = -EOVERFLOW;
				goto out_unlock;
			}
			u->mem.refs++;
			ndk_mem_result(u, m);
			ret = 0;
			goto out_unlock;
		}
	}

	u = ndk_uobj_alloc(NDK_UOBJ_MEM, pd);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	u->mem.flags = m->flags;
	u->mem.refs = 1;
	ret = ndk_mem_create(pd, u, m);
	if (ret)
		goto err_free_uobj;
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_release_mem;
	list_add_tail(&u->mem.entry, &pd->mems);
	ndk_mem_result(u, m);
	mutex_unlock(&nf->lock);
	return 0;

err_release_mem:
	ndk_deregister_mr(u->mem.mr, NULL, NULL);
	ndk_close_mr(u->mem.mr, NULL, NULL);
	ndk_umem_unpin(&u->mem.umem);
err_free_uobj:
	kfree(u);
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
 * %-EINVAL (not a registration).
 */
int ndk_file_mem_deregister(struct file *file, struct ndk_u_mem_deregister *m)
{
	struct ndk_file *nf;
	struct ndk_uobj *u;

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	u = ndk_uobj_find(nf, m->handle, NDK_UOBJ_MEM);
	if (IS_ERR(u)) {
		mutex_unlock(&nf->lock);
		return PTR_ERR(u);
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
 * A registration is released whatever its reference count.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EBUSY (objects created from it are open).
 */
int ndk_file_handle_close(struct file *file, u32 handle)
{
	struct ndk_file *nf;
	struct ndk_uobj *u;
	int ret = 0;

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	u = handle ? xa_load(&nf->handles, handle) : NULL;
	if (!u)
		ret = -ENOENT;
	else if (u->children)
		ret = -EBUSY;
	else
		ndk_uobj_destroy(nf, u);
	mutex_unlock(&nf->lock);
	return ret;
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
