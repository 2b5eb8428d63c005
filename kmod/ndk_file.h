/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: the objects of one open /dev/ndk file, shared by ndk_file.c
 * (handle table, adapters, PDs, WSP registrations, events) and
 * ndk_uverbs.c (CQs, QPs, MRs, MWs, connectors, listeners).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_FILE_H
#define NDK_FILE_H

#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <ndk/ndk_ioctl.h>
#include <ndk/ndk_netlink.h>

#include "ndk_core.h"
#include "ndk_mr.h"

/**
 * struct ndk_upages - zeroed pages shared with the opener's process
 * @pages:  the pages
 * @va:     their kernel mapping
 * @npages: how many
 */
struct ndk_upages {
	struct page **pages;
	void *va;
	u32 npages;
};

struct vm_area_struct;
struct ndk_upages *ndk_upages_alloc(u32 npages);
void ndk_upages_free(struct ndk_upages *p);
int ndk_upages_mmap(struct ndk_upages *p, struct vm_area_struct *vma);

/**
 * struct ndk_ucache - registration cache state of one open file (ndk_ucache.c)
 * @lock:  protects @slots, the generations' writes and the notifiers'
 *         sequence numbers; taken by the MMU notifier callback
 * @gens:  pages of NDK_U_CACHE_SLOTS u64 generations, mapped read-only
 *         by the opener; NULL until first needed
 * @slots: slots in use (@lock)
 * @file_id: the file's netlink id, for invalidation events
 * @tgid:  the opener's thread group id, for invalidation events
 * @invalidations: bumps made by the MMU notifier, for netlink
 */
struct ndk_ucache {
	spinlock_t lock; /* slots, generations, notifier sequence numbers */
	struct ndk_upages *gens;
	DECLARE_BITMAP(slots, NDK_U_CACHE_SLOTS);
	u32 file_id;
	pid_t tgid;
	atomic64_t invalidations;
};

/**
 * struct ndk_ucache_reg - a registration as the cache tracks it
 * @notifier:   MMU interval notifier over the registration's pages
 * @uc:         its file's cache state
 * @handle:     the registration's handle once published (for events)
 * @slot:       its slot, or NDK_U_CACHE_SLOT_NONE
 * @address:    user address of the registration's first byte
 * @length:     its bytes
 * @gen:        the generation it bumps: its slot in @uc->gens, or @own
 * @own:        the generation of a registration without a slot
 * @registered: the generation the pages were pinned under
 */
struct ndk_ucache_reg {
	struct mmu_interval_notifier notifier;
	struct ndk_ucache *uc;
	u32 handle;
	u32 slot;
	u64 address;
	u64 length;
	u64 *gen;
	u64 own;
	u64 registered;
};

enum ndk_uobj_type {
	NDK_UOBJ_ADAPTER,
	NDK_UOBJ_PD,
	NDK_UOBJ_MEM,
	NDK_UOBJ_CQ,
	NDK_UOBJ_QP,
	NDK_UOBJ_MR,
	NDK_UOBJ_MW,
	NDK_UOBJ_CONNECTOR,
	NDK_UOBJ_LISTENER,
};

struct ndk_uobj;

/**
 * struct ndk_uobj_desc - what the user path knows of one handle type
 * @parent:    the type of the entry it is created from (adapters: none)
 * @nl_type:   its NDK_NL_OBJ_* (netlink)
 * @open:      the types ndk_uv_create() makes (CQ, connector, listener,
 *             MR, MW): creates the new entry's object from its create
 *             command's struct; an NTSTATUS
 * @published: after the entry got its handle: what depends on the handle
 *             (events, the create command's out fields); may be NULL
 * @destroy:   releases its object; the entry is out of the table and has
 *             no children; NULL for adapters (ndk_uobj_adapter_detach())
 * @core:      its kernel API object, whose open successors make the entry
 *             busy (ndk_uobj_busy()); NULL for the types nothing is
 *             created from or held by in the table: never busy
 * @wsp:       the entry is the head of a struct ndk_uobj_wsp (MEM: the
 *             entry and its range's tracking are one object)
 */
struct ndk_uobj_desc {
	u8 parent;
	u8 nl_type;
	bool wsp;
	s32 (*open)(struct ndk_uobj *u, void *arg);
	void (*published)(struct ndk_uobj *u, void *arg);
	void (*destroy)(struct ndk_uobj *u);
	struct ndk_obj *(*core)(const struct ndk_uobj *u);
};

#define NDK_UOBJ_TYPES	(NDK_UOBJ_LISTENER + 1)
/* Sets of types for ndk_uobj_find_of(): every type, the registrations. */
#define NDK_UOBJ_ANY	(BIT(NDK_UOBJ_TYPES) - 1)
#define NDK_UOBJ_REGS	(BIT(NDK_UOBJ_MEM) | BIT(NDK_UOBJ_MR))
extern const struct ndk_uobj_desc ndk_uobj_descs[NDK_UOBJ_TYPES];

/*
 * Owned events (request completions, connection requests) a file may have
 * alive: a bound on what a caller that never takes its events can queue,
 * and on the queue walks under ndk_file.ev_lock (Documentation/uapi.md).
 */
#define NDK_UEVENT_OWNED_MAX	16384

/* Closed handles a file keeps reserved (ndk_uobj_unpublish()). */
#define NDK_UOBJ_RETIRED	64

/**
 * struct ndk_file - private data of an open /dev/ndk
 * @lock:     serialises commands and the release
 * @handles:  struct ndk_uobj by handle
 * @next:     cursor of the cyclic handle allocation
 * @retired:  the last NDK_UOBJ_RETIRED closed handles, still reserved in
 *            @handles (ndk_uobj_unpublish()); 0 for none
 * @retired_pos: the oldest slot of @retired, the next to reuse
 * @mm:       the opener's mm (mmgrab()): the only one allowed objects
 * @ev_lock:  protects @events and every struct ndk_uevent.queued; taken
 *            in any context (CQ notifications run in softirq context)
 * @events:   queued struct ndk_uevent, oldest first
 * @owned_events: owned struct ndk_uevent alive (pending or queued), at
 *            most NDK_UEVENT_OWNED_MAX (ndk_uevent_alloc())
 * @wait:     poll() waits here for @events
 * @ucache:   registration cache slots and generations (ndk_ucache.c)
 * @id:       netlink id of the file (ndk_netlink.c)
 * @tgid:     the opener's thread group (a reference)
 * @comm:     the opener's comm at open
 * @counters: the self-reported cache counters page, NULL until mapped
 *            (ndk_file_counters_mmap()); user space writes it
 * @counters_page: its page (@counters is its kernel mapping)
 * @ref:      the release's reference, and one per registry reader
 *            summarising the file (ndk_file_registry.c); the last frees
 *            what readers look at (ndk_file_put())
 * @release_work: the teardown of a file another process closed last
 *            (ndk_file_release())
 * @rcu:      frees the file a grace period after @ref's last, for
 *            registry readers that passed it
 */
struct ndk_file {
	struct mutex lock; /* serialises commands on this file */
	struct xarray handles;
	u32 next;
	u32 retired[NDK_UOBJ_RETIRED];
	u32 retired_pos;
	struct mm_struct *mm;
	spinlock_t ev_lock; /* protects events */
	struct list_head events;
	atomic_t owned_events;
	wait_queue_head_t wait;
	struct ndk_ucache ucache;
	u32 id;
	struct pid *tgid;
	char comm[TASK_COMM_LEN];
	struct ndk_u_cache_counters *counters;
	struct ndk_upages *counters_page;
	refcount_t ref;
	struct work_struct release_work;
	struct rcu_head rcu;
};

struct ndk_uobj;
struct ndk_uring;

/**
 * struct ndk_uevent - an event for the file's queue
 * @entry:    in ndk_file.events while @queued
 * @queued:   on the queue (under ndk_file.ev_lock)
 * @owned:    allocated for one event: freed when taken (else embedded in
 *            its object, which takes it off the queue when it goes)
 * @nf:       the file
 * @ev:       what user space gets
 * @conn:     NDK_U_EVENT_CONNECT_REQUEST: the new connector, handed to
 *            user space as a handle when the event is taken
 * @listener: NDK_U_EVENT_CONNECT_REQUEST: the listener's entry
 */
struct ndk_uevent {
	struct list_head entry;
	bool queued;
	bool owned;
	struct ndk_file *nf;
	struct ndk_u_event ev;
	struct ndk_connector *conn;
	struct ndk_uobj *listener;
};

/**
 * struct ndk_uobj - one entry of a file's handle table
 * @handle:   its handle
 * @type:     enum ndk_uobj_type
 * @parent:   the entry it was created from, or NULL (adapter); it stays
 *            while this one does: its object is busy (ndk_uobj_busy())
 * @nf:       the file
 * @cg:       the rdma cgroup the entry is charged to, while @cg_dev is set
 * @cg_dev:   the device it is charged on (ndk_uobj_publish()), until
 *            uncharged (ndk_uobj_uncharge())
 * @adapter:  NDK_UOBJ_ADAPTER: the adapter; NULL once its device went
 * @removed:  NDK_UOBJ_ADAPTER: the ADAPTER_REMOVED event
 * @pd:       NDK_UOBJ_PD: the PD
 * @mems:     NDK_UOBJ_PD: its WSP registrations (struct ndk_uobj.mem.node),
 *            ordered by their range (ndk_uobj_umem()) and mem.flags,
 *            equal keys oldest first; an entry leaves it (destroy)
 *            right after its pages are released, under the file's lock
 * @keys:     NDK_UOBJ_PD: its MEM and MR entries with a local token
 *            (struct ndk_uobj.mem.key_node), ordered by the key index
 *            (token >> 8) they were filed under, one entry per index:
 *            SGEs may only name these
 * @mem:      NDK_UOBJ_MEM and NDK_UOBJ_MR: the registration
 * @mem.mr:   its MR
 * @mem.cache: its cache slot and MMU notifier while registered: a MEM
 *            entry's own (struct ndk_uobj_wsp), an MR entry's allocated
 *            by MR_REGISTER
 * @mem.flags: NDK_U_MEM_* (MEM) or NDK_MR_FLAG_* (MR) it was registered with
 * @mem.refs: MEM: MEM_REGISTER calls not yet matched by MEM_DEREGISTER
 * @mem.node: MEM: in the PD's @mems
 * @mem.key_node: in the PD's @keys, or cleared (RB_CLEAR_NODE()) when
 *            not filed
 * @mem.key:  while filed, the key index it is filed under
 * @cq:       NDK_UOBJ_CQ: the CQ, its notification event, its completion
 *            ring or NULL
 * @qp:       NDK_UOBJ_QP: the QP, its submission ring or NULL
 * @mw:       NDK_UOBJ_MW: the window
 * @conn:     NDK_UOBJ_CONNECTOR: the connector, the DISCONNECTED event
 * @listener: NDK_UOBJ_LISTENER: the listener, its context, and whether its
 *            entry is going (under ndk_file.ev_lock)
 */
struct ndk_uobj {
	u32 handle;
	struct ndk_uobj *parent;
	struct ndk_file *nf;
#ifdef CONFIG_CGROUP_RDMA
	struct rdma_cgroup *cg;
	struct rdmacg_device *cg_dev;
#endif
	u8 type;
	union {
		struct {
			struct ndk_adapter *adapter;
			struct ndk_uevent removed;
		};
		struct {
			struct ndk_pd *pd;
			struct rb_root mems;
			struct rb_root keys;
		};
		struct {
			struct ndk_mr *mr;
			struct ndk_ucache_reg *cache;
			u32 flags;
			u32 refs;
			struct rb_node node;
			struct rb_node key_node;
			u32 key;
		} mem;
		struct {
			struct ndk_cq *cq;
			struct ndk_uevent notify;
			struct ndk_uring *ring;
		} cq;
		struct {
			struct ndk_qp *qp;
			struct ndk_uring *ring;
		} qp;
		struct ndk_mw *mw;
		struct {
			struct ndk_connector *conn;
			struct ndk_uevent disconnected;
		} conn;
		struct {
			struct ndk_listener *listener;
			u64 context;
			bool closing;
		} listener;
	};
};

/**
 * struct ndk_uobj_wsp - a WSP registration's entry and its tracking
 * @u:     the MEM entry; its mem.cache is @track while tracked
 * @track: its range's MMU notifier and cache slot (ndk_ucache_track())
 *
 * One object, in a cache of its own (ndk_uobj_alloc()): MEM_REGISTER
 * makes both for every registration, and each allocation costs.  An MR
 * entry's tracking is allocated at each MR_REGISTER instead: that runs
 * on a published entry without the file's lock, so two of them may pin
 * at once, each with its own tracking.
 */
struct ndk_uobj_wsp {
	struct ndk_uobj u;
	struct ndk_ucache_reg track;
};

/* A registration entry (MEM, or MR): its union member @mem is in use. */
static inline bool ndk_uobj_is_mem(const struct ndk_uobj *u)
{
	return u->type == NDK_UOBJ_MEM || u->type == NDK_UOBJ_MR;
}

/* A registration entry's user memory: its MR owns it (ndk_mr_own_umem()). */
static inline struct ndk_umem *ndk_uobj_umem(const struct ndk_uobj *u)
{
	return &u->mem.mr->umem;
}

/* A registration entry that holds registered pages. */
static inline bool ndk_uobj_holds_pages(const struct ndk_uobj *u)
{
	return ndk_uobj_is_mem(u) && ndk_umem_held(ndk_uobj_umem(u));
}

/**
 * struct ndk_umr_req - a user registration on its way (ndk_umr_*())
 * @address:   user address of the first byte
 * @length:    bytes, > 0
 * @mr_flags:  NDK_MR_FLAG_* of the registration
 * @slot:      a WSP registration: its generation gets a cache slot
 * @write:     pin writable (ndk_umr_check())
 * @driver:    the device's driver registers the range (ndk_umr_check(),
 *             then ndk_umr_plan()); else ndk.ko pins it
 * @own_limit: MaxRegistrationSize: the limit when ndk.ko pins
 */
struct ndk_umr_req {
	u64 address;
	u64 length;
	u32 mr_flags;
	u32 flags_ro;
	bool slot;
	bool write;
	bool driver;
	u64 own_limit;
};

int ndk_errno_from_status(s32 status);
struct ndk_file *ndk_file_lock(struct file *file);
/**
 * struct ndk_file_owner - who opened a file, as readers see it
 * @id:   the file's id (netlink)
 * @pid:  its opener's thread group, in the reader's pid namespace
 * @comm: its opener's command name
 */
struct ndk_file_owner {
	u32 id;
	pid_t pid;
	char comm[TASK_COMM_LEN];
};

/**
 * struct ndk_file_summary - a file as readers see it (ndk_files_next())
 * @owner:  who opened it
 * @counts: its handles by NDK_NL_OBJ_* type
 * @bytes:  bytes of its registrations
 * @pages:  pages they pin
 * @hits:   self-reported cache hits
 * @misses: self-reported cache misses
 * @invalidations: its registrations invalidated by the MMU notifier
 */
struct ndk_file_summary {
	struct ndk_file_owner owner;
	u32 counts[__NDK_NL_OBJ_MAX];
	u64 bytes;
	u64 pages;
	u64 hits;
	u64 misses;
	u64 invalidations;
};

/**
 * struct ndk_uobj_summary - an object as readers see it
 * @type:         NDK_NL_OBJ_*
 * @handle:       its handle
 * @parent:       its parent's handle, 0 for none
 * @adapter:      its adapter is still there: @adapter_id, @adapter_name
 * @adapter_id:   the adapter's id
 * @adapter_name: the adapter's name
 * @mem:          a registration holding pages: @address ... @flags
 * @address:      its user address
 * @length:       its bytes
 * @pages:        the pages it pins
 * @flags:        NDK_U_MEM_* or NDK_MR_FLAG_* it was registered with
 * @has_refs:     a WSP registration: @refs
 * @refs:         MEM_REGISTER calls not yet matched by MEM_DEREGISTER
 */
struct ndk_uobj_summary {
	u32 type;
	u32 handle;
	u32 parent;
	bool adapter;
	u32 adapter_id;
	char adapter_name[IB_DEVICE_NAME_MAX];
	bool mem;
	u64 address;
	u64 length;
	u64 pages;
	u32 flags;
	bool has_refs;
	u32 refs;
};

int ndk_files_add(struct ndk_file *nf);
void ndk_files_del(struct ndk_file *nf);
void ndk_file_put(struct ndk_file *nf);
bool ndk_files_empty(void);
void ndk_files_cache_totals(u64 *hits, u64 *misses);
int ndk_files_next(unsigned long *pos, struct pid *pid,
		   const struct mm_struct *viewer, struct ndk_file_summary *s);
int ndk_file_next_uobj(unsigned long *file, unsigned long *handle,
		       struct pid *pid, const struct mm_struct *viewer,
		       u32 type, struct ndk_file_owner *owner,
		       struct ndk_uobj_summary *o);

/* ndk_uobj.c: the handle table */
int ndk_uobj_cache_init(void);
void ndk_uobj_cache_exit(void);
void ndk_uobj_debugfs_init(struct dentry *dir);
struct ndk_uobj *ndk_uobj_find_of(struct ndk_file *nf, u32 handle, u32 types);

/* ndk_uobj_find_of() of one type. */
static inline struct ndk_uobj *ndk_uobj_find(struct ndk_file *nf, u32 handle,
					     u8 type)
{
	return ndk_uobj_find_of(nf, handle, BIT(type));
}

void ndk_uobj_free(struct ndk_uobj *u);
void ndk_uobj_uncharge(struct ndk_uobj *u);
struct ndk_uobj *ndk_uobj_alloc(struct ndk_file *nf, u8 type,
				struct ndk_uobj *parent);
int ndk_uobj_publish(struct ndk_file *nf, struct ndk_uobj *u);
struct ndk_uobj *ndk_uobj_root(struct ndk_uobj *u);
bool ndk_uobj_busy(const struct ndk_uobj *u);
int ndk_uobj_gone(struct ndk_file *nf, u32 adapter, int err);
void ndk_uobj_destroy(struct ndk_file *nf, struct ndk_uobj *u);
void ndk_uobj_destroy_below(struct ndk_file *nf,
			    const struct ndk_device *dev);
void ndk_uobj_adapter_detach(struct ndk_file *nf, struct ndk_uobj *u);
void ndk_uobj_adapter_close(struct ndk_uobj *u);

/* ndk_uevent.c: the event queue */
void ndk_uevent_init(struct ndk_uevent *e, struct ndk_file *nf, u32 type,
		     u32 handle, u64 context);
struct ndk_uevent *ndk_uevent_alloc(struct ndk_file *nf, gfp_t gfp);
void ndk_uevent_free(struct ndk_uevent *e);
void ndk_uevent_queue(struct ndk_uevent *e, s32 status);
void ndk_uevent_unqueue(struct ndk_uevent *e);
struct ndk_uevent *ndk_uevent_take(struct ndk_file *nf);
void ndk_uevent_drop_requests(struct ndk_file *nf, struct ndk_uobj *scope);

/* ndk_file.c */
struct ndk_uobj *ndk_file_lock_uobj_of(struct file *file, u32 handle,
				       u32 types, struct ndk_file **nfp);

/* ndk_file_lock_uobj_of() of one type: every command on a handle. */
static inline struct ndk_uobj *ndk_file_lock_uobj(struct file *file,
						  u32 handle, u8 type,
						  struct ndk_file **nfp)
{
	return ndk_file_lock_uobj_of(file, handle, BIT(type), nfp);
}

__poll_t ndk_file_poll(struct file *file, struct poll_table_struct *wait);
void ndk_file_adapter_removed(void *context);

/* ndk_umr.c: user memory registrations */
u64 ndk_umr_limit(struct ndk_adapter *adapter,
		  const struct ndk_adapter_info *info);
int ndk_umr_key_add(struct ndk_uobj *u);
void ndk_umr_key_del(struct ndk_uobj *u);
struct ndk_uobj *ndk_umr_key_find(struct ndk_uobj *pd, u32 token);
void ndk_umr_untrack(struct ndk_uobj *u);
s32 ndk_umr_deregister(struct ndk_uobj *u);
int ndk_umr_check(struct ndk_uobj *u, struct ndk_obj *obj,
		  struct ndk_umr_req *req);
int ndk_umr_plan(struct ndk_umr_req *req);
int ndk_umr_acquire(struct ndk_file *nf, const struct ndk_umr_req *req,
		    struct ndk_mr *mr, struct ndk_umem *um,
		    struct ndk_ucache_reg *cache);
int ndk_umr_finish(const struct ndk_umr_req *req, struct ndk_mr *mr,
		   struct ndk_umem *um);
void ndk_umr_release(struct ndk_mr *mr, struct ndk_umem *um,
		     struct ndk_ucache_reg *cache, bool registered);
int ndk_umr_pages(struct ndk_uobj *u);
int ndk_uv_mem_register(struct file *file, void *arg);
int ndk_uv_mem_deregister(struct file *file, void *arg);
void ndk_umr_debugfs_init(struct dentry *dir);

/* ndk_uverbs.c */
int ndk_uv_adapter_open(struct file *file, void *arg);
int ndk_uv_adapter_info(struct file *file, void *arg);
int ndk_uv_pd_create(struct file *file, void *arg);
int ndk_uv_event_get(struct file *file, void *arg);
int ndk_uv_handle_close(struct file *file, void *arg);
s32 ndk_uv_cq_open(struct ndk_uobj *u, void *arg);
void ndk_uv_cq_published(struct ndk_uobj *u, void *arg);
s32 ndk_uv_connector_open(struct ndk_uobj *u, void *arg);
void ndk_uv_connector_published(struct ndk_uobj *u, void *arg);
s32 ndk_uv_listener_open(struct ndk_uobj *u, void *arg);
s32 ndk_uv_mr_open(struct ndk_uobj *u, void *arg);
s32 ndk_uv_mw_open(struct ndk_uobj *u, void *arg);
void ndk_uv_cq_destroy(struct ndk_uobj *u);
void ndk_uv_qp_destroy(struct ndk_uobj *u);
void ndk_uv_mw_destroy(struct ndk_uobj *u);
void ndk_uv_connector_destroy(struct ndk_uobj *u);
void ndk_uv_listener_destroy(struct ndk_uobj *u);
struct ndk_uobj *ndk_uverbs_accepted(struct ndk_file *nf,
				     struct ndk_uevent *e);
int ndk_uv_cq_create(struct file *file, void *arg);
int ndk_uv_cq_arm(struct file *file, void *arg);
int ndk_uv_cq_poll(struct file *file, void *arg);
int ndk_uv_qp_create(struct file *file, void *arg);
int ndk_uv_qp_post(struct file *file, void *arg);
int ndk_uv_qp_submit(struct file *file, struct ndk_u_qp_post *p, int err);
int ndk_uv_qp_flush(struct file *file, void *arg);
int ndk_uv_mr_create(struct file *file, void *arg);
int ndk_uv_mr_register(struct file *file, void *arg);
int ndk_uv_mr_deregister(struct file *file, void *arg);
int ndk_uv_mr_init_fr(struct file *file, void *arg);
int ndk_uv_mw_create(struct file *file, void *arg);
int ndk_uv_token_query(struct file *file, void *arg);
int ndk_uv_connector_create(struct file *file, void *arg);
int ndk_uv_connect(struct file *file, void *arg);
int ndk_uv_complete_connect(struct file *file, void *arg);
int ndk_uv_accept(struct file *file, void *arg);
int ndk_uv_reject(struct file *file, void *arg);
int ndk_uv_disconnect(struct file *file, void *arg);
int ndk_uv_connector_query(struct file *file, void *arg);
int ndk_uv_listener_create(struct file *file, void *arg);
int ndk_uv_listen(struct file *file, void *arg);

/* ndk_uring.c */
struct vm_area_struct;
void ndk_uring_put(struct ndk_uring *r);
void ndk_uring_describe(const struct ndk_uring *r, u32 handle, u64 *offset,
			u32 *size, u32 *entries);
int ndk_uring_mmap(struct ndk_file *nf, struct vm_area_struct *vma);
void ndk_uv_result(struct ndk_u_result *out, const struct ndk_result_ex *res);
int ndk_uring_cq_attach(struct ndk_uobj *u, u32 depth);
void ndk_uring_cq_detach(struct ndk_uobj *u);
int ndk_uring_qp_alloc(struct ndk_uobj *u);
int ndk_uv_qp_doorbell(struct file *file, void *arg);

/* ndk_ucache.c */
struct dentry;
int ndk_ucache_cache_init(void);
void ndk_ucache_cache_exit(void);
void ndk_ucache_init(struct ndk_ucache *uc);
void ndk_ucache_release(struct ndk_ucache *uc);
struct ndk_ucache_reg *ndk_ucache_reg_alloc(void);
void ndk_ucache_reg_free(struct ndk_ucache_reg *r);
int ndk_ucache_track(struct ndk_ucache *uc, struct ndk_ucache_reg *r,
		     struct mm_struct *mm, u64 address, u64 length, bool slot);
unsigned long ndk_ucache_begin(struct ndk_ucache_reg *r);
bool ndk_ucache_end(struct ndk_ucache_reg *r, unsigned long seq);
void ndk_ucache_untrack(struct ndk_ucache_reg *r);
bool ndk_ucache_current(const struct ndk_ucache_reg *r);
void ndk_ucache_result(const struct ndk_ucache_reg *r, u32 *slot,
		       u64 *generation);
int ndk_ucache_mmap(struct ndk_ucache *uc, struct vm_area_struct *vma);
void ndk_ucache_debugfs_init(struct dentry *dir);
u64 ndk_ucache_invalidations_total(void);

/* ndk_file.c */
struct dentry;
int ndk_file_open(struct inode *inode, struct file *file);
int ndk_file_release(struct inode *inode, struct file *file);
int ndk_file_wq_init(void);
void ndk_file_wq_exit(void);
int ndk_file_mmap(struct file *file, struct vm_area_struct *vma);
void ndk_file_debugfs_init(struct dentry *dir);
void ndk_file_hold_once(u32 *ms);

/* ndk_ioctl.c */
long ndk_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* NDK_FILE_H */
