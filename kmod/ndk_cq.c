// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK completion queues (NDK_CQ) over a raw ib_cq.
 *
 * The ib_cq comes from ib_create_cq() with our own completion and event
 * handlers, never from ib_alloc_cq(): the consumer polls it with
 * ndk_get_cq_results*() and asks for notifications with ndk_arm_cq().
 *
 * Results: ndk_get_cq_results*() first drain the software queue (results
 * already translated: completions moved out of the ib_cq before a QP was
 * destroyed, and the synthetic ones of flushed requests that never
 * reached the device), then poll the ib_cq.  Each ib_wc is translated by
 * its QP (ndk_qp_translate()), looked up by the QP id in the wr_id; a QP
 * leaves the CQ's table only after it is destroyed, under the CQ lock, so
 * the lookup either finds a live QP or drops a stale completion.
 *
 * Notifications: an arm merges with an unsatisfied one (ANY > SOLICITED >
 * ERRORS).  ANY and SOLICITED arm the ib_cq (IB_CQ_NEXT_COMP or
 * IB_CQ_SOLICITED, with IB_CQ_REPORT_MISSED_EVENTS: completions already
 * waiting satisfy the arm at once); ERRORS arms nothing in the device and
 * is satisfied by a CQ error (IB_EVENT_CQ_ERR, or our software queue
 * overflowing): STATUS_BUFFER_OVERFLOW for an overrun, otherwise
 * STATUS_INTERNAL_ERROR.  A satisfied arm counts one notification, and
 * by default a single work item delivers them: the callbacks run in
 * process context.  A kernel consumer may opt in to direct delivery
 * (ndk_cq_set_direct_notification(), before its first arm): then an arm
 * satisfied by the completion handler is delivered from that handler's
 * context (softirq, or hard interrupt), as Windows calls it at
 * DISPATCH_LEVEL; arms satisfied inside ndk_arm_cq() and CQ errors still
 * go to the work item, so no callback ever runs inside the consumer's own
 * call.  Either way one deliverer at a time runs the callbacks: it sets
 * @running under the lock and loops until nothing is waiting (errors
 * first); a fire that finds it running only counts.  The consumer's close
 * marks the CQ closed (nothing is delivered any more) and, without a
 * completion, cancels the work and waits on @notify_wait until @running is
 * clear, so no callback runs once ndk_close_cq() returns, even when the
 * QPs still attached keep the CQ alive for a while; destroy does both
 * again after marking the CQ dying.
 *
 * Capacity: every request posted on a QP reserves one result in the CQ
 * its result goes to (ndk_cq_reserve()); the reservation is released
 * when the result is polled (or dropped: a silent success, a QP destroy
 * that resolved the request).  A post that would reserve more than the
 * CQ's depth fails inline with STATUS_INSUFFICIENT_RESOURCES, like a full
 * queue, so the device never gets more requests than the CQ can hold and
 * the ib_cq cannot overflow (rxe drops what does not fit; on siw, which
 * may complete a request twice, the ib_cq has two entries per result:
 * ndk_cq_entries()).
 *
 * Sink: a CQ given a sink (ndk_cq_set_sink(), the user path's completion
 * ring) keeps its ib_cq armed for every completion and moves each one,
 * translated, to the sink from the completion handler; the software
 * queue only holds what the sink had no room for.  The sink's results
 * keep their reservations until its reader has taken them
 * (ndk_cq_sink_reclaim_locked()), so a sink with room for the CQ's depth
 * never runs out of it.  An arm is then a software arm: ANY is satisfied
 * by the next result, SOLICITED by the next receive or failure (the
 * device cannot tell solicited receives apart once it is armed for every
 * completion), and both at once when the sink still holds results.
 *
 * Destroy quiesces the driver first (ndk_cq_quiesce()): Debian's 6.1 rxe
 * schedules a tasklet per notification and never kills it when the CQ is
 * destroyed, so a CQ that was ever armed waits for the tasklets pending
 * on every CPU before ib_destroy_cq() frees it.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/interrupt.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "ndk_qp.h"

DEFINE_PER_CPU(unsigned int, ndk_cq_posting);

/*
 * Fences started and completed (ndk_cq_quiesce()), under the mutex;
 * detaches read the first without it.  debugfs ndk/cq_fences shows the
 * second.
 */
static DEFINE_MUTEX(ndk_fence_mutex);
static u64 ndk_fences_started;
static u64 ndk_fences_done;

/* Take the next notification to deliver, errors first.  Lock held. */
static bool ndk_cq_take_locked(struct ndk_cq *cq, s32 *status)
{
	lockdep_assert_held(&cq->lock);
	if (cq->dying || cq->closed)
		return false;
	if (cq->fire_status) {
		*status = cq->fire_status;
		cq->fire_status = 0;
		return true;
	}
	if (cq->fires) {
		cq->fires--;
		*status = STATUS_SUCCESS;
		return true;
	}
	return false;
}

/*
 * Run the callback for every notification waiting, one at a time, until
 * none is left; nothing when another deliverer runs already (it picks them
 * up).  Called with the lock held (irqsave into *@flags), which is dropped
 * around each callback; returns with it held.  Clearing @running and the
 * wake-up happen under the lock: a waiter that sees @running clear may
 * free the CQ once it has the lock, and nothing here touches the CQ after
 * the caller unlocks it.
 */
static void ndk_cq_deliver_locked(struct ndk_cq *cq, unsigned long *flags)
{
	s32 status;

	lockdep_assert_held(&cq->lock);
	if (cq->running)
		return;
	cq->running = true;
	while (ndk_cq_take_locked(cq, &status)) {
		spin_unlock_irqrestore(&cq->lock, *flags);
		if (cq->notify)
			cq->notify(cq->notify_context, status);
		spin_lock_irqsave(&cq->lock, *flags);
	}
	cq->running = false;
	/* Waiters queue themselves under the lock (ndk_cq_wait_idle()). */
	if (waitqueue_active(&cq->notify_wait))
		wake_up(&cq->notify_wait);
}

/*
 * Count one notification with @status; the arm is used up.  @direct: the
 * caller (a direct CQ's completion handler) delivers it itself with
 * ndk_cq_deliver_locked() once this returns true; otherwise the work item
 * does.  Lock held.
 */
static bool ndk_cq_fire_locked(struct ndk_cq *cq, s32 status, bool direct)
{
	lockdep_assert_held(&cq->lock);
	cq->arm = NDK_CQ_ARM_NONE;
	if (cq->dying || cq->closed)
		return false;
	if (status)
		cq->fire_status = status;
	else
		cq->fires++;
	if (direct)
		return true;
	queue_work(ndk_wq, &cq->notify_work);
	return false;
}

static void ndk_cq_notify_work(struct work_struct *work)
{
	struct ndk_cq *cq = container_of(work, struct ndk_cq, notify_work);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	ndk_cq_deliver_locked(cq, &flags);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * Wait until no deliverer runs the callbacks: the CQ is closed or dying,
 * so none starts again.  Process context.
 */
static void ndk_cq_wait_idle(struct ndk_cq *cq)
{
	spin_lock_irq(&cq->lock);
	wait_event_lock_irq(cq->notify_wait, !cq->running, cq->lock);
	spin_unlock_irq(&cq->lock);
}

/* The CQ is dead: remember why and tell an armed consumer.  Lock held. */
static void ndk_cq_fail_locked(struct ndk_cq *cq, s32 status)
{
	lockdep_assert_held(&cq->lock);
	if (cq->failed)
		return;
	cq->failed = status;
	if (cq->arm != NDK_CQ_ARM_NONE) {
		cq->failure_reported = true;
		ndk_cq_fire_locked(cq, status, false);
	}
}

/* The sink's reader took results: release their reservations.  Locked. */
static void ndk_cq_sink_reclaim_locked(struct ndk_cq *cq)
{
	u32 n = min(cq->sink->consumed(cq->sink), cq->sink_held);

	cq->sink_held -= n;
	ndk_cq_unreserve(cq, n);
}

/* Hand @res to the sink; false when it has no room.  Lock held. */
static bool ndk_cq_sink_push_locked(struct ndk_cq *cq,
				    const struct ndk_result_ex *res)
{
	if (!cq->sink->push(cq->sink, res)) {
		ndk_cq_sink_reclaim_locked(cq);
		if (!cq->sink->push(cq->sink, res))
			return false;
	}
	cq->sink_held++;
	return true;
}

/**
 * ndk_cq_push_locked() - append a translated result to the software queue
 * @cq:  the CQ, its lock held
 * @res: the result
 *
 * A CQ with a sink hands it the result instead, behind what the software
 * queue holds already.  A full software queue is a CQ overrun (the
 * consumer's CQ is too small for its outstanding requests): the result
 * is lost and the CQ fails with STATUS_BUFFER_OVERFLOW.
 *
 * Context: any, under @cq->lock.
 */
void ndk_cq_push_locked(struct ndk_cq *cq, const struct ndk_result_ex *res)
{
	lockdep_assert_held(&cq->lock);
	if (cq->sink) {
		/* What the sink had no room for goes first. */
		while (cq->sw_count &&
		       ndk_cq_sink_push_locked(cq, &cq->sw[cq->sw_head])) {
			cq->sw_head = (cq->sw_head + 1) % cq->sw_cap;
			cq->sw_count--;
		}
		if (!cq->sw_count && ndk_cq_sink_push_locked(cq, res))
			return;
	}
	if (cq->sw_count == cq->sw_cap) {
		ndk_cq_unreserve(cq, 1);
		ndk_cq_fail_locked(cq, STATUS_BUFFER_OVERFLOW);
		return;
	}
	cq->sw[(cq->sw_head + cq->sw_count) % cq->sw_cap] = *res;
	cq->sw_count++;
}

/**
 * ndk_cq_notify_locked() - new results were pushed: satisfy an ANY or
 * SOLICITED arm (they are failures, which match SOLICITED too)
 * @cq: the CQ, its lock held
 *
 * Context: any, under @cq->lock.
 */
void ndk_cq_notify_locked(struct ndk_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	if (cq->arm >= NDK_CQ_ARM_SOLICITED)
		ndk_cq_fire_locked(cq, STATUS_SUCCESS, false);
}

/*
 * Translate one ib_wc through its QP; false when there is no result.
 * Lock held.
 */
static bool ndk_cq_translate(struct ndk_cq *cq, const struct ib_wc *wc,
			     struct ndk_result_ex *res)
{
	u32 id = wc->wr_id >> 32;
	struct ndk_qp *qp = cq->last_qp;

	lockdep_assert_held(&cq->lock);
	if (!qp || qp->id != id) {
		qp = xa_load(&cq->qps, id);
		/* Not attached: a QP destroyed before its completions came. */
		if (!qp)
			return false;
		cq->last_qp = qp;
	}
	return ndk_qp_translate(qp, wc, res);
}

/* Does @res satisfy an arm of the CQ (the sink's software arm)? */
static bool ndk_cq_wakes(const struct ndk_cq *cq,
			 const struct ndk_result_ex *res)
{
	return cq->arm == NDK_CQ_ARM_ANY || res->status ||
	       res->type == NDK_OPERATION_TYPE_RECEIVE ||
	       res->type == NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE;
}

/*
 * Move what the ib_cq holds (up to its size) to the software queue, or to
 * the sink; *@wake: a result satisfies the sink's arm.
 */
static u32 ndk_cq_drain_locked(struct ndk_cq *cq, bool *wake)
{
	struct ndk_result_ex res;
	u32 total = 0;
	int n, i;

	lockdep_assert_held(&cq->lock);
	*wake = false;
	do {
		n = ib_poll_cq(cq->ibcq, NDK_CQ_POLL_BATCH, cq->wc);
		for (i = 0; i < n; i++) {
			if (!ndk_cq_translate(cq, &cq->wc[i], &res))
				continue;
			ndk_cq_push_locked(cq, &res);
			*wake |= ndk_cq_wakes(cq, &res);
		}
		total += max(n, 0);
	} while (n == NDK_CQ_POLL_BATCH && total < cq->ibcq->cqe);
	return total;
}

/**
 * ndk_cq_drain() - move the ib_cq's completions to the software queue
 * @cq: the CQ
 *
 * Used before a QP is destroyed, so that none of its completions is left
 * in the ib_cq.  Completions of other QPs move along, in order.
 *
 * Context: any.
 * Return: the number of ib_wcs polled.
 */
u32 ndk_cq_drain(struct ndk_cq *cq)
{
	unsigned long flags;
	bool wake;
	u32 n;

	spin_lock_irqsave(&cq->lock, flags);
	n = ndk_cq_drain_locked(cq, &wake);
	/*
	 * A sink's arm is ndk.ko's own (ndk_cq_sink_fill_locked()): the
	 * completion handler will not find these results in the ib_cq.
	 */
	if (cq->sink && wake && cq->arm >= NDK_CQ_ARM_SOLICITED)
		ndk_cq_fire_locked(cq, STATUS_SUCCESS, false);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * ndk_cq_failed() - whether the CQ is dead (completions may be lost)
 * @cq: the CQ
 *
 * Context: any.
 * Return: true after an overrun or a device CQ error.
 */
bool ndk_cq_failed(struct ndk_cq *cq)
{
	return READ_ONCE(cq->failed) != STATUS_SUCCESS;
}

/**
 * ndk_cq_reserve_slow() - ndk_cq_reserve() when the CQ seems full
 * @cq: the CQ the request's result goes to
 *
 * Context: any, not under @cq->lock.
 * Return: as ndk_cq_reserve().
 */
bool ndk_cq_reserve_slow(struct ndk_cq *cq)
{
	unsigned long flags;

	if (!READ_ONCE(cq->sink))
		return false;
	/* Results the sink's reader took may not be counted out yet. */
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->sink)
		ndk_cq_sink_reclaim_locked(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	return ndk_cq_try_reserve(cq);
}

/**
 * ndk_cq_unsignal() - whether a request whose result goes to @cq may be
 * posted unsignaled
 * @cq: the initiator CQ of the request, its reservation taken
 *
 * An unsignaled request keeps its reservation until a later completion
 * of its QP retires it.  Were the CQ's whole depth held by such requests,
 * no request could be posted to give that completion, and every post on
 * the CQ would fail until the QPs were closed: so no more than half the
 * depth (less one) is ever held unsignaled, the rule a QP keeps for its
 * own queue.  The caller gives the count back as it releases the slot
 * (@cq->unsig).
 *
 * Context: any.
 * Return: true when the request may be unsignaled, counted in @unsig.
 */
bool ndk_cq_unsignal(struct ndk_cq *cq)
{
	/* Ordered against a resize lowering the depth: ndk_cq_resize(). */
	if ((u32)atomic_inc_return(&cq->unsig) < READ_ONCE(cq->depth) / 2)
		return true;
	atomic_dec(&cq->unsig);
	return false;
}

/**
 * ndk_cq_attach() - let the CQ find a new QP's completions
 * @cq: the CQ
 * @qp: the QP, with its id set, before its ib_qp exists
 *
 * Context: process context.
 * Return: 0, or a negative errno (-EBUSY: the id is in use).
 */
int ndk_cq_attach(struct ndk_cq *cq, struct ndk_qp *qp)
{
	/*
	 * The xarray's lock nests inside cq->lock (ndk_cq_detach()), which
	 * the completion handler takes in softirq context: never take it
	 * with interrupts on.
	 */
	return xa_insert_irq(&cq->qps, qp->id, qp, GFP_KERNEL_ACCOUNT);
}

/**
 * ndk_cq_detach() - forget a destroyed QP; its late completions are dropped
 * @cq: the CQ
 * @qp: the QP, whose ib_qp is destroyed
 *
 * Context: process context.
 */
void ndk_cq_detach(struct ndk_cq *cq, struct ndk_qp *qp)
{
	unsigned long flags;

	/* The ib_qp's destroy scheduled whatever it will of the CQ's. */
	smp_mb();
	spin_lock_irqsave(&cq->lock, flags);
	xa_erase(&cq->qps, qp->id);
	if (cq->last_qp == qp)
		cq->last_qp = NULL;
	cq->fence_mark = max(cq->fence_mark,
			     READ_ONCE(ndk_fences_started) + 1);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * Rounds of draining a sink fill runs before it leaves the rest to
 * fill_work: completions arriving from other CPUs as fast as the handler
 * moves them must not keep it (a tasklet, a softirq or a hard interrupt
 * handler, with the CQ's lock held and interrupts off) running for ever.
 * ib_core's own pollers stop after a budget the same way.
 */
#define NDK_CQ_FILL_ROUNDS 4

/*
 * Test hook, debugfs ndk/cq_fill_defer: the completion handler leaves
 * every fill to fill_work.
 */
static bool ndk_cq_fill_defer;

/*
 * Move the completions of the ib_cq to the sink and arm the ib_cq again
 * for the next one, in at most @rounds rounds (each drains what the ib_cq
 * holds); then leave the rest to fill_work.  Lock held.
 */
static void ndk_cq_sink_fill_locked(struct ndk_cq *cq, unsigned int rounds)
{
	bool wake = false, woke;

	lockdep_assert_held(&cq->lock);
	for (; rounds; rounds--) {
		ndk_cq_drain_locked(cq, &woke);
		wake |= woke;
		if (ib_req_notify_cq(cq->ibcq, IB_CQ_NEXT_COMP |
				     IB_CQ_REPORT_MISSED_EVENTS) <= 0)
			break;
	}
	if (!rounds)
		queue_work(ndk_wq, &cq->fill_work);
	if (wake && cq->arm >= NDK_CQ_ARM_SOLICITED)
		ndk_cq_fire_locked(cq, STATUS_SUCCESS, false);
}

static void ndk_cq_fill_work(struct work_struct *work)
{
	struct ndk_cq *cq = container_of(work, struct ndk_cq, fill_work);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->sink && !cq->dying)
		ndk_cq_sink_fill_locked(cq, NDK_CQ_FILL_ROUNDS);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * ndk_cq_set_sink() - hand the CQ's results to a sink as they arrive
 * @cq:   the CQ, with no QP attached yet
 * @sink: the sink, or NULL to take it away
 *
 * With a sink the ib_cq stays armed and its completion handler moves
 * every completion, translated, to the sink; ndk_get_cq_results*() still
 * return what the sink had no room for.  Once this returns with NULL, no
 * call into the old sink runs any more; the results it held are given
 * up (their reservations are released).
 *
 * Context: any.
 */
void ndk_cq_set_sink(struct ndk_cq *cq, struct ndk_cq_sink *sink)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (sink) {
		WRITE_ONCE(cq->sink, sink);
		cq->sink_held = 0;
		WRITE_ONCE(cq->dev_armed, true);
		ndk_cq_sink_fill_locked(cq, NDK_CQ_FILL_ROUNDS);
	} else if (cq->sink) {
		ndk_cq_unreserve(cq, cq->sink_held);
		cq->sink_held = 0;
		WRITE_ONCE(cq->sink, NULL);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * Whether the completion handler may run a direct CQ's callback itself:
 * not when ndk.ko called the device from a consumer's call and the device
 * completed into the CQ right there (siw, for a QP in the error state):
 * in a post, with the QP's lock held (ndk_cq_posting, ndk_qp.h), or in a
 * move to the error state or a destroy (ndk_qp_defer_direct()).  Lock
 * held, so on one CPU.
 */
static bool ndk_cq_direct_now(struct ndk_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	return cq->direct && !this_cpu_read(ndk_cq_posting) &&
	       !atomic_read(&cq->defer_direct);
}

static void ndk_cq_comp_handler(struct ib_cq *ibcq, void *context)
{
	struct ndk_cq *cq = context;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->sink && !cq->dying)
		ndk_cq_sink_fill_locked(cq, READ_ONCE(ndk_cq_fill_defer) ?
					    0 : NDK_CQ_FILL_ROUNDS);
	else if (cq->arm >= NDK_CQ_ARM_SOLICITED &&
		 ndk_cq_fire_locked(cq, STATUS_SUCCESS, ndk_cq_direct_now(cq)))
		ndk_cq_deliver_locked(cq, &flags);
	spin_unlock_irqrestore(&cq->lock, flags);
}

static void ndk_cq_event_handler(struct ib_event *event, void *context)
{
	struct ndk_cq *cq = context;
	unsigned long flags;
	bool wake;
	u32 polled;

	if (event->event != IB_EVENT_CQ_ERR)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	if (!cq->dying && !cq->failed) {
		/*
		 * ib_core has no separate overrun event: a CQ found full is
		 * an overrun (rxe raises CQ_ERR only then).  What it holds
		 * is kept for the consumer in the software queue.
		 */
		/* The failure is what an arm is told (ndk_cq_fail_locked()). */
		polled = ndk_cq_drain_locked(cq, &wake);
		ndk_cq_fail_locked(cq, polled >= cq->ibcq->cqe ?
				   STATUS_BUFFER_OVERFLOW :
				   STATUS_INTERNAL_ERROR);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

static int ndk_cq_init(struct ndk_obj *obj)
{
	struct ndk_cq *cq = container_of(obj, struct ndk_cq, obj);
	struct ib_cq_init_attr attr = {
		.cqe = ndk_cq_entries(ndk_ibdev(obj), cq->depth),
		.comp_vector = cq->comp_vector,
	};
	int ret;

	cq->sw = kvcalloc(cq->depth, sizeof(*cq->sw), NDK_GFP_ARRAY);
	if (!cq->sw)
		return -ENOMEM;
	cq->sw_cap = cq->depth;
	cq->ibcq = ib_create_cq(ndk_ibdev(obj), ndk_cq_comp_handler,
				ndk_cq_event_handler, cq, &attr);
	if (IS_ERR(cq->ibcq)) {
		ret = PTR_ERR(cq->ibcq);
		goto err_free_sw;
	}
	return 0;

err_free_sw:
	kvfree(cq->sw);
	return ret;
}

/* A tasklet queued behind every tasklet pending on one CPU. */
struct ndk_bh_fence {
	struct tasklet_struct tasklet;
	struct completion done;
};

static void ndk_bh_fence_done(struct tasklet_struct *t)
{
	struct ndk_bh_fence *f = from_tasklet(f, t, tasklet);

	complete(&f->done);
}

/* In an IPI on the fence's CPU: append the fence to its tasklet list. */
static void ndk_bh_fence_queue(void *arg)
{
	struct ndk_bh_fence *f = arg;

	tasklet_schedule(&f->tasklet);
}

/* Wait for the tasklets queued on @cpu so far. */
static void ndk_bh_fence_cpu(int cpu)
{
	struct ndk_bh_fence f;

	tasklet_setup(&f.tasklet, ndk_bh_fence_done);
	init_completion(&f.done);
	/* Run in order with the CPU's tasklets, at the IPI's exit. */
	smp_call_function_single(cpu, ndk_bh_fence_queue, &f, 1);
	wait_for_completion(&f.done);
	/* Not running any more either: it lives on this stack. */
	tasklet_kill(&f.tasklet);
}

/**
 * ndk_cq_quiesce() - wait until the driver runs no completion callback
 * of the CQ any more
 * @cq: the CQ, dying, with no QP attached (none can complete into it)
 *
 * rxe (Debian 6.1) runs the completion handler from a tasklet of the CQ
 * scheduled by the completion that satisfied an arm, and does not kill it
 * in destroy: the tasklet could run on the freed ib_cq.  Tasklets of a
 * CPU run in the order they were scheduled, so one fence tasklet per
 * online CPU that has run means every tasklet scheduled before it has
 * run; a second round covers a tasklet that was running on another CPU
 * and was requeued behind the first fence (tasklet_action's trylock).
 * Only a CQ ever armed in the device can have one pending, and only
 * while its QPs live: any fence that started after the last one was
 * detached covers it, so CQs whose QPs went before one fence started
 * share it (a file's release destroys its CQs after all its QPs).
 *
 * Context: process context.
 */
static void ndk_cq_quiesce(struct ndk_cq *cq)
{
	int round, cpu;

	if (!READ_ONCE(cq->dev_armed))
		return;
	mutex_lock(&ndk_fence_mutex);
	if (ndk_fences_done < cq->fence_mark) {
		WRITE_ONCE(ndk_fences_started, ndk_fences_started + 1);
		/* Seen by later detaches before the fence queues. */
		smp_mb();
		cpus_read_lock();
		for (round = 0; round < 2; round++)
			for_each_online_cpu(cpu)
				ndk_bh_fence_cpu(cpu);
		cpus_read_unlock();
		ndk_fences_done = ndk_fences_started;
	}
	mutex_unlock(&ndk_fence_mutex);
}

/**
 * ndk_cq_debugfs_init() - debugfs ndk/cq_fences: ndk_cq_quiesce()'s fences
 * @dir: ndk.ko's debugfs directory
 *
 * Context: module init.
 */
void ndk_cq_debugfs_init(struct dentry *dir)
{
	debugfs_create_u64("cq_fences", 0444, dir, &ndk_fences_done);
	debugfs_create_bool("cq_fill_defer", 0600, dir, &ndk_cq_fill_defer);
}

static void ndk_cq_destroy(struct ndk_obj *obj)
{
	struct ndk_cq *cq = container_of(obj, struct ndk_cq, obj);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->dying = true;
	spin_unlock_irqrestore(&cq->lock, flags);

	/* Every QP is gone (they hold the CQ): nothing completes into it. */
	ndk_cq_quiesce(cq);
	ib_destroy_cq(cq->ibcq);
	cancel_work_sync(&cq->fill_work);	/* it finds the CQ dying */
	/*
	 * Waits for a notification callback in progress: the work item's,
	 * then a direct one (a completion handler that ran before the
	 * ib_cq was destroyed may still be in the consumer's callback).
	 */
	cancel_work_sync(&cq->notify_work);
	ndk_cq_wait_idle(cq);
	xa_destroy(&cq->qps);
	kvfree(cq->sw);
	kfree(cq);
}

/**
 * ndk_create_cq() - NdkCreateCq
 * @adapter:              the adapter
 * @cq_depth:             completions the CQ must hold, 1 to max_cq_depth
 * @notification:         called once per satisfied ndk_arm_cq(), in
 *                        process context, one call at a time; may be NULL
 *                        (ndk_cq_set_direct_notification() lets it run
 *                        from the device's completion handler instead)
 * @notification_context: passed to @notification
 * @affinity:             CPUs to prefer for notifications (picks the
 *                        device's completion vector), or NULL
 * @create_completion:    NULL for a blocking create
 * @request_context:      passed to @create_completion
 * @cq:                   receives the CQ on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INVALID_PARAMETER (depth
 * 0 or beyond the adapter's max_cq_depth, inline even with a completion),
 * STATUS_INSUFFICIENT_RESOURCES, STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_cq(struct ndk_adapter *adapter, u32 cq_depth,
		  ndk_fn_cq_notification_callback notification,
		  void *notification_context, const struct cpumask *affinity,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_cq **cq)
{
	struct ib_device *ibdev = adapter->dev->ibdev;
	struct ndk_cq *c;

	if (!cq_depth || cq_depth > adapter->info.max_cq_depth)
		return STATUS_INVALID_PARAMETER;
	c = kzalloc(sizeof(*c), ndk_gfp(create_completion));
	if (!c)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&c->obj, NDK_OBJECT_TYPE_CQ, &adapter->obj, ndk_cq_destroy);
	c->depth = cq_depth;
	if (affinity && ibdev->num_comp_vectors > 0 &&
	    cpumask_first(affinity) < nr_cpu_ids)
		c->comp_vector = cpumask_first(affinity) %
				 ibdev->num_comp_vectors;
	spin_lock_init(&c->lock);
	mutex_init(&c->resize_lock);
	xa_init_flags(&c->qps, XA_FLAGS_LOCK_IRQ);
	c->notify = notification;
	c->notify_context = notification_context;
	INIT_WORK(&c->notify_work, ndk_cq_notify_work);
	INIT_WORK(&c->fill_work, ndk_cq_fill_work);
	init_waitqueue_head(&c->notify_wait);
	atomic_set(&c->reserved, 0);
	atomic_set(&c->unsig, 0);
	atomic_set(&c->resizes, 0);
	return ndk_obj_create(&c->obj, ndk_cq_init, create_completion,
			      request_context, (void **)cq);
}
EXPORT_SYMBOL_GPL(ndk_create_cq);

/* Blocking closes wait here for a CQ's asynchronous resizes. */
static DECLARE_WAIT_QUEUE_HEAD(ndk_cq_resize_wait);
static int ndk_cq_own_resizes(struct ndk_cq *cq);

/**
 * ndk_close_cq() - NdkCloseCq
 * @cq:               the CQ; the close is deferred until every QP using
 *                    it is closed
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * No notification is queued once this is called, and no notification
 * callback runs once the close has completed: without a completion, once
 * this returns (a callback in progress is waited for, work-delivered or
 * direct, unless the caller is a work-delivered callback of this CQ),
 * even when the CQ itself lives on until its QPs are closed.  Nor does
 * the completion of an asynchronous ndk_resize_cq(): a blocking close
 * waits for those queued or running (but the one whose completion it is
 * called from), and the @close_completion of an asynchronous close runs
 * after theirs (each holds a reference).  A resize's completion must not
 * wait for what a blocking closer of its CQ holds.  Called
 * from the CQ's own work-delivered callback, it returns at once and the
 * CQ is torn down once that callback has returned.  A direct
 * callback (ndk_cq_set_direct_notification()) runs in atomic context: it
 * may only close its CQ with a completion, which runs once the callback
 * has returned.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_cq(struct ndk_cq *cq, ndk_fn_close_completion close_completion,
		 void *request_context)
{
	unsigned long flags;
	s32 status;

	spin_lock_irqsave(&cq->lock, flags);
	cq->closed = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (close_completion)
		return ndk_obj_close(&cq->obj, close_completion,
				     request_context);
	might_sleep();
	wait_event(ndk_cq_resize_wait,
		   atomic_read(&cq->resizes) == ndk_cq_own_resizes(cq));
	if (current_work() != &cq->notify_work) {
		/* Nothing delivers any more; wait for a callback running. */
		cancel_work_sync(&cq->notify_work);
		ndk_cq_wait_idle(cq);
		return ndk_obj_close(&cq->obj, NULL, NULL);
	}
	/*
	 * From the CQ's own work-delivered callback: the teardown waits for
	 * that work (ndk_cq_destroy()), so it must not run here.  Our own
	 * reference, dropped after the close, sends it to ndk_wq.
	 */
	ndk_obj_get(&cq->obj);
	status = ndk_obj_close(&cq->obj, NULL, NULL);
	ndk_obj_put(&cq->obj);
	return status;
}
EXPORT_SYMBOL_GPL(ndk_close_cq);

/**
 * ndk_cq_set_direct_notification() - deliver notifications from the
 * device's completion handler (Linux extension)
 * @cq: the CQ, created by a kernel consumer and never armed yet
 *
 * Windows calls an NDK CQ's notification at DISPATCH_LEVEL; by default
 * ndk.ko calls it from a work item, in process context, which costs a
 * scheduler hop per notification.  After this call, a notification that
 * the device's completion handler satisfies (an ANY or SOLICITED arm met
 * by a new completion) runs the callback from that handler's context:
 * softirq on rxe and siw, hard interrupt on mlx5.  The callback must not
 * sleep, and the locks it takes must be taken with interrupts off
 * wherever else they are used (spin_lock_irqsave()).  What stays as
 * before: callbacks of the CQ run one at a time, never nested (a
 * notification raised while one runs is delivered by that deliverer once
 * it returns); an arm satisfied inside ndk_arm_cq() (results already
 * waiting, a CQ error, results in a sink) and CQ errors are delivered by
 * the work item; a blocking ndk_close_cq() waits for a direct callback in
 * progress, and none runs after it has returned.  Inside a direct
 * callback the consumer may poll, arm, post, and close objects with a
 * completion only (blocking calls sleep).
 *
 * A direct callback never runs inside a call of the consumer, so the
 * consumer may post, close or disconnect holding a lock its callback
 * takes.  Some devices complete requests inside ndk.ko's calls to them:
 * siw completes a request posted to a QP in the error state inside
 * ib_post_send()/ib_post_recv(), and flushes a QP's queues inside the
 * ib_modify_qp() that moves it to the error state, calling the
 * completion handler right there.  A notification the completion handler
 * satisfies inside a post (ndk_receive(), ndk_send() and every initiator
 * request, on this CPU: a per-CPU count) or while a QP of the CQ is moved
 * to the error state or destroyed by a close, disconnect or failed
 * connection (ndk_qp_defer_direct()) goes to the work item instead, like
 * an arm satisfied inside ndk_arm_cq().  Without this a callback that
 * posted on the same QP would spin on ndk.ko's QP lock, taken by its own
 * caller with interrupts off.
 *
 * Context: any.
 * Return: STATUS_SUCCESS; STATUS_INVALID_DEVICE_STATE when the CQ was
 * armed already, is closed, or hands its results to a sink (the user
 * path).
 */
s32 ndk_cq_set_direct_notification(struct ndk_cq *cq)
{
	unsigned long flags;
	s32 status = STATUS_SUCCESS;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->was_armed || cq->closed || cq->dying || cq->sink)
		status = STATUS_INVALID_DEVICE_STATE;
	else
		cq->direct = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	return status;
}
EXPORT_SYMBOL_GPL(ndk_cq_set_direct_notification);

static s32 ndk_cq_resize(struct ndk_cq *cq, u32 depth)
{
	struct ndk_result_ex *sw = NULL, *old = NULL;
	unsigned long flags;
	s32 status = STATUS_SUCCESS;
	u32 i, old_depth;
	int ret;

	mutex_lock(&cq->resize_lock);
	/* Never below the results the CQ is committed to hold. */
	spin_lock_irqsave(&cq->lock, flags);
	old_depth = cq->depth;
	WRITE_ONCE(cq->depth, min(depth, old_depth));
	/*
	 * Against a reservation in flight (ndk_cq_try_reserve()) or an
	 * unsignaled request (ndk_cq_unsignal()).  Unsignaled requests wait
	 * for a signaled result to retire them: one must still fit.
	 */
	smp_mb();
	if (depth < (u32)atomic_read(&cq->reserved) ||
	    depth <= (u32)atomic_read(&cq->unsig)) {
		WRITE_ONCE(cq->depth, old_depth);
		status = STATUS_INVALID_PARAMETER;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (status)
		goto out_unlock;
	/* The software queue only grows: it may hold results already. */
	if (depth > cq->sw_cap) {
		sw = kvcalloc(depth, sizeof(*sw), NDK_GFP_ARRAY);
		if (!sw) {
			status = STATUS_INSUFFICIENT_RESOURCES;
			goto out_restore_depth;
		}
	}
	ret = ib_resize_cq(cq->ibcq, ndk_cq_entries(ndk_ibdev(&cq->obj), depth));
	if (ret) {
		kvfree(sw);
		status = ndk_status_from_errno(ret);
		goto out_restore_depth;
	}
	spin_lock_irqsave(&cq->lock, flags);
	if (sw) {
		for (i = 0; i < cq->sw_count; i++)
			sw[i] = cq->sw[(cq->sw_head + i) % cq->sw_cap];
		old = cq->sw;
		cq->sw = sw;
		cq->sw_cap = depth;
		cq->sw_head = 0;
	}
	WRITE_ONCE(cq->depth, depth);
	spin_unlock_irqrestore(&cq->lock, flags);
	kvfree(old);
	goto out_unlock;

out_restore_depth:
	WRITE_ONCE(cq->depth, old_depth);
out_unlock:
	mutex_unlock(&cq->resize_lock);
	return status;
}

struct ndk_cq_resize_req {
	struct work_struct work;
	struct ndk_cq *cq;
	u32 depth;
	ndk_fn_request_completion completion;
	void *context;
};

static void ndk_cq_resize_work(struct work_struct *work)
{
	struct ndk_cq_resize_req *req =
		container_of(work, struct ndk_cq_resize_req, work);
	struct ndk_cq *cq = req->cq;

	req->completion(req->context, ndk_cq_resize(cq, req->depth));
	kfree(req);
	/*
	 * Our reference keeps @cq until the put, after the waiter's close.
	 * A close called from another resize's completion waits for 1.
	 */
	if (atomic_dec_return(&cq->resizes) <= 1)
		wake_up_all(&ndk_cq_resize_wait);
	ndk_obj_put(&cq->obj);
}

/* The asynchronous resizes of @cq a blocking close may not wait for. */
static int ndk_cq_own_resizes(struct ndk_cq *cq)
{
	struct work_struct *w = current_work();

	/* Called from the completion of one of them: it is the caller. */
	return w && w->func == ndk_cq_resize_work &&
	       container_of(w, struct ndk_cq_resize_req, work)->cq == cq;
}

/**
 * ndk_resize_cq() - NdkResizeCq
 * @cq:                 the CQ
 * @cq_depth:           new depth, 1 to max_cq_depth; it must hold the
 *                      completions the CQ holds now (results and requests
 *                      outstanding), and be above the silent requests
 *                      posted unsignaled that wait to be retired
 * @request_completion: NULL for a blocking call
 * @request_context:    passed to @request_completion
 *
 * Uses ib_resize_cq(); the adapter flag NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED
 * says whether the device has it.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING (the completion gets the status),
 * STATUS_INVALID_PARAMETER (bad depth, or smaller than what the CQ holds),
 * STATUS_NOT_SUPPORTED, STATUS_INSUFFICIENT_RESOURCES.
 */
s32 ndk_resize_cq(struct ndk_cq *cq, u32 cq_depth,
		  ndk_fn_request_completion request_completion,
		  void *request_context)
{
	struct ndk_cq_resize_req *req;

	if (!ndk_ibdev(&cq->obj)->ops.resize_cq)
		return STATUS_NOT_SUPPORTED;
	if (!cq_depth || cq_depth > cq->obj.adapter->info.max_cq_depth)
		return STATUS_INVALID_PARAMETER;
	if (!request_completion) {
		might_sleep();
		return ndk_cq_resize(cq, cq_depth);
	}
	req = kzalloc(sizeof(*req), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!req)
		return STATUS_INSUFFICIENT_RESOURCES;
	req->cq = cq;
	req->depth = cq_depth;
	req->completion = request_completion;
	req->context = request_context;
	INIT_WORK(&req->work, ndk_cq_resize_work);
	ndk_obj_get(&cq->obj);	/* the close waits for the completion */
	atomic_inc(&cq->resizes);
	queue_work(ndk_wq, &req->work);
	return STATUS_PENDING;
}
EXPORT_SYMBOL_GPL(ndk_resize_cq);

/**
 * ndk_arm_cq() - NdkArmCq
 * @cq:   the CQ
 * @type: NDK_CQ_NOTIFY_ANY, NDK_CQ_NOTIFY_SOLICITED or NDK_CQ_NOTIFY_ERRORS
 *
 * Asks for one notification callback: for the next completion (ANY), the
 * next solicited or failed receive (SOLICITED), or a CQ error (every
 * type).  Arming again before the callback merges the types: ANY wins,
 * ERRORS + SOLICITED is SOLICITED.  When results are already waiting an
 * ANY or SOLICITED arm is satisfied at once; a CQ error not yet reported
 * satisfies any arm at once.  Unknown types are ignored.
 *
 * The callback never runs inside this call: an arm satisfied here is
 * delivered by the CQ's work item, in process context, also on a direct
 * CQ (ndk_cq_set_direct_notification()), so the caller may hold a lock
 * its callback takes.
 *
 * Context: any; the consumer serializes it with ndk_get_cq_results*().
 */
void ndk_arm_cq(struct ndk_cq *cq, u32 type)
{
	enum ib_cq_notify_flags flags;
	unsigned long irqflags;
	u8 arm;

	switch (type) {
	case NDK_CQ_NOTIFY_ERRORS:
		arm = NDK_CQ_ARM_ERRORS;
		break;
	case NDK_CQ_NOTIFY_SOLICITED:
		arm = NDK_CQ_ARM_SOLICITED;
		break;
	case NDK_CQ_NOTIFY_ANY:
		arm = NDK_CQ_ARM_ANY;
		break;
	default:
		return;
	}

	spin_lock_irqsave(&cq->lock, irqflags);
	cq->was_armed = true;
	cq->arm = max(cq->arm, arm);
	if (cq->failed) {
		if (!cq->failure_reported) {
			cq->failure_reported = true;
			ndk_cq_fire_locked(cq, cq->failed, false);
		}
	} else if (cq->arm >= NDK_CQ_ARM_SOLICITED && cq->sink) {
		/* The ib_cq is armed already: results waiting satisfy it. */
		ndk_cq_sink_reclaim_locked(cq);
		if (cq->sink_held || cq->sw_count)
			ndk_cq_fire_locked(cq, STATUS_SUCCESS, false);
	} else if (cq->arm >= NDK_CQ_ARM_SOLICITED) {
		flags = cq->arm == NDK_CQ_ARM_ANY ? IB_CQ_NEXT_COMP :
						    IB_CQ_SOLICITED;
		cq->dev_armed = true;
		if (ib_req_notify_cq(cq->ibcq,
				     flags | IB_CQ_REPORT_MISSED_EVENTS) > 0 ||
		    cq->sw_count)
			ndk_cq_fire_locked(cq, STATUS_SUCCESS, false);
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
}
EXPORT_SYMBOL_GPL(ndk_arm_cq);

static void ndk_cq_store(struct ndk_result_ex *ex, struct ndk_result *plain,
			 u32 i, const struct ndk_result_ex *res)
{
	if (ex) {
		ex[i] = *res;
		return;
	}
	plain[i].status = res->status;
	plain[i].bytes_transferred = res->bytes_transferred;
	plain[i].qp_context = res->qp_context;
	plain[i].request_context = res->request_context;
}

static u32 ndk_cq_poll(struct ndk_cq *cq, struct ndk_result_ex *ex,
		       struct ndk_result *plain, u32 count)
{
	struct ndk_result_ex res;
	unsigned long flags;
	u32 n = 0, want;
	int got, i;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < count && cq->sw_count) {
		ndk_cq_store(ex, plain, n++, &cq->sw[cq->sw_head]);
		cq->sw_head = (cq->sw_head + 1) % cq->sw_cap;
		cq->sw_count--;
	}
	while (n < count) {
		want = min_t(u32, count - n, NDK_CQ_POLL_BATCH);
		got = ib_poll_cq(cq->ibcq, want, cq->wc);
		for (i = 0; i < got; i++)
			if (ndk_cq_translate(cq, &cq->wc[i], &res))
				ndk_cq_store(ex, plain, n++, &res);
		if (got < (int)want)
			break;
	}
	/* Polled results leave the CQ (silent ones: ndk_qp_translate()). */
	ndk_cq_unreserve(cq, n);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * ndk_get_cq_results() - NdkGetCqResults
 * @cq:      the CQ
 * @results: array of @count NDK_RESULTs
 * @count:   room in @results
 *
 * Successful requests posted with NDK_OP_FLAG_SILENT_SUCCESS give no
 * result.  A receive that invalidated a token is reported as a plain
 * receive here (ndk_get_cq_results_ex() tells it apart).
 *
 * Context: any; the consumer serializes it with ndk_arm_cq().
 * Return: the number of results written, 0 when none is waiting.
 */
u32 ndk_get_cq_results(struct ndk_cq *cq, struct ndk_result *results,
		       u32 count)
{
	return ndk_cq_poll(cq, NULL, results, count);
}
EXPORT_SYMBOL_GPL(ndk_get_cq_results);

/**
 * ndk_get_cq_results_ex() - NdkGetCqResultsEx
 * @cq:      the CQ
 * @results: array of @count NDK_RESULT_EXs
 * @count:   room in @results
 *
 * Like ndk_get_cq_results(), with the operation type of each request,
 * the device's vendor error on failures, and for a receive that
 * invalidated a token NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE with the
 * token in @type_specific_completion_output.
 *
 * Context: any; the consumer serializes it with ndk_arm_cq().
 * Return: the number of results written, 0 when none is waiting.
 */
u32 ndk_get_cq_results_ex(struct ndk_cq *cq, struct ndk_result_ex *results,
			  u32 count)
{
	return ndk_cq_poll(cq, results, NULL, count);
}
EXPORT_SYMBOL_GPL(ndk_get_cq_results_ex);

/**
 * ndk_control_cq_interrupt_moderation() - NdkControlCqInterruptModeration
 * @cq:                  the CQ
 * @moderation_interval: microseconds a notification may be delayed
 * @moderation_count:    completions that may be gathered before one
 *
 * Uses rdma_set_cq_moderation() (the device's modify_cq); the adapter flag
 * NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED says whether it has
 * one.  rxe has none.
 *
 * Context: process context (the device may sleep to apply it).
 * Return: STATUS_SUCCESS, STATUS_NOT_SUPPORTED, STATUS_INVALID_PARAMETER
 * (a value beyond 65535), or the device's failure.
 */
s32 ndk_control_cq_interrupt_moderation(struct ndk_cq *cq,
					u32 moderation_interval,
					u32 moderation_count)
{
	if (!ndk_ibdev(&cq->obj)->ops.modify_cq)
		return STATUS_NOT_SUPPORTED;
	if (moderation_interval > U16_MAX || moderation_count > U16_MAX)
		return STATUS_INVALID_PARAMETER;
	might_sleep();
	return ndk_status_from_errno(rdma_set_cq_moderation(cq->ibcq,
							    moderation_count,
							    moderation_interval));
}
EXPORT_SYMBOL_GPL(ndk_control_cq_interrupt_moderation);
