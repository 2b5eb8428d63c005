// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the handle table of an open /dev/ndk file.
 *
 * Each entry (struct ndk_uobj, in a cache of its own, charged to the
 * caller; a MEM entry is one object with its range's tracking, struct
 * ndk_uobj_wsp) wraps one object of the kernel API and gets its handle
 * when published (ndk_uobj_publish()).  One const descriptor per handle
 * type (ndk_uobj_descs[]) says what an entry's parent is, how netlink
 * names it, how it is opened and destroyed and which kernel API object
 * makes it busy, so no other code switches on the type.  HANDLE_CLOSE
 * refuses an entry whose object has open successors (ndk_uobj_busy():
 * the kernel API counts them, and the entries created from an entry are
 * among its object's); the release takes children before parents, by
 * the descriptors' parent types, and needs no other order: a
 * registration's MR owns its pinned pages (ndk_mr_own_umem()).
 *
 * A published entry is charged to the caller's rdma cgroup, as uverbs
 * charges its objects: an adapter as an HCA handle (a uverbs context),
 * every other entry as an HCA object, so rdma.max bounds what a process
 * holds through /dev/ndk on each device as it does through uverbs.  The
 * charge goes before the device does: an entry is uncharged when it is
 * freed, and an adapter's before its adapter is closed (at the device's
 * removal too), which is what lets the device's unregistration finish.
 *
 * Locking: every function here runs with ndk_file.lock held, but the
 * cache's init/exit, ndk_uobj_alloc() and ndk_uobj_free().
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/cgroup_rdma.h>
#include <linux/debugfs.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "ndk_file.h"
#include "ndk_mr.h"
#include "ndk_qp.h"

/* Live entries of every file: debugfs ndk/user_objects. */
static atomic_t ndk_uobj_count = ATOMIC_INIT(0);

/*
 * Handle table entries: exact-size objects, charged to the caller; a MEM
 * entry with its range's tracking (struct ndk_uobj_wsp).
 */
static struct kmem_cache *ndk_uobj_cache;
static struct kmem_cache *ndk_uobj_wsp_cache;

/**
 * ndk_uobj_cache_init() - create the handle table entries' slab caches
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int ndk_uobj_cache_init(void)
{
	ndk_uobj_cache = KMEM_CACHE(ndk_uobj, SLAB_ACCOUNT);
	if (!ndk_uobj_cache)
		return -ENOMEM;
	ndk_uobj_wsp_cache = KMEM_CACHE(ndk_uobj_wsp, SLAB_ACCOUNT);
	if (!ndk_uobj_wsp_cache) {
		kmem_cache_destroy(ndk_uobj_cache);
		return -ENOMEM;
	}
	return 0;
}

/**
 * ndk_uobj_cache_exit() - destroy them (every file closed)
 *
 * Context: module exit.
 */
void ndk_uobj_cache_exit(void)
{
	kmem_cache_destroy(ndk_uobj_wsp_cache);
	kmem_cache_destroy(ndk_uobj_cache);
}

/* The slab cache of entries of @type. */
static struct kmem_cache *ndk_uobj_cache_of(u8 type)
{
	return ndk_uobj_descs[type].wsp ? ndk_uobj_wsp_cache : ndk_uobj_cache;
}

#ifdef CONFIG_CGROUP_RDMA
static enum rdmacg_resource_type ndk_uobj_cg_type(const struct ndk_uobj *u)
{
	return u->type == NDK_UOBJ_ADAPTER ? RDMACG_RESOURCE_HCA_HANDLE :
					     RDMACG_RESOURCE_HCA_OBJECT;
}

/* Charge @u to current's rdma cgroup on the device of its adapter. */
static int ndk_uobj_charge(struct ndk_uobj *u)
{
	struct ndk_adapter *a = ndk_uobj_root(u)->adapter;
	struct rdmacg_device *dev = &ndk_ibdev(&a->obj)->cg_device;
	int ret;

	ret = rdmacg_try_charge(&u->cg, dev, ndk_uobj_cg_type(u));
	if (!ret)
		u->cg_dev = dev;
	return ret;
}

/**
 * ndk_uobj_uncharge() - give back the rdma cgroup charge of an entry
 * @u: the entry; its device still registered
 *
 * Once only: a second call does nothing.
 *
 * Context: process context.
 */
void ndk_uobj_uncharge(struct ndk_uobj *u)
{
	if (!u->cg_dev)
		return;
	rdmacg_uncharge(u->cg, u->cg_dev, ndk_uobj_cg_type(u));
	u->cg_dev = NULL;
}
#else
static int ndk_uobj_charge(struct ndk_uobj *u)
{
	return 0;
}

void ndk_uobj_uncharge(struct ndk_uobj *u)
{
}
#endif

/**
 * ndk_uobj_free() - free an entry of ndk_uobj_alloc()
 * @u: the entry, unpublished or removed from the table, or NULL
 *
 * Context: process context.
 */
void ndk_uobj_free(struct ndk_uobj *u)
{
	if (!u)
		return;
	ndk_uobj_uncharge(u);
	kmem_cache_free(ndk_uobj_cache_of(u->type), u);
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
	struct ndk_uobj *u = kmem_cache_zalloc(ndk_uobj_cache_of(type),
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
 * The entry is charged to the caller's rdma cgroup (file comment).
 *
 * Context: process context, ndk_file.lock held.
 * Return: 0; %-EAGAIN (the rdma cgroup's limit); %-ENOMEM; %-ENOBUFS (no
 * handle left).  On failure nothing is charged and the caller releases
 * the object.
 */
int ndk_uobj_publish(struct ndk_file *nf, struct ndk_uobj *u)
{
	int ret;

	ret = ndk_uobj_charge(u);
	if (ret)
		return ret;
	ret = xa_alloc_cyclic(&nf->handles, &u->handle, u, xa_limit_32b,
			      &nf->next, GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		ndk_uobj_uncharge(u);
		u->handle = 0;	/* the XArray may have set it: not ours */
		return ret == -EBUSY ? -ENOBUFS : ret;
	}
	atomic_inc(&ndk_uobj_count);
	return 0;
}

/*
 * Take @handle out of @nf's table.  It stays reserved (an allocating
 * XArray stores a NULL as a reservation: lookups and walks skip it, the
 * cyclic allocation does not hand it out) until NDK_UOBJ_RETIRED later
 * handles have been closed.  Handles climb, so erasing at once would
 * empty the XArray node of the newest handles at every close and
 * allocate it again at the next publish: about two 576-byte nodes per
 * MEM_REGISTER.
 */
static void ndk_uobj_unpublish(struct ndk_file *nf, u32 handle)
{
	u32 *oldest = &nf->retired[nf->retired_pos];

	if (*oldest)
		xa_erase(&nf->handles, *oldest);
	*oldest = 0;
	/* Replacing an entry allocates nothing; erase it if that fails. */
	if (xa_is_err(xa_store(&nf->handles, handle, NULL, GFP_NOWAIT))) {
		xa_erase(&nf->handles, handle);
		return;
	}
	*oldest = handle;
	nf->retired_pos = (nf->retired_pos + 1) % NDK_UOBJ_RETIRED;
}

/**
 * ndk_uobj_find_of() - look a handle up, of one of several types
 * @nf:     the file, locked
 * @handle: the handle
 * @types:  the types it may have, a set of BIT(NDK_UOBJ_*)
 *          (NDK_UOBJ_ANY: every type)
 *
 * Context: process context, ndk_file.lock held.
 * Return: the entry; ERR_PTR(-ENOENT) if none, ERR_PTR(-EINVAL) if of
 * another type, ERR_PTR(-ENODEV) for an adapter whose device went away
 * when only an adapter will do (@types BIT(NDK_UOBJ_ADAPTER)).
 */
struct ndk_uobj *ndk_uobj_find_of(struct ndk_file *nf, u32 handle, u32 types)
{
	struct ndk_uobj *u;

	lockdep_assert_held(&nf->lock);
	u = handle ? xa_load(&nf->handles, handle) : NULL;
	if (!u)
		return ERR_PTR(-ENOENT);
	if (!(types & BIT(u->type)))
		return ERR_PTR(-EINVAL);
	if (types == BIT(NDK_UOBJ_ADAPTER) && !u->adapter)
		return ERR_PTR(-ENODEV);
	return u;
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
 * ndk_uobj_busy() - may HANDLE_CLOSE not close this entry yet?
 * @u: the entry
 *
 * The busy rule is the kernel API object's (ndk_obj_busy()): it counts
 * its open successors, which include every entry created from this one
 * (and a QP's in its CQs), so an entry's children keep their parent.  It
 * also counts the MR a MEM_REGISTER that the driver pins has made and
 * not yet published, as uverbs refuses to destroy a PD a registration
 * is being made in.
 *
 * Context: process context, ndk_file.lock held.
 */
bool ndk_uobj_busy(const struct ndk_uobj *u)
{
	const struct ndk_uobj_desc *d = &ndk_uobj_descs[u->type];
	struct ndk_obj *obj = d->core ? d->core(u) : NULL;

	return obj && ndk_obj_busy(obj);
}

/* The kernel API objects that have successors in the table. */
static struct ndk_obj *ndk_uobj_adapter_core(const struct ndk_uobj *u)
{
	return u->adapter ? &u->adapter->obj : NULL;
}

static struct ndk_obj *ndk_uobj_pd_core(const struct ndk_uobj *u)
{
	return &u->pd->obj;
}

static struct ndk_obj *ndk_uobj_cq_core(const struct ndk_uobj *u)
{
	return &u->cq.cq->obj;
}

/*
 * MR and MEM entries: the token leaves the PD's index and the range its
 * tracking; the registration and its pages go with the MR, at once or,
 * while windows or fast-registered MRs still use them (their own entries
 * closed, their teardown waiting for a QP to resolve a request), when
 * the last of those goes (ndk_mr_own_umem()).
 */
static void ndk_uobj_mr_destroy(struct ndk_uobj *u)
{
	ndk_umr_key_del(u);
	ndk_umr_untrack(u);
	ndk_close_mr(u->mem.mr, NULL, NULL);
}

static void ndk_uobj_mem_destroy(struct ndk_uobj *u)
{
	rb_erase(&u->mem.node, &u->parent->mems);
	ndk_uobj_mr_destroy(u);
}

static void ndk_uobj_pd_destroy(struct ndk_uobj *u)
{
	WARN_ON(!RB_EMPTY_ROOT(&u->keys));
	ndk_close_pd(u->pd, NULL, NULL);
}

/* One descriptor per handle type. */
const struct ndk_uobj_desc ndk_uobj_descs[NDK_UOBJ_TYPES] = {
	[NDK_UOBJ_ADAPTER] = { .parent = NDK_UOBJ_ADAPTER,
			       .nl_type = NDK_NL_OBJ_ADAPTER,
			       .core = ndk_uobj_adapter_core },
	[NDK_UOBJ_CONNECTOR] = { .parent = NDK_UOBJ_ADAPTER,
				 .nl_type = NDK_NL_OBJ_CONNECTOR,
				 .open = ndk_uv_connector_open,
				 .published = ndk_uv_connector_published,
				 .destroy = ndk_uv_connector_destroy },
	[NDK_UOBJ_LISTENER] = { .parent = NDK_UOBJ_ADAPTER,
				.nl_type = NDK_NL_OBJ_LISTENER,
				.open = ndk_uv_listener_open,
				.destroy = ndk_uv_listener_destroy },
	[NDK_UOBJ_QP] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_QP,
			  .destroy = ndk_uv_qp_destroy },
	[NDK_UOBJ_MW] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_MW,
			  .open = ndk_uv_mw_open,
			  .destroy = ndk_uv_mw_destroy },
	[NDK_UOBJ_MR] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_MR,
			  .open = ndk_uv_mr_open,
			  .destroy = ndk_uobj_mr_destroy },
	[NDK_UOBJ_MEM] = { .parent = NDK_UOBJ_PD, .nl_type = NDK_NL_OBJ_MEM,
			   .wsp = true, .destroy = ndk_uobj_mem_destroy },
	[NDK_UOBJ_CQ] = { .parent = NDK_UOBJ_ADAPTER, .nl_type = NDK_NL_OBJ_CQ,
			  .open = ndk_uv_cq_open,
			  .published = ndk_uv_cq_published,
			  .destroy = ndk_uv_cq_destroy,
			  .core = ndk_uobj_cq_core },
	[NDK_UOBJ_PD] = { .parent = NDK_UOBJ_ADAPTER, .nl_type = NDK_NL_OBJ_PD,
			  .destroy = ndk_uobj_pd_destroy,
			  .core = ndk_uobj_pd_core },
};

/*
 * Remove @u, not an adapter (ndk_uobj_adapter_detach()), from the table
 * and release its object.  It has no children; a registration has no
 * users left but the teardowns of closed windows (ndk_umr_deregister()
 * succeeded, or it waits for those at the file's release).
 */
void ndk_uobj_destroy(struct ndk_file *nf, struct ndk_uobj *u)
{
	lockdep_assert_held(&nf->lock);
	ndk_uobj_unpublish(nf, u->handle);
	ndk_uobj_descs[u->type].destroy(u);
	atomic_dec(&ndk_uobj_count);
	ndk_uobj_free(u);
}

/* Does entry @u descend from an adapter of @dev (its device not yet gone)? */
static bool ndk_uobj_on(struct ndk_uobj *u, const struct ndk_device *dev)
{
	struct ndk_adapter *a = ndk_uobj_root(u)->adapter;

	return a && a->dev == dev;
}

/* How many entries lie between an entry of @type and its adapter, plus 1. */
static unsigned int ndk_uobj_depth(u8 type)
{
	unsigned int depth = 0;

	for (; type != NDK_UOBJ_ADAPTER; type = ndk_uobj_descs[type].parent)
		depth++;
	return depth;
}

/* One sweep of ndk_uobj_destroy_below(): one depth, CQs or all but CQs. */
static void ndk_uobj_destroy_level(struct ndk_file *nf,
				   const struct ndk_device *dev,
				   unsigned int depth, bool cqs)
{
	unsigned long index;
	struct ndk_uobj *u;

	xa_for_each(&nf->handles, index, u) {
		bool cq = u->type == NDK_UOBJ_CQ;

		if (ndk_uobj_depth(u->type) != depth || cq != cqs ||
		    (dev && !ndk_uobj_on(u, dev)))
			continue;
		ndk_uobj_destroy(nf, u);
	}
}

/*
 * Release every object below the file's adapters of @dev (all adapters if
 * NULL): the connection requests not taken (a listener drops its own as
 * it goes), then the entries deepest below their adapters first (the
 * descriptors' parent types), so children go before parents, whatever
 * their objects are still busy with (a MEM_REGISTER's MR being pinned
 * into: the kernel API defers the PD's close until it goes).  A
 * device's removal calls it once per file, for all of
 * the file's adapters of the device: one call per adapter would sweep
 * the whole table once per adapter, quadratic in what a user can open.
 * Any order of the rest is one a caller could have chosen with
 * HANDLE_CLOSE: what one object still uses of another (a connector its
 * QP, a window its MR's pages, a request its MR) holds a reference in the
 * kernel API, so nothing else is ordered.
 * The CQs go last, together (no entry has a CQ for parent): a CQ's
 * destroy fences the driver, and CQs whose QPs are all gone share one
 * fence (ndk_cq_quiesce()), where one CQ at a time would take one each.
 */
void ndk_uobj_destroy_below(struct ndk_file *nf, const struct ndk_device *dev)
{
	unsigned int depth = 0;
	u8 type;

	if (!dev)
		ndk_uevent_drop_requests(nf, NULL);
	for (type = 0; type < NDK_UOBJ_TYPES; type++)
		depth = max(depth, ndk_uobj_depth(type));
	for (; depth; depth--)
		ndk_uobj_destroy_level(nf, dev, depth, false);
	ndk_uobj_destroy_level(nf, dev, 1, true);
}

/*
 * Take adapter entry @u out of the table; ndk_uobj_adapter_close() ends
 * it without ndk_file.lock, since a removal callback may wait for the lock.
 */
void ndk_uobj_adapter_detach(struct ndk_file *nf, struct ndk_uobj *u)
{
	lockdep_assert_held(&nf->lock);
	ndk_uobj_unpublish(nf, u->handle);
	ndk_uevent_unqueue(&u->removed);
}

/* Close a detached adapter entry's adapter, if its device left any. */
void ndk_uobj_adapter_close(struct ndk_uobj *u)
{
	ndk_uobj_uncharge(u);	/* before the device can go */
	if (u->adapter)
		ndk_close_adapter(u->adapter);
	atomic_dec(&ndk_uobj_count);
	ndk_uobj_free(u);
}

/**
 * ndk_uobj_debugfs_init() - debugfs ndk/user_objects: live entries
 * @dir: the module's debugfs directory
 *
 * Context: module init.
 */
void ndk_uobj_debugfs_init(struct dentry *dir)
{
	debugfs_create_atomic_t("user_objects", 0444, dir, &ndk_uobj_count);
}
