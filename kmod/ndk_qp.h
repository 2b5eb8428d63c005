/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: queue pairs and completion queues, internal interface.
 *
 * The connector (ndk_cm.c) drives a QP's state through rdma_cm with
 * rdma_init_qp_attr() + ib_modify_qp() on @ibqp, and tells the QP when it
 * is connected: initiator requests on a QP that is not connected fail with
 * STATUS_CONNECTION_INVALID and produce no completion.  A new QP is
 * already in INIT (first port of the adapter, pkey index 0, local write
 * and remote read/write access), so receives can be posted before the
 * connection; rdma_cm's INIT attributes then make an INIT->INIT move.
 *
 * Completions (ndk_cq.c, ndk_qp.c): every work request is posted
 * signaled, except SILENT_SUCCESS initiator requests other than reads
 * (ndk_qp.c, "Unsignaled requests"), its wr_id naming the QP (by id,
 * never by pointer) and a per-queue slot that records what NDK_RESULT
 * needs (request context, operation type, SILENT_SUCCESS).  A CQ finds
 * the QP of an ib_wc in its own xarray of attached QPs, so a late CQE of
 * a destroyed QP is dropped rather than dereferenced.  Before a QP is destroyed its outstanding
 * completions are moved out of the ib_cq into the CQ's software queue,
 * already translated; the software queue also carries the synthetic
 * STATUS_CANCELLED completions of flushed requests that never reached the
 * device.
 *
 * Locking: ndk_qp.sq_lock and ndk_qp.rq_lock (posts against flush and
 * close) nest outside ndk_cq.lock (software queue, ib_cq polling, arm
 * state, attached QPs).  A slot is claimed by the poster and released by
 * the poll that translates its completion, both lock-free on the slot.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_QP_H
#define NDK_QP_H

#include <linux/bitfield.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>

#include "ndk_core.h"

/* ib_wcs one ib_poll_cq() call fetches */
#define NDK_CQ_POLL_BATCH	16

/* Arm state, ordered by the NDK merge rule: ANY > SOLICITED > ERRORS. */
enum ndk_cq_arm {
	NDK_CQ_ARM_NONE,
	NDK_CQ_ARM_ERRORS,
	NDK_CQ_ARM_SOLICITED,
	NDK_CQ_ARM_ANY,
};

/**
 * struct ndk_cq - NDK_CQ over a raw ib_cq (ib_create_cq(), consumer-polled)
 * @obj:          object base (parent: the adapter)
 * @ibcq:         the ib_core CQ
 * @depth:        depth asked for (create or last resize)
 * @comp_vector:  the device completion vector picked from the affinity
 * @resize_lock:  serializes resizes
 * @resizes:      asynchronous resizes queued or running, whose
 *                completions a blocking close waits for
 * @lock:         protects every field below, and polling @ibcq
 * @sw:           software queue: translated completions, drained before
 *                @ibcq by ndk_get_cq_results*(); a ring of @sw_cap
 * @sw_cap:       ring size; never shrinks
 * @sw_head:      index of the oldest entry
 * @sw_count:     entries in the ring
 * @qps:          attached QPs by ndk_qp.id (both of a QP's CQs hold it)
 * @last_qp:      the QP found in @qps last, or NULL: most completions are
 *                of the QP before them (under @lock; ndk_cq_detach()
 *                clears it)
 * @wc:           ib_poll_cq() buffer
 * @notify:       consumer's notification callback and its context
 * @notify_context: its context
 * @arm:          enum ndk_cq_arm, merged arms not yet satisfied
 * @failed:       the CQ is dead (overrun or device error): its status
 * @failure_reported: @failed was delivered to a notification
 * @fires:        SUCCESS notifications waiting for their callback
 * @fire_status:  error notification waiting for its callback, or 0
 * @dying:        destroy started: no notification is queued any more
 * @closed:       the consumer closed the CQ: no notification callback
 *                runs any more (ndk_close_cq())
 * @dev_armed:    the ib_cq was ever armed: its driver may have a
 *                completion callback pending (ndk_cq_quiesce())
 * @fence_mark:   the first fence that started after the last QP was
 *                detached (ndk_cq_detach()); 0 if none ever was
 * @notify_work:  delivers notifications one at a time (serialized)
 * @notify_wait:  woken when @running is cleared (ndk_close_cq(), destroy)
 * @running:      a deliverer (@notify_work, or the completion handler of
 *                a direct CQ) is running the callbacks; another fire
 *                only counts, the deliverer picks it up
 * @direct:       notifications satisfied by the completion handler are
 *                delivered from it (ndk_cq_set_direct_notification())
 * @was_armed:    ndk_arm_cq() was called: too late to choose @direct
 * @reserved:     results the CQ is committed to hold: requests of its
 *                QPs posted and not yet polled, plus results in @sw and
 *                in @sink; never above @depth (ndk_cq_reserve()), so the
 *                ib_cq cannot overflow
 * @marker:       1 while a QP's drain marker (its close's or its flush's)
 *                holds the ib_cq's spare entry (NDK_CQ_SPARE)
 * @unsig:        requests of its QPs posted unsignaled and not yet
 *                released, each holding a reservation until a later
 *                completion retires it: kept under half @depth
 *                (ndk_cq_unsignal()), so the CQ always has room for
 *                signaled results that retire them
 * @defer_direct: calls in progress that may make the device complete
 *                into the ib_cq from the caller's thread (a QP of the CQ
 *                moved to the error state or destroyed): meanwhile the
 *                completion handler leaves notifications to @notify_work
 *                (ndk_qp_defer_direct())
 * @sink:         where results go as they arrive, or NULL
 *                (ndk_cq_set_sink())
 * @sink_held:    results pushed to @sink that its reader has not taken
 * @fill_work:    moves the rest of the ib_cq to @sink when a fill from
 *                the completion handler used up its rounds
 *                (ndk_cq_sink_fill_locked())
 */
struct ndk_cq {
	struct ndk_obj obj;
	struct ib_cq *ibcq;
	u32 depth;
	u32 comp_vector;
	struct mutex resize_lock; /* serializes resizes */
	atomic_t resizes;
	spinlock_t lock; /* see above */
	struct ndk_result_ex *sw;
	u32 sw_cap;
	u32 sw_head;
	u32 sw_count;
	struct xarray qps;
	struct ndk_qp *last_qp;
	struct ib_wc wc[NDK_CQ_POLL_BATCH];
	ndk_fn_cq_notification_callback notify;
	void *notify_context;
	u8 arm;
	s32 failed;
	bool failure_reported;
	u32 fires;
	s32 fire_status;
	bool dying;
	bool closed;
	bool dev_armed;
	u64 fence_mark;
	struct work_struct notify_work;
	wait_queue_head_t notify_wait;
	bool running;
	bool direct;
	bool was_armed;
	atomic_t reserved;
	atomic_t marker;
	atomic_t unsig;
	atomic_t defer_direct;
	struct ndk_cq_sink *sink;
	u32 sink_held;
	struct work_struct fill_work;
};

/* The work request of an initiator slot, by opcode. */
union ndk_send_wr {
	struct ib_send_wr wr;		/* SEND*, LOCAL_INV */
	struct ib_rdma_wr rdma;		/* RDMA_READ*, RDMA_WRITE */
	struct ib_reg_wr reg;		/* REG_MR */
};

/**
 * struct ndk_swr - one initiator queue slot
 * @w:       the work request, kept until posted (DEFER chains)
 * @sge:     its SGE array (the QP's initiator SGE limit, at least one)
 * @request_context: the consumer's RequestContext
 * @fr:      FAST_REGISTER, BIND, INVALIDATE: the registration the request
 *           changes, told of the outcome (holds a reference on its owner)
 * @key:     with @fr: the key the request registers or invalidates
 * @seq:     the claim's position (ndk_qp.sq_prod when claimed), written
 *           before @busy is set
 * @type:    enum ndk_operation_type
 * @gen:     claims of the slot so far, modulo what the wr_id carries;
 *           written before @busy is set
 * @silent:  NDK_OP_FLAG_SILENT_SUCCESS: no result on success
 * @unsignaled: posted without IB_SEND_SIGNALED (a silent request): on
 *           success it is retired by the next completion behind it
 * @busy:    claimed by a post, released when its completion is translated
 *           or it is retired
 */
struct ndk_swr {
	union ndk_send_wr w;
	struct ib_sge *sge;
	void *request_context;
	struct ndk_fr *fr;
	u32 key;
	u32 seq;
	u16 type;
	u16 gen;
	bool silent;
	bool unsignaled;
	bool busy;
};

/**
 * struct ndk_sreq - an initiator request as a post function received it
 * @request_context: the consumer's RequestContext
 * @sgl:      SGEs (none for registration requests)
 * @nsge:     SGE count
 * @flags:    NDK_OP_FLAG_*
 * @allowed:  the flags this request type accepts
 * @type:     enum ndk_operation_type of its result
 * @opcode:   the ib_wr_opcode posted
 * @remote_address: RDMA_READ/WRITE: the peer's address
 * @remote_token:   RDMA_READ/WRITE: the peer's token; SEND_WITH_INV: the
 *            token to invalidate
 * @ibmr:     REG_MR: the MR, already mapped
 * @access:   REG_MR: IB access flags
 * @key:      REG_MR: the new key; LOCAL_INV: the key to invalidate
 * @fr:       REG_MR, LOCAL_INV: see struct ndk_swr
 */
struct ndk_sreq {
	void *request_context;
	const struct ndk_sge *sgl;
	u32 nsge;
	u32 flags;
	u32 allowed;
	u16 type;
	enum ib_wr_opcode opcode;
	u64 remote_address;
	u32 remote_token;
	struct ib_mr *ibmr;
	int access;
	u32 key;
	struct ndk_fr *fr;
};

/**
 * struct ndk_rwr - one receive queue slot
 * @request_context: the consumer's RequestContext
 * @gen:     claims of the slot so far, as for struct ndk_swr
 * @busy:    claimed by a post, released when its completion is translated
 */
struct ndk_rwr {
	void *request_context;
	u16 gen;
	bool busy;
};

/**
 * struct ndk_qp - NDK_QP (an RC queue pair)
 * @obj:        object base (parent: the PD; also holds both CQs)
 * @ibqp:       the ib_core QP, created with ib_create_qp() on the PD
 * @qp_context: the consumer's QPContext, reported in every NDK_RESULT
 * @connected:  set by the connector once established, cleared on
 *              disconnect; read locklessly on the post path
 * @claimed:    1 while a connector holds the QP (from ndk_connect() or
 *              ndk_accept() until that connector's close): one QP, one
 *              connector
 * @id:         key in both CQs' @qps and high half of every wr_id
 * @pd:         the PD (for its local DMA lkey)
 * @rcq:        receive CQ
 * @scq:        initiator CQ
 * @sq_depth:   initiator requests outstanding at most (the
 *              InitiatorQueueDepth asked for, the ib_qp's max_send_wr)
 * @rq_depth:   receives outstanding at most (the ReceiveQueueDepth asked
 *              for, the ib_qp's max_recv_wr)
 * @sq_ring:    initiator slots: @sq_depth rounded up to a power of two,
 *              so that the slot of a position (position & (@sq_ring - 1))
 *              goes on in order when the u32 position wraps
 * @rq_ring:    receive slots, likewise
 * @max_ssge:   MaxInitiatorRequestSge asked for
 * @max_rsge:   MaxReceiveRequestSge asked for
 * @max_read_sge: SGE limit of reads: @max_ssge within the adapter's
 * @inline_size: InlineDataSize asked for
 * @max_transfer: the adapter's MaxTransferLength (U32_MAX when the port
 *              did not say): the bytes of all SGEs of one request together
 * @read_inv:   the adapter supports RDMA_READ_LOCAL_INVALIDATE
 * @sq_lock:    protects @sq_prod, @sq_posted, @flushed against ndk_flush()
 *              and close (the consumer serializes the posts themselves)
 * @sq_prod:    slots claimed so far
 * @sq_posted:  slots handed to the device (or completed in software); the
 *              slots from @sq_posted to @sq_prod are the DEFER chain
 * @sq_outstanding: claimed slots not yet released
 * @sq_unsig_run: unsignaled requests posted since the last signaled one
 *              (under @sq_lock; counted again from the slots when the
 *              device refuses a post, ndk_sq_unsig_tail())
 * @sq_cons:    position after the last initiator completion translated;
 *              the unsignaled slots before it are retired (under the
 *              initiator CQ's lock)
 * @sq_marker:  a drain marker (the close's or the flush's) is posted and
 *              not yet translated
 * @sq_marker_end: position after the last request the marker follows
 *              (@sq_posted when it was posted, under @sq_lock): the
 *              slots its completion retires
 * @sq:         initiator slots
 * @sq_sge:     the SGE arrays of @sq, one allocation
 * @inline_buf: bounce buffer of @inline_size bytes for INLINE requests
 * @rq_lock:    protects @rq_prod and posting receives against ndk_flush()
 * @rq_prod:    receive slots claimed so far
 * @rq_outstanding: claimed receive slots not yet released
 * @rq:         receive slots
 * @rq_sge:     SGE array of a receive being posted (under @rq_lock)
 * @flushed:    ndk_flush() or close ran: later requests complete CANCELLED
 *              in software
 * @flush_queued: the move to IB_QPS_ERR is queued on @flush_work
 * @flush_deadline: once the QP is in the error state (0 before): until
 *              when @flush_work tries to post the drain marker
 * @flush_scan: the first send slot that may still hold an unsignaled
 *              request to retire (ndk_sq_next_unsignaled()): each retry of
 *              @flush_work looks on from there, so that its retries read
 *              each slot about once in all
 * @flush_work: moves the QP to IB_QPS_ERR (ib_modify_qp() may sleep),
 *              then posts the drain marker, coming back while the CQ's
 *              spare entry is taken
 */
struct ndk_qp {
	struct ndk_obj obj;
	struct ib_qp *ibqp;
	void *qp_context;
	bool connected;
	atomic_t claimed;

	u32 id;
	struct ndk_pd *pd;
	struct ndk_cq *rcq;
	struct ndk_cq *scq;
	u32 sq_depth;
	u32 rq_depth;
	u32 sq_ring;
	u32 rq_ring;
	u32 max_ssge;
	u32 max_rsge;
	u32 max_read_sge;
	u32 inline_size;
	u32 max_transfer;
	bool read_inv;

	spinlock_t sq_lock; /* see above */
	u32 sq_prod;
	u32 sq_posted;
	atomic_t sq_outstanding;
	u32 sq_unsig_run;
	u32 sq_cons;
	bool sq_marker;
	u32 sq_marker_end;
	struct ndk_swr *sq;
	struct ib_sge *sq_sge;
	void *inline_buf;

	spinlock_t rq_lock; /* see above */
	u32 rq_prod;
	atomic_t rq_outstanding;
	struct ndk_rwr *rq;
	struct ib_sge *rq_sge;

	bool flushed;
	bool flush_queued;
	u32 flush_scan;
	unsigned long flush_deadline;
	struct delayed_work flush_work;
};

static inline void ndk_qp_set_connected(struct ndk_qp *qp, bool connected)
{
	WRITE_ONCE(qp->connected, connected);
}

/*
 * wr_id: QP id in the high half, bit 31 for the receive queue, in bits
 * 21-30 the slot's claim count (ndk_swr.gen, ndk_rwr.gen), the slot in
 * bits 0-20 (rxe offers 2^20 entries).  The count tells a completion of
 * the slot's current request from a second completion of an earlier one:
 * 6.1's siw flushes a READ that is queued for sending from its ORQ and
 * again from its send queue (siw_sq_flush()), and a translation must
 * neither give a result twice nor release a slot a later request holds.
 * The close's drain marker (ndk_qp_drain()) names the highest slot
 * number, which no slot has: queues are at most NDK_QP_DEPTH_MAX deep,
 * and their slot rings, rounded up to powers of two, at most 2^20 slots.
 */
#define NDK_WRID_RECV		BIT_ULL(31)
#define NDK_WRID_GEN		GENMASK_ULL(30, 21)
#define NDK_WRID_SLOT_MASK	GENMASK_ULL(20, 0)
#define NDK_WRID_MARKER		NDK_WRID_SLOT_MASK
#define NDK_QP_DEPTH_MAX	((u32)BIT(20))

static inline u64 ndk_wrid(const struct ndk_qp *qp, bool recv, u32 slot,
			   u16 gen)
{
	return (u64)qp->id << 32 | (recv ? NDK_WRID_RECV : 0) |
	       FIELD_PREP(NDK_WRID_GEN, gen) | slot;
}

/* The next claim count of a slot, as the wr_id carries it. */
static inline u16 ndk_wrid_next_gen(u16 gen)
{
	return (gen + 1) & FIELD_MAX(NDK_WRID_GEN);
}

/*
 * ib_post_send() and ib_post_recv() calls of ndk.ko on consumer QPs in
 * progress on this CPU.  siw completes a request posted to a QP in the
 * error state inside the post (siw_sq_flush_wr(), siw_rq_flush_wr()),
 * and its completion handler runs there, with the QP's sq_lock or
 * rq_lock held: ndk_cq_comp_handler() leaves the notifications it
 * satisfies then to the CQ's work item, so that a direct callback never
 * runs inside the consumer's post (ndk_cq_set_direct_notification()).
 */
DECLARE_PER_CPU(unsigned int, ndk_cq_posting);

/* Around every ib_post_send()/ib_post_recv() on a consumer's QP. */
static inline void ndk_post_begin(void)
{
	/* Under sq_lock/rq_lock already, the drain marker's post too. */
	preempt_disable();
	this_cpu_inc(ndk_cq_posting);
}

static inline void ndk_post_end(void)
{
	this_cpu_dec(ndk_cq_posting);
	preempt_enable();
}

/* ndk_cq.c */
int ndk_cq_attach(struct ndk_cq *cq, struct ndk_qp *qp);
void ndk_cq_detach(struct ndk_cq *cq, struct ndk_qp *qp);
void ndk_cq_push_locked(struct ndk_cq *cq, const struct ndk_result_ex *res);
void ndk_cq_notify_locked(struct ndk_cq *cq);
u32 ndk_cq_drain(struct ndk_cq *cq);
bool ndk_cq_failed(struct ndk_cq *cq);
bool ndk_cq_reserve_slow(struct ndk_cq *cq);

/*
 * Every request takes a reservation and every result gives it back:
 * inline, for the data path pays a call per function (performance.md,
 * "F1").
 */

/*
 * Take one of @cq's results.  A resize that lowers the depth meanwhile
 * (ndk_cq_resize()) either sees this reservation or is seen by
 * the second check: the cmpxchg and its smp_mb() order the two sides.
 */
static inline bool ndk_cq_try_reserve(struct ndk_cq *cq)
{
	int cur = atomic_read(&cq->reserved);

	do {
		if (cur >= (int)READ_ONCE(cq->depth))
			return false;
	} while (!atomic_try_cmpxchg(&cq->reserved, &cur, cur + 1));
	if (unlikely(cur >= (int)READ_ONCE(cq->depth))) {
		atomic_dec(&cq->reserved);
		return false;
	}
	return true;
}

/**
 * ndk_cq_reserve() - reserve room for the result of a request to be posted
 * @cq: the CQ the request's result goes to
 *
 * Context: any, not under @cq->lock.
 * Return: true when the CQ can hold one more result; false when it is
 * committed to its depth already (the post must fail inline).
 */
static inline bool ndk_cq_reserve(struct ndk_cq *cq)
{
	return likely(ndk_cq_try_reserve(cq)) || ndk_cq_reserve_slow(cq);
}

/**
 * ndk_cq_unreserve() - release reservations of ndk_cq_reserve()
 * @cq: the CQ
 * @n:  how many: results polled or dropped, requests never posted or
 *      resolved without a completion
 *
 * Context: any.
 */
static inline void ndk_cq_unreserve(struct ndk_cq *cq, u32 n)
{
	if (n)
		atomic_sub(n, &cq->reserved);
}

bool ndk_cq_unsignal(struct ndk_cq *cq);

/* ndk_qp.c */
bool ndk_qp_translate(struct ndk_qp *qp, const struct ib_wc *wc,
		      struct ndk_result_ex *res);
s32 ndk_qp_post(struct ndk_qp *qp, const struct ndk_sreq *req);
void ndk_qp_defer_direct(struct ndk_qp *qp);
void ndk_qp_undefer_direct(struct ndk_qp *qp);
void ndk_qp_retire_unsignaled(struct ndk_qp *qp);
struct dentry;
void ndk_qp_debugfs_init(struct dentry *dir);
/* ndk_cq.c */
void ndk_cq_debugfs_init(struct dentry *dir);

#endif /* NDK_QP_H */
