// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: user memory registrations of /dev/ndk.
 *
 * MEM_REGISTER (WSPRegisterMemory) and MEM_DEREGISTER, and the steps
 * MR_REGISTER (ndk_uverbs.c) shares with them: check and plan a
 * registration (ndk_umr_check(), ndk_umr_plan()), pin and track its
 * pages without the file's lock (ndk_umr_acquire()), register them
 * (ndk_umr_finish()) and undo it (ndk_umr_release(),
 * ndk_umr_deregister()).  Each registration is filed in its PD's key
 * index (ndk_umr_key_add()), so a post can check an SGE's token; a
 * fast-register MR is not (its PD finds it, ndk_fr_mr_lkey(): its key
 * index changes when its key is killed).
 *
 * Registrations (WSPRegisterMemory): the same (address, length, flags) on
 * the same PD gives the same handle and one more reference, as long as
 * the range still maps the registered pages (its cache generation has not
 * moved, ndk_ucache.c); each MEM_DEREGISTER drops one; at zero the region
 * is deregistered, then its pages are unpinned and uncharged (ndk_umem.c).
 *
 * Locking: ndk_file.lock, never held while pages are pinned: a fault may
 * wait on user space for ever (ndk_file.c).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/rbtree.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "ndk_file.h"
#include "ndk_mr.h"

/* Order of the PD's key index: by the key index an entry was filed under. */
static int ndk_umr_key_cmp(const void *key, const struct rb_node *n)
{
	u32 k = *(const u32 *)key;
	u32 other = rb_entry(n, struct ndk_uobj, mem.key_node)->mem.key;

	return k < other ? -1 : k > other;
}

static int ndk_umr_key_node_cmp(struct rb_node *a, const struct rb_node *b)
{
	return ndk_umr_key_cmp(&rb_entry(a, struct ndk_uobj,
					 mem.key_node)->mem.key, b);
}

/**
 * ndk_umr_key_add() - file a registration under its key index in its PD
 * @u: an MEM or MR entry whose MR has a local token
 *
 * The index is an rbtree of the entries themselves: filing allocates
 * nothing, where an XArray indexed by the driver's sparse, climbing key
 * indices allocated and freed a path of nodes per registration.
 *
 * Context: process context, ndk_file.lock held.
 * Return: 0, or %-EIO when the PD has an entry of that key index already.
 */
int ndk_umr_key_add(struct ndk_uobj *u)
{
	u->mem.key = ndk_get_local_token_from_mr(u->mem.mr) >> 8;
	if (rb_find_add(&u->mem.key_node, &u->parent->keys,
			ndk_umr_key_node_cmp))
		return -EIO;
	return 0;
}

/**
 * ndk_umr_key_del() - undo ndk_umr_key_add(), if it was done
 * @u: the entry
 *
 * Context: process context, ndk_file.lock held.
 */
void ndk_umr_key_del(struct ndk_uobj *u)
{
	if (RB_EMPTY_NODE(&u->mem.key_node))
		return;
	rb_erase(&u->mem.key_node, &u->parent->keys);
	RB_CLEAR_NODE(&u->mem.key_node);
}

/**
 * ndk_umr_key_find() - the registration a local token names in a PD
 * @pd:    the PD's entry
 * @token: a local token
 *
 * Context: process context, ndk_file.lock held.
 * Return: the MEM or MR entry whose MR has @token now, or NULL.
 */
struct ndk_uobj *ndk_umr_key_find(struct ndk_uobj *pd, u32 token)
{
	u32 key = token >> 8;
	struct rb_node *n = rb_find(&key, &pd->keys, ndk_umr_key_cmp);
	struct ndk_uobj *u;

	if (!n)
		return NULL;
	u = rb_entry(n, struct ndk_uobj, mem.key_node);
	return ndk_get_local_token_from_mr(u->mem.mr) == token ? u : NULL;
}

/**
 * ndk_umr_untrack() - stop tracking a registration entry's range, if it is
 * @u: an MEM or MR entry
 *
 * An MR entry's tracking was allocated by its MR_REGISTER and is freed; a
 * MEM entry's is its own (struct ndk_uobj_wsp).
 *
 * Context: process context, ndk_file.lock held.
 */
void ndk_umr_untrack(struct ndk_uobj *u)
{
	ndk_ucache_untrack(u->mem.cache);
	if (!ndk_uobj_descs[u->type].wsp)
		ndk_ucache_reg_free(u->mem.cache);
	u->mem.cache = NULL;
}

/**
 * ndk_umr_deregister() - deregister an MEM or MR entry's memory, if any
 * @u: the entry
 *
 * The pages are unpinned only once the device can no longer reach them:
 * after the deregistration returned.  Windows and fast-register MRs over
 * it that were invalidated and are being killed are waited for
 * (ndk_fr_settle_parent()).
 *
 * Context: process context, ndk_file.lock held.
 * Return: STATUS_SUCCESS (nothing registered any more), or
 * STATUS_DEVICE_BUSY (windows or fast-registered MRs still use the
 * memory; nothing changed).
 */
s32 ndk_umr_deregister(struct ndk_uobj *u)
{
	s32 status = STATUS_SUCCESS;

	if (ndk_uobj_holds_pages(u)) {
		ndk_fr_settle_parent(u->mem.mr);
		/* The MR unpins the pages with its registration. */
		status = ndk_deregister_mr(u->mem.mr, NULL, NULL);
		if (status)
			return status;
		ndk_umr_untrack(u);
	}
	ndk_umr_key_del(u);
	return status;
}

static void ndk_umr_result(struct ndk_uobj *u, struct ndk_u_mem_register *m)
{
	m->handle = u->handle;
	m->local_token = ndk_get_local_token_from_mr(u->mem.mr);
	m->remote_token = ndk_get_remote_token_from_mr(u->mem.mr);
	m->references = u->mem.refs;
	m->base_address = ndk_uobj_umem(u)->address;
	ndk_ucache_result(u->mem.cache, &m->cache_slot, &m->cache_generation);
	m->reserved = 0;
}

/*
 * What a driver's pin spans at most, in pages: siw 6.1 counts a
 * registration's pages in an int (siw_umem_get()), so a longer one wraps,
 * pins a page or none, and leaves an MR that claims the whole length;
 * where RLIMIT_MEMLOCK is unlimited nothing else stops it.  One page less
 * than INT_MAX, for an address that is not page aligned.  8 TiB.
 */
#define NDK_UMR_DRIVER_PAGES_MAX	((u64)INT_MAX - 1)

/*
 * The longest user registration: what the driver registers from user
 * memory (its max_mr_size, within NDK_UMR_DRIVER_PAGES_MAX) when it may
 * (ndk_mr_user_capable()), else what ndk.ko's own pin and
 * ndk_register_mr() can (MaxRegistrationSize).
 */
u64 ndk_umr_limit(struct ndk_adapter *adapter,
		  const struct ndk_adapter_info *info)
{
	struct ib_device *ibdev = adapter->dev->ibdev;

	if (!ndk_mr_user_capable(ibdev))
		return info->max_registration_size;
	return max_t(u64, min_t(u64, ibdev->attrs.max_mr_size,
				NDK_UMR_DRIVER_PAGES_MAX << PAGE_SHIFT),
		     info->max_registration_size);
}

/**
 * ndk_umr_check() - may user memory be registered, and how?
 * @u:   the entry the registration is made through (a PD or an MR),
 *       whose adapter is present
 * @obj: that entry's kernel object (its PD or its MR)
 * @req: in: address, length, mr_flags; out: write, flags_ro, driver,
 *       own_limit
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
	req->flags_ro = ndk_mr_flags_read_only(ndk_ibdev(obj), req->mr_flags);
	if (!write || ndk_mr_flags_write(obj, req->flags_ro))
		req->flags_ro = req->mr_flags;
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
	if (mode < 0 && req->flags_ro != req->mr_flags) {
		/* Pages the device may not write: an optional sink goes. */
		req->mr_flags = req->flags_ro;
		req->write = false;
		mode = ndk_umem_mode(current->mm, req->address, req->length,
				     false);
	}
	if (mode < 0)
		return mode;
	req->driver &= mode;
	if (!req->driver && req->length > req->own_limit)
		return -EMSGSIZE;
	return 0;
}

/* Registrations made again while invalidations keep colliding with them. */
#define NDK_UMR_TRIES	3

/*
 * debugfs ndk/hold_registration_ms (root only), 0 for off: the next user
 * registration waits that long after its pin or driver registration,
 * before its check, once and without the file's lock, so tests reach what
 * other commands see of a registration being made.
 */
static u32 ndk_umr_hold_ms;

/**
 * ndk_umr_debugfs_init() - the user registrations' debugfs files
 * @dir: ndk.ko's debugfs directory
 *
 * Context: module init.
 */
void ndk_umr_debugfs_init(struct dentry *dir)
{
	debugfs_create_u32("hold_registration_ms", 0600, dir,
			   &ndk_umr_hold_ms);
}

/* Pin (ndk.ko) or register (the driver) once; see ndk_umr_acquire(). */
static int ndk_umr_try(const struct ndk_umr_req *req, struct ndk_mr *mr,
		       struct ndk_umem *um)
{
	int ret;

	if (!req->driver)
		return ndk_umem_pin(um, current->mm, req->address, req->length,
				    req->write);
	/*
	 * The mapping walk again, inside the notifier's section: a remap
	 * after it collides with the pin (ndk_ucache_end()), so the driver
	 * pins only memory this walk allowed.
	 */
	ret = ndk_umem_mode(current->mm, req->address, req->length,
			    req->write);
	if (ret != 1)
		return ret < 0 ? ret : -EAGAIN;
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
	ndk_umem_unpin_untouched(um);
}

/**
 * ndk_umr_acquire() - pin or register user memory of the caller, tracked
 * @nf:    the file
 * @req:   planned by ndk_umr_plan()
 * @mr:    @req->driver: the MR the driver registers in (created, idle,
 *         referenced by the caller for the call); else unused
 * @um:    zeroed; receives the range (ndk_umem_held())
 * @r:     storage for the range's tracking (ndk_ucache_track()), which
 *         tracks it on success only
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
 * range was remapped, since the check, into memory the driver may not
 * pin, or invalidations collided with every try: try again); what
 * ndk_umem_pin() and ib_reg_user_mr() return.
 */
int ndk_umr_acquire(struct ndk_file *nf, const struct ndk_umr_req *req,
		    struct ndk_mr *mr, struct ndk_umem *um,
		    struct ndk_ucache_reg *r)
{
	unsigned long seq;
	int tries, ret;

	ret = ndk_ucache_track(&nf->ucache, r, current->mm, req->address,
			       req->length, req->slot);
	if (ret)
		return ret;
	for (tries = 1; ; tries++) {
		seq = ndk_ucache_begin(r);
		ret = ndk_umr_try(req, mr, um);
		if (ret) {
			ndk_ucache_untrack(r);
			return ret;
		}
		ndk_file_hold_once(&ndk_umr_hold_ms);
		if (!ndk_ucache_end(r, seq))
			break;
		pr_debug("ndk: registration of 0x%llx+%llu raced an invalidation (try %d)\n",
			 req->address, req->length, tries);
		ndk_umr_untry(req, mr, um);
		/*
		 * Never keep a pin an invalidation collided with: the pages
		 * may be another mapping's than the walk checked.
		 */
		if (tries == NDK_UMR_TRIES) {
			ndk_ucache_untrack(r);
			return -EAGAIN;
		}
	}
	return 0;
}

/**
 * ndk_umr_finish() - register what ndk_umr_acquire() pinned, in its MR
 * @req: as given to ndk_umr_acquire()
 * @mr:  the entry's MR, idle unless the driver registered it
 * @um:  the range; on success emptied: the MR owns it (ndk_mr_own_umem())
 *
 * Context: process context of the opener, ndk_file.lock held.
 * Return: 0; what ndk_register_mr() fails with, as an errno.
 */
int ndk_umr_finish(const struct ndk_umr_req *req, struct ndk_mr *mr,
		   struct ndk_umem *um)
{
	s32 status;

	if (!req->driver) {
		status = ndk_register_mr(mr, um->mdl, um->length,
					 req->mr_flags, NULL, NULL);
		if (status)
			return ndk_errno_from_status(status);
	}
	ndk_mr_own_umem(mr, um);
	return 0;
}

/**
 * ndk_umr_release() - undo ndk_umr_acquire() (and ndk_umr_finish())
 * @mr:         the MR
 * @um:         the range, unless ndk_umr_finish() gave it to @mr
 * @cache:      its tracking, untracked (its storage stays)
 * @registered: @mr holds the registration (the driver's, or
 *              ndk_umr_finish() succeeded); its deregistration unpins
 *              what @mr owns
 *
 * Context: process context, may sleep.
 */
void ndk_umr_release(struct ndk_mr *mr, struct ndk_umem *um,
		     struct ndk_ucache_reg *cache, bool registered)
{
	if (registered)
		ndk_deregister_mr(mr, NULL, NULL);
	ndk_ucache_untrack(cache);
	/* Not ndk.ko's registration: its pages (if any) went with @mr. */
	ndk_umem_unpin_untouched(um);
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
	struct ndk_umem *um = ndk_uobj_umem(u);
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

/*
 * WSD registrations are local sources and targets of transfers; remote
 * access goes through windows and fast-registered MRs over them.  The
 * device writes only with MEM_WRITE.
 */
static u32 ndk_umr_mr_flags(u32 mem_flags)
{
	return mem_flags & NDK_U_MEM_WRITE ? NDK_MR_FLAG_ALLOW_LOCAL_WRITE : 0;
}

/* Order of WSP registrations in a PD's @mems: (address, length, flags). */
static int ndk_umr_cmp(u64 address, u64 length, u32 flags,
		       const struct rb_node *n)
{
	const struct ndk_uobj *u = rb_entry(n, struct ndk_uobj, mem.node);
	const struct ndk_umem *um = ndk_uobj_umem(u);

	if (address != um->address)
		return address < um->address ? -1 : 1;
	if (length != um->length)
		return length < um->length ? -1 : 1;
	if (flags != u->mem.flags)
		return flags < u->mem.flags ? -1 : 1;
	return 0;
}

/* A MEM_REGISTER command's range against an entry (rb_for_each()). */
static int ndk_umr_find_cmp(const void *key, const struct rb_node *n)
{
	const struct ndk_u_mem_register *m = key;

	return ndk_umr_cmp(m->address, m->length, m->flags, n);
}

/* rb_add() order: an entry goes after the entries of the same range. */
static bool ndk_umr_less(struct rb_node *a, const struct rb_node *b)
{
	const struct ndk_uobj *u = rb_entry(a, struct ndk_uobj, mem.node);

	return ndk_umr_cmp(ndk_uobj_umem(u)->address, ndk_uobj_umem(u)->length,
			   u->mem.flags, b) < 0;
}

/*
 * The oldest registration of @pd with @m's address, length and flags
 * whose pages the range still maps, or NULL: O(log n + registrations of
 * that range made before remaps).
 */
static struct ndk_uobj *ndk_umr_find(struct ndk_uobj *pd,
				     const struct ndk_u_mem_register *m)
{
	struct rb_node *n;
	struct ndk_uobj *u;

	rb_for_each(n, m, &pd->mems, ndk_umr_find_cmp) {
		u = rb_entry(n, struct ndk_uobj, mem.node);
		/* Never a registration of pages the range no longer maps. */
		if (ndk_ucache_current(u->mem.cache))
			return u;
	}
	return NULL;
}

/* One more reference on registration @u; its answer in @m. */
static int ndk_umr_ref(struct ndk_uobj *u, struct ndk_u_mem_register *m)
{
	if (u->mem.refs == U32_MAX)
		return -EOVERFLOW;
	u->mem.refs++;
	ndk_umr_result(u, m);
	return 0;
}

/**
 * ndk_uv_mem_register() - NDK_IOCTL_MEM_REGISTER (WSPRegisterMemory)
 * @file: the file
 * @arg:  struct ndk_u_mem_register; in: pd_handle, flags (one of
 *        NDK_U_MEM_*), address, length (> 0); out: the rest
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
int ndk_uv_mem_register(struct file *file, void *arg)
{
	struct ndk_u_mem_register *m = arg;
	struct ndk_umr_req req = {
		.address = m->address,
		.length = m->length,
		.mr_flags = ndk_umr_mr_flags(m->flags),
		.slot = true,
	};
	struct ndk_uobj *pd, *u, *fresh;
	struct ndk_ucache_reg *track;
	struct ndk_umem um = {};
	struct ndk_mr *mr = NULL;
	struct ndk_pd *kpd;
	struct ndk_file *nf;
	u32 adapter;
	s32 status;
	int ret;

	/* WSPRegisterMemory: one of MEM_READ, MEM_WRITE, MEM_READWRITE. */
	if (!m->flags || (m->flags & ~NDK_U_MEM_READWRITE) || !m->length ||
	    m->reserved)
		return -EINVAL;

	pd = ndk_file_lock_uobj(file, m->pd_handle, NDK_UOBJ_PD, &nf);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	u = ndk_umr_find(pd, m);
	if (u) {
		ret = ndk_umr_ref(u, m);
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
	RB_CLEAR_NODE(&fresh->mem.key_node);
	track = &container_of(fresh, struct ndk_uobj_wsp, u)->track;
	ret = ndk_umr_acquire(nf, &req, mr, &um, track);
	if (ret)
		goto err_free_uobj;
	fresh->mem.cache = track;

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
	u = ndk_umr_find(pd, m);
	if (u) {
		/* Registered by another thread meanwhile: share it. */
		ret = ndk_umr_ref(u, m);
		goto err_release;
	}
	if (!mr) {
		status = ndk_create_mr(kpd, false, NULL, NULL, &mr);
		if (status) {
			ret = ndk_errno_from_status(status);
			goto err_release;
		}
	}
	ret = ndk_umr_finish(&req, mr, &um);
	if (ret)
		goto err_release;
	fresh->mem.mr = mr;
	fresh->parent = pd;
	ret = ndk_umr_key_add(fresh);
	if (ret)
		goto err_release;
	ret = ndk_uobj_publish(nf, fresh);
	if (ret)
		goto err_key_del;
	rb_add(&fresh->mem.node, &pd->mems, ndk_umr_less);
	WRITE_ONCE(fresh->mem.cache->handle, fresh->handle);
	ndk_umr_result(fresh, m);
	mutex_unlock(&nf->lock);
	return 0;

err_key_del:
	ndk_umr_key_del(fresh);
err_release:
	mutex_unlock(&nf->lock);
	ndk_umr_release(mr, &um, fresh->mem.cache,
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
 * ndk_uv_mem_deregister() - NDK_IOCTL_MEM_DEREGISTER (WSPDeregisterMemory)
 * @file: the file
 * @arg:  struct ndk_u_mem_deregister; in: handle; out: references left
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT (no such handle, or already gone);
 * %-EINVAL (not a registration); %-EBUSY (the last reference, while a
 * window is bound in the memory or an MR fast-registered over it).
 */
int ndk_uv_mem_deregister(struct file *file, void *arg)
{
	struct ndk_u_mem_deregister *m = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;

	if (m->flags || m->reserved)
		return -EINVAL;

	u = ndk_file_lock_uobj(file, m->handle, NDK_UOBJ_MEM, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	if (u->mem.refs == 1 && ndk_umr_deregister(u)) {
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
