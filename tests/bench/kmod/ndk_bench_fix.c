// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_bench.ko: the fixture every measure shares (struct nb_fix).
 *
 * The NDK side is a loopback connection on one device: a listener on the
 * adapter's own address and a connector connecting to it, QP 0 (active)
 * to QP 1 (passive), both with the run's initiator queue depth.  NDK's
 * fast-register, bind and invalidate need a connected QP.
 *
 * The raw side is the same device opened through ib_core directly: a PD
 * and two RC QPs of the same depth, each connected to itself (a local
 * operation never leaves the device, so no peer is needed): one on a CQ
 * the measure polls itself, like NDK's consumer-polled CQs, one on a
 * softirq CQ, like the registration path inside ndk.ko.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/inet.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>

#include "ndk_bench.h"

static void nb_cq_notify(void *context, s32 status)
{
}

static void nb_disconnected(void *context)
{
}

static void nb_accept_done(void *context, s32 status)
{
	struct nb_fix *f = context;

	f->accept_status = status;
	complete(&f->accepted);
}

/* ConnectEvent: accept the first connection on QP 1, refuse the others. */
static void nb_connect_event(void *context, struct ndk_connector *c)
{
	struct nb_fix *f = context;
	s32 s;

	if (cmpxchg(&f->p, NULL, c)) {
		ndk_reject(c, NULL, 0);
		ndk_close_connector(c, NULL, NULL);
		return;
	}
	s = ndk_accept(c, f->qp[1], 4, 4, NULL, 0, nb_disconnected, f,
		       nb_accept_done, f);
	if (s != STATUS_PENDING)
		nb_accept_done(f, s);
}

/* Connect @qp to itself (RESET -> INIT -> RTR -> RTS). */
static int nb_connect_self(struct ib_qp *qp)
{
	struct ib_device *ibdev = qp->device;
	u32 port = rdma_start_port(ibdev);
	struct ib_qp_attr attr = {};
	union ib_gid gid;
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = port;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = qp->qp_num;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(ibdev, port);
	rdma_ah_set_port_num(&attr.ah_attr, port);
	if (!rdma_protocol_roce(ibdev, port))
		return -EOPNOTSUPP;	/* the suite runs on RoCE (rxe) */
	ret = rdma_query_gid(ibdev, port, 0, &gid);
	if (ret)
		return ret;
	rdma_ah_set_grh(&attr.ah_attr, &gid, 0, 0, 1, 0);
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

static struct ib_qp *nb_raw_qp(struct nb_fix *f, struct ib_cq *cq, u32 depth)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = depth,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ib_qp *qp;
	int ret;

	qp = ib_create_qp(f->ibpd, &attr);
	if (IS_ERR(qp))
		return qp;
	ret = nb_connect_self(qp);
	if (ret) {
		ib_destroy_qp(qp);
		return ERR_PTR(ret);
	}
	return qp;
}

static int nb_raw_open(struct nb_env *env, struct nb_fix *f)
{
	f->ibdev = ib_device_get_by_name(env->adapter, RDMA_DRIVER_UNKNOWN);
	if (!f->ibdev)
		return -ENODEV;
	f->ibpd = ib_alloc_pd(f->ibdev, 0);
	if (IS_ERR(f->ibpd))
		return PTR_ERR(f->ibpd);
	f->dcq = ib_alloc_cq(f->ibdev, NULL, env->depth + 1, 0,
			     IB_POLL_DIRECT);
	if (IS_ERR(f->dcq))
		return PTR_ERR(f->dcq);
	f->icq = ib_alloc_cq(f->ibdev, NULL, env->depth + 1, 0,
			     IB_POLL_SOFTIRQ);
	if (IS_ERR(f->icq))
		return PTR_ERR(f->icq);
	f->dqp = nb_raw_qp(f, f->dcq, env->depth);
	if (IS_ERR(f->dqp))
		return PTR_ERR(f->dqp);
	f->iqp = nb_raw_qp(f, f->icq, env->depth);
	return PTR_ERR_OR_ZERO(f->iqp);
}

static int nb_ndk_connect(struct nb_env *env, struct nb_fix *f)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	u32 len = sizeof(sin);
	s32 s;

	if (!in4_pton(env->peer_ip, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	s = ndk_create_listener(f->adapter, nb_connect_event, f, NULL, NULL,
				&f->listener);
	if (s)
		return -EIO;
	s = ndk_listen(f->listener, (struct sockaddr *)&sin, sizeof(sin),
		       NULL, NULL);
	if (!s)
		s = ndk_get_listener_local_address(f->listener,
						   (struct sockaddr *)&sin,
						   &len);
	if (!s)
		s = ndk_create_connector(f->adapter, NULL, NULL, &f->a);
	if (!s)
		s = ndk_connect(f->a, f->qp[0], NULL, 0,
				(struct sockaddr *)&sin, sizeof(sin), 4, 4,
				NULL, 0, NULL, NULL);
	if (!s)
		s = ndk_complete_connect(f->a, nb_disconnected, f, NULL, NULL);
	if (s) {
		nb_out("E connect: status %#x", s);
		return -EIO;
	}
	if (!wait_for_completion_timeout(&f->accepted, NB_TIMEOUT))
		return -ETIMEDOUT;
	if (f->accept_status) {
		nb_out("E accept: status %#x", f->accept_status);
		return -EIO;
	}
	return 0;
}

/**
 * nb_fix_open() - the NDK objects, optionally connected, and the raw twin
 * @env:     the run
 * @f:       the fixture, initialised here
 * @connect: connect QP 0 to QP 1 (and create the raw QPs)
 *
 * Context: process context, may sleep.
 * Return: 0, or a negative errno (nb_fix_close() still closes the rest).
 */
int nb_fix_open(struct nb_env *env, struct nb_fix *f, bool connect)
{
	u32 size = sizeof(f->info);
	int i, ret;

	memset(f, 0, sizeof(*f));
	init_completion(&f->accepted);
	if (ndk_open_adapter(env->adapter, NULL, NULL, &f->adapter)) {
		nb_out("E cannot open adapter %s", env->adapter);
		return -ENODEV;
	}
	if (ndk_query_adapter_info(f->adapter, &f->info, &size) ||
	    ndk_create_pd(f->adapter, NULL, NULL, &f->pd))
		return -EIO;
	nb_out("I frmr_page_count %u", f->info.frmr_page_count);
	nb_out("I max_registration_size %llu", f->info.max_registration_size);
	for (i = 0; i < 2; i++) {
		if (ndk_create_cq(f->adapter, 2 * env->depth + 16, nb_cq_notify,
				  NULL, NULL, NULL, NULL, &f->cq[i]))
			return -EIO;
		if (ndk_create_qp(f->pd, f->cq[i], f->cq[i], &f->qp[i], 16,
				  env->depth, 1, 1, 0, NULL, NULL, &f->qp[i]))
			return -EIO;
	}
	ret = nb_raw_open(env, f);
	if (ret) {
		nb_out("E raw ib_core setup: %d", ret);
		return ret;
	}
	return connect ? nb_ndk_connect(env, f) : 0;
}

/**
 * nb_fix_close() - close whatever nb_fix_open() made, children first
 * @f: the fixture
 *
 * Context: process context, may sleep.
 */
void nb_fix_close(struct nb_fix *f)
{
	int i;

	if (f->a)
		ndk_close_connector(f->a, NULL, NULL);
	if (f->p)
		ndk_close_connector(f->p, NULL, NULL);
	if (f->listener)
		ndk_close_listener(f->listener, NULL, NULL);
	for (i = 0; i < 2; i++) {
		if (f->qp[i])
			ndk_close_qp(f->qp[i], NULL, NULL);
		if (f->cq[i])
			ndk_close_cq(f->cq[i], NULL, NULL);
	}
	if (f->pd)
		ndk_close_pd(f->pd, NULL, NULL);
	if (f->adapter)
		ndk_close_adapter(f->adapter);
	if (!IS_ERR_OR_NULL(f->iqp))
		ib_destroy_qp(f->iqp);
	if (!IS_ERR_OR_NULL(f->dqp))
		ib_destroy_qp(f->dqp);
	if (!IS_ERR_OR_NULL(f->icq))
		ib_free_cq(f->icq);
	if (!IS_ERR_OR_NULL(f->dcq))
		ib_free_cq(f->dcq);
	if (!IS_ERR_OR_NULL(f->ibpd))
		ib_dealloc_pd(f->ibpd);
	if (f->ibdev)
		ib_device_put(f->ibdev);
	memset(f, 0, sizeof(*f));
}

/**
 * nb_poll() - poll an NDK CQ until @want results came or NB_TIMEOUT
 * @cq:   the CQ
 * @res:  room for @want results
 * @want: results to wait for
 *
 * Context: process context.
 * Return: the results polled (fewer than @want after the timeout).
 */
u32 nb_poll(struct ndk_cq *cq, struct ndk_result *res, u32 want)
{
	unsigned long end = jiffies + NB_TIMEOUT;
	u32 got = 0;

	while (got < want) {
		got += ndk_get_cq_results(cq, res + got, want - got);
		if (got < want) {
			if (time_after(jiffies, end))
				break;
			cond_resched();
		}
	}
	return got;
}

/**
 * nb_sgt_from_vmalloc() - a scatter table over @pages pages of vmalloc memory
 * @mem:   vmalloc'ed, page aligned
 * @pages: pages
 *
 * One entry per page, not DMA mapped.
 *
 * Return: the table, or NULL.
 */
struct sg_table *nb_sgt_from_vmalloc(void *mem, u32 pages)
{
	struct sg_table *sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	struct scatterlist *sg;
	u32 i;

	if (!sgt)
		return NULL;
	if (sg_alloc_table(sgt, pages, GFP_KERNEL)) {
		kfree(sgt);
		return NULL;
	}
	for_each_sg(sgt->sgl, sg, pages, i)
		sg_set_page(sg, vmalloc_to_page(mem + (size_t)i * PAGE_SIZE),
			    PAGE_SIZE, 0);
	return sgt;
}

/**
 * nb_sgt_free() - free a table of nb_sgt_from_vmalloc()
 * @sgt: the table, or NULL
 */
void nb_sgt_free(struct sg_table *sgt)
{
	if (!sgt)
		return;
	sg_free_table(sgt);
	kfree(sgt);
}
