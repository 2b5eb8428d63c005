/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: memory regions and windows, internal interface.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_MR_H
#define NDK_MR_H

#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/semaphore.h>
#include "ndk_core.h"
#include "ndk_reg_class.h"

struct ndk_reg_iw;

/* The bit that NDK_MR_FLAG_ALLOW_REMOTE_WRITE (0x5) adds to local write. */
#define NDK_MR_REMOTE_WRITE_BIT	0x4

/* Send queue depth of the internal registration QP. */
#define NDK_REG_SQ_DEPTH	128

struct ndk_charge;

/**
 * struct ndk_reg - a PD's internal registration path
 * @cq:       its completion queue, polled by ib_core in softirq context
 * @qp:       an RC QP connected to itself; it only ever carries local
 *            operations (IB_WR_REG_MR, IB_WR_LOCAL_INV), never traffic
 * @credits:  free send queue slots; a poster sleeps when none is left.
 *            A poster holds one from its post to its completion, and a
 *            rebuild of @qp (ndk_reg_iw_reconnect()) takes them all, so
 *            posts need no lock of their own (ib_post_send() may run
 *            concurrently on one QP)
 * @lock:     protects @pool and @pooled; process context only
 * @pool:     idle fast-register MRs per size class, keys already retired
 * @pooled:   MRs in each @pool list
 * @broken:   a local operation failed (the QP went to error): rebuild
 * @max_pages: the device's fast-register page list limit
 * @iw:       iWARP: the loopback connection @qp is one end of
 *            (ndk_reg_iw.c), NULL on other transports
 *
 * Pool classes: ndk_reg_class.h (entries of the page list, not pages).
 */
struct ndk_reg {
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct semaphore credits;
	struct mutex lock; /* protects pool, pooled */
	struct list_head pool[NDK_REG_CLASSES];
	u32 pooled[NDK_REG_CLASSES];
	bool broken;
	u32 max_pages;
	struct ndk_reg_iw *iw;
};

/**
 * struct ndk_reg_mr - a pooled fast-register MR and its scatter table
 * @entry:   in ndk_reg.pool[@class] while idle
 * @ibmr:    the MR, of ndk_reg_class_entries(@class) page-list entries
 * @sgt:     the registration's pages, coalesced into physically contiguous
 *           runs; while registered @sgt.nents is the DMA-mapped count
 *           (iterate over @sgt.nents only: for_each_sgtable_dma_sg(),
 *           or its runs as ndk_fr.c's ndk_fr_load() does)
 * @sg_cap:  entries allocated in @sgt (its orig_nents, kept for the free)
 * @used:    entries of @sgt filled (and given to dma_map_sg)
 * @last:    the entry marked as the end, unmarked before a refill
 * @class:   pool class
 * @keys:    key bytes used (REG_MRs posted); at NDK_REG_MR_KEYS the MR is
 *           freed instead of pooled, so no key comes back
 */
struct ndk_reg_mr {
	struct list_head entry;
	struct ib_mr *ibmr;
	struct sg_table sgt;
	u32 sg_cap;
	u32 used;
	struct scatterlist *last;
	int class;
	u32 keys;
};

/* Distinct keys of one ib_mr: ib_inc_rkey() turns its low byte. */
#define NDK_REG_MR_KEYS	256

/**
 * union ndk_tokens - the local and remote token of an MR or a window as
 * one word
 * @lkey: the local token
 * @rkey: the remote token
 * @word: both
 *
 * Changed only by ndk_tokens_publish(), under the owner's lock, so that
 * the token getters read a pair with one load and no lock: the old pair
 * or the new one, never half of each (a 64-bit kernel's single load;
 * smp_load_acquire() of @word does not build on a 32-bit one).
 */
union ndk_tokens {
	struct {
		u32 lkey;
		u32 rkey;
	};
	u64 word;
};

/* Publish new tokens (under the owner's lock). */
static inline void ndk_tokens_publish(union ndk_tokens *t, u32 lkey,
				      u32 rkey)
{
	union ndk_tokens v = { .lkey = lkey, .rkey = rkey };

	/*
	 * Pairs with ndk_tokens_read(): a getter that sees the new tokens
	 * also sees what the writer did before, such as the deregistration
	 * that killed the old key (ndk_fr_kill_one()).
	 */
	smp_store_release(&t->word, v.word);
}

/* The tokens last published, without the owner's lock. */
static inline union ndk_tokens ndk_tokens_read(const union ndk_tokens *t)
{
	/* Pairs with ndk_tokens_publish(). */
	return (union ndk_tokens){ .word = smp_load_acquire(&t->word) };
}

/* State of a registration posted on consumer QPs, in posting order. */
enum ndk_fr_state {
	NDK_FR_FREE,		/* nothing registered (or invalidated) */
	NDK_FR_VALID,		/* a fast-register or bind was posted */
	NDK_FR_INVALIDATING,	/* an invalidate was posted, not completed */
	NDK_FR_KILLING,		/* flushed, may have run: key being killed */
};

/**
 * struct ndk_fr - an ib_mr that consumers register with work requests on
 * their own QPs: a fast-register MR (NdkFastRegister) or a window's
 * emulation (NdkBind); ndk_fr.c
 * @lock:       protects every field below but @sg
 * @state:      enum ndk_fr_state
 * @reg_pending: the last fast-register or bind is posted and its
 *              completion has not been handled yet
 * @suspect:    the key may be live whatever an invalidation says (the
 *              registration failed, or an invalidation came that cannot
 *              be ordered after it): it is killed, never freed
 * @inval_untrusted: the outstanding invalidation was posted on another QP
 *              while @reg_pending
 * @tokens:     rkey: the key of the registration posted last, or the
 *              ib_mr's key when attached; lkey: the local token with it
 * @parent:     a window: the MR it is bound in (counted in its
 *              bound_windows, referenced) until the window's key is known
 *              dead
 * @sg:         page list given to ib_map_mr_sg(); owned by the poster that
 *              moved @state from FREE to VALID
 * @max_pages:  entries in @sg: the most pages one registration maps
 *              (a fast-register MR: its AdapterPageCount)
 * @remote:     remote rights may be granted (a fast-register MR: its
 *              RemoteAccess; windows: always)
 * @reg_qp:     the QP the last registration was posted on (compared,
 *              never dereferenced)
 * @owner:      the MR or MW object (a posted request references it)
 * @kill_node:  in the list of registrations in KILLING whose kill is due
 *              (ndk_fr.c), at most once: only the kill leaves KILLING
 *
 * @sg, @max_pages and @remote change only while FREE (ndk_fr_attach()).
 */
struct ndk_fr {
	spinlock_t lock; /* see above */
	u8 state;
	u8 reg_pending:1;
	u8 suspect:1;
	u8 inval_untrusted:1;
	bool remote;
	union ndk_tokens tokens;
	struct ndk_mr *parent;
	struct scatterlist *sg;
	u32 max_pages;
	const struct ndk_qp *reg_qp;
	struct ndk_obj *owner;
	struct llist_node kill_node;
};

enum ndk_mr_state {
	NDK_MR_IDLE,		/* created, nothing registered */
	NDK_MR_BUSY,		/* a register or deregister is in flight */
	NDK_MR_REGISTERED,	/* NdkRegisterMr done / fast-register MR ready */
};

/**
 * struct ndk_mr - NDK_MR
 * @obj:           object base (parent: the PD)
 * @pd:            the PD
 * @state:         enum ndk_mr_state, changed under @lock
 * @lock:          protects @state and @bound_windows, and serialises
 *                 the writers of @tokens
 * @ibmr:          the fast-register MR carrying the registration
 * @fast_register: created with FastRegister = TRUE: only the members of
 *                 that kind (@fr ... @init_done) are in use, else only
 *                 the others of the union (@rmr ... @done)
 * @writable:      the registration has a write right, so its pages are
 *                 writable: fast-registers and binds over it may write
 * @user:          registered by the driver from user memory
 *                 (ndk_register_user_mr()): @ibmr is the driver's MR, no
 *                 @rmr; @sgt is set once ndk_mr_attach_pages() gave it a
 *                 page list
 * @requests:      asynchronous requests queued or running: a blocking
 *                 close waits for them (ndk_close_mr())
 * @umem:          user memory the registration maps (ndk_mr_own_umem()):
 *                 pinned by ndk.ko, or by the driver (@user); unpinned
 *                 when the registration is released, as rxe's MR owns
 *                 its ib_umem.  Not held for kernel MDLs, nor ever for a
 *                 fast-register MR (user paths read it for any MR)
 * @fr:            fast-register: the registration state of @ibmr
 * @init_lock:     fast-register: serialises initialisations of the MR
 * @init_calls:    fast-register: initialisations asked for so far (their
 *                 order)
 * @init_done:     fast-register: the order number of the initialisation
 *                 in place; an earlier one that runs after it has nothing
 *                 left to do
 * @rmr:           NdkRegisterMr: the pooled MR (@ibmr and its table)
 * @sgt:           the registration's DMA-mapped pages, NULL when it has
 *                 none (binds and fast-registers over the MR read them
 *                 only through ndk_fr.c's ndk_fr_src_pages(), which
 *                 refuses a NULL one); set while REGISTERED
 * @driver_charge: @user: a charged stand-in for what the driver allocated
 *                 uncharged for the registration (ndk_mr_user_charge()),
 *                 freed with it
 * @base_va:       the region's base virtual address (its index space)
 * @length:        the region's length
 * @flags:         NDK_MR_FLAG_* of the registration
 * @tokens:        the tokens while registered, else 0 (published under
 *                 @lock: token getters never read @ibmr)
 * @bound_windows: windows bound inside this MR (deregister is refused);
 *                 each holds a reference, so the MR's teardown, and with
 *                 it the release of @umem, waits for the last one
 * @cqe:           completion of the internal REG_MR / LOCAL_INV
 * @wc_status:     status of that completion
 * @done:          signalled by @cqe for blocking callers
 *
 * An MR is of one kind for its life, so the members only one kind uses
 * share their memory: 312 bytes instead of 416 for every MR, user
 * registrations included.
 */
struct ndk_mr {
	struct ndk_obj obj;
	struct ndk_pd *pd;
	enum ndk_mr_state state;
	spinlock_t lock; /* protects state, bound_windows, lkey, rkey */
	struct ib_mr *ibmr;
	bool fast_register;
	bool writable;
	bool user;
	atomic_t requests;
	struct ndk_umem umem;
	union {
		struct {
			struct ndk_fr fr;
			struct mutex init_lock; /* serialises initialisations */
			atomic64_t init_calls;
			u64 init_done;
		};
		struct {
			struct ndk_reg_mr *rmr;
			struct sg_table *sgt;
			struct ndk_charge *driver_charge;
			u64 base_va;
			u64 length;
			u32 flags;
			u32 bound_windows;
			union ndk_tokens tokens;
			struct ib_cqe cqe;
			enum ib_wc_status wc_status;
			struct completion done;
		};
	};
};

/**
 * struct ndk_mw - NDK_MW, emulated with one fast-register MR
 * @obj:   object base (parent: the PD)
 * @pd:    the PD
 * @ibmr:  the MR that carries the window's registration when bound
 * @fr:    the registration state of @ibmr; @fr.parent is the MR bound in
 */
struct ndk_mw {
	struct ndk_obj obj;
	struct ndk_pd *pd;
	struct ib_mr *ibmr;
	struct ndk_fr fr;
};

struct ndk_reg *ndk_reg_get(struct ndk_pd *pd);
void ndk_reg_take_credits(struct ndk_reg *reg);
void ndk_reg_give_credits(struct ndk_reg *reg);
int ndk_reg_post(struct ndk_reg *reg, struct ib_send_wr *wr,
		 struct completion *done);
void ndk_reg_wr_done(struct ndk_reg *reg, enum ib_wc_status status);
void ndk_reg_set_broken(struct ndk_reg *reg, const char *cause, int code);
struct ndk_reg_mr *ndk_reg_mr_get(struct ndk_pd *pd, struct ndk_reg *reg,
				  u32 entries);
void ndk_reg_mr_put(struct ndk_reg *reg, struct ndk_reg_mr *rmr);
void ndk_reg_mr_free(struct ndk_reg_mr *rmr);
int ndk_charge_cache_init(void);
void ndk_charge_cache_exit(void);
void ndk_reg_destroy(struct ndk_pd *pd);
struct ib_mr *ndk_alloc_fr_mr(struct ndk_pd *pd, u32 pages);
bool ndk_fault_fail_mr_alloc(void);
struct dentry;
void ndk_reg_debugfs_init(struct dentry *dir);

/* ndk_reg_iw.c */
int ndk_reg_iw_connect(struct ndk_reg *reg, struct ndk_pd *pd);
int ndk_reg_iw_reconnect(struct ndk_reg *reg, struct ndk_pd *pd);
void ndk_reg_iw_destroy(struct ndk_reg *reg);

/* ndk_fr.c */
void ndk_fr_init(struct ndk_fr *fr, struct ndk_obj *owner);
void ndk_fr_kills_init(struct ndk_pd *pd);
int ndk_fr_attach(struct ndk_fr *fr, struct ndk_pd *pd, struct ib_mr **slot,
		  struct ib_mr *ibmr, u32 max_pages, bool remote);
void ndk_fr_detach(struct ndk_fr *fr, struct ndk_pd *pd, struct ib_mr *ibmr);
void ndk_fr_done(struct ndk_fr *fr, u16 type, s32 status, u32 key);
void ndk_fr_remote_invalidated(struct ndk_qp *qp, u32 rkey);
void ndk_fr_settle(struct ndk_fr *fr);
void ndk_fr_settle_parent(struct ndk_mr *mr);
bool ndk_fr_mr_lkey(struct ndk_pd *pd, u32 lkey);
void ndk_fr_debugfs_init(struct dentry *dir);
s32 ndk_fast_register_mr(struct ndk_qp *qp, void *request_context,
			 struct ndk_mr *mr, struct ndk_mr *src, u64 address,
			 u64 length, u64 base, u32 flags);

/* ndk_mr.c */
extern struct kmem_cache *ndk_reg_mr_cache;
int ndk_mr_cache_init(void);
void ndk_mr_cache_exit(void);
s32 ndk_mr_window_bind(struct ndk_mr *mr, u64 start, u64 end, int access);
void ndk_mr_window_gone(struct ndk_mr *mr);
void ndk_mr_own_umem(struct ndk_mr *mr, struct ndk_umem *um);

/* Does @mr hold a registration (NdkRegisterMr or a user one)? */
static inline bool ndk_mr_registered(struct ndk_mr *mr)
{
	return READ_ONCE(mr->state) == NDK_MR_REGISTERED;
}

/* ndk_mr_user.c */
bool ndk_mr_user_capable(struct ib_device *ibdev);
int ndk_register_user_mr(struct ndk_mr *mr, u64 address, u64 length,
			 u32 flags);
int ndk_mr_attach_pages(struct ndk_mr *mr, struct page **pages,
			unsigned long npages);
void ndk_mr_user_release(struct ndk_mr *mr);

/* The IB access rights that let the device write the pages. */
#define NDK_IB_WRITE_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)

#define NDK_MR_FLAGS_VALID (NDK_MR_FLAG_ALLOW_LOCAL_WRITE | \
			    NDK_MR_FLAG_ALLOW_REMOTE_READ | \
			    NDK_MR_FLAG_ALLOW_REMOTE_WRITE | \
			    NDK_MR_FLAG_RDMA_READ_SINK)

/**
 * ndk_mr_access() - NDK_MR_FLAG_* to IB access flags
 * @ibdev: the device (RDMA_READ_SINK depends on its transport)
 * @flags: NDK_MR_FLAG_* bits
 *
 * Inline: fast-register and bind translate their flags per request.
 *
 * Context: any.
 * Return: the IB access flags, or -EINVAL for values NDK does not have.
 */
static inline int ndk_mr_access(struct ib_device *ibdev, u32 flags)
{
	int access = 0;

	if (flags & ~NDK_MR_FLAGS_VALID)
		return -EINVAL;
	/* 0x4 alone is no NDK value: remote write is 0x5, with local write. */
	if ((flags & NDK_MR_REMOTE_WRITE_BIT) &&
	    !(flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		return -EINVAL;
	if (flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE)
		access |= IB_ACCESS_LOCAL_WRITE;
	if (flags & NDK_MR_FLAG_ALLOW_REMOTE_READ)
		access |= IB_ACCESS_REMOTE_READ;
	if (flags & NDK_MR_REMOTE_WRITE_BIT)
		access |= IB_ACCESS_REMOTE_WRITE;
	if (flags & NDK_MR_FLAG_RDMA_READ_SINK) {
		/* Read responses are written locally; on iWARP they arrive as
		 * tagged writes and need remote write rights too.
		 */
		access |= IB_ACCESS_LOCAL_WRITE;
		if (rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev)))
			access |= IB_ACCESS_REMOTE_WRITE;
	}
	return access;
}

/**
 * ndk_mr_flags_read_only() - NDK_MR_FLAG_* for pages the device may not write
 * @ibdev: the device
 * @flags: NDK_MR_FLAG_* bits
 *
 * NdkRegisterMr must not fail because of RDMA_READ_SINK on an adapter
 * with NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED (every one but
 * iWARP), where the flag only adds local write: over read-only pages
 * the registration goes on without it.  The one place that rule lives,
 * for kernel MDLs and user ranges alike.
 *
 * Context: any.
 * Return: @flags without RDMA_READ_SINK on such an adapter, else @flags.
 */
static inline u32 ndk_mr_flags_read_only(struct ib_device *ibdev, u32 flags)
{
	if (!rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev)))
		flags &= ~NDK_MR_FLAG_RDMA_READ_SINK;
	return flags;
}

/**
 * ndk_mr_access_writes() - may the device write pages under this access?
 * @access: IB access flags, as ndk_mr_access() gives them
 *
 * The one definition of "a write right" (local write, read sink, remote
 * write): pages are pinned writable exactly when it holds, and a
 * registration, fast-register or bind with it is refused over pages that
 * are not (NDK_MDL_READ_ONLY, &ndk_mr.writable).
 *
 * Return: true when the device may write.
 */
static inline bool ndk_mr_access_writes(int access)
{
	return access & NDK_IB_WRITE_ACCESS;
}

#endif /* NDK_MR_H */
