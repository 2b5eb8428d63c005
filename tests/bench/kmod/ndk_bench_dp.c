// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_bench.ko: D1, the data path of a kernel NDK consumer.
 *
 * RDMA writes of each size in sizes= (bytes) from an NdkRegisterMr
 * buffer of QP 0 into one of QP 1 through its remote token, depth/2 in
 * flight (throughput: "D1-write"), and single 8-byte RDMA reads, one at
 * a time, posted and polled until the result ("D1-read"): the two
 * numbers perftest's ib_write_bw and ib_read_lat give for verbs.  Two
 * baselines: perftest itself, run by the guest script on the same device
 * in the same boot, and "raw", the same loops in this module on two raw
 * ib_core RC QPs connected through rdma_cm as NDK's are, over one buffer
 * registered once with IB_WR_REG_MR, polled directly, interleaved batch
 * by batch with ours: a kernel path against a kernel loop.  Reads have a
 * third variant, "floor-lf": on the raw QP, the least an NdkRead and the
 * NdkGetCqResults calls that find its result must do, each call out of
 * line and __noipa (not specialized on the loop's constant arguments),
 * with the least exclusion a design without locks needs (below):
 * how far any implementation of the read can come.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/bottom_half.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/inet.h>
#include <linux/vmalloc.h>
#include <rdma/rdma_cm.h>

#include "ndk_bench.h"

#define NB_DP_BATCHES	8
#define NB_READ_BYTES	8

/**
 * struct nb_dp_buf - a registered kernel buffer
 * @mem: vmalloc'ed
 * @len: bytes
 * @mdl: one MDL over @mem
 * @mr:  registered with NdkRegisterMr
 */
struct nb_dp_buf {
	void *mem;
	u32 len;
	struct ndk_mdl *mdl;
	struct ndk_mr *mr;
};

static void nb_dp_free(struct nb_dp_buf *b)
{
	if (b->mr)
		ndk_close_mr(b->mr, NULL, NULL);
	ndk_mdl_free_chain(b->mdl);
	vfree(b->mem);
	memset(b, 0, sizeof(*b));
}

static int nb_dp_alloc(struct nb_fix *f, struct nb_dp_buf *b, u32 len,
		       u32 flags)
{
	s32 st;

	b->len = len;
	b->mem = vzalloc(len);
	b->mdl = b->mem ? ndk_mdl_from_buffer(b->mem, len, GFP_KERNEL) : NULL;
	if (!b->mdl)
		return -ENOMEM;
	st = ndk_create_mr(f->pd, false, NULL, NULL, &b->mr);
	if (!st)
		st = ndk_register_mr(b->mr, b->mdl, len, flags, NULL, NULL);
	if (st) {
		nb_out("E D1 buffer: status %#x", st);
		return -EIO;
	}
	return 0;
}

/* @ops RDMA writes of @len bytes, up to @inflight at once. */
static int nb_dp_writes(struct nb_fix *f, struct nb_dp_buf *src,
			struct nb_dp_buf *dst, u32 len, u32 ops, u32 inflight)
{
	struct ndk_sge sge = {
		.virtual_address = src->mem,
		.length = len,
		.memory_region_token = ndk_get_local_token_from_mr(src->mr),
	};
	u32 rtok = ndk_get_remote_token_from_mr(dst->mr);
	unsigned long end = jiffies + NB_TIMEOUT;
	u32 posted = 0, done = 0, k, n;
	struct ndk_result res[16];
	s32 st;

	while (done < ops) {
		while (posted < ops && posted - done < inflight) {
			st = ndk_write(f->qp[0], NULL, &sge, 1,
				       (uintptr_t)dst->mem, rtok, 0);
			if (st) {
				nb_out("E D1 write post: status %#x", st);
				return -EIO;
			}
			posted++;
		}
		n = ndk_get_cq_results(f->cq[0], res, ARRAY_SIZE(res));
		for (k = 0; k < n; k++) {
			if (res[k].status) {
				nb_out("E D1 write: status %#x", res[k].status);
				return -EIO;
			}
		}
		done += n;
		if (!n) {
			if (time_after(jiffies, end)) {
				nb_out("E D1 writes: timeout");
				return -ETIMEDOUT;
			}
			local_bh_disable();
			local_bh_enable();
		}
	}
	return 0;
}

/* floor-lf: entries of the read's request ring. */
#define NB_FLR_RING	4

/**
 * struct nb_flr_req - floor-lf: one claimed request
 * @ctx:  the request context its result reports
 * @busy: claimed, not completed
 */
struct nb_flr_req {
	void *ctx;
	bool busy;
};

/**
 * struct nb_raw - the raw baseline: two RC QPs connected through rdma_cm
 * and one buffer registered once
 * @listen:  the listening id, on the adapter's address
 * @active:  the connecting id; its QP is the one the loops post on
 * @passive: the accepted id
 * @cq:      one CQ of both QPs, polled directly
 * @pd:      the fixture's raw PD
 * @depth:   send queue depth of each QP
 * @setup:   completed when both sides are established or setup failed
 * @up:      sides established
 * @error:   the setup's failure
 * @mem:     vmalloc'ed: the source (and read sink) at 0, the target at
 *           @half
 * @half:    offset of the target half
 * @sgt:     @mem's scatter table
 * @nents:   its entries DMA-mapped
 * @mr:      a fast-register MR over all of @mem, registered
 * @cqe:     the completion entry of every work request
 * @done:    completions seen
 * @status:  the first failed completion's status
 * @fring:   floor-lf: the read's request ring, found by wr_id
 * @fprod:   floor-lf: requests claimed
 * @fpolling: floor-lf: the CQ claimed by a poll
 * @fflushed: floor-lf: the QP flushed (never set: the read is the cost)
 */
struct nb_raw {
	struct rdma_cm_id *listen;
	struct rdma_cm_id *active;
	struct rdma_cm_id *passive;
	struct ib_cq *cq;
	struct ib_pd *pd;
	u32 depth;
	struct completion setup;
	int up;
	int error;
	void *mem;
	u32 half;
	struct sg_table *sgt;
	int nents;
	struct ib_mr *mr;
	struct ib_cqe cqe;
	u32 done;
	enum ib_wc_status status;
	struct nb_flr_req fring[NB_FLR_RING];
	u32 fprod;
	atomic_t fpolling;
	bool fflushed;
};

static int nb_raw_create_qp(struct nb_raw *r, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC,
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = r->depth,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return rdma_create_qp(id, r->pd, &attr);
}

/*
 * rdma_cm's events, with the id's handler lock held: so the active side
 * connects with rdma_connect_locked(), and the ids are destroyed by
 * nb_raw_close(), never from here.
 */
static int nb_raw_cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = {
		.responder_resources = 4,
		.initiator_depth = 4,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct nb_raw *r = id->context;
	int ret = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 2000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = nb_raw_create_qp(r, id) ?: rdma_connect_locked(id, &param);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		r->passive = id;
		ret = nb_raw_create_qp(r, id) ?: rdma_accept(id, &param);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (++r->up == 2)
			complete(&r->setup);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		ret = -EIO;
		break;
	}
	if (ret) {
		r->error = ret;
		complete(&r->setup);
	}
	return 0;
}

static void nb_raw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nb_raw *r = container_of(wc->wr_cqe, struct nb_raw, cqe);

	if (wc->status != IB_WC_SUCCESS && r->status == IB_WC_SUCCESS)
		r->status = wc->status;
	r->done++;
}

/* Poll the raw CQ until @want completions in all. */
static int nb_raw_wait(struct nb_raw *r, u32 want)
{
	unsigned long end = jiffies + NB_TIMEOUT;

	while (r->done < want && r->status == IB_WC_SUCCESS) {
		if (ib_process_cq_direct(r->cq, 16))
			continue;
		if (time_after(jiffies, end)) {
			nb_out("E D1 raw: timeout");
			return -ETIMEDOUT;
		}
		local_bh_disable();
		local_bh_enable();
	}
	if (r->status != IB_WC_SUCCESS) {
		nb_out("E D1 raw: %s", ib_wc_status_msg(r->status));
		return -EIO;
	}
	return 0;
}

/* One signalled RDMA @op of @len bytes: local @loff, remote @roff. */
static int nb_raw_post(struct nb_raw *r, enum ib_wr_opcode op, u32 loff,
		       u32 roff, u32 len)
{
	struct ib_sge sge = {
		.addr = r->mr->iova + loff,
		.length = len,
		.lkey = r->mr->lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &r->cqe,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = r->mr->iova + roff,
		.rkey = r->mr->rkey,
	};
	int ret = ib_post_send(r->active->qp, &wr.wr, NULL);

	if (ret)
		nb_out("E D1 raw post: %d", ret);
	return ret;
}

static void nb_raw_close(struct nb_fix *f, struct nb_raw *r)
{
	if (r->active && r->up == 2)
		rdma_disconnect(r->active);
	if (r->mr)
		ib_dereg_mr(r->mr);
	if (r->nents > 0)
		ib_dma_unmap_sg(f->ibdev, r->sgt->sgl, r->sgt->orig_nents,
				DMA_BIDIRECTIONAL);
	nb_sgt_free(r->sgt);
	vfree(r->mem);
	if (r->passive) {
		if (r->passive->qp)
			rdma_destroy_qp(r->passive);
		rdma_destroy_id(r->passive);
	}
	if (r->active) {
		if (r->active->qp)
			rdma_destroy_qp(r->active);
		rdma_destroy_id(r->active);
	}
	if (r->listen)
		rdma_destroy_id(r->listen);
	if (!IS_ERR_OR_NULL(r->cq))
		ib_free_cq(r->cq);
	memset(r, 0, sizeof(*r));
}

/* Connect the two raw QPs on @env->peer_ip through rdma_cm. */
static int nb_raw_connect(struct nb_env *env, struct nb_fix *f,
			  struct nb_raw *r)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int ret;

	init_completion(&r->setup);
	r->pd = f->ibpd;
	r->depth = env->depth;
	r->cq = ib_alloc_cq(f->ibdev, NULL, 2 * env->depth + 4, 0,
			    IB_POLL_DIRECT);
	if (IS_ERR(r->cq))
		return PTR_ERR(r->cq);
	if (!in4_pton(env->peer_ip, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	r->listen = rdma_create_id(&init_net, nb_raw_cm_event, r,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(r->listen)) {
		ret = PTR_ERR(r->listen);
		r->listen = NULL;
		return ret;
	}
	ret = rdma_bind_addr(r->listen, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(r->listen, 1);
	if (ret)
		return ret;
	/* The port the listener got. */
	sin.sin_port = ((struct sockaddr_in *)
			&r->listen->route.addr.src_addr)->sin_port;
	r->active = rdma_create_id(&init_net, nb_raw_cm_event, r,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(r->active)) {
		ret = PTR_ERR(r->active);
		r->active = NULL;
		return ret;
	}
	ret = rdma_resolve_addr(r->active, NULL, (struct sockaddr *)&sin,
				2000);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&r->setup, NB_TIMEOUT))
		return -ETIMEDOUT;
	return r->error;
}

/* Allocate and register (REG_MR, waited for) two halves of @len bytes. */
static int nb_raw_register(struct nb_fix *f, struct nb_raw *r, u32 len)
{
	struct ib_reg_wr reg = {};
	u32 pages;
	int ret;

	r->half = PAGE_ALIGN(len);
	pages = 2 * r->half >> PAGE_SHIFT;
	r->cqe.done = nb_raw_done;
	r->mem = vzalloc(2 * r->half);
	r->sgt = r->mem ? nb_sgt_from_vmalloc(r->mem, pages) : NULL;
	if (!r->sgt)
		return -ENOMEM;
	r->nents = ib_dma_map_sg(f->ibdev, r->sgt->sgl, r->sgt->orig_nents,
				 DMA_BIDIRECTIONAL);
	if (r->nents <= 0)
		return -ENOMEM;
	r->mr = ib_alloc_mr(r->pd, IB_MR_TYPE_MEM_REG, pages);
	if (IS_ERR(r->mr)) {
		ret = PTR_ERR(r->mr);
		r->mr = NULL;
		return ret;
	}
	if (ib_map_mr_sg(r->mr, r->sgt->sgl, r->nents, NULL, PAGE_SIZE) !=
	    r->nents)
		return -EINVAL;
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &r->cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = r->mr;
	reg.key = r->mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		     IB_ACCESS_REMOTE_WRITE;
	r->done = 0;
	ret = ib_post_send(r->active->qp, &reg.wr, NULL);
	return ret ?: nb_raw_wait(r, 1);
}

/* Raw: @ops RDMA writes of @len bytes, up to @inflight at once. */
static int nb_raw_writes(struct nb_raw *r, u32 len, u32 ops, u32 inflight)
{
	u32 posted = 0;
	int ret;

	r->done = 0;
	while (r->done < ops) {
		while (posted < ops && posted - r->done < inflight) {
			ret = nb_raw_post(r, IB_WR_RDMA_WRITE, 0, r->half,
					  len);
			if (ret)
				return ret;
			posted++;
		}
		ret = nb_raw_wait(r, r->done + 1);
		if (ret)
			return ret;
	}
	return 0;
}

/* Raw: one 8-byte RDMA read from the target half, waited for. */
static int nb_raw_read(struct nb_raw *r)
{
	int ret;

	r->done = 0;
	ret = nb_raw_post(r, IB_WR_RDMA_READ, 0, r->half, NB_READ_BYTES);
	return ret ?: nb_raw_wait(r, 1);
}

/*
 * floor-lf: NdkRead on the raw QP at the least: its argument checks, a
 * ring entry claimed for its result, the SGEs translated, one signalled
 * work request; in an RCU read section after reading the QP's flushed
 * flag, which a flush would wait for (synchronize_rcu()).  No lock, no CQ
 * reservation, no count.
 */
static __noipa s32 nb_flr_read(struct nb_raw *r, void *ctx,
			       const struct ndk_sge *sgl, u32 nsge,
			       u64 remote_address, u32 remote_token, u32 flags)
{
	struct ib_sge sge[1];
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = sge,
			.num_sge = nsge,
		},
		.remote_addr = remote_address,
		.rkey = remote_token,
	};
	struct nb_flr_req *e;
	s32 st = STATUS_SUCCESS;
	u32 k, idx;

	if (flags & ~(NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE) ||
	    nsge > ARRAY_SIZE(sge) || (nsge && !sgl) ||
	    (nsge && sgl[0].length > SZ_1G))
		return STATUS_INVALID_PARAMETER;
	if (flags & NDK_OP_FLAG_READ_FENCE)
		wr.wr.send_flags |= IB_SEND_FENCE;
	rcu_read_lock();
	if (READ_ONCE(r->fflushed)) {
		st = STATUS_CANCELLED;
		goto out_unlock;
	}
	idx = r->fprod % NB_FLR_RING;
	e = &r->fring[idx];
	if (e->busy) {
		st = STATUS_INSUFFICIENT_RESOURCES;
		goto out_unlock;
	}
	e->ctx = ctx;
	e->busy = true;
	r->fprod++;
	wr.wr.wr_id = idx;
	for (k = 0; k < nsge; k++) {
		sge[k].addr = sgl[k].logical_address;
		sge[k].length = sgl[k].length;
		sge[k].lkey = sgl[k].memory_region_token;
	}
	if (ib_post_send(r->active->qp, &wr.wr, NULL)) {
		e->busy = false;
		r->fprod--;
		st = STATUS_INSUFFICIENT_RESOURCES;
	}
out_unlock:
	rcu_read_unlock();
	return st;
}

/*
 * floor-lf: NdkGetCqResults at the least: the CQ claimed with one atomic
 * operation against the layer's own drains, up to @count completions
 * polled, each translated into @res from its ring entry.
 */
static __noipa u32 nb_flr_poll(struct nb_raw *r, struct ndk_result *res,
			       u32 count)
{
	struct ib_wc wc[NB_FLR_RING];
	struct nb_flr_req *e;
	int n, k;

	if (atomic_cmpxchg_acquire(&r->fpolling, 0, 1))
		return 0;
	n = ib_poll_cq(r->cq, min_t(u32, count, ARRAY_SIZE(wc)), wc);
	for (k = 0; k < n; k++) {
		e = &r->fring[wc[k].wr_id % NB_FLR_RING];
		res[k].status = wc[k].status == IB_WC_SUCCESS ?
				STATUS_SUCCESS : STATUS_UNSUCCESSFUL;
		res[k].bytes_transferred = wc[k].byte_len;
		res[k].qp_context = r;
		res[k].request_context = e->ctx;
		e->busy = false;
	}
	atomic_set_release(&r->fpolling, 0);
	return max(n, 0);
}

/*
 * Spin until @end (jiffies) on the result of the read just posted, as a
 * consumer does: on the NDK CQ @cq, or (@floor) through floor-lf's poll on
 * @r.  Inline, with @floor constant, so that each variant calls its own
 * poll directly.
 */
static __always_inline int nb_read_result(struct ndk_cq *cq,
					  struct nb_raw *r, bool floor,
					  unsigned long end)
{
	const char *name = floor ? "D1 floor-lf read" : "D1 read";
	struct ndk_result res;

	while (!(floor ? nb_flr_poll(r, &res, 1) :
			 ndk_get_cq_results(cq, &res, 1))) {
		if (time_after(jiffies, end)) {
			nb_out("E %s: timeout", name);
			return -ETIMEDOUT;
		}
		local_bh_disable();
		local_bh_enable();
	}
	if (res.status) {
		nb_out("E %s: status %#x", name, res.status);
		return -EIO;
	}
	return 0;
}

/* One 8-byte RDMA read from @src into @dst's buffer, waited for. */
static int nb_dp_read(struct nb_fix *f, struct nb_dp_buf *sink,
		      struct nb_dp_buf *src)
{
	struct ndk_sge sge = {
		.virtual_address = sink->mem,
		.length = NB_READ_BYTES,
		.memory_region_token = ndk_get_local_token_from_mr(sink->mr),
	};
	unsigned long end = jiffies + NB_TIMEOUT;
	s32 st;

	st = ndk_read(f->qp[0], NULL, &sge, 1, (uintptr_t)src->mem,
		      ndk_get_remote_token_from_mr(src->mr), 0);
	if (st) {
		nb_out("E D1 read post: status %#x", st);
		return -EIO;
	}
	return nb_read_result(f->cq[0], NULL, false, end);
}

/* floor-lf: one 8-byte read, as nb_dp_read() reads through NDK. */
static int nb_flr_one(struct nb_raw *r)
{
	struct ndk_sge sge = {
		.logical_address = r->mr->iova,
		.length = NB_READ_BYTES,
		.memory_region_token = r->mr->lkey,
	};
	unsigned long end = jiffies + NB_TIMEOUT;
	s32 st;

	st = nb_flr_read(r, NULL, &sge, 1, r->mr->iova + r->half,
			 r->mr->rkey, 0);
	if (st) {
		nb_out("E D1 floor-lf read post: status %#x", st);
		return -EIO;
	}
	return nb_read_result(NULL, r, true, end);
}

/* The variants of D1: writes have the first two, reads all three. */
enum nb_d1_variant { NB_D1_NDK, NB_D1_RAW, NB_D1_FLOOR };

/* One operation of D1 on one variant: a batch of @ops writes, or a read. */
static int nb_d1_run(struct nb_env *env, struct nb_fix *f,
		     struct nb_dp_buf *src, struct nb_dp_buf *dst,
		     struct nb_raw *raw, enum nb_d1_variant v, bool read,
		     u32 len, u32 ops)
{
	if (read && v == NB_D1_FLOOR)
		return nb_flr_one(raw);
	if (read)
		return v == NB_D1_RAW ? nb_raw_read(raw) :
					nb_dp_read(f, src, dst);
	return v == NB_D1_RAW ? nb_raw_writes(raw, len, ops, env->depth / 2) :
				nb_dp_writes(f, src, dst, len, ops,
					     env->depth / 2);
}

/*
 * One timed batch of every variant, @first first and the rest in turn:
 * @ops writes of @len bytes, or (@read) one read of NB_READ_BYTES, @len
 * and @ops 1.
 */
static int nb_d1_pair(struct nb_env *env, struct nb_fix *f,
		      struct nb_dp_buf *src, struct nb_dp_buf *dst,
		      struct nb_raw *raw, bool read, u32 len, u32 round,
		      u32 ops, u32 first)
{
	static const char * const name[] = {
		[NB_D1_NDK] = "ndk-k", [NB_D1_RAW] = "raw",
		[NB_D1_FLOOR] = "floor-lf",
	};
	u32 k, nvar = read ? 3 : 2;
	enum nb_d1_variant v;
	int ret = 0;
	u64 t0;

	for (k = 0; !ret && k < nvar; k++) {
		v = (first + k) % nvar;
		t0 = ktime_get_ns();
		ret = nb_d1_run(env, f, src, dst, raw, v, read, len, ops);
		if (!ret)
			nb_sample(read ? "D1-read" : "D1-write", name[v], len,
				  round, ktime_get_ns() - t0, ops);
	}
	return ret;
}

/**
 * nb_d1() - D1: RDMA write throughput and read latency through NDK
 * @env: the run; sizes= write sizes in bytes (at most MaxRegistrationSize)
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int nb_d1(struct nb_env *env)
{
	struct nb_dp_buf src = {}, dst = {};
	u32 p, r, b, i, max = 0, ops = max(1U, env->iters / NB_DP_BATCHES);
	struct nb_raw raw = {};
	struct nb_fix f;
	int ret;

	for (p = 0; p < env->nparams; p++)
		max = max(max, env->params[p]);
	ret = nb_fix_open(env, &f, true);
	if (!ret && max > f.info.max_registration_size - PAGE_SIZE) {
		nb_out("E D1 %u bytes: above MaxRegistrationSize", max);
		ret = -EINVAL;
	}
	if (!ret)
		ret = nb_dp_alloc(&f, &src, max, NDK_MR_FLAG_ALLOW_REMOTE_READ |
				  NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
	if (!ret)
		ret = nb_dp_alloc(&f, &dst, max, NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
				  NDK_MR_FLAG_ALLOW_REMOTE_READ);
	if (!ret) {
		ret = nb_raw_connect(env, &f, &raw);
		if (!ret)
			ret = nb_raw_register(&f, &raw, max);
		if (ret)
			nb_out("E D1 raw setup: %d", ret);
	}
	nb_out("I d1_inflight %u", env->depth / 2);
	for (p = 0; !ret && p < env->nparams; p++) {
		ret = nb_dp_writes(&f, &src, &dst, env->params[p],
				   env->depth, env->depth / 2);
		if (!ret)
			ret = nb_raw_writes(&raw, env->params[p], env->depth,
					    env->depth / 2);
		for (r = 0; !ret && r < env->rounds; r++)
			for (b = 0; !ret && b < NB_DP_BATCHES; b++)
				ret = nb_d1_pair(env, &f, &src, &dst, &raw,
						 false, env->params[p], r, ops,
						 (r + b) % 2);
	}
	/*
	 * Reads into src's buffer (local write), from dst (remote read); raw:
	 * from its target half into its source half, as floor-lf's.  The
	 * variants take turns read by read.
	 */
	for (r = 0; !ret && r < env->rounds; r++)
		for (i = 0; !ret && i < env->iters; i++)
			ret = nb_d1_pair(env, &f, &src, &dst, &raw, true,
					 NB_READ_BYTES, r, 1, (r + i) % 3);
	nb_raw_close(&f, &raw);
	nb_dp_free(&src);
	nb_dp_free(&dst);
	nb_fix_close(&f);
	return ret;
}
