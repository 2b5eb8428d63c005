/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: internal declarations shared by the files of ndk.ko.
 *
 * Object model (Documentation/design.md):
 *  - struct ndk_device: one per ib_device, owned by the ib_client;
 *  - struct ndk_obj: the base of every NDK object a consumer holds.  It
 *    starts with the public struct ndk_object_header, holds a reference on
 *    its parent (adapter <- PD, CQ, connector, listener; PD <- QP, MR, MW)
 *    and on its other antecedents (QP <- CQs).  The consumer owns one
 *    reference; ndk_obj_close() drops it.  When the last reference goes
 *    the object is torn down: ->destroy() releases its ib_core resources,
 *    the close completion runs, and only then is the parent released, so
 *    a parent's close never completes before a child's close callback has
 *    returned (NDK object lifetime rules).  Each object also counts its
 *    successors not closed yet (ndk_obj.users, ndk_obj_busy()): the
 *    kernel API defers a busy object's close, /dev/ndk refuses it.
 *
 * Lock order: ndk_devices_lock > ndk_device.lock > per-object locks.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_CORE_H
#define NDK_CORE_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mmu_notifier.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <ndk/ndkpi.h>

extern struct workqueue_struct *ndk_wq;
/*
 * Connects a provider may block in (siw's TCP connect()): their own queue,
 * so that a device removal's flush of ndk_wq does not wait for a peer.
 */
extern struct workqueue_struct *ndk_connect_wq;
/*
 * The PDs' key kills (ndk_fr.c): their own queue, so that many PDs with
 * long queues of kills hold none of ndk_wq's workers.
 */
extern struct workqueue_struct *ndk_kill_wq;

/*
 * Arrays sized by a caller (queue slots, page lists): charged to its memory
 * cgroup, and a failure is the caller's ENOMEM, not the OOM killer's or
 * the kernel log's business.
 */
#define NDK_GFP_ARRAY	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/*
 * What a peer makes a listener's owner allocate (a connection request and
 * its event), charged to the owner's memory cgroup: at the limit it fails
 * and the request is rejected; the peer never sets off the cgroup's OOM
 * killer, timed as it likes.
 */
#define NDK_GFP_PEER	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_NORETRY)

/*
 * Entries every ib_cq has beyond its NDK depth: room for the completion
 * of a flushed or closing QP's drain marker (ndk_qp.c), one QP at a time
 * per CQ, so a flush or close never needs room a consumer's unpolled results hold.  The
 * adapter's MaxCqDepth leaves it out.
 */
#define NDK_CQ_SPARE	1

/**
 * ndk_cq_entries_per_result() - ib_cq entries an NDK CQ keeps per result
 * @ibdev: the device
 *
 * 6.1's siw completes a READ twice when it flushes one it has moved to
 * its outstanding-read queue but not yet sent (siw_sq_flush()); ndk.ko
 * drops the second completion (security.md), but it takes an ib_cq entry
 * until polled, one that no reservation accounts for.  On siw every
 * request gets room for a second completion, so a flush of a CQ filled to
 * its depth cannot overrun it; the adapter's MaxCqDepth halves there.
 *
 * Return: 2 on siw, otherwise 1.
 */
static inline u32 ndk_cq_entries_per_result(const struct ib_device *ibdev)
{
	return ibdev->ops.driver_id == RDMA_DRIVER_SIW ? 2 : 1;
}

/* The ib_cq size of an NDK CQ of @depth results. */
static inline u32 ndk_cq_entries(const struct ib_device *ibdev, u32 depth)
{
	return depth * ndk_cq_entries_per_result(ibdev) + NDK_CQ_SPARE;
}

/*
 * Private data of an iWARP connection request, reply or reject: MPA
 * carries at most RDMA_MAX_PRIVATE_DATA (256) bytes and MPA revision 2
 * (siw's default, and cxgb4's) takes 4 of them for its IRD/ORD field;
 * rdma_cm adds no header of its own on iWARP.  That leaves 252, but siw
 * 6.1 adds the 4 bytes to a u8 length (siw_send_mpareqrep()), so 252
 * goes out as a length of 0 and the peer drops the connection: 251 is
 * what really fits (tests/kmod cm-pdata-limits sends 251 and 252).
 */
#define NDK_IWARP_PRIVATE_DATA	(256 - 4 - 1)

/**
 * struct ndk_device - ndk.ko's view of one ib_device
 * @ibdev:    the RDMA device; valid from the ib_client add() callback until
 *            remove() returns.  No reference is held beyond that.
 * @id:       adapter id visible to user space, never reused while loaded
 * @name:     copy of the ib_device name, kept current by rename()
 * @info:     NDK_ADAPTER_INFO computed once at add() (it probes the
 *            device's inline data limit with a throw-away QP)
 * @lock:     protects @adapters, @removed and @removal_adapter
 * @adapters: open struct ndk_adapter objects of this device
 * @removed:  set when remove() starts: no new adapter may open
 * @users:    one per open adapter plus one dropped by remove(); the last
 *            put completes @idle, and nothing touches the device after it
 * @idle:     remove() waits here until every adapter is closed
 * @removal_adapter: the adapter whose removal callback is running, while
 *            remove() holds a reference on it for the call
 * @removal_task:    the thread running that callback
 * @objects:  live objects of the device by NDK_OBJECT_TYPE_* (adapters are
 *            counted as the length of @adapters), for netlink
 */
struct ndk_device {
	struct ib_device *ibdev;
	u32 id;
	char name[IB_DEVICE_NAME_MAX];
	struct ndk_adapter_info info;
	struct mutex lock; /* protects adapters, removed, removal_adapter */
	struct list_head adapters;
	bool removed;
	refcount_t users;
	struct completion idle;
	struct ndk_adapter *removal_adapter;
	struct task_struct *removal_task;
	atomic_t objects[NDK_OBJECT_TYPE_MAX];
};

/* Antecedents other than the parent an object can hold (QP: two CQs). */
#define NDK_OBJ_MAX_ANTECEDENTS	2

/**
 * struct ndk_obj - base of every NDK object
 * @hdr:       public header; must stay the first member
 * @ref:       the consumer's reference plus one per child/successor
 * @closing:   ndk_obj_close() was called
 * @counted:   counted in its device's objects (ndk_obj_count())
 * @loose:     not counted in @parent's @users (ndk_obj_loosen())
 * @users:     successors whose consumer has not closed them yet: the
 *             children and the objects that hold this one (ndk_obj_hold());
 *             what makes it busy (ndk_obj_busy())
 * @parent:    the object this one was created from (NULL for an adapter)
 * @adapter:   the adapter this object belongs to (itself for an adapter)
 * @destroy:   releases the ib_core resources; process context; may be NULL
 * @close_completion: consumer's close callback, NULL for a blocking close
 * @close_context:    its context
 * @init:      the type's ib_core setup, run by ndk_obj_create()
 * @create_completion: consumer's create callback during an async create
 * @create_context:    its context
 * @work:      runs creation (async create) or teardown (last reference)
 * @antecedents: other objects this one holds besides its parent (a QP's
 *             CQs, see ndk_obj_hold()); released with the parent
 *
 * 136 bytes: the three flags fill the word of @ref.
 */
struct ndk_obj {
	struct ndk_object_header hdr;
	refcount_t ref;
	bool closing;
	bool counted;
	bool loose;
	atomic_t users;
	struct ndk_obj *parent;
	struct ndk_adapter *adapter;
	void (*destroy)(struct ndk_obj *obj);
	ndk_fn_close_completion close_completion;
	void *close_context;
	int (*init)(struct ndk_obj *obj);
	ndk_fn_create_completion create_completion;
	void *create_context;
	struct work_struct work;
	struct ndk_obj *antecedents[NDK_OBJ_MAX_ANTECEDENTS];
};

/**
 * struct ndk_adapter - an open NDK adapter (NDK_ADAPTER)
 * @obj:       object base
 * @dev:       the device; valid while the adapter is open (remove() waits)
 * @removal:   consumer's removal callback and its context
 * @removal_context: its context
 * @removed:   the device is going away: new objects and posts fail with
 *             STATUS_DEVICE_REMOVED
 * @dev_entry: entry in @dev->adapters
 * @closed:    completed when the last reference is gone
 * @user:      opened for a /dev/ndk file (ndk_open_adapter_id()): its
 *             limits are clamped (ndk_user_limits()) and privileged
 *             choices are checked against the opener's credentials
 * @net:       the network namespace its connectors and listeners live in:
 *             the opener's for @user (a reference), else init_net
 * @info:      what ndk_query_adapter_info() reports and what creates are
 *             checked against: the device's, clamped for @user
 */
struct ndk_adapter {
	struct ndk_obj obj;
	struct ndk_device *dev;
	ndk_fn_adapter_removal_callback removal;
	void *removal_context;
	bool removed;
	struct list_head dev_entry;
	struct completion closed;
	bool user;
	struct net *net;
	struct ndk_adapter_info info;
};

/**
 * struct ndk_pd - NDK_PD
 * @obj:  object base
 * @ibpd: the ib_core protection domain
 * @reg_lock: serialises creation of @reg
 * @reg:  the internal registration path, created on first use (ndk_mr.c)
 * @frs:  registrations consumers post on their QPs (fast-register MRs and
 *        windows, struct ndk_fr) by key index (rkey >> 8), so that a
 *        peer's send-and-invalidate can be applied (ndk_fr.c)
 * @kills: those of @frs whose key is to be killed (ndk_fr.c)
 * @kill_work: kills them; holds a reference on the PD while queued
 */
struct ndk_pd {
	struct ndk_obj obj;
	struct ib_pd *ibpd;
	struct mutex reg_lock; /* serialises creation of reg */
	struct ndk_reg *reg;
	struct xarray frs;
	struct llist_head kills;
	struct work_struct kill_work;
};

/**
 * struct ndk_umem - user memory pinned for a registration (ndk_umem.c)
 * @mm:       the owner's mm, grabbed; charged in its pinned_vm (not
 *            @driver)
 * @address:  user address of the first byte
 * @length:   bytes; 0 while nothing is registered
 * @npages:   pages spanned: pinned and charged
 * @pages:    the pinned pages; with @driver, NULL until a page list is
 *            needed (ndk_umem_pin_again())
 * @writable: pinned for MEM_WRITE: dirtied when unpinned
 * @driver:   the device driver pinned and charged the pages
 *            (ndk_register_user_mr()); ndk.ko's own pin otherwise
 * @mdl:      MDL chain over @pages, the input of ndk_register_mr()
 */
struct ndk_umem {
	struct mm_struct *mm;
	u64 address;
	u64 length;
	unsigned long npages;
	struct page **pages;
	bool writable;
	bool driver;
	struct ndk_mdl *mdl;
};

/* Does @um hold a registered range (pinned by ndk.ko or by the driver)? */
static inline bool ndk_umem_held(const struct ndk_umem *um)
{
	return um->length;
}

static inline struct ib_device *ndk_ibdev(struct ndk_obj *obj)
{
	return obj->adapter->dev->ibdev;
}

static inline bool ndk_adapter_removed(struct ndk_adapter *adapter)
{
	return READ_ONCE(adapter->removed);
}

/**
 * struct ndk_cq_sink - where a CQ hands its results as they arrive
 * @push:     store one result; false when the sink has no room (the
 *            result stays in the CQ's software queue until it has)
 * @consumed: results the sink's reader took since the last call; the CQ
 *            releases their reservations (ndk_cq_reserve())
 *
 * Both run under the CQ's lock, in any context (the completion handler
 * runs in softirq context), and must not sleep.  A CQ with a sink keeps
 * its ib_cq armed and moves every completion to the sink from the
 * completion handler (ndk_cq_set_sink()); the user path's completion
 * rings are the one sink (ndk_uring.c).
 */
struct ndk_cq_sink {
	bool (*push)(struct ndk_cq_sink *sink, const struct ndk_result_ex *res);
	u32 (*consumed)(struct ndk_cq_sink *sink);
};

/* ndk_cq.c */
void ndk_cq_set_sink(struct ndk_cq *cq, struct ndk_cq_sink *sink);

/*
 * ndk_qp.c: a consumer that refuses an initiator request before the core
 * sees it (the user path's own checks) still hands the DEFER chain over.
 */
s32 ndk_qp_refuse_chain(struct ndk_qp *qp, s32 status);
u32 ndk_qp_depths(const struct ndk_qp *qp);

/**
 * ndk_qp_refuse() - an initiator request fails inline
 * @qp:     the QP
 * @status: the request's inline status, or STATUS_SUCCESS
 *
 * NDK: an inline failure first hands the deferred requests over to the
 * device (ndk_qp_refuse_chain()), so a failure posts the DEFER chain.  A
 * success, the common case, returns here without a call.
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: @status.
 */
static inline s32 ndk_qp_refuse(struct ndk_qp *qp, s32 status)
{
	return status == STATUS_SUCCESS ? status :
					  ndk_qp_refuse_chain(qp, status);
}

/* ndk_obj.c */
void ndk_obj_init(struct ndk_obj *obj, enum ndk_object_type type,
		  struct ndk_obj *parent, void (*destroy)(struct ndk_obj *));
void ndk_obj_hold(struct ndk_obj *obj, struct ndk_obj *antecedent);
void ndk_obj_loosen(struct ndk_obj *obj, struct ndk_obj *holder);
bool ndk_obj_busy(const struct ndk_obj *obj);
void ndk_obj_last_put(struct ndk_obj *obj);

/*
 * The reference of every request in flight is taken and dropped here:
 * inline, for the data path pays a call per function (performance.md,
 * "F1").
 */

/**
 * ndk_obj_get() - take a reference (a successor keeps its antecedent)
 * @obj: the object
 *
 * Context: any.
 */
static inline void ndk_obj_get(struct ndk_obj *obj)
{
	refcount_inc(&obj->ref);
}

/**
 * ndk_obj_put() - drop a reference; the last one tears the object down
 * @obj: the object
 *
 * The teardown runs on ndk_wq (ndk_obj_last_put()), so this may be called
 * from any context, including from an NDK callback.
 *
 * Context: any.
 */
static inline void ndk_obj_put(struct ndk_obj *obj)
{
	if (refcount_dec_and_test(&obj->ref))
		ndk_obj_last_put(obj);
}

s32 ndk_obj_create(struct ndk_obj *obj, int (*init)(struct ndk_obj *obj),
		   ndk_fn_create_completion create_completion,
		   void *request_context, void **out);
s32 ndk_obj_close(struct ndk_obj *obj, ndk_fn_close_completion completion,
		  void *request_context);
void ndk_obj_count(struct ndk_obj *obj);
gfp_t ndk_gfp(const void *completion);
s32 ndk_status_from_errno(int err);

/* ndk_adapter.c */
int ndk_adapter_init(void);
void ndk_adapter_exit(void);
u32 ndk_adapter_count(struct net *net);
s32 ndk_open_adapter_id(u32 id, ndk_fn_adapter_removal_callback removal,
			void *removal_context, struct ndk_adapter **adapter);
void ndk_user_limits(struct ndk_adapter_info *info);
int ndk_device_get(u32 *id, const char *name, bool next, struct net *net,
		   int (*fn)(struct ndk_device *dev, void *arg), void *arg);
u32 ndk_device_adapters(struct ndk_device *dev);

/* ndk_umem.c */
int ndk_mr_flags_write(struct ndk_obj *obj, u32 flags);
int ndk_umem_pin(struct ndk_umem *um, struct mm_struct *mm, u64 address,
		 u64 length, bool write);
void ndk_umem_unpin(struct ndk_umem *um);
void ndk_umem_unpin_untouched(struct ndk_umem *um);
int ndk_umem_mode(struct mm_struct *mm, u64 address, u64 length, bool write);
void ndk_umem_hold(struct ndk_umem *um, u64 address, u64 length, bool write);
int ndk_umem_pin_again(struct ndk_umem *um);
long ndk_umem_pinned_pages(void);

#endif /* NDK_CORE_H */
