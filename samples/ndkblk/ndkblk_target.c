// SPDX-License-Identifier: GPL-2.0
/*
 * ndkblk_target.ko: the target side of ndkblk, a RAM-backed namespace
 * served over up to `queues` NDK connections at once (an initiator opens
 * one per hardware queue).
 *
 * Built like any out-of-tree NDK consumer, against <ndk/ndkpi.h> and
 * ndk.ko's Module.symvers only.  At load it opens the adapter, allocates
 * the namespace and, for each queue, registers one bounce buffer per tag
 * and the control buffers (requests received, answers sent) and creates
 * a CQ and a QP with a receive posted for every tag; then it listens on
 * addr:port.  A connection is accepted on any idle queue.
 *
 * Per request (struct ndkblk_msg in a receive):
 *  - READ:  copy the namespace into the tag's bounce buffer, RDMA-write it
 *           to the initiator's token (silent, deferred) and answer with
 *           send-and-invalidate of that token (one doorbell for both);
 *  - WRITE: RDMA-read the initiator's pages into the bounce buffer; on the
 *           read's completion copy it into the namespace and answer with
 *           send-and-invalidate;
 *  - WRITE_INLINE: copy the data that follows the request into the
 *           namespace and answer with a plain send (no token).
 * A request that fails validation is answered with a plain send (its
 * token is not trusted) and an errno; the initiator then invalidates
 * locally.
 *
 * Every CQ result of a queue is handled in the CQ's notification
 * callback, under the queue's lock.  With direct_notify (the default)
 * the callback runs from the device's completion handler (softirq on
 * rxe, hard interrupt on mlx5; ndk_cq_set_direct_notification()),
 * otherwise from ndk.ko's work item: the lock is taken with interrupts
 * off, and nothing under it sleeps.  The queue's ordered workqueue resets
 * the connection (disconnect, failed accept): it closes the connector and
 * the QP and makes a fresh QP for the next initiator.  Results of a closed
 * QP are told apart by their qp_context (a connection generation) and
 * dropped.
 *
 * When the adapter is removed the target closes every NDK object (the
 * removal waits for that) and tries every second to open the adapter
 * again by name and serve anew; the namespace and the buffers stay, so
 * the data outlives the adapter.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/blk_types.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <ndk/ndkpi.h>

#include "ndkblk_proto.h"

static char *adapter = "rxe0";
module_param(adapter, charp, 0444);
MODULE_PARM_DESC(adapter, "NDK adapter to serve on");
static char *addr;
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address to listen on (the adapter's)");
static ushort port = NDKBLK_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "port to listen on");
static uint size_mb = 64;
module_param(size_mb, uint, 0444);
MODULE_PARM_DESC(size_mb, "namespace size in MiB (RAM)");
static bool stall;
module_param(stall, bool, 0644);
MODULE_PARM_DESC(stall, "test knob: leave every request unanswered (as a hung host)");
static uint queues = 4;
module_param(queues, uint, 0444);
MODULE_PARM_DESC(queues, "connections served at once (1 .. 8)");
static bool direct_notify = true;
module_param(direct_notify, bool, 0644);
MODULE_PARM_DESC(direct_notify, "CQ notifications from the completion handler (1) or ndk.ko's work item (0); read when the CQs are created");

enum nbt_state { NBT_IDLE, NBT_ACCEPTING, NBT_CONNECTED, NBT_RESETTING };

/**
 * enum nbt_step - what a request needs posted next
 * @NBT_NONE:   nothing (idle, or its RDMA read is outstanding)
 * @NBT_WRITE:  the RDMA write of a READ's data, then the answer
 * @NBT_READ:   the RDMA read of a WRITE's data
 * @NBT_ANSWER: the answer
 */
enum nbt_step { NBT_NONE, NBT_WRITE, NBT_READ, NBT_ANSWER };

/**
 * struct nbt_tag - one request in flight
 * @buf:        bounce buffer, NDKBLK_MAX_IO bytes
 * @mr:         its registration
 * @token:      its local token
 * @req:        the request, copied out of its receive buffer
 * @busy:       an RDMA read for it is outstanding
 * @step:       enum nbt_step
 * @err:        the answer's errno
 * @invalidate: the answer invalidates the request's token
 * @pending:    in its queue's pending list while a full send queue or the
 *              accept holds @step back
 */
struct nbt_tag {
	void *buf;
	struct ndk_mr *mr;
	u32 token;
	struct ndkblk_req req;
	bool busy;
	u8 step;
	u16 err;
	bool invalidate;
	struct list_head pending;
};

/**
 * struct nbt_ctrl - the registered control buffers of a queue
 * @msg: one receive buffer per tag
 * @rsp: one answer per tag
 */
struct nbt_ctrl {
	struct ndkblk_msg msg[NDKBLK_DEPTH];
	struct ndkblk_rsp rsp[NDKBLK_DEPTH];
};

/**
 * struct nbt_queue - one connection's worth of objects
 * @lock:       serializes every use of @qp and @cq and the requests'
 *              state: the CQ callback, @retry and @reset_work; taken
 *              with interrupts off (the callback may be a hard interrupt)
 * @cq:         its CQ
 * @qp:         its QP, replaced for each connection
 * @ctrl:       its control buffers, registered in @ctrl_mr
 * @ctrl_mr:    their registration
 * @ctrl_token: its local token
 * @tag:        the requests in flight
 * @gen:        the QP's generation, its qp_context
 * @wq:         ordered: @retry and @reset_work
 * @retry:      polls again while a full send queue holds steps back
 * @pending:    tags whose next post waits
 * @reset_work: closes the connection and makes a fresh QP
 * @state:      enum nbt_state, under nbt.lock
 * @conn:       the connection, under nbt.lock
 */
struct nbt_queue {
	spinlock_t lock;	/* the QP, the CQ, the requests */
	struct ndk_cq *cq;
	struct ndk_qp *qp;
	struct nbt_ctrl *ctrl;
	struct ndk_mr *ctrl_mr;
	u32 ctrl_token;
	struct nbt_tag tag[NDKBLK_DEPTH];
	unsigned long gen;
	struct workqueue_struct *wq;
	struct delayed_work retry;
	struct list_head pending;
	struct work_struct reset_work;
	enum nbt_state state;
	struct ndk_connector *conn;
};

static struct nbt {
	struct ndk_adapter *adapter;
	struct ndk_adapter_info info;
	struct ndk_pd *pd;
	struct ndk_listener *listener;
	struct nbt_queue *q;
	u32 nr_queues;
	void *store;
	u64 bytes;
	u32 read_limit;
	struct work_struct removal_work;
	struct delayed_work restart;
	bool unloading;
	struct mutex stop_lock;	/* serializes nbt_stop() */
	spinlock_t lock;	/* protects the queues' state and conn, exiting */
	bool exiting;
} nbt;

static void nbt_nop_close(void *context)
{
}

static void nbt_disconnected(void *context)
{
	struct nbt_queue *q = context;

	queue_work(q->wq, &q->reset_work);
}

static void nbt_accept_done(void *context, s32 status)
{
	struct nbt_queue *q = context;
	bool ok;

	spin_lock(&nbt.lock);
	ok = !status && q->state == NBT_ACCEPTING;
	if (ok)
		WRITE_ONCE(q->state, NBT_CONNECTED);
	spin_unlock(&nbt.lock);
	if (ok) {
		pr_info("ndkblk_target: initiator connected on queue %ld\n",
			(long)(q - nbt.q));
		/* Post what requests that came before the accept wait for. */
		mod_delayed_work(q->wq, &q->retry, 0);
	} else {
		queue_work(q->wq, &q->reset_work);
	}
}

/* ConnectEvent: accept on an idle queue, refuse when there is none. */
static void nbt_connect_event(void *context, struct ndk_connector *c)
{
	struct ndkblk_hello hello = {
		.magic = cpu_to_le32(NDKBLK_MAGIC),
		.depth = cpu_to_le32(NDKBLK_DEPTH),
		.max_io = cpu_to_le32(NDKBLK_MAX_IO),
		.inline_max = cpu_to_le32(NDKBLK_INLINE_MAX),
		.sectors = cpu_to_le64(nbt.bytes >> SECTOR_SHIFT),
		.queues = cpu_to_le32(nbt.nr_queues),
	};
	struct nbt_queue *q = NULL;
	s32 s = STATUS_PENDING;
	u32 i;

	/*
	 * The accept is made under the lock (with a completion it does not
	 * sleep): a stop's nbt_qp_close() takes q->conn, closes it and
	 * drops q->qp only after it, never between the two.
	 */
	spin_lock(&nbt.lock);
	for (i = 0; i < nbt.nr_queues && !nbt.exiting; i++) {
		if (nbt.q[i].state == NBT_IDLE) {
			q = &nbt.q[i];
			q->state = NBT_ACCEPTING;
			q->conn = c;
			s = ndk_accept(c, q->qp, 0, nbt.read_limit, &hello,
				       sizeof(hello), nbt_disconnected, q,
				       nbt_accept_done, q);
			break;
		}
	}
	spin_unlock(&nbt.lock);
	if (!q) {
		ndk_reject(c, NULL, 0);
		ndk_close_connector(c, nbt_nop_close, NULL);
		return;
	}
	if (s != STATUS_PENDING)
		nbt_accept_done(q, s);
}

static s32 nbt_post_receive(struct nbt_queue *q, u32 i)
{
	return ndkblk_receive(q->qp, i, &q->ctrl->msg[i],
			      sizeof(q->ctrl->msg[i]), q->ctrl_token);
}

static void nbt_repost(struct nbt_queue *q, u32 i)
{
	if (nbt_post_receive(q, i))
		pr_warn_ratelimited("ndkblk_target: receive not reposted\n");
}

/* Answer @t; a request whose token was used gets it invalidated. */
static s32 nbt_answer(struct nbt_queue *q, u32 t, int err, bool invalidate)
{
	struct ndkblk_rsp *rsp = &q->ctrl->rsp[t];
	struct ndk_sge sge = {
		.virtual_address = rsp,
		.length = sizeof(*rsp),
		.memory_region_token = q->ctrl_token,
	};
	u32 flags = NDK_OP_FLAG_SILENT_SUCCESS;
	s32 s;

	rsp->magic = cpu_to_le32(NDKBLK_MAGIC);
	rsp->tag = cpu_to_le16(t);
	rsp->status = cpu_to_le16(err);
	if (invalidate)
		s = ndk_send_and_invalidate(q->qp, NULL, &sge, 1, flags,
					    le32_to_cpu(q->tag[t].req.token));
	else
		s = ndk_send(q->qp, NULL, &sge, 1, flags);
	if (s && s != STATUS_INSUFFICIENT_RESOURCES)
		pr_warn_ratelimited("ndkblk_target: answer: status %#x\n", s);
	return s;
}

/*
 * Post what @tag needs next.  Return: false when the send queue is full
 * (the step stays, retried after the next results), true otherwise.
 */
static bool nbt_advance(struct nbt_queue *q, u32 t)
{
	struct nbt_tag *tag = &q->tag[t];
	const struct ndkblk_req *req = &tag->req;
	struct ndk_sge sge = {
		.virtual_address = tag->buf,
		.length = le32_to_cpu(req->length),
		.memory_region_token = tag->token,
	};
	s32 s;

	switch (tag->step) {
	case NBT_WRITE:
		s = ndk_write(q->qp, NULL, &sge, 1, le64_to_cpu(req->address),
			      le32_to_cpu(req->token),
			      NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_DEFER);
		if (s == STATUS_INSUFFICIENT_RESOURCES)
			return false;
		if (s)
			pr_warn_ratelimited("ndkblk_target: RDMA write: %#x\n", s);
		tag->step = NBT_ANSWER;
		tag->err = s ? EIO : 0;
		tag->invalidate = !s;
		fallthrough;
	case NBT_ANSWER:
		if (nbt_answer(q, t, tag->err, tag->invalidate) ==
		    STATUS_INSUFFICIENT_RESOURCES)
			return false;
		break;
	case NBT_READ:
		tag->busy = true;
		s = ndk_read(q->qp, (void *)(uintptr_t)t, &sge, 1,
			     le64_to_cpu(req->address),
			     le32_to_cpu(req->token), 0);
		if (s == STATUS_INSUFFICIENT_RESOURCES) {
			tag->busy = false;
			return false;
		}
		if (s) {
			pr_warn_ratelimited("ndkblk_target: RDMA read: %#x\n", s);
			tag->busy = false;
			tag->step = NBT_ANSWER;
			tag->err = EIO;
			tag->invalidate = false;
			return nbt_advance(q, t);
		}
		break;
	}
	tag->step = NBT_NONE;
	return true;
}

/*
 * Whether @q may post: a request can arrive before the accept completes
 * (the initiator sends once it sees the connection), and posts fail with
 * STATUS_CONNECTION_INVALID until then; its steps wait in the pending list.
 */
static bool nbt_connected(struct nbt_queue *q)
{
	return READ_ONCE(q->state) == NBT_CONNECTED;
}

/*
 * Whether @tag's request is still being served: a step waits (in the
 * pending list, or is being posted) or its RDMA read is outstanding.  A
 * request for such a tag breaks the protocol (a tag is reused only after
 * its answer): it would add the tag to the pending list twice.
 */
static bool nbt_tag_in_use(const struct nbt_tag *tag)
{
	return tag->busy || tag->step != NBT_NONE;
}

/* Set @tag's next step and post it, or queue it behind the others. */
static void nbt_step(struct nbt_queue *q, u32 t, enum nbt_step step, int err,
		     bool invalidate)
{
	struct nbt_tag *tag = &q->tag[t];

	tag->step = step;
	tag->err = err;
	tag->invalidate = invalidate;
	if (!nbt_connected(q) || !list_empty(&q->pending) ||
	    !nbt_advance(q, t))
		list_add_tail(&tag->pending, &q->pending);
}

/* Post the steps a full send queue or the accept held back, in order. */
static void nbt_kick(struct nbt_queue *q)
{
	struct nbt_tag *tag;

	if (!nbt_connected(q))
		return;

	while ((tag = list_first_entry_or_null(&q->pending, struct nbt_tag,
					       pending))) {
		if (!nbt_advance(q, tag - q->tag))
			break;
		list_del_init(&tag->pending);
	}
}

static void *nbt_at(const struct ndkblk_req *req)
{
	return nbt.store + (le64_to_cpu(req->sector) << SECTOR_SHIFT);
}

/*
 * A receive of @bytes in buffer @i: validate the request, take an inline
 * write's data, repost the buffer, then move the data or answer.
 */
static void nbt_request(struct nbt_queue *q, u32 i, u32 bytes)
{
	struct ndkblk_msg *msg = &q->ctrl->msg[i];
	struct ndkblk_req req = msg->req;
	u32 len = le32_to_cpu(req.length);
	u64 sector = le64_to_cpu(req.sector);
	u32 t = le16_to_cpu(req.tag);
	u32 op = le16_to_cpu(req.opcode);
	bool inl = op == NDKBLK_OP_WRITE_INLINE;
	struct nbt_tag *tag;
	int err = 0;

	if (READ_ONCE(stall)) {
		nbt_repost(q, i);
		return;
	}
	if (bytes < sizeof(req) || le32_to_cpu(req.magic) != NDKBLK_MAGIC ||
	    t >= NDKBLK_DEPTH || nbt_tag_in_use(&q->tag[t])) {
		pr_warn_ratelimited("ndkblk_target: malformed request\n");
		nbt_repost(q, i);
		return;
	}
	tag = &q->tag[t];
	tag->req = req;
	if (!len || len > (inl ? NDKBLK_INLINE_MAX : NDKBLK_MAX_IO) ||
	    len % SECTOR_SIZE || sector > nbt.bytes >> SECTOR_SHIFT ||
	    len > nbt.bytes - (sector << SECTOR_SHIFT) ||
	    (inl && bytes < sizeof(req) + len) ||
	    (!inl && op != NDKBLK_OP_READ && op != NDKBLK_OP_WRITE))
		err = EINVAL;
	else if (inl)
		memcpy(nbt_at(&req), msg->data, len);
	nbt_repost(q, i);
	if (err || inl) {
		nbt_step(q, t, NBT_ANSWER, err, false);
	} else if (op == NDKBLK_OP_WRITE) {
		nbt_step(q, t, NBT_READ, 0, true);
	} else {
		memcpy(tag->buf, nbt_at(&req), len);
		nbt_step(q, t, NBT_WRITE, 0, true);
	}
}

/* The RDMA read of a WRITE request completed. */
static void nbt_read_done(struct nbt_queue *q, u32 t, s32 status)
{
	struct nbt_tag *tag = &q->tag[t];

	tag->busy = false;
	if (status) {
		/* The QP is in error: nothing can be answered any more. */
		pr_warn_ratelimited("ndkblk_target: RDMA read: %#x\n", status);
		return;
	}
	memcpy(nbt_at(&tag->req), tag->buf, le32_to_cpu(tag->req.length));
	nbt_step(q, t, NBT_ANSWER, 0, true);
}

static void nbt_result(struct nbt_queue *q, const struct ndk_result_ex *r)
{
	uintptr_t ctx = (uintptr_t)r->request_context;

	if (r->qp_context != (void *)q->gen)
		return;	/* a closed QP's flush */
	if (r->type & NDK_OPERATION_TYPE_RECEIVE) {
		if (!r->status && ctx < NDKBLK_DEPTH)
			nbt_request(q, ctx, r->bytes_transferred);
	} else if (r->type == NDK_OPERATION_TYPE_READ &&
		   ctx < NDKBLK_DEPTH) {
		nbt_read_done(q, ctx, r->status);
	} else if (r->status && r->status != STATUS_CANCELLED) {
		pr_warn_ratelimited("ndkblk_target: request type %u: %#x\n",
				    r->type, r->status);
	}
}

/* Every result, then what a full send queue held back.  Locked. */
static void nbt_poll(struct nbt_queue *q)
{
	struct ndk_result_ex res[16];
	bool armed = false;
	u32 n, i;

	lockdep_assert_held(&q->lock);
	if (!q->cq)
		return;	/* closed by nbt_reset_work() */
	for (;;) {
		n = ndk_get_cq_results_ex(q->cq, res, ARRAY_SIZE(res));
		for (i = 0; i < n; i++)
			nbt_result(q, &res[i]);
		nbt_kick(q);
		if (n)
			continue;
		if (armed)
			break;
		ndk_arm_cq(q->cq, NDK_CQ_NOTIFY_ANY);
		armed = true;
	}
	/* Silent requests free the queue without a result: look again. */
	if (!list_empty(&q->pending) && nbt_connected(q))
		queue_delayed_work(q->wq, &q->retry, 1);
}

static void nbt_serve(struct nbt_queue *q)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	nbt_poll(q);
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * Results are handled in the callback itself: no workqueue hop of ours;
 * with direct_notify none of ndk.ko's either.
 */
static void nbt_cq_notify(void *context, s32 status)
{
	nbt_serve(context);
}

static void nbt_retry_work(struct work_struct *work)
{
	nbt_serve(container_of(to_delayed_work(work), struct nbt_queue, retry));
}

/* A QP for the next initiator, a receive posted for every tag. */
static int nbt_qp_open(struct nbt_queue *q)
{
	struct ndk_qp *qp;
	int ret = 0;
	u32 i;

	/*
	 * Up to two requests' posts per tag: a tag's silent answer may not
	 * have completed when its next request arrives.
	 */
	if (ndk_create_qp(nbt.pd, q->cq, q->cq, (void *)q->gen, NDKBLK_DEPTH,
			  4 * NDKBLK_DEPTH + 8, 1, 1, 0, NULL, NULL, &qp))
		return -EIO;
	spin_lock_irq(&q->lock);
	q->qp = qp;
	INIT_LIST_HEAD(&q->pending);
	for (i = 0; i < NDKBLK_DEPTH; i++) {
		q->tag[i].busy = false;
		q->tag[i].step = NBT_NONE;
		INIT_LIST_HEAD(&q->tag[i].pending);
		if (!ret && nbt_post_receive(q, i))
			ret = -EIO;
	}
	spin_unlock_irq(&q->lock);
	return ret;
}

static void nbt_qp_close(struct nbt_queue *q)
{
	struct ndk_connector *c;
	struct ndk_qp *qp;

	spin_lock(&nbt.lock);
	c = q->conn;
	q->conn = NULL;
	q->state = NBT_RESETTING;
	spin_unlock(&nbt.lock);
	/*
	 * No post uses the QP any more, nothing is left to post, and the
	 * flush's results carry the old generation: dropped.
	 */
	spin_lock_irq(&q->lock);
	qp = q->qp;
	q->qp = NULL;
	INIT_LIST_HEAD(&q->pending);
	q->gen++;
	spin_unlock_irq(&q->lock);
	/*
	 * The close tears the connection down without waiting for the peer:
	 * a blocking ndk_disconnect() waits for its answer until the CM gives
	 * up, a time the peer's connection request chose.
	 */
	if (c)
		ndk_close_connector(c, NULL, NULL);
	if (qp)
		ndk_close_qp(qp, NULL, NULL);
	nbt_serve(q);
}

/*
 * On the queue's ordered workqueue: close the connection; then make a QP
 * for the next initiator, or, when the target stops, close the CQ.
 */
static void nbt_reset_work(struct work_struct *work)
{
	struct nbt_queue *q = container_of(work, struct nbt_queue, reset_work);
	struct ndk_cq *cq;

	nbt_qp_close(q);
	if (READ_ONCE(nbt.exiting)) {
		spin_lock_irq(&q->lock);
		cq = q->cq;
		q->cq = NULL;
		spin_unlock_irq(&q->lock);
		if (cq)
			ndk_close_cq(cq, NULL, NULL);
		return;
	}
	if (nbt_qp_open(q)) {
		pr_err("ndkblk_target: cannot make a QP for the next initiator\n");
		return;
	}
	spin_lock(&nbt.lock);
	q->state = NBT_IDLE;
	spin_unlock(&nbt.lock);
}

/*
 * Close every NDK object: at a device removal, at rmmod, or when a start
 * fails half way.  Called with stop_lock held, like nbt_start().
 */
static void __nbt_stop(void)
{
	u32 i, j;

	spin_lock(&nbt.lock);
	nbt.exiting = true;
	spin_unlock(&nbt.lock);
	for (j = 0; j < nbt.nr_queues; j++) {
		struct nbt_queue *q = &nbt.q[j];

		if (q->wq) {
			queue_work(q->wq, &q->reset_work);
			flush_workqueue(q->wq);
		}
	}
	/* Its close waits for the connectors it handed over. */
	if (nbt.listener)
		ndk_close_listener(nbt.listener, NULL, NULL);
	nbt.listener = NULL;
	for (j = 0; j < nbt.nr_queues; j++) {
		struct nbt_queue *q = &nbt.q[j];

		for (i = 0; i < NDKBLK_DEPTH; i++) {
			if (q->tag[i].mr)
				ndk_close_mr(q->tag[i].mr, NULL, NULL);
			q->tag[i].mr = NULL;
		}
		if (q->ctrl_mr)
			ndk_close_mr(q->ctrl_mr, NULL, NULL);
		q->ctrl_mr = NULL;
		if (q->cq)	/* only when its workqueue never existed */
			ndk_close_cq(q->cq, NULL, NULL);
		q->cq = NULL;
	}
	if (nbt.pd)
		ndk_close_pd(nbt.pd, NULL, NULL);
	nbt.pd = NULL;
	if (nbt.adapter)
		ndk_close_adapter(nbt.adapter);
	nbt.adapter = NULL;
}

static void nbt_stop(void)
{
	mutex_lock(&nbt.stop_lock);
	__nbt_stop();
	mutex_unlock(&nbt.stop_lock);
}

static int nbt_start(void);

static void nbt_removal_work(struct work_struct *work)
{
	nbt_stop();
	if (!READ_ONCE(nbt.unloading))
		queue_delayed_work(system_long_wq, &nbt.restart, HZ);
}

static void nbt_restart_work(struct work_struct *work)
{
	static unsigned int attempts;

	int ret;

	if (READ_ONCE(nbt.unloading))
		return;
	mutex_lock(&nbt.stop_lock);
	ret = nbt_start();
	mutex_unlock(&nbt.stop_lock);
	if (!ret) {
		pr_info("ndkblk_target: serving again after %u attempts\n",
			attempts + 1);
		attempts = 0;
		return;
	}
	attempts++;
	if (!READ_ONCE(nbt.unloading))
		queue_delayed_work(system_long_wq, &nbt.restart, HZ);
}

/* The adapter goes away: its removal waits for our objects' closes. */
static void nbt_removal(void *context)
{
	pr_warn("ndkblk_target: adapter %s removed; serving again when it is back\n",
		adapter);
	schedule_work(&nbt.removal_work);
}

static void nbt_free(void)
{
	u32 i, j;

	WRITE_ONCE(nbt.unloading, true);
	cancel_work_sync(&nbt.removal_work);
	cancel_delayed_work_sync(&nbt.restart);
	nbt_stop();
	/* A removal callback that ran until the adapter's close queued it. */
	cancel_work_sync(&nbt.removal_work);
	for (j = 0; nbt.q && j < nbt.nr_queues; j++) {
		struct nbt_queue *q = &nbt.q[j];

		if (q->wq) {	/* its work items were initialised first */
			cancel_delayed_work_sync(&q->retry);
			destroy_workqueue(q->wq);
		}
		for (i = 0; i < NDKBLK_DEPTH; i++)
			kfree(q->tag[i].buf);
		kfree(q->ctrl);
	}
	kfree(nbt.q);
	vfree(nbt.store);
}

static int nbt_listen(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};

	if (!addr || !in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, -1,
			       NULL)) {
		pr_err("ndkblk_target: addr=<IPv4 of %s> is required\n",
		       adapter);
		return -EINVAL;
	}
	if (ndk_create_listener(nbt.adapter, nbt_connect_event, NULL, NULL,
				NULL, &nbt.listener)) {
		nbt.listener = NULL;
		return -EIO;
	}
	if (ndk_listen(nbt.listener, (struct sockaddr *)&sin, sizeof(sin),
		       NULL, NULL))
		return -EADDRINUSE;
	return 0;
}

/* A queue's CQ, registrations and first QP. */
static int nbt_queue_start(struct nbt_queue *q)
{
	u32 rw = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK;
	int ret;
	u32 i;

	if (ndk_create_cq(nbt.adapter, 6 * NDKBLK_DEPTH, nbt_cq_notify, q,
			  NULL, NULL, NULL, &q->cq)) {
		q->cq = NULL;
		return -EIO;
	}
	/* Before the first arm (nbt_start()'s nbt_serve()). */
	if (READ_ONCE(direct_notify) && ndk_cq_set_direct_notification(q->cq))
		return -EIO;
	ret = ndkblk_register(nbt.pd, &q->ctrl_mr, q->ctrl, sizeof(*q->ctrl),
			      rw, &q->ctrl_token);
	for (i = 0; !ret && i < NDKBLK_DEPTH; i++)
		ret = ndkblk_register(nbt.pd, &q->tag[i].mr, q->tag[i].buf,
				      NDKBLK_MAX_IO, rw, &q->tag[i].token);
	if (!ret)
		ret = nbt_qp_open(q);
	if (ret)
		return ret;
	q->state = NBT_IDLE;
	return 0;
}

/* Open the adapter and serve: every NDK object, then the listener. */
static int nbt_start(void)
{
	u32 size = sizeof(nbt.info);
	int ret = -EIO;
	u32 j;

	if (ndk_open_adapter(adapter, nbt_removal, NULL, &nbt.adapter)) {
		nbt.adapter = NULL;
		return -ENODEV;
	}
	if (ndk_query_adapter_info(nbt.adapter, &nbt.info, &size) ||
	    ndk_create_pd(nbt.adapter, NULL, NULL, &nbt.pd)) {
		nbt.pd = NULL;
		goto err_stop;
	}
	nbt.read_limit = min(nbt.info.max_outbound_read_limit, 16u);
	spin_lock(&nbt.lock);
	nbt.exiting = false;
	for (j = 0; j < nbt.nr_queues; j++)
		nbt.q[j].state = NBT_RESETTING;
	spin_unlock(&nbt.lock);
	for (j = 0; j < nbt.nr_queues; j++) {
		ret = nbt_queue_start(&nbt.q[j]);
		if (ret)
			goto err_stop;
	}
	ret = nbt_listen();
	if (ret)
		goto err_stop;
	for (j = 0; j < nbt.nr_queues; j++)	/* arm the CQs */
		nbt_serve(&nbt.q[j]);
	return 0;

err_stop:
	__nbt_stop();
	return ret;
}

static int __init nbt_init(void)
{
	int ret = -ENOMEM;
	u32 i, j;

	spin_lock_init(&nbt.lock);
	mutex_init(&nbt.stop_lock);
	INIT_WORK(&nbt.removal_work, nbt_removal_work);
	INIT_DELAYED_WORK(&nbt.restart, nbt_restart_work);
	nbt.bytes = (u64)size_mb << 20;
	if (!nbt.bytes || !queues || queues > NDKBLK_MAX_QUEUES)
		return -EINVAL;
	nbt.store = vzalloc(nbt.bytes);
	nbt.q = kcalloc(queues, sizeof(*nbt.q), GFP_KERNEL);
	if (!nbt.store || !nbt.q)
		goto err_free;
	nbt.nr_queues = queues;
	for (j = 0; j < nbt.nr_queues; j++) {
		struct nbt_queue *q = &nbt.q[j];

		q->state = NBT_RESETTING;
		spin_lock_init(&q->lock);
		INIT_DELAYED_WORK(&q->retry, nbt_retry_work);
		INIT_LIST_HEAD(&q->pending);
		INIT_WORK(&q->reset_work, nbt_reset_work);
		q->ctrl = kzalloc(sizeof(*q->ctrl), GFP_KERNEL);
		q->wq = alloc_ordered_workqueue("ndkblk_target/%u", 0, j);
		if (!q->ctrl || !q->wq)
			goto err_free;
		for (i = 0; i < NDKBLK_DEPTH; i++) {
			q->tag[i].buf = kmalloc(NDKBLK_MAX_IO, GFP_KERNEL);
			if (!q->tag[i].buf)
				goto err_free;
		}
	}
	mutex_lock(&nbt.stop_lock);
	ret = nbt_start();
	mutex_unlock(&nbt.stop_lock);
	if (ret)
		goto err_free;
	pr_info("ndkblk_target: serving %u MiB on %s, %s:%u, %u queues\n",
		size_mb, adapter, addr, port, nbt.nr_queues);
	return 0;

err_free:
	nbt_free();
	return ret;
}

static void __exit nbt_exit(void)
{
	nbt_free();
}

module_init(nbt_init);
module_exit(nbt_exit);
MODULE_DESCRIPTION("ndkblk target: a RAM namespace served over NDK");
MODULE_LICENSE("GPL");
