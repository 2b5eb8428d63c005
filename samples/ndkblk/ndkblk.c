// SPDX-License-Identifier: GPL-2.0
/*
 * ndkblk.ko: a blk-mq disk served by ndkblk_target.ko over NDK.
 *
 * Built like any out-of-tree NDK consumer, against <ndk/ndkpi.h> and
 * ndk.ko's Module.symvers only.  Hardware queue i is connection i, with
 * its own QP and CQ (as nvme-rdma's queues); tag t of queue i owns slot t
 * of it (a fast-register MR, its logical address mapping, a request
 * buffer and an answer buffer).
 *
 * Per I/O, SMB Direct's pattern (Documentation/ndkblk.md):
 *  1. describe the request's pages as an MDL (the queue's virt boundary
 *     makes them one virtually contiguous range) and map them
 *     (ndk_build_lam());
 *  2. fast-register them with the right the target needs (remote write
 *     for a read, remote read for a write), silent and deferred;
 *  3. send the request with the token, address and length: one doorbell
 *     for both (a write of up to inline_max bytes skips 1 and 2: its data
 *     is copied into the request message, and the answer is a plain
 *     send);
 *  4. the target moves the data and answers with send-and-invalidate; the
 *     receive's result names the invalidated token, and the I/O completes;
 *     if the peer did not invalidate it (an error answer), a local
 *     invalidate runs first.
 * Completions are handled in the CQ's notification callback.  With
 * direct_notify (the default) it runs from the device's completion
 * handler (softirq on rxe, hard interrupt on mlx5;
 * ndk_cq_set_direct_notification()), otherwise from ndk.ko's work item:
 * every lock it takes is taken with interrupts off, and nothing it calls
 * sleeps (blk_mq_complete_request(), NDK posts, ndk_flush()).
 *
 * Lifecycle: a failed request, a disconnect, a timeout or the adapter's
 * removal kills the connection, every queue's: the QPs are flushed, and
 * every I/O in flight waits for the reconnection (blk-mq's requeue list)
 * and is sent again, as nvme-rdma retries, unless retry_timeout passes
 * first or it has lived through NBK_RETRIES kills: then it fails, and so
 * does new I/O until the connections are up again.  A work item then
 * closes every NDK object (the adapter too, so that a removal can
 * proceed) and tries to connect again every second, reopening the
 * adapter by name; the disk stays.  A queue's objects are replaced only
 * while its dead flag is set under its post_lock, and every post checks
 * it in the same lock section.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/blk-mq.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <ndk/ndkpi.h>

#include "ndkblk_proto.h"

static char *adapter = "rxe0";
module_param(adapter, charp, 0444);
MODULE_PARM_DESC(adapter, "NDK adapter to connect through");
static char *target;
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "IPv4 address of the target");
static ushort port = NDKBLK_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "the target's port");
static char *mode = "fr";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "fr: fast-register each I/O's pages; window: bind a window over a registered pool buffer");
static uint inline_max = NDKBLK_INLINE_MAX;
module_param(inline_max, uint, 0444);
MODULE_PARM_DESC(inline_max, "largest write sent inside its request (0: none)");
static uint nr_queues;
module_param(nr_queues, uint, 0444);
MODULE_PARM_DESC(nr_queues, "hardware queues, one connection each (0: one per CPU, at most 8; fewer if the target serves fewer)");
static uint max_io;
module_param(max_io, uint, 0444);
MODULE_PARM_DESC(max_io, "cap on the bytes per request, a multiple of 4096 (0: what the adapter and the target take, at most 128 KiB)");
static uint retry_timeout = 10;
module_param(retry_timeout, uint, 0444);
MODULE_PARM_DESC(retry_timeout, "seconds the I/O of a lost connection waits for the reconnection before it fails (0: it fails at once)");
static uint io_timeout = 30;
module_param(io_timeout, uint, 0444);
MODULE_PARM_DESC(io_timeout, "seconds before an I/O kills the connection");

static unsigned int connect_timeout = 10;
module_param(connect_timeout, uint, 0444);
MODULE_PARM_DESC(connect_timeout, "seconds a connection attempt waits for the target's answer (a silent or stalling target holds nothing longer)");
static bool direct_notify = true;
module_param(direct_notify, bool, 0644);
MODULE_PARM_DESC(direct_notify, "CQ notifications from the completion handler (1) or ndk.ko's work item (0); read when a connection's CQs are created");

#define NBK_DEPTH	NDKBLK_DEPTH
#define NBK_INV		1UL	/* request context bit: a local invalidate */
/* Kills an I/O lives through before it fails (its retries). */
#define NBK_RETRIES	2
/* An I/O's outcome when a kill ends it: sent again after the reconnection. */
#define NBK_STS_RETRY	BLK_STS_TRANSPORT

/**
 * struct nbk_cmd - blk-mq's per-request data
 * @retries: kills the request lived through
 */
struct nbk_cmd {
	u8 retries;
};

/**
 * enum nbk_kind - how an I/O's data travels
 * @NBK_FR:     its pages fast-registered, the target moves the data
 * @NBK_WINDOW: copied through the slot's pool buffer, a window bound over
 *              it, the target moves the data (mode=window)
 * @NBK_INLINE: a small write: the data inside the request message
 */
enum nbk_kind { NBK_FR, NBK_WINDOW, NBK_INLINE };

/**
 * struct nbk_slot - what tag t of a hardware queue owns
 * @mr:       fast-register MR, initialised for fr_pages
 * @mdl:      the I/O's MDL, room for max_pages
 * @lam:      its mapping, room for max_pages
 * @rq:       the request in flight, or NULL
 * @token:    @mr's remote token of the registration in flight
 * @err:      the I/O's outcome
 * @kind:     how the I/O's data travels (enum nbk_kind)
 * @pool:     window mode: NDKBLK_MAX_IO bytes, registered in @pool_mr
 * @pool_mr:  window mode: the pool's registration, local write
 * @mw:       window mode: the window bound over @pool per I/O
 * @answered: the target answered @rq: a second answer breaks the
 *            protocol (it could finish the slot's next request)
 *
 * @lam holds a mapping exactly while @rq is set and @kind is NBK_FR.
 */
struct nbk_slot {
	struct ndk_mr *mr;
	struct ndk_mdl *mdl;
	struct ndk_logical_address_mapping *lam;
	struct request *rq;
	u32 token;
	blk_status_t err;
	u8 kind;
	void *pool;
	struct ndk_mr *pool_mr;
	struct ndk_mw *mw;
	bool answered;
};

/**
 * struct nbk_ctrl - the registered control buffers of a queue
 * @msg: the request message of each tag
 * @rsp: one receive buffer per tag
 */
struct nbk_ctrl {
	struct ndkblk_msg msg[NBK_DEPTH];
	struct ndkblk_rsp rsp[NBK_DEPTH];
};

/**
 * struct nbk_queue - a hardware queue: its own connection, QP and CQ
 * @cq:         its CQ, for both the QP's queues
 * @qp:         its QP
 * @conn:       its connection
 * @ctrl:       its control buffers, registered in @ctrl_mr
 * @ctrl_mr:    their registration, local write
 * @ctrl_token: its local token
 * @post_lock:  serializes the QP's posts
 * @dead:       under @post_lock: no post may run
 * @ios:        under @post_lock: requests sent on the queue
 * @slot:       what each tag of the queue owns
 */
struct nbk_queue {
	struct ndk_cq *cq;
	struct ndk_qp *qp;
	struct ndk_connector *conn;
	struct nbk_ctrl *ctrl;
	struct ndk_mr *ctrl_mr;
	u32 ctrl_token;
	spinlock_t post_lock;	/* serializes the QP's posts */
	bool dead;
	u64 ios;
	struct nbk_slot slot[NBK_DEPTH];
};

static struct nbk {
	struct ndk_adapter *adapter;
	struct ndk_adapter_info info;
	struct ndk_pd *pd;
	struct nbk_queue *q;
	u32 nr_alloc;		/* queues allocated: nr_queues */
	u32 nr_queues;		/* queues connected: the disk's hw queues */
	u32 max_pages;		/* room in each slot's MDL and mapping */
	u32 lam_size;
	u32 max_io;		/* bytes per request, fixed at the first connection */
	u32 fr_pages;		/* pages per registration: max_io's span */
	u64 sectors;
	unsigned long broken;	/* bit 0: killed since the last nbk_up() */
	struct blk_mq_tag_set tags;
	struct gendisk *disk;
	struct delayed_work reconnect;
	bool stopping;
	bool failing;		/* the retry time is up: I/O fails at once */
	atomic_t removals;	/* adapter removals: a connect in flight ends */
	wait_queue_head_t connect_wait;	/* a connect's end, stop, removal */
	struct delayed_work fail_work;
	u32 inline_max;
	bool window;
	atomic64_t ios, inline_ios, peer_invalidated, local_invalidated, killed;
	atomic64_t busy;	/* dispatches that met a registration's kill */
} nbk;

static void nbk_finish(struct nbk_slot *s, blk_status_t err);

/*
 * Kill the connection, every queue's: flush the QPs and end every I/O
 * in flight (no answer can come any more, and a request the peer holds
 * has nothing left for the flush to report): nbk_complete() requeues it
 * for the reconnection or fails it.  Start the retry clock and let the
 * reconnect work replace the connection after @delay jiffies.  A kill
 * while nbk_up() runs marks nbk.broken, which it checks last.
 */
static void nbk_kill_after(const char *why, unsigned long delay)
{
	unsigned long flags;
	bool was = false;
	bool live;
	u32 i, t;

	set_bit(0, &nbk.broken);
	smp_mb__after_atomic();	/* pairs with nbk_up()'s smp_mb() */
	for (i = 0; i < nbk.nr_alloc; i++) {
		struct nbk_queue *q = &nbk.q[i];

		spin_lock_irqsave(&q->post_lock, flags);
		live = !q->dead;
		if (live) {
			q->dead = true;
			ndk_flush(q->qp);
		}
		spin_unlock_irqrestore(&q->post_lock, flags);
		if (!live)
			continue;
		was = true;
		for (t = 0; t < NBK_DEPTH; t++)
			nbk_finish(&q->slot[t], NBK_STS_RETRY);
	}
	if (was) {
		pr_warn("ndkblk: connection lost (%s); I/O waits up to %u s for it\n",
			why, retry_timeout);
		if (READ_ONCE(nbk.stopping))
			return;	/* rmmod cancels the work after the teardown */
		/* Not again if the clock runs already (a kill at reconnect). */
		queue_delayed_work(system_long_wq, &nbk.fail_work,
				   retry_timeout * HZ);
		mod_delayed_work(system_long_wq, &nbk.reconnect, delay);
	}
}

/*
 * At rmmod (nbk.stopping set): stop the reconnect and retry clocks.  Called
 * before the teardown and again after it, since a kill that read
 * nbk.stopping before it was set may queue them until the teardown has
 * closed every queue (no callback runs after that).
 */
static void nbk_cancel_work(void)
{
	cancel_delayed_work_sync(&nbk.reconnect);
	cancel_delayed_work_sync(&nbk.fail_work);
}

/* Requests waiting for the connection run again (and go, or fail). */
static void nbk_kick(void)
{
	if (nbk.disk) {
		blk_mq_kick_requeue_list(nbk.disk->queue);
		blk_mq_run_hw_queues(nbk.disk->queue, true);
	}
}

/* No reconnection within retry_timeout: what waits for it fails. */
static void nbk_fail_work(struct work_struct *work)
{
	WRITE_ONCE(nbk.failing, true);
	pr_warn("ndkblk: not reconnected within %u s; I/O fails until it is\n",
		retry_timeout);
	nbk_kick();
}

static void nbk_kill(const char *why)
{
	nbk_kill_after(why, HZ);
}

/*
 * I/O that would wait for the connection fails at once: the retry time is
 * up, or the module goes (a reconnection that succeeds during rmmod clears
 * nbk.failing, and nothing would kick a request requeued after that).
 */
static bool nbk_failing(void)
{
	return READ_ONCE(nbk.failing) || READ_ONCE(nbk.stopping);
}

/*
 * What queue_rq answers for I/O that must wait for the reconnection:
 * blk-mq tries it again shortly, until retry_timeout is up.
 */
static blk_status_t nbk_wait_status(void)
{
	return nbk_failing() ? BLK_STS_IOERR : BLK_STS_RESOURCE;
}

static void nbk_disconnected(void *context)
{
	nbk_kill("disconnected");
}

/*
 * The removal waits for our objects: a connect in flight gives up and
 * the reconnect work closes them now.
 */
static void nbk_removal(void *context)
{
	atomic_inc(&nbk.removals);
	wake_up_all(&nbk.connect_wait);
	nbk_kill_after("adapter removed", 0);
}

static s32 nbk_receive(struct nbk_queue *q, u32 i)
{
	return ndkblk_receive(q->qp, i, &q->ctrl->rsp[i],
			      sizeof(q->ctrl->rsp[i]), q->ctrl_token);
}

static s32 nbk_post_receive(struct nbk_queue *q, u32 i)
{
	unsigned long flags;
	s32 st;

	spin_lock_irqsave(&q->post_lock, flags);
	st = q->dead ? STATUS_CONNECTION_INVALID : nbk_receive(q, i);
	spin_unlock_irqrestore(&q->post_lock, flags);
	return st;
}

/* A small write's data goes into its request message, or any write's
 * into the slot's pool buffer (window mode).
 */
static void nbk_copy_in(u8 *dst, struct request *rq)
{
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		memcpy_from_bvec(dst, &bv);
		dst += bv.bv_len;
	}
}

/* A read's data from the pool buffer into the request's pages. */
static void nbk_copy_out(struct request *rq, const u8 *src)
{
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		memcpy_to_bvec(&bv, src);
		src += bv.bv_len;
	}
}

/*
 * The slot's I/O is over: unmap its pages and complete the request.  The
 * first caller wins: a flush can report an I/O twice (its fast-register
 * and its send), on two CPUs.
 */
static void nbk_finish(struct nbk_slot *s, blk_status_t err)
{
	struct request *rq = xchg(&s->rq, NULL);

	if (!rq)
		return;
	if (err == NBK_STS_RETRY && s->kind != NBK_INLINE)
		atomic64_inc(&nbk.killed);	/* its registration too */
	if (s->kind == NBK_FR)
		ndk_release_lam(nbk.adapter, s->lam);
	else if (s->kind == NBK_WINDOW && !err && rq_data_dir(rq) == READ)
		nbk_copy_out(rq, s->pool);
	s->err = err;
	blk_mq_complete_request(rq);
}

/* An answer: the target invalidated the token, or we do it here. */
static void nbk_answer(struct nbk_queue *q, const struct ndk_result_ex *r)
{
	u32 i = (uintptr_t)r->request_context;
	struct ndkblk_rsp rsp = q->ctrl->rsp[i];
	u32 t = le16_to_cpu(rsp.tag);
	struct nbk_slot *s;
	unsigned long flags;
	blk_status_t err;
	s32 st;

	if (nbk_post_receive(q, i))
		nbk_kill("receive not reposted");	/* nothing if dead */
	if (r->bytes_transferred < sizeof(rsp) ||
	    le32_to_cpu(rsp.magic) != NDKBLK_MAGIC || t >= NBK_DEPTH ||
	    !q->slot[t].rq) {
		nbk_kill("malformed answer");
		return;
	}
	s = &q->slot[t];
	if (xchg(&s->answered, true)) {
		nbk_kill("second answer");
		return;
	}
	err = rsp.status ? BLK_STS_IOERR : BLK_STS_OK;
	if (s->kind == NBK_INLINE) {	/* nothing was registered */
		nbk_finish(s, err);
		return;
	}
	if (r->type == NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE &&
	    r->type_specific_completion_output == s->token) {
		atomic64_inc(&nbk.peer_invalidated);
		nbk_finish(s, err);
		return;
	}
	s->err = err;
	spin_lock_irqsave(&q->post_lock, flags);
	st = q->dead ? STATUS_CONNECTION_INVALID :
	     ndk_invalidate(q->qp, (void *)((uintptr_t)s | NBK_INV),
			    s->kind == NBK_WINDOW ?
			    (struct ndk_object_header *)s->mw :
			    (struct ndk_object_header *)s->mr, 0);
	spin_unlock_irqrestore(&q->post_lock, flags);
	if (st)
		nbk_kill("local invalidate");
}

static void nbk_result(struct nbk_queue *q, const struct ndk_result_ex *r)
{
	uintptr_t ctx = (uintptr_t)r->request_context;
	struct nbk_slot *s = (struct nbk_slot *)(ctx & ~NBK_INV);

	if (r->type & NDK_OPERATION_TYPE_RECEIVE) {
		if (!r->status && ctx < NBK_DEPTH)
			nbk_answer(q, r);
		else if (r->status != STATUS_CANCELLED)
			nbk_kill("receive failed");
		return;
	}
	/* Initiator requests: only failures and local invalidates come. */
	if (r->status == STATUS_SUCCESS &&
	    r->type == NDK_OPERATION_TYPE_INVALIDATE && (ctx & NBK_INV)) {
		atomic64_inc(&nbk.local_invalidated);
		nbk_finish(s, s->err);
		return;
	}
	if (r->status != STATUS_CANCELLED)
		pr_warn_ratelimited("ndkblk: request type %u: %#x\n", r->type,
				    r->status);
	nbk_kill("request failed");
	/*
	 * Ended by the kill, like every I/O in flight: sent again after the
	 * reconnection.  It is finished here when another kill (the peer's
	 * disconnect) had marked the queue dead and not yet reached this
	 * slot; failing it here raced that kill's retry into an EIO.
	 */
	if (ctx)
		nbk_finish(s, NBK_STS_RETRY);
}

static void nbk_poll(struct nbk_queue *q)
{
	struct ndk_result_ex res[16];
	u32 n, i;

	do {
		n = ndk_get_cq_results_ex(q->cq, res, ARRAY_SIZE(res));
		for (i = 0; i < n; i++)
			nbk_result(q, &res[i]);
	} while (n);
}

static void nbk_cq_notify(void *context, s32 status)
{
	struct nbk_queue *q = context;

	nbk_poll(q);
	ndk_arm_cq(q->cq, NDK_CQ_NOTIFY_ANY);
	nbk_poll(q);
}

/*
 * Describe the request's pages as one MDL and map them.  The queue's
 * virt boundary makes them one virtually contiguous range: every segment
 * but the first starts a page, every one but the last ends one, except
 * that a merged request may continue a page where the previous segment
 * ended (two bios into one buffer): that page appears once.
 * Return: ndk_build_lam()'s status, or STATUS_INVALID_PARAMETER (a
 * layout one page list cannot describe).
 */
static s32 nbk_map(struct nbk_slot *s, struct request *rq, u32 *fbo)
{
	struct ndk_mdl *mdl = s->mdl;
	u32 n = 0, end = PAGE_SIZE, lam_size = nbk.lam_size;
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		if (n && bv.bv_page == mdl->pages[n - 1] &&
		    bv.bv_offset == end) {
			end += bv.bv_len;
			continue;
		}
		if (n == nbk.fr_pages || end != PAGE_SIZE ||
		    (n && bv.bv_offset))
			return STATUS_INVALID_PARAMETER;
		if (!n)
			mdl->byte_offset = bv.bv_offset;
		end = bv.bv_offset + bv.bv_len;
		mdl->pages[n++] = bv.bv_page;
	}
	mdl->byte_count = blk_rq_bytes(rq);
	mdl->page_count = n;
	if (!n)
		return STATUS_INVALID_PARAMETER;
	return ndk_build_lam(nbk.adapter, mdl, mdl->byte_count, NULL, NULL,
			     s->lam, &lam_size, fbo);
}

static blk_status_t nbk_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd)
{
	struct nbk_queue *q = hctx->driver_data;
	struct request *rq = bd->rq;
	struct nbk_slot *s = &q->slot[rq->tag];
	struct ndkblk_msg *msg = &q->ctrl->msg[rq->tag];
	struct ndkblk_req *req = &msg->req;
	bool write = rq_data_dir(rq) == WRITE;
	u32 len = blk_rq_bytes(rq);
	struct ndk_sge sge = {
		.virtual_address = msg,
		.length = sizeof(*req),
		.memory_region_token = q->ctrl_token,
	};
	unsigned long flags;
	blk_status_t ret;
	bool posted;
	u64 base = 0;
	u32 fbo, op;
	s32 st = 0;

	if (req_op(rq) != REQ_OP_READ && req_op(rq) != REQ_OP_WRITE)
		return BLK_STS_NOTSUPP;
	if (!(rq->rq_flags & RQF_DONTPREP)) {	/* its first dispatch */
		((struct nbk_cmd *)blk_mq_rq_to_pdu(rq))->retries = 0;
		rq->rq_flags |= RQF_DONTPREP;
	}
	blk_mq_start_request(rq);
	s->kind = write && len <= nbk.inline_max ? NBK_INLINE :
		  nbk.window ? NBK_WINDOW : NBK_FR;
	if (s->kind == NBK_INLINE) {
		nbk_copy_in(msg->data, rq);
		sge.length += len;
	} else if (s->kind == NBK_WINDOW && write) {
		nbk_copy_in(s->pool, rq);
	}
	op = s->kind == NBK_INLINE ? NDKBLK_OP_WRITE_INLINE :
	     write ? NDKBLK_OP_WRITE : NDKBLK_OP_READ;
	/* The adapter and the QP live while q->dead is clear. */
	spin_lock_irqsave(&q->post_lock, flags);
	if (q->dead) {
		spin_unlock_irqrestore(&q->post_lock, flags);
		return nbk_wait_status();
	}
	if (s->kind == NBK_FR)
		st = nbk_map(s, rq, &fbo);
	if (st == STATUS_DEVICE_REMOVED) {
		/*
		 * The adapter's removal came before its event killed the
		 * connection: the I/O waits for the next one.
		 */
		spin_unlock_irqrestore(&q->post_lock, flags);
		nbk_kill("adapter removed");
		return nbk_wait_status();
	}
	if (st) {
		spin_unlock_irqrestore(&q->post_lock, flags);
		pr_warn_ratelimited("ndkblk: an I/O's pages cannot be mapped (%#x)\n",
				    st);
		return BLK_STS_IOERR;
	}
	s->rq = rq;
	s->answered = false;
	s->token = 0;
	if (s->kind == NBK_WINDOW) {
		base = (uintptr_t)s->pool;
		st = ndk_bind(q->qp, s, s->pool_mr, s->mw, s->pool, len,
			      (write ? NDK_OP_FLAG_ALLOW_REMOTE_READ :
				       NDK_OP_FLAG_ALLOW_REMOTE_WRITE) |
			      NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_DEFER);
		if (!st)
			s->token = ndk_get_remote_token_from_mw(s->mw);
	} else if (s->kind == NBK_FR) {
		/* The registration's address: the slot's own index space. */
		base = ((u64)(rq->tag + 1) << 32) + fbo;
		st = ndk_fast_register(q->qp, s, s->mr,
				       s->lam->adapter_page_count,
				       s->lam->adapter_page_array, fbo, len,
				       (void *)(uintptr_t)base,
				       (write ? NDK_OP_FLAG_ALLOW_REMOTE_READ :
						NDK_OP_FLAG_ALLOW_REMOTE_WRITE) |
				       NDK_OP_FLAG_SILENT_SUCCESS |
				       NDK_OP_FLAG_DEFER);
		if (!st)
			s->token = ndk_get_remote_token_from_mr(s->mr);
	}
	posted = !st && s->kind != NBK_INLINE;
	if (!st) {
		req->magic = cpu_to_le32(NDKBLK_MAGIC);
		req->opcode = cpu_to_le16(op);
		req->tag = cpu_to_le16(rq->tag);
		req->sector = cpu_to_le64(blk_rq_pos(rq));
		req->length = cpu_to_le32(len);
		req->token = cpu_to_le32(s->token);
		req->address = cpu_to_le64(base);
		st = ndk_send(q->qp, s, &sge, 1, NDK_OP_FLAG_SILENT_SUCCESS);
	}
	if (!st) {
		q->ios++;
		spin_unlock_irqrestore(&q->post_lock, flags);
		atomic64_inc(s->kind == NBK_INLINE ? &nbk.inline_ios :
			     &nbk.ios);
		return BLK_STS_OK;
	}
	if ((st == STATUS_INSUFFICIENT_RESOURCES || st == STATUS_DEVICE_BUSY) &&
	    !posted) {
		/*
		 * Nothing was posted: the queue is full, or ndk.ko is still
		 * replacing the slot's key after a registration it could not
		 * trust dead (a peer's invalidation seen before the
		 * registration's own completion; Documentation/ndkblk.md).
		 * blk-mq retries.
		 */
		if (st == STATUS_DEVICE_BUSY)
			atomic64_inc(&nbk.busy);
		/*
		 * Unless an answer took it meanwhile: a target may answer a
		 * tag before its request (nbk_answer() looks only at the
		 * slot), and then that answer completes it; handing it back
		 * to blk-mq as well would end it twice.
		 */
		if (!xchg(&s->rq, NULL)) {
			spin_unlock_irqrestore(&q->post_lock, flags);
			return BLK_STS_OK;
		}
		if (s->kind == NBK_FR)
			ndk_release_lam(nbk.adapter, s->lam);
		spin_unlock_irqrestore(&q->post_lock, flags);
		return BLK_STS_RESOURCE;
	}
	/*
	 * A refused send posts the deferred fast-register (silently): no
	 * result names this I/O any more.  Its pages are never announced to
	 * the target, and the connection dies here; the I/O waits for the
	 * next one like those the kill ends.
	 */
	ret = BLK_STS_OK;	/* unless it is still ours: a flush finished it */
	if (xchg(&s->rq, NULL)) {
		if (s->kind == NBK_FR)
			ndk_release_lam(nbk.adapter, s->lam);
		ret = nbk_wait_status();
	}
	spin_unlock_irqrestore(&q->post_lock, flags);
	pr_warn_ratelimited("ndkblk: an I/O's post was refused (%#x)\n", st);
	nbk_kill("post refused");
	return ret;
}

static struct nbk_slot *nbk_slot_of(struct request *rq)
{
	struct nbk_queue *q = rq->mq_hctx->driver_data;

	return &q->slot[rq->tag];
}

/*
 * An I/O a kill ended is sent again after the reconnection (blk-mq holds
 * it in its requeue list until nbk_kick()), unless the retry time is up
 * or it has lived through NBK_RETRIES kills already.
 */
static void nbk_complete(struct request *rq)
{
	struct nbk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	blk_status_t err = nbk_slot_of(rq)->err;

	if (err == NBK_STS_RETRY) {
		if (!nbk_failing() && cmd->retries < NBK_RETRIES) {
			cmd->retries++;
			blk_mq_requeue_request(rq, false);
			return;
		}
		err = BLK_STS_IOERR;
	}
	blk_mq_end_request(rq, err);
}

/*
 * A timeout kills the connection, which ends every I/O in flight, this
 * one too (it is finished here if the kill found the queue dead already).
 * The slot is found first: a kill that requeues the request takes its tag.
 */
static enum blk_eh_timer_return nbk_timeout(struct request *rq)
{
	struct nbk_queue *q = rq->mq_hctx->driver_data;
	struct nbk_slot *s = nbk_slot_of(rq);

	if (!READ_ONCE(q->dead))
		nbk_kill("I/O timed out");
	nbk_finish(s, BLK_STS_IOERR);
	return BLK_EH_DONE;
}

/* Hardware queue i is connection i. */
static int nbk_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int i)
{
	hctx->driver_data = &nbk.q[i];
	return 0;
}

static const struct blk_mq_ops nbk_mq_ops = {
	.init_hctx = nbk_init_hctx,
	.queue_rq = nbk_queue_rq,
	.complete = nbk_complete,
	.timeout = nbk_timeout,
};

static const struct block_device_operations nbk_fops = {
	.owner = THIS_MODULE,
};

/* Close a queue's objects; every I/O still in flight on it fails. */
static void nbk_queue_close(struct nbk_queue *q)
{
	u32 i;

	spin_lock_irq(&q->post_lock);
	q->dead = true;
	spin_unlock_irq(&q->post_lock);
	/*
	 * The close tears a connection down without waiting for the peer
	 * (a blocking ndk_disconnect() would wait for a lost host's answer
	 * until the CM gives up).
	 */
	if (q->conn)
		ndk_close_connector(q->conn, NULL, NULL);
	q->conn = NULL;
	if (q->qp)
		ndk_close_qp(q->qp, NULL, NULL);
	q->qp = NULL;
	/* The flush's results: every I/O still in flight fails. */
	if (q->cq) {
		nbk_poll(q);
		ndk_close_cq(q->cq, NULL, NULL);
	}
	q->cq = NULL;
	for (i = 0; i < NBK_DEPTH; i++) {
		struct nbk_slot *s = &q->slot[i];

		nbk_finish(s, BLK_STS_IOERR);
		if (s->mw)
			ndk_close_mw(s->mw, NULL, NULL);
		s->mw = NULL;
		if (s->pool_mr)
			ndk_close_mr(s->pool_mr, NULL, NULL);
		s->pool_mr = NULL;
		if (s->mr)
			ndk_close_mr(s->mr, NULL, NULL);
		s->mr = NULL;
	}
	if (q->ctrl_mr)
		ndk_close_mr(q->ctrl_mr, NULL, NULL);
	q->ctrl_mr = NULL;
}

/*
 * Close every NDK object of the connection, the adapter last; every I/O
 * still in flight fails.  Runs in the reconnect work or at rmmod, never
 * both (rmmod cancels the work first).  Each queue's dead flag is set
 * first, so no post runs or follows; the disk stays.
 */
static void nbk_teardown(void)
{
	u32 i;

	for (i = 0; i < nbk.nr_alloc; i++)
		nbk_queue_close(&nbk.q[i]);
	if (nbk.pd)
		ndk_close_pd(nbk.pd, NULL, NULL);
	nbk.pd = NULL;
	if (nbk.adapter)
		ndk_close_adapter(nbk.adapter);
	nbk.adapter = NULL;
}

static void nbk_free(void)
{
	u32 i, j;

	for (j = 0; nbk.q && j < nbk.nr_alloc; j++) {
		struct nbk_queue *q = &nbk.q[j];

		for (i = 0; i < NBK_DEPTH; i++) {
			kfree(q->slot[i].lam);
			kfree(q->slot[i].pool);
			if (q->slot[i].mdl)
				ndk_mdl_free_chain(q->slot[i].mdl);
		}
		kfree(q->ctrl);
	}
	kfree(nbk.q);
}

/* The buffers every connection uses: each queue's slots and messages. */
static int nbk_alloc(void)
{
	u32 i, j;

	nbk.max_pages = (NDKBLK_MAX_IO >> PAGE_SHIFT) + 1;
	nbk.lam_size = struct_size(nbk.q->slot[0].lam, adapter_page_array,
				   nbk.max_pages);
	nbk.q = kcalloc(nbk.nr_alloc, sizeof(*nbk.q), GFP_KERNEL);
	if (!nbk.q)
		return -ENOMEM;
	for (j = 0; j < nbk.nr_alloc; j++) {
		struct nbk_queue *q = &nbk.q[j];

		spin_lock_init(&q->post_lock);
		q->dead = true;
		q->ctrl = kzalloc(sizeof(*q->ctrl), GFP_KERNEL);
		if (!q->ctrl)
			return -ENOMEM;
		for (i = 0; i < NBK_DEPTH; i++) {
			struct nbk_slot *s = &q->slot[i];

			s->lam = kzalloc(nbk.lam_size, GFP_KERNEL);
			s->mdl = ndk_mdl_alloc(0, nbk.max_pages << PAGE_SHIFT,
					       GFP_KERNEL);
			if (nbk.window)
				s->pool = kzalloc(NDKBLK_MAX_IO, GFP_KERNEL);
			if (!s->lam || !s->mdl || (nbk.window && !s->pool))
				return -ENOMEM;
		}
	}
	return 0;
}

/* A queue's CQ, QP, registrations and receives. */
static int nbk_queue_open(struct nbk_queue *q)
{
	u32 i;

	if (ndk_create_cq(nbk.adapter, 8 * NBK_DEPTH + 16, nbk_cq_notify, q,
			  NULL, NULL, NULL, &q->cq)) {
		q->cq = NULL;
		return -EIO;
	}
	/* Before the first arm (nbk_up()'s nbk_cq_notify()). */
	if (READ_ONCE(direct_notify) && ndk_cq_set_direct_notification(q->cq))
		return -EIO;
	/*
	 * Up to two I/Os' requests per slot (a fast-register or bind, a
	 * send, a local invalidate): the silent ones of the last I/O may not
	 * have completed when the next one is posted.  A full queue makes
	 * blk-mq retry.
	 */
	if (ndk_create_qp(nbk.pd, q->cq, q->cq, q, NBK_DEPTH,
			  6 * NBK_DEPTH + 8, 1, 1, 0, NULL, NULL, &q->qp)) {
		q->qp = NULL;
		return -EIO;
	}
	if (ndkblk_register(nbk.pd, &q->ctrl_mr, q->ctrl, sizeof(*q->ctrl),
			    NDK_MR_FLAG_ALLOW_LOCAL_WRITE, &q->ctrl_token))
		return -EIO;
	for (i = 0; i < NBK_DEPTH; i++) {
		struct nbk_slot *s = &q->slot[i];
		u32 token;

		if (nbk.window) {
			/* Remote write through a window needs local write. */
			if (ndkblk_register(nbk.pd, &s->pool_mr, s->pool,
					    NDKBLK_MAX_IO,
					    NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
					    &token))
				return -EIO;
			if (ndk_create_mw(nbk.pd, NULL, NULL, &s->mw)) {
				s->mw = NULL;
				return -EIO;
			}
			continue;
		}
		if (ndk_create_mr(nbk.pd, true, NULL, NULL, &s->mr)) {
			s->mr = NULL;
			return -EIO;
		}
		if (ndk_initialize_fast_register_mr(s->mr, nbk.fr_pages, true,
						    NULL, NULL))
			return -EIO;
	}
	for (i = 0; i < NBK_DEPTH; i++)
		if (nbk_receive(q, i))
			return -EIO;
	return 0;
}

/* What an asynchronous ndk_connect() reports, waited for in nbk_connect(). */
struct nbk_connect {
	struct completion done;
	s32 status;
};

static void nbk_connected(void *context, s32 status)
{
	struct nbk_connect *c = context;

	c->status = status;
	complete(&c->done);
	wake_up_all(&nbk.connect_wait);
}

/*
 * ndk_connect() of queue @q to @sin, waited for at most connect_timeout
 * seconds and not past the module's stop or the adapter's removal: a
 * target that never answers (or answers with MRAs, which ib_cm lets
 * stretch a connect to hours) holds neither rmmod nor the removal, which
 * waits for this work to close the adapter.  Giving up closes the
 * connector, which cancels the request.
 */
static s32 nbk_connect(struct nbk_queue *q, struct sockaddr_in *sin)
{
	int removals = atomic_read(&nbk.removals);
	struct nbk_connect c;
	s32 st;

	init_completion(&c.done);
	st = ndk_connect(q->conn, q->qp, NULL, 0, (struct sockaddr *)sin,
			 sizeof(*sin), min(nbk.info.max_inbound_read_limit, 16u),
			 0, NULL, 0, nbk_connected, &c);
	if (st != STATUS_PENDING)
		return st;
	wait_event_timeout(nbk.connect_wait,
			   completion_done(&c.done) || READ_ONCE(nbk.stopping) ||
			   atomic_read(&nbk.removals) != removals,
			   connect_timeout * HZ);
	if (!completion_done(&c.done)) {
		pr_warn("ndkblk: connect to %pI4:%u abandoned (%s)\n",
			&sin->sin_addr, port,
			READ_ONCE(nbk.stopping) ? "stopping" :
			atomic_read(&nbk.removals) != removals ?
			"adapter removed" : "no answer in connect_timeout");
		ndk_close_connector(q->conn, NULL, NULL);	/* cancels it */
		q->conn = NULL;
	}
	wait_for_completion(&c.done);	/* ran before the close returned */
	return q->conn ? c.status : STATUS_IO_TIMEOUT;
}

/* Connect queue @q; @hello receives the target's private data. */
static int nbk_queue_connect(struct nbk_queue *q, struct ndkblk_hello *hello)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	/* The callee's private data comes padded to the transport's size. */
	u8 pdata[256] __aligned(8) = {};
	u32 in, out, len = sizeof(pdata);
	s32 st;

	if (!in4_pton(target, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	if (ndk_create_connector(nbk.adapter, NULL, NULL, &q->conn)) {
		q->conn = NULL;
		return -EIO;
	}
	st = nbk_connect(q, &sin);
	if (!st)
		st = ndk_get_connection_data(q->conn, &in, &out, pdata, &len);
	if (!st)
		st = ndk_complete_connect(q->conn, nbk_disconnected, NULL,
					  NULL, NULL);
	if (st)
		return -ECONNREFUSED;
	if (len < sizeof(*hello))
		return -EPROTO;
	memcpy(hello, pdata, sizeof(*hello));
	if (le32_to_cpu(hello->magic) != NDKBLK_MAGIC ||
	    le32_to_cpu(hello->depth) < NBK_DEPTH ||
	    le32_to_cpu(hello->max_io) < max(nbk.max_io, (u32)PAGE_SIZE) ||
	    !le32_to_cpu(hello->queues) || !le64_to_cpu(hello->sectors))
		return -EPROTO;
	return 0;
}

/*
 * Bytes one request may carry on this adapter: what one registration (or
 * window) of it takes, a request's page span within its fast-register
 * page list, at most NDKBLK_MAX_IO and the max_io parameter.
 */
static u32 nbk_adapter_max_io(void)
{
	u64 io = max_io ? min(max_io, NDKBLK_MAX_IO) : NDKBLK_MAX_IO;

	if (nbk.info.frmr_page_count < 2)
		return 0;
	io = min_t(u64, io, (u64)(nbk.info.frmr_page_count - 1) << PAGE_SHIFT);
	io = min_t(u64, io, nbk.info.max_registration_size);
	if (nbk.window)
		io = min_t(u64, io, nbk.info.max_window_size);
	return io & PAGE_MASK;
}

/*
 * Every object and connection: queue 0's hello says how many queues the
 * target serves; the first connection fixes the disk's queue count and
 * request size, and a reconnection needs as much again.
 */
static int nbk_open_all(void)
{
	struct ndkblk_hello hello;
	u32 size = sizeof(nbk.info);
	u32 i, io, n = 1;
	int ret;

	if (ndk_open_adapter(adapter, nbk_removal, NULL, &nbk.adapter)) {
		nbk.adapter = NULL;
		return -ENODEV;
	}
	if (ndk_query_adapter_info(nbk.adapter, &nbk.info, &size))
		return -EIO;
	io = nbk_adapter_max_io();
	if (io < PAGE_SIZE || io < nbk.max_io)
		return -EOPNOTSUPP;	/* or less than the disk was made for */
	nbk.fr_pages = ((nbk.max_io ?: io) >> PAGE_SHIFT) + 1;
	if (ndk_create_pd(nbk.adapter, NULL, NULL, &nbk.pd)) {
		nbk.pd = NULL;
		return -EIO;
	}
	for (i = 0; i < n; i++) {
		ret = nbk_queue_open(&nbk.q[i]);
		if (!ret)
			ret = nbk_queue_connect(&nbk.q[i], &hello);
		if (ret)
			return ret;
		if (i)
			continue;
		n = min(nbk.nr_alloc, le32_to_cpu(hello.queues));
		if (nbk.nr_queues && n < nbk.nr_queues)
			return -EPROTO;	/* the disk has that many queues */
		if (nbk.nr_queues)
			n = nbk.nr_queues;
		if (!nbk.max_io)
			nbk.max_io = min_t(u32, io, le32_to_cpu(hello.max_io) &
						    PAGE_MASK);
		nbk.sectors = le64_to_cpu(hello.sectors);
		nbk.inline_max = min3(inline_max, NDKBLK_INLINE_MAX,
				      le32_to_cpu(hello.inline_max));
	}
	nbk.nr_queues = n;
	return 0;
}

/* One attempt: every object, every connection; then posts may run. */
static int nbk_up(void)
{
	int ret;
	u32 i;

	clear_bit(0, &nbk.broken);
	ret = nbk_open_all();
	if (ret) {
		nbk_teardown();
		return ret;
	}
	for (i = 0; i < nbk.nr_queues; i++) {
		struct nbk_queue *q = &nbk.q[i];

		nbk_cq_notify(q, STATUS_SUCCESS);	/* arm the CQ */
		spin_lock_irq(&q->post_lock);
		q->dead = false;
		spin_unlock_irq(&q->post_lock);
	}
	/* A connection lost while the others came up: kill them all. */
	smp_mb();	/* pairs with nbk_kill_after()'s barrier */
	if (test_bit(0, &nbk.broken))
		nbk_kill("lost while connecting");
	return 0;
}

static void nbk_reconnect_work(struct work_struct *work)
{
	static unsigned int attempts;
	int ret;

	nbk_teardown();
	if (READ_ONCE(nbk.stopping))
		return;
	ret = nbk_up();
	if (!ret) {
		/* What waits for the connection goes now; the clock stops. */
		cancel_delayed_work_sync(&nbk.fail_work);
		WRITE_ONCE(nbk.failing, false);
		nbk_kick();
		if (nbk.disk && get_capacity(nbk.disk) != nbk.sectors)
			set_capacity_and_notify(nbk.disk, nbk.sectors);
		pr_info("ndkblk: reconnected to %s:%u after %u attempts\n",
			target, port, attempts + 1);
		attempts = 0;
		return;
	}
	if (!attempts++)
		pr_info("ndkblk: cannot reconnect to %s:%u (%d); retrying every second\n",
			target, port, ret);
	if (!READ_ONCE(nbk.stopping))
		queue_delayed_work(system_long_wq, &nbk.reconnect, HZ);
}

static int nbk_add_disk(void)
{
	struct request_queue *q;
	int ret;

	nbk.tags.ops = &nbk_mq_ops;
	nbk.tags.nr_hw_queues = nbk.nr_queues;
	nbk.tags.queue_depth = NBK_DEPTH;
	nbk.tags.numa_node = NUMA_NO_NODE;
	nbk.tags.flags = BLK_MQ_F_SHOULD_MERGE;
	nbk.tags.cmd_size = sizeof(struct nbk_cmd);
	ret = blk_mq_alloc_tag_set(&nbk.tags);
	if (ret)
		return ret;
	nbk.disk = blk_mq_alloc_disk(&nbk.tags, NULL);
	if (IS_ERR(nbk.disk)) {
		ret = PTR_ERR(nbk.disk);
		nbk.disk = NULL;
		goto err_free_tags;
	}
	q = nbk.disk->queue;
	blk_queue_virt_boundary(q, PAGE_SIZE - 1);
	blk_queue_max_hw_sectors(q, nbk.max_io >> SECTOR_SHIFT);
	blk_queue_max_segments(q, (nbk.max_io >> PAGE_SHIFT) + 1);
	blk_queue_rq_timeout(q, io_timeout * HZ);
	nbk.disk->fops = &nbk_fops;
	nbk.disk->flags |= GENHD_FL_NO_PART;
	snprintf(nbk.disk->disk_name, DISK_NAME_LEN, "ndkblk0");
	set_capacity(nbk.disk, nbk.sectors);
	ret = add_disk(nbk.disk);
	if (ret)
		goto err_put_disk;
	return 0;

err_put_disk:
	put_disk(nbk.disk);
	nbk.disk = NULL;
err_free_tags:
	blk_mq_free_tag_set(&nbk.tags);
	return ret;
}

static int __init nbk_init(void)
{
	int ret;

	INIT_DELAYED_WORK(&nbk.reconnect, nbk_reconnect_work);
	INIT_DELAYED_WORK(&nbk.fail_work, nbk_fail_work);
	init_waitqueue_head(&nbk.connect_wait);
	if (!target) {
		pr_err("ndkblk: target=<IPv4 address> is required\n");
		return -EINVAL;
	}
	nbk.window = !strcmp(mode, "window");
	if (!nbk.window && strcmp(mode, "fr")) {
		pr_err("ndkblk: mode=fr or mode=window\n");
		return -EINVAL;
	}
	nbk.nr_alloc = nr_queues ? nr_queues :
		       min_t(u32, num_online_cpus(), NDKBLK_MAX_QUEUES);
	if (nbk.nr_alloc > NDKBLK_MAX_QUEUES) {
		pr_err("ndkblk: nr_queues=1 .. %u\n", NDKBLK_MAX_QUEUES);
		return -EINVAL;
	}
	ret = nbk_alloc();
	if (ret)
		goto err_free;
	ret = nbk_up();
	if (ret) {
		pr_err("ndkblk: cannot connect to %s:%u through %s: %d\n",
		       target, port, adapter, ret);
		goto err_free;
	}
	ret = nbk_add_disk();
	if (ret)
		goto err_teardown;
	pr_info("ndkblk: %s: %llu sectors from %s:%u through %s, mode %s, %u queues\n",
		nbk.disk->disk_name, nbk.sectors, target, port, adapter, mode,
		nbk.nr_queues);
	return 0;

err_teardown:
	WRITE_ONCE(nbk.stopping, true);
	nbk_cancel_work();
	nbk_teardown();
	nbk_cancel_work();
err_free:
	nbk_free();
	return ret;
}

static void __exit nbk_exit(void)
{
	char per_queue[NDKBLK_MAX_QUEUES * 21 + 1] = "";
	u32 i, n = 0;

	WRITE_ONCE(nbk.stopping, true);
	wake_up_all(&nbk.connect_wait);	/* a connect in flight gives up */
	WRITE_ONCE(nbk.failing, true);	/* what waits fails: del_gendisk waits */
	nbk_kick();
	del_gendisk(nbk.disk);
	nbk_cancel_work();
	nbk_teardown();
	nbk_cancel_work();
	for (i = 0; i < nbk.nr_queues; i++)
		n += scnprintf(per_queue + n, sizeof(per_queue) - n, " %llu",
			       nbk.q[i].ios);
	put_disk(nbk.disk);
	blk_mq_free_tag_set(&nbk.tags);
	nbk_free();
	pr_info("ndkblk: %lld I/Os; registrations invalidated by the target %lld, locally %lld, ended by a kill %lld; inline writes %lld; dispatches retried for a key's kill %lld\n",
		atomic64_read(&nbk.ios), atomic64_read(&nbk.peer_invalidated),
		atomic64_read(&nbk.local_invalidated),
		atomic64_read(&nbk.killed), atomic64_read(&nbk.inline_ios),
		atomic64_read(&nbk.busy));
	pr_info("ndkblk: requests per queue:%s\n", per_queue);
}

module_init(nbk_init);
module_exit(nbk_exit);
MODULE_DESCRIPTION("ndkblk: a block device over NDK (SMB Direct's I/O pattern)");
MODULE_LICENSE("GPL");
