// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_bench.ko: D1, the data path of a kernel NDK consumer.
 *
 * RDMA writes of each size in sizes= (bytes) from an NdkRegisterMr
 * buffer of QP 0 into one of QP 1 through its remote token, depth/2 in
 * flight (throughput: "D1-write"), and single 8-byte RDMA reads, one at
 * a time, posted and polled until the result ("D1-read"): the two
 * numbers perftest's ib_write_bw and ib_read_lat give for verbs.  The
 * baseline is perftest itself, run by the guest script on the same
 * device in the same boot.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/bottom_half.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/vmalloc.h>

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
	struct ndk_result res;
	s32 st;

	st = ndk_read(f->qp[0], NULL, &sge, 1, (uintptr_t)src->mem,
		      ndk_get_remote_token_from_mr(src->mr), 0);
	if (st) {
		nb_out("E D1 read post: status %#x", st);
		return -EIO;
	}
	while (!ndk_get_cq_results(f->cq[0], &res, 1)) {
		if (time_after(jiffies, end)) {
			nb_out("E D1 read: timeout");
			return -ETIMEDOUT;
		}
		local_bh_disable();
		local_bh_enable();
	}
	if (res.status) {
		nb_out("E D1 read: status %#x", res.status);
		return -EIO;
	}
	return 0;
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
	struct nb_fix f;
	u64 t0;
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
	nb_out("I d1_inflight %u", env->depth / 2);
	for (p = 0; !ret && p < env->nparams; p++) {
		ret = nb_dp_writes(&f, &src, &dst, env->params[p],
				   env->depth, env->depth / 2);
		for (r = 0; !ret && r < env->rounds; r++) {
			for (b = 0; !ret && b < NB_DP_BATCHES; b++) {
				t0 = ktime_get_ns();
				ret = nb_dp_writes(&f, &src, &dst,
						   env->params[p], ops,
						   env->depth / 2);
				if (!ret)
					nb_sample("D1-write", "ndk-k",
						  env->params[p], r,
						  ktime_get_ns() - t0, ops);
			}
		}
	}
	/* Reads into src's buffer (local write), from dst (remote read). */
	for (r = 0; !ret && r < env->rounds; r++) {
		for (i = 0; !ret && i < env->iters; i++) {
			t0 = ktime_get_ns();
			ret = nb_dp_read(&f, &src, &dst);
			if (!ret)
				nb_sample("D1-read", "ndk-k", NB_READ_BYTES, r,
					  ktime_get_ns() - t0, 1);
		}
	}
	nb_dp_free(&src);
	nb_dp_free(&dst);
	nb_fix_close(&f);
	return ret;
}
