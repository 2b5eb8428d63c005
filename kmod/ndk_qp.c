// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK queue pairs (NDK_QP) over RC ib_qps, and the data path.
 *
 * Slots: each queue has a ring of slots, one per request the consumer may
 * have outstanding (its queue depth, rounded up to a power of two: see
 * Positions).  A post claims the next slot (the queue is full when its
 * depth of requests is outstanding or that slot is still busy), records
 * what the result needs and names the slot in the wr_id; the CQ poll that
 * translates the completion releases it.  A failed silent request gives a
 * result, a successful one does not.
 *
 * Unsignaled requests: a SILENT_SUCCESS initiator request is posted
 * without IB_SEND_SIGNALED, as raw verbs consumers post theirs, unless
 * half the queue's depth of such requests went unsignaled in a row: that
 * one is signaled, so no more than half the queue ever waits for a
 * completion behind it.  The initiator CQ keeps the same bound over all
 * its QPs (ndk_cq_unsignal()): an unsignaled request holds its result's
 * reservation until it is retired, and a CQ whose room they all held could
 * take no request to retire them.  An RC send queue completes in order, so
 * when the completion of the slot at position p is translated, every
 * unsignaled slot still claimed at a position before p has succeeded (a
 * failure or a flush gives a completion of its own): ndk_sq_retire()
 * releases them and tells their registrations, under the initiator CQ's
 * lock like every translation.  Reads are the exception: always posted
 * signaled, silent or not.  siw (6.1) completes a READ only when its
 * response arrives (siw_rdmap_complete()), but the sends, writes and local
 * operations posted after it as soon as they are transmitted
 * (siw_qp_sq_process()), so a later completion does not prove a read done:
 * retired by one, its failure or flush would come later, its result lost
 * and its ib_wc in an ib_cq entry nothing reserves any more.  A silent
 * read's success is dropped when it is translated, as any signaled silent
 * request's, and a completion translated after a later one's retires
 * nothing (ndk_qp_translate()).  Each slot records its position (@seq,
 * written before @busy), so a slot released out of order and claimed again
 * by a later position is never taken for an older one.  An unsignaled
 * request that nothing followed would be retired by nothing: a flush and a
 * close post a signaled marker after moving the QP to the error state
 * (ndk_qp_flush_work(), ndk_qp_drain(), as ib_drain_sq() does), whose
 * flush completion comes after every request of the queue and retires the
 * rest.  A post the device refuses counts the run of unsignaled requests
 * again from the slots (ndk_sq_unsig_tail()).
 *
 * DEFER: a deferred initiator request stays in its slot, chained to the
 * previous one, until a request without DEFER (or an INLINE one, whose
 * data must be copied while the call runs) posts the whole chain with one
 * ib_post_send().  Any inline failure of an initiator request first posts
 * the chain.  Deferred requests the device refuses complete in software
 * with the refusal's status, since their posts already returned success.
 * A refusal that names no request (siw) leaves them all to the device,
 * which a flush of the QP makes complete.
 *
 * Flush and close: ndk_flush() marks the QP flushed, completes the
 * deferred chain with STATUS_CANCELLED in the initiator CQ's software
 * queue, and moves the QP to IB_QPS_ERR from a work item (ib_modify_qp()
 * may sleep), which makes the device flush what it holds.  Requests
 * posted afterwards complete CANCELLED in software.  Close does the same
 * inline, then waits until every claimed slot has come back, moving the
 * completions out of the ib_cqs into the software queues, before
 * ib_destroy_qp(): no completion of a destroyed QP is left in an ib_cq.
 * What a dead CQ lost, or the device never completed within the drain's
 * time, is resolved after ib_destroy_qp() (ndk_qp_resolve()): every
 * request's references are dropped, whatever happened to its completion.
 *
 * Capacity: a slot is claimed only with room reserved for its result in
 * its CQ (ndk_cq_reserve()); a CQ shared by QPs whose depths add up to
 * more than its own takes only what it can hold, the rest of the posts
 * fail inline with STATUS_INSUFFICIENT_RESOURCES.
 *
 * Positions: sq_prod, rq_prod and the positions slots record are u32
 * counters that wrap; a position's slot is position & (ring - 1), the
 * rings being the depths rounded up to powers of two, so that the slots
 * go on in order across the wrap (a depth of 6 taking position % 6 would
 * jump from slot 3 to slot 0 there, onto a slot still claimed, and an
 * unsignaled request in it would wait for a follower that can never be
 * claimed).  The depth itself is enforced by the outstanding counts.
 *
 * Parameters are checked before the connection state, so a bad request
 * fails STATUS_INVALID_PARAMETER on any QP.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ndk_mr.h"
#include "ndk_qp.h"
#include "ndk_trace.h"

/* How long a close waits for the device to flush a QP's requests. */
#define NDK_QP_DRAIN_TIMEOUT	(10 * HZ)

#define NDK_SEND_FLAGS	(NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | \
			 NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | \
			 NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER)
#define NDK_WRITE_FLAGS	(NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | \
			 NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER)
#define NDK_READ_FLAGS	(NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | \
			 NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE | \
			 NDK_OP_FLAG_DEFER)

static atomic_t ndk_qp_next_id = ATOMIC_INIT(0);

/*
 * NTSTATUS of a completion: IB_WC_WR_FLUSH_ERR is NDK's STATUS_CANCELLED, the
 * rest follows ND2's completion statuses (NDK defines no other).
 */
static s32 ndk_wc_status(enum ib_wc_status status, bool recv)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return STATUS_SUCCESS;
	case IB_WC_WR_FLUSH_ERR:
		return STATUS_CANCELLED;
	case IB_WC_LOC_LEN_ERR:
		return recv ? STATUS_BUFFER_OVERFLOW : STATUS_DATA_OVERRUN;
	case IB_WC_LOC_PROT_ERR:
	case IB_WC_LOC_ACCESS_ERR:
	case IB_WC_MW_BIND_ERR:
		return STATUS_ACCESS_VIOLATION;
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_REM_INV_REQ_ERR:
	case IB_WC_REM_OP_ERR:
	case IB_WC_REM_ABORT_ERR:
		return STATUS_REMOTE_RESOURCES;
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
	case IB_WC_RESP_TIMEOUT_ERR:
		return STATUS_IO_TIMEOUT;
	case IB_WC_LOC_QP_OP_ERR:
	case IB_WC_BAD_RESP_ERR:
		return STATUS_INVALID_DEVICE_REQUEST;
	default:
		return STATUS_INTERNAL_ERROR;
	}
}

/*
 * The data path's fault-injection hooks (debugfs, root only), each a
 * RequestContext, 0 for off, so tests reach a device's failures on every
 * device: ndk/fail_qp_post refuses a chain whose first request carries it
 * whole, as a device refuses a request (-EINVAL, nothing posted);
 * ndk/fail_completion reports the successful completion of the request
 * that carries it as failed (IB_WC_LOC_QP_OP_ERR), as rxe reports a
 * REG_MR it ran once already and runs again when it retries the requests
 * before it.
 */
static u64 ndk_fail_qp_post;
static u64 ndk_fail_completion;

/* The initiator slot of a position, and its number. */
static u32 ndk_sq_slot(const struct ndk_qp *qp, u32 pos)
{
	return pos & (qp->sq_ring - 1);
}

static struct ndk_swr *ndk_sq_at(struct ndk_qp *qp, u32 pos)
{
	return &qp->sq[ndk_sq_slot(qp, pos)];
}

static void ndk_sq_release(struct ndk_qp *qp, struct ndk_swr *s)
{
	if (s->unsignaled)
		atomic_dec(&qp->scq->unsig);
	/* Pairs with the claim's acquire: the slot is read before reuse. */
	smp_store_release(&s->busy, false);
	atomic_dec(&qp->sq_outstanding);
}

/* A registration request is done: tell its registration the outcome. */
static void ndk_sq_finish(struct ndk_swr *s, s32 status)
{
	if (s->fr) {
		ndk_fr_done(s->fr, s->type, status, s->key);
		s->fr = NULL;
	}
}

/*
 * Retire the unsignaled slots claimed at positions from qp->sq_cons up to
 * @end (excluded): the device completed a later request of the queue, so
 * they succeeded.  Only the last sq_ring positions can still be claimed.
 * Under the initiator CQ's lock.
 */
static void ndk_sq_retire(struct ndk_qp *qp, u32 end)
{
	u32 pos = end - min(end - qp->sq_cons, qp->sq_ring);
	u32 n = 0;
	struct ndk_swr *s;

	lockdep_assert_held(&qp->scq->lock);
	for (; pos != end; pos++) {
		s = ndk_sq_at(qp, pos);
		/* Pairs with the claim's release: @seq is the claim's. */
		if (!smp_load_acquire(&s->busy) || s->seq != pos ||
		    !s->unsignaled)
			continue;
		ndk_sq_finish(s, STATUS_SUCCESS);
		ndk_sq_release(qp, s);
		n++;
	}
	qp->sq_cons = end;
	if (n)
		ndk_cq_unreserve(qp->scq, n);
}

/* The close's marker is gone: the initiator CQ's spare entry is free. */
static void ndk_qp_unmark(struct ndk_qp *qp)
{
	WRITE_ONCE(qp->sq_marker, false);
	atomic_set(&qp->scq->marker, 0);
}

static void ndk_rq_release(struct ndk_qp *qp, struct ndk_rwr *r)
{
	/* Pairs with the claim's acquire: the slot is read before reuse. */
	smp_store_release(&r->busy, false);
	atomic_dec(&qp->rq_outstanding);
}

/**
 * ndk_qp_translate() - the NDK result of one of the QP's completions
 * @qp:  the QP, attached to the CQ the completion came from
 * @wc:  the completion
 * @res: receives the result
 *
 * Releases the request's slot.  The operation type comes from the slot,
 * since @wc->opcode is undefined on failures.
 *
 * Context: any, under the CQ's lock.
 * Return: false when the request gives no result (silent success, or a
 * wr_id that names no slot).
 */
bool ndk_qp_translate(struct ndk_qp *qp, const struct ib_wc *wc,
		      struct ndk_result_ex *res)
{
	bool recv = wc->wr_id & NDK_WRID_RECV;
	u32 slot = wc->wr_id & NDK_WRID_SLOT_MASK;
	u16 gen = FIELD_GET(NDK_WRID_GEN, wc->wr_id);
	struct ndk_swr *s;
	struct ndk_rwr *r;
	bool keep;

	memset(res, 0, sizeof(*res));
	res->status = ndk_wc_status(wc->status, recv);
	res->qp_context = qp->qp_context;
	if (res->status)
		res->provider_error_code = wc->vendor_err;

	/* A result given back is unreserved when it is polled. */
	if (recv) {
		if (slot >= qp->rq_ring)
			return false;
		r = &qp->rq[slot];
		/* A second completion of a request (ndk_qp.h: wr_id). */
		if (!READ_ONCE(r->busy) || r->gen != gen)
			return false;
		res->request_context = r->request_context;
		res->type = NDK_OPERATION_TYPE_RECEIVE;
		/*
		 * A peer's RDMA write with immediate data: NDK has none, and
		 * the byte count is the write's, not what the receive holds.
		 */
		if (!res->status && wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
			res->status = STATUS_INVALID_DEVICE_REQUEST;
		if (!res->status) {
			res->bytes_transferred = wc->byte_len;
			if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
				res->type = NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE;
				res->type_specific_completion_output =
					wc->ex.invalidate_rkey;
				ndk_fr_remote_invalidated(qp,
							  wc->ex.invalidate_rkey);
			}
		}
		if (res->status)
			trace_ndk_completion_error(qp, res->type, wc->byte_len,
						   res->status, wc->vendor_err);
		ndk_rq_release(qp, r);
		return true;
	}

	if (slot == NDK_WRID_MARKER) {
		/* Posted by a flush or a close, behind what it retires. */
		if ((s32)(qp->sq_marker_end - qp->sq_cons) > 0)
			ndk_sq_retire(qp, qp->sq_marker_end);
		ndk_qp_unmark(qp);
		return false;
	}
	if (slot >= qp->sq_ring)
		return false;
	s = &qp->sq[slot];
	/* A second completion of a request (ndk_qp.h: wr_id). */
	if (!smp_load_acquire(&s->busy) || s->gen != gen)
		return false;
	/*
	 * siw completes a read after the requests behind it (file comment):
	 * a completion behind @sq_cons finds nothing unsignaled to retire
	 * before it, and must not take @sq_cons back.
	 */
	if ((s32)(s->seq - qp->sq_cons) >= 0) {
		/* Unsignaled requests before it, or none to retire? */
		if (s->seq != qp->sq_cons)
			ndk_sq_retire(qp, s->seq);
		qp->sq_cons = s->seq + 1;
	}
	res->request_context = s->request_context;
	res->type = s->type;
	if (unlikely(READ_ONCE(ndk_fail_completion)) && !res->status &&
	    (uintptr_t)s->request_context == ndk_fail_completion)
		res->status = ndk_wc_status(IB_WC_LOC_QP_OP_ERR, false);
	if (res->status)
		trace_ndk_completion_error(qp, res->type, wc->byte_len,
					   res->status, wc->vendor_err);
	keep = res->status || !s->silent;
	ndk_sq_finish(s, res->status);
	ndk_sq_release(qp, s);
	if (!keep)
		ndk_cq_unreserve(qp->scq, 1);
	return keep;
}

/*
 * Claim the next initiator slot; NULL when the queue is full (@sq_depth
 * requests outstanding, or the slot still claimed) or its CQ has no room
 * left for the result.
 */
static struct ndk_swr *ndk_sq_claim(struct ndk_qp *qp)
{
	struct ndk_swr *s = ndk_sq_at(qp, qp->sq_prod);

	if (atomic_read(&qp->sq_outstanding) >= qp->sq_depth)
		return NULL;
	/* Pairs with the release in ndk_sq_release(). */
	if (smp_load_acquire(&s->busy) || !ndk_cq_reserve(qp->scq))
		return NULL;
	s->seq = qp->sq_prod;
	s->gen = ndk_wrid_next_gen(s->gen);
	/* Pairs with ndk_sq_retire()'s and ndk_qp_translate()'s acquire. */
	smp_store_release(&s->busy, true);
	atomic_inc(&qp->sq_outstanding);
	qp->sq_prod++;
	return s;
}

/* Give back the slot claimed last, which never reached the device. */
static void ndk_sq_unclaim(struct ndk_qp *qp)
{
	struct ndk_swr *s;

	qp->sq_prod--;
	s = ndk_sq_at(qp, qp->sq_prod);
	s->fr = NULL;		/* the poster undoes what it changed */
	ndk_sq_release(qp, s);
	ndk_cq_unreserve(qp->scq, 1);
}

/*
 * Complete the claimed slots the device does not have (the DEFER chain)
 * in software with @status, and satisfy an arm of the initiator CQ.
 */
static void ndk_sq_complete_soft(struct ndk_qp *qp, s32 status)
{
	struct ndk_result_ex res = {
		.status = status,
		.qp_context = qp->qp_context,
	};
	struct ndk_cq *cq = qp->scq;
	unsigned long flags;
	struct ndk_swr *s;

	lockdep_assert_held(&qp->sq_lock);
	if (qp->sq_posted == qp->sq_prod)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	for (; qp->sq_posted != qp->sq_prod; qp->sq_posted++) {
		s = ndk_sq_at(qp, qp->sq_posted);
		res.request_context = s->request_context;
		res.type = s->type;
		ndk_cq_push_locked(cq, &res);
		ndk_sq_finish(s, status);
		ndk_sq_release(qp, s);
	}
	ndk_cq_notify_locked(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * The run of unsignaled requests the device holds at the end of its queue
 * (the slots before @sq_posted, now the first refused request, back to a
 * signaled or released one): what @sq_unsig_run must be after a refused
 * post.  ndk_sq_fill() counted the refused requests too, and a signaled
 * one reset the count: kept, the unsignaled requests before it would wait
 * behind more than half the queue, and repeated, the queue would fill
 * with unsignaled requests nothing retires, every post failing for good.
 * A retirement running meanwhile releases from the oldest up, so the
 * count can only be too high, which is safe.  Under sq_lock.
 */
static u32 ndk_sq_unsig_tail(struct ndk_qp *qp)
{
	u32 pos = qp->sq_posted, n = 0;
	struct ndk_swr *s;

	lockdep_assert_held(&qp->sq_lock);
	while (n < qp->sq_ring) {
		s = ndk_sq_at(qp, --pos);
		/* Pairs with the claim's release: @seq is the claim's. */
		if (!smp_load_acquire(&s->busy) || s->seq != pos ||
		    !READ_ONCE(s->unsignaled))
			break;
		n++;
	}
	return n;
}

/**
 * ndk_qp_debugfs_init() - the data path's debugfs files
 * @dir: ndk.ko's debugfs directory
 *
 * Context: module init.
 */
void ndk_qp_debugfs_init(struct dentry *dir)
{
	debugfs_create_x64("fail_qp_post", 0600, dir, &ndk_fail_qp_post);
	debugfs_create_x64("fail_completion", 0600, dir, &ndk_fail_completion);
}

/* Move the QP to the error state from ndk_qp_flush_work(), once. */
static void ndk_qp_queue_flush(struct ndk_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	if (qp->flush_queued)
		return;
	qp->flush_queued = true;
	ndk_obj_get(&qp->obj);	/* the close waits for the work */
	queue_delayed_work(ndk_wq, &qp->flush_work, 0);
}

/*
 * The device refused the chain ndk_sq_post_chain() posted, with @ret, at
 * @bad.  Under sq_lock.
 */
static s32 ndk_sq_post_refused(struct ndk_qp *qp, bool own, int ret,
			       const struct ib_send_wr *bad)
{
	s32 status;
	u32 i;

	/* The requests before @bad went to the device. */
	status = ndk_status_from_errno(ret);
	for (i = qp->sq_posted; i != qp->sq_prod; i++)
		if (&ndk_sq_at(qp, i)->w.wr == bad)
			break;
	if (i == qp->sq_prod) {
		/*
		 * A refusal that names none of them: siw 6.1 returns one after
		 * it queued the whole chain, when it cannot start a request at
		 * its queue's head (a fenced READ), which stays there.  The
		 * device may hold any of them, so all count as posted, and the
		 * QP moves to the error state: the device's flush completes
		 * each once.
		 */
		qp->sq_posted = qp->sq_prod;
		ndk_qp_queue_flush(qp);
		return STATUS_SUCCESS;
	}
	qp->sq_posted = i;
	qp->sq_unsig_run = ndk_sq_unsig_tail(qp);
	if (own)
		ndk_sq_unclaim(qp);
	ndk_sq_complete_soft(qp, status);
	return own ? status : STATUS_SUCCESS;
}

/*
 * Post the chain of claimed, unposted slots with one ib_post_send().  If
 * @own (the caller's request, the last slot) is given and does not reach
 * the device, it is given back and the refusal is returned; deferred
 * requests the device refuses complete in software with the refusal's
 * status.  Under sq_lock.  Inline: every request posts through it.
 */
static __always_inline s32 ndk_sq_post_chain(struct ndk_qp *qp, bool own)
{
	const struct ib_send_wr *bad = NULL;
	struct ndk_swr *first;
	u64 refuse;
	int ret;

	lockdep_assert_held(&qp->sq_lock);
	if (qp->sq_posted == qp->sq_prod)
		return STATUS_SUCCESS;
	first = ndk_sq_at(qp, qp->sq_posted);
	ndk_sq_at(qp, qp->sq_prod - 1)->w.wr.next = NULL;
	refuse = READ_ONCE(ndk_fail_qp_post);
	if (unlikely(refuse) && (uintptr_t)first->request_context == refuse) {
		ret = -EINVAL;
		bad = &first->w.wr;
	} else {
		ndk_post_begin();
		ret = ib_post_send(qp->ibqp, &first->w.wr, &bad);
		ndk_post_end();
	}
	if (likely(!ret)) {
		qp->sq_posted = qp->sq_prod;
		return STATUS_SUCCESS;
	}
	return ndk_sq_post_refused(qp, own, ret, bad);
}

/*
 * Reads complete out of order on siw: never unsignaled (file comment).
 * Nor are fast-registers, binds and invalidations: their own completion
 * is what says a key's registration ran (ndk_fr.c), so an invalidation
 * that comes before it frees nothing, and retiring them behind a later
 * request would make every peer's invalidation of a silent registration
 * come first.
 */
static bool ndk_sq_may_unsignal(const struct ndk_sreq *req)
{
	return (req->flags & NDK_OP_FLAG_SILENT_SUCCESS) && !req->fr &&
	       req->opcode != IB_WR_RDMA_READ &&
	       req->opcode != IB_WR_RDMA_READ_WITH_INV;
}

static void ndk_sq_fill(struct ndk_qp *qp, struct ndk_swr *s, u32 slot,
			const struct ndk_sreq *req)
{
	struct ib_send_wr *wr = &s->w.wr;
	u32 i, len = 0;

	/*
	 * The header whole, then each opcode's own fields below: no memset
	 * of the union (a string instruction, slow under emulation).
	 */
	*wr = (struct ib_send_wr){
		.wr_id = ndk_wrid(qp, false, slot, s->gen),
		.opcode = req->opcode,
		.sg_list = s->sge,
	};
	s->unsignaled = ndk_sq_may_unsignal(req) &&
			qp->sq_unsig_run + 1 < qp->sq_depth / 2 &&
			ndk_cq_unsignal(qp->scq);
	if (s->unsignaled) {
		qp->sq_unsig_run++;
	} else {
		qp->sq_unsig_run = 0;
		wr->send_flags = IB_SEND_SIGNALED;
	}
	if (req->flags & NDK_OP_FLAG_READ_FENCE)
		wr->send_flags |= IB_SEND_FENCE;
	if (req->flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT)
		wr->send_flags |= IB_SEND_SOLICITED;

	if (req->flags & NDK_OP_FLAG_INLINE) {
		/* Gathered here: may exceed the SGE limit, tokens ignored. */
		for (i = 0; i < req->nsge; i++) {
			memcpy(qp->inline_buf + len,
			       req->sgl[i].virtual_address, req->sgl[i].length);
			len += req->sgl[i].length;
		}
		wr->send_flags |= IB_SEND_INLINE;
		if (len) {
			s->sge[0].addr = (uintptr_t)qp->inline_buf;
			s->sge[0].length = len;
			s->sge[0].lkey = qp->pd->ibpd->local_dma_lkey;
			wr->num_sge = 1;
		}
	} else {
		for (i = 0; i < req->nsge; i++) {
			s->sge[i].addr = req->sgl[i].logical_address;
			s->sge[i].length = req->sgl[i].length;
			s->sge[i].lkey = req->sgl[i].memory_region_token;
		}
		wr->num_sge = req->nsge;
	}

	switch (req->opcode) {
	case IB_WR_SEND_WITH_INV:
		wr->ex.invalidate_rkey = req->remote_token;
		break;
	case IB_WR_RDMA_READ_WITH_INV:
		wr->ex.invalidate_rkey = req->sgl[0].memory_region_token;
		fallthrough;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_WRITE:
		s->w.rdma.remote_addr = req->remote_address;
		s->w.rdma.rkey = req->remote_token;
		break;
	case IB_WR_REG_MR:
		s->w.reg.mr = req->ibmr;
		s->w.reg.key = req->key;
		s->w.reg.access = req->access;
		break;
	case IB_WR_LOCAL_INV:
		wr->ex.invalidate_rkey = req->key;
		break;
	default:
		break;
	}

	s->request_context = req->request_context;
	s->fr = req->fr;
	s->key = req->key;
	s->type = req->type;
	s->silent = req->flags & NDK_OP_FLAG_SILENT_SUCCESS;
}

/* The bytes of @nsge SGEs together (at most 32 × 4 GiB: no overflow). */
static u64 ndk_sgl_bytes(const struct ndk_sge *sgl, u32 nsge)
{
	u64 total = 0;
	u32 i;

	for (i = 0; i < nsge; i++)
		total += sgl[i].length;
	return total;
}

static s32 ndk_sq_check(struct ndk_qp *qp, const struct ndk_sreq *req)
{
	if (req->flags & ~req->allowed)
		return STATUS_INVALID_PARAMETER;
	if (req->nsge && !req->sgl)
		return STATUS_INVALID_PARAMETER;
	if (req->flags & NDK_OP_FLAG_INLINE)
		return ndk_sgl_bytes(req->sgl, req->nsge) > qp->inline_size ?
		       STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
	if (req->nsge > (req->type == NDK_OPERATION_TYPE_READ ?
			 qp->max_read_sge : qp->max_ssge))
		return STATUS_INVALID_PARAMETER;
	if (req->opcode == IB_WR_RDMA_READ_WITH_INV && !req->nsge)
		return STATUS_INVALID_PARAMETER;
	/* MaxTransferLength: the SGEs of one request together. */
	if (ndk_sgl_bytes(req->sgl, req->nsge) > qp->max_transfer)
		return STATUS_INVALID_PARAMETER;
	return STATUS_SUCCESS;
}

/**
 * ndk_qp_depths() - how many requests a QP holds in its two queues
 * @qp: the QP
 *
 * A queue created with a depth of 0 holds one request.
 *
 * Context: any.
 * Return: the receive and the initiator queue's depths together.
 */
u32 ndk_qp_depths(const struct ndk_qp *qp)
{
	return qp->rq_depth + qp->sq_depth;
}

/**
 * ndk_qp_refuse_chain() - post the DEFER chain of a request that failed
 * @qp:     the QP
 * @status: the request's inline status, not STATUS_SUCCESS
 *
 * The slow half of ndk_qp_refuse().
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: @status.
 */
s32 ndk_qp_refuse_chain(struct ndk_qp *qp, s32 status)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (!qp->flushed)
		ndk_sq_post_chain(qp, false);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return status;
}

/**
 * ndk_qp_post() - every initiator request: check, claim, chain or post
 * @qp:  the QP
 * @req: the request
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: STATUS_SUCCESS when the request will complete (through the
 * device, or in software once flushed); otherwise its inline failure, and
 * it never completes.
 */
s32 ndk_qp_post(struct ndk_qp *qp, const struct ndk_sreq *req)
{
	unsigned long flags;
	struct ndk_swr *s;
	s32 status;
	u32 slot;

	status = ndk_sq_check(qp, req);
	if (!status && ndk_adapter_removed(qp->obj.adapter))
		status = STATUS_DEVICE_REMOVED;
	if (!status && !READ_ONCE(qp->connected))
		status = STATUS_CONNECTION_INVALID;
	if (status)
		return ndk_qp_refuse(qp, status);

	spin_lock_irqsave(&qp->sq_lock, flags);
	slot = ndk_sq_slot(qp, qp->sq_prod);
	s = ndk_sq_claim(qp);
	if (!s) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return ndk_qp_refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
	}
	ndk_sq_fill(qp, s, slot, req);
	if (qp->sq_prod - qp->sq_posted > 1)
		ndk_sq_at(qp, qp->sq_prod - 2)->w.wr.next = &s->w.wr;

	if (qp->flushed)
		ndk_sq_complete_soft(qp, STATUS_CANCELLED);
	else if (!(req->flags & NDK_OP_FLAG_DEFER) ||
		 (req->flags & NDK_OP_FLAG_INLINE))
		status = ndk_sq_post_chain(qp, true);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return status;
}

/* Mark the QP flushed and cancel the DEFER chain.  Any context. */
static void ndk_qp_cancel(struct ndk_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	spin_lock(&qp->rq_lock);
	qp->flushed = true;
	spin_unlock(&qp->rq_lock);
	ndk_sq_complete_soft(qp, STATUS_CANCELLED);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

/**
 * ndk_qp_defer_direct() - a call that may complete the QP's requests from
 * this thread begins
 * @qp: the QP
 *
 * siw flushes a QP's queues inside the ib_modify_qp() that moves it to
 * the error state (and inside iw_cm's disconnect and ib_destroy_qp(),
 * which move it there), calling its CQs' completion handler from the
 * caller's thread: a consumer's blocking close or disconnect.  Until
 * ndk_qp_undefer_direct(), the completion handler of the QP's CQs leaves
 * the notifications it satisfies to their work items, so a direct
 * callback never runs inside a consumer's call.  Notifications satisfied
 * meanwhile on other CPUs go to the work items too, which only delays
 * them.
 *
 * Context: any.
 */
void ndk_qp_defer_direct(struct ndk_qp *qp)
{
	atomic_inc(&qp->scq->defer_direct);
	if (qp->rcq != qp->scq)
		atomic_inc(&qp->rcq->defer_direct);
}

/**
 * ndk_qp_undefer_direct() - the call of ndk_qp_defer_direct() has returned
 * @qp: the QP
 *
 * Context: any.
 */
void ndk_qp_undefer_direct(struct ndk_qp *qp)
{
	if (qp->rcq != qp->scq)
		atomic_dec(&qp->rcq->defer_direct);
	atomic_dec(&qp->scq->defer_direct);
}

static void ndk_qp_to_error(struct ndk_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int ret;

	ndk_qp_defer_direct(qp);
	ret = ib_modify_qp(qp->ibqp, &attr, IB_QP_STATE);
	ndk_qp_undefer_direct(qp);
	if (ret)
		pr_err("ndk: QP %u: moving to the error state failed: %d\n",
		       qp->id, ret);
}

/*
 * The first slot from @from on whose request was posted unsignaled and is
 * not yet retired, or sq_ring when there is none.  Once the QP is flushed
 * or in the error state no post makes such a slot (after a flush it
 * completes in software; after a connection loss it is refused, or the
 * device flushes it with a completion of its own, which retires the slots
 * before it), and retirements only clear them: a caller that looks again
 * resumes from the slot it found last, so all its looks together read
 * each slot about once.
 */
static u32 ndk_sq_next_unsignaled(struct ndk_qp *qp, u32 from)
{
	for (; from < qp->sq_ring; from++)
		if (READ_ONCE(qp->sq[from].busy) &&
		    READ_ONCE(qp->sq[from].unsignaled))
			break;
	return from;
}

/*
 * Post a drain marker, a signaled zero-length write behind every request
 * of the queue (in the error state the device flushes it), into the
 * initiator CQ's spare entry.  False while the device has no room for it
 * yet or another QP's marker holds the spare entry; true once posted, or
 * when the device refuses it for good (a close's drain then ends at its
 * timeout and ndk_qp_resolve() resolves the rest).  Under @sq_lock, so
 * that the requests before @sq_marker_end are those the device took: a
 * post after a flush completes in software within its own lock section,
 * and a DEFER chain not yet posted (siw's refusal that names no request
 * queues the flush without cancelling it) lies from @sq_posted on.
 */
static bool ndk_qp_post_marker(struct ndk_qp *qp)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = ndk_wrid(qp, false, NDK_WRID_MARKER, 0),
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	unsigned long flags;
	int ret;

	if (atomic_cmpxchg(&qp->scq->marker, 0, 1))
		return false;
	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->sq_marker_end = qp->sq_posted;
	WRITE_ONCE(qp->sq_marker, true);
	ndk_post_begin();
	ret = ib_post_send(qp->ibqp, &wr.wr, NULL);
	ndk_post_end();
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (!ret)
		return true;
	ndk_qp_unmark(qp);
	if (ret == -ENOMEM)
		return false;
	pr_warn("ndk: QP %u: the drain marker was refused: %d\n",
		qp->id, ret);
	return true;
}

/*
 * After a flush, no completion retires the requests that succeeded
 * unsignaled: they would hold their slots and CQ reservations until the
 * close, and posts would fail once the ring came round to them instead of
 * completing CANCELLED.  A marker behind them retires them, once another
 * QP's marker gives the spare entry back: its completion is moved out of
 * the ib_cq here (within the drain's time; the close posts one
 * otherwise).  While the spare entry is taken the work comes back a tick
 * later rather than sleeping, so that the flushes of many QPs of one CQ
 * hold no ndk_wq worker meanwhile.  They take the spare entry in turn, a
 * tick or more each, within the drain's time from their first run: of
 * some thousands of QPs of one CQ flushed at once, the last give up (and
 * say so), their unsignaled slots held until the close.
 */
static void ndk_qp_flush_work(struct work_struct *work)
{
	struct ndk_qp *qp = container_of(to_delayed_work(work), struct ndk_qp,
					 flush_work);

	if (!qp->flush_deadline) {
		ndk_qp_to_error(qp);
		qp->flush_deadline = jiffies + NDK_QP_DRAIN_TIMEOUT ?: 1;
		qp->flush_scan = 0;
	}
	qp->flush_scan = ndk_sq_next_unsignaled(qp, qp->flush_scan);
	if (qp->flush_scan < qp->sq_ring && !ndk_qp_post_marker(qp)) {
		if (time_before(jiffies, qp->flush_deadline)) {
			ndk_cq_drain(qp->scq);
			queue_delayed_work(ndk_wq, &qp->flush_work, 1);
			return;
		}
		/* Its slots stay held until the close's marker. */
		pr_warn_ratelimited("ndk: QP %u: no room for the flush's drain marker within %d s\n",
				    qp->id, NDK_QP_DRAIN_TIMEOUT / HZ);
	}
	ndk_obj_put(&qp->obj);
}

/*
 * Wait until every claimed slot has come back, moving completions out of
 * the ib_cqs meanwhile; unsignaled requests come back behind the marker
 * (a flush's, or the close's once the flush's has given the spare entry
 * back).  A dead CQ may have lost completions: stop waiting for those.
 */
static void ndk_qp_drain(struct ndk_qp *qp)
{
	unsigned long deadline = jiffies + NDK_QP_DRAIN_TIMEOUT;
	bool marked = false;
	u32 scan = 0;

	for (;;) {
		if (!marked) {
			scan = ndk_sq_next_unsignaled(qp, scan);
			marked = scan == qp->sq_ring ||
				 ndk_qp_post_marker(qp);
		}
		ndk_cq_drain(qp->scq);
		if (qp->rcq != qp->scq)
			ndk_cq_drain(qp->rcq);
		if (((!atomic_read(&qp->sq_outstanding) &&
		      !READ_ONCE(qp->sq_marker)) ||
		     ndk_cq_failed(qp->scq)) &&
		    (!atomic_read(&qp->rq_outstanding) ||
		     ndk_cq_failed(qp->rcq)))
			return;
		if (time_after(jiffies, deadline)) {
			pr_err("ndk: QP %u closed with %d initiator and %d receive completions missing\n",
			       qp->id, atomic_read(&qp->sq_outstanding),
			       atomic_read(&qp->rq_outstanding));
			return;
		}
		usleep_range(200, 500);
	}
}

/*
 * After ib_destroy_qp() and the CQs' detach, nothing completes the QP's
 * requests any more: resolve the slots still claimed (completions a dead
 * CQ lost, or the drain gave up on) as STATUS_CANCELLED without a result,
 * dropping what each request holds and its reservation in its CQ.
 *
 * Whether such a request ran is unknown.  A fast-register or bind may
 * have made its key valid, so its registration is told it succeeded: it
 * stays in place, a window's parent counted (deregistration refused),
 * until an invalidation or the owner's teardown kills the key
 * (ndk_fr_detach()); an invalidation told it was cancelled leaves the
 * registration in place too.
 */
static void ndk_qp_resolve(struct ndk_qp *qp)
{
	u32 i, sq = 0, rq = 0;
	struct ndk_swr *s;

	for (i = 0; i < qp->sq_ring; i++) {
		s = &qp->sq[i];
		if (!READ_ONCE(s->busy))
			continue;
		ndk_sq_finish(s, s->type == NDK_OPERATION_TYPE_INVALIDATE ?
			      STATUS_CANCELLED : STATUS_SUCCESS);
		ndk_sq_release(qp, s);
		sq++;
	}
	for (i = 0; i < qp->rq_ring; i++) {
		if (!READ_ONCE(qp->rq[i].busy))
			continue;
		ndk_rq_release(qp, &qp->rq[i]);
		rq++;
	}
	/* A marker that did not come back gives the spare entry back. */
	if (qp->sq_marker)
		ndk_qp_unmark(qp);
	ndk_cq_unreserve(qp->scq, sq);
	ndk_cq_unreserve(qp->rcq, rq);
	if (sq || rq)
		pr_warn("ndk: QP %u: %u initiator and %u receive requests resolved without a completion\n",
			qp->id, sq, rq);
}

static void ndk_qp_free_slots(struct ndk_qp *qp)
{
	kvfree(qp->sq);
	kvfree(qp->sq_sge);
	kvfree(qp->rq);
	kfree(qp->rq_sge);
	kfree(qp->inline_buf);
}

static int ndk_qp_alloc_slots(struct ndk_qp *qp)
{
	u32 nsge = max(qp->max_ssge, 1U);
	u32 i;

	qp->sq = kvcalloc(qp->sq_ring, sizeof(*qp->sq), NDK_GFP_ARRAY);
	qp->sq_sge = kvcalloc(array_size(qp->sq_ring, nsge),
			      sizeof(*qp->sq_sge), NDK_GFP_ARRAY);
	qp->rq = kvcalloc(qp->rq_ring, sizeof(*qp->rq), NDK_GFP_ARRAY);
	qp->rq_sge = kcalloc(max(qp->max_rsge, 1U), sizeof(*qp->rq_sge),
			     GFP_KERNEL_ACCOUNT);
	qp->inline_buf = kzalloc(max(qp->inline_size, 1U), GFP_KERNEL_ACCOUNT);
	if (!qp->sq || !qp->sq_sge || !qp->rq || !qp->rq_sge ||
	    !qp->inline_buf) {
		ndk_qp_free_slots(qp);
		return -ENOMEM;
	}
	for (i = 0; i < qp->sq_ring; i++)
		qp->sq[i].sge = &qp->sq_sge[i * nsge];
	return 0;
}

/* INIT right away, so that receives can be posted before connecting. */
static int ndk_qp_to_init(struct ndk_qp *qp)
{
	struct ib_device *ibdev = ndk_ibdev(&qp->obj);
	u32 port = rdma_start_port(ibdev);
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = port,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				   IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE,
	};
	int mask = IB_QP_STATE | IB_QP_ACCESS_FLAGS;

	if (!rdma_protocol_iwarp(ibdev, port))
		mask |= IB_QP_PKEY_INDEX | IB_QP_PORT;
	return ib_modify_qp(qp->ibqp, &attr, mask);
}

static void ndk_qp_event(struct ib_event *event, void *context)
{
	struct ndk_qp *qp = context;

	pr_debug("ndk: QP %u: %s\n", qp->id, ib_event_msg(event->event));
}

static int ndk_qp_init(struct ndk_obj *obj)
{
	struct ndk_qp *qp = container_of(obj, struct ndk_qp, obj);
	struct ib_qp_init_attr attr = {
		.event_handler = ndk_qp_event,
		.qp_context = qp,
		.send_cq = qp->scq->ibcq,
		.recv_cq = qp->rcq->ibcq,
		.cap = {
			.max_send_wr = qp->sq_depth,
			.max_recv_wr = qp->rq_depth,
			/* An INLINE request is one gathered SGE (ndk_sq_fill()). */
			.max_send_sge = max(qp->max_ssge, qp->inline_size ? 1U : 0U),
			.max_recv_sge = qp->max_rsge,
			.max_inline_data = qp->inline_size,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int ret;

	ret = ndk_qp_alloc_slots(qp);
	if (ret)
		return ret;
	qp->id = atomic_inc_return(&ndk_qp_next_id);
	ret = ndk_cq_attach(qp->scq, qp);
	if (ret)
		goto err_free_slots;
	if (qp->rcq != qp->scq) {
		ret = ndk_cq_attach(qp->rcq, qp);
		if (ret)
			goto err_detach_scq;
	}
	qp->ibqp = ib_create_qp(qp->pd->ibpd, &attr);
	if (IS_ERR(qp->ibqp)) {
		ret = PTR_ERR(qp->ibqp);
		goto err_detach_rcq;
	}
	ret = ndk_qp_to_init(qp);
	if (ret)
		goto err_destroy_qp;
	return 0;

err_destroy_qp:
	ib_destroy_qp(qp->ibqp);
err_detach_rcq:
	if (qp->rcq != qp->scq)
		ndk_cq_detach(qp->rcq, qp);
err_detach_scq:
	ndk_cq_detach(qp->scq, qp);
err_free_slots:
	ndk_qp_free_slots(qp);
	return ret;
}

static void ndk_qp_destroy(struct ndk_obj *obj)
{
	struct ndk_qp *qp = container_of(obj, struct ndk_qp, obj);
	int ret;

	/* No post runs any more (NDK: not while closing); ndk_flush() can't. */
	ndk_qp_cancel(qp);
	ndk_qp_to_error(qp);
	ndk_qp_drain(qp);
	ndk_qp_defer_direct(qp);
	ret = ib_destroy_qp(qp->ibqp);
	ndk_qp_undefer_direct(qp);
	if (ret)
		pr_err("ndk: QP %u: ib_destroy_qp failed: %d\n", qp->id, ret);
	if (qp->rcq != qp->scq)
		ndk_cq_detach(qp->rcq, qp);
	ndk_cq_detach(qp->scq, qp);
	ndk_qp_resolve(qp);
	ndk_qp_free_slots(qp);
	kfree(qp);
}

/**
 * ndk_create_qp() - NdkCreateQp
 * @pd:                        the PD; its close is deferred until the QP's
 * @receive_cq:                CQ of receive completions
 * @initiator_cq:              CQ of initiator completions (may be the same)
 * @qp_context:                reported in every NDK_RESULT of the QP
 * @receive_queue_depth:       receives outstanding at most
 * @initiator_queue_depth:     initiator requests outstanding at most
 *                             (deferred ones included)
 * @max_receive_request_sge:   SGEs per receive at most
 * @max_initiator_request_sge: SGEs per send/write at most (reads: within
 *                             the adapter's max_read_request_sge too)
 * @inline_data_size:          bytes of an INLINE request at most
 * @create_completion:         NULL for a blocking create
 * @request_context:           passed to @create_completion
 * @qp:                        receives the QP on inline success
 *
 * An RC QP that holds both CQs (their closes are deferred until the QP's
 * close has completed).  It can take receives at once; initiator requests
 * need a connection.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INVALID_PARAMETER (a
 * depth, SGE count or inline size beyond the adapter's limits, or a CQ of
 * another adapter; inline even with a completion),
 * STATUS_INSUFFICIENT_RESOURCES, STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_qp(struct ndk_pd *pd, struct ndk_cq *receive_cq,
		  struct ndk_cq *initiator_cq, void *qp_context,
		  u32 receive_queue_depth, u32 initiator_queue_depth,
		  u32 max_receive_request_sge, u32 max_initiator_request_sge,
		  u32 inline_data_size,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_qp **qp)
{
	const struct ndk_adapter_info *info;
	struct ndk_qp *q;

	if (!receive_cq || !initiator_cq ||
	    receive_cq->obj.adapter != pd->obj.adapter ||
	    initiator_cq->obj.adapter != pd->obj.adapter)
		return STATUS_INVALID_PARAMETER;
	info = &pd->obj.adapter->info;
	if (receive_queue_depth > info->max_receive_queue_depth ||
	    initiator_queue_depth > info->max_initiator_queue_depth ||
	    max_receive_request_sge > info->max_receive_request_sge ||
	    max_initiator_request_sge > info->max_initiator_request_sge ||
	    inline_data_size > info->max_inline_data_size)
		return STATUS_INVALID_PARAMETER;

	q = kzalloc(sizeof(*q), ndk_gfp(create_completion));
	if (!q)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&q->obj, NDK_OBJECT_TYPE_QP, &pd->obj, ndk_qp_destroy);
	ndk_obj_hold(&q->obj, &initiator_cq->obj);
	if (receive_cq != initiator_cq)
		ndk_obj_hold(&q->obj, &receive_cq->obj);
	q->qp_context = qp_context;
	q->pd = pd;
	q->rcq = receive_cq;
	q->scq = initiator_cq;
	q->rq_depth = max(receive_queue_depth, 1U);
	q->sq_depth = max(initiator_queue_depth, 1U);
	q->rq_ring = roundup_pow_of_two(q->rq_depth);
	q->sq_ring = roundup_pow_of_two(q->sq_depth);
	q->max_rsge = max_receive_request_sge;
	q->max_ssge = max_initiator_request_sge;
	q->max_read_sge = info->max_read_request_sge ?
			  min(max_initiator_request_sge,
			      info->max_read_request_sge) :
			  max_initiator_request_sge;
	q->inline_size = inline_data_size;
	q->max_transfer = info->max_transfer_length ?: U32_MAX;
	q->read_inv = info->adapter_flags &
		      NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED;
	spin_lock_init(&q->sq_lock);
	spin_lock_init(&q->rq_lock);
	INIT_DELAYED_WORK(&q->flush_work, ndk_qp_flush_work);
	return ndk_obj_create(&q->obj, ndk_qp_init, create_completion,
			      request_context, (void **)qp);
}
EXPORT_SYMBOL_GPL(ndk_create_qp);

/**
 * ndk_close_qp() - NdkCloseQp
 * @qp:               the QP; no post on it may run or follow
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * Flushes the QP like ndk_flush(): its outstanding requests complete with
 * STATUS_CANCELLED and stay in the CQs after the QP is gone.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_qp(struct ndk_qp *qp, ndk_fn_close_completion close_completion,
		 void *request_context)
{
	return ndk_obj_close(&qp->obj, close_completion, request_context);
}
EXPORT_SYMBOL_GPL(ndk_close_qp);

/**
 * ndk_flush() - NdkFlush
 * @qp: the QP
 *
 * Cancels every outstanding request of both queues: each completes with
 * STATUS_CANCELLED (the consumer drains the CQs to see the flush done),
 * deferred requests not yet posted included.  Requests posted afterwards
 * complete CANCELLED too.  May run concurrently with a post on the QP.
 *
 * Context: any.
 */
void ndk_flush(struct ndk_qp *qp)
{
	ndk_qp_cancel(qp);
	ndk_qp_retire_unsignaled(qp);
}
EXPORT_SYMBOL_GPL(ndk_flush);

/**
 * ndk_qp_retire_unsignaled() - a QP stops: retire its unsignaled requests
 * @qp: the QP, in the error state or on its way there
 *
 * Queues the flush work (once per QP), which moves the QP to the error
 * state if it is not there yet and posts the drain marker behind the
 * unsignaled requests that succeeded, so that their slots and CQ
 * reservations come back without waiting for the close.  ndk_flush() and
 * a connection's end (ndk_cm.c) call it.
 *
 * Context: any.
 */
void ndk_qp_retire_unsignaled(struct ndk_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	ndk_qp_queue_flush(qp);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

/**
 * ndk_send() - NdkSend
 * @qp:              the QP, connected
 * @request_context: reported in the request's result
 * @sgl:             @nsge SGEs (registered memory; with
 *                   NDK_OP_FLAG_INLINE, kernel addresses copied now)
 * @nsge:            SGE count, within the QP's initiator SGE limit (with
 *                   INLINE: any count, total bytes within its inline size)
 * @flags:           NDK_OP_FLAG_SILENT_SUCCESS, _READ_FENCE,
 *                   _SEND_AND_SOLICIT_EVENT, _INLINE, _DEFER
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: STATUS_SUCCESS (a result follows unless silent and successful),
 * or with no result: STATUS_INVALID_PARAMETER, STATUS_DEVICE_REMOVED,
 * STATUS_CONNECTION_INVALID, STATUS_INSUFFICIENT_RESOURCES (queue full).
 */
s32 ndk_send(struct ndk_qp *qp, void *request_context,
	     const struct ndk_sge *sgl, u32 nsge, u32 flags)
{
	struct ndk_sreq req = {
		.request_context = request_context,
		.sgl = sgl,
		.nsge = nsge,
		.flags = flags,
		.allowed = NDK_SEND_FLAGS,
		.type = NDK_OPERATION_TYPE_SEND,
		.opcode = IB_WR_SEND,
	};

	return ndk_qp_post(qp, &req);
}
EXPORT_SYMBOL_GPL(ndk_send);

/**
 * ndk_send_and_invalidate() - NdkSendAndInvalidate
 * @qp:              the QP, connected
 * @request_context: reported in the request's result
 * @sgl:             SGEs, as for ndk_send()
 * @nsge:            SGE count, as for ndk_send()
 * @flags:           as for ndk_send()
 * @remote_token:    the peer's token to invalidate before its receive
 *                   completes
 *
 * The result's type is NDK_OPERATION_TYPE_SEND.
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: as ndk_send().
 */
s32 ndk_send_and_invalidate(struct ndk_qp *qp, void *request_context,
			    const struct ndk_sge *sgl, u32 nsge, u32 flags,
			    u32 remote_token)
{
	struct ndk_sreq req = {
		.request_context = request_context,
		.sgl = sgl,
		.nsge = nsge,
		.flags = flags,
		.allowed = NDK_SEND_FLAGS,
		.type = NDK_OPERATION_TYPE_SEND,
		.opcode = IB_WR_SEND_WITH_INV,
		.remote_token = remote_token,
	};

	return ndk_qp_post(qp, &req);
}
EXPORT_SYMBOL_GPL(ndk_send_and_invalidate);

/**
 * ndk_receive() - NdkReceive
 * @qp:              the QP; connected or not
 * @request_context: reported in the request's result
 * @sgl:             @nsge SGEs of registered memory
 * @nsge:            SGE count, within the QP's receive SGE limit
 *
 * Context: any; the consumer serializes the QP's receives.
 * Return: STATUS_SUCCESS (a result follows), or with no result:
 * STATUS_INVALID_PARAMETER, STATUS_DEVICE_REMOVED,
 * STATUS_INSUFFICIENT_RESOURCES (queue full).
 */
s32 ndk_receive(struct ndk_qp *qp, void *request_context,
		const struct ndk_sge *sgl, u32 nsge)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};
	struct ndk_result_ex res;
	struct ndk_cq *cq = qp->rcq;
	unsigned long flags;
	struct ndk_rwr *r;
	s32 status = STATUS_SUCCESS;
	u32 slot, i;
	int ret;

	if (nsge > qp->max_rsge || (nsge && !sgl) ||
	    ndk_sgl_bytes(sgl, nsge) > qp->max_transfer)
		return STATUS_INVALID_PARAMETER;
	if (ndk_adapter_removed(qp->obj.adapter))
		return STATUS_DEVICE_REMOVED;

	spin_lock_irqsave(&qp->rq_lock, flags);
	slot = qp->rq_prod & (qp->rq_ring - 1);
	r = &qp->rq[slot];
	if (atomic_read(&qp->rq_outstanding) >= qp->rq_depth ||
	    /* Pairs with the release in ndk_rq_release(). */
	    smp_load_acquire(&r->busy) || !ndk_cq_reserve(cq)) {
		status = STATUS_INSUFFICIENT_RESOURCES;
		goto out_unlock;
	}
	r->gen = ndk_wrid_next_gen(r->gen);
	WRITE_ONCE(r->busy, true);
	atomic_inc(&qp->rq_outstanding);
	qp->rq_prod++;
	r->request_context = request_context;

	if (qp->flushed) {
		memset(&res, 0, sizeof(res));
		res.status = STATUS_CANCELLED;
		res.qp_context = qp->qp_context;
		res.request_context = request_context;
		res.type = NDK_OPERATION_TYPE_RECEIVE;
		spin_lock(&cq->lock);
		ndk_cq_push_locked(cq, &res);
		ndk_rq_release(qp, r);
		ndk_cq_notify_locked(cq);
		spin_unlock(&cq->lock);
		goto out_unlock;
	}

	for (i = 0; i < nsge; i++) {
		qp->rq_sge[i].addr = sgl[i].logical_address;
		qp->rq_sge[i].length = sgl[i].length;
		qp->rq_sge[i].lkey = sgl[i].memory_region_token;
	}
	wr.wr_id = ndk_wrid(qp, true, slot, r->gen);
	wr.sg_list = qp->rq_sge;
	wr.num_sge = nsge;
	ndk_post_begin();
	ret = ib_post_recv(qp->ibqp, &wr, &bad);
	ndk_post_end();
	if (ret) {
		qp->rq_prod--;
		ndk_rq_release(qp, r);
		ndk_cq_unreserve(cq, 1);
		status = ndk_status_from_errno(ret);
	}
out_unlock:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	return status;
}
EXPORT_SYMBOL_GPL(ndk_receive);

/**
 * ndk_read() - NdkRead
 * @qp:              the QP, connected
 * @request_context: reported in the request's result
 * @sgl:             @nsge local sink SGEs
 * @nsge:            SGE count, within the QP's read SGE limit
 * @remote_address:  address in the peer's region
 * @remote_token:    the peer's remote token
 * @flags:           NDK_OP_FLAG_SILENT_SUCCESS, _READ_FENCE, _DEFER,
 *                   _RDMA_READ_LOCAL_INVALIDATE (ignored unless the
 *                   adapter advertises it: then the first SGE's token is
 *                   invalidated)
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: as ndk_send().
 */
s32 ndk_read(struct ndk_qp *qp, void *request_context,
	     const struct ndk_sge *sgl, u32 nsge, u64 remote_address,
	     u32 remote_token, u32 flags)
{
	struct ndk_sreq req = {
		.request_context = request_context,
		.sgl = sgl,
		.nsge = nsge,
		.flags = flags,
		.allowed = NDK_READ_FLAGS,
		.type = NDK_OPERATION_TYPE_READ,
		.opcode = IB_WR_RDMA_READ,
		.remote_address = remote_address,
		.remote_token = remote_token,
	};

	if ((flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) && qp->read_inv)
		req.opcode = IB_WR_RDMA_READ_WITH_INV;
	return ndk_qp_post(qp, &req);
}
EXPORT_SYMBOL_GPL(ndk_read);

/**
 * ndk_write() - NdkWrite
 * @qp:              the QP, connected
 * @request_context: reported in the request's result
 * @sgl:             @nsge local source SGEs (with NDK_OP_FLAG_INLINE,
 *                   kernel addresses copied now)
 * @nsge:            SGE count, as for ndk_send()
 * @remote_address:  address in the peer's region
 * @remote_token:    the peer's remote token
 * @flags:           NDK_OP_FLAG_SILENT_SUCCESS, _READ_FENCE, _INLINE,
 *                   _DEFER
 *
 * Context: any; the consumer serializes the QP's initiator requests.
 * Return: as ndk_send().
 */
s32 ndk_write(struct ndk_qp *qp, void *request_context,
	      const struct ndk_sge *sgl, u32 nsge, u64 remote_address,
	      u32 remote_token, u32 flags)
{
	struct ndk_sreq req = {
		.request_context = request_context,
		.sgl = sgl,
		.nsge = nsge,
		.flags = flags,
		.allowed = NDK_WRITE_FLAGS,
		.type = NDK_OPERATION_TYPE_WRITE,
		.opcode = IB_WR_RDMA_WRITE,
		.remote_address = remote_address,
		.remote_token = remote_token,
	};

	return ndk_qp_post(qp, &req);
}
EXPORT_SYMBOL_GPL(ndk_write);
