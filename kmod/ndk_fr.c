// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: registrations consumers post on their own QPs: NdkFastRegister,
 * NdkBind and NdkInvalidate.
 *
 * NdkFastRegister is IB_WR_REG_MR of the MR's fast-register ib_mr over the
 * consumer's adapter page array.  Linux 6.1 has no kernel memory windows,
 * so a window is a fast-register ib_mr of its own (ndk_mw.c) and NdkBind
 * is IB_WR_REG_MR of it over the parent MR's pages of the window's range,
 * with the window's rights.  NdkInvalidate is IB_WR_LOCAL_INV of either.
 * Every registration rotates the ib_mr's key byte, and the new token is
 * known when the post returns.
 *
 * A failed local operation moves an RC QP to the error state (rxe does),
 * so nothing that would fail on the device is posted: each request is
 * checked, and struct ndk_fr tracks in posting order whether the ib_mr
 * is FREE, VALID or being invalidated, so that a fast-register of a
 * registered ib_mr or an invalidate of a free one is refused inline:
 *
 *   FREE --fast-register/bind posted--> VALID
 *   VALID --invalidate posted--> INVALIDATING
 *   INVALIDATING --its completion: success--> FREE (fenced: KILLING)
 *   INVALIDATING --its completion: failure--> VALID (nothing changed)
 *   VALID --fast-register/bind completion: failure or flushed--> KILLING
 *   KILLING --the ib_mr replaced (ndk_fr_kill_one())--> FREE
 *   VALID --a receive result with the peer's invalidation of the key--> FREE
 *
 * (A registration that fails while its invalidation is outstanding
 * leaves the kill to that invalidation's completion.)
 *
 * An invalidation proves the key dead only if it ran after the last run
 * of the registration, and the device does not say when either ran: a
 * registration may still wait in a DEFER chain, behind a fence or in the
 * device's queue; siw invalidates an index whatever its key and state
 * (siw_invalidate_stag()), and rxe runs a REG_MR again, after an
 * invalidation, when it retries the requests before it.  What orders them
 * is the registration's completion (after which the device runs it no
 * more) and the QP: an invalidation posted on the registration's QP, or
 * posted after its completion was handled, runs after it; a peer's
 * invalidation seen in a receive result of the registration's QP, which
 * completes both queues in one CQ, came after the registration's
 * completion if that was handled first.  Any other invalidation makes the
 * registration suspect: it moves to KILLING, and its ib_mr is replaced
 * once its completion has come.  Registrations are always posted
 * signalled, so that their completion comes first in the common case.
 *
 * Like every initiator request, an inline failure first posts the DEFER
 * chain (ndk_qp_refuse()).
 *
 * Fenced registrations: a window or fast-register MR over user memory (its
 * parent MR holds a umem) is killed, not freed, after every invalidation,
 * local or the peer's.  rxe (6.1) checks a key once per packet and copies
 * afterwards, reading the page list at copy time, and its invalidation
 * only marks the MR free; only a deregistration waits for a packet under
 * way.  Freed, the ib_mr would be mapped again over other pages, maybe a
 * read-only registration's, and the parent's pages unpinned, while such a
 * packet may still land.  The /dev/ndk path waits for the kill before the
 * next registration (ndk_fr_settle()).  A kernel consumer's own pages are
 * its own contract with the device, as for every kernel ULP.  siw (6.1)
 * deregisters without waiting (siw_dereg_mr()) and streams a read
 * response checked once from the page list: there the kill stops a new
 * mapping of the key, not a response under way (security.md, siw).
 *
 * A registration waits for FREE: a fast-register or bind while an
 * invalidation is outstanding is refused with STATUS_DEVICE_BUSY, because
 * ib_map_mr_sg() changes the ib_mr's page list when the request is posted,
 * not when the device runs it (rxe reads it at access time).
 *
 * A window's parent MR counts the window in bound_windows and is
 * referenced from the bind's post until the window's key is known dead
 * (FREE, or the window's close), so the MR's pages cannot be released
 * under a live window: Documentation/registration.md.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "ndk_mr.h"
#include "ndk_qp.h"
#include "ndk_stats.h"
#include "ndk_trace.h"

/* The remote bits of NdkFastRegister flags (0x30 includes local write). */
#define NDK_FR_REMOTE_FLAGS	(NDK_OP_FLAG_ALLOW_REMOTE_READ | \
				 (NDK_OP_FLAG_ALLOW_REMOTE_WRITE & \
				  ~NDK_OP_FLAG_ALLOW_LOCAL_WRITE))
#define NDK_FAST_REGISTER_FLAGS	(NDK_OP_FLAG_SILENT_SUCCESS | \
				 NDK_OP_FLAG_READ_FENCE | \
				 NDK_OP_FLAG_ALLOW_REMOTE_READ | \
				 NDK_OP_FLAG_ALLOW_LOCAL_WRITE | \
				 NDK_OP_FLAG_ALLOW_REMOTE_WRITE | \
				 NDK_OP_FLAG_RDMA_READ_SINK | NDK_OP_FLAG_DEFER)
#define NDK_BIND_FLAGS		(NDK_OP_FLAG_SILENT_SUCCESS | \
				 NDK_OP_FLAG_READ_FENCE | \
				 NDK_OP_FLAG_ALLOW_REMOTE_READ | \
				 NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER)
#define NDK_INVALIDATE_FLAGS	(NDK_OP_FLAG_SILENT_SUCCESS | \
				 NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER)

/**
 * ndk_fr_init() - set up the registration state of a new MR or MW
 * @fr:    the state, zeroed
 * @owner: the object it belongs to
 *
 * Context: any.
 */
void ndk_fr_init(struct ndk_fr *fr, struct ndk_obj *owner)
{
	spin_lock_init(&fr->lock);
	fr->owner = owner;
}

/* Deregister an ib_mr of @pd's registrations: its key dies with it. */
static void ndk_fr_dereg(struct ndk_pd *pd, struct ib_mr *ibmr)
{
	xa_erase_irq(&pd->frs, ibmr->rkey >> 8);
	ib_dereg_mr(ibmr);
}

/**
 * ndk_fr_attach() - give a FREE registration a new ib_mr
 * @fr:        the registration
 * @pd:        its PD
 * @slot:      where the owner keeps its ib_mr; the previous one is released
 * @ibmr:      the new fast-register MR of @pd, for @max_pages pages
 * @max_pages: its page limit
 * @remote:    whether registrations may grant remote rights
 *
 * Context: process context.
 * Return: 0; -EBUSY when a registration of the current ib_mr is in place
 * (@ibmr stays the caller's); -ENOMEM.
 */
int ndk_fr_attach(struct ndk_fr *fr, struct ndk_pd *pd, struct ib_mr **slot,
		  struct ib_mr *ibmr, u32 max_pages, bool remote)
{
	struct scatterlist *sg, *old_sg;
	struct ib_mr *old;
	u32 i;
	int ret;

	sg = kvmalloc_array(max_pages, sizeof(*sg), NDK_GFP_ARRAY);
	if (!sg)
		return -ENOMEM;
	sg_init_table(sg, max_pages);
	/*
	 * One entry per page, each a whole page but while ndk_fr_map() maps
	 * them: it sets the addresses, and the first and last lengths.
	 */
	for (i = 0; i < max_pages; i++)
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	ret = xa_insert_irq(&pd->frs, ibmr->rkey >> 8, fr,
			    GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_free_sg;

	spin_lock_irq(&fr->lock);
	if (fr->state != NDK_FR_FREE) {
		spin_unlock_irq(&fr->lock);
		ret = -EBUSY;
		goto err_erase;
	}
	old = *slot;
	old_sg = fr->sg;
	WRITE_ONCE(*slot, ibmr);
	/* The tokens the getters read: the new ib_mr's from now on. */
	ndk_tokens_publish(&fr->tokens, ibmr->lkey, ibmr->rkey);
	fr->sg = sg;
	fr->max_pages = max_pages;
	fr->remote = remote;
	spin_unlock_irq(&fr->lock);

	if (old)
		ndk_fr_dereg(pd, old);
	kvfree(old_sg);
	return 0;

err_erase:
	xa_erase_irq(&pd->frs, ibmr->rkey >> 8);
err_free_sg:
	kvfree(sg);
	return ret;
}

/**
 * ndk_fr_detach() - release a registration's ib_mr (its owner's teardown)
 * @fr:   the registration; no posted request references its owner
 * @pd:   its PD
 * @ibmr: its ib_mr, or NULL
 *
 * The key dies with the ib_mr; a window's parent is released after that.
 *
 * Context: process context.
 */
void ndk_fr_detach(struct ndk_fr *fr, struct ndk_pd *pd, struct ib_mr *ibmr)
{
	if (ibmr)
		ndk_fr_dereg(pd, ibmr);
	if (fr->parent)
		ndk_mr_window_gone(fr->parent);
	fr->parent = NULL;
	kvfree(fr->sg);
	fr->sg = NULL;
}

/* Nothing is registered any more; returns the parent to release. */
static struct ndk_mr *ndk_fr_free_locked(struct ndk_fr *fr)
{
	struct ndk_mr *parent = fr->parent;

	lockdep_assert_held(&fr->lock);
	fr->state = NDK_FR_FREE;
	fr->reg_pending = false;
	fr->suspect = false;
	fr->parent = NULL;
	return parent;
}

/* Where the owner of @fr (an MR or a window) keeps its ib_mr, and its PD. */
static struct ib_mr **ndk_fr_slot(struct ndk_fr *fr, struct ndk_pd **pd)
{
	struct ndk_mw *mw;
	struct ndk_mr *mr;

	if (fr->owner->hdr.object_type == NDK_OBJECT_TYPE_MW) {
		mw = container_of(fr, struct ndk_mw, fr);
		*pd = mw->pd;
		return &mw->ibmr;
	}
	mr = container_of(fr, struct ndk_mr, fr);
	*pd = mr->pd;
	return &mr->ibmr;
}

/**
 * ndk_fr_kill_one() - replace the ib_mr of a registration in KILLING
 * @fr: the registration, with a reference on its owner taken for the kill
 *
 * The old ib_mr's deregistration kills its key whatever the device did
 * with the flushed request; only then are the new tokens published and a
 * window's parent released, so a caller that sees the token move on
 * knows the old one is dead.
 * Without memory for a new ib_mr the owner is left without one: a
 * fast-register MR must be initialised again, a window's binds fail.
 * Drops the owner's reference, after which @fr may be gone.
 *
 * Context: process (ndk_fr_kill_work()).
 */
static void ndk_fr_kill_one(struct ndk_fr *fr)
{
	struct ib_mr *new, *old, **slot;
	struct ndk_mr *parent;
	struct ndk_pd *pd;

	slot = ndk_fr_slot(fr, &pd);
	new = ndk_alloc_fr_mr(pd, fr->max_pages);
	if (IS_ERR(new) || xa_insert_irq(&pd->frs, new->rkey >> 8, fr,
					 GFP_KERNEL_ACCOUNT)) {
		if (!IS_ERR(new))
			ib_dereg_mr(new);
		new = NULL;
	}
	spin_lock_irq(&fr->lock);
	old = *slot;
	WRITE_ONCE(*slot, new);
	spin_unlock_irq(&fr->lock);
	if (old)
		ndk_fr_dereg(pd, old);
	spin_lock_irq(&fr->lock);
	/* A token that moved on means the old key is dead. */
	if (new)
		ndk_tokens_publish(&fr->tokens, new->lkey, new->rkey);
	parent = ndk_fr_free_locked(fr);
	spin_unlock_irq(&fr->lock);
	if (parent)
		ndk_mr_window_gone(parent);
	ndk_obj_put(fr->owner);
}

/* Test hook, debugfs ndk/kill_delay_ms: each kill waits so long first. */
static u32 ndk_fr_kill_delay_ms;

/**
 * ndk_fr_kill_work() - kill the keys queued in a PD (&ndk_pd.kill_work)
 * @work: the PD's kill work
 *
 * Each PD kills its own registrations' keys, so a user who queues many
 * kills delays only the binds and deregistrations that wait on that PD
 * (ndk_fr_settle()), never another user's.  PDs' kills run side by side
 * on ndk_kill_wq (unbound, of their own, so that they hold no worker of
 * ndk_wq); a user would need hundreds of PDs, each with a long queue, to
 * keep its workers, and the device's MR indices bound the windows and
 * fast-register MRs of all of them.  The queued work holds a
 * reference on the PD (ndk_fr_kill()), dropped last: the PD may go with
 * it, here.
 *
 * Context: process (ndk_kill_wq).
 */
static void ndk_fr_kill_work(struct work_struct *work)
{
	struct ndk_pd *pd = container_of(work, struct ndk_pd, kill_work);
	u32 delay = READ_ONCE(ndk_fr_kill_delay_ms);
	struct llist_node *list;
	struct ndk_fr *fr, *next;

	/*
	 * In the order queued (llist_add() pushes on the front): the kill
	 * a settle waits for is never passed by ones queued after it, and
	 * a caller's last invalidation is killed last.
	 */
	list = llist_reverse_order(llist_del_all(&pd->kills));

	/* next is read first: once killed, @fr may be freed or queued again */
	llist_for_each_entry_safe(fr, next, list, kill_node) {
		if (unlikely(delay))
			msleep(min(delay, 1000U));
		ndk_fr_kill_one(fr);
	}
	ndk_obj_put(&pd->obj);
}

/**
 * ndk_fr_kills_init() - set up a new PD's kill queue
 * @pd: the PD
 *
 * Context: any.
 */
void ndk_fr_kills_init(struct ndk_pd *pd)
{
	init_llist_head(&pd->kills);
	INIT_WORK(&pd->kill_work, ndk_fr_kill_work);
}

/*
 * Start killing the key of @fr, in KILLING, with a reference on its owner
 * the caller took for the kill (so the PD, its parent, cannot go).  A
 * registration is queued once at most: only the kill leaves KILLING.  The
 * registrations whose kill is due are linked by their own kill_node: a
 * kill allocates nothing, so it cannot fail, and it is queued from the
 * CQ's context, whose task is nobody in particular.  Runs on ndk_kill_wq,
 * which module unload destroys (draining it) after every adapter is gone.
 */
static void ndk_fr_kill(struct ndk_fr *fr)
{
	struct ndk_pd *pd;

	ndk_fr_slot(fr, &pd);
	if (!llist_add(&fr->kill_node, &pd->kills))
		return;		/* the queued work takes it */
	/*
	 * The list was empty, so the work is idle or past its
	 * llist_del_all(), which it runs after its pending bit is cleared:
	 * this queues it, and the queued work holds the PD.
	 */
	ndk_obj_get(&pd->obj);
	queue_work(ndk_kill_wq, &pd->kill_work);
}

/*
 * The key of @fr may be live whatever an invalidation says: KILLING, and
 * true when the kill can start (ndk_fr_kill()); else the registration's
 * completion starts it, for its request may still use the ib_mr.
 */
static bool ndk_fr_suspect_locked(struct ndk_fr *fr)
{
	lockdep_assert_held(&fr->lock);
	fr->suspect = true;
	fr->state = NDK_FR_KILLING;
	return !fr->reg_pending;
}

/*
 * A fenced registration (file comment) maps user memory: its parent MR
 * holds a umem, which stays while the parent counts the registration.
 * Lock held.
 */
static bool ndk_fr_fenced(const struct ndk_fr *fr)
{
	lockdep_assert_held(&fr->lock);
	return fr->parent && ndk_umem_held(&fr->parent->umem);
}

/**
 * ndk_fr_done() - a fast-register, bind or invalidate request is done
 * @fr:     its registration
 * @type:   NDK_OPERATION_TYPE_FAST_REGISTER, _BIND or _INVALIDATE
 * @status: its NTSTATUS (STATUS_CANCELLED when flushed; neither that nor
 *          a failure says whether it ran)
 * @key:    the key it registered or invalidated
 *
 * Drops the request's reference on the owner.
 *
 * Context: any (the CQ's lock is held).
 */
void ndk_fr_done(struct ndk_fr *fr, u16 type, s32 status, u32 key)
{
	struct ndk_mr *parent = NULL;
	unsigned long flags;
	bool kill = false;

	if (status != STATUS_SUCCESS)
		ndk_stat_error(status);
	spin_lock_irqsave(&fr->lock, flags);
	if (type == NDK_OPERATION_TYPE_INVALIDATE) {
		if (fr->state != NDK_FR_INVALIDATING || key != fr->tokens.rkey)
			goto out_unlock;	/* an earlier key's */
		if (fr->suspect || (status == STATUS_SUCCESS &&
				    (fr->inval_untrusted || ndk_fr_fenced(fr))))
			kill = ndk_fr_suspect_locked(fr);
		else if (status == STATUS_SUCCESS)
			parent = ndk_fr_free_locked(fr);
		else
			fr->state = NDK_FR_VALID;
	} else if (fr->reg_pending && key == fr->tokens.rkey) {
		/* A registration that worked leaves the state as posted. */
		fr->reg_pending = false;
		if (fr->state == NDK_FR_KILLING)
			kill = true;	/* it waited for this completion */
		else if (status != STATUS_SUCCESS && fr->state == NDK_FR_VALID)
			kill = ndk_fr_suspect_locked(fr);
		else if (status != STATUS_SUCCESS)
			fr->suspect = true;	/* its invalidation's kills */
	}
out_unlock:
	spin_unlock_irqrestore(&fr->lock, flags);
	if (parent)
		ndk_mr_window_gone(parent);
	if (kill)
		ndk_fr_kill(fr);	/* the request's reference, now the work's */
	else
		ndk_obj_put(fr->owner);
}

/*
 * Test hook, debugfs ndk/distrust_peer_invalidations: that many of the
 * next peer invalidations that would be trusted are not (as when the
 * receive result comes before the registration's completion), so tests
 * reach the kill, and with kill_delay_ms a consumer's STATUS_DEVICE_BUSY,
 * at will.
 */
static atomic_t ndk_fr_distrust = ATOMIC_INIT(0);

/**
 * ndk_fr_debugfs_init() - the registrations' debugfs files
 * @dir: ndk.ko's debugfs directory
 *
 * Context: module init.
 */
void ndk_fr_debugfs_init(struct dentry *dir)
{
	debugfs_create_atomic_t("distrust_peer_invalidations", 0600, dir,
				&ndk_fr_distrust);
	debugfs_create_u32("kill_delay_ms", 0600, dir, &ndk_fr_kill_delay_ms);
}

/**
 * ndk_fr_remote_invalidated() - a receive reported the peer's invalidation
 * @qp:   the receiving QP
 * @rkey: the key the peer invalidated
 *
 * Trusted only in a receive result of the registration's own QP whose
 * two queues complete in one CQ, the registration's completion handled
 * already (file comment); else the registration is killed.
 *
 * Context: any (the CQ's lock is held).
 */
void ndk_fr_remote_invalidated(struct ndk_qp *qp, u32 rkey)
{
	struct ndk_pd *pd = qp->pd;
	struct ndk_mr *parent = NULL;
	unsigned long flags;
	struct ndk_fr *fr;
	bool kill = false;

	xa_lock_irqsave(&pd->frs, flags);
	fr = xa_load(&pd->frs, rkey >> 8);
	if (fr) {
		spin_lock(&fr->lock);
		if (fr->state == NDK_FR_VALID && fr->tokens.rkey == rkey) {
			if (!fr->reg_pending && !ndk_fr_fenced(fr) &&
			    fr->reg_qp == qp && qp->rcq == qp->scq &&
			    !atomic_add_unless(&ndk_fr_distrust, -1, 0))
				parent = ndk_fr_free_locked(fr);
			else
				kill = ndk_fr_suspect_locked(fr);
		}
		spin_unlock(&fr->lock);
		/* An owner in its teardown kills the key there. */
		kill = kill && refcount_inc_not_zero(&fr->owner->ref);
	}
	xa_unlock_irqrestore(&pd->frs, flags);
	if (parent)
		ndk_mr_window_gone(parent);
	if (kill)
		ndk_fr_kill(fr);
}

/**
 * ndk_fr_settle() - wait for the kill of a registration in KILLING
 * @fr: the registration of an MR or window the caller holds
 *
 * For the /dev/ndk path, where a fenced registration (ndk_fr_fenced()) is
 * killed after each invalidation: its next fast-register or bind waits
 * for the new ib_mr instead of failing with STATUS_DEVICE_BUSY.  A kill
 * that waits for its registration's completion is not queued yet: then
 * this returns at once, and the post is refused as before.
 *
 * Context: process context, may sleep.
 */
void ndk_fr_settle(struct ndk_fr *fr)
{
	struct ndk_pd *pd;

	if (READ_ONCE(fr->state) != NDK_FR_KILLING)
		return;
	ndk_fr_slot(fr, &pd);
	flush_work(&pd->kill_work);
}

/**
 * ndk_fr_settle_parent() - wait for the kills that still hold an MR
 * @mr: an MR the caller holds
 *
 * For the /dev/ndk path: a fenced window or fast-register MR over @mr
 * lets go of it only once its kill is done, after its invalidation's
 * completion was reported; MR_DEREGISTER waits for those kills, so user
 * space that invalidated every window gets no %-EBUSY for them.  The
 * kill is queued before the invalidation's result reaches the CQ.
 *
 * Context: process context, may sleep.
 */
void ndk_fr_settle_parent(struct ndk_mr *mr)
{
	/* Windows and fast-registers over @mr are of its PD. */
	if (READ_ONCE(mr->bound_windows))
		flush_work(&mr->pd->kill_work);
}

/**
 * ndk_fr_mr_lkey() - whether a local token is a fast-register MR's of a PD
 * @pd:   the PD
 * @lkey: a local token
 *
 * Found by the index of the MR's current ib_mr, which changes when a
 * key is killed (ndk_fr_kill_one()); whatever the MR's
 * state, the device checks the region itself.
 *
 * Context: any.
 * Return: true when @lkey is the current local token of a fast-register
 * MR (not a window) of @pd.
 */
bool ndk_fr_mr_lkey(struct ndk_pd *pd, u32 lkey)
{
	unsigned long flags;
	struct ndk_fr *fr;
	bool ret = false;

	xa_lock_irqsave(&pd->frs, flags);
	fr = xa_load(&pd->frs, lkey >> 8);
	/* The xarray's lock keeps @fr; its tokens are read as the getters do. */
	if (fr && fr->owner->hdr.object_type == NDK_OBJECT_TYPE_MR)
		ret = ndk_tokens_read(&fr->tokens).lkey == lkey;
	xa_unlock_irqrestore(&pd->frs, flags);
	return ret;
}

/*
 * FREE -> VALID for a fast-register or bind of the ib_mr in @slot (NULL:
 * the MR was never initialised, the caller refuses); @parent: a window's
 * MR.  In the same lock section the ib_mr gets its next key, which the
 * getters, the invalidation and a peer's invalidation read from @fr: the
 * key changes only while VALID, where the initialisation cannot change
 * the ib_mr any more (ndk_fr_attach()).  A request that is not posted
 * after all leaves the key spent (ndk_fr_abort()), which is harmless.
 */
static s32 ndk_fr_begin(struct ndk_qp *qp, struct ndk_fr *fr,
			struct ndk_mr *parent, struct ib_mr *const *slot)
{
	s32 status = STATUS_SUCCESS;
	unsigned long flags;
	struct ib_mr *ibmr;

	spin_lock_irqsave(&fr->lock, flags);
	if (fr->state == NDK_FR_VALID) {
		status = STATUS_INVALID_DEVICE_REQUEST;
	} else if (fr->state != NDK_FR_FREE) {
		status = STATUS_DEVICE_BUSY;	/* INVALIDATING or KILLING */
	} else {
		fr->state = NDK_FR_VALID;
		fr->reg_pending = true;
		fr->suspect = false;
		fr->reg_qp = qp;
		fr->parent = parent;
		ibmr = *slot;
		if (ibmr) {
			ib_update_fast_reg_key(ibmr, ib_inc_rkey(ibmr->rkey));
			ndk_tokens_publish(&fr->tokens, ibmr->lkey,
					   ibmr->rkey);
		}
	}
	spin_unlock_irqrestore(&fr->lock, flags);
	return status;
}

/* Undo ndk_fr_begin() for a request that was not posted. */
static void ndk_fr_abort(struct ndk_fr *fr)
{
	struct ndk_mr *parent;
	unsigned long flags;

	spin_lock_irqsave(&fr->lock, flags);
	parent = ndk_fr_free_locked(fr);
	spin_unlock_irqrestore(&fr->lock, flags);
	if (parent)
		ndk_mr_window_gone(parent);
}

/**
 * struct ndk_fr_pages - the pages a fast-register or bind maps
 * @array: a consumer's adapter page array (NdkFastRegister), or NULL
 * @sgt:   without @array: an MR's DMA-mapped pages (ndk_fr_src_pages())
 * @first: @sgt: the index of the first page, in PAGE_SIZE pages
 * @n:     pages to map
 * @fbo:   offset of the region's first byte in the first page
 */
struct ndk_fr_pages {
	const u64 *array;
	struct sg_table *sgt;
	u32 first;
	u32 n;
	u32 fbo;
};

/**
 * ndk_fr_src_pages() - the pages of a registered MR under a range
 * @src:     the MR, counted by ndk_mr_window_bind() for the range (so it
 *           stays registered)
 * @address: the range's first byte, inside @src's region
 * @length:  its bytes, > 0
 * @p:       receives the page source
 *
 * The one place binds and fast-registers over an MR read its pages: from
 * &ndk_mr.sgt, the registration's DMA-mapped scatter table, at the page
 * of @address (no copy, no allocation).
 *
 * Context: any.
 * Return: STATUS_SUCCESS; STATUS_INVALID_DEVICE_REQUEST when the
 * registration has no DMA-mapped pages (&ndk_mr.sgt NULL).
 */
static s32 ndk_fr_src_pages(struct ndk_mr *src, u64 address, u64 length,
			    struct ndk_fr_pages *p)
{
	u64 off = address - src->base_va + (src->base_va & ~PAGE_MASK);

	p->array = NULL;
	p->sgt = READ_ONCE(src->sgt);
	if (!p->sgt)
		return STATUS_INVALID_DEVICE_REQUEST;
	p->first = off >> PAGE_SHIFT;
	p->n = ((off + length - 1) >> PAGE_SHIFT) - p->first + 1;
	p->fbo = off & ~PAGE_MASK;
	return STATUS_SUCCESS;
}

/*
 * Set the addresses of the first @used entries of @fr's flat page table
 * from @p (a consumer's array was checked page aligned before the MR's
 * state was taken, ndk_fast_register_post()): 0, or -EINVAL when an MR's
 * table holds fewer pages.
 */
static int ndk_fr_load(struct ndk_fr *fr, const struct ndk_fr_pages *p,
		       u32 used)
{
	struct scatterlist *sg = fr->sg, *run;
	u64 skip = p->first, pages, addr;
	u32 i = 0, k;

	if (p->array) {
		for (; i < used; i++)
			sg_dma_address(&sg[i]) = p->array[i];
		return 0;
	}
	/*
	 * The pages of each DMA run, as for_each_sg_dma_page() counts them,
	 * without its call per page.  Only the table's first run starts off
	 * a page: mask it.
	 */
	for_each_sg(p->sgt->sgl, run, p->sgt->nents, k) {
		pages = PAGE_ALIGN(run->offset + sg_dma_len(run)) >> PAGE_SHIFT;
		if (skip >= pages) {
			skip -= pages;
			continue;
		}
		addr = sg_dma_address(run) + (skip << PAGE_SHIFT);
		for (; skip < pages && i < used; skip++, addr += PAGE_SIZE)
			sg_dma_address(&sg[i++]) = addr & PAGE_MASK;
		if (i == used)
			return 0;
		skip = 0;
	}
	return -EINVAL;
}

/*
 * Load the pages of @p into @ibmr as the region [@iova, @iova + @length),
 * which starts @p->fbo bytes into the first page.  The caller moved @fr
 * to VALID and gave @ibmr its new key (ndk_fr_begin()).
 */
static int ndk_fr_map(struct ndk_fr *fr, struct ib_mr *ibmr,
		      const struct ndk_fr_pages *p, u64 iova, u64 length)
{
	u32 used = DIV_ROUND_UP((u64)p->fbo + length, PAGE_SIZE);
	struct scatterlist *sg = fr->sg;
	int n;

	if (used > p->n || ndk_fr_load(fr, p, used))
		return -EINVAL;
	/*
	 * The entries carry the region's exact bytes (the first from the
	 * FBO, the last to the region's end) and no sg_offset is passed: siw
	 * 6.1 ignores sg_offset in its page list (siw_map_mr_sg()) and keeps
	 * the length ib_map_mr_sg() computed, so an FBO or a length short of
	 * the last page would shift or widen the region there.  Drivers that
	 * use ib_sg_to_pages() (rxe, mlx5) see the same region either way.
	 * Whole pages less the FBO and less the last page's tail are
	 * @length; with one page both come off the one entry.  The driver
	 * copies the pages, so both are whole pages again afterwards.
	 */
	sg_dma_address(&sg[0]) += p->fbo;
	sg_dma_len(&sg[0]) -= p->fbo;
	sg_dma_len(&sg[used - 1]) -= (u64)used * PAGE_SIZE - p->fbo - length;
	n = ib_map_mr_sg(ibmr, sg, used, NULL, PAGE_SIZE);
	sg_dma_len(&sg[0]) = PAGE_SIZE;
	sg_dma_len(&sg[used - 1]) = PAGE_SIZE;
	if (n != used)
		return -EINVAL;
	/* The region's address space is the consumer's (an index). */
	ibmr->iova = iova;
	ibmr->length = length;
	return 0;
}

/* Post @req for @fr; the request references @fr's owner until done. */
static s32 ndk_fr_post(struct ndk_qp *qp, struct ndk_fr *fr,
		       struct ndk_sreq *req)
{
	s32 status;

	req->fr = fr;
	ndk_obj_get(fr->owner);
	status = ndk_qp_post(qp, req);
	if (status)
		ndk_obj_put(fr->owner);
	return status;
}

/*
 * NdkFastRegister flags to IB access flags through their NdkRegisterMr
 * equivalents (one translation); -EINVAL for invalid ones.
 */
static __always_inline int ndk_fr_access(struct ib_device *ibdev, u32 flags)
{
	u32 mr_flags = 0;

	if (flags & ~NDK_FAST_REGISTER_FLAGS)
		return -EINVAL;
	if (flags & NDK_OP_FLAG_ALLOW_LOCAL_WRITE)
		mr_flags |= NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
	if (flags & NDK_OP_FLAG_ALLOW_REMOTE_READ)
		mr_flags |= NDK_MR_FLAG_ALLOW_REMOTE_READ;
	/* 0x20 without 0x10 becomes 0x4 without 0x1: refused there too. */
	if (flags & NDK_FR_REMOTE_FLAGS & ~NDK_OP_FLAG_ALLOW_REMOTE_READ)
		mr_flags |= NDK_MR_REMOTE_WRITE_BIT;
	if (flags & NDK_OP_FLAG_RDMA_READ_SINK)
		mr_flags |= NDK_MR_FLAG_RDMA_READ_SINK;
	return ndk_mr_access(ibdev, mr_flags);
}

/*
 * The part of a fast-register common to a consumer's page array and to a
 * source MR's pages: @parent (or NULL) is already counted by
 * ndk_mr_window_bind() and is released here on failure.
 */
static s32 ndk_fr_register(struct ndk_qp *qp, void *request_context,
			   struct ndk_mr *mr, struct ndk_mr *parent,
			   const struct ndk_fr_pages *pages, u64 base,
			   u64 length, u32 flags)
{
	struct ndk_sreq req = {
		.request_context = request_context,
		.flags = flags,
		.allowed = NDK_FAST_REGISTER_FLAGS,
		.type = NDK_OPERATION_TYPE_FAST_REGISTER,
		.opcode = IB_WR_REG_MR,
	};
	struct ndk_fr *fr = &mr->fr;
	s32 status;

	req.access = ndk_fr_access(ndk_ibdev(&qp->obj), flags);
	if (req.access < 0 || !mr->fast_register || mr->pd != qp->pd)
		status = STATUS_INVALID_PARAMETER;
	else
		status = ndk_fr_begin(qp, fr, parent, &mr->ibmr);
	if (status) {
		if (parent)
			ndk_mr_window_gone(parent);
		return ndk_qp_refuse(qp, status);
	}
	/* VALID: the initialisation cannot change under us any more. */
	if (!mr->ibmr || pages->n > fr->max_pages)
		status = STATUS_INVALID_PARAMETER;
	/* The rights granted: a read sink on iWARP is a remote write. */
	else if ((req.access & (IB_ACCESS_REMOTE_READ |
				IB_ACCESS_REMOTE_WRITE)) && !fr->remote)
		status = STATUS_ACCESS_VIOLATION;
	else if (ndk_fr_map(fr, mr->ibmr, pages, base, length))
		status = STATUS_INVALID_PARAMETER;
	if (!status) {
		req.ibmr = mr->ibmr;
		req.key = mr->ibmr->rkey;
		status = ndk_fr_post(qp, fr, &req);
	}
	if (status)
		ndk_fr_abort(fr);
	return ndk_qp_refuse(qp, status);
}

/*
 * Count and trace a fast-register, bind or invalidate request as it
 * returns to the consumer; @status is what it returns.  Inline: @type is
 * a constant at every call.
 */
static __always_inline s32 ndk_fr_traced(u16 type, struct ndk_qp *qp,
					 const void *obj, u64 address,
					 u64 length, u32 flags, s32 status)
{
	if (status != STATUS_SUCCESS)
		ndk_stat_error(status);
	switch (type) {
	case NDK_OPERATION_TYPE_FAST_REGISTER:
		if (status == STATUS_SUCCESS)
			ndk_stat_request(fast_registers);
		trace_ndk_fast_register(qp, obj, address, length, flags,
					status);
		break;
	case NDK_OPERATION_TYPE_BIND:
		if (status == STATUS_SUCCESS)
			ndk_stat_request(binds);
		trace_ndk_bind(qp, obj, address, length, flags, status);
		break;
	default:
		if (status == STATUS_SUCCESS)
			ndk_stat_request(invalidates);
		trace_ndk_invalidate(qp, obj, address, length, flags, status);
		break;
	}
	return status;
}

/* ndk_fast_register() without its accounting and tracing. */
static s32 ndk_fast_register_post(struct ndk_qp *qp, void *request_context,
				  struct ndk_mr *mr, u32 adapter_page_count,
				  const u64 *adapter_page_array, u32 fbo,
				  size_t length, void *base_virtual_address,
				  u32 flags)
{
	u64 base = (uintptr_t)base_virtual_address, end, bits = 0;
	struct ndk_fr_pages pages = {
		.array = adapter_page_array,
		.n = adapter_page_count,
		.fbo = fbo,
	};
	u32 i;

	if (!adapter_page_count || !adapter_page_array || fbo >= PAGE_SIZE ||
	    !length ||
	    length > ((u64)adapter_page_count << PAGE_SHIFT) - fbo ||
	    (base & ~PAGE_MASK) != fbo ||
	    check_add_overflow(base, (u64)length, &end))
		return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);
	/*
	 * Every address page aligned, before the MR's state is taken: bad
	 * input spends no key.  One test of all of them, no branch.
	 */
	for (i = 0; i < adapter_page_count; i++)
		bits |= adapter_page_array[i];
	if (bits & ~PAGE_MASK)
		return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);
	return ndk_fr_register(qp, request_context, mr, NULL, &pages, base,
			       length, flags);
}

/**
 * ndk_fast_register() - NdkFastRegister
 * @qp:                   the QP, connected, of the MR's PD
 * @request_context:      reported in the request's result
 * @mr:                   an MR created with FastRegister = TRUE and
 *                        initialised, not registered
 * @adapter_page_count:   pages in @adapter_page_array, at most the
 *                        AdapterPageCount of the initialisation
 * @adapter_page_array:   adapter logical addresses (ndk_build_lam()), each
 *                        page aligned
 * @fbo:                  offset of the region's first byte in the first page
 * @length:               bytes, at most @adapter_page_count pages less @fbo
 * @base_virtual_address: the region's address (an index, never
 *                        dereferenced); its offset in a page must be @fbo
 * @flags:                NDK_OP_FLAG_SILENT_SUCCESS, _READ_FENCE,
 *                        _ALLOW_REMOTE_READ, _ALLOW_LOCAL_WRITE,
 *                        _ALLOW_REMOTE_WRITE, _RDMA_READ_SINK, _DEFER
 *
 * The MR's new tokens can be read when the call returns.
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: STATUS_SUCCESS (a result of type NDK_OPERATION_TYPE_FAST_REGISTER
 * follows unless silent and successful), or with no result:
 * STATUS_INVALID_PARAMETER, STATUS_ACCESS_VIOLATION (remote rights on an
 * MR initialised without RemoteAccess), STATUS_INVALID_DEVICE_REQUEST
 * (registered already), STATUS_DEVICE_BUSY (its invalidation has not
 * completed), STATUS_DEVICE_REMOVED, STATUS_CONNECTION_INVALID,
 * STATUS_INSUFFICIENT_RESOURCES (queue full).
 */
s32 ndk_fast_register(struct ndk_qp *qp, void *request_context,
		      struct ndk_mr *mr, u32 adapter_page_count,
		      const u64 *adapter_page_array, u32 fbo, size_t length,
		      void *base_virtual_address, u32 flags)
{
	s32 status;

	status = ndk_fast_register_post(qp, request_context, mr,
					adapter_page_count, adapter_page_array,
					fbo, length, base_virtual_address,
					flags);
	return ndk_fr_traced(NDK_OPERATION_TYPE_FAST_REGISTER, qp, mr,
			     (uintptr_t)base_virtual_address, length, flags,
			     status);
}
EXPORT_SYMBOL_GPL(ndk_fast_register);

/* ndk_fast_register_mr() without its accounting and tracing. */
static s32 ndk_fast_register_mr_post(struct ndk_qp *qp,
				     void *request_context, struct ndk_mr *mr,
				     struct ndk_mr *src, u64 address,
				     u64 length, u64 base, u32 flags)
{
	int access = ndk_fr_access(ndk_ibdev(&qp->obj), flags);
	struct ndk_fr_pages pages;
	u64 end, off;
	s32 status;

	if (access < 0 || src->fast_register || src->pd != qp->pd || !length ||
	    ((base ^ address) & ~PAGE_MASK) ||
	    check_add_overflow(address, length, &end) ||
	    check_add_overflow(base, length, &off))
		return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);
	status = ndk_mr_window_bind(src, address, end, access);
	if (status)
		return ndk_qp_refuse(qp, status);
	status = ndk_fr_src_pages(src, address, length, &pages);
	if (status) {
		ndk_mr_window_gone(src);
		return ndk_qp_refuse(qp, status);
	}
	return ndk_fr_register(qp, request_context, mr, src, &pages, base,
			       length, flags);
}

/**
 * ndk_fast_register_mr() - NdkFastRegister over the pages of another MR
 * @qp:              the QP, connected, of both MRs' PD
 * @request_context: reported in the request's result
 * @mr:              a fast-register MR, initialised, not registered
 * @src:             an MR registered by ndk_register_mr() whose pages are
 *                   mapped; it counts the registration like a bound window
 *                   (deregister refused) until the MR's key is known dead
 * @address:         first byte, an address of @src's region
 * @length:          bytes, > 0, ending inside @src's region
 * @base:            the region's address for the peer; its offset in a
 *                   page must be @address's
 * @flags:           as for ndk_fast_register(); a write right (local
 *                   write, read sink, remote write) needs @src registered
 *                   with one, remote write needs @src registered with
 *                   local write (ndk_mr_window_bind())
 *
 * The /dev/ndk path: user space names pinned memory by its registration,
 * never by adapter addresses.
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: as ndk_fast_register(); STATUS_INVALID_DEVICE_REQUEST also when
 * @src is not registered, STATUS_ACCESS_VIOLATION when it cannot give the
 * write right asked for (its pages are not writable).
 */
s32 ndk_fast_register_mr(struct ndk_qp *qp, void *request_context,
			 struct ndk_mr *mr, struct ndk_mr *src, u64 address,
			 u64 length, u64 base, u32 flags)
{
	s32 status;

	status = ndk_fast_register_mr_post(qp, request_context, mr, src,
					   address, length, base, flags);
	return ndk_fr_traced(NDK_OPERATION_TYPE_FAST_REGISTER, qp, mr, base,
			     length, flags, status);
}

/* ndk_bind() without its accounting and tracing. */
static s32 ndk_bind_post(struct ndk_qp *qp, void *request_context,
			 struct ndk_mr *mr, struct ndk_mw *mw,
			 void *virtual_address, size_t length, u32 flags)
{
	u32 write = flags & NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
	u64 start = (uintptr_t)virtual_address, end;
	struct ndk_sreq req = {
		.request_context = request_context,
		.flags = flags,
		.allowed = NDK_BIND_FLAGS,
		.type = NDK_OPERATION_TYPE_BIND,
		.opcode = IB_WR_REG_MR,
	};
	struct ndk_fr_pages pages;
	s32 status;

	if ((flags & ~NDK_BIND_FLAGS) ||
	    (write && write != NDK_OP_FLAG_ALLOW_REMOTE_WRITE) ||
	    mr->fast_register || mr->pd != qp->pd || mw->pd != qp->pd ||
	    !start || !length || check_add_overflow(start, (u64)length, &end))
		return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);
	if (flags & NDK_OP_FLAG_ALLOW_REMOTE_READ)
		req.access |= IB_ACCESS_REMOTE_READ;
	if (write)
		req.access |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;

	status = ndk_mr_window_bind(mr, start, end, req.access);
	if (status)
		return ndk_qp_refuse(qp, status);
	/* The MR stays registered while a window is counted in it. */
	status = ndk_fr_src_pages(mr, start, length, &pages);
	if (!status && pages.n > mw->fr.max_pages)
		status = STATUS_INVALID_PARAMETER;
	if (status) {
		ndk_mr_window_gone(mr);
		return ndk_qp_refuse(qp, status);
	}
	status = ndk_fr_begin(qp, &mw->fr, mr, &mw->ibmr);
	if (status) {
		ndk_mr_window_gone(mr);
		return ndk_qp_refuse(qp, status);
	}
	if (!mw->ibmr) {	/* lost to a failed ndk_fr_kill_one() */
		status = STATUS_INSUFFICIENT_RESOURCES;
	} else if (ndk_fr_map(&mw->fr, mw->ibmr, &pages, start, length)) {
		status = STATUS_INVALID_PARAMETER;
	} else {
		req.ibmr = mw->ibmr;
		req.key = mw->ibmr->rkey;
		status = ndk_fr_post(qp, &mw->fr, &req);
	}
	if (status)
		ndk_fr_abort(&mw->fr);
	return ndk_qp_refuse(qp, status);
}

/**
 * ndk_bind() - NdkBind
 * @qp:              the QP, connected, of the MR's and window's PD
 * @request_context: reported in the request's result
 * @mr:              an MR registered by ndk_register_mr()
 * @mw:              the window, not bound
 * @virtual_address: start of the window, inside the MR (an index)
 * @length:          bytes; the window must end inside the MR
 * @flags:           NDK_OP_FLAG_SILENT_SUCCESS, _READ_FENCE,
 *                   _ALLOW_REMOTE_READ, _ALLOW_REMOTE_WRITE, _DEFER
 *
 * The window's rights are its own: remote read needs nothing of the MR,
 * remote write needs an MR registered with NDK_MR_FLAG_ALLOW_LOCAL_WRITE.
 * ndk_get_remote_token_from_mw() gives the window's token when the call
 * returns.  The MR cannot be deregistered while the window is bound.
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: STATUS_SUCCESS (a result of type NDK_OPERATION_TYPE_BIND follows
 * unless silent and successful), or with no result:
 * STATUS_INVALID_PARAMETER (flags, a fast-register MR, another PD, an
 * empty window, one not inside the MR or spanning more pages than
 * FRMRPageCount: a window of MaxWindowSize bytes always fits, a
 * page-aligned one of FRMRPageCount pages too),
 * STATUS_ACCESS_VIOLATION (remote write on an MR without local write),
 * STATUS_INVALID_DEVICE_REQUEST (MR not registered, window bound),
 * STATUS_DEVICE_BUSY (the window's invalidation has not completed),
 * STATUS_DEVICE_REMOVED, STATUS_CONNECTION_INVALID,
 * STATUS_INSUFFICIENT_RESOURCES (queue full).
 */
s32 ndk_bind(struct ndk_qp *qp, void *request_context, struct ndk_mr *mr,
	     struct ndk_mw *mw, void *virtual_address, size_t length,
	     u32 flags)
{
	s32 status;

	status = ndk_bind_post(qp, request_context, mr, mw, virtual_address,
			       length, flags);
	return ndk_fr_traced(NDK_OPERATION_TYPE_BIND, qp, mw,
			     (uintptr_t)virtual_address, length, flags,
			     status);
}
EXPORT_SYMBOL_GPL(ndk_bind);

/* ndk_invalidate() without its accounting and tracing. */
static s32 ndk_invalidate_post(struct ndk_qp *qp, void *request_context,
			       struct ndk_object_header *mr_or_mw, u32 flags)
{
	struct ndk_sreq req = {
		.request_context = request_context,
		.flags = flags,
		.allowed = NDK_INVALIDATE_FLAGS,
		.type = NDK_OPERATION_TYPE_INVALIDATE,
		.opcode = IB_WR_LOCAL_INV,
	};
	unsigned long irqflags;
	struct ndk_mr *mr;
	struct ndk_mw *mw;
	struct ndk_fr *fr;
	struct ndk_pd *pd;
	s32 status;

	if (!mr_or_mw || (flags & ~NDK_INVALIDATE_FLAGS))
		return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);
	switch (mr_or_mw->object_type) {
	case NDK_OBJECT_TYPE_MR:
		mr = container_of(mr_or_mw, struct ndk_mr, obj.hdr);
		if (!mr->fast_register)
			return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);
		fr = &mr->fr;
		pd = mr->pd;
		break;
	case NDK_OBJECT_TYPE_MW:
		mw = container_of(mr_or_mw, struct ndk_mw, obj.hdr);
		fr = &mw->fr;
		pd = mw->pd;
		break;
	default:
		return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);
	}
	if (pd != qp->pd)
		return ndk_qp_refuse(qp, STATUS_INVALID_PARAMETER);

	spin_lock_irqsave(&fr->lock, irqflags);
	status = fr->state == NDK_FR_VALID ? STATUS_SUCCESS :
					     STATUS_INVALID_DEVICE_REQUEST;
	if (!status) {
		fr->state = NDK_FR_INVALIDATING;
		/* Ordered after the registration's last run (file comment)? */
		fr->inval_untrusted = fr->reg_pending && fr->reg_qp != qp;
		req.key = fr->tokens.rkey;
	}
	spin_unlock_irqrestore(&fr->lock, irqflags);
	if (status)
		return ndk_qp_refuse(qp, status);

	status = ndk_fr_post(qp, fr, &req);
	if (status) {
		spin_lock_irqsave(&fr->lock, irqflags);
		if (fr->state == NDK_FR_INVALIDATING)
			fr->state = NDK_FR_VALID;
		spin_unlock_irqrestore(&fr->lock, irqflags);
	}
	return ndk_qp_refuse(qp, status);
}

/**
 * ndk_invalidate() - NdkInvalidate
 * @qp:              the QP, connected, of the MR's or window's PD
 * @request_context: reported in the request's result
 * @mr_or_mw:        a fast-registered MR or a bound window (its header)
 * @flags:           NDK_OP_FLAG_SILENT_SUCCESS, _READ_FENCE, _DEFER
 *
 * The MR or window can be registered again once the result is polled.
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: STATUS_SUCCESS (a result of type NDK_OPERATION_TYPE_INVALIDATE
 * follows unless silent and successful), or with no result:
 * STATUS_INVALID_PARAMETER (flags, an MR of ndk_register_mr(), another
 * object type, another PD), STATUS_INVALID_DEVICE_REQUEST (not registered
 * or bound, or invalidated already: on hardware a completion error, here
 * refused before it can break the QP), STATUS_DEVICE_REMOVED,
 * STATUS_CONNECTION_INVALID, STATUS_INSUFFICIENT_RESOURCES (queue full).
 */
s32 ndk_invalidate(struct ndk_qp *qp, void *request_context,
		   struct ndk_object_header *mr_or_mw, u32 flags)
{
	s32 status;

	status = ndk_invalidate_post(qp, request_context, mr_or_mw, flags);
	return ndk_fr_traced(NDK_OPERATION_TYPE_INVALIDATE, qp, mr_or_mw, 0,
			     0, flags, status);
}
EXPORT_SYMBOL_GPL(ndk_invalidate);
